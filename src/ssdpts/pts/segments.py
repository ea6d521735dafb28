"""Client test active range segmentation (PTS-C; docs/pts-reference.md#segmentation, #client):
the test active range amount (PTS-C 1.x: 8 or 16 GiB) spread over 2048 equal segments placed at
random, none adjacent [? -- the SNIA PTS user guide names 2048 segments; their sizes are not confirmed].

fio has no segment option. Of the two ways the digest names, ssdpts takes a generated
``random_distribution=zoned_abs`` and not an iolog: an iolog is one fixed sequence of offsets for
every clone of a job (numjobs clones would repeat each other's IOs) and would have to hold every
IO of a step (millions a minute). zoned_abs draws offsets at random inside zones, but it holds at
most 256 zones (fio's ZONESPLIT_MAX) whose shares of IOs are whole percentages summing to 100; equal
segments therefore number a divisor of 100, at most 100 (1% of IOs each), each followed by a 0% gap
zone: 2 x 100 + 1 <= 256. ssdpts places that many segments (the largest divisor of 100 not above
the number asked for), each holding an equal part of the amount, at seeded random positions with
at least one alignment unit of gap between neighbours, and discloses the difference. Only random
steps of the test loops are segmented: preconditioning (WIPC) and sequential steps cover the
whole active range.
"""

from __future__ import annotations

import random

from .units import MiB, fmt_capacity

PTS_SEGMENTS = 2048
FIO_ZONES_MAX = 256  # fio's ZONESPLIT_MAX
ALIGN = MiB  # every PTS block size (<= 1024KiB) divides a segment and a gap


def segment_count(requested: int) -> int:
    """Equal segments fio's zoned_abs can hold: the largest divisor of 100 not above ``requested``."""
    return max(d for d in (1, 2, 4, 5, 10, 20, 25, 50, 100) if d <= max(1, requested))


def place(ar_bytes: int, amount_bytes: int, requested: int, seed: int) -> tuple[tuple[int, int], ...]:
    """(offset, size) of each segment inside the active range, in LBA order: equal sizes aligned to
    1 MiB holding ``amount_bytes`` (the whole range when 0), random gaps of at least 1 MiB between
    neighbours, reproducible from the run's seed."""
    n = segment_count(requested)
    amount = amount_bytes or ar_bytes
    size = amount // n // ALIGN * ALIGN
    free = (ar_bytes // ALIGN) - n * (size // ALIGN) - (n - 1)  # 1-MiB units left after the minimum gaps
    if size <= 0 or free < 0:
        raise ValueError(f"{n} segments of {amount / n / MiB:.1f} MiB with gaps do not fit an active range of "
                         f"{ar_bytes / MiB:.0f} MiB")
    rng = random.Random(seed)
    cuts = sorted(rng.randint(0, free) for _ in range(n))  # n + 1 gaps sharing the free units
    gaps = [b - a for a, b in zip([0, *cuts], [*cuts, free])]
    out, pos = [], 0
    for i in range(n):
        pos += (gaps[i] + (1 if i else 0)) * ALIGN
        out.append((pos, size))
        pos += size
    return tuple(out)


def disclosure(requested: int, segments: tuple[tuple[int, int], ...]) -> str:
    n = len(segments)
    size = segments[0][1] if segments else 0
    return (f"test active range: {n} random, non-adjacent segments of {size / MiB:,.0f} MiB "
            f"({fmt_capacity(n * size)})" + (f" instead of {requested}: fio's zoned_abs holds at most 100 equal ones"
                                               if n != requested else "")
            + "; random test steps only (WIPC and SEQ steps cover the whole active range)")
