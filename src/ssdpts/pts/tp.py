"""Throughput test (PTS.md §3): per block size its own purge and WIPC (SEQ writes at that block
size), then rounds of {SEQ 100% read, SEQ 100% write}, tracking write MB/s."""

from __future__ import annotations

from .parts import Part, Tracking, cell_steps, wipc_step
from .runspec import RunSpec
from .units import fmt_block_size
from .workload import Workload


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    prof = spec.prof
    out = []
    for bs in prof.tp_block_sizes:
        name = fmt_block_size(bs)
        wl = [Workload("seq", 100, bs, prof.tp_threads, prof.tp_iodepth),
              Workload("seq", 0, bs, prof.tp_threads, prof.tp_iodepth)]
        out.append(
            Part(
                test="tp", part=name, title=f"Throughput {name}",
                purge=True,
                wipc=wipc_step("tp", name, spec, ar_bytes, bs),
                tracking=(Tracking(name=f"{wl[1].label} MB/s", key=wl[1].key, metric="write_mb_per_s", unit="MB/s"),),
                max_rounds=spec.max_rounds,
                stop_rule="steady-state",
                round_builder=lambda r, wl=wl, name=name: cell_steps("tp", name, r, wl, spec.step_seconds),
            )
        )
    return out
