"""The Executor protocol: run a batch of steps back to back on a target, return measurements."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..measurement import Measurement
from ..pts.workload import Step


@dataclass(frozen=True, slots=True)
class Area:
    """Where on the target the steps run: the active range."""

    offset_bytes: int
    size_bytes: int


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
    # Called with i = 0..len(steps) at each step boundary on the I/O timeline (i = len(steps): the
    # end), from a side thread, so that telemetry is sampled around every step without a gap.
    on_boundary: Callable[[int], None] | None = None


@dataclass(slots=True)
class BatchResult:
    measurements: list[Measurement]
    wall_s: float
    tool_version: str
    warnings: list[str] = field(default_factory=list)


class Executor(Protocol):
    name: str

    def version(self) -> str: ...

    def run(self, batch: Batch) -> BatchResult: ...
