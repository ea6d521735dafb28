"""ssdpts compare: deltas (speed and time metrics), median and RSE of repeated runs, refusal on
settings that make a comparison invalid, and the rendered comparison — on fixture runs made with
the FakeExecutor, whose scripted IOPS make every expected number computable by hand."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
import shutil

import pytest

from ssdpts import compare as C
from ssdpts.results.reader import RunResults
from ssdpts.results.records import Manifest, Summary
from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import UserError
from ssdpts.run.session import start_run
from ssdpts.store import RunStore
from ssdpts.pts.runspec import RunSpec

MiB = 2**20
KiB = 1024


def flat(iops_4k: float):
    """A drive model with exact, hand-computable IOPS: iops_4k at 4KiB and below, 4KiB-equivalent
    bandwidth above (IOPS ∝ 1/block size), reads and writes alike, no decay, no noise."""
    def model(step):
        bs = step.workload.block_size_bytes
        return iops_4k * 4096 / max(bs, 4096)
    return model


def decaying(iops_4k: float):
    """Falls 15% per round: steady state is never reached (range > 20% of the average)."""
    def model(step):
        bs = step.workload.block_size_bytes
        return iops_4k * 4096 / max(bs, 4096) * (1 - 0.15 * (step.round - 1) if step.phase == "round" else 1)
    return model


def make_run(root: Path, name: str, model, tests=("iops", "lat"), target: str | None = None, **spec) -> Path:
    t = open_target(str(root / f"{target or name}.img"), size_bytes=256 * MiB)
    spec.setdefault("step_seconds", 1)
    spec.setdefault("max_rounds", 5)
    with pytest.MonkeyPatch.context() as mp:  # host facts are not what these tests are about (and cost 0.5 s)
        mp.setattr("ssdpts.device.side.host.collect", lambda *a, **kw: {"hostname": "testhost", "kernel": "6.1"})
        store, _ = start_run(RunSpec(tests=tuple(tests), **spec), t, executor=FakeExecutor(model=model),
                             out_dir=root / "runs" / name, confirm=None, argv=["test"])
    return store.path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cmp")
    return {
        "base": make_run(root, "base", flat(100_000), tests=("iops", "lat", "tp", "wsat"), wsat_hours=0.1),
        "fast": make_run(root, "fast", flat(125_000), tests=("iops", "lat", "tp", "wsat"), wsat_hours=0.1),
        "slow": make_run(root, "slow", flat(80_000), tests=("iops", "lat", "tp", "wsat"), wsat_hours=0.1),
        "tc2": make_run(root, "tc2", flat(100_000), threads=2),
        "client": make_run(root, "client", flat(100_000), profile="client"),
        "seed": make_run(root, "seed", flat(100_000), seed=42),
        "step2": make_run(root, "step2", flat(100_000), step_seconds=2),
        "pts11": make_run(root, "pts11", flat(100_000), pts_version="1.1"),
        "ar50": make_run(root, "ar50", flat(100_000), active_range_pct=50),
        "libaio": make_run(root, "libaio", flat(100_000), ioengine="libaio"),
        "zeros": make_run(root, "zeros", flat(100_000), extra={"data_pattern": "zeros"}),
        "nss": make_run(root, "nss", decaying(100_000)),
        "iopslat": make_run(root, "iopslat", flat(100_000)),
    }


# ---- the delta definition -----------------------------------------------------------------------

def test_delta_definition_by_hand():
    # speed: A/B - 1
    assert C.delta(125.0, 100.0, C.SPEED) == pytest.approx(0.25)
    assert C.delta(80.0, 100.0, C.SPEED) == pytest.approx(-0.20)
    # time: time_B / time_A - 1 (A the run, B the baseline): 8 µs against 10 µs is 25% better
    assert C.delta(8.0, 10.0, C.TIME) == pytest.approx(0.25)
    assert C.delta(12.5, 10.0, C.TIME) == pytest.approx(-0.20)
    assert C.delta(None, 10.0, C.TIME) is None
    assert C.delta(10.0, None, C.SPEED) is None
    assert C.delta(0.0, 10.0, C.SPEED) is None
    with pytest.raises(ValueError):
        C.delta(1.0, 1.0, "other")


def test_metric_kinds():
    assert C.METRICS["iops"].kind == C.SPEED
    assert C.METRICS["read_mb_per_s"].kind == C.SPEED
    assert C.METRICS["final_window_iops"].kind == C.SPEED
    for m in ("lat_mean_us", "lat_p99999_us", "lat_max_us"):
        assert C.METRICS[m].kind == C.TIME


def test_faster_run_positive_deltas_for_speed_and_latency(runs):
    cmp = C.compare_runs([runs["base"], runs["fast"]])
    assert cmp.baseline.path == runs["base"]
    iops = next(p for p in cmp.parts if p.test == "iops")
    assert len(iops.rows) == 56
    r = iops.row("iops", 4096, "0/100")
    assert r.values[0] == pytest.approx(100_000)
    assert r.values[1] == pytest.approx(125_000)
    assert r.deltas[0] is None and r.deltas[1] == pytest.approx(0.25)
    r = iops.row("iops", 1024 * KiB, "100/0")
    assert r.values[0] == pytest.approx(100_000 / 256)
    assert r.deltas[1] == pytest.approx(0.25)
    # LAT runs at TC1/QD1: the FakeExecutor's mean response time is 1/IOPS -> 10 µs vs 8 µs.
    lat = next(p for p in cmp.parts if p.test == "lat")
    r = lat.row("lat_mean_us", 4096, "0/100")
    assert r.values[0] == pytest.approx(10.0)
    assert r.values[1] == pytest.approx(8.0)
    assert r.deltas[1] == pytest.approx(10.0 / 8.0 - 1) == pytest.approx(0.25)  # B/A - 1: positive = better
    r = lat.row("lat_p99999_us", 4096, "0/100")
    assert r.values[0] == pytest.approx(40.0) and r.deltas[1] == pytest.approx(0.25)
    # TP: SEQ 1024KiB at 100000*4096/1048576 IOPS = 390.625 IOPS x 1 MiB = 409.6 MB/s (base 10)
    tp = next(p for p in cmp.parts if p.part == "tp-1024KiB")
    r = tp.row("read_mb_per_s")
    assert r.values[0] == pytest.approx(409.6)
    assert r.values[1] == pytest.approx(512.0)
    assert r.deltas[1] == pytest.approx(0.25)
    wsat = next(p for p in cmp.parts if p.test == "wsat")
    r = wsat.rows[0]
    assert r.metric == "final_window_iops"
    assert r.values == [pytest.approx(100_000), pytest.approx(125_000)]
    assert r.deltas[1] == pytest.approx(0.25)
    assert [p.part for p in cmp.parts] == ["wsat", "iops", "tp-1024KiB", "tp-128KiB", "lat"]


def test_slower_run_negative_deltas_and_baseline_option(runs):
    cmp = C.compare_runs([runs["fast"], runs["slow"]], baseline=runs["base"])
    assert [r.path for r in cmp.runs] == [runs["base"], runs["fast"], runs["slow"]]
    lat = next(p for p in cmp.parts if p.test == "lat")
    r = lat.row("lat_mean_us", 8192, "100/0")
    # 8KiB at 80000*4096/8192 = 40000 IOPS -> 25 µs; baseline 50000 IOPS -> 20 µs; Δ = 20/25 - 1 = -20%
    assert r.values[0] == pytest.approx(20.0) and r.values[2] == pytest.approx(25.0)
    assert r.deltas[2] == pytest.approx(-0.20)
    assert r.deltas[1] == pytest.approx(0.25)
    iops = next(p for p in cmp.parts if p.test == "iops")
    assert all(row.deltas[2] == pytest.approx(-0.20) for row in iops.rows)
    text = C.comparison_text(cmp)
    assert "−20.0%" in text and "+25.0%" in text
    # --baseline naming one of the runs moves it first, once
    cmp2 = C.compare_runs([runs["base"], runs["fast"]], baseline=runs["fast"])
    assert [r.path for r in cmp2.runs] == [runs["fast"], runs["base"]]
    assert next(p for p in cmp2.parts if p.test == "iops").row("iops", 4096, "100/0").deltas[1] == pytest.approx(-0.2)


def test_runs_share_only_common_tests(runs):
    cmp = C.compare_runs([runs["base"], runs["iopslat"]])
    assert [p.test for p in cmp.parts] == ["iops", "lat"]
    assert any(s.startswith("tp-1024KiB") for s in cmp.not_shared)
    assert any(s.startswith("wsat") for s in cmp.not_shared)


def test_missing_cells_are_na_not_a_crash(runs, tmp_path):
    # A 4096-byte-sector device has no 0.5KiB cells: drop them from a copy of a run.
    cut = tmp_path / "cut"
    shutil.copytree(runs["fast"], cut)
    s = json.loads((cut / "summary.json").read_text())
    for pid in ("iops", "lat"):
        t = s["parts"][pid]["table"]
        t["rows"] = [r for r in t["rows"] if r["block_size_bytes"] != 512]
    # as ssdpts writes it (its checksum in the manifest): a summary edited by hand is recomputed from its steps
    RunStore(cut).write_summary(Summary.from_document(s, "summary.json"))
    cmp = C.compare_runs([runs["base"], cut])
    iops = next(p for p in cmp.parts if p.test == "iops")
    r = iops.row("iops", 512, "100/0")
    assert r.values[0] == pytest.approx(100_000) and r.values[1] is None and r.deltas[1] is None
    assert C.fmt_value(None) == "n/a" and C.fmt_delta(None) == "n/a"
    lat = next(p for p in cmp.parts if p.test == "lat")
    assert lat.row("lat_mean_us", 512, "0/100").values[1] is None
    # and the baseline missing them works too
    cmp = C.compare_runs([cut, runs["base"]])
    assert next(p for p in cmp.parts if p.test == "iops").row("iops", 512, "0/100").values == [None, pytest.approx(100_000)]


def test_steady_state_not_reached_is_marked(runs):
    cmp = C.compare_runs([runs["iopslat"], runs["nss"]])
    for p in cmp.parts:
        assert p.ss_reached == [True, False]
        assert p.ss_missed == [1]
    text = C.comparison_text(cmp)
    assert "steady state NOT reached" in text
    assert "*" in text


# ---- settings ----------------------------------------------------------------------------------

@pytest.mark.parametrize("other, label, a, b", [
    ("tc2", "TC (threads)", "4", "2"),
    ("step2", "step duration (s)", "1", "2"),
    ("pts11", "PTS version", "2.0.2", "1.1"),
    ("ar50", "active range (%)", "100", "50"),
    ("libaio", "ioengine", "io_uring", "libaio"),
    ("zeros", "data pattern", C.DEFAULT_DATA_PATTERN, "zeros"),
])
def test_refuses_invalidating_setting_differences(runs, other, label, a, b):
    with pytest.raises(UserError) as exc:
        C.compare_runs([runs["iopslat"], runs[other]])
    msg = str(exc.value)
    assert exc.value.exit_code == 2
    assert "\n" not in msg
    assert label in msg and a in msg and b in msg
    assert "--allow-different" in msg
    cmp = C.compare_runs([runs["iopslat"], runs[other]], allow_different=True)
    assert cmp.allowed_different
    assert [d.setting.label for d in cmp.invalidating] == [label]
    assert cmp.invalidating[0].values == (a, b)
    assert label in C.comparison_text(cmp)


def test_client_profile_lists_every_resolved_difference(runs):
    with pytest.raises(UserError) as exc:
        C.compare_runs([runs["iopslat"], runs["client"]])
    msg = str(exc.value)
    for label in ("profile", "TC (threads)", "QD (iodepth)", "active range (%)"):
        assert label in msg


def test_seed_is_not_a_setting_difference(runs):
    cmp = C.compare_runs([runs["iopslat"], runs["seed"]])
    assert not cmp.invalidating
    seed = [d for d in cmp.differences if d.setting.name == "seed"]
    assert seed and not seed[0].setting.invalidates


def test_compare_needs_two_runs_and_no_duplicates(runs, tmp_path):
    with pytest.raises(UserError, match="at least two"):
        C.compare_runs([runs["base"]])
    with pytest.raises(UserError, match="twice"):
        C.compare_runs([runs["base"], runs["base"]])
    with pytest.raises(UserError, match="not an ssdpts run directory"):
        C.compare_runs([runs["base"], tmp_path])


# ---- repeats: median and RSE -----------------------------------------------------------------------

def test_repeat_stats_by_hand():
    s = C.repeat_stats([100.0, 104.0, 96.0, 102.0, 98.0])
    assert s.median == 100.0 and s.median_index == 0
    assert s.mean == pytest.approx(100.0)
    assert s.stdev == pytest.approx(math.sqrt(10))  # (0+16+16+4+4)/4
    assert s.rse == pytest.approx(math.sqrt(10) / (100 * math.sqrt(5)))  # 1.414%
    assert not s.flagged
    s = C.repeat_stats([10.0, 12.0, 11.0])
    assert s.median == 11.0 and s.median_index == 2
    assert s.stdev == pytest.approx(1.0)
    assert s.rse == pytest.approx(1 / (11 * math.sqrt(3)))  # 5.25% > 5%
    assert s.flagged
    # even N: the lower-middle run's value, a measured value (not the 10.5 average of the middle two)
    s = C.repeat_stats([12.0, 9.0, 11.0, 10.0])
    assert s.median == 10.0 and s.median_index == 3


def test_advice():
    assert C.advice_for(3, False) is None
    assert "add" in C.advice_for(3, True)
    assert "add" in C.advice_for(7, True)
    assert "discard or investigate" in C.advice_for(8, True)


@pytest.fixture(scope="module")
def repeats(tmp_path_factory) -> dict[str, list[Path]]:
    root = tmp_path_factory.mktemp("rep")
    tight = [make_run(root, f"t{i}", flat(100_000 * f), target="dev") for i, f in enumerate((1.0, 1.02, 0.98))]
    loose = [make_run(root, f"l{i}", flat(100_000 * f), target="dev2") for i, f in enumerate((1.0, 1.2, 0.9, 1.1))]
    other = make_run(root, "other", flat(100_000), target="dev3")
    tc2 = make_run(root, "tc2", flat(100_000), target="dev", threads=2)
    return {"tight": tight, "loose": loose, "other": [other], "tc2": [tc2]}


def test_repeats_median_and_rse_against_hand_values(repeats):
    rep = C.analyze_repeats(repeats["tight"])
    assert rep.n == 3 and not rep.warnings and rep.advice is None and not rep.flagged
    iops = next(p for p in rep.parts if p.test == "iops")
    row = next(r for r in iops.rows if r.block_size_bytes == 4096 and r.mix == "0/100")
    st = row.stats
    assert st.median == pytest.approx(100_000) and st.median_index == 0  # the measured value of run 1
    assert st.mean == pytest.approx(100_000)
    assert st.stdev == pytest.approx(2_000)  # sqrt((0 + 2000² + 2000²) / 2)
    assert st.rse == pytest.approx(2_000 / (100_000 * math.sqrt(3)))  # 1.155%
    # latency: time-type, the median is still the middle value (run 1: 10 µs)
    lat = next(p for p in rep.parts if p.test == "lat")
    row = next(r for r in lat.rows if r.metric == "lat_mean_us" and r.block_size_bytes == 4096 and r.mix == "100/0")
    assert row.stats.median == pytest.approx(10.0) and row.stats.median_index == 0
    vals = [10.0, 10.0 / 1.02, 10.0 / 0.98]
    mean = sum(vals) / 3
    s = math.sqrt(sum((v - mean) ** 2 for v in vals) / 2)
    assert row.stats.rse == pytest.approx(s / (mean * math.sqrt(3)))


def test_repeats_even_n_warns_flags_and_advises(repeats):
    rep = C.analyze_repeats(repeats["loose"])
    assert rep.n == 4
    assert any("even" in w and "lower-middle" in w for w in rep.warnings)
    iops = next(p for p in rep.parts if p.test == "iops")
    row = next(r for r in iops.rows if r.block_size_bytes == 4096 and r.mix == "100/0")
    st = row.stats
    # factors 1.0, 1.2, 0.9, 1.1: sorted 0.9, 1.0, 1.1, 1.2 -> lower-middle 1.0 = run 1
    assert st.median == pytest.approx(100_000) and st.median_index == 0
    assert st.mean == pytest.approx(105_000)
    assert st.stdev == pytest.approx(math.sqrt(0.05 / 3) * 100_000)
    assert st.rse == pytest.approx(math.sqrt(0.05 / 3) / (1.05 * 2))  # 6.15% > 5%
    assert st.flagged and row.flagged
    assert len(rep.flagged) == len(rep.rows)
    assert rep.advice and rep.advice.startswith("add runs")
    text = C.repeats_text(rep)
    assert "even" in text and "RSE above 5%" in text


def test_repeats_refusals(repeats):
    with pytest.raises(UserError, match="at least 3"):
        C.analyze_repeats(repeats["tight"][:2])
    with pytest.raises(UserError, match="ONE device"):
        C.analyze_repeats([*repeats["tight"][:2], repeats["other"][0]])
    mixed = [*repeats["tight"][:2], repeats["tc2"][0]]
    with pytest.raises(UserError, match="settings differ") as exc:
        C.analyze_repeats(mixed)
    assert "TC (threads)" in str(exc.value)
    rep = C.analyze_repeats(mixed, allow_different=True)
    assert [d.setting.label for d in rep.invalidating] == ["TC (threads)"]


def run_of(path: str, manifest: dict) -> RunResults:
    return RunResults(Path(path), Manifest.from_dict(manifest), Summary.from_dict({}))


def test_device_key():
    r = run_of("x", {"target": {"serial": "S1", "model": "M", "path": "/dev/a"}})
    s = run_of("y", {"target": {"serial": "S1", "model": "M", "path": "/dev/b"}})
    loop = run_of("z", {"target": {"serial": None, "path": "/dev/loop0", "real_path": "/dev/loop0"}})
    assert r.device_key == s.device_key  # same serial, renamed device node: same device
    assert loop.device_key == ("path", "/dev/loop0")


# ---- output ----------------------------------------------------------------------------------------

def _parser():
    from ssdpts.cli import compare as cli

    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    cli.add_parser(sub)
    return p


def test_cli_json_and_refusal(runs, tmp_path, capsys):
    p = _parser()
    args = p.parse_args(["compare", str(runs["base"]), str(runs["fast"]), "--format", "json",
                         "--out", str(tmp_path / "c.json")])
    assert args.func(args) == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["kind"] == "comparison" and doc["baseline"] == "base.img"
    iops = next(p for p in doc["parts"] if p["test"] == "iops")
    row = next(r for r in iops["rows"] if r["block_size_bytes"] == 4096 and r["mix"] == "0/100")
    assert row["deltas"][1] == pytest.approx(0.25)
    out = capsys.readouterr().out
    assert "+25.0%" in out and "wrote" in out
    args = p.parse_args(["compare", str(runs["iopslat"]), str(runs["tc2"]), "--format", "json",
                         "--out", str(tmp_path / "d.json")])
    with pytest.raises(UserError, match="TC"):
        args.func(args)
    assert not (tmp_path / "d.json").exists()
    args = p.parse_args(["compare", "--repeats", "--baseline", str(runs["base"]), str(runs["base"]),
                         str(runs["fast"]), str(runs["slow"])])
    with pytest.raises(UserError, match="baseline"):
        args.func(args)


def test_compare_writes_files_only_where_out_says(runs, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = _parser()
    args = p.parse_args(["compare", str(runs["base"]), str(runs["fast"])])
    before = sorted(tmp_path.rglob("*"))
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "+25.0%" in out and "wrote" not in out
    assert sorted(tmp_path.rglob("*")) == before  # nothing written unasked
    args = p.parse_args(["compare", str(runs["base"]), str(runs["fast"]), "--format", "json"])
    with pytest.raises(UserError, match="--out"):
        args.func(args)
    assert sorted(tmp_path.rglob("*")) == before


def test_html_lists_differences_and_marks_steady_state(runs, tmp_path):
    pytest.importorskip("jinja2")
    from ssdpts.report.compare_html import build_comparison, render_html

    cmp = C.compare_runs([runs["iopslat"], runs["tc2"], runs["nss"]], allow_different=True)
    html = render_html(build_comparison(cmp))
    assert "settings differ" in html
    assert "TC (threads): iopslat.img 4, tc2.img 2, nss.img 4" in html
    assert "steady state NOT reached" in html
    assert html.count('<figure class="plot"') >= 2 and html.count('<div class="chart-slot">') >= 2
    assert html.count("<script") == 2  # the plots' descriptions and the script that draws them


def test_html_escapes_device_strings(runs, tmp_path):
    pytest.importorskip("jinja2")
    from ssdpts.report.compare_html import build_comparison, render_html

    evil = tmp_path / "evil"
    shutil.copytree(runs["fast"], evil)
    m = json.loads((evil / "manifest.json").read_text())
    m["target"]["model"] = "<script>alert(1)</script>$x$"
    (evil / "manifest.json").write_text(json.dumps(m))
    html = render_html(build_comparison(C.compare_runs([runs["base"], evil])))
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;" in html


def test_render_html_and_pdf_files(runs, tmp_path):
    from ssdpts.report.compare_html import render
    from tests.report_browser import drawn

    cmp = C.compare_runs([runs["iopslat"], runs["nss"]])
    paths = render(cmp, formats=("html", "pdf"), out=str(tmp_path) + "/")
    assert [p.name for p in paths] == ["ssdpts-compare.html", "ssdpts-compare.pdf"]
    assert paths[1].read_bytes().startswith(b"%PDF")
    html = paths[0].read_text()
    assert "nss.img" in html and "steady state NOT reached" in html
    got = drawn(paths[0])  # every plot, as the browser draws it
    assert got["problems"] == [] and got["plots"] >= 2, got


def test_render_repeats_html(repeats, tmp_path):
    pytest.importorskip("jinja2")
    from ssdpts.report.compare_html import render

    rep = C.analyze_repeats(repeats["loose"])
    (html,) = render(rep, formats=("html",), out=tmp_path / "r.html")
    text = html.read_text()
    assert "lower-middle" in text and "RSE above 5%" in text and "add runs" in text


def test_main_entry_point(runs, tmp_path, capsys):
    """Through ssdpts.cli.main once 'compare' and 'db' are registered there."""
    from ssdpts.cli import main as M

    if "compare" not in M.COMMANDS or "db" not in M.COMMANDS:
        pytest.skip("compare/db are not registered in cli/main.py COMMANDS yet")
    rc = M.main(["compare", str(runs["iopslat"]), str(runs["tc2"]), "--format", "json", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "TC (threads)" in err
    rc = M.main(["compare", str(runs["iopslat"]), str(runs["tc2"]), "--allow-different", "--format", "json",
                 "--out", str(tmp_path / "x.json")])
    assert rc == 0 and json.loads((tmp_path / "x.json").read_text())["differences"][0]["setting"] == "threads"
    db = str(tmp_path / "r.db")
    assert M.main(["db", "add", str(runs["base"]), "--db", db]) == 0
    assert M.main(["db", "list", "--db", db, "--test", "wsat"]) == 0
    assert "1 run" in capsys.readouterr().out
