"""The Executor protocol: run a batch of steps back to back on a target, return measurements."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..measurement import Measurement
from ..pts.workload import Step


@dataclass(frozen=True, slots=True)
class Area:
    """Where on the target the steps run: the active range, and for a segmented client test active
    range its segments (offset from the area's start, size; pts/segments.py)."""

    offset_bytes: int
    size_bytes: int
    segments: tuple[tuple[int, int], ...] = ()


@dataclass(slots=True)
class Batch:
    steps: list[Step]
    filename: str  # the device or file fio opens
    area: Area
    seed: int
    ioengine: str
    job_path: Path | None = None  # where to keep the job file
    output_path: Path | None = None  # where to keep fio's json+
    on_progress: Callable[[dict], None] | None = None  # live status: {"elapsed_s", "iops", "bw_bytes_per_s"}
    # Called with i = 0..len(steps) when step i starts (i = len(steps): when the last one ends),
    # so that telemetry is sampled at every boundary. The snapshots carry their own time and are
    # matched to steps by it: a late or skipped call never shifts another step's telemetry.
    on_boundary: Callable[[int], None] | None = None
    # The batch the runner will run next unless this one ends the part: an executor may start it
    # ahead so that it follows this one without a gap (see Executor.cancel_ahead).
    next: "Batch | None" = None
    cpus_allowed: str = ""  # fio's cpus_allowed: the CPUs this run's fio may use ("" = any)


@dataclass(slots=True)
class BatchResult:
    measurements: list[Measurement]
    wall_s: float
    tool_version: str
    warnings: list[str] = field(default_factory=list)
    # Per step: when its IO ran on the host clock and how that was observed (engine/fio.py
    # step_timeline; docs/results-format.md "timeline").
    timelines: list[dict] = field(default_factory=list)
    # Per step: its first IO and last completion as the device saw them, and the idle or overlap
    # into it from the step before (engine/devtrace.py device_view); None where not known.
    devices: list[dict | None] = field(default_factory=list)
    # Per step with a per-interval log (Step.interval_ms): its IOs per interval from its start
    # (engine/fioparse.interval_ios): {"period_ms", "ios", "covered_ios"}; None where it has none.
    intervals: list[dict | None] = field(default_factory=list)


class Executor(Protocol):
    name: str

    def version(self) -> str: ...

    def run(self, batch: Batch) -> BatchResult: ...

    def cancel_ahead(self) -> dict | None:
        """Stop whatever was started ahead for ``batch.next`` (the part is over, or the run stops);
        returns what it had done (None: nothing was started ahead)."""
        ...
