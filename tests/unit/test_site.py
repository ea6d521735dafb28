"""ssdpts db site on a library of FakeExecutor runs: what the site holds (every run of the library,
each with its report and its data; headline figures equal to compare's), damaged and moved runs
marked, a rebuild that reads only what changed and removes what the library dropped, refusals.
The page itself, in Chromium: tests/integration/test_site.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil

import pytest

from ssdpts.cli.main import main
from ssdpts.compare import compare_runs, headline_rows
from ssdpts.errors import UserError
from ssdpts.library.db import ResultsDB
from ssdpts.library.site import build
from tests.site_library import LIBRARY, fake_library, index_data, uid_of


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("library")
    return root, fake_library(root)


@pytest.fixture(scope="module")
def site(library, tmp_path_factory) -> Path:
    root, _ = library
    out = tmp_path_factory.mktemp("site") / "site"
    done = build(out, root / "results.db")
    assert (done.runs, done.read, done.reports, done.problems) == (len(LIBRARY), len(LIBRARY), len(LIBRARY), [])
    return out


def test_every_run_is_in_the_index_with_its_report_and_data(library, site):
    _, runs = library
    doc = index_data(site)
    assert {r["uid"] for r in doc["runs"]} == {uid_of(p) for p in runs.values()}
    for r in doc["runs"]:
        assert r["status"] == "complete" and r["problems"] == []
        assert (site / r["report"]).is_file() and (site / r["data"]).is_file()
        assert "ssdpts report" in (site / r["report"]).read_text()[:3000] or (site / r["report"]).stat().st_size > 10_000
        data = (site / r["data"]).read_text()
        assert data.startswith("ssdptsSiteRun(") and json.loads(data[len("ssdptsSiteRun("):-3])["uid"] == r["uid"]
    by = {r["name"].rsplit("-", 1)[1]: r for r in doc["runs"]}
    assert by["b1"]["model"] == "ACME X1" and by["b1"]["firmware"] == "2.0" and by["c2"]["serial"] == "SN-C"
    assert [r["created"] for r in doc["runs"]] == sorted((r["created"] for r in doc["runs"]), reverse=True)
    for rel in ("assets/chart.js", "assets/site.js", "assets/site.css", "assets/report.css", "index.html", "site.json"):
        assert (site / rel).is_file(), rel


def test_headline_figures_are_compares(library, site):
    """Each run's headline columns hold the values 'ssdpts compare' puts in its summary table."""
    _, runs = library
    doc = index_data(site)
    cols = {c["key"]: c for c in doc["columns"]}
    assert [c["test"] for c in doc["columns"]][:1] == ["wsat"]  # in run order: WSAT, IOPS, TP, LAT
    by_uid = {r["uid"]: r for r in doc["runs"]}
    cmp = compare_runs([runs["a1"], runs["c1"]])
    for part, row in headline_rows(cmp):
        key = "|".join("" if x is None else str(x) for x in (part.part, row.metric, row.block_size_bytes, row.mix, row.point))
        assert key in cols
        for run, value in zip(cmp.runs, row.values):
            assert by_uid[run.uid]["h"][key] == value


def test_a_rebuild_reads_only_what_changed_and_drops_what_the_library_dropped(library, tmp_path):
    root, runs = library
    db = tmp_path / "r.db"
    shutil.copy(root / "results.db", db)
    site = tmp_path / "site"
    first = build(site, db, jobs=1)
    assert (first.read, first.reports) == (len(LIBRARY), len(LIBRARY))
    again = build(site, db)
    assert (again.read, again.reports, again.removed) == (0, 0, 0)
    summary = runs["b1"] / "summary.json"
    st = summary.stat()
    os.utime(summary, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # as if written again
    changed = build(site, db)
    assert (changed.read, changed.reports) == (1, 1)
    gone = uid_of(runs["c2"])
    with ResultsDB(db) as d:
        d.con.execute("PRAGMA foreign_keys = ON")
        with d.con:
            d.con.execute("DELETE FROM runs WHERE run_uid = ?", (gone,))
    dropped = build(site, db)
    assert (dropped.read, dropped.removed, dropped.runs) == (0, 1, len(LIBRARY) - 1)
    assert not (site / "runs" / gone).exists() and not (site / "data" / "runs" / f"{gone}.js").exists()
    assert gone not in {r["uid"] for r in index_data(site)["runs"]}


def test_damaged_and_moved_runs_are_marked(library, tmp_path):
    _, runs = library
    damaged = tmp_path / "runs" / runs["c1"].name
    shutil.copytree(runs["c1"], damaged)
    next((damaged / "fio" / "iops").glob("round-002.json")).write_text("{}")  # altered: db add's check finds it
    moved = tmp_path / "runs" / runs["b1"].name
    shutil.copytree(runs["b1"], moved)
    missing = tmp_path / "runs" / runs["a1"].name
    shutil.copytree(runs["a1"], missing)
    db = tmp_path / "r.db"
    with ResultsDB(db) as d:
        d.add([damaged, moved, missing])
    (moved / "fio" / "tp-128KiB" / "round-001.json").unlink()  # lost after it was added: the site's cheap check
    shutil.rmtree(missing)
    build(tmp_path / "site", db, reports=False)
    by = {r["name"]: r for r in index_data(tmp_path / "site")["runs"]}
    assert by[damaged.name]["status"] == "damaged" and "fio/iops/round-002.json is truncated" in by[damaged.name]["problems"][0]
    assert by[moved.name]["status"] == "damaged"
    assert by[moved.name]["problems"] == ["fio/tp-128KiB/round-001.json is missing (round-001 of tp-128KiB)"]
    assert by[missing.name]["status"] == "missing" and by[missing.name].get("data") is None
    assert "is not at" in by[missing.name]["problems"][0]


def test_a_run_gone_from_its_directory_leaves_the_site_too(library, tmp_path):
    _, runs = library
    run = tmp_path / "runs" / runs["b1"].name
    shutil.copytree(runs["b1"], run)
    with ResultsDB(tmp_path / "r.db") as d:
        d.add([run])
    build(tmp_path / "site", tmp_path / "r.db")
    (row,) = index_data(tmp_path / "site")["runs"]
    assert (tmp_path / "site" / row["report"]).is_file() and (tmp_path / "site" / row["data"]).is_file()
    shutil.rmtree(run)
    build(tmp_path / "site", tmp_path / "r.db")
    (gone,) = index_data(tmp_path / "site")["runs"]
    assert gone["status"] == "missing" and not (tmp_path / "site" / row["report"]).exists()
    assert not (tmp_path / "site" / row["data"]).exists() and not (tmp_path / "site" / "runs" / row["uid"]).exists()


def test_device_strings_cannot_inject_markup(library, tmp_path):
    _, runs = library
    run = tmp_path / "runs" / runs["a1"].name
    shutil.copytree(runs["a1"], run)
    m = json.loads((run / "manifest.json").read_text())
    m["target"]["model"] = "</script><script>window.pwned=1</script><!--"
    (run / "manifest.json").write_text(json.dumps(m))
    with ResultsDB(tmp_path / "r.db") as d:
        d.add([run])
    build(tmp_path / "site", tmp_path / "r.db", reports=False)
    text = (tmp_path / "site" / "index.html").read_text()
    assert "</script><script>window.pwned" not in text and "<!--" not in text.split("ssdpts-site")[1]
    assert index_data(tmp_path / "site")["runs"][0]["model"] == m["target"]["model"]


def test_refusals(library, tmp_path, capsys):
    root, runs = library
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty and holds no ssdpts site"):
        build(tmp_path / "busy", root / "results.db")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine" and len(list((tmp_path / "busy").iterdir())) == 1
    with pytest.raises(UserError, match="inside the run directory"):
        build(runs["a1"] / "site", root / "results.db")
    with pytest.raises(UserError, match="is a run directory"):
        build(runs["a1"], root / "results.db")
    assert not (runs["a1"] / "site").exists()
    for argv, needle in ((["db", "site", str(tmp_path / "s"), "--db", str(tmp_path / "none.db")], "no results database"),
                         (["db", "site", str(tmp_path / "busy"), "--db", str(root / "results.db")], "holds no ssdpts site"),
                         (["db", "site", str(tmp_path / "s"), "--db", str(root / "results.db"), "--jobs", "0"], "--jobs 0")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], err


def test_cli(library, tmp_path, capsys):
    root, _ = library
    assert main(["db", "site", str(tmp_path / "s"), "--db", str(root / "results.db"), "--no-reports"]) == 0
    out = capsys.readouterr().out
    assert f"{len(LIBRARY)} runs ({len(LIBRARY)} read, 0 reports rendered, 0 removed)" in out
    assert all(r["report"] is None for r in index_data(tmp_path / "s")["runs"])
