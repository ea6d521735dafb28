"""Faults during a real run: a full results disk, fio killed, a device failing I/O. Each ends in a
valid run directory with the right status, one clear error line, and every finished step kept."""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import time

import pytest

from .conftest import run as sh, small_ext4, ssdpts
from .test_run_devices import _fio_children_gone, _wait_for_lines, run_dir_of, start_background_run, steps_of

pytestmark = pytest.mark.root


def one_line_error(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def valid_run_dir(run: Path, status: str) -> list[dict]:
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == status, man.get("status")
    steps = steps_of(run)  # every line parses
    keys = [(s["test"], s["part"], s["phase"], s["round"], s["index"]) for s in steps]
    assert len(keys) == len(set(keys))
    return steps


def test_full_results_disk_stops_cleanly_and_resume_finishes(make_loop, tmp_path):
    target = make_loop("256M")
    # Leave 11 MB free: the run stops cleanly once a round no longer fits (it needs 8 MB at
    # least), after one or two saved rounds, whatever the size of fio's output per round.
    with small_ext4(make_loop, tmp_path, "results", free_bytes=11 * 2**20) as mnt:
        r = ssdpts("run", "iops", "--target", target, "--step-seconds", "0.05", "--max-rounds", "6",
                   "--destroy-data-on", target, "--out", str(mnt), "--quiet")
        assert r.returncode == 1, r.stderr
        line = one_line_error(r.stderr)
        assert "results disk" in line and "resume" in line
        run = run_dir_of(mnt)
        steps = valid_run_dir(run, "failed")
        assert len(steps) >= 1 + 56, "rounds measured before the disk filled were lost"
        saved = len(steps)
        # move the run to a roomy disk and finish it there
        roomy = tmp_path / "roomy"
        sh("cp", "-a", str(run), str(roomy))
    r = ssdpts("resume", str(roomy), "--quiet", "--keep-window")  # fault handling here, not the window
    assert r.returncode == 0, r.stderr
    steps = valid_run_dir(roomy, "complete")
    assert len(steps) > saved


def test_fio_killed_mid_round_fails_cleanly_then_resumes(make_loop, tmp_path):
    dev = make_loop("256M")
    proc, run = start_background_run(dev, tmp_path / "runs")
    _wait_for_lines(run / "steps.jsonl", 1 + 56, proc)
    time.sleep(1.0)
    subprocess.run(["pkill", "-KILL", "-f", f"fio --output-format=json\\+ --output={run}"], check=False)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "fio" in one_line_error(err)
    valid_run_dir(run, "failed")
    assert _fio_children_gone(run)
    r = ssdpts("resume", str(run), "--quiet", "--keep-window")
    assert r.returncode == 0, r.stderr
    valid_run_dir(run, "complete")


def test_device_failing_io_gives_one_error_and_failed_status(make_loop, tmp_path):
    # A loop device whose sparse backing file lives on a filesystem too small for it: writes past
    # the free space fail with an I/O error, as a dying drive's would.
    with small_ext4(make_loop, tmp_path, "small", size="96M") as mnt:
        img = mnt / "failing.img"
        sh("truncate", "-s", "256M", img)
        dev = make_loop(image=img)
        out = tmp_path / "runs"
        r = ssdpts("run", "iops", "--target", dev, "--step-seconds", "0.1", "--max-rounds", "5",
                   "--destroy-data-on", dev, "--out", str(out), "--quiet")
        assert r.returncode == 1, r.stderr
        line = one_line_error(r.stderr)
        assert "error" in line.lower()
        run = run_dir_of(out)
        valid_run_dir(run, "failed")
        man = json.loads((run / "manifest.json").read_text())
        assert man["error"] == line.removeprefix("ssdpts: ")
