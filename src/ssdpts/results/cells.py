"""The values of a run's tables as cells, and the one walk over the cells several runs share
(comparisons and repeat analysis both read runs through :func:`shared_parts`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pts.registry import MIX_ORDER, cell_label, cell_order, compared
from .reader import RunResults
from .records import Summary
from . import wsatmodel
from .registry import METRICS, unit_of

__all__ = ["MIX_ORDER", "CellKey", "CellValue", "CellRow", "SharedPart", "cell_rank", "shared_parts", "table_cells"]

CellKey = tuple[str, str, int | None, str | None, str | None]  # (part id, metric, block size, mix, point)


@dataclass(frozen=True, slots=True)
class CellValue:
    """One measurement-window value (one cell of a summary.json table)."""

    test: str
    part: str  # summary part id, e.g. "iops", "tp-1024KiB"
    metric: str
    block_size_bytes: int | None
    mix: str | None  # R/W mix "65/35", None where the table has none (TP: the metric says R or W; WSAT)
    value: float | None  # None: the cell exists but has no value (e.g. no rounds finished)
    unit: str
    steady_state_reached: bool | None  # None: the test has no steady-state criterion (WSAT)
    point: str | None = None  # extended tests: TC32/QD32, Max, WS1, G3, precondition

    @property
    def key(self) -> CellKey:
        return (self.part, self.metric, self.block_size_bytes, self.mix, self.point)


def table_cells(summary: Summary) -> list[CellValue]:
    """Every value of every measurement-window table of a summary, in table order."""
    return [CellValue(p.test, pid, c.metric, c.block_size_bytes, c.mix, c.value, unit_of(c.metric), p.reached,
                      c.point)
            for pid, p in summary.parts.items() if p.table is not None
            for c in [*p.table.cells(), *wsatmodel.cells(p.model)]]


def cell_rank(test: str, key: CellKey, position: int) -> tuple:
    """PTS order of a cell: by metric, then as the test kind orders its cells (pts/registry.cell_order:
    the IOPS matrix by block size then mix, the LAT table by mix then block size, largest first, as
    the PTS lists them); the extended tests' cells (which name a point) in the order their tables list
    them (``position``: demand intensity high to low, wait states, groups)."""
    _, metric, bs, mix, point = key
    m = list(METRICS).index(metric) if metric in METRICS else 99
    if point is not None:
        return (m, position)
    return cell_order(test, m, bs, mix)


@dataclass
class CellRow:
    """The same cell in every run of a comparison (None where a run lacks it)."""

    part: str
    test: str
    metric: str
    block_size_bytes: int | None
    mix: str | None
    values: list[float | None]  # per run
    point: str | None = None

    @property
    def unit(self) -> str:
        return unit_of(self.metric)

    @property
    def label(self) -> str:
        return cell_label(self.test, self.metric, self.block_size_bytes, self.mix, self.point)


@dataclass
class SharedPart:
    """A part every run has: its compared cells, and each run's steady-state verdict and stop reason."""

    part: str
    test: str
    title: str
    rows: list[CellRow]
    reached: list[bool | None]
    stop_reasons: list[str | None]


def shared_parts(runs: list[RunResults]) -> tuple[list[SharedPart], list[str]]:
    """The parts all ``runs`` have (in the first run's order) with the cells a comparison shows, and
    one line per part only some have: "tp-128KiB (only in A, B)"."""
    pids_all = [r.part_ids() for r in runs]
    shared = [pid for pid in pids_all[0] if all(pid in ids for ids in pids_all[1:])]
    not_shared = []
    for pid in dict.fromkeys(p for ids in pids_all for p in ids):
        if pid not in shared:
            have = [r.label for r, ids in zip(runs, pids_all) if pid in ids]
            not_shared.append(f"{pid} (only in {', '.join(have)})")
    cells = [{c.key: c for c in table_cells(r.summary)} for r in runs]
    out = []
    for pid in shared:
        first = runs[0].part(pid)
        keys = [k for k in dict.fromkeys(k for cs in cells for k in cs) if k[0] == pid and k[1] in compared(first.test)]
        position = {k: i for i, k in enumerate(keys)}
        rows = [CellRow(pid, first.test, k[1], k[2], k[3], [cs[k].value if k in cs else None for cs in cells], k[4])
                for k in sorted(keys, key=lambda k: cell_rank(first.test, k, position[k]))]
        out.append(SharedPart(pid, first.test, first.title or pid, rows, [r.reached(pid) for r in runs],
                              [(r.part(pid).stop_reason if r.part(pid) else None) for r in runs]))
    return out, not_shared
