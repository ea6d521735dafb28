"""Cost of the guard the runner calls before every round (device/safety/claim.py: Claim.check).

    sudo python benchmarks/guard_cost.py [--calls 200]

Holds the run's claim on a scratch loop device, a zram device and a file target, as a run does,
and times Claim.check() (fingerprint, mounts, swap, holders, new partitions, system disk; no blkid,
no device read) per call, next to the shortest round a time-compressed run has (a LAT round of 9
steps of 0.1 s = 0.9 s) and the PTS's (9 steps of 60 s). Also the full verdict with blkid and the
exclusive-open probe (safety.assess), which runs once before each purge. A measurement, not a test:
the machine is shared and noisy, so the median and the 95th percentile are given.

Since the guard checks the whole device stack (device/safety/stack.py: what a loop device rests on, the
loop devices resting on it, every other loop device over the same file), also: a loop device two
levels up (loop over loop over a file), and the plain loop device again with --extra-loops other
loop devices attached (each one's backing is read with an ioctl), and with a second loop device over
the same file (held exclusively by the claim for the whole run: every other way to the storage).
The watcher thread that looks for new ways between the guards is measured by watch_cost.py.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _devices import loop_device, zram_device

from ssdpts.device import marker
from ssdpts.device.safety import guard as safety
from ssdpts.device.safety.claim import Claim
from ssdpts.device.target import open_target


def timed(fn, calls: int) -> tuple[float, float]:
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return statistics.median(ts), ts[int(0.95 * (len(ts) - 1))]


def report(name: str, calls: int, target) -> None:
    with Claim(target) as claim:
        med, p95 = timed(claim.check, calls)
        fmed, fp95 = timed(lambda: safety.assess(target), max(calls // 10, 5))
    print(f"{name:8s} guard (every round): median {med * 1e3:6.2f} ms, p95 {p95 * 1e3:6.2f} ms = "
          f"{100 * med / 0.9:.3f}% of a 0.9 s round, {100 * med / 540:.5f}% of a PTS LAT round (540 s); "
          f"full verdict (before a purge): median {fmed * 1e3:6.1f} ms, p95 {fp95 * 1e3:6.1f} ms")


@contextlib.contextmanager
def stacked(dev: str):
    """A loop device over block device ``dev``."""
    top = subprocess.run(["losetup", "-f", "--show", dev], capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield top
    finally:
        subprocess.run(["losetup", "-d", top], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--extra-loops", type=int, default=32)
    args = ap.parse_args()
    with loop_device(256 * 2**20) as dev:
        report("loop", args.calls, open_target(dev))
        with stacked(dev) as mid, stacked(mid) as top:
            report("loop^3", args.calls, open_target(top))
        backing = subprocess.run(["losetup", "-n", "-O", "BACK-FILE", dev], capture_output=True, text=True,
                                 check=True).stdout.strip()
        with stacked(backing) as _sibling:  # another loop device over the same file: held by the claim
            report("loop+sib", args.calls, open_target(dev))
        with contextlib.ExitStack() as others:
            for _ in range(args.extra_loops):
                others.enter_context(loop_device(1 << 20))
            report(f"loop+{args.extra_loops}", args.calls, open_target(dev))
    with zram_device(256 * 2**20) as dev:
        report("zram", args.calls, open_target(dev))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        path = Path(d) / "t.img"
        path.write_bytes(b"\0" * 4096)
        marker.mark_created(str(path))
        marker.seal(str(path))
        report("file", args.calls, open_target(str(path)))


if __name__ == "__main__":
    main()
