"""The device lab: one QEMU guest with emulated NVMe, SATA and SCSI drives, driven by real kernel drivers.

The guest boots Debian's own kernel (the ``linux-image-amd64`` package, downloaded with
``apt-get download`` and unpacked with ``dpkg-deb``, never installed on the host) from a tiny
initramfs (busybox-static, the drivers under test and tests/lab/init.sh). Its root filesystem is
the host's, shared read-only over virtio-9p, so the guest runs the very python, ssdpts, fio,
nvme-cli, smartctl, hdparm, sdparm and sg3-utils under test; a second, writable 9p share (the
session's scratch directory, mounted at the same path in the guest) carries the drive images'
neighbours: run directories and anything a test wants to read back on the host. Commands go to
tests/lab/agent.py over a virtio-serial port, one JSON line each way.

Kernel and initramfs are cached in ``SSDPTS_LAB_CACHE`` (default /var/cache/ssdpts-lab), keyed by
the kernel package version and the initramfs inputs, so only the first session on a machine pays
for the download. Acceleration is chosen by trying: KVM when /dev/kvm is usable and the guest
comes up under it, TCG (``-accel tcg,thread=multi``) otherwise; ``SSDPTS_LAB_ACCEL=tcg|kvm``
forces one.

Usable on its own for poking at the drives by hand::

    python -m tests.lab.guest                      # boots, lists the drives, powers off
    python -m tests.lab.guest "nvme id-ctrl /dev/nvme0" "smartctl -x /dev/sda"   # runs each command

Environment: SSDPTS_LAB_CACHE (kernel cache), SSDPTS_LAB_REFRESH=1 (ask apt for Debian's current
kernel instead of using the cached one), SSDPTS_LAB_ACCEL=tcg|kvm, SSDPTS_LAB_CPU (TCG CPU model),
SSDPTS_LAB_SCRATCH (where scratch directories go, /var/tmp), SSDPTS_LAB_KEEP=1 (keep them),
SSDPTS_LAB_KERNEL_ARGS (added to the guest kernel's command line, e.g. loglevel=7 to see a lockup's
backtrace in console.log).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("SSDPTS_LAB_CACHE", "/var/cache/ssdpts-lab"))
MiB = 1024 * 1024

# Drivers the guest loads, in dependency-resolved order (modules.dep decides the rest).
MODULES = ("virtio_pci", "virtio_console", "9pnet_virtio", "9p", "nvme", "ahci", "sd_mod", "sg", "virtio_scsi",
           "loop", "crc32c_generic", "ext4")

# numpy's baseline is x86-64-v2 (SSE4.2, POPCNT, CX16); TCG's "max" CPU adds AVX2, whose emulation
# crashed numpy's dispatched kernels in QEMU 7.2 (SIGSEGV while rendering a report). Nehalem is
# x86-64-v2 without AVX: the baseline paths only.
TCG_CPU = os.environ.get("SSDPTS_LAB_CPU", "Nehalem")


class LabUnavailable(Exception):
    """The lab cannot run on this machine (QEMU or the guest kernel cannot be had): a skip reason."""


# --- drives -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drive:
    """One emulated drive: its role in the tests, serial, image size and QEMU arguments."""

    key: str  # what tests call it
    kind: str  # nvme | ata | scsi
    serial: str
    size_bytes: int
    discard: str  # QEMU -drive discard=: "unmap" passes discards to the image, "ignore" drops them
    device_args: tuple[str, ...]  # the -device lines (beyond the controller)
    note: str = ""
    images: tuple[tuple[str, int, str], ...] = ()  # extra (image id, size, discard) for extra namespaces
    path: str = ""  # an existing file or device to back the drive (e.g. the reference SSD) instead of an image

    def image_ids(self) -> list[tuple[str, int, str]]:
        return [(self.key, self.size_bytes, self.discard), *self.images]


# Two NVMe controllers: "nvme" has one 512-byte-LBA namespace, its cache on, discards passed to the
# image; "nvme4k" has a 4096-byte-LBA namespace and a second (512-byte) namespace, write cache off
# at power-on and discards dropped (QEMU's default), i.e. different identify data, a different
# starting cache state and a deallocate that does nothing.
DRIVES: tuple[Drive, ...] = (
    Drive("nvme", "nvme", "LABNVME512A", 192 * MiB, "unmap",
          ("pcie-root-port,id=rp0,chassis=1,slot=1,x-speed=8,x-width=4",
           "nvme,id=nvmec0,serial=LABNVME512A,bus=rp0",
           "nvme-ns,drive=img-nvme,bus=nvmec0,nsid=1,logical_block_size=512,physical_block_size=512")),
    Drive("nvme4k", "nvme", "LABNVME4KB", 192 * MiB, "ignore",
          ("pcie-root-port,id=rp1,chassis=1,slot=2,x-speed=16,x-width=2",
           "nvme,id=nvmec1,serial=LABNVME4KB,bus=rp1",
           "nvme-ns,drive=img-nvme4k,bus=nvmec1,nsid=1,logical_block_size=4096,physical_block_size=4096,"
           "write-cache=off",
           "nvme-ns,drive=img-nvme4k-ns2,bus=nvmec1,nsid=2,logical_block_size=512,write-cache=off"),
          images=(("nvme4k-ns2", 96 * MiB, "ignore"),)),
    Drive("sata", "ata", "LABSATA0001", 192 * MiB, "unmap",
          ("ide-hd,drive=img-sata,bus=ide.0,serial=LABSATA0001,model=SSDPTS LAB SATA,rotation_rate=1",)),
    Drive("scsi", "scsi", "LABSCSI0001", 192 * MiB, "unmap",
          ("virtio-scsi-pci,id=vscsi0",
           "scsi-hd,drive=img-scsi,bus=vscsi0.0,serial=LABSCSI0001,vendor=SSDPTS,product=LAB SCSI,rotation_rate=1")),
)


# --- the cache: kernel and initramfs ----------------------------------------------------------------


def _run(argv: list[str], what: str, **kw) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)
    except OSError as exc:
        raise LabUnavailable(f"{what}: cannot run {argv[0]}: {exc}") from None
    if proc.returncode != 0:
        raise LabUnavailable(f"{what} failed ({' '.join(argv)}): {(proc.stderr or proc.stdout).strip()[-300:]}")
    return proc.stdout


def _kernel_package() -> tuple[str, str]:
    """(package, version) of the kernel image linux-image-amd64 depends on, from apt's lists."""
    def ask() -> tuple[str, str] | None:
        deps = subprocess.run(["apt-cache", "depends", "linux-image-amd64"], capture_output=True, text=True).stdout
        pkg = next((ln.split()[-1] for ln in deps.splitlines()
                    if ln.strip().startswith("Depends:") and ln.split()[-1].startswith("linux-image-")), None)
        if not pkg:
            return None
        show = subprocess.run(["apt-cache", "show", "--no-all-versions", pkg], capture_output=True, text=True).stdout
        ver = next((ln.split(":", 1)[1].strip() for ln in show.splitlines() if ln.startswith("Version:")), None)
        return (pkg, ver) if ver else None

    if shutil.which("apt-cache") is None:
        raise LabUnavailable("no apt-cache: the lab takes its guest kernel from Debian's linux-image-amd64 package")
    found = ask()
    if found is None:  # a clean machine may have no package lists yet
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, check=False)
        found = ask()
    if found is None:
        raise LabUnavailable("apt knows no linux-image-amd64 package (apt-get update failed?): cannot get a guest kernel")
    return found


def _kernel_deb(pkg: str, ver: str, workdir: Path) -> Path:
    """The .deb from apt's cache, else downloaded (apt-get download) into workdir."""
    fname = f"{pkg}_{ver.replace(':', '%3a')}_amd64.deb"
    cached = Path("/var/cache/apt/archives") / fname
    if cached.is_file():
        return cached
    _run(["apt-get", "download", f"{pkg}={ver}"], f"downloading {pkg} {ver}", cwd=workdir)
    debs = list(workdir.glob(f"{pkg}_*.deb"))
    if not debs:
        raise LabUnavailable(f"apt-get download {pkg} left no .deb in {workdir}")
    return debs[0]


def _module_closure(moddir: Path, names: tuple[str, ...]) -> list[str]:
    """Module files (relative to moddir) for ``names`` and everything they depend on, dependencies first."""
    deps: dict[str, list[str]] = {}
    for line in (moddir / "modules.dep").read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
    by_name = {Path(p).name.split(".ko")[0].replace("-", "_"): p for p in deps}
    order: list[str] = []

    def visit(path: str) -> None:
        if path in order:
            return
        for d in reversed(deps.get(path, [])):  # modules.dep lists the deepest dependency last
            visit(d)
        order.append(path)

    for n in names:
        path = by_name.get(n.replace("-", "_"))
        if path is None:
            builtin = (moddir / "modules.builtin").read_text()
            if f"/{n}.ko" not in builtin:
                raise LabUnavailable(f"the guest kernel has no module {n}")
            continue
        visit(path)
    return order


@dataclass(frozen=True)
class GuestImage:
    kernel: Path
    initramfs: Path
    version: str  # kernel package version
    built_s: float  # seconds spent building in this session (0 when everything came from the cache)


def prepare(cache: Path = CACHE, log=print) -> GuestImage:
    """Kernel and initramfs for the guest, from the cache or built into it (under a lock)."""
    t0 = time.monotonic()
    for tool, pkg in (("qemu-system-x86_64", "qemu-system-x86"), ("dpkg-deb", "dpkg")):
        if shutil.which(tool) is None:
            raise LabUnavailable(f"{tool} is not installed: apt-get install {pkg} (make deps does)")
    busybox = Path("/bin/busybox")
    if subprocess.run(["dpkg", "-s", "busybox-static"], capture_output=True).returncode != 0 or not busybox.exists():
        raise LabUnavailable("busybox-static is not installed: apt-get install busybox-static (make deps does)")
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LabUnavailable(f"cannot create the lab cache {cache}: {exc} (set SSDPTS_LAB_CACHE)") from None
    # A kernel already in the cache is used as it is (asking apt costs seconds on every session);
    # SSDPTS_LAB_REFRESH=1 follows linux-image-amd64 to Debian's current kernel.
    cached = sorted((d for d in cache.glob("linux-image-*_*") if (d / "vmlinuz").is_file()),
                    key=lambda d: d.stat().st_mtime)
    if cached and not os.environ.get("SSDPTS_LAB_REFRESH"):
        pkg, _, ver = cached[-1].name.partition("_")
    else:
        pkg, ver = _kernel_package()
    kdir = cache / f"{pkg}_{ver}"
    init_text = (HERE / "init.sh").read_bytes()
    bb_ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "busybox-static"], capture_output=True,
                            text=True).stdout
    key = hashlib.sha256(init_text + repr((MODULES, bb_ver, ver)).encode()).hexdigest()[:16]
    initrd = kdir / f"initramfs-{key}.cpio"
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (kdir / "vmlinuz").is_file():
            log(f"lab: fetching guest kernel {pkg} {ver} into {kdir}")
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                tmpd = Path(tmp)
                deb = _kernel_deb(pkg, ver, tmpd)
                root = tmpd / "root"
                _run(["dpkg-deb", "-x", str(deb), str(root)], f"unpacking {deb.name}")
                kver = next(p.name for p in (root / "lib/modules").iterdir())
                moddir = root / "lib/modules" / kver
                _run([str(busybox), "depmod", "-b", str(root), kver], "depmod of the guest kernel's modules")
                staging = tmpd / "out"
                (staging / "modules").mkdir(parents=True)
                for m in _module_closure(moddir, MODULES):
                    dst = staging / "modules" / m
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(moddir / m, dst)
                (staging / "modules.load").write_text("\n".join(_module_closure(moddir, MODULES)) + "\n")
                (staging / "kernel-version").write_text(kver + "\n")
                shutil.copy2(next((root / "boot").glob("vmlinuz-*")), staging / "vmlinuz")
                if kdir.exists():
                    shutil.rmtree(kdir)
                staging.rename(kdir)
        if not initrd.is_file():
            log(f"lab: building initramfs {initrd.name}")
            kver = (kdir / "kernel-version").read_text().strip()
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                root = Path(tmp) / "root"
                (root / "bin").mkdir(parents=True)
                shutil.copy2(busybox, root / "bin/busybox")
                shutil.copy2(HERE / "init.sh", root / "init")
                os.chmod(root / "init", 0o755)
                shutil.copytree(kdir / "modules", root / "lib/modules" / kver)
                shutil.copy2(kdir / "modules.load", root / "modules.load")
                files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
                out = Path(tmp) / "initramfs.cpio"
                with open(out, "wb") as f:
                    proc = subprocess.run([str(busybox), "cpio", "-o", "-H", "newc", "-R", "0:0"], cwd=root,
                                          input="\n".join(files).encode(), stdout=f, stderr=subprocess.PIPE)
                if proc.returncode != 0:
                    raise LabUnavailable(f"building the initramfs failed: {proc.stderr.decode().strip()}")
                out.rename(initrd)
            for old in kdir.glob("initramfs-*.cpio"):
                if old != initrd:
                    old.unlink()
    return GuestImage(kdir / "vmlinuz", initrd, ver, time.monotonic() - t0)


# --- the guest ---------------------------------------------------------------------------------------


@dataclass
class Result:
    argv: str
    rc: int
    stdout: str
    stderr: str
    elapsed_s: float
    timed_out: bool

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out

    def check(self) -> "Result":
        if not self.ok:
            raise AssertionError(f"guest command failed (rc={self.rc}{', timed out' if self.timed_out else ''}): "
                                 f"{self.argv}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}")
        return self

    def json(self):
        return json.loads(self.stdout)


class GuestError(RuntimeError):
    pass


def _die_with_parent() -> None:
    """In the QEMU child before exec: SIGKILL it when the test process dies, however it dies, so no
    guest outlives its session (a TCG guest left behind eats a CPU for good)."""
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Guest:
    """A running lab guest. ``run`` executes a command in it and returns its exit code and output."""

    image: GuestImage
    scratch: Path
    accel: str = ""  # "kvm" or "tcg", set by start()
    accel_note: str = ""  # why this accelerator (what happened when KVM was tried)
    boot_s: float = 0.0  # QEMU start to the agent's first message
    proc: subprocess.Popen | None = None
    sock: socket.socket | None = None
    ready: dict = field(default_factory=dict)
    _buf: bytes = b""
    _next_id: int = 0
    log: list[tuple[str, float, int]] = field(default_factory=list)  # (command, seconds, rc) of every call
    drives: tuple[Drive, ...] = DRIVES  # the emulated drives (the lab's own set unless a test brings its own)

    # -- launch

    def _images(self) -> list[str]:
        args = []
        for d in self.drives:
            for img_id, size, discard in d.image_ids():
                path = Path(d.path) if d.path and img_id == d.key else self.scratch / f"{img_id}.img"
                if not path.exists():
                    with open(path, "wb") as f:
                        f.truncate(size)
                args += ["-drive", f"file={path},format=raw,if=none,id=img-{img_id},cache=none,aio=threads,"
                                   f"discard={discard}"]
        for d in self.drives:
            for dev in d.device_args:
                args += ["-device", dev]
        return args

    def _argv(self, accel: str) -> list[str]:
        cpu = ["-cpu", "host"] if accel == "kvm" else ["-cpu", TCG_CPU]
        accel_arg = "kvm" if accel == "kvm" else "tcg,thread=multi"
        cmdline = (f"console=ttyS0 loglevel=4 panic=-1 rdinit=/init ssdpts.scratch={self.scratch} "
                   "nvme_core.multipath=N mitigations=off " + os.environ.get("SSDPTS_LAB_KERNEL_ARGS", "")).strip()
        return [
            "qemu-system-x86_64", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-machine", "q35", "-accel", accel_arg, *cpu, "-smp", "2", "-m", "2048",
            "-kernel", str(self.image.kernel), "-initrd", str(self.image.initramfs), "-append", cmdline,
            "-chardev", f"file,id=con,path={self.scratch / 'console.log'}", "-serial", "chardev:con",
            "-device", "virtio-serial-pci,id=vser0",
            "-chardev", f"socket,id=ctl,path={self.scratch / 'agent.sock'},server=on,wait=off",
            "-device", "virtserialport,chardev=ctl,name=ssdpts.lab",
            "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
            "-fsdev", f"local,id=scratch,path={self.scratch},security_model=none,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=scratch,mount_tag=scratch",
            *self._images(),
        ]

    def _write_env(self) -> None:
        venv_bin = Path(sys.executable).parent
        path = f"{venv_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        udevd = next((p for p in ("/lib/systemd/systemd-udevd", "/usr/lib/systemd/systemd-udevd") if os.path.exists(p)),
                     "")
        # A fio that stops a run right after its purge (tests/lab/fio_stop.py), first on PATH when asked.
        stop = self.scratch / "fio-stop"
        stop.mkdir(exist_ok=True)
        (stop / "fio").write_text(f"#!{sys.executable}\n" + (HERE / "fio_stop.py").read_text())
        (stop / "fio").chmod(0o755)
        env = {"LAB_PYTHON": sys.executable, "LAB_AGENT": str(HERE / "agent.py"), "LAB_PATH": path,
               "LAB_UDEVD": udevd}
        (self.scratch / "guest.env").write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items()))

    def _boot(self, accel: str, timeout_s: float) -> None:
        self._write_env()
        for f in ("agent.sock", "console.log"):
            (self.scratch / f).unlink(missing_ok=True)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self._argv(accel), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent)
        sock_path = self.scratch / "agent.sock"
        while True:  # QEMU creates the socket, then listens on it: connect when it does
            if self.proc.poll() is not None:
                raise GuestError(self._qemu_said())
            if time.monotonic() - t0 > 30:
                raise GuestError("QEMU did not open its agent socket within 30 s")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(sock_path))
                break
            except OSError:
                sock.close()
                time.sleep(0.05)
        self.sock = sock
        self._buf = b""
        msg = self._recv(deadline=t0 + timeout_s)
        if not msg.get("ready"):
            raise GuestError(f"unexpected first message from the agent: {msg}")
        self.ready = msg
        self.boot_s = time.monotonic() - t0
        self.accel = accel

    def start(self, boot_timeout_s: float = 600) -> "Guest":
        forced = os.environ.get("SSDPTS_LAB_ACCEL", "")
        tries: list[str]
        if forced:
            tries, self.accel_note = [forced], f"forced by SSDPTS_LAB_ACCEL={forced}"
        elif os.access("/dev/kvm", os.R_OK | os.W_OK):
            tries = ["kvm", "tcg"]
        else:
            tries, self.accel_note = ["tcg"], "no usable /dev/kvm"
        for accel in tries:
            try:
                # Under KVM the kernel is up in seconds: a guest silent after 60 s is one of the
                # nested-KVM hangs (this project's CI host), so give up on it early.
                self._boot(accel, 60 if accel == "kvm" and len(tries) > 1 else boot_timeout_s)
                if accel == "kvm":
                    self.accel_note = "KVM works here"
                return self
            except GuestError as exc:
                self.stop(force=True)
                if accel == tries[-1]:
                    raise GuestError(f"the lab guest did not come up under {accel}: {exc}\n"
                                     f"console:\n{self.console_tail()}") from None
                said = str(exc).splitlines()[0]
                self.accel_note = f"KVM tried and failed ({said.rsplit(': ', 1)[-1][:160]}): TCG instead"
        return self

    # -- the wire

    def _recv(self, deadline: float) -> dict:
        assert self.sock is not None
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GuestError("timed out waiting for the guest agent")
            if self.proc is not None and self.proc.poll() is not None:
                raise GuestError(self._qemu_said())
            self.sock.settimeout(min(left, 1.0))
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError as exc:
                raise GuestError(f"the agent's channel failed ({exc}): {self._qemu_said()}") from None
            if not chunk:
                raise GuestError(f"the agent's channel closed: {self._qemu_said()}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def _send(self, obj: dict) -> None:
        assert self.sock is not None
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def run(self, cmd: str | list[str], *, timeout: float = 300, env: dict | None = None,
            input: str | None = None, check: bool = False) -> Result:
        """Run ``cmd`` (a shell string or an argv list) in the guest; its exit code and output."""
        self._next_id += 1
        req: dict = {"id": self._next_id, "timeout": timeout, "env": env or {}}
        if isinstance(cmd, str):
            req["sh"] = cmd
        else:
            req["argv"] = list(cmd)
        if input is not None:
            req["input"] = input
        self._send(req)
        # The agent kills the command at its timeout; a guest that cannot even answer by then has hung.
        msg = self._recv(deadline=time.monotonic() + timeout + 120)
        if msg.get("id") != self._next_id:
            raise GuestError(f"answer to the wrong request: {msg}")
        shown = cmd if isinstance(cmd, str) else shlex.join(cmd)
        res = Result(shown, msg["rc"], msg["stdout"], msg["stderr"], msg["elapsed_s"], msg["timed_out"])
        self.log.append((shown, res.elapsed_s, res.rc))
        return res.check() if check else res

    # -- teardown and diagnostics

    def _qemu_said(self) -> str:
        """QEMU's own messages (stdout+stderr), once it has exited; else that it is still running."""
        if self.proc is None:
            return "QEMU not running"
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "QEMU still running"
        text = self.proc.stdout.read().decode(errors="replace").strip() if self.proc.stdout else ""
        return f"QEMU exited ({self.proc.returncode}): {text[-500:] or 'no message'}"

    def console_tail(self, n: int = 40) -> str:
        try:
            return "\n".join((self.scratch / "console.log").read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no console log)"

    def stop(self, force: bool = False) -> None:
        if self.proc is None:
            return
        if not force and self.proc.poll() is None and self.sock is not None:
            try:
                self._next_id += 1
                self._send({"id": self._next_id, "op": "poweroff"})
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired, GuestError):
                pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        if self.sock is not None:
            self.sock.close()
        self.proc = self.sock = None


def main() -> int:
    """Boot the lab by hand: python -m tests.lab.guest [command ...]"""
    image = prepare()
    scratch = Path(tempfile.mkdtemp(prefix="ssdpts-lab-", dir=os.environ.get("SSDPTS_LAB_SCRATCH", "/var/tmp")))
    g = Guest(image, scratch)
    t0 = time.monotonic()
    g.start()
    print(f"guest up under {g.accel} ({g.accel_note}) in {g.boot_s:.1f} s; scratch {scratch}", flush=True)
    try:
        cmds = sys.argv[1:] or ["lsblk -o NAME,SIZE,LOG-SEC,ROTA,TRAN,MODEL,SERIAL"]
        for c in cmds:
            r = g.run(c, timeout=1800)
            print(f"$ {c}  (rc={r.rc}, {r.elapsed_s:.1f} s)\n{r.stdout}{r.stderr}", flush=True)
    finally:
        g.stop()
        if not os.environ.get("SSDPTS_LAB_KEEP"):
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"total {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
