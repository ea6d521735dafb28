"""The OCP tests (docs/ocp.md) end to end on real block devices, time-compressed: ocp-trim on zram
through the ssdpts command (report, verify and the library included), ocp-idle-gc on a loop device
through session.start_run; each phase's figures recomputed here from fio's raw json+ with this
file's own arithmetic, and the deallocations counted by the kernel (the device's discards)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from .conftest import ssdpts
from .test_run_devices import raw_jobs, run_dir_of, steps_of

pytestmark = pytest.mark.root


def _zram_stored(dev: str) -> int:
    """Bytes zram holds (mm_stat's orig_data_size): a deallocated page is freed."""
    return int(Path(f"/sys/block/{Path(dev).name}/mm_stat").read_text().split()[0])


def _pctl(bins: dict[str, int], pct: float) -> float:
    """fio's rule, written here again: the first bin whose cumulative count reaches pct of all."""
    vals = sorted((int(k), v) for k, v in bins.items())
    need, cum = pct / 100 * sum(v for _, v in vals), 0
    for k, v in vals:
        cum += v
        if cum >= need:
            return float(k)
    return float(vals[-1][0])


def check_phases(run: Path, pid: str, under: str) -> dict:
    """Every phase of the part's table against fio's raw output; the table."""
    table = json.loads((run / "summary.json").read_text())["parts"][pid]["table"]
    assert table["kind"] == "ocp" and [p["cell"] for p in table["phases"]] == ["baseline", under]
    recs = {r["key"]: r for r in steps_of(run) if r["phase"] == "round" and r["key"] in ("baseline", under)}
    for p in table["phases"]:
        rec = recs[p["cell"]]
        job = raw_jobs(run, rec["fio_json"])[rec["fio_job_index"]]
        lat = job["read"]["lat_ns"]
        assert p["ios"] == job["read"]["total_ios"] > 0
        assert p["mean_us"] == pytest.approx(lat["mean"] / 1e3, rel=1e-9)
        assert p["max_us"] == pytest.approx(lat["max"] / 1e3, rel=1e-9)
        for key, pct in (("p99_us", 99.0), ("p999_us", 99.9)):
            assert p[key] == pytest.approx(min(_pctl(lat["bins"], pct), lat["max"]) / 1e3, rel=1e-9)
        assert p["trim_ios"] == int(job["trim"]["total_ios"])
        assert p["start_unix_s"] == rec["start_time"] and p["end_unix_s"] == rec["end_time"]
    base, u = table["phases"]
    for name in ("mean", "p99", "p999", "max"):
        assert table["change_pct"][name] == pytest.approx(100 * (u[f"{name}_us"] / base[f"{name}_us"] - 1))
    judged = [table["change_pct"][n] for n in ("mean", "p99")]
    assert table["verdict"] == ("pass" if max(judged) <= table["limit_pct"] else "fail")
    return table


def test_ocp_trim_on_zram(make_zram, tmp_path):
    dev = make_zram(256 * 2**20)
    proc = ssdpts("run", "ocp-trim", "--target", dev, "--destroy-data-on", dev, "--out", str(tmp_path),
                  "--step-seconds", "0.5", "--ocp-trim-rate", "40", "--ocp-trim-size", "256K", "--ocp-limit", "7",
                  "--quiet")
    assert proc.returncode == 0, proc.stderr
    run = run_dir_of(tmp_path)
    table = check_phases(run, "ocp-trim", "trim")
    assert table["limit_pct"] == 7.0
    trims = table["phases"][1]["trim_ios"]
    assert 10 <= trims <= 25  # 40/s over a 0.5-s step
    assert table["phases"][1]["trim_bytes"] == trims * 256 * 1024
    # WIPC wrote every LBA; the job's deallocations reached the device: zram freed their pages
    assert _zram_stored(dev) <= 256 * 2**20 - trims * 256 * 1024
    job = (run / "fio" / "ocp-trim" / "round-001.fio").read_text()
    assert "[s0003b]" in job and "rw=trim" in job and "rate_iops=,,40" in job
    assert "intact" in ssdpts("verify", str(run)).stdout
    html = (run / "report.html").read_text()
    assert 'id="ocp-trim-ocp"' in html and "Read latency per phase" in html


def test_ocp_idle_gc_on_a_loop_device(make_loop, tmp_path):
    from ssdpts.device.target import open_target
    from ssdpts.engine.fio import FioExecutor, default_ioengine
    from ssdpts.pts.runspec import RunSpec
    from ssdpts.run.session import start_run

    dev = make_loop("256M")
    spec = RunSpec(tests=("ocp-idle-gc",), step_seconds=0.05, max_rounds=5, ioengine=default_ioengine(),
                   threads=2, iodepth=8)
    store, summary = start_run(spec, open_target(dev), executor=FioExecutor(), out_dir=tmp_path / "runs", confirm=dev,
                               argv=["test"])
    assert summary["status"] == "complete"
    table = check_phases(store.path, "ocp-idle-gc-measure", "after-burst")
    assert table["phases"][1]["trim_ios"] == 0
    burst = next(r for r in steps_of(store.path) if r["key"] == "burst")
    assert burst["measurement"]["write"]["ios"] > 0 and burst["workload"]["threads"] == 2
    settle = next(r for r in steps_of(store.path) if r["key"] == "settle")
    assert settle["planned_idle_after_s"] == pytest.approx(0.05)
    assert np.isfinite(table["change_pct"]["mean"])
