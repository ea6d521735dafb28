"""The document model of every document ssdpts writes: a run's report, a comparison, a repeats
analysis, a quick run's page and a trace replay's page, and their comparisons.

Plain data, no behaviour that reads anything: a document is made of sections of blocks
(:class:`Para`, :class:`Alert`, :class:`Fields`, :class:`Table`, :class:`Plot`); a plot is the
name of a plot function (report/draw.py) and its arguments, which a renderer describes for the
page's script to draw. The builders (report/assemble.py and pages/, compare_doc.py,
quick_html.py, replay_html.py) make documents; the renderers (html.py, compare_html.py,
quick_html.py's render) write them. A leaf module: it imports nothing of ssdpts.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
import io
from pathlib import Path
from typing import Any


@dataclass
class Para:
    text: str
    kind: str = "para"


@dataclass
class Alert:
    level: str  # "bad" (red), "warn" (amber), "ok" (green), "info"
    title: str
    items: list[str] = field(default_factory=list)
    kind: str = "alert"


@dataclass
class Fields:
    title: str
    rows: list[tuple[str, str]]
    kind: str = "fields"


@dataclass
class Cell:
    text: str
    value: float | None = None  # the raw number (HTML data-value), None for text cells
    # "ok" / "bad" / "warn" for verdict cells; comparisons: pos / neg / pos2 / neg2 / zero (deltas),
    # na, nss, median, base; quick pages: l, med, runs
    css: str = ""
    # What the number is, "<part>:<cell key>:<statistic>" (docs/report.md "Numbers"): the HTML
    # carries it as data-ref and tests recompute every such value from fio's raw json+.
    ref: str = ""
    detail: str = ""  # HTML: the id of this cell's details (per-round values, histogram, fio job)
    flag: str = ""  # a qualifier shown with the value, e.g. "≈ max: fewer than 10⁵ IOs"


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]  # header of each column, the first being the row-label column
    rows: list[list[Cell]]
    note: str = ""
    numeric: bool = True  # right-align columns after the first
    kind: str = "table"
    groups: list[str | None] = field(default_factory=list)  # one-page documents: a heading before row i, or None

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow([c.text if c.value is None else repr(float(c.value)) for c in r])
        return buf.getvalue()

    @property
    def narrow(self) -> bool:
        """Narrow enough to sit beside another table (comparisons: HTML grid, PDF pair): by characters per row."""
        chars = sum(max([len(str(self.columns[c]))] + [len(r[c].text) for r in self.rows if c < len(r)]) + 3
                    for c in range(len(self.columns)))
        return self.numeric and chars <= 64 and len(self.rows) <= 14


@dataclass
class Plot:
    id: str
    title: str
    caption: str
    draw: str  # the plot function (report/draw.py PLOTS) that describes it into a chart.Figure
    args: dict[str, Any]  # its arguments: plain data
    size: tuple[float, float] = (10.0, 4.6)  # inches; the page scales it to its width
    kind: str = "plot"


@dataclass
class Section:
    id: str
    title: str
    level: int = 2  # 2: a test or a top-level section, 3: a subsection
    test: str | None = None  # run reports: whose set-up / test parameters head the PDF pages of this section
    blocks: list = field(default_factory=list)
    new_page: bool = False  # PDF (and HTML print): start on a new page


def sections_toc(sections: list) -> list[tuple[Any, list]]:
    """The table of contents: each top-level (level 2) section with the subsections that follow it."""
    out: list[tuple[Any, list]] = []
    for s in sections:
        if s.level <= 2 or not out:
            out.append((s, []))
        else:
            out[-1][1].append(s)
    return out


# ---- a run's report ----------------------------------------------------------------------------------

@dataclass
class TestHeader:
    test: str
    title: str
    setup: list[tuple[str, str]]
    params: list[tuple[str, str]]


@dataclass
class PageHeader:
    """The running header of the printed pages of one test (or of the front pages): SNIA's
    administrative data, device and platform in a few lines, printed in full on every page."""

    label: str  # "IOPS Test (REQUIRED) – Report Page"
    lines: list[str]  # left block, under the label
    right: list[str]  # right block, under "Page x of y"
    footer: str = ""  # compliance / partial / steady-state status of these pages


@dataclass
class Report:
    """A run's report: the SNIA header block (docs/pts-reference.md#report-header), the compliance / partial / steady-state
    banners, the front sections (datasheet, verdicts, report header) and one section per test."""

    run_dir: Path
    title: str
    subtitle: str
    status: str
    partial: Alert | None
    compliance: Alert | None
    notices: list[Alert]
    admin: list[tuple[str, str]]
    platform: list[tuple[str, str]]
    device: list[tuple[str, str]]
    tests: dict[str, TestHeader]
    overview: Table
    sections: list[Section]
    generated: str
    short_header: dict[str, str]  # a few fields for every page: pts, device, run date...
    description: list[tuple[str, str]] = field(default_factory=list)  # --describe FILE, flattened
    front: list[Section] = field(default_factory=list)  # datasheet, verdicts, report header
    page_headers: dict[str, PageHeader] = field(default_factory=dict)  # "" (front pages) and each test
    details: dict[str, dict] = field(default_factory=dict)  # HTML: per-cell details, by Cell.detail
    test_id: str = ""
    plot_mark: str | None = None  # printed inside every plot: "not PTS compliant"
    pdf_title: str = ""  # the document title (HTML <title>, PDF metadata)
    # one line per tracking variable (or part) without steady state: test, variable, and its rounds
    steady_state_missed: list[str] = field(default_factory=list)

    @property
    def toc(self) -> list[tuple[Section, list[Section]]]:
        return sections_toc(self.front + self.sections)


# ---- a comparison or a repeats analysis of PTS runs -----------------------------------------------------

@dataclass
class Doc:
    kind: str  # "comparison" or "repeats"
    kicker: str
    title: str
    subtitle: str
    meta: str
    alerts: list[Alert]
    banners: list[tuple[str, str]]  # (level, text) on every PDF page
    sections: list[Section]
    generated: str
    data: dict  # comparison_dict / repeats_dict: the JSON format

    @property
    def toc(self) -> list[tuple[Section, list[Section]]]:
        return sections_toc(self.sections)


# ---- one page: a quick run, a trace replay, and their comparisons ---------------------------------------

@dataclass
class Page:
    title: str
    kicker: str
    fields: Fields
    table: Table  # the figures; Table.groups: the group heading before each row
    tables: list[Table] = field(default_factory=list)  # more tables after it (replay: response times, IO counts)
    heat: dict | None = None  # replay: the trace's LBA heat map (reads and writes per 1/n of the range)
    disclosures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    footer: str = ""
