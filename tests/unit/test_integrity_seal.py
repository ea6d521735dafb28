"""What covers manifest.json (results/seal.py), on runs the real runner makes with the FakeExecutor:
each field's digest written by the store with the field, an edit named by field, the keyed seal,
a seal kept on resume (or the resume refused), the key's refusals in one line, and the digests the
results library keeps of a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import Interrupted, UserError
from ssdpts.pts.runspec import RunSpec
from ssdpts.results import seal
from ssdpts.results.verify import integrity
from ssdpts.run.session import resume_run, start_run
from ssdpts.store import RunStore

SPEC = RunSpec(tests=("lat",), step_seconds=1, max_rounds=6)


def make_run(tmp: Path, executor=None) -> Path:
    try:
        start_run(SPEC, open_target(str(tmp / "t.bin"), size_bytes=64 << 20), executor=executor or FakeExecutor(),
                  out_dir=tmp / "runs", confirm=None)
    except Interrupted:
        pass
    (run,) = (tmp / "runs").iterdir()
    return run


def man(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def put(run: Path, doc: dict) -> None:
    (run / "manifest.json").write_text(json.dumps(doc))


@pytest.fixture
def key(tmp_path, monkeypatch) -> seal.Key:
    path = tmp_path / "lab.key"
    path.write_text("0123456789abcdef0123456789abcdef\n")
    monkeypatch.setenv(seal.ENV_KEY, str(path))
    return seal.load_key(path, "test")


def test_every_field_is_covered_and_an_edit_is_named(tmp_path):
    run = make_run(tmp_path)
    doc = man(run)
    assert doc["integrity"]["version"] == seal.VERSION and "seal" not in doc["integrity"]
    assert set(doc["integrity"]["manifest"]) == {k for k in doc if k not in ("integrity", "parts")} | {"parts.lat"}
    res = integrity.check(run)
    assert res.intact and res.version == seal.VERSION and res.seal_check.state == "unsealed"
    assert res.summary_line().endswith("; every field of manifest.json matches its digest; not sealed")
    # through the store: the digests are written with the change
    RunStore(run).update_manifest(description={"notes": "bench 3"})
    assert integrity.check(run).intact
    # by hand: named, field by field
    doc = man(run)
    doc["target"]["model"] = "Other 1TB"
    doc["confirmation"] = "/dev/sdz"
    del doc["parts"]["lat"]["rounds"]["round-002"]
    doc["kind"] = None
    put(run, doc)
    assert sorted(seal.manifest_changes(man(run))) == [("confirmation", "was changed"), ("kind", "was added"),
                                                        ("parts.lat", "was changed"), ("target", "was changed")]
    lines = [p.line() for p in integrity.check(run).problems]
    assert "manifest.json target was changed after ssdpts wrote it (its SHA-256 is not the digest recorded with the " \
           "manifest): which drive the run measured (model, serial, firmware, capacity)" in lines


def test_a_run_made_before_integrity_records_reads_as_older(tmp_path):
    run = make_run(tmp_path)
    doc = man(run)
    del doc["integrity"], doc["summary_file"]
    for rec in doc["parts"]["lat"]["rounds"].values():
        del rec["steps_sha256"]
    put(run, doc)
    res = integrity.check(run)
    assert res.intact and res.version is None and res.seal_check is None
    assert res.summary_line().endswith("; made before integrity records (an older ssdpts): nothing covers manifest.json")
    assert "summary.json has no recorded checksum (made by an older ssdpts): every value in it is what its steps give" \
        in res.notes
    # one record of the current format left behind: it is no older run, its missing records are damage
    doc["integrity"] = {}
    put(run, doc)
    assert [p.what.split(",")[0] for p in integrity.check(run).problems][:2] == [
        "has no checksum of the step lines of the WIPC of lat", "has no checksum of the step lines of round 1 of lat"]


def test_a_sealed_run_edited_with_every_digest_recomputed_is_named(tmp_path, key):
    run = make_run(tmp_path)
    doc = man(run)
    assert doc["integrity"]["seal"] == {"alg": "HMAC-SHA256", "key_id": key.key_id, "mac": doc["integrity"]["seal"]["mac"]}
    assert integrity.check(run).seal_check.state == "sealed"
    sealed = doc["integrity"]["seal"]
    doc["pts_compliant"] = True
    seal.refresh(doc, None)  # every digest right again, but no key: the old seal kept
    doc["integrity"]["seal"] = sealed
    put(run, doc)
    res = integrity.check(run)
    assert [p.line() for p in res.problems] == [
        f"manifest.json does not match its seal (key {key.key_id}): everything the run records: it was changed after "
        "ssdpts sealed it (when its digests were recomputed too, only the seal shows it)"]
    assert integrity.check(run, key=None).intact  # without the key it cannot be checked ...
    assert integrity.check(run, key=None).notes[-1].startswith(f"sealed with key {key.key_id}: the seal cannot be checked")
    other = seal.Key(b"another lab's key, 32 bytes long", "x")
    assert "not with the key given" in integrity.check(run, key=other).seal_check.text  # ... nor with another


def test_resume_keeps_the_seal_or_refuses(tmp_path, key, monkeypatch):
    run = make_run(tmp_path, FakeExecutor(interrupt_on_batch=3))
    assert man(run)["status"] == "interrupted" and integrity.check(run).seal_check.state == "sealed"
    monkeypatch.delenv(seal.ENV_KEY)
    before = (run / "manifest.json").read_bytes()
    with pytest.raises(UserError, match=f"is sealed with the seal key {key.key_id}: set SSDPTS_SEAL_KEY"):
        resume_run(run, executor=FakeExecutor())
    assert (run / "manifest.json").read_bytes() == before  # refused before anything was written
    monkeypatch.setenv(seal.ENV_KEY, key.path)
    resume_run(run, executor=FakeExecutor())
    res = integrity.check(run)
    assert man(run)["status"] == "complete" and res.intact and res.seal_check.state == "sealed"


def test_a_seal_key_that_cannot_be_used_is_one_line_before_anything_is_written(tmp_path, monkeypatch):
    for text, why in ((None, "cannot be read (No such file or directory)"), ("short\n", "holds 5 bytes")):
        path = tmp_path / "k"
        if text is not None:
            path.write_text(text)
        monkeypatch.setenv(seal.ENV_KEY, str(path))
        seal._key_at.cache_clear()
        with pytest.raises(UserError, match=f"^SSDPTS_SEAL_KEY names {path}, which {why.replace('(', '.').replace(')', '.')}"):
            make_run(tmp_path)
        assert not (tmp_path / "runs").exists() and not (tmp_path / "t.bin").exists()


def test_rounds_removed_whole_are_named_when_every_record_was_rewritten(tmp_path):
    """No record tells a round removed with its raw files, step lines and record (and the digests
    written again): the stop rule of a complete run does."""
    run = make_run(tmp_path)
    doc = man(run)
    rounds = doc["parts"]["lat"]["rounds"]
    last = max(int(k.split("-")[1]) for k in rounds if k.startswith("round-"))
    assert doc["parts"]["lat"]["stop_reason"] == "max-rounds" and last == 6
    gone = {f"fio/lat/round-{n:03d}.json" for n in (2, last)}
    for n in (2, last):
        del rounds[f"round-{n:03d}"]
    seal.refresh(doc, None)
    put(run, doc)
    lines = (run / "steps.jsonl").read_text().splitlines(keepends=True)
    (run / "steps.jsonl").write_text("".join(ln for ln in lines if json.loads(ln)["fio_json"] not in gone))
    assert [p.line() for p in integrity.check(run).problems] == [
        f"steps.jsonl has no round 2 of lat between its rounds 1 and {last - 1}: the results of lat: rounds were removed",
        f"steps.jsonl ends at round {last - 1} of lat, where its stop rule does not end it (steady state not reached, "
        f"{last - 2} of at most 6 rounds), yet the run is complete: the results of lat: its later rounds were removed"]


def test_the_librarys_digests_name_each_change(tmp_path):
    run = make_run(tmp_path)
    res = integrity.check(run)
    held = res.digests()
    assert {"steps.jsonl", "summary.json", "manifest.json target", "manifest.json integrity"} <= set(held)
    assert any(k.startswith("fio/lat/round-001") for k in held) and any(k.startswith("device/") for k in held)
    assert not any(k.startswith("report.") or k.startswith(".") for k in held)
    (run / "report.html").write_text("regenerated")  # 'ssdpts report' writes it again at will
    (run / "device" / "host.json").write_text("{}")
    (run / "fio" / "lat" / "round-001.fio").unlink()
    (run / "fio" / "lat" / "extra.txt").write_text("x")
    assert seal.digest_changes(held, integrity.check(run).digests()) == [
        ("device/host.json", "differs"), ("fio/lat/extra.txt", "was added"), ("fio/lat/round-001.fio", "is missing")]
