"""Latency test (PTS.md §3): TC1/QD1; outer mix 100/0, 65/35, 0/100; inner block size 8, 4, 0.5 KiB.
Tracking: mean response time of RND 4KiB 0/100."""

from __future__ import annotations

from .parts import Part, Tracking, cell_steps, wipc_step
from .runspec import RunSpec
from .units import KiB
from .workload import Workload

MIXES = (100, 65, 0)
BLOCK_SIZES = (8 * KiB, 4 * KiB, 512)


def workloads(min_block_size: int = 512) -> list[Workload]:
    # Demand intensity is fixed at TC1/QD1 by the specification, whatever --threads/--iodepth say.
    return [Workload("rand", mix, bs, 1, 1) for mix in MIXES for bs in BLOCK_SIZES if bs >= min_block_size]


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    wl = workloads(logical_block_size)
    tracked = Workload("rand", 0, 4 * KiB, 1, 1)
    return [
        Part(
            test="lat", part="", title="Latency",
            purge=True,
            wipc=wipc_step("lat", "", spec, ar_bytes, 128 * KiB),
            tracking=(Tracking(name=f"{tracked.label} mean response time", key=tracked.key,
                               metric="lat_mean_us", unit="µs"),),
            max_rounds=spec.max_rounds,
            stop_rule="steady-state",
            round_builder=lambda r: cell_steps("lat", "", r, wl, spec.step_seconds),
        )
    ]
