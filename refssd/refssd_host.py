"""Host side of the reference SSD: build it, serve it as a loop device, read its ground truth.

Used by the proof tests (tests/refssd/) and by `make demo-ssd`. It is not part of ssdpts and
ssdpts never imports it: ssdpts meets the reference SSD only as the block device made here.

    with ReferenceSSD(capacity="128M", pages_per_block=32) as ssd:
        ssd.device            # /dev/loopN, direct I/O over <mount>/disk
        ssd.truth()           # the simulator's interval records so far (docs/reference-ssd.md)
        ssd.format()          # back to fresh-out-of-box

The drive parameters are refssd's command-line options with dashes as underscores
(``t_prog_us=1000``); `params()` returns them with the derived geometry.
"""

from __future__ import annotations

import bisect
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import tempfile
import time

HERE = Path(__file__).resolve().parent
BINARY = HERE / "target" / "release" / "refssd"


class RefSSDError(RuntimeError):
    pass


def build(quiet: bool = True) -> Path:
    """cargo build --release when the binary is missing or older than a source file."""
    sources = [HERE / "Cargo.toml", HERE / "Cargo.lock", *sorted((HERE / "src").glob("*.rs"))]
    if BINARY.exists() and BINARY.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return BINARY
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not os.access(cargo, os.X_OK):
        raise RefSSDError("cargo is not installed: the reference SSD is a Rust program (install Rust with rustup)")
    cmd = [cargo, "build", "--release", "--locked", "--manifest-path", str(HERE / "Cargo.toml")]
    if quiet:
        cmd.append("-q")
    proc = subprocess.run(cmd, capture_output=quiet, text=True)
    if proc.returncode != 0:
        raise RefSSDError(f"building refssd failed: {(proc.stderr or '').strip()[-2000:]}")
    return BINARY


def _argv(params: dict) -> list[str]:
    out = []
    for k, v in params.items():
        if isinstance(v, bool):
            v = "yes" if v else "no"
        out += [f"--{k.replace('_', '-')}", str(v)]
    return out


def params(**drive) -> dict:
    """The drive's parameters, derived geometry and reference figures (refssd params): among them
    reference_wa (the mean-field steady-state WA of greedy GC for the drive's pages per block at its
    effective spare), gc_start_host_pages, fob_write_iops and steady_write_iops, and with an SLC cache
    (slc_cache_bytes > 0) slc_cliff_host_pages and slc_cliff_bytes (what a fresh drive takes in SLC
    mode under 4 KiB random writes), slc_write_iops and post_cliff_write_iops
    (refssd/src/reference.rs, docs/reference-ssd.md "The reference", "SLC cache")."""
    proc = subprocess.run([str(build()), "params", *_argv(drive)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RefSSDError(proc.stderr.strip())
    return json.loads(proc.stdout)


def predict(pattern: str = "randwrite", bs: int = 4096, qd: int = 32, write_multiple: float = 4.0,
            interval_ms: float = 1000, **drive) -> list[dict]:
    """The model's own course of a closed-loop workload, in virtual time (no host overhead)."""
    proc = subprocess.run([str(build()), "predict", "--pattern", pattern, "--bs", str(bs), "--qd", str(qd),
                           "--write-multiple", str(write_multiple), "--interval-ms", str(interval_ms),
                           *_argv(drive)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RefSSDError(proc.stderr.strip())
    return [json.loads(line) for line in proc.stdout.splitlines()]


# ---- ground truth ---------------------------------------------------------------------------

class Truth:
    """The simulator's interval records (host IOs by completion time, flash work by schedule)."""

    def __init__(self, lines: list[dict]):
        self.config = next((x for x in lines if x.get("type") == "config"), None)
        self.intervals = [x for x in lines if x.get("type") == "interval"]
        self._t0 = [x["t0"] for x in self.intervals]

    @classmethod
    def load(cls, path: Path) -> "Truth":
        lines = []
        for raw in Path(path).read_text().splitlines():
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError:
                break  # a line being written
        return cls(lines)

    def _overlap(self, t0: float, t1: float):
        """(interval, fraction of it inside [t0, t1]) for every interval that overlaps."""
        i = max(0, bisect.bisect_right(self._t0, t0) - 1)
        while i < len(self.intervals) and self.intervals[i]["t0"] < t1:
            iv = self.intervals[i]
            span = iv["t1"] - iv["t0"]
            f = max(0.0, min(t1, iv["t1"]) - max(t0, iv["t0"])) / span
            if f > 0:
                yield iv, f
            i += 1

    def covers(self, t1: float) -> bool:
        return bool(self.intervals) and self.intervals[-1]["t1"] >= t1

    def sum(self, key: str, t0: float, t1: float) -> float:
        return sum(iv[key] * f for iv, f in self._overlap(t0, t1))

    def rate(self, key: str, t0: float, t1: float) -> float:
        """Per-second rate of ``key`` over [t0, t1], intervals at the edges counted pro rata."""
        return self.sum(key, t0, t1) / (t1 - t0)

    def lat_mean_us(self, op: str, t0: float, t1: float) -> float:
        """Mean modeled service time of reads ("read") or writes ("write") completed in [t0, t1]."""
        n = s = 0.0
        for iv, f in self._overlap(t0, t1):
            k = iv[f"host_{op}_ios"] * f
            if k:
                n += k
                s += k * iv[f"{op}_lat_mean_us"]
        return s / n if n else float("nan")

    def wa(self, t0: float, t1: float) -> float:
        return self.sum("flash_prog_pages", t0, t1) / max(1.0, self.sum("host_write_pages", t0, t1))

    def at(self, t: float) -> dict:
        i = max(0, bisect.bisect_right(self._t0, t) - 1)
        return self.intervals[i]


def io_log_commands(path: Path, op: str = "W"):
    """(arrival epoch ns, length, modeled service time ns) of every command ``op`` in the io log."""
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split(",")
            if len(parts) == 5 and parts[1] == op:
                yield int(parts[0]), int(parts[3]), int(parts[4])


def read_io_log(path: Path, t0: float, t1: float, op: str = "W", length: int | None = None) -> list[int]:
    """Modeled service times (ns) of the commands that arrived in [t0, t1] (epoch seconds)."""
    lo, hi = int(t0 * 1e9), int(t1 * 1e9)
    return [svc for at, n, svc in io_log_commands(path, op) if lo <= at <= hi and (length is None or n == length)]


def completions(path: Path, op: str = "W") -> list[float]:
    """Epoch seconds at which the simulator completed each command ``op`` (arrival + modeled time), in order."""
    return sorted((at + svc) / 1e9 for at, _n, svc in io_log_commands(path, op))


# ---- serving ----------------------------------------------------------------------------------

class ReferenceSSD:
    """Start refssd on a FUSE mount and a loop device (direct I/O) over its disk file; stop both.

    Needs root (losetup) and /dev/fuse. Only the loop device and process made here are touched."""

    def __init__(self, workdir: Path | None = None, *, io_log: bool = False, interval_ms: float = 100,
                 loop: bool = True, **drive):
        self.drive = drive
        self.loop = loop  # False: serve the file only (for QEMU to back an emulated drive with it)
        self.interval_ms = interval_ms
        self._own_dir = workdir is None
        self.dir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="refssd-", dir=os.environ.get("TMPDIR", "/var/tmp")))
        self.mount = self.dir / "mnt"
        self.truth_path = self.dir / "truth.jsonl"
        self.io_log_path = self.dir / "io.csv" if io_log else None
        self.log_path = self.dir / "refssd.log"
        self.proc: subprocess.Popen | None = None
        self.device: str | None = None

    # context manager
    def __enter__(self) -> "ReferenceSSD":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        binary = build()
        if shutil.which("losetup") is None or shutil.which("fusermount3") is None:
            raise RefSSDError("losetup (util-linux) and fusermount3 (fuse3) are needed to serve the reference SSD")
        self.mount.mkdir(parents=True, exist_ok=True)
        argv = [str(binary), "serve", "--mount", str(self.mount), "--truth", str(self.truth_path),
                "--interval-ms", str(self.interval_ms), *_argv(self.drive)]
        if self.io_log_path:
            argv += ["--io-log", str(self.io_log_path)]
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        disk = self.mount / "disk"
        deadline = time.monotonic() + 10
        while not disk.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RefSSDError(f"refssd did not start: {self.log_path.read_text().strip()[-500:]}")
            time.sleep(0.02)
        self.disk = disk
        if not self.loop:
            return
        out = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", str(disk)], capture_output=True,
                             text=True, timeout=30)
        if out.returncode != 0:
            raise RefSSDError(f"losetup failed: {out.stderr.strip()}")
        self.device = out.stdout.strip()
        name = os.path.basename(self.device)
        dio = Path(f"/sys/block/{name}/loop/dio")
        if dio.exists() and dio.read_text().strip() != "1":
            raise RefSSDError(f"{self.device} did not get direct I/O: the reference SSD would be behind the page cache")

    def stop(self) -> None:
        if self.device:
            for _ in range(50):  # the device can be busy for a moment after fio exits
                if subprocess.run(["losetup", "-d", self.device], capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)
            self.device = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)  # refssd unmounts and writes its totals
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
            self._log.close()
        if os.path.ismount(self.mount):
            subprocess.run(["fusermount3", "-u", str(self.mount)], capture_output=True)
        if self._own_dir and os.environ.get("REFSSD_KEEP") is None:
            shutil.rmtree(self.dir, ignore_errors=True)

    # drive controls and records
    def format(self) -> None:
        """Format NVM / Sanitize: every block erased, nothing mapped (returns when done)."""
        with open(self.mount / "ctl", "w") as f:
            f.write("format\n")

    def counters(self) -> dict:
        return json.loads((self.mount / "ctl").read_text())

    def truth(self, settle_s: float = 0.0) -> Truth:
        if settle_s:
            time.sleep(settle_s)
        return Truth.load(self.truth_path)

    def wait_truth(self, t1: float, timeout_s: float = 5.0) -> Truth:
        """The truth once it covers everything up to epoch time t1."""
        deadline = time.monotonic() + timeout_s
        while True:
            tr = Truth.load(self.truth_path)
            if tr.covers(t1) or time.monotonic() > deadline:
                return tr
            time.sleep(0.1)

    def params(self) -> dict:
        return params(**self.drive)

    def describe_file(self, path: Path) -> Path:
        """A description for ssdpts --describe: says the target is the simulated reference SSD and
        lists its parameters (ssdpts cannot read them from a loop device)."""
        Path(path).write_text(json.dumps(description(self.params()), indent=1))
        return Path(path)


def description(p: dict) -> dict:
    """What ssdpts stores with a run on the reference SSD (--describe): the drive's parameters,
    with units, and the reference figures they imply (the report lists both)."""
    cache = (f"volatile, {p['write_cache_pages']} pages" if p["write_cache_pages"] else
             "none (writes complete when programmed)")
    return {
        "simulated": True,
        "vendor": "ssdpts project",
        "model": "refssd reference SSD (simulated)",
        "nand_type": "simulated (page-mapped FTL model, no cell physics)",
        "erase_block_pages": p["pages_per_block"],  # the drive model's block size (docs/methodology.md#drive-model)
        "notes": ("the target is the refssd reference SSD: a drive simulated in real time and served "
                  "through FUSE and a loop device with direct I/O, not a physical SSD"),
        "refssd": {
            "user_capacity_bytes": p["capacity_bytes"],
            "over_provisioning_pct": round(100 * p["op"], 3),
            "spare_factor": round(p["spare_factor"], 4),
            "page_kib": p["page_bytes"] / 1024,
            "pages_per_block": p["pages_per_block"],
            "channels_x_dies": f"{p['channels']} x {p['dies_per_channel']}",
            "t_read_us": p["t_read_ns"] / 1e3,
            "t_prog_us": p["t_prog_ns"] / 1e3,
            "t_erase_us": p["t_erase_ns"] / 1e3,
            "channel_mb_per_s": p["channel_mb_s"],
            "host_link_mb_per_s": p["host_mb_s"],
            "command_overhead_us": p["t_cmd_ns"] / 1e3,
            "write_cache": cache,
            "gc": f"greedy, paced; starts at {p['gc_free_blocks']} free block(s) per die",
            "idle_gc": (f"after {p['bg_gc_idle_ns'] / 1e6:g} ms idle, up to {100 * p['bg_gc_free_fraction']:g}% "
                        "of the spare blocks; " + ("goes on while the host only reads" if p.get("bg_gc_during_reads")
                                                   else "a read ends the idle time")),
            "deallocation": (f"{p['dealloc_die_ns_per_page'] / 1e3:g} µs of die time per deallocated page, after the "
                             "trim completes" if p.get("dealloc_die_ns_per_page") else "a mapping update only"),
            "effective_spare_factor": round(p["effective_spare_factor"], 4),
            **_slc_description(p),
        },
        # what the geometry and timings imply (refssd params; docs/reference-ssd.md "The reference"):
        # the figures the report's measured ones are to be read against
        "reference": {
            "fob_4k_write_iops": round(p["fob_write_iops"]),
            "gc_starts_after_capacity_written": round(p["gc_start_host_pages"] / p["logical_pages"], 4),
            "steady_wa_greedy_mean_field": round(p["reference_wa"], 4),
            "steady_4k_write_iops": round(p["steady_write_iops"]),
            **({"slc_cliff_capacity_written": round(p["slc_cliff_host_pages"] / p["logical_pages"], 4),
                "slc_4k_write_iops": round(p["slc_write_iops"])} if p.get("slc_cache_pages") else {}),
            "documentation": "docs/reference-ssd.md",
        },
    }


def _slc_description(p: dict) -> dict:
    """The SLC cache's line of the description (none without a cache: the description is then what
    it always was)."""
    if not p.get("slc_cache_pages"):
        return {}
    kind = ("dynamic (in the user space holding no valid data: shrinks as the drive fills)" if p["slc_dynamic"]
            else "static (reserved from the spare)")
    return {"slc_cache": (f"{kind}, {p['slc_cache_pages'] * p['page_bytes'] / 2**20:g} MiB of host data "
                          f"({p['slc_blocks_per_die']} SLC blocks of {p['slc_pages_per_block']} pages per die), "
                          f"SLC program {p['t_prog_slc_ns'] / 1e3:g} µs; folded into normal blocks in idle time"
                          + (" and when a die needs blocks" if p["slc_dynamic"] else ""))}
