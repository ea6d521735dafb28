"""The latency test's pages (docs/pts-reference.md#lat): convergence of the mean and maximum response time, the
steady-state window, and the window's response-time tables, QoS, 3D plots, histograms and
confidence curves."""

from __future__ import annotations

from collections import defaultdict
import math

from ...pts.lat import LatTable
from ...pts.qos import WindowLatency, approx_max_note
from ...pts.units import fmt_block_size
from ...pts.workload import Workload, cell_key
from ...results.records import PartResult, StepRecord
from ...results.registry import METRICS
from ..compare_parts import long_table, repeat_long
from ..context import RunContext
from ..doc import Cell, Plot, Table
from ..fmt import fmt_value
from .common import cell_refs, cpu_table, qos_table, three_sections, window_outliers
from .kind import Details, Figure, ReportKind

TABLES = (("mean", "lat-mean-us", "Average response time (µs)"),
          ("p5", "lat-p99999-us", "99.999% (five nines) response time (µs), pooled over the window"),
          ("max", "lat-max-us", "Maximum response time (µs): the largest in the window"),
          ("iops", "iops", "IOPS"))
SUMMARY_FIELD = {"mean": "lat_mean_us", "p5": "lat_p99999_us", "max": "lat_max_us", "iops": "iops"}


def sections(ctx: RunContext, pids: list[str]) -> list:
    out = []
    for pid in pids:
        part = ctx.parts[pid]
        tab = part.table
        out += three_sections(part, "lat", "Latency", convergence(ctx, part),
                              Results(ctx, part, tab).blocks() if isinstance(tab, LatTable) else None)
    return out


def convergence(ctx: RunContext, part: PartResult) -> list:
    cells = ctx.cells_by_round(part)
    if not cells:
        return []
    first = next(iter(cells.values()))
    keys = [c.key for c in sorted(first.values(), key=lambda c: c.index)]
    labels = {c.key: f"{fmt_block_size(c.workload.block_size_bytes)} {c.workload.mix}" for c in first.values()}
    mean, mx, notes = {}, {}, {}
    for k in keys:
        xs = [r for r in cells if k in cells[r]]
        mean[labels[k]] = (xs, [cells[r][k].measurement.lat_mean_ns / 1e3 for r in xs])
        mx[labels[k]] = (xs, [cells[r][k].measurement.lat_max_ns / 1e3 for r in xs])
        notes[labels[k]] = [f"step {cells[r][k].index} of round {r}" for r in xs]
    temps, temps_note = ctx.temperatures("lat", part.part)
    out: list = [Plot(f"{part.id}-convergence", "Latency convergence: mean and max response time",
                      "Mean (top) and maximum (bottom) response time of every RND cell per round, "
                      "TC 1 / QD 1; the shaded band is the measurement window.",
                      "rounds_lines", {"panels": [("mean response time", mean, "µs", True),
                                                  ("max response time", mx, "µs", True)],
                                       "window": list(part.window_rounds), "reached": bool(part.reached),
                                       "notes": notes, "temperature": temps}, size=(10, 6.6))]
    if temps_note:
        out.append(temps_note)
    return out


def key(bs: int, mix: str) -> str:
    return cell_key("rand", bs, mix.split("/")[0])


class Results:
    """The measurement window's tables and plots of one LAT part."""

    def __init__(self, ctx: RunContext, part: PartResult, tab: LatTable):
        self.ctx, self.part, self.tab = ctx, part, tab
        self.bss = sorted({r.block_size_bytes for r in tab.rows})
        self.mixes = list(dict.fromkeys(r.mix for r in tab.rows))
        self.at = {(r.block_size_bytes, r.mix): r for r in tab.rows}
        self.make = cell_refs(ctx, part, "")
        self.note = ctx.not_reached_note(part)
        self.suffix = ctx.ss_suffix(part)

    def stats(self, bs: int, mix: str) -> WindowLatency | None:
        return self.ctx.latency(self.part, key(bs, mix)) if (bs, mix) in self.at else None

    def cell(self, bs: int, mix: str, what: str) -> Cell:
        w = self.stats(bs, mix)
        if w is None or not w.steps:
            row = self.at.get((bs, mix))  # no step records: the summary's value
            v = row.value(SUMMARY_FIELD[what]) if row else None
            return Cell(fmt_value(v, "IOPS" if what == "iops" else "µs"), v)
        k = key(bs, mix)
        if what == "mean":
            return self.make(k, w.mean_us, "µs", stat="lat_mean_us")
        if what == "max":
            return self.make(k, w.max_us, "µs", stat="lat_max_us")
        if what == "iops":
            return self.make(k, self.at[(bs, mix)].value("iops"), "IOPS", stat="iops")
        v = w.percentile_us(99.999)
        return self.make(k, v, "µs", stat="p99.999_us", flag=approx_max_note(99.999) if not w.resolved(99.999) else "")

    def blocks(self) -> list:
        pid, bss, mixes = self.part.id, self.bss, self.mixes
        out: list = []
        for what, tid, title in TABLES:
            trows = [[Cell(fmt_block_size(bs))] + [self.cell(bs, m, what) for m in mixes] for bs in bss]
            for row in trows:
                for c in row:
                    if c.flag:
                        c.css = "approx"
            tnote = self.note
            if what == "p5":
                w_all = [self.stats(bs, m) for bs in bss for m in mixes if self.stats(bs, m)]
                n = min((w.ios for w in w_all if w.steps), default=0)
                tnote += (f" The percentile of all IOs of the window's steps (pts/qos.py); the fewest IOs in a cell: "
                          f"{n:,}. With fewer than 10⁵ IOs the 99.999% is the slowest IO (grey, '≈ max').")
            out.append(Table(f"{pid}-{tid}", title + self.suffix, ["Block size ↓ / R/W mix →", *mixes], trows,
                             note=tnote))
        cells = [(key(bs, m), f"RND {fmt_block_size(bs)} {m}") for m in mixes for bs in sorted(bss, reverse=True)
                 if (bs, m) in self.at]
        out.append(qos_table(self.ctx, self.part, cells, f"{pid}-qos", "Response-time QoS, TC 1 / QD 1 (µs)"))
        out += window_outliers(self.ctx, self.part, cells, f"{pid}-outliers", "Latency outliers, TC 1 / QD 1")
        out.append(self.plot3d())
        out += self.histogram_plots()
        out += cpu_table(self.ctx, self.part, cells, f"{pid}-cpu", "fio CPU utilisation per cell (usr + sys, %)")
        return out

    def plot3d(self) -> Plot:
        def z(attr: str) -> list[list[float | None]]:
            return [[(getattr(self.stats(bs, m), attr) if self.stats(bs, m) and self.stats(bs, m).steps else None)
                     for m in self.mixes] for bs in self.bss]

        return Plot(f"{self.part.id}-3d", "Latency 3D plots: mean and maximum response time" + self.suffix,
                    self.note + " Maximum: the largest response time in the window.",
                    "bars3d_pair", {"xlabels": self.mixes, "ylabels": [fmt_block_size(b) for b in self.bss],
                                    "za": z("mean_us"), "zb": z("max_us"),
                                    "titles": ("mean response time (µs)", "max response time (µs)")},
                    size=(10, 4.6))

    def histogram_plots(self) -> list:
        part = self.part
        hist = histograms(self.ctx.cells_by_round(part), list(part.window_rounds))
        if not hist:
            return []
        conf = []
        for mix, cells_ in hist:
            for bs_label, bins in cells_:
                bs = next(b for b in self.bss if fmt_block_size(b) == bs_label)
                w = self.stats(bs, mix)
                conf.append((f"{bs_label} {mix}", bins, w.max_us if w else None,
                             w.percentile_us(99.999) if w else None))
        return [Plot(f"{part.id}-histogram", "Response-time histograms" + self.suffix,
                     "IOs per response-time bin (fio json+ histogram over every step of the "
                     "measurement window, reads and writes together), one outline per block size; "
                     "the legend gives each cell's IO count.",
                     "latency_histograms", {"panels": hist}, size=(10, 4.0)),
                Plot(f"{part.id}-confidence", "Confidence curves: share of IOs completed within a "
                                              "response time" + self.suffix,
                     "One panel per cell. The vertical axis is log(1 − p): 90%, 99%, 99.9% … are "
                     "equally spaced, so the tail shows. A curve ends at 1 − 1/N for N IOs (red "
                     "triangle: the slowest IO); dashed amber: the 99.999% value.",
                     "confidence_curves", {"cells": conf}, size=(10, 2.2 * math.ceil(len(conf) / 3) + 0.6))]


def histograms(cells: dict[int, dict[str, StepRecord]], window: list[int]
               ) -> list[tuple[str, list[tuple[str, dict[int, int]]]]]:
    """Per R/W mix (100/0 first), per block size (largest first): the json+ bins of every step
    of the window, read and write merged."""
    merged: dict[str, dict[int, int]] = {}
    wl: dict[str, Workload] = {}
    for rno in window:
        for k, c in (cells.get(rno) or {}).items():
            d = merged.setdefault(k, defaultdict(int))
            wl[k] = c.workload
            for direction in (c.measurement.read, c.measurement.write):
                for b, n in direction.lat_bins_ns.items():
                    d[int(b)] += int(n)
    panels: dict[str, list[tuple[str, dict[int, int]]]] = {}
    for k in sorted(merged, key=lambda k: (-wl[k].read_pct, -wl[k].block_size_bytes)):
        if merged[k]:
            panels.setdefault(wl[k].mix, []).append((fmt_block_size(wl[k].block_size_bytes), dict(merged[k])))
    return list(panels.items())


# ---- the latency test as a kind (pages/kind.py) ---------------------------------------------------

COMPARED_TABLES = ("lat_mean_us", "lat_p99999_us", "lat_max_us")


def compare_blocks(cmp, p) -> list:
    """Its comparison: mean and five-nines response times of every run as bars, then a table per statistic."""
    panels = []
    for metric in ("lat_mean_us", "lat_p99999_us"):
        rows = [r for r in p.rows if r.metric == metric]
        if rows:
            panels.append((METRICS[metric].label, [(f"{fmt_block_size(r.block_size_bytes)}\n{r.mix}", r.values)
                                                   for r in rows]))
    out: list = [Plot(f"{p.part}-overlay", "Response times, every run",
                      "Mean and 99.999th percentile response time per cell (block size, R/W mix; a log axis when the "
                      "runs differ by more than 30×), "
                      "one bar per run (lower is better); hatched: steady state NOT reached.",
                      "lat_panels", {"labels": cmp.labels, "panels": panels, "ss": p.ss_reached}, size=(10.0, 6.0))]
    return out + per_metric(p, lambda rows, tid, title: long_table(cmp, p, rows, tid, title))


def repeat_blocks(rep, p) -> list:
    return per_metric(p, lambda rows, tid, title: repeat_long(rep, p, rows, tid, title))


def per_metric(p, table) -> list:
    """A table per compared statistic of its cells (``table(rows, id, title)``)."""
    out = []
    for metric in COMPARED_TABLES:
        rows = [r for r in p.rows if r.metric == metric]
        if rows:
            label = METRICS[metric].label
            out.append(table(rows, f"{p.part}-{metric}", f"{label[0].upper()}{label[1:]} (µs)"))
    return out


FIGURES = (
    Figure("qd1_4k_read_mean_us", "QD1 RND 4KiB read: mean response time", "µs", "lower", "lat",
           cell_key("rand", 4096, 100), "lat_mean_us", 30),
    Figure("qd1_4k_read_p99999_us", "QD1 RND 4KiB read: 99.999% response time", "µs", "lower", "lat",
           cell_key("rand", 4096, 100), "p99.999_us", 31),
    Figure("qd1_4k_write_mean_us", "QD1 RND 4KiB write: mean response time", "µs", "lower", "lat",
           cell_key("rand", 4096, 0), "lat_mean_us", 32),
    Figure("qd1_4k_write_p99999_us", "QD1 RND 4KiB write: 99.999% response time", "µs", "lower", "lat",
           cell_key("rand", 4096, 0), "p99.999_us", 33),
)
OUTLIER_CELLS = ((10, "qd1_4k_read", "QD1 RND 4KiB read", "lat", cell_key("rand", 4096, 100)),
                 (11, "qd1_4k_write", "QD1 RND 4KiB write", "lat", cell_key("rand", 4096, 0)))


def figure_value(ctx: RunContext, part: PartResult, f: Figure, window: str) -> tuple | None:
    """A figure's response time: the mean or the pooled 99.999% of its cell's window."""
    w = ctx.latency(part, f.key)
    if not w.steps:
        return None, "", part.reached, window
    if f.stat == "lat_mean_us":
        return w.mean_us, "", part.reached, window + f", {w.ios:,} IOs"
    v = w.percentile_us(99.999)
    return v, ("" if w.resolved(99.999) else approx_max_note(99.999)), part.reached, window + f", {w.ios:,} IOs"


STIMULUS = "RND; R/W mix 100/0, 65/35, 0/100 (outer) × block size 8, 4, 0.5 KiB (inner)"
KINDS = {"lat": ReportKind(sections, "Latency Test (REQUIRED) – Report Page", lambda *_: STIMULUS,
                           toio=lambda _ctx: (1, 1), details=Details(lambda m, _w: m.lat_mean_ns / 1e3, "µs", "mean response time"), compare=compare_blocks,
                           repeats=repeat_blocks, figures=FIGURES, outlier_cells=OUTLIER_CELLS,
                           figure_value=figure_value)}
