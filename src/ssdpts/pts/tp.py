"""Throughput test (docs/pts-reference.md#tp): per block size its own purge and WIPC (SEQ writes at that block
size), then rounds of {SEQ 100% read, SEQ 100% write}, tracking write MB/s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .parts import Part, Tracking, cell_steps, wipc_step
from .runspec import RunSpec
from .tables import Cell, WindowCells, average, fmt_number, num
from .units import fmt_block_size
from .workload import Step, Workload

NAME = "tp"
TITLE = "Throughput"
ORDER = 30  # its place in the run order (pts/catalog.py)


# Whether --precondition sprandom's fill replaces its WIPC: TP's steady state is the sequential one,
# which the fill's random-write state is not (measured 44-57% lower after it on the reference SSD,
# docs/methodology.md#preconditioning-by-sprandom): it keeps the WIPC either way.
SPRANDOM_FILL = False


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    prof = spec.prof
    out = []
    for bs in prof.tp_block_sizes:
        name = fmt_block_size(bs)
        wl = [Workload("seq", 100, bs, prof.tp_threads, prof.tp_iodepth),
              Workload("seq", 0, bs, prof.tp_threads, prof.tp_iodepth)]
        out.append(
            Part(
                test="tp", part=name, title=f"Throughput {name}",
                purge=True,
                wipc=wipc_step("tp", name, spec, ar_bytes, bs, random_state=SPRANDOM_FILL),
                tracking=(Tracking(name=f"{wl[1].label} MB/s", key=wl[1].key, metric="write_mb_per_s", unit="MB/s"),),
                max_rounds=spec.max_rounds,
                stop_rule="steady-state",
                round_builder=lambda r, wl=wl, name=name: cell_steps("tp", name, r, wl, spec.step_seconds),
            )
        )
    return out


# ---- the table: average SEQ read and write MB/s of one block size (one table per part) ---------------

@dataclass(frozen=True, slots=True)
class TpTable:
    block_size_bytes: int
    read_mb_per_s: float | None
    write_mb_per_s: float | None
    unit: str = "MB/s"
    kind: ClassVar[str] = "throughput"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "block_size_bytes": self.block_size_bytes,
                "read_mb_per_s": self.read_mb_per_s, "write_mb_per_s": self.write_mb_per_s}

    @classmethod
    def from_dict(cls, d: dict) -> "TpTable":
        return cls(int(d["block_size_bytes"]), num(d.get("read_mb_per_s")), num(d.get("write_mb_per_s")),
                   d.get("unit", "MB/s"))

    def cells(self) -> list[Cell]:
        return [Cell("read_mb_per_s", self.block_size_bytes, None, self.read_mb_per_s),
                Cell("write_mb_per_s", self.block_size_bytes, None, self.write_mb_per_s)]


def build_table(steps: list[Step], cells: WindowCells) -> TpTable:
    read = next(s for s in steps if s.workload.read_pct == 100)
    write = next(s for s in steps if s.workload.read_pct == 0)
    return TpTable(read.workload.block_size_bytes,
                   average([m.read.bw_bytes_per_s / 1e6 for m in cells.get(read.workload.key, [])]),
                   average([m.write.bw_bytes_per_s / 1e6 for m in cells.get(write.workload.key, [])]))


TABLES = (TpTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = ("read_mb_per_s", "write_mb_per_s")
HEADLINES = (("read_mb_per_s", None, None), ("write_mb_per_s", None, None))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    return f"SEQ {fmt_block_size(bs)} " + ("read" if metric.startswith("read") else "write")


def site(part) -> dict:
    """How the results site draws a comparison of it (library/site/templates/site.js): a bar per run
    for each cell; its cells are named by their labels."""
    return {"view": {"plot": {"draw": "bars", "title": "Throughput, every run",
                              "caption": "SEQ read and write MB/s (10⁶ B/s), one bar per run; hatched: steady state NOT "
                                         "reached.",
                              "size": [10.0, 3.6], "unit": "MB/s (10⁶ B/s)"},
                     "tables": [{"title": "Throughput (MB/s)"}], "names": "label"}}


def summary(part) -> list:
    """The terminal's line of a finished throughput part (``part``: a results PartResult)."""
    t = part.table
    return [f"  read {fmt_number(t.read_mb_per_s, 1)} MB/s, write {fmt_number(t.write_mb_per_s, 1)} MB/s"]
