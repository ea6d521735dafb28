"""What it took a part to reach its result (docs/methodology.md#time-to-result), as the manifest
keeps it in ``parts.<id>.time_to_result``: frozen records (docs/design.md#frozen-records) that
results/analysis.time_to_result makes from the part's step records and that every reader reads.

``to_dict`` writes the JSON the manifest has always held (its keys in their order, the numbers as
computed: a span with no steps is the integer 0); ``from_dict`` reads it back, keeping each number
as recorded, so that a record read and written again is the same JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def _number(v: Any) -> float:
    """A recorded number as it is (an int stays an int: the JSON written back is the same); 0 else."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _count(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


@dataclass(frozen=True, slots=True)
class PurgeTime:
    """The part's purge: its method and seconds, as its purge record gives them."""

    method: str | None
    s: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "s": self.s}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PurgeTime":
        s = d.get("s")
        return cls(d.get("method") if isinstance(d.get("method"), str) else None,
                   s if isinstance(s, (int, float)) and not isinstance(s, bool) else None)


@dataclass(frozen=True, slots=True)
class Preconditioning:
    """The WIPC, or the sprandom fill in its place: seconds and bytes the host wrote."""

    method: str  # "wipc" or "sprandom"
    s: float
    written_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "s": self.s, "written_bytes": self.written_bytes}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Preconditioning":
        return cls(str(d.get("method") or "wipc"), _number(d.get("s")), _count(d.get("written_bytes")))


@dataclass(frozen=True, slots=True)
class RoundsTime:
    """The rounds the part ran (``count``: complete ones), their seconds and bytes written."""

    count: int
    s: float
    written_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "s": self.s, "written_bytes": self.written_bytes}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RoundsTime":
        return cls(_count(d.get("count")), _number(d.get("s")), _count(d.get("written_bytes")))


@dataclass(frozen=True, slots=True)
class BeforeWindow:
    """What came before the measurement window: its rounds, and with the preconditioning the
    seconds and bytes written."""

    rounds: int
    s: float
    written_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "s": self.s, "written_bytes": self.written_bytes}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BeforeWindow":
        return cls(_count(d.get("rounds")), _number(d.get("s")), _count(d.get("written_bytes")))


@dataclass(frozen=True, slots=True)
class WindowTime:
    """A steady-state part's window: its rounds, the rounds to steady state (None: not reached) and
    what came before it."""

    window_rounds: tuple[int, ...]
    rounds_to_steady_state: int | None
    before_window: BeforeWindow


@dataclass(frozen=True, slots=True)
class TimeToResult:
    """manifest parts.<id>.time_to_result: the purge (None: none recorded), the preconditioning
    (None: the part has none), the rounds, the window (None: not a steady-state part, whose record
    has no window keys), and the totals."""

    purge: PurgeTime | None
    preconditioning: Preconditioning | None
    rounds: RoundsTime
    window: WindowTime | None
    total_s: float
    written_bytes: int

    @property
    def rounds_to_steady_state(self) -> int | None:
        return None if self.window is None else self.window.rounds_to_steady_state

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "purge": None if self.purge is None else self.purge.to_dict(),
            "preconditioning": None if self.preconditioning is None else self.preconditioning.to_dict(),
            "rounds": self.rounds.to_dict(),
        }
        if self.window is not None:
            d["window_rounds"] = list(self.window.window_rounds)
            d["rounds_to_steady_state"] = self.window.rounds_to_steady_state
            d["before_window"] = self.window.before_window.to_dict()
        d["total_s"] = self.total_s
        d["written_bytes"] = self.written_bytes
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TimeToResult":
        purge, pre, rounds = d.get("purge"), d.get("preconditioning"), d.get("rounds")
        window = None
        if "window_rounds" in d:
            reached = d.get("rounds_to_steady_state")
            before = d.get("before_window")
            window = WindowTime(tuple(int(r) for r in d.get("window_rounds") or ()),
                                int(reached) if isinstance(reached, int) and not isinstance(reached, bool) else None,
                                BeforeWindow.from_dict(before if isinstance(before, Mapping) else {}))
        return cls(PurgeTime.from_dict(purge) if isinstance(purge, Mapping) else None,
                   Preconditioning.from_dict(pre) if isinstance(pre, Mapping) else None,
                   RoundsTime.from_dict(rounds if isinstance(rounds, Mapping) else {}), window,
                   _number(d.get("total_s")), _count(d.get("written_bytes")))
