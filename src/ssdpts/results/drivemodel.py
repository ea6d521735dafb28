"""summary.json ``parts.wsat.model`` as a record (docs/results-format.md, docs/methodology.md#drive-model):
what results/wsatmodel.py makes and every reader reads — kept apart from the analysis so that reading a
run needs no numpy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any


@dataclass(frozen=True, slots=True)
class ModelFigure:
    """One figure of the model: its value, uncertainty and where it comes from, or why it is not had."""

    value: float | None
    uncertainty: float | None
    source: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class Cliff:
    capacity_multiple: float  # capacity written at it (× user capacity)
    bytes: int
    level_before_iops: float
    level_after_iops: float
    uncertainty: float  # × user capacity


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class DriveModel:
    """summary.json ``parts.wsat.model`` as a record (docs/results-format.md): read through its
    figures, cliffs and checks, written as the mapping it was made or read as (a field this ssdpts
    does not know is kept)."""

    doc: Mapping[str, Any]

    def figure(self, name: str) -> ModelFigure:
        d = self.doc
        return ModelFigure(_num(d.get(name)), _num(d.get(f"{name}_uncertainty")),
                           _text(d.get(f"{name}_source")), _text(d.get(f"{name}_reason")))

    def value(self, name: str) -> float | None:
        return _num(self.doc.get(name))

    @property
    def cliffs(self) -> tuple[Cliff, ...]:
        return tuple(Cliff(float(c["capacity_multiple"]), int(c["bytes"]), float(c["level_before_iops"]),
                           float(c["level_after_iops"]), float(c.get("uncertainty") or 0.0))
                     for c in self.doc.get("cliffs") or () if isinstance(c, Mapping))

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(Check(str(c.get("name")), bool(c.get("ok")), str(c.get("detail") or ""))
                     for c in self.doc.get("checks") or () if isinstance(c, Mapping))

    @property
    def segments(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(g for g in self.doc.get("segments") or () if isinstance(g, Mapping))

    @property
    def consistent(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.doc)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DriveModel":
        return cls(d)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _text(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)
