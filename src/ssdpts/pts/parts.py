"""The PTS tests as data (PTS.md §3): each test is one or more *parts*; a part is
purge -> optional WIPC -> rounds of steps until its stop rule holds.

Everything here is pure: no files, no subprocesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import UserError
from .runspec import RunSpec
from .units import MiB, fmt_block_size
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


def active_range_bytes(capacity_bytes: int, pct: float) -> int:
    """The active range, aligned down to 1 MiB so that every PTS block size (<= 1024KiB) divides it."""
    return int(capacity_bytes * pct / 100.0) // MiB * MiB


def build_parts(spec: RunSpec, capacity_bytes: int, logical_block_size: int = 512) -> list[Part]:
    """Every part of the requested tests. Steps whose block size is below the target's logical
    block size (0.5KiB on a 4Kn device) cannot be issued and are left out (see deviations_for)."""
    from .registry import TESTS  # noqa: PLC0415  (the test modules import this one)

    ar = active_range_bytes(capacity_bytes, spec.ar_pct)
    parts: list[Part] = []
    for t in spec.tests:
        parts.extend(TESTS[t].parts(spec, capacity_bytes, ar, logical_block_size))
    needed = required_bytes(parts)
    if ar < needed:
        raise UserError(
            f"target too small: the active range is {ar / MiB:.0f} MiB but these tests need at least "
            f"{needed / MiB:.0f} MiB (largest block x threads x queue depth): pick a larger target or lower --iodepth/--threads"
        )
    return parts


MIN_ACTIVE_RANGE_BYTES = 64 * MiB


def deviations_for(spec: RunSpec, logical_block_size: int) -> list[str]:
    """The run's deviations from the PTS, including those the target forces."""
    out = spec.deviations()
    if logical_block_size > 512 and ({"iops", "lat"} & set(spec.tests)):
        out.append(f"block sizes below the device's {logical_block_size}-byte logical block size "
                   f"(0.5KiB) cannot be issued and were left out")
    return out


def required_bytes(parts: list[Part]) -> int:
    """Smallest active range that lets every thread keep its queue full of distinct blocks."""
    need = MIN_ACTIVE_RANGE_BYTES
    for p in parts:
        for s in p.round_steps(1):
            w = s.workload
            need = max(need, w.block_size_bytes * w.threads * w.iodepth)
    return need


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


__all__ = ["Part", "Tracking", "build_parts", "deviations_for", "active_range_bytes", "fmt_block_size", "wipc_step", "cell_steps"]
