"""Reports from fixture run directories (FakeExecutor): every required section is there, every
number in the HTML equals the value recomputed from the raw step data (tests/report_numbers.py),
no percentile exceeds its maximum, partial and not-reached runs are marked, device strings are
escaped, the datasheet compares with targets. The rendered pages (Chromium, poppler) are checked in
tests/integration/test_report_render.py; the same recomputation from real fio json+ in
tests/integration/test_run_devices.py."""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("jinja2")

from ssdpts.device.target import open_target  # noqa: E402
from ssdpts.engine.fake import FakeExecutor  # noqa: E402
from ssdpts.errors import Interrupted, UserError  # noqa: E402
from ssdpts.measurement import DirectionStats, Measurement  # noqa: E402
from ssdpts.pts.qos import QOS_PERCENTILES, approx_max_note, ios_needed, window_latency  # noqa: E402
from ssdpts.pts.runspec import RunSpec  # noqa: E402
from ssdpts.report import output_paths, parse_formats, render  # noqa: E402
from ssdpts.report.datasheet import parse_targets  # noqa: E402
from ssdpts.report import html as html_module  # noqa: E402
from ssdpts.report.html import css_string, render_html  # noqa: E402
from ssdpts.report.assemble import load  # noqa: E402
from ssdpts.report.context import temperature_c  # noqa: E402
from ssdpts.report.fmt import fmt_rounds, fmt_value  # noqa: E402
from ssdpts.report.plots import log_ticks  # noqa: E402
from ssdpts.run.session import start_run  # noqa: E402

from ..report_numbers import Recompute, html_numbers  # noqa: E402

EVIL = "<script>alert(1)</script>"


# ---- fixture run directories --------------------------------------------------------------------

def make_run(tmp: Path, tests=("wsat", "iops", "tp", "lat"), *, max_rounds=8, executor=None) -> Path:
    """A run directory made by the real runner on a 256 MiB file target with the FakeExecutor."""
    target = open_target(str(tmp / "t.bin"), size_bytes=256 * 2**20)
    spec = RunSpec(tests=tuple(tests), step_seconds=1, max_rounds=max_rounds, wsat_hours=0.5, wsat_chunk_steps=10)
    try:
        start_run(spec, target, executor=executor or FakeExecutor(noise=0.02), out_dir=tmp / "runs", confirm=None)
    except Interrupted:
        pass
    (run,) = (tmp / "runs").iterdir()
    return run


def never_converges(step) -> float:
    return 1000 * (1 + 0.5 * (step.round % 3))


def read(run: Path, name: str) -> dict:
    return json.loads((run / name).read_text())


def html_of(run: Path, **kw) -> str:
    (path,) = render(run, formats=("html",), **kw)
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def complete(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("complete"))
    return run, html_of(run)


@pytest.fixture(scope="module")
def not_reached(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("notreached"), ("iops", "lat"), max_rounds=5,
                   executor=FakeExecutor(model=never_converges))
    return run, html_of(run)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    # batch 1: WSAT chunk; 2: IOPS WIPC; 3-4: IOPS rounds 1-2; 5: Ctrl-C
    run = make_run(tmp_path_factory.mktemp("interrupted"), executor=FakeExecutor(noise=0.02, interrupt_on_batch=5))
    return run, html_of(run)


# ---- helpers --------------------------------------------------------------------------------------

def figure(doc: str, fid: str) -> str:
    m = re.search(rf'<figure class="(?:table|plot)" id="{re.escape(fid)}">(.*?)</figure>', doc, re.S)
    assert m, f"no figure {fid!r} in the report"
    return m.group(1)


def values(doc: str, fid: str) -> list[float]:
    return [float(v) for v in re.findall(r'data-value="([^"]+)"', figure(doc, fid))]


def text(doc: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>", " ", doc, flags=re.S)))


def data_of(doc: str) -> dict:
    m = re.search(r'<script type="application/json" id="ssdpts-data">(.*?)</script>', doc, re.S)
    return json.loads(m.group(1))


def plots_of(doc: str) -> dict:
    """The plots' descriptions (report/chart.py) the page's script draws."""
    m = re.search(r'<script type="application/json" id="ssdpts-plots">(.*?)</script>', doc, re.S)
    return json.loads(m.group(1))


def series_of(spec: dict) -> dict[str, list[tuple[float, float]]]:
    """Every hover series of a plot description: name -> its points (x, value shown)."""
    out: dict[str, list] = {}
    for panel in spec["P"]:
        for layer in panel.get("L", []):
            if "s" not in layer:
                continue
            name = spec["S"][layer["s"]]["n"]
            xs = layer.get("hx", layer.get("x"))
            ys = layer.get("hy", layer.get("v", layer.get("y")))
            out.setdefault(name, []).extend((x, y) for x, y in zip(xs, ys) if x is not None and y is not None)
    return out


def check_numbers(run: Path, doc: str, targets: dict | None = None) -> int:
    """Every table value of the report carries the statistic it is, and equals its recomputation."""
    rc = Recompute(run, targets=targets)
    n = 0
    for table, value, ref, css in html_numbers(doc):
        if not ref:
            # only numbers that are not measurements may go without a reference: the operator's
            # targets, telemetry temperatures, counts of samples
            assert "given" in css or table in ("temperature-table", "wsat-table", "datasheet-wa"), (table, value)
            continue
        assert value == pytest.approx(rc.value(ref), rel=1e-9, abs=1e-9), (table, ref)
        n += 1
    return n


# ---- complete run -------------------------------------------------------------------------------

REQUIRED = [
    # page 1 and the report header
    "datasheet", "datasheet-table", "overview", "header", "host-audit",
    # WSAT: IOPS vs time, vs TGBW, vs drive fills, response times vs time
    "wsat", "wsat-iops-time", "wsat-iops-tgbw", "wsat-iops-fills", "wsat-lat-time", "wsat-table",
    # IOPS: convergence (block sizes at 0/100, tracking variables), window per variable, table, 2D, 3D
    "iops", "iops-convergence-bs", "iops-convergence-tracking", "iops-ss", "iops-ss-values", "iops-window-1",
    "iops-window-2", "iops-window-3", "iops-table", "iops-2d", "iops-3d", "iops-qos", "iops-cpu",
    # TP per block size: convergence R/W, window, table; all sizes: table and 2D
    "tp", "tp-1024KiB-convergence", "tp-1024KiB-window-1", "tp-1024KiB-table", "tp-128KiB-convergence",
    "tp-128KiB-window-1", "tp-128KiB-table", "tp-table", "tp-2d", "tp-1024KiB-cpu",
    # LAT: convergence mean+max, window, mean / 5 nines / max / IOPS tables, QoS, 3D, histograms, confidence
    "lat", "lat-convergence", "lat-window-1", "lat-lat-mean-us", "lat-lat-p99999-us", "lat-lat-max-us",
    "lat-iops", "lat-qos", "lat-3d", "lat-histogram", "lat-confidence", "lat-cpu",
    # temperature: always a section ("not available: why" without telemetry)
    "temperature",
]


def test_complete_report_has_every_required_section(complete):
    run, doc = complete
    for fid in REQUIRED:
        assert f'id="{fid}"' in doc, fid
    for sid in ("datasheet", "overview", "header", "wsat", "iops", "tp", "lat", "temperature"):
        assert f'href="#{sid}"' in doc  # the contents link to every section
    t = text(doc)
    for label in ("Administrative", "Test platform", "Device under test", "Set-up parameters", "Test parameters",
                  "Preconditioning 1 (WIPC)", "Active range", "Demand intensity", "Purge method", "not available",
                  "IOPS Test (REQUIRED) – Report Page", "Latency Test (REQUIRED) – Report Page", "Test ID"):
        assert label in t, label
    assert "steady state reached in rounds 4–8" in t
    assert "PARTIAL" not in t and "NOT reached" not in t
    # no telemetry: the temperature is "not available", saying why, on the pages and in its section
    assert re.search(r"temperature not available: \S", t) and "Temperature and throttling: not available" in t
    assert "Write amplification: not available" in t
    # the interactive document: its data and script, the plots' descriptions and their script, no fetch
    assert doc.count("<script") == 4 and "<link" not in doc.lower()
    markup = re.sub(r"<script.*?</script>", " ", doc, flags=re.S)  # (d3's source says 'src=')
    assert not re.search(r'\bsrc=', markup) and not re.search(r'(?:href|src)="(?:https?:)?//', markup)
    d3 = (Path(html_module.__file__).parent / "templates" / "vendor" / html_module.D3).read_text()
    assert d3 in doc and "fetch(" not in doc.replace(d3, "")  # our own scripts fetch nothing
    figures = re.findall(r'<figure class="plot" id="([^"]+)"', doc)
    assert len(figures) >= 20 and sorted(figures) == sorted(plots_of(doc))  # one description per plot


def test_every_number_equals_its_recomputation(complete):
    run, doc = complete
    n = check_numbers(run, doc)
    assert n > 300  # IOPS 56 cells, their CPU, LAT 9 × (mean, 99.999%, max, IOPS, QoS), TP, WSAT, datasheet


def test_iops_table_equals_summary(complete):
    run, doc = complete
    table = read(run, "summary.json")["parts"]["iops"]["table"]
    rows = sorted(table["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in table["mixes"]]
    head = figure(doc, "iops-table")
    for m in table["mixes"]:
        assert f"<th scope=\"col\">{m}</th>" in head


def test_tp_tables_equal_summary(complete):
    run, doc = complete
    parts = read(run, "summary.json")["parts"]
    allrows = []
    for pid in ("tp-1024KiB", "tp-128KiB"):
        t = parts[pid]["table"]
        assert values(doc, f"{pid}-table") == [t["read_mb_per_s"], t["write_mb_per_s"]]
        allrows.append(t)
    allrows.sort(key=lambda t: t["block_size_bytes"])
    assert values(doc, "tp-table") == [v for t in allrows for v in (t["read_mb_per_s"], t["write_mb_per_s"])]


def test_lat_tables_equal_summary_and_one_definition(complete):
    """The LAT tables, the QoS table, the datasheet and summary.json give the same numbers: the
    window's pooled 99.999% and the window's maximum (pts/qos.py), never the mean of step values."""
    run, doc = complete
    rows = read(run, "summary.json")["parts"]["lat"]["table"]["rows"]
    bss = sorted({r["block_size_bytes"] for r in rows})
    mixes = list(dict.fromkeys(r["mix"] for r in rows))
    at = {(r["block_size_bytes"], r["mix"]): r for r in rows}
    for field in ("lat_mean_us", "lat_p99999_us", "lat_max_us", "iops"):
        expected = [at[(bs, m)][field] for bs in bss for m in mixes]
        assert values(doc, "lat-" + field.replace("_", "-")) == pytest.approx(expected, rel=1e-12), field
    for r in rows:
        assert r["lat_max_in_window_us"] == r["lat_max_us"]
    qos = re.findall(r'data-value="([^"]+)" data-ref="lat:(rand-4096-0):p99.999_us"', figure(doc, "lat-qos"))
    assert [float(v) for v, _ in qos] == [at[(4096, "0/100")]["lat_p99999_us"]]


def test_steady_state_verdicts_and_window_values(complete):
    run, doc = complete
    part = read(run, "summary.json")["parts"]["iops"]
    vs = part["steady_state"]["variables"]
    assert values(doc, "iops-ss") == [x for v in vs for x in (v["average"], v["range"], v["excursion"])]
    assert values(doc, "iops-ss-values") == [x for v in vs for x in v["values"]]
    # the printed comparison holds: "≤" for a pass, ">" for a fail
    for cell in re.findall(r'<td[^>]*class="(ok|bad)"[^>]*>([^<]*?) ([≤>]) ', figure(doc, "iops-ss")):
        assert (cell[0] == "ok") == (cell[2] == "≤"), cell


def test_wsat_table_equals_summary(complete):
    run, doc = complete
    series = read(run, "summary.json")["parts"]["wsat"]["table"]["series"]
    got = values(doc, "wsat-table")
    per = 7  # the minute is the row header; the IO count (from the step) after the drive fills
    assert len(got) == per * len(series)
    for i, s in enumerate(series):
        row = got[i * per:(i + 1) * per]
        assert row[:3] + row[4:] == [s["iops"], s["tgbw_gb"], s["drive_fills"],
                                     s["lat_mean_us"], s["lat_p99999_us"], s["lat_max_us"]]


def test_no_percentile_exceeds_its_maximum(complete, not_reached):
    for run, doc in (complete, not_reached):
        summary = read(run, "summary.json")
        for part in summary["parts"].values():
            t = part["table"] or {}
            for r in t.get("rows", []) if t.get("kind") == "latency" else []:
                assert r["lat_p99999_us"] <= r["lat_max_us"]
            for s in t.get("series", []):
                assert s["lat_p99999_us"] <= s["lat_max_us"]
        # every QoS row of the report: p50 ≤ … ≤ p99.9999 ≤ max
        for qos in ("iops-qos", "lat-qos"):
            for row in re.findall(r"<tr><th scope=\"row\">.*?</tr>", figure(doc, qos), re.S):
                vals = [float(v) for v in re.findall(r'data-value="([^"]+)"', row)][1:]  # the IO count first
                assert vals == sorted(vals), row


def test_unresolvable_percentiles_are_flagged(complete):
    """A percentile the sample cannot resolve says so: 99.999% needs 10⁵ IOs."""
    run, doc = complete
    data = data_of(doc)["details"]
    for row in re.findall(r"<tr><th scope=\"row\">(.*?)</th>(.*?)</tr>", figure(doc, "lat-qos"), re.S):
        ios = int(float(re.search(r'data-value="([^"]+)"', row[1]).group(1)))
        cells = re.findall(r"<td([^>]*)>(.*?)</td>", row[1], re.S)[1:-1]  # the percentiles
        for pct, (attrs, body) in zip(QOS_PERCENTILES, cells):
            flagged = "≈ max" in body
            assert flagged == (ios < ios_needed(pct)), (row[0], pct, ios)
    assert approx_max_note(99.999) == "≈ max: fewer than 10⁵ IOs"
    assert any(not q[2] for d in data.values() for q in d["qos"])  # the fake run's steps are small


def test_datasheet_figures(complete):
    run, doc = complete
    table = figure(doc, "datasheet-table")
    t = text(table)
    for label in ("RND 4KiB read IOPS (100/0)", "SEQ 128KiB write MB/s", "QD1 RND 4KiB read: 99.999% response time",
                  "WSAT drop from FOB to the steady level", "NOT compliant (time-compressed)", "reached"):
        assert label in t, label
    iops = read(run, "summary.json")["parts"]["iops"]["table"]
    row4k = next(r for r in iops["rows"] if r["block_size_bytes"] == 4096)
    assert f'data-value="{row4k["values"]["100/0"]}" data-ref="iops:rand-4096-100:iops"' in table
    assert 'href="#d-iops-rand-4096-100"' in table  # a figure links to its cell's details


def test_datasheet_targets(complete, tmp_path):
    run, _ = complete
    iops = read(run, "summary.json")["parts"]["iops"]["table"]
    read4k = next(r for r in iops["rows"] if r["block_size_bytes"] == 4096)["values"]["100/0"]
    f = tmp_path / "targets.csv"
    f.write_text("# OCP-style targets\nfigure,limit,direction\n"
                 f"rnd4k_read_iops,{read4k * 0.9:.0f},higher\n"
                 f"rnd4k_write_iops,{10**9},min\n"
                 "qd1_4k_read_p99999_us,1,lower   # 1 µs: fails\n")
    doc = html_of(run, targets=f)
    table = figure(doc, "datasheet-table")
    rows = {re.sub(r"\s+", " ", text(m)).strip(): m for m in re.findall(r"<tr>.*?</tr>", table, re.S)}
    verdicts = {k.split(" (")[0].split(":")[0]: ("pass" in k, "FAIL" in k) for k in rows if "IOs slower" not in k}
    assert sum("IOs slower than 10 ms" in k for k in rows) == 4  # the outlier counts (test_outliers.py)
    assert verdicts["RND 4KiB read IOPS"] == (True, False)
    assert verdicts["RND 4KiB write IOPS"] == (False, True)
    assert verdicts["QD1 RND 4KiB read"] == (False, True)
    targets = {t.figure: t.limit for t in parse_targets(f.read_text()).values()}
    check_numbers(run, doc, targets)
    assert "Δ vs target" in table


@pytest.mark.parametrize("content,message", [
    ("", "is empty"),
    ("figure,limit\nrnd4k_read_iops,1\n", "must name the columns figure,limit,direction"),
    ("figure,limit,direction\nrnd4k_reed_iops,1,higher\n", "unknown figure 'rnd4k_reed_iops'; the figures are: "),
    ("figure,limit,direction\nrnd4k_read_iops,lots,higher\n", "limit 'lots' is not a number"),
    ("figure,limit,direction\nrnd4k_read_iops,1,sideways\n", "direction 'sideways' must be higher"),
    ("figure,limit,direction\nrnd4k_read_iops,1,higher\nrnd4k_read_iops,2,higher\n", "is given twice"),
])
def test_bad_targets_are_refused_in_one_line(content, message):
    with pytest.raises(UserError, match=re.escape(message)) as exc:
        parse_targets(content, "t.csv")
    assert "\n" not in str(exc.value)


def test_interactive_data(complete):
    """A description for every plot, its series named, details for every linked cell, each equal to
    the raw steps (the points' positions are the browser's: tests/integration/test_report_render.py)."""
    run, doc = complete
    data = data_of(doc)
    specs = plots_of(doc)
    for pid, spec in specs.items():
        assert spec["w"] > 0 and spec["h"] > 0 and spec["P"], pid
        for panel in spec["P"]:
            for layer in panel.get("L", []):
                if "s" in layer:
                    assert 0 <= layer["s"] < len(spec["S"]), pid
    # the convergence plot's points are the raw IOPS of each round's 0/100 steps
    rc = Recompute(run)
    steps = {(s["round"], s["key"]): s for s in rc.steps if s["test"] == "iops" and s["phase"] == "round"}
    conv = series_of(specs["iops-convergence-bs"])
    assert [x for x, _ in conv["4KiB"]] == list(range(1, 9))
    for x, y in conv["4KiB"]:
        assert y == pytest.approx(rc.step_value(steps[(x, "rand-4096-0")], "iops"), rel=1e-12)
    # every linked cell has its details; their rows are the raw per-round values
    links = set(re.findall(r'data-detail="([^"]+)"', doc))
    assert links and links <= set(data["details"])
    d = data["details"]["d-iops-rand-4096-0"]
    assert [r[0] for r in d["rows"]] == list(range(1, 9)) and d["window"] == [4, 5, 6, 7, 8]
    for r in d["rows"]:
        assert r[1] == pytest.approx(rc.step_value(steps[(r[0], "rand-4096-0")], "iops"), rel=1e-12)
    assert d["avg"] == pytest.approx(rc.value("iops:rand-4096-0:iops"), rel=1e-12)
    assert d["hist"] and sum(b[1] for b in d["hist"]) == rc.value("iops:rand-4096-0:ios")


def test_pdf_document_is_the_same_html_without_script(complete):
    run, _ = complete
    report = load(run)
    printed = render_html(report, interactive=False)
    # no interactions, no details: the plots' descriptions and the script that draws them only
    assert printed.count("<script") == 2 and 'id="ssdpts-data"' not in printed and 'class="cell"' not in printed
    assert sorted(plots_of(printed)) == sorted(re.findall(r'<figure class="plot" id="([^"]+)"', printed))
    assert "@page t-iops" in printed and "counter(pages)" in printed
    assert "IOPS Test (REQUIRED) – Report Page" in printed
    assert "<title>SNIA SSS PTS 2.0.2 Enterprise — test report: t.bin — time-compressed — not PTS compliant</title>" \
        in printed  # the PDF's title metadata says it is not compliant


# ---- steady state NOT reached ---------------------------------------------------------------------

def test_not_reached_is_unmissable(not_reached):
    run, doc = not_reached
    summary = read(run, "summary.json")
    assert not summary["parts"]["iops"]["steady_state"]["reached"]
    t = text(doc)
    top = doc[:doc.index('id="datasheet"')]
    assert 'class="alert alert-bad"' in top and "steady state NOT reached" in htmllib.unescape(top)
    assert t.count("steady state NOT reached") >= 6
    assert "the values below are averages over the last 5 rounds (1–5) and are NOT steady-state values" in t
    assert "gave up after the maximum of 5 rounds" in t
    for fid in ("iops-table", "iops-2d", "iops-3d", "lat-lat-mean-us", "lat-iops", "lat-3d", "lat-qos"):
        assert "steady state NOT reached" in htmllib.unescape(figure(doc, fid)), fid
    assert re.search(r'<td class="bad">NOT reached</td>', doc)
    assert "NOT reached" in text(figure(doc, "datasheet-table"))
    check_numbers(run, doc)


# ---- interrupted -------------------------------------------------------------------------------------

def test_interrupted_report_is_partial(interrupted):
    run, doc = interrupted
    assert read(run, "manifest.json")["status"] == "interrupted"
    t = text(doc)
    assert "PARTIAL REPORT" in t
    assert doc.index("PARTIAL REPORT") < doc.index('id="datasheet"')
    assert "PARTIAL" in re.search(r"<title>(.*?)</title>", doc).group(1)
    assert 'class="watermark"' in doc
    assert "ssdpts resume" in t
    # IOPS ran two rounds: no steady-state window; TP and LAT never started
    assert "fewer than 5 rounds" in t
    assert t.count("not run") >= 3
    table = read(run, "summary.json")["parts"]["iops"]["table"]
    rows = sorted(table["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in table["mixes"]]


# ---- each test alone --------------------------------------------------------------------------------

@pytest.mark.parametrize("test,present,absent", [
    ("iops", ["iops-table", "iops-3d", "iops-window-3"], ["tp-table", "lat-3d", "wsat-iops-time"]),
    ("tp", ["tp-1024KiB-convergence", "tp-128KiB-window-1", "tp-2d"], ["iops-table", "lat-3d", "wsat-iops-time"]),
    ("lat", ["lat-convergence", "lat-histogram", "lat-lat-p99999-us", "lat-confidence"],
     ["iops-table", "tp-2d", "wsat-iops-time"]),
    ("wsat", ["wsat-iops-time", "wsat-iops-tgbw", "wsat-iops-fills", "wsat-lat-time"], ["iops-table", "tp-2d", "lat-3d"]),
])
def test_each_test_alone(tmp_path, test, present, absent):
    run = make_run(tmp_path, (test,), max_rounds=5)
    doc = html_of(run)
    for fid in present:
        assert f'id="{fid}"' in doc, fid
    for fid in absent:
        assert f'id="{fid}"' not in doc, fid
    check_numbers(run, doc)


# ---- escaping ------------------------------------------------------------------------------------------

def test_device_strings_are_escaped(tmp_path):
    run = make_run(tmp_path, ("lat",), max_rounds=5)
    man = read(run, "manifest.json")
    man["target"].update(model=EVIL, vendor='ACME"; } body { display: none } </style><script>x()</script>',
                         serial="S/N $x^2$ 100%_{a}\\", firmware="<b>fw</b>")
    man["run_spec"]["extra"] = {"sponsor": '"><img src=x onerror=alert(1)>'}
    (run / "manifest.json").write_text(json.dumps(man))
    doc = html_of(run)
    assert EVIL not in doc
    assert doc.count("<script") == 4  # ours: the data, the script, the plots and their script
    assert "<img" not in doc and "<b>fw</b>" not in doc and "</style><script>" not in doc
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc
    assert "S/N $x^2$ 100%_{a}\\" in text(doc)
    assert data_of(doc)["details"]  # the JSON still parses
    # the CSS strings of the page header: quotes, backslashes and markup escaped
    assert css_string('a"b\\c</style>\n') == '"a\\"b\\\\c\\3C /style\\3E \\A "'


# ---- other inputs -----------------------------------------------------------------------------------

def test_description_is_shown_and_a_simulated_device_is_disclosed(tmp_path):
    """--describe FILE is what no tool can read from the device: every field reaches the report
    header (nested tables as dotted names), and a description that says the device is simulated
    puts a banner on the first page."""
    run = make_run(tmp_path, ("lat",), max_rounds=5)
    man = read(run, "manifest.json")
    man["description"] = {"simulated": True, "model": "Ref drive", "notes": "a simulation, not a physical SSD",
                          "refssd": {"t_prog_us": 1000.0, "channels_x_dies": "4 x 2"}}
    (run / "manifest.json").write_text(json.dumps(man))
    doc = re.sub(r"\s+", " ", text(html_of(run)))
    assert "simulated device under test" in doc and "a simulation, not a physical SSD" in doc
    assert "refssd.t_prog_us 1000.0" in doc and "refssd.channels_x_dies 4 x 2" in doc
    assert "Ref drive (described)" in doc  # the file target reports no model of its own
    # ... in the administrative table and the running page header too, not only under the device
    rep = load(run)
    admin = dict(rep.admin)
    assert admin["Model"] == "Ref drive (described)" and admin["Vendor"] == "not available"
    assert rep.short_header["device"] == "Ref drive"
    assert all("SSD model: Ref drive (described)" in h.lines[1] for h in rep.page_headers.values())
    man["description"] = {"nand_type": "TLC"}
    (run / "manifest.json").write_text(json.dumps(man))
    doc = re.sub(r"\s+", " ", text(html_of(run)))
    assert "simulated device under test" not in doc and "nand_type TLC" in doc


def test_missing_summary_is_recomputed(tmp_path):
    run = make_run(tmp_path, ("iops",), max_rounds=5)
    expected = read(run, "summary.json")["parts"]["iops"]["table"]
    (run / "summary.json").unlink()
    doc = html_of(run)
    assert "summary.json is missing" in text(doc)
    rows = sorted(expected["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in expected["mixes"]]


def test_missing_summary_is_recomputed_on_a_4kn_target(tmp_path, monkeypatch):
    """A 4Kn target (logical block 4096) never runs the 0.5KiB steps. Rebuilding the results without
    summary.json must plan the parts for the recorded logical block size: otherwise no round has all
    its planned steps, and the report has no window and no table."""
    from ssdpts.device import target as target_mod

    # a file target takes the logical block size of the disk under it: make that disk 4Kn
    monkeypatch.setattr(target_mod, "_fs_block_sizes", lambda directory: (4096, 4096))
    target = open_target(str(tmp_path / "t.bin"), size_bytes=256 * 2**20)
    assert target.logical_block_size_bytes == 4096
    spec = RunSpec(tests=("iops", "lat"), step_seconds=1, max_rounds=5)
    start_run(spec, target, executor=FakeExecutor(noise=0.02), out_dir=tmp_path / "runs", confirm=None)
    (run,) = (tmp_path / "runs").iterdir()
    saved = read(run, "summary.json")["parts"]
    assert all(r["block_size_bytes"] >= 4096 for r in saved["iops"]["table"]["rows"])
    (run / "summary.json").unlink()
    doc = html_of(run)
    assert "summary.json is missing" in text(doc)
    iops = saved["iops"]["table"]
    rows = sorted(iops["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in iops["mixes"]]
    lat = {(r["block_size_bytes"], r["mix"]): r for r in saved["lat"]["table"]["rows"]}
    mixes = list(dict.fromkeys(m for _, m in lat))
    assert values(doc, "lat-lat-mean-us") == pytest.approx([lat[(bs, m)]["lat_mean_us"]
                                                           for bs in sorted({b for b, _ in lat}) for m in mixes])


def test_temperature_with_telemetry(tmp_path):
    run = make_run(tmp_path, ("lat",), max_rounds=5)
    assert "not available" in text(html_of(run))
    lines = (run / "steps.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    for i, r in enumerate(recs):
        r["telemetry"] = {"available": True, "after": {"composite_temperature_c": 37 + i % 7}}
    (run / "steps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    report = load(run)
    assert report.sections[-1].id == "temperature"
    doc = html_of(run)
    assert 'id="temperature-plot"' in doc
    assert values(doc, "temperature-table")[0] == 37  # min (the sample count is the row header)
    # overlaid on the convergence plot, on its own right axis
    conv = {s["n"] for s in plots_of(doc)["lat-convergence"]["S"]}
    assert "temperature (°C)" in conv
    assert "Temperature and throttling: not available" not in text(doc)


def test_temperature_shapes():
    assert temperature_c(None) is None
    assert temperature_c({"temperature_c": 41}) == 41
    assert temperature_c({"smart_log": {"temperature": 318}}) == pytest.approx(44.85)
    assert temperature_c({"after": {"temperature_celsius": 39.5}}) == 39.5
    assert temperature_c({"something": 1}) is None


def test_not_a_run_directory(tmp_path):
    with pytest.raises(UserError, match="is not a directory"):
        render(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="manifest.json does not exist"):
        render(tmp_path / "empty")


# ---- the statistics themselves ----------------------------------------------------------------------

def _m(bins: dict[int, int], max_ns: float) -> Measurement:
    n = sum(bins.values())
    d = DirectionStats(ios=n, io_bytes=4096 * n, iops=n, bw_bytes_per_s=4096.0 * n, runtime_s=1.0,
                       lat_mean_ns=sum(k * v for k, v in bins.items()) / n, lat_min_ns=min(bins), lat_max_ns=max_ns,
                       lat_stddev_ns=0.0, lat_bins_ns=bins)
    return Measurement(read=d, write=DirectionStats.empty(), duration_s=1.0, start_time=0.0, end_time=1.0)


def test_window_percentile_is_pooled_and_capped():
    # fio reports a bin's midpoint: the top bin (30,802 ns) lies above the largest IO measured (30,692 ns)
    a = _m({1000: 3000, 30802: 1}, 30692.0)
    b = _m({1100: 4000}, 9000.0)
    w = window_latency([a, b])
    assert w.ios == 7001 and w.max_us == 30.692
    assert w.percentile_us(99.999) == 30.692  # capped at the window's max, not 30.802
    assert w.percentile_us(50) == 1.1  # pooled: 3,000 IOs at 1,000 ns, 4,000 at 1,100 ns
    assert not w.resolved(99.999) and w.resolved(99.9)
    assert w.mean_us == pytest.approx((a.lat_mean_ns + b.lat_mean_ns) / 2 / 1e3)  # the window average of step means


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.integers(1, 10**9), st.integers(1, 10**6), min_size=1, max_size=30),
                min_size=1, max_size=6), st.floats(0.5, 1.02))
def test_no_window_percentile_exceeds_the_window_max(steps, top):
    ms = [_m(b, max(b) * top) for b in steps]
    w = window_latency(ms)
    assert w.max_us == pytest.approx(max(m.lat_max_ns for m in ms) / 1e3)
    ps = [w.percentile_us(p) for p in QOS_PERCENTILES]
    assert ps == sorted(ps) and ps[-1] <= w.max_us


# ---- API and CLI ------------------------------------------------------------------------------------

def test_formats_and_output_paths(tmp_path):
    assert parse_formats("html,pdf") == ("html", "pdf")
    assert parse_formats("PDF") == ("pdf",)
    assert parse_formats(None) == ("html", "pdf")
    with pytest.raises(UserError, match="unknown report format 'docx'"):
        parse_formats("html,docx")
    run = tmp_path / "run"
    assert output_paths(run, ("html", "pdf"), None) == {"html": run / "report.html", "pdf": run / "report.pdf"}
    assert output_paths(run, ("pdf",), tmp_path / "a.pdf") == {"pdf": tmp_path / "a.pdf"}
    assert output_paths(run, ("html", "pdf"), tmp_path / "a.x") == {"html": tmp_path / "a.html",
                                                                    "pdf": tmp_path / "a.pdf"}
    assert output_paths(run, ("html",), tmp_path) == {"html": tmp_path / "report.html"}
    assert output_paths(run, ("html", "pdf"), f"{tmp_path}/new/") == {"html": tmp_path / "new" / "report.html",
                                                                     "pdf": tmp_path / "new" / "report.pdf"}


def test_cli_subcommand(tmp_path, capsys):
    import argparse

    from ssdpts.cli import report as cli_report

    run = make_run(tmp_path, ("lat",), max_rounds=5)
    (tmp_path / "t.csv").write_text("figure,limit,direction\nqd1_4k_read_mean_us,1000,lower\n")
    p = argparse.ArgumentParser()
    cli_report.add_parser(p.add_subparsers(dest="command"))
    args = p.parse_args(["report", str(run), "--format", "html", "--out", str(tmp_path / "out" / "r.html"),
                         "--targets", str(tmp_path / "t.csv")])
    assert args.func(args) == 0
    doc = (tmp_path / "out" / "r.html").read_text()
    assert doc.startswith("<!DOCTYPE html>") and "Δ vs target" in doc
    assert capsys.readouterr().out.strip() == str(tmp_path / "out" / "r.html")
    # links to the run's fio files are relative to where the report is written
    assert data_of(doc)["base"] == f"../{run.relative_to(tmp_path).as_posix()}/"


def test_cli_module_does_not_import_jinja2():
    code = "import sys, ssdpts.cli.report; print('numpy' in sys.modules, 'jinja2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_formatting():
    assert fmt_value(None) == "—"
    assert fmt_value(93381.4, "IOPS") == "93,381"
    assert fmt_value(52.44, "IOPS") == "52.4"
    assert fmt_value(326.54, "MB/s") == "326.5"
    assert fmt_value(4.842, "µs") == "4.84"
    assert fmt_rounds([4, 5, 6, 7, 8]) == "4–8"
    assert fmt_rounds([1, 2]) == "1, 2"
    assert fmt_rounds([]) == "none"


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-3, 1e6), st.floats(1.01, 1e5))
def test_log_axes_have_at_least_three_labels_inside_their_range(lo, ratio):
    """A log axis gets 3 to 13 labelled ticks inside its range, however narrow (a LAT convergence
    panel of 31–42 µs once had two: 35 and 40)."""
    hi = lo * ratio
    ticks = log_ticks(lo, hi)
    assert 3 <= len(ticks) <= 13, (lo, hi, ticks)
    assert ticks == sorted(ticks) and all(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks), (lo, hi, ticks)


def test_wsat_reference_beside_the_measured_figures():
    """A device described with a reference (the reference SSD's refssd params) gets its figures
    beside the measured ones on the WSAT page: FOB = the first sample, steady = the last 5 samples,
    GC onset = the capacity written before the first sample below 98% of the first; no WA without
    the drive's media writes; no table without a reference."""
    from ssdpts.pts.wsat import WsatSample, WsatTable
    from ssdpts.report.pages.wsat import reference_table

    iops = [8000.0, 7990.0, 7600.0, 3000.0, 2700.0, 2700.0, 2650.0, 2700.0]
    series = tuple(WsatSample(i + 1, v, 0.1 * (i + 1), 0.5 * (i + 1), 100.0, 900.0, None, 1000.0 + i)
                   for i, v in enumerate(iops))
    tab = WsatTable(series, 0.8, 4.0, (4, 5, 6, 7, 8), 2690.0)
    ref = {"fob_4k_write_iops": 8000, "gc_starts_after_capacity_written": 1.2, "steady_wa_greedy_mean_field": 2.6,
           "steady_4k_write_iops": 2694, "documentation": "docs/reference-ssd.md"}
    t = reference_table("wsat", ref, tab)
    rows = {r[0].text: r for r in t.rows}
    assert [c.value for c in rows["FOB 4 KiB write IOPS (first sample)"][1:3]] == [8000.0, 8000.0]
    assert rows["steady 4 KiB write IOPS (last 5 samples)"][2].value == 2690.0
    assert rows["steady 4 KiB write IOPS (last 5 samples)"][3].text == f"{2690 / 2694 - 1:+.1%}"
    assert rows["GC onset, capacity written (× user capacity)"][2].value == 1.0  # sample 3 (7,600) is the first < 98%
    assert rows["steady write amplification"][2].text == "not measured"
    assert reference_table("wsat", None, tab) is None
