"""HIR and XSR interrupted, resumed and compared with real fio on a real device (zram): the
FakeExecutor proves the runner's resume and comparison logic for the extended tests
(tests/unit/test_extended_runner.py); here the same paths run end to end through the command — a
SIGINT inside HIR's wait states, 'ssdpts resume' to the end, every summary value recomputed from
fio's raw json+, then 'ssdpts compare' of that run against a second one, its figures read back
from the two summaries."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from .conftest import finished_steps, ssdpts
from .test_extended_devices import FAST, recompute_extended
from .test_run_devices import _fio_children_gone, run_dir_of, steps_of

pytestmark = pytest.mark.root


def _wait_states_done(out) -> int:
    dirs = [d for d in out.iterdir() if d.is_dir()] if out.exists() else []
    if not dirs:
        return 0
    return sum(1 for s in finished_steps(dirs[0] / "steps.jsonl") if s["part"] == "wait-states")


def test_hir_xsr_interrupted_in_the_wait_states_resume_and_compare(make_zram, tmp_path):
    dev = make_zram(256 * 2**20)
    env = {"SSDPTS_DB": str(tmp_path / "results.db")}
    out = tmp_path / "a"
    proc = subprocess.Popen(["ssdpts", "run", "hir", "xsr", "--target", dev, *FAST, "--destroy-data-on", dev,
                             "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})
    try:
        t0 = time.monotonic()
        # 1 of HIR's 5 wait states (each 3 bursts + 3 baseline steps): the other 4 (24 steps) are the
        # margin for the signal to land within them on a loaded host
        while _wait_states_done(out) < 6:
            if proc.poll() is not None:
                pytest.fail(f"ssdpts ended before the wait states ({proc.returncode}): {proc.stderr.read()}")
            if time.monotonic() - t0 > 300:
                pytest.fail("HIR never reached its wait states")
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    run = run_dir_of(out)
    assert _fio_children_gone(run), "fio outlived ssdpts"
    assert proc.returncode == 128 + signal.SIGINT, err
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "interrupted"
    before = steps_of(run)
    assert 6 <= sum(1 for s in before if s["part"] == "wait-states") < 30
    assert not any(s["test"] == "xsr" for s in before)

    r = ssdpts("resume", str(run), "--destroy-data-on", dev, "--quiet", env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    after = steps_of(run)
    assert after[: len(before)] == before, "a finished step changed or was lost"
    keys = [(s["test"], s["part"], s["phase"], s["round"], s["index"]) for s in after]
    assert len(keys) == len(set(keys)), "a step is duplicated"
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "complete"
    assert [x["previous_status"] for x in man["resumptions"]] == ["interrupted"]
    recompute_extended(run)  # every wait state's 3 bursts and baseline steps, XSR's groups, from json+

    out_b = tmp_path / "b"
    r = ssdpts("run", "hir", "xsr", "--target", dev, *FAST, "--destroy-data-on", dev, "--out", str(out_b), "--quiet",
               env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    run_b = run_dir_of(out_b)
    recompute_extended(run_b)

    r = ssdpts("compare", str(run), str(run_b), "--format", "json", "--out", str(tmp_path / "cmp.json"),
               env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert [x["status"] for x in cmp["runs"]] == ["complete", "complete"] and not cmp["differences"]
    rows = {(p["part"], r["metric"], r["point"]): r for p in cmp["parts"] for r in p["rows"]}
    summaries = [json.loads((d / "summary.json").read_text()) for d in (run, run_b)]
    for i, s in enumerate(summaries):  # each figure is the run's own summary value (recomputed above)
        assert rows["hir-precondition", "iops", "precondition"]["values"][i] == pytest.approx(
            s["parts"]["hir-precondition"]["table"]["rows"][0]["value"], rel=1e-12)
        for seg in s["parts"]["hir-wait-states"]["table"]["segments"]:
            metric = "burst_iops" if seg["cell"].startswith("ws") else "baseline_iops"
            assert rows["hir-wait-states", metric, seg["cell"].upper()]["values"][i] == pytest.approx(seg["iops"], rel=1e-12)
        series = s["parts"]["xsr"]["table"]["series"]
        for g in ("g1", "g2", "g3"):
            mbs = [m["mb_per_s"] for m in series if m["group"] == g]
            assert rows["xsr", "mb_per_s", g.upper()]["values"][i] == pytest.approx(sum(mbs) / len(mbs), rel=1e-9)
            assert rows["xsr", "lat_max_us", g.upper()]["values"][i] == pytest.approx(
                max(m["lat_max_us"] for m in series if m["group"] == g), rel=1e-12)
    for r in rows.values():  # seed 004's delta against the baseline (the first run)
        a, b = r["values"][1], r["values"][0]
        if a and b:
            want = a / b - 1 if r["kind"] == "speed" else b / a - 1
            assert r["deltas"] == [None, pytest.approx(want, rel=1e-9)], r
