"""FakeExecutor: scripted measurements, so the whole runner can be tested in milliseconds.

By default it models a drive: IOPS fall from a fresh-out-of-box level towards a steady level
over the first rounds, with optional noise, so that steady state is reached after a few rounds.
Tests pass ``model`` to script other behaviour, ``fail_on_batch`` / ``interrupt_on_batch`` to
inject a fio failure or a Ctrl-C at a given batch number (1-based).

Time is virtual: steps follow each other ``gap_s`` apart (``gap`` scripts a boundary's gap in
seconds, negative for an overlap); a batch that was not announced as the previous batch's
``next`` starts at ``clock()`` (a test moves the clock to simulate hours between sessions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import random
import time
from typing import Callable

from ..errors import RunFailed
from ..measurement import DirectionStats, Measurement
from ..pts.workload import Step
from .base import Batch, BatchResult


def default_model(step: Step) -> float:
    """IOPS for a step: ~200k IOPS at 4KiB reads, writes 3x slower, decaying to 60% by round 4."""
    w = step.workload
    base = 200_000 * (4096 / max(w.block_size_bytes, 4096)) ** 0.8
    write_penalty = 1 + 2 * (100 - w.read_pct) / 100
    decay = 0.6 + 0.4 * max(0.0, 1 - (step.round - 1) / 3) if step.phase == "round" else 1.0
    return base / write_penalty * decay


def synth_measurement(step: Step, iops: float, start: float) -> Measurement:
    w = step.workload
    dur = step.duration_s if step.duration_s is not None else max(step.io_bytes or 0, 1) / (iops * w.block_size_bytes)
    r_iops = iops * w.read_pct / 100
    w_iops = iops - r_iops
    lat_ns = w.threads * w.iodepth / max(iops, 1e-9) * 1e9

    def d(x: float) -> DirectionStats:
        if x <= 0:
            return DirectionStats.empty()
        ios = int(round(x * dur))
        bins = {int(lat_ns * 0.5): ios // 2, int(lat_ns): ios - ios // 2 - ios // 100, int(lat_ns * 4): ios // 100}
        bins = {k: v for k, v in bins.items() if v}
        return DirectionStats(ios=ios, io_bytes=ios * w.block_size_bytes, iops=x, bw_bytes_per_s=x * w.block_size_bytes,
                              runtime_s=dur, lat_mean_ns=lat_ns, lat_min_ns=lat_ns * 0.5, lat_max_ns=lat_ns * 4,
                              lat_stddev_ns=lat_ns * 0.3,
                              lat_percentiles_ns={"50": float(int(lat_ns)), "99.999": float(int(lat_ns * 4))},
                              lat_bins_ns=bins)

    # CPU per job thread grows with the IO rate (a synthetic model, like the rest)
    usr = round(min(95.0, 2.0 + iops / max(w.threads, 1) / 4000), 2)
    return Measurement(read=d(r_iops), write=d(w_iops), duration_s=dur, start_time=start, end_time=start + dur,
                       lat_kind="total", jobname=f"s{step.index:04d}", cpu_usr_pct=usr,
                       cpu_sys_pct=round(min(99.0 - usr, 3 * usr), 2))


@dataclass
class FakeExecutor:
    model: Callable[[Step], float] = default_model
    noise: float = 0.0
    seed: int = 1
    fail_on_batch: int | None = None
    interrupt_on_batch: int | None = None
    batches: list[Batch] = field(default_factory=list)
    name: str = "fake"
    gap_s: float = 0.002
    gap: Callable[[Step, Step], float] | None = None  # (previous step, next step) -> gap in seconds
    clock: Callable[[], float] = time.time
    cancelled: int = 0  # batches started ahead and cancelled
    now: float = 0.0  # the virtual time of the boundary being reported (for a fake telemetry source)
    _last: tuple[Step, float] | None = field(default=None, repr=False)  # last step run and its end
    _ahead: Batch | None = field(default=None, repr=False)

    def version(self) -> str:
        return "fake-1.0"

    def cancel_ahead(self) -> dict | None:
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        self.cancelled += 1
        return {"steps": len(ahead.steps), "started": True, "ran_s": 0.0}

    def run(self, batch: Batch) -> BatchResult:
        self.batches.append(batch)
        n = len(self.batches)
        if self.interrupt_on_batch == n:
            raise KeyboardInterrupt
        if self.fail_on_batch == n:
            raise RunFailed("fio reported an I/O error in job s0001: Input/output error: check the device")
        rng = random.Random(self.seed * 7919 + n)
        chained = self._ahead is not None and self._ahead.steps == batch.steps
        self._ahead = batch.next
        out, timelines = [], []
        prev = self._last
        for i, s in enumerate(batch.steps):
            linked = i > 0 or chained
            # A planned idle (HIR) after the previous step is kept like the real gate keeps it.
            idle = prev[0].idle_after_s if prev else 0.0
            if prev is None or not linked:
                t = max(self.clock(), prev[1] + idle + self.gap_s if prev else 0.0)
            else:
                t = prev[1] + idle + (self.gap(prev[0], s) if self.gap else self.gap_s)
            self.now = t
            if batch.on_boundary:
                batch.on_boundary(i)
            iops = self.model(s) * (1 + rng.uniform(-self.noise, self.noise))
            m = synth_measurement(s, iops, t)
            out.append(m)
            timelines.append({"source": "fake", "chained": linked, "start_unix_s": m.start_time,
                              "end_unix_s": m.end_time, "late_ms": 0.0})
            prev = (s, m.end_time)
        self._last = prev
        self.now = prev[1] if prev else self.now
        if batch.on_boundary:
            batch.on_boundary(len(batch.steps))
        if batch.job_path:
            batch.job_path.write_text("; FakeExecutor: no fio job\n")
        if batch.output_path:
            batch.output_path.write_text(json.dumps({"fake": True, "steps": len(out)}))
        return BatchResult(measurements=out, wall_s=sum(m.duration_s for m in out), tool_version="fake-1.0",
                           timelines=timelines)
