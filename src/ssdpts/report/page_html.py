"""The one-page documents (report/doc.py's Page: a quick run, a trace replay, their comparisons)
as HTML, with the report's stylesheet, and as the PDF Chromium prints from it; the replay's LBA
heat map drawn from its data as an inline SVG."""

from __future__ import annotations

import json
from pathlib import Path

from markupsafe import Markup, escape

from .doc import Page
from .html import TEMPLATES, _env, css_string
from .files import write_atomic
from ..pts.units import fmt_capacity


def size_text(n: int) -> str:
    return fmt_capacity(n)


def heat_svg(heat: dict) -> str:
    """Reads and writes per 1/64 of the LBA range as two rows of cells, darker = more IOs."""
    n = heat["bins"]
    w, h, left = 10, 14, 52
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {left + n * w + 4} {2 * h + 26}" role="img" '
             f'aria-label="LBA heat map">']
    for row, (name, color) in enumerate((("reads", "31,111,235"), ("writes", "207,34,46"))):
        counts = heat[name]
        top = max(counts) or 1
        y = 4 + row * (h + 2)
        parts.append(f'<text x="0" y="{y + h - 3}" font-size="10" fill="#333">{name}</text>')
        for i, c in enumerate(counts):
            a = 0.0 if not c else 0.12 + 0.88 * c / top
            parts.append(f'<rect x="{left + i * w}" y="{y}" width="{w - 1}" height="{h}" fill="rgba({color},{a:.3f})" '
                         f'stroke="#d0d7de" stroke-width="0.3"><title>{name} {c}</title></rect>')
    ext = heat["extent_bytes"]
    y = 2 * h + 20
    parts.append(f'<text x="{left}" y="{y}" font-size="9" fill="#59636e">LBA 0</text>')
    parts.append(f'<text x="{left + n * w}" y="{y}" font-size="9" fill="#59636e" text-anchor="end">'
                 f'{escape(size_text(ext))} — LBA heat map of the trace, IOs per 1/{n} of the range</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(doc: Page) -> str:
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    return _env().get_template("quick.html.j2").render(d=doc, css=Markup(css), footer=Markup(css_string(doc.footer)),
                                                       svg=Markup(heat_svg(doc.heat) if doc.heat else ""))


def write(doc: Page, paths: dict[str, Path], data: dict | None = None) -> list[Path]:
    """The page in each format of ``paths`` (json: ``data``, the numbers it shows)."""
    html = render_html(doc)
    for fmt, path in paths.items():
        if fmt == "html":
            write_atomic(path, html.encode("utf-8"))
        elif fmt == "pdf":
            from .chromium import print_pdf

            write_atomic(path, print_pdf(html))
        else:
            write_atomic(path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode())
    return list(paths.values())
