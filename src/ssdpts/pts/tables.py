"""What every test's measurement-window table shares (docs/pts-reference.md#steady-state, #report-header).

Each test module (iops.py, tp.py, lat.py, wsat.py) owns its table: a frozen record that it builds
from the window's measurements, writes into summary.json (``to_dict``), reads back
(``from_dict``, tolerant of older files), and lists as :class:`Cell` values (``cells``) for
comparisons and the results library. All reported values are averages over the steady-state
measurement window: the 5 rounds in which steady state was reached, or the last 5 rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, ClassVar, Iterable, Protocol

import numpy as np

from ..measurement import Measurement
from .workload import Step


@dataclass(frozen=True, slots=True)
class Cell:
    """One value of a table: a metric (iops, read_mb_per_s, lat_mean_us, ...) at a block size and
    R/W mix (None where the table has none: TP's metric says read or write; WSAT), and for the
    extended tests at a point of the test (a demand intensity "TC32/QD32", an operating point
    "Max", a segment "WS1" or an access group "G3"; None for the basic tests)."""

    metric: str
    block_size_bytes: int | None
    mix: str | None
    value: float | None  # None: the cell exists but has no value (e.g. no rounds finished)
    point: str | None = None


@dataclass(frozen=True, slots=True)
class TextTable:
    """A table of a test's terminal summary (cli/output.py draws it): a title, its columns (name,
    justification) and rows of texts."""

    title: str
    columns: tuple[tuple[str, str], ...]  # (name, "left" | "right")
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Headline:
    """A headline cell of a test's terminal summary: its label, metric (the unit and format are the
    results registry's) and value."""

    label: str
    metric: str
    value: float | None


def fmt_number(v: float | None, digits: int = 0) -> str:
    """A value of a terminal summary: thousands separated, "—" for none."""
    return "—" if v is None else f"{v:,.{digits}f}"


class Table(Protocol):
    kind: str
    unit: str

    def to_dict(self) -> dict[str, Any]: ...

    def cells(self) -> list[Cell]: ...


def num(v: Any) -> float | None:
    """A finite number from a summary.json value, else None."""
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def average(values: Iterable[float | None]) -> float | None:
    """The window average of the values that exist (None when none does)."""
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


WindowCells = dict[str, list[Measurement]]  # Workload.key -> the window's measurements of that cell


# ---- a preconditioning part's result: its tracking variables' window averages ------------------------

@dataclass(frozen=True, slots=True)
class LevelRow:
    variable: str  # the tracking variable's name
    metric: str
    unit: str
    block_size_bytes: int | None  # None: a composite access pattern (CBW)
    mix: str
    value: float | None


@dataclass(frozen=True, slots=True)
class LevelTable:
    """The steady level a preconditioning part reached (HIR, CBW, DIRTH): each tracking variable's
    average over the measurement window."""

    rows: tuple[LevelRow, ...]
    unit: str = "IOPS"
    kind: ClassVar[str] = "steady-level"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "rows": [
            {"variable": r.variable, "metric": r.metric, "unit": r.unit, "block_size_bytes": r.block_size_bytes,
             "mix": r.mix, "value": r.value} for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict) -> "LevelTable":
        return cls(tuple(LevelRow(str(r.get("variable", "")), str(r.get("metric", "iops")), str(r.get("unit", "")),
                                  None if r.get("block_size_bytes") is None else int(r["block_size_bytes"]),
                                  str(r.get("mix", "")), num(r.get("value"))) for r in d.get("rows") or ()),
                   d.get("unit", "IOPS"))

    def cells(self) -> list[Cell]:
        return [Cell(r.metric, r.block_size_bytes, r.mix, r.value, "precondition") for r in self.rows]


def level_table(tracking: Iterable[Any], steps: list[Step], cells: WindowCells) -> LevelTable:
    """The window average of every tracking variable (pts.parts.Tracking) of a preconditioning part."""
    by_key = {s.key: s.workload for s in steps}
    rows = []
    for t in tracking:
        w = by_key.get(t.key)
        rows.append(LevelRow(t.name, t.metric, t.unit, None if w is None or w.name else w.block_size_bytes,
                             w.mix if w else "", average([m.metric(t.metric) for m in cells.get(t.key, [])])))
    return LevelTable(tuple(rows), rows[0].unit if rows else "IOPS")
