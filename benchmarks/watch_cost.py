"""Cost and reaction time of the claim's watcher (device/safety/claim.py: Claim.watch), the thread that
looks, for as long as a run holds its device, for a new way to the storage it writes (a loop device
attached over the target's file mid-round).

    sudo python benchmarks/watch_cost.py [--seconds 20] [--attaches 20] [--extra-loops 32]

1. CPU: the watcher's own thread's time on a CPU (its task's schedstat in /proc) over ``--seconds``
   of a held claim on a loop device, with ``--extra-loops`` other loop devices attached, while
   nothing happens and while unrelated loop devices are attached and detached twice a second (each
   one a burst of kernel uevents the watcher wakes for and sweeps after).
2. Reaction: ``--attaches`` times, a loop device attached over the target's file (losetup, as a
   user would) and the time from losetup's return until the watcher had held it and raised the
   alarm; and whether a mkfs started right after losetup found it busy.

A measurement, not a test: the machine is shared and noisy, so medians and the 95th percentile.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import threading
import time

from _devices import loop_device

from ssdpts.device.safety.claim import Claim
from ssdpts.device.target import open_target



def thread_cpu_s(tid: int) -> float:
    """The thread's time on a CPU (schedstat: nanoseconds, not the 10-ms ticks of stat)."""
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def losetup(backing: str) -> str:
    return subprocess.run(["losetup", "-f", "--show", backing], capture_output=True, text=True,
                          check=True).stdout.strip()


def detach(dev: str) -> None:
    subprocess.run(["losetup", "-d", dev], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--attaches", type=int, default=20)
    ap.add_argument("--extra-loops", type=int, default=32)
    args = ap.parse_args()
    with loop_device(256 * 2**20) as dev, contextlib.ExitStack() as others:
        backing = subprocess.run(["losetup", "-n", "-O", "BACK-FILE", dev], capture_output=True, text=True,
                                 check=True).stdout.strip()
        for _ in range(args.extra_loops):
            others.enter_context(loop_device(1 << 20))
        alarms: list[tuple[float, str]] = []
        fired = threading.Event()

        def alarm(reason: str) -> None:
            alarms.append((time.monotonic(), reason))
            fired.set()

        # 1. CPU, quiet and with unrelated uevents
        for churn in (False, True):
            with Claim(open_target(dev)) as claim:
                claim.watch(alarm)
                w = claim._watcher  # noqa: SLF001 - measured from outside
                time.sleep(0.5)
                c0, s0, t0 = thread_cpu_s(w.native_id), w.sweeps, time.monotonic()
                stop = time.monotonic() + args.seconds
                while time.monotonic() < stop:
                    if churn:
                        with loop_device(1 << 20):
                            time.sleep(0.25)
                        time.sleep(0.25)
                    else:
                        time.sleep(0.5)
                cpu, sweeps, wall = thread_cpu_s(w.native_id) - c0, w.sweeps - s0, time.monotonic() - t0
            what = "attach/detach of an unrelated loop device twice a second" if churn else "nothing happening"
            print(f"watcher CPU, {what} ({args.extra_loops + 1} loop devices): {cpu:.2f} s over {wall:.1f} s "
                  f"= {100 * cpu / wall:.2f}% of one core, {sweeps} sweeps ({1e3 * cpu / max(sweeps, 1):.2f} ms each)")

        # 2. reaction to a loop device attached over the target's file
        delays, busy = [], 0
        for _ in range(args.attaches):
            with Claim(open_target(dev)) as claim:
                claim.watch(alarm)
                time.sleep(0.2)
                fired.clear()
                new = losetup(backing)
                t_back = time.monotonic()
                mkfs = subprocess.run(["mkfs.ext4", "-q", "-F", new], capture_output=True, text=True)
                busy += mkfs.returncode != 0 and "in use" in mkfs.stderr
                got = fired.wait(5)
                delays.append((alarms[-1][0] - t_back) if got else float("inf"))
            detach(new)
        delays.sort()
        print(f"reaction to a loop device attached over the target's file ({args.attaches} times): alarm after "
              f"losetup returned, median {1e3 * statistics.median(delays):.1f} ms, p95 "
              f"{1e3 * delays[int(0.95 * (len(delays) - 1))]:.1f} ms (negative: before losetup had returned); "
              f"a mkfs started at once found it busy {busy} of {args.attaches} times")


if __name__ == "__main__":
    main()
