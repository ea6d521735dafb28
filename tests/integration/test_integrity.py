"""A complete run whose steps.jsonl was cut in half or whose raw fio output was deleted, truncated or
altered: 'ssdpts verify' names the file and what it affects, 'report' and 'compare' warn and the
report says DAMAGED, 'db add' marks the run damaged (left out of export), 'resume' refuses.

And what a deletion or an edit of the records themselves gives (docs/results-format.md "Integrity
records"): a round removed whole, the drive's identity and settings edited in manifest.json,
summary.json's checksum record removed and the summary faked, a run edited after the results library
added it, a sealed run edited with every digest recomputed."""

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
def seal_key(tmp_path_factory) -> Path:
    """The lab's seal key: a file kept outside every run directory."""
    key = tmp_path_factory.mktemp("lab") / "seal.key"
    key.write_text("fKq0m3Zr8y2vW1xT5nB7cD9eG4hJ6kL0pQ2sU8wY=\n")
    return key


@pytest.fixture(scope="module")
def complete_run(tmp_path_factory, seal_key) -> Path:
    """A real LAT run (fio on a file target), complete, sealed with the lab's key, made once for the module."""
    from ssdpts.device.target import open_target
    from ssdpts.engine.fio import FioExecutor
    from ssdpts.run.session import start_run
    from ssdpts.pts.runspec import RunSpec

    if os.geteuid() != 0:
        pytest.skip("needs root like the other device tests")
    tmp = tmp_path_factory.mktemp("integrity")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SSDPTS_SEAL_KEY", str(seal_key))
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


def verify_lines(run: Path, *opts: str, **kw) -> tuple[int, list[str]]:
    r = ssdpts("verify", str(run), *opts, **kw)
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


# --- deletions and edits of the records themselves ---------------------------------------------------


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def write_manifest(run: Path, man: dict) -> None:
    (run / "manifest.json").write_text(json.dumps(man, indent=1))


def remove_round(run: Path, part: str, name: str) -> None:
    """Round ``name`` of ``part`` gone whole: its raw files, its step lines and its manifest record."""
    man = manifest(run)
    rec = man["parts"][part]["rounds"].pop(name)
    for rel in rec["files"]:
        (run / rel).unlink()
    js = next(f for f in rec["files"] if f.endswith(".json"))
    lines = (run / "steps.jsonl").read_text().splitlines(keepends=True)
    (run / "steps.jsonl").write_text("".join(ln for ln in lines if json.loads(ln)["fio_json"] != js))
    write_manifest(run, man)


def test_a_round_removed_whole_is_damage(run):
    from ssdpts.results.reader import read_run, read_run_checked

    before = read_run(run).summary.parts["lat"]
    assert before.rounds_run == 5 and len(before.window_rounds) == 5
    remove_round(run, "lat", "round-005")
    code, lines = verify_lines(run)
    assert code == 1 and "DAMAGED" in lines[0], lines
    assert "manifest.json parts.lat was changed after ssdpts wrote it (its SHA-256 is not the digest recorded with " \
           "the manifest): the records of lat: its purge, its rounds' raw files and step lines, its stop" in lines, lines
    assert any(ln.startswith("steps.jsonl ends at round 4 of lat, where its stop rule does not end it (steady state not "
                             "reached, 4 of at most 5 rounds), yet the run is complete") for ln in lines), lines
    # a report says DAMAGED; its results are the summary ssdpts wrote (its own record proves it), the five
    # rounds measured, never a window the steps left after the removal could give
    shown, damage = read_run_checked(run)
    assert damage and shown.summary.parts["lat"].window_rounds == before.window_rounds
    # the same removal with every digest written again to match: the stop rule still names it
    recompute_digests(run, lambda m: None)
    code, lines = verify_lines(run)
    assert code == 1 and [ln for ln in lines[1:] if not ln.startswith("note:")] == [
        "steps.jsonl ends at round 4 of lat, where its stop rule does not end it (steady state not reached, 4 of at most "
        "5 rounds), yet the run is complete: the results of lat: its later rounds were removed"], lines


def test_the_drives_identity_and_settings_edited_in_the_manifest_are_named(run, tmp_path):
    man = manifest(run)
    man["target"].update(model="Samsung SSD 990 PRO 2TB", serial="S7KHNJ0W123456", firmware="4B2QJXD7")
    man["pts_compliant"] = True
    man["deviations"] = []
    man["run_spec"]["step_seconds"] = 60
    write_manifest(run, man)
    code, lines = verify_lines(run)
    assert code == 1 and "DAMAGED (4 problems)" in lines[0], lines
    for field, what in (("target", "which drive the run measured (model, serial, firmware, capacity)"),
                        ("run_spec", "how the run was set up (profile, step length, rounds, ...)"),
                        ("pts_compliant", "whether the run is PTS compliant"),
                        ("deviations", "the departures from the PTS it discloses")):
        assert f"manifest.json {field} was changed after ssdpts wrote it (its SHA-256 is not the digest recorded " \
               f"with the manifest): {what}" in lines, lines
    db = str(tmp_path / "lib.db")
    add = ssdpts("db", "add", str(run), "--db", db)
    assert add.returncode == 0 and "DAMAGED" in add.stdout and "manifest.json" in add.stdout, add.stdout + add.stderr
    (listed,) = json.loads(ssdpts("db", "list", "--db", db, "--json").stdout)
    assert listed["status"] == "damaged"
    assert json.loads(ssdpts("db", "export", "--db", db, "--format", "json").stdout) == []


def fake_summary(run: Path) -> None:
    """summary.json as a forger would want it: latency / 10, IOPS x 10, steady state reached."""
    summary = json.loads((run / "summary.json").read_text())
    lat = summary["parts"]["lat"]
    for row in lat["table"]["rows"]:
        for k in row:
            if k.startswith("lat_"):
                row[k] /= 10
        row["iops"] *= 10
    lat["steady_state"]["reached"] = True
    for v in lat["steady_state"]["variables"]:
        v["reached"] = True
    (run / "summary.json").write_text(json.dumps(summary, indent=1))


def test_a_removed_summary_record_and_a_faked_summary_are_damage(run, tmp_path):
    from ssdpts.library.db import ResultsDB
    from ssdpts.results.reader import read_run

    truth = read_run(run).summary.parts["lat"]
    man = manifest(run)
    del man["summary_file"]
    write_manifest(run, man)
    fake_summary(run)
    code, lines = verify_lines(run)
    assert code == 1, lines
    assert any(ln.startswith("summary.json has no recorded checksum (summary_file), which ssdpts records with every "
                             "summary it writes in a run of this format: the record was removed, and its values differ "
                             "from what its steps give (") for ln in lines), lines
    assert "manifest.json summary_file was removed after ssdpts wrote it (its SHA-256 is not the digest recorded with " \
           "the manifest): summary.json's checksum" in lines, lines
    # the report and the library show what the steps give, and say why
    shown = read_run(run)
    assert shown.summary.parts["lat"].table == truth.table and shown.summary.parts["lat"].reached == truth.reached
    assert any(n.startswith("summary.json's checksum record was removed from manifest.json (") for n in shown.notes)
    r = ssdpts("report", str(run), "--format", "html")
    html = (run / "report.html").read_text()
    assert r.returncode == 0 and "DAMAGED" in html and "checksum record was removed" in html, r.stderr
    db = tmp_path / "lib.db"
    add = ssdpts("db", "add", str(run), "--db", str(db))
    assert "DAMAGED" in add.stdout and "summary.json has no recorded checksum" in add.stdout, add.stdout + add.stderr
    with ResultsDB(db) as lib:
        ((uid, status),) = [(r["run_uid"], r["status"]) for r in lib.list_runs()]
        kept = {(m["block_size_bytes"], m["mix"]): m["value"] for m in lib.measurements(uid) if m["metric"] == "iops"}
    assert status == "damaged"
    assert kept == {(r.block_size_bytes, r.mix): r.values["iops"] for r in truth.table.rows}  # the steps' IOPS
    assert json.loads(ssdpts("db", "export", "--db", str(db), "--format", "json").stdout) == []
    # without the integrity record too: its rounds' step checksums came with the summary's, so still damage
    man = manifest(run)
    del man["integrity"]
    write_manifest(run, man)
    code, lines = verify_lines(run)
    assert code == 1 and any(ln.startswith("summary.json has no recorded checksum (summary_file)") for ln in lines), lines


def recompute_digests(run: Path, edit, keep_seal: bool = True) -> None:
    """A forger who knows the format: ``edit(manifest)``, then every digest written again to match
    (the old seal kept, or removed: without the key no new one can be made)."""
    from ssdpts.results import seal

    man = manifest(run)
    old_seal = man["integrity"].get("seal")
    edit(man)
    seal.refresh(man, None)
    if old_seal and keep_seal:
        man["integrity"]["seal"] = old_seal
    write_manifest(run, man)


def test_the_library_names_a_later_edit_of_a_run_it_holds(run, tmp_path):
    db = str(tmp_path / "lib.db")
    assert ssdpts("db", "add", str(run), "--db", db).returncode == 0
    code, lines = verify_lines(run, "--db", db)
    assert code == 0 and "intact (complete)" in lines[0], lines
    fake_summary(run)
    recompute_digests(run, lambda m: m.update(summary_file={"bytes": (run / "summary.json").stat().st_size,
                                                            "sha256": file_sha(run / "summary.json")}))
    code, lines = verify_lines(run, "--db", db)
    assert code == 1, lines
    assert any(ln.startswith("summary.json differs from what it was when the results library " + db) for ln in lines), lines
    assert any(ln.startswith("manifest.json summary_file differs from what it was when the results library")
               for ln in lines), lines
    # adding the edited copy again keeps what the library recorded first: it is marked damaged
    add = ssdpts("db", "add", str(run), "--db", db)
    assert "DAMAGED" in add.stdout, add.stdout
    assert verify_lines(run, "--db", db)[0] == 1


def file_sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_sealed_run_edited_with_every_digest_recomputed_is_named(run, seal_key, tmp_path):
    key = ("--seal-key", str(seal_key))
    code, lines = verify_lines(run, *key)
    assert code == 0 and lines[0].endswith("; every field of manifest.json matches its digest; sealed with key "
                                           f"{manifest(run)['integrity']['seal']['key_id']}: the seal matches"), lines
    recompute_digests(run, lambda m: m["target"].update(model="Samsung SSD 990 PRO 2TB", serial="S7KHNJ0W123456"))
    code, lines = verify_lines(run, *key)
    kid = manifest(run)["integrity"]["seal"]["key_id"]
    assert code == 1 and f"manifest.json does not match its seal (key {kid}): everything the run records: it was " \
        "changed after ssdpts sealed it (when its digests were recomputed too, only the seal shows it)" in lines, lines
    # without the key: the seal cannot be checked, and verify says so
    code, lines = verify_lines(run, env={k: v for k, v in os.environ.items() if k != "SSDPTS_SEAL_KEY"})
    assert code == 0 and f"note: sealed with key {kid}: the seal cannot be checked without that key (SSDPTS_SEAL_KEY " \
        "or --seal-key names its file)" in lines, lines
    # the seal removed: a lab that seals every run asks for it
    recompute_digests(run, lambda m: None, keep_seal=False)
    code, lines = verify_lines(run, *key, "--require-seal")
    assert code == 1 and any(ln.startswith("manifest.json is not sealed with the key given (not sealed)") for ln in lines)
    other = tmp_path / "other.key"
    other.write_text("x" * 8)
    r = ssdpts("verify", str(run), "--seal-key", str(other))
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "at least 16" in r.stderr, r.stderr
