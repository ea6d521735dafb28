"""Write Saturation test (PTS.md §3): purge, no preconditioning, continuous RND 4KiB 100% write at
the chosen TC/QD, one sample per step (the PTS minute). Stops at --wsat-hours or once
--wsat-capacity-multiple x user capacity has been written (TGBW), whichever comes first.

The samples are run in chunks of ``wsat_chunk_steps`` steps per fio process; a chunk is the unit
that is saved (fsync'd) and the granularity of the TGBW check. Index numbers count minutes from
the start of the test across chunks."""

from __future__ import annotations

import math

from .parts import Part, Tracking
from .runspec import RunSpec
from .units import KiB
from .workload import Step, Workload


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    w = Workload("rand", 0, 4 * KiB, spec.tc, spec.qd)
    max_steps = max(1, round(spec.wsat_hours * 3600 / 60))  # one sample per PTS minute
    chunk = spec.wsat_chunk_steps
    max_chunks = math.ceil(max_steps / chunk)

    def chunk_steps(r: int) -> list[Step]:
        first = (r - 1) * chunk + 1
        last = min(r * chunk, max_steps)
        return [Step(test="wsat", part="", phase="round", round=r, index=i, workload=w, duration_s=spec.step_seconds)
                for i in range(first, last + 1)]

    return [
        Part(
            test="wsat", part="", title="Write Saturation",
            purge=True, wipc=None,
            tracking=(Tracking(name=f"{w.label} IOPS", key=w.key, metric="iops", unit="IOPS"),),
            max_rounds=max_chunks,
            stop_rule="wsat",
            round_builder=chunk_steps,
            wsat_max_steps=max_steps,
            wsat_max_bytes=int(spec.wsat_capacity_multiple * capacity_bytes),
        )
    ]
