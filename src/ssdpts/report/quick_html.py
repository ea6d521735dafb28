"""One-page report of a quick run (ssdpts quick) and of a comparison of quick runs: a Page
(report/doc.py) rendered by report/page_html.py with the stylesheet of the PTS report; the PDF is
the HTML printed by Chromium (report/chromium.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ssdpts.workloads.quick import load
from ..results.registry import fmt_delta
from ..results import timing
from ..results.records import Manifest
from ..results.repeated import Figure
from .doc import Cell, Fields, Page, Table
from .files import FORMATS, output_paths, parse_formats
from .fmt import fmt_figure
from .page_html import size_text, write

RSE_NOTE = ("Median: the value of the middle run (a measured value, never an average). "
            "RSE = s / (x̄ · √N), s the sample standard deviation of the N runs (docs/compare.md#repeated-runs); above 5% two runs "
            "are added up to 7, then the figure is marked unreliable. MB/s = 10⁶ bytes per second.")
FIGURE_COLUMNS = ["Figure", "Unit", "Median", "RSE", "N", "Runs (in order)", "Status"]


def rse_text(r: float | None) -> str:
    return "n/a" if r is None else f"{100 * r:.2f}%"


def grouped(tid: str, columns: list[str], items: list, cells: Callable[[Any], list[Cell]],
            group_of: Callable[[Any], str] = lambda row: row["group"]) -> Table:
    """The table of figures (or a comparison's rows), a group heading before the first of each group."""
    rows, groups, group = [], [], None
    for item in items:
        rows.append(cells(item))
        g = group_of(item)
        groups.append(g if g != group else None)
        group = g
    return Table(tid, "", columns, rows, groups=groups)


def run_head(man: Manifest) -> tuple[str, str, list[tuple[str, str]]]:
    """(device name, kicker line, Target/Model/Host fields) of a quick or replay run's manifest."""
    kicker = (f"{man.status or 'unknown'} · {man.created or ''} · ssdpts {man.ssdpts_version or ''} · "
              f"fio {str(man.fio_version).removeprefix('fio-')}")
    host = [("Host", f"{man.host.get('hostname', '—')} · kernel {man.host.get('kernel', '—')}")]
    t = man.target
    if t is None:  # a manifest without its target (ssdpts always records one)
        return "target", kicker, host
    ident = " ".join(str(x) for x in (t.vendor, t.model) if x) or t.name or "target"
    return ident, kicker, [
        ("Target", f"{t.path} ({t.kind}, {size_text(t.size_bytes)})"),
        ("Model / serial / firmware", " / ".join(str(v or "—") for v in (t.model, t.serial, t.firmware))),
        *host]


def verdict(reliable: bool | None) -> tuple[str, str]:
    """A figure's status and its cells' style, from its recorded verdict (quick.json, replay.json):
    judged reliable; not judged (None: an interruption stopped its runs before the set was whole,
    docs/design.md#repeated-runs judges only a whole set), shown as incomplete, a warning, not as unreliable; or
    judged unreliable (RSE above 5% after the runs allowed, or no RSE at all: no data moved)."""
    if reliable is None:
        return "incomplete", "warn"
    return ("ok", "") if reliable else ("UNRELIABLE", "bad")


def figure_cells(f: Figure, fmt: Callable[[float | None], str], n_css: str = "") -> list[Cell]:
    """A figure's row: label, unit, median, RSE, N, every run's value, status."""
    status, css = verdict(f.reliable)
    return [Cell(f.label, css="l"), Cell(f.unit), Cell(fmt(f.median), css=css or "med"),
            Cell(rse_text(f.rse), css=css), Cell(str(f.n), css=n_css),
            Cell(" · ".join(fmt(v) for v in f.values), css="runs"), Cell(status, css=css)]


def build(run_dir: Path) -> Page:
    run = load(run_dir)
    man, spec = run.manifest, run.spec
    ident, kicker, head = run_head(man)
    return Page(
        title=f"Quick synthetic table — {ident}", kicker=kicker,
        fields=Fields("Device and settings", [
            *head,
            ("Runs", f"{spec['runs']} warm runs of {spec['seconds']:g} s per figure (up to {spec['max_runs']}), "
                     f"ioengine {spec['ioengine']}, seed {spec['seed']}")]),
        table=grouped("quick", FIGURE_COLUMNS, list(run.figures),
                      lambda f: figure_cells(f, fmt_figure, "warn" if f.n > spec["runs"] else ""), lambda f: f.group),
        disclosures=list(man.deviations or ()),  # in today's words (records.Manifest)
        notes=[RSE_NOTE, "Raw fio json+ of every run: fio/<figure>-rNN.json in the run directory; quick.json "
                         "holds every run's value (docs/results-format.md).", *rates_note(run.figures)],
        footer=f"ssdpts quick · {Path(run_dir).name}")


def rates_note(figures) -> list[str]:
    """How many runs' values are the device's rates, and how many could not be checked
    (docs/methodology.md "Rates as the device did them")."""
    checks = [c for f in figures for c in f.rate_checks]
    dev = sum(1 for c in checks if c.get("state") == "device")
    unchecked = sorted({str(c.get("why")) for c in checks if c.get("state") == "unchecked"})
    out = []
    if dev:
        out.append(f"{dev} of {len(checks)} runs ran over a span at the block layer more than "
                   f"{timing.TOLERANCE_PCT:g}% from fio's run time: their values are fio's IO count and bytes "
                   "over the device's span (docs/methodology.md \"Rates as the device did them\").")
    if unchecked:
        out.append(f"{sum(1 for c in checks if c.get('state') == 'unchecked')} of {len(checks)} runs' values are "
                   f"fio's, not checked against the block layer: {'; '.join(unchecked)}.")
    return out


def _marked(text: str, reliable: bool | None) -> Cell:
    """A compared median, starred when unreliable; a figure the run did not measure (reliable None)
    is n/a, not unreliable."""
    return Cell(text + (" *" if reliable is False else ""), css="bad" if reliable is False else "")


def build_comparison(cmp: dict, *, title: str = "Quick synthetic table — comparison",
                     disclosures: tuple[str, ...] = (
                         "Δ = A/B − 1 for every figure (speed: MB/s, kIOPS; docs/compare.md#delta): positive means A is faster",
                         "* the figure is unreliable in that run (RSE above 5% after 7 runs): its delta is not evidence"),
                     notes: tuple[str, ...] = (RSE_NOTE,), footer: str = "ssdpts compare (quick runs)",
                     fmt=lambda v, _unit: fmt_figure(v)) -> Page:
    """The comparison page of quick runs (and, with its own texts and number format, of trace replays)."""
    labels = [r["label"] for r in cmp["runs"]]
    cols = ["Figure", "Unit", f"B: {labels[0]}"]
    for i, lab in enumerate(labels[1:], start=1):
        cols += [f"{'A' if len(labels) == 2 else f'A{i}'}: {lab}", "Δ"]

    def cells(row: dict) -> list[Cell]:
        out = [Cell(row["label"], css="l"), Cell(row["unit"]),
               _marked(fmt(row["values"][0], row["unit"]), row["reliable"][0])]
        for v, ok, d in zip(row["values"][1:], row["reliable"][1:], row["deltas"][1:]):
            out.append(_marked(fmt(v, row["unit"]), ok))
            out.append(Cell(fmt_delta(d), css="" if d is None else "pos" if d > 0.0005 else "neg" if d < -0.0005 else ""))
        return out

    return Page(
        title=title, kicker=f"baseline B: {cmp['baseline']}",
        fields=Fields("Runs", [(("B" if i == 0 else f"A{'' if len(labels) == 2 else i}"), r["run_dir"])
                               for i, r in enumerate(cmp["runs"])]),
        table=grouped("comparison", cols, cmp["rows"], cells), disclosures=list(disclosures), notes=list(notes),
        footer=footer)


def render(run_dir: Path | str, formats=FORMATS, out: Path | str | None = None) -> list[Path]:
    """report.html / report.pdf of a quick run directory (or at ``out``)."""
    formats = parse_formats(formats) if isinstance(formats, str) else tuple(formats)
    return write(build(Path(run_dir)), output_paths(Path(run_dir), formats, out))


def render_comparison(cmp: dict, formats=("html", "pdf"), out: Path | str | None = None) -> list[Path]:
    """ssdpts-compare.<fmt> of quick runs (json: the comparison's numbers)."""
    return write(build_comparison(cmp), output_paths(".", tuple(formats), out, "ssdpts-compare"), cmp)


__all__ = ["render", "render_comparison", "build", "build_comparison"]
