"""Time-compressed LAT and IOPS runs on the emulated NVMe and SATA drives, with real fio, completing with
reports rendered in the guest; and the telemetry they record, checked against what fio wrote.

Step length 0.2 s and at most 5 rounds keep a run within minutes under TCG (steady state is not
expected on an emulator; the run completes either way).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from .conftest import TARGETS

pytestmark = pytest.mark.slow

DATA_UNIT = 512_000  # NVMe data units: thousands of 512-byte units, rounded up (NVMe Base 2.0, SMART log)


def full_run(lab, key: str) -> dict:
    if ("run", key) not in lab.cache:
        out = lab.scenario(key, "lat", "iops", "--destroy-data-on", TARGETS[key].serial, "--step-seconds", "0.2",
                           "--max-rounds", "5", stop="none", timeout=3000, name=f"run-{key}")
        steps = []
        if out["run_dir"]:  # the scratch share has the same path on the host
            text = Path(out["run_dir"], "steps.jsonl").read_text()
            steps = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
        lab.cache[("run", key)] = {"outcome": out, "steps": steps}
    return lab.cache[("run", key)]


@pytest.mark.parametrize("key", ["nvme", "sata"])
def test_lat_and_iops_complete_with_reports(lab, key):
    res = full_run(lab, key)
    out, steps = res["outcome"], res["steps"]
    assert out["rc"] == 0, f"rc {out['rc']}: {out['stderr'][-3000:]}"
    man = out["manifest"]
    assert man["status"] == "complete"
    assert set(man["parts"]) >= {"lat", "iops"}, man["parts"].keys()
    for name in ("report.html", "report.pdf"):
        size = Path(out["run_dir"], name).stat().st_size
        assert size > 10_000, f"{name} is {size} bytes"
    assert "report (partial)" not in out["stdout"]
    tests = {s["test"] for s in steps}
    assert tests == {"lat", "iops"}, tests
    # fio really wrote to the drive: every measured step has I/O
    measured = [s for s in steps if s["phase"] != "wipc"] if any("phase" in s for s in steps) else steps
    assert all(s["measurement"]["read"]["ios"] + s["measurement"]["write"]["ios"] > 0 for s in measured)


def test_nvme_telemetry_counts_what_fio_wrote(lab):
    """Every step carries smart-log snapshots (ioctl) from before and after it; per round, host write
    commands grow by exactly fio's write I/Os, each split into the commands the controller's
    maximum transfer allows (random writes are never merged; the IOPS test's 1024 KiB writes are
    two commands at QEMU's 512 KiB), and data units written by fio's bytes within one data unit's
    rounding; over the whole run likewise."""
    res = full_run(lab, "nvme")
    steps = res["steps"]
    assert steps, res["outcome"]["stderr"][-2000:]
    name = lab.dev["nvme"].rsplit("/", 1)[-1]
    out = lab.sh(["cat", f"/sys/block/{name}/queue/max_sectors_kb"], check=True)
    max_bytes = int(out.stdout.strip()) * 1024

    def commands(s: dict) -> int:
        per_io = -(-s["workload"]["block_size_bytes"] // max_bytes)
        return s["measurement"]["write"]["ios"] * per_io

    for s in steps:
        t = s["telemetry"]
        assert t["available"], t
        for snap in (t["before"], t["after"]):
            assert snap["health"] == "nvme-ioctl", snap
            for f in ("composite_temperature_c", "data_units_written", "host_write_commands", "data_written_bytes"):
                assert isinstance(snap.get(f), (int, float)), (f, snap)
    seq = [s["telemetry"]["before"]["host_write_commands"] for s in steps] + [steps[-1]["telemetry"]["after"][
        "host_write_commands"]]
    assert seq == sorted(seq), "host_write_commands went backwards"
    for s in steps:  # never a snapshot from the wrong side of its step (D13)
        t = s["telemetry"]
        assert t["before"]["t_unix_s"] <= s["end_time"] and t["after"]["t_unix_s"] >= s["start_time"], s["label"]
    rounds = defaultdict(list)
    for s in steps:
        rounds[(s["test"], s["round"])].append(s)

    def slack(snap: dict, near: list[dict], what) -> float:
        """Rounds are chained (issue 13): the next step runs while a boundary's snapshot is taken,
        so a round's counters may take in or miss the IO of ``offset_ms`` around each boundary; at
        most the fastest neighbouring step's rate for that long."""
        rate = max((what(s) / max(s["end_time"] - s["start_time"], 1e-3) for s in near), default=0.0)
        return rate * abs(snap["offset_ms"]) / 1000

    index = {id(s): i for i, s in enumerate(steps)}
    checked = 0
    for (test, rnd), rs in rounds.items():
        fio_bytes = sum(s["measurement"]["write"]["io_bytes"] for s in rs)
        fio_ios = sum(commands(s) for s in rs)
        b, a = rs[0]["telemetry"]["before"], rs[-1]["telemetry"]["after"]
        i0, i1 = index[id(rs[0])], index[id(rs[-1])]
        # the steps whose IO a boundary snapshot can see: the round's and its two neighbours'
        # (a snapshot late by one short step on a TCG guest spans a whole step of either)
        near_b = near_a = steps[max(i0 - 1, 0):i1 + 2]

        def io_bytes(s):
            return s["measurement"]["write"]["io_bytes"]

        d_bytes = a["data_written_bytes"] - b["data_written_bytes"]
        allowed = DATA_UNIT + slack(b, near_b, io_bytes) + slack(a, near_a, io_bytes)
        assert abs(d_bytes - fio_bytes) < allowed, (
            f"{test} round {rnd}: smart log +{d_bytes} B, fio wrote {fio_bytes} B (allowed ±{allowed:.0f} B: "
            f"snapshots {b['offset_ms']} / {a['offset_ms']} ms from the round's edges)")
        if rnd > 0 and fio_ios:  # WIPC (round 0): sequential 128 KiB writes, merged by the block layer
            allowed = 1 + slack(b, near_b, commands) + slack(a, near_a, commands)
            assert abs(a["host_write_commands"] - b["host_write_commands"] - fio_ios) < allowed, (test, rnd, allowed)
            checked += 1
    assert checked >= 5
    first, last = steps[0]["telemetry"]["before"], steps[-1]["telemetry"]["after"]
    total = sum(s["measurement"]["write"]["io_bytes"] for s in steps)
    # Between the parts (lat, then iops) only the purge runs: Format NVM writes no data.
    assert abs((last["data_written_bytes"] - first["data_written_bytes"]) - total) < 2 * DATA_UNIT


def test_sata_telemetry_says_what_the_emulated_drive_reports(lab):
    """QEMU's ide-hd SMART data has temperature and power-on hours but no LBAs-written attribute: the
    snapshots carry the temperature smartctl reads, and no write counters are invented."""
    steps = full_run(lab, "sata")["steps"]
    assert steps
    want_temp = lab.tool_json(["smartctl", "-A", "-j", lab.dev["sata"]], ok_rc=tuple(range(256)))["temperature"]["current"]
    for s in steps:
        t = s["telemetry"]
        assert t["available"], t
        snap = t["after"]
        assert snap["composite_temperature_c"] == want_temp
        assert "data_written_bytes" not in snap and "data_units_written" not in snap, snap
        assert snap["block"]["sectors_written"] >= t["before"]["block"]["sectors_written"]


def test_wsat_drive_model_on_the_emulated_nvme(lab):
    """The drive model (docs/methodology.md#drive-model) on QEMU's NVMe controller over a file: no
    flash, no garbage collection — the model must say so rather than invent an onset, its rate
    check against the drive's own SMART host-write count must hold (at that count's grain), and
    every sample must carry fio's per-interval log."""
    out = lab.scenario("nvme", "wsat", "--destroy-data-on", TARGETS["nvme"].serial, "--step-seconds", "0.5",
                       "--wsat-capacity-multiple", "2.5", "--wsat-hours", "1", stop="none", timeout=2400,
                       name="wsat-model-nvme")
    assert out["rc"] == 0, f"rc {out['rc']}: {out['stderr'][-3000:]}"
    run = Path(out["run_dir"])
    m = json.loads((run / "summary.json").read_text())["parts"]["wsat"]["model"]
    steps = [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines() if ln.strip()]
    assert steps and all(s.get("intervals") and s["intervals"]["ios"] for s in steps)
    assert m["gc_onset_capacity_multiple"] is None, m
    assert m["gc_onset_capacity_multiple_reason"].startswith(("no GC onset seen", "GC onset not reached")), m
    assert m["effective_spare"] is None and m["cliffs"] == []
    assert m["resolution"]["source"].startswith("fio's per-interval")
    check = m["checks"][0]
    assert check["name"] == "steady level against the drive's host-write counter" and check["ok"], m["checks"]
