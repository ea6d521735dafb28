"""SNIA-format reports (HTML and PDF) generated from a run directory alone.

    from ssdpts.report import render
    render(Path("ssdpts-runs/20260101T000000Z-iops-..."))          # report.html + report.pdf in the run dir
    render(run_dir, formats=("pdf",), out=Path("/tmp/drive-a.pdf"))
    render(run_dir, targets="ocp-targets.csv")                      # page 1 compares with targets

Reads manifest.json, steps.jsonl and summary.json (never fio, never a device). One document model
for every document (doc.py), assembled for a run by assemble.py from the front matter and each
test's pages (pages/); one HTML template; the plots are JSON descriptions (chart.py, plots.py) that the page's
script draws with d3 (templates/chart.js); the PDF is that HTML printed by headless Chromium
(chromium.py). jinja2 is imported by this package only, when it renders, so the rest of ssdpts
starts fast without it.
"""

from __future__ import annotations

from contextlib import contextmanager
import gc
from pathlib import Path

from ..errors import UserError
from .files import FORMATS, output_paths, parse_formats, write_atomic


def _imports():
    try:
        from . import html
        from .assemble import load
    except ImportError as exc:  # a broken installation: jinja2 is a dependency of ssdpts
        raise UserError(f"reports need jinja2 ({exc.name} is missing): pip install ssdpts "
                        f"again (it is a dependency)") from None
    return load, html


@contextmanager
def _few_collections():
    """The cyclic garbage collector, quieter while a report renders: what is imported and, once read
    (``gc.freeze()`` again after loading), the run's records (a long run: 10 MB of step records) are
    frozen out of its scans, and it runs every 50,000 allocations instead of every 700 (loading a run
    allocates millions of small objects and frees nearly all of them by reference counting).
    Restored afterwards."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def render(run_dir: Path, formats=FORMATS, out: Path | str | None = None,
           targets: Path | str | None = None) -> list[Path]:
    """Render the report of a run directory; returns the files written. ``targets``: a file of
    datasheet targets (report/datasheet.py) for page 1.

    The plots are described once for both formats and drawn by the page; the PDF is the same HTML
    printed by Chromium, which starts while the run is read."""
    run_dir = Path(run_dir)
    if isinstance(formats, str):
        formats = parse_formats(formats)
    formats = tuple(formats)
    for f in formats:
        if f not in FORMATS:
            raise UserError(f"unknown report format {f!r}: choose html, pdf or html,pdf")
    load, html = _imports()
    with _few_collections():
        return _render(run_dir, formats, out, targets, load, html)


def _render(run_dir: Path, formats: tuple[str, ...], out, targets, load, html) -> list[Path]:
    browser = None
    no_browser: UserError | None = None
    if "pdf" in formats:  # the browser starts while the run is read
        from . import chromium

        try:
            browser = chromium.start()
        except UserError as exc:
            no_browser = exc
    try:
        report = load(run_dir, targets=targets)
        gc.freeze()  # the report's content, read once, lives until the end: out of the collector's scans
        paths = output_paths(run_dir, formats, out)
        rendered = html.render_plots(report)  # the plots' descriptions, for both media
        written: list[Path] = []
        for fmt in formats:
            if fmt == "html":
                text = html.render_html(report, rendered=rendered, out_dir=paths[fmt].parent)
                write_atomic(paths[fmt], text.encode("utf-8"))
                written.append(paths[fmt])
            else:
                if no_browser is not None:
                    done = f"{', '.join(map(str, written))} written; " if written else ""
                    raise UserError(f"{done}{no_browser}")
                write_atomic(paths[fmt], browser.print_pdf(html.render_html(report, interactive=False,
                                                                             rendered=rendered)))
                written.append(paths[fmt])
    finally:
        if browser is not None:
            browser.close()
    return [paths[f] for f in formats]


__all__ = ["render", "parse_formats", "output_paths", "FORMATS"]
