"""The HTML report: one self-contained file (inline CSS, inline SVG plots, nothing fetched), with a
table of contents, readable on a laptop and printable. Rendered with jinja2, autoescape on: strings
from devices and description files cannot inject markup."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from . import plots
from .model import Plot, Report

TEMPLATES = Path(__file__).parent / "templates"


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["csv_href"] = lambda table: "data:text/csv;charset=utf-8," + quote(table.csv())
    return env


def render_html(report: Report) -> str:
    svgs: dict[str, Markup] = {}
    for sec in report.sections:
        for b in sec.blocks:
            if isinstance(b, Plot):
                # matplotlib escapes the text it writes into the SVG; the markup itself is ours.
                svgs[b.id] = Markup(plots.to_svg(b.draw, b.size, salt=b.id))
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    return _env().get_template("report.html.j2").render(r=report, svgs=svgs, css=Markup(css))
