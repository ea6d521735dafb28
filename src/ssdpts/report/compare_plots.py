"""The plots of comparisons and repeats analyses (report/compare_doc.py), described into the
:class:`chart.Figure` they are given like the run reports' plots (report/plots.py, whose palette
and axes they use), drawn in the page by templates/chart.js."""

from __future__ import annotations

from ..compare import RSE_LIMIT, fmt_value
from .chart import Axes, Figure
from .plots import BAD, BLUE, INK, _legend_w, _log, _s, log_ticks  # the run reports' palette and axes

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")


def _colors(n: int) -> list[str]:
    return [f"tab10:{i % 10}" for i in range(n)]


def _run_name(label: str, i: int, missed: bool) -> str:
    return label + (" (baseline)" if i == 0 else "") + (" — SS NOT reached" if missed else "")


def _legend_below(ax: Axes, labels: list[str], missed: list[bool], bars: bool = False) -> None:
    """Every run's key centred under the axes (four per row, fewer where long names need them; a name
    too long for the plot shortened, never its "(baseline)" and "SS NOT reached": chart.py legend)."""
    for i, (lab, c) in enumerate(zip(labels, _colors(len(labels)))):
        name = _run_name(lab, i, missed[i])
        if bars:
            ax.legend_patch(name, color=c, hatch=missed[i], edge=BAD, keep=len(name) - len(lab))
        else:
            ax.legend_line(name, color=c, marker=MARKERS[i % len(MARKERS)], lw=2.2 if i == 0 else 1.5,
                           ls="--" if missed[i] else "-", keep=len(name) - len(lab))
    ax.legend("below", ncol=min(len(labels), 4), offset=30)


def _legend_rows(labels: list[str]) -> float:
    """Inches the legend under a plot takes."""
    return 0.2 * ((len(labels) + 3) // 4) + 0.15


def iops_overlay(fig: Figure, labels: list[str], values: list[dict], ss: list[bool | None],
                 mixes: tuple[str, ...] = ("100/0", "65/35", "0/100")) -> None:
    """IOPS vs block size, one panel per R/W mix, one line per run (log-log)."""
    row, = fig.grid(1, len(mixes), left=0.8, right=0.2, top=0.3, bottom=0.6 + _legend_rows(labels), wgap=0.3)
    colors = _colors(len(labels))
    allbs = sorted({bs for v in values for (bs, _m) in v})
    kib = [b / 1024 for b in allbs]
    yall = [v for vals in values for v in vals.values() if v is not None and v > 0]
    axes = []
    for k, (box, mix) in enumerate(zip(row, mixes)):
        ax = fig.axes(box)
        axes.append(ax)
        for i, (vals, c) in enumerate(zip(values, colors)):
            pts = sorted((bs / 1024, v) for (bs, m), v in vals.items() if m == mix and v is not None)
            if pts:
                ax.line([x for x, _ in pts], [y for _, y in pts], color=c, marker=MARKERS[i % len(MARKERS)],
                        lw=2.2 if i == 0 else 1.5, ls="--" if ss[i] is False else "-",
                        series=_s(labels[i], "IOPS", "block size KiB"))
        ax.x(scale="log2", ticks=kib, labels=[f"{v:g}" for v in kib], label="block size (KiB)")
        ax.y(**_log(yall, "IOPS" if k == 0 else ""), hide=k > 0)
        ax.title(f"RND R/W {mix}")
    _legend_below(axes[len(axes) // 2], labels, [s is False for s in ss])


def runs_bars(fig: Figure, labels: list[str], groups: list[tuple[str, list[float | None]]], ss: list[bool | None],
                 ylabel: str, log: bool | None = None, box: tuple | None = None, title: str = "",
                 legend: bool = True) -> None:
    """One group per cell, one bar per run, value on top; hatched where steady state was not reached.
    ``log`` None: a log axis when the values span more than 30× (a RAM disk next to a disk), else linear."""
    many = len(groups) > 4
    if box is None:
        box = fig.grid(left=0.8, right=0.2, top=0.2, bottom=0.6 + (_legend_rows(labels) if legend else 0))[0][0]
    ax = fig.axes(box)
    n = len(labels)
    w = min(0.8 / max(n, 1), 0.32)
    pos = [v for g in groups for v in g[1] if v is not None and v > 0]
    names = [g[0].replace("\n", " ") for g in groups]
    if log is None:
        log = bool(pos) and max(pos) / min(pos) > 30
    for i, c in enumerate(_colors(n)):
        vals = [g[1][i] for g in groups]
        ax.bars([k + (i - (n - 1) / 2) * w for k in range(len(groups))], vals, w, color=c,
                hatch=[ss[i] is False] * len(groups), edge=BAD,
                labels=["n/a" if v is None else fmt_value(v, "") for v in vals] if len(groups) * n <= 27 else
                ["n/a" if v is None else "" for v in vals], label_size=6.5 if many else 7, rotate=many,
                series=_s(labels[i], ylabel, "", names))
    ax.categories(names, size=7 if many else None)
    if log and pos:
        lo, hi = min(pos) / 2, max(pos) * (12 if many else 3)  # room for the rotated labels
        ticks = log_ticks(lo, hi)
        ax.y(scale="log", lim=(lo, hi), ticks=ticks, labels=[f"{v:,.0f}" if v >= 1 else f"{v:.3g}" for v in ticks],
             label=ylabel + " (log)")
    else:
        ax.y(lim=(0, max(max(pos, default=0.0), 1e-9) * (1.35 if many else 1.18)), fmt="k", label=ylabel)
    if title:
        ax.title(title)
    if legend:
        _legend_below(ax, labels, [s is False for s in ss], bars=True)


def lat_panels(fig: Figure, labels: list[str], panels: list[tuple[str, list[tuple[str, list[float | None]]]]],
               ss: list[bool | None]) -> None:
    boxes = fig.grid(len(panels), 1, left=0.8, right=0.2, top=0.3, bottom=0.6 + _legend_rows(labels), hgap=0.75)
    for k, (row, (title, groups)) in enumerate(zip(boxes, panels)):
        runs_bars(fig, labels, groups, ss, "µs", box=row[0], title=title, legend=k == len(panels) - 1)


def wsat_overlay(fig: Figure, labels: list[str], series: list[tuple[list, list, list, float | None]]) -> None:
    ax = fig.axes(fig.grid(left=0.8, right=0.6, top=0.2, bottom=0.6 + _legend_rows(labels))[0][0])
    top = 0.0
    for i, ((xs, ys, win, level), c) in enumerate(zip(series, _colors(len(labels)))):
        pts = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
        if not pts:
            continue
        ax.line([p[0] for p in pts], [p[1] for p in pts], color=c, marker=MARKERS[i % len(MARKERS)],
                ms=2.5 if len(pts) > 60 else 3.5, lw=2.0 if i == 0 else 1.3, series=_s(labels[i], "IOPS", "sample"))
        top = max(top, max(p[1] for p in pts))
        if level is not None and win:
            ax.line([min(win), max(win)], [level, level], color=c, ls="--", lw=1.6)
            ax.text(max(win), level, fmt_value(level, "IOPS"), color=c, dx=4)
    ax.x(label="sample (one PTS step each)", fmt="k")
    ax.y(lim=(0, max(top, 1e-9) * 1.12), fmt="k", label="IOPS")
    _legend_below(ax, labels, [False] * len(labels))


def spread_rse(fig: Figure, labels: list[str], names: list[str], dev: list[list[float | None]],
               rses: list[float | None]) -> None:
    many = len(names) > 12
    bottom = 0.5 + (max(len(n) for n in names) * 0.075 if many and names else 0.1)
    (top_box,), (low_box,) = fig.grid(2, 1, left=0.8, right=_legend_w(labels) + 0.1, top=0.15, bottom=bottom,
                                      hgap=0.2, height_ratios=[1.3, 1])
    x = list(range(len(names)))
    ax1 = fig.axes(top_box)
    for i, (lab, c) in enumerate(zip(labels, _colors(len(labels)))):
        ax1.line(x, [None if d[i] is None else d[i] * 100 for d in dev], ls="none", color=c,
                 marker=MARKERS[i % len(MARKERS)], ms=4.5, label=lab, series=_s(lab, "%", "", names))
    ax1.hline(0, color=INK, lw=0.8)
    ax1.categories(names, hide=True)
    ax1.y(label="vs median run (%)", fmt="k")
    ax1.legend("right")
    ax2 = fig.axes(low_box)
    vals = [0 if r is None else r * 100 for r in rses]
    ax2.bars(x, vals, 0.7, color=[BAD if (r is not None and r > RSE_LIMIT) else BLUE for r in rses],
             series=_s("RSE", "%", "", names))
    ax2.hline(RSE_LIMIT * 100, color=BAD, lw=1, ls="--")
    ax2.text(1.005, RSE_LIMIT * 100, f"{RSE_LIMIT:.0%}", color=BAD, axes_x=True)
    ax2.categories(names, rotate=many, size=6 if len(names) > 30 else None)
    ax2.y(lim=(0, max([*vals, RSE_LIMIT * 100]) * 1.2), fmt="k", label="RSE (%)")
