"""Planning a run (PTS.md §3): the parts of the requested tests for a target of a given capacity
and logical block size, the active range, and what the target forces to deviate from the PTS.

Pure: no files, no subprocesses.
"""

from __future__ import annotations

from ..errors import UserError
from .parts import Part
from .registry import TESTS
from .runspec import RunSpec
from .units import MiB


def active_range_bytes(capacity_bytes: int, pct: float) -> int:
    """The active range, aligned down to 1 MiB so that every PTS block size (<= 1024KiB) divides it."""
    return int(capacity_bytes * pct / 100.0) // MiB * MiB


def build_parts(spec: RunSpec, capacity_bytes: int, logical_block_size: int = 512) -> list[Part]:
    """Every part of the requested tests. Steps whose block size is below the target's logical
    block size (0.5KiB on a 4Kn device) cannot be issued and are left out (see deviations_for)."""
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
