"""A complete run whose steps.jsonl was cut in half or whose raw fio output was deleted, truncated or
altered: 'ssdpts verify' names the file and what it affects, 'report' and 'compare' warn and the
report says DAMAGED, 'db add' marks the run damaged (left out of export), 'resume' refuses."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
import shutil

import pytest

from .conftest import ssdpts

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def complete_run(tmp_path_factory) -> Path:
    """A real LAT run (fio on a file target), complete, made once for the module."""
    from ssdpts.device.target import open_target
    from ssdpts.engine.fio import FioExecutor
    from ssdpts.run.session import start_run
    from ssdpts.pts.runspec import RunSpec

    if os.geteuid() != 0:
        pytest.skip("needs root like the other device tests")
    tmp = tmp_path_factory.mktemp("integrity")
    store, summary = start_run(RunSpec(tests=("lat",), step_seconds=0.1, max_rounds=5),
                               open_target(str(tmp / "t.img"), size_bytes=64 << 20), executor=FioExecutor(),
                               out_dir=tmp / "runs", confirm=None)
    assert summary["status"] == "complete"
    return store.path


@pytest.fixture
def run(complete_run, tmp_path) -> Path:
    """A fresh copy of the complete run to damage."""
    dst = tmp_path / complete_run.name
    shutil.copytree(complete_run, dst)
    return dst


def verify_lines(run: Path) -> tuple[int, list[str]]:
    r = ssdpts("verify", str(run))
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]


def test_intact_run_verifies(run):
    code, lines = verify_lines(run)
    assert code == 0 and "intact (complete)" in lines[0] and "6 rounds" in lines[0], lines
    man = json.loads((run / "manifest.json").read_text())
    recorded = man["parts"]["lat"]["rounds"]
    assert set(recorded) == {"wipc", *(f"round-{i:03d}" for i in range(1, 6))}
    assert all(r["steps"] == 9 for n, r in recorded.items() if n != "wipc")


def test_steps_cut_in_half(run, tmp_path):
    path = run / "steps.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # mid-line, as a copy cut short would
    code, lines = verify_lines(run)
    assert code == 1 and "DAMAGED" in lines[0], lines
    assert any("steps.jsonl ends in a cut-off line" in ln for ln in lines), lines
    assert any("steps.jsonl has 0 of the 9 step lines of round 5 of lat" in ln for ln in lines), lines

    # report: still rendered, with a warning per problem and the report saying DAMAGED
    r = ssdpts("report", str(run), "--format", "html")
    assert r.returncode == 0, r.stderr
    assert "is damaged" in r.stderr and "round 5 of lat" in r.stderr
    assert "DAMAGED run directory" in (run / "report.html").read_text()

    # compare: warns about the damaged run, not about the intact one
    intact = tmp_path / "intact"
    shutil.copytree(run, intact)
    (intact / "steps.jsonl").write_bytes(data)
    r = ssdpts("compare", str(intact), str(run), "--allow-different", "--format", "json", "--out", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    warned = [ln for ln in r.stderr.splitlines() if "is damaged" in ln]
    assert warned and all(str(run) in ln and str(intact) not in ln for ln in warned), r.stderr

    # db add: in the library, but marked damaged and left out of the data set
    db = str(tmp_path / "lib.db")
    r = ssdpts("db", "add", str(run), str(intact), "--db", db)
    assert r.returncode == 0 and "DAMAGED" in r.stdout, r.stdout + r.stderr
    listed = json.loads(ssdpts("db", "list", "--db", db, "--json").stdout)
    assert sorted(x["status"] for x in listed) == ["complete", "damaged"]
    rows = list(csv.DictReader(io.StringIO(ssdpts("db", "export", "--db", db).stdout)))
    assert rows and {r["run_name"] for r in rows} == {intact.name}


@pytest.mark.parametrize("damage", ["deleted", "truncated", "altered"])
def test_raw_fio_output_damaged(run, damage):
    raw = run / "fio" / "lat" / "round-002.json"
    if damage == "deleted":
        raw.unlink()
        what = "is missing"
    elif damage == "truncated":
        raw.write_bytes(raw.read_bytes()[:1000])
        what = "is truncated (1000 of"
    else:
        text = raw.read_text()
        raw.write_text(text.replace('"iops" : ', '"iops" : 1', 1))
        what = "was altered"
    code, lines = verify_lines(run)
    assert code == 1, lines
    assert any(ln.startswith(f"fio/lat/round-002.json {what}") and "round 2 of lat (9 steps)" in ln
               and "cannot be recomputed" in ln for ln in lines), lines


def test_resume_refuses_to_build_on_a_damaged_round(run):
    man = json.loads((run / "manifest.json").read_text())
    man["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(man))
    (run / "fio" / "lat" / "round-001.json").unlink()
    r = ssdpts("resume", str(run), "--quiet")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "damaged" in lines[0] and "fio/lat/round-001.json is missing" in lines[0] and "ssdpts verify" in lines[0]
