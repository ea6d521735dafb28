"""RunStore: atomic JSON, format versions, corrupt files, disk-full mapping, torn lines, the lock."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from ssdpts.errors import RunFailed, UserError
from ssdpts.store import FORMAT, RunStore, read_json, write_json_atomic
from ssdpts.measurement import DirectionStats, Measurement
from ssdpts.pts.workload import Workload
from ssdpts.results.records import Manifest, StepRecord
from ssdpts.results.steprecord import read_steps


@pytest.fixture
def run(tmp_path: Path) -> RunStore:
    s = RunStore.create(tmp_path / "runs", "iops-model X/serial:1",
                        Manifest.from_dict({"run_spec": {"tests": ["iops"]}}))
    yield s
    s.unlock()


def docs(run: RunStore) -> list[dict]:
    """steps.jsonl's lines as the store reads them (the documents a StepRecord reads)."""
    return [d for _where, d in run.step_documents()]


def rec(test="iops", part="", phase="round", rnd=1, index=1, **extra) -> StepRecord:
    """A step record as the runner hands it to the store (fields beyond a step's kept as they are)."""
    w = Workload(pattern="rand", read_pct=100, block_size_bytes=4096, threads=1, iodepth=1)
    d = DirectionStats(0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return StepRecord.from_dict({"test": test, "part": part, "phase": phase, "round": rnd, "index": index,
                                 "workload": w.to_dict(), "measurement": Measurement(d, d, 1.0, 0.0, 1.0).to_dict(),
                                 **extra})


# ---- creation --------------------------------------------------------------------------------------

def test_create_makes_the_run_directory(run: RunStore, tmp_path: Path):
    assert run.path.parent == tmp_path / "runs"
    assert run.path.name.endswith("-iops-model_X_serial_1")  # label made filesystem-safe
    assert (run.path / "device").is_dir() and (run.path / "fio").is_dir()
    assert (run.path / "steps.jsonl").read_text() == ""
    man = run.manifest().doc
    assert man["format"] == FORMAT and man["status"] == "running"
    assert man["run_spec"] == {"tests": ["iops"]}


def test_two_runs_in_the_same_second_get_distinct_directories(tmp_path: Path):
    a = RunStore.create(tmp_path, "x", Manifest.from_dict({}))
    b = RunStore.create(tmp_path, "x", Manifest.from_dict({}))
    try:
        assert a.path != b.path and a.path.is_dir() and b.path.is_dir()
    finally:
        a.unlock()
        b.unlock()


def test_update_manifest_and_parts(run: RunStore):
    run.update_manifest(status="complete", extra=[1, 2])
    run.set_part("tp-128KiB", purge={"method": "x"})
    run.set_part("tp-128KiB", preconditioned="now")
    man = json.loads((run.path / "manifest.json").read_text())
    assert man["status"] == "complete" and man["extra"] == [1, 2]
    assert man["parts"]["tp-128KiB"] == {"purge": {"method": "x"}, "preconditioned": "now"}


# ---- atomic JSON --------------------------------------------------------------------------------

def test_write_json_atomic_replaces_whole_file(tmp_path: Path):
    p = tmp_path / "doc.json"
    write_json_atomic(p, {"format": FORMAT, "a": 1})
    write_json_atomic(p, {"format": FORMAT, "b": 2})
    assert json.loads(p.read_text()) == {"format": FORMAT, "b": 2}
    assert sorted(x.name for x in tmp_path.iterdir()) == ["doc.json"]  # no temporary left behind


def test_failed_atomic_write_keeps_the_old_file(tmp_path: Path, monkeypatch, patch_store_os):
    p = tmp_path / "doc.json"
    write_json_atomic(p, {"format": FORMAT, "old": True})

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    patch_store_os(fsync=no_space)
    with pytest.raises(RunFailed) as exc:
        write_json_atomic(p, {"format": FORMAT, "new": True})
    monkeypatch.undo()
    assert json.loads(p.read_text()) == {"format": FORMAT, "old": True}
    assert sorted(x.name for x in tmp_path.iterdir()) == ["doc.json"]
    assert "disk is full" in str(exc.value)


# ---- format versions and corrupt files ------------------------------------------------------------

def test_other_format_version_is_refused_clearly(run: RunStore):
    p = run.path / "manifest.json"
    doc = json.loads(p.read_text())
    doc["format"] = FORMAT + 1
    p.write_text(json.dumps(doc))
    with pytest.raises(UserError) as exc:
        RunStore.open(run.path)
    msg = str(exc.value)
    assert f"format {FORMAT + 1}" in msg and f"reads format {FORMAT}" in msg
    assert "ssdpts version" in msg  # what to do
    assert "\n" not in msg


def test_missing_format_is_refused(tmp_path: Path):
    p = tmp_path / "summary.json"
    p.write_text('{"status": "complete"}')
    with pytest.raises(UserError, match="format None"):
        read_json(p, "run summary")


@pytest.mark.parametrize("content", ['{"format": 1, "status": "runn', "\x00\x01garbage", ""])
def test_corrupt_manifest_is_one_line_user_error(run: RunStore, content):
    (run.path / "manifest.json").write_text(content)
    with pytest.raises(UserError) as exc:
        RunStore.open(run.path)
    msg = str(exc.value)
    assert "corrupt" in msg and "manifest.json" in msg
    assert "\n" not in msg
    assert not isinstance(exc.value, RunFailed)


def test_manifest_that_is_not_an_object(run: RunStore):
    (run.path / "manifest.json").write_text("[1, 2]")
    with pytest.raises(UserError, match="not a run manifest"):
        run.manifest()


def test_open_refuses_a_non_run_directory(tmp_path: Path):
    with pytest.raises(UserError, match="does not exist"):
        RunStore.open(tmp_path)
    with pytest.raises(UserError, match="not a directory"):
        RunStore.open(tmp_path / "nope")


# ---- steps.jsonl --------------------------------------------------------------------------------

def test_append_and_read_steps(run: RunStore):
    run.append_steps([rec(index=1), rec(index=2)])
    run.append_steps([])
    run.append_steps([rec(index=3, value=1.5)])
    steps = docs(run)
    assert [s["index"] for s in steps] == [1, 2, 3]
    assert all(s["format"] == FORMAT for s in steps)
    assert steps[2]["value"] == 1.5
    assert (run.path / "steps.jsonl").read_text().count("\n") == 3


def test_torn_last_line_is_ignored(run: RunStore):
    run.append_steps([rec(index=1), rec(index=2)])
    with open(run.path / "steps.jsonl", "a") as f:
        f.write('{"format":1,"test":"iops","part":"","pha')  # the write in flight at SIGKILL
    assert [s["index"] for s in docs(run)] == [1, 2]


def test_appending_after_a_torn_line_keeps_the_file_readable(run: RunStore):
    run.append_steps([rec(index=1)])
    with open(run.path / "steps.jsonl", "a") as f:
        f.write('{"format":1,"test":"iops","part":"","pha')
    run.append_steps([rec(index=2)])
    assert [s["index"] for s in docs(run)] == [1, 2]


def test_complete_last_record_without_newline_is_kept(run: RunStore):
    run.append_steps([rec(index=1)])
    with open(run.path / "steps.jsonl", "a") as f:
        f.write(json.dumps(rec(index=2).to_document()))  # lost only its "\n"
    assert [s["index"] for s in docs(run)] == [1, 2]
    run.append_steps([rec(index=3)])
    assert [s["index"] for s in docs(run)] == [1, 2, 3]


def test_corrupt_middle_line_is_a_user_error(run: RunStore):
    run.append_steps([rec(index=1)])
    with open(run.path / "steps.jsonl", "a") as f:
        f.write("garbage\n")
    run.append_steps([rec(index=3)])
    with pytest.raises(UserError, match="line 2 is corrupt"):
        docs(run)


def test_step_of_another_format_is_refused(run: RunStore):
    with open(run.path / "steps.jsonl", "a") as f:
        f.write(json.dumps({**rec().to_document(), "format": FORMAT + 1}) + "\n")
    with pytest.raises(UserError, match="not a format-1 step record"):
        docs(run)


def test_rewrite_steps(run: RunStore):
    run.append_steps([rec(index=i) for i in range(1, 5)])
    keep = read_steps(run)[:2]
    run.rewrite_steps(keep)
    assert [s["index"] for s in docs(run)] == [1, 2]
    assert not (run.path / ".steps.jsonl.tmp").exists()


# ---- disk full ----------------------------------------------------------------------------------

def test_enospc_on_append_is_run_failed_with_advice(run: RunStore, monkeypatch, patch_store_os):
    run.append_steps([rec(index=1)])

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    patch_store_os(write=full)
    with pytest.raises(RunFailed) as exc:
        run.append_steps([rec(index=2)])
    monkeypatch.undo()
    msg = str(exc.value)
    assert "disk is full" in msg
    assert "free space" in msg and f"ssdpts resume {run.path}" in msg
    assert "\n" not in msg
    assert exc.value.exit_code == 1
    assert [s["index"] for s in docs(run)] == [1]  # what was saved is intact


def test_enospc_in_a_subdirectory_names_the_run_directory(run: RunStore, monkeypatch):
    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(RunFailed) as exc:
        run.write_device_file("lspci.txt", "x")
    monkeypatch.undo()
    assert f"ssdpts resume {run.path}" in str(exc.value)
    assert f"ssdpts resume {run.path / 'device'}" not in str(exc.value)


def test_read_only_results_directory_is_run_failed(run: RunStore, patch_store_os):
    def rofs(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    patch_store_os(open=rofs)
    with pytest.raises(RunFailed, match="read-only"):
        run.append_steps([rec()])


def test_unwritable_out_dir_is_user_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="cannot create the run directory"):
        RunStore.create(blocker / "runs", "x", Manifest.from_dict({}))


# ---- fio paths --------------------------------------------------------------------------------------

def test_fio_paths_per_part(run: RunStore):
    job, out = run.fio_paths("tp-1024KiB", "round-003")
    assert job == run.path / "fio" / "tp-1024KiB" / "round-003.fio"
    assert out.with_suffix(".json") == out and out.parent.is_dir()
    assert run.rel(out) == "fio/tp-1024KiB/round-003.json"


# ---- lock ----------------------------------------------------------------------------------------

LOCKER = """
import sys
from ssdpts.store import RunStore
from ssdpts.errors import UserError
try:
    RunStore.open(sys.argv[1]).lock()
except UserError as exc:
    print(exc)
    sys.exit(2)
print("locked")
"""


def second_opener(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LOCKER, str(path)], capture_output=True, text=True, timeout=60)


def test_lock_prevents_a_second_opener(run: RunStore):
    proc = second_opener(run.path)
    assert proc.returncode == 2, proc.stderr
    assert "in use by another ssdpts process" in proc.stdout
    # ... and in this process too: a second store on the same directory cannot lock it.
    with pytest.raises(UserError, match="in use"):
        RunStore.open(run.path).lock()


def test_unlock_lets_the_next_opener_in(run: RunStore):
    run.unlock()
    run.unlock()  # idempotent
    proc = second_opener(run.path)
    assert proc.returncode == 0 and "locked" in proc.stdout
    other = RunStore.open(run.path)
    other.lock()
    other.unlock()


# ---- what the store reads back: records ------------------------------------------------------------

def test_manifest_and_summary_read_back_as_records(run: RunStore):
    from ssdpts.results.records import Summary

    run.set_part("iops", stop_reason="steady state reached")
    man = run.manifest()
    assert isinstance(man, Manifest) and man.status == "running" and man.settings.tests == ("iops",)
    assert man.parts["iops"].stop_reason == "steady state reached"
    doc = {"status": "complete", "pts_compliant": True, "deviations": [], "tests": {"iops": ["iops"]}, "parts": {}}
    run.write_summary(Summary.from_dict(doc))
    assert run.summary() == Summary.from_dict(doc)
    assert {k: v for k, v in run.summary_document().items() if k != "format"} == doc  # as written


def test_live_json_is_the_record_as_written(run: RunStore):
    from ssdpts.results.records import Live

    live = Live(1700000000.5, "iops", "iops", "round", 3, 7, "RND 4KiB 65/35", 1234.5, None)
    run.write_live(live)
    text = (run.path / "live.json").read_text()
    assert text == ('{"t_unix_s":1700000000.5,"part":"iops","test":"iops","phase":"round","round":3,"step":7,'
                    '"step_label":"RND 4KiB 65/35","iops":1234.5,"bw_bytes_per_s":null}')
    assert Live.from_dict(json.loads(text)) == live
    run.clear_live()
    assert not (run.path / "live.json").exists()


def test_time_to_result_reads_and_writes_the_same_json():
    from ssdpts.results.timetoresult import TimeToResult

    steady = {"purge": {"method": "file-recreate", "s": 0.0016}, "preconditioning": None,
              "rounds": {"count": 0, "s": 0, "written_bytes": 0}, "window_rounds": [],
              "rounds_to_steady_state": None, "before_window": {"rounds": 0, "s": 0.0, "written_bytes": 0},
              "total_s": 0.002, "written_bytes": 0}
    wsat = {"purge": None, "preconditioning": {"method": "sprandom", "s": 1.5, "written_bytes": 10},
            "rounds": {"count": 3, "s": 12.25, "written_bytes": 4096}, "total_s": 13.75, "written_bytes": 4106}
    for doc in (steady, wsat):
        t = TimeToResult.from_dict(doc)
        assert json.dumps(t.to_dict()) == json.dumps(doc)  # keys, order, an int 0 kept an int
    assert TimeToResult.from_dict(steady).rounds_to_steady_state is None
    assert TimeToResult.from_dict(wsat).window is None
