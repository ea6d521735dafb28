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
from collections.abc import Mapping
from dataclasses import dataclass
import statistics
from typing import Any, Protocol

from ssdpts.results.throttle import throttle_warnings
from ssdpts.pts.parts import Part
from ssdpts.pts.steady_state import all_reached
from ssdpts.results import timing, wsatmodel
from ssdpts.results.analysis import (
    window_of, complete_rounds, kept_sessions, part_records, round_limit, stop_reason, table_for,
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


def summarize_part(part: Part, steps: list[StepRecord], capacity_bytes: int, keep: frozenset[int] = frozenset(),
                   block_pages: int | None = None) -> PartResult:
    records = part_records(steps, part)
    wipc = [r for r in records if r.phase == "wipc"]
    base = dict(id=part.id, test=part.test, part=part.part, title=part.title, stop_reason=stop_reason(records, part, keep),
                wipc=Wipc(wipc[-1].label, wipc[-1].fio.write.io_bytes, wipc[-1].fio.duration_s) if wipc else None)
    if part.stop_rule == "wsat":  # stopped by samples or bytes written: a curve of samples, not rounds
        n, _written = wsat_totals(records)
        t = timing.part_timing(records)
        table = wsat_table(records, part, capacity_bytes)
        return PartResult(**base, samples=n, table=table,
                          warnings=tuple(throttle_warnings([r.telemetry for r in records if r.phase == "round"])
                                         + timing.warnings(t, "samples")),
                          boundaries=boundary_summary(records).to_dict(), resumptions=resumptions_of(records, keep),
                          timing=t.to_dict(), model=wsatmodel.model(
                              records, capacity_bytes, window=getattr(table, "final_window_minutes", ()),
                              steady_iops=getattr(table, "final_window_iops", None),
                              pattern=str(part.table_args.get("pattern", "rnd4k-w")), pages_per_block=block_pages))
    rounds = complete_rounds(records, part)
    if part.stop_rule == "fixed":
        ran = sorted(rounds)
        t = timing.part_timing(records, [r for rno in ran for r in rounds[rno]])
        return PartResult(**base, rounds_run=len(ran), table=table_for(part, rounds, ran) if ran else None,
                          warnings=tuple(throttle_warnings([r.telemetry for rno in ran for r in rounds[rno]])
                                         + timing.warnings(t, "planned steps")),
                          boundaries=boundary_summary(records).to_dict(), resumptions=resumptions_of(records, keep),
                          timing=t.to_dict())
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
                                _json(window_span_of_resume([r for rno in window for r in rounds[rno]])))),
        table=table_for(part, rounds, window) if window else None,
        warnings=tuple((throttle_warnings([r.telemetry for rno in window for r in rounds[rno]]) if window else [])
                       + timing.warnings(t)),
        round_limit=round_limit(part, rounds, keep), boundaries=boundary_summary(records).to_dict(),
        resumptions=resumptions_of(records, keep), timing=t.to_dict(),
    )


def summarize(parts: list[Part], steps: list[StepRecord], capacity_bytes: int, *, status: str,
              deviations: list[str], keep: frozenset[int] = frozenset(), block_pages: int | None = None) -> Summary:
    """summary.json's content: the results of every part (``parts``: the run's plan, pts/plan.py)."""
    out_parts = [summarize_part(p, steps, capacity_bytes, keep, block_pages)
                 for p in bound_parts(parts, steps, capacity_bytes, keep)]
    tests: dict[str, list[str]] = defaultdict(list)
    for p in out_parts:
        tests[p.test].append(p.id)
    return Summary(status, not deviations, tuple(deviations), {t: tuple(ids) for t, ids in tests.items()},
                   {p.id: p for p in out_parts}, boundaries=run_boundary_summary([p.boundaries or {} for p in out_parts]).to_dict(),
                   timing=timing.run_timing([p.timing for p in out_parts]).to_dict())


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
                     deviations=deviations, keep=kept_sessions(manifest),
                     block_pages=wsatmodel.block_pages(manifest.description))


# ==================================================================================================
# Resumptions and the steady-state window
# ==================================================================================================


def _span_h(a: StepRecord, b: StepRecord) -> float:
    return max(0.0, float(b.start_time or 0.0) - float(a.end_time or 0.0)) / 3600.0


@dataclass(frozen=True, slots=True)
class PartResumption:
    """summary parts.<id>.resumptions[]: where the part's steps continue in a later session."""

    session: int
    after_phase: str
    after_round: int
    idle_h: float  # from the last step before to the first step after
    window: str  # "restarted" | "kept (--keep-window)"

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "after_phase": self.after_phase, "after_round": self.after_round,
                "idle_h": self.idle_h, "window": self.window}


@dataclass(frozen=True, slots=True)
class SpansResume:
    """summary steady_state.spans_resume: the resumption(s) a kept window spans, for the disclosure."""

    idle_h: float
    text: str  # "spans a resume of N h"

    def to_dict(self) -> dict[str, Any]:
        return {"idle_h": self.idle_h, "text": self.text}


class _Json(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


def _json(r: _Json | None) -> Mapping[str, Any] | None:
    return None if r is None else r.to_dict()


def resumption_summary(records: list[StepRecord], keep: frozenset[int] = frozenset()) -> list[PartResumption]:
    """Where the part's steps continue in a later session: after which step, the idle between the
    last step before and the first step after, and whether the window restarted there."""
    out = []
    ordered = sorted(records, key=lambda r: float(r.start_time or 0.0))
    for a, b in zip(ordered, ordered[1:]):
        if session_of(b) != session_of(a):
            out.append(PartResumption(session_of(b), a.phase, a.round, round(_span_h(a, b), 4),
                                      "kept (--keep-window)" if session_of(b) in keep else "restarted"))
    return out


def resumptions_of(records: list[StepRecord], keep: frozenset[int] = frozenset()) -> tuple[Mapping[str, Any], ...]:
    """resumption_summary as summary.json holds it."""
    return tuple(r.to_dict() for r in resumption_summary(records, keep))


def window_span_of_resume(window_records: list[StepRecord]) -> SpansResume | None:
    """The resumption(s) a window spans (only possible with --keep-window), for the disclosure."""
    ordered = sorted(window_records, key=lambda r: float(r.start_time or 0.0))
    idle = sum(_span_h(a, b) for a, b in zip(ordered, ordered[1:]) if session_of(a) != session_of(b))
    if not any(session_of(a) != session_of(b) for a, b in zip(ordered, ordered[1:])):
        return None
    return SpansResume(round(idle, 4), f"spans a resume of {idle:.1f} h")


# ==================================================================================================
# Step boundaries over a part and a run
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class Stat:
    """The median and worst of a figure over boundaries (None, None: no boundary)."""

    median: float | None
    worst: float | None

    @classmethod
    def of(cls, vals: list[float]) -> "Stat":
        if not vals:
            return cls(None, None)
        return cls(round(float(statistics.median(vals)), 3), round(float(max(vals)), 3))

    def to_dict(self) -> dict[str, Any]:
        return {"median": self.median, "worst": self.worst}


@dataclass(frozen=True, slots=True)
class BoundaryGroup:
    """The boundaries within rounds, or between them (from the previous round or the WIPC)."""

    boundaries: int
    idle_ms: Stat  # beyond any planned idle (HIR)
    overlap_ms: Stat
    over_limit: int

    @classmethod
    def of(cls, bs: list[Boundary]) -> "BoundaryGroup":
        return cls(len(bs), Stat.of([b.unplanned_idle_ms for b in bs]), Stat.of([b.overlap_ms for b in bs]),
                   sum(1 for b in bs if b.over_limit))

    def to_dict(self) -> dict[str, Any]:
        return {"boundaries": self.boundaries, "idle_ms": self.idle_ms.to_dict(), "overlap_ms": self.overlap_ms.to_dict(),
                "over_limit": self.over_limit}


@dataclass(frozen=True, slots=True)
class RoundBoundaries:
    """The boundaries that end in one round: the one from the previous round or WIPC and those between its steps."""

    round: int
    boundaries: int
    idle_ms: Stat  # beyond any planned idle (HIR)
    overlap_ms: Stat
    recorded_idle_ms: Stat  # as fio's timeline saw them
    over_limit: int

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "boundaries": self.boundaries, "idle_ms": self.idle_ms.to_dict(),
                "overlap_ms": self.overlap_ms.to_dict(), "recorded_idle_ms": self.recorded_idle_ms.to_dict(),
                "over_limit": self.over_limit}


@dataclass(frozen=True, slots=True)
class FlaggedBoundary:
    """A boundary over the limits, with the step it leads into."""

    round: int
    index: int
    label: str
    boundary: Boundary

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "index": self.index, "label": self.label, **self.boundary.to_dict()}


@dataclass(frozen=True, slots=True)
class BoundarySummary:
    """summary parts.<id>.boundaries: a part's step boundaries (docs/methodology.md "Step boundaries")."""

    source: str | None  # "block layer" (the device's view), "fio timeline", or both; None: no boundary
    device_boundaries: int
    differs_from_recorded: int  # where the device saw a boundary other than fio's timeline shows it
    within_rounds: BoundaryGroup
    between_rounds: BoundaryGroup
    rounds: tuple[RoundBoundaries, ...]
    flagged: tuple[FlaggedBoundary, ...]
    purge_to_wipc: Boundary | None
    planned_idle: int  # the boundaries after a planned idle (HIR)

    def to_dict(self) -> dict[str, Any]:
        return {
            "idle_limit_ms": IDLE_LIMIT_MS, "resolution_ms": RESOLUTION_MS, "source": self.source,
            "device_boundaries": self.device_boundaries, "differs_from_recorded": self.differs_from_recorded,
            "within_rounds": self.within_rounds.to_dict(), "between_rounds": self.between_rounds.to_dict(),
            "rounds": [r.to_dict() for r in self.rounds], "flagged": [f.to_dict() for f in self.flagged],
            "purge_to_wipc": _json(self.purge_to_wipc), "planned_idle": self.planned_idle,
        }


def _source(b: Boundary) -> str:
    """Where a boundary's figures come from; a line written before this was recorded: fio's timeline."""
    return "fio timeline" if "source" not in b.written and b.source is None else str(b.source)


def boundary_summary(records: list[StepRecord]) -> BoundarySummary:
    """Per round: how many boundaries end in it (the one from the previous round or WIPC and those
    between its steps), median and worst idle (beyond any planned idle: HIR) and overlap, and the
    boundaries over the limits; ``planned_idle`` counts the boundaries after a planned idle."""
    per_round: dict[int, list[Boundary]] = defaultdict(list)
    flagged: list[FlaggedBoundary] = []
    within: list[Boundary] = []
    between: list[Boundary] = []
    for r in records:
        b = r.boundary
        if b is None or r.phase != "round" or b.kind == "resume":
            continue
        per_round[r.round].append(b)
        (within if b.kind == "step" else between).append(b)
        if b.over_limit:
            flagged.append(FlaggedBoundary(r.round, r.index, r.label, b))
    rounds = tuple(RoundBoundaries(rno, len(bs), Stat.of([b.unplanned_idle_ms for b in bs]),
                                   Stat.of([b.overlap_ms for b in bs]), Stat.of([b.recorded_idle_ms for b in bs]),
                                   sum(1 for b in bs if b.over_limit))
                   for rno, bs in sorted(per_round.items()))
    every = within + between
    sources = sorted({_source(b) for b in every})
    return BoundarySummary(
        " and ".join(sources) if sources else None, sum(1 for b in every if b.source == "block layer"),
        sum(1 for b in every if b.source == "block layer" and abs(b.gap_ms - b.recorded_gap) > RESOLUTION_MS),
        BoundaryGroup.of(within), BoundaryGroup.of(between), rounds, tuple(flagged),
        next((r.boundary for r in records if r.phase == "wipc" and r.boundary), None),
        sum(1 for b in every if b.planned_idle_ms))


@dataclass(frozen=True, slots=True)
class RunBoundaries:
    """summary boundaries: over every part, the worst boundary and how many exceed the limits."""

    boundaries: int
    over_limit: int
    worst_idle_ms: float
    worst_overlap_ms: float
    source: str | None
    device_boundaries: int

    def to_dict(self) -> dict[str, Any]:
        return {"boundaries": self.boundaries, "over_limit": self.over_limit, "worst_idle_ms": self.worst_idle_ms,
                "worst_overlap_ms": self.worst_overlap_ms, "idle_limit_ms": IDLE_LIMIT_MS, "source": self.source,
                "device_boundaries": self.device_boundaries}


def run_boundary_summary(parts: list[Mapping[str, Any]]) -> RunBoundaries:
    """Over every part (each part's boundaries as summary.json holds them: boundary_summary's, or an
    older ssdpts's): the worst boundary and how many exceed the limits."""
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
    return RunBoundaries(n, over, round(worst_idle, 3), round(worst_overlap, 3),
                         " and ".join(sources) if sources else None,
                         sum(int(b.get("device_boundaries") or 0) for b in parts))
