"""What the device's view of step boundaries costs (engine/devtrace.py): IOPS with and without it,
and what its tracing child holds over a long run.

    sudo python benchmarks/devtrace_cost.py [--step-seconds 10] [--steps 6] [--pairs 3] [--threads 4]
    sudo python benchmarks/devtrace_cost.py --wsat-samples 1440      # the memory part only

1. IOPS: RND 4KiB 100% read at TC``threads``/QD32 on a 1 GiB zram device (filled first), a batch of
   ``steps`` steps of ``step-seconds`` each through FioExecutor, alternately with the block trace
   (windows around each boundary: from 0.05 s before a step's planned end to the next step's first
   IO + 5 ms) and without it (the trace's start made to fail), ``pairs`` times. Prints each pair's mean
   IOPS over the steps and the median ratio. Steps shorter than 2 s are traced whole (a
   time-compressed run): give ``--step-seconds`` of a real run's order (60 s; 10 s by default to
   keep it short) for the windows' cost.
2. Memory: a WSAT of ``wsat-samples`` samples (1,440 = the 24-hour WSAT's count at one sample a
   minute) made for real on zram with 0.05-s steps — every step traced whole, the worst case for
   the child — and the child's own figures from the run's manifest (events read, windows, CPU
   time, peak RSS, the longest it fell behind, events lost).

A measurement, not a test: the machine is shared and noisy, so pairs alternate and medians are given.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import tempfile

from _devices import zram_device

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor, default_ioengine
from ssdpts.pts.workload import Step, Workload


def batch_iops(dev: str, size: int, steps: int, seconds: float, threads: int, wd: Path, traced: bool) -> tuple[float, dict]:
    plan = [Step("iops", "", "round", 1, i + 1, Workload("rand", 100, 4096, threads, 32), seconds) for i in range(steps)]
    ex = FioExecutor()
    if not traced:
        def no_trace(self, filename):
            self._traced_for, self._trace, self.trace_unavailable = filename, None, "switched off (benchmark)"
        ex._start_trace = no_trace.__get__(ex)  # noqa: SLF001 - the one difference between the two runs
    batch = Batch(plan, dev, Area(0, size), 1, default_ioengine(), job_path=wd / "s.fio", output_path=wd / "s.json")
    res = ex.run(batch)
    ex.close()
    return statistics.mean(m.iops for m in res.measurements), ex.boundary_source()


def iops_part(a) -> None:
    size = 1024**3
    ratios = []
    with zram_device(size) as dev, tempfile.TemporaryDirectory() as d:
        wd = Path(d)
        subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1m", "--direct=1",
                        "--ioengine=psync", "--output=/dev/null"], check=True)
        for i in range(a.pairs):
            on, src = batch_iops(dev, size, a.steps, a.step_seconds, a.threads, wd, True)
            off, _ = batch_iops(dev, size, a.steps, a.step_seconds, a.threads, wd, False)
            ratios.append(on / off)
            print(f"pair {i + 1}: traced {on:,.0f} IOPS, not traced {off:,.0f} IOPS, ratio {on / off:.4f}; trace: "
                  f"{src.get('events')} events in {src.get('windows')} windows, {src.get('cpu_s')} s CPU, "
                  f"lost {src.get('overrun')}")
    print(f"median traced/untraced IOPS {statistics.median(ratios):.4f} over {a.pairs} pairs of {a.steps} x "
          f"{a.step_seconds:g}-s steps (TC{a.threads}/QD32 RND 4KiB read, zram, {os.cpu_count()} CPUs); aim >= 0.99")


def memory_part(a) -> None:
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d, zram_device(256 * 2**20) as dev:
        out = Path(d) / "runs"
        subprocess.run(["ssdpts", "run", "wsat", "--target", dev, "--destroy-data-on", dev, "--out", str(out),
                        "--step-seconds", "0.05", "--wsat-hours", f"{a.wsat_samples / 60:g}",
                        "--wsat-capacity-multiple", "1000", "--purge", "none", "--quiet"],
                       check=True, capture_output=True, env={**os.environ, "SSDPTS_DB": str(Path(d) / "db.sqlite")})
        run = next(out.iterdir())
        src = json.loads((run / "manifest.json").read_text()).get("boundary_source")
        steps = len((run / "steps.jsonl").read_bytes().splitlines())
        print(f"WSAT of {steps} samples: {json.dumps(src)}")
        if src and src.get("max_rss_kb"):
            print(f"the tracing child's peak RSS: {src['max_rss_kb'] / 1024:.1f} MiB (aim <= 64 MiB), "
                  f"{src['events']:,} events read in {src['cpu_s']} s of CPU "
                  f"({1e6 * src['cpu_s'] / max(src['events'], 1):.2f} us an event), "
                  f"at most {src['max_lag_ms']} ms behind, {src['overrun']} lost")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--step-seconds", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--wsat-samples", type=int, default=0, help="only the memory part, with this many samples")
    ap.add_argument("--iops-only", action="store_true", help="only the IOPS part")
    a = ap.parse_args()
    if a.wsat_samples:
        memory_part(a)
        return
    iops_part(a)
    if a.iops_only:
        return
    a.wsat_samples = 1440
    memory_part(a)


if __name__ == "__main__":
    main()
