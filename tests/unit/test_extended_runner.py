"""The extended tests end to end on the FakeExecutor (session -> runner -> store -> analysis ->
results -> report model, comparisons, the results library): parts run in order, fixed plans stop
when complete, the operating points are planned from the sweep and survive a resume, and every
table reaches the library and the report."""

from __future__ import annotations

import json
from pathlib import Path
import sqlite3

import pytest

from ssdpts.library import db as R
from ssdpts.compare import compare_runs, comparison_text
from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import Interrupted
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.session import resume_run, start_run

MiB = 2**20
SPEC = RunSpec(tests=("hir", "xsr", "cbw", "dirth"), step_seconds=1, max_rounds=5, hir_bursts=2, xsr_minutes=(3, 3, 3))


def demand_model(step) -> float:
    """IOPS rising with TC x QD up to a device limit, so that the operating points are distinct:
    response time = TOIO / IOPS."""
    w = step.workload
    return min(200_000.0, 12_000.0 * (w.threads * w.iodepth) ** 0.8) * (0.6 if w.read_pct == 0 else 1.0)


def start(tmp: Path, name: str, **kw):
    t = open_target(str(tmp / f"{name}.img"), size_bytes=256 * MiB)
    return start_run(SPEC, t, executor=FakeExecutor(model=demand_model, **kw), out_dir=tmp / "runs", confirm=None,
                     argv=["test"])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ext")
    store, summary = start(tmp, "a")
    return tmp, store.path, summary


def test_every_part_runs_in_order_and_fixed_plans_complete(run):
    _, path, summary = run
    assert list(summary["parts"]) == [
        "hir-precondition", "hir-wait-states", "xsr", "cbw-precondition", "cbw-demand-intensity",
        "cbw-operating-points", "dirth-precondition", "dirth-demand-intensity", "dirth-operating-points"]
    parts = summary["parts"]
    assert {pid: p["stop_reason"] for pid, p in parts.items() if "precondition" not in pid and "demand" not in pid} == {
        "hir-wait-states": "complete", "xsr": "complete", "cbw-operating-points": "complete",
        "dirth-operating-points": "complete"}
    assert parts["hir-wait-states"]["steady_state"] is None and parts["xsr"]["rounds_run"] == 1  # 9 minutes: one fio process
    man = json.loads((path / "manifest.json").read_text())
    assert man["parts"]["hir-precondition"]["purge"] and "purge" not in man["parts"]["hir-wait-states"]
    assert man["parts"]["cbw-precondition"]["purge"] and "purge" not in man["parts"]["cbw-operating-points"]


def test_operating_points_are_measured_where_the_sweep_put_them(run):
    _, path, summary = run
    sweep = summary["parts"]["cbw-demand-intensity"]["table"]
    chosen = {p["point"]: (p["tc"], p["qd"]) for p in sweep["points"]}
    assert chosen["Min"] == (1, 1) and len(set(chosen.values())) == 3
    steps = [json.loads(ln) for ln in (path / "steps.jsonl").read_text().splitlines()]
    measured = {s["key"]: (s["workload"]["threads"], s["workload"]["iodepth"]) for s in steps
                if s["test"] == "cbw" and s["part"] == "operating-points"}
    assert {k: v for k, v in measured.items() if not k.endswith("prewrite")} == {
        n.lower(): v for n, v in chosen.items()}
    rows = {r["point"]: r for r in summary["parts"]["cbw-operating-points"]["table"]["rows"]}
    assert (rows["Max"]["tc"], rows["Max"]["qd"]) == chosen["Max"]
    assert rows["Max"]["lat_p999_us"] <= rows["Max"]["lat_p99999_us"] <= rows["Max"]["lat_max_us"]


def test_hir_steps_record_their_planned_idle(run):
    _, path, summary = run
    steps = [json.loads(ln) for ln in (path / "steps.jsonl").read_text().splitlines()]
    bursts = [s for s in steps if s["test"] == "hir" and s["key"].startswith("ws")]
    assert len(bursts) == 10 and {s["planned_idle_after_s"] for s in bursts} == {5 / 60, 10 / 60, 15 / 60, 25 / 60, 50 / 60}
    segs = summary["parts"]["hir-wait-states"]["table"]["segments"]
    assert [s["samples"] for s in segs] == [2] * 10
    # each burst's planned idle separates it from the next step (the fake keeps it like the gate
    # does); the boundary after it records the plan and is held to the limit beyond it, not to 10 ms
    hir = [s for s in steps if s["test"] == "hir" and s["part"] == "wait-states"]
    after_idle = [b for a, b in zip(hir, hir[1:]) if a.get("planned_idle_after_s")]
    assert len(after_idle) == len(bursts)
    for rec in after_idle:
        b = rec["boundary"]
        assert b["planned_idle_ms"] > 80 and b["idle_ms"] == pytest.approx(b["planned_idle_ms"] + 2.0, abs=0.01)
        assert not b["over_limit"], b
    bs = summary["parts"]["hir-wait-states"]["boundaries"]
    assert bs["planned_idle"] == len(bursts) and bs["flagged"] == []
    assert bs["within_rounds"]["idle_ms"]["worst"] == pytest.approx(2.0) and summary["boundaries"]["over_limit"] == 0


def test_interrupted_in_the_operating_points_resumes_to_the_same_points(tmp_path, run):
    _, _, whole = run
    n_batches = sum(1 for _ in (run[1] / "fio").rglob("*.fio"))
    with pytest.raises(Interrupted):
        start(tmp_path, "b", interrupt_on_batch=n_batches - 4)  # inside DIRTH's operating points
    (path,) = list((tmp_path / "runs").iterdir())
    _, summary = resume_run(path, executor=FakeExecutor(model=demand_model))
    assert summary["status"] == "complete"
    for pid in ("cbw-operating-points", "dirth-operating-points"):
        assert summary["parts"][pid]["table"] == whole["parts"][pid]["table"]


def test_library_and_comparison_take_the_extended_cells(run, tmp_path):
    tmp, path, _ = run
    store2, _ = start(tmp, "c")
    db = tmp_path / "r.db"
    with R.ResultsDB(db) as con:
        con.add([path])
    rows = sqlite3.connect(db).execute(
        "SELECT metric, point, value FROM measurements WHERE test = 'cbw' AND point = 'TC32/QD32'").fetchall()
    assert {r[0] for r in rows} == {"iops", "lat_mean_us", "lat_max_us", "cpu_pct"}
    cmp = compare_runs([path, store2.path])
    text = comparison_text(cmp)
    assert "wait state 10" in text and "G3 recovery" in text and "Max" in text


def test_an_older_library_is_migrated_in_place(tmp_path, run):
    db = tmp_path / "v1.db"
    con = sqlite3.connect(db)
    for stmt in R._ddl():
        con.execute(stmt.replace(",\n  point TEXT", "").replace(", mix, point)", ", mix)")
                    .replace(",\n  window_steps_recomputed INTEGER", "").replace(",\n  window_steps_marked INTEGER", "")
                    .replace(",\n  precondition TEXT", ""))
    con.execute("DROP TABLE run_digests")
    con.execute("DROP TABLE headlines")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    with R.ResultsDB(db) as lib:
        lib.add([run[1]])
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == R.SCHEMA_VERSION == 6
    assert con.execute("SELECT count(*) FROM measurements WHERE point = 'Max'").fetchone()[0] > 0
    assert con.execute("SELECT count(*) FROM run_digests").fetchone()[0] == 1  # version 3: what the run recorded
    # version 4: the parts' timing (a fake run: nothing traced, nothing recomputed or marked)
    assert con.execute("SELECT count(*) FROM parts WHERE window_steps_recomputed = 0 AND window_steps_marked = 0"
                       ).fetchone()[0] > 0
    # version 5: the preconditioning (a PTS run: pts)
    assert con.execute("SELECT precondition FROM runs").fetchall() == [("pts",)]
    # version 6: the headline figures, the first as the site's index shows it first
    assert con.execute("SELECT count(*) FROM headlines WHERE ord = 0").fetchone()[0] == 1


def test_report_model_has_the_extended_pages(run):
    from ssdpts.report.assemble import load
    from ssdpts.report.doc import Plot, Table

    rep = load(run[1])
    ids = [s.id for s in rep.sections]
    for sid in ("hir", "hir-recovery", "xsr", "xsr-results", "cbw", "cbw-demand-intensity-results",
                "cbw-operating-points-results", "dirth-operating-points-results"):
        assert sid in ids, sid
    blocks = {b.id: b for s in rep.sections for b in s.blocks if isinstance(b, (Plot, Table))}
    for bid in ("hir-table", "hir-time", "hir-bars", "xsr-table", "xsr-mbps", "xsr-lat", "cbw-demand-intensity-iops",
                "cbw-demand-intensity-variation", "cbw-demand-intensity-intensity", "cbw-operating-points-table",
                "cbw-operating-points-histograms"):
        assert bid in blocks, bid
    assert "cbw-demand-intensity-cpu" in blocks  # the FakeExecutor models fio's CPU per job thread too
    assert len(blocks["cbw-demand-intensity-iops"].rows) == 7 and len(blocks["cbw-demand-intensity-iops"].columns) == 8
    assert [r[0].text for r in blocks["cbw-operating-points-table"].rows] == ["Max", "Mid", "Min"]
    hdr = rep.tests["cbw"].params
    assert any(k == "Operating points" and "5 ms" in v for k, v in hdr)
    di = [v for k, v in hdr if k == "Demand intensity"]  # the sweep's own line replaces the generic TC/QD
    assert di == ["TC = fio numjobs (outer 32 → 1), QD = fio iodepth (inner 32 → 1)"]
    assert any("time compression" in k.lower() for k, _ in hdr)
    texts = " ".join(a.title for s in rep.sections for a in s.blocks if getattr(a, "kind", "") == "alert")
    assert "PTS text not verified" in texts
    # the executive verdicts: a fixed plan (HIR's wait states) is its rounds, never "0 samples"
    verdicts = " ".join(" ".join(a.items) for s in rep.front for a in s.blocks if getattr(a, "kind", "") == "alert")
    assert "wait states and returns to baseline: 10 rounds of a fixed plan, complete" in verdicts, verdicts
    assert " 0 samples" not in verdicts


def test_the_html_report_of_the_four_tests_draws_every_plot(run, tmp_path):
    """Every plot of the extended pages is drawn, not only described: the XSR page's second,
    logarithmic axis once called the log-axis helper with arguments it no longer takes, and only
    the slow device tests rendered it."""
    import shutil

    from ssdpts.report import render
    from ssdpts.report.assemble import load
    from ssdpts.report.doc import Plot
    from tests.report_browser import drawn

    path = tmp_path / "run"
    shutil.copytree(run[1], path)
    (html,) = render(path, formats=("html",))
    plots = [b.id for s in load(path).sections for b in s.blocks if isinstance(b, Plot)]
    assert {"xsr-lat", "hir-time", "cbw-demand-intensity-cpu"} <= set(plots)
    got = drawn(html)  # in the browser, as a reader sees them
    assert got["problems"] == [] and got["plots"] == len(plots) == len(set(plots)), got
