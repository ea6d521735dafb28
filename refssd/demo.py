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
        new = sorted(d for d in set(out.iterdir()) - before if d.is_dir())
        if new:
            # beside the run directory (not in it: ssdpts's checksums cover what it wrote there)
            table = side_by_side(new[-1], p, ssd.truth(settle_s=0.3))
            (out / f"{new[-1].name}-reference.txt").write_text(table + "\n")
            print(table)
        print(f"demo-ssd: ssdpts finished in {time.monotonic() - t0:.0f} s (exit {rc}); the simulator's ground "
              f"truth was {ssd.truth_path} (removed with the drive; set REFSSD_KEEP=1 to keep it)")
        return rc


def side_by_side(run: Path, p: dict, truth: refssd_host.Truth) -> str:
    """The WSAT figures the reference predicts (refssd params, docs/reference-ssd.md "The
    reference") beside the ones ssdpts measured and the simulator recorded: FOB, GC onset, steady
    IOPS and WA. The report lists the reference under the device description (the --describe
    file's `reference` table); this table puts each figure beside its measured value."""
    try:
        summary = json.loads((run / "summary.json").read_text())
        steps = [json.loads(x) for x in (run / "steps.jsonl").read_text().splitlines() if x.strip()]
    except (OSError, ValueError):
        return "demo-ssd: no summary to compare with the reference"
    tab = (summary.get("parts", {}).get("wsat") or {}).get("table")
    wsat = sorted((s for s in steps if s["test"] == "wsat" and s.get("phase", "round") == "round"),
                  key=lambda s: s["index"])
    if not tab or len(wsat) < 6:
        return "demo-ssd: no WSAT result to compare with the reference"
    m = [s["measurement"] for s in wsat]
    cap = p["logical_pages"]
    fob = p["fob_write_iops"]

    def pages_at(t: float) -> float:  # host pages the drive took up to epoch time t
        before = [iv for iv in truth.intervals if iv["t1"] <= t]
        return before[-1]["host_write_pages_total"] if before else 0

    base = pages_at(m[0]["start_time"])  # what the drive took before WSAT (its purge made it fresh)
    # the simulator's onset: the first truth interval in which a die chose a GC victim
    prev, first = None, None
    for iv in truth.intervals:
        if iv["t0"] >= m[0]["start_time"] - 1 and iv["fg_gc_blocks"] > 0:
            first = iv
            break
        prev = iv
    sim_onset = ((first["host_write_pages_total"] - base) / cap) if first else float("nan")
    sim_res = ((first["host_write_pages_total"] - prev["host_write_pages_total"]) / cap) if first and prev else float("nan")
    # ssdpts's drive model of the WSAT curve (summary.json parts.wsat.model, docs/methodology.md#drive-model)
    model = summary["parts"]["wsat"].get("model") or {}
    ssdpts_onset = model.get("gc_onset_capacity_multiple")
    ssdpts_res = model.get("gc_onset_capacity_multiple_uncertainty")
    last = m[-5:]
    t0, t1 = last[0]["start_time"], last[-1]["end_time"]
    rows = [
        ("FOB 4 KiB write IOPS (first sample)", fob, tab["series"][0]["iops"],
         truth.rate("host_write_ios", m[0]["start_time"], m[0]["end_time"])),
        ("GC onset, capacity written (drive model)", p["gc_start_host_pages"] / cap, ssdpts_onset, sim_onset),
        ("effective spare (drive model)", p["gc_start_host_pages"] / cap - 1,
         None if ssdpts_onset is None else ssdpts_onset - 1, sim_onset - 1),
        ("steady 4 KiB write IOPS (last 5 samples)", p["steady_write_iops"], tab["final_window_iops"],
         truth.rate("host_write_ios", t0, t1)),
        # the drive model's: from the drive's counters (the reference SSD's ctl, read by ssdpts's telemetry)
        ("steady WA (last 5 samples, drive model)", p["reference_wa"], model.get("steady_wa"), truth.wa(t0, t1)),
    ]
    wl = wsat[0].get("workload", {})
    qd = f"TC {wl.get('threads', '?')} x QD {wl.get('iodepth', '?')}"
    out = [f"demo-ssd: WSAT on the reference SSD, reference (refssd params) against measured: {run.name}",
           f"  {'':42s} {'reference':>10s} {'ssdpts':>10s} {'simulator':>10s}   ssdpts vs simulator, vs reference"]
    for name, ref, got, sim in rows:
        if got is None:
            out.append(f"  {name:42s} {ref:10.3f} {'n/a':>10s} {sim:10.3f}   simulator vs reference {sim / ref - 1:+.1%}")
        else:
            out.append(f"  {name:42s} {ref:10.3f} {got:10.3f} {sim:10.3f}   {got / sim - 1:+.1%}, {got / ref - 1:+.1%}")
    out += ["  ssdpts against the simulator is the measurement; the simulator against the reference is the drive.",
            "  GC onset, effective spare and steady WA: ssdpts's drive model of the WSAT curve (GC onset",
            f"  ± {ssdpts_res if ssdpts_res is not None else float('nan'):.3f} x capacity; docs/methodology.md#drive-model),"
            " the simulator's the first",
            f"  truth interval in which a die chose a victim ({sim_res:.3f} x capacity). The reference's rates",
            f"  assume every die busy: at {qd} the host may",
            f"  keep fewer commands in flight than that, and the run is time-compressed ({len(m)} samples): its",
            "  last samples may not be steady yet. The proofs (TC 4 x QD 32) and their tolerances:",
            "  docs/reference-ssd.md."]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
