"""The PTS tests as data (docs/pts-reference.md#tests): each test is one or more *parts*; a part is
purge -> optional WIPC -> rounds of steps until its stop rule holds. The test modules (iops.py,
tp.py, lat.py, wsat.py, hir.py, xsr.py, cbw.py, dirth.py) build their parts from these pieces;
plan.py plans a run's parts.

Stop rules: "steady-state" (docs/pts-reference.md#steady-state: rounds until the tracking variables pass, or max_rounds),
"wsat" (a number of samples or of bytes written) and "fixed" (exactly max_rounds rounds: the
planned sequences of HIR, XSR and the operating points of CBW/DIRTH). The parts of one test run
back to back; a part that ``needs`` an earlier one is planned from that part's results table
(CBW's operating points come from its demand-intensity sweep): ``bind`` turns the table into
the part's round builder, and until then its rounds hold placeholders of the same shape.

Everything here is pure: no files, no subprocesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..errors import UserError
from .runspec import RunSpec
from .workload import Sprandom, Step, Workload


@dataclass(frozen=True, slots=True)
class Tracking:
    """A tracking variable: which cell of a round, which metric, in which unit."""

    name: str  # e.g. "RND 4KiB 0/100 IOPS"
    key: str  # Workload.key of the tracked cell
    metric: str  # "iops" | "write_mb_per_s" | "lat_mean_us"
    unit: str


@dataclass(frozen=True, slots=True)
class Part:
    """One independently preconditioned unit of a test (TP has one per block size)."""

    test: str
    part: str  # "" for single-part tests, e.g. "1024KiB" for TP
    title: str
    purge: bool
    wipc: Step | None
    tracking: tuple[Tracking, ...]
    max_rounds: int
    stop_rule: str  # "steady-state" | "wsat" | "fixed"
    round_builder: Callable[[int], list[Step]]
    # WSAT only: bounds on the total number of one-step samples and on bytes written.
    wsat_max_steps: int = 0
    wsat_max_bytes: int = 0
    needs: str = ""  # id of the earlier part whose table plans this one
    table_args: dict[str, Any] = field(default_factory=dict)  # the test's options its build_table takes
    bind: Callable[[Any], Callable[[int], list[Step]]] | None = None  # that table -> this part's round builder

    @property
    def id(self) -> str:
        return f"{self.test}-{self.part}" if self.part else self.test

    def round_steps(self, round_no: int) -> list[Step]:
        if self.stop_rule == "fixed" and round_no > self.max_rounds:
            return []
        return self.round_builder(round_no)

    def bound(self, table: Any) -> "Part":
        """This part planned from the table of the part it needs (itself when it needs none or the
        table is not there yet)."""
        if self.bind is None or table is None:
            return self
        return replace(self, round_builder=self.bind(table), bind=None)


# fio allocates its per-job state (~215 KiB a clone with fio 3.33, latency histograms included;
# measured in benchmarks/fio_jobs.py) for every clone of every job section when it parses the job
# file, so a round's fio process holds sum(numjobs) of them for its whole life. Rounds are planned
# to stay within this many clones (~110 MiB): the CBW/DIRTH sweep round (515 clones) sets it.
MAX_CLONES_PER_ROUND = 520


def wipc_step(test: str, part: str, spec: RunSpec, ar_bytes: int, block_size_bytes: int, *,
              random_state: bool = True) -> Step:
    """WIPC: 2 x user capacity of SEQ writes over the active range (docs/pts-reference.md#wipc), TC1/QD32 so that
    the stream stays sequential; with ``--precondition sprandom`` the sprandom fill in its place where the
    test's steady state is a random-write one (``random_state``; TP's is sequential: it keeps its WIPC)."""
    if spec.precondition == "sprandom" and random_state:
        return sprandom_step(test, part, spec, ar_bytes)
    return Step(
        test=test, part=part, phase="wipc", round=0, index=1,
        workload=Workload("seq", 0, block_size_bytes, 1, 32),
        duration_s=None, io_bytes=int(ar_bytes * spec.wipc_capacity_multiple),
    )


SPRANDOM_LABEL = "sprandom fill"  # how the fill's step is labelled (the report tells it from a WIPC by it)
SPRANDOM_BLOCK = 4096  # sprandom's block: the drive's indirection unit, 4 KiB on nearly every SSD


def sprandom_step(test: str, part: str, spec: RunSpec, ar_bytes: int) -> Step:
    """The preconditioning by fio's sprandom (docs/methodology.md#preconditioning-by-sprandom): RND
    4KiB writes by one job at QD32 (sprandom allows one) over the active range, its physical
    capacity written once with the invalid blocks a random-write steady state leaves."""
    if spec.spr_op is None:
        raise UserError("--precondition sprandom: the drive's over-provisioning is not known: give it as "
                        "sprandom:OP, e.g. sprandom:0.07 (docs/methodology.md#preconditioning-by-sprandom)")
    spr = Sprandom(spec.spr_op)
    return Step(test=test, part=part, phase="wipc", round=0, index=1,
                workload=Workload("rand", 0, SPRANDOM_BLOCK, 1, 32), duration_s=None,
                io_bytes=spr.physical_bytes(ar_bytes, SPRANDOM_BLOCK), sprandom=spr,
                cell_label=f"{SPRANDOM_LABEL} (OP {spr.op:.4g}), RND 4KiB 0/100")


def random_fill(test: str, part: str, spec: RunSpec, ar_bytes: int) -> Step | None:
    """What comes before a random-write preconditioning that has no WIPC (HIR, ocp-idle-gc): the
    sprandom fill with ``--precondition sprandom`` (its rounds start from a random-write steady
    state, so the steady-state rule may hold sooner); None under the PTS."""
    return sprandom_step(test, part, spec, ar_bytes) if spec.precondition == "sprandom" else None


def cell_steps(test: str, part: str, round_no: int, workloads: list[Workload], step_s: float) -> list[Step]:
    return [
        Step(test=test, part=part, phase="round", round=round_no, index=i, workload=w, duration_s=step_s)
        for i, w in enumerate(workloads, start=1)
    ]


def minute_cell(minute: int) -> str:
    return f"m{minute:02d}"


def minutes_round(test: str, part: str, round_no: int, w: Workload, minutes: int, tracked: int,
                  step_s: float) -> list[Step]:
    """A preconditioning round of ``minutes`` PTS minutes of one workload (HIR, CBW, DIRTH: 30 x 1
    min), one step per minute; when that many job sections of TC clones would exceed
    MAX_CLONES_PER_ROUND, the tracked minute stays a step of its own and the minutes before and
    after it are one step each (the device sees the same continuous stimulus)."""
    def step(i: int, first: int, last: int) -> Step:
        label = f"minute {first}" if first == last else f"minutes {first}–{last}"
        return Step(test=test, part=part, phase="round", round=round_no, index=i, workload=w,
                    duration_s=(last - first + 1) * step_s, cell=minute_cell(first) if first == last
                    else f"m{first:02d}-{last:02d}", cell_label=f"{w.label}, {label}")

    if minutes * w.threads <= MAX_CLONES_PER_ROUND:
        return [step(m, m, m) for m in range(1, minutes + 1)]
    spans = [(1, tracked - 1), (tracked, tracked), (tracked + 1, minutes)]
    return [step(i, a, b) for i, (a, b) in enumerate([sp for sp in spans if sp[0] <= sp[1]], start=1)]


def chunks(steps: list[Step], per_round: int, *, cut_at_cell_change: bool = True) -> list[list[Step]]:
    """A long fixed sequence cut into rounds (one fio process and one fsync'd save each) of at most
    ``per_round`` steps. ``cut_at_cell_change``: a round never spans two cells (HIR: a round
    boundary then falls where the stimulus changes anyway); else a cut never falls on a change of
    cell, so that the change happens inside one fio process, with no start-up gap at it (XSR's
    change of stimulus is what it measures)."""
    out: list[list[Step]] = []
    i = 0
    while i < len(steps):
        end = min(i + per_round, len(steps))
        if cut_at_cell_change:
            end = next((j for j in range(i + 1, end) if steps[j].key != steps[i].key), end)
        elif end < len(steps) and steps[end].key != steps[end - 1].key:
            end -= max(1, per_round // 2)
        out.append(steps[i:end])
        i = end
    return [[replace(s, round=r) for s in c] for r, c in enumerate(out, start=1)]


def per_round(threads: int, wanted: int) -> int:
    """Steps of TC clones each that a round may hold: ``wanted``, or fewer to stay within
    MAX_CLONES_PER_ROUND."""
    return max(1, min(wanted, MAX_CLONES_PER_ROUND // max(threads, 1)))


def scaled(seconds: float, spec: RunSpec) -> float:
    """A PTS time constant under time compression: every constant is scaled by step_seconds / 60
    (one PTS minute is one step)."""
    return seconds * spec.step_seconds / 60.0


__all__ = ["Part", "Tracking", "wipc_step", "sprandom_step", "random_fill", "cell_steps", "minutes_round", "chunks", "per_round", "scaled",
           "MAX_CLONES_PER_ROUND"]
