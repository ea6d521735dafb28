"""Fixtures for integration tests on real block devices.

Tests only ever write to loop devices they created here, backed by sparse files in their own
tmp_path; every device is detached at teardown, also when the test failed (after undoing any
swapon/mount the test left behind on it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _devices import remove_zram  # noqa: E402  (the benchmarks' scratch devices: one way to remove zram)


def require_root_and_losetup() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to create loop devices (run the integration tests as root)")
    if shutil.which("losetup") is None:
        pytest.skip("losetup (util-linux) is missing: install util-linux to run device tests")


def system_disk() -> str:
    """The disk behind / (/dev/vda on the CI machine). Only ever inspected, never opened for writing."""
    from ssdpts.device.safety import guard as safety

    disks = safety._system_disks()
    if os.path.exists("/dev/vda") and "vda" in disks:
        return "/dev/vda"
    for name, mps in disks.items():
        if "/" in mps and os.path.exists(f"/dev/{name}"):
            return f"/dev/{name}"
    pytest.skip("the root filesystem is not on a block device here (container overlay?)")


def run(*argv: str | os.PathLike[str]) -> str:
    """Run a command, fail the test with its stderr when it fails."""
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, argv))} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def _names_of(dev: str) -> set[str]:
    """The loop device and its partitions, as device paths."""
    name = os.path.basename(dev)
    base = Path("/sys/class/block") / name
    parts = {f"/dev/{p.name}" for p in base.glob(f"{name}p*") if (p / "partition").exists()}
    return {dev, *parts}


def _undo_leftovers(dev: str, tmp_root: Path) -> None:
    """swapoff / umount what a failed test may have left on *our* device, nothing else."""
    nodes = _names_of(dev)
    with open("/proc/swaps", encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            if line.split() and line.split()[0] in nodes:
                subprocess.run(["swapoff", line.split()[0]], check=False)
    with open("/proc/self/mounts", encoding="utf-8") as f:
        mounts = [line.split()[:2] for line in f if line.split()]
    for source, mountpoint in reversed(mounts):
        if source in nodes and mountpoint.startswith(str(tmp_root)):
            subprocess.run(["umount", mountpoint], check=False)


def _alive(pid: int) -> bool:
    """Running, i.e. neither gone nor a zombie waiting for the test to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _stop_our_ssdpts(grace_s: float = 60.0) -> None:
    """Stop every ssdpts a test started in the background and left running (the test failed before
    it waited for it): SIGINT as a user would, SIGKILL after grace_s. Without this the run keeps the
    test's devices open and their teardown fails (EBUSY), leaving devices behind."""
    import signal

    me = str(os.getpid())
    ours = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = (d / "stat").read_text().rsplit(")", 1)[1].split()[1]
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue
        if ppid == me and any(os.path.basename(a) == b"ssdpts" for a in argv[:2]):
            ours.append(int(d.name))
    for pid in ours:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + grace_s
    for pid in ours:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def make_loop(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: make_loop(size="256M", read_only=False, partscan=False, image=None) -> "/dev/loopN".

    ``image`` lets a test prepare the backing file first (e.g. write a partition table).
    """
    with loop_factory(tmp_path) as make:
        yield make


@contextlib.contextmanager
def loop_factory(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """make_loop's factory for any scope: every loop device made is detached when the block ends."""
    require_root_and_losetup()
    created: list[str] = []

    def make(size: str = "256M", *, read_only: bool = False, partscan: bool = False,
             image: Path | None = None) -> str:
        img = image or tmp_path / f"loop{len(created)}.img"
        if not img.exists():
            run("truncate", "-s", size, img)
        argv = ["losetup", "--direct-io=on", "-f", "--show"]
        if read_only:
            argv.append("-r")
        if partscan:
            argv.append("-P")
        dev = run(*argv, img).strip()
        assert dev.startswith("/dev/loop"), dev
        created.append(dev)
        return dev

    try:
        yield make
    finally:
        _stop_our_ssdpts()
        for dev in reversed(created):
            _undo_leftovers(dev, tmp_path)
            # Only while it is still ours: a test that re-attaches a node (loop_reattach) could, in the
            # worst case, have lost it to another process creating loop devices at the same moment.
            backing = Path(f"/sys/block/{os.path.basename(dev)}/loop/backing_file")
            if backing.exists() and backing.read_text().strip().startswith(str(tmp_path)):
                subprocess.run(["losetup", "-d", dev], check=False)


_LOOP_SET_FD, _LOOP_CLR_FD, _LOOP_SET_DIRECT_IO = 0x4C00, 0x4C01, 0x4C08


def loop_reattach(dev: str, image: Path) -> None:
    """Detach loop device ``dev`` and attach the same node to ``image`` at once (two ioctls, no
    losetup in between, so another process creating loop devices cannot take the node meanwhile)."""
    import fcntl

    fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _LOOP_CLR_FD, 0)
    finally:
        os.close(fd)
    # The kernel tears the old binding down at the device's last close. A process that still has it
    # open (a killed run's fio, exiting) defers that; opening the node again now would make this
    # process that last opener and LOOP_SET_FD would fail with EBUSY for good. So wait, without
    # holding the node, until the old binding is gone.
    backing_file = Path(f"/sys/block/{os.path.basename(dev)}/loop/backing_file")
    deadline = time.monotonic() + 30
    while backing_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
    try:
        backing = os.open(image, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.ioctl(fd, _LOOP_SET_FD, backing)
        except OSError as exc:
            pytest.fail(f"cannot attach {image} to {dev} again ({exc.strerror}): another process took the node")
        finally:
            os.close(backing)
        fcntl.ioctl(fd, _LOOP_SET_DIRECT_IO, 1)
    finally:
        os.close(fd)


@pytest.fixture
def make_zram() -> Iterator[Callable[..., str]]:
    """Factory: make_zram(size_bytes) -> "/dev/zramN"; every device made here is removed after."""
    with zram_factory() as make:
        yield make


@contextlib.contextmanager
def zram_factory() -> Iterator[Callable[..., str]]:
    """make_zram's factory for any scope: every zram device made is removed when the block ends."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create zram devices")
    control = Path("/sys/class/zram-control/hot_add")
    if not control.exists():
        pytest.skip("this kernel has no zram-control (zram module not loaded or not built)")
    made: list[str] = []

    def make(size_bytes: int = 512 * 2**20) -> str:
        n = control.read_text().strip()
        made.append(n)
        Path(f"/sys/block/zram{n}/disksize").write_text(str(size_bytes))
        return f"/dev/zram{n}"

    try:
        yield make
    finally:
        _stop_our_ssdpts()
        for n in made:
            remove_zram(n)


# The time-compressed settings of the shared runs below (steps of 0.1 s, at most 5 rounds).
FAST = ["--step-seconds", "0.1", "--max-rounds", "5", "--wsat-hours", "0.1"]


@pytest.fixture(scope="session")
def all_four_runs(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path, str]]:
    """'ssdpts run all' (FAST) once on a 256 MiB loop device and once on a 512 MiB zram device, made
    here and removed as soon as the runs end: {"loop"|"zram": (the command's result, its --out, the
    device path)}. The run directories stay for the session: test_run_devices.py checks each run,
    test_compare_real.py compares the two (each run took ~90 s in CI; they are made once)."""
    base = tmp_path_factory.mktemp("all-four")
    out: dict[str, tuple[subprocess.CompletedProcess, Path, str]] = {}
    with loop_factory(base) as make_loop_dev, zram_factory() as make_zram_dev:
        for name, dev in (("loop", make_loop_dev("256M")), ("zram", make_zram_dev(512 * 2**20))):
            runs = base / name
            proc = ssdpts("run", "all", "--target", dev, *FAST, "--destroy-data-on", dev, "--out", str(runs),
                          "--quiet")
            out[name] = (proc, runs, dev)
    return out


def ssdpts(*args: str, timeout: float = 900, **kw) -> subprocess.CompletedProcess:
    """Run the installed ssdpts command."""
    return subprocess.run(["ssdpts", *args], capture_output=True, text=True, timeout=timeout, **kw)


def finished_lines(steps_jsonl: Path) -> list[bytes]:
    """The whole lines of a steps.jsonl that a running ssdpts is still appending to. The store writes
    a round's lines with one write(), but a reader on Linux may see part of a write that spans pages:
    what follows the last newline is not a line yet (ssdpts's own status reader drops it the same way)."""
    if not steps_jsonl.exists():
        return []
    data = steps_jsonl.read_bytes()
    return [ln for ln in data[:data.rfind(b"\n") + 1].splitlines() if ln.strip()]


def finished_steps(steps_jsonl: Path) -> list[dict]:
    """finished_lines, parsed."""
    import json

    return [json.loads(ln) for ln in finished_lines(steps_jsonl)]


def no_process_matching(pattern: str, timeout: float = 10) -> bool:
    """No process whose command line matches ``pgrep -f pattern`` within ``timeout`` seconds:
    killed ones take a moment to be scheduled and exit on a loaded host."""
    import subprocess
    import time

    end = time.monotonic() + timeout
    while subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.strip():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def checksum(dev: str) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(dev, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def small_ext4(make_loop, tmp_path: Path, name: str, size: str = "32M", free_bytes: int | None = None) -> Iterator[Path]:
    """A small ext4 filesystem on a loop device, mounted at tmp_path/name; filled up to
    ``free_bytes`` when given. Loop devices left over a file on it are detached before the unmount."""
    import shutil

    small = make_loop(size)
    run("mkfs.ext4", "-q", "-F", "-m", "0", small)
    mnt = tmp_path / name
    mnt.mkdir()
    run("mount", small, mnt)
    try:
        if free_bytes is not None:
            run("fallocate", "-l", str(shutil.disk_usage(mnt).free - free_bytes), mnt / "ballast")
        yield mnt
    finally:
        for f in mnt.iterdir():
            for ln in subprocess.run(["losetup", "-j", str(f)], capture_output=True, text=True).stdout.splitlines():
                subprocess.run(["losetup", "-d", ln.split(":")[0]], check=False)
        run("umount", mnt)
