"""One-page report of a quick run (ssdpts quick) and of a comparison of quick runs: the same
stylesheet as the PTS report; the PDF is the HTML printed by Chromium (report/chromium.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from . import FORMATS, _write_atomic, output_paths, parse_formats
from .html import TEMPLATES, _env, css_string
from ssdpts.workloads.quick import comparison_text, load
from ..results.registry import fmt_delta

RSE_NOTE = ("Median: the value of the middle run (a measured value, never an average; seed 004 §4.1). "
            "RSE = s / (x̄ · √N), s the sample standard deviation of the N runs (seed 004 §4.2); above 5% two runs "
            "are added up to 7, then the figure is marked unreliable. MB/s = 10⁶ bytes per second.")


@dataclass
class QuickDoc:
    title: str
    kicker: str
    fields_title: str
    fields: list[tuple[str, str]]
    columns: list[str]
    rows: list[dict] = field(default_factory=list)
    disclosures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    footer: str = ""
    # more tables after the main one (replay: response times, trace vs replay): {caption, columns, rows}
    tables: list[dict] = field(default_factory=list)
    figure_svg: str = ""  # an inline SVG after the tables (replay: the trace's LBA heat map)


def _num(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"


def _size(n: int) -> str:
    return f"{n / 2**30:,.2f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def _rse(r: float | None) -> str:
    return "n/a" if r is None else f"{100 * r:.2f}%"


def _grouped(figures: list[dict], cells) -> list[dict]:
    rows, group = [], None
    for f in figures:
        rows.append({"group": f["group"] if f["group"] != group else None, "cells": cells(f)})
        group = f["group"]
    return rows


def run_head(man: dict) -> tuple[str, str, list[tuple[str, str]]]:
    """(device name, kicker line, Target/Model/Host fields) of a quick or replay run's manifest."""
    t = man.get("target") or {}
    host = man.get("host") or {}
    ident = " ".join(str(x) for x in (t.get("vendor"), t.get("model")) if x) or t.get("name") or "target"
    kicker = (f"{man.get('status', 'unknown')} · {man.get('created', '')} · ssdpts {man.get('ssdpts_version', '')} · "
              f"fio {str(man.get('fio_version', '')).removeprefix('fio-')}")
    return ident, kicker, [
        ("Target", f"{t.get('path')} ({t.get('kind')}, {_size(int(t.get('size_bytes') or 0))})"),
        ("Model / serial / firmware", " / ".join(str(t.get(k) or "—") for k in ("model", "serial", "firmware"))),
        ("Host", f"{host.get('hostname', '—')} · kernel {host.get('kernel', '—')}")]


def verdict(reliable: bool | None) -> tuple[str, str]:
    """A figure's status and its cells' style, from its recorded verdict (quick.json, replay.json):
    judged reliable; not judged (None: an interruption stopped its runs before the set was whole,
    seed 004 §4.2 judges only a whole set), shown as incomplete, a warning, not as unreliable; or
    judged unreliable (RSE above 5% after the runs allowed, or no RSE at all: no data moved)."""
    if reliable is None:
        return "incomplete", "warn"
    return ("ok", "") if reliable else ("UNRELIABLE", "bad")


def build(run_dir: Path) -> QuickDoc:
    man, doc = load(run_dir)
    spec = doc["spec"]

    def cells(f: dict) -> list[tuple[str, str]]:
        status, css = verdict(f["reliable"])
        return [(f["label"], "l"), (f["unit"], ""), (_num(f["median"]), css or "med"),
                (_rse(f["rse"]), css), (str(f["n"]), "warn" if f["n"] > spec["runs"] else ""),
                (" · ".join(_num(v) for v in f["values"]), "runs"), (status, css)]

    ident, kicker, head = run_head(man)
    return QuickDoc(
        title=f"Quick synthetic table — {ident}", kicker=kicker,
        fields_title="Device and settings",
        fields=[*head,
                ("Runs", f"{spec['runs']} warm runs of {spec['seconds']:g} s per figure (up to {spec['max_runs']}), "
                         f"ioengine {spec['ioengine']}, seed {spec['seed']}")],
        columns=["Figure", "Unit", "Median", "RSE", "N", "Runs (in order)", "Status"],
        rows=_grouped(doc["figures"], cells),
        disclosures=list(man.get("deviations") or []),
        notes=[RSE_NOTE, "Raw fio json+ of every run: fio/<figure>-rNN.json in the run directory; quick.json "
                         "holds every run's value (docs/results-format.md)."],
        footer=f"ssdpts quick · {Path(run_dir).name}")


def _marked(text: str, reliable: bool | None) -> tuple[str, str]:
    """A compared median, starred when unreliable; a figure the run did not measure (reliable None)
    is n/a, not unreliable."""
    return (text + (" *" if reliable is False else ""), "bad" if reliable is False else "")


def build_comparison(cmp: dict, *, title: str = "Quick synthetic table — comparison",
                     disclosures: tuple[str, ...] = (
                         "Δ = A/B − 1 for every figure (speed: MB/s, kIOPS; seed 004 §4.3): positive means A is faster",
                         "* the figure is unreliable in that run (RSE above 5% after 7 runs): its delta is not evidence"),
                     notes: tuple[str, ...] = (RSE_NOTE,), footer: str = "ssdpts compare (quick runs)",
                     fmt=lambda v, _unit: _num(v)) -> QuickDoc:
    """The comparison page of quick runs (and, with its own texts and number format, of trace replays)."""
    labels = [r["label"] for r in cmp["runs"]]
    cols = ["Figure", "Unit", f"B: {labels[0]}"]
    for i, lab in enumerate(labels[1:], start=1):
        cols += [f"{'A' if len(labels) == 2 else f'A{i}'}: {lab}", "Δ"]

    def cells(row: dict) -> list[tuple[str, str]]:
        out = [(row["label"], "l"), (row["unit"], ""),
               _marked(fmt(row["values"][0], row["unit"]), row["reliable"][0])]
        for v, ok, d in zip(row["values"][1:], row["reliable"][1:], row["deltas"][1:]):
            out.append(_marked(fmt(v, row["unit"]), ok))
            out.append((fmt_delta(d), "" if d is None else "pos" if d > 0.0005 else "neg" if d < -0.0005 else ""))
        return out

    return QuickDoc(
        title=title, kicker=f"baseline B: {cmp['baseline']}",
        fields_title="Runs", fields=[(("B" if i == 0 else f"A{'' if len(labels) == 2 else i}"), r["run_dir"])
                                     for i, r in enumerate(cmp["runs"])],
        columns=cols, rows=_grouped(cmp["rows"], cells), disclosures=list(disclosures), notes=list(notes),
        footer=footer)


def render_html(doc: QuickDoc) -> str:
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    return _env().get_template("quick.html.j2").render(d=doc, css=Markup(css), footer=Markup(css_string(doc.footer)),
                                                       svg=Markup(doc.figure_svg))


def _write(doc: QuickDoc, paths: dict[str, Path], data: dict | None = None) -> list[Path]:
    html = render_html(doc)
    for fmt, path in paths.items():
        if fmt == "html":
            _write_atomic(path, html.encode("utf-8"))
        elif fmt == "pdf":
            from .chromium import print_pdf

            _write_atomic(path, print_pdf(html))
        else:
            import json

            _write_atomic(path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode())
    return list(paths.values())


def render(run_dir: Path | str, formats=FORMATS, out: Path | str | None = None) -> list[Path]:
    """report.html / report.pdf of a quick run directory (or at ``out``)."""
    formats = parse_formats(formats) if isinstance(formats, str) else tuple(formats)
    return _write(build(Path(run_dir)), output_paths(Path(run_dir), formats, out))


def render_comparison(cmp: dict, formats=("html", "pdf"), out: Path | str | None = None) -> list[Path]:
    """ssdpts-compare.<fmt> of quick runs (json: the comparison's numbers)."""
    return _write(build_comparison(cmp), output_paths(".", tuple(formats), out, "ssdpts-compare"), cmp)


__all__ = ["render", "render_comparison", "build", "build_comparison", "comparison_text"]
