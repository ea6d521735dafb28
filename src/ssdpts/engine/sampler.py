"""Live progress without touching fio: completed IOs and bytes moved, once per second, from the
kernel's block statistics of the device (or the fio process's I/O bytes for a file target); for a
device on another host, the same statistics read there by its agent (engine/gatehost.py)."""

from __future__ import annotations

import os
from pathlib import Path
import threading
import time
from typing import Callable

from .base import Batch

Counters = Callable[[], "tuple[float, float] | None"]


def local_counters(filename: str, pid: int) -> Counters:
    """(completed IOs, bytes) so far of ``filename``'s device on this host; a file target: NaN IOs
    and the bytes fio's process moved (IOPS then from the step's block size)."""
    name = os.path.basename(os.path.realpath(filename))
    stat_path = Path(f"/sys/class/block/{name}/stat")

    def counters() -> tuple[float, float] | None:
        try:
            if stat_path.exists():
                f = stat_path.read_text().split()
                return float(f[0]) + float(f[4]), (float(f[2]) + float(f[6])) * 512
            io = dict(ln.split(": ") for ln in Path(f"/proc/{pid}/io").read_text().splitlines())
            b = float(io["read_bytes"]) + float(io["write_bytes"])
            return None if b == 0 else (float("nan"), b)
        except (OSError, ValueError, KeyError, IndexError):
            return None

    return counters


class Sampler(threading.Thread):
    """Calls ``batch.on_progress`` once a second with the current IOPS and bandwidth."""

    def __init__(self, batch: Batch, t0: float, current: Callable[[], int], counters: Counters):
        super().__init__(daemon=True)
        self.batch, self.t0, self.current, self.counters = batch, t0, current, counters
        self.stop_event = threading.Event()

    def _counters(self) -> tuple[float, float] | None:
        try:
            return self.counters()
        except Exception:  # noqa: BLE001 - a display problem must never stop a measurement
            return None

    def run(self) -> None:
        prev = self._counters()
        prev_t = time.monotonic()
        while not self.stop_event.wait(1.0):
            cur = self._counters()
            now = time.monotonic()
            if cur is None or prev is None or self.batch.on_progress is None:
                prev, prev_t = cur, now
                continue
            dt = now - prev_t
            idx = max(self.current(), 0)
            step = self.batch.steps[min(idx, len(self.batch.steps) - 1)]
            ios = (cur[0] - prev[0]) / dt
            bw = (cur[1] - prev[1]) / dt
            if ios != ios:  # file target: IOPS from bytes and the current block size
                ios = bw / step.workload.block_size_bytes
            try:
                self.batch.on_progress({"elapsed_s": now - self.t0, "step_index": idx, "iops": ios,
                                        "bw_bytes_per_s": bw})
            except Exception:  # noqa: BLE001 - a display problem must never stop a measurement
                pass
            prev, prev_t = cur, now
