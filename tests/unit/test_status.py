"""ssdpts status on run directories made by the real runner with the FakeExecutor: every state,
the process found through /proc/locks (a lock this test holds), what a run is doing from the tail
of its steps.jsonl (the same tracking verdicts as the analysis of the whole file), the cheap
damage check, and that status reads without writing or locking anything. Real fio runs (running,
killed, interrupted, failed, damaged, a tree of hundreds): tests/integration/test_status_real.py."""

from __future__ import annotations

import builtins
import fcntl
import json
import os
from pathlib import Path
import shutil

import pytest

from ssdpts import status as S
from ssdpts.cli.main import main
from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import Interrupted, RunFailed
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.session import start_run

MiB = 1 << 20


def make(root: Path, name: str, tests=("iops",), max_rounds=6, **fake) -> Path:
    target = open_target(str(root / f"{name}.img"), size_bytes=256 * MiB)
    out = root / "runs"
    try:
        start_run(RunSpec(tests=tests, step_seconds=1, max_rounds=max_rounds), target,
                  executor=FakeExecutor(**fake), out_dir=out, confirm=None, argv=["test"])
    except (Interrupted, RunFailed):
        pass
    return max(out.iterdir(), key=lambda p: p.stat().st_mtime_ns)


def never_steady(step) -> float:  # every round 10% more IOPS: no window passes
    return 1000.0 * (1.1 ** step.round)


def steady(step) -> float:
    return 1000.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("status")
    return {
        "complete": make(root, "c", model=steady),
        "interrupted": make(root, "i", interrupt_on_batch=5),
        "failed": make(root, "f", fail_on_batch=4),
        "long": make(root, "l", tests=("lat",), max_rounds=20, model=never_steady),
        "two": make(root, "t", tests=("tp", "lat"), model=steady),
    }


def copy(run: Path, tmp: Path) -> Path:
    dest = tmp / "runs" / run.name
    shutil.copytree(run, dest)
    return dest


def edit_manifest(run: Path, **changes) -> None:
    p = run / "manifest.json"
    p.write_text(json.dumps({**json.loads(p.read_text()), **changes}))


def cut_steps(run: Path, keep) -> None:
    """steps.jsonl with only the lines ``keep(record)`` holds: the run as it was when they were all."""
    lines = (run / "steps.jsonl").read_text().splitlines(keepends=True)
    (run / "steps.jsonl").write_text("".join(ln for ln in lines if keep(json.loads(ln))))


def one(run: Path, locks=None, **kw) -> S.RunStatus:
    return S.read_status(run, {} if locks is None else locks, **kw)


def test_complete_interrupted_failed(runs):
    c = one(runs["complete"])
    assert (c.state, c.alive, c.pid, c.problems) == ("complete", False, None, [])
    assert c.tests == ["iops"] and c.stop_reasons == {"iops": "steady-state"} and c.elapsed_s is not None
    i = one(runs["interrupted"])
    assert i.state == "interrupted" and i.part == "IOPS" and i.phase == "round" and i.round == 4 and i.step == 1
    assert [t.name for t in i.tracking] == ["RND 4KiB 0/100 IOPS", "RND 64KiB 65/35 IOPS", "RND 1024KiB 100/0 IOPS"]
    assert all(t.rounds == 3 and t.reached is None and t.value > 0 for t in i.tracking)  # 3 rounds: no window yet
    assert i.eta_s is None  # not running: nothing is left to wait for
    f = one(runs["failed"])
    assert f.state == "failed" and "I/O error" in f.error


def test_tracking_from_the_tail_is_the_analysis_of_the_whole_file(runs):
    """20 rounds of LAT, never steady: the tail (6 rounds, tracked cells parsed) gives the verdicts
    analysis.py gives on every step."""
    from ssdpts.results import analysis
    from ssdpts.pts.plan import build_parts
    from ssdpts.results.records import Manifest
    from ssdpts.results.steprecord import read_steps
    from ssdpts.store import RunStore

    run = runs["long"]
    man = json.loads((run / "manifest.json").read_text())
    edit = copy(run, run.parent.parent / "long-running")
    edit_manifest(edit, status="running")
    st = one(edit)  # manifest says running, no process holds the lock: killed
    assert st.state == "interrupted" and "process is gone" in st.note
    spec, target = Manifest.from_dict(man).run_spec_and_target()
    (part,) = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    rounds = analysis.complete_rounds(analysis.part_records(read_steps(RunStore(run)), part), part)
    assert len(rounds) == 20
    want = analysis.verdicts(rounds, part)
    series = analysis.tracking_series(rounds, part)
    assert len(st.tracking) == len(want) == 1  # LAT tracks RND 4KiB 0/100 mean response time
    for t, v in zip(st.tracking, want):
        assert t.value == series[t.name][1][-1]
        assert t.reached is False and v.reached is False
        assert t.range_pct == pytest.approx(100 * v.range / v.average)
        assert t.excursion_pct == pytest.approx(100 * v.excursion / v.average)
    tail = S.tail_records(run, {("lat", ""): {t.key for t in part.tracking}})
    assert {r["round"] for r in tail} == set(range(15, 21))  # the last 6 rounds only
    assert all("measurement" in r for r in tail if r["key"] in {t.key for t in part.tracking})
    assert not any("measurement" in r for r in tail if r["key"] not in {t.key for t in part.tracking})


def test_a_process_holding_the_lock_is_running(runs, tmp_path):
    run = copy(runs["long"], tmp_path)
    cut_steps(run, lambda r: r["round"] <= 12)  # as it was after round 12 of at most 20
    edit_manifest(run, status="running", ended=None, parts={})
    fd = os.open(run / ".lock", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        locks = S.held_locks()
        st = S.read_status(run, locks, now=0.0)
        assert (st.state, st.alive, st.pid) == ("running", True, os.getpid())
        assert (st.part, st.round, st.step, st.steps_in_round) == ("Latency", 13, 1, 9)
        assert st.pace == pytest.approx(1.0, abs=0.01)  # the FakeExecutor keeps to the plan
        assert st.eta_s == pytest.approx((9 * st.pace, (9 + 7 * 9) * st.pace))  # this round, up to round 20
        (row,) = [r for r in S.scan([tmp_path]) if r.path == str(run)]
        assert row.state == "running" and row.pid == os.getpid()
    finally:
        os.close(fd)
    assert S.read_status(run, S.held_locks()).state == "interrupted"  # the lock is gone with its holder


def test_time_left_counts_the_rounds_still_allowed_and_the_parts_after(runs, tmp_path):
    run = copy(runs["two"], tmp_path)
    # as it was after TP 1024KiB's round 2: TP 128KiB and LAT come after
    cut_steps(run, lambda r: r["part"] == "1024KiB" and r["round"] <= 2)
    edit_manifest(run, status="running", parts={})
    fd = os.open(run / ".lock", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        st = S.read_status(run, S.held_locks(), now=0.0)
    finally:
        os.close(fd)
    assert st.state == "running" and st.part_id == "tp-1024KiB" and (st.round, st.step) == (3, 1)
    assert (st.parts_done, st.parts_total) == (0, 3)
    # at 1 s per step: TP rounds are 2 steps, LAT rounds 9; 6 rounds at most (--max-rounds 6)
    lo, hi = st.eta_s
    assert 1 <= st.pace < 1.1
    # this round (3), rounds 4 and 5 to fill a window; then 5 to 6 rounds of TP 128KiB and of LAT
    assert lo == pytest.approx((2 + 2 * 2 + 5 * 2 + 5 * 9) * st.pace)
    assert hi == pytest.approx((2 * 4 + 6 * 2 + 6 * 9) * st.pace)
    assert "WIPC" in st.eta_note


def test_a_run_of_another_host_is_not_called_dead(runs, tmp_path):
    run = copy(runs["interrupted"], tmp_path)
    edit_manifest(run, status="running", host={**json.loads((run / "manifest.json").read_text())["host"],
                                              "hostname": "rack7-node3"})
    st = one(run, hostname="here")
    assert st.state == "running" and st.alive is None and "rack7-node3" in st.note


@pytest.mark.parametrize("damage, needle", [
    ("summary", "summary.json has"),
    ("no-summary", "summary.json is missing"),
    ("cut-steps", "steps.jsonl ends in a cut-off line"),
    ("manifest", "corrupt"),
])
def test_the_cheap_check_marks_damage(runs, tmp_path, damage, needle):
    run = copy(runs["complete"], tmp_path)
    if damage == "summary":
        with open(run / "summary.json", "a") as f:
            f.write(" ")
    elif damage == "no-summary":
        (run / "summary.json").unlink()
    elif damage == "cut-steps":
        with open(run / "steps.jsonl", "ab") as f:
            f.write(b'{"format":1,"test":"iops"')
    else:
        (run / "manifest.json").write_text('{"format": 1, "status": "comp')
    st = one(run)
    assert st.state == "damaged" and any(needle in p for p in st.problems), st.problems


def test_missing_raw_files_are_damage(runs, tmp_path):
    run = copy(runs["complete"], tmp_path)
    (run / "fio" / "iops" / "round-002.json").unlink()
    st = one(run)
    assert st.state == "damaged" and st.problems == ["fio/iops/round-002.json is missing (round-002 of iops)"]
    (run / "fio" / "iops" / "round-002.json").write_text("{}")
    assert one(run).state == "complete"  # present: the cheap check does not read contents ('ssdpts verify' does)


@pytest.mark.parametrize("block", [1, 2, 3, 5, 8, 64])
@pytest.mark.parametrize("tail", [b"", b"cut-off", b"a long line being writ"])
def test_lines_are_read_backwards_without_the_line_in_flight(tmp_path, block, tail):
    p = tmp_path / "steps.jsonl"
    p.write_bytes(b"one\ntwo\n\nthree 3\n" + tail)
    assert list(S._lines_backwards(p, block)) == [b"three 3", b"two", b"one"]
    p.write_bytes(tail)
    assert list(S._lines_backwards(p, block)) == []


def test_proc_locks_parsing(tmp_path):
    p = tmp_path / "locks"
    p.write_text("1: FLOCK  ADVISORY  WRITE 4242 fd:01:123456 0 EOF\n"
                 "1: -> FLOCK  ADVISORY  WRITE 4343 fd:01:123456 0 EOF\n"
                 "2: POSIX  ADVISORY  WRITE 77 08:02:99 0 EOF\n"
                 "3: FLOCK  ADVISORY  WRITE 88 103:05:7 0 EOF\n")
    assert S.held_locks(str(p)) == {(0xfd, 1, 123456): 4242, (0x103, 5, 7): 88}
    assert S.held_locks(str(tmp_path / "absent")) is None


def test_status_reads_without_writing_or_locking(runs, tmp_path, monkeypatch):
    for r in runs.values():
        copy(r, tmp_path)
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in tmp_path.rglob("*") if p.is_file()}

    def refuse(*a, **kw):
        raise AssertionError(f"status locked or wrote: {a}")

    real_open, real_os_open = builtins.open, os.open

    def ro_open(file, mode="r", *a, **kw):
        if any(c in mode for c in "wax+"):
            refuse(file, mode)
        return real_open(file, mode, *a, **kw)

    def ro_os_open(path, flags, *a, **kw):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
            refuse(path, flags)
        return real_os_open(path, flags, *a, **kw)

    monkeypatch.setattr(fcntl, "flock", refuse)
    monkeypatch.setattr(fcntl, "lockf", refuse)
    monkeypatch.setattr(builtins, "open", ro_open)
    monkeypatch.setattr(os, "open", ro_os_open)
    found = S.scan([tmp_path])
    monkeypatch.undo()
    assert sorted(r.state for r in found) == ["complete", "complete", "complete", "failed", "interrupted"]
    after = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before


def test_pace_is_the_median_round_period_over_its_plan():
    recs = [{"test": "lat", "phase": "round", "round": r, "index": 9, "end_time": t}
            for r, t in ((1, 100.0), (2, 112.0), (3, 121.0), (4, 136.0))]
    assert S.pace(recs, lambda r: 9.0) == pytest.approx(12.0 / 9)  # periods 12, 9, 15: median 12
    assert S.pace(recs[:1], lambda r: 9.0) == 1.0  # one round: no period yet
    assert S.pace(recs, lambda r: 20.0) == 1.0  # never faster than the plan


def test_cli(runs, tmp_path, capsys):
    for r in runs.values():
        copy(r, tmp_path)
    assert main(["status", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == {"interrupted": 1, "failed": 1, "complete": 3} and len(doc["runs"]) == 5
    assert [r["state"] for r in doc["runs"]] == ["interrupted", "failed", "complete", "complete", "complete"]
    assert main(["status", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "5 runs under" in text and "1 interrupted, 1 failed, 3 complete" in text
    assert "I/O error" in text and "3 complete runs not listed (--all lists them)" in text
    assert main(["status", str(tmp_path), "--all"]) == 0
    assert text.count("\n") < capsys.readouterr().out.count("\n")
    assert main(["status", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a directory" in err[0]
    assert main(["status", str(tmp_path), "--interval", "0"]) == 2


def test_watch_into_a_pipe_streams_frames_and_leaves_quietly(runs):
    """Into a pipe, --watch writes one text frame per interval (not one frame redrawn in place);
    Ctrl-C and a reader that goes away (| head) end it without a word on stderr."""
    import signal
    import subprocess
    import threading

    root = str(runs["complete"].parent)
    watch = subprocess.Popen(["ssdpts", "status", root, "--watch", "--interval", "0.2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    frames = 0
    stop = threading.Timer(30, watch.kill)  # a watch that draws one frame only must fail here, not hang
    stop.start()
    try:
        for line in watch.stdout:
            frames += " runs under " in line
            if frames == 3:
                break
    finally:
        watch.send_signal(signal.SIGINT)
        _, err = watch.communicate(timeout=60)
        stop.cancel()
    assert frames == 3 and watch.returncode == 130 and err == ""
    head = subprocess.run(f"ssdpts status {root} --watch --interval 0.1 | head -n 2", shell=True,
                          capture_output=True, text=True, timeout=60)
    assert len(head.stdout.splitlines()) == 2 and head.stderr == ""
    pipefail = subprocess.run(["bash", "-o", "pipefail", "-c",
                               f"ssdpts status {root} --watch --interval 0.1 | head -n 1 >/dev/null"], timeout=60)
    assert pipefail.returncode == 0  # the watcher itself ends with 0 when its reader goes away


def test_openmetrics_says_what_status_says(runs, tmp_path, capsys):
    """--openmetrics: every run's state, progress and tracking values as status's JSON has them,
    in a format Prometheus's own parser reads; the run id is the one the results library gives it."""
    from prometheus_client.parser import text_string_to_metric_families

    from ssdpts.cli.main import main
    from ssdpts.results.reader import read_run

    root = str(runs["complete"].parent)
    assert main(["status", root, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["status", root, "--openmetrics"]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith("# EOF")  # OpenMetrics on standard output
    fams = {f.name: f for f in text_string_to_metric_families(text.replace("# EOF", ""))}
    for r in doc["runs"]:
        mine = [s for s in fams["ssdpts_run_state"].samples if s.labels["run"] == r["name"]]
        assert {s.labels["state"]: s.value for s in mine if s.value == 1.0} == {r["state"]: 1.0}
        assert mine[0].labels["run_id"] == read_run(r["path"]).uid
        el = [s.value for s in fams["ssdpts_run_elapsed_seconds"].samples if s.labels["run"] == r["name"]]
        assert el == ([] if r["elapsed_s"] is None else [pytest.approx(r["elapsed_s"], abs=5)])
        tv = {s.labels["variable"]: s.value for s in fams["ssdpts_tracking_value"].samples
              if s.labels["run"] == r["name"]}
        assert tv == {t["name"]: pytest.approx(t["value"]) for t in r["tracking"] if t["value"] is not None}
    assert len(doc["runs"]) == 5 and any(r["tracking"] for r in doc["runs"])  # not an empty comparison
    # the textfile: the Prometheus text format, replaced whole
    out = tmp_path / "ssdpts.prom"
    assert main(["status", root, "--openmetrics", str(out)]) == 0
    again = {f.name for f in text_string_to_metric_families(out.read_text())}
    assert {"ssdpts_run_state", "ssdpts_tracking_value", "ssdpts_run_elapsed_seconds"} <= again
    assert "# EOF" not in out.read_text()
    assert main(["status", root, "--openmetrics", "--json"]) == 2
    assert main(["status", root, "--serve", "nowhere"]) == 2
    assert main(["status", root, "--watch", "--openmetrics"]) == 2
