"""The only place that sequences a test: purge -> WIPC -> rounds until the stop rule holds.

Every finished round is appended to the store (fsync'd) before the stop rule is evaluated, and
progress is derived from the store, so an interrupted run resumes at the round in flight.

Each batch (WIPC, a round) is handed to the executor with the batch that follows it unless the
stop rule holds (``Batch.next``), so that the executor can start it without a gap (PTS: no delay
between preconditioning, rounds and steps); when the stop rule does hold, what was started ahead
is cancelled and disclosed in the manifest. Every step record carries its observed timeline and
the boundary to the step before it (steprecord.boundary); telemetry snapshots carry their own time
and are matched to each step's observed start and end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import errno
import time
from typing import Callable, Protocol

from ssdpts.results import analysis, steprecord, wsatmodel
from ssdpts.results.records import Live
from ssdpts.results.steprecord import PurgeEnd, StepRecord, read_steps
from ssdpts.results.summary import bound_part, summarize
from ssdpts.run import cpus
from ssdpts.engine.base import Area, Batch, Executor
from ssdpts.engine.jobfile import interval_logs
from ssdpts.errors import DeviceAlarm, DeviceUnsafe, HostLost, Interrupted, RunFailed, Signalled, UserError
from ssdpts.pts.parts import Part
from ssdpts.store import RunStore, disk_error, utc_now
from ssdpts.pts.units import fmt_capacity


class Purger(Protocol):
    def __call__(self, log: Callable[[str], None]) -> dict: ...


class TelemetrySource(Protocol):
    """device.telemetry's sampler: cheap snapshots taken at step boundaries."""

    available: bool
    reason: str | None

    def snapshot(self) -> dict: ...


class LatencyMonitor(Protocol):
    """device/latmon.py's monitor: armed before a test's first IO, read after its last (never raises)."""

    available: bool

    def arm(self) -> dict | None: ...
    def collect(self) -> dict | None: ...


class ProgressSink(Protocol):
    def part_started(self, part: Part, n: int, total: int) -> None: ...
    def phase(self, part: Part, text: str) -> None: ...
    def round_started(self, part: Part, round_no: int, n_steps: int, step_s: float | None,
                      limit: int | None = None) -> None: ...
    def sample(self, info: dict) -> None: ...
    def round_finished(self, part: Part, round_no: int, summary: dict) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


class NullProgress:
    def part_started(self, part, n, total): pass
    def phase(self, part, text): pass
    def round_started(self, part, round_no, n_steps, step_s, limit=None): pass
    def sample(self, info): pass
    def round_finished(self, part, round_no, summary): pass
    def message(self, text): pass
    def close(self): pass


@dataclass
class RunContext:
    store: RunStore
    parts: list[Part]
    executor: Executor
    filename: str  # what fio opens
    area: Area
    capacity_bytes: int
    seed: int
    ioengine: str
    purger: Purger
    deviations: list[str]
    progress: ProgressSink = field(default_factory=NullProgress)
    telemetry: TelemetrySource | None = None
    session: int = 0  # 0: the first run; n: the n-th 'ssdpts resume' (recorded in every step)
    keep: frozenset[int] = frozenset()  # sessions resumed with --keep-window (analysis.eligible_rounds)
    snapshots: list[dict] = field(default_factory=list)  # recent telemetry snapshots (time-stamped)
    # Called before the purge and before every batch; raises DeviceUnsafe when the target is no
    # longer safe to write (device/safety/claim.py: Claim.check).
    guard: Callable[[], None] | None = None
    cpus_allowed: str = ""  # fio's cpus_allowed (RunSpec.cpus)
    cpu_warned: set[str] = field(default_factory=set)  # parts already warned about CPU-bound steps
    latmon: LatencyMonitor | None = None  # the drive's OCP latency monitor, where it has one


def drop_incomplete_rounds(store: RunStore, parts: list[Part]) -> int:
    """Remove step records of rounds that did not finish (resume re-runs those rounds whole)."""
    steps = read_steps(store)
    keep = []
    dropped = 0
    for p in parts:
        recs = analysis.part_records(steps, p)
        done = analysis.complete_rounds(recs, p)
        for r in recs:
            if r.phase == "round" and r.round not in done:
                dropped += 1
            else:
                keep.append(r)
    known = {(p.test, p.part) for p in parts}
    keep += [s for s in steps if (s.test, s.part) not in known]
    if dropped:
        order = {id(s): i for i, s in enumerate(steps)}
        keep.sort(key=lambda s: order[id(s)])
        store.rewrite_steps(keep)
    return dropped


def write_summary(ctx: RunContext, status: str) -> dict:
    summary = summarize(ctx.parts, read_steps(ctx.store), ctx.capacity_bytes, status=status,
                        deviations=ctx.deviations, keep=ctx.keep,
                        block_pages=wsatmodel.block_pages(ctx.store.manifest().description))
    ctx.store.write_summary(summary)
    return summary.to_dict()


def execute(ctx: RunContext) -> dict:
    """Run (or continue) every part; returns the summary. Raises Interrupted or RunFailed with the
    run directory left valid and its status set."""
    store = ctx.store
    try:
        store.update_manifest(status="running")
        try:
            drop_incomplete_rounds(store, ctx.parts)
            for n, part in enumerate(ctx.parts, start=1):
                # a part planned from an earlier one's results (CBW's operating points) is planned now
                run_part(ctx, bound_part(part, ctx.parts, read_steps(store), ctx.capacity_bytes, ctx.keep), n)
        except (KeyboardInterrupt, Interrupted) as exc:
            _close(ctx.progress)
            why = _interruption(exc)
            _finish(ctx, "interrupted", interruption=why)
            if isinstance(exc, (DeviceUnsafe, DeviceAlarm)):
                text = (f"stopped: {exc}: every finished round is saved in {store.path}; once the device is "
                        f"safe again continue with 'ssdpts resume {store.path}'")
            elif why.get("host_lost"):  # the fio server went away (engine/fioclient.py)
                text = (f"interrupted: {exc}: every finished round is saved in {store.path}; once it is back "
                        f"continue with 'ssdpts resume {store.path}'")
            elif why.get("reason"):  # any other stop that says why: its own words, no claim of a lost host
                text = (f"interrupted: {exc}: every finished round is saved in {store.path}; "
                        f"continue with 'ssdpts resume {store.path}'")
            else:
                by = f" by {why['signal']}" if why.get("signal") else ""
                text = (f"interrupted{by}: every finished round is saved in {store.path}; "
                        f"continue with 'ssdpts resume {store.path}'")
            stop = Interrupted(text)
            stop.exit_code = getattr(exc, "exit_code", Interrupted.exit_code)  # type: ignore[misc]
            stop.run_dir = store.path  # type: ignore[attr-defined]  (the CLI renders a partial report)
            raise stop from None
        except RunFailed as exc:
            _close(ctx.progress)
            _finish(ctx, "failed", error=str(exc))
            exc.run_dir = store.path  # type: ignore[attr-defined]
            raise
        _close(ctx.progress)
        return _finish(ctx, "complete")
    finally:
        store.clear_live()
        # Nothing started ahead may outlive the run (an interrupt between two rounds, a failure).
        ctx.executor.cancel_ahead()
        close_trace(ctx.executor, store)
        # The run no longer writes: let 'resume' (also from this same process) take the directory.
        store.unlock()


def close_trace(executor, store: RunStore) -> None:
    """The run is over: the executor's device trace stopped (engine/devtrace.py: its child would
    otherwise trace the device for as long as this process lives), and what it saw and cost
    recorded in the manifest."""
    close = getattr(executor, "close", None)
    if close is None:
        return
    close()
    try:
        store.update_manifest(boundary_source=executor.boundary_source())
    except (RunFailed, UserError, OSError):
        pass


def _close(progress: ProgressSink) -> None:
    """Close the display; a terminal that is gone (SIGHUP: writes fail with EIO) must not keep the
    run from being marked and saved."""
    try:
        progress.close()
    except Exception:  # noqa: BLE001
        pass


def _interruption(exc: BaseException) -> dict:
    """What stopped the run, for the manifest: the signal, the guard's reason, the lost fio server
    (``host_lost``: only a HostLost, the one stop whose cure is waiting for a host), or the reason
    another interruption gave."""
    if isinstance(exc, Signalled):
        return {"at": utc_now(), "signal": exc.name}
    if isinstance(exc, (DeviceUnsafe, DeviceAlarm)):
        return {"at": utc_now(), "device_unsafe": str(exc)}
    if isinstance(exc, Interrupted) and str(exc):
        return {"at": utc_now(), "signal": None, "reason": str(exc), "host_lost": isinstance(exc, HostLost)}
    return {"at": utc_now(), "signal": "SIGINT" if isinstance(exc, KeyboardInterrupt) else None}


def _finish(ctx: RunContext, status: str, error: str | None = None, interruption: dict | None = None) -> dict:
    changes: dict = {"status": status, "ended": utc_now()}
    source = getattr(ctx.executor, "boundary_source", None)
    if source is not None:  # where this session's boundaries came from (engine/devtrace.py)
        changes["boundary_source"] = source()
    if error:
        changes["error"] = error
    if interruption:
        changes["interruption"] = interruption
    try:
        ctx.store.update_manifest(**changes)
        return write_summary(ctx, status)
    except RunFailed:
        if status == "complete":
            raise
        return {}


def run_part(ctx: RunContext, part: Part, n: int) -> None:
    store = ctx.store
    records = analysis.part_records(read_steps(store), part)
    reason = analysis.stop_reason(records, part, ctx.keep)
    ctx.progress.part_started(part, n, len(ctx.parts))
    if reason:
        ctx.progress.message(f"{part.title}: already finished ({reason})")
        return
    rounds = analysis.complete_rounds(records, part)
    wipc_done = any(r.phase == "wipc" for r in records)
    started = bool(rounds) or wipc_done
    r = max(rounds, default=0) + 1
    armed = _latmon_arm(ctx, part) if started else None
    if not started:
        purge_end = None
        if part.purge:
            _guard(ctx)
            ctx.progress.phase(part, "purge")
            rec = ctx.purger(ctx.progress.message)
            purge_end = time.time()
            store.set_part(part.id, purge={**rec, "ended_unix_s": round(purge_end, 6)})
        armed = _latmon_arm(ctx, part)
        if part.wipc is not None:
            ctx.progress.phase(part, ("preconditioning by sprandom: " if part.wipc.sprandom else "WIPC: ")
                               + f"{fmt_capacity(part.wipc.io_bytes)} {part.wipc.workload.label}")
            prev = None if purge_end is None else PurgeEnd(purge_end, ctx.session)
            records += _run_batch(ctx, part, [part.wipc], "wipc", after=prev, next_steps=part.round_steps(r),
                                  next_name=f"round-{r:03d}")
        store.set_part(part.id, preconditioned=utc_now())
    said_cap = 0
    while True:
        steps = part.round_steps(r)
        if not steps:
            break
        cap = _round_cap(ctx, part, records, r)
        if part.stop_rule != "wsat" and cap > max(part.max_rounds, said_cap):
            said_cap = cap
            ctx.progress.message(f"{part.title}: max rounds extended from {part.max_rounds} to {cap}, so that a whole "
                                 f"5-round window runs after the resumption "
                                 "(docs/methodology.md, Saving and resuming)")
        ctx.progress.round_started(part, r, len(steps), steps[0].duration_s,
                                   limit=None if part.stop_rule == "wsat" else cap)
        nxt = part.round_steps(r + 1) if r + 1 <= cap else []
        recs = _run_batch(ctx, part, steps, f"round-{r:03d}", after=records[-1] if records else None,
                          next_steps=nxt, next_name=f"round-{r + 1:03d}")
        records += recs
        reason = analysis.stop_reason(records, part, ctx.keep)
        ctx.progress.round_finished(part, r, _round_summary(part, records, recs, reason, ctx.keep))
        if reason:
            ahead = ctx.executor.cancel_ahead()
            state = store.manifest().parts.get(part.id)
            ttr = analysis.time_to_result(records, part, None if state is None else state.purge, ctx.keep)
            changes: dict = {"stop_reason": reason, "finished": utc_now(), "time_to_result": ttr.to_dict()}
            if ahead and ahead.get("started"):
                # Round r + 1 had started (it follows round r with no gap, before the stop rule
                # could be evaluated): stopped, none of it is kept. Disclosed, as IO the device saw.
                changes["discarded_after_stop"] = {"round": r + 1, "ran_s": ahead.get("ran_s"),
                                                   "note": "started before the stop rule was evaluated; stopped, "
                                                           "not part of any result"}
            store.set_part(part.id, **changes)
            _latmon_collect(ctx, part, armed)
            return
        r += 1
    _latmon_collect(ctx, part, armed)


def _latmon_arm(ctx: RunContext, part: Part) -> dict | None:
    """The drive's latency monitor armed for this part (after its purge, or where a resumed session
    takes it up): the thresholds set, its buckets reset (OCP LMLLOG-14). None: no monitor."""
    if ctx.latmon is None or not ctx.latmon.available:
        return None
    rec = ctx.latmon.arm()
    if rec is None:
        return None
    rec = {**rec, "session": ctx.session}
    ctx.store.set_part(part.id, latency_monitor=rec)
    if rec.get("error"):
        ctx.progress.message(f"latency monitor: {part.title}: {rec['error']}")
    return rec


def _latmon_collect(ctx: RunContext, part: Part, armed: dict | None) -> None:
    """The latency monitor's page after the part's last round, beside what was armed."""
    if armed is None or ctx.latmon is None:
        return
    got = ctx.latmon.collect()
    if got is None:
        return
    ctx.store.set_part(part.id, latency_monitor={**armed, **got})
    if got.get("error"):
        ctx.progress.message(f"latency monitor: {part.title}: {got['error']}")


def _live(ctx: RunContext, part: Part, steps: list) -> Callable[[dict], None]:
    """The executor's per-second sample, shown (progress) and written to live.json for 'ssdpts status'
    (docs/status.md "Live metrics")."""
    def sample(info: dict) -> None:
        ctx.progress.sample(info)
        step = steps[min(int(info.get("step_index") or 0), len(steps) - 1)]
        ctx.store.write_live(Live(time.time(), part.id, part.test, step.phase, step.round, step.index, step.label,
                                  info.get("iops"), info.get("bw_bytes_per_s")))
    return sample


def _round_cap(ctx: RunContext, part: Part, records: list[StepRecord], r: int) -> int:
    """The last round the part may run once round r has run (--max-rounds, or its extension when
    round r is the first one after a re-preconditioning resumption)."""
    if part.stop_rule == "wsat":
        return 10**9  # WSAT stops on samples or bytes written: the next chunk is always planned
    rounds = analysis.complete_rounds(records, part)
    cap = analysis.round_limit(part, rounds, ctx.keep)
    if rounds and analysis.session_of(rounds[max(rounds)][0]) != ctx.session and ctx.session not in ctx.keep:
        cap = max(cap, r + analysis.WINDOW_ROUNDS - 1)
    return cap


# Space a round needs in the results directory: the job file, fio's json+ and console log, and the
# step records (with histograms). Estimated from the largest round so far, with a floor and margin.
MIN_ROUND_SPACE_BYTES = 8 * 1024 * 1024


def _round_space(ctx: RunContext) -> int:
    largest = 0
    for f in (ctx.store.path / "fio").glob("*/*.json"):
        log = f.with_suffix(".log")
        try:
            largest = max(largest, f.stat().st_size + (log.stat().st_size if log.exists() else 0))
        except OSError:
            continue
    # steps.jsonl grows by about the size of the round's json+ again; x3 leaves room for the summary
    return max(MIN_ROUND_SPACE_BYTES, 3 * largest)


def _guard(ctx: RunContext) -> None:
    if ctx.guard is not None:
        ctx.guard()


def _run_batch(ctx: RunContext, part: Part, steps: list, name: str, *, after: StepRecord | PurgeEnd | None = None,
               next_steps: list | None = None, next_name: str | None = None) -> list[StepRecord]:
    _guard(ctx)
    ctx.store.ensure_space(_round_space(ctx))
    job, out = ctx.store.fio_paths(part.id, name)
    src = ctx.telemetry
    sampling = src is not None and src.available

    def on_boundary(i: int) -> None:
        # The snapshot carries its own time (t_unix_s); steps are matched to snapshots by time.
        ctx.snapshots.append(src.snapshot())
        del ctx.snapshots[:-4 * (len(steps) + 2)]

    def batch_of(ss: list, nm: str) -> Batch:
        j, o = ctx.store.fio_paths(part.id, nm)
        return Batch(steps=ss, filename=ctx.filename, area=ctx.area, seed=ctx.seed, ioengine=ctx.ioengine,
                     job_path=j, output_path=o, on_progress=_live(ctx, part, ss),
                     on_boundary=on_boundary if sampling else None, cpus_allowed=ctx.cpus_allowed)

    if sampling and (after is None or after.phase == "purge" or after.session != ctx.session):
        # A batch no earlier one of this process chains to (a part's first, after its purge; the
        # first after a resume): its first step's "before" is sampled here;
        # the executor's first boundary call can come too late when fio is slow to set up (seen
        # under TCG: the only snapshot near the step was the one taken after it ended).
        ctx.snapshots.append(src.snapshot())
    batch = batch_of(steps, name)
    if next_steps and next_name:
        batch.next = batch_of(next_steps, next_name)
    try:
        res = ctx.executor.run(batch)
    except OSError as exc:  # the job file or fio's output could not be written to the results disk
        raise disk_error(out, exc, ctx.store.path) from None
    except RunFailed:
        if ctx.store.free_bytes() < 64 * 1024:  # fio's output was cut short by a full results disk
            raise disk_error(out, OSError(errno.ENOSPC, "No space left on device"), ctx.store.path) from None
        raise
    recs: list[StepRecord] = []
    prev = after
    for i, (s, m) in enumerate(zip(steps, res.measurements)):
        rec = steprecord.step_record(s, m, fio_json=ctx.store.rel(out), job_index=i, session=ctx.session,
                                     batch_wall_s=round(res.wall_s, 4),
                                     timeline=res.timelines[i] if i < len(res.timelines) else None,
                                     device=res.devices[i] if i < len(res.devices) else None,  # engine/devtrace.py
                                     intervals=res.intervals[i] if i < len(res.intervals) else None)
        rec = rec.with_boundary(steprecord.boundary(prev, rec))
        rec = rec.with_telemetry(_telemetry(src, ctx.snapshots, rec))
        recs.append(rec)
        prev = rec
    # Checksums first, steps second: steps.jsonl stays the commit point of a round (store.record_round).
    try:
        ctx.store.record_round(part.id, name, [job, out, out.with_suffix(".log"), *interval_logs(out)], recs)
    except OSError as exc:
        raise disk_error(out, exc, ctx.store.path) from None
    ctx.store.append_steps(recs)
    for w in res.warnings:
        ctx.progress.message(f"fio: {w}")
    _warn_cpu_bound(ctx, part, name, recs)
    return recs


def _warn_cpu_bound(ctx: RunContext, part: Part, name: str, recs: list[StepRecord]) -> None:
    """Say (once per part) when a step's fio threads used about all the CPU open to them: the
    result may then be the host's limit, not the device's (each step record keeps fio's usr/sys)."""
    if part.id in ctx.cpu_warned:
        return
    for rec in recs:
        threads = rec.workload.threads
        used = cpus.cpus_used(rec.fio.cpu_usr_pct, rec.fio.cpu_sys_pct, threads)
        if cpus.cpu_bound(used, threads, ctx.cpus_allowed):
            ctx.cpu_warned.add(part.id)
            ctx.progress.message(
                f"CPU-bound: {part.title} {name} {rec.label}: fio used {used:.2f} CPUs of the "
                f"{cpus.open_cpus(threads, ctx.cpus_allowed)} its {threads} threads could use; its results may be the "
                "host's limit, not the device's (fewer parallel runs, or --cpus-per-device)")
            return


def _nearest(snaps: list[dict], t: float | None, *, after: float | None = None,
             before: float | None = None) -> dict | None:
    """The snapshot nearest time t among those taken after ``after`` and before ``before``."""
    if t is None:
        return None
    ok = [sn for sn in snaps if (after is None or _t(sn) > after) and (before is None or _t(sn) < before)]
    if not ok:
        return None
    best = min(ok, key=lambda sn: abs(_t(sn) - t))
    return {**best, "offset_ms": round((_t(best) - t) * 1000, 1)}


def _t(snap: dict) -> float:
    return float(snap.get("t_unix_s", 0.0))


def _telemetry(src: TelemetrySource | None, snaps: list[dict], rec: StepRecord) -> dict:
    """A step's telemetry: the snapshots nearest its observed start and end (each with its own
    time and its distance from the boundary, offset_ms), or why there are none. A "before" is
    never taken after the step ended, an "after" never before it started: a step whose start
    was not sampled has no "before" (None) rather than a later snapshot's counters."""
    if src is None:
        return {"available": False, "reason": "not available: no telemetry source configured"}
    if not src.available:
        return {"available": False, "reason": src.reason or "not available"}
    start, end = rec.start_time, rec.end_time
    return {"available": True, "before": _nearest(snaps, start, before=end),
            "after": _nearest(snaps, end, after=start)}


def _round_summary(part: Part, records: list[StepRecord], recs: list[StepRecord], reason: str | None,
                   keep: frozenset[int] = frozenset()) -> dict:
    out: dict = {"stop_reason": reason}
    if part.stop_rule == "wsat":
        n, written = analysis.wsat_totals(records)
        out.update(samples=n, max_samples=part.wsat_max_steps, written_bytes=written, max_bytes=part.wsat_max_bytes,
                   last_iops=recs[-1].fio.iops if recs else None)
        return out
    rounds = analysis.complete_rounds(records, part)
    vs = analysis.verdicts(rounds, part, keep)
    series = analysis.tracking_series(rounds, part)
    out["tracking"] = [
        {"name": t.name, "unit": t.unit, "value": series[t.name][1][-1] if series[t.name][1] else None,
         "reached": None if v is None else v.reached,
         "range_pct": None if v is None or not v.average else 100 * v.range / v.average,
         "excursion_pct": None if v is None or not v.average else 100 * v.excursion / v.average}
        for t, v in zip(part.tracking, vs)
    ]
    return out
