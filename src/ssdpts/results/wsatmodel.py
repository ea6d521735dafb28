"""The drive model of a WSAT run (docs/methodology.md#drive-model): what the curve of IOPS against
capacity written says about the drive — its fresh-out-of-box level, each cliff (an SLC cache
filling), the onset of garbage collection and from it the effective spare, the steady level and
the steady write amplification — each figure with its uncertainty and where it comes from, or
null with the reason it cannot be had.

The curve is read at the grain of fio's per-interval IOPS log within each sample (the step
record's ``intervals``; a sample without one is one point). The log's counts give the shape within
a sample; the sample's own IO count (fio's json+) gives its total, so that the capacity axis is
the one the WSAT table draws (bytes written ÷ user capacity).

* **Levels** are medians of the curve over a span (robust to single slow intervals).
* **A drop** is where the curve, smoothed over ``SMOOTH`` intervals, falls below
  ``1 - DROP`` of the level before it and stays there. A drop followed by a level that holds
  (within ``FLAT``) over ``CLIFF_HOLD`` of capacity before the next drop is a cliff: a fast
  region (an SLC cache) filled. The first drop that is not a cliff is the onset of garbage
  collection: the drive ran out of erased blocks.
* **Effective spare** = capacity written at GC onset − 1 (× user capacity): under uniform random
  writes every write lands on an erased page until the physical space the drive writes into is
  full, so the onset is where that space ends.
* **Steady write amplification**: from the drive's media-write counter over the final window
  where its telemetry reads one; otherwise from the effective spare by the greedy model (the
  mean-field model of greedy GC; for blocks of N pages where the device description states N,
  else the large-block limit a / (a + W0(-a e^-a)), which is higher: the figure says so).
* **Checks**: the steady level x the window's time against the host writes the drive counted
  over the same steps; the FOB ÷ steady IOPS ratio against the write amplification (a die
  spends about A programs per host write in steady state, one at FOB: the ratio is A or a little
  more, the reads and erases of GC included).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np

from ssdpts.pts.tables import Cell
from ssdpts.results.drivemodel import DriveModel
from ssdpts.results.steprecord import StepRecord, telemetry_span

SMOOTH = 9  # intervals in the running median the drops are found on
DROP = 0.10  # a fall of 10% below the level before it is a drop
FLAT = 0.10  # a level holds while its running median stays within 10% of it (nine in ten points)
CLIFF_HOLD = 0.10  # ... over at least 10% of capacity: a cliff (a region filled), not the decline GC starts
FOB_SPAN = (0.01, 0.06)  # the FOB level: the median over this span of capacity written
HOLD_DROP = 0.05  # a drop stays: the median over the next 5% of capacity is below the mark too
RETURN_SPAN = 0.05  # ... and no span of 5% of capacity after that comes back to within 5% of the level
LOCAL_SPAN = 0.05  # the level a drop falls from: the median over the 5% of capacity before it
RATE_COUNTER_TOL = 0.01  # the steady level x time against the drive's host-write counter
HOST_COUNTER_UNIT = 512_000  # ... give or take its grain at either end: NVMe's data unit where the snapshots cannot tell
RATIO_BAND = (0.85, 1.6)  # FOB/steady IOPS ÷ WA: a die does A programs per host write (+ GC's reads and erases)
FIGURES = ("fob_iops", "slc_cache_bytes", "gc_onset_capacity_multiple", "effective_spare", "steady_iops", "steady_wa")


@dataclass(frozen=True, slots=True)
class Curve:
    """The WSAT curve at its finest grain: per point, capacity written at its middle (× user
    capacity), its width, and its IOPS; per sample, the index of its first point."""

    x: np.ndarray
    width: np.ndarray
    iops: np.ndarray
    fine: bool  # every sample had its per-interval log
    # per sample: (capacity written before it, after it, its IOs, its run time in s): fio's own counts
    samples: tuple[tuple[float, float, int, float], ...] = ()


def curve(records: list[StepRecord], capacity_bytes: int) -> Curve:
    xs, ws, ys = [], [], []
    written = 0.0
    fine = True
    samples = []
    for r in sorted((r for r in records if r.phase == "round"), key=lambda r: r.index):
        m = r.fio
        ios = m.write.ios + m.read.ios
        step_bytes = float(m.write.io_bytes)
        iv = r.intervals
        run_s = float(m.duration_s or 0.0)
        samples.append((written / capacity_bytes, (written + step_bytes) / capacity_bytes, ios, run_s))
        if iv is None or not iv.ios or sum(iv.ios) <= 0 or ios <= 0 or run_s <= 0:
            fine = False
            xs.append((written + step_bytes / 2) / capacity_bytes)
            ws.append(step_bytes / capacity_bytes)
            ys.append(m.iops)
            written += step_bytes
            continue
        p = iv.period_ms / 1000.0
        shape = np.asarray(iv.ios, dtype=float)
        tail_s = max(run_s - len(shape) * p, 0.0)
        tail = shape[-3:].mean() * tail_s / p  # the part of an interval at the end fio does not log
        k = ios / (shape.sum() + tail)  # the log's counts to the sample's own (fio's json+)
        n = np.append(shape * k, tail * k)
        dur = np.append(np.full(len(shape), p), tail_s)
        per_io = step_bytes / ios
        keep = dur > 0
        n, dur = n[keep], dur[keep]
        edges = written + np.concatenate(([0.0], np.cumsum(n))) * per_io
        xs.extend(((edges[:-1] + edges[1:]) / 2 / capacity_bytes).tolist())
        ws.extend((np.diff(edges) / capacity_bytes).tolist())
        ys.extend((n / dur).tolist())
        written += step_bytes
    return Curve(np.asarray(xs), np.asarray(ws), np.asarray(ys), fine, tuple(samples))


def _balanced(c: Curve, edge: float, before: float, after: float) -> float | None:
    """A sharp fall's place from the sample it falls in, by its IO count: the sample ran ``before``
    IOPS for t seconds and ``after`` for the rest, so t = (IOs − after × run time) ÷ (before −
    after). It holds where the drive ran at its two levels throughout; a stall before the fall (a
    loaded host's, which is the drive's here) moves it early (4% on the reference SSD, where the
    interval log's own crossing was 0.4% from the truth's cliff). The place where a sample has no
    interval log, else the spread of the log's; None where the balance does not fall inside the
    sample."""
    for x0, x1, ios, run_s in c.samples:
        if x0 <= edge <= x1 and run_s > 0 and before > after > 0:
            t = (ios - after * run_s) / (before - after)
            if 0.0 < t < run_s:
                return x0 + (before * t / ios) * (x1 - x0)
            return None
    return None


def thin(c: Curve, most: int) -> tuple[list[float], list[float]]:
    """The curve at most ``most`` points for drawing: the median of each run of points."""
    n = len(c.x)
    if n <= most:
        return c.x.tolist(), c.iops.tolist()
    k = math.ceil(n / most)
    m = n // k * k
    return (c.x[:m].reshape(-1, k).mean(axis=1).tolist(), np.median(c.iops[:m].reshape(-1, k), axis=1).tolist())


def _running_median(y: np.ndarray, n: int) -> np.ndarray:
    if len(y) < n:
        return np.full(len(y), float(np.median(y))) if len(y) else y
    h = n // 2
    pad = np.concatenate((np.full(h, y[0]), y, np.full(h, y[-1])))
    return np.median(np.lib.stride_tricks.sliding_window_view(pad, n), axis=1)


def _crossing(x: np.ndarray, s: np.ndarray, i: int, level: float) -> float:
    """Where the smoothed curve ``s`` goes below ``level`` between points i-1 and i (interpolated)."""
    if i == 0 or s[i - 1] == s[i]:
        return float(x[i])
    f = (s[i - 1] - level) / (s[i - 1] - s[i])
    return float(x[i - 1] + min(max(f, 0.0), 1.0) * (x[i] - x[i - 1]))


def _comes_back(x: np.ndarray, y: np.ndarray, mark: float) -> bool:
    """Whether the curve, in any span of RETURN_SPAN of capacity, is back at ``mark`` (its median):
    a drive that has started to collect never returns to the level it fell from; a host or a device
    that only slowed for a while does (an emulated drive over a file being allocated, a stall)."""
    if not len(x):
        return False
    edges = np.arange(x[0], x[-1] + RETURN_SPAN, RETURN_SPAN)
    idx = np.searchsorted(x, edges)
    return any(b - a >= 3 and float(np.median(y[a:b])) >= mark for a, b in zip(idx[:-1], idx[1:]))


def _after(x: np.ndarray, y: np.ndarray, i: int) -> tuple[float, bool, int]:
    """The level after a fall that ends at point i: (its median over CLIFF_HOLD of capacity, whether
    it holds there — its last third within FLAT / 2 of its first and nine in ten of its points within
    FLAT of it: a cliff's plateau, not the decline GC starts —, the first point after that span)."""
    stop = int(np.searchsorted(x, x[i] + CLIFF_HOLD))
    span = y[i:max(stop, i + 3)]
    if stop >= len(x) or len(span) < 6:
        return float(np.median(span)) if len(span) else float(y[-1]), False, len(x)
    third = len(span) // 3
    a, b = float(np.median(span[:third])), float(np.median(span[-third:]))
    level = float(np.median(span))
    dev = np.abs(_running_median(span, SMOOTH) - level) / level if level > 0 else np.ones(1)
    return level, b >= (1 - FLAT / 2) * a and float(np.percentile(dev, 90)) <= FLAT, stop


def greedy_wa(a: float, pages_per_block: int | None = None) -> float:
    """Steady write amplification of greedy GC under uniform random writes at physical ÷ logical
    ``a``: the mean-field model for blocks of N pages (Van Houdt, SIGMETRICS 2013), its large-block
    limit a / (a + W0(-a e^-a)) when N is not given."""
    if a <= 1.0:
        return math.inf
    if not pages_per_block:
        x = -a * math.exp(-a)
        w = -0.5
        for _ in range(200):  # W0 on [-1/e, 0) by Newton
            e = math.exp(w)
            step = (w * e - x) / (e * (w + 1.0))
            w -= step
            if abs(step) < 1e-15:
                break
        return a / (a + w)
    b, rho = int(pages_per_block), 1.0 / a
    h = [0.0]
    for j in range(1, b + 1):
        h.append(h[-1] + 1.0 / j)

    # a block closes with b valid pages and loses each at one rate; greedy takes every block that
    # reaches level k and the rest at k + 1: with m the victim's valid pages, g(m) = rho b S(m) -
    # (b - m), S(m) = H_b - H_{k+1} + (k + 1 - m)/(k + 1), linear on [k, k + 1]; its first root
    # is the steady state (refssd/src/reference.rs greedy_mean_field, the reference the proofs use)
    def g(k: int, m: float) -> float:
        return rho * b * (h[b] - h[k + 1] + (k + 1.0 - m) / (k + 1.0)) - (b - m)

    for k in range(b):
        g0, g1 = g(k, float(k)), g(k, k + 1.0)
        if g0 > 0.0 >= g1:
            m = k + g0 / (g0 - g1)
            return b / (b - m)
    return 1.0


# the model's figures as table cells (results/registry.py METRICS): the library, the site and comparisons
CELLS = (("effective_spare", "model_effective_spare_pct", 100.0), ("gc_onset_capacity_multiple", "model_gc_onset", 1.0),
         ("steady_wa", "model_steady_wa", 1.0), ("slc_cache_bytes", "model_slc_cache_mib", 1.0 / 2**20))


def cells(m: "DriveModel | None") -> list[Cell]:
    """A part's model figures as cells: those the model had (a figure it could not have says why in
    summary.json, not as an empty column in every comparison)."""
    if m is None:
        return []
    return [Cell(metric, None, None, round(v * scale, 4)) for key, metric, scale in CELLS
            if (v := m.value(key)) is not None]


def block_pages(description: Any) -> int | None:
    """Pages (of 4 KiB) per erase block as the device description states it (``erase_block_pages``,
    docs/methodology.md#drive-model), or None."""
    v = description.get("erase_block_pages") if isinstance(description, dict) else None
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 2 else None


def _counter_delta(records: list[StepRecord], key: str) -> tuple[float, float, int | None] | None:
    """(difference of a telemetry counter over the records, its time span, its resolution), or None
    where the snapshots lack it."""
    span = telemetry_span(records, key)
    if span is None:
        return None
    first, last = span
    return float(last[key] - first[key]), float(last["t_unix_s"] - first["t_unix_s"]), first.get("physical_media_unit_bytes")


def _walk(out: dict[str, Any], c: Curve, s: np.ndarray, fob: float, capacity_bytes: int,
          cell: float) -> tuple[list[dict], tuple | None]:
    """The drops along the curve in order: each cliff (into ``out``), then GC onset as (its place,
    the point where the curve is below the drop, the level before it), or None; the segments so far."""
    x, y = c.x, c.iops
    # walk the drops: a cliff holds its new level; the first drop that does not is GC onset
    level, i, onset = fob, 1, None
    segments = [{"kind": "fob", "from": 0.0, "level": round(fob, 1)}]
    while i < len(s):
        below = np.flatnonzero(s[i:] < (1 - DROP) * level)
        if not len(below):
            break
        j = i + int(below[0])
        if x[-1] < x[j] + HOLD_DROP:
            break  # the run ends within 5% of capacity of it: too little curve to tell whether it stays
        stay = y[j:int(np.searchsorted(x, x[j] + HOLD_DROP)) + 1]
        rest = int(np.searchsorted(x, x[j] + HOLD_DROP))
        if float(np.median(stay)) >= (1 - DROP) * level or _comes_back(x[rest:], y[rest:], (1 - DROP / 2) * level):
            i = j + 1  # a dip that does not stay, or a level the curve comes back to later: not a fall
            continue
        # the level just before it: the median over the 5% of capacity before the mark (to its last 1%)
        back = int(np.searchsorted(x, x[j] - LOCAL_SPAN))
        if j - back >= 3:
            level = float(np.median(y[back:max(back + 1, int(np.searchsorted(x, x[j] - LOCAL_SPAN / 5)))]))
        # where it falls: the crossing of half the fall (the fall's own middle, robust to noise on
        # either level), the fall from the level to the median of the 1% of capacity after the mark
        low = float(np.median(y[j:int(np.searchsorted(x, x[j] + HOLD_DROP / 2)) + 1]))
        mark = (level + low) / 2
        k0 = j
        while k0 > max(i, back) and s[k0 - 1] < mark:
            k0 -= 1
        edge = _crossing(x, s, k0, mark)
        settle = j  # forward to where the fall ends
        while settle + SMOOTH < len(s) and s[settle + SMOOTH] < (1 - FLAT / 2) * s[settle]:
            settle += 1
        after, flat, until = _after(x, y, settle)
        if flat and edge < 1.0:  # a cache holds less host data than the capacity: past 1x a fall is GC's
            # a plateau on either side: placed where the interval log's curve crosses the fall's
            # middle; its sample's own count, balanced between the two levels, gives its spread (and
            # its place where the sample has no interval log)
            placed = _balanced(c, edge, level, after)
            unc = max(cell, abs(x[j] - edge)) if placed is None else max(cell, abs(placed - edge) / 2)
            edge = placed if placed is not None and not c.fine else edge
            out["cliffs"].append({"capacity_multiple": round(edge, 4), "bytes": round(edge * capacity_bytes),
                                  "level_before_iops": round(level, 1), "level_after_iops": round(after, 1),
                                  "uncertainty": round(unc, 4)})
            segments.append({"kind": "cliff", "from": round(edge, 4), "level": round(after, 1)})
            level, i = after, until
            continue
        onset = (edge, j, level)
        break

    return segments, onset


def _events(out: dict[str, Any], c: Curve, s: np.ndarray, fob: float, capacity_bytes: int) -> list[dict]:
    """The drops along the curve: each cliff, then GC onset and the effective spare (into ``out``);
    the segments to draw."""
    x, y = c.x, c.iops
    end = float(x[-1] + c.width[-1] / 2)
    cell = float(np.median(c.width))
    segments, onset = _walk(out, c, s, fob, capacity_bytes, cell)

    if out["cliffs"]:
        first = out["cliffs"][0]
        out.update(slc_cache_bytes=first["bytes"], slc_cache_bytes_uncertainty=round(first["uncertainty"] * capacity_bytes),
                   slc_cache_bytes_source="capacity written at the first cliff (a level that drops and holds)")
    else:
        out["slc_cache_bytes_reason"] = "no cliff: the curve holds its fresh-out-of-box level until GC starts" \
            if onset is not None else "no cliff seen"

    if onset is None:
        # a drive's spare is a fraction of its capacity: a curve that never fell over twice the
        # capacity is a device that does not collect (a file, RAM), not a run stopped too soon
        why = (f"GC onset not reached in this run (stopped at {end:.2f} × capacity)" if end < 2.0 else
               f"no GC onset seen over {end:.2f} × capacity written: the device does not collect as an SSD does")
        for f in ("gc_onset_capacity_multiple", "effective_spare"):
            out[f"{f}_reason"] = why
    else:
        edge, j, before = onset
        # uncertainty: the grain, or the width of the fall (its middle to where it crosses 10%), the larger
        far = _crossing(x, s, j, (1 - DROP) * before)
        unc = max(cell, abs(far - edge))
        out.update(gc_onset_capacity_multiple=edge, gc_onset_capacity_multiple_uncertainty=round(unc, 4),
                   gc_onset_capacity_multiple_source=f"the middle of the first fall from the level before it "
                                                    f"({before:,.0f} IOPS) that goes on falling",
                   effective_spare=edge - 1.0, effective_spare_uncertainty=round(unc, 4),
                   effective_spare_source="capacity written at GC onset − 1 (uniform random writes fill the "
                                          "physical space the drive writes into before it must collect)")
        segments.append({"kind": "gc", "from": round(edge, 4), "level": round(before, 1)})
        if edge <= 1.0 and not out["cliffs"]:
            out.update(effective_spare=None, effective_spare_uncertainty=None, effective_spare_source=None,
                       effective_spare_reason=f"GC started before the capacity was written once ({edge:.3f}×): "
                                              "the drive collects before its physical space is full (a cache, or "
                                              "capacity it keeps back), so the spare does not follow from the onset")
        if out["cliffs"]:  # the physical space filled partly at a lower density: onset - 1 is not the spare
            out.update(effective_spare=None, effective_spare_uncertainty=None, effective_spare_source=None,
                       effective_spare_reason="a cache written at a lower density (the cliff at "
                                              f"{out['cliffs'][0]['capacity_multiple']:.3f}× capacity) filled part "
                                              "of the physical space before GC started: the spare does not follow "
                                              "from the onset")

    return segments


def _steady(out: dict[str, Any], rs: list[StepRecord], win: list[StepRecord], window: tuple[int, ...],
            steady_iops: float | None, capacity_bytes: int, segments: list[dict]) -> None:
    """The steady level (the PTS's), how much it still falls, and its segment."""
    # steady level: the PTS's (the final window's mean)
    if steady_iops:
        ys = [r.fio.iops for r in win]
        out.update(steady_iops=float(steady_iops),
                   steady_iops_uncertainty=round(float(np.std(ys)) / math.sqrt(len(ys)), 1) if len(ys) > 1 else None,
                   steady_iops_source="the mean of the final 5 samples (PTS 2.0.2 WSAT)")
        first_x = float(sum(r.fio.write.io_bytes for r in rs if r.index < min(window))) / capacity_bytes
        segments.append({"kind": "steady", "from": round(first_x, 4), "level": round(steady_iops, 1)})
        # is it steady? the slope of the samples over the window, in % of the level per capacity
        wx = np.cumsum([r.fio.write.io_bytes for r in rs])[[rs.index(r) for r in win]] / capacity_bytes
        if len(win) >= 3 and wx[-1] > wx[0]:
            slope = float(np.polyfit(wx, ys, 1)[0]) / steady_iops
            out["steady_slope_per_capacity"] = round(slope, 4)
    else:
        out["steady_iops_reason"] = "no final window"
    out["segments"] = segments



def _wa(out: dict[str, Any], win: list[StepRecord], pages_per_block: int | None) -> tuple | None:
    """Steady write amplification into ``out``; the drive's host-write counter over the window (or None)."""
    # steady write amplification: media counters, else the greedy model from the spare
    media = _counter_delta(win, "physical_media_written_bytes")
    host = _counter_delta(win, "data_written_bytes")
    wa_greedy = None
    if out["effective_spare"] is not None and out["effective_spare"] > 0:
        a = 1.0 + out["effective_spare"]
        wa_greedy = greedy_wa(a, pages_per_block)
        hi, lo = (greedy_wa(a - out["effective_spare_uncertainty"], pages_per_block),
                  greedy_wa(a + out["effective_spare_uncertainty"], pages_per_block))
        out["steady_wa_greedy"] = round(wa_greedy, 4)
        out["steady_wa_greedy_uncertainty"] = round(max(hi - wa_greedy, wa_greedy - lo), 4)
        out["steady_wa_greedy_assumes"] = (f"greedy GC, blocks of {pages_per_block} pages (the device description)"
                                           if pages_per_block else
                                           "greedy GC, blocks of many pages (the large-block limit; for blocks of "
                                           "N pages the figure is lower: about 1% at 256 pages, 7% at 32)")
    if media is not None and host is not None and host[0] > 0 and media[0] >= 0:
        wa = media[0] / host[0]
        res = (media[2] or 0) / media[0] if media[0] else 0.0
        out.update(steady_wa=wa, steady_wa_uncertainty=round(wa * res, 4),
                   steady_wa_source="the drive's media ÷ host write counters over the final 5 samples")
        out["steady_wa_media"] = wa
    elif wa_greedy is not None:
        out.update(steady_wa=out["steady_wa_greedy"], steady_wa_uncertainty=out["steady_wa_greedy_uncertainty"],
                   steady_wa_source="the greedy model at the effective spare: " + out["steady_wa_greedy_assumes"])
    else:
        out["steady_wa_reason"] = ("no media-write counter in the drive's telemetry, and no effective spare "
                                   "(GC onset not seen)")

    return host


def _grain(records: list[StepRecord], key: str) -> int:
    """A byte counter's grain, read from its values: their greatest common divisor over the records'
    snapshots (a multiple of the counter's unit: NVMe's data units of 512,000 bytes, the reference
    SSD's 4 KiB pages, a SCSI drive's gigabytes; with a dozen snapshots, the unit itself).
    HOST_COUNTER_UNIT where fewer than two values are read."""
    vals = [round(v) for r in records if isinstance(r.telemetry, dict)
            for snap in (r.telemetry.get("before"), r.telemetry.get("after")) if isinstance(snap, dict)
            for v in (snap.get(key),) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
    g = math.gcd(*vals) if len(vals) >= 2 else 0
    return g if g > 0 else HOST_COUNTER_UNIT


def _checks(out: dict[str, Any], win: list[StepRecord], steady_iops: float | None, fob: float,
            host: tuple | None) -> None:
    """The two consistency checks (docs/methodology.md#drive-model)."""
    # checks
    if steady_iops and win:
        ours = sum(float(r.fio.write.io_bytes) for r in win)
        # each sample's IOPS over its own run time (a mean level times a summed time would differ
        # from it where the samples' run times differ: a busy host's do), scaled by the level's
        # share of their mean: an IOPS figure that does not add up to the bytes shows
        mean = sum(r.fio.iops for r in win) / len(win)
        rated = (steady_iops / mean if mean else 1.0) * sum(r.fio.iops * float(r.fio.duration_s or 0.0) for r in win) \
            * ours / max(1, sum(r.fio.write.ios for r in win))
        if host is not None and host[0] > 0:
            d = rated / host[0] - 1
            # and the counter's own grain, at either end, and what the samples wrote in the time between
            # the counter's snapshots and the samples' own ends (the snapshots' offsets)
            tel = [(r.telemetry or {}) for r in (win[0], win[-1])]
            lag_s = sum(abs(float((t.get(k) or {}).get("offset_ms") or 0.0)) for t, k in zip(tel, ("before", "after"))) / 1000
            tol = RATE_COUNTER_TOL + (2 * _grain(win, "data_written_bytes") + steady_iops * lag_s * ours / max(1, sum(
                r.fio.write.ios for r in win))) / host[0]
            out["checks"].append({"name": "steady level against the drive's host-write counter",
                                  "ok": abs(d) <= tol, "detail": f"{d:+.2%} (within ±{tol:.1%})"})
        else:
            d = rated / ours - 1 if ours else 0.0
            out["checks"].append({"name": "steady level against the bytes fio counted",
                                  "ok": abs(d) <= RATE_COUNTER_TOL, "detail": f"{d:+.2%} (within ±{RATE_COUNTER_TOL:.0%})"})
    if out["steady_wa"] and steady_iops:
        base = out["cliffs"][-1]["level_after_iops"] if out["cliffs"] else fob
        ratio = base / steady_iops
        out["iops_ratio"] = round(ratio, 4)
        q = ratio / out["steady_wa"]
        out["checks"].append({"name": "FOB ÷ steady IOPS against the write amplification",
                              "ok": RATIO_BAND[0] <= q <= RATIO_BAND[1],
                              "detail": f"{ratio:.2f} ÷ {out['steady_wa']:.2f} = {q:.2f} "
                                        f"(consistent from {RATIO_BAND[0]:g} to {RATIO_BAND[1]:g})"})


def model(records: list[StepRecord], capacity_bytes: int, *, window: tuple[int, ...], steady_iops: float | None,
          pattern: str = "rnd4k-w", pages_per_block: int | None = None) -> DriveModel:
    """summary.json ``parts.wsat.model`` (docs/results-format.md): every figure with ``_uncertainty``
    and ``_source``, or null with ``_reason``."""
    out: dict[str, Any] = {"method": "docs/methodology.md#drive-model"}
    for f in FIGURES:
        out.update({f: None, f"{f}_uncertainty": None, f"{f}_source": None, f"{f}_reason": None})
    out.update(cliffs=[], segments=[], checks=[])
    rs = sorted((r for r in records if r.phase == "round"), key=lambda r: r.index)
    if pattern != "rnd4k-w":
        for f in FIGURES:
            out[f"{f}_reason"] = "the drive model reads a WSAT of RND 4KiB writes (the PTS default pattern)"
        return DriveModel(out)
    if len(rs) < 2 or capacity_bytes <= 0:
        for f in FIGURES:
            out[f"{f}_reason"] = "fewer than 2 samples"
        return DriveModel(out)
    c = curve(rs, capacity_bytes)
    x, y = c.x, c.iops
    s = _running_median(y, SMOOTH)
    end = float(x[-1] + c.width[-1] / 2)
    cell = float(np.median(c.width))
    out["resolution"] = {"points": int(len(x)), "point_capacity": round(cell, 6),
                         "source": "fio's per-interval IOPS log in every sample" if c.fine else
                                   "the samples (no per-interval log in some samples)"}
    out["written_capacity_multiple"] = round(end, 4)

    # FOB: the curve's first span (after its first point, which holds the start of the first IO)
    lo, hi = int(np.searchsorted(x, x[0] + FOB_SPAN[0])), int(np.searchsorted(x, x[0] + FOB_SPAN[1]))
    first = y[lo:max(hi, lo + 3)] if lo + 3 <= len(y) else y[1:] if len(y) > 1 else y
    fob = float(np.median(first))
    out.update(fob_iops=fob, fob_iops_uncertainty=round(float(np.std(first)) / math.sqrt(len(first)), 1),
               fob_iops_source=f"median from {FOB_SPAN[0]:g} to {FOB_SPAN[1]:g} × capacity written (past the "
                               "first IOs' start)")

    segments = _events(out, c, s, fob, capacity_bytes)
    win = [r for r in rs if r.index in set(window)]
    _steady(out, rs, win, window, steady_iops, capacity_bytes, segments)
    host = _wa(out, win, pages_per_block)
    _checks(out, win, steady_iops, fob, host)
    out["consistent"] = all(ch["ok"] for ch in out["checks"])
    return DriveModel(out)
