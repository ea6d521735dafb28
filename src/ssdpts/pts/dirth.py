"""Demand Intensity / Response Time Histogram (docs/pts-reference.md#dirth; source AD): the
demand-intensity flow of demand.py with one access pattern the operator chooses: RND, block size
0.5-64 KiB (default 8 KiB) and R/W mix (default 65/35) -- both defaults [?] for PTS-E 1.1's fixed
choice, so options (--dirth-block-size, --dirth-read-pct), disclosed in the report.
"""

from __future__ import annotations

from ..errors import UserError
from . import demand
from .parts import Part
from .runspec import RunSpec
from .workload import Workload

PAGES = "demand"  # report/pages/demand.py (CBW's and DIRTH's pages)
OPTIONS = {**demand.OPTIONS, "dirth_block_size": 8192, "dirth_read_pct": 65}  # with their values in a run recorded without them

NAME = "dirth"
TITLE = "Demand Intensity / Response Time Histogram"
ORDER = 80  # its place in the run order (pts/catalog.py)


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    if spec.dirth_block_size < logical_block_size or spec.dirth_block_size % logical_block_size:
        raise UserError(f"--dirth-block-size {spec.dirth_block_size} cannot be issued on this device's "
                        f"{logical_block_size}-byte logical blocks: give a multiple of {logical_block_size}")
    access = Workload("rand", spec.dirth_read_pct, spec.dirth_block_size, 32, 32)
    return demand.parts(NAME, "DIRTH", spec, ar_bytes, access)


build_table = demand.build_table
TABLES = (demand.DemandTable, demand.PointsTable)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = demand.COMPARED
HEADLINES = demand.headlines(None)  # the mix is the operator's
cell_label = demand.cell_label
