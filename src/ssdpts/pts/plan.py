"""Planning a run (docs/pts-reference.md#tests): the parts of the requested tests for a target of a given capacity
and logical block size, the active range, and what the target forces to deviate from the PTS.

Pure: no files, no subprocesses.
"""

from __future__ import annotations

from ..errors import UserError
from . import segments
from .parts import Part
from .registry import TESTS
from .runspec import RunSpec
from .steady_state import WINDOW_ROUNDS
from .units import MiB, fmt_capacity


def active_range_bytes(capacity_bytes: int, pct: float) -> int:
    """The active range, aligned down to 1 MiB so that every PTS block size (<= 1024KiB) divides it."""
    return int(capacity_bytes * pct / 100.0) // MiB * MiB


def segments_of(spec: RunSpec, ar_bytes: int) -> tuple[tuple[int, int], ...]:
    """The client test active range's segments (pts/segments.py), () when not segmented."""
    if not spec.ar_segments:
        return ()
    if spec.ar_amount_bytes > ar_bytes:
        raise UserError(f"--ar-amount {fmt_capacity(spec.ar_amount_bytes)} is larger than the active range "
                        f"({fmt_capacity(ar_bytes)}): give a smaller amount or a larger target")
    try:
        return segments.place(ar_bytes, spec.ar_amount_bytes, spec.ar_segments, spec.seed)
    except ValueError as exc:
        raise UserError(f"--ar-segments: {exc}: give fewer segments or a larger target") from None


def build_parts(spec: RunSpec, capacity_bytes: int, logical_block_size: int = 512) -> list[Part]:
    """Every part of the requested tests. Steps whose block size is below the target's logical
    block size (0.5KiB on a 4Kn device) cannot be issued and are left out (see deviations_for)."""
    ar = active_range_bytes(capacity_bytes, spec.ar_pct)
    segments_of(spec, ar)  # refuse segments that do not fit before anything runs
    parts: list[Part] = []
    for t in spec.tests:
        parts.extend(TESTS[t].parts(spec, capacity_bytes, ar, logical_block_size))
    if spec.precondition == "sprandom" and not any(p.wipc is not None and p.wipc.sprandom for p in parts):
        raise UserError("--precondition sprandom: these tests have no preconditioning for it to replace (WSAT and "
                        "XSR start from the purge; TP keeps its WIPC): drop it, or add a test with one "
                        "(docs/methodology.md#preconditioning-by-sprandom)")
    needed = required_bytes(parts)
    if ar < needed:
        raise UserError(
            f"target too small: the active range is {ar / MiB:.0f} MiB but these tests need at least "
            f"{needed / MiB:.0f} MiB (largest block x threads x queue depth): pick a larger target or lower --iodepth/--threads"
        )
    return parts


def part_seconds(part: Part, spec: RunSpec) -> tuple[float, float]:
    """(shortest, longest) stimulus time of a part: 5 to max_rounds rounds until steady state, the
    whole of a fixed plan, or WSAT's: one step (it ends as soon as its bytes are written) to its time
    limit ('ssdpts plan', and the time left in 'ssdpts status')."""
    if part.stop_rule == "wsat":
        return float(spec.step_seconds), part.wsat_max_steps * spec.step_seconds
    if part.stop_rule == "fixed":
        total = sum(s.planned_s for r in range(1, part.max_rounds + 1) for s in part.round_steps(r))
        return total, total
    round_s = sum(s.planned_s for s in part.round_steps(1))
    return WINDOW_ROUNDS * round_s, part.max_rounds * round_s


MIN_ACTIVE_RANGE_BYTES = 64 * MiB


def deviations_for(spec: RunSpec, logical_block_size: int) -> list[str]:
    """The run's deviations from the PTS, including those the target forces."""
    out = spec.deviations()
    if logical_block_size > 512 and ({"iops", "lat"} & set(spec.tests)):
        out.append(f"block sizes below the device's {logical_block_size}-byte logical block size "
                   f"(0.5KiB) cannot be issued and were left out")
    if logical_block_size > 512 and ("cbw" in spec.tests or ("wsat" in spec.tests and spec.wsat_pattern == "cbw")):
        from .cbw import BSSPLIT

        small = sum(p for b, p in BSSPLIT if b < logical_block_size)
        out.append(f"CBW: its block sizes below the device's {logical_block_size}-byte logical block size ({small}% "
                   f"of IOs) are issued at {logical_block_size} bytes")
    if spec.ar_segments:
        n = segments.segment_count(spec.ar_segments)
        out.append(f"test active range in {n} random, non-adjacent segments" + (
            f" instead of {spec.ar_segments} (fio's zoned_abs holds at most 100 equal ones)"
            if n != spec.ar_segments else "") + "; WIPC and SEQ steps cover the whole active range")
    if logical_block_size > 512 and "wsat" in spec.tests and spec.wsat_pattern == "seq0.5k-50":
        out.append(f"WSAT SEQ 0.5KiB 50/50 is issued at the device's {logical_block_size}-byte logical block size")
    return out


def required_bytes(parts: list[Part]) -> int:
    """Smallest active range that lets every thread keep its queue full of distinct blocks."""
    need = MIN_ACTIVE_RANGE_BYTES
    for p in parts:
        for s in p.round_steps(1):
            w = s.workload
            need = max(need, w.block_size_bytes * w.threads * w.iodepth)
    return need


def preconditioning_both(spec: RunSpec, capacity_bytes: int, logical_block_size: int = 512,
                         spr_op: float | None = None) -> dict[str, dict[str, int | None]]:
    """Each part's preconditioning both ways, in bytes written ('ssdpts plan', docs/methodology.md#time-to-result):
    ``pts`` the PTS's WIPC (None: the part has none, its rounds precondition it), ``sprandom`` the fill
    at OP ``spr_op`` (the spec's own when it has one; None: no OP known, or no fill in the part).
    Parts without either are left out."""
    op = spec.spr_op if spec.spr_op is not None else spr_op
    pts = {p.id: p for p in build_parts(spec.with_(precondition="pts", spr_op=None, spr_op_source=""),
                                        capacity_bytes, logical_block_size)}
    spr: dict[str, Part] = {}
    if op is not None:
        try:
            spr = {p.id: p for p in build_parts(spec.with_(precondition="sprandom", spr_op=op,
                                                           spr_op_source=spec.spr_op_source or "given"),
                                                capacity_bytes, logical_block_size)}
        except UserError:  # no part has a preconditioning for it to replace
            spr = {}
    out: dict[str, dict[str, int | None]] = {}
    for pid, p in pts.items():
        s = spr.get(pid)
        a = p.wipc.io_bytes if p.wipc is not None else None
        b = s.wipc.io_bytes if s is not None and s.wipc is not None and s.wipc.sprandom else None
        if a is not None or b is not None:
            out[pid] = {"pts": a, "sprandom": b}
    return out
