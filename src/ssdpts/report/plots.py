"""The report's plots, drawn with matplotlib (Agg; no pyplot state).

Every function draws into the matplotlib ``Figure`` or ``SubFigure`` it is given, so the HTML
writer (one figure per plot, saved as SVG) and the PDF writer (a plot inside a page figure) share
the same drawing code. Nothing here reads files.

Axes are placed with margins in inches (``_grid``) instead of a layout engine: matplotlib's
constrained layout measures every text once more and doubled the time of a report.
"""

from __future__ import annotations

import io
import math
from typing import Sequence

import matplotlib

matplotlib.use("Agg")

from matplotlib import colormaps  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator  # noqa: E402
import numpy as np  # noqa: E402

OK = "#1a7f37"
BAD = "#cf222e"
WARN = "#9a6700"
INK = "#24292f"
GRID = "#d0d7de"

STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.color": GRID,
    "grid.linewidth": 0.6,
    "axes.edgecolor": "#57606a",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 4,
    "svg.fonttype": "none",  # real text in the SVG: smaller, selectable, searchable
    "figure.dpi": 100,
}


def to_svg(draw, size: tuple[float, float], salt: str) -> str:
    """Draw a plot into a new figure and return it as an inline <svg> element. ``salt`` keeps the
    element ids of several SVGs in one HTML document apart."""
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        fig = Figure(figsize=size)
        draw(fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


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


def _inches(fig) -> tuple[float, float]:
    """Width and height of a Figure or SubFigure in inches."""
    dpi = fig.figure.dpi
    return fig.bbox.width / dpi, fig.bbox.height / dpi


def _grid(fig, nrows: int = 1, ncols: int = 1, *, left: float = 0.8, right: float = 0.25, top: float = 0.3,
          bottom: float = 0.5, hgap: float = 0.5, wgap: float = 0.6, **kw):
    """A GridSpec whose margins and gaps are in inches, whatever the size of the figure."""
    w, h = _inches(fig)
    left, right = min(left, 0.3 * w), min(right, 0.45 * w)
    top, bottom = min(top, 0.3 * h), min(bottom, 0.3 * h)
    ah = max((h - top - bottom - (nrows - 1) * hgap) / nrows, 0.2)
    aw = max((w - left - right - (ncols - 1) * wgap) / ncols, 0.2)
    return fig.add_gridspec(nrows, ncols, left=left / w, right=1 - right / w, top=1 - top / h, bottom=bottom / h,
                            hspace=hgap / ah, wspace=wgap / aw, **kw)


def _legend_w(labels, title: str = "") -> float:
    """Inches a legend of these labels needs to the right of the axes."""
    size = matplotlib.rcParams["legend.fontsize"]
    size = size if isinstance(size, (int, float)) else 8
    chars = max([len(str(x)) for x in labels] + [len(title)] + [4])
    return chars * size * 0.58 / 72 + 0.55


def _cmap(n: int, name: str = "viridis") -> list:
    cm = colormaps[name]
    if n <= 1:
        return [cm(0.2)]
    return [cm(0.05 + 0.85 * i / (n - 1)) for i in range(n)]


def _palette(n: int) -> list:
    if n <= 10:
        return [colormaps["tab10"](i) for i in range(n)]
    return _cmap(n, "turbo")


def _int_rounds(ax) -> None:
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _shade_window(ax, window: Sequence[int], reached: bool) -> None:
    if not window:
        return
    color = OK if reached else BAD
    label = "measurement window (steady state)" if reached else "last rounds (steady state NOT reached)"
    ax.axvspan(window[0] - 0.4, window[-1] + 0.4, color=color, alpha=0.08, lw=0, label=label)


def _thousands(ax, axis: str = "y") -> None:
    fmt = FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 10 or v == 0 else f"{v:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def _log_label(v, _=None) -> str:
    if v <= 0:
        return ""
    e = math.log10(v)
    if abs(e - round(e)) > 1e-9:
        return ""
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def _log(ax, axis: str = "y", minor: bool = True, steps_below: float = 1000) -> None:
    """A log axis with plain labels (1, 10, 1,000: no mathtext) and few minor ticks: matplotlib's
    defaults create dozens of labelled minor ticks per axis, which dominate the render time."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    lim = ax.dataLim
    lo, hi = (lim.y0, lim.y1) if axis == "y" else (lim.x0, lim.x1)
    narrow = lo > 0 and np.isfinite(hi) and hi / lo < steps_below  # a short range: label 1-2-5 steps too
    if narrow:
        a.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
        a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:.3g}"))
    else:
        a.set_major_locator(LogLocator(base=10, numticks=8))
        a.set_major_formatter(FuncFormatter(_log_label))
    a.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=8) if minor and not narrow else NullLocator())
    a.set_minor_formatter(NullFormatter())


# ---- convergence ---------------------------------------------------------------------------------

def rounds_lines(fig, panels: list[tuple[str, dict[str, tuple[list, list]], str, bool]], window: Sequence[int],
                 reached: bool) -> None:
    """One panel per entry (title, {label: (rounds, values)}, unit, log y): every series per round."""
    labels = [lab for _, series, _, _ in panels for lab in series]
    labels.append("last rounds (steady state NOT reached)" if window and not reached else "measurement window (steady state)")
    gs = _grid(fig, len(panels), 1, right=_legend_w(labels) + 0.1, top=0.32, hgap=0.55)
    axes = []
    for i in range(len(panels)):
        axes.append(fig.add_subplot(gs[i, 0], sharex=axes[0] if axes else None))
    for ax, (title, series, unit, logy) in zip(axes, panels):
        colors = _palette(len(series))
        _shade_window(ax, window, reached)
        for (label, (xs, ys)), c in zip(series.items(), colors):
            ax.plot(xs, ys, marker="o", color=c, label=label)
        if logy and any(v > 0 for _, ys in series.values() for v in ys):
            _log(ax)
        else:
            ax.set_ylim(bottom=0)
            _thousands(ax)
        ax.set_ylabel(unit)
        ax.set_title(title, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        _int_rounds(ax)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel("round")


def tracking_convergence(fig, variables: list[tuple[str, str, dict]], window: Sequence[int], reached: bool) -> None:
    """Each tracking variable per round, one row each, window shaded."""
    n = max(1, len(variables))
    gs = _grid(fig, n, 1, top=0.32, hgap=0.5)
    axes = []
    for i in range(n):
        axes.append(fig.add_subplot(gs[i, 0], sharex=axes[0] if axes else None))
    for ax, (name, unit, s), c in zip(axes, variables, _palette(n)):
        xs, ys = s.get("rounds") or [], s.get("values") or []
        _shade_window(ax, window, reached)
        ax.plot(xs, ys, marker="o", color=c)
        ax.set_ylim(bottom=0, top=max(ys) * 1.15 if ys else 1)
        _thousands(ax)
        ax.set_ylabel(unit)
        ax.set_title(name, loc="left")
        _int_rounds(ax)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel("round")


# ---- steady-state window -------------------------------------------------------------------------

def ss_window(fig, var: dict) -> None:
    """PTS.md §4: values, average, ±10% and ±20% bands, best-fit line, and a box with allowed vs
    measured range and slope excursion and the fit y = b·x + a."""
    w, h = _inches(fig)
    gs = _grid(fig, 1, 2, width_ratios=[2.2, 1], bottom=0.95, top=0.12, right=0.1, wgap=0.35)
    ax = fig.add_subplot(gs[0, 0])
    box = fig.add_subplot(gs[0, 1])
    box.axis("off")
    x = np.asarray(var["rounds"], dtype=float)
    y = np.asarray(var["values"], dtype=float)
    avg = float(var["average"])
    b, a = float(var["slope"]), float(var["intercept"])
    unit = var.get("unit", "")
    reached = bool(var.get("reached"))
    lo, hi = x[0] - 0.5, x[-1] + 0.5
    ax.fill_between([lo, hi], avg * 0.8, avg * 1.2, color="#0969da", alpha=0.07, lw=0, label="±20% of average")
    ax.fill_between([lo, hi], avg * 0.9, avg * 1.1, color="#0969da", alpha=0.10, lw=0, label="±10% of average")
    for f, ls in ((1.2, ":"), (0.8, ":"), (1.1, "--"), (0.9, "--")):
        ax.axhline(avg * f, color="#0969da", lw=0.8, ls=ls)
    ax.axhline(avg, color=INK, lw=1.2, label=f"average {num(avg)} {unit}")
    ax.plot(x, b * x + a, color=WARN, lw=1.6, ls="-.", label="least-squares best fit")
    ax.plot(x, y, marker="o", markersize=6, color=OK if reached else BAD, lw=1.4, label=var.get("variable", "value"))
    top = max(float(y.max()), avg * 1.2)
    bottom = min(float(y.min()), avg * 0.8)
    pad = 0.08 * (top - bottom or 1)
    ax.set_ylim(max(0.0, bottom - pad), top + pad)
    ax.set_xlim(lo, hi)
    ax.set_xticks(x)
    ax.set_xlabel("round")
    ax.set_ylabel(unit)
    _thousands(ax)
    ax_h = h * (gs.top - gs.bottom)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45 / ax_h), ncol=3, frameon=False)
    rng, rl = float(var["range"]), float(var["range_limit"])
    exc, el = float(var["excursion"]), float(var["excursion_limit"])

    def pct(v):
        return f"{100 * v / avg:.1f}%" if avg else "—"

    mark = {True: "✓ pass", False: "✗ FAIL"}
    lines = [
        ("STEADY STATE REACHED" if reached else "STEADY STATE NOT REACHED", OK if reached else BAD, "bold"),
        (f"rounds {int(x[0])}–{int(x[-1])}", INK, "normal"),
        ("", INK, "normal"),
        ("Range (max − min)", INK, "bold"),
        (f"\u00a0\u00a0allowed ≤ {num(rl)} {unit} (20%)", INK, "normal"),
        (f"\u00a0\u00a0measured {num(rng)} {unit} ({pct(rng)})  {mark[bool(var.get('range_ok'))]}",
         OK if var.get("range_ok") else BAD, "normal"),
        ("Slope excursion |b|·Δx", INK, "bold"),
        (f"\u00a0\u00a0allowed ≤ {num(el)} {unit} (10%)", INK, "normal"),
        (f"\u00a0\u00a0measured {num(exc)} {unit} ({pct(exc)})  {mark[bool(var.get('excursion_ok'))]}",
         OK if var.get("excursion_ok") else BAD, "normal"),
        ("Best-fit line", INK, "bold"),
        (f"\u00a0\u00a0{fit_text(b, a)}", INK, "normal"),
        (f"\u00a0\u00a0average {num(avg)} {unit}", INK, "normal"),
    ]
    box.add_patch(FancyBboxPatch((0.0, 0.0), 1.0, 1.0, boxstyle="round,pad=0.0,rounding_size=0.02",
                                 transform=box.transAxes, facecolor="#f6f8fa", edgecolor=OK if reached else BAD,
                                 lw=1.5))
    n = len(lines)
    for i, (text, color, weight) in enumerate(lines):
        box.text(0.05, 0.95 - i * (0.9 / n), text, transform=box.transAxes, color=color, fontweight=weight,
                 va="top", ha="left", parse_math=False)


# ---- measurement-window results ------------------------------------------------------------------

def iops_vs_bs(fig, bss: list[int], mixes: list[str], z: list[list[float | None]]) -> None:
    """2D plot: IOPS vs block size, one line per R/W mix, log-log (PTS.md §3)."""
    ax = fig.add_subplot(_grid(fig, right=_legend_w(mixes, "R/W mix") + 0.1, top=0.15)[0, 0])
    kib = np.asarray(bss, dtype=float) / 1024
    for j, (mix, c) in enumerate(zip(mixes, _cmap(len(mixes), "plasma"))):
        ys = np.array([np.nan if row[j] is None else row[j] for row in z], dtype=float)
        ax.plot(kib, ys, marker="o", color=c, label=mix)
    ax.set_xscale("log", base=2)
    _log(ax)
    ax.xaxis.set_major_locator(FixedLocator(kib))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("block size (KiB)")
    ax.set_ylabel("IOPS")
    ax.legend(title="R/W mix", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def bars3d(fig, xlabels: list[str], ylabels: list[str], z: list[list[float | None]], zlabel: str, xname: str,
           yname: str, title: str = "", ax=None) -> None:
    """3D bar plot: x = columns (e.g. R/W mix), y = rows (block size), height = value."""
    if ax is None:
        ax = fig.add_subplot(_grid(fig, left=0, right=0.2, top=0, bottom=0.1)[0, 0], projection="3d")
    nx, ny = len(xlabels), len(ylabels)
    xs, ys = np.meshgrid(np.arange(nx), np.arange(ny))
    dz = np.array([[0.0 if v is None else float(v) for v in row] for row in z])
    colors = _cmap(nx, "plasma")
    ax.bar3d(xs.ravel() - 0.3, ys.ravel() - 0.3, np.zeros(nx * ny), 0.6, 0.6, dz.ravel(),
             color=[colors[i] for i in xs.ravel()], shade=True, edgecolor="#00000030", linewidth=0.3)
    ax.set_xticks(range(nx), xlabels)
    ax.set_yticks(range(ny), ylabels)
    ax.set_xlabel(xname, labelpad=6)
    ax.set_ylabel(yname, labelpad=6)
    ax.set_zlabel(zlabel, labelpad=8)
    ax.zaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 10 or v == 0 else f"{v:.2g}"))
    ax.view_init(elev=24, azim=-58)
    ax.set_box_aspect(None, zoom=1.05)
    ax.grid(True)
    if title:
        ax.set_title(title)


def bars3d_pair(fig, xlabels: list[str], ylabels: list[str], za, zb, titles: tuple[str, str]) -> None:
    gs = _grid(fig, 1, 2, left=0, right=0.2, top=0.3, bottom=0.1, wgap=0.3)
    for i, (z, t) in enumerate(((za, titles[0]), (zb, titles[1]))):
        ax = fig.add_subplot(gs[0, i], projection="3d")
        bars3d(fig, xlabels, ylabels, z, "", "R/W mix", "block size", title=t, ax=ax)


def tp_bars(fig, labels: list[str], read: list[float | None], write: list[float | None], flags: list[bool]) -> None:
    """2D throughput plot: read and write MB/s per block size; hatched where steady state was missed."""
    ax = fig.add_subplot(_grid(fig, right=_legend_w(["SEQ write"]) + 0.1, top=0.15)[0, 0])
    x = np.arange(len(labels))
    w = 0.38
    r = [0 if v is None else v for v in read]
    wr = [0 if v is None else v for v in write]
    br = ax.bar(x - w / 2, r, w, label="SEQ read", color="#0969da")
    bw = ax.bar(x + w / 2, wr, w, label="SEQ write", color="#bf3989")
    for bars, vals in ((br, r), (bw, wr)):
        ax.bar_label(bars, labels=[f"{v:,.1f}" for v in vals], padding=2, fontsize=8)
        for bar, flag in zip(bars, flags):
            if flag:
                bar.set_hatch("//")
                bar.set_edgecolor(BAD)
    ax.set_xticks(x, [lab + (" (SS NOT reached)" if f else "") for lab, f in zip(labels, flags)])
    ax.set_xlabel("block size")
    ax.set_ylabel("MB/s (10⁶ B/s)")
    ax.set_ylim(0, max([*r, *wr, 1]) * 1.15)
    _thousands(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def latency_histograms(fig, panels: list[tuple[str, list[tuple[str, dict[int, int]]]]]) -> None:
    """Response-time histograms from fio's json+ bins: one panel per R/W mix, one outline per block
    size (IOs per bin, log-log), and on the right axis each block size's cumulative percentage of
    IOs completed within a time (the confidence curve)."""
    nleg = max(len(cells) for _, cells in panels)
    size = matplotlib.rcParams["legend.fontsize"]
    size = size if isinstance(size, (int, float)) else 8
    gs = _grid(fig, 1, len(panels), left=0.75, right=0.75, top=0.2 + (nleg + 1) * size * 1.45 / 72, bottom=0.5,
               wgap=1.05)
    axes = [fig.add_subplot(gs[0, i]) for i in range(len(panels))]
    for i, (ax, (title, cells)) in enumerate(zip(axes, panels)):
        ax2 = ax.twinx()
        colors = _palette(len(cells))
        lo = min(min(b) for _, b in cells) / 1e3
        hi = max(max(b) for _, b in cells) / 1e3
        if hi <= lo:
            hi = lo * 1.5
        edges = np.geomspace(lo / 1.05, hi * 1.05, 41)
        for (bs, bins), c in zip(cells, colors):
            keys = sorted(bins)
            vals = np.array(keys, dtype=float) / 1e3  # µs
            counts = np.array([bins[k] for k in keys], dtype=float)
            hist, _ = np.histogram(vals, bins=edges, weights=counts)
            ax.stairs(hist, edges, color=c, lw=1.2, fill=False)
            cum = np.cumsum(counts) / counts.sum() * 100
            idx = min(int(np.searchsorted(cum, 99.999 - 1e-9)), len(vals) - 1)
            ax2.step(vals, cum, where="post", color=c, lw=1.0, ls="--",
                     label=f"{bs}: 99.999% ≤ {num(vals[idx])} µs")
        _log(ax, "x", minor=False, steps_below=20)
        _log(ax, "y", minor=False, steps_below=20)
        ax.set_ylim(bottom=0.8)
        ax.set_xlabel("response time (µs)")
        if i == 0:
            ax.set_ylabel("IOs per bin (solid)")
        ax2.set_ylim(0, 101)
        if i == len(panels) - 1:
            ax2.set_ylabel("cumulative % of IOs (dashed)")
        ax2.grid(False)
        ax2.spines["right"].set_visible(True)
        leg = ax2.legend(loc="lower left", bbox_to_anchor=(-0.02, 1.02), frameon=False, ncol=1, borderaxespad=0,
                         title=f"RND {title}", alignment="left")
        leg.get_title().set_fontweight("bold")


def wsat_scatter(fig, x: list[float], y: list[float], xlabel: str, ylabel: str, final: int) -> None:
    """WSAT: one point per sample; the FOB start and the final samples marked."""
    ax = fig.add_subplot(_grid(fig, top=0.15)[0, 0])
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    many = len(xa) > 120
    ax.plot(xa, ya, ls="-" if not many else "none", lw=0.8, color="#8c959f", marker="o",
            markersize=2.2 if many else 3.5, markerfacecolor="#0969da", markeredgewidth=0)
    if final and len(xa) >= final:
        fx = xa[-final:]
        ax.axvspan(fx[0], fx[-1] if fx[-1] > fx[0] else fx[0] * 1.001 + 1e-9, color=OK, alpha=0.12, lw=0,
                   label=f"final {final} samples: average {num(ya[-final:].mean())}")
        ax.axhline(ya[-final:].mean(), color=OK, lw=1, ls="--")
    ax.annotate(f"FOB {num(ya[0])}", (xa[0], ya[0]), xytext=(12, -4), textcoords="offset points", fontsize=8,
                color=INK, arrowprops={"arrowstyle": "-", "color": INK, "lw": 0.6})
    ax.set_ylim(0, max(float(ya.max()), 1e-9) * 1.12)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _thousands(ax)
    if final:
        ax.legend(loc="upper right", frameon=False)


def temperature(fig, t_min: list[float], temp_c: list[float], tests: list[str]) -> None:
    names = list(dict.fromkeys(tests))
    ax = fig.add_subplot(_grid(fig, right=_legend_w(names) + 0.1, top=0.15)[0, 0])
    for name, c in zip(names, _palette(len(names))):
        idx = [i for i, t in enumerate(tests) if t == name]
        ax.plot([t_min[i] for i in idx], [temp_c[i] for i in idx], marker="o", markersize=2.5, lw=1, color=c,
                label=name)
    ax.set_xlabel("elapsed time (minutes of wall clock)")
    ax.set_ylabel("temperature (°C)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

