"""The plots of the extended tests (HIR, XSR, CBW/DIRTH) and WSAT's PTS 2.0 response-time series,
drawn with matplotlib into the Figure or SubFigure they are given, like report/plots.py (whose
helpers they use). Nothing here reads files.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .plots import BAD, INK, OK, WARN, _cmap, _grid, _legend_w, _log, _palette, _thousands, num


def segments_vs_time(fig, segments: list[tuple[str, list[float], list[float]]], xlabel: str, ylabel: str,
                     level: tuple[float, str] | None = None, marker: tuple[float, str] | None = None,
                     logy: bool = False) -> None:
    """One series per segment (HIR: per wait state and per return to baseline; XSR: per access
    group) against time; optional horizontal level (a steady state) and a vertical marker."""
    labels = [s[0] for s in segments] + ([level[1]] if level else []) + ([marker[1]] if marker else [])
    ax = fig.add_subplot(_grid(fig, right=_legend_w(labels) + 0.1, top=0.15)[0, 0])
    colors = _palette(len(segments))
    many = sum(len(xs) for _, xs, _ in segments) > 400
    for (label, xs, ys), c in zip(segments, colors):
        ax.plot(xs, ys, ls="none" if many else "-", lw=0.9, marker="o", markersize=1.8 if many else 3.0, color=c,
                label=label)
    if level and level[0]:
        ax.axhline(level[0], color=INK, lw=1.0, ls="--", label=level[1])
    if marker:
        ax.axvline(marker[0], color=BAD, lw=1.2, ls=":", label=marker[1])
    if logy and any(v > 0 for _, _, ys in segments for v in ys):
        _log(ax)
    else:
        ax.set_ylim(bottom=0)
        _thousands(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def grouped_bars(fig, categories: list[str], series: dict[str, list[float | None]], ylabel: str,
                 level: tuple[float, str] | None = None) -> None:
    """Bars per category, one per series (HIR: bursts and baseline per wait state)."""
    names = list(series) + ([level[1]] if level else [])
    ax = fig.add_subplot(_grid(fig, right=_legend_w(names) + 0.1, top=0.15)[0, 0])
    x = np.arange(len(categories))
    w = 0.8 / max(1, len(series))
    top = 1.0
    for i, ((name, vals), c) in enumerate(zip(series.items(), ("#0969da", "#bf3989", "#1a7f37", "#9a6700"))):
        v = [0 if y is None else y for y in vals]
        top = max(top, *v) if v else top
        bars = ax.bar(x - 0.4 + w * (i + 0.5), v, w, label=name, color=c)
        ax.bar_label(bars, labels=[num(y) if y else "" for y in v], padding=2, fontsize=7)
    if level and level[0]:
        ax.axhline(level[0], color=INK, lw=1.0, ls="--", label=level[1])
        top = max(top, level[0])
    ax.set_xticks(x, categories)
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel(ylabel)
    _thousands(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def rate_and_latency(fig, x: list[float], rate: list[float], rate_label: str, lat: dict[str, list[float]],
                     xlabel: str, bounds: Sequence[float] = ()) -> None:
    """XSR: MB/s (left axis) with response times on a second, logarithmic axis; group boundaries
    as vertical lines."""
    ax = fig.add_subplot(_grid(fig, right=0.9, top=0.45)[0, 0])
    ax.plot(x, rate, color="#0969da", lw=1.0, marker="o", markersize=1.8, label=rate_label)
    ax.set_ylim(bottom=0)
    ax.set_ylabel(rate_label, color="#0969da")
    _thousands(ax)
    ax.set_xlabel(xlabel)
    for b in bounds:
        ax.axvline(b, color=INK, lw=0.8, ls=":")
    ax2 = ax.twinx()
    for (name, ys), c in zip(lat.items(), (WARN, BAD)):
        ax2.plot(x, ys, color=c, lw=0.8, ls="--", label=name)
    if any(v > 0 for ys in lat.values() for v in ys):
        _log(ax2)
    ax2.set_ylabel("response time (µs, log)")
    ax2.grid(False)
    ax2.spines["right"].set_visible(True)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=3, frameon=False)


def lines_per_group(fig, groups: dict[str, tuple[list[float], list[float]]], xlabel: str, ylabel: str,
                    legend_title: str, logx: bool = False, logy: bool = False, ticks: Sequence[float] = (),
                    highlight: dict[str, tuple[float, float]] | None = None) -> None:
    """One line per group (TC) of (x, y) points: demand variation (IOPS vs QD), demand intensity
    (response time vs IOPS), IOPS or response time vs TOIO; ``highlight`` marks named points
    (the operating points)."""
    names = list(groups) + list(highlight or ())
    ax = fig.add_subplot(_grid(fig, right=_legend_w(names, legend_title) + 0.1, top=0.15)[0, 0])
    for (name, (xs, ys)), c in zip(groups.items(), _cmap(len(groups), "viridis")):
        pts = sorted((a, b) for a, b in zip(xs, ys) if a is not None and b is not None)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=c, label=name)
    for (name, (px, py)), c in zip((highlight or {}).items(), (BAD, WARN, OK)):
        ax.plot([px], [py], marker="*", markersize=13, color=c, ls="none", markeredgecolor=INK, label=name)
    if logx:
        ax.set_xscale("log", base=2)
        if ticks:
            ax.set_xticks(list(ticks), [f"{t:g}" for t in ticks])
            ax.minorticks_off()
    if logy:
        _log(ax)
    else:
        ax.set_ylim(bottom=0)
        _thousands(ax)
    if not logx:
        _thousands(ax, "x")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(title=legend_title, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def heatmap(fig, rows: list[str], cols: list[str], z: list[list[float | None]], label: str, row_name: str,
            col_name: str) -> None:
    """A value per TC (rows) x QD (columns), written in each cell (CPU %)."""
    ax = fig.add_subplot(_grid(fig, right=1.2, top=0.2, left=0.9)[0, 0])
    a = np.array([[np.nan if v is None else v for v in r] for r in z], dtype=float)
    im = ax.imshow(a, cmap="Oranges", aspect="auto")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(col_name)
    ax.set_ylabel(row_name)
    ax.grid(False)
    finite = a[np.isfinite(a)]
    mid = float(finite.mean()) if finite.size else 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if np.isfinite(a[i, j]):
                ax.text(j, i, f"{a[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if a[i, j] > mid * 1.4 else INK, parse_math=False)
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label(label)
