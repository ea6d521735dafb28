"""Response-time statistics of a measurement window: one definition each, used by the summary
tables, the reports and the comparisons (docs/methodology.md "Response-time statistics").

* mean: the window average of each step's mean (PTS.md §2: reported values are window averages);
  a step's mean is the IO-weighted mean of its read and write means.
* max: the largest response time of any IO in the window (the maximum of the steps' maxima).
* percentile p: from the window's pooled histogram, the fio json+ bins of every step of the
  window (reads and writes) added together, by fio's own rule (stat.c: the first bin whose
  cumulative count reaches p% of all IOs), and never above the window's max: fio reports a bin's
  midpoint, which can lie above the largest IO it measured (fio stat.h: a bin is at most 1/64 of
  its value wide, so the midpoint is within 1/128, about 0.8%, of any value in the bin).
* a percentile p needs at least 1 / (1 − p/100) IOs to be told apart from the maximum (10⁵ IOs
  for 99.999%): with fewer it IS the largest IO, and is flagged "≈ max".
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Iterable

from ..measurement import Measurement, percentile_from_bins

# The QoS table of datacenter SSD specifications (p50 ... p99.9999, then max).
QOS_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999)
# fio's latency histogram: FIO_IO_U_PLAT_BITS = 6, 64 bins per power of two; a bin's midpoint is
# within 1/2^(6+1) of any value in it.
FIO_BIN_HALF_WIDTH = 1 / 128


def ios_needed(pct: float) -> int:
    """IOs a sample needs before its pct-th percentile differs from its maximum: 1 / (1 − p)."""
    return math.ceil(round(1 / (1 - pct / 100), 6))


def resolvable(ios: int, pct: float) -> bool:
    return ios >= ios_needed(pct)


def pct_label(pct: float) -> str:
    """99.999 -> '99.999%', 50 -> '50%'."""
    return f"{pct:g}%"


def approx_max_note(pct: float) -> str:
    """The flag of a percentile the sample cannot resolve: '≈ max: fewer than 10⁵ IOs'."""
    n = ios_needed(pct)
    exp = round(math.log10(n))
    sup = str(exp).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"≈ max: fewer than 10{sup} IOs" if 10 ** exp == n else f"≈ max: fewer than {n:,} IOs"


@dataclass(frozen=True, slots=True)
class WindowLatency:
    """The response times of one cell over its measurement window (all in µs)."""

    steps: int
    ios: int  # IOs in the pooled histogram (reads and writes)
    mean_us: float | None
    max_us: float | None
    percentiles_us: dict[float, float] = field(default_factory=dict)  # pct -> µs, capped at max_us

    def percentile_us(self, pct: float) -> float | None:
        return self.percentiles_us.get(float(pct))

    def resolved(self, pct: float) -> bool:
        return resolvable(self.ios, pct)


def pooled_bins(measurements: Iterable[Measurement]) -> dict[int, int]:
    """The json+ bins (ns -> IOs) of every step, reads and writes, added together."""
    out: dict[int, int] = {}
    for m in measurements:
        for d in (m.read, m.write):
            for b, n in d.lat_bins_ns.items():
                out[int(b)] = out.get(int(b), 0) + int(n)
    return out


def window_latency(measurements: Iterable[Measurement], percentiles: Iterable[float] = QOS_PERCENTILES
                   ) -> WindowLatency:
    ms = [m for m in measurements if m.ios]
    if not ms:
        return WindowLatency(0, 0, None, None)
    mean_us = sum(m.lat_mean_ns for m in ms) / len(ms) / 1e3
    max_ns = max(m.lat_max_ns for m in ms)
    bins = pooled_bins(ms)
    pcts: dict[float, float] = {}
    for p in percentiles:
        v = percentile_from_bins(bins, float(p))
        if v is not None:
            pcts[float(p)] = min(v, max_ns) / 1e3 if max_ns else v / 1e3
    ios = sum(bins.values()) if bins else sum(m.ios for m in ms)
    return WindowLatency(len(ms), ios, mean_us, max_ns / 1e3, pcts)
