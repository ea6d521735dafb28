"""Rates as the device did them: each step's IOPS and bandwidth held against the block layer's span
of that step's IO (docs/methodology.md "Rates as the device did them").

fio's IOPS is its IO count over its own run time. Its clock is not the device's: on a busy host
fio's thread can start its clock and reach the device only later, or go on counting after the
device has finished, so that its run time is not the span in which the device did the IO (2.029 s
of run time against 2.327 s of IO at the block layer was seen beside host load: +18% IOPS). Where
the run traced its step boundaries at the block layer (engine/devtrace.py: each step's first issue
and last completion), that span is the device's:

* **fio** — the span and fio's run time agree within the tolerance (TOLERANCE_PCT of the run time,
  at least TOLERANCE_MS): fio's figures stand.
* **device** — they differ by more: the step's IOPS and bandwidth are fio's IO count and bytes over
  the block layer's span (its response times are fio's: the block layer's edges cannot correct
  them).
* **unchecked** — the run traced, but not this step's two ends (a lost trace, a job run beside the
  step), or the step ran where nothing traced (a file, a fio server's device): fio's figures, and
  the run says so once.

A step is **marked** when the boundary into it broke the PTS's no-delay rule (steprecord.boundary:
an idle over 10 ms, an overlap into a TC1/QD1 step): the drive was given time the test does not
give it. Its values enter the curve, the window and the headline figures only with the mark
(summary.json ``timing``, the part's warnings, the report and the datasheet).

Pure: reads step records, never fio or a device. The recomputation is the one a reader can redo
from the step record alone (its fio measurement and its ``device`` view).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Protocol

from ..measurement import DirectionStats, Measurement


class Boundary(Protocol):
    """What a mark reads of the boundary into a step (steprecord.Boundary)."""

    after: str
    kind: str
    over_limit: bool
    why: str | None


class StepRecord(Protocol):
    """What the timing over a part reads of a step (steprecord.StepRecord)."""

    phase: str
    round: int
    index: int
    key: str
    label: str
    rate_check: RateCheck | None
    mark: str | None

TOLERANCE_PCT = 1.0  # a step's rate as fio timed it may be off the device's by at most this
TOLERANCE_MS = 1.0  # ... and never judged finer than fio's run time, whole milliseconds


def _span_s(device: Mapping | None) -> float | None:
    dev = device or {}
    a, b = dev.get("first_issue_unix_s"), dev.get("last_complete_unix_s")
    if a is None or b is None or float(b) <= float(a):
        return None
    return float(b) - float(a)


def _runtime_s(m: Measurement) -> float:
    return max(float(m.read.runtime_s or 0.0), float(m.write.runtime_s or 0.0))


@dataclass(frozen=True, slots=True)
class RateCheck:
    """A step's rate check: ``state`` "fio" (its span and fio's run time agree), "device" (its rates
    recomputed over the block layer's span) or "unchecked" (``why``: what was missing)."""

    state: str
    runtime_s: float  # fio's run time of the step
    device_span_s: float | None = None  # the block layer's span of its IO
    differs_pct: float | None = None  # the span against the run time
    why: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "runtime_s": self.runtime_s, "device_span_s": self.device_span_s,
                "differs_pct": self.differs_pct, **({} if self.why is None else {"why": self.why})}


def check(m: Measurement, device: Mapping | None, beside: Mapping | None = None) -> RateCheck:
    """The rate check of a step (fio's measurement ``m``, the block layer's view ``device``, the job
    run ``beside`` it)."""
    runtime = _runtime_s(m)
    if beside:
        return RateCheck("unchecked", runtime, why="a job beside the step: the block layer's span is both jobs'")
    if not device:
        return RateCheck("unchecked", runtime, why="the block layer's view was not recorded")
    span = _span_s(device)
    if span is None or runtime <= 0:
        return RateCheck("unchecked", runtime, why="the block layer's trace saw only one end of the step"
                         if runtime > 0 else "no IO")
    diff_s = span - runtime
    within = abs(diff_s) <= max(TOLERANCE_PCT / 100.0 * runtime, TOLERANCE_MS / 1000.0)
    return RateCheck("fio" if within else "device", runtime, span, round(100.0 * diff_s / runtime, 3))


def _over(d: DirectionStats, span: float) -> DirectionStats:
    if not d.ios:
        return d
    return replace(d, iops=d.ios / span, bw_bytes_per_s=d.io_bytes / span)


def as_device_did(m: Measurement, device: Mapping | None, beside: Mapping | None = None) -> Measurement:
    """The step's measurement with its rates as the device did them: fio's own where the check
    finds them right (or cannot check), else its IO count and bytes over the block layer's span."""
    if check(m, device, beside).state != "device":
        return m
    span = _span_s(device)  # as the record has it
    assert span is not None
    return replace(m, read=_over(m.read, span), write=_over(m.write, span))


def of_result(m: Measurement, device: Mapping | None) -> tuple[Measurement, RateCheck]:
    """A step run outside the PTS's records (a quick run's figure): its measurement with the
    device's rates where the check finds fio's off, and the check."""
    return as_device_did(m, device), check(m, device)


def marked(b: Boundary | None) -> str | None:
    """Why the step after boundary ``b`` carries a mark (the boundary over the limits), or None."""
    if b is not None and b.over_limit and b.kind not in ("resume", "purge"):
        return f"after {b.after}: {b.why}"
    return None


def _label(rec: StepRecord) -> str:
    if rec.phase == "wipc":
        return "WIPC"
    return f"round {rec.round} step {rec.index}"


@dataclass(frozen=True, slots=True)
class TimedStep:
    """A step the part's timing names: recomputed from the device side (``check``), or marked (``why``)."""

    step: str  # "WIPC", "round R step I"
    label: str
    phase: str
    round: int
    index: int
    key: str
    check: RateCheck | None = None
    why: str | None = None

    @classmethod
    def of(cls, rec: StepRecord, *, check: RateCheck | None = None, why: str | None = None) -> "TimedStep":
        return cls(_label(rec), rec.label, rec.phase, rec.round, rec.index, rec.key, check, why)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"step": self.step, "label": self.label, "phase": self.phase, "round": self.round,
                             "index": self.index, "key": self.key}
        if self.check is not None:
            d |= {"runtime_s": self.check.runtime_s, "device_span_s": self.check.device_span_s,
                  "differs_pct": self.check.differs_pct}
        return d if self.why is None else d | {"why": self.why}


@dataclass(frozen=True, slots=True)
class PartTiming:
    """summary parts.<id>.timing: a part's steps checked, recomputed from the device side, marked and
    unchecked; ``window_*``: of those its figures come from (the window's, WSAT's samples)."""

    steps: int
    unchecked_why: tuple[str, ...]  # one per unchecked step
    worst_differs_pct: float | None
    window_steps: int
    window_recomputed: int
    window_marked: int
    window_unchecked: int
    recomputed_steps: tuple[TimedStep, ...]
    marked_steps: tuple[TimedStep, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tolerance_pct": TOLERANCE_PCT, "tolerance_ms": TOLERANCE_MS,
            "steps": self.steps, "checked": self.steps - len(self.unchecked_why),
            "recomputed": len(self.recomputed_steps), "marked": len(self.marked_steps),
            "unchecked": len(self.unchecked_why), "unchecked_why": sorted(set(self.unchecked_why)),
            "worst_differs_pct": self.worst_differs_pct,
            "window": {"steps": self.window_steps, "recomputed": self.window_recomputed, "marked": self.window_marked,
                       "unchecked": self.window_unchecked},
            "recomputed_steps": [x.to_dict() for x in self.recomputed_steps],
            "marked_steps": [x.to_dict() for x in self.marked_steps],
        }


def part_timing(records: Iterable[StepRecord], window: Iterable[StepRecord] | None = None) -> PartTiming:
    """Over a part's steps (and, apart, those its figures come from: the window's, WSAT's samples):
    how many were checked, recomputed from the device side, marked, unchecked, and which."""
    recs = list(records)
    win = list(window) if window is not None else [r for r in recs if r.phase == "round"]
    checks = [(r, r.rate_check) for r in recs if r.rate_check is not None]
    diffs = [abs(c.differs_pct) for _r, c in checks if c.differs_pct is not None]
    win_checks = [r.rate_check.state for r in win if r.rate_check is not None]
    return PartTiming(
        len(recs), tuple(str(c.why) for _r, c in checks if c.state == "unchecked"),
        round(max(diffs), 3) if diffs else None, len(win), sum(1 for s in win_checks if s == "device"),
        sum(1 for r in win if r.mark), sum(1 for s in win_checks if s == "unchecked"),
        tuple(TimedStep.of(r, check=c) for r, c in checks if c.state == "device"),
        tuple(TimedStep.of(r, why=r.mark) for r in recs if r.mark))


def warnings(t: PartTiming, noun: str = "window steps") -> list[str]:
    """The part's warnings from its timing: recomputed and marked steps among those its figures
    come from (``noun``: "window steps", "samples", "planned steps")."""
    out = []
    if t.window_recomputed:
        out.append(f"{t.window_recomputed} of the {t.window_steps} {noun} ran over a span at the block layer more "
                   f"than {TOLERANCE_PCT:g}% from fio's run time (at most {t.worst_differs_pct or 0:.1f}%): "
                   "their IOPS and bandwidth are fio's IO count over the device's span (docs/methodology.md "
                   "\"Rates as the device did them\")")
    if t.window_marked:
        out.append(f"{t.window_marked} of the {t.window_steps} {noun} are marked: the boundary into them was over the "
                   "PTS's no-delay limits (see Step boundaries); their values are in the figures as measured")
    return out


def flag(t: Mapping | None, uses: Callable[[Mapping], bool]) -> str:
    """A headline figure's mark where steps it comes from (``uses`` says which of the part's marked
    steps: the window's rounds and the figure's cell, WSAT's samples) were marked, else ""."""
    n = sum(1 for m in (t or {}).get("marked_steps") or () if m.get("phase") == "round" and uses(m))
    if not n:
        return ""
    return (f"marked: {n} of the steps it comes from followed a boundary over the PTS's no-delay limits "
            "(see Step boundaries)")


@dataclass(frozen=True, slots=True)
class RunTiming:
    """summary timing: over every part, steps recomputed, marked and unchecked, and why steps were unchecked."""

    steps: int
    recomputed: int
    marked: int
    unchecked: int
    unchecked_why: tuple[str, ...]  # sorted, each once
    worst_differs_pct: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "recomputed": self.recomputed, "marked": self.marked, "unchecked": self.unchecked,
                "unchecked_why": list(self.unchecked_why), "worst_differs_pct": self.worst_differs_pct,
                "tolerance_pct": TOLERANCE_PCT, "tolerance_ms": TOLERANCE_MS}


def run_timing(parts: Iterable[Mapping | None]) -> RunTiming:
    """Over every part (each part's timing as summary.json holds it, part_timing's or an older
    ssdpts's): steps recomputed, marked and unchecked, and why steps were unchecked."""
    ps = [p for p in parts if p]
    return RunTiming(sum(p["steps"] for p in ps), sum(p["recomputed"] for p in ps), sum(p["marked"] for p in ps),
                     sum(p["unchecked"] for p in ps),
                     tuple(sorted({w for p in ps for w in p.get("unchecked_why") or ()})),
                     max((p["worst_differs_pct"] for p in ps if p.get("worst_differs_pct") is not None), default=None))
