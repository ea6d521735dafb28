"""FioExecutor: one fio process per batch (a round), its steps back to back through the step gate.

Every step is a job section of one job file (``new_group`` keeps each step's ``numjobs`` clones
reported as one group), stopped by ``runtime`` (or ``io_size`` for WIPC). When a step starts is not
left to fio's scheduler (``startdelay``, ``stonewall`` and ``wait_for`` all act on a ~100 ms poll,
which let steps overlap or idle by up to ~100 ms per boundary, and a new process per round idles
the device ~300 ms): each job waits, fully set up, in its ``exec_prerun`` hook until the step gate
(engine/gate.py) releases it, the moment every clone of the previous step has drained. The next
round's fio process is started during the current round's last step, so rounds follow each other
the same way. Measured per boundary at the block layer: docs/methodology.md "Step boundaries",
benchmarks/boundaries.py. ``clocksource=clock_gettime`` skips fio's TSC calibration (~60 ms).

Idle periods (HIR): a step's ``idle_after_s`` is time with no IO from any thread. The gate releases
the next step that long after the step drained (:func:`schedule` states the same plan as start
offsets); a round that ends with an idle has the next round's first step released that long after
its last step drained, whether that round's fio was started ahead or later (``_quiet_until``).
The boundary's idle is then measured against the planned one (steprecord.boundary).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
import os
from pathlib import Path
import queue
import re
import signal
import subprocess
import time

from ..errors import RunFailed
from ..measurement import Measurement
from ..pts.workload import Step
from . import fiobin
from .base import Batch, BatchResult
from .devtrace import DeviceTrace, Unavailable as TraceUnavailable, device_view
from .gate import Entry, Gate, check_tmpdir
from .sampler import Sampler, local_counters
from .fioparse import (FioOutput, FioOutputError, interval_ios, job_clock, job_errors, parse_fio_output, step_jobs,
                       step_measurements)
from .jobfile import GATED_HEADER, interval_log, interval_logs, render_job_file

_PR_SET_PDEATHSIG = 1


def _prepare_child() -> None:  # pragma: no cover - runs in the child
    """fio must not outlive ssdpts: a SIGKILLed runner must not leave fio writing to the device.

    And fio runs with SIGCHLD blocked. Every exec_prerun/exec_postrun hook is a child process of
    fio; its SIGCHLD can interrupt another clone's io_uring_enter() wait, and fio (3.33, still so in
    3.42) calls io_uring_enter() as a raw syscall whose -EINTR it checks through errno, which the
    raw call never sets: the clone then reaps nothing and stops its job after one queue of IOs,
    silently (about one clone in 50 of a TC4 step, found with an instrumented fio build). Blocked,
    SIGCHLD stays pending and interrupts nothing; system() and fio reap children by waitpid()."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})


def fio_binary() -> str:
    """The fio a run uses without --fio PATH: the one make fio built, else the system's (engine/fiobin.py)."""
    return fiobin.choose().path


def fio_version(binary: str | None = None) -> str:
    return fiobin.version(binary or fio_binary())


def default_ioengine() -> str:
    """io_uring where the kernel allows it, else libaio (docs/pts-reference.md#report-header: the test software disclosed)."""
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


def _call_boundary(batch: Batch, i: int) -> None:
    if batch.on_boundary is None:
        return
    try:
        batch.on_boundary(i)
    except Exception:  # noqa: BLE001 - telemetry must never stop a measurement
        pass


@dataclass(eq=False)
class _Run:
    """One fio process: the batch it runs, its steps' gate entries, what the gate told about them."""

    batch: Batch
    proc: subprocess.Popen
    entries: list[Entry]
    log_path: Path
    events: "queue.Queue[tuple[str, Entry]]" = field(default_factory=queue.Queue)
    current: int = -1  # index of the step released last
    spawned_mono_s: float = field(default_factory=time.monotonic)
    due_mono_s: float | None = None  # when the gate is to release its first step (None: not known yet)

    def on_gate(self, kind: str, e: Entry) -> None:
        self.events.put((kind, e))


# A released step whose first clone has not passed its barrier after this long is taken as a job
# that failed during its set-up (fio then skips its hooks): fio is stopped and the round fails.
# The same margin bounds the gate's other waits: a timed step not heard to end this long after its
# run time, and a step not released this long after its predecessor ended and its planned idle
# passed, fail the round too (a lost end line or release would otherwise hang the run for ever).
START_TIMEOUT_S = 60.0
_HOOK_LINE = re.compile(r"^\S+ : Saving output of (?:prerun|postrun) in \S+\.txt$")


class FioExecutor:
    """Runs a batch as one fio process whose steps start through the step gate (engine/gate.py).

    With ``batch.next`` set, the next batch's fio process is started during the current batch's
    last seconds (its last step, for PTS minutes), its first step waiting at its barrier; the gate releases it the moment the
    current last step has drained, so rounds follow each other as closely as steps do. The
    runner then either runs that batch (``run`` adopts the waiting process) or calls
    ``cancel_ahead`` (the stop rule held: the process is killed, its files removed)."""

    name = "fio"
    NEXT_LEAD_S = 3.0

    def __init__(self, binary: str | None = None, chosen: fiobin.Fio | None = None):
        # which fio and why (engine/fiobin.py: --fio PATH, built by make fio, the system's), recorded with the run
        self.chosen = chosen or (fiobin.Fio(binary, "--fio") if binary else fiobin.choose())
        self.binary = self.chosen.path
        self._gate_dir()  # a TMPDIR the gate cannot use is refused now, before the run writes anything
        self._version: str | None = None
        self._gate: Gate | None = None
        self._ahead: _Run | None = None
        # HIR: the monotonic time until which the last batch asked for no IO (its last step's
        # planned idle after it drained); the next batch's first step is released then.
        self._quiet_until: float | None = None
        # The device's view of every step boundary (engine/devtrace.py), or why there is none.
        self._trace: DeviceTrace | None = None
        self.trace_unavailable: str | None = None
        self._traced_for: str | None = None
        self._last_key: int | None = None  # the last step of the previous batch (its end: the next batch's boundary)
        self._last_stats: dict | None = None

    def version(self) -> str:
        if self._version is None:
            self._version = fio_version(self.binary)
        return self._version

    # ---- processes ------------------------------------------------------------------------------
    def _start(self, batch: Batch, after: Entry | None) -> _Run:
        if batch.job_path is None or batch.output_path is None:
            raise ValueError("FioExecutor needs a job path and an output path")
        if self._gate is None:
            self._gate = self._new_gate()
            self._start_trace(batch.filename)
        gate = self._gate
        job_path, out_path = Path(batch.job_path).absolute(), Path(batch.output_path).absolute()
        log_path = out_path.with_suffix(".log")
        for stale in interval_logs(out_path):  # an earlier try of this batch's (fio appends to none of them)
            stale.unlink(missing_ok=True)
        holder: list[_Run] = []
        entries = gate.add([s.clones for s in batch.steps], idles=[s.idle_after_s for s in batch.steps],
                           durations=[s.duration_s for s in batch.steps],
                           listener=lambda kind, e: holder[0].on_gate(kind, e) if holder else None)
        try:
            text, _ = render_job_file(batch, [(gate.prerun(e), gate.postrun(e)) for e in entries])
            job_path.write_text(GATED_HEADER + text)
            log = open(log_path, "w")
        except BaseException:
            gate.close_entries(entries)
            raise
        cmd = self._command(job_path, out_path)
        try:
            # cwd: fio writes each hook's output to JOB.prerun.txt / JOB.postrun.txt there.
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    cwd=gate.root, start_new_session=True, preexec_fn=self._preexec)
        except OSError as exc:
            gate.close_entries(entries)
            raise RunFailed(f"cannot start fio ({exc}): check the fio installation") from None
        finally:
            log.close()
        run = _Run(batch=batch, proc=proc, entries=entries, log_path=log_path)
        holder.append(run)
        # Link into the chain only now that someone listens: if `after` has already drained (and
        # had its planned idle), the first step is released at once (the release latches until fio
        # reaches the barrier). A fresh batch after one that ended with a planned idle (HIR) is
        # released when that idle is over.
        if after is not None:
            gate.link(after, entries[0])
        else:
            until, self._quiet_until = self._quiet_until, None
            run.due_mono_s = until if until is not None else time.monotonic()
            gate.release(entries[0], until)
        return run

    # ---- what a fio server's executor (engine/fioclient.py) does otherwise -----------------------
    _preexec = staticmethod(_prepare_child)
    _gate_dir = staticmethod(check_tmpdir)

    def _new_gate(self) -> Gate:
        return Gate(on_release=self._on_release)

    def _new_trace(self, filename: str) -> DeviceTrace:
        return DeviceTrace(filename)

    def _command(self, job_path: Path, out_path: Path) -> list[str]:
        return [self.binary, "--output-format=json+", f"--output={out_path}", str(job_path)]

    def _counters(self, run: "_Run"):
        return local_counters(run.batch.filename, run.proc.pid)

    # ---- the device's view of each boundary (engine/devtrace.py) ----------------------------------
    def _start_trace(self, filename: str) -> None:
        if self._traced_for == filename:
            return
        self.close()
        self._traced_for = filename
        try:
            self._trace = self._new_trace(filename)
            self.trace_unavailable = None
        except TraceUnavailable as exc:
            self._trace, self.trace_unavailable = None, str(exc)

    def _on_release(self, e: Entry) -> None:
        if self._trace is not None and e.released_mono_s is not None:
            if self._trace.arm():  # the first step after a settle: released once the trace is on
                e.released_mono_s, e.released_unix_s = time.monotonic(), time.time()
            e.trace_key = self._trace.released(e.released_mono_s, e.duration_s)

    def boundary_source(self) -> dict:
        """Where the run's boundaries come from, for the manifest: the block layer (and which
        device), or fio's timeline and why."""
        if self._trace is not None and not self._trace.lost:
            return {"source": "block layer", "device": self._trace.device}
        if self._last_stats is not None:  # the trace of this run, closed: what it cost
            return self._last_stats
        return {"source": "fio timeline", "why": (self._trace.lost if self._trace else self.trace_unavailable)
                or "not started"}

    def _device_views(self, run: _Run) -> list[dict | None]:
        """Per step of a finished batch, what the device saw (devtrace.device_view), None without a trace."""
        trace = self._trace
        if trace is None or trace.lost:
            return [None] * len(run.entries)
        keys = [e.trace_key for e in run.entries]
        prev = self._last_key if run.entries and run.entries[0].chained else None
        settle = self._ahead is None  # nothing follows for now: the child settles up to now
        # every step's start; the ends of the steps before the last (the last one's end comes with the
        # next step's first IO, in the next batch's records)
        trace.views([prev, *keys], settle=settle, ends=[prev, *keys[:-1], *([keys[-1]] if settle else [])])
        self._last_key = keys[-1] if keys else None
        offset_s = time.time() - time.monotonic()
        return [device_view(trace, k, p, offset_s) for k, p in zip(keys, [prev, *keys[:-1]])]

    def close(self) -> None:
        """Stop the device's trace (the run is over)."""
        trace, self._trace, self._traced_for = self._trace, None, None
        if trace is not None:
            trace.close()
            self._last_stats = {"source": "block layer", "device": trace.device, **(trace.stats or {})}
            if trace.overrun:
                self._last_stats["why"] = f"the trace buffer overran ({trace.overrun} events lost)"

    def _kill(self, run: _Run) -> None:
        _stop(run.proc)
        if self._gate is not None:
            self._gate.close_entries(run.entries)

    def cancel_ahead(self) -> dict | None:
        """Stop the batch started ahead, if any. Returns what it did before it was stopped (for
        the manifest): its steps never count, its job file and output are removed."""
        run, self._ahead = self._ahead, None
        info = None
        if run is not None:
            first = run.entries[0]
            ran = None if first.started_unix_s is None else round(time.time() - first.started_unix_s, 3)
            self._kill(run)
            logs = interval_logs(run.batch.output_path) if run.batch.output_path is not None else []
            for p in (run.batch.job_path, run.batch.output_path, run.log_path, *logs):
                try:
                    Path(p).unlink()
                except (OSError, TypeError):
                    pass
            info = {"steps": len(run.entries), "started": first.started_unix_s is not None, "ran_s": ran}
            if self._trace is not None:  # nothing follows for now: the trace settles up to here
                self._trace.views([], settle=True, timeout_s=1.0)
        self._close_gate_if_idle()
        return info

    def _close_gate_if_idle(self) -> None:
        if self._ahead is None and self._gate is not None:
            self._gate.close()
            self._gate = None

    def _adopt(self, batch: Batch) -> _Run:
        ahead = self._ahead
        if ahead is not None and _same_work(ahead.batch, batch):
            self._ahead = None
            # its first step is chained to the last one, idle included: due when that idle is over
            ahead.due_mono_s, self._quiet_until = self._quiet_until or time.monotonic(), None
            ahead.batch.on_progress, ahead.batch.on_boundary = batch.on_progress, batch.on_boundary
            ahead.batch.next = batch.next
            return ahead
        self.cancel_ahead()
        return self._start(batch, after=None)

    # ---- one batch -------------------------------------------------------------------------------
    def run(self, batch: Batch) -> BatchResult:
        run = self._adopt(batch)
        batch = run.batch
        wall_start, t0 = time.time(), time.monotonic()
        sampler = Sampler(batch, t0, lambda: run.current, self._counters(run))
        sampler.start()
        try:
            self._supervise(run)
        except BaseException:
            # Ctrl-C / SIGTERM / a step that never started: stop fio now (the unfinished round is
            # dropped by the caller) and whatever was started ahead.
            self._kill(run)
            self.cancel_ahead()
            raise
        finally:
            sampler.stop_event.set()
        if self._gate is not None:
            self._gate.sync()  # the end lines of the steps fio ran last, before their entries close
            self._gate.close_entries(run.entries)
        wall = time.monotonic() - t0
        try:
            log = run.log_path.read_text(errors="replace")
        except OSError:
            log = ""
        console = "\n".join(ln for ln in log.splitlines() if not _HOOK_LINE.match(ln.strip()))
        if not console.strip():
            run.log_path.unlink(missing_ok=True)
        out_path = Path(batch.output_path)  # type: ignore[arg-type]
        text = out_path.read_text(errors="replace") if out_path.exists() else ""
        try:
            result = self._result(batch, text, console, run.proc.returncode, wall, wall_start, run.entries)
        except BaseException:
            self.cancel_ahead()
            raise
        result.devices = self._device_views(run)
        last = run.entries[-1]
        begin = last.idle_from_mono_s()
        if batch.steps[-1].idle_after_s and begin is not None:
            self._quiet_until = begin + batch.steps[-1].idle_after_s
        self._close_gate_if_idle()
        return result

    def _supervise(self, run: _Run) -> None:
        """Wait for fio, answering the gate's news: telemetry at every boundary, the next batch's
        process started ahead in time, a step that never starts stopped."""
        n = len(run.entries)
        index = {e.number: i for i, e in enumerate(run.entries)}
        # Start the next batch's fio when less than NEXT_LEAD_S of planned steps follow the step
        # just released (the last step of a round of PTS minutes; earlier for short steps): fio
        # takes ~0.3 s (more on a loaded host) to start and set up the jobs of the next round.
        # Planned idles count as time left too (HIR).
        steps = run.batch.steps
        after = [sum(s.planned_s for s in steps[i + 1:]) + steps[i].idle_after_s for i in range(n)]
        first_due = run.due_mono_s or time.monotonic()
        ended_sampled = False
        while True:
            try:
                news = [run.events.get(timeout=0.25)]
            except queue.Empty:
                news = []
            while True:
                try:
                    news.append(run.events.get_nowait())
                except queue.Empty:
                    break
            boundary = None
            for kind, e in news:
                i = index[e.number]
                if kind == "released":
                    run.current = max(run.current, i)
                    boundary = i
                    if after[i] < self.NEXT_LEAD_S and run.batch.next is not None and self._ahead is None:
                        self._ahead = self._start(run.batch.next, after=run.entries[-1])
                elif kind == "ended" and i == n - 1:
                    boundary = n
                elif kind == "ended" and steps[i].idle_after_s > 0:
                    # a step followed by a planned idle is sampled at its end too, not only when the
                    # next step starts: its "after" counters then leave out the idle (the OCP tests'
                    # media writes per phase: what the drive did in the phase, not in the settle after it)
                    boundary = i + 1
            if boundary is not None:
                # One snapshot for the latest boundary: a slow collector skips, it never delays.
                _call_boundary(run.batch, boundary)
                ended_sampled = ended_sampled or boundary == n
            if run.proc.poll() is not None:
                if not ended_sampled:
                    # fio exited before its last step's end was heard here (the end line comes
                    # through the gate, or arrived while a slow collector ran): the snapshot after
                    # the last step is taken now, the one every round's last step is matched to.
                    _call_boundary(run.batch, n)
                return
            now = time.monotonic()
            for i, e in enumerate(run.entries):
                if e.released_mono_s is not None and e.started_mono_s is None and \
                        now - max(e.released_mono_s, run.spawned_mono_s) > START_TIMEOUT_S:
                    raise RunFailed(f"fio did not start step {i + 1} of {run.batch.output_path} within "
                                    f"{START_TIMEOUT_S:.0f} s (a job that failed during its set-up): "
                                    f"see {run.log_path}")
                _check_gate_waits(run, i, e, now, first_due)

    def _result(self, batch: Batch, text: str, console: str, rc: int, wall: float, wall_start: float,
                entries: list[Entry] | None = None) -> BatchResult:
        def first_line(s: str) -> str:
            return next((ln.strip() for ln in s.splitlines() if ln.strip().startswith("fio:")),
                        next((ln.strip() for ln in s.splitlines() if ln.strip()), ""))

        try:
            out = parse_fio_output(text)
        except FioOutputError as exc:
            said = first_line(console)
            raise RunFailed(f"fio failed (exit {rc}): {said or exc}: see {batch.output_path}") from None
        jobs = step_jobs(out)  # a fio client's output has an "All clients" sum after the steps
        errs = out.error_lines + [ln.strip() for ln in console.splitlines() if "err=" in ln or "error" in ln.lower()]
        failed = job_errors(out)
        if failed:
            name, code = failed[0]
            detail = errs[0] if errs else os.strerror(code) if code < 200 else f"error {code}"
            raise RunFailed(f"fio reported an I/O error in job {name}: {detail}: "
                            f"check the device and {batch.output_path}")
        if rc != 0:
            raise RunFailed(f"fio exited with status {rc}: {errs[0] if errs else first_line(console) or 'no message'}: "
                            f"see {batch.output_path}")
        if len(jobs) != len(batch.steps):
            raise RunFailed(f"fio reported {len(jobs)} results for {len(batch.steps)} steps: see {batch.output_path}")
        if entries is None:  # recorded output without the gate (tests): the end-of-run stamp
            end = out.timestamp_ms / 1000.0 if out.timestamp_ms else wall_start + wall
            ms, timelines = measure(batch, out, lambda jobs: timelines_from_end(jobs, batch.steps, end))
        else:
            ms, timelines = measure(batch, out, lambda jobs: [step_timeline(j, s, e)
                                                              for j, s, e in zip(jobs, batch.steps, entries)])
        warnings = [ln for ln in out.preamble.splitlines() if ln.strip() and not _HOOK_LINE.match(ln.strip())]
        return BatchResult(measurements=ms, wall_s=wall, tool_version=out.version, warnings=warnings,
                           timelines=timelines, intervals=step_intervals(batch, ms, timelines))


def step_intervals(batch: Batch, ms: list[Measurement], timelines: list[dict]) -> list[dict | None]:
    """Each step's IOs per interval from its per-interval log (jobfile.interval_log), where it has
    one, its clones' start spread from its timeline."""
    out: list[dict | None] = []
    for n, (s, m, tl) in enumerate(zip(batch.steps, ms, timelines), start=1):
        got = None
        if s.interval_ms and batch.output_path is not None:
            try:
                text = interval_log(batch.output_path, f"s{n:04d}").read_text(errors="replace")
            except OSError:
                text = ""
            first, last = tl.get("start_unix_s"), tl.get("last_start_unix_s")
            spread = (last - first) * 1000.0 if first is not None and last is not None else 0.0
            got = interval_ios(text, s.interval_ms, m.start_time * 1000.0 if m.start_time else 0.0, spread,
                               m.end_time * 1000.0 if m.start_time and m.end_time else None)
        out.append(None if got is None else {"period_ms": s.interval_ms, "ios": got[0], "covered_ios": got[1]})
    return out


def measure(batch: Batch, out: FioOutput, timelines_of) -> tuple[list[Measurement], list[dict]]:
    """Each step's Measurement (engine/fioparse.py) at the times of its timeline, and the timelines
    (``timelines_of``: the step jobs' timelines); output not in the form ssdpts reads fails the round."""
    try:
        timelines = timelines_of(step_jobs(out))
        return step_measurements(out, batch.steps, timelines), timelines
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise RunFailed(f"fio's JSON result is not in the form ssdpts reads ({exc.__class__.__name__}: {exc}): "
                        f"see {batch.output_path}") from None


def step_timeline(job: dict, step: Step, entry: Entry | None) -> dict:
    """When a step's IO ran, on the host clock (Unix seconds).

    Start: when the gate released it, if every clone was waiting at its barrier then (fio starts
    the job's clock right after the clone's shell exits, ~0.5 ms later); otherwise when the gate
    heard the first clone pass its barrier. End: the start of the last clone plus fio's own
    ``job_runtime`` (from the job's clock start until its IO loop ended and its in-flight IOs
    completed; fio sums it over the clones of a group, so it is divided by their number), at most
    when the gate heard the last clone's end.
    fio >= 3.36 also writes ``job_start`` (ms): kept as a cross-check, not used, so that the
    timeline means the same with every fio. ``late_ms``: how long after its release the last clone
    reached its barrier (fio created or set up the job late: the boundary's idle then comes from
    fio's job creation, not from the gate)."""
    runtime_ms, start_ms = job_clock(job, step.clones)
    tl: dict = {
        "source": "gate",
        "released_unix_s": None, "ready_unix_s": None, "started_unix_s": None, "end_signal_unix_s": None,
        "fio_job_runtime_ms": runtime_ms, "fio_job_start_unix_ms": start_ms,
        "chained": False, "late_ms": None, "start_unix_s": None, "last_start_unix_s": None, "end_unix_s": None,
    }
    if entry is None:
        return tl
    tl.update(released_unix_s=entry.released_unix_s, ready_unix_s=entry.ready_unix_s,
              started_unix_s=entry.started_unix_s, end_signal_unix_s=entry.ended_unix_s, chained=entry.chained)
    if entry.released_unix_s is None:
        raise ValueError("a step finished that the gate never released")
    if entry.ready_at_release:
        start = last_start = entry.released_unix_s
    else:
        start = entry.started_unix_s or entry.released_unix_s
        last_start = max(entry.last_started_unix_s or start, start)
    if tl["fio_job_runtime_ms"] is not None:
        end = last_start + tl["fio_job_runtime_ms"] / 1000.0
        if entry.ended_unix_s is not None:
            # The gate hears the end after it happened (the postrun hook runs once the job's IO
            # has drained): an upper bound when a late-heard start pushed the estimate past it.
            end = min(end, entry.ended_unix_s)
    else:  # a fio that does not write job_runtime: the end as the gate heard it
        end = entry.ended_unix_s or start
    if entry.released_unix_s is not None and entry.ready_unix_s is not None:
        tl["late_ms"] = round(max(0.0, entry.ready_unix_s - entry.released_unix_s) * 1000, 3)
    tl["start_unix_s"], tl["last_start_unix_s"] = round(start, 6), round(last_start, 6)
    tl["end_unix_s"] = round(max(end, start), 6)
    return tl


def timelines_from_end(jobs: list[dict], steps: list[Step], end_unix_s: float,
                       source: str = "fio end of run") -> list[dict]:
    """Without the gate's timestamps: steps back to back, ending at ``end_unix_s`` (fio's end-of-run
    stamp, or when its client had the result)."""
    timelines = [step_timeline(j, s, None) for j, s in zip(jobs, steps)]
    t = end_unix_s
    for tl in reversed(timelines):
        rt = (tl["fio_job_runtime_ms"] or 0.0) / 1000.0
        tl["source"] = source
        tl["start_unix_s"], tl["end_unix_s"] = round(t - rt, 6), round(t, 6)
        t -= rt
    return timelines


def _check_gate_waits(run: _Run, i: int, e: Entry, now: float, first_due: float) -> None:
    """Fail the round when the gate has waited far longer than planned for step ``i`` to end
    or to be released (its end line or its release lost: fio would wait at the next barrier for
    ever). A size-bound step (WIPC) has no planned end: only fio's exit ends it."""
    steps = run.batch.steps
    dur = steps[i].duration_s
    if dur is not None and e.started_mono_s is not None and not e.ended and \
            now - e.started_mono_s > dur + START_TIMEOUT_S:
        raise RunFailed(f"step {i + 1} of {run.batch.output_path} was not heard to end within "
                        f"{START_TIMEOUT_S:.0f} s of its run time ({dur:g} s): see {run.log_path}")
    if e.released_mono_s is not None:
        return
    if i == 0:
        due = first_due
    else:
        prev = run.entries[i - 1]
        if prev.ended_mono_s is None:
            return
        due = (prev.idle_from_mono_s() or prev.ended_mono_s) + steps[i - 1].idle_after_s
    if now - due > START_TIMEOUT_S:
        raise RunFailed(f"step {i + 1} of {run.batch.output_path} was not released within "
                        f"{START_TIMEOUT_S:.0f} s of its planned start: see {run.log_path}")


def _same_work(a: Batch, b: Batch) -> bool:
    return (a.steps == b.steps and a.filename == b.filename and a.area == b.area and a.seed == b.seed
            and a.ioengine == b.ioengine and a.job_path == b.job_path and a.output_path == b.output_path)


def _stop(proc: subprocess.Popen) -> None:
    """Kill fio and the hook shells it started (its own process group). No SIGINT first: while a
    job waits in its exec_prerun, glibc's system() has fio ignore SIGINT, and the unfinished
    round is dropped anyway."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                proc.kill()
            except ProcessLookupError:
                pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
