"""Plot descriptions: what to draw, as JSON, drawn in the page by templates/chart.js (on d3).

A plot function (plots.py, plots_ext.py, compare_plots.py) is given a :class:`Figure` of a size in
inches and lays out its axes with margins in inches (:meth:`Figure.grid`), then records what each
axes shows — lines, markers, bars, spans, reference lines, text boxes, 3D bars, cells — much as it
would with matplotlib's ``Axes``. :meth:`Figure.spec` is the JSON the page's script draws into an
inline SVG (units: points, 72 per inch), for the screen and for the PDF alike (Chromium prints the
page after its script drew the plots). Nothing here measures text or computes ticks the browser's
script computes (d3's scales do); Python gives the values, the layout, the colours and the names.

Why in the page and not matplotlib in Python: a report's ~25 plots cost 3 s of CPU in matplotlib
(figure, axes and tick objects, then SVG output), more than the whole render may take; d3 draws
them in the browser in about a tenth of that (docs/report.md, "Plots").

Colours are CSS colours or a colour map and a position ("viridis:0.35", "plasma:0.5", "turbo:0.2",
"tab10:3", "oranges:0.7"), resolved by d3's schemes in the page.

Series: a layer given ``series=`` (name, unit, x name, a note per point) is one hover / toggle
series of the interactive HTML; the script gives its SVG elements the id ``<plot>-s<n>`` (bars:
``<plot>-s<n>.<k>``) and its legend entry ``-leg`` / ``-legh``, which report.js uses.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

PT = 72.0  # points per inch: the SVG's units


def json_num(v: Any) -> float | int | None:
    """A JSON number (None for missing or non-finite values; integers stay integers)."""
    if v is None:
        return None
    f = float(v)
    if not math.isfinite(f):
        return None
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def json_nums(vs: Sequence) -> list:
    return [json_num(v) for v in vs]


def axis(scale: str = "linear", *, lim: tuple[float | None, float | None] | None = None,
         ticks: Sequence[float] | None = None, labels: Sequence[str] | None = None, fmt: str = "",
         label: str = "", color: str | None = None, hide: bool = False, grid: bool = True,
         integer: bool = False, rotate: bool = False, size: float | None = None) -> dict:
    """One axis: ``scale`` linear | log | log2; ``lim`` (lo, hi), either None: from the data (with
    matplotlib's 5% margins); ``ticks`` and their ``labels`` fixed, else d3's; ``fmt``: how automatic
    tick labels are written ("k": 1,234 / 0.5; "" : d3's default); ``hide``: no tick labels (a panel
    sharing the axis of the one below); ``integer``: automatic ticks at whole numbers only (rounds)."""
    a: dict[str, Any] = {"s": scale}
    if lim is not None:
        a["d"] = [json_num(lim[0]), json_num(lim[1])]
    if ticks is not None:
        a["t"] = json_nums(ticks)
        if labels is not None:
            a["l"] = [str(x) for x in labels]
    for k, v in (("f", fmt), ("label", label), ("c", color)):
        if v:
            a[k] = v
    if hide:
        a["hide"] = True
    if not grid:
        a["grid"] = False
    if integer:
        a["int"] = True
    if rotate:
        a["rot"] = True  # tick labels written upwards (many long labels)
    if size:
        a["z"] = size
    return a


class Axes:
    """One panel: a box in the figure (points from the top left), its axes and its layers."""

    def __init__(self, fig: "Figure", box: tuple[float, float, float, float], kind: str = "xy"):
        self.fig = fig
        self.d: dict[str, Any] = {"k": kind, "box": [round(v, 2) for v in box], "x": axis(), "y": axis(), "L": []}

    # ---- axes ------------------------------------------------------------------------------------
    def x(self, **kw) -> "Axes":
        self.d["x"] = axis(**kw)
        return self

    def y(self, **kw) -> "Axes":
        self.d["y"] = axis(**kw)
        return self

    def categories(self, names: Sequence[str], pad: float = 0.6, **kw) -> "Axes":
        """An x axis of named categories at 0, 1, 2 … (bars, cells), ``pad`` x units beyond the first
        and the last, without grid lines."""
        self.d["x"] = axis(lim=(-pad, len(names) - 1 + pad), ticks=range(len(names)), labels=names, grid=False, **kw)
        return self

    def y2(self, **kw) -> "Axes":
        """A second y axis on the right (layers drawn with ``y2=True`` use it)."""
        self.d["y2"] = axis(**{"grid": False, **kw})
        return self

    def title(self, text: str, loc: str = "left", size: float | None = None) -> "Axes":
        self.d["title"] = {"t": text, "loc": loc, **({"z": size} if size else {})}
        return self

    def legend(self, at: str = "right", title: str = "", ncol: int = 1, offset: float = 0.0) -> "Axes":
        """Legend of the layers that have a ``label``, in their order: ``at`` right (beside the axes,
        top aligned), top (above the axes, title bold), below (centred under the axes, ``offset``
        points below its bottom edge, ``ncol`` columns). It stays inside the figure whatever its
        names: the page's script (templates/chart.js ``legend``) draws a legend below in fewer
        columns where the figure has room for more rows, and shortens the widest names in their
        middle where it must (an entry's ``keep`` tail whole, the full name its tooltip)."""
        self.d["leg"] = {"at": at, "n": ncol, **({"title": title} if title else {}), **({"o": offset} if offset else {})}
        return self

    def _add(self, layer: dict, label: str | None, series: dict | None, y2: bool) -> dict:
        if label:
            layer["lab"] = label
        if y2:
            layer["y2"] = True
        if series is not None:
            layer["s"] = self.fig.series(series)
        self.d["L"].append(layer)
        return layer

    # ---- layers ------------------------------------------------------------------------------------
    def line(self, xs: Sequence, ys: Sequence, *, color: str, lw: float = 1.6, ls: str = "-", marker: str | None = None,
             ms: float = 4.0, mfc: str | None = None, mec: str | None = None, step: bool = False, label: str | None = None,
             series: dict | None = None, y2: bool = False, at: Sequence | None = None) -> dict:
        """A line through (x, y), with markers (o ^ * s) or none; ``ls`` "-", "--", ":", "-." or
        "none" (markers only); ``step``: a step after each point. ``at``: where the points are
        drawn when the axis shows a transform of the values (the hover shows ``ys``)."""
        layer = {"t": "line", "x": json_nums(xs), "y": json_nums(ys if at is None else at), "c": color, "w": lw, "ls": ls}
        if at is not None:
            layer["v"] = json_nums(ys)
        if marker:
            layer.update({"m": marker, "ms": ms})
            if mfc:
                layer["mfc"] = mfc
            if mec:
                layer["mec"] = mec
        if step:
            layer["step"] = True
        return self._add(layer, label, series, y2)

    def stairs(self, counts: Sequence, edges: Sequence, *, color: str, lw: float = 1.2, label: str | None = None,
               series: dict | None = None, hover: tuple[Sequence, Sequence] | None = None) -> dict:
        """A histogram outline: counts[i] between edges[i] and edges[i+1]; ``hover``: the (x, y) of
        the points the hover shows (bin middles and counts)."""
        layer = {"t": "stairs", "e": json_nums(edges), "y": json_nums(counts), "c": color, "w": lw}
        if hover is not None:
            layer["hx"], layer["hy"] = json_nums(hover[0]), json_nums(hover[1])
        return self._add(layer, label, series, False)

    def bars(self, xs: Sequence, heights: Sequence, width: float, *, color: str | Sequence[str], label: str | None = None,
             hatch: Sequence[bool] | None = None, edge: str | None = None, labels: Sequence[str] | None = None,
             label_size: float = 7.5, rotate: bool = False, series: dict | None = None) -> dict:
        """Bars centred on xs (x units), ``width`` in x units, one colour or one per bar; ``hatch``:
        per bar, hatched (edge colour ``edge``); ``labels``: a text above each bar (``rotate``: written
        upwards); a missing height draws no bar."""
        layer = {"t": "bars", "x": json_nums(xs), "y": json_nums(heights), "bw": width,
                 "c": color if isinstance(color, str) else list(color)}
        if rotate:
            layer["br"] = True
        if hatch and any(hatch):
            layer["h"] = [bool(b) for b in hatch]
            layer["ec"] = edge or "#cf222e"
        if labels is not None:
            layer["bl"] = [str(x) for x in labels]
            layer["bz"] = label_size
        return self._add(layer, label, series, False)

    def vspan(self, x0: float, x1: float, *, color: str, alpha: float, label: str | None = None) -> dict:
        return self._add({"t": "vspan", "x0": json_num(x0), "x1": json_num(x1), "c": color, "a": alpha}, label, None, False)

    def band(self, y0: float, y1: float, *, color: str, alpha: float, label: str | None = None) -> dict:
        """A horizontal band over the whole width (e.g. ±10% of an average)."""
        return self._add({"t": "band", "y0": json_num(y0), "y1": json_num(y1), "c": color, "a": alpha}, label, None, False)

    def hline(self, y: float, *, color: str, lw: float = 1.0, ls: str = "-", label: str | None = None,
              y2: bool = False) -> dict:
        return self._add({"t": "hline", "v": json_num(y), "c": color, "w": lw, "ls": ls}, label, None, y2)

    def vline(self, x: float, *, color: str, lw: float = 1.0, ls: str = "-", label: str | None = None) -> dict:
        return self._add({"t": "vline", "v": json_num(x), "c": color, "w": lw, "ls": ls}, label, None, False)

    def text(self, x: float, y: float, text: str, *, color: str = "#24292f", size: float = 7.0, dx: float = 0.0,
             dy: float = 0.0, anchor: str = "start", axes_x: bool = False, y2: bool = False) -> dict:
        """A text at data point (x, y), moved by (dx, dy) points (``axes_x``: x is a fraction of the
        axes' width, 1.0 its right edge), vertically centred on it."""
        layer = {"t": "text", "x": json_num(x), "y": json_num(y), "s": text, "c": color, "z": size, "dx": dx, "dy": dy,
                 "a": anchor}
        if axes_x:
            layer["fx"] = True
        return self._add(layer, None, None, y2)

    def legend_line(self, label: str, *, color: str, marker: str | None = None, lw: float = 1.6, ls: str = "-",
                    keep: int = 0) -> dict:
        """A legend entry of a line (and marker) that draws nothing. ``keep``: the last characters of
        ``label`` a legend too wide for its plot never shortens (what the entry says of the series,
        as " — SS NOT reached"; :meth:`legend`)."""
        return self._add({"t": "key", "kl": True, "c": color, "w": lw, "ls": ls, **({"m": marker, "ms": 5} if marker else {}),
                          **({"lk": keep} if keep else {})}, label, None, False)

    def legend_patch(self, label: str, *, color: str, hatch: bool = False, edge: str | None = None,
                     keep: int = 0) -> dict:
        """A legend entry that draws nothing (e.g. "hatched: steady state NOT reached"); ``keep`` as
        for :meth:`legend_line`."""
        return self._add({"t": "key", "c": color, **({"h": True, "ec": edge or "#cf222e"} if hatch else {}),
                          **({"lk": keep} if keep else {})}, label, None, False)

    def cells(self, z: Sequence[Sequence], *, cmap: str, decimals: int = 0, label: str = "") -> dict:
        """A value per cell (rows top to bottom on y 0..n-1, columns on x 0..m-1) coloured on ``cmap``
        with its value written in it, and a colour bar named ``label``."""
        return self._add({"t": "cells", "z": [json_nums(r) for r in z], "cm": cmap, "dec": decimals, "cl": label},
                         None, None, False)


class Figure:
    """A plot of ``size`` inches: panels placed by :meth:`grid`, a mark in the lower left corner."""

    def __init__(self, size: tuple[float, float]):
        self.w_in, self.h_in = float(size[0]), float(size[1])
        self.panels: list[Axes] = []
        self._series: list[dict] = []
        self.mark: str | None = None

    def grid(self, nrows: int = 1, ncols: int = 1, *, left: float = 0.8, right: float = 0.25, top: float = 0.3,
             bottom: float = 0.55, hgap: float = 0.5, wgap: float = 0.6,
             width_ratios: Sequence[float] | None = None,
             height_ratios: Sequence[float] | None = None) -> list[list[tuple[float, float, float, float]]]:
        """Boxes (x, y, w, h in points, y from the top) of an nrows × ncols grid whose margins and
        gaps are in inches, whatever the size of the figure."""
        w, h = self.w_in, self.h_in
        left, right = min(left, 0.3 * w), min(right, 0.45 * w)
        top, bottom = min(top, 0.3 * h), min(bottom, 0.3 * h)
        inner_h = max(h - top - bottom - (nrows - 1) * hgap, 0.2 * nrows)
        hr = list(height_ratios or [1.0] * nrows)
        heights = [inner_h * r / sum(hr) for r in hr]
        inner_w = max(w - left - right - (ncols - 1) * wgap, 0.2 * ncols)
        ratios = list(width_ratios or [1.0] * ncols)
        widths = [inner_w * r / sum(ratios) for r in ratios]
        rows = []
        y = top
        for i in range(nrows):
            row, x = [], left
            for j in range(ncols):
                row.append((x * PT, y * PT, widths[j] * PT, heights[i] * PT))
                x += widths[j] + wgap
            rows.append(row)
            y += heights[i] + hgap
        return rows

    def axes(self, box: tuple[float, float, float, float], kind: str = "xy") -> Axes:
        ax = Axes(self, box, kind)
        self.panels.append(ax)
        return ax

    def series(self, s: dict) -> int:
        """Register a hover / toggle series: name ``n``, unit ``u``, x name ``x``, notes ``t`` (a
        text per point) or ``ti`` (a prefix numbered from 1). Returns its number."""
        out = {"n": str(s["n"])}
        for k in ("u", "x", "ti"):
            if s.get(k):
                out[k] = str(s[k])
        if s.get("t") is not None:
            out["t"] = [str(t) for t in s["t"]]
        self._series.append(out)
        return len(self._series) - 1

    def text_box(self, box: tuple[float, float, float, float], lines: list[tuple[str, str, str]], edge: str,
                 max_size: float = 8.0, min_size: float = 5.5) -> None:
        """A framed box of lines (text, colour, weight), written as large as fits (≤ max_size pt)."""
        ax = self.axes(box, "box")
        ax.d.update({"lines": [list(x) for x in lines], "ec": edge, "zmax": max_size, "zmin": min_size})

    def bars3d(self, box: tuple[float, float, float, float], *, xlabels: Sequence[str], ylabels: Sequence[str],
               z: Sequence[Sequence], zlabel: str, xname: str, yname: str, colors: Sequence[str], title: str = "",
               unit: str = "") -> None:
        """3D bars: x = columns (xlabels, one colour each), y = rows (ylabels), height z[row][col]."""
        ax = self.axes(box, "bars3d")
        ax.d.update({"xl": list(xlabels), "yl": list(ylabels), "z": [json_nums(r) for r in z], "zl": zlabel,
                     "xn": xname, "yn": yname, "cs": list(colors), "u": unit})
        if title:
            ax.title(title, loc="center")

    def spec(self) -> dict:
        out: dict[str, Any] = {"w": round(self.w_in * PT, 1), "h": round(self.h_in * PT, 1),
                               "P": [p.d for p in self.panels]}
        if self._series:
            out["S"] = self._series
        if self.mark:
            out["mark"] = self.mark
        return out


def render(draw: Callable[..., None], args: dict, size: tuple[float, float], mark: str | None = None) -> dict:
    """The JSON description of one plot: ``draw(fig, **args)`` records it; ``mark`` is a note in the
    lower left corner (e.g. "not PTS compliant"). The page's script names its SVG ids after the plot's id."""
    fig = Figure(size)
    draw(fig, **args)
    fig.mark = mark
    return fig.spec()
