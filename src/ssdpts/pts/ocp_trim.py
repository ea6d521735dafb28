"""ocp-trim: read latency while the drive processes deallocations (OCP Datacenter NVMe SSD spec 2.7
TRIM-6, docs/ocp.md; what the two OCP tests share is pts/ocp.py).

Purge; WIPC (2 × the active range of SEQ 128KiB writes: every LBA mapped); then one round of
steps, back to back through the step gate: a short read and ``--ocp-settle-s`` with no IO (the
drive may finish its idle work), the baseline (QD 1 4 KiB random reads over the first half of the
active range, ``--ocp-read-s``), and the same reads again with a deallocation job beside them for
the whole step (fio ``rw=trim``: sequential ranges of ``--ocp-trim-size`` over the second half of
the active range, at most ``--ocp-trim-rate`` a second; its IOs counted apart, Measurement.trim).
"""

from __future__ import annotations

from typing import Any

from . import ocp
from .parts import Part, wipc_step
from .runspec import RunSpec
from .tables import WindowCells
from .units import KiB
from .workload import Beside, Step

NAME, TITLE = "ocp-trim", "OCP: read latency under deallocation (TRIM-6)"
WIPC_BLOCK = 128 * KiB
COMPARED, HEADLINES, cell_label = ocp.COMPARED, ocp.HEADLINES, ocp.cell_label


def beside(spec: RunSpec) -> Beside:
    return Beside("trim", spec.ocp_trim_size, spec.ocp_trim_rate, start_pct=50, size_pct=50)


def sequence(spec: RunSpec) -> list[Step]:
    rate = f"{spec.ocp_trim_rate:g}/s" if spec.ocp_trim_rate else "unlimited"
    return [ocp.settle_step(NAME, "", spec, 1),
            ocp.read_step(NAME, "", spec, 2, "baseline", "baseline: QD1 4KiB random reads alone"),
            ocp.read_step(NAME, "", spec, 3, "trim", f"the same reads beside deallocation ({spec.ocp_trim_size // KiB} KiB "
                          f"ranges, {rate})", beside=beside(spec))]


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    steps = sequence(spec)
    return [Part(test=NAME, part="", title=TITLE, purge=True, wipc=wipc_step(NAME, "", spec, ar_bytes, WIPC_BLOCK),
                 tracking=(), max_rounds=1, stop_rule="fixed", round_builder=lambda r: steps,
                 table_args={"limit_pct": spec.ocp_limit_pct, "judged": spec.ocp_judge})]


def build_table(steps: list[Step], cells: WindowCells, limit_pct: float = 5.0,
                judged: tuple[str, ...] = ocp.JUDGED) -> Any:
    return ocp.build(NAME, steps, cells, "trim", limit_pct, judged)
