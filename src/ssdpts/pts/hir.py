"""Host Idle Recovery (docs/pts-reference.md#hir; sources CH and AD): how a drive in write steady state
recovers when the host leaves it idle.

1. Purge; no WIPC (with --precondition sprandom: the sprandom fill, docs/methodology.md#preconditioning-by-sprandom).
   Preconditioning: RND 4KiB 0/100 at the chosen TC/QD in rounds of 30 x 1 min,
   tracking the IOPS of each round's last minute, to steady state (docs/pts-reference.md#steady-state).
2. Wait states 1, 2, 3, 5, 10: each is 360 x (5 s RND 4KiB W, then 5, 10, 15, 25 or 50 s with no
   IO at all), followed by a return to baseline: 1,800 s of continuous RND 4KiB W as 360 x 5 s
   samples back to back.

Every burst and every baseline sample is a step of its own (its IOPS from its fio json+); the idle
is the burst step's ``idle_after_s``, which the executor honours with every thread idle at once
(one job section per burst: the faithful form of the digest). Time compression scales the 1-min
preconditioning steps, the 5-s bursts and samples and the idle periods alike (docs/pts-reference.md#hir).
Rounds of the wait-state part hold at most MAX_CLONES_PER_ROUND clones and never mix a wait state
with a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .parts import Part, Tracking, chunks, minute_cell, minutes_round, per_round, random_fill, scaled
from .runspec import HIR_BURSTS, RunSpec
from .tables import Cell, WindowCells, average, level_table, num
from .units import KiB
from .workload import Step, Workload

NAME = "hir"
TITLE = "Host Idle Recovery"
ORDER = 50  # its place in the run order (pts/catalog.py)
USES_TC_QD = True  # its stimulus runs at the run's TC and QD (--threads, --iodepth, or the profile's)

PRECONDITION_MINUTES = 30
TRACKED_MINUTE = 30  # the tracking variable is the IOPS of each round's last minute [V CH, AD]
WAIT_STATES = ((1, 5.0), (2, 10.0), (3, 15.0), (5, 25.0), (10, 50.0))  # (wait state, idle s)
BURST_S = 5.0
BASELINE_SAMPLE_S = 5.0  # 360 x 5 s = 1,800 s of continuous writes
# The options a report reads (docs/extended-tests.md), each with its value in a run recorded without it.
OPTIONS = {"hir_bursts": HIR_BURSTS}


def workload(spec: RunSpec) -> Workload:
    return Workload("rand", 0, 4 * KiB, spec.tc, spec.qd)


def wait_cell(n: int) -> str:
    return f"ws{n}"


def baseline_cell(n: int) -> str:
    return f"bl{n}"


def wait_sequence(spec: RunSpec) -> list[Step]:
    """Every step after preconditioning, in order: per wait state its bursts (each followed by its
    idle), then the return to baseline. Indexes count steps from the first burst."""
    w = workload(spec)
    out: list[Step] = []
    for ws, idle in WAIT_STATES:
        for cell, label, dur, idle_s in (
                (wait_cell(ws), f"wait state {ws}: 5 s writes + {idle:g} s idle", BURST_S, idle),
                (baseline_cell(ws), f"return to baseline after wait state {ws}", BASELINE_SAMPLE_S, 0.0)):
            for _ in range(spec.hir_bursts):
                out.append(Step(test=NAME, part="wait-states", phase="round", round=0, index=len(out) + 1, workload=w,
                                duration_s=scaled(dur, spec), idle_after_s=scaled(idle_s, spec), cell=cell,
                                cell_label=label))
    return out


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    w = workload(spec)
    tracked = Tracking(name=f"{w.label} IOPS, minute {TRACKED_MINUTE} of the round", key=minute_cell(TRACKED_MINUTE),
                       metric="iops", unit="IOPS")
    rounds = chunks(wait_sequence(spec), per_round(w.threads, 2 * spec.hir_bursts))
    return [
        Part(test=NAME, part="precondition", title="HIR: preconditioning", purge=True,
             wipc=random_fill(NAME, "precondition", spec, ar_bytes), tracking=(tracked,),
             max_rounds=spec.max_rounds, stop_rule="steady-state",
             round_builder=lambda r: minutes_round(NAME, "precondition", r, w, PRECONDITION_MINUTES, TRACKED_MINUTE,
                                                   spec.step_seconds)),
        Part(test=NAME, part="wait-states", title="HIR: wait states and returns to baseline", purge=False, wipc=None,
             tracking=(), max_rounds=len(rounds), stop_rule="fixed", round_builder=lambda r: rounds[r - 1]),
    ]


# ---- the table: per wait state the mean IOPS of its bursts, and of the baseline after it ---------------

@dataclass(frozen=True, slots=True)
class HirSegment:
    cell: str  # "ws1" (bursts of wait state 1) or "bl1" (the return to baseline after it)
    wait_state: int  # 1, 2, 3, 5, 10
    idle_s: float  # the PTS idle after each burst (0 for a baseline), before time compression
    samples: int  # bursts / 5-s samples measured
    iops: float | None  # their mean IOPS
    first_iops: float | None  # of the first sample
    last_iops: float | None  # of the last sample

    @property
    def is_wait(self) -> bool:
        return self.cell.startswith("ws")

    def to_dict(self) -> dict[str, Any]:
        return {"cell": self.cell, "wait_state": self.wait_state, "idle_s": self.idle_s, "samples": self.samples,
                "iops": self.iops, "first_iops": self.first_iops, "last_iops": self.last_iops}


@dataclass(frozen=True, slots=True)
class HirTable:
    segments: tuple[HirSegment, ...]
    unit: str = "IOPS"
    kind: ClassVar[str] = "hir"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "segments": [s.to_dict() for s in self.segments]}

    @classmethod
    def from_dict(cls, d: dict) -> "HirTable":
        return cls(tuple(HirSegment(str(s["cell"]), int(s["wait_state"]), float(s.get("idle_s") or 0.0),
                                    int(s.get("samples") or 0), num(s.get("iops")), num(s.get("first_iops")),
                                    num(s.get("last_iops"))) for s in d.get("segments") or ()), d.get("unit", "IOPS"))

    def cells(self) -> list[Cell]:
        return [Cell("burst_iops" if s.is_wait else "baseline_iops", 4096, "0/100", s.iops, s.cell.upper())
                for s in self.segments]


def build_table(steps: list[Step], cells: WindowCells) -> Any:
    """The preconditioning part's steady level, or the wait-state part's segments."""
    if steps and steps[0].part == "precondition":
        w = steps[0].workload
        return level_table([Tracking(f"{w.label} IOPS, minute {TRACKED_MINUTE} of the round",
                                     minute_cell(TRACKED_MINUTE), "iops", "IOPS")], steps, cells)
    segs = []
    for ws, idle in WAIT_STATES:
        for cell, idle_s in ((wait_cell(ws), idle), (baseline_cell(ws), 0.0)):
            if not any(s.key == cell for s in steps):
                continue
            vals = [m.iops for m in cells.get(cell, [])]
            segs.append(HirSegment(cell, ws, idle_s, len(vals), average(vals), vals[0] if vals else None,
                                   vals[-1] if vals else None))
    return HirTable(tuple(segs))


TABLES = (HirTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = ("iops", "burst_iops", "baseline_iops")
HEADLINES = (("iops", 4096, "0/100", "precondition"), ("burst_iops", 4096, "0/100", "WS1"),
             ("burst_iops", 4096, "0/100", "WS10"), ("baseline_iops", 4096, "0/100", "BL10"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    if point == "precondition":
        return "steady state (preconditioning)"
    if point and point.startswith("WS"):
        ws = int(point[2:])
        return f"wait state {ws} ({dict(WAIT_STATES)[ws]:g} s idle) bursts"
    if point and point.startswith("BL"):
        return f"baseline after wait state {point[2:]}"
    return str(point or mix)


