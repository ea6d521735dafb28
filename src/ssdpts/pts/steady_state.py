"""Steady-state determination, PTS 2.0.2 §2.1.24 (docs/pts-reference.md#steady-state).

A tracking variable is in steady state when, over the measurement window of the last 5 rounds,
  * data excursion:  max(y) - min(y) <= 0.20 * avg(y), and
  * slope excursion: |b| * (x_last - x_first) <= 0.10 * avg(y), with b the slope of the
    least-squares line through (round, y).
Both comparisons are inclusive. The slope rule bounds the excursion of the best-fit line across
the window (|b| * 4 for five consecutive rounds), not the slope itself: TKperf's "slope < 10% of
average" is 4x looser and a published "slope <= 0.1" has no unit; neither is used here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

WINDOW_ROUNDS = 5
RANGE_FRACTION = 0.20
EXCURSION_FRACTION = 0.10
MAX_ROUNDS = 25
# Inclusive comparisons on floats: a window whose range is exactly 20% of its average must pass
# even when binary floating point lands one ulp above the limit.
_REL_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class SteadyState:
    """The verdict for one tracking variable over one window."""

    variable: str
    unit: str
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    range: float  # max - min of the values
    range_limit: float  # 0.20 * average
    slope: float  # b of y = b*x + a, per round
    intercept: float  # a
    excursion: float  # |b| * (x_last - x_first)
    excursion_limit: float  # 0.10 * average
    range_ok: bool
    excursion_ok: bool

    @property
    def reached(self) -> bool:
        return self.range_ok and self.excursion_ok

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rounds"] = list(self.rounds)
        d["values"] = list(self.values)
        d["reached"] = self.reached
        return d


def _le(a: float, b: float) -> bool:
    return a <= b + _REL_EPS * max(abs(a), abs(b), 1.0)


def evaluate_window(variable: str, rounds: Sequence[int], values: Sequence[float], unit: str = "") -> SteadyState:
    """Judge one window (normally 5 consecutive rounds) of a tracking variable."""
    if len(rounds) != len(values) or len(values) < 2:
        raise ValueError("a steady-state window needs at least two (round, value) pairs of equal length")
    x = np.asarray(rounds, dtype=float)
    y = np.asarray(values, dtype=float)
    avg = float(y.mean())
    rng = float(y.max() - y.min())
    slope, intercept = (float(c) for c in np.polyfit(x, y, 1))
    excursion = abs(slope) * float(x[-1] - x[0])
    range_limit = RANGE_FRACTION * avg
    excursion_limit = EXCURSION_FRACTION * avg
    return SteadyState(
        variable=variable,
        unit=unit,
        rounds=tuple(int(r) for r in rounds),
        values=tuple(float(v) for v in values),
        average=avg,
        range=rng,
        range_limit=range_limit,
        slope=slope,
        intercept=intercept,
        excursion=excursion,
        excursion_limit=excursion_limit,
        range_ok=avg > 0 and _le(rng, range_limit),
        excursion_ok=avg > 0 and _le(excursion, excursion_limit),
    )


def latest_window(
    variable: str, rounds: Sequence[int], values: Sequence[float], unit: str = "", window: int = WINDOW_ROUNDS
) -> SteadyState | None:
    """The verdict over the last ``window`` rounds, or None before there are that many rounds."""
    if len(values) < window:
        return None
    return evaluate_window(variable, rounds[-window:], values[-window:], unit)


def all_reached(verdicts: Sequence[SteadyState | None]) -> bool:
    """PTS 2.0.x IOPS: every tracking variable must pass in the same window."""
    return bool(verdicts) and all(v is not None and v.reached for v in verdicts)
