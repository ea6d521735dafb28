"""The PDF report: SNIA-style A4 pages drawn with matplotlib and collected with PdfPages.

Every page carries the report header (PTS.md §4: administrative, device under test, test platform,
and the set-up and test parameters of the test on that page), the compliance / partial /
steady-state banners, and "Page x of y". The body flows the report's blocks (the same ones the
HTML shows) down the page; a test starts on a new page. Plots are drawn by the same functions as
for the HTML, into a sub-figure of the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import io
import textwrap

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.table import Table as MplTable  # noqa: E402

from . import plots  # noqa: E402
from .model import NA, Alert, Fields, Para, Plot, Report, Table  # noqa: E402

PAGE_W, PAGE_H = 8.27, 11.69  # A4, inches
MX = 0.45  # left/right margin
BODY_W = PAGE_W - 2 * MX
TOP = 0.35
FOOT = 0.45  # space kept for the footer
LINE = 0.118  # header line height at 6.3 pt
BODY_PT = 8.0
BODY_LINE = 0.155

COLORS = {"bad": (plots.BAD, "#ffebe9"), "warn": ("#9a6700", "#fff8c5"), "ok": (plots.OK, "#dafbe1"),
          "info": ("#0969da", "#ddf4ff")}
PDF_STYLE = {**plots.STYLE, "font.size": 7.5, "axes.titlesize": 8, "axes.labelsize": 7.5, "legend.fontsize": 6.8,
             "xtick.labelsize": 6.8, "ytick.labelsize": 6.8, "lines.markersize": 3.2, "lines.linewidth": 1.3,
             # Type 3 (matplotlib's default): subset, text extractable, and a third faster to write than Type 42.
             "pdf.fonttype": 3}


@dataclass
class Heading:
    text: str
    level: int
    id: str
    kind: str = "heading"


@dataclass
class FieldPair:
    left: Fields
    right: Fields | None
    kind: str = "fieldpair"


@dataclass
class Toc:
    entries: list[tuple[int, str, str]]  # level, title, section id
    kind: str = "toc"


@dataclass
class Placed:
    block: object
    y: float  # top, inches from the page top
    h: float


@dataclass
class Page:
    test: str | None
    top: float  # where the body starts
    items: list[Placed] = field(default_factory=list)


# ---- text helpers ----------------------------------------------------------------------------

def _chars(width_in: float, size_pt: float) -> int:
    """How many characters of a proportional font fit in a width (an estimate on the safe side)."""
    return max(8, int(width_in * 72 / (size_pt * 0.58)))


def _wrap(text: str, width_in: float, size_pt: float) -> list[str]:
    return textwrap.wrap(str(text), _chars(width_in, size_pt), break_long_words=True, break_on_hyphens=False) or [""]


def _clip(text: str, width_in: float, size_pt: float, factor: float = 0.58) -> str:
    n = max(8, int(width_in * 72 / (size_pt * factor)))
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def _text(fig, x: float, y: float, s: str, **kw):
    """Text at (x, y) inches from the page's top-left corner. Never parsed as mathtext: device
    strings may contain '$'."""
    kw.setdefault("va", "top")
    kw.setdefault("ha", "left")
    return fig.text(x, PAGE_H - y, s, transform=fig.dpi_scale_trans, parse_math=False, **kw)


def _rect(fig, x: float, y: float, w: float, h: float, **kw):
    kw.setdefault("lw", 0)
    fig.add_artist(Rectangle((x, PAGE_H - y - h), w, h, transform=fig.dpi_scale_trans, **kw))


# ---- page frame ------------------------------------------------------------------------------

class Frame:
    """The header, banners and footer of every page."""

    def __init__(self, report: Report):
        self.r = report
        h = report.short_header
        dev = dict(report.device)
        plat = dict(report.platform)
        adm = dict(report.admin)
        self.row1 = [
            ("Administrative", [("Test run date", h["run_date"]), ("Report date", report.generated),
                                ("PTS revision", adm.get("PTS revision", NA)), ("Test sponsor", h["sponsor"]),
                                ("Run status", report.status), ("Run", h["run"]),
                                ("Software", plat.get("Test software", NA))]),
            ("Device under test", [("Vendor / model", f"{dev.get('Vendor', NA)} / {dev.get('Model', NA)}"),
                                   ("Serial number", dev.get("Serial number", NA)),
                                   ("Firmware", dev.get("Firmware", NA)), ("Capacity", dev.get("Capacity", NA)),
                                   ("Interface", dev.get("Interface", NA)), ("NAND type", dev.get("NAND type", NA)),
                                   ("Write cache", dev.get("Write cache", NA))]),
            ("Test platform", [("Motherboard", plat.get("Motherboard", NA)), ("CPU", plat.get("CPU", NA)),
                               ("Memory", plat.get("Memory", NA)), ("OS", plat.get("Operating system", NA)),
                               ("Kernel", plat.get("Kernel", NA)), ("HBA / PCIe", plat.get("HBA / PCIe", NA)),
                               ("I/O engine", plat.get("I/O engine", NA))]),
        ]
        self.missed_tests = set()
        for row in report.overview.rows:
            if row[3].css == "bad":
                self.missed_tests.add(row[0].text)

    def row2(self, test: str | None):
        th = self.r.tests.get(test) if test else None
        if th is None:
            first = next(iter(self.r.tests.values()), None)
            setup = [("Tests", ", ".join(t.title for t in self.r.tests.values()) or NA)]
            if first is not None:
                setup += [(k, v) for k, v in first.setup if k in ("Data pattern", "Active range", "AR segments",
                                                                   "Write cache")]
            params = [(t.title, v) for t in self.r.tests.values() for k, v in t.params if k == "Demand intensity"]
            params.append(("Compliance", self.r.compliance.title if self.r.compliance else "PTS compliant"))
            return [("Set-up parameters", setup), ("Test parameters (demand intensity)", params)]
        return [(f"Set-up parameters — {th.title}", th.setup), (f"Test parameters — {th.title}", th.params)]

    def banners(self, test: str | None) -> list[tuple[str, str]]:
        out = []
        if self.r.partial:
            out.append(("bad", "PARTIAL REPORT — run " + self.r.status + ": results cover only what finished"))
        if self.r.compliance:
            n = len(self.r.compliance.items)
            out.append(("warn", f"{self.r.compliance.title} — {n} deviation{'s' if n != 1 else ''} from the "
                                f"specification, listed on page 1"))
        if test and self.r.tests.get(test):
            title = self.r.tests[test].title
            missed = [t for t in self.missed_tests if t.startswith(title)]
            if missed:
                out.append(("bad", "steady state NOT reached: " + ", ".join(sorted(missed))))
        return out

    def _box(self, fig, x: float, y: float, w: float, title: str, rows: list[tuple[str, str]], nlines: int) -> None:
        h = (nlines + 1) * LINE + 0.06
        _rect(fig, x, y, w, h, facecolor="none", edgecolor="#8c959f", lw=0.6)
        _rect(fig, x, y, w, LINE + 0.02, facecolor="#24292f")
        _text(fig, x + 0.05, y + 0.017, title.upper(), color="white", fontsize=6.0, fontweight="bold")
        label_w = 0.8 if w < 3 else 1.3
        rows = rows[:nlines]
        # One text per column (not per line): header boxes are on every page, and each matplotlib
        # text object costs layout time.
        yy = y + LINE + 0.045
        _text(fig, x + 0.05, yy, "\n".join(_clip(k, label_w - 0.06, 6.0, 0.5) for k, _ in rows), fontsize=6.0,
              color="#59636e", linespacing=LINE * 72 / 6.0 / 1.17)
        _text(fig, x + label_w, yy, "\n".join(_clip(v, w - label_w - 0.06, 6.0, 0.5) for _, v in rows), fontsize=6.0,
              color="#1f2328", linespacing=LINE * 72 / 6.0 / 1.17)

    def height(self, test: str | None) -> float:
        n1 = max(len(rows) for _, rows in self.row1)
        n2 = max(len(rows) for _, rows in self.row2(test))
        return TOP + 0.3 + (n1 + 1) * LINE + 0.06 + 0.07 + (n2 + 1) * LINE + 0.06 + 0.1 + 0.24 * len(self.banners(test)) + 0.12

    def draw(self, fig, test: str | None, page_no: int, pages: int) -> None:
        r = self.r
        h = r.short_header
        title = h["pts"] + (f" — {r.tests[test].title} test" if test and test in r.tests else " — test report")
        _text(fig, MX, TOP, title, fontsize=10.5, fontweight="bold", color="#1f2328")
        _text(fig, PAGE_W - MX, TOP, f"Page {page_no} of {pages}", fontsize=9, fontweight="bold", ha="right")
        _text(fig, MX, TOP + 0.19, f"{h['device']} · serial {h['serial']} · test run {h['run_date']}", fontsize=7,
              color="#59636e")
        y = TOP + 0.3
        n1 = max(len(rows) for _, rows in self.row1)
        gap = 0.08
        w3 = (BODY_W - 2 * gap) / 3
        for i, (t, rows) in enumerate(self.row1):
            self._box(fig, MX + i * (w3 + gap), y, w3, t, rows, n1)
        y += (n1 + 1) * LINE + 0.06 + 0.07
        row2 = self.row2(test)
        n2 = max(len(rows) for _, rows in row2)
        w2 = (BODY_W - gap) / 2
        for i, (t, rows) in enumerate(row2):
            self._box(fig, MX + i * (w2 + gap), y, w2, t, rows, n2)
        y += (n2 + 1) * LINE + 0.06 + 0.1
        for level, text in self.banners(test):
            fg, bg = COLORS[level]
            strong = level == "bad"
            _rect(fig, MX, y, BODY_W, 0.2, facecolor=fg if strong else bg, edgecolor=fg, lw=0.8)
            _text(fig, MX + 0.08, y + 0.1, _clip(text, BODY_W - 0.2, 7.2), fontsize=7.2, va="center",
                  fontweight="bold", color="white" if strong else fg)
            y += 0.24
        # footer
        _rect(fig, MX, PAGE_H - FOOT + 0.05, BODY_W, 0.006, facecolor="#8c959f")
        _text(fig, MX, PAGE_H - FOOT + 0.12, _clip(f"{h['run']} · generated {r.generated} by {h['software']}",
                                                   BODY_W - 1.2, 6.5), fontsize=6.5, color="#59636e")
        _text(fig, PAGE_W - MX, PAGE_H - FOOT + 0.12, f"Page {page_no} of {pages}", fontsize=7, ha="right",
              fontweight="bold")
        if r.partial:
            fig.text(0.5, 0.42, "PARTIAL", fontsize=96, color=plots.BAD, alpha=0.07, rotation=35, ha="center",
                     va="center", fontweight="bold", parse_math=False)


# ---- blocks: measure and draw ------------------------------------------------------------------

def _alert_lines(a: Alert) -> list[str]:
    out = []
    for it in a.items:
        out += _wrap("• " + it, BODY_W - 0.35, 7.5)
    return out


def _fields_lines(f: Fields, width: float) -> list[tuple[str, list[str]]]:
    lw = min(1.6, width * 0.42)
    return [(k, _wrap(v, width - lw - 0.1, 7.0)) for k, v in f.rows]


def _table_layout(t: Table) -> tuple[float, list[float], list[str], int]:
    """(font size, column widths in inches, wrapped header texts, header lines): columns as wide as
    their widest cell (the header wraps at spaces), shrunk to the body width when they do not fit."""
    cols = len(t.columns)
    body = [max([len(r[c].text) for r in t.rows if c < len(r)] or [0]) for c in range(cols)]
    head = [max([len(w) for w in str(t.columns[c]).split()] + [min(len(str(t.columns[c])), 14)]) for c in range(cols)]
    chars = [max(b, h, 3) + 2 for b, h in zip(body, head)]
    return fit_columns(t.columns, chars, BODY_W)


def fit_columns(columns: list[str], chars: list[float], avail: float, glyph: float = 0.6,
                head_glyph: float = 0.62) -> tuple[float, list[float], list[str], int]:
    """(font size, column widths in inches, wrapped header texts, header lines) of columns ``chars``
    characters wide: 7.2 pt, smaller (down to 5 pt) and then narrower when they do not fit in
    ``avail`` inches. ``glyph`` / ``head_glyph``: a character's width in ems, body / header."""
    size = 7.2
    total = sum(chars) * size * glyph / 72
    if total > avail:
        size = max(5.0, size * avail / total)
    widths = [c * size * glyph / 72 for c in chars]
    if sum(widths) > avail:
        widths = [w * avail / sum(widths) for w in widths]
    heads = ["\n".join(textwrap.wrap(str(name), max(3, int(w * 72 / (size * head_glyph)) - 1)) or [""])
             for name, w in zip(columns, widths)]
    return size, widths, heads, max(h.count("\n") + 1 for h in heads)


def _row_h(size: float) -> float:
    return size / 72 * 1.9


def measure(block, width: float = BODY_W) -> float:
    if isinstance(block, Heading):
        return 0.42 if block.level == 2 else 0.34
    if isinstance(block, Para):
        return len(_wrap(block.text, width, BODY_PT)) * BODY_LINE + 0.08
    if isinstance(block, Alert):
        return 0.26 + len(_alert_lines(block)) * 0.135 + 0.1
    if isinstance(block, FieldPair):
        hs = []
        for f in (block.left, block.right):
            if f is not None:
                w = (width - 0.15) / 2
                hs.append(0.22 + sum(len(v) for _, v in _fields_lines(f, w)) * 0.13 + 0.1)
        return max(hs)
    if isinstance(block, Table):
        size, _, _, hl = _table_layout(block)
        note = len(_wrap(block.note, width, 6.8)) * 0.12 if block.note else 0
        return 0.24 + (len(block.rows) + 0.25 + 0.75 * hl) * _row_h(size) + note + 0.14
    if isinstance(block, Plot):
        cap = len(_wrap(block.caption, width, 6.8)) * 0.12 if block.caption else 0
        return 0.24 + block.pdf_height + cap + 0.12
    if isinstance(block, Toc):
        return 0.3 + len(block.entries) * 0.16
    raise TypeError(type(block))


def draw_block(fig, p: Placed, page_of: dict[str, int]) -> None:
    b, y = p.block, p.y
    if isinstance(b, Heading):
        size = 13 if b.level == 2 else 10.5
        _text(fig, MX, y + 0.08, b.text, fontsize=size, fontweight="bold", color="#1f2328")
        _rect(fig, MX, y + p.h - 0.08, BODY_W, 0.012 if b.level == 2 else 0.006, facecolor="#1f2328")
    elif isinstance(b, Para):
        for i, line in enumerate(_wrap(b.text, BODY_W, BODY_PT)):
            _text(fig, MX, y + i * BODY_LINE, line, fontsize=BODY_PT)
    elif isinstance(b, Alert):
        fg, bg = COLORS.get(b.level, COLORS["info"])
        _rect(fig, MX, y, BODY_W, p.h - 0.08, facecolor=bg, edgecolor=fg, lw=0.8)
        _rect(fig, MX, y, 0.07, p.h - 0.08, facecolor=fg)
        big = b.level == "bad"
        _text(fig, MX + 0.16, y + 0.06, b.title.upper() if big else b.title, fontsize=9.5 if big else 8.5,
              fontweight="bold", color=fg)
        for i, line in enumerate(_alert_lines(b)):
            _text(fig, MX + 0.18, y + 0.27 + i * 0.135, line, fontsize=7.5)
    elif isinstance(b, FieldPair):
        w = (BODY_W - 0.15) / 2
        for j, f in enumerate((b.left, b.right)):
            if f is None:
                continue
            x = MX + j * (w + 0.15)
            _rect(fig, x, y, w, 0.19, facecolor="#24292f")
            _text(fig, x + 0.06, y + 0.035, f.title.upper(), fontsize=7, fontweight="bold", color="white")
            yy = y + 0.25
            lw = min(1.6, w * 0.42)
            for k, lines in _fields_lines(f, w):
                _text(fig, x + 0.06, yy, _clip(k, lw - 0.1, 6.8), fontsize=6.8, color="#59636e", fontweight="bold")
                for i, line in enumerate(lines):
                    na = line.startswith(NA)
                    _text(fig, x + lw, yy + i * 0.13, line, fontsize=7.0, color="#8c959f" if na else "#1f2328")
                yy += 0.13 * len(lines)
                _rect(fig, x, yy - 0.02, w, 0.003, facecolor="#d0d7de")
    elif isinstance(b, Table):
        _draw_table(fig, b, y, p.h)
    elif isinstance(b, Plot):
        _text(fig, MX, y + 0.02, b.title, fontsize=8.5, fontweight="bold",
              color=plots.BAD if "NOT reached" in b.title else "#1f2328")
        top = y + 0.24
        gs = fig.add_gridspec(3, 3, height_ratios=[top, b.pdf_height, max(PAGE_H - top - b.pdf_height, 1e-3)],
                              width_ratios=[MX, BODY_W, MX], hspace=0, wspace=0)
        sub = fig.add_subfigure(gs[1, 1])
        b.draw(sub)
        if b.caption:
            for i, line in enumerate(_wrap(b.caption, BODY_W, 6.8)):
                _text(fig, MX, top + b.pdf_height + 0.04 + i * 0.12, line, fontsize=6.8, color="#59636e")
    elif isinstance(b, Toc):
        _text(fig, MX, y, "Contents", fontsize=10.5, fontweight="bold")
        for i, (level, title, sid) in enumerate(b.entries):
            yy = y + 0.3 + i * 0.16
            indent = 0.0 if level <= 2 else 0.25
            _text(fig, MX + indent, yy, title, fontsize=8 if level <= 2 else 7.5,
                  fontweight="bold" if level <= 2 else "normal")
            _text(fig, MX + BODY_W, yy, str(page_of.get(sid, "")), fontsize=8, ha="right")
            _rect(fig, MX + indent, yy + 0.13, BODY_W - indent, 0.002, facecolor="#d0d7de")


def _draw_table(fig, t: Table, y: float, h: float) -> None:
    size, widths, heads, hl = _table_layout(t)
    row_h = _row_h(size)
    head_units = 0.25 + 0.75 * hl
    _text(fig, MX, y + 0.03, t.title, fontsize=8.5, fontweight="bold",
          color=plots.BAD if "NOT reached" in t.title else "#1f2328")
    top = y + 0.24
    th = (len(t.rows) + head_units) * row_h
    tw = sum(widths)
    ax = fig.add_axes((MX / PAGE_W, (PAGE_H - top - th) / PAGE_H, tw / PAGE_W, th / PAGE_H))
    ax.axis("off")
    tbl = MplTable(ax, bbox=(0, 0, 1, 1))
    for c, (name, w) in enumerate(zip(heads, widths)):
        cell = tbl.add_cell(0, c, w, head_units, text=name, loc="center", facecolor="#eaeef2", edgecolor="#8c959f")
        cell.get_text().set_fontweight("bold")
    for r, row in enumerate(t.rows, start=1):
        for c, (cell_v, w) in enumerate(zip(row, widths)):
            first = c == 0
            loc = "left" if first or not t.numeric else "right"
            face = "#f6f8fa" if first else ("#ffebe9" if cell_v.css == "bad" else "white")
            cell = tbl.add_cell(r, c, w, 1, text=cell_v.text, loc=loc, facecolor=face, edgecolor="#d0d7de")
            if cell_v.css:
                cell.get_text().set_color(plots.BAD if cell_v.css == "bad" else plots.OK)
                cell.get_text().set_fontweight("bold")
    tbl.auto_set_font_size(False)
    tbl.set_fontsize(size)
    for cell in tbl.get_celld().values():
        cell.get_text().set_parse_math(False)
        cell.PAD = 0.04
    ax.add_table(tbl)
    if t.note:
        for i, line in enumerate(_wrap(t.note, BODY_W, 6.8)):
            _text(fig, MX, top + th + 0.05 + i * 0.12, line, fontsize=6.8, color="#59636e")


# ---- pagination --------------------------------------------------------------------------------

def _stream(report: Report) -> list[tuple[object, str | None, bool, str | None]]:
    """(block, test, starts a new page, section id it starts) in reading order."""
    out: list[tuple[object, str | None, bool, str | None]] = []
    cover: list = [Heading(report.title, 2, "cover")]
    cover.append(Para(f"{report.subtitle} — run status: {report.status}. Generated {report.generated} from the run "
                      f"directory {report.run_dir.name}."))
    for a in [report.partial, report.compliance, *report.notices]:
        if a is not None:
            cover.append(a)
    if report.steady_state_missed:
        cover.append(Alert("bad", "steady state NOT reached", report.steady_state_missed))
    cover.append(report.overview)
    entries = [(2, "Report header: test platform, device, parameters", "header")]
    for s in report.sections:
        entries.append((s.level, s.title, s.id))
    cover.append(Toc(entries))
    for i, b in enumerate(cover):
        out.append((b, None, i == 0, "cover" if i == 0 else None))
    fields = [Fields("Administrative", report.admin), Fields("Device under test", report.device),
              Fields("Test platform", report.platform), None]
    if report.description:
        fields.insert(3, Fields("Device description (--describe file)", report.description))
    for th in report.tests.values():
        fields += [Fields(f"Set-up parameters — {th.title}", th.setup), Fields(f"Test parameters — {th.title}", th.params)]
    out.append((Heading("Report header", 2, "header"), None, True, "header"))
    fields = [f for f in fields if f is not None]
    for i in range(0, len(fields), 2):
        out.append((FieldPair(fields[i], fields[i + 1] if i + 1 < len(fields) else None), None, False, None))
    for s in report.sections:
        out.append((Heading(s.title, s.level, s.id), s.test, s.new_page, s.id))
        for b in s.blocks:
            if isinstance(b, Fields):  # the page header carries the set-up and test parameters
                continue
            out.append((b, s.test, False, None))
    return out


def paginate(report: Report, frame: Frame) -> tuple[list[Page], dict[str, int]]:
    """Flow the blocks down the pages. A heading, and an alert right after it, stay on the page of
    the block that follows them; a test starts on a new page."""
    pages: list[Page] = []
    page_of: dict[str, int] = {}
    stream = _stream(report)
    y = 0.0
    bottom = PAGE_H - FOOT - 0.05
    heights = []
    for block, test, _, _ in stream:
        if isinstance(block, Plot):  # a plot taller than a page body is shrunk to fit
            room = bottom - frame.height(test) - 0.45
            h = measure(block)
            if h > room:
                block.pdf_height = max(1.5, block.pdf_height - (h - room))
        heights.append(measure(block))
    for i, (block, test, new_page, sid) in enumerate(stream):
        h = heights[i]
        need = h
        j = i
        while j + 1 < len(stream) and (isinstance(stream[j][0], Heading) or
                                       (isinstance(stream[j][0], Alert) and isinstance(stream[j - 1][0], Heading))):
            j += 1
            need += heights[j]
        if not pages or new_page or y + need > bottom or (pages[-1].test != test and test is not None):
            pages.append(Page(test=test, top=frame.height(test)))
            y = pages[-1].top
        pages[-1].items.append(Placed(block, y, h))
        if sid:
            page_of[sid] = len(pages)
        y += h
    return pages, page_of


def render_pdf(report: Report) -> bytes:
    frame = Frame(report)
    pages, page_of = paginate(report, frame)
    buf = io.BytesIO()
    title = f"{report.title}: {report.subtitle}".replace("—", "-")
    meta = {"Title": ("PARTIAL " if report.partial else "") + title,
            "Author": "ssdpts", "Subject": "SNIA SSS PTS report", "Creator": "ssdpts report",
            "Keywords": "SNIA PTS SSD performance"}
    with matplotlib.rc_context(PDF_STYLE), PdfPages(buf, metadata=meta) as pdf:
        for n, page in enumerate(pages, start=1):
            fig = Figure(figsize=(PAGE_W, PAGE_H))
            frame.draw(fig, page.test, n, len(pages))
            for item in page.items:
                draw_block(fig, item, page_of)
            pdf.savefig(fig)
    return buf.getvalue()


__all__ = ["render_pdf", "paginate"]
