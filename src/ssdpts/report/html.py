"""The report as one HTML document, for the screen and for print: one template, one stylesheet.

* Both media: the plots are JSON descriptions (chart.py, plots.py, drawn from the document's data by draw.py) drawn into inline SVG by the
  page's script (templates/chart.js on d3, both inline; nothing fetched).
* Screen (``interactive=True``): one self-contained file; hovering a plot shows the exact value,
  round and step of the nearest point; the legend and a row of buttons toggle series; a table
  value opens its cell's rounds, histogram, QoS and fio job section (templates/report.js and the
  cells' details).
* Print (``interactive=False``): the same document without the interactions and the details; CSS
  paged media gives the SNIA running header of each test's pages (``@page`` margin boxes, "Page x
  of y"), and Chromium prints it to the PDF once its script drew the plots (report/chromium.py).

Rendered with jinja2, autoescape on: strings from devices and description files cannot inject
markup; the CSS strings of the page headers and the JSON data are escaped for their context.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from .doc import Report
from .draw import describe_plots

TEMPLATES = Path(__file__).parent / "templates"
D3 = "d3.v7.9.2.min.js"  # vendor/: d3 (ISC licence, vendor/d3.LICENSE), from the npm package d3 7.9.2


@functools.lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    """The template environment, made once per process: 'both' formats and the comparison report
    then compile each template once."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["csv_href"] = lambda table: "data:text/csv;charset=utf-8," + quote(table.csv())
    return env


def css_string(text: str) -> str:
    """A CSS string literal: quotes and backslashes escaped, newlines as \\A, markup characters as CSS
    escapes, no control characters."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\A ")
        elif ch in "<>&":  # inside <style>: "</style>" in a device string must not end the element
            out.append(f"\\{ord(ch):X} ")
        elif ord(ch) < 32 or ch == "\x7f":
            out.append(" ")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def page_css(report: Report) -> str:
    """@page rules: the running header of the front pages and of each test's pages (named pages)."""
    rules = []
    for test, h in report.page_headers.items():
        name = "" if not test else f" t-{test}"
        left = css_string("\n".join([h.label, *h.lines]))
        right = css_string("\n" + "\n".join(h.right))
        foot = css_string(h.footer)
        rules.append(
            f"@page{name} {{"
            f" @top-left {{ content: {left}; }}"
            f" @top-right {{ content: \"Page \" counter(page) \" of \" counter(pages) {right}; }}"
            f" @bottom-left {{ content: {foot}; }}"
            f" @bottom-right {{ content: {css_string('ssdpts · ' + report.run_dir.name)}; }} }}")
        if test:
            rules.append(f".t-{test} {{ page: t-{test}; }}")
    return "\n".join(rules)


def _json(data) -> Markup:
    """JSON inside <script type="application/json">: every '<' escaped ('</script>', '<!--' and device
    strings that look like markup cannot end or confuse the element)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    return Markup(text.replace("<", "\\u003c"))  # no markup at all inside the element


def render_plots(report: Report) -> dict[str, dict]:
    """Every plot of the report, described once for both media and drawn by the page."""
    return describe_plots(report.front + report.sections, report.plot_mark)


@functools.lru_cache(maxsize=1)
def plot_script() -> Markup:
    """d3 and the script that draws the plots from their descriptions (both media)."""
    d3 = (TEMPLATES / "vendor" / D3).read_text(encoding="utf-8")
    own = (TEMPLATES / "chart.js").read_text(encoding="utf-8")
    return Markup(_script_text(d3) + "\n" + _script_text(own))


def _script_text(text: str) -> str:
    """Script text for an inline <script>: '</script' and '<!--' cannot end or confuse the element."""
    return text.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def render_html(report: Report, *, interactive: bool = True, rendered: dict[str, dict] | None = None,
                out_dir: Path | None = None) -> str:
    """The report's HTML. ``out_dir``: where the file goes, so that links to the run's fio files
    are relative to it (default: the run directory)."""
    if rendered is None:
        rendered = render_plots(report)
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    data = None
    script = None
    if interactive:
        base = os.path.relpath(report.run_dir.resolve(), (out_dir or report.run_dir).resolve())
        data = _json({"details": report.details, "base": "" if base == "." else base.replace(os.sep, "/") + "/"})
        script = Markup((TEMPLATES / "report.js").read_text(encoding="utf-8"))
    return _env().get_template("report.html.j2").render(
        r=report, css=Markup(css), page_css=Markup(page_css(report)), interactive=interactive,
        data=data, script=script, plots=_json(rendered), plot_script=plot_script(),
        sections=report.front + report.sections)
