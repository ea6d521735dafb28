"""ocp-idle-gc: read latency while the drive collects garbage in its idle time (OCP Datacenter NVMe SSD
Specification 2.0, section 4.10: TRIM-5 "The device shall support Garbage Collection during periods
of no I/O (Idle GC)", TRIM-7 "Read latency shall not change more than 5% from baseline when the
device is performing Idle GC"; docs/ocp.md; what the two OCP tests share is pts/ocp.py).

Purge; no WIPC (with --precondition sprandom: the sprandom fill); preconditioning to steady state as HIR's (RND 4KiB 0/100 at the run's TC × QD,
rounds of 30 PTS minutes, tracking the last minute's IOPS, docs/pts-reference.md#steady-state). Then one round, back to
back through the step gate: a short read and ``--ocp-settle-s`` with no IO (the drive may finish
its idle GC), then ``--ocp-pairs`` times: the baseline (probe reads: QD 1 4 KiB random reads over the
first half of the active range, each followed by ``--ocp-probe-gap-ms`` with no IO, for
``--ocp-read-s``), a random-write burst (RND 4KiB 0/100 at the run's TC × QD over the whole active
range, ``--ocp-burst-s``), and right after it the idle phase: the same sparse probes, so that the
drive has "periods of no I/O" between them in which it may collect the blocks the burst left
invalid; then ``--ocp-settle-s`` with no IO before the next pair's baseline. Baseline and idle
phases are probed alike, so the change is the idle GC's alone. Continuous reads (the test's first
form) gave a drive that collects only when no IO arrives no idle time at all.

Evidence that idle GC ran: the drive's media writes (telemetry: the OCP SMART extended log's
physical media units written, a SATA NAND-writes attribute, the reference SSD's flash pages) rising
beyond its host writes over an idle phase; the table says "not observed" where they did not, and
the verdict is then inconclusive (TRIM-7's condition did not hold). The probes' duty cycle (the
share of the phase a read was in flight) says how much of the idle time they took.
"""

from __future__ import annotations

from typing import Any

from . import ocp
from .parts import Part, Tracking, minute_cell, minutes_round, random_fill, scaled
from .runspec import RunSpec
from .tables import WindowCells, level_table
from .units import KiB
from .workload import Step, Workload

NAME = "ocp-idle-gc"
TITLE = "OCP: read latency during idle garbage collection (TRIM-7)"
ORDER = 100  # its place in the run order (pts/catalog.py)
USES_TC_QD = True  # its stimulus runs at the run's TC and QD (--threads, --iodepth, or the profile's)
PRECONDITION_MINUTES = 30  # as HIR [V CH, AD]
TRACKED_MINUTE = 30
# The options a report reads, each with its value in a run recorded without it (before the gap option: none).
PAGES = "ocp"  # report/pages/ocp.py (both OCP checks' pages)
OPTIONS = {**ocp.OPTIONS, "ocp_burst_s": 60, "ocp_probe_gap_ms": 0}
TABLES = (ocp.OcpTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED, HEADLINES, cell_label, summary = ocp.COMPARED, ocp.HEADLINES, ocp.cell_label, ocp.summary
TABLE_TELEMETRY = True  # build_table takes each cell's telemetry (results/analysis.table_for)


def writes(spec: RunSpec) -> Workload:
    return Workload("rand", 0, 4 * KiB, spec.tc, spec.qd)


def sequence(spec: RunSpec) -> list[Step]:
    gap = spec.ocp_probe_gap_ms
    probes = f"probe reads (QD1 4KiB random, {gap:g} ms apart)" if gap else "QD1 4KiB random reads"
    out = [ocp.settle_step(NAME, "measure", spec, 1)]
    for n in range(1, spec.ocp_pairs + 1):
        out += [ocp.read_step(NAME, "measure", spec, len(out) + 1, f"baseline-{n}", f"baseline {n}: {probes}",
                              gap_ms=gap),
                Step(test=NAME, part="measure", phase="round", round=1, index=len(out) + 2, workload=writes(spec),
                     duration_s=scaled(spec.ocp_burst_s, spec), cell=f"burst-{n}",
                     cell_label=f"write burst {n}: {writes(spec).label} at TC {spec.tc} × QD {spec.qd}"),
                ocp.read_step(NAME, "measure", spec, len(out) + 3, f"idle-{n}",
                              f"idle {n}: the same {probes} right after the burst", gap_ms=gap,
                              idle_after_s=scaled(spec.ocp_settle_s, spec))]
    return out


def _tracking(w: Workload) -> Tracking:
    return Tracking(name=f"{w.label} IOPS, minute {TRACKED_MINUTE} of the round", key=minute_cell(TRACKED_MINUTE),
                    metric="iops", unit="IOPS")


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    w = writes(spec)
    steps = sequence(spec)
    return [
        Part(test=NAME, part="precondition", title="OCP idle GC: preconditioning", purge=True,
             wipc=random_fill(NAME, "precondition", spec, ar_bytes),
             tracking=(_tracking(w),), max_rounds=spec.max_rounds, stop_rule="steady-state",
             round_builder=lambda r: minutes_round(NAME, "precondition", r, w, PRECONDITION_MINUTES, TRACKED_MINUTE,
                                                   spec.step_seconds)),
        Part(test=NAME, part="measure", title=TITLE, purge=False, wipc=None, tracking=(), max_rounds=1,
             stop_rule="fixed", round_builder=lambda r: steps,
             table_args={"limit_pct": spec.ocp_limit_pct, "judged": spec.ocp_judge,
                         "probe_gap_ms": spec.ocp_probe_gap_ms}),
    ]


def build_table(steps: list[Step], cells: WindowCells, limit_pct: float = 5.0,
                judged: tuple[str, ...] = ocp.JUDGED, telemetry: Any = None, **extra: Any) -> Any:
    """The preconditioning part's steady level, or the measurement's phases."""
    if steps and steps[0].part == "precondition":
        return level_table([_tracking(steps[0].workload)], steps, cells)
    return ocp.build(NAME, steps, cells, "idle", limit_pct, judged, telemetry, **extra)
