"""ssdpts status on real runs (fio, LAT on file targets): one running (its process seen through the
lock it holds), then killed with SIGKILL (the manifest still says running: status says interrupted,
process gone), one stopped by SIGINT, one failed (fio exits 1 in round 2), one complete and a copy
of it damaged; and a tree of hundreds of run directories. status never takes the runs' locks: a
run started while status watches it runs as usual."""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import signal
import stat
import subprocess
import threading
import time

import pytest

from ssdpts.status import scan

from .conftest import finished_steps

REAL_FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(REAL_FIO is None, reason="fio is not installed: apt-get install fio")

FAIL_IN_ROUND_2 = """#!/bin/sh
# fio, except that round 2's run exits 1. Told by its output file, not by counting calls: the next
# round's fio starts while the one before runs (it waits at the step gate), so calls overlap.
case "$*" in *--output=*/round-002.json*) exit 1;; esac
exec "$REAL_FIO" "$@"
"""


def lat(out: Path, target: Path, step: str, rounds: str, env=None, fio: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(["ssdpts", "run", "lat", "--target", str(target), "--size", "64M", "--step-seconds", step,
                             "--max-rounds", rounds, "--out", str(out), "--quiet", *(["--fio", str(fio)] if fio else [])],
                            env=env or dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_dir(out: Path) -> Path:
    (d,) = [p for p in out.iterdir() if p.is_dir()]
    return d


def wait_for_rounds(run: Path, n: int, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if sum(1 for rec in finished_steps(run / "steps.jsonl") if rec["phase"] == "round") >= 9 * n:
            return
        time.sleep(0.2)
    pytest.fail(f"{run} did not save {n} rounds in {timeout} s")


def status_json(*dirs: Path) -> dict:
    proc = subprocess.run(["ssdpts", "status", *map(str, dirs), "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("status-real")
    env = {**os.environ, "SSDPTS_DB": str(root / "results.db")}
    long_ = {name: lat(root / name, root / f"{name}.img", "0.5", "25", env) for name in ("killed", "stopped")}
    bindir = root / "bin"
    bindir.mkdir()
    (bindir / "fio").write_text(FAIL_IN_ROUND_2)
    (bindir / "fio").chmod(0o755 | stat.S_IXUSR)
    failed = lat(root / "failed", root / "failed.img", "0.1", "5",
                 {**env, "PATH": f"{bindir}:{env['PATH']}", "REAL_FIO": REAL_FIO}, fio=bindir / "fio")
    complete = lat(root / "complete", root / "complete.img", "0.1", "5", env)
    assert failed.wait(timeout=600) == 1 and complete.wait(timeout=600) == 0, (failed.stderr.read(), complete.stderr.read())
    out = {"failed": run_dir(root / "failed"), "complete": run_dir(root / "complete")}
    for name, proc in long_.items():
        out[name] = run_dir(root / name)
        wait_for_rounds(out[name], 2)
    yield root, out, long_
    for proc in long_.values():  # a failed test leaves nothing running
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)


def stop_long(procs: dict) -> None:
    """SIGKILL the "killed" run and SIGINT the "stopped" one (done once: the tests that need them
    stopped do not depend on each other)."""
    if procs["killed"].poll() is None:
        procs["killed"].send_signal(signal.SIGKILL)
    if procs["stopped"].poll() is None:
        procs["stopped"].send_signal(signal.SIGINT)
    assert procs["killed"].wait(timeout=60) == -signal.SIGKILL and procs["stopped"].wait(timeout=120) == 130


def test_every_state(runs):
    root, dirs, procs = runs
    doc = status_json(root)
    by = {Path(r["path"]).name: r for r in doc["runs"]}
    for name in ("killed", "stopped"):  # both still running
        r = by[dirs[name].name]
        assert (r["state"], r["alive"], r["pid"]) == ("running", True, procs[name].pid), r
        assert r["part"] == "Latency" and r["round"] >= 3 and 1 <= r["step"] <= 9 and r["steps_in_round"] == 9
        assert r["tracking"][0]["name"] == "RND 4KiB 0/100 mean response time" and r["tracking"][0]["value"] > 0
        lo, hi = r["eta_s"]
        assert 0 < lo <= hi <= 25 * 9 * 0.5 * r["pace"] + 1
    assert by[dirs["failed"].name]["state"] == "failed" and "fio failed (exit 1)" in by[dirs["failed"].name]["error"]
    assert by[dirs["failed"].name]["round"] == 2  # the round it failed in: round 1's 9 steps are saved
    assert by[dirs["complete"].name]["state"] == "complete" and by[dirs["complete"].name]["problems"] == []

    stop_long(procs)
    assert json.loads((dirs["killed"] / "manifest.json").read_text())["status"] == "running"
    doc = status_json(root)
    by = {Path(r["path"]).name: r for r in doc["runs"]}
    killed, stopped = by[dirs["killed"].name], by[dirs["stopped"].name]
    assert (killed["state"], killed["alive"], killed["manifest_status"]) == ("interrupted", False, "running")
    assert "process is gone" in killed["note"] and killed["eta_s"] is None
    assert (stopped["state"], stopped["manifest_status"], stopped["alive"]) == ("interrupted", "interrupted", False)
    assert doc["counts"] == {"interrupted": 2, "failed": 1, "complete": 1}

    damaged = root / "copies" / f"{dirs['complete'].name}-copy"
    shutil.copytree(dirs["complete"], damaged)
    (damaged / "fio" / "lat" / "round-004.json").unlink()
    r = status_json(damaged.parent)["runs"][0]
    assert r["state"] == "damaged" and r["problems"] == ["fio/lat/round-004.json is missing (round-004 of lat)"]


def test_status_takes_no_lock_a_run_needs(runs, tmp_path):
    """While status watches in a loop, a run starts, measures and completes as usual."""
    root, dirs, _ = runs
    watch = subprocess.Popen(["ssdpts", "status", str(tmp_path), "--watch", "--json", "--interval", "0.1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(watch.stdout.readline, "")), daemon=True)
    reader.start()

    def states() -> list[str]:
        return [r["state"] for ln in list(lines) if ln.startswith("{") for r in json.loads(ln)["runs"]]

    try:
        proc = lat(tmp_path / "runs", tmp_path / "w.img", "0.1", "5", {**os.environ, "SSDPTS_DB": str(tmp_path / "r.db")})
        assert proc.wait(timeout=600) == 0, proc.stderr.read()
        # the watch's next frame after the run ended (a busy host may hold it for more than its interval)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not states() or states()[-1] != "complete"):
            time.sleep(0.1)
    finally:
        watch.send_signal(signal.SIGINT)
        watch.wait(timeout=60)
        reader.join(timeout=10)
    assert watch.returncode == 130
    seen = states()
    assert "running" in seen and seen[-1] == "complete"


def test_a_tree_of_hundreds(runs, tmp_path):
    """300 run directories in a tree (copies sharing the originals' files by hard links), listed once
    each, in a second or so (the figure for 1,000: benchmarks/status_scan.py)."""
    _, dirs, procs = runs
    stop_long(procs)
    kinds = ("complete", "failed", "killed", "stopped")
    for i in range(300):
        src = dirs[kinds[i % 4]]
        dest = tmp_path / f"rack{i % 6}" / f"host{i % 25}" / f"{src.name}-{i:03d}"
        shutil.copytree(src, dest, copy_function=os.link)
    t0 = time.monotonic()
    doc = status_json(tmp_path)
    took = time.monotonic() - t0
    assert len(doc["runs"]) == 300 and len({r["path"] for r in doc["runs"]}) == 300
    assert doc["counts"] == {"interrupted": 150, "failed": 75, "complete": 75}
    print(f"status of 300 run directories: {took:.2f} s (the whole command)")
