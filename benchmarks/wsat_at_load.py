#!/usr/bin/env python3
"""WSAT samples at host load against the drive's own log: fio's rates (before) and the rates as the
device did them (after: results/timing.py, docs/methodology.md "Rates as the device did them").

One WSAT run of ssdpts on the reference SSD (refssd/: 128 MiB, 25% OP, 32 pages per block, the
drive of tests/refssd/test_wsat_purge.py), 2-s steps, with N busy loops (`while True: pass`) beside
it; the drive keeps an io log of every command. Each sample is then compared with the drive's own
rate over the sample's interval (its host writes completed in it, per second: the WSAT proof's
per-sample check, tests/refssd/proofs.py) twice, side by side from the same run: fio's IOPS as fio
wrote them in steps.jsonl, and the IOPS ssdpts reports (the summary's WSAT series). Prints the load
average, how many samples were recomputed and marked, and for each the worst and median difference
and how many are off by more than the proof's 2%.

Needs root (loop device, FUSE). Run:
    sudo python3 benchmarks/wsat_at_load.py [--load 2] [--hours 0.5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "refssd"))
sys.path.insert(0, str(HERE.parent))
import refssd_host  # noqa: E402
from tests.refssd.proofs import Drive, Run  # noqa: E402

from ssdpts.results import timing  # noqa: E402

DRIVE = {"capacity": "128M", "pages_per_block": 32}
LIMIT = 0.02  # the WSAT proof's per-sample limit


def _stats(diffs: list[float]) -> dict:
    a = [abs(d) for d in diffs]
    return {"worst_pct": round(100 * max(diffs, key=abs), 2), "median_abs_pct": round(100 * statistics.median(a), 3),
            "over_limit": sum(1 for d in a if d > LIMIT)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--load", type=int, default=2, help="busy loops beside the run (default 2)")
    ap.add_argument("--hours", type=float, default=0.5, help="--wsat-hours of the run (PTS minutes of 2 s)")
    ap.add_argument("--json", help="append the figures to this file")
    a = ap.parse_args()
    refssd_host.build()
    work = Path(tempfile.mkdtemp(prefix="wsat-at-load-"))
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.load)]
    loadavg = []
    try:
        with refssd_host.ReferenceSSD(work / "drive", io_log=True, interval_ms=10, **DRIVE) as ssd:
            desc = ssd.describe_file(work / "describe.json")
            proc = subprocess.Popen(["ssdpts", "run", "wsat", "--step-seconds", "2", "--wsat-hours", str(a.hours),
                                     "--target", ssd.device, "--destroy-data-on", ssd.device, "--describe", str(desc),
                                     "--out", str(work / "runs"), "--quiet"], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
            while proc.poll() is None:
                loadavg.append(float(Path("/proc/loadavg").read_text().split()[0]))
                time.sleep(5)
            out = proc.stdout.read()
            if proc.returncode != 0:
                print(out)
                return 1
            run_dir = next(d for d in (work / "runs").iterdir() if d.is_dir())
            run = Run.read(run_dir)
            samples = run.of("wsat")
            drive = Drive.of(ssd, samples[-1]["measurement"]["end_time"])
    finally:
        for p in loops:
            p.kill()
            p.wait()
    reported = [x["iops"] for x in run.summary["parts"]["wsat"]["table"]["series"]]
    truth = [drive.write_rate(s["measurement"]["start_time"], s["measurement"]["end_time"]) for s in samples]
    before = [s["measurement"]["iops"] / t - 1 for s, t in zip(samples, truth)]
    after = [r / t - 1 for r, t in zip(reported, truth)]
    t = run.summary["parts"]["wsat"].get("timing") or {}
    fig = {"load": a.load, "loadavg_median": statistics.median(loadavg) if loadavg else None,
           "loadavg_max": max(loadavg) if loadavg else None, "samples": len(samples),
           "recomputed": t.get("recomputed"), "marked": t.get("marked"), "unchecked": t.get("unchecked"),
           "worst_runtime_vs_span_pct": t.get("worst_differs_pct"),
           "fio_rates": _stats(before), "device_rates": _stats(after), "run": str(run_dir),
           "tolerance_pct": timing.TOLERANCE_PCT}
    print(json.dumps(fig, indent=1))
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(fig) + "\n")
    return 0


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("needs root: loop devices and FUSE")
    sys.exit(main())
