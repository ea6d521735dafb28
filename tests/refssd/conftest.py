"""Proof tests on the reference SSD (refssd/): ssdpts runs on a simulated drive whose dynamics
are known, and its results are checked against the simulator's ground truth and against the
closed forms in docs/reference-ssd.md. The drive is a loop device with direct I/O over the FUSE
file that refssd serves; ssdpts meets it exactly as it meets any block device."""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import sys

import pytest

REFSSD_DIR = Path(__file__).resolve().parents[2] / "refssd"
sys.path.insert(0, str(REFSSD_DIR))

import refssd_host  # noqa: E402  (lives beside the simulator, not in ssdpts)
from tests.conftest import unavailable  # noqa: E402


def require_refssd() -> None:
    if os.geteuid() != 0:
        unavailable("needs root for loop devices")
    for tool, pkg in (("losetup", "util-linux"), ("fusermount3", "fuse3"), ("fio", "fio")):
        if shutil.which(tool) is None:
            unavailable(f"{tool} is missing: install {pkg}")
    if not os.path.exists("/dev/fuse"):
        unavailable("/dev/fuse is missing: the kernel has no FUSE")
    try:
        refssd_host.build()
    except refssd_host.RefSSDError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def refssd_binary():
    """The simulator built (cargo build --release when a source is newer); a build that fails fails the test."""
    try:
        return refssd_host.build()
    except refssd_host.RefSSDError as exc:
        pytest.fail(str(exc))


def steps_of(run: Path, test: str | None = None) -> list[dict]:
    out = [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines() if ln.strip()]
    return [s for s in out if test is None or s["test"] == test]


def only_run_dir(out: Path) -> Path:
    dirs = [d for d in out.iterdir() if d.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


# ssdpts as this source tree has it (not whichever install is on PATH): its own code, and the fio its
# tree built (`make fio`, build/fio/bin/fio), as a run from the tree chooses it (engine/fiobin.py)
SRC = Path(__file__).resolve().parents[2] / "src"
SSDPTS = [sys.executable, "-m", "ssdpts.cli.main"]
SSDPTS_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}


def ssdpts_run(ssd, out: Path, *args: str, timeout: float = 1800) -> Path:
    """ssdpts run on the reference SSD, with the drive's description stored with the run."""
    import subprocess

    desc = ssd.describe_file(out.parent / f"{out.name}-describe.json")
    proc = subprocess.run([*SSDPTS, "run", *args, "--target", ssd.device, "--destroy-data-on", ssd.device,
                           "--describe", str(desc), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=timeout, env=SSDPTS_ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return only_run_dir(out)
