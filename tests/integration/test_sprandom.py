"""Preconditioning by fio's sprandom on a loop device (docs/methodology.md#preconditioning-by-sprandom,
#fio). The runs need fio 3.41: the one `make fio` builds, which `make test-full` builds first (these
tests are marked slow: CI keeps the system's fio). A fio too old is refused before anything is
written, whatever fio the system has (a stand-in for fio 3.33 says so)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
import subprocess

import pytest

from ssdpts.engine import fiobin
from ssdpts.pts.runspec import SPRANDOM_MARK

from .conftest import ssdpts

pytestmark = pytest.mark.root
ROOT = Path(__file__).resolve().parents[2]
FAST = ("--step-seconds", "0.25", "--max-rounds", "5")


def _built() -> str:
    """The fio make fio built: what ssdpts runs without --fio PATH."""
    if not (fiobin.BUILT.exists() and fiobin.knows(str(fiobin.BUILT), "sprandom")):
        pytest.fail(f"{fiobin.BUILT} is not a fio with sprandom: run 'make fio' first (make test-full does)")
    return str(fiobin.BUILT)


def _json(path: Path) -> dict:
    text = path.read_text()
    return json.loads(text[text.index("{"):])  # fio's hook lines come first


@pytest.mark.slow
def test_make_fio_is_what_doctor_picks_up():
    """make fio: quick when built, and its fio is the one doctor names, with sprandom."""
    make = subprocess.run(["make", "-s", "fio"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert make.returncode == 0, make.stderr
    built = _built()
    assert "is built" in make.stdout or "built in" in make.stdout
    doc = json.loads(ssdpts("doctor", "--json").stdout)
    checks = {c["name"]: c for c in doc}
    assert checks["fio"]["current"].endswith(f"at {built} (built by make fio)")
    assert checks["fio"]["current"].split()[0] == fiobin.version(built).removeprefix("fio-")
    assert checks["fio features"]["current"].startswith("sprandom yes") and checks["fio features"]["ok"] is True


@pytest.mark.slow
def test_an_iops_run_preconditioned_by_sprandom(make_loop, tmp_path):
    """A short time-compressed IOPS run with --precondition sprandom:0.25: plan says so and what it
    writes; the fill ran as fio's sprandom job before round 1; every record marks the run."""
    built = _built()
    dev = make_loop("256M")
    args = ("iops", "--target", dev, "--destroy-data-on", dev, *FAST, "--precondition", "sprandom:0.25")
    plan = json.loads(ssdpts("plan", *args, "--json").stdout)
    assert (plan["precondition"], plan["fio_path"], plan["fio_source"], plan["fio_sprandom"]) == \
        ("sprandom:0.25", built, "built", True)
    (part,) = plan["parts"]
    ar = plan["active_range_bytes"]
    assert part["wipc_method"] == "sprandom" and part["wipc_bytes"] == ar + ar // 4
    text = " ".join(ssdpts("plan", *args).stdout.split())
    assert "preconditioning by fio's sprandom, OP 0.25" in text and "1.25 x active range" in text

    out = tmp_path / "runs"
    proc = ssdpts("run", *args, "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    (run,) = list(out.iterdir())
    man = json.loads((run / "manifest.json").read_text())
    assert man["fio_binary"] == {"path": built, "source": "built"} and man["fio_version"] == fiobin.version(built)
    assert man["pts_compliant"] is False and any(d.startswith(SPRANDOM_MARK) for d in man["deviations"])
    assert (man["run_spec"]["precondition"], man["run_spec"]["spr_op"]) == ("sprandom", 0.25)

    # the fill: fio's sprandom job, first, writing about the physical capacity (1.25 x the range) once
    fio = _json(run / "fio" / "iops" / "wipc.json")
    (job,) = fio["jobs"]
    assert fio["fio version"] == fiobin.version(built)
    opts = job["job options"]
    assert (opts["sprandom"], opts["spr_op"], opts["random_generator"], opts["rw"]) == \
        ("1", "0.25", "lfsr", "randwrite")
    assert 1.2 * ar <= job["write"]["io_bytes"] <= 1.25 * ar
    steps = [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines() if ln.strip()]
    steps = [s for s in steps if s.get("phase") in ("wipc", "round")]
    assert steps[0]["phase"] == "wipc" and "sprandom" in steps[0]["label"]
    assert {s["phase"] for s in steps[1:]} == {"round"}

    summary = json.loads((run / "summary.json").read_text())
    assert summary["pts_compliant"] is False and any(d.startswith(SPRANDOM_MARK) for d in summary["deviations"])
    html = (run / "report.html").read_text()
    assert "preconditioning by sprandom — not PTS compliant" in html
    assert "NOT compliant (time-compressed; preconditioning by sprandom)" in html
    assert "Preconditioning 1 (sprandom)" in html
    # the run added itself to the results library (the session's own, tests/conftest.py: SSDPTS_DB)
    listed = ssdpts("db", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r.get("run_name") == run.name]
    assert row["precondition"] == "sprandom:0.25" and row["pts_compliant"] == 0


def test_sprandom_with_a_fio_too_old_is_refused_before_anything_is_written(make_loop, tmp_path):
    """fio 3.33 (a stand-in that answers as it does) is refused in one line naming the version
    needed and make fio; the device holds what it held and no run directory is made."""
    old = tmp_path / "fio-3.33"
    old.write_text('#!/bin/sh\ncase "$1" in --version) echo fio-3.33 ;; --cmdhelp=*) echo "No such command: '
                   '${1#--cmdhelp=}" ;; esac\n')
    old.chmod(0o755)
    dev = make_loop("256M")
    with open(dev, "rb") as f:
        before = hashlib.sha256(f.read(4 << 20)).hexdigest()
    out = tmp_path / "runs"
    proc = ssdpts("run", "iops", "--target", dev, "--destroy-data-on", dev, *FAST, "--precondition", "sprandom:0.1",
                  "--fio", str(old), "--out", str(out), "--quiet")
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "fio 3.41 or later" in line and "make fio" in line and "fio-3.33" in line
    assert not out.exists()
    with open(dev, "rb") as f:
        assert hashlib.sha256(f.read(4 << 20)).hexdigest() == before
