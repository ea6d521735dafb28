"""The statistics of repeated runs (docs/design.md#repeated-runs), one set of rules for every command that
repeats runs: ``compare --repeats`` (repeated PTS runs), ``ssdpts quick`` (each figure) and ``ssdpts
trace replay`` (each figure). A leaf module: numbers in, numbers and verdicts out.

- The value reported is the median run's: a measured value, never an average. With an odd N that is
  the middle run; with an even N (only ``compare --repeats`` can be given one) the lower-middle run.
- RSE = s / (x̄ · √N), s the sample standard deviation (ddof = 1). Above 5% the figure is too
  variable: two more runs while N < 7 (N stays odd); still above at 7 runs, it is unreliable
  ("discarded or studied").
- No RSE (a mean of 0: the runs moved no data) is no evidence either: unreliable.
- Fewer runs than planned (a run in progress or interrupted) is not judged: neither reliable nor
  unreliable (None).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from .errors import UserError

RSE_LIMIT = 0.05  # docs/design.md#repeated-runs: RSE above 5% is too variable
MAX_REPEATS = 7  # docs/design.md#repeated-runs: more than 7 runs needed -> discard / investigate
MIN_REPEATS = 3
MAX_RUNS = 99  # runs a user may ask for: enough for any study, bounded so a typo is not a week's run


def check_runs(runs: int) -> None:
    """--runs of quick and replay: odd (the median is one measured run's value, docs/design.md#repeated-runs), 3 to 99."""
    if runs < MIN_REPEATS or runs % 2 == 0 or runs > MAX_RUNS:
        raise UserError(f"--runs {runs}: give an odd number of runs, {MIN_REPEATS} to {MAX_RUNS} "
                        "(docs/compare.md#repeated-runs: a median is one measured run's value)")


@dataclass(frozen=True, slots=True)
class RepeatStats:
    n: int
    median: float  # the median run's measured value
    median_index: int  # position (in the list given) of the run whose value is the median
    mean: float
    stdev: float  # sample standard deviation, ddof = 1
    rse: float | None  # s / (mean * sqrt(n)); None when the mean is 0

    @property
    def flagged(self) -> bool:
        """Too variable, or no RSE at all: not to be reported as a reliable figure."""
        return self.rse is None or self.rse > RSE_LIMIT


def repeat_stats(values: list[float]) -> RepeatStats:
    """Median run (odd N: the middle run; even N: the lower-middle run), mean, s (ddof=1), RSE."""
    n = len(values)
    if n < 2:
        raise ValueError("need at least two values")
    order = sorted(range(n), key=lambda i: (values[i], i))
    mid = order[(n - 1) // 2]  # odd: the middle; even: the lower of the two middle values
    mean = sum(values) / n
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    rse = s / (mean * math.sqrt(n)) if mean else None
    return RepeatStats(n, float(values[mid]), mid, mean, s, rse)


def reliable(values: list[float], planned: int = MIN_REPEATS) -> bool | None:
    """The verdict on a figure's runs: True (at least MIN_REPEATS runs, RSE at most 5%), False (RSE
    above 5%, or none), None (fewer runs than ``planned`` or than MIN_REPEATS: not judged)."""
    if len(values) < max(planned, MIN_REPEATS):
        return None
    return not repeat_stats(values).flagged


def runs_needed(values: list[float], planned: int) -> int:
    """How many runs a figure needs once a set of ``values`` is complete (docs/design.md#repeated-runs): the planned
    N; when those are done and the RSE is above 5%, two more (N stays odd) while N < 7. Runs with no
    RSE (they moved no data) get none: more of them would not either."""
    n = len(values)
    if n < planned:
        return planned
    rse = repeat_stats(values).rse
    if rse is not None and rse > RSE_LIMIT and n < MAX_REPEATS:
        return n + 2 if n + 2 <= MAX_REPEATS else n + 1
    return n


def summary(values: list[float], planned: int) -> dict:
    """A figure's statistics as quick.json and replay.json keep them: its values, N, the median (the
    only value while there is one), the median run (1-based), RSE and the verdict."""
    st = repeat_stats(values) if len(values) >= 2 else None
    return {"values": values, "n": len(values),
            "median": st.median if st else (values[0] if values else None),
            "median_run": st.median_index + 1 if st else (1 if values else None),
            "rse": st.rse if st else None, "reliable": reliable(values, planned)}


def advice_for(n: int, any_flagged: bool) -> str | None:
    """What to do about repeated runs with figures above the RSE limit (compare --repeats)."""
    if not any_flagged:
        return None
    if n < MAX_REPEATS:
        return (f"add runs: with N = {n}, metrics above {RSE_LIMIT:.0%} RSE are too variable to report; "
                f"add a run (up to {MAX_REPEATS}) and compare again")
    if n == MAX_REPEATS:
        return (f"add one last run (N = {n}): if the RSE stays above {RSE_LIMIT:.0%} beyond {MAX_REPEATS} runs, "
                f"discard these results or investigate the cause (thermal throttling, background jobs, power states)")
    return (f"discard or investigate: N = {n} is more than {MAX_REPEATS} runs and the RSE is still above "
            f"{RSE_LIMIT:.0%} — look for thermal throttling, background jobs or power-state changes, fix them, "
            f"and start a new series")
