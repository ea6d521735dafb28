"""Cost of `ssdpts status` on a lab's tree of run directories: 1,000 by default, most of them
complete runs of all four tests, some interrupted, and 24 running (their lock held by a helper
process, as 24 drives under test hold theirs), in rack/host directories.

    python benchmarks/status_scan.py [--runs 1000] [--running 24] [--interrupted 26] [--repeat 5]

The run directories are copies (benchmarks/_lab.py) of two real runs made first with fio on file
targets: `ssdpts run all` (WSAT of 30 samples, IOPS, TP, LAT; 0.1 s steps, 5 rounds) and a LAT run stopped by
SIGINT after its third round. Prints the wall time of the whole command (`ssdpts status TREE --json`
and the table), the median of --repeat fresh processes, and where the time goes inside (scan() per
state). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

from _lab import lab, real_run, tree_bytes


def timed(argv: list[str], repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--running", type=int, default=24)
    ap.add_argument("--interrupted", type=int, default=26)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        d = Path(d)
        env = {"SSDPTS_DB": str(d / "made.db")}
        t0 = time.perf_counter()
        full = real_run(d / "base", "all", d / "all.img", env=env, extra=("--wsat-hours", "0.5"))
        stopped = real_run(d / "base", "lat", d / "lat.img", step=0.5, rounds=25, env=env, interrupt_after_s=20)
        print(f"base runs made in {time.perf_counter() - t0:.0f} s: {full.name} "
              f"({tree_bytes(full) / 1e6:.1f} MB, manifest {os.path.getsize(full / 'manifest.json') / 1e3:.0f} kB), "
              f"{stopped.name} ({json.loads((stopped / 'manifest.json').read_text())['status']})")
        tree = d / "lab"
        n_complete = args.runs - args.running - args.interrupted
        lab(tree / "done", [full], n_complete)
        lab(tree / "stopped", [stopped], args.interrupted)
        running = lab(tree / "live", [stopped], args.running)
        for r in running:  # as the manifest of a run in progress says
            m = json.loads((r / "manifest.json").read_text())
            m.update(status="running", ended=None, interruption=None)
            (r / "manifest.json").write_text(json.dumps(m))
            (r / ".lock").unlink(missing_ok=True)
        holder = subprocess.Popen([sys.executable, "-c", HOLD, *map(str, running)], stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held"
        try:
            print(f"tree: {args.runs} run directories ({n_complete} complete, {args.interrupted} interrupted, "
                  f"{args.running} running), {tree_bytes(tree) / 1e9:.2f} GB as read")
            doc = json.loads(subprocess.run(["ssdpts", "status", str(tree), "--json"], check=True, capture_output=True,
                                            text=True).stdout)
            print(f"states: {doc['counts']}")
            for argv, what in ((["ssdpts", "status", str(tree), "--json"], "status --json"),
                               (["ssdpts", "status", str(tree)], "status (table)"),
                               (["ssdpts", "--version"], "ssdpts --version (start-up alone)")):
                print(f"{what}: {timed(argv, args.repeat):.2f} s (median of {args.repeat} processes)")
            inside(tree)
        finally:
            holder.kill()


HOLD = """
import fcntl, os, sys, time
fds = []
for d in sys.argv[1:]:
    fd = os.open(os.path.join(d, ".lock"), os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    fds.append(fd)
print("held", flush=True)
time.sleep(3600)
"""


def inside(tree: Path) -> None:
    """scan() in this process, and the time per run directory by state."""
    from ssdpts import status as S

    t0 = time.perf_counter()
    found = S.find_run_dirs([tree])
    t1 = time.perf_counter()
    locks = S.held_locks()
    t2 = time.perf_counter()
    per: dict[str, list[float]] = {}
    for run in found:
        a = time.perf_counter()
        st = S.read_status(run, locks)
        per.setdefault(st.state, []).append(time.perf_counter() - a)
    t3 = time.perf_counter()
    print(f"in-process scan: {t3 - t0:.2f} s = find the run directories {t1 - t0:.2f} s + /proc/locks "
          f"{(t2 - t1) * 1e3:.1f} ms + read {len(found)} statuses {t3 - t2:.2f} s")
    for state, ts in per.items():
        print(f"  {state}: {len(ts)} runs, {statistics.median(ts) * 1e3:.2f} ms each (median), {sum(ts):.2f} s in all")


if __name__ == "__main__":
    main()
