"""Cost of proving a long run (results/verify/integrity.py, results/verify/proof.py): `ssdpts verify` of a WSAT
run of 1,440 samples — the 24-hour WSAT's count at the PTS's 1-minute step — made for real on a
zram device with time-compressed steps, so that each sample has fio's own json+ output.

    sudo python benchmarks/verify_cost.py [--samples 1440] [--step-seconds 0.05] [--repeat 3]

Prints the run's size, then the wall time of `ssdpts verify` (every raw file's SHA-256, every step
recomputed from fio's output, the summary recomputed from the steps, the step lines' checksums)
and of `ssdpts report --format html` beside it, each the median of --repeat. A measurement, not a
test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _devices import zram_device


def timed(argv: list[str], repeat: int) -> tuple[float, str]:
    ts, out = [], ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True, check=False)
        ts.append(time.perf_counter() - t0)
        out = p.stdout.strip().splitlines()[0] if p.stdout.strip() else p.stderr.strip()
    return statistics.median(ts), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=1440)
    ap.add_argument("--step-seconds", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d, zram_device(256 * 2**20) as dev:
        out = Path(d) / "runs"
        hours = args.samples / 60
        t0 = time.perf_counter()
        subprocess.run(["ssdpts", "run", "wsat", "--target", dev, "--destroy-data-on", dev, "--out", str(out),
                        "--step-seconds", str(args.step_seconds), "--wsat-hours", f"{hours:g}",
                        "--wsat-capacity-multiple", "1000", "--purge", "none", "--quiet"],
                       check=True, capture_output=True, env={**os.environ, "SSDPTS_DB": str(Path(d) / "db.sqlite")})
        made = time.perf_counter() - t0
        run = next(out.iterdir())
        size = sum(p.stat().st_size for p in run.rglob("*") if p.is_file())
        steps = len((run / "steps.jsonl").read_bytes().splitlines())
        print(f"run: {steps} step lines, {len(list(run.glob('fio/*/*.json')))} fio json+ files, "
              f"{size / 1e6:.1f} MB (made in {made:.0f} s)")
        v, line = timed(["ssdpts", "verify", str(run)], args.repeat)
        print(f"ssdpts verify: {v:.2f} s (median of {args.repeat}): {line}")
        r, _ = timed(["ssdpts", "report", str(run), "--format", "html"], args.repeat)
        print(f"ssdpts report --format html: {r:.2f} s (median of {args.repeat}), for comparison")


if __name__ == "__main__":
    main()
