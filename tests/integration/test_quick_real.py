"""ssdpts quick end to end with real fio on a zram device (time-compressed: 0.1 s per run): the
refusals of ssdpts run, the run directory, every figure recomputed from fio's raw json+ (median and
RSE by hand), the one-page report (HTML and the PDF Chromium prints), the results library and
compare. Four figures of the table, one of each kind: about 25 s, most of it fio starting up to 28
times (the whole table: ~45 s more)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
import shutil
import statistics
import subprocess

import pytest

from .conftest import ssdpts, system_disk


# one of each kind (SEQ MB/s T1 QD64, RND kIOPS T4 QD64, QD1, mixed): the whole table takes ~45 s more
ONLY = ["seq1m-read-t1q64", "rnd4k-write-t4q64", "rnd4k-read-t1q1", "rnd4k-mix70-t1q1"]


def figure_from_raw(run_dir: Path, fig: dict) -> list[float]:
    """Each run's value from its json+ alone: MB/s = bytes/s / 10^6, kIOPS = IOPS / 1000, reads and
    writes together (one job per run: group_reporting) — over the block layer's span of the run's IO
    where its recorded rate check found fio's run time off by more than the tolerance (results/timing.py)."""
    out = []
    checks = fig["rate_checks"]
    assert len(checks) == len(fig["files"])
    for rel, check in zip(fig["files"], checks):
        text = (run_dir / rel).read_text()
        jobs = json.loads(text[text.index("\n{") + 1:])["jobs"]  # after fio's notes on the step gate hooks
        assert len(jobs) == 1
        j = jobs[0]
        assert check["state"] in ("fio", "device"), check  # both ends of every run seen at the block layer
        if check["state"] == "device":
            span = check["device_span_s"]
            out.append((j["read"]["io_bytes"] + j["write"]["io_bytes"]) / span / 1e6 if fig["unit"] == "MB/s"
                       else (j["read"]["total_ios"] + j["write"]["total_ios"]) / span / 1e3)
        elif fig["unit"] == "MB/s":
            out.append((j["read"]["bw_bytes"] + j["write"]["bw_bytes"]) / 1e6)
        else:
            out.append((j["read"]["iops"] + j["write"]["iops"]) / 1e3)
    return out


def test_quick_refusals_write_nothing(make_zram, tmp_path):
    dev = make_zram(64 * 2**20)
    out = tmp_path / "runs"
    before = Path(dev).read_bytes()[:1 << 20]
    p = ssdpts("quick", dev, "--seconds", "0.1", "--out", str(out), stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "--destroy-data-on" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    vda = system_disk()
    p = ssdpts("quick", vda, "--seconds", "0.1", "--destroy-data-on", vda, "--out", str(out), stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not out.exists() and Path(dev).read_bytes()[:1 << 20] == before


def test_quick_on_zram_every_figure_from_raw_json(make_zram, tmp_path):
    dev = make_zram(128 * 2**20)
    out = tmp_path / "runs"
    p = ssdpts("quick", dev, "--seconds", "0.1", "--precondition", "seq-fill", "--only", ",".join(ONLY),
               "--destroy-data-on", dev,
               "--out", str(out), stdin=subprocess.DEVNULL, timeout=300)
    assert p.returncode == 0, p.stderr
    (run_dir,) = out.iterdir()
    man = json.loads((run_dir / "manifest.json").read_text())
    assert man["kind"] == "quick" and man["status"] == "complete" and man["confirmation"] == dev
    assert man["target"]["path"] == dev and man["claim"]["kernel_exclusive"]
    doc = json.loads((run_dir / "quick.json").read_text())
    assert doc["precondition"]["io_bytes"] == 128 * 2**20
    assert [f["key"] for f in doc["figures"]] == ONLY
    html = (run_dir / "report.html").read_text()
    for fig in doc["figures"]:
        values = figure_from_raw(run_dir, fig)
        n = len(values)
        assert n in (3, 5, 7) and values == pytest.approx(fig["values"], rel=1e-12)
        assert fig["median"] == pytest.approx(sorted(values)[n // 2], rel=1e-12)
        rse = statistics.stdev(values) / (statistics.mean(values) * math.sqrt(n))
        assert fig["rse"] == pytest.approx(rse, rel=1e-9)
        assert fig["reliable"] == (rse <= 0.05)
        if n < 7:
            assert rse <= 0.05  # more runs are added only while the RSE is above 5%
        job = (run_dir / fig["files"][0]).with_suffix(".fio").read_text()
        w = fig["workload"]
        assert f"numjobs={w['threads']}" in job and f"iodepth={w['iodepth']}" in job and f"bs={w['block_size_bytes']}" in job
        assert f"{100 * rse:.2f}%" in html

    # the PDF: one page, the same table
    assert (run_dir / "report.pdf").read_bytes()[:5] == b"%PDF-"
    info = subprocess.run(["pdfinfo", str(run_dir / "report.pdf")], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Pages:\s+1$", info, re.M), info
    text = subprocess.run(["pdftotext", "-layout", str(run_dir / "report.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "Quick synthetic table" in text and "RND 4KiB 70/30 mix T1 QD1" in text and "only these figures" in text

    # the library (added at the end, as 'ssdpts run' does) and compare (the copy stands for a second
    # drive: every delta is 0)
    assert "added to the results library" in p.stdout
    twin = tmp_path / "twin"
    shutil.copytree(run_dir, twin)
    p = ssdpts("compare", str(run_dir), str(twin), "--format", "json", "--out", str(tmp_path / "c.json"))
    assert p.returncode == 0, p.stderr
    cmp = json.loads((tmp_path / "c.json").read_text())
    assert all(r["deltas"] == [0.0, 0.0] for r in cmp["rows"])
