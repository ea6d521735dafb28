"""ocp-trim: read latency while the host deallocates (OCP Datacenter NVMe SSD Specification 2.0, section
4.10, TRIM-6: "Read latency shall not change more than 5% from baseline when the host is issuing
De-Allocate/TRIM commands"; docs/ocp.md; what the two OCP tests share is pts/ocp.py).

Purge; WIPC (2 × the active range of SEQ 128KiB writes: every LBA mapped); then one round of
steps, back to back through the step gate: a short read and ``--ocp-settle-s`` with no IO (the
drive may finish its idle work), then ``--ocp-pairs`` pairs, alternating: a baseline (QD 1 4 KiB
random reads over the first half of the active range, ``--ocp-read-s``) and the same reads with a
deallocation job beside them for the whole step (fio ``rw=trim``: sequential ranges of
``--ocp-trim-size``, ``trim_rate`` a second, over the pair's own slice of the second half of the
active range: 1/``--ocp-pairs`` of it, never deallocated before; its IOs counted apart,
Measurement.trim), followed by ``--ocp-settle-s`` with no IO so that the next
baseline does not read behind the drive's deallocation work.

The deallocation rate by default (``--ocp-trim-rate`` unset) comes from the specification's own
workloads (Appendix A.2.1, HE_Flash_Short_wTRIM, "TRIM BW per TB": 117 MiB/s for 4K_L2R6DWPD_wTRIM,
156 MiB/s for 4K_L2R9DWPD_wTRIM): ``--ocp-trim-mib-s-per-tb`` × capacity / 10^12 bytes, in ranges of
``--ocp-trim-size`` a second (fio takes whole ranges a second: at least 1).
"""

from __future__ import annotations

from typing import Any

from . import ocp
from .parts import Part, scaled, wipc_step
from .runspec import RunSpec
from .tables import WindowCells
from .units import KiB, MiB
from .workload import Beside, Step

NAME = "ocp-trim"
TITLE = "OCP: read latency under deallocation (TRIM-6)"
ORDER = 90  # its place in the run order (pts/catalog.py)
WIPC_BLOCK = 128 * KiB
TB = 10 ** 12  # A.2.1's "per TB": a drive's capacity in decimal terabytes
# The options a report reads, each with its value in a run recorded without it; a recorded null
# ocp_trim_rate means A.2.1's rate for the capacity (NULLABLE).
OPTIONS = {**ocp.OPTIONS, "ocp_trim_rate": 10.0, "ocp_trim_mib_s_per_tb": 117, "ocp_trim_size": 1 << 20}
NULLABLE = ("ocp_trim_rate",)
PAGES = "ocp"  # report/pages/ocp.py (both OCP checks' pages)
TABLES = (ocp.OcpTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED, HEADLINES, cell_label, summary = ocp.COMPARED, ocp.HEADLINES, ocp.cell_label, ocp.summary
TABLE_TELEMETRY = True  # build_table takes each cell's telemetry (results/analysis.table_for)


def target_mib_s(spec: RunSpec, capacity_bytes: int) -> float:
    """A.2.1's deallocation bandwidth for this capacity, MiB/s."""
    return spec.ocp_trim_mib_s_per_tb * capacity_bytes / TB


def trim_rate(spec: RunSpec, capacity_bytes: int) -> float:
    """Ranges a second: ``--ocp-trim-rate`` where given, else A.2.1's bandwidth for the capacity."""
    if spec.ocp_trim_rate is not None:
        return spec.ocp_trim_rate
    return target_mib_s(spec, capacity_bytes) * MiB / spec.ocp_trim_size


def beside(spec: RunSpec, rate: float, pair: int = 1) -> Beside:
    """Pair n's deallocation job: its own slice of the second half (the n-th of ``--ocp-pairs``), so that
    no phase deallocates what an earlier one already did (a drive has nothing to do for an unmapped
    range); a phase that deallocates more than its slice wraps around within it."""
    share = 50 / spec.ocp_pairs
    return Beside("trim", spec.ocp_trim_size, rate, start_pct=50 + share * (pair - 1), size_pct=share)


def sequence(spec: RunSpec, capacity_bytes: int) -> list[Step]:
    rate = trim_rate(spec, capacity_bytes)
    shown = f"{max(1.0, rate):.4g}/s" if rate else "unlimited"
    out = [ocp.settle_step(NAME, "", spec, 1)]
    for n in range(1, spec.ocp_pairs + 1):
        out += [ocp.read_step(NAME, "", spec, len(out) + 1, f"baseline-{n}", f"baseline {n}: QD1 4KiB random reads alone"),
                ocp.read_step(NAME, "", spec, len(out) + 2, f"trim-{n}",
                              f"trim {n}: the same reads beside deallocation ({spec.ocp_trim_size // KiB} KiB ranges, "
                              f"{shown})", beside=beside(spec, rate, n), idle_after_s=scaled(spec.ocp_settle_s, spec))]
    return out


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    steps = sequence(spec, capacity_bytes)
    return [Part(test=NAME, part="", title=TITLE, purge=True, wipc=wipc_step(NAME, "", spec, ar_bytes, WIPC_BLOCK),
                 tracking=(), max_rounds=1, stop_rule="fixed", round_builder=lambda r: steps,
                 table_args={"limit_pct": spec.ocp_limit_pct, "judged": spec.ocp_judge,
                              "trim_rate": trim_rate(spec, capacity_bytes),
                              "trim_target_mib_s": target_mib_s(spec, capacity_bytes)})]


def build_table(steps: list[Step], cells: WindowCells, limit_pct: float = 5.0,
                judged: tuple[str, ...] = ocp.JUDGED, **extra: Any) -> Any:
    return ocp.build(NAME, steps, cells, "trim", limit_pct, judged, **extra)
