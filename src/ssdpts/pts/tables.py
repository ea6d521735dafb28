"""What every test's measurement-window table shares (PTS.md §2, §4).

Each test module (iops.py, tp.py, lat.py, wsat.py) owns its table: a frozen record that it builds
from the window's measurements, writes into summary.json (``to_dict``), reads back
(``from_dict``, tolerant of older files), and lists as :class:`Cell` values (``cells``) for
comparisons and the results library. All reported values are averages over the steady-state
measurement window: the 5 rounds in which steady state was reached, or the last 5 rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Iterable, Protocol

import numpy as np

from ..measurement import Measurement


@dataclass(frozen=True, slots=True)
class Cell:
    """One value of a table: a metric (iops, read_mb_per_s, lat_mean_us, ...) at a block size and
    R/W mix (None where the table has none: TP's metric says read or write; WSAT)."""

    metric: str
    block_size_bytes: int | None
    mix: str | None
    value: float | None  # None: the cell exists but has no value (e.g. no rounds finished)


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
