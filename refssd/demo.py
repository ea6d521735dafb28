#!/usr/bin/env python3
"""make demo-ssd: the four basic PTS tests (WSAT, IOPS, TP, LAT) on the reference SSD, time
compressed, ending in a report whose curves are a drive's: FOB, transition and steady state.

The reference SSD (docs/reference-ssd.md) is started, served as a loop device with direct I/O,
described to ssdpts with --describe (the report says the target is simulated and lists its
parameters), and stopped at the end; the run directory stays in --out. Needs root and /dev/fuse.

The drive is small and slow (8 dies, 1 ms programs: 8,000 IOPS of 4 KiB fresh out of box,
32 MB/s), so the run uses TC 1 x QD 8: at the PTS-E default TC 4 x QD 32, the 1 MiB steps of the
IOPS test would keep 128 MiB in flight, longer to serve than a compressed step lasts."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refssd_host  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="ssdpts-runs", help="where the run directory goes (default ./ssdpts-runs)")
    ap.add_argument("--capacity", default="256M", help="user capacity of the simulated drive (default 256M)")
    ap.add_argument("--step-seconds", default="1", help="length of the PTS minute (default 1)")
    ap.add_argument("--max-rounds", default="12", help="rounds before giving up on steady state (default 12)")
    ap.add_argument("--tests", nargs="+", default=["all"], help="PTS tests to run (default all)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("demo-ssd: needs root (a loop device over the simulated drive)", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with refssd_host.ReferenceSSD(capacity=args.capacity) as ssd:
        desc = ssd.describe_file(ssd.dir / "describe.json")
        p = ssd.params()
        print(f"demo-ssd: reference SSD on {ssd.device}: {p['capacity_bytes'] / 1e6:.0f} MB, OP {100 * p['op']:g}%, "
              f"{p['dies']} dies, FOB {refssd_host.fob_write_iops(p):.0f} IOPS, steady state (closed form) "
              f"{refssd_host.steady_write_iops(p):.0f} IOPS at WA {refssd_host.wa_greedy_uniform(p['spare_factor']):.2f}",
              flush=True)
        t0 = time.monotonic()
        cmd = ["ssdpts", "run", *args.tests, "--target", ssd.device, "--destroy-data-on", ssd.device,
               "--step-seconds", args.step_seconds, "--max-rounds", args.max_rounds, "--threads", "1",
               "--iodepth", "8", "--wsat-hours", "2", "--wsat-capacity-multiple", "4", "--describe", str(desc),
               "--out", str(out)]
        rc = subprocess.run(cmd).returncode
        print(f"demo-ssd: ssdpts finished in {time.monotonic() - t0:.0f} s (exit {rc}); the simulator's ground "
              f"truth was {ssd.truth_path} (removed with the drive; set REFSSD_KEEP=1 to keep it)")
        return rc


if __name__ == "__main__":
    sys.exit(main())
