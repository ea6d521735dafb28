"""Composite Block size Workload (docs/pts-reference.md#cbw; ECW in PTS-E 1.1; source AD, and the same
mix in JEDEC JESD219): the demand-intensity flow of demand.py with a composite access pattern.

Access: RND, R/W 40/60, block sizes by share of IOs (sum 100)
    0.5KiB 4%, 1KiB 1%, 1.5KiB 1%, 2KiB 1%, 2.5KiB 1%, 3KiB 1%, 3.5KiB 1%, 4KiB 67%, 8KiB 10%,
    16KiB 7%, 32KiB 3%, 64KiB 3%
and hot bands over the active range: 50% of IOs to its first 5%, 30% to the next 15%, 20% to the
last 80% (fio: bssplit and random_distribution=zoned).

On a device whose logical block is larger than 512 bytes the sizes below it cannot be issued; their
share goes to the logical block size and the run discloses it (plan.deviations_for).
"""

from __future__ import annotations

from . import demand
from .parts import Part
from .runspec import RunSpec
from .units import KiB
from .workload import Split, Workload

NAME = "cbw"
TITLE = "Composite Block size Workload"
ORDER = 70  # its place in the run order (pts/catalog.py)

READ_PCT = 40
OPTIONS = demand.OPTIONS
PAGES = "demand"  # report/pages/demand.py (CBW's and DIRTH's pages)
BSSPLIT: Split = ((512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1), (4 * KiB, 67),
                  (8 * KiB, 10), (16 * KiB, 7), (32 * KiB, 3), (64 * KiB, 3))
ZONES: Split = ((50, 5), (30, 15), (20, 80))


def split_for(logical_block_size: int) -> Split:
    """BSSPLIT with the sizes below the logical block size merged into it."""
    small = sum(p for b, p in BSSPLIT if b < logical_block_size)
    out = [(b, p) for b, p in BSSPLIT if b >= logical_block_size]
    if small:
        if out and out[0][0] == logical_block_size:
            out[0] = (logical_block_size, out[0][1] + small)
        else:
            out.insert(0, (logical_block_size, small))
    return tuple(out)


def workload(threads: int = 32, iodepth: int = 32, read_pct: int = READ_PCT, logical_block_size: int = 512) -> Workload:
    split = split_for(logical_block_size)
    return Workload("rand", read_pct, max(b for b, _ in split), threads, iodepth, bssplit=split, zones=ZONES,
                    name="CBW")


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    return demand.parts(NAME, "CBW", spec, ar_bytes, workload(logical_block_size=logical_block_size))


build_table = demand.build_table
TABLES = (demand.DemandTable, demand.PointsTable)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = demand.COMPARED
HEADLINES = demand.headlines("40/60")
cell_label = demand.cell_label
