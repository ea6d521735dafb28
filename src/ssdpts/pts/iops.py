"""IOPS test (PTS 2.0.2 §7, docs/pts-reference.md#iops): outer loop R/W mix, inner loop block size, RND, 1 min each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .parts import Part, Tracking, cell_steps, wipc_step
from .runspec import RunSpec
from .tables import Cell, TextTable, WindowCells, average, fmt_number, num
from .units import KiB, fmt_block_size
from .workload import Step, Workload

NAME = "iops"
TITLE = "IOPS"
ORDER = 20  # its place in the run order (pts/catalog.py)
USES_TC_QD = True  # its stimulus runs at the run's TC and QD (--threads, --iodepth, or the profile's)

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


# ---- the table: average IOPS by block size (rows) and R/W mix (columns) ------------------------------

@dataclass(frozen=True, slots=True)
class IopsRow:
    block_size_bytes: int
    values: dict[str, float | None] = field(default_factory=dict)  # R/W mix -> IOPS, in PTS order


@dataclass(frozen=True, slots=True)
class IopsTable:
    mixes: tuple[str, ...]
    rows: tuple[IopsRow, ...]
    unit: str = "IOPS"
    kind: ClassVar[str] = "iops-matrix"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "mixes": list(self.mixes),
                "rows": [{"block_size_bytes": r.block_size_bytes, "values": dict(r.values)} for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict) -> "IopsTable":
        rows = tuple(IopsRow(int(r["block_size_bytes"]), {str(m): num(v) for m, v in (r.get("values") or {}).items()})
                     for r in d.get("rows") or [])
        return cls(tuple(d.get("mixes") or ()), rows, d.get("unit", "IOPS"))

    def cells(self) -> list[Cell]:
        return [Cell("iops", r.block_size_bytes, mix, v) for r in self.rows for mix, v in r.values.items()]


def build_table(steps: list[Step], cells: WindowCells) -> IopsTable:
    bss = list(dict.fromkeys(s.workload.block_size_bytes for s in steps))
    mixes = list(dict.fromkeys(s.workload.mix for s in steps))
    rows = []
    for bs in bss:
        vals = {s.workload.mix: average([m.iops for m in cells.get(s.workload.key, [])])
                for s in steps if s.workload.block_size_bytes == bs}
        rows.append(IopsRow(bs, vals))
    return IopsTable(tuple(mixes), tuple(rows))


# What a comparison shows (the database holds every cell), and the summary's headline rows.
TABLES = (IopsTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = ("iops",)
CELL_ORDER = "bs-mix"  # the matrix by block size, then mix (docs/pts-reference.md#report-header)
HEADLINES = (("iops", 4096, "100/0"), ("iops", 4096, "0/100"), ("iops", 65536, "65/35"), ("iops", 1048576, "100/0"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    return f"RND {fmt_block_size(bs)} {mix}" if bs else str(mix)


def site(part) -> dict:
    """How the results site draws a comparison of it (library/site/templates/site.js): IOPS over the
    block sizes, a panel per R/W mix, then each run's matrix and its deltas."""
    return {"view": {"plot": {"draw": "bs-lines", "title": "IOPS vs block size, every run",
                              "caption": "Log-log. One line per run, one panel per R/W mix (100/0, 65/35, 0/100); dashed: "
                                         "steady state NOT reached. Missing points: block sizes the run does not have.",
                              "size": [10.0, 4.0], "unit": "IOPS", "panels": ["100/0", "65/35", "0/100"],
                              "panel_title": "RND R/W "},
                     "tables": [{"draw": "matrix", "unit": "IOPS", "order": [f"{r}/{100 - r}" for r in MIXES]}]}}


def summary(part) -> list:
    """The terminal's lines of a finished IOPS part (``part``: a results PartResult)."""
    table = part.table
    return [TextTable("IOPS (window average)", (("block size", "left"), *((m, "right") for m in table.mixes)),
                      tuple((fmt_block_size(row.block_size_bytes), *(fmt_number(row.values.get(m)) for m in table.mixes))
                            for row in table.rows))]
