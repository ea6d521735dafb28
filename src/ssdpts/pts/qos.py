"""Response-time statistics of a measurement window: one definition each, used by the summary
tables, the reports and the comparisons (docs/methodology.md "Response-time statistics").

* mean: the window average of each step's mean (docs/pts-reference.md#steady-state: reported values are window averages);
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


# ---- latency outliers: the IOs above a threshold, from fio's histogram ------------------------------
# fio's json+ bins (stat.c plat_val_to_idx / plat_idx_to_val): a response time of fewer than 128 ns is
# its own bin; above, a power of two [2^m, 2^(m+1)) is cut into 64 bins of 2^(m-6) ns, and fio names a
# bin by its midpoint. The last bin (index 1855, from 2^33 + 63·2^27 ns, ~17.1 s) also holds every
# slower IO: it has no upper edge. A threshold inside a bin cannot be placed exactly: the count above
# it lies between the IOs from the edge above the threshold up (at least) and from the edge at or
# below it up (at most); the step's exact maximum (fio's lat max) tightens both.
FIO_PLAT_BITS = 6
FIO_PLAT_LAST = 29 * 64 - 1  # fio's FIO_IO_U_PLAT_NR - 1
FIO_LAST_LOW_NS = (1 << 33) + 63 * (1 << 27)  # the last bin's lower edge


def fio_bin(value_ns: int) -> tuple[int, int | None]:
    """[low, high) in ns of the fio histogram bin that holds ``value_ns`` (a bin's reported midpoint
    or any response time); high is None for fio's last bin, open above."""
    v = int(value_ns)
    e = max(v.bit_length() - 1 - FIO_PLAT_BITS, 0)
    if (v if e == 0 else (e + 1) * 64 + ((v >> e) & 63)) >= FIO_PLAT_LAST:
        return FIO_LAST_LOW_NS, None
    low = (v >> e) << e
    return low, low + (1 << e)


@dataclass(frozen=True, slots=True)
class Outliers:
    """The IOs slower than a threshold over some steps (each step counted from its own histogram and
    maximum, then added): between ``at_least`` (IOs from ``edge_high_us`` up: certainly slower) and
    ``at_most`` (IOs from ``edge_low_us`` up: possibly slower). ``at_most`` is the one a limit is
    judged on: within it, the drive certainly had no more outliers than that."""

    threshold_us: float
    at_least: int
    at_most: int
    edge_low_us: float  # the edge of the bin holding the threshold, at or below it
    edge_high_us: float | None  # the bin's upper edge (None: fio's open last bin)
    steps: int

    @property
    def exact(self) -> bool:
        return self.at_least == self.at_most

    def text(self) -> str:
        return f"{self.at_most:,}" if self.exact else f"{self.at_least:,}–{self.at_most:,}"


def step_outliers(m: Measurement, threshold_ns: int) -> tuple[int, int] | None:
    """(at least, at most) IOs of one step (reads and writes) slower than ``threshold_ns``; None
    where the step has no histogram."""
    bins = m.lat_bins_ns
    if not bins:
        return None if m.ios else (0, 0)
    if m.lat_max_ns <= threshold_ns:
        return 0, 0
    low, high = threshold_edges(threshold_ns)
    at_least = sum(n for b, n in bins.items() if high is not None and b >= high)
    at_most = sum(n for b, n in bins.items() if b >= low)
    return max(at_least, 1), at_most


def threshold_edges(threshold_ns: int) -> tuple[int, int | None]:
    """The bin edges around a threshold: IOs from ``low`` up may be slower than it, IOs from ``high``
    up certainly are (low == high: the threshold is a bin edge, the count is exact; high None: the
    threshold is in fio's open last bin)."""
    low, high = fio_bin(threshold_ns + 1)  # the bin of the first response time above the threshold
    return (low, low) if low == threshold_ns + 1 else (low, high)


def outliers(measurements: Iterable[Measurement], threshold_us: float) -> Outliers | None:
    """The IOs above ``threshold_us`` over the steps, each step counted by :func:`step_outliers`;
    None where a step with IOs has no histogram."""
    t = int(round(threshold_us * 1000))
    low, high = threshold_edges(t)
    least = most = steps = 0
    for m in measurements:
        c = step_outliers(m, t)
        if c is None:
            return None
        least, most, steps = least + c[0], most + c[1], steps + 1
    return Outliers(float(threshold_us), least, most, low / 1e3, None if high is None else high / 1e3, steps)
