"""The rendered report as a person sees it: the PDF (printed by headless Chromium) through pdftoppm
and pdftotext (poppler), the HTML in headless Chromium, driven over the DevTools protocol
(report/chromium.py): hover, series toggles and cell details. Four runs: complete, steady state
not reached, interrupted, a single test. Fails on a blank or broken render, a header field cut
off, text outside its box, or an interaction that does nothing.

Needs /usr/bin/chromium and poppler-utils (make deps installs both); they are installed with
apt-get when missing and this runs as root, and the tests are skipped (saying why) only when
that is impossible.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import tempfile

import pytest

pytest.importorskip("jinja2")
from PIL import Image  # noqa: E402  (pillow: a test dependency)

from ssdpts.device.target import open_target  # noqa: E402
from ssdpts.engine.fake import FakeExecutor  # noqa: E402
from ssdpts.errors import Interrupted  # noqa: E402
from ssdpts.pts.runspec import RunSpec  # noqa: E402
from ssdpts.report import chromium, render  # noqa: E402
from ssdpts.report.html import render_html  # noqa: E402
from ssdpts.report.assemble import load  # noqa: E402
from ssdpts.run.session import start_run  # noqa: E402
from tests.report_browser import PLOTS_DRAWN_JS, Page  # noqa: E402

PT_PER_MM = 72 / 25.4
MARGIN_MM = {"top": 27, "right": 11, "bottom": 13, "left": 11}  # report.css @page


def _ensure(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path:
        return path
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip(f"{tool} is missing and cannot be installed here (not root or no apt-get): "
                    f"apt-get install -y {package}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "install", "-y", "-q", package], ["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", package]):
        subprocess.run(cmd, capture_output=True, env=env, timeout=900, check=False)
        path = shutil.which(tool)
        if path:
            return path
    pytest.skip(f"{tool} could not be installed (apt-get install -y {package} failed)")


@pytest.fixture(scope="module")
def poppler() -> str:
    _ensure("pdftotext", "poppler-utils")
    return _ensure("pdftoppm", "poppler-utils")


def never_converges(step) -> float:
    return 1000 * (1 + 0.5 * (step.round % 3))


KINDS = {
    "complete": dict(tests=("wsat", "iops", "tp", "lat"), max_rounds=6, executor=lambda: FakeExecutor(noise=0.02),
                     wsat_hours=1.2),
    "not-steady": dict(tests=("iops", "lat"), max_rounds=5, executor=lambda: FakeExecutor(model=never_converges)),
    "interrupted": dict(tests=("wsat", "iops", "tp", "lat"), max_rounds=6,
                        executor=lambda: FakeExecutor(noise=0.02, interrupt_on_batch=5)),
    "single-test": dict(tests=("tp",), max_rounds=5, executor=lambda: FakeExecutor(noise=0.02)),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """kind -> (run directory, report.html, report.pdf), made once and printed by Chromium."""
    _ensure("chromium", "chromium")
    out = {}
    for kind, k in KINDS.items():
        tmp = tmp_path_factory.mktemp(kind)
        target = open_target(str(tmp / "t.bin"), size_bytes=256 * 2**20)
        spec = RunSpec(tests=k["tests"], step_seconds=1, max_rounds=k["max_rounds"], wsat_hours=k.get("wsat_hours", 0.5),
                       wsat_capacity_multiple=1000, wsat_chunk_steps=12)
        try:
            start_run(spec, target, executor=k["executor"](), out_dir=tmp / "runs", confirm=None)
        except Interrupted:
            pass
        (run,) = (tmp / "runs").iterdir()
        html, pdf = render(run)
        out[kind] = (run, html, pdf)
    return out


def ink(img) -> float:
    """Fraction of pixels that are not (near) white."""
    hist = img.convert("L").histogram()
    return 1 - sum(hist[246:]) / (img.width * img.height)


def assert_not_blank(img, what: str, low: float = 0.01, high: float = 0.9) -> None:
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 20, f"{what}: only {len(colours)} colours: a blank or broken render"
    frac = ink(img)
    assert low < frac < high, f"{what}: {frac:.1%} of the pixels are not white: a blank or broken render"


def pdf_pages_text(pdf: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return [p for p in text.split("\f") if p.strip()]


def words(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """Per page: width, height and every word with its box (points, from the top left)."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for m in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', xml, re.S):
        ws = [(float(a), float(b), float(c), float(d), t) for a, b, c, d, t in
              re.findall(r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">(.*?)</word>',
                         m.group(3))]
        pages.append((float(m.group(1)), float(m.group(2)), ws))
    return pages


# ---- the PDF ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(KINDS))
def test_pdf_pages_render(poppler, reports, tmp_path, kind):
    _, _, pdf = reports[kind]
    subprocess.run([poppler, "-r", "30", "-png", str(pdf), str(tmp_path / "p")], check=True, capture_output=True,
                   timeout=300)
    pages = sorted(tmp_path.glob("p-*.png"))
    assert len(pages) >= (3 if kind == "single-test" else 5), f"only {len(pages)} pages"
    for p in pages:
        img = Image.open(p).convert("RGB")
        assert img.width < img.height, f"{p.name} is not portrait"
        assert_not_blank(img, f"{kind} {p.name}")


def band_text(ws, x0: float, x1: float, y0: float, y1: float) -> str:
    """The words inside a region of a page, in reading order, as one line of text."""
    inside = [w for w in ws if w[0] >= x0 - 0.5 and w[2] <= x1 + 0.5 and w[1] >= y0 - 0.5 and w[3] <= y1 + 0.5]
    lines: list[list] = []
    for w in sorted(inside, key=lambda w: (w[1], w[0])):
        if lines and abs(lines[-1][0][1] - w[1]) < 2:
            lines[-1].append(w)
        else:
            lines.append([w])
    text = " ".join(" ".join(w[4] for w in sorted(line)) for line in lines)
    return re.sub(r"(?<=\w)- (?=\w)", "-", text)  # a line broken after a hyphen ("time-|compressed")


@pytest.mark.parametrize("kind", list(KINDS))
def test_pdf_running_header_is_whole_on_every_page(poppler, reports, kind):
    """Every page carries its SNIA running header — page label, PTS revision, test ID, sponsor,
    vendor, model, serial, firmware, capacity, platform, the test's parameters, dates, "Page x of
    y" — every field in full inside its header box: nothing cut off (pdftotext -bbox)."""
    run, _, pdf = reports[kind]
    report = load(run)
    by_label = {h.label: h for h in report.page_headers.values()}
    pages = words(pdf)
    n = len(pages)
    m = {k: v * PT_PER_MM for k, v in MARGIN_MM.items()}
    seen = set()
    for i, (w, h, ws) in enumerate(pages, start=1):
        split = m["left"] + 141 * PT_PER_MM  # report.css: @top-left is 141 mm wide, @top-right the rest
        left = band_text(ws, 0, split, 0, m["top"])
        right = band_text(ws, split, w, 0, m["top"])
        foot = band_text(ws, 0, m["left"] + 130 * PT_PER_MM, h - m["bottom"], h)  # @bottom-left: 130 mm
        assert f"Page {i} of {n}" in right, f"page {i}: no 'Page {i} of {n}' ({right!r})"
        (label,) = [lab for lab in by_label if left.startswith(lab)] or [None]
        assert label, f"page {i}: no page label ({left[:80]!r})"
        hd = by_label[label]
        seen.add(label)
        for box, lines in ((left, hd.lines), (right, hd.right), (foot, [hd.footer])):
            for line in lines:
                # a field may wrap onto the next line of its box, never be cut
                pattern = re.escape(re.sub(r"\s+", " ", line))
                if line.startswith("Report: "):  # load() above ran later than the report
                    pattern = r"Report: \d{4}-\d\d-\d\d \d\d:\d\d UTC"
                assert re.search(pattern, box), f"page {i}: header field cut or missing: {line!r} in {box!r}"
    assert {h.label for t, h in report.page_headers.items() if t} <= seen  # every test has its pages
    # the closing lines stay on the last test's page: no page of its own under the front header
    last_test = report.sections[-1].test
    assert label == report.page_headers[last_test or ""].label, f"the last page ({n}) is a page of its own"
    if kind == "interrupted":
        assert all("PARTIAL" in p for p in pdf_pages_text(pdf))


@pytest.mark.parametrize("kind", list(KINDS))
def test_pdf_text_stays_in_its_box(poppler, reports, kind):
    """No word outside the page, the margins or the header and footer bands, and no word printed
    over another (text overflowing its box lands on its neighbour)."""
    _, _, pdf = reports[kind]
    m = {k: v * PT_PER_MM for k, v in MARGIN_MM.items()}
    for no, (w, h, ws) in enumerate(words(pdf), start=1):
        assert ws, f"page {no} has no text"
        ws = [w_ for w_ in ws if w_[3] - w_[1] < 20]  # not the PARTIAL watermark's letters
        for x0, y0, x1, y1, t in ws:
            assert 0 <= x0 and x1 <= w and 0 <= y0 and y1 <= h, f"page {no}: {t!r} off the page"
            assert m["left"] - 1 <= x0 and x1 <= w - m["right"] + 1, f"page {no}: {t!r} in the side margin ({x0:.0f}–{x1:.0f})"
            in_header = y1 <= m["top"] + 1
            in_footer = y0 >= h - m["bottom"] - 1
            in_body = m["top"] - 1 <= y0 and y1 <= h - m["bottom"] + 1
            assert in_header or in_footer or in_body, f"page {no}: {t!r} across the header or footer band"
        boxes = sorted(ws)
        for i, (a0, b0, a1, b1, t) in enumerate(boxes):
            for c0, d0, c1, d1, u in boxes[i + 1:]:
                if c0 >= a1:
                    break
                ox = min(a1, c1) - max(a0, c0)
                oy = min(b1, d1) - max(b0, d0)
                if ox > 0 and oy > 0:
                    small = min((a1 - a0) * (b1 - b0), (c1 - c0) * (d1 - d0))
                    assert ox * oy < 0.3 * small, f"page {no}: {t!r} printed over {u!r}"


def test_pdf_bookmarks_links_and_title(poppler, reports):
    _, _, pdf = reports["complete"]
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", str(pdf)], capture_output=True, text=True,
                         check=True).stdout
    outline = re.findall(r'<item page="(\d+)">([^<]+)', xml)
    titles = [t.strip() for _, t in outline]
    for t in ("Datasheet", "Verdicts", "Report header: test platform, device, parameters", "Write Saturation", "IOPS",
              "IOPS: measurement window results", "Throughput", "Latency"):
        assert t in titles, f"no bookmark {t!r}"
    pages = dict((t.strip(), int(p)) for p, t in outline)
    assert pages["Datasheet"] == 1 and pages["IOPS"] < pages["Throughput"] < pages["Latency"]
    links = re.findall(r'<a href="[^"#]*#(\d+)"', xml)
    assert len(links) >= 15, "the contents are not links"  # the contents link to the sections' pages
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"Title:\s+SNIA SSS PTS 2.0.2 Enterprise — test report: t.bin — time-compressed — not PTS compliant",
                     info)
    _, _, partial = reports["interrupted"]
    info = subprocess.run(["pdfinfo", str(partial)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"Title:\s+PARTIAL SNIA SSS PTS", info)


def test_damaged_run_says_so_on_every_page(poppler, reports, tmp_path):
    """A run directory whose raw fio output no longer matches its checksums ('ssdpts verify')
    still prints, and every page, the title metadata and the first page say it is damaged."""
    run, _, _ = reports["complete"]
    damaged = tmp_path / run.name
    shutil.copytree(run, damaged)
    (damaged / "fio" / "lat" / "round-002.json").unlink()
    (pdf,) = render(damaged, formats=("pdf",))
    pages = pdf_pages_text(pdf)
    assert all("DAMAGED run directory" in p for p in pages), [i for i, p in enumerate(pages, 1) if "DAMAGED" not in p]
    assert "fio/lat/round-002.json is missing" in pages[0]
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"Title:\s+DAMAGED SNIA SSS PTS", info)


def test_tables_split_with_their_header_repeated(poppler, reports):
    """A table longer than a page (72 WSAT samples, one row each) continues on the next one under
    its header row."""
    _, _, pdf = reports["complete"]
    pages = pdf_pages_text(pdf)
    heads = [i for i, p in enumerate(pages) if re.search(r"Minute\s+IOPS\s+TGBW \(GB\)\s+Drive fills", p)]
    assert len(heads) >= 2 and heads == list(range(heads[0], heads[0] + len(heads))), \
        "the WSAT samples table does not continue on the next page(s) under its header"
    assert re.search(r"\n\s*72\s+[\d,]+", pages[heads[-1]]), "the last sample is not on the last continued page"


# ---- the HTML in Chromium ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    _ensure("chromium", "chromium")
    with chromium.Browser() as b:
        yield b


# Every element whose content is wider than its box (text running out of a cell), and every SVG
# text outside its SVG; the page itself must not be wider than the window (print: than the paper).
OVERFLOW_JS = r"""
(() => {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) out.push(`page ${root.scrollWidth} px wide in ${root.clientWidth}`);
  for (const el of document.querySelectorAll('td, th, p, li, h1, h2, h3, figcaption, caption, .alert, .toc a, pre')) {
    if (el.closest('.scroll') && getComputedStyle(document.body).maxWidth !== 'none') continue;
    if (el.offsetParent === null) continue;
    if (el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName} "${el.textContent.trim().slice(0, 60)}" ${el.scrollWidth} > ${el.clientWidth}`);
  }
  for (const svg of document.querySelectorAll('figure.plot svg')) {
    const vb = svg.viewBox.baseVal;
    const ticks = [];
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox();
      if (!b.width) continue;
      const m = t.getCTM(), r = svg.getCTM();
      const p = svg.createSVGPoint(); p.x = b.x; p.y = b.y;
      const q = p.matrixTransform(r.inverse().multiply(m));
      const p2 = svg.createSVGPoint(); p2.x = b.x + b.width; p2.y = b.y + b.height;
      const q2 = p2.matrixTransform(r.inverse().multiply(m));
      if (Math.min(q.x, q2.x) < -1 || Math.max(q.x, q2.x) > vb.width + 1 || Math.min(q.y, q2.y) < -1 || Math.max(q.y, q2.y) > vb.height + 1)
        out.push(`svg ${svg.closest('figure').id}: "${t.textContent.slice(0, 40)}" outside the plot`);
      if (t.closest('g.axes')) ticks.push([Math.min(q.x, q2.x), Math.min(q.y, q2.y), Math.max(q.x, q2.x), Math.max(q.y, q2.y), t.textContent]);
    }
    // no axis text written over another (tick labels, axis names)
    ticks.forEach((a, i) => ticks.slice(i + 1).forEach(b => {
      if (Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > 0.5 && Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > 0.5)
        out.push(`svg ${svg.closest('figure').id}: "${a[4]}" over "${b[4]}"`);
    }));
  }
  return out;
})()
"""


@pytest.mark.parametrize("kind", list(KINDS))
def test_html_text_stays_in_its_box(browser, reports, tmp_path, kind):
    """On a laptop screen and printed (A4 width): no text wider than its box, no plot text
    outside its plot, no page wider than the window (Chromium would shrink the print)."""
    run, html, _ = reports[kind]
    page = Page(browser)
    page.open(html)
    assert page.js(PLOTS_DRAWN_JS)["problems"] == []
    assert page.js(OVERFLOW_JS) == []
    printed = tmp_path / "printed.html"
    printed.write_text(render_html(load(run), interactive=False), encoding="utf-8")
    page = Page(browser, width=round(188 / 25.4 * 96))  # the A4 page body: 188 mm
    page.print_media(True)
    page.open(printed)
    assert page.js(PLOTS_DRAWN_JS)["problems"] == []
    assert page.js(OVERFLOW_JS) == []


def test_html_renders(browser, reports, tmp_path):
    _, html, _ = reports["complete"]
    page = Page(browser, height=2000)
    page.open(html)
    img = page.shot(tmp_path / "top.png")
    assert_not_blank(img, "HTML top", low=0.03)
    colours = img.getcolors(maxcolors=1 << 22)
    amber = sum(c for c, p in colours if all(abs(a - b) <= 6 for a, b in zip(p, (0xFF, 0xF8, 0xC5))))
    assert amber > 500, "no amber compliance banner: the stylesheet did not apply"


def test_html_hover_shows_the_exact_value(browser, reports, tmp_path):
    run, html, _ = reports["complete"]
    page = Page(browser)
    page.open(html)
    # the point of the 4KiB series in round 3 of the convergence plot, in window coordinates
    where = page.js("""(() => {
      const d = window.SSDPTS_HOVER['iops-convergence-bs'];
      const s = d.s.find(s => s.n === '4KiB'); const p = s.p.find(p => p[2] === 3);
      const svg = document.querySelector('#iops-convergence-bs svg');
      svg.scrollIntoView({block: 'center'});
      const q = svg.createSVGPoint(); q.x = p[0]; q.y = p[1];
      const r = q.matrixTransform(svg.getScreenCTM());
      return {x: r.x, y: r.y, value: p[3]};
    })()""")
    page.mouse("mouseMoved", where["x"] + 2, where["y"] - 1)
    tip = page.js("(() => { const t = document.getElementById('tip'); return t.hidden ? null : t.textContent; })()")
    assert tip is not None, "no tooltip on hover"
    steps = [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines()]
    from ssdpts.results.steprecord import StepRecord  # the step's IOPS as the report shows it (the device's, where fio's clock was off)

    (raw,) = [StepRecord.from_dict(s).measurement.iops for s in steps if s["test"] == "iops" and s["round"] == 3
              and s["key"] == "rand-4096-0" and s["phase"] == "round"]
    assert tip.splitlines()[0] == "4KiB" and "round 3" in tip
    assert f"{raw:,.3f}".rstrip("0").rstrip(".") in tip.replace(" IOPS", ""), tip
    assert re.search(r"step \d+ of round 3", tip)
    page.shot(tmp_path / "hover.png")


def test_each_plot_downloads_as_svg_and_png(browser, reports, tmp_path):
    """On screen every plot offers its SVG and PNG; printed, none does. The files are the plot: the
    SVG parses with its marks, the PNG is twice its size and looks as the page draws it."""
    import base64
    import io
    import xml.etree.ElementTree as ET

    from PIL import Image

    run, html, _ = reports["complete"]
    page = Page(browser)
    page.open(html)
    links = page.js("""[...document.querySelectorAll('figure.plot')].map(f =>
        [f.id, [...f.querySelectorAll('.plot-dl a')].map(a => a.textContent)])""")
    assert links and all(kinds == ["SVG", "PNG"] for _, kinds in links), links
    pid = "iops-convergence-bs"
    got = page.js(f"""(async () => {{
      const read = b => new Promise(r => {{ const f = new FileReader(); f.onload = () => r(f.result); f.readAsDataURL(b); }});
      const vb = document.querySelector('#{pid} svg').viewBox.baseVal;
      return {{svg: await (await window.ssdptsPlotFile('{pid}', 'svg')).text(),
               png: await read(await window.ssdptsPlotFile('{pid}', 'png')), w: vb.width, h: vb.height}};
    }})()""")
    svg = ET.fromstring(got["svg"].split("?>", 1)[1].strip())
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and len(svg.findall(".//{http://www.w3.org/2000/svg}path")) > 10
    png = Image.open(io.BytesIO(base64.b64decode(got["png"].split(",", 1)[1])))
    assert png.format == "PNG" and png.size == (round(got["w"] * 8 / 3), round(got["h"] * 8 / 3))
    png.save(tmp_path / f"{pid}.png")
    assert_not_blank(png.convert("RGB"), f"{pid}.png", low=0.02)
    printed = tmp_path / "printed.html"
    printed.write_text(render_html(load(run), interactive=False), encoding="utf-8")
    page = Page(browser)
    page.print_media(True)
    page.open(printed)
    assert page.js("document.querySelectorAll('.plot-dl').length") == 0


def test_not_steady_hatching_shows_on_every_colour(browser, reports):
    """A hatched (steady state NOT reached) bar's hatching contrasts with the bar, whatever its colour:
    on the red series it was drawn in the red edge colour and could not be seen."""
    _, html, _ = reports["complete"]
    page = Page(browser)
    page.open(html)
    got = page.js("""(() => {
      // a bar plot of the report, its bars hatched, drawn again in red, orange and blue
      const specs = JSON.parse(document.getElementById('ssdpts-plots').textContent);
      const spec = JSON.parse(JSON.stringify(Object.values(specs).find(sp => sp.P.some(P => (P.L || []).some(l => l.t === 'bars')))));
      let n = 0;
      spec.P.forEach(P => (P.L || []).forEach(l => { if (l.t === 'bars') {
        l.h = l.x.map(() => true); l.ec = '#cf222e'; l.c = ['tab10:3', 'tab10:1', 'tab10:0'][n++ % 3]; } }));
      const fig = document.createElement('figure'); fig.id = 'hatch-probe'; document.body.appendChild(fig);
      window.ssdptsDraw(fig, 'hatch-probe', spec);
      const pairs = [];
      fig.querySelectorAll('rect[stroke]').forEach(r => {
        const h = r.nextElementSibling;
        if (h && h.tagName === 'path') pairs.push([getComputedStyle(r).fill, getComputedStyle(h).stroke]);
      });
      return {pairs, n};
    })()""")
    assert got["n"] >= 1 and got["pairs"], got
    for fill, stroke in got["pairs"]:
        assert stroke != fill and stroke not in ("rgb(207, 34, 46)",), (fill, stroke)


def test_html_series_toggle(browser, reports):
    _, html, _ = reports["complete"]
    page = Page(browser)
    page.open(html)
    state = page.js("""(() => {
      const fig = document.getElementById('iops-2d');
      const b = fig.querySelector('.toggles button');
      const gid = b.dataset.gid;
      const shown = () => getComputedStyle(fig.querySelector(`[id="${gid}"]`)).display !== 'none';
      const before = shown(); b.click(); const off = shown(); const pressed = b.getAttribute('aria-pressed');
      document.getElementById(gid + '-leg').dispatchEvent(new MouseEvent('click', {bubbles: true}));
      return [before, off, pressed, shown(), fig.querySelectorAll('.toggles button').length];
    })()""")
    assert state == [True, False, "false", True, 7], state  # 7 R/W mixes
    # a name in two panels (the LAT convergence: mean and max) has one button that hides both
    both = page.js("""(() => {
      const fig = document.getElementById('lat-convergence');
      const b = fig.querySelector('.toggles button[data-name="4KiB 0/100"]');
      b.click();
      const d = window.SSDPTS_HOVER['lat-convergence'];
      const gids = d.s.filter(s => s.n === '4KiB 0/100').map(s => s.g);
      return [gids.length, gids.filter(g => getComputedStyle(fig.querySelector(`[id="${g}"]`)).display === 'none').length,
              fig.querySelectorAll('.toggles button').length];
    })()""")
    assert both == [2, 2, 9], both


def test_html_cell_details(browser, reports, tmp_path):
    run, html, _ = reports["complete"]
    page = Page(browser, height=1000)
    page.open(html)
    got = page.js("""(() => {
      const a = document.querySelector('#iops-table a.cell[data-detail="d-iops-rand-4096-0"]');
      a.click();
      const d = document.getElementById('cell-dialog');
      return {open: d.open, title: d.querySelector('h4').textContent,
              rows: d.querySelectorAll('tbody tr').length - 1, window: d.querySelectorAll('tr.win').length,
              hist: d.querySelectorAll('svg.hist rect').length, hash: location.hash,
              text: d.textContent};
    })()""")
    summary = json.loads((run / "summary.json").read_text())
    rounds = summary["parts"]["iops"]["rounds_run"]
    assert got["open"] and got["title"] == "IOPS: RND 4KiB 0/100 — IOPS"
    assert got["rows"] == rounds and got["window"] == 5 and got["hist"] > 0, got
    assert got["hash"] == "#d-iops-rand-4096-0" and "QoS over the window" in got["text"]
    page.shot(tmp_path / "details.png")
