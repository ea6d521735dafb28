"""summary.json: a run's results from its step records (records.Summary, written by the store).

All reported values are averages over the steady-state measurement window (docs/pts-reference.md#steady-state): the
5 rounds in which steady state was reached, or the last 5 rounds when it was not. A part with a
fixed plan (HIR's wait states, XSR, the operating points of CBW/DIRTH) has no steady-state rule:
its table covers every round it ran (analysis.py: the rounds, windows and verdicts).

Resumed runs: a window never includes rounds from before a resumption unless that resumption
kept the window (``ssdpts resume --keep-window``), and then it says so ("spans a resume of N h").
Step boundaries: each part's and the run's, summed from the boundary each step record carries
(steprecord.boundary).

There is one recomputation of a run's results (:func:`recompute_summary`): the reader's, for a run
that stopped before writing summary.json, and the proof's, for a summary.json to check.
"""

from __future__ import annotations

from collections import defaultdict
import statistics

from ssdpts.results.throttle import throttle_warnings
from ssdpts.pts.parts import Part
from ssdpts.pts.steady_state import all_reached
from ssdpts.results import timing
from ssdpts.results.analysis import (
    window_of, complete_rounds, eligible_rounds, kept_sessions, part_records, round_limit, stop_reason, table_for,
    tracking_series, verdicts, window_rounds_from, wsat_table, wsat_totals)
from ssdpts.results.records import (
    Manifest, NoWindow, PartResult, Series, SteadyStateResult, Summary, Wipc, WindowResume)
from ssdpts.results.steprecord import IDLE_LIMIT_MS, RESOLUTION_MS, Boundary, StepRecord, session_of


def bound_part(part: Part, parts: list[Part], steps: list[StepRecord], capacity_bytes: int,
               keep: frozenset[int] = frozenset()) -> Part:
    """A part planned from an earlier part's table (Part.needs): bound to that table as the steps
    recorded so far give it; the part itself when it needs none or that part has no table yet."""
    if not part.needs:
        return part
    earlier = next((p for p in parts if p.id == part.needs), None)
    if earlier is None:
        return part
    return part.bound(summarize_part(earlier, steps, capacity_bytes, keep).table)


def bound_parts(parts: list[Part], steps: list[StepRecord], capacity_bytes: int,
                keep: frozenset[int] = frozenset()) -> list[Part]:
    return [bound_part(p, parts, steps, capacity_bytes, keep) for p in parts]


def summarize_part(part: Part, steps: list[StepRecord], capacity_bytes: int, keep: frozenset[int] = frozenset()) -> PartResult:
    records = part_records(steps, part)
    wipc = [r for r in records if r.phase == "wipc"]
    base = dict(id=part.id, test=part.test, part=part.part, title=part.title, stop_reason=stop_reason(records, part, keep),
                wipc=Wipc(wipc[-1].label, wipc[-1].fio.write.io_bytes, wipc[-1].fio.duration_s) if wipc else None)
    if part.stop_rule == "wsat":  # stopped by samples or bytes written: a curve of samples, not rounds
        n, _written = wsat_totals(records)
        t = timing.part_timing(records)
        return PartResult(**base, samples=n, table=wsat_table(records, part, capacity_bytes),
                          warnings=tuple(throttle_warnings([r.telemetry for r in records if r.phase == "round"])
                                         + timing.warnings(t, "samples")),
                          boundaries=boundary_summary(records), resumptions=tuple(resumption_summary(records, keep)),
                          timing=t)
    rounds = complete_rounds(records, part)
    if part.stop_rule == "fixed":
        ran = sorted(rounds)
        t = timing.part_timing(records, [r for rno in ran for r in rounds[rno]])
        return PartResult(**base, rounds_run=len(ran), table=table_for(part, rounds, ran) if ran else None,
                          warnings=tuple(throttle_warnings([r.telemetry for rno in ran for r in rounds[rno]])
                                         + timing.warnings(t, "planned steps")),
                          boundaries=boundary_summary(records), resumptions=tuple(resumption_summary(records, keep)),
                          timing=t)
    window = window_of(rounds, keep)
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
        warnings=tuple((throttle_warnings([r.telemetry for rno in window for r in rounds[rno]]) if window else [])
                       + timing.warnings(t)),
        round_limit=round_limit(part, rounds, keep), boundaries=boundary_summary(records),
        resumptions=tuple(resumption_summary(records, keep)), timing=t,
    )


def summarize(parts: list[Part], steps: list[StepRecord], capacity_bytes: int, *, status: str,
              deviations: list[str], keep: frozenset[int] = frozenset()) -> Summary:
    """summary.json's content: the results of every part (``parts``: the run's plan, pts/plan.py)."""
    out_parts = [summarize_part(p, steps, capacity_bytes, keep) for p in bound_parts(parts, steps, capacity_bytes, keep)]
    tests: dict[str, list[str]] = defaultdict(list)
    for p in out_parts:
        tests[p.test].append(p.id)
    return Summary(status, not deviations, tuple(deviations), {t: tuple(ids) for t, ids in tests.items()},
                   {p.id: p for p in out_parts}, boundaries=run_boundary_summary([p.boundaries or {} for p in out_parts]),
                   timing=timing.run_timing([p.timing for p in out_parts]))


def recompute_summary(manifest: Manifest, records: list[StepRecord], status: str | None = None,
                      parts: list[Part] | None = None) -> Summary:
    """The results of a run from its step records, planned for the target it ran on (its recorded
    capacity and logical block size: a 4Kn drive never ran the 0.5KiB steps): what a reader shows
    of a run that stopped before writing summary.json, and what proof.py holds summary.json to.
    ``status``: the status to give it (default: the manifest's); ``parts``: the run's plan when the
    caller has it already. A UserError when the manifest cannot be planned again."""
    from ssdpts.pts.plan import build_parts

    spec, target = manifest.run_spec_and_target()
    if parts is None:
        parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes or 512)
    deviations = list(manifest.deviations) if manifest.deviations is not None else spec.deviations()
    return summarize(parts, records, target.size_bytes, status=status or manifest.status or "running",
                     deviations=deviations, keep=kept_sessions(manifest))


# ==================================================================================================
# Resumptions and the steady-state window
# ==================================================================================================


def _span_h(a: StepRecord, b: StepRecord) -> float:
    return max(0.0, float(b.start_time or 0.0) - float(a.end_time or 0.0)) / 3600.0


def resumption_summary(records: list[StepRecord], keep: frozenset[int] = frozenset()) -> list[dict]:
    """Where the part's steps continue in a later session: after which step, the idle between the
    last step before and the first step after, and whether the window restarted there."""
    out = []
    ordered = sorted(records, key=lambda r: float(r.start_time or 0.0))
    for a, b in zip(ordered, ordered[1:]):
        if session_of(b) != session_of(a):
            out.append({"session": session_of(b), "after_phase": a.phase, "after_round": a.round,
                        "idle_h": round(_span_h(a, b), 4),
                        "window": "kept (--keep-window)" if session_of(b) in keep else "restarted"})
    return out


def window_span_of_resume(window_records: list[StepRecord]) -> dict | None:
    """The resumption(s) a window spans (only possible with --keep-window), for the disclosure."""
    ordered = sorted(window_records, key=lambda r: float(r.start_time or 0.0))
    idle = sum(_span_h(a, b) for a, b in zip(ordered, ordered[1:]) if session_of(a) != session_of(b))
    if not any(session_of(a) != session_of(b) for a, b in zip(ordered, ordered[1:])):
        return None
    return {"idle_h": round(idle, 4), "text": f"spans a resume of {idle:.1f} h"}


# ==================================================================================================
# Step boundaries over a part and a run
# ==================================================================================================


def _stat(vals: list[float]) -> dict:
    if not vals:
        return {"median": None, "worst": None}
    return {"median": round(float(statistics.median(vals)), 3), "worst": round(float(max(vals)), 3)}


def boundary_summary(records: list[StepRecord]) -> dict:
    """Per round: how many boundaries end in it (the one from the previous round or WIPC and those
    between its steps), median and worst idle (beyond any planned idle: HIR) and overlap, and the
    boundaries over the limits; ``planned_idle`` counts the boundaries after a planned idle."""
    per_round: dict[int, list[Boundary]] = defaultdict(list)
    flagged: list[dict] = []
    within: list[Boundary] = []
    between: list[Boundary] = []
    for r in records:
        b = r.boundary
        if b is None or r.phase != "round" or b.kind == "resume":
            continue
        per_round[r.round].append(b)
        (within if b.kind == "step" else between).append(b)
        if b.over_limit:
            flagged.append({"round": r.round, "index": r.index, "label": r.label, **b.to_dict()})
    rounds = []
    for rno in sorted(per_round):
        bs = per_round[rno]
        rounds.append({"round": rno, "boundaries": len(bs),
                       "idle_ms": _stat([b.unplanned_idle_ms for b in bs]), "overlap_ms": _stat([b.overlap_ms for b in bs]),
                       "recorded_idle_ms": _stat([b.recorded_idle_ms for b in bs]),
                       "over_limit": sum(1 for b in bs if b.over_limit)})
    wipc = next((r.boundary.to_dict() for r in records if r.phase == "wipc" and r.boundary), None)
    every = within + between
    sources = sorted({_source(b) for b in every})
    return {
        "idle_limit_ms": IDLE_LIMIT_MS, "resolution_ms": RESOLUTION_MS,
        # where the figures come from: "block layer" (the device's view), "fio timeline", or both
        "source": " and ".join(sources) if sources else None,
        "device_boundaries": sum(1 for b in every if b.source == "block layer"),
        # where the device saw a boundary other than fio's timeline shows it (beyond the timeline's resolution)
        "differs_from_recorded": sum(1 for b in every if b.source == "block layer"
                                     and abs(b.gap_ms - b.recorded_gap) > RESOLUTION_MS),
        "within_rounds": _group(within), "between_rounds": _group(between),
        "rounds": rounds, "flagged": flagged, "purge_to_wipc": wipc,
        "planned_idle": sum(1 for b in within + between if b.planned_idle_ms),
    }


def _source(b: Boundary) -> str:
    """Where a boundary's figures come from; a line written before this was recorded: fio's timeline."""
    return "fio timeline" if "source" not in b.written and b.source is None else str(b.source)


def _group(bs: list[Boundary]) -> dict:
    return {"boundaries": len(bs), "idle_ms": _stat([b.unplanned_idle_ms for b in bs]),
            "overlap_ms": _stat([b.overlap_ms for b in bs]), "over_limit": sum(1 for b in bs if b.over_limit)}


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
