"""Comparison and repeated-runs reports, in the style of the run reports: one self-contained HTML
file (jinja2 with autoescape, the report stylesheet, plots drawn in the page by templates/chart.js) and its A4 PDF, the same
HTML printed by Chromium (report/chromium.py) as the run reports are.

    from ssdpts.compare import compare_runs
    from ssdpts.report.compare_html import render
    render(compare_runs([run_a, run_b]), formats=("html", "pdf"), out="drive-a-vs-b")

Both formats render the same document (report/doc.py's Doc: alerts, tables, plots, made by
report/compare_doc.py); the tables and the numbers come from ssdpts.compare, which reads only the
run directories. jinja2 is imported by this module alone, which the CLI imports only when it renders.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..compare import Comparison
from ..errors import UserError
from .compare_doc import build_comparison, build_repeats
from .doc import Doc
from .draw import describe_plots
from .files import output_paths, write_atomic

TEMPLATES = Path(__file__).parent / "templates"
FORMATS = ("html", "pdf", "json")


# ---- HTML ----------------------------------------------------------------------------------------

def render_specs(doc: Doc) -> dict[str, dict]:
    """Every plot of the document as its description (report/chart.py): made once for both media."""
    return describe_plots(doc.sections)


def render_html(doc: Doc, interactive: bool = True, specs: dict[str, dict] | None = None) -> str:
    """The document's HTML (the run reports' template environment); ``specs``: its plots, when
    already described (render_specs)."""
    from markupsafe import Markup

    from .html import _env, _json, plot_script

    if specs is None:
        specs = render_specs(doc)
    css_path = TEMPLATES / "report.css"
    css = css_path.read_text(encoding="utf-8") if css_path.exists() else ""
    return _env().get_template("compare.html.j2").render(
        d=doc, plots=_json(specs), plot_script=plot_script(),
        css=Markup(css), page_css=Markup(page_css(doc)), interactive=interactive)


# ---- PDF -----------------------------------------------------------------------------------------

def page_css(doc: Doc) -> str:
    """The running header and footer of the printed comparison: what it compares, "Page x of y", and
    the banners (settings differ, steady state, partial runs) on every page."""
    from .html import css_string

    left = css_string("\n".join([doc.kicker, doc.title, doc.subtitle]))
    foot = css_string(" · ".join(text for _, text in doc.banners if text))
    return (f"@page {{ @top-left {{ content: {left}; }}"
            f" @top-right {{ content: \"Page \" counter(page) \" of \" counter(pages) {css_string(chr(10) + doc.generated)}; }}"
            f" @bottom-left {{ content: {foot}; color: #cf222e; }}"
            f" @bottom-right {{ content: \"ssdpts {doc.kind}\"; }} }}")


def render_pdf(doc: Doc, browser=None, specs: dict[str, dict] | None = None) -> bytes:
    """The comparison's HTML printed by Chromium (report/chromium.py): the same machinery, the same
    layout as the run reports' PDF."""
    from . import chromium

    return chromium.print_pdf(render_html(doc, interactive=False, specs=specs), browser)


# ---- files ---------------------------------------------------------------------------------------

def parse_formats(text: str | None) -> tuple[str, ...]:
    if not text:
        return ("html", "pdf")
    out = []
    for f in text.replace(" ", "").lower().split(","):
        if not f:
            continue
        if f not in FORMATS:
            raise UserError(f"unknown format {f!r}: choose html, pdf, json or a comma-separated list such as html,pdf")
        if f not in out:
            out.append(f)
    if not out:
        raise UserError("no format given: choose html, pdf, json or a list such as html,pdf")
    return tuple(out)


def build(obj) -> Doc:
    return build_comparison(obj) if isinstance(obj, Comparison) else build_repeats(obj)


def render(obj, formats=("html", "pdf"), out: str | Path | None = None) -> list[Path]:
    """Write the comparison (or repeats analysis) in each format; returns the files written."""
    if isinstance(formats, str):
        formats = parse_formats(formats)
    doc = build(obj)
    stem = "ssdpts-compare" if doc.kind == "comparison" else "ssdpts-repeats"
    paths = output_paths(".", tuple(formats), out, stem)  # default: <stem>.<fmt> in the current directory
    specs = render_specs(doc) if {"html", "pdf"} & set(formats) else None  # described once for both
    for fmt in formats:
        if fmt == "html":
            write_atomic(paths[fmt], render_html(doc, specs=specs).encode("utf-8"), what="")  # errors name the path alone
        elif fmt == "pdf":
            write_atomic(paths[fmt], render_pdf(doc, specs=specs), what="")
        elif fmt == "json":
            write_atomic(paths[fmt], (json.dumps(doc.data, indent=1, ensure_ascii=False, default=str) + "\n").encode(),
                          what="")
    return [paths[f] for f in formats]


__all__ = ["render", "build", "build_comparison", "build_repeats", "render_html", "render_pdf", "parse_formats",
           "Doc", "FORMATS"]
