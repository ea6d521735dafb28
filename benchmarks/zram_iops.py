"""RND 4KiB 100% read IOPS at TC2/QD32 on a zram device: ssdpts vs a hand-tuned fio command.

    sudo python benchmarks/zram_iops.py [--seconds 10] [--pairs 5]

Runs, alternately in the same process, (a) one step through ssdpts' FioExecutor (the job file
a PTS round uses: lat_percentiles, json+ histograms, tausworthe64, per-step seed) and (b) a single
hand-tuned fio command with the same ioengine (fixed buffers, registered files, batched
submit/complete, no latency percentiles, json output). Prints each pair and the median ratio.
Target: ssdpts within 5% of the hand-tuned command. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import statistics
import subprocess
import tempfile

from _devices import zram_device

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor, default_ioengine
from ssdpts.pts.workload import Step, Workload


def ssdpts_iops(dev: str, size: int, seconds: float, wd: Path, engine: str) -> float:
    step = Step("iops", "", "round", 1, 1, Workload("rand", 100, 4096, 2, 32), seconds)
    batch = Batch([step], dev, Area(0, size), 1, engine, job_path=wd / "s.fio", output_path=wd / "s.json")
    return FioExecutor().run(batch).measurements[0].iops


def hand_tuned_iops(dev: str, seconds: float, wd: Path, engine: str) -> float:
    cmd = ["fio", "--name=hand", f"--filename={dev}", "--rw=randread", "--bs=4k", "--numjobs=2", "--iodepth=32",
           "--direct=1", f"--ioengine={engine}", "--time_based", f"--runtime={int(seconds * 1000)}ms",
           "--group_reporting", "--norandommap", "--randrepeat=0", "--thread",
           "--iodepth_batch_submit=16", "--iodepth_batch_complete_max=16",
           "--output-format=json", f"--output={wd / 'h.json'}"]
    if engine == "io_uring":
        cmd += ["--fixedbufs", "--registerfiles"]
    subprocess.run(cmd, check=True)
    j = json.loads((wd / "h.json").read_text())["jobs"][0]
    return j["read"]["iops"] + j["write"]["iops"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--pairs", type=int, default=5)
    a = ap.parse_args()
    size = 1024**3
    engine = default_ioengine()
    ratios = []
    with zram_device(size) as dev, tempfile.TemporaryDirectory() as d:
        wd = Path(d)
        # fill the device once so reads hit allocated zram pages, as on a preconditioned drive
        subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1m", "--direct=1",
                        "--ioengine=psync", "--output=/dev/null"], check=True)
        for i in range(a.pairs):
            s = ssdpts_iops(dev, size, a.seconds, wd, engine)
            h = hand_tuned_iops(dev, a.seconds, wd, engine)
            ratios.append(s / h)
            print(f"pair {i + 1}: ssdpts {s:,.0f} IOPS, hand-tuned {h:,.0f} IOPS, ratio {s / h:.3f}")
    print(f"median ssdpts/hand-tuned ratio {statistics.median(ratios):.3f} over {a.pairs} pairs of "
          f"{a.seconds:g} s ({engine}, TC2/QD32 RND 4KiB 100% read on zram); target >= 0.95")


if __name__ == "__main__":
    main()
