"""The plots of the extended tests (HIR, XSR, CBW/DIRTH) and WSAT's PTS 2.0 response-time series,
described into the :class:`chart.Figure` they are given, like report/plots.py (whose helpers they
use). Nothing here reads files.
"""

from __future__ import annotations

from typing import Sequence

from .chart import Figure
from .plots import BAD, BLUE, INK, OK, WARN, _cmap, _legend_w, _log, _palette, _s, _vals, num


def segments_vs_time(fig: Figure, segments: list[tuple[str, list[float], list[float]]], xlabel: str, ylabel: str,
                     level: tuple[float, str] | None = None, marker: tuple[float, str] | None = None,
                     logy: bool = False) -> None:
    """One series per segment (HIR: per wait state and per return to baseline; XSR: per access
    group) against time; optional horizontal level (a steady state) and a vertical marker."""
    labels = [s[0] for s in segments] + ([level[1]] if level else []) + ([marker[1]] if marker else [])
    ax = fig.axes(fig.grid(right=_legend_w(labels) + 0.1, top=0.15)[0][0])
    colors = _palette(len(segments))
    many = sum(len(xs) for _, xs, _ in segments) > 400
    for (label, xs, ys), c in zip(segments, colors):
        ax.line(xs, ys, ls="none" if many else "-", lw=0.9, marker="o", ms=1.8 if many else 3.0, color=c,
                label=label, series=_s(label, ylabel, xlabel))
    if level and level[0]:
        ax.hline(level[0], color=INK, lw=1.0, ls="--", label=level[1])
    if marker:
        ax.vline(marker[0], color=BAD, lw=1.2, ls=":", label=marker[1])
    ys_all = _vals(*(ys for _, _, ys in segments))
    if logy and any(v > 0 for v in ys_all):
        ax.y(**_log(ys_all, ylabel))
    else:
        top = max(ys_all + ([level[0]] if level and level[0] else []) + [1e-9])
        ax.y(lim=(0, top * 1.05), fmt="k", label=ylabel)
    ax.x(label=xlabel, fmt="k")
    ax.legend("right")


def grouped_bars(fig: Figure, categories: list[str], series: dict[str, list[float | None]], ylabel: str,
                 level: tuple[float, str] | None = None) -> None:
    """Bars per category, one per series (HIR: bursts and baseline per wait state)."""
    names = list(series) + ([level[1]] if level else [])
    ax = fig.axes(fig.grid(right=_legend_w(names) + 0.1, top=0.15)[0][0])
    w = 0.8 / max(1, len(series))
    top = 1.0
    for i, ((name, vals), c) in enumerate(zip(series.items(), (BLUE, "#bf3989", OK, WARN))):
        v = [0 if y is None else y for y in vals]
        top = max([top, *v])
        ax.bars([j - 0.4 + w * (i + 0.5) for j in range(len(categories))], v, w, color=c, label=name,
                labels=[num(y) if y else "" for y in v], label_size=7,
                series=_s(name, ylabel, "", list(categories)))
    if level and level[0]:
        ax.hline(level[0], color=INK, lw=1.0, ls="--", label=level[1])
        top = max(top, level[0])
    ax.categories(categories)
    ax.y(lim=(0, top * 1.15), fmt="k", label=ylabel)
    ax.legend("right")


def rate_and_latency(fig: Figure, x: list[float], rate: list[float], rate_label: str, lat: dict[str, list[float]],
                     xlabel: str, bounds: Sequence[float] = ()) -> None:
    """XSR: MB/s (left axis) with response times on a second, logarithmic axis; group boundaries
    as vertical lines."""
    ax = fig.axes(fig.grid(right=0.9, top=0.45)[0][0])
    ax.line(x, rate, color=BLUE, lw=1.0, marker="o", ms=1.8, label=rate_label, series=_s(rate_label, "", xlabel))
    ax.y(lim=(0, max(_vals(rate) + [1e-9]) * 1.05), fmt="k", label=rate_label, color=BLUE)
    ax.x(label=xlabel, fmt="k")
    for b in bounds:
        ax.vline(b, color=INK, lw=0.8, ls=":")
    for (name, ys), c in zip(lat.items(), (WARN, BAD)):
        ax.line(x, ys, color=c, lw=0.8, ls="--", label=name, y2=True, series=_s(name, "µs", xlabel))
    lat_vals = _vals(*lat.values())
    if any(v > 0 for v in lat_vals):
        ax.y2(**_log(lat_vals, "response time (µs, log)"))
    else:
        ax.y2(label="response time (µs, log)")
    ax.legend("top", ncol=3)


def lines_per_group(fig: Figure, groups: dict[str, tuple[list[float], list[float]]], xlabel: str, ylabel: str,
                    legend_title: str, logx: bool = False, logy: bool = False, ticks: Sequence[float] = (),
                    highlight: dict[str, tuple[float, float]] | None = None) -> None:
    """One line per group (TC) of (x, y) points: demand variation (IOPS vs QD), demand intensity
    (response time vs IOPS), IOPS or response time vs TOIO; ``highlight`` marks named points
    (the operating points)."""
    names = list(groups) + list(highlight or ())
    ax = fig.axes(fig.grid(right=_legend_w(names, legend_title) + 0.1, top=0.15)[0][0])
    ys_all: list[float] = []
    for (name, (xs, ys)), c in zip(groups.items(), _cmap(len(groups), "viridis")):
        pts = sorted((a, b) for a, b in zip(xs, ys) if a is not None and b is not None)
        ax.line([p[0] for p in pts], [p[1] for p in pts], marker="o", color=c, label=name,
                series=_s(name, ylabel, xlabel))
        ys_all += [p[1] for p in pts]
    for (name, (px, py)), c in zip((highlight or {}).items(), (BAD, WARN, OK)):
        ax.line([px], [py], marker="*", ms=13, color=c, ls="none", mec=INK, label=name)
        ys_all.append(py)
    if logx:
        ax.x(scale="log2", label=xlabel, **({"ticks": list(ticks), "labels": [f"{t:g}" for t in ticks]} if ticks else {}))
    else:
        ax.x(label=xlabel, fmt="k")
    if logy:
        ax.y(**_log(ys_all, ylabel))
    else:
        ax.y(lim=(0, max(ys_all + [1e-9]) * 1.05), fmt="k", label=ylabel)
    ax.legend("right", title=legend_title)


def heatmap(fig: Figure, rows: list[str], cols: list[str], z: list[list[float | None]], label: str, row_name: str,
            col_name: str) -> None:
    """A value per TC (rows) x QD (columns), written in each cell (CPU %)."""
    ax = fig.axes(fig.grid(right=1.2, top=0.2, left=0.9)[0][0])
    ax.cells(z, cmap="oranges", decimals=0, label=label)
    ax.categories(cols, pad=0.5, label=col_name)
    ax.y(lim=(len(rows) - 0.5, -0.5), ticks=list(range(len(rows))), labels=rows, label=row_name, grid=False)


def wsat_model(fig: Figure, x: list[float], y: list[float], lines: list[tuple[float, float, float, str]],
               marks: list[tuple[float, str]], xlabel: str = "drive fills") -> None:
    """WSAT's drive model over its curve: the curve at its finest grain (grey), each fitted level as
    a horizontal segment (x from, x to, IOPS, label) and each event (a cliff, GC onset) as a dotted
    vertical line (x, label)."""
    labels = ["IOPS per interval"] + [lab for *_, lab in lines] + [lab for _, lab in marks]
    ax = fig.axes(fig.grid(right=_legend_w(labels) + 0.1, top=0.15)[0][0])
    ax.line(x, y, lw=0.6, color="#8c959f", label="IOPS per interval", series=_s("IOPS", "IOPS", xlabel))
    for (x0, x1, level, label), c in zip(lines, (WARN, BLUE, OK, INK)):
        ax.line([x0, x1], [level, level], lw=2.2, color=c, label=label)
    for (xm, label), c in zip(marks, (BAD, "#8250df", "#bf3989", INK)):
        ax.vline(xm, color=c, lw=1.3, ls=":", label=label)
    ax.y(lim=(0, max(y + [lv for *_, lv, _ in lines] + [1e-9]) * 1.08), fmt="k", label="IOPS")
    ax.x(label=xlabel, fmt="k")
    ax.legend("right")
