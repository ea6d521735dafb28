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


T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}  # Student's t, two-sided 95%, by degrees of freedom


def check_phases(run: Path, pid: str, under: str, pairs: int = 3) -> dict:
    """Every phase of the part's table against fio's raw output, in the order they ran (baseline and
    interference alternating, each after the one before it), and the verdict recomputed here from
    the phases: each pair's change, their mean and 95% interval, two-sided at the limit; the table."""
    table = json.loads((run / "summary.json").read_text())["parts"][pid]["table"]
    cells = [f"{k}-{n}" for n in range(1, pairs + 1) for k in ("baseline", under)]
    assert table["kind"] == "ocp" and [p["cell"] for p in table["phases"]] == cells
    recs = {r["key"]: r for r in steps_of(run) if r["phase"] == "round" and r["key"] in cells}
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
    ends = [(p["start_unix_s"], p["end_unix_s"]) for p in table["phases"]]
    assert all(e0 <= s1 for (_, e0), (s1, _) in zip(ends, ends[1:])), ends  # run in this order, one after another
    for name in ("mean", "p99", "p999", "max"):
        ch = [100 * (u[f"{name}_us"] / b[f"{name}_us"] - 1) for b, u in zip(table["phases"][::2], table["phases"][1::2])]
        est = table["estimates"][name]
        assert est["pairs"] == pytest.approx(ch)
        half = T975[pairs - 1] * np.std(ch, ddof=1) / np.sqrt(pairs)
        assert table["change_pct"][name] == pytest.approx(np.mean(ch))
        assert (est["lo_pct"], est["hi_pct"]) == pytest.approx((np.mean(ch) - half, np.mean(ch) + half))
        lim = table["limit_pct"]
        lo, hi = est["lo_pct"], est["hi_pct"]
        assert est["verdict"] == ("pass" if -lim <= lo and hi <= lim else "fail" if lo > lim or hi < -lim
                                  else "inconclusive")
    verdicts = [table["estimates"][n]["verdict"] for n in table["judged"]]
    want = "fail" if "fail" in verdicts else "inconclusive" if "inconclusive" in verdicts or table["reasons"] else "pass"
    assert table["verdict"] == want
    return table


def test_ocp_trim_on_zram(make_zram, tmp_path):
    dev = make_zram(256 * 2**20)
    proc = ssdpts("run", "ocp-trim", "--target", dev, "--destroy-data-on", dev, "--out", str(tmp_path),
                  "--step-seconds", "0.5", "--ocp-trim-rate", "40", "--ocp-trim-size", "256K", "--ocp-limit", "7",
                  "--quiet")
    assert proc.returncode == 0, proc.stderr
    run = run_dir_of(tmp_path)
    table = check_phases(run, "ocp-trim", "trim")
    assert table["limit_pct"] == 7.0 and table["trim_rate"] == 40.0
    trims = [p["trim_ios"] for p in table["phases"][1::2]]
    assert all(10 <= t <= 25 for t in trims), trims  # 40/s over a 0.5-s step
    assert [p["trim_ios"] for p in table["phases"][::2]] == [0, 0, 0]  # baselines alone
    assert table["phases"][1]["trim_bytes"] == trims[0] * 256 * 1024
    # WIPC wrote every LBA; the job's deallocations reached the device: zram freed their pages
    assert _zram_stored(dev) <= 256 * 2**20 - sum(trims) * 256 * 1024
    job = (run / "fio" / "ocp-trim" / "round-001.fio").read_text()
    for n in (3, 5, 7):  # settle, then baseline / trim pairs: the trims beside steps 3, 5, 7
        assert f"[s{n:04d}b]" in job and f"[s{n - 1:04d}b]" not in job
    assert "rw=trim" in job and "rate_iops=,,40" in job
    offsets = [int(sec.split("offset=")[1].split()[0]) for sec in job.split("\n[") if sec.startswith(("s0003b", "s0005b", "s0007b"))]
    assert len(set(offsets)) == 3 and min(offsets) == 128 * 2**20  # each pair deallocates its own slice
    steps = {r["key"]: r for r in steps_of(run) if r["phase"] == "round"}
    assert [steps[f"trim-{n}"]["planned_idle_after_s"] for n in (1, 2, 3)] == pytest.approx([0.5] * 3)
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
                   threads=2, iodepth=8, ocp_probe_gap_ms=20.0, ocp_read_s=120.0)
    store, summary = start_run(spec, open_target(dev), executor=FioExecutor(), out_dir=tmp_path / "runs", confirm=dev,
                               argv=["test"])
    assert summary["status"] == "complete"
    table = check_phases(store.path, "ocp-idle-gc-measure", "idle")
    assert table["phases"][1]["trim_ios"] == 0 and table["probe_gap_ms"] == 20.0
    steps = {r["key"]: r for r in steps_of(store.path) if r["phase"] == "round"}
    for n in (1, 2, 3):
        burst = steps[f"burst-{n}"]
        assert burst["measurement"]["write"]["ios"] > 0 and burst["workload"]["threads"] == 2
        b, i = steps[f"baseline-{n}"], steps[f"idle-{n}"]
        assert b["end_time"] <= burst["start_time"] and burst["end_time"] <= i["start_time"]
    for p in table["phases"]:  # probes: one read, then 20 ms with no IO: at most one read per 20 ms of the phase
        span = p["end_unix_s"] - p["start_unix_s"]
        assert 1 <= p["ios"] <= span / 0.020 + 1, p
        assert 0 < p["duty_pct"] < 50
    assert "thinktime=20000" in (store.path / "fio" / "ocp-idle-gc-measure" / "round-001.fio").read_text()
    # a loop device over a file reports no media writes: idle GC is not observable, and said so
    assert table["idle_gc"] == "not reported" and "media_written_bytes" not in table["phases"][1]
    assert steps["settle"]["planned_idle_after_s"] == pytest.approx(0.05)
    assert np.isfinite(table["change_pct"]["mean"])
