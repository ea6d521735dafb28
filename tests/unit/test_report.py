"""Reports from fixture run directories (FakeExecutor): every required section is there, table
values equal summary.json, partial and not-reached runs are marked, device strings are escaped."""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path
import re
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")

from ssdpts.device.target import open_target  # noqa: E402
from ssdpts.engine.fake import FakeExecutor  # noqa: E402
from ssdpts.errors import Interrupted, UserError  # noqa: E402
from ssdpts.report import output_paths, parse_formats, render  # noqa: E402
from ssdpts.report.model import fmt_rounds, fmt_value, load, temperature_c  # noqa: E402
from ssdpts.session import start_run  # noqa: E402
from ssdpts.pts.runspec import RunSpec  # noqa: E402

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


@pytest.fixture(scope="module")
def complete(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("complete"))
    paths = render(run)
    return run, paths[0].read_text(encoding="utf-8"), paths[1].read_bytes()


@pytest.fixture(scope="module")
def not_reached(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("notreached"), ("iops", "lat"), max_rounds=5,
                   executor=FakeExecutor(model=never_converges))
    paths = render(run)
    return run, paths[0].read_text(encoding="utf-8"), paths[1].read_bytes()


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    # batch 1: WSAT chunk; 2: IOPS WIPC; 3-4: IOPS rounds 1-2; 5: Ctrl-C
    run = make_run(tmp_path_factory.mktemp("interrupted"), executor=FakeExecutor(noise=0.02, interrupt_on_batch=5))
    paths = render(run)
    return run, paths[0].read_text(encoding="utf-8"), paths[1].read_bytes()


# ---- helpers --------------------------------------------------------------------------------------

def figure(doc: str, fid: str) -> str:
    m = re.search(rf'<figure class="(?:table|plot)" id="{re.escape(fid)}">(.*?)</figure>', doc, re.S)
    assert m, f"no figure {fid!r} in the report"
    return m.group(1)


def values(doc: str, fid: str) -> list[float]:
    return [float(v) for v in re.findall(r'data-value="([^"]+)"', figure(doc, fid))]


def text(doc: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", doc))


def pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", data))


# ---- complete run -------------------------------------------------------------------------------

REQUIRED = [
    # header and summary
    "overview", "header",
    # WSAT: IOPS vs time, vs TGBW, vs drive fills, mean latency vs time
    "wsat", "wsat-iops-time", "wsat-iops-tgbw", "wsat-iops-fills", "wsat-lat-time", "wsat-table",
    # IOPS: convergence (block sizes at 0/100, tracking variables), window per variable, table, 2D, 3D
    "iops", "iops-convergence-bs", "iops-convergence-tracking", "iops-ss", "iops-window-1", "iops-window-2",
    "iops-window-3", "iops-table", "iops-2d", "iops-3d",
    # TP per block size: convergence R/W, window, table; all sizes: table and 2D
    "tp", "tp-1024KiB-convergence", "tp-1024KiB-window-1", "tp-1024KiB-table", "tp-128KiB-convergence",
    "tp-128KiB-window-1", "tp-128KiB-table", "tp-table", "tp-2d",
    # LAT: convergence mean+max, window, mean / 5 nines / max / IOPS tables, 3D, histogram
    "lat", "lat-convergence", "lat-window-1", "lat-lat-mean-us", "lat-lat-p99999-us", "lat-lat-max-us",
    "lat-lat-max-in-window-us", "lat-iops", "lat-3d", "lat-histogram",
]


def test_complete_report_has_every_required_section(complete):
    run, doc, pdf = complete
    for fid in REQUIRED:
        assert f'id="{fid}"' in doc, fid
    # table of contents links to every test section
    for sid in ("overview", "header", "wsat", "iops", "tp", "lat"):
        assert f'href="#{sid}"' in doc
    t = text(doc)
    for label in ("Administrative", "Test platform", "Device under test", "Set-up parameters", "Test parameters",
                  "Preconditioning 1 (WIPC)", "Active range", "Demand intensity", "Purge method", "not available"):
        assert label in t, label
    assert "steady state reached in rounds 4–8" in t
    assert "PARTIAL" not in t
    assert "NOT reached" not in t
    assert "temperature" not in doc.lower().replace("temperature_c", "")  # no telemetry: no section
    assert pdf.startswith(b"%PDF") and pdf_pages(pdf) >= 10


def test_html_is_self_contained(complete):
    _, doc, _ = complete
    assert "<script" not in doc.lower()
    assert "<link" not in doc.lower()
    assert not re.search(r'\bsrc=', doc)
    assert not re.search(r'(?:href|src)="(?:https?:)?//', doc)
    assert doc.count("<svg") == len(re.findall(r'<figure class="plot"', doc)) >= 20


def test_compliance_banner_lists_every_deviation(complete):
    run, doc, _ = complete
    summary = read(run, "summary.json")
    assert summary["deviations"]
    banner = re.search(r'<div class="alert alert-warn".*?</div>', doc, re.S).group(0)
    assert "time-compressed — not PTS compliant" in htmllib.unescape(banner)
    for d in summary["deviations"]:
        assert d in htmllib.unescape(banner), d
    assert "synthetic data" in doc  # FakeExecutor measurements are disclosed


def test_iops_table_equals_summary(complete):
    run, doc, _ = complete
    table = read(run, "summary.json")["parts"]["iops"]["table"]
    rows = sorted(table["rows"], key=lambda r: r["block_size_bytes"])
    expected = [r["values"][m] for r in rows for m in table["mixes"]]
    assert len(expected) == 56
    assert values(doc, "iops-table") == expected
    head = figure(doc, "iops-table")
    for m in table["mixes"]:
        assert f"<th scope=\"col\">{m}</th>" in head


def test_tp_tables_equal_summary(complete):
    run, doc, _ = complete
    parts = read(run, "summary.json")["parts"]
    allrows = []
    for pid in ("tp-1024KiB", "tp-128KiB"):
        t = parts[pid]["table"]
        assert values(doc, f"{pid}-table") == [t["read_mb_per_s"], t["write_mb_per_s"]]
        allrows.append(t)
    allrows.sort(key=lambda t: t["block_size_bytes"])
    assert values(doc, "tp-table") == [v for t in allrows for v in (t["read_mb_per_s"], t["write_mb_per_s"])]


def test_lat_tables_equal_summary(complete):
    run, doc, _ = complete
    rows = read(run, "summary.json")["parts"]["lat"]["table"]["rows"]
    bss = sorted({r["block_size_bytes"] for r in rows})
    mixes = list(dict.fromkeys(r["mix"] for r in rows))
    at = {(r["block_size_bytes"], r["mix"]): r for r in rows}
    for field in ("lat_mean_us", "lat_p99999_us", "lat_max_us", "lat_max_in_window_us", "iops"):
        expected = [at[(bs, m)][field] for bs in bss for m in mixes]
        assert values(doc, "lat-" + field.replace("_", "-")) == expected, field


def test_steady_state_verdicts_equal_summary(complete):
    run, doc, _ = complete
    part = read(run, "summary.json")["parts"]["iops"]
    vs = part["steady_state"]["variables"]
    got = values(doc, "iops-ss")  # average, range, excursion per variable
    assert got == [x for v in vs for x in (v["average"], v["range"], v["excursion"])]
    overview = values(doc, "overview")
    assert [v["average"] for v in vs] == [x for x in overview if x in {v["average"] for v in vs}]


def test_wsat_table_equals_summary(complete):
    run, doc, _ = complete
    series = read(run, "summary.json")["parts"]["wsat"]["table"]["series"]
    got = values(doc, "wsat-table")
    per = 6  # the minute is the row header
    assert len(got) == per * len(series)
    for i, s in enumerate(series):
        assert got[i * per:(i + 1) * per] == [s["iops"], s["tgbw_gb"], s["drive_fills"],
                                               s["lat_mean_us"], s["lat_p99999_us"], s["lat_max_us"]]


def test_pdf_has_header_and_page_numbers(complete):
    run, _, pdf = complete
    # matplotlib writes the document info uncompressed
    assert b"/Title (SNIA SSS PTS 2.0.2 Enterprise - test report" in pdf
    assert b"PARTIAL" not in pdf


# ---- steady state NOT reached ---------------------------------------------------------------------

def test_not_reached_is_unmissable(not_reached):
    run, doc, pdf = not_reached
    summary = read(run, "summary.json")
    assert not summary["parts"]["iops"]["steady_state"]["reached"]
    t = text(doc)
    # a red alert at the top and in each test, naming the rounds
    top = doc[:doc.index('<nav class="toc"')]
    assert 'class="alert alert-bad"' in top and "steady state NOT reached" in htmllib.unescape(top)
    assert t.count("steady state NOT reached") >= 6
    assert "the values below are averages over the last 5 rounds (1–5) and are NOT steady-state values" in t
    assert "gave up after the maximum of 5 rounds" in t
    # every results table and plot says so
    for fid in ("iops-table", "iops-2d", "iops-3d", "lat-lat-mean-us", "lat-iops", "lat-3d"):
        assert "steady state NOT reached" in htmllib.unescape(figure(doc, fid)), fid
    assert re.search(r'<td class="bad">NOT reached</td>', doc)
    assert pdf_pages(pdf) >= 5


def test_not_reached_tables_still_equal_summary(not_reached):
    run, doc, _ = not_reached
    table = read(run, "summary.json")["parts"]["iops"]["table"]
    rows = sorted(table["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in table["mixes"]]


# ---- interrupted -------------------------------------------------------------------------------------

def test_interrupted_report_is_partial(interrupted):
    run, doc, pdf = interrupted
    assert read(run, "manifest.json")["status"] == "interrupted"
    t = text(doc)
    assert "PARTIAL REPORT" in t
    assert doc.index("PARTIAL REPORT") < doc.index('<nav class="toc"')
    assert "<title>" in doc and "PARTIAL" in re.search(r"<title>(.*?)</title>", doc).group(1)
    assert "ssdpts resume" in t
    # IOPS ran two rounds: no steady-state window; TP and LAT never started
    assert "fewer than 5 rounds" in t
    assert t.count("not run") >= 3
    assert b"/Title (PARTIAL SNIA SSS PTS" in pdf  # the PDF's document title
    assert pdf_pages(pdf) >= 4


def test_interrupted_iops_table_equals_summary(interrupted):
    run, doc, _ = interrupted
    table = read(run, "summary.json")["parts"]["iops"]["table"]
    rows = sorted(table["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in table["mixes"]]


# ---- each test alone --------------------------------------------------------------------------------

@pytest.mark.parametrize("test,present,absent", [
    ("iops", ["iops-table", "iops-3d", "iops-window-3"], ["tp-table", "lat-3d", "wsat-iops-time"]),
    ("tp", ["tp-1024KiB-convergence", "tp-128KiB-window-1", "tp-2d"], ["iops-table", "lat-3d", "wsat-iops-time"]),
    ("lat", ["lat-convergence", "lat-histogram", "lat-lat-p99999-us"], ["iops-table", "tp-2d", "wsat-iops-time"]),
    ("wsat", ["wsat-iops-time", "wsat-iops-tgbw", "wsat-iops-fills", "wsat-lat-time"], ["iops-table", "tp-2d", "lat-3d"]),
])
def test_each_test_alone(tmp_path, test, present, absent):
    run = make_run(tmp_path, (test,), max_rounds=5)
    (out,) = render(run, formats=("html",))
    doc = out.read_text(encoding="utf-8")
    for fid in present:
        assert f'id="{fid}"' in doc, fid
    for fid in absent:
        assert f'id="{fid}"' not in doc, fid


# ---- escaping ------------------------------------------------------------------------------------------

def test_device_strings_are_escaped(tmp_path):
    run = make_run(tmp_path, ("lat",), max_rounds=5)
    man = read(run, "manifest.json")
    man["target"].update(model=EVIL, vendor=EVIL, serial="S/N $x^2$ 100%_{a}", firmware="<b>fw</b>")
    man["run_spec"]["extra"] = {"sponsor": '"><img src=x onerror=alert(1)>'}
    (run / "manifest.json").write_text(json.dumps(man))
    html_path, pdf_path = render(run)
    doc = html_path.read_text(encoding="utf-8")
    assert EVIL not in doc
    assert "<script" not in doc.lower()
    assert "<img" not in doc and "<b>fw</b>" not in doc
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc
    assert "S/N $x^2$ 100%_{a}" in text(doc)
    assert pdf_path.read_bytes().startswith(b"%PDF")  # '$' in device strings is not parsed as mathtext


# ---- other inputs -----------------------------------------------------------------------------------


def test_description_is_shown_and_a_simulated_device_is_disclosed(tmp_path):
    """--describe FILE is what no tool can read from the device: every field reaches the report
    header (nested tables as dotted names), and a description that says the device is simulated
    puts a banner on the first page of both formats."""
    run = make_run(tmp_path, ("lat",), max_rounds=5)
    man = read(run, "manifest.json")
    man["description"] = {"simulated": True, "model": "Ref drive", "notes": "a simulation, not a physical SSD",
                          "refssd": {"t_prog_us": 1000.0, "channels_x_dies": "4 x 2"}}
    (run / "manifest.json").write_text(json.dumps(man))
    html_path, pdf_path = render(run)
    doc = re.sub(r"\s+", " ", text(html_path.read_text(encoding="utf-8")))
    assert "simulated device under test" in doc and "a simulation, not a physical SSD" in doc
    assert "refssd.t_prog_us 1000.0" in doc and "refssd.channels_x_dies 4 x 2" in doc
    assert "Ref drive (described)" in doc  # the file target reports no model of its own
    pdf = subprocess.run(["pdftotext", "-layout", str(pdf_path), "-"], capture_output=True, text=True).stdout
    assert "simulated device under test" in pdf and "refssd.t_prog_us" in pdf
    man["description"] = {"nand_type": "TLC"}
    (run / "manifest.json").write_text(json.dumps(man))
    doc = re.sub(r"\s+", " ", text(render(run)[0].read_text(encoding="utf-8")))
    assert "simulated device under test" not in doc and "nand_type TLC" in doc

def test_missing_summary_is_recomputed(tmp_path):
    run = make_run(tmp_path, ("iops",), max_rounds=5)
    expected = read(run, "summary.json")["parts"]["iops"]["table"]
    (run / "summary.json").unlink()
    (out,) = render(run, formats=("html",))
    doc = out.read_text(encoding="utf-8")
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
    (out,) = render(run, formats=("html",))
    doc = out.read_text(encoding="utf-8")
    assert "summary.json is missing" in text(doc)
    iops = saved["iops"]["table"]
    rows = sorted(iops["rows"], key=lambda r: r["block_size_bytes"])
    assert values(doc, "iops-table") == [r["values"][m] for r in rows for m in iops["mixes"]]
    lat = {(r["block_size_bytes"], r["mix"]): r for r in saved["lat"]["table"]["rows"]}
    mixes = list(dict.fromkeys(m for _, m in lat))
    assert values(doc, "lat-lat-mean-us") == [lat[(bs, m)]["lat_mean_us"] for bs in sorted({b for b, _ in lat})
                                              for m in mixes]


def test_temperature_section_only_with_telemetry(tmp_path):
    run = make_run(tmp_path, ("lat",), max_rounds=5)
    assert load(run).sections[-1].id != "temperature"
    lines = (run / "steps.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    for i, r in enumerate(recs):
        r["telemetry"] = {"after": {"temperature_k": 310 + i % 7}}
    (run / "steps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    report = load(run)
    assert report.sections[-1].id == "temperature"
    (out,) = render(run, formats=("html",))
    doc = out.read_text(encoding="utf-8")
    assert 'id="temperature-plot"' in doc
    assert values(doc, "temperature-table")[0] == pytest.approx(310 - 273.15)  # min


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
    p = argparse.ArgumentParser()
    cli_report.add_parser(p.add_subparsers(dest="command"))
    args = p.parse_args(["report", str(run), "--format", "html", "--out", str(tmp_path / "out.html")])
    assert args.func(args) == 0
    assert (tmp_path / "out.html").read_text().startswith("<!DOCTYPE html>")
    assert capsys.readouterr().out.strip() == str(tmp_path / "out.html")


def test_cli_module_does_not_import_matplotlib():
    code = "import sys, ssdpts.cli.report; print('matplotlib' in sys.modules, 'jinja2' in sys.modules)"
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
