"""Latency test (docs/pts-reference.md#lat): TC1/QD1; outer mix 100/0, 65/35, 0/100; inner block size 8, 4, 0.5 KiB.
Tracking: mean response time of RND 4KiB 0/100."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .parts import Part, Tracking, cell_steps, wipc_step
from .qos import window_latency
from .runspec import RunSpec
from .tables import Cell, TextTable, WindowCells, average, fmt_number, num
from .units import KiB, fmt_block_size
from .workload import Step, Workload

NAME = "lat"
TITLE = "Latency"
ORDER = 40  # its place in the run order (pts/catalog.py)

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


# ---- the table: response times (and IOPS) of every cell, averaged over the window ---------------------

# The metrics of a row, in table order, as pts/qos.py defines them: the window average of the step
# means; the 99.999th percentile of the window's pooled histogram (never above the max); the largest
# response time in the window. lat_max_in_window_us (format 1) is the same maximum.
METRICS = ("lat_mean_us", "lat_p99999_us", "lat_max_us", "lat_max_in_window_us", "iops")


@dataclass(frozen=True, slots=True)
class LatRow:
    block_size_bytes: int
    mix: str
    values: dict[str, float | None] = field(default_factory=dict)  # metric -> value; absent in older files

    def value(self, metric: str) -> float | None:
        return self.values.get(metric)


@dataclass(frozen=True, slots=True)
class LatTable:
    rows: tuple[LatRow, ...]
    unit: str = "µs"
    kind: ClassVar[str] = "latency"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit,
                "rows": [{"block_size_bytes": r.block_size_bytes, "mix": r.mix, **r.values} for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict) -> "LatTable":
        rows = tuple(LatRow(int(r["block_size_bytes"]), r.get("mix"), {m: num(r[m]) for m in METRICS if m in r})
                     for r in d.get("rows") or [])
        return cls(rows, d.get("unit", "µs"))

    def cells(self) -> list[Cell]:
        return [Cell(m, r.block_size_bytes, r.mix, v) for r in self.rows for m, v in r.values.items()]


def build_table(steps: list[Step], cells: WindowCells) -> LatTable:
    rows = []
    for s in steps:
        ms = cells.get(s.workload.key, [])
        w = window_latency(ms, (99.999,))
        rows.append(LatRow(s.workload.block_size_bytes, s.workload.mix, {
            "lat_mean_us": w.mean_us,
            "lat_p99999_us": w.percentile_us(99.999),
            "lat_max_us": w.max_us,
            "lat_max_in_window_us": w.max_us,
            "iops": average([m.iops for m in ms]),
        }))
    return LatTable(tuple(rows))


TABLES = (LatTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = ("lat_mean_us", "lat_p99999_us", "lat_max_us")
HEADLINES = (("lat_mean_us", 4096, "100/0"), ("lat_mean_us", 4096, "0/100"), ("lat_p99999_us", 4096, "0/100"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    return f"RND {fmt_block_size(bs)} {mix}" if bs else str(mix)


def site(part) -> dict:
    """How the results site draws a comparison of it (library/site/templates/site.js): bars per cell
    for the mean and the 99.999th percentile, then a table per compared metric."""
    return {"view": {"plot": {"draw": "bar-panels", "title": "Response times, every run",
                              "caption": "Mean and 99.999th percentile response time per cell (block size, R/W mix; a log "
                                         "axis when the runs differ by more than 30×), one bar per run (lower is better); "
                                         "hatched: steady state NOT reached.",
                              "size": [10.0, 6.0], "unit": "µs", "panels": ["lat_mean_us", "lat_p99999_us"]},
                     "tables": [{"metric": m} for m in COMPARED]}}


def summary(part) -> list:
    """The terminal's table of a finished latency part (``part``: a results PartResult)."""
    f = fmt_number
    return [TextTable("Response time, µs (window average)",
                      tuple((h, "right") for h in ("block size", "R/W", "mean", "99.999%", "max", "IOPS")),
                      tuple((fmt_block_size(r.block_size_bytes), r.mix, f(r.value("lat_mean_us"), 1),
                             f(r.value("lat_p99999_us"), 1), f(r.value("lat_max_us"), 1), f(r.value("iops")))
                            for r in part.table.rows))]
