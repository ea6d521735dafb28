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
import json
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
              f"{p['dies']} dies; reference (refssd params): FOB {p['fob_write_iops']:.0f} IOPS, GC from "
              f"{p['gc_start_host_pages'] / p['logical_pages']:.3f} x capacity written, steady state "
              f"{p['steady_write_iops']:.0f} IOPS at WA {p['reference_wa']:.3f}", flush=True)
        before = set(out.iterdir())
        t0 = time.monotonic()
        cmd = ["ssdpts", "run", *args.tests, "--target", ssd.device, "--destroy-data-on", ssd.device,
               "--step-seconds", args.step_seconds, "--max-rounds", args.max_rounds, "--threads", "1",
               "--iodepth", "8", "--wsat-hours", "2", "--wsat-capacity-multiple", "4", "--describe", str(desc),
               "--out", str(out)]
        rc = subprocess.run(cmd).returncode
        new = sorted(set(out.iterdir()) - before)
        if new:
            print(side_by_side(new[-1], p, ssd.truth()))
        print(f"demo-ssd: ssdpts finished in {time.monotonic() - t0:.0f} s (exit {rc}); the simulator's ground "
              f"truth was {ssd.truth_path} (removed with the drive; set REFSSD_KEEP=1 to keep it)")
        return rc


def side_by_side(run: Path, p: dict, truth: refssd_host.Truth) -> str:
    """The WSAT figures the reference predicts beside the ones ssdpts measured and the simulator
    recorded (the report lists the reference under the device description)."""
    try:
        summary = json.loads((run / "summary.json").read_text())
        steps = [json.loads(x) for x in (run / "steps.jsonl").read_text().splitlines() if x.strip()]
    except (OSError, ValueError):
        return "demo-ssd: no summary to compare with the reference"
    tab = (summary.get("parts", {}).get("wsat") or {}).get("table")
    if not tab:
        return "demo-ssd: no WSAT result to compare with the reference"
    wsat = sorted((s for s in steps if s["test"] == "wsat"), key=lambda s: s["index"])
    last = [s["measurement"] for s in wsat[-5:]]
    wa = truth.wa(last[0]["start_time"], last[-1]["end_time"])
    rows = [("FOB 4 KiB write IOPS (first sample)", p["fob_write_iops"], tab["series"][0]["iops"]),
            ("steady 4 KiB write IOPS (last 5 samples)", p["steady_write_iops"], tab["final_window_iops"]),
            ("steady WA (simulator, last 5 samples)", p["reference_wa"], wa)]
    out = ["demo-ssd: WSAT, reference against measured (TC 1 x QD 8, time-compressed: the last samples may not be "
           "steady yet)"]
    for name, ref, got in rows:
        out.append(f"  {name:42s} reference {ref:9.3f}   measured {got:9.3f}   ({got / ref - 1:+.1%})")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
