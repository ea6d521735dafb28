"""The results site as a person uses it, in headless Chromium from file://.

A library of real runs (fio, LAT on file targets, added to the library by 'ssdpts run' itself, and
one copy damaged after it ran): the index lists every run, search, the filters and sorting work,
ticking two runs shows the deltas 'ssdpts compare --format json' gives (and the other way round
after a change of baseline), the damaged run is marked, and a run's report opens with its plots.

A library of FakeExecutor runs (all four tests, three drives, one of them three times): the page's
plots are the plots report/compare_html.py describes for the same comparison (so chart.js draws
the same pictures), its deltas are comparison_dict's and its repeats analysis repeats_dict's.

Set SSDPTS_KEEP_SITE=DIR to keep both sites and screenshots of the pages in DIR.
"""

from __future__ import annotations

import csv
import io
import json
import re
import os
from pathlib import Path
import shutil
import subprocess
import time

import pytest

from ssdpts.compare import analyze_repeats, compare_runs, comparison_dict, repeats_dict
from ssdpts.errors import UserError
from ssdpts.report import chromium
from ssdpts.report.compare_html import build_comparison, build_repeats, render_html, render_specs
from ssdpts.library.db import ResultsDB
from ssdpts.library.site import build
from tests.report_browser import PLOTS_DRAWN_JS, Page, drawn
from tests.site_library import fake_library, fake_run, index_data, uid_of

KEEP = os.environ.get("SSDPTS_KEEP_SITE")


@pytest.fixture(scope="module")
def browser():
    try:
        b = chromium.Browser()
    except UserError as exc:
        pytest.skip(f"no Chromium: {exc}")
    with b:
        yield b


def page_of(browser, site: Path, width: int = 1400) -> Page:
    p = Page(browser, width=width, height=1000)
    p.open((site / "index.html").resolve())
    return p


def shot(p: Page, name: str) -> None:
    """A screenshot of the whole page into $SSDPTS_KEEP_SITE (to look at), when set."""
    if not KEEP:
        return
    h = min(p.js("document.documentElement.scrollHeight"), 12000)
    p.b.call("Emulation.setDeviceMetricsOverride", {"width": p.width, "height": h, "deviceScaleFactor": 1,
                                                    "mobile": False}, p.s)
    Path(KEEP).mkdir(parents=True, exist_ok=True)
    p.shot(Path(KEEP) / f"{name}.png")
    p.b.call("Emulation.setDeviceMetricsOverride", {"width": p.width, "height": 1000, "deviceScaleFactor": 1,
                                                    "mobile": False}, p.s)


WAIT = """(async (uids) => {
  for (let i = 0; i < 500; i++) {
    const c = window.ssdptsSite.comparison();
    if (c && c.runs.map(r => r.uid).sort().join() === uids.slice().sort().join()) return true;
    await new Promise(r => setTimeout(r, 20));
  }
  return false;
})(%s)"""


def compared(p: Page, uids: list[str]) -> dict:
    assert p.js(WAIT % json.dumps(uids)), "the comparison did not appear"
    return p.js("""(() => { const c = ssdptsSite.comparison();
      return {labels: c.labels, uids: c.runs.map(r => r.uid), notShared: c.notShared, advice: c.advice || null,
              parts: c.parts.map(p => ({part: p.part, rows: p.rows.map(r => ({metric: r.metric, bs: r.bs, mix: r.mix,
                point: r.point, values: r.values, deltas: r.deltas || null, stats: r.stats || null}))})),
              specs: ssdptsSite.specs(), errors: window.ssdptsPlotErrors}; })()""")


def close(a, b, path="") -> list[str]:
    """Where two JSON values differ (numbers: within 1e-9 relative, or 0.011 for layout points)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only in {'python' if k in a else 'the page'}" for k in set(a) ^ set(b)]
        return out + [d for k in set(a) & set(b) for d in close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        out = [f"{path}: {len(a)} items != {len(b)}"] if len(a) != len(b) else []
        return out + [d for i, (x, y) in enumerate(zip(a, b)) for d in close(x, y, f"{path}[{i}]")]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        ok = abs(a - b) <= max(1e-9 * max(abs(a), abs(b)), 0.011)
        return [] if ok else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


# ---- a library of FakeExecutor runs: the page's numbers and plots are compare's -----------------------

@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    root = tmp_path_factory.mktemp("fake-library")
    runs = fake_library(root)
    site = root / "site"
    build(site, root / "results.db", reports=False)
    if KEEP:
        shutil.copytree(site, Path(KEEP) / "fake-site", dirs_exist_ok=True)
    return runs, site


@pytest.mark.parametrize("names", [("a1", "b1"), ("c1", "a1", "b1", "c2")])
def test_comparison_is_compares(browser, fake, names):
    runs, site = fake
    paths = [runs[n] for n in names]
    p = page_of(browser, site)
    p.js(f"ssdptsSite.select({json.dumps([uid_of(x) for x in paths])})")
    got = compared(p, [uid_of(x) for x in paths])
    assert got["errors"] == [] and p.js(PLOTS_DRAWN_JS)["problems"] == []
    cmp = compare_runs(paths)
    want = comparison_dict(cmp)
    assert got["labels"] == [r["label"] for r in want["runs"]] and got["notShared"] == want["not_shared"]
    assert [x["part"] for x in got["parts"]] == [x["part"] for x in want["parts"]]
    for g, w in zip(got["parts"], want["parts"]):
        assert [(r["metric"], r["bs"], r["mix"], r["point"]) for r in g["rows"]] == \
               [(r["metric"], r["block_size_bytes"], r["mix"], r.get("point")) for r in w["rows"]]
        assert close([r["values"] for r in g["rows"]], [r["values"] for r in w["rows"]]) == []
        assert close([r["deltas"] for r in g["rows"]], [r["deltas"] for r in w["rows"]]) == []
    specs = render_specs(build_comparison(cmp))  # what 'ssdpts compare' draws, described
    assert set(specs) <= set(got["specs"]) and len(specs) == 5  # WSAT, IOPS, TP 1024KiB and 128KiB, LAT
    for pid, spec in specs.items():
        assert close(spec, got["specs"][pid], pid) == []
    shot(p, f"fake-compare-{len(names)}")


def test_repeats_are_compares(browser, fake):
    runs, site = fake
    paths = [runs[n] for n in ("a1", "a2", "a3")]
    uids = [uid_of(x) for x in paths]
    p = page_of(browser, site)
    p.js(f"ssdptsSite.select({json.dumps(uids)}, null, true)")
    got = compared(p, uids)
    assert got["errors"] == [] and p.js(PLOTS_DRAWN_JS)["problems"] == []
    want = repeats_dict(analyze_repeats(paths))
    assert got["labels"] == ["run 1", "run 2", "run 3"] and got["advice"] == want["advice"]
    rows = [r for part in got["parts"] for r in part["rows"]]
    wrows = [r for part in want["parts"] for r in part["rows"]]
    assert len(rows) == len(wrows) > 80  # WSAT 1, IOPS 56, TP 2 × 2, LAT 9 × 3 cells
    for g, w in zip(rows, wrows):
        s, ws = g["stats"], w["stats"]
        assert (s is None) == (ws is None), (g, w)  # no value in any run (a WSAT drive-model figure the fake lacks)
        if s is None:
            continue
        assert close([s["median"], s["mean"], s["stdev"], s["rse"]], [ws["median"], ws["mean"], ws["stdev"], ws["rse"]]) == []
        assert (got["labels"][s["median_index"]], s["flagged"]) == (ws["median_run"], ws["flagged"])
    text = p.js("document.getElementById('comparison').innerText")
    assert "Repeated runs: ACME X1 SN-A, N = 3" in text and "median run" in text
    specs = render_specs(build_repeats(analyze_repeats(paths)))  # the repeats report's spread and RSE plots
    assert len(specs) == 5
    for pid, spec in specs.items():
        assert close(spec, got["specs"][pid], pid) == []
    shot(p, "fake-repeats")


def test_repeats_need_one_device(browser, fake):
    runs, site = fake
    p = page_of(browser, site)
    p.js(f"ssdptsSite.select({json.dumps([uid_of(runs[n]) for n in ('a1', 'a2', 'b1')])})")
    assert p.js("document.getElementById('repeats').disabled") is True


# ---- runs with a lab's long drive names: the legends stay in their plots, in the site and compare alike -------

# name: (IOPS level, model, serial, noise, rounds); the odd ones do not reach steady state
LONG = {f"l{i}": (100_000 - 4_000 * i, f"Vendor{i} Datacenter NVMe SSD {i}X-{3.84 * (i + 1):.2f}TB Gen5 U.2 15mm Enterprise",
                  f"SN{i}-ENGINEERING-SAMPLE-RACK-{i:02d}", 0.35 if i % 2 else 0.02, 5 if i % 2 else 8) for i in range(5)}

LEGENDS_JS = r"""[...document.querySelectorAll('figure.plot svg.chart')].map(svg => ({id: svg.closest('figure').id,
  entries: [...svg.querySelectorAll('g.legend > g')].map(g => ({text: g.querySelector('text').textContent,
    title: (g.querySelector('title') || {}).textContent || null}))}))"""


@pytest.fixture(scope="module")
def long_names(tmp_path_factory):
    root = tmp_path_factory.mktemp("long-names")
    runs = {n: fake_run(root, n, lvl, model=m, firmware="1.0", serial=sn, created=f"2026-05-0{k + 1}T08:00:00Z",
                        noise=noise, max_rounds=rounds)
            for k, (n, (lvl, m, sn, noise, rounds)) in enumerate(LONG.items())}
    with ResultsDB(root / "results.db") as db:
        db.add(list(runs.values()))
    site = root / "site"
    build(site, root / "results.db", reports=False)
    return runs, site


@pytest.mark.parametrize("names", [("l0", "l1"), tuple(LONG)])
def test_long_names_keep_every_legend_in_its_plot(browser, long_names, tmp_path, names):
    """At 1366 px, the site's comparison and 'ssdpts compare''s HTML of the same runs (one legend rule,
    chart.js's): no plot text outside its plot, every run's entry says "SS NOT reached" where its test
    did not reach it, a name is shortened only when fewer columns cannot fit it (two runs: never) and
    then has its full name as its tooltip; the site's plots are still compare's."""
    from .test_report_render import OVERFLOW_JS

    runs, site = long_names
    paths = [runs[n] for n in names]
    cmp = compare_runs(paths)
    missed = {f"{p.part}-overlay": p.ss_reached for p in cmp.parts}
    assert any(False in ss for ss in missed.values())  # the library has what the test is about
    specs = render_specs(build_comparison(cmp))
    p = page_of(browser, site, width=1366)
    p.js(f"ssdptsSite.select({json.dumps([uid_of(x) for x in paths])})")
    got = compared(p, [uid_of(x) for x in paths])
    for pid, spec in specs.items():
        assert close(spec, got["specs"][pid], pid) == []
    html = tmp_path / "compare.html"
    html.write_text(render_html(build_comparison(cmp)), encoding="utf-8")
    q = Page(browser, width=1366, height=768)
    q.open(html)
    for page in (p, q):
        assert page.js(PLOTS_DRAWN_JS)["problems"] == []
        assert [x for x in page.js(OVERFLOW_JS) if x.startswith("svg")] == []
        legends = {x["id"]: x["entries"] for x in page.js(LEGENDS_JS) if x["id"] in specs}
        assert set(legends) == set(specs)
        for pid, entries in legends.items():
            assert len(entries) == len(names), pid
            for e, reached in zip(entries, missed.get(pid, [None] * len(names))):
                assert e["text"].endswith("— SS NOT reached") == (reached is False), (pid, e)
                assert e["title"] is None or (e["text"] != e["title"] and "…" in e["text"]), (pid, e)
        shortened = [e for entries in legends.values() for e in entries if e["title"]]
        assert bool(shortened) == (len(names) > 2), shortened
        assert all(any(e["title"].startswith(lab) for lab in cmp.labels) for e in shortened)  # the full name
    shot(p, f"long-names-site-{len(names)}")
    shot(q, f"long-names-compare-{len(names)}")


# ---- a library of real runs, used as a person uses it -------------------------------------------------

def lat_run(out: Path, target: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen(["ssdpts", "run", "lat", "--target", str(target), "--size", "64M", "--step-seconds", "0.1",
                             "--max-rounds", "5", "--out", str(out), "--quiet"], env={**os.environ, "SSDPTS_DB": str(db)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """Four LAT runs (two of drive a.img, one each of b.img and c.img), 'ssdpts run' adding each to
    the library as it ends, and a copy of c's run damaged (a fio output altered) added after."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: apt-get install fio")
    root = tmp_path_factory.mktemp("real-library")
    db = root / "results.db"
    procs = [lat_run(root / "b", root / "b.img", db), lat_run(root / "a", root / "a.img", db)]
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read()
    procs = [lat_run(root / "c", root / "c.img", db), lat_run(root / "a", root / "a.img", db)]
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read()
    runs = {"b": next((root / "b").iterdir()), "c": next((root / "c").iterdir())}
    runs["a1"], runs["a2"] = sorted((root / "a").iterdir())
    damaged = root / "copy" / f"{runs['c'].name}-copy"  # another directory name: another run for the library
    shutil.copytree(runs["c"], damaged)
    with open(damaged / "fio" / "lat" / "round-003.json", "r+b") as f:
        f.seek(-200, os.SEEK_END)
        f.write(b"0")
    with ResultsDB(db) as d:
        ((added, _),) = d.add([damaged])
        assert added.damage
    runs["damaged"] = damaged
    site = root / "site"
    done = build(site, db)
    assert done.problems == [] and done.runs == 5 and done.reports == 5
    if KEEP:
        shutil.copytree(site, Path(KEEP) / "real-site", dirs_exist_ok=True)
    return runs, site, db


def rows(p: Page) -> list[dict]:
    return p.js("""[...document.querySelectorAll('#runs tbody tr')].map(tr => ({uid: tr.dataset.uid,
      cls: tr.className, status: tr.querySelector('td[data-key=status]').textContent,
      title: tr.querySelector('td[data-key=status]').title,
      lat: +(tr.querySelector('td[data-value][data-key^="h:lat|lat_mean_us|4096|0/100"]') || {}).dataset?.value}))""")


def test_the_index_lists_every_run_and_marks_the_damaged_one(browser, real):
    runs, site, db = real
    p = page_of(browser, site)
    shown = rows(p)
    with ResultsDB(db) as d:
        assert sorted(r["uid"] for r in shown) == sorted(r["run_uid"] for r in d.list_runs())
    by = {r["uid"]: r for r in shown}
    bad = by[uid_of(runs["damaged"])]
    assert bad["status"] == "damaged" and "st-damaged" in bad["cls"] and "round-003.json was altered" in bad["title"]
    assert all(r["status"] == "complete" for u, r in by.items() if u != uid_of(runs["damaged"]))
    assert p.js(PLOTS_DRAWN_JS)["problems"] == []  # the trend plot
    ready_ms = p.js("window.ssdptsSiteReadyMs")  # set when the page has drawn (its speed: benchmarks/site_build.py)
    assert isinstance(ready_ms, (int, float)) and ready_ms > 0
    print(f"site ready in {ready_ms:.0f} ms")
    # hovering a point of the trend names its run
    x, y = p.js("""(() => { const q = window.SSDPTS_HOVER.trend.s[0].p[0], svg = document.querySelector('#trend svg');
      const pt = svg.createSVGPoint(); pt.x = q[0]; pt.y = q[1];
      window.scrollTo(0, pt.matrixTransform(svg.getScreenCTM()).y + window.scrollY - 300);
      const r = pt.matrixTransform(svg.getScreenCTM()); return [r.x, r.y]; })()""")
    p.mouse("mouseMoved", x + 1, y + 1)
    tip = p.js("(() => { const t = document.getElementById('tip'); return t && !t.hidden ? t.textContent : ''; })()")
    assert "µs" in tip and any(r.name in tip for r in runs.values()), tip
    shot(p, "real-index")


def test_search_filters_and_sorting(browser, real):
    runs, site, _ = real
    p = page_of(browser, site)
    p.js("(() => { const q = document.getElementById('q'); q.value = 'b.img'; q.dispatchEvent(new Event('input')); })()")
    assert [r["uid"] for r in rows(p)] == [uid_of(runs["b"])]
    assert p.js("document.getElementById('shown').textContent") == "1 of 5 runs shown"
    table = list(csv.reader(io.StringIO(p.js("ssdptsSite.csv()"))))  # what the CSV link downloads: the rows shown
    (row,) = [dict(zip(table[0], r)) for r in table[1:]]
    b = next(r for r in index_data(site)["runs"] if r["uid"] == uid_of(runs["b"]))
    # a 5-round LAT run on a loop file reaches steady state now and then: the column says what the run says
    reached = json.loads((runs["b"] / "summary.json").read_text())["parts"]["lat"]["steady_state"]["reached"]
    assert row["run_uid"] == b["uid"] and row["tests"] == "lat"
    assert row["steady_state_not_reached"] == ("" if reached else "lat")
    assert float(row["Latency: RND 4KiB 0/100 mean (µs)"]) == b["h"]["lat|lat_mean_us|4096|0/100|"]
    p.js("document.querySelector('.filters button').click()")  # clear
    assert len(rows(p)) == 5
    p.js("(() => { const s = document.getElementById('f-status'); s.value = 'damaged'; s.dispatchEvent(new Event('change')); })()")
    assert [r["status"] for r in rows(p)] == ["damaged"]
    p.js("(() => { const s = document.getElementById('f-status'); s.value = ''; s.dispatchEvent(new Event('change')); })()")
    head = "th[data-key^='h:lat|lat_mean_us|4096|0/100']"
    p.js(f"document.querySelector(\"{head}\").click()")  # a number: highest first
    values = [r["lat"] for r in rows(p)]
    assert len(values) == 5 and values == sorted(values, reverse=True)
    p.js(f"document.querySelector(\"{head}\").click()")
    assert [r["lat"] for r in rows(p)] == sorted(values)


def _ticked(p: Page, uid: str) -> None:
    p.js(f"document.querySelector('#runs tr[data-uid=\"{uid}\"] input[type=checkbox]').click()")


def _shown_deltas(p: Page) -> dict[str, list[float | None]]:
    """Every Δ cell of the comparison's tables as the page shows it (data-value; n/a: None), by table."""
    return p.js("""(() => { const out = {};
      document.querySelectorAll('#comparison figure.table').forEach(fig => {
        const heads = [...fig.querySelectorAll('thead th')].map(th => th.textContent);
        const cols = heads.map((h, i) => h.startsWith('Δ ') ? i : -1).filter(i => i >= 0);
        if (!cols.length) return;
        out[fig.id] = [...fig.querySelectorAll('tbody tr')].map(tr => cols.map(i => {
          const c = tr.children[i]; return c.dataset.value === undefined ? null : +c.dataset.value; })).flat();
      });
      return out; })()""")


def _compare_json(a: Path, b: Path, tmp: Path) -> dict:
    out = tmp / f"{a.name}-{b.name}.json"
    proc = subprocess.run(["ssdpts", "compare", str(a), str(b), "--format", "json", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_ticking_two_runs_shows_compares_deltas(browser, real, tmp_path):
    runs, site, _ = real
    p = page_of(browser, site)
    a, b = runs["a1"], runs["b"]
    _ticked(p, uid_of(a))
    _ticked(p, uid_of(b))
    compared(p, [uid_of(a), uid_of(b)])
    for base, other in ((a, b), (b, a)):
        if base is b:  # the other run as the baseline, by its radio button
            p.js(f"document.querySelector('input[name=baseline][value=\"{uid_of(b)}\"]').click()")
            assert p.js(WAIT % json.dumps([uid_of(a), uid_of(b)]))
            assert p.js("ssdptsSite.comparison().runs[0].uid") == uid_of(b)
        want = _compare_json(base, other, tmp_path)
        (part,) = want["parts"]
        shown = _shown_deltas(p)
        table = {"lat_mean_us": "lat-lat_mean_us", "lat_p99999_us": "lat-lat_p99999_us", "lat_max_us": "lat-lat_max_us"}
        for metric, fid in table.items():
            expect = [r["deltas"][1] for r in part["rows"] if r["metric"] == metric]
            assert len(expect) == 9 and close(shown[fid], expect) == [], (metric, shown[fid], expect)
        head = [r["deltas"][1] for r in part["rows"] if (r["metric"], r["block_size_bytes"], r["mix"]) in
                {("lat_mean_us", 4096, "100/0"), ("lat_mean_us", 4096, "0/100"), ("lat_p99999_us", 4096, "0/100")}]
        assert close(shown["headline"], head) == []
        assert p.js(PLOTS_DRAWN_JS)["problems"] == []
    shot(p, "real-compare")


def test_a_damaged_run_is_marked_in_its_comparison(browser, real):
    runs, site, _ = real
    p = page_of(browser, site)
    uids = [uid_of(runs["c"]), uid_of(runs["damaged"])]
    p.js(f"ssdptsSite.select({json.dumps(uids)})")
    compared(p, uids)
    text = p.js("document.getElementById('comparison').innerText")
    assert "DAMAGED RUNS" in text.upper() and "round-003.json" in text


def test_a_runs_report_opens_with_its_plots(real):
    runs, site, _ = real
    row = next(r for r in index_data(site)["runs"] if r["uid"] == uid_of(runs["a2"]))
    report = site / row["report"]
    got = drawn(report)
    assert got["problems"] == [] and got["plots"] >= 5
    text = report.read_text()
    assert runs["a2"].name in text
    # and it leads back to the index
    back = re.search(r'<nav class="site-back"><a href="([^"]+)"', text)
    assert back and (report.parent / back.group(1)).resolve() == (site / "index.html").resolve()


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_the_index_fits_the_screen_and_keeps_the_columns_chosen(browser, fake, size):
    """The default columns fit the window (no column off screen: as many tests' figures as fit, the
    run's identity and verdict first); the chooser shows or hides groups, and the address keeps it."""
    _, site = fake
    p = Page(browser, width=size[0], height=size[1])
    p.open((site / "index.html").resolve())
    fit = p.js("""(() => { const box = document.querySelector('.index-scroll');
      return {sw: box.scrollWidth, cw: box.clientWidth, heads: [...document.querySelectorAll('#runs thead th')].map(t => t.textContent),
              groups: [...document.querySelectorAll('#chooser input')].filter(i => i.checked).map(i => i.id)}; })()""")
    assert fit["sw"] <= fit["cw"] + 1, fit
    assert fit["heads"][:4] == ["✓", "status", "model", "steady state"] and fit["groups"], fit
    assert any("(IOPS)" in h or "(MB/s)" in h or "(µs)" in h for h in fit["heads"]), "no test's figures shown"
    # choose the device columns: shown, and kept in the address for a reload or a link
    p.js("document.getElementById('cols-device').click()")
    assert "firmware" in p.js("[...document.querySelectorAll('#runs thead th')].map(t => t.textContent)")
    hash_ = p.js("location.hash")
    assert hash_.startswith("#cols=") and "device" in hash_
    again = Page(browser, width=size[0], height=size[1])
    again.open((site / "index.html").resolve())
    again.js(f"location.hash = {json.dumps(hash_)}; location.reload()")
    time.sleep(1.0)
    assert again.js("document.getElementById('cols-device').checked") is True
    # the run's identity stays in view when the table scrolls sideways
    stuck = p.js("""(() => { const box = document.querySelector('.index-scroll'); box.scrollLeft = box.scrollWidth;
      const b = box.getBoundingClientRect(), s = document.querySelector('#runs tbody td[data-key="model"]').getBoundingClientRect();
      return s.left >= b.left && s.right <= b.right; })()""")
    assert stuck


SCROLLED_MAGENTA = "table.index td:not(.stick), table.index th:not(.stick) { color: #ff00ff !important; }"


@pytest.mark.parametrize("scale", [1, 1.25, 1.5])
def test_nothing_scrolled_shows_through_the_sticky_columns(browser, fake, scale):
    """Scrolled sideways, at any position and on a screen of 1, 1.25 or 1.5 device pixels per CSS
    pixel: the sticky columns (check box, status, model, steady state) hide what scrolls under them
    — its text painted magenta here, not one pixel of it inside the sticky block (collapsed
    borders, which stay behind a sticky cell, let a pixel of the scrolled header's text show at
    their edge). The block is looked at inside the scroller's top and bottom pixel: where the table
    sits at a fraction of a pixel, Chromium draws the sticky cells and the scrolled ones up to a
    device pixel apart (a row's line), which a row cut by the scroller's edge could show."""
    import base64
    from PIL import Image

    _, site = fake
    p = Page(browser, width=1366, height=768)
    p.b.call("Emulation.setDeviceMetricsOverride", {"width": 1366, "height": 768, "deviceScaleFactor": scale,
                                                    "mobile": False}, p.s)
    p.open((site / "index.html").resolve())
    p.js("location.hash = 'cols=device,t:wsat,t:iops,t:tp,t:lat'; location.reload()")
    time.sleep(1.0)
    p.js(f"(() => {{ const s = document.createElement('style'); s.textContent = {json.dumps(SCROLLED_MAGENTA)}; "
         "document.head.appendChild(s); return 1; })()")
    most = p.js("(() => { const s = document.querySelector('.index-scroll'); return s.scrollWidth - s.clientWidth; })()")
    assert most > 300, "the table does not scroll sideways"
    seen = []
    for x in [1, 2, 3, 7, 50, 151, 333, most // 2, most - 17, most]:
        box = p.js(f"""(async () => {{ const s = document.querySelector('.index-scroll'); s.scrollLeft = {x};
          await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));  // the scroll event
          const r = s.getBoundingClientRect(), st = [...document.querySelectorAll('#runs thead th.stick')];
          return {{x: r.x + s.clientLeft, y: r.y + s.clientTop + 1, width: st[st.length - 1].getBoundingClientRect().right
                   - r.x - s.clientLeft - 1, height: s.clientHeight - 2, scrolled: s.classList.contains('scrolled')}}; }})()""")
        assert box.pop("scrolled")  # the sticky block's edge shows while scrolled
        img = Image.open(io.BytesIO(base64.b64decode(p.b.call("Page.captureScreenshot", {
            "format": "png", "clip": {**box, "scale": 1}}, p.s)["data"]))).convert("RGB")
        px = img.load()
        n = sum(1 for i in range(img.width) for j in range(img.height)
                if px[i, j][0] > 160 and px[i, j][2] > 160 and px[i, j][1] < 120)
        if n:
            seen.append((x, n))
            if KEEP:
                img.save(Path(KEEP) / f"sticky-leak-{scale}-{x}.png")
    assert seen == []


def test_runs_of_different_kinds_are_not_compared(browser, tmp_path):
    """The site applies 'ssdpts compare''s rule: a quick run ticked beside a PTS run is refused, named
    with its kind; two quick runs are sent to the command that compares them."""
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.workloads import quick as Q

    runs = fake_library(tmp_path)
    made = []
    for name in ("qa", "qb"):
        spec = Q.QuickSpec(runs=3, seconds=1.0, only=("seq1m-read-t1q64",))
        store, _ = Q.start_quick(spec, open_target(str(tmp_path / f"{name}.img"), size_bytes=64 * 2**20),
                                 executor=FakeExecutor(model=lambda s: 3000.0), out_dir=tmp_path / "quick",
                                 confirm=None, argv=["ssdpts", "quick"])
        made.append(store.path)
    with ResultsDB(tmp_path / "results.db") as db:
        db.add(made)
    site = tmp_path / "site"
    build(site, tmp_path / "results.db", reports=False)
    p = Page(browser, width=1366, height=768)
    p.open((site / "index.html").resolve())

    by_name = {r["name"]: r["uid"] for r in index_data(site)["runs"]}

    def tick(*uids):
        p.js(f"""(() => {{ for (const tr of document.querySelectorAll('#runs tbody tr')) {{
          const box = tr.querySelector('input'), want = {json.dumps(list(uids))}.includes(tr.dataset.uid);
          if (box.checked !== want) box.click(); }} }})()""")
        time.sleep(1.0)
        return p.js("document.getElementById('comparison').textContent")

    qa, qb = (by_name[m.name] for m in made)
    pts = by_name[next(iter(runs.values())).name]
    text = tick(qa, pts)
    assert "runs of different kinds: not comparable" in text and "quick" in text, text
    text = tick(qa, qb)
    assert "ssdpts compare RUN_DIR --baseline RUN_DIR" in text, text
