"""The report's plots, drawn with matplotlib (Agg; no pyplot state) into inline SVG.

Every function draws into the matplotlib ``Figure`` it is given; the HTML and the PDF (the same
HTML printed by Chromium) show the same SVG. Nothing here reads files.

Interactive data: a plot function hands every data series it draws to :func:`series` (name,
unit, the values, a note per point). :func:`render` gives each series' artists an SVG id and
returns, next to the SVG, every point's position in SVG coordinates with its exact value, so
that the report's script shows values on hover and toggles series without any plotting code of
its own. Legend entries of a series get the id ``<series id>-leg``.

Axes are placed with margins in inches (``_grid``) instead of a layout engine: matplotlib's
constrained layout measures every text once more and doubled the time of a report.
"""

from __future__ import annotations

from dataclasses import dataclass
import io
import math
import os
from typing import Any, Callable, Sequence

import matplotlib

matplotlib.use("Agg")

from matplotlib import colormaps  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter, NullLocator  # noqa: E402
import numpy as np  # noqa: E402

OK = "#1a7f37"
BAD = "#cf222e"
WARN = "#9a6700"
INK = "#24292f"
GRID = "#d0d7de"
MUTED = "#6e7781"

STYLE = {
    "font.size": 9,
    "font.family": ["DejaVu Sans"],
    "axes.titlesize": 9.5,
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
    "text.parse_math": False,  # device strings may hold '$': never mathtext
}


# ---- interactive series ----------------------------------------------------------------------------

@dataclass
class _Series:
    ax: Any
    artists: list
    name: str
    xs: list
    ys: list  # the values shown on hover
    at: list | None  # where the points are drawn, when that is not ys (e.g. a transformed axis)
    unit: str
    xname: str
    notes: list | None
    gid: str = ""


def series(ax, artists, name: str, xs: Sequence, ys: Sequence, *, unit: str = "", xname: str = "",
           notes: Sequence[str] | str | None = None, at: Sequence[float] | None = None) -> None:
    """Register a drawn series for hover and toggling: its artists (a Line2D, a bar container or a
    list of artists), its name as the legend shows it, its points and their values (``at``: the
    y where each point is drawn, when the axis shows a transform of the value), and ``notes``: one
    text per point (e.g. the round and step), or a prefix numbered from 1 ("sample " → "sample 7")."""
    reg = getattr(ax.figure, "_ssdpts_series", None)
    if reg is None:
        return  # drawn outside render() (e.g. a test): nothing to record
    if hasattr(artists, "patches"):
        arts = list(artists.patches)
    elif isinstance(artists, (list, tuple)):
        arts = list(artists)
    else:
        arts = [artists]
    reg.append(_Series(ax, arts, str(name), list(xs), list(ys), None if at is None else list(at), unit, xname,
                       notes if notes is None or isinstance(notes, str) else list(notes)))


@dataclass
class Rendered:
    svg: str
    data: dict | None  # {"w", "h", "s": [{"g": id, "n": name, "u": unit, "x": x name, "p": [[sx, sy, x, y]...], "t": notes}]}


def render(draw: Callable[[Any], None], size: tuple[float, float], salt: str, mark: str | None = None) -> Rendered:
    """Draw a plot into a new figure: its inline <svg> element (``salt`` keeps the element ids of
    several SVGs in one document apart) and its interactive data. ``mark``: a note printed in the
    figure's lower-left corner (e.g. "not PTS compliant")."""
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        fig = Figure(figsize=size)
        fig._ssdpts_series = []  # type: ignore[attr-defined]
        draw(fig)
        if mark:
            fig.text(0.006, 0.008, mark, ha="left", va="bottom", fontsize=7, fontweight="bold", color=WARN)
        reg: list[_Series] = fig._ssdpts_series  # type: ignore[attr-defined]
        for i, s in enumerate(reg):
            s.gid = f"{salt}-s{i}"
            if len(s.artists) == 1:
                s.artists[0].set_gid(s.gid)
            else:  # several artists (bars): "<id>.<n>"
                for j, a in enumerate(s.artists):
                    a.set_gid(f"{s.gid}.{j}")
        _legend_ids(fig, reg)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        data = _hover_data(fig, reg)
    text = buf.getvalue()
    return Rendered(text[text.index("<svg"):], data)


def to_svg(draw, size: tuple[float, float], salt: str) -> str:
    """The inline <svg> of a plot (no interactive data)."""
    return render(draw, size, salt).svg


def _legend_ids(fig, reg: list[_Series]) -> None:
    by_name: dict[str, str] = {}
    for s in reg:
        by_name.setdefault(s.name, s.gid)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    for leg in legends:
        for text, handle in zip(leg.get_texts(), leg.legend_handles):
            gid = by_name.get(text.get_text())
            if gid and handle is not None:
                text.set_gid(f"{gid}-leg")
                handle.set_gid(f"{gid}-legh")


def _hover_data(fig, reg: list[_Series]) -> dict | None:
    if not reg:
        return None
    w_in, h_in = fig.get_size_inches()
    k = 72.0 / fig.dpi  # display pixels -> SVG points
    h_svg = h_in * 72.0
    out = []
    for s in reg:
        x = np.asarray([np.nan if v is None else float(v) for v in s.xs], dtype=float)
        y = np.asarray([np.nan if v is None else float(v) for v in s.ys], dtype=float)
        yat = y if s.at is None else np.asarray([np.nan if v is None else float(v) for v in s.at], dtype=float)
        ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(yat)
        if s.ax.get_yscale() == "log":
            ok &= yat > 0
        if s.ax.get_xscale() == "log":
            ok &= x > 0
        if not ok.any():
            continue
        disp = s.ax.transData.transform(np.column_stack([x[ok], yat[ok]]))
        pts = [[round(float(dx) * k, 1), round(h_svg - float(dy) * k, 1), _j(float(f"{xv:.6g}")), _j(yv)]
               for (dx, dy), xv, yv in zip(disp, x[ok], y[ok])]
        item: dict[str, Any] = {"g": s.gid, "n": s.name, "u": s.unit, "x": s.xname, "p": pts}
        if isinstance(s.notes, str):
            item["ti"] = s.notes
        elif s.notes is not None:
            item["t"] = [n for n, keep in zip(s.notes, ok) if keep]
        out.append(item)
    return {"w": round(w_in * 72, 1), "h": round(h_svg, 1), "s": out} if out else None


def _j(v: float) -> float | int:
    """A number for the JSON data: integers as integers, else the float itself (exact)."""
    f = float(v)
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def render_many(jobs: list[tuple[str, Callable, tuple[float, float], str | None]]) -> dict[str, Rendered]:
    """Render several plots (id, draw, size, mark), in forked worker processes when that is safe
    (fork, no other threads, more than one CPU) and worth it: each plot costs 0.05–0.3 s of CPU in
    matplotlib, which is most of a report's render time."""
    workers = _workers(len(jobs))
    if workers <= 1:
        return {pid: render(draw, size, pid, mark) for pid, draw, size, mark in jobs}
    import multiprocessing
    import pickle

    ctx = multiprocessing.get_context("fork")
    # the costly plots first, dealt round-robin: each process gets a similar share
    order = sorted(range(len(jobs)), key=lambda i: -_cost(jobs[i]))
    shares = [order[w::workers] for w in range(workers)]
    pipes, procs = [], []
    for share in shares[1:]:
        recv, send = ctx.Pipe(duplex=False)

        def child(share=share, send=send) -> None:
            try:
                out = {jobs[i][0]: render(jobs[i][1], jobs[i][2], jobs[i][0], jobs[i][3]) for i in share}
                send.send_bytes(pickle.dumps(("ok", out)))
            except BaseException as exc:  # noqa: BLE001 (the parent draws the share itself, with a traceback)
                send.send_bytes(pickle.dumps(("error", repr(exc))))
            finally:
                send.close()

        p = ctx.Process(target=child, daemon=True)
        try:
            p.start()
        except (OSError, AssertionError):
            shares[0] += share
            continue
        send.close()
        pipes.append((recv, share))
        procs.append(p)
    result = {jobs[i][0]: render(jobs[i][1], jobs[i][2], jobs[i][0], jobs[i][3]) for i in shares[0]}
    for (recv, share), p in zip(pipes, procs):
        try:
            status, out = pickle.loads(recv.recv_bytes())
        except (EOFError, OSError):
            status, out = "error", None
        p.join()
        if status == "ok":
            result.update(out)
        else:
            result.update({jobs[i][0]: render(jobs[i][1], jobs[i][2], jobs[i][0], jobs[i][3]) for i in share})
    return result


PARALLEL = True


def _workers(n_jobs: int) -> int:
    import threading

    if not PARALLEL or n_jobs < 4 or not hasattr(os, "fork") or threading.active_count() != 1:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4, n_jobs // 2))


def _cost(job) -> float:
    w, h = job[2]
    fn = getattr(job[1], "func", job[1])
    return w * h * {"bars3d_pair": 3.0, "bars3d": 2.0, "confidence_curves": 3.0, "rounds_lines": 1.5}.get(
        getattr(fn, "__name__", ""), 1.0)


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


def _inches(fig) -> tuple[float, float]:
    """Width and height of a Figure or SubFigure in inches."""
    dpi = fig.figure.dpi
    return fig.bbox.width / dpi, fig.bbox.height / dpi


def _grid(fig, nrows: int = 1, ncols: int = 1, *, left: float = 0.8, right: float = 0.25, top: float = 0.3,
          bottom: float = 0.55, hgap: float = 0.5, wgap: float = 0.6, **kw):
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
    return chars * size * 0.6 / 72 + 0.6


def _cmap(n: int, name: str = "viridis") -> list:
    cm = colormaps[name]
    if n <= 1:
        return [cm(0.2)]
    return [cm(0.05 + 0.85 * i / (n - 1)) for i in range(n)]


def _palette(n: int) -> list:
    if n <= 10:
        return [colormaps["tab10"](i) for i in range(n)]
    return _cmap(n, "turbo")


# A 2D axes' title sits at its top edge: none of these plots has ticks, an axis label or an offset text
# above its axes, so matplotlib's automatic title placement (it measures every y tick label once more
# at each draw, a tenth of a plot's time) would not move it; y given explicitly turns it off.
TITLE_Y = 1.0


def _int_rounds(ax) -> None:
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=12))


def _shade_window(ax, window: Sequence[int], reached: bool) -> None:
    if not window:
        return
    color = OK if reached else BAD
    label = "measurement window (steady state)" if reached else "last rounds (steady state NOT reached)"
    ax.axvspan(window[0] - 0.4, window[-1] + 0.4, color=color, alpha=0.08, lw=0, label=label)


def _thousands(ax, axis: str = "y") -> None:
    fmt = FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 10 or v == 0 else f"{v:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def _tick_label(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:,.4g}"
    return f"{v:.3g}"


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
    return [float(t) for t in MaxNLocator(nbins=min_ticks + 1, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
            if lo <= t <= hi] or [lo, hi]


def _log(ax, axis: str = "y", values: Sequence[float] | None = None) -> None:
    """A log axis with plain labels (1, 10, 1,000: no mathtext) and at least three of them, from
    the data's range: matplotlib's defaults label dozens of minor ticks (slow) or, on a narrow
    range, none at all."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    if values is None:
        lim = ax.dataLim
        vals = [lim.y0, lim.y1] if axis == "y" else [lim.x0, lim.x1]
    else:
        vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    vals = [v for v in vals if v > 0 and np.isfinite(v)]
    if not vals:
        return
    lo, hi = min(vals), max(vals)
    if hi <= lo:
        lo, hi = lo / 1.5, hi * 1.5
    pad = (hi / lo) ** 0.06
    lo, hi = lo / pad, hi * pad
    (ax.set_ylim if axis == "y" else ax.set_xlim)(lo, hi)
    a.set_major_locator(FixedLocator(log_ticks(lo, hi)))
    a.set_major_formatter(FuncFormatter(lambda v, _: _tick_label(v)))
    a.set_minor_locator(NullLocator())
    a.set_minor_formatter(NullFormatter())


def _legend_right(ax, **kw):
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0, **kw)


def _overlay_temperature(ax, xs: Sequence[float], temps: Sequence[float], label: str = "temperature (°C)") -> None:
    """Device temperature on a right-hand axis, dashed grey, so that heating and throttling can be
    read against the performance curve."""
    if not xs:
        return
    ax2 = ax.twinx()
    ax2.grid(False)
    ax2.spines["right"].set_visible(True)
    line, = ax2.plot(xs, temps, color=MUTED, lw=1.0, ls="--", label=label)
    ax2.set_ylabel("°C", color=MUTED)
    ax2.tick_params(axis="y", colors=MUTED)
    lo, hi = min(temps), max(temps)
    ax2.set_ylim(lo - 2 - 0.1 * (hi - lo), hi + 2 + 0.1 * (hi - lo))
    series(ax2, line, label, xs, temps, unit="°C")


# ---- convergence ---------------------------------------------------------------------------------

def rounds_lines(fig, panels: list[tuple[str, dict[str, tuple[list, list]], str, bool]], window: Sequence[int],
                 reached: bool, notes: dict[str, list[str]] | None = None,
                 temperature: tuple[list, list] | None = None, xlabel: str = "round",
                 dashed: Sequence[str] = ()) -> None:
    """One panel per entry (title, {label: (rounds, values)}, unit, log y): every series per round
    (or per ``xlabel``: then the x values are not rounds). ``notes``: per label, a text per point
    (the step); ``temperature``: (x values, °C) drawn on a right axis of the first panel; ``dashed``:
    labels drawn dashed (a series that may lie on another, e.g. a percentile on the max)."""
    labels = [lab for _, series_, _, _ in panels for lab in series_]
    labels.append("last rounds (steady state NOT reached)" if window and not reached else "measurement window (steady state)")
    gs = _grid(fig, len(panels), 1, right=_legend_w(labels) + (0.55 if temperature else 0.1), top=0.32, hgap=0.6)
    axes = []
    for i in range(len(panels)):
        axes.append(fig.add_subplot(gs[i, 0], sharex=axes[0] if axes else None))
    for ax, (title, data, unit, logy) in zip(axes, panels):
        colors = _palette(len(data))
        _shade_window(ax, window, reached)
        for (label, (xs, ys)), c in zip(data.items(), colors):
            many = len(xs) > 120  # e.g. WSAT samples: a line without markers
            line, = ax.plot(xs, ys, marker=None if many else "o", color=c, label=label, lw=0.8 if many else None,
                            ls="--" if label in dashed else "-")
            series(ax, line, label, xs, ys, unit=unit, xname=xlabel if xlabel == "round" else "",
                   notes=(notes or {}).get(label))
        vals = [v for _, ys in data.values() for v in ys if v is not None]
        if logy and any(v > 0 for v in vals):
            _log(ax, values=vals)
        else:
            ax.set_ylim(bottom=0, top=max(vals + [1e-9]) * 1.12)
            _thousands(ax)
        ax.set_ylabel(unit)
        ax.set_title(title, loc="left", y=TITLE_Y)
        _legend_right(ax, borderpad=0 if not temperature else 0.2)
        if xlabel == "round":
            _int_rounds(ax)
    if temperature and temperature[0]:
        _overlay_temperature(axes[0], *temperature)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel(xlabel)


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
        line, = ax.plot(xs, ys, marker="o", color=c)
        series(ax, line, name, xs, ys, unit=unit, xname="round")
        ax.set_ylim(bottom=0, top=max(ys) * 1.15 if ys else 1)
        _thousands(ax)
        ax.set_ylabel(unit)
        ax.set_title(name, loc="left", y=TITLE_Y)
        _int_rounds(ax)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel("round")


# ---- steady-state window -------------------------------------------------------------------------

def ss_window(fig, var: dict, part_reached: bool | None = None) -> None:
    """PTS.md §4: values, average, ±10% and ±20% bands, best-fit line, and a box with allowed vs
    measured range and slope excursion and the fit y = b·x + a. ``part_reached``: the verdict of
    the whole test (every tracking variable in one window), which the box states."""
    w, h = _inches(fig)
    gs = _grid(fig, 1, 2, width_ratios=[1.9, 1.1], bottom=0.95, top=0.15, right=0.1, wgap=0.3)
    ax = fig.add_subplot(gs[0, 0])
    box = fig.add_subplot(gs[0, 1])
    box.axis("off")
    x = np.asarray(var["rounds"], dtype=float)
    y = np.asarray(var["values"], dtype=float)
    avg = float(var["average"])
    b, a = float(var["slope"]), float(var["intercept"])
    unit = var.get("unit", "")
    reached = bool(var.get("reached"))
    whole = reached if part_reached is None else bool(part_reached)
    lo, hi = x[0] - 0.5, x[-1] + 0.5
    ax.fill_between([lo, hi], avg * 0.8, avg * 1.2, color="#0969da", alpha=0.07, lw=0, label="±20% of average")
    ax.fill_between([lo, hi], avg * 0.9, avg * 1.1, color="#0969da", alpha=0.10, lw=0, label="±10% of average")
    for f, ls in ((1.2, ":"), (0.8, ":"), (1.1, "--"), (0.9, "--")):
        ax.axhline(avg * f, color="#0969da", lw=0.8, ls=ls)
    ax.axhline(avg, color=INK, lw=1.2, label=f"average {num(avg)} {unit}")
    ax.plot(x, b * x + a, color=WARN, lw=1.6, ls="-.", label="least-squares best fit")
    name = var.get("variable", "value")
    line, = ax.plot(x, y, marker="o", markersize=6, color=OK if reached else BAD, lw=1.4, label=name)
    series(ax, line, name, x, y, unit=unit, xname="round")
    top = max(float(y.max()), avg * 1.2)
    bottom = min(float(y.min()), avg * 0.8)
    pad = 0.08 * (top - bottom or 1)
    ax.set_ylim(max(0.0, bottom - pad), top + pad)
    ax.set_xlim(lo, hi)
    ax.set_xticks(x)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}"))
    ax.set_xlabel("round")
    ax.set_ylabel(unit)
    _thousands(ax)
    ax_h = h * (gs.top - gs.bottom)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45 / ax_h), ncol=3, frameon=False)
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
    box.add_patch(FancyBboxPatch((0.0, 0.0), 1.0, 1.0, boxstyle="round,pad=0.0,rounding_size=0.02",
                                 transform=box.transAxes, facecolor="#f6f8fa", edgecolor=colour, lw=1.5))
    # the text size that fits the box: the longest line at 0.6 em per character
    box_w_in = w * (gs.right - gs.left) * 1.1 / 3.0 * 0.92
    longest = max(len(t) for t, _, _ in lines)
    size = max(5.5, min(8.0, box_w_in * 72 / (0.6 * longest)))
    n = len(lines)
    for i, (text, color, weight) in enumerate(lines):
        box.text(0.04, 0.96 - i * (0.92 / n), text, transform=box.transAxes, color=color, fontweight=weight,
                 va="top", ha="left", fontsize=size)


# ---- measurement-window results ------------------------------------------------------------------

def iops_vs_bs(fig, bss: list[int], mixes: list[str], z: list[list[float | None]]) -> None:
    """2D plot: IOPS vs block size, one line per R/W mix, log-log (PTS.md §3)."""
    ax = fig.add_subplot(_grid(fig, right=_legend_w(mixes, "R/W mix") + 0.1, top=0.15)[0, 0])
    kib = np.asarray(bss, dtype=float) / 1024
    vals = []
    for j, (mix, c) in enumerate(zip(mixes, _cmap(len(mixes), "plasma"))):
        ys = np.array([np.nan if row[j] is None else row[j] for row in z], dtype=float)
        line, = ax.plot(kib, ys, marker="o", color=c, label=mix)
        series(ax, line, mix, kib, ys, unit="IOPS", xname="block size KiB")
        vals += [v for v in ys if np.isfinite(v)]
    ax.set_xscale("log", base=2)
    _log(ax, values=vals)
    ax.xaxis.set_major_locator(FixedLocator(kib))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("block size (KiB)")
    ax.set_ylabel("IOPS")
    _legend_right(ax, title="R/W mix")


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
    ax.set_box_aspect(None, zoom=1.0)
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
    ax = fig.add_subplot(_grid(fig, right=_legend_w(["SEQ write", "hatched: steady state NOT reached"]) + 0.1,
                               top=0.15, bottom=0.55)[0, 0])
    x = np.arange(len(labels))
    w = 0.38
    r = [0 if v is None else v for v in read]
    wr = [0 if v is None else v for v in write]
    br = ax.bar(x - w / 2, r, w, label="SEQ read", color="#0969da")
    bw = ax.bar(x + w / 2, wr, w, label="SEQ write", color="#bf3989")
    for bars, vals, name in ((br, r, "SEQ read"), (bw, wr, "SEQ write")):
        ax.bar_label(bars, labels=[f"{v:,.1f}" for v in vals], padding=2, fontsize=7.5)
        for bar, flag in zip(bars, flags):
            if flag:
                bar.set_hatch("//")
                bar.set_edgecolor(BAD)
        series(ax, list(bars.patches), name, [b.get_x() + b.get_width() / 2 for b in bars.patches], vals,
               unit="MB/s", xname="block size", notes=[f"block size {lab}" for lab in labels])
    ax.set_xticks(x, labels)
    if any(flags):
        ax.bar(x[:1], [0], 0, color="white", hatch="//", edgecolor=BAD, label="hatched: steady state NOT reached")
    ax.set_xlabel("block size")
    ax.set_ylabel("MB/s (10⁶ B/s)")
    ax.set_ylim(0, max([*r, *wr, 1]) * 1.15)
    _thousands(ax)
    _legend_right(ax)


def latency_histograms(fig, panels: list[tuple[str, list[tuple[str, dict[int, int]]]]]) -> None:
    """Response-time histograms from fio's json+ bins: one panel per R/W mix, one outline per block
    size (IOs per bin, log-log; 40 log-spaced bins over the range of the panel)."""
    nleg = max(len(cells) for _, cells in panels)
    size = matplotlib.rcParams["legend.fontsize"]
    size = size if isinstance(size, (int, float)) else 8
    gs = _grid(fig, 1, len(panels), left=0.75, right=0.2, top=0.25 + (nleg + 1) * size * 1.45 / 72, bottom=0.55,
               wgap=0.75)
    axes = [fig.add_subplot(gs[0, i]) for i in range(len(panels))]
    for i, (ax, (title, cells)) in enumerate(zip(axes, panels)):
        colors = _palette(len(cells))
        lo = min(min(b) for _, b in cells) / 1e3
        hi = max(max(b) for _, b in cells) / 1e3
        if hi <= lo:
            hi = lo * 1.5
        edges = np.geomspace(lo / 1.05, hi * 1.05, 41)
        counts_all = []
        for (bs, bins), c in zip(cells, colors):
            keys = sorted(bins)
            vals = np.array(keys, dtype=float) / 1e3  # µs
            counts = np.array([bins[k] for k in keys], dtype=float)
            hist, _ = np.histogram(vals, bins=edges, weights=counts)
            label = f"{bs}: {int(counts.sum()):,} IOs"
            st = ax.stairs(hist, edges, color=c, lw=1.2, fill=False, label=label)
            mids = np.sqrt(edges[:-1] * edges[1:])
            keep = hist > 0
            series(ax, st, label, mids[keep], hist[keep], unit="IOs", xname="µs",
                   notes=[f"bin {edges[j]:,.4g}–{edges[j + 1]:,.4g} µs" for j in np.flatnonzero(keep)])
            counts_all += list(hist[hist > 0])
        _log(ax, "x", values=[lo, hi])
        _log(ax, "y", values=[0.8] + counts_all)
        ax.set_xlabel("response time (µs)")
        if i == 0:
            ax.set_ylabel("IOs per bin")
        leg = ax.legend(loc="lower left", bbox_to_anchor=(-0.02, 1.02), frameon=False, ncol=1, borderaxespad=0,
                        title=f"RND {title}", alignment="left")
        leg.get_title().set_fontweight("bold")


def confidence_curves(fig, cells: list[tuple[str, dict[int, int], float, float | None]], ncols: int = 3) -> None:
    """Confidence curves, one panel per cell (title, json+ bins ns→IOs, max µs, p99.999 µs): the
    share of IOs completed within a response time, on a log(1 − p) axis, so that 99%, 99.9% …
    99.9999% are equally spaced and the tail is visible (a linear 0–100% axis hides it). A curve
    ends at 1 − 1/N: a sample of N IOs says nothing beyond that."""
    n = len(cells)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    gs = _grid(fig, nrows, ncols, left=1.1, right=0.15, top=0.3, bottom=0.55, hgap=0.62, wgap=0.3)
    levels = [0, 1, 2, 3, 4, 5, 6]
    names = {0: "0%", 1: "90%", 2: "99%", 3: "99.9%", 4: "99.99%", 5: "99.999%", 6: "99.9999%"}
    axes = []
    for i, (title, bins, max_us, p5) in enumerate(cells):
        ax = fig.add_subplot(gs[i // ncols, i % ncols])
        axes.append(ax)
        keys = sorted(bins)
        if not keys:
            ax.set_title(f"{title}: no IOs", loc="left", y=TITLE_Y)
            continue
        vals = np.array(keys, dtype=float) / 1e3
        counts = np.array([bins[k] for k in keys], dtype=float)
        total = counts.sum()
        cum = np.cumsum(counts) / total
        # each bin's value is where that share of IOs has completed; the last point (1.0) is the max
        x = np.append(vals[:-1], min(vals[-1], max_us) if max_us else vals[-1])
        y = -np.log10(np.clip(1 - cum, 1 / (total * 10), 1))
        y[-1] = math.log10(total)  # all IOs: the curve ends at 1 − 1/N
        line, = ax.step(x, y, where="post", color="#0969da", lw=1.2)
        series(ax, line, title, x, 100 * cum, unit="% of IOs", xname="µs", at=y,
               notes=[f"{int(c):,} of {int(total):,} IOs" for c in np.cumsum(counts)])
        ax.plot([x[-1]], [y[-1]], marker="^", color=BAD, ms=5)
        if p5 is not None:
            ax.axvline(p5, color=WARN, lw=0.8, ls="--")
        _log(ax, "x", values=list(x))
        ax.set_title(f"{title} ({int(total):,} IOs)", loc="left", fontsize=8.5, y=TITLE_Y)
        if i % ncols == 0:
            ax.set_ylabel("IOs completed")
        else:
            ax.tick_params(labelleft=False)
        if i // ncols == nrows - 1 or i + ncols >= n:
            ax.set_xlabel("response time (µs)")
    for ax in axes:
        ax.set_ylim(0, 6.3)
        ax.yaxis.set_major_locator(FixedLocator(levels))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: names.get(int(round(v)), "")))


def wsat_scatter(fig, x: list[float], y: list[float], xlabel: str, ylabel: str, final: int,
                 notes: list[str] | None = None, unit: str = "", temperature: tuple[list, list] | None = None,
                 xname: str = "") -> None:
    """WSAT: one point per sample; the FOB (first) sample and the final samples marked; their
    labels go in the legend beside the axes, never over the data."""
    right = _legend_w([f"final {final} samples: average 1,000,000.0", "FOB (first sample) 1,000,000"]) + \
        (0.6 if temperature else 0.1)
    ax = fig.add_subplot(_grid(fig, top=0.15, right=right)[0, 0])
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if len(xa) > 240:  # a day of samples: one thin line (a path) instead of a marker per sample
        line, = ax.plot(xa, ya, lw=0.7, color="#0969da", label=ylabel)
    else:
        line, = ax.plot(xa, ya, ls="-" if len(xa) <= 120 else "none", lw=0.8, color="#8c959f", marker="o",
                        markersize=3.5 if len(xa) <= 120 else 2.2, markerfacecolor="#0969da", markeredgewidth=0,
                        label=ylabel)
    series(ax, line, ylabel, xa, ya, unit=unit, xname=xname or xlabel, notes=notes)
    ax.plot(xa[:1], ya[:1], ls="none", marker="*", ms=9, color=WARN, label=f"FOB (first sample) {num(ya[0])}")
    if final and len(xa) >= final:
        fx = xa[-final:]
        ax.axvspan(fx[0], fx[-1] if fx[-1] > fx[0] else fx[0] * 1.001 + 1e-9, color=OK, alpha=0.12, lw=0,
                   label=f"final {final} samples: average {num(ya[-final:].mean())}")
        ax.axhline(ya[-final:].mean(), color=OK, lw=1, ls="--")
    ax.set_ylim(0, max(float(ya.max()), 1e-9) * 1.1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _thousands(ax)
    if temperature and temperature[0]:
        _overlay_temperature(ax, *temperature)
    _legend_right(ax)


def temperature(fig, t_min: list[float], temp_c: list[float], tests: list[str]) -> None:
    names = list(dict.fromkeys(tests))
    ax = fig.add_subplot(_grid(fig, right=_legend_w(names) + 0.1, top=0.15)[0, 0])
    for name, c in zip(names, _palette(len(names))):
        idx = [i for i, t in enumerate(tests) if t == name]
        xs, ys = [t_min[i] for i in idx], [temp_c[i] for i in idx]
        line, = ax.plot(xs, ys, marker="o", markersize=2.5, lw=1, color=c, label=name)
        series(ax, line, name, xs, ys, unit="°C", xname="minute")
    ax.set_xlabel("elapsed time (minutes of wall clock)")
    ax.set_ylabel("temperature (°C)")
    _legend_right(ax)
