"""The PTS tests as data (PTS.md §3): each test is one or more *parts*; a part is
purge -> optional WIPC -> rounds of steps until its stop rule holds. The test modules (iops.py,
tp.py, lat.py, wsat.py) build their parts from these pieces; plan.py plans a run's parts.

Everything here is pure: no files, no subprocesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .runspec import RunSpec
from .workload import Step, Workload


@dataclass(frozen=True, slots=True)
class Tracking:
    """A tracking variable: which cell of a round, which metric, in which unit."""

    name: str  # e.g. "RND 4KiB 0/100 IOPS"
    key: str  # Workload.key of the tracked cell
    metric: str  # "iops" | "write_mb_per_s" | "lat_mean_us"
    unit: str


@dataclass(frozen=True, slots=True)
class Part:
    """One independently preconditioned unit of a test (TP has one per block size)."""

    test: str
    part: str  # "" for single-part tests, e.g. "1024KiB" for TP
    title: str
    purge: bool
    wipc: Step | None
    tracking: tuple[Tracking, ...]
    max_rounds: int
    stop_rule: str  # "steady-state" | "wsat"
    round_builder: Callable[[int], list[Step]]
    # WSAT only: bounds on the total number of one-step samples and on bytes written.
    wsat_max_steps: int = 0
    wsat_max_bytes: int = 0

    @property
    def id(self) -> str:
        return f"{self.test}-{self.part}" if self.part else self.test

    def round_steps(self, round_no: int) -> list[Step]:
        return self.round_builder(round_no)


def wipc_step(test: str, part: str, spec: RunSpec, ar_bytes: int, block_size_bytes: int) -> Step:
    """WIPC: 2 x user capacity of SEQ writes over the active range (PTS.md §1), TC1/QD32 so that
    the stream stays sequential."""
    return Step(
        test=test, part=part, phase="wipc", round=0, index=1,
        workload=Workload("seq", 0, block_size_bytes, 1, 32),
        duration_s=None, io_bytes=int(ar_bytes * spec.wipc_capacity_multiple),
    )


def cell_steps(test: str, part: str, round_no: int, workloads: list[Workload], step_s: float) -> list[Step]:
    return [
        Step(test=test, part=part, phase="round", round=round_no, index=i, workload=w, duration_s=step_s)
        for i, w in enumerate(workloads, start=1)
    ]


__all__ = ["Part", "Tracking", "wipc_step", "cell_steps"]
