"""IOPS test (PTS 2.0.2 §7 / PTS.md §3): outer loop R/W mix, inner loop block size, RND, 1 min each."""

from __future__ import annotations

from .parts import Part, Tracking, cell_steps, wipc_step
from .runspec import RunSpec
from .units import KiB
from .workload import Workload

MIXES = (100, 95, 65, 50, 35, 5, 0)  # read percent, outer loop
BLOCK_SIZES = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512)  # inner loop


def workloads(tc: int, qd: int, min_block_size: int = 512) -> list[Workload]:
    return [Workload("rand", mix, bs, tc, qd) for mix in MIXES for bs in BLOCK_SIZES if bs >= min_block_size]


def tracking(pts_version: str, tc: int, qd: int) -> tuple[Tracking, ...]:
    """2.0.x tracks three variables that must all pass in one window; PTS-E 1.1 tracked RND 4KiB W only."""
    cells = [(4 * KiB, 0)]
    if pts_version != "1.1":
        cells += [(64 * KiB, 65), (1024 * KiB, 100)]
    out = []
    for bs, mix in cells:
        w = Workload("rand", mix, bs, tc, qd)
        out.append(Tracking(name=f"{w.label} IOPS", key=w.key, metric="iops", unit="IOPS"))
    return tuple(out)


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    tc, qd = spec.tc, spec.qd
    wl = workloads(tc, qd, logical_block_size)
    return [
        Part(
            test="iops", part="", title="IOPS",
            purge=True,
            wipc=wipc_step("iops", "", spec, ar_bytes, 128 * KiB),
            tracking=tracking(spec.pts_version, tc, qd),
            max_rounds=spec.max_rounds,
            stop_rule="steady-state",
            round_builder=lambda r: cell_steps("iops", "", r, wl, spec.step_seconds),
        )
    ]
