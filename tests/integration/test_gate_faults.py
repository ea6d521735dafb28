"""The step gate's failure paths with real fio on a file target: a job that fails before it
reaches its barrier must not leave the next steps waiting for ever, and nothing may be left
behind (fio, its hook shells, the gate's directory)."""

from __future__ import annotations

from pathlib import Path
import re
import shutil
import time

import pytest

from ssdpts.engine import fio as fio_mod
from ssdpts.engine.base import Area, Batch
from ssdpts.errors import RunFailed
from ssdpts.pts.workload import Step, Workload

from .conftest import no_process_matching

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

MiB = 1024 * 1024


def batch(tmp_path: Path, n: int = 3, step_s: float = 0.3) -> Batch:
    target = tmp_path / "target.bin"
    with open(target, "wb") as f:
        f.truncate(64 * MiB)
    steps = [Step("lat", "", "round", 1, i, Workload("rand", 100, 4096, 1, 1), step_s) for i in range(1, n + 1)]
    return Batch(steps=steps, filename=str(target), area=Area(0, 64 * MiB), seed=1, ioengine="psync",
                 job_path=tmp_path / "round-001.fio", output_path=tmp_path / "round-001.json")


def test_a_job_that_fails_before_its_barrier_fails_the_round_without_hanging(tmp_path, monkeypatch):
    real_render = fio_mod.render_job_file

    def broken_second_step(b, gate=None):
        text, starts = real_render(b, gate)
        # fio cannot create this file: job s0002 fails in its set-up, before its exec_prerun
        text = re.sub(r"(\[s0002\]\n)", r"\1filename=/nonexistent/dir/x\n", text)
        return text, starts

    monkeypatch.setattr(fio_mod, "render_job_file", broken_second_step)
    msg, _ = _round_fails(tmp_path, monkeypatch)
    assert "did not start step 2" in msg


def _round_fails(tmp_path: Path, monkeypatch) -> tuple[str, float]:
    """Run a batch with a 6-s gate timeout (a loaded host can take seconds to start fio): it must
    fail in one line within 30 s and leave nothing running (fio, its hook shells) and the gate
    closed. Returns the message and the time taken."""
    monkeypatch.setattr(fio_mod, "START_TIMEOUT_S", 6.0)
    ex = fio_mod.FioExecutor()
    t0 = time.monotonic()
    with pytest.raises(RunFailed) as exc:
        ex.run(batch(tmp_path))
    took = time.monotonic() - t0
    assert took < 30 and "\n" not in str(exc.value)
    assert ex._gate is None, "the gate is closed once nothing runs"
    assert no_process_matching(str(tmp_path)), "fio or a hook shell of this batch is still running"
    ex.close()  # its device trace
    return str(exc.value), took


def test_a_cancelled_round_started_ahead_leaves_nothing(tmp_path):
    ex = fio_mod.FioExecutor()
    b = batch(tmp_path, n=2, step_s=0.5)
    b.next = Batch(steps=[Step(s.test, s.part, s.phase, 2, s.index, s.workload, s.duration_s) for s in b.steps],
                   filename=b.filename, area=b.area, seed=1, ioengine="psync",
                   job_path=tmp_path / "round-002.fio", output_path=tmp_path / "round-002.json")
    res = ex.run(b)
    assert len(res.measurements) == 2 and all(t["source"] == "gate" for t in res.timelines)
    assert res.timelines[1]["chained"] and res.timelines[1]["start_unix_s"] >= res.timelines[0]["end_unix_s"]
    assert ex._ahead is not None  # round 2's fio, started ahead, its first step released at round 1's end
    info = ex.cancel_ahead()
    assert info is not None and info["steps"] == 2
    assert not (tmp_path / "round-002.fio").exists() and not (tmp_path / "round-002.json").exists()
    assert ex._gate is None
    assert no_process_matching(str(tmp_path))
    ex.close()



def test_a_step_never_heard_to_end_fails_the_round_after_its_run_time(tmp_path, monkeypatch):
    """The end line of step 1 lost (its postrun reports nothing): fio finishes step 1 and waits at
    step 2's barrier for ever; the round fails once step 1 is START_TIMEOUT_S past its run time."""
    real_postrun = fio_mod.Gate.postrun
    monkeypatch.setattr(fio_mod.Gate, "postrun", lambda self, e: ":" if e.number == 1 else real_postrun(self, e))
    msg, took = _round_fails(tmp_path, monkeypatch)
    assert took >= 3.3 and "step 1" in msg and "not heard to end" in msg


def test_a_step_never_released_fails_the_round(tmp_path, monkeypatch):
    """Step 1 ends but the gate's release of step 2 is lost: the round fails START_TIMEOUT_S later."""
    monkeypatch.setattr(fio_mod.Gate, "_release_after", lambda self, prev, e: None)
    msg, _ = _round_fails(tmp_path, monkeypatch)
    assert "step 2" in msg and "not released" in msg


@pytest.mark.parametrize("collector_s", [0.0, 0.5])
def test_the_last_step_gets_its_after_snapshot_however_slow_the_collector(tmp_path, collector_s):
    """Telemetry is taken at every boundary, the last step's end included (the runner matches each
    step to the snapshots nearest its start and end). A collector slower than a step (smartctl
    under TCG takes ~1 s, steps here 0.2 s) must still get the final boundary: seen in the lab, fio
    had exited while the collector ran, and the last step of each round had no "after"."""
    calls: list[tuple[int, float]] = []

    def collect(i: int) -> None:
        calls.append((i, time.time()))
        time.sleep(collector_s)

    ex = fio_mod.FioExecutor()
    try:
        for rnd in range(3):
            b = batch(tmp_path, n=3, step_s=0.2)
            b.job_path, b.output_path = tmp_path / f"round-{rnd}.fio", tmp_path / f"round-{rnd}.json"
            b.on_boundary = collect
            calls.clear()
            res = ex.run(b)
            last_start = res.timelines[-1]["start_unix_s"]
            assert calls and calls[-1][0] == 3, calls
            assert calls[-1][1] > last_start, (calls, last_start)
    finally:
        ex.close()
