"""Device activity from the kernel's block-layer counters (/sys/block/<dev>/stat): IOs completed
(reads and writes) and IOs in flight, sampled about every half millisecond by a process of its
own (a thread of the test would stall whenever the test's own Python code holds the interpreter).

The device is idle over a sampling interval when no IO completed in it and none was in flight at
either end: an IO is in flight from the moment it is issued until it completes, so an IO issued
and completed between two samples still moves the completed count. Busy intervals are the
union of the other sampling intervals; a measured idle is therefore at most one sampling
interval shorter than the true one at each end.
"""

from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import time


class Activity:
    def __init__(self, dev: str, period_s: float = 0.0005):
        self.path = Path(f"/sys/block/{os.path.basename(os.path.realpath(dev))}/stat")
        self.period_s = period_s
        self.samples: list[tuple[float, int, int]] = []  # (CLOCK_MONOTONIC s, IOs completed, IOs in flight)
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, str(self.path), str(self.period_s)],
                                     stdout=subprocess.PIPE, text=True)
        while not (line := self.proc.stdout.readline()).startswith("ready"):
            if not line:  # the sampler ended without starting
                raise RuntimeError(f"the block stat sampler of {self.path} exited {self.proc.wait()}")

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=30)
        self.samples = [(float(t), int(n), int(f)) for t, n, f in (ln.split() for ln in out.splitlines() if ln)]

    def busy(self, merge_s: float = 0.0) -> list[tuple[float, float]]:
        """Busy intervals, idle gaps of at most merge_s merged."""
        out: list[list[float]] = []
        for (t0, n0, f0), (t1, n1, f1) in zip(self.samples, self.samples[1:]):
            if n1 != n0 or f0 or f1:
                if out and t0 - out[-1][1] <= merge_s:
                    out[-1][1] = t1
                else:
                    out.append([t0, t1])
        return [(a, b) for a, b in out]

    def max_interval_s(self, start: float, end: float) -> float:
        """The longest sampling interval within [start, end]: the resolution there."""
        ts = [s[0] for s in self.samples if start <= s[0] <= end]
        return max((b - a for a, b in zip(ts, ts[1:])), default=float("inf"))


def _sample(path: str, period_s: float) -> None:
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rows = []
    print("ready", flush=True)
    with open(path, "rb", buffering=0) as f:
        while not stop:
            f.seek(0)
            x = f.read().split()
            rows.append((time.monotonic(), int(x[0]) + int(x[4]), int(x[8])))
            time.sleep(period_s)
    sys.stdout.write("".join(f"{t:.6f} {n} {fl}\n" for t, n, fl in rows))


if __name__ == "__main__":
    _sample(sys.argv[1], float(sys.argv[2]))
