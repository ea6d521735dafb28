"""ocp-idle-gc: read latency while the drive may collect garbage in idle time (OCP Datacenter NVMe
SSD spec 2.7 TRIM-7, docs/ocp.md; what the two OCP tests share is pts/ocp.py).

Purge; no WIPC; preconditioning to steady state as HIR's (RND 4KiB 0/100 at the run's TC × QD,
rounds of 30 PTS minutes, tracking the last minute's IOPS, PTS.md §2). Then one round, back to
back through the step gate: a short read and ``--ocp-settle-s`` with no IO (the drive may finish
its idle GC), the baseline (QD 1 4 KiB random reads over the first half of the active range,
``--ocp-read-s``), a random-write burst (RND 4KiB 0/100 at the run's TC × QD over the whole active
range, ``--ocp-burst-s``), and right after it the same reads: the drive sees only light reads then,
which most drives treat as idle time to collect the blocks the burst left invalid.
"""

from __future__ import annotations

from typing import Any

from . import ocp
from .parts import Part, Tracking, minute_cell, minutes_round, scaled
from .runspec import RunSpec
from .tables import WindowCells, level_table
from .units import KiB
from .workload import Step, Workload

NAME, TITLE = "ocp-idle-gc", "OCP: read latency during idle garbage collection (TRIM-7)"
PRECONDITION_MINUTES = 30  # as HIR [V CH, AD]
TRACKED_MINUTE = 30
COMPARED, HEADLINES, cell_label = ocp.COMPARED, ocp.HEADLINES, ocp.cell_label


def writes(spec: RunSpec) -> Workload:
    return Workload("rand", 0, 4 * KiB, spec.tc, spec.qd)


def sequence(spec: RunSpec) -> list[Step]:
    burst = Step(test=NAME, part="measure", phase="round", round=1, index=3, workload=writes(spec),
                 duration_s=scaled(spec.ocp_burst_s, spec), cell="burst",
                 cell_label=f"write burst: {writes(spec).label} at TC {spec.tc} × QD {spec.qd}")
    return [ocp.settle_step(NAME, "measure", spec, 1),
            ocp.read_step(NAME, "measure", spec, 2, "baseline", "baseline: QD1 4KiB random reads alone"),
            burst,
            ocp.read_step(NAME, "measure", spec, 4, "after-burst", "the same reads right after the write burst")]


def _tracking(w: Workload) -> Tracking:
    return Tracking(name=f"{w.label} IOPS, minute {TRACKED_MINUTE} of the round", key=minute_cell(TRACKED_MINUTE),
                    metric="iops", unit="IOPS")


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    w = writes(spec)
    steps = sequence(spec)
    return [
        Part(test=NAME, part="precondition", title="OCP idle GC: preconditioning", purge=True, wipc=None,
             tracking=(_tracking(w),), max_rounds=spec.max_rounds, stop_rule="steady-state",
             round_builder=lambda r: minutes_round(NAME, "precondition", r, w, PRECONDITION_MINUTES, TRACKED_MINUTE,
                                                   spec.step_seconds)),
        Part(test=NAME, part="measure", title=TITLE, purge=False, wipc=None, tracking=(), max_rounds=1,
             stop_rule="fixed", round_builder=lambda r: steps, table_args={"limit_pct": spec.ocp_limit_pct, "judged": spec.ocp_judge}),
    ]


def build_table(steps: list[Step], cells: WindowCells, limit_pct: float = 5.0,
                judged: tuple[str, ...] = ocp.JUDGED) -> Any:
    """The preconditioning part's steady level, or the measurement's phases."""
    if steps and steps[0].part == "precondition":
        return level_table([_tracking(steps[0].workload)], steps, cells)
    return ocp.build(NAME, steps, cells, "after-burst", limit_pct, judged)
