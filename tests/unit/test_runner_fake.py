"""The whole runner, end to end, on the FakeExecutor against a file target: session.start_run /
resume_run -> runner -> store -> analysis. No fio, no device."""

from __future__ import annotations

from collections import Counter
import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest

from ssdpts.run import runner
from ssdpts import store as store_mod
from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor, default_model
from ssdpts.errors import Interrupted, RunFailed, UserError
from ssdpts.run.session import resume_run, start_run
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import build_parts
from ssdpts.pts.workload import Step, Workload
from ssdpts.results.steprecord import read_steps
from ssdpts.store import RunStore

KiB = 1024
MiB = 1024 * KiB
SIZE = 256 * MiB

# All four tests, time-compressed. With the default fake model (IOPS decaying to 60% by round 4)
# steady state is first reached over rounds 4..8, before max_rounds.
FULL = RunSpec(tests=("wsat", "iops", "tp", "lat"), step_seconds=1, max_rounds=10, wsat_hours=0.25,
               wsat_chunk_steps=5)
# Smaller, for the interrupt / resume tests: iops 1 WIPC + 6 rounds, tp 2 parts x (1 WIPC + 6 rounds).
SMALL = RunSpec(tests=("iops", "tp"), step_seconds=1, max_rounds=6)


def start(tmp: Path, spec: RunSpec, executor: FakeExecutor, size: int = SIZE):
    target = open_target(str(tmp / "target.img"), size_bytes=size)
    return start_run(spec, target, executor=executor, out_dir=tmp / "runs", confirm=None, argv=["test"])


def only_run_dir(tmp: Path) -> Path:
    (d,) = list((tmp / "runs").iterdir())
    return d


def step_lines(run_dir: Path) -> list[dict]:
    return [json.loads(ln) for ln in (run_dir / "steps.jsonl").read_text().splitlines() if ln.strip()]


def keys(steps: list[dict]) -> list[tuple]:
    return [(s["test"], s["part"], s["phase"], s["round"], s["index"]) for s in steps]


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def model_iops(pattern: str, read_pct: int, bs: int, round_no: int, tc: int = 4, qd: int = 32) -> float:
    return default_model(Step("x", "", "round", round_no, 1, Workload(pattern, read_pct, bs, tc, qd), 1.0))


@pytest.fixture(scope="module", autouse=True)
def files_on_a_512_byte_disk():
    """The step counts below assume 512-byte logical blocks (all 8 IOPS / 3 LAT block sizes). A file
    target inherits the logical block size of the host disk under tmp_path, which may be 4Kn:
    pin it so that the tests do not depend on the machine."""
    from ssdpts.device import target as target_mod

    mp = pytest.MonkeyPatch()
    if hasattr(target_mod, "_fs_block_sizes"):
        mp.setattr(target_mod, "_fs_block_sizes", lambda directory: (512, 4096))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    ex = FakeExecutor()
    store, summary = start(tmp, FULL, ex)
    return store.path, summary, ex


@pytest.fixture(scope="module")
def small_baseline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("baseline")
    store, summary = start(tmp, SMALL, FakeExecutor())
    return store.path, summary


# ---- an uninterrupted run of all four tests --------------------------------------------------------

def test_all_four_tests_complete(full_run):
    run_dir, summary, ex = full_run
    assert summary["status"] == "complete"
    assert manifest(run_dir)["status"] == "complete"
    assert list(summary["parts"]) == ["wsat", "iops", "tp-1024KiB", "tp-128KiB", "lat"]
    assert summary["tests"] == {"wsat": ["wsat"], "iops": ["iops"], "tp": ["tp-1024KiB", "tp-128KiB"], "lat": ["lat"]}
    for pid in ("iops", "tp-1024KiB", "tp-128KiB", "lat"):
        p = summary["parts"][pid]
        assert p["stop_reason"] == "steady-state"
        assert p["rounds_run"] == 8  # stopped at steady state, before max_rounds=10
        assert p["steady_state"]["reached"] is True
        assert p["steady_state"]["window_rounds"] == [4, 5, 6, 7, 8]
    assert summary["parts"]["wsat"]["stop_reason"] == "capacity-written"
    assert summary["pts_compliant"] is False
    assert "time-compressed: steps of 1 s instead of 60 s" in summary["deviations"]
    m = manifest(run_dir)
    assert m["executor"] == "fake" and m["fio_version"] == "fake-1.0"
    assert m["run_spec"]["tests"] == ["wsat", "iops", "tp", "lat"]
    assert set(m["parts"]) == {"wsat", "iops", "tp-1024KiB", "tp-128KiB", "lat"}
    for pid, info in m["parts"].items():
        assert info["purge"]["method"] == "file-recreate", pid
        assert info["stop_reason"] == summary["parts"][pid]["stop_reason"]


def test_summary_json_on_disk_matches(full_run):
    run_dir, summary, _ = full_run
    doc = json.loads((run_dir / "summary.json").read_text())
    assert doc["format"] == store_mod.FORMAT
    assert {k: v for k, v in doc.items() if k != "format"} == json.loads(json.dumps(summary))


def test_steady_state_record_per_tracking_variable(full_run):
    _, summary, _ = full_run
    iops = summary["parts"]["iops"]
    variables = iops["steady_state"]["variables"]
    assert [v["variable"] for v in variables] == [
        "RND 4KiB 0/100 IOPS", "RND 64KiB 65/35 IOPS", "RND 1024KiB 100/0 IOPS"]
    for v in variables:
        assert v["rounds"] == [4, 5, 6, 7, 8]
        series = iops["series"][v["variable"]]
        assert series["rounds"] == list(range(1, 9))
        assert v["values"] == series["values"][3:8]
        assert v["average"] == pytest.approx(np.mean(v["values"]))
        assert v["range"] == pytest.approx(max(v["values"]) - min(v["values"]))
        assert v["excursion"] == pytest.approx(abs(v["slope"]) * 4)
        assert v["range_limit"] == pytest.approx(0.2 * v["average"])
        assert v["excursion_limit"] == pytest.approx(0.1 * v["average"])
        assert v["range_ok"] is True and v["excursion_ok"] is True and v["reached"] is True
        assert "intercept" in v and v["unit"] == "IOPS"
    # RND 4KiB 0/100 at TC4/QD32: 200k / 3 (write penalty) x 0.6 (steady) = 40000 in every window round
    assert variables[0]["values"] == pytest.approx([40000.0] * 5)
    # the convergence series shows the fresh-out-of-box decay
    assert iops["series"]["RND 4KiB 0/100 IOPS"]["values"][:4] == pytest.approx(
        [200000 / 3 * f for f in (1.0, 1 - 0.4 / 3, 1 - 0.8 / 3, 0.6)])
    tp = summary["parts"]["tp-1024KiB"]["steady_state"]["variables"]
    assert [v["variable"] for v in tp] == ["SEQ 1024KiB 0/100 MB/s"] and tp[0]["unit"] == "MB/s"
    lat = summary["parts"]["lat"]["steady_state"]["variables"]
    assert [v["variable"] for v in lat] == ["RND 4KiB 0/100 mean response time"]


def test_iops_table_is_8_by_7(full_run):
    _, summary, _ = full_run
    t = summary["parts"]["iops"]["table"]
    assert t["kind"] == "iops-matrix" and t["unit"] == "IOPS"
    assert t["mixes"] == ["100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100"]
    assert [r["block_size_bytes"] for r in t["rows"]] == [
        1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512]
    for row in t["rows"]:
        assert list(row["values"]) == t["mixes"]
        for mix, value in row["values"].items():
            read_pct = int(mix.split("/")[0])
            assert value == pytest.approx(model_iops("rand", read_pct, row["block_size_bytes"], 8)), (row, mix)
    assert t["rows"][6]["values"]["0/100"] == pytest.approx(40000.0)


def test_tp_table_per_block_size_in_mb_per_s(full_run):
    _, summary, _ = full_run
    for pid, bs in (("tp-1024KiB", 1024 * KiB), ("tp-128KiB", 128 * KiB)):
        t = summary["parts"][pid]["table"]
        assert t["kind"] == "throughput" and t["unit"] == "MB/s" and t["block_size_bytes"] == bs
        # base-10 MB/s of the steady window (TC1/QD32 for TP)
        assert t["write_mb_per_s"] == pytest.approx(model_iops("seq", 0, bs, 8, 1, 32) * bs / 1e6)
        assert t["read_mb_per_s"] == pytest.approx(model_iops("seq", 100, bs, 8, 1, 32) * bs / 1e6)
        v = summary["parts"][pid]["steady_state"]["variables"][0]
        assert v["average"] == pytest.approx(t["write_mb_per_s"])


def test_lat_table_is_3_by_3_with_mean_five_nines_and_max(full_run):
    _, summary, _ = full_run
    t = summary["parts"]["lat"]["table"]
    assert t["kind"] == "latency"
    assert [(r["mix"], r["block_size_bytes"]) for r in t["rows"]] == [
        (m, bs) for m in ("100/0", "65/35", "0/100") for bs in (8 * KiB, 4 * KiB, 512)]
    for r in t["rows"]:
        iops = model_iops("rand", int(r["mix"].split("/")[0]), r["block_size_bytes"], 8, 1, 1)
        assert r["iops"] == pytest.approx(iops)
        assert r["lat_mean_us"] == pytest.approx(1e6 / iops)  # TC1/QD1: one IO in flight
        assert r["lat_max_us"] == pytest.approx(4e6 / iops, rel=1e-6)  # the fake's max is 4x the mean
        assert r["lat_mean_us"] < r["lat_p99999_us"] <= r["lat_max_us"] * (1 + 1e-9)
    v = summary["parts"]["lat"]["steady_state"]["variables"][0]
    assert v["average"] == pytest.approx(t["rows"][7]["lat_mean_us"])  # RND 4KiB 0/100


def test_wsat_series_with_tgbw(full_run):
    run_dir, summary, _ = full_run
    p = summary["parts"]["wsat"]
    t = p["table"]
    assert p["steady_state"] is None and p["wipc"] is None
    assert p["samples"] == 5 == len(t["series"])  # one 5-minute chunk wrote more than 4 x 256 MiB
    assert [s["minute"] for s in t["series"]] == [1, 2, 3, 4, 5]
    written = [s["measurement"]["write"]["io_bytes"] for s in step_lines(run_dir) if s["test"] == "wsat"]
    assert t["tgbw_gb"] == pytest.approx(sum(written) / 1e9)
    assert t["tgbw_gb"] >= 4 * SIZE / 1e9
    assert [s["tgbw_gb"] for s in t["series"]] == pytest.approx(list(np.cumsum(written) / 1e9))
    assert t["drive_fills"] == pytest.approx(sum(written) / SIZE)
    assert all(s["iops"] == pytest.approx(200000 / 3) for s in t["series"])
    assert t["final_window_minutes"] == [1, 2, 3, 4, 5]


def test_steps_jsonl_has_every_step_once(full_run):
    run_dir, summary, ex = full_run
    steps = step_lines(run_dir)
    parts = {p.id: p for p in build_parts(FULL, SIZE)}
    expected = summary["parts"]["wsat"]["samples"]
    for pid in ("iops", "tp-1024KiB", "tp-128KiB", "lat"):
        expected += 1 + summary["parts"][pid]["rounds_run"] * len(parts[pid].round_steps(1))
    assert expected == 5 + (1 + 8 * 56) + 2 * (1 + 8 * 2) + (1 + 8 * 9)
    assert len(steps) == expected
    assert len(set(keys(steps))) == len(steps)
    assert sum(len(b.steps) for b in ex.batches) == expected
    assert all(s["format"] == store_mod.FORMAT for s in steps)
    wipc = [s for s in steps if s["phase"] == "wipc"]
    assert len(wipc) == 4
    assert all(s["planned_io_bytes"] == 2 * SIZE for s in wipc)  # 2 x active range (AR 100%)


def test_fio_files_are_kept_per_part_and_round(full_run):
    run_dir, _, _ = full_run
    assert (run_dir / "fio" / "iops" / "wipc.fio").is_file()
    assert (run_dir / "fio" / "iops" / "round-008.json").is_file()
    assert not (run_dir / "fio" / "iops" / "round-009.json").exists()
    assert (run_dir / "fio" / "tp-128KiB" / "round-001.fio").is_file()
    steps = step_lines(run_dir)
    assert {s["fio_json"] for s in steps if s["test"] == "lat" and s["round"] == 3} == {"fio/lat/round-003.json"}


def test_batches_cover_the_active_range(full_run):
    _, _, ex = full_run
    assert {(b.area.offset_bytes, b.area.size_bytes) for b in ex.batches} == {(0, SIZE)}
    assert {b.seed for b in ex.batches} == {FULL.seed}


def test_client_profile_uses_75_percent_of_the_target(tmp_path):
    spec = RunSpec(tests=("lat",), profile="client", step_seconds=1, max_rounds=5)
    ex = FakeExecutor()
    store, summary = start(tmp_path, spec, ex)
    assert {b.area.size_bytes for b in ex.batches} == {192 * MiB}
    assert manifest(store.path)["active_range_bytes"] == 192 * MiB
    assert summary["parts"]["lat"]["wipc"]["io_bytes"] == 2 * 192 * MiB


# ---- no steady state ---------------------------------------------------------------------------------

def never_converges(step: Step) -> float:
    """IOPS growing 15% per round: the range over any 5 rounds exceeds 20%."""
    return 10_000 * 1.15 ** step.round if step.phase == "round" else 10_000


def test_steady_state_not_reached_after_max_rounds(tmp_path):
    spec = RunSpec(tests=("iops", "lat"), step_seconds=1, max_rounds=6)
    ex = FakeExecutor(model=never_converges)
    store, summary = start(tmp_path, spec, ex)  # returns normally: the run is complete
    assert summary["status"] == "complete" and manifest(store.path)["status"] == "complete"
    for pid in ("iops", "lat"):
        p = summary["parts"][pid]
        assert p["stop_reason"] == "max-rounds"
        assert p["rounds_run"] == 6
        ss = p["steady_state"]
        assert ss["reached"] is False
        assert ss["window_rounds"] == [2, 3, 4, 5, 6]  # the last 5 rounds
        for v in ss["variables"]:
            assert v["reached"] is False and v["range_ok"] is False
            assert v["rounds"] == [2, 3, 4, 5, 6]
        assert p["table"] is not None  # values are still reported (flagged "not reached")
    assert len(ex.batches) == 2 * (1 + 6)


def test_some_variables_steady_is_not_enough(tmp_path):
    """PTS 2.0.2 IOPS: all three tracking variables must pass in the same window."""

    def only_4k_write_steady(step: Step) -> float:
        w = step.workload
        if step.phase != "round" or (w.block_size_bytes == 4096 and w.read_pct == 0):
            return 10_000
        return 10_000 * 1.15 ** step.round

    spec = RunSpec(tests=("iops",), step_seconds=1, max_rounds=5)
    _, summary = start(tmp_path, spec, FakeExecutor(model=only_4k_write_steady))
    ss = summary["parts"]["iops"]["steady_state"]
    assert [v["reached"] for v in ss["variables"]] == [True, False, False]
    assert ss["reached"] is False
    assert summary["parts"]["iops"]["stop_reason"] == "max-rounds"
    # ... whereas PTS-E 1.1 tracks RND 4KiB 0/100 alone and stops at once.
    (tmp_path / "v11").mkdir()
    _, s11 = start(tmp_path / "v11", spec.with_(pts_version="1.1"), FakeExecutor(model=only_4k_write_steady))
    assert s11["parts"]["iops"]["stop_reason"] == "steady-state"
    assert s11["parts"]["iops"]["rounds_run"] == 5


def test_wsat_time_limit_in_chunks(tmp_path):
    spec = RunSpec(tests=("wsat",), step_seconds=1, wsat_hours=0.2, wsat_chunk_steps=5,
                   wsat_capacity_multiple=1000)
    ex = FakeExecutor()
    _, summary = start(tmp_path, spec, ex)
    p = summary["parts"]["wsat"]
    assert p["stop_reason"] == "time-limit"
    assert p["samples"] == 12 and [len(b.steps) for b in ex.batches] == [5, 5, 2]
    assert [s["minute"] for s in p["table"]["series"]] == list(range(1, 13))


# ---- interruption and resume ---------------------------------------------------------------------

def test_interrupt_then_resume_loses_and_duplicates_nothing(tmp_path, small_baseline):
    base_dir, base_summary = small_baseline
    # batches: iops WIPC, rounds 1-6 (2..7); tp-1024KiB WIPC (8), round 1 (9), round 2 (10) <- Ctrl-C
    with pytest.raises(Interrupted) as exc:
        start(tmp_path, SMALL, FakeExecutor(interrupt_on_batch=10))
    run_dir = only_run_dir(tmp_path)
    assert f"ssdpts resume {run_dir}" in str(exc.value)
    assert manifest(run_dir)["status"] == "interrupted"
    kept = step_lines(run_dir)
    assert len(kept) == (1 + 6 * 56) + (1 + 2)
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "interrupted"

    ex = FakeExecutor()
    store, summary = resume_run(run_dir, executor=ex)
    assert summary["status"] == "complete" and manifest(run_dir)["status"] == "complete"
    # resumed at tp-1024KiB round 2, without purging or preconditioning it again
    assert [(b.steps[0].part, b.steps[0].phase, b.steps[0].round) for b in ex.batches[:2]] == [
        ("1024KiB", "round", 2), ("1024KiB", "round", 3)]
    steps = step_lines(run_dir)
    assert keys(steps)[: len(kept)] == keys(kept)  # finished steps kept as they were
    assert len(set(keys(steps))) == len(steps)  # nothing duplicated
    assert Counter(keys(steps)) == Counter(keys(step_lines(base_dir)))  # nothing lost
    for pid, p in summary["parts"].items():
        assert p["stop_reason"] == base_summary["parts"][pid]["stop_reason"]
        assert p["rounds_run"] == base_summary["parts"][pid]["rounds_run"]
    res = manifest(run_dir)["resumptions"]
    assert len(res) == 1 and res[0]["previous_status"] == "interrupted" and res[0]["steps_kept"] == len(kept)


def test_interrupt_during_wipc_resumes_with_purge_and_wipc(tmp_path, small_baseline):
    base_dir, _ = small_baseline
    with pytest.raises(Interrupted):
        start(tmp_path, SMALL, FakeExecutor(interrupt_on_batch=8))  # tp-1024KiB WIPC
    run_dir = only_run_dir(tmp_path)
    assert not any(s["part"] == "1024KiB" for s in step_lines(run_dir))
    ex = FakeExecutor()
    resume_run(run_dir, executor=ex)
    assert ex.batches[0].steps[0].phase == "wipc" and ex.batches[0].steps[0].part == "1024KiB"
    assert Counter(keys(step_lines(run_dir))) == Counter(keys(step_lines(base_dir)))


def test_resume_of_a_run_on_a_path_fio_cannot_name_is_refused(tmp_path):
    """A run made before such paths were refused at input (a ';' ends a value in fio's job file):
    resume says so in one line before anything is written, not at its first job file."""
    where = tmp_path / "a;b"
    where.mkdir()
    with pytest.raises(Interrupted):
        start(where, SMALL, FakeExecutor(interrupt_on_batch=3))
    run_dir = only_run_dir(where)
    before = (run_dir / "manifest.json").read_bytes(), (run_dir / "steps.jsonl").read_bytes()
    with pytest.raises(UserError, match=r"cannot be continued: .*holds ';'") as exc:
        resume_run(run_dir, executor=FakeExecutor())
    assert "\n" not in str(exc.value)
    assert ((run_dir / "manifest.json").read_bytes(), (run_dir / "steps.jsonl").read_bytes()) == before


def test_resume_of_a_complete_run_is_refused(small_baseline):
    base_dir, _ = small_baseline
    with pytest.raises(UserError, match="already complete"):
        resume_run(base_dir, executor=FakeExecutor())


def test_run_failure_keeps_steps_and_resumes(tmp_path, small_baseline):
    base_dir, _ = small_baseline
    with pytest.raises(RunFailed) as exc:
        start(tmp_path, SMALL, FakeExecutor(fail_on_batch=4))
    assert "I/O error" in str(exc.value)
    run_dir = only_run_dir(tmp_path)
    m = manifest(run_dir)
    assert m["status"] == "failed" and "I/O error" in m["error"]
    assert len(step_lines(run_dir)) == 1 + 2 * 56  # WIPC + rounds 1 and 2
    # --keep-window: the rounds before the failure count, so the run ends as the uninterrupted one
    _, summary = resume_run(run_dir, executor=FakeExecutor(), keep_window=True)
    assert summary["status"] == "complete" and manifest(run_dir)["error"] is None
    assert Counter(keys(step_lines(run_dir))) == Counter(keys(step_lines(base_dir)))


def test_disk_full_during_a_run_fails_with_advice(tmp_path, monkeypatch, patch_store_os):
    calls = {"n": 0}
    real_write = os.write

    def write(fd, data):
        calls["n"] += 1
        if calls["n"] == 3:  # the third append of step lines: iops round 2
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    patch_store_os(write=write)
    with pytest.raises(RunFailed) as exc:
        start(tmp_path, SMALL, FakeExecutor())
    monkeypatch.undo()
    run_dir = only_run_dir(tmp_path)
    assert "disk is full" in str(exc.value) and f"ssdpts resume {run_dir}" in str(exc.value)
    assert manifest(run_dir)["status"] == "failed"
    assert len(step_lines(run_dir)) == 1 + 56


def test_torn_last_line_is_ignored_and_resume_completes(tmp_path, small_baseline):
    base_dir, _ = small_baseline
    with pytest.raises(Interrupted):
        start(tmp_path, SMALL, FakeExecutor(interrupt_on_batch=8))  # stops before tp-1024KiB WIPC
    run_dir = only_run_dir(tmp_path)
    n = len(step_lines(run_dir))
    with open(run_dir / "steps.jsonl", "a") as f:  # a WIPC record cut short by a power loss
        f.write('{"format":1,"test":"tp","part":"1024KiB","phase":"wipc","round":0,"ind')
    assert len(read_steps(RunStore.open(run_dir))) == n
    resume_run(run_dir, executor=FakeExecutor())
    steps = step_lines(run_dir)  # every line readable: the torn tail was repaired
    assert Counter(keys(steps)) == Counter(keys(step_lines(base_dir)))


def test_incomplete_round_is_dropped_on_resume(tmp_path, small_baseline):
    base_dir, _ = small_baseline
    with pytest.raises(Interrupted):
        start(tmp_path, SMALL, FakeExecutor(interrupt_on_batch=5))  # after iops rounds 1-3
    run_dir = only_run_dir(tmp_path)
    path = run_dir / "steps.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 1 + 3 * 56
    path.write_text("".join(lines[:-3]))  # round 3 lost its last 3 steps

    store = RunStore.open(run_dir)
    parts = build_parts(SMALL, SIZE)
    assert runner.drop_incomplete_rounds(store, parts) == 53
    steps = read_steps(store)
    assert len(steps) == 1 + 2 * 56
    assert {s.round for s in steps if s.phase == "round"} == {1, 2}
    assert runner.drop_incomplete_rounds(store, parts) == 0  # nothing more to drop

    ex = FakeExecutor()
    resume_run(run_dir, executor=ex, keep_window=True)
    assert ex.batches[0].steps[0].round == 3 and len(ex.batches[0].steps) == 56
    assert Counter(keys(step_lines(run_dir))) == Counter(keys(step_lines(base_dir)))


def test_a_second_resume_while_running_is_refused(tmp_path):
    with pytest.raises(Interrupted):
        start(tmp_path, SMALL, FakeExecutor(interrupt_on_batch=3))
    run_dir = only_run_dir(tmp_path)
    holder = RunStore.open(run_dir)
    holder.lock()  # another ssdpts process working on this run
    try:
        with pytest.raises(UserError, match="in use"):
            resume_run(run_dir, executor=FakeExecutor())
    finally:
        holder.unlock()
    _, summary = resume_run(run_dir, executor=FakeExecutor())
    assert summary["status"] == "complete"


# ---- the guard between rounds, integrity records, order of checks -----------------------------------

def test_device_unsafe_between_rounds_stops_interrupted_and_resumes(tmp_path, small_baseline, monkeypatch):
    from ssdpts.device.safety.claim import Claim
    from ssdpts.errors import DeviceUnsafe

    calls = {"n": 0}

    def check(self):  # the guard finds the device mounted at its 5th call (before iops round 3)
        calls["n"] += 1
        if calls["n"] == 5:
            raise DeviceUnsafe("/dev/x is mounted at /mnt: unmount it or pick another target")

    monkeypatch.setattr(Claim, "check", check)
    with pytest.raises(Interrupted) as exc:
        start(tmp_path, SMALL, FakeExecutor())
    run_dir = only_run_dir(tmp_path)
    assert exc.value.exit_code == 1 and str(exc.value).startswith("stopped: /dev/x is mounted at /mnt")
    m = manifest(run_dir)
    assert m["status"] == "interrupted" and "mounted" in m["interruption"]["device_unsafe"]
    assert len(step_lines(run_dir)) == 1 + 2 * 56  # WIPC, rounds 1-2: nothing after the guard said no
    monkeypatch.undo()
    # --keep-window: the rounds of the baseline, this test is about the guard (the window across a
    # resume: test_boundaries_fake.py)
    _, summary = resume_run(run_dir, executor=FakeExecutor(), keep_window=True)
    assert summary["status"] == "complete"
    assert manifest(run_dir)["resumptions"][0]["interruption"]["device_unsafe"].startswith("/dev/x is mounted")
    assert Counter(keys(step_lines(run_dir))) == Counter(keys(step_lines(small_baseline[0])))


@pytest.mark.parametrize("lost", [True, False], ids=["fio-server-lost", "other-reason"])
def test_only_a_lost_fio_server_is_called_one(tmp_path, lost):
    """An interruption that gives its reason keeps it; only a HostLost (engine/fioclient.py) is
    recorded and told as a lost host to wait for. Either way the run resumes."""
    from ssdpts.errors import HostLost

    why = ("the fio server 127.0.0.1,8765 went away during round-002.json (client: host=127.0.0.1 disconnected)"
           if lost else "the supervisor stopped this target")

    class Stops(FakeExecutor):
        def run(self, batch):
            if len(self.batches) == 3:  # iops round 2
                self.batches.append(batch)
                raise (HostLost if lost else Interrupted)(why)
            return super().run(batch)

    with pytest.raises(Interrupted) as exc:
        start(tmp_path, SMALL, Stops())
    run_dir = only_run_dir(tmp_path)
    m = manifest(run_dir)
    assert m["status"] == "interrupted" and m["interruption"]["reason"] == why
    assert m["interruption"]["host_lost"] is lost and m["interruption"]["signal"] is None
    text = str(exc.value)
    assert text.startswith(f"interrupted: {why}: every finished round is saved in {run_dir}")
    assert ("once it is back" in text) is lost
    assert text.endswith(f"continue with 'ssdpts resume {run_dir}'")
    assert exc.value.exit_code == (1 if lost else Interrupted.exit_code)
    _, summary = resume_run(run_dir, executor=FakeExecutor(), keep_window=True)
    assert summary["status"] == "complete"


def test_rounds_are_recorded_with_checksums_and_step_counts(small_baseline):
    from ssdpts.results.verify import integrity
    from ssdpts.store import file_digest

    run_dir, _ = small_baseline
    rounds = manifest(run_dir)["parts"]["iops"]["rounds"]
    assert list(rounds)[:2] == ["wipc", "round-001"] and rounds["wipc"]["steps"] == 1
    assert rounds["round-001"]["steps"] == 56
    f = rounds["round-001"]["files"]["fio/iops/round-001.json"]
    assert f == file_digest(run_dir / "fio/iops/round-001.json").to_dict()
    res = integrity.check(run_dir)
    assert res.intact and res.rounds_checked == sum(len(p["rounds"]) for p in manifest(run_dir)["parts"].values())


def test_a_round_recorded_but_not_saved_is_measured_again(tmp_path, small_baseline):
    """A crash between recording a round's checksums and appending its steps: not damage; resume
    measures the round again and the finished run verifies."""
    from ssdpts.results.verify import integrity

    with pytest.raises(Interrupted):
        start(tmp_path, SMALL, FakeExecutor(interrupt_on_batch=4))  # after iops rounds 1-2
    run_dir = only_run_dir(tmp_path)
    store = RunStore.open(run_dir)
    job, out = store.fio_paths("iops", "round-003")
    job.write_text("; in flight\n")
    out.write_text("{}")
    store.record_round("iops", "round-003", [job, out], [read_steps(store)[0]] * 56)
    res = integrity.check(run_dir)
    assert res.intact and any("round 3 of iops" in n and "in flight" in n for n in res.notes)
    ex = FakeExecutor()
    resume_run(run_dir, executor=ex, keep_window=True)  # the rounds of the baseline (the window: test_boundaries_fake.py)
    assert ex.batches[0].steps[0].round == 3
    assert manifest(run_dir)["resumptions"][0]["rounds_measured_again"] == ["iops round-003"]
    assert integrity.check(run_dir).intact
    assert Counter(keys(step_lines(run_dir))) == Counter(keys(step_lines(small_baseline[0])))


def test_refusals_come_before_anything_is_written(tmp_path):
    """An unusable --out is refused before the file target is created (it used to be created first)."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    target = open_target(str(tmp_path / "target.img"), size_bytes=SIZE)
    with pytest.raises(UserError, match="is not a directory"):
        start_run(SMALL, target, executor=FakeExecutor(), out_dir=blocker / "runs", confirm=None)
    assert not (tmp_path / "target.img").exists() and not (tmp_path / "target.img.ssdpts-target").exists()


def test_a_display_whose_writes_fail_never_fails_the_run(tmp_path):
    """A closed terminal: every write fails with EIO (the SIGHUP that comes with it is
    test_signals.py's); the run is measured and saved whole all the same."""
    from ssdpts.run.progress import PlainProgress

    class GoneTerminal:
        def write(self, text):
            raise OSError(errno.EIO, "Input/output error")

        def flush(self):
            raise OSError(errno.EIO, "Input/output error")

    class Display(PlainProgress):
        calls = 0

        def _p(self, text):
            Display.calls += 1
            super()._p(text)

    target = open_target(str(tmp_path / "target.img"), size_bytes=SIZE)
    _, summary = start_run(SMALL, target, executor=FakeExecutor(), out_dir=tmp_path / "runs", confirm=None,
                           argv=["test"], progress=Display(GoneTerminal()))
    assert summary["status"] == "complete" and Display.calls > 10
    assert manifest(only_run_dir(tmp_path))["status"] == "complete"


def test_the_manifest_records_time_to_result(full_run):
    """Each part's purge, preconditioning and rounds in seconds and bytes, the bytes before its window
    and the rounds to steady state (docs/methodology.md#time-to-result), as its steps give them."""
    from ssdpts.pts.plan import active_range_bytes

    run_dir, summary, _ = full_run
    m = manifest(run_dir)
    steps = step_lines(run_dir)
    ar = active_range_bytes(SIZE, 100)
    for pid in ("iops", "tp-1024KiB", "lat"):
        t = m["parts"][pid]["time_to_result"]
        mine = [s for s in steps if (f"{s['test']}-{s['part']}" if s["part"] else s["test"]) == pid]
        written = {ph: sum(s["measurement"]["write"]["io_bytes"] for s in mine if s["phase"] == ph)
                   for ph in ("wipc", "round")}
        assert t["purge"]["method"] == "file-recreate" and t["purge"]["s"] >= 0
        assert t["preconditioning"]["method"] == "wipc"
        assert t["preconditioning"]["written_bytes"] == written["wipc"] == 2 * ar
        assert t["rounds"] == {"count": 8, "s": t["rounds"]["s"], "written_bytes": written["round"]}
        assert t["window_rounds"] == [4, 5, 6, 7, 8] and t["rounds_to_steady_state"] == 8
        before = sum(s["measurement"]["write"]["io_bytes"] for s in mine if s["phase"] == "round" and s["round"] < 4)
        assert t["before_window"]["rounds"] == 3 and t["before_window"]["written_bytes"] == 2 * ar + before
        assert t["written_bytes"] == written["wipc"] + written["round"]
        assert t["total_s"] >= t["rounds"]["s"] + t["preconditioning"]["s"] > 0
    w = m["parts"]["wsat"]["time_to_result"]
    assert w["preconditioning"] is None and "window_rounds" not in w
    wsat = [s for s in steps if s["test"] == "wsat"]
    assert w["rounds"]["written_bytes"] == sum(s["measurement"]["write"]["io_bytes"] for s in wsat) > 0


def test_time_to_result_without_steady_state_says_none(tmp_path):
    from ssdpts.results.records import PartState

    store, _ = start(tmp_path, SMALL.with_(tests=("iops",), max_rounds=5), FakeExecutor(model=lambda step: 100.0 + 60 * (step.round % 2)))
    t = manifest(store.path)["parts"]["iops"]["time_to_result"]
    assert t["rounds_to_steady_state"] is None and t["window_rounds"] == [1, 2, 3, 4, 5]
    assert t["before_window"]["rounds"] == 0
    assert PartState.from_dict(manifest(store.path)["parts"]["iops"]).time_to_result.to_dict() == t


def test_resume_of_a_part_preconditioned_another_way_is_refused(tmp_path, monkeypatch):
    """A run an older ssdpts preconditioned TP in by the sprandom fill (TP now keeps its WIPC): its
    rounds would continue from a state the plan no longer puts the drive in; refused in one line,
    before anything is written."""
    from ssdpts.pts import tp

    spec = SMALL.with_(precondition="sprandom", spr_op=0.2)
    with monkeypatch.context() as m:
        m.setattr(tp, "SPRANDOM_FILL", True)  # the older ssdpts
        with pytest.raises(Interrupted):
            start(tmp_path, spec, FakeExecutor(interrupt_on_batch=10))  # tp-1024KiB: fill, round 1, round 2 <- Ctrl-C
    run_dir = only_run_dir(tmp_path)
    assert any(s["test"] == "tp" and s["phase"] == "wipc" and s["label"].startswith("sprandom fill")
               for s in step_lines(run_dir))
    before = (run_dir / "steps.jsonl").read_bytes(), manifest(run_dir)
    ex = FakeExecutor()
    with pytest.raises(UserError) as exc:
        resume_run(run_dir, executor=ex)
    msg = str(exc.value)
    assert "\n" not in msg and "Throughput 1024KiB was preconditioned by the sprandom fill" in msg
    assert "start a new run of TP" in msg and "nothing was written" in msg
    assert not ex.batches and (run_dir / "steps.jsonl").read_bytes() == before[0] and manifest(run_dir) == before[1]
    # the same run made by this ssdpts (TP keeps its WIPC) resumes
    other = tmp_path / "now"
    other.mkdir()
    with pytest.raises(Interrupted):
        start(other, spec, FakeExecutor(interrupt_on_batch=10))
    _store, summary = resume_run(only_run_dir(other), executor=FakeExecutor())
    assert summary["status"] == "complete"
