"""The report's plots: each function describes one plot into the :class:`chart.Figure` it is given
(layout in inches, values, colours, names); templates/chart.js draws it in the page with d3, for
the screen and for the PDF (the same page printed by Chromium). Nothing here reads files.

Interactive data: a layer given ``series=`` (:func:`_s`: name, unit, x name, a note per point) is
one hover / toggle series of the HTML; the page's script knows where it drew every point.
"""

from __future__ import annotations

import math
from typing import Sequence

from .chart import Axes, Figure

OK = "#1a7f37"
BAD = "#cf222e"
WARN = "#9a6700"
INK = "#24292f"
MUTED = "#6e7781"
BLUE = "#0969da"
LEGEND_PT = 8.0  # legend font size (points)


def _s(name: str, unit: str = "", xname: str = "", notes: Sequence[str] | str | None = None) -> dict:
    """A hover / toggle series: its name as the legend shows it, the unit of its values, the name
    of its x values, and a note per point (or a prefix numbered from 1: "sample " → "sample 7")."""
    out: dict = {"n": name, "u": unit, "x": xname}
    if isinstance(notes, str):
        out["ti"] = notes
    elif notes is not None:
        out["t"] = list(notes)
    return out


# ---- formatting ---------------------------------------------------------------------------------------

def num(v: float) -> str:
    """A number for a plot label: 93,381 / 326.5 / 4.84 (no scientific notation)."""
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:,.1f}"
    return f"{v:.3g}"


def fit_text(b: float, a: float) -> str:
    """The best-fit line as the PTS writes it, y = b·x + a, with readable numbers."""
    sb = f"{b:.4g}".replace("-", "−")
    sign = "−" if a < 0 else "+"
    return f"y = {sb}·x {sign} {num(abs(a))}"


def _legend_w(labels, title: str = "") -> float:
    """Inches a legend of these labels needs to the right of the axes."""
    chars = max([len(str(x)) for x in labels] + [len(title)] + [4])
    return chars * LEGEND_PT * 0.6 / 72 + 0.6


def _cmap(n: int, name: str = "viridis") -> list[str]:
    if n <= 1:
        return [f"{name}:0.2"]
    return [f"{name}:{0.05 + 0.85 * i / (n - 1):.4f}" for i in range(n)]


def _palette(n: int) -> list[str]:
    if n <= 10:
        return [f"tab10:{i}" for i in range(n)]
    return _cmap(n, "turbo")


def _tick_label(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:,.4g}"
    return f"{v:.3g}"


def _nice(lo: float, hi: float, n: int) -> list[float]:
    """About n round numbers (steps of 1, 2, 2.5 or 5 × 10^k) from lo to hi."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / max(n, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [k * step for k in range(first, int(math.floor(hi / step + 1e-9)) + 1)]


def log_ticks(lo: float, hi: float, min_ticks: int = 3) -> list[float]:
    """Labelled ticks for a log axis from lo to hi (both > 0): decades when the range spans
    several, else 1-2-5 steps, else 1…9 steps, else evenly spaced round numbers — always at
    least ``min_ticks`` (the LAT convergence plot once had a single tick on a narrow range)."""
    lo, hi = min(lo, hi), max(lo, hi)
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for subs in ((1,), (1, 2, 5), tuple(range(1, 10))):
        ticks = [m * 10.0 ** e for e in range(e0, e1 + 1) for m in subs if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= min_ticks:
            if len(ticks) > 10:  # thin to at most 10 labels, keeping the decades
                keep = max(1, math.ceil(len(ticks) / 10))
                ticks = [t for i, t in enumerate(ticks) if i % keep == 0 or abs(math.log10(t) % 1) < 1e-9]
            return ticks
    for n in range(min_ticks + 1, 13):  # a narrow range (e.g. 31–42 µs): evenly spaced round numbers
        ticks = [t for t in _nice(lo, hi, n) if lo <= t <= hi]
        if len(ticks) >= min_ticks:
            return ticks
    return [lo, hi]


def _log(values: Sequence[float | None], label: str = "", **kw) -> dict:
    """A log axis with plain labels (1, 10, 1,000) and at least three of them, over the range of
    the values (padded by 6% of it on either side)."""
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]
    if not vals:
        return {"scale": "log", "label": label, **kw}
    lo, hi = min(vals), max(vals)
    if hi <= lo:
        lo, hi = lo / 1.5, hi * 1.5
    pad = (hi / lo) ** 0.06
    lo, hi = lo / pad, hi * pad
    ticks = log_ticks(lo, hi)
    return {"scale": "log", "lim": (lo, hi), "ticks": ticks, "labels": [_tick_label(t) for t in ticks], "label": label, **kw}


def _vals(*seqs) -> list[float]:
    return [float(v) for s in seqs for v in s if v is not None and math.isfinite(float(v))]


def _shade_window(ax: Axes, window: Sequence[int], reached: bool) -> None:
    if not window:
        return
    color = OK if reached else BAD
    label = "measurement window (steady state)" if reached else "last rounds (steady state NOT reached)"
    ax.vspan(window[0] - 0.4, window[-1] + 0.4, color=color, alpha=0.08, label=label)


def _overlay_temperature(ax: Axes, xs: Sequence[float], temps: Sequence[float], label: str = "temperature (°C)") -> None:
    """Device temperature on a right-hand axis, dashed grey, so that heating and throttling can be
    read against the performance curve."""
    if not xs:
        return
    lo, hi = min(temps), max(temps)
    ax.y2(lim=(lo - 2 - 0.1 * (hi - lo), hi + 2 + 0.1 * (hi - lo)), label="°C", color=MUTED)
    ax.line(xs, temps, color=MUTED, lw=1.0, ls="--", label=label, y2=True, series=_s(label, "°C"))


# ---- convergence ---------------------------------------------------------------------------------

def rounds_lines(fig: Figure, panels: list[tuple[str, dict[str, tuple[list, list]], str, bool]], window: Sequence[int],
                 reached: bool, notes: dict[str, list[str]] | None = None,
                 temperature: tuple[list, list] | None = None, xlabel: str = "round",
                 dashed: Sequence[str] = ()) -> None:
    """One panel per entry (title, {label: (rounds, values)}, unit, log y): every series per round
    (or per ``xlabel``: then the x values are not rounds). ``notes``: per label, a text per point
    (the step); ``temperature``: (x values, °C) drawn on a right axis of the first panel; ``dashed``:
    labels drawn dashed (a series that may lie on another, e.g. a percentile on the max)."""
    labels = [lab for _, series_, _, _ in panels for lab in series_]
    labels.append("last rounds (steady state NOT reached)" if window and not reached else "measurement window (steady state)")
    boxes = fig.grid(len(panels), 1, right=_legend_w(labels) + (0.55 if temperature else 0.1), top=0.32, hgap=0.6)
    xs_all = _vals(*(xs for _, data, _, _ in panels for xs, _ in data.values()))
    for i, (title, data, unit, logy) in enumerate(panels):
        ax = fig.axes(boxes[i][0])
        colors = _palette(len(data))
        _shade_window(ax, window, reached)
        for (label, (xs, ys)), c in zip(data.items(), colors):
            many = len(xs) > 120  # e.g. WSAT samples: a line without markers
            ax.line(xs, ys, marker=None if many else "o", color=c, label=label, lw=0.8 if many else 1.6,
                    ls="--" if label in dashed else "-",
                    series=_s(label, unit, xlabel if xlabel == "round" else "", (notes or {}).get(label)))
        vals = _vals(*(ys for _, ys in data.values()))
        last = i == len(panels) - 1
        xkw = {"integer": xlabel == "round", "hide": not last, "label": xlabel if last else "",
               "lim": _xlim(xs_all, window)}
        ax.x(**xkw)
        if logy and any(v > 0 for v in vals):
            ax.y(**_log(vals, unit))
        else:
            ax.y(lim=(0, max(vals + [1e-9]) * 1.12), fmt="k", label=unit)
        ax.title(title)
        ax.legend("right")
        if i == 0 and temperature and temperature[0]:
            _overlay_temperature(ax, *temperature)


def _xlim(xs: list[float], window: Sequence[int]) -> tuple[float, float] | None:
    """The x range of panels that share it: the data and the window shading, with 5% margins."""
    vals = xs + ([window[0] - 0.4, window[-1] + 0.4] if window else [])
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.05 or 0.5
    return lo - pad, hi + pad


def tracking_convergence(fig: Figure, variables: list[tuple[str, str, dict]], window: Sequence[int], reached: bool) -> None:
    """Each tracking variable per round, one row each, window shaded."""
    n = max(1, len(variables))
    boxes = fig.grid(n, 1, top=0.32, hgap=0.5)
    xs_all = _vals(*((s.get("rounds") or []) for _, _, s in variables))
    for i, ((name, unit, s), c) in enumerate(zip(variables, _palette(n))):
        ax = fig.axes(boxes[i][0])
        xs, ys = s.get("rounds") or [], s.get("values") or []
        _shade_window(ax, window, reached)
        ax.line(xs, ys, marker="o", color=c, series=_s(name, unit, "round"))
        last = i == n - 1
        ax.x(integer=True, hide=not last, label="round" if last else "", lim=_xlim(xs_all, window))
        ax.y(lim=(0, max(ys) * 1.15 if ys else 1), fmt="k", label=unit)
        ax.title(name)


# ---- steady-state window -------------------------------------------------------------------------

def ss_window(fig: Figure, var: dict, part_reached: bool | None = None) -> None:
    """docs/pts-reference.md#report-header: values, average, ±10% and ±20% bands, best-fit line, and a box with allowed vs
    measured range and slope excursion and the fit y = b·x + a. ``part_reached``: the verdict of
    the whole test (every tracking variable in one window), which the box states."""
    (plot_box, text_box), = fig.grid(1, 2, width_ratios=[1.9, 1.1], bottom=0.95, top=0.15, right=0.1, wgap=0.3)
    ax = fig.axes(plot_box)
    x = [float(v) for v in var["rounds"]]
    y = [float(v) for v in var["values"]]
    avg = float(var["average"])
    b, a = float(var["slope"]), float(var["intercept"])
    unit = var.get("unit", "")
    reached = bool(var.get("reached"))
    whole = reached if part_reached is None else bool(part_reached)
    lo, hi = x[0] - 0.5, x[-1] + 0.5
    ax.band(avg * 0.8, avg * 1.2, color=BLUE, alpha=0.07, label="±20% of average")
    ax.band(avg * 0.9, avg * 1.1, color=BLUE, alpha=0.10, label="±10% of average")
    for f, ls in ((1.2, ":"), (0.8, ":"), (1.1, "--"), (0.9, "--")):
        ax.hline(avg * f, color=BLUE, lw=0.8, ls=ls)
    ax.hline(avg, color=INK, lw=1.2, label=f"average {num(avg)} {unit}")
    ax.line(x, [b * v + a for v in x], color=WARN, lw=1.6, ls="-.", label="least-squares best fit")
    name = var.get("variable", "value")
    ax.line(x, y, marker="o", ms=6, color=OK if reached else BAD, lw=1.4, label=name, series=_s(name, unit, "round"))
    top = max(max(y), avg * 1.2)
    bottom = min(min(y), avg * 0.8)
    pad = 0.08 * (top - bottom or 1)
    ax.x(lim=(lo, hi), ticks=x, labels=[f"{v:.0f}" for v in x], label="round")
    ax.y(lim=(max(0.0, bottom - pad), top + pad), fmt="k", label=unit)
    ax.legend("below", ncol=3, offset=34)  # under the x axis' label
    rng, rl = float(var["range"]), float(var["range_limit"])
    exc, el = float(var["excursion"]), float(var["excursion_limit"])

    def pct(v):
        return f"{100 * v / avg:.1f}%" if avg else "—"

    def verdict(ok: bool, measured: float, limit: float) -> tuple[str, str]:
        # the comparison printed is the one that holds: ≤ when it passes, > when it fails
        return (f"{num(measured)} ≤ {num(limit)}  pass", OK) if ok else (f"{num(measured)} > {num(limit)}  FAIL", BAD)

    if reached and whole:
        head, colour = "STEADY STATE REACHED", OK
    elif reached:
        head, colour = "passes alone — test NOT steady", BAD
    else:
        head, colour = "STEADY STATE NOT REACHED", BAD
    r_text, r_col = verdict(bool(var.get("range_ok")), rng, rl)
    e_text, e_col = verdict(bool(var.get("excursion_ok")), exc, el)
    lines = [
        (head, colour, "bold"),
        (f"rounds {int(x[0])}–{int(x[-1])}, unit {unit}", INK, "normal"),
        ("Range max − min (≤ 20% of avg)", INK, "bold"),
        (f"  {r_text}", r_col, "normal"),
        (f"  measured {pct(rng)} of average", INK, "normal"),
        ("Slope excursion |b|·Δx (≤ 10%)", INK, "bold"),
        (f"  {e_text}", e_col, "normal"),
        (f"  measured {pct(exc)} of average", INK, "normal"),
        ("Best-fit line", INK, "bold"),
        (f"  {fit_text(b, a)}", INK, "normal"),
    ]
    fig.text_box(text_box, lines, colour)


# ---- measurement-window results ------------------------------------------------------------------

def iops_vs_bs(fig: Figure, bss: list[int], mixes: list[str], z: list[list[float | None]]) -> None:
    """2D plot: IOPS vs block size, one line per R/W mix, log-log (docs/pts-reference.md#iops)."""
    ax = fig.axes(fig.grid(right=_legend_w(mixes, "R/W mix") + 0.1, top=0.15)[0][0])
    kib = [b / 1024 for b in bss]
    vals: list[float] = []
    for j, (mix, c) in enumerate(zip(mixes, _cmap(len(mixes), "plasma"))):
        ys = [row[j] for row in z]
        ax.line(kib, ys, marker="o", color=c, label=mix, series=_s(mix, "IOPS", "block size KiB"))
        vals += _vals(ys)
    ax.x(scale="log2", ticks=kib, labels=[f"{v:g}" for v in kib], label="block size (KiB)")
    ax.y(**_log(vals, "IOPS"))
    ax.legend("right", title="R/W mix")


def bars3d(fig: Figure, xlabels: list[str], ylabels: list[str], z: list[list[float | None]], zlabel: str, xname: str,
           yname: str, title: str = "", box: tuple | None = None, unit: str = "") -> None:
    """3D bar plot: x = columns (e.g. R/W mix), y = rows (block size), height = value."""
    if box is None:
        box = fig.grid(left=0, right=0.2, top=0, bottom=0.1)[0][0]
    fig.bars3d(box, xlabels=xlabels, ylabels=ylabels, z=z, zlabel=zlabel, xname=xname, yname=yname,
               colors=_cmap(len(xlabels), "plasma"), title=title, unit=unit or zlabel)


def bars3d_pair(fig: Figure, xlabels: list[str], ylabels: list[str], za, zb, titles: tuple[str, str]) -> None:
    (a, b), = fig.grid(1, 2, left=0, right=0.2, top=0.3, bottom=0.1, wgap=0.3)
    for box, z, t in ((a, za, titles[0]), (b, zb, titles[1])):
        bars3d(fig, xlabels, ylabels, z, "", "R/W mix", "block size", title=t, box=box, unit="µs")


def tp_bars(fig: Figure, labels: list[str], read: list[float | None], write: list[float | None], flags: list[bool]) -> None:
    """2D throughput plot: read and write MB/s per block size; hatched where steady state was missed."""
    ax = fig.axes(fig.grid(right=_legend_w(["SEQ write", "hatched: steady state NOT reached"]) + 0.1,
                           top=0.15, bottom=0.55)[0][0])
    x = list(range(len(labels)))
    w = 0.38
    r = [0 if v is None else v for v in read]
    wr = [0 if v is None else v for v in write]
    for off, vals, name, c in ((-w / 2, r, "SEQ read", BLUE), (w / 2, wr, "SEQ write", "#bf3989")):
        ax.bars([i + off for i in x], vals, w, color=c, label=name, hatch=flags, edge=BAD,
                labels=[f"{v:,.1f}" for v in vals],
                series=_s(name, "MB/s", "block size", [f"block size {lab}" for lab in labels]))
    if any(flags):
        ax.legend_patch("hatched: steady state NOT reached", color="white", hatch=True, edge=BAD)
    ax.categories(labels, label="block size")
    ax.y(lim=(0, max([*r, *wr, 1]) * 1.15), fmt="k", label="MB/s (10⁶ B/s)")
    ax.legend("right")


def latency_histograms(fig: Figure, panels: list[tuple[str, list[tuple[str, dict[int, int]]]]]) -> None:
    """Response-time histograms from fio's json+ bins: one panel per R/W mix, one outline per block
    size (IOs per bin, log-log; 40 log-spaced bins over the range of the panel)."""
    nleg = max(len(cells) for _, cells in panels)
    row, = fig.grid(1, len(panels), left=0.75, right=0.2, top=0.25 + (nleg + 1) * LEGEND_PT * 1.45 / 72,
                    bottom=0.55, wgap=0.75)
    for i, (box, (title, cells)) in enumerate(zip(row, panels)):
        ax = fig.axes(box)
        colors = _palette(len(cells))
        lo = min(min(b) for _, b in cells) / 1e3
        hi = max(max(b) for _, b in cells) / 1e3
        if hi <= lo:
            hi = lo * 1.5
        l0, l1 = math.log(lo / 1.05), math.log(hi * 1.05)
        edges = [math.exp(l0 + (l1 - l0) * k / 40) for k in range(41)]
        counts_all: list[float] = []
        for (bs, bins), c in zip(cells, colors):
            hist = [0] * 40
            for k, n in bins.items():  # fio's bins (ns) into 40 log-spaced bins (µs)
                v = k / 1e3
                j = min(39, max(0, int((math.log(v) - l0) / (l1 - l0) * 40))) if v > 0 else 0
                hist[j] += n
            label = f"{bs}: {sum(bins.values()):,} IOs"
            mids = [math.sqrt(edges[j] * edges[j + 1]) for j in range(40)]
            keep = [j for j in range(40) if hist[j] > 0]
            ax.stairs(hist, edges, color=c, lw=1.2, label=label,
                      series=_s(label, "IOs", "µs", [f"bin {edges[j]:,.4g}–{edges[j + 1]:,.4g} µs" for j in keep]),
                      hover=([mids[j] for j in keep], [hist[j] for j in keep]))
            counts_all += [hist[j] for j in keep]
        ax.x(**_log([lo, hi], "response time (µs)"))
        ax.y(**_log([0.8] + counts_all, "IOs per bin" if i == 0 else ""))
        ax.legend("top", title=f"RND {title}")


def confidence_curves(fig: Figure, cells: list[tuple[str, dict[int, int], float, float | None]], ncols: int = 3) -> None:
    """Confidence curves, one panel per cell (title, json+ bins ns→IOs, max µs, p99.999 µs): the
    share of IOs completed within a response time, on a log(1 − p) axis, so that 99%, 99.9% …
    99.9999% are equally spaced and the tail is visible (a linear 0–100% axis hides it). A curve
    ends at 1 − 1/N: a sample of N IOs says nothing beyond that."""
    n = len(cells)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    grid = fig.grid(nrows, ncols, left=1.1, right=0.15, top=0.3, bottom=0.55, hgap=0.62, wgap=0.3)
    levels = [0, 1, 2, 3, 4, 5, 6]
    names = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
    for i, (title, bins, max_us, p5) in enumerate(cells):
        ax = fig.axes(grid[i // ncols][i % ncols])
        first_col = i % ncols == 0
        bottom_row = i // ncols == nrows - 1 or i + ncols >= n
        ax.y(lim=(0, 6.3), ticks=levels, labels=names, hide=not first_col, label="IOs completed" if first_col else "")
        keys = sorted(bins)
        if not keys:
            ax.title(f"{title}: no IOs")
            continue
        counts = [bins[k] for k in keys]
        total = float(sum(counts))
        cum, run = [], 0
        for c in counts:
            run += c
            cum.append(run)
        # each bin's value is where that share of IOs has completed; the last point (1.0) is the max
        x = [k / 1e3 for k in keys[:-1]] + [min(keys[-1] / 1e3, max_us) if max_us else keys[-1] / 1e3]
        y = [-math.log10(min(max(1 - c / total, 1 / (total * 10)), 1)) for c in cum]
        y[-1] = math.log10(total)  # all IOs: the curve ends at 1 − 1/N
        ax.line(x, [100 * c / total for c in cum], at=y, step=True, color=BLUE, lw=1.2,
                series=_s(title, "% of IOs", "µs", [f"{int(c):,} of {int(total):,} IOs" for c in cum]))
        ax.line([x[-1]], [y[-1]], ls="none", marker="^", color=BAD, ms=5)
        if p5 is not None:
            ax.vline(p5, color=WARN, lw=0.8, ls="--")
        ax.x(**_log(x, "response time (µs)" if bottom_row else ""))
        ax.title(f"{title} ({int(total):,} IOs)", size=8.5)


def wsat_scatter(fig: Figure, x: list[float], y: list[float], xlabel: str, ylabel: str, final: int,
                 notes: list[str] | None = None, unit: str = "", temperature: tuple[list, list] | None = None,
                 xname: str = "") -> None:
    """WSAT: one point per sample; the FOB (first) sample and the final samples marked; their
    labels go in the legend beside the axes, never over the data."""
    right = _legend_w([f"final {final} samples: average 1,000,000.0", "FOB (first sample) 1,000,000"]) + \
        (0.6 if temperature else 0.1)
    ax = fig.axes(fig.grid(top=0.15, right=right)[0][0])
    ser = _s(ylabel, unit, xname or xlabel, notes)
    if len(x) > 240:  # a day of samples: one thin line (a path) instead of a marker per sample
        ax.line(x, y, lw=0.7, color=BLUE, label=ylabel, series=ser)
    else:
        ax.line(x, y, ls="-" if len(x) <= 120 else "none", lw=0.8, color="#8c959f", marker="o",
                ms=3.5 if len(x) <= 120 else 2.2, mfc=BLUE, label=ylabel, series=ser)
    ax.line(x[:1], y[:1], ls="none", marker="*", ms=9, color=WARN, label=f"FOB (first sample) {num(y[0])}")
    if final and len(x) >= final:
        fx = x[-final:]
        avg = sum(y[-final:]) / final
        ax.vspan(fx[0], fx[-1] if fx[-1] > fx[0] else fx[0] * 1.001 + 1e-9, color=OK, alpha=0.12,
                 label=f"final {final} samples: average {num(avg)}")
        ax.hline(avg, color=OK, lw=1, ls="--")
    ax.x(label=xlabel, fmt="k")
    ax.y(lim=(0, max(max(y), 1e-9) * 1.1), fmt="k", label=ylabel)
    if temperature and temperature[0]:
        _overlay_temperature(ax, *temperature)
    ax.legend("right")


def temperature(fig: Figure, t_min: list[float], temp_c: list[float], tests: list[str]) -> None:
    names = list(dict.fromkeys(tests))
    ax = fig.axes(fig.grid(right=_legend_w(names) + 0.1, top=0.15)[0][0])
    for name, c in zip(names, _palette(len(names))):
        idx = [i for i, t in enumerate(tests) if t == name]
        ax.line([t_min[i] for i in idx], [temp_c[i] for i in idx], marker="o", ms=2.5, lw=1, color=c, label=name,
                series=_s(name, "°C", "minute"))
    ax.x(label="elapsed time (minutes of wall clock)")
    ax.y(label="temperature (°C)")
    ax.legend("right")
