"""Plots drawn from their data: every plot function a document may name (report/doc.py's
Plot.draw), and the JSON description of every plot of a document for the page's script
(templates/chart.js), made once for the screen and the print."""

from __future__ import annotations

from . import chart, compare_plots, plots, plots_ext
from .doc import Plot

PLOTS = {f.__name__: f for f in (
    plots.rounds_lines, plots.tracking_convergence, plots.ss_window, plots.iops_vs_bs, plots.bars3d,
    plots.bars3d_pair, plots.tp_bars, plots.latency_histograms, plots.confidence_curves, plots.wsat_scatter,
    plots.temperature,
    plots_ext.segments_vs_time, plots_ext.grouped_bars, plots_ext.rate_and_latency, plots_ext.lines_per_group,
    plots_ext.heatmap, plots_ext.wsat_model,
    compare_plots.iops_overlay, compare_plots.runs_bars, compare_plots.lat_panels, compare_plots.wsat_overlay,
    compare_plots.spread_rse,
)}


def describe(plot: Plot, mark: str | None = None) -> dict:
    """One plot's JSON description (report/chart.py); ``mark``: the note in its corner."""
    return chart.render(PLOTS[plot.draw], plot.args, plot.size, mark)


def describe_plots(sections, mark: str | None = None) -> dict[str, dict]:
    """Every plot block of these sections as its JSON description, by id; ``mark``: the note in each
    plot's corner (e.g. "not PTS compliant")."""
    return {b.id: describe(b, mark) for sec in sections for b in sec.blocks if isinstance(b, Plot)}
