"""Many devices on one host (issue 17), without devices: the supervisor (parallel.py) with scripted
child processes that speak the events protocol, the gate in session.start_run, CPU lists and the
CPU-bound warning on the FakeExecutor, and the command-line plumbing (cli/parallel.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import sys
import threading
import time

import pytest

from ssdpts.run import cpus, parallel
from ssdpts.cli import parallel as cli_parallel
from ssdpts.cli.main import build_parser
from ssdpts.device.target import open_target
from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fake import FakeExecutor
from ssdpts.engine.jobfile import render_job_file
from ssdpts.errors import Signalled, UserError
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.session import start_run
from ssdpts.run.request import unfinished_runs

# A child that speaks the protocol of progress.EventProgress: its mode is its first argument.
CHILD = r'''
import json, os, signal, sys, time
mode, marker = sys.argv[1], sys.argv[2]
ev = os.fdopen(int(sys.argv[sys.argv.index("--events-fd") + 1]), "w", buffering=1)
def emit(kind, **kw):
    ev.write(json.dumps({"ev": kind, **kw}) + "\n")
if mode == "refuse":
    sys.stderr.write("ssdpts: /dev/sdz is mounted at /srv: unmount it\n")
    sys.exit(2)
stop = []
if mode == "wait":  # before it says 'round', which is when the test interrupts it
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
emit("ready")
if sys.stdin.readline().strip() != "go":
    sys.exit(2)
open(marker, "w").close()  # 'written to the device'
emit("part", title="[1/1] IOPS")
emit("round", round=1, of=5, steps=49, step_s=0.1)
if mode == "crash":
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "wait":
    while not stop:
        time.sleep(0.01)
    emit("end", status="interrupted", run_dir="/runs/" + marker, error="interrupted by SIGINT")
    sys.exit(130)
emit("round_done", round=1, tracking=["RND 4KiB 0/100 IOPS: 1 IOPS"], stop_reason=None, steady="window filling")
emit("end", status="complete", run_dir="/runs/" + os.path.basename(marker))
'''


class Recorder:
    def __init__(self):
        self.events = []

    def event(self, child, ev):
        self.events.append((child.label, ev["ev"]))

    def tick(self):
        pass

    def close(self):
        pass


def children(tmp_path: Path, *modes: str) -> list[parallel.Child]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return [parallel.Child(label=f"dev{i}", argv=[m, str(tmp_path / f"written-{i}")],
                           command=[sys.executable, str(script)]) for i, m in enumerate(modes)]


def test_every_child_runs_after_every_check_passed(tmp_path):
    kids = children(tmp_path, "ok", "ok", "ok")
    view = Recorder()
    assert parallel.supervise(kids, view) == 0
    assert [c.status for c in kids] == ["complete"] * 3
    assert [c.run_dir for c in kids] == [f"/runs/written-{i}" for i in range(3)]
    assert parallel.exit_code(kids, 0) == 0
    for c in kids:  # every device passed its checks before any was told to go
        assert view.events.index((c.label, "ready")) < min(view.events.index((o.label, "part")) for o in kids)


def test_one_refusal_stops_every_child_before_anything_is_written(tmp_path):
    kids = children(tmp_path, "ok", "refuse", "ok")
    parallel.supervise(kids, Recorder())
    assert [c.status for c in kids] == ["stopped", "refused", "stopped"]
    assert kids[1].error == "ssdpts: /dev/sdz is mounted at /srv: unmount it"
    assert not list(tmp_path.glob("written-*"))
    assert parallel.exit_code(kids, 0) == 2


def test_a_crashed_child_fails_alone(tmp_path):
    kids = children(tmp_path, "ok", "crash", "ok")
    parallel.supervise(kids, Recorder())
    assert [c.status for c in kids] == ["complete", "failed", "complete"]
    assert kids[1].exit_code == -signal.SIGKILL
    assert parallel.exit_code(kids, 0) == 1


def test_a_signal_is_passed_to_every_child_and_all_are_awaited(tmp_path):
    kids = children(tmp_path, "wait", "wait")

    def handler(signum, frame):
        raise Signalled(signum)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        def interrupt():
            while not all(c.status == "running" and c.state.get("round") for c in kids):
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        caught = parallel.supervise(kids, Recorder())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert caught == signal.SIGINT
    assert [c.status for c in kids] == ["interrupted", "interrupted"]
    assert [c.exit_code for c in kids] == [130, 130]
    assert parallel.exit_code(kids, caught) == 130


def test_plain_view_prefixes_every_line_with_its_device(tmp_path):
    import io

    buf = io.StringIO()
    kids = children(tmp_path, "ok", "ok")
    parallel.supervise(kids, parallel.PlainView(buf))
    lines = buf.getvalue().splitlines()
    for c in kids:
        mine = [ln.split(" ", 1)[1] for ln in lines if ln.split(" ", 1)[1].startswith(c.label + ":")]
        assert mine == [f"{c.label}: checks passed", f"{c.label}: [1/1] IOPS", f"{c.label}: round 1/5, 49 steps x 0.1 s",
                        f"{c.label}:   RND 4KiB 0/100 IOPS: 1 IOPS", f"{c.label}: complete: /runs/written-{c.label[-1]}"]


# --- the gate in session.start_run ------------------------------------------------------------


def test_a_refused_gate_leaves_no_run_directory_and_no_write(tmp_path):
    target = open_target(str(tmp_path / "t.img"), size_bytes=256 * 2**20)
    ex = FakeExecutor()

    def refuse():
        raise UserError("not started")

    with pytest.raises(UserError, match="not started"):
        start_run(RunSpec(tests=("iops",), step_seconds=1, max_rounds=5), target, executor=ex,
                  out_dir=tmp_path / "runs", confirm=None, argv=["test"], ready=refuse)
    assert not (tmp_path / "runs").exists() and not ex.batches


# --- CPUs -------------------------------------------------------------------------------------


def test_cpu_lists():
    assert cpus.parse_list("0-2,5") == [0, 1, 2, 5]
    assert cpus.format_list([5, 0, 1, 2]) == "0-2,5"
    with pytest.raises(UserError, match="not a CPU list"):
        cpus.parse_list("two")


def test_cpus_per_device_refused_when_too_few(monkeypatch):
    monkeypatch.setattr(cpus, "usable", lambda: [0, 1, 2, 3])
    assert cpus.split(2, 2) == ["0-1", "2-3"]
    with pytest.raises(UserError, match=r"--cpus-per-device 2 needs 6 CPUs for 3 targets, ssdpts may use 4"):
        cpus.split(2, 3)
    with pytest.raises(UserError, match="CPU 7 is not available"):
        cpus.check_list("3,7")


def test_cpus_allowed_in_the_job_file():
    from ssdpts.pts.workload import Step, Workload

    step = Step("iops", "", "round", 1, 1, Workload("rand", 0, 4096, 1, 1), 1.0)
    text, _ = render_job_file(Batch(steps=[step], filename="/dev/x", area=Area(0, 2**20), seed=1,
                                    ioengine="libaio", cpus_allowed="2-3"))
    assert "cpus_allowed=2-3" in text.splitlines()
    text, _ = render_job_file(Batch(steps=[step], filename="/dev/x", area=Area(0, 2**20), seed=1, ioengine="libaio"))
    assert "cpus_allowed" not in text


class Messages:
    def __init__(self):
        self.messages = []

    def __getattr__(self, name):
        return lambda *a, **k: None

    def message(self, text):
        self.messages.append(text)


@pytest.mark.parametrize("iops, bound", [(2_000_000.0, True), (1000.0, False)])
def test_cpu_bound_steps_are_warned_once_per_part(tmp_path, monkeypatch, iops, bound):
    """The fake's CPU grows with the IO rate: 2M IOPS on one thread pinned to CPU 0 uses it all."""
    monkeypatch.setattr(cpus, "usable", lambda: [0, 1])
    target = open_target(str(tmp_path / "t.img"), size_bytes=256 * 2**20)
    ex = FakeExecutor(model=lambda step: iops)
    progress = Messages()
    spec = RunSpec(tests=("iops",), step_seconds=1, max_rounds=5, threads=1, iodepth=4, cpus="0")
    store, _ = start_run(spec, target, executor=ex, out_dir=tmp_path / "runs", confirm=None, argv=["test"],
                         progress=progress)
    warned = [m for m in progress.messages if m.startswith("CPU-bound")]
    assert len(warned) == (1 if bound else 0), progress.messages
    assert {b.cpus_allowed for b in ex.batches} == {"0"}
    man = json.loads((store.path / "manifest.json").read_text())
    assert man["run_spec"]["cpus"] == "0"
    step = json.loads((store.path / "steps.jsonl").read_text().splitlines()[-1])
    used = cpus.cpus_used(step["measurement"].get("cpu_usr_pct"), step["measurement"].get("cpu_sys_pct"), 1)
    assert cpus.cpu_bound(used, 1, "0") is bound


# --- command line -----------------------------------------------------------------------------


def run_parser():
    return build_parser().parse_args(["run", "iops", "--target", "x"]).run_parser


def test_solo_argv_keeps_the_shared_options_only():
    argv = ["iops", "--target", "/dev/a", "--step-seconds=0.1", "--target=/dev/b", "--destroy", "/dev/a",
            "--max-rounds", "5", "lat", "--cpus-per-device", "2", "--quiet", "--out", "runs"]
    assert cli_parallel.solo_argv(run_parser(), argv) == ["--step-seconds=0.1", "--max-rounds", "5", "--out", "runs"]
    assert cli_parallel.solo_command(["x", "run", "iops", "--events-fd", "7", "--target", "a"]) == \
        ["ssdpts", "run", "iops", "--target", "a"]


def test_targets_from_a_file_and_each_device_once(tmp_path):
    f = tmp_path / "targets"
    f.write_text("# rack 1\n/dev/a\n\n/dev/b  # bay 2\n")
    args = build_parser().parse_args(["run", "iops", "--target", "/dev/c", "--targets-from", str(f)])
    assert cli_parallel.targets_of(args) == ["/dev/c", "/dev/a", "/dev/b"]
    args = build_parser().parse_args(["run", "iops", "--target", "/dev/a", "--targets-from", str(f)])
    with pytest.raises(UserError, match="/dev/a is named twice"):
        cli_parallel.targets_of(args)
    with pytest.raises(UserError, match="no target"):
        cli_parallel.targets_of(build_parser().parse_args(["run", "iops"]))


def test_each_confirmation_goes_to_the_target_it_names(tmp_path):
    a = open_target(str(tmp_path / "a.img"), size_bytes=2**20)
    b = open_target(str(tmp_path / "b.img"), size_bytes=2**20)
    assert cli_parallel.confirmations([b.path], [a, b]) == [None, b.path]
    with pytest.raises(UserError, match="names none of the targets"):
        cli_parallel.confirmations(["/dev/sdq"], [a, b])


def test_resume_takes_run_directories_or_the_directory_holding_them(tmp_path):
    for name, status in (("r1", "interrupted"), ("r2", "complete"), ("r3", "failed")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({"status": status}))
    assert unfinished_runs([str(tmp_path)]) == [tmp_path / "r1", tmp_path / "r3"]
    assert unfinished_runs([str(tmp_path / "r2")]) == [tmp_path / "r2"]  # says 'complete' itself
    assert unfinished_runs([str(tmp_path / "nope")]) == [tmp_path / "nope"]  # says 'not a directory'
    (tmp_path / "r1" / "manifest.json").write_text(json.dumps({"status": "complete"}))
    (tmp_path / "r3" / "manifest.json").write_text(json.dumps({"status": "complete"}))
    with pytest.raises(UserError, match="holds no unfinished run directory"):
        unfinished_runs([str(tmp_path)])


def test_event_progress_speaks_the_supervisors_protocol():
    import io

    from ssdpts.run.progress import EventProgress
    from ssdpts.pts.plan import build_parts

    part = build_parts(RunSpec(tests=("iops",), step_seconds=1, max_rounds=5), 2**30, 512)[0]
    r, w = os.pipe()
    ev = EventProgress(w)
    ev.part_started(part, 1, 1)
    ev.round_started(part, 2, 49, 1.0, limit=5)
    ev.round_finished(part, 2, {"stop_reason": None, "tracking": [
        {"name": "RND 4KiB 0/100 IOPS", "unit": "IOPS", "value": 5.0, "reached": None, "range_pct": None,
         "excursion_pct": None}]})
    assert ev.ready(io.StringIO("go\n")) is True
    assert ev.ready(io.StringIO("")) is False  # the supervisor closed our stdin: stop
    ev.ended("complete", Path("/runs/x"))
    ev.stream.close()
    with os.fdopen(r) as f:
        got = [json.loads(line) for line in f]
    assert [g["ev"] for g in got] == ["part", "round", "round_done", "ready", "ready", "end"]
    assert got[0]["title"] == "[1/1] IOPS" and got[1] == {"ev": "round", "round": 2, "of": 5, "steps": 49,
                                                         "step_s": 1.0}
    assert got[2]["steady"] == "window filling" and got[5]["run_dir"] == "/runs/x"
