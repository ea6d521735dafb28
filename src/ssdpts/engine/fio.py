"""FioExecutor: one fio process per batch (a round), its steps back to back.

Scheduling (measured with fio 3.33 on a loop device, see benchmarks/round_overhead.py): a fio
process per step leaves the device idle ~330 ms per step; stonewalled jobs in one process still
cost ~250 ms per job (fio's main loop reaps finished jobs on a 100 ms poll). So every step is a
job section of one job file, started by ``startdelay`` at the sum of the preceding steps'
durations and stopped by ``runtime``: the device sees the steps back to back with no idle gap
between them (PTS: no delay between steps), and only fio's start-up (~0.2 s) is paid once per
round. ``new_group`` keeps each step's ``numjobs`` clones reported as one group.
``clocksource=clock_gettime`` skips fio's TSC calibration (~60 ms per process).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
import shutil
import signal
import subprocess
import threading
import time
import zlib

from ..errors import RunFailed, UserError
from ..measurement import PERCENTILES
from ..pts.workload import Step
from .base import Batch, BatchResult
from .fioparse import FioOutputError, job_measurement, parse_fio_output

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """fio must not outlive ssdpts: a SIGKILLed runner must not leave fio writing to the device."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def fio_binary() -> str:
    path = shutil.which("fio")
    if not path:
        raise UserError("fio is not installed: install it (Debian/Ubuntu: apt-get install fio) and run again")
    return path


def fio_version(binary: str | None = None) -> str:
    try:
        out = subprocess.run([binary or fio_binary(), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"cannot run fio --version ({exc}): check the fio installation") from None
    return out.stdout.strip() or "unknown"


def default_ioengine() -> str:
    """io_uring where the kernel allows it, else libaio (PTS.md: disclose the engine)."""
    try:
        disabled = Path("/proc/sys/kernel/io_uring_disabled").read_text().strip()
        if disabled != "0":
            return "libaio"
    except OSError:
        pass  # sysctl absent: io_uring present since 5.1 unless the kernel is older
    release = os.uname().release.split(".")
    try:
        major, minor = int(release[0]), int(release[1])
    except (ValueError, IndexError):
        return "libaio"
    return "io_uring" if (major, minor) >= (5, 10) else "libaio"


def _ms(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


def _step_seed(base: int, step: Step) -> int:
    # A different LBA/data sequence per step and round, reproducible from the recorded base seed.
    return (base * 1_000_003 + step.round * 1009 + step.index * 7 + zlib.crc32(step.part.encode()) % 997) % (2**63)


def render_job_file(batch: Batch) -> tuple[str, list[float]]:
    """The fio job file of a batch and each step's scheduled start offset (seconds)."""
    g = [
        "[global]",
        f"filename={batch.filename}",
        "direct=1",
        f"ioengine={batch.ioengine}",
        "thread=1",
        "clocksource=clock_gettime",
        "group_reporting=1",
        "norandommap=1",
        "random_generator=tausworthe64",  # PTS: >= 48-bit RNG for LBAs and data
        f"offset={batch.area.offset_bytes}",
        f"size={batch.area.size_bytes}",
        "lat_percentiles=1",  # response time = total latency (submission + completion)
        "clat_percentiles=0",  # ... and only that histogram: a second one costs CPU per IO
        "percentile_list=" + ":".join(f"{p:g}" for p in PERCENTILES),
        "exitall_on_error=1",
    ]
    if batch.ioengine == "io_uring":
        # Host overhead, not device behaviour: pre-registered buffers and file (measured in
        # benchmarks/zram_iops.py against a hand-tuned fio command).
        g += ["fixedbufs=1", "registerfiles=1"]
    g.append("")
    starts: list[float] = []
    t = 0.0
    timed = [s for s in batch.steps if s.duration_s is not None]
    if timed and len(timed) != len(batch.steps):
        raise ValueError("a batch is either all timed steps or one size-bound step")
    if not timed and len(batch.steps) != 1:
        raise ValueError("a size-bound (WIPC) batch has exactly one step")
    for n, s in enumerate(batch.steps, start=1):
        w = s.workload
        rw = {"rand": ("randread", "randwrite", "randrw"), "seq": ("read", "write", "rw")}[w.pattern]
        rw_value = rw[0] if w.read_pct == 100 else rw[1] if w.read_pct == 0 else rw[2]
        sec = [f"[s{n:04d}]", "new_group", f"rw={rw_value}", f"bs={w.block_size_bytes}",
               f"numjobs={w.threads}", f"iodepth={w.iodepth}", f"randseed={_step_seed(batch.seed, s)}"]
        if w.iodepth >= 8:
            # Submit and reap in batches of up to QD/2 (completions are reaped as soon as one is
            # ready, so no IO waits for a batch to fill; the queue still never exceeds QD).
            sec += [f"iodepth_batch_submit={w.iodepth // 2}", f"iodepth_batch_complete_max={w.iodepth // 2}"]
        if rw_value in ("randrw", "rw"):
            sec.append(f"rwmixread={w.read_pct}")
        if w.pattern == "seq" and w.threads > 1:
            # Each clone writes its own slice so that the device still sees sequential streams.
            sec.append("offset_increment=" + str(batch.area.size_bytes // w.threads // w.block_size_bytes * w.block_size_bytes))
            sec.append(f"size={batch.area.size_bytes // w.threads // w.block_size_bytes * w.block_size_bytes}")
        if s.duration_s is not None:
            sec += ["time_based=1", f"runtime={_ms(s.duration_s)}"]
            if t > 0:
                sec.append(f"startdelay={_ms(t)}")
            starts.append(t)
            t += s.duration_s
        else:
            sec.append(f"io_size={s.io_bytes}")
            starts.append(0.0)
        g += sec + [""]
    return "\n".join(g), starts


class _Sampler(threading.Thread):
    """Live progress without touching fio: completed IOs from the kernel's block statistics (or
    the fio process's I/O bytes for file targets), once per second."""

    def __init__(self, batch: Batch, pid: int, t0: float, starts: list[float]):
        super().__init__(daemon=True)
        self.batch, self.pid, self.t0, self.starts = batch, pid, t0, starts
        self.stop_event = threading.Event()
        name = os.path.basename(os.path.realpath(batch.filename))
        self.stat_path = Path(f"/sys/class/block/{name}/stat")

    def _counters(self) -> tuple[float, float] | None:
        try:
            if self.stat_path.exists():
                f = self.stat_path.read_text().split()
                return float(f[0]) + float(f[4]), (float(f[2]) + float(f[6])) * 512
            io = dict(ln.split(": ") for ln in Path(f"/proc/{self.pid}/io").read_text().splitlines())
            b = float(io["read_bytes"]) + float(io["write_bytes"])
            return None if b == 0 else (float("nan"), b)
        except (OSError, ValueError, KeyError, IndexError):
            return None

    def run(self) -> None:
        prev = self._counters()
        prev_t = time.monotonic()
        while not self.stop_event.wait(1.0):
            cur = self._counters()
            now = time.monotonic()
            if cur is None or prev is None or self.batch.on_progress is None:
                prev, prev_t = cur, now
                continue
            dt = now - prev_t
            elapsed = now - self.t0
            idx = sum(1 for s in self.starts if s <= elapsed) - 1
            step = self.batch.steps[max(idx, 0)]
            ios = (cur[0] - prev[0]) / dt
            bw = (cur[1] - prev[1]) / dt
            if ios != ios:  # file target: IOPS from bytes and the current block size
                ios = bw / step.workload.block_size_bytes
            try:
                self.batch.on_progress({"elapsed_s": elapsed, "step_index": max(idx, 0), "iops": ios,
                                        "bw_bytes_per_s": bw})
            except Exception:  # noqa: BLE001 - a display problem must never stop a measurement
                pass
            prev, prev_t = cur, now


class _Boundaries(threading.Thread):
    """Calls batch.on_boundary(i) at each scheduled step boundary of the running fio process.

    fio's job clock starts after its start-up (~0.2 s, measured per round and carried to the next),
    so boundary i is at t0 + startup + starts[i]. The last boundary (the end) is called by the
    executor after fio exits, when every step has really finished."""

    def __init__(self, batch: Batch, t0: float, startup_s: float, starts: list[float]):
        super().__init__(daemon=True)
        self.batch, self.t0, self.startup_s, self.starts = batch, t0, startup_s, starts
        self.stop_event = threading.Event()

    def run(self) -> None:
        for i, st in enumerate(self.starts):
            delay = self.t0 + self.startup_s + st - time.monotonic()
            if delay > 0 and self.stop_event.wait(delay):
                return
            _call_boundary(self.batch, i)


def _call_boundary(batch: Batch, i: int) -> None:
    if batch.on_boundary is None:
        return
    try:
        batch.on_boundary(i)
    except Exception:  # noqa: BLE001 - telemetry must never stop a measurement
        pass


class FioExecutor:
    name = "fio"
    STARTUP_GUESS_S = 0.2

    def __init__(self, binary: str | None = None):
        self.binary = binary or fio_binary()
        self._version: str | None = None
        self._startup_s = self.STARTUP_GUESS_S

    def version(self) -> str:
        if self._version is None:
            self._version = fio_version(self.binary)
        return self._version

    def run(self, batch: Batch) -> BatchResult:
        job_text, starts = render_job_file(batch)
        job_path = batch.job_path or Path(os.devnull)
        out_path = batch.output_path
        if batch.job_path:
            batch.job_path.write_text(job_text)
        if out_path is None:
            raise ValueError("FioExecutor needs an output path for fio's json+")
        cmd = [self.binary, "--output-format=json+", f"--output={out_path}", str(job_path)]
        if not batch.job_path:
            raise ValueError("FioExecutor needs a job path")
        t0 = time.monotonic()
        wall_start = time.time()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True, preexec_fn=_die_with_parent)
        except OSError as exc:
            raise RunFailed(f"cannot start fio ({exc}): check the fio installation") from None
        sampler = _Sampler(batch, proc.pid, t0 + self._startup_s, starts)
        bounds = _Boundaries(batch, t0, self._startup_s, starts)
        sampler.start()
        bounds.start()
        try:
            console, _ = proc.communicate()
        except BaseException:
            # Ctrl-C / SIGTERM: stop fio now; the unfinished round is dropped by the caller.
            _stop(proc)
            raise
        finally:
            sampler.stop_event.set()
            bounds.stop_event.set()
        wall = time.monotonic() - t0
        bounds.join(timeout=5)
        _call_boundary(batch, len(batch.steps))
        if out_path is not None and console:
            out_path.with_suffix(".log").write_text(console)
        text = out_path.read_text(errors="replace") if out_path.exists() else ""
        result = self._result(batch, text, console or "", proc.returncode, wall, wall_start, starts)
        # Start-up = wall time not covered by the schedule and the last step's run (for the next round).
        last = result.measurements[-1]
        startup = wall - (starts[-1] + last.duration_s)
        if 0 < startup < 5:
            self._startup_s = startup
        return result

    def _result(self, batch: Batch, text: str, console: str, rc: int, wall: float, wall_start: float,
                starts: list[float]) -> BatchResult:
        def first_line(s: str) -> str:
            return next((ln.strip() for ln in s.splitlines() if ln.strip().startswith("fio:")),
                        next((ln.strip() for ln in s.splitlines() if ln.strip()), ""))

        try:
            out = parse_fio_output(text)
        except FioOutputError as exc:
            said = first_line(console)
            raise RunFailed(f"fio failed (exit {rc}): {said or exc}: see {batch.output_path}") from None
        errs = out.error_lines + [ln.strip() for ln in console.splitlines() if "err=" in ln or "error" in ln.lower()]
        job_errors = [j for j in out.jobs if int(j.get("error", 0) or 0)]
        if job_errors:
            code = int(job_errors[0]["error"])
            detail = errs[0] if errs else os.strerror(code) if code < 200 else f"error {code}"
            raise RunFailed(f"fio reported an I/O error in job {job_errors[0].get('jobname')}: {detail}: "
                            f"check the device and {batch.output_path}")
        if rc != 0:
            raise RunFailed(f"fio exited with status {rc}: {errs[0] if errs else first_line(console) or 'no message'}: "
                            f"see {batch.output_path}")
        if len(out.jobs) != len(batch.steps):
            raise RunFailed(f"fio reported {len(out.jobs)} results for {len(batch.steps)} steps: see {batch.output_path}")
        # Start times: fio >= 3.3x writes job_start; older fio does not, so they are reconstructed
        # from the end-of-run timestamp, the schedule and the last step's run time.
        last = out.jobs[-1]
        last_rt = max(float(last.get("read", {}).get("runtime", 0)), float(last.get("write", {}).get("runtime", 0))) / 1000
        end_epoch = (out.timestamp_ms / 1000.0) if out.timestamp_ms else wall_start + wall
        genesis = end_epoch - (starts[-1] + last_rt)
        try:
            ms = [job_measurement(j, major=out.major_version, start_time=genesis + st, duration_s=s.duration_s)
                  for j, st, s in zip(out.jobs, starts, batch.steps)]
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise RunFailed(f"fio's JSON result is not in the form ssdpts reads ({exc.__class__.__name__}: {exc}): "
                            f"see {batch.output_path}") from None
        warnings = [ln for ln in out.preamble.splitlines() if ln.strip()]
        return BatchResult(measurements=ms, wall_s=wall, tool_version=out.version, warnings=warnings)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return
