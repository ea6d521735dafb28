"""Bad input across every subcommand: one clear line, exit 2, and no device written (checked by
checksumming a loop device before and after every attempt)."""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess

import pytest

from .conftest import checksum, ssdpts

pytestmark = pytest.mark.root

ABSURD = [
    ["--threads", "0"], ["--threads", "100000"], ["--iodepth", "-3"], ["--iodepth", "1000000"],
    ["--active-range", "0"], ["--active-range", "150"], ["--active-range", "nan"],
    ["--step-seconds", "0"], ["--step-seconds", "1e9"], ["--step-seconds", "inf"],
    ["--max-rounds", "4"], ["--max-rounds", "1000000"], ["--wsat-hours", "-5"], ["--wsat-capacity-multiple", "0"],
    ["--profile", "gamer"], ["--pts-version", "9"], ["--ioengine", "nope"], ["--purge", "bogus"],
    ["--threads", "four"], ["--seed", "x"],
]


def refused(r: subprocess.CompletedProcess, needle: str = "") -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr)
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def victim(make_loop):
    """A loop device that every bad command names; its checksum must never change."""
    dev = make_loop("256M")
    subprocess.run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", "count=4", "oflag=direct"], check=True,
                   capture_output=True)
    before = checksum(dev)
    yield dev
    assert checksum(dev) == before, "a refused command wrote to the device"


@pytest.mark.parametrize("opt", ABSURD, ids=lambda o: " ".join(o))
def test_absurd_option_values(victim, opt, tmp_path):
    out = tmp_path / "out"
    for cmd in ("run", "plan"):
        refused(ssdpts(cmd, "iops", "--target", victim, *opt, "--destroy-data-on", victim, "--out", str(out)))
    assert not out.exists()


def test_hostile_paths_and_links(victim, tmp_path):
    n = 0
    hostile = ["/tmp/a b; rm -rf /tmp/x", "$(reboot)", "`id`", "/dev/null", "/proc/self/mem", "", " ",
               "/dev/vda/../vda/x", "-rf"]
    for p in hostile:
        r = ssdpts("run", "iops", "--target", p, "--destroy-data-on", p, "--out", str(tmp_path))
        assert r.returncode == 2 and len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1, (p, r.stderr)
        n += 1
    link = tmp_path / "innocent-looking"
    link.symlink_to("/dev/vda")
    refused(ssdpts("run", "iops", "--target", str(link), "--destroy-data-on", str(link), "--out", str(tmp_path / "o")))
    link2 = tmp_path / "to-victim"
    link2.symlink_to(victim)
    # confirming the symlink's name for a device it points to is fine, but naming a different device is not
    refused(ssdpts("run", "iops", "--target", str(link2), "--destroy-data-on", "/dev/vda", "--out", str(tmp_path / "o")))
    assert not (tmp_path / "o").exists()


def test_read_only_device_is_refused(make_loop, tmp_path):
    ro = make_loop("256M", read_only=True)
    refused(ssdpts("run", "iops", "--target", ro, "--destroy-data-on", ro, "--out", str(tmp_path)), "read-only")


def test_every_subcommand_rejects_bad_input(victim, tmp_path):
    refused(ssdpts("plan", "iops", "--target", "/nonexistent"), "does not exist")
    refused(ssdpts("info", "/nonexistent"))
    refused(ssdpts("resume", str(tmp_path / "nope")))
    f = tmp_path / "file"
    f.write_text("x")
    refused(ssdpts("resume", str(f)))
    refused(ssdpts("demo", "--size", "banana", "--out", str(tmp_path / "d")), "--size")
    refused(ssdpts("demo", "--step-seconds", "-1", "--out", str(tmp_path / "d")), "--step-seconds")
    refused(ssdpts("demo", "--tests", "nope", "--out", str(tmp_path / "d")), "unknown test")
    refused(ssdpts("devices", "--bogus"))
    refused(ssdpts("doctor", "--bogus"))
    # an empty --out used to mean the current directory
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    refused(ssdpts("run", "lat", "--target", victim, "--destroy-data-on", victim, "--out", "", cwd=cwd), "--out is empty")
    refused(ssdpts("run", "lat", "--target", victim, "--destroy-data-on", victim, "--out", " ", cwd=cwd), "--out is empty")
    assert not any(cwd.iterdir())
    refused(ssdpts("verify", str(tmp_path / "nope")))
    refused(ssdpts("resume", str(tmp_path / "nope"), "--destroy-data-on", victim))
    # a seal key that cannot be read: refused before anything is written (docs/results-format.md)
    no_key = {**os.environ, "SSDPTS_SEAL_KEY": str(tmp_path / "no.key")}
    refused(ssdpts("run", "lat", "--target", victim, "--destroy-data-on", victim, "--out", str(cwd), env=no_key),
            f"SSDPTS_SEAL_KEY names {tmp_path / 'no.key'}, which cannot be read")
    assert not any(cwd.iterdir())
    refused(ssdpts("verify", str(cwd), "--seal-key", str(tmp_path / "no.key")), "--seal-key names")
    refused(ssdpts("verify", str(cwd), "--require-seal"), "--require-seal needs the key")


def _made_run(tmp_path: Path) -> Path:
    """A real, small, complete run on a file target to corrupt."""
    out = tmp_path / "runs"
    r = ssdpts("run", "lat", "--target", str(tmp_path / "t.bin"), "--size", "128M", "--step-seconds", "0.1",
               "--max-rounds", "5", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    return run


def test_corrupted_run_files_give_a_clear_message(tmp_path):
    run = _made_run(tmp_path)
    man = json.loads((run / "manifest.json").read_text())
    man["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(man))
    good_steps = (run / "steps.jsonl").read_text()

    cases = {
        "manifest garbage": ("manifest.json", "{not json"),
        "manifest wrong format": ("manifest.json", json.dumps({**man, "format": 99})),
        "manifest not an object": ("manifest.json", "[1, 2]"),
        "manifest missing run_spec": ("manifest.json", json.dumps({k: v for k, v in man.items() if k != "run_spec"})),
        "steps garbage middle line": ("steps.jsonl", good_steps.replace("\n", "\n{garbage\n", 1)),
        "steps wrong format": ("steps.jsonl", good_steps.replace('"format":1', '"format":7', 1)),
    }
    for name, (fname, text) in cases.items():
        original = (run / fname).read_text()
        (run / fname).write_text(text)
        try:
            refused(ssdpts("resume", str(run), "--quiet"))
        finally:
            (run / fname).write_text(original)
    # report and compare read only the run directory: corrupt files there are one clear line too
    good_summary = (run / "summary.json").read_text()
    for text in ("{not json", json.dumps({"format": 42}), "[]"):
        (run / "summary.json").write_text(text)
        refused(ssdpts("report", str(run)))
        refused(ssdpts("compare", str(run), str(run)))
    (run / "summary.json").write_text(good_summary)
    # binary junk
    (run / "manifest.json").write_bytes(os.urandom(512))
    refused(ssdpts("resume", str(run), "--quiet"))
    refused(ssdpts("report", str(run)))
    refused(ssdpts("compare", str(run), str(run)))
