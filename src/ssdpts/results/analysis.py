"""From steps to results: per-round tracking values, steady-state verdicts and the
measurement-window tables. Pure: reads step records, never fio or a device.

All reported values are averages over the steady-state measurement window (PTS.md §2): the
5 rounds in which steady state was reached, or the last 5 rounds when it was not. A part with a
fixed plan (HIR's wait states, XSR, the operating points of CBW/DIRTH) has no steady-state rule:
its table covers every round it ran.

Resumed runs: a window never includes rounds from before a resumption unless that resumption
kept the window (``ssdpts resume --keep-window``), and then it says so ("spans a resume of N h").
Step boundaries: the idle and overlap between consecutive steps, from each step's observed
timeline (engine/fio.py step_timeline), with the limits of docs/methodology.md "Step boundaries";
a planned idle (HIR) is not a delay: a boundary's idle is held to the limit beyond its planned idle.
"""

from __future__ import annotations

from collections import defaultdict
import statistics
from typing import Iterable

from ssdpts.device.telemetry import throttle_warnings
from ssdpts.measurement import Measurement
from ssdpts.pts import wsat
from ssdpts.pts.parts import Part
from ssdpts.pts.registry import TESTS
from ssdpts.pts.steady_state import WINDOW_ROUNDS, SteadyState, all_reached, latest_window
from ssdpts.pts.tables import Table
from ssdpts.pts.workload import Step
from ssdpts.results import timing
from ssdpts.results.records import NoWindow, PartResult, Series, SteadyStateResult, Summary, Wipc, WindowResume


def part_records(steps: Iterable[dict], part: Part) -> list[dict]:
    return [s for s in steps if s["test"] == part.test and s["part"] == part.part]


def complete_rounds(records: list[dict], part: Part) -> dict[int, list[dict]]:
    """Round number -> its step records, for rounds that finished with every planned step."""
    by_round: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        if r["phase"] == "round":
            by_round[r["round"]].append(r)
    out = {}
    for rno in sorted(by_round):
        planned = len(part.round_steps(rno))
        recs = sorted(by_round[rno], key=lambda x: x["index"])
        if len(recs) == planned:
            out[rno] = recs
    return out


def session_of(rec: dict) -> int:
    """0 for steps of the first run, n for steps run by the n-th 'ssdpts resume'."""
    return int(rec.get("session") or 0)


def kept_sessions(manifest: dict) -> frozenset[int]:
    """Sessions (resumptions, numbered from 1) started with --keep-window."""
    return frozenset(i for i, r in enumerate(manifest.get("resumptions") or [], start=1)
                     if isinstance(r, dict) and r.get("keep_window"))


def window_rounds_from(rounds: dict[int, list[dict]], keep: frozenset[int] = frozenset()) -> int | None:
    """The first round a steady-state window may use: the first round run after the last
    resumption that re-preconditioned (resumed without --keep-window), None when there is none.

    PTS 2.0.2 §3 requires no delay between the rounds of a window: hours of idle between the
    interrupted run and its resumption let the drive reclaim blocks in the background, so rounds
    from before and after are not comparable. By default a resumption therefore restarts the
    window: the interrupted round is repeated and the window counts only rounds after it."""
    first = None
    prev = None
    for rno in sorted(rounds):
        sess = session_of(rounds[rno][0])
        if prev is not None and sess != prev and sess not in keep:
            first = rno
        prev = sess
    return first


def eligible_rounds(rounds: dict[int, list[dict]], keep: frozenset[int] = frozenset()) -> dict[int, list[dict]]:
    first = window_rounds_from(rounds, keep)
    return rounds if first is None else {r: v for r, v in rounds.items() if r >= first}


def round_limit(part: Part, rounds: dict[int, list[dict]], keep: frozenset[int] = frozenset()) -> int:
    """The part's round limit: --max-rounds, extended (after a re-preconditioning resumption) so
    that a full window of rounds run after the resumption fits."""
    first = window_rounds_from(rounds, keep)
    return part.max_rounds if first is None else max(part.max_rounds, first + WINDOW_ROUNDS - 1)


def _m(rec: dict) -> Measurement:
    """A step's measurement with its rates as the device did them (timing.py)."""
    return timing.as_device_did(rec)


def tracking_series(rounds: dict[int, list[dict]], part: Part) -> dict[str, tuple[list[int], list[float]]]:
    """Tracking variable name -> (round numbers, values)."""
    out = {}
    for t in part.tracking:
        xs, ys = [], []
        for rno, recs in rounds.items():
            cell = next((r for r in recs if r["key"] == t.key), None)
            if cell is not None:
                xs.append(rno)
                ys.append(_m(cell).metric(t.metric))
        out[t.name] = (xs, ys)
    return out


def verdicts(rounds: dict[int, list[dict]], part: Part, keep: frozenset[int] = frozenset()) -> list[SteadyState | None]:
    units = {t.name: t.unit for t in part.tracking}
    return [latest_window(name, xs, ys, units[name])
            for name, (xs, ys) in tracking_series(eligible_rounds(rounds, keep), part).items()]


def wsat_totals(records: list[dict]) -> tuple[int, int]:
    """(samples taken, bytes written) of a WSAT part."""
    rs = [r for r in records if r["phase"] == "round"]
    return len(rs), sum(int(r["measurement"]["write"]["io_bytes"]) for r in rs)


def stop_reason(records: list[dict], part: Part, keep: frozenset[int] = frozenset()) -> str | None:
    """Why the part is finished, or None while it must go on."""
    rounds = complete_rounds(records, part)
    if part.stop_rule == "fixed":
        return "complete" if len(rounds) >= part.max_rounds else None
    if part.stop_rule == "wsat":
        n, written = wsat_totals(records)
        if written >= part.wsat_max_bytes:
            return "capacity-written"
        if n >= part.wsat_max_steps:
            return "time-limit"
        return None
    if all_reached(verdicts(rounds, part, keep)):
        return "steady-state"
    if rounds and max(rounds) >= round_limit(part, rounds, keep):
        return "max-rounds"
    return None


def _window(rounds: dict[int, list[dict]], keep: frozenset[int] = frozenset()) -> list[int]:
    return sorted(eligible_rounds(rounds, keep))[-WINDOW_ROUNDS:]


def _records(rounds: dict[int, list[dict]], window: list[int]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for rno in window:
        for r in rounds[rno]:
            out[r["key"]].append(r)
    return out


def _cells(rounds: dict[int, list[dict]], window: list[int]) -> dict[str, list[Measurement]]:
    return defaultdict(list, {k: [_m(r) for r in rs] for k, rs in _records(rounds, window).items()})


def table_for(part: Part, rounds: dict[int, list[dict]], window: list[int]) -> Table:
    """The part's measurement-window table, built by its test (pts/iops.py etc.): from the cells of
    one round of the window, or for a fixed plan from the steps of every round it ran."""
    if part.stop_rule == "fixed":
        steps = [s for r in window for s in part.round_steps(r)]
    else:
        steps = part.round_steps(window[0]) if window else part.round_steps(1)
    test = TESTS[part.test]
    kw = dict(part.table_args)
    if getattr(test, "TABLE_TELEMETRY", False):
        # the OCP tests: what the drive counted over each phase (media writes: idle GC's evidence)
        kw["telemetry"] = {k: [r.get("telemetry") for r in rs] for k, rs in _records(rounds, window).items()}
    return test.build_table(steps, _cells(rounds, window), **kw)


def wsat_table(records: list[dict], part: Part, capacity_bytes: int) -> Table:
    rs = sorted((r for r in records if r["phase"] == "round"), key=lambda r: r["index"])
    return wsat.build_table([(r["index"], _m(r)) for r in rs], capacity_bytes, **part.table_args)


def bound_part(part: Part, parts: list[Part], steps: list[dict], capacity_bytes: int,
               keep: frozenset[int] = frozenset()) -> Part:
    """A part planned from an earlier part's table (Part.needs): bound to that table as the steps
    recorded so far give it; the part itself when it needs none or that part has no table yet."""
    if not part.needs:
        return part
    earlier = next((p for p in parts if p.id == part.needs), None)
    if earlier is None:
        return part
    return part.bound(summarize_part(earlier, steps, capacity_bytes, keep).table)


def bound_parts(parts: list[Part], steps: list[dict], capacity_bytes: int,
                keep: frozenset[int] = frozenset()) -> list[Part]:
    return [bound_part(p, parts, steps, capacity_bytes, keep) for p in parts]


def summarize_part(part: Part, steps: list[dict], capacity_bytes: int, keep: frozenset[int] = frozenset()) -> PartResult:
    records = part_records(steps, part)
    wipc = [r for r in records if r["phase"] == "wipc"]
    base = dict(id=part.id, test=part.test, part=part.part, title=part.title, stop_reason=stop_reason(records, part, keep),
                wipc=Wipc(wipc[-1]["label"], wipc[-1]["measurement"]["write"]["io_bytes"],
                          wipc[-1]["measurement"]["duration_s"]) if wipc else None)
    if part.test == "wsat":
        n, _written = wsat_totals(records)
        t = timing.part_timing(records)
        return PartResult(**base, samples=n, table=wsat_table(records, part, capacity_bytes),
                          warnings=tuple(throttle_warnings([r for r in records if r["phase"] == "round"])
                                         + timing.warnings(t, "samples")),
                          boundaries=boundary_summary(records), resumptions=tuple(resumption_summary(records, keep)),
                          timing=t)
    rounds = complete_rounds(records, part)
    if part.stop_rule == "fixed":
        ran = sorted(rounds)
        t = timing.part_timing(records, [r for rno in ran for r in rounds[rno]])
        return PartResult(**base, rounds_run=len(ran), table=table_for(part, rounds, ran) if ran else None,
                          warnings=tuple(throttle_warnings([r for rno in ran for r in rounds[rno]])
                                         + timing.warnings(t, "planned steps")),
                          boundaries=boundary_summary(records), resumptions=tuple(resumption_summary(records, keep)),
                          timing=t)
    window = _window(rounds, keep)
    vs = verdicts(rounds, part, keep)
    series = tracking_series(rounds, part)
    t = timing.part_timing(records, [r for rno in window for r in rounds[rno]])
    return PartResult(
        **base, rounds_run=len(rounds),
        series={name: Series(tuple(xs), tuple(ys)) for name, (xs, ys) in series.items()},
        steady_state=SteadyStateResult(all_reached(vs), tuple(window), tuple(
            v if v is not None else NoWindow(t.name, t.unit, tuple(series[t.name][0]), tuple(series[t.name][1]))
            for t, v in zip(part.tracking, vs)),
            resume=WindowResume(window_rounds_from(rounds, keep),
                                window_span_of_resume([r for rno in window for r in rounds[rno]]))),
        table=table_for(part, rounds, window) if window else None,
        warnings=tuple((throttle_warnings([r for rno in window for r in rounds[rno]]) if window else [])
                       + timing.warnings(t)),
        round_limit=round_limit(part, rounds, keep), boundaries=boundary_summary(records),
        resumptions=tuple(resumption_summary(records, keep)), timing=t,
    )


def summarize_typed(parts: list[Part], steps: list[dict], capacity_bytes: int, *, status: str,
                    deviations: list[str], keep: frozenset[int] = frozenset()) -> Summary:
    out_parts = [summarize_part(p, steps, capacity_bytes, keep) for p in bound_parts(parts, steps, capacity_bytes, keep)]
    tests: dict[str, list[str]] = defaultdict(list)
    for p in out_parts:
        tests[p.test].append(p.id)
    return Summary(status, not deviations, tuple(deviations), {t: tuple(ids) for t, ids in tests.items()},
                   {p.id: p for p in out_parts}, boundaries=run_boundary_summary([p.boundaries or {} for p in out_parts]),
                   timing=timing.run_timing([p.timing for p in out_parts]))


def summarize(parts: list[Part], steps: list[dict], capacity_bytes: int, *, status: str,
              deviations: list[str], keep: frozenset[int] = frozenset()) -> dict:
    """summary.json's content (results/records.py Summary, written as JSON)."""
    return summarize_typed(parts, steps, capacity_bytes, status=status, deviations=deviations, keep=keep).to_dict()


def step_record(step: Step, m: Measurement, *, fio_json: str, job_index: int, label: str | None = None,
                session: int = 0) -> dict:
    rec = {
        "test": step.test, "part": step.part, "phase": step.phase, "round": step.round, "index": step.index,
        "session": session,
        "key": step.key, "label": label or step.label, "workload": step.workload.to_dict(),
        "planned_duration_s": step.duration_s, "planned_io_bytes": step.io_bytes,
        "start_time": m.start_time, "end_time": m.end_time,
        "measurement": m.to_dict(), "telemetry": None,
        "fio_json": fio_json, "fio_job_index": job_index,
    }
    if step.idle_after_s:
        rec["planned_idle_after_s"] = step.idle_after_s  # HIR: the time with no IO planned after this step
    if step.beside is not None:
        rec["beside"] = step.beside.to_dict()  # OCP: the deallocation job run beside the step's reads
    return rec


# ==================================================================================================
# Resumptions and the steady-state window
# ==================================================================================================


def _span_h(a: dict, b: dict) -> float:
    return max(0.0, float(b["start_time"]) - float(a["end_time"])) / 3600.0


def resumption_summary(records: list[dict], keep: frozenset[int] = frozenset()) -> list[dict]:
    """Where the part's steps continue in a later session: after which step, the idle between the
    last step before and the first step after, and whether the window restarted there."""
    out = []
    ordered = sorted(records, key=lambda r: float(r.get("start_time") or 0.0))
    for a, b in zip(ordered, ordered[1:]):
        if session_of(b) != session_of(a):
            out.append({"session": session_of(b), "after_phase": a["phase"], "after_round": a["round"],
                        "idle_h": round(_span_h(a, b), 4),
                        "window": "kept (--keep-window)" if session_of(b) in keep else "restarted"})
    return out


def window_span_of_resume(window_records: list[dict]) -> dict | None:
    """The resumption(s) a window spans (only possible with --keep-window), for the disclosure."""
    ordered = sorted(window_records, key=lambda r: float(r.get("start_time") or 0.0))
    idle = sum(_span_h(a, b) for a, b in zip(ordered, ordered[1:]) if session_of(a) != session_of(b))
    if not any(session_of(a) != session_of(b) for a, b in zip(ordered, ordered[1:])):
        return None
    return {"idle_h": round(idle, 4), "text": f"spans a resume of {idle:.1f} h"}


# ==================================================================================================
# Step boundaries
# ==================================================================================================

IDLE_LIMIT_MS = 10.0  # docs/methodology.md "Step boundaries": at most 10 ms without IO between steps
RESOLUTION_MS = 1.0  # fio's job_runtime is whole milliseconds; the gate's clock is microseconds
DEVICE_RESOLUTION_MS = 0.001  # the block tracepoints' clock, as trace_pipe prints it (engine/devtrace.py)


def _qd1(rec: dict) -> bool:
    """A TC1/QD1 step, alone on the device (a step with a job beside it, OCP's, is not)."""
    if rec.get("beside"):
        return False
    w = rec.get("workload") or {}
    return int(w.get("threads", 1)) * int(w.get("iodepth", 1)) == 1


def step_label(rec: dict) -> str:
    if rec["phase"] in ("wipc", "purge"):
        return rec["phase"].upper() if rec["phase"] == "wipc" else "purge"
    return f"round {rec['round']} step {rec['index']}"


def boundary(prev: dict | None, rec: dict) -> dict | None:
    """The boundary between ``prev`` (the part's step run just before) and ``rec``.

    gap = rec's observed start - prev's observed end: idle when positive (no IO in flight),
    overlap when negative (both steps' IOs in flight). Limits (PTS 2.0.2: no delay between
    preconditioning, rounds and steps; the LAT test at exactly one outstanding IO): idle at most
    10 ms; no overlap when either step is TC1/QD1, else at most the previous step's maximum
    response time (the drain of its last IOs). Not held to the limits, only listed: the boundary
    into a step of a later session (a resumption, see resumption_summary) and purge -> WIPC (fio is
    started when the purge has returned: no fio job may hold the device open while it is purged).
    None when there is no boundary to measure: the first step, or a step run by a fio server."""
    if prev is None or any("fio server" in str((r.get("timeline") or {}).get("source", "")) for r in (prev, rec)):
        return None  # a step run by a fio server has no observed start and end (engine/fioclient.py)
    kind = ("resume" if session_of(prev) != session_of(rec) else "purge" if prev["phase"] == "purge"
            else "wipc" if prev["phase"] == "wipc"
            else "step" if (prev["phase"], prev["round"]) == (rec["phase"], rec["round"]) else "round")
    recorded_ms = (float(rec["start_time"]) - float(prev["end_time"])) * 1000.0
    # The device's view where the run traced it (engine/devtrace.py): the previous step's last
    # completion to this step's first issue at the block layer. Else fio's timeline, which cannot
    # see the time from the release to fio's first IO reaching the device, nor from the last
    # completion to the gate hearing of it (a host stalling fio there is missed).
    dev = rec.get("device") or {}
    device_ms = dev.get("gap_ms") if kind != "resume" else None
    gap_ms = float(device_ms) if device_ms is not None else recorded_ms
    idle, overlap = max(gap_ms, 0.0), max(-gap_ms, 0.0)
    # A planned idle after the previous step (HIR) is part of the test, not a delay: the limit
    # holds for the idle beyond it, and for an idle shorter than planned as well. (The gate times a
    # planned idle from the end of the step's run time, counted from when it released the step, so
    # that hearing the end late does not lengthen it; fio starts its clock a little after that, so
    # on a loaded host an idle comes out a few ms short: 1998.4 of 2,000 ms was seen in CI.)
    planned = float(prev.get("planned_idle_after_s") or 0.0) * 1000.0
    allowed_overlap = 0.0 if _qd1(prev) or _qd1(rec) else \
        float((prev.get("measurement") or {}).get("lat_max_ns") or 0.0) / 1e6
    why = []
    res = DEVICE_RESOLUTION_MS if device_ms is not None else RESOLUTION_MS
    if kind not in ("resume", "purge"):
        if idle - planned > IDLE_LIMIT_MS + res:
            why.append(f"idle {idle:.1f} ms > {IDLE_LIMIT_MS:g} ms" if not planned else
                       f"idle {idle:.1f} ms > the planned {planned:.0f} ms + {IDLE_LIMIT_MS:g} ms")
        if planned and idle < planned - IDLE_LIMIT_MS - res:
            why.append(f"idle {idle:.1f} ms < the planned {planned:.0f} ms − {IDLE_LIMIT_MS:g} ms")
        if overlap > allowed_overlap + res:
            why.append(f"overlap {overlap:.1f} ms > {allowed_overlap:.1f} ms"
                       + (" (a TC1/QD1 step)" if allowed_overlap == 0 else " (the previous step's drain)"))
        busy = int(dev.get("busy_issues") or 0) if device_ms is not None and _qd1(rec) else 0
        if busy:
            why.append(f"{busy} IO{'s' if busy != 1 else ''} issued while another was in flight (a TC1/QD1 step)")
    tl = rec.get("timeline") or {}
    return {"after": step_label(prev), "kind": kind, "gap_ms": round(gap_ms, 3), "idle_ms": round(idle, 3),
            **({"planned_idle_ms": round(planned, 3)} if planned else {}),
            "overlap_ms": round(overlap, 3), "allowed_overlap_ms": round(allowed_overlap, 3),
            "source": "block layer" if device_ms is not None else "fio timeline",
            "recorded_gap_ms": round(recorded_ms, 3),
            "resolution_ms": res,
            "chained": bool(tl.get("chained", True)), "late_ms": tl.get("late_ms"),
            "over_limit": bool(why), "why": "; ".join(why) or None}


def unplanned_idle_ms(b: dict) -> float:
    """A boundary's idle beyond its planned idle (HIR), the part the idle limit holds for."""
    return round(max(0.0, float(b["idle_ms"]) - float(b.get("planned_idle_ms") or 0.0)), 3)


def recorded_idle_ms(b: dict) -> float:
    """A boundary's idle beyond its planned idle as fio's timeline saw it (the device's view aside)."""
    gap = float(b.get("recorded_gap_ms", b["gap_ms"]))
    return round(max(0.0, max(gap, 0.0) - float(b.get("planned_idle_ms") or 0.0)), 3)


def _stat(vals: list[float]) -> dict:
    if not vals:
        return {"median": None, "worst": None}
    return {"median": round(float(statistics.median(vals)), 3), "worst": round(float(max(vals)), 3)}


def boundary_summary(records: list[dict]) -> dict:
    """Per round: how many boundaries end in it (the one from the previous round or WIPC and those
    between its steps), median and worst idle (beyond any planned idle: HIR) and overlap, and the
    boundaries over the limits; ``planned_idle`` counts the boundaries after a planned idle."""
    per_round: dict[int, list[dict]] = defaultdict(list)
    flagged, within, between, resumes = [], [], [], []
    for r in records:
        b = r.get("boundary")
        if not b or r["phase"] != "round":
            continue
        if b["kind"] == "resume":
            resumes.append(b)
            continue
        per_round[r["round"]].append(b)
        (within if b["kind"] == "step" else between).append(b)
        if b["over_limit"]:
            flagged.append({"round": r["round"], "index": r["index"], "label": r.get("label"), **b})
    rounds = []
    for rno in sorted(per_round):
        bs = per_round[rno]
        rounds.append({"round": rno, "boundaries": len(bs),
                       "idle_ms": _stat([unplanned_idle_ms(b) for b in bs]), "overlap_ms": _stat([b["overlap_ms"] for b in bs]),
                       "recorded_idle_ms": _stat([recorded_idle_ms(b) for b in bs]),
                       "over_limit": sum(1 for b in bs if b["over_limit"])})
    wipc = next((r.get("boundary") for r in records if r["phase"] == "wipc" and r.get("boundary")), None)
    every = within + between
    sources = sorted({b.get("source", "fio timeline") for b in every})
    return {
        "idle_limit_ms": IDLE_LIMIT_MS, "resolution_ms": RESOLUTION_MS,
        # where the figures come from: "block layer" (the device's view), "fio timeline", or both
        "source": " and ".join(sources) if sources else None,
        "device_boundaries": sum(1 for b in every if b.get("source") == "block layer"),
        # where the device saw a boundary other than fio's timeline shows it (beyond the timeline's resolution)
        "differs_from_recorded": sum(1 for b in every if b.get("source") == "block layer"
                                     and abs(b["gap_ms"] - b.get("recorded_gap_ms", b["gap_ms"])) > RESOLUTION_MS),
        "within_rounds": {"boundaries": len(within), "idle_ms": _stat([unplanned_idle_ms(b) for b in within]),
                          "overlap_ms": _stat([b["overlap_ms"] for b in within]),
                          "over_limit": sum(1 for b in within if b["over_limit"])},
        "between_rounds": {"boundaries": len(between), "idle_ms": _stat([unplanned_idle_ms(b) for b in between]),
                           "overlap_ms": _stat([b["overlap_ms"] for b in between]),
                           "over_limit": sum(1 for b in between if b["over_limit"])},
        "rounds": rounds, "flagged": flagged, "purge_to_wipc": wipc,
        "planned_idle": sum(1 for b in within + between if b.get("planned_idle_ms")),
    }


def run_boundary_summary(parts: list[dict]) -> dict:
    """Over every part (each part's boundary_summary): the worst boundary and how many exceed the limits."""
    worst_idle, worst_overlap, over = 0.0, 0.0, 0
    n = 0
    for b in parts:
        for k in ("within_rounds", "between_rounds"):
            g = b.get(k) or {}
            n += g.get("boundaries", 0)
            over += g.get("over_limit", 0)
            worst_idle = max(worst_idle, (g.get("idle_ms") or {}).get("worst") or 0.0)
            worst_overlap = max(worst_overlap, (g.get("overlap_ms") or {}).get("worst") or 0.0)
    sources = sorted({x for b in parts for x in str(b.get("source") or "").split(" and ") if x})
    return {"boundaries": n, "over_limit": over, "worst_idle_ms": round(worst_idle, 3),
            "worst_overlap_ms": round(worst_overlap, 3), "idle_limit_ms": IDLE_LIMIT_MS,
            "source": " and ".join(sources) if sources else None,
            "device_boundaries": sum(int(b.get("device_boundaries") or 0) for b in parts)}
