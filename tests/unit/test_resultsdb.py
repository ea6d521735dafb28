"""The results library: add, list with filters, export (csv, json, parquet), rebuild from run
directories, schema version, and the refusal of runs that did not complete."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
import shutil
import sqlite3

import pytest

from ssdpts.library import db as R
from ssdpts.results.cells import table_cells
from ssdpts.results.records import Summary
from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import Interrupted, UserError
from ssdpts.run.session import start_run
from ssdpts.pts.runspec import RunSpec
from ssdpts.store import RunStore

MiB = 2**20


def _run(root: Path, name: str, *, iops: float, tests=("iops", "lat"), model_name=None, firmware=None,
         created=None, interrupt_on_batch=None, **spec) -> Path:
    t = open_target(str(root / f"{name}.img"), size_bytes=256 * MiB)
    spec.setdefault("step_seconds", 1)
    spec.setdefault("max_rounds", 5)
    ex = FakeExecutor(model=lambda s: iops * 4096 / max(s.workload.block_size_bytes, 4096),
                      interrupt_on_batch=interrupt_on_batch)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ssdpts.device.side.host.collect", lambda *a, **kw: {"hostname": "labhost", "kernel": "6.1", "cpu_count": 8,
                                                           "memory_bytes": 2**34, "cpu_model": "Test CPU"})
        try:
            store, _ = start_run(RunSpec(tests=tuple(tests), **spec), t, executor=ex, out_dir=root / "runs",
                                 confirm=None, argv=["test"])
            path = store.path
        except Interrupted:
            path = max((root / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    # file targets have no model/firmware: give the fixture a device identity, as a drive would have
    # (through the store, which writes the manifest's digests with it: an edit by hand is damage)
    store = RunStore(path)
    store.update_manifest(target={**store.manifest().doc["target"], "model": model_name, "firmware": firmware,
                                  "serial": f"SN-{name}" if model_name else None},
                          **({"created": created} if created else {}))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("db")
    return {
        "a": _run(root, "a", iops=100_000, model_name="ACME X1", firmware="1.0", created="2026-01-10T08:00:00Z"),
        "b": _run(root, "b", iops=120_000, model_name="ACME X1", firmware="2.0", created="2026-02-20T08:00:00Z",
                  tests=("iops", "lat", "tp")),
        "c": _run(root, "c", iops=90_000, model_name="Other Z9", firmware="1.0", created="2026-03-05T23:30:00Z",
                  profile="client"),
        "broken": _run(root, "broken", iops=90_000, interrupt_on_batch=3),
    }


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("SSDPTS_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert R.default_path() == tmp_path / "xdg" / "ssdpts" / "results.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert R.default_path() == tmp_path / "home" / ".local" / "share" / "ssdpts" / "results.db"
    monkeypatch.setenv("SSDPTS_DB", str(tmp_path / "x.db"))
    assert R.default_path() == tmp_path / "x.db"


def test_add_and_rows(runs, tmp_path):
    db_path = tmp_path / "sub" / "results.db"
    with R.ResultsDB(db_path) as db:
        out = db.add([runs["a"], runs["b"]])
        assert [replaced for _, replaced in out] == [False, False]
        assert db.con.execute("PRAGMA user_version").fetchone()[0] == R.SCHEMA_VERSION
        listed = db.list_runs()
        assert [r["device_firmware"] for r in listed] == ["1.0", "2.0"]
        a = listed[0]
        assert a["device_model"] == "ACME X1" and a["device_serial"] == "SN-a"
        assert a["status"] == "complete" and a["profile"] == "enterprise"
        assert a["threads"] == 4 and a["iodepth"] == 32 and a["active_range_pct"] == 100.0
        assert a["step_seconds"] == 1.0 and a["pts_version"] == "2.0.2" and a["ioengine"] == "io_uring"
        assert a["host_name"] == "labhost" and a["host_cpu_count"] == 8 and a["host_memory_bytes"] == 2**34
        assert a["capacity_bytes"] == 256 * MiB and a["target_kind"] == "file"
        assert json.loads(a["run_spec_json"])["seed"] == a["seed"]
        # every table cell, one row each: IOPS 56 + LAT 9 cells x 5 values
        ms = db.measurements(a["run_uid"])
        assert len(ms) == 56 + 9 * 5
        cell = next(m for m in ms if m["metric"] == "iops" and m["block_size_bytes"] == 4096 and m["mix"] == "0/100")
        assert cell["value"] == pytest.approx(100_000) and cell["unit"] == "IOPS" and cell["part"] == "iops"
        assert cell["steady_state_reached"] == 1
        lat = next(m for m in ms if m["metric"] == "lat_mean_us" and m["block_size_bytes"] == 4096
                   and m["mix"] == "100/0")
        assert lat["value"] == pytest.approx(10.0) and lat["unit"] == "µs" and lat["test"] == "lat"
        parts = db.parts(a["run_uid"])
        assert [p["part_id"] for p in parts] == ["iops", "lat"]
        assert all(p["steady_state_reached"] == 1 and p["stop_reason"] == "steady-state" for p in parts)
        b = listed[1]
        tp = [m for m in db.measurements(b["run_uid"]) if m["test"] == "tp"]
        assert {(m["part"], m["metric"]) for m in tp} == {(p, k) for p in ("tp-1024KiB", "tp-128KiB")
                                                          for k in ("read_mb_per_s", "write_mb_per_s")}
        # adding again replaces, no duplicates
        assert [r for _, r in db.add([runs["a"]])] == [True]
        assert len(db.list_runs()) == 2
        assert len(db.measurements(a["run_uid"])) == 56 + 45


def test_the_library_keeps_what_a_run_was_when_it_was_first_added(runs, tmp_path):
    """An edit after 'db add', however consistent (here through the store itself, every digest
    written again): named by the library, kept damaged when added again, and after a rebuild."""
    from ssdpts.results.verify.integrity import check

    run = tmp_path / "runs" / runs["a"].name
    shutil.copytree(runs["a"], run)
    db_path = tmp_path / "r.db"
    with R.ResultsDB(db_path) as db:
        ((added, _),) = db.add([run])
        assert not added.damage and db.held(added.uid, run.name)["digests"] == check(run).digests()
    assert R.compare_with_library(check(run), db_path) == ([], None)
    RunStore(run).update_manifest(pts_compliant=True)
    assert check(run).intact  # its own records agree: only the library knows
    problems, _ = R.compare_with_library(check(run), db_path)
    assert [p.file + " " + p.what.split(" when ")[0] for p in problems] == [
        "manifest.json pts_compliant differs from what it was", "manifest.json updated differs from what it was",
        "manifest.json integrity differs from what it was"]
    with R.ResultsDB(db_path) as db:
        ((again, replaced),) = db.add([run])
        assert replaced and again.damage and "pts_compliant differs" in again.damage[0]
    R.rebuild(db_path, [tmp_path / "runs"])
    with R.ResultsDB(db_path) as db:
        assert [r["status"] for r in db.list_runs()] == ["damaged"]
    assert R.compare_with_library(check(runs["b"]), tmp_path / "none.db")[1].startswith("no results library at")


def test_incomplete_run_refused_and_nothing_added(runs, tmp_path):
    assert json.loads((runs["broken"] / "manifest.json").read_text())["status"] == "interrupted"
    with R.ResultsDB(tmp_path / "r.db") as db:
        with pytest.raises(UserError, match="interrupted, not complete.*ssdpts resume"):
            db.add([runs["a"], runs["broken"]])
        assert db.list_runs() == []  # all or nothing


def test_list_filters(runs, tmp_path):
    with R.ResultsDB(tmp_path / "r.db") as db:
        db.add([runs["a"], runs["b"], runs["c"]])
        names = lambda **f: [r["device_firmware"] + "/" + r["device_model"] for r in db.list_runs(**f)]  # noqa: E731
        assert names(model="acme") == ["1.0/ACME X1", "2.0/ACME X1"]
        assert names(model="z9") == ["1.0/Other Z9"]
        assert names(firmware="2.0") == ["2.0/ACME X1"]
        assert names(test="tp") == ["2.0/ACME X1"]
        assert names(profile="client") == ["1.0/Other Z9"]
        assert names(since="2026-02-01") == ["2.0/ACME X1", "1.0/Other Z9"]
        assert names(until="2026-03-05") == ["1.0/ACME X1", "2.0/ACME X1", "1.0/Other Z9"]  # the whole day
        assert names(until="2026-03-04") == ["1.0/ACME X1", "2.0/ACME X1"]
        assert names(since="2026-02-01", until="2026-02-28", model="ACME") == ["2.0/ACME X1"]
        assert names(model="100%_") == []  # LIKE wildcards are literal
        with pytest.raises(UserError, match="--since 'yesterday' is not a date"):
            db.list_runs(since="yesterday")


def _csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_round_trip_add_list_export_rebuild(runs, tmp_path, capsys):
    db1 = tmp_path / "one.db"
    with R.ResultsDB(db1) as db:
        db.add([runs["c"], runs["a"], runs["b"]])  # any order: listing and export follow run time
        listed1 = db.list_runs()
        rows1 = db.export_rows()
    # the export: one row per measurement with the run fields
    n_cells = sum(len(table_cells(Summary.from_dict(json.loads((runs[k] / "summary.json").read_text()))))
                  for k in "abc")
    assert len(rows1) == n_cells
    assert set(rows1[0]) == set(R.EXPORT_FIELDS)
    R.export(rows1, "csv", tmp_path / "one.csv")
    R.export(rows1, "json", tmp_path / "one.json")
    R.export(rows1, "csv", None)
    assert capsys.readouterr().out == (tmp_path / "one.csv").read_text()
    # rebuild from the directories that hold the runs (and skip the interrupted one, saying why)
    db2 = tmp_path / "two.db"
    added, skipped = R.rebuild(db2, [runs["a"].parent])
    assert len(added) == 3
    assert len(skipped) == 1 and "interrupted" in skipped[0]
    with R.ResultsDB(db2) as db:
        listed2 = db.list_runs()
        rows2 = db.export_rows()
    assert listed2 == listed1
    assert rows2 == rows1
    R.export(rows2, "csv", tmp_path / "two.csv")
    R.export(rows2, "json", tmp_path / "two.json")
    assert (tmp_path / "two.csv").read_text() == (tmp_path / "one.csv").read_text()
    assert json.loads((tmp_path / "two.json").read_text()) == json.loads((tmp_path / "one.json").read_text())
    # csv values read back exactly
    got = _csv_rows((tmp_path / "one.csv").read_text())
    assert [float(r["value"]) if r["value"] else None for r in got] == [r["value"] for r in rows1]
    # rebuild over an existing database replaces it
    added, _ = R.rebuild(db1, [runs["a"]])
    with R.ResultsDB(db1) as db:
        assert [r["run_uid"] for r in db.list_runs()] == [a.uid for a in added]


def test_rebuild_keeps_one_of_copied_runs(runs, tmp_path):
    shutil.copytree(runs["a"], tmp_path / "copies" / "x" / runs["a"].name)
    shutil.copytree(runs["a"], tmp_path / "copies" / "y" / runs["a"].name)
    added, skipped = R.rebuild(tmp_path / "r.db", [tmp_path / "copies"])
    assert len(added) == 1 and "copy" in skipped[0]


def test_export_filters_and_formats(runs, tmp_path, monkeypatch):
    with R.ResultsDB(tmp_path / "r.db") as db:
        db.add([runs["a"], runs["b"]])
        rows = db.export_rows(metric="iops", firmware="2.0")
    assert {r["metric"] for r in rows} == {"iops"} and {r["device_firmware"] for r in rows} == {"2.0"}
    assert len(rows) == 56 + 9  # the IOPS matrix and the IOPS column of the LAT table
    with pytest.raises(UserError, match="unknown export format"):
        R.export(rows, "xlsx", tmp_path / "x")
    # without pyarrow: one clear line saying what to install
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *a, **kw):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *a, **kw)

    with monkeypatch.context() as mp:
        mp.setattr(builtins, "__import__", no_pyarrow)
        with pytest.raises(UserError, match=r"pip install 'ssdpts\[parquet\]'") as exc:
            R.export(rows, "parquet", tmp_path / "x.parquet")
        assert "\n" not in str(exc.value)


def test_parquet_round_trip(runs, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    with R.ResultsDB(tmp_path / "r.db") as db:
        db.add([runs["a"]])
        rows = db.export_rows()
    R.export(rows, "parquet", tmp_path / "x.parquet")
    back = pq.read_table(tmp_path / "x.parquet").to_pylist()
    assert back == rows


def test_parquet_from_the_command_line(runs, tmp_path, capsys):
    """What a data scientist types: typed columns, one row per measurement (the 'parquet' extra)."""
    pq = pytest.importorskip("pyarrow.parquet")
    from ssdpts.cli.main import main

    db = str(tmp_path / "r.db")
    assert main(["db", "add", str(runs["a"]), "--db", db]) == 0
    assert main(["db", "export", "--db", db, "--format", "parquet", "--out", str(tmp_path / "lib.parquet")]) == 0
    table = pq.read_table(tmp_path / "lib.parquet")
    types = {f.name: str(f.type) for f in table.schema}
    assert (types["value"], types["block_size_bytes"], types["metric"], types["pts_compliant"]) == \
           ("double", "int64", "string", "int64")
    with R.ResultsDB(db) as d:
        assert table.num_rows == len(d.export_rows()) > 100
    assert main(["db", "export", "--db", db, "--format", "parquet"]) == 2  # binary: a file is needed
    assert "--out FILE.parquet" in capsys.readouterr().err


def test_schema_versions(tmp_path):
    p = tmp_path / "future.db"
    con = sqlite3.connect(p)
    con.execute("PRAGMA user_version = 99")
    con.close()
    with pytest.raises(UserError, match="schema version 99, newer"):
        R.ResultsDB(p)
    p = tmp_path / "other.db"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (x)")
    con.close()
    with pytest.raises(UserError, match="something else"):
        R.ResultsDB(p)
    p = tmp_path / "junk.db"
    p.write_bytes(b"not a database at all" * 100)
    with pytest.raises(UserError, match="not an ssdpts results database"):
        R.ResultsDB(p)
    with pytest.raises(UserError, match="no results database"):
        R.ResultsDB(tmp_path / "missing.db", create=False)
    sql = R.schema_sql()
    assert f"PRAGMA user_version = {R.SCHEMA_VERSION}" in sql and "CREATE TABLE measurements" in sql


def test_two_runs_creating_one_library_at_once(tmp_path, monkeypatch):
    """Runs that end together (many drives at once) each open the library to add themselves. The
    schema is made under SQLite's write lock: the second opener waits, then finds it made (it used
    to see some tables and no version, and took the library for "something else")."""
    import threading
    import time

    ddl = R._ddl()

    def slow_ddl():
        for stmt in ddl:
            time.sleep(0.05)
            yield stmt

    monkeypatch.setattr(R, "_ddl", slow_ddl)
    p = tmp_path / "new.db"
    errors, opened = [], []

    def open_it():
        try:
            with R.ResultsDB(p) as db:
                opened.append(db.con.execute("PRAGMA user_version").fetchone()[0])
        except Exception as exc:  # noqa: BLE001 - the test reports what the opener met
            errors.append(exc)

    first = threading.Thread(target=open_it)
    first.start()
    time.sleep(0.12)  # the first opener is inside the schema's statements
    open_it()
    first.join()
    assert errors == [] and opened == [R.SCHEMA_VERSION] * 2


def test_docs_cover_every_column():
    doc = Path(__file__).resolve().parents[2] / "docs" / "results-db.md"
    text = doc.read_text()
    for cols in (R.RUN_COLUMNS, R.PART_COLUMNS, R.MEASUREMENT_COLUMNS, R.DIGEST_COLUMNS, R.HEADLINE_COLUMNS):
        for name, _, _ in cols:
            assert f"`{name}`" in text, name


# ---- the CLI adapter -----------------------------------------------------------------------------

def _parser():
    from ssdpts.cli import db as cli

    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    cli.add_parser(sub)
    return p


def _cli(*argv):
    args = _parser().parse_args(list(argv))
    return args.func(args)


def test_cli_add_list_export_rebuild(runs, tmp_path, capsys):
    db = str(tmp_path / "cli.db")
    assert _cli("db", "add", str(runs["a"]), str(runs["b"]), "--db", db) == 0
    out = capsys.readouterr().out
    assert out.count("added ") == 2 and db in out
    with pytest.raises(UserError, match="interrupted"):
        _cli("db", "add", str(runs["broken"]), "--db", db)
    assert _cli("db", "list", "--db", db, "--firmware", "2.0") == 0
    out = capsys.readouterr().out
    assert "ACME X1" in out and "1 run" in out and "SN-b" in out and "SN-a" not in out
    assert _cli("db", "list", "--db", db, "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 2 and listed[0]["run_spec"]["profile"] == "enterprise"
    assert _cli("db", "list", "--db", db, "--model", "nothing") == 0
    assert "no runs match" in capsys.readouterr().out
    assert _cli("db", "export", "--db", db, "--format", "csv", "--test", "lat") == 0
    rows = _csv_rows(capsys.readouterr().out)
    assert rows and {r["test"] for r in rows} == {"iops", "lat", "tp"}  # --test selects runs, not rows
    assert _cli("db", "export", "--db", db, "--format", "json", "--out", str(tmp_path / "e.json")) == 0
    assert "wrote" in capsys.readouterr().err
    exported = json.loads((tmp_path / "e.json").read_text())
    assert _cli("db", "rebuild", str(runs["a"].parent), "--db", db) == 0
    out = capsys.readouterr().out
    assert "rebuilt" in out and "3 runs" in out and "skipped" in out
    with pytest.raises(UserError, match="no results database"):
        _cli("db", "list", "--db", str(tmp_path / "none.db"))
    assert _cli("db", "schema") == 0
    assert "CREATE TABLE runs" in capsys.readouterr().out
    assert exported


# ---- 'db list' at any terminal width (docs/results-db.md#db-list) --------------------------------------

LONG_MODEL = "Samsung SSD 990 PRO with Heatsink 2TB Enterprise Edition"


@pytest.fixture(scope="module")
def listed(runs, tmp_path_factory):
    """A library of the a, b and c runs and one of a drive with a lab's long model name and serial."""
    root = tmp_path_factory.mktemp("list")
    long = _run(root, "engineering-sample-rack-14-slot-3", iops=80_000, model_name=LONG_MODEL, firmware="4B2QJXD7",
                created="2026-04-01T08:00:00Z")
    db = root / "list.db"
    with R.ResultsDB(db) as lib:
        lib.add([runs["a"], runs["b"], runs["c"], long])
        uids = [r["run_uid"] for r in lib.list_runs()]
    return str(db), uids, long


def _list_at(monkeypatch, capsys, db, columns, *more):
    """'db list' printed to a terminal of ``columns`` (COLUMNS, as a shell sets it)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert _cli("db", "list", "--db", db, *more) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
def test_list_fits_the_terminal(listed, monkeypatch, capsys, columns):
    """No line wider than the terminal, none wrapped: the run id (whole), status and model always,
    the long model shortened with "…" where it must, lower columns left out and named at the end,
    the headline among the first to go."""
    db, uids, _ = listed
    lines = _list_at(monkeypatch, capsys, db, columns)
    assert max(len(x) for x in lines) <= columns, lines
    head = lines[0].split()
    assert head[:2] == ["run", "status"] and "model" in head
    assert all(any(line.startswith(uid + " ") for line in lines) for uid in uids)  # each id whole, first
    row = next(line for line in lines if line.startswith(uids[-1]))
    assert (LONG_MODEL in row) == (columns >= 200) and (columns >= 200 or "Samsung SSD" in row and "…" in row)
    assert ("headline" in head) == (columns >= 200)
    footer = " ".join(lines[next(i for i, line in enumerate(lines) if line.startswith("4 runs")):])
    assert f"left out to fit {columns} columns: target" in footer and "--wide" in footer


def test_list_to_a_pipe_or_wide_has_every_column_and_json_is_unchanged(listed, monkeypatch, capsys):
    db, uids, long = listed
    monkeypatch.setenv("COLUMNS", "80")
    assert _cli("db", "list", "--db", db) == 0  # not a terminal: every column whole
    pipe = capsys.readouterr().out.splitlines()
    assert pipe[0].split() == ["run", "status", "started", "(UTC)", "model", "serial", "firmware", "target", "tests",
                               "headline", "profile", "step", "s", "directory"]
    assert LONG_MODEL in pipe[-2] and long.name in pipe[-2] and pipe[-1] == "4 runs"
    assert _list_at(monkeypatch, capsys, db, 80, "--wide") == pipe
    width = _list_at(monkeypatch, capsys, db, 300, "--width", "90")
    assert max(map(len, width)) <= 90 and "directory" not in width[0]
    assert _cli("db", "list", "--db", db, "--json") == 0
    got = json.loads(capsys.readouterr().out)
    assert [r["run_uid"] for r in got] == uids and "headline" not in got[0] and got[0]["run_spec"]["profile"]
    with pytest.raises(UserError, match="--width 5"):
        _cli("db", "list", "--db", db, "--width", "5")


def test_list_headline_is_the_sites_first_figure(listed, runs, monkeypatch, capsys):
    """The headline is the first figure the site's index shows for the run (its columns' order), kept
    in the library; a run added before the library kept them is read from its directory."""
    from ssdpts.library.headlines import headline_rows
    from ssdpts.library.site.data import index_row
    from ssdpts.results.reader import read_run

    db, uids, _ = listed
    run = read_run(runs["a"])
    row, cols = index_row(run, {}, [])
    first = min((c for c in cols if row["h"].get(c["key"]) is not None), key=lambda c: c["order"])
    kept = headline_rows(run)[0]
    assert kept["key"] == first["key"] == "iops|iops|4096|100/0|" and kept["value"] == row["h"][first["key"]]
    lines = _list_at(monkeypatch, capsys, db, 250)
    a = next(line for line in lines if line.startswith(run.uid))
    assert "IOPS: RND 4KiB 100/0" in a and "100,000 IOPS" in a
    with sqlite3.connect(db) as con:  # as a library of schema 4 holds the runs it had: no headlines
        con.execute("DELETE FROM headlines")
    assert _list_at(monkeypatch, capsys, db, 250) == lines


def test_record_run_never_raises(runs, tmp_path):
    msg = R.record_run(runs["a"], tmp_path / "r.db")
    assert msg.startswith("added to the results library")
    msg = R.record_run(runs["broken"], tmp_path / "r.db")
    assert msg.startswith("not added") and "interrupted" in msg
    bad = tmp_path / "junk.db"
    bad.write_bytes(b"x" * 4096)
    assert R.record_run(runs["a"], bad).startswith("not added")


def test_remove_takes_runs_out_and_keeps_their_directories_unless_asked(runs, tmp_path, capsys):
    db = str(tmp_path / "rm.db")
    copies = {k: shutil.copytree(runs[k], tmp_path / "runs" / runs[k].name) for k in ("a", "b", "c")}
    assert _cli("db", "add", *map(str, copies.values()), "--db", db) == 0
    with R.ResultsDB(db) as lib:
        uids = {r["run_name"]: r["run_uid"] for r in lib.list_runs()}
    capsys.readouterr()
    # one unknown name: nothing removed
    with pytest.raises(UserError, match="no run 'nope'.*nothing was removed"):
        _cli("db", "remove", copies["a"].name, "nope", "--db", db)
    with R.ResultsDB(db) as lib:
        assert len(lib.list_runs()) == 3
    # by directory name and by run id; the directories stay
    assert _cli("db", "remove", copies["a"].name, uids[copies["b"].name], "--db", db) == 0
    out = capsys.readouterr().out
    assert out.count("removed ") == 2 and "run directory kept" in out
    with R.ResultsDB(db) as lib:
        assert [r["run_name"] for r in lib.list_runs()] == [copies["c"].name]
        assert lib.measurements(uids[copies["a"].name]) == [] and lib.parts(uids[copies["a"].name]) == []
        assert lib.held(uids[copies["a"].name], copies["a"].name) is not None  # its first digests stay
    assert copies["a"].is_dir() and copies["b"].is_dir()
    # by path, with its directory: only a directory that still holds that run
    other = tmp_path / "runs" / "swap"
    shutil.move(copies["c"], other)
    shutil.copytree(runs["a"], copies["c"])  # another run where c was
    with pytest.raises(UserError, match="another run"):
        _cli("db", "remove", str(copies["c"]), "--delete-run-dirs", "--db", db)
    assert copies["c"].is_dir()
    shutil.rmtree(copies["c"])
    shutil.move(other, copies["c"])
    assert _cli("db", "remove", str(copies["c"]), "--delete-run-dirs", "--db", db) == 0
    assert "its run directory deleted" in capsys.readouterr().out
    assert not copies["c"].exists() and copies["a"].is_dir()
    with R.ResultsDB(db) as lib:
        assert lib.list_runs() == []


def test_a_run_without_a_test_at_its_tc_qd_records_none(runs, tmp_path):
    """LAT runs at TC1/QD1 whatever the profile says: a LAT-only run has no TC/QD of its own to
    record (a library or site that showed the profile's TC4/QD32 for it would state a wrong fact)."""
    from ssdpts.results.reader import read_run

    lat_only = _run(tmp_path, "latonly", iops=50_000, tests=("lat",))
    row = R.run_row(read_run(lat_only), lat_only)
    assert row["threads"] is None and row["iodepth"] is None
    with_iops = R.run_row(read_run(runs["a"]), runs["a"])
    assert (with_iops["threads"], with_iops["iodepth"]) == (4, 32)  # the enterprise profile's, which IOPS ran at
