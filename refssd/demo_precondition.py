#!/usr/bin/env python3
"""make demo-sprandom: the IOPS test (PTS 2.0.2 §6) on the reference SSD both ways, preconditioned
as the PTS says (purge, WIPC of 2 x the capacity, rounds) and by one physical fill by fio's sprandom
(docs/methodology.md#preconditioning-by-sprandom), the fill's over-provisioning taken from the drive
model of a WSAT run on the same geometry (docs/methodology.md#drive-model); then each run's time to
result side by side (docs/methodology.md#time-to-result).

Three fresh drives of one geometry, one after another: WSAT (its curve gives the effective spare),
IOPS with `--precondition pts`, IOPS with `--precondition sprandom:OP`. Time compressed, about 8
minutes on 2 CPUs. Needs root, /dev/fuse and a fio with sprandom (fio 3.41 or later: `make fio`,
which the make target runs first). The run directories stay in --out; the runs are marked not PTS
compliant (time compression, and the fill) wherever the report shows compliance."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import time

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import refssd_host  # noqa: E402

DRIVE = {"capacity": "128M", "pages_per_block": 32}
# the proofs' stimulus (tests/refssd/test_iops.py): TC 1 x QD 2, at which the drive's commands fit a compressed step
IOPS_ARGS = ("--threads", "1", "--iodepth", "2")


def ssdpts(*args: str, out: Path) -> Path:
    """One ssdpts run into its own folder under ``out``; its run directory."""
    out.mkdir(parents=True, exist_ok=True)
    # the runs go into a library of the demo's own (beside them), not the user's
    env = {**os.environ, "SSDPTS_DB": str(out.parent / "results.db")}
    rc = subprocess.run(["ssdpts", "run", *args, "--out", str(out), "--quiet"], env=env).returncode
    runs = [d for d in out.iterdir() if d.is_dir()]
    if rc != 0 or len(runs) != 1:
        raise SystemExit(f"demo-sprandom: ssdpts run {' '.join(args)} ended with exit {rc}; its directory: {out}")
    return runs[0]


def on_fresh_drive(name: str, args: tuple[str, ...], out: Path) -> tuple[Path, float]:
    with refssd_host.ReferenceSSD(**DRIVE) as ssd:
        desc = ssd.describe_file(ssd.dir / "describe.json")
        t0 = time.monotonic()
        run = ssdpts(*args, "--target", ssd.device, "--destroy-data-on", ssd.device, "--describe", str(desc),
                     out=out / name)
        wall = time.monotonic() - t0
    print(f"demo-sprandom: {name}: {run} ({wall:.0f} s)", flush=True)
    return run, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="ssdpts-runs/demo-sprandom", help="where the run directories go")
    ap.add_argument("--step-seconds", default="0.5", help="length of the PTS minute (default 0.5)")
    ap.add_argument("--max-rounds", default="8", help="IOPS rounds before giving up on steady state (default 8)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("demo-sprandom: needs root (loop devices over the simulated drives)", file=sys.stderr)
        return 2
    out = Path(a.out).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"demo-sprandom: {out} is not an empty folder: give --out a new one", file=sys.stderr)
        return 2
    p = refssd_host.params(**DRIVE)
    print(f"demo-sprandom: reference SSD, {p['capacity_bytes'] / 1e6:.0f} MB, OP {100 * p['op']:g}%, "
          f"{p['pages_per_block']} pages per block; its effective spare (refssd params): "
          f"{p['effective_spare_factor'] - 1:.4f}", flush=True)

    wsat, _ = on_fresh_drive("wsat", ("wsat", "--step-seconds", "1", "--wsat-capacity-multiple", "2.5",
                                      "--wsat-hours", "1", "--threads", "4", "--iodepth", "32"), out)
    model = json.loads((wsat / "summary.json").read_text())["parts"]["wsat"].get("model") or {}
    op = model.get("effective_spare")
    if op is None or not 0 < op < 1:
        print(f"demo-sprandom: the WSAT run's drive model gave no effective spare "
              f"({model.get('effective_spare_reason', 'no model')}): see {wsat}/report.html", file=sys.stderr)
        return 1
    print(f"demo-sprandom: the drive model of the WSAT curve: GC onset at {model['gc_onset_capacity_multiple']:.3f} x "
          f"capacity, effective spare {op:.4f} ± {model['effective_spare_uncertainty']:.4f}: the fill's OP", flush=True)

    common = ("iops", "--step-seconds", a.step_seconds, "--max-rounds", a.max_rounds, *IOPS_ARGS)
    rows = []
    for way in ("pts", f"sprandom:{op:.4f}"):
        run, _ = on_fresh_drive(f"iops-{way.split(':')[0]}", (*common, "--precondition", way), out)
        rows.append(str(run))
    # the table: benchmarks/time_to_result.py reads each run's manifest (time_to_result) and summary
    table = subprocess.run([sys.executable, str(HERE.parent / "benchmarks" / "time_to_result.py"), "--runs", *rows],
                           capture_output=True, text=True)
    print(table.stdout or table.stderr)
    print("demo-sprandom: the time-compressed figures are this small simulated drive's; the second table scales them\n"
          "  to a 3.84 TB drive as an estimate. The window values of the two ways agree where the drive, not the\n"
          "  host, sets the rate (docs/reference-ssd.md \"Preconditioning by sprandom, measured\").")
    return 0


if __name__ == "__main__":
    sys.exit(main())
