"""The demand-intensity flow CBW and DIRTH share (docs/pts-reference.md#cbw, #dirth; source AD).

1. Purge -> WIPC (2 x AR of SEQ 128KiB W).
2. Preconditioning: the test's access pattern at 100% W, TC32/QD32, rounds of 30 x 1 min, tracking
   the first minute's IOPS of each round, to steady state.
3. Demand-intensity rounds: 5 min TC32/QD32 100% W pre-write, then 49 x 1 min at the test's R/W
   mix over TC (outer) x QD (inner), each from 32 down to 1 (32, 16, 8, 6, 4, 2, 1), tracking the
   TC32/QD32 IOPS, to steady state. One round is one fio process with no gap between its steps.
4. Operating points from the steady-state window [rules ?, options]: Max = the highest IOPS whose
   mean response time is below a ceiling (default 5 ms); Min = TC1/QD1; Mid = the combination whose
   IOPS is nearest (Max + Min) / 2 ("iops-midpoint", default), or whose TOIO is nearest the
   geometric middle of theirs ("toio-midpoint").
5. For each point: 60 min pre-write at 100% W (TC32/QD32, as the round's pre-write [?]), then
   10 min at the point with its response-time histogram (fio json+ bins).

Demand intensity is TC = fio numjobs and QD = fio iodepth (docs/pts-reference.md#demand-intensity), never the other way round
(AD swaps them). The points part is planned from the sweep's table (Part.needs / Part.bind).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, ClassVar

from .parts import Part, Tracking, minute_cell, minutes_round, scaled, wipc_step
from .runspec import RunSpec
from .tables import Cell, WindowCells, average, level_table, num
from .units import KiB
from .workload import Step, Workload

TCS = (32, 16, 8, 6, 4, 2, 1)  # outer loop, high to low
QDS = (32, 16, 8, 6, 4, 2, 1)  # inner loop, high to low
PRECONDITION_MINUTES = 30
TRACKED_MINUTE = 1  # preconditioning tracks each round's first minute [V AD]
PREWRITE_S = 5 * 60.0
POINT_PREWRITE_S = 60 * 60.0
POINT_S = 10 * 60.0
POINTS = ("Max", "Mid", "Min")
PLACEHOLDER = {"Max": (32, 32), "Mid": (4, 8), "Min": (1, 1)}  # until the sweep has chosen
PERCENTILES = (99.9, 99.99, 99.999)  # "3/4/5 nines"
# The options a report reads, each with its value in a run recorded without it.
OPTIONS = {"op_ceiling_ms": 5, "op_mid": "iops-midpoint"}


def sweep_cell(tc: int, qd: int) -> str:
    return f"tc{tc}-qd{qd}"


def demand_label(tc: int, qd: int) -> str:
    return f"TC{tc}/QD{qd}"


def parts(test: str, title: str, spec: RunSpec, ar_bytes: int, access: Workload) -> list[Part]:
    """The three parts of a demand-intensity test for an access pattern (its R/W mix included)."""
    write = access.with_demand(32, 32, read_pct=0)
    step_s = spec.step_seconds
    top = access.with_demand(32, 32)

    def sweep_round(r: int) -> list[Step]:
        out = [Step(test=test, part="demand-intensity", phase="round", round=r, index=1, workload=write,
                    duration_s=scaled(PREWRITE_S, spec), cell="prewrite",
                    cell_label=f"pre-write, {write.label} TC32/QD32")]
        for tc in TCS:
            for qd in QDS:
                out.append(Step(test=test, part="demand-intensity", phase="round", round=r, index=len(out) + 1,
                                workload=access.with_demand(tc, qd), duration_s=step_s, cell=sweep_cell(tc, qd),
                                cell_label=f"{access.label} {demand_label(tc, qd)}"))
        return out

    def points_builder(chosen: dict[str, tuple[int, int]]):
        def build(r: int) -> list[Step]:
            name = POINTS[r - 1]
            tc, qd = chosen.get(name) or PLACEHOLDER[name]
            return [Step(test=test, part="operating-points", phase="round", round=r, index=1, workload=write,
                         duration_s=scaled(POINT_PREWRITE_S, spec), cell=f"{name.lower()}-prewrite",
                         cell_label=f"{name}: pre-write, {write.label} TC32/QD32"),
                    Step(test=test, part="operating-points", phase="round", round=r, index=2,
                         workload=access.with_demand(tc, qd), duration_s=scaled(POINT_S, spec), cell=name.lower(),
                         cell_label=f"{name}: {access.label} {demand_label(tc, qd)}")]
        return build

    return [
        Part(test=test, part="precondition", title=f"{title}: preconditioning", purge=True,
             wipc=wipc_step(test, "precondition", spec, ar_bytes, 128 * KiB),
             tracking=(Tracking(f"{write.label} TC32/QD32 IOPS, minute {TRACKED_MINUTE} of the round",
                                minute_cell(TRACKED_MINUTE), "iops", "IOPS"),),
             max_rounds=spec.max_rounds, stop_rule="steady-state",
             round_builder=lambda r: minutes_round(test, "precondition", r, write, PRECONDITION_MINUTES,
                                                   TRACKED_MINUTE, step_s)),
        Part(test=test, part="demand-intensity", title=f"{title}: demand intensity", purge=False, wipc=None,
             tracking=(Tracking(f"{top.label} {demand_label(32, 32)} IOPS", sweep_cell(32, 32), "iops", "IOPS"),),
             max_rounds=spec.max_rounds, stop_rule="steady-state", round_builder=sweep_round,
             table_args={"ceiling_us": spec.op_ceiling_ms * 1000.0, "mid_rule": spec.op_mid}),
        Part(test=test, part="operating-points", title=f"{title}: operating points", purge=False, wipc=None,
             tracking=(), max_rounds=len(POINTS), stop_rule="fixed", round_builder=points_builder({}),
             needs=f"{test}-demand-intensity",
             bind=lambda table: points_builder(table.chosen() if isinstance(table, DemandTable) else {})),
    ]


# ---- operating points ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DemandRow:
    tc: int
    qd: int
    iops: float | None
    lat_mean_us: float | None
    lat_max_us: float | None
    cpu_pct: float | None  # fio's usr + sys CPU of the step's threads, % of one CPU per thread

    @property
    def toio(self) -> int:
        return self.tc * self.qd


def choose_points(rows: list[DemandRow], ceiling_us: float, mid_rule: str) -> tuple[dict[str, tuple[int, int]], str]:
    """(point -> (TC, QD), a note when the rule had to fall back)."""
    have = [r for r in rows if r.iops and r.lat_mean_us is not None]
    if not have:
        return {}, "no demand-intensity cell has a value"
    note = ""
    mn = next((r for r in have if (r.tc, r.qd) == (1, 1)), min(have, key=lambda r: r.toio))
    below = [r for r in have if r.lat_mean_us < ceiling_us]
    if below:
        mx = max(below, key=lambda r: (r.iops, -r.toio))
    else:
        mx = min(have, key=lambda r: (r.lat_mean_us, r.toio))
        note = (f"no combination has a mean response time below {ceiling_us / 1000:g} ms: Max is the one with the "
                "lowest mean response time")
    if mid_rule == "toio-midpoint":
        target = math.sqrt(mx.toio * mn.toio)
        mid = min(have, key=lambda r: (abs(math.log(r.toio / target)), r.toio))
    else:
        target = (mx.iops + mn.iops) / 2
        mid = min(have, key=lambda r: (abs(r.iops - target), r.toio))
    return {"Max": (mx.tc, mx.qd), "Mid": (mid.tc, mid.qd), "Min": (mn.tc, mn.qd)}, note


@dataclass(frozen=True, slots=True)
class DemandTable:
    """The sweep's window averages per TC x QD, and the operating points they give."""

    block_size_bytes: int | None  # None: a composite pattern (CBW)
    mix: str
    rows: tuple[DemandRow, ...]
    ceiling_us: float
    mid_rule: str
    points: tuple[tuple[str, int, int], ...]  # (Max|Mid|Min, TC, QD)
    note: str = ""
    unit: str = "IOPS"
    kind: ClassVar[str] = "demand-intensity"

    def chosen(self) -> dict[str, tuple[int, int]]:
        return {name: (tc, qd) for name, tc, qd in self.points}

    def row(self, tc: int, qd: int) -> DemandRow | None:
        return next((r for r in self.rows if (r.tc, r.qd) == (tc, qd)), None)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "block_size_bytes": self.block_size_bytes, "mix": self.mix,
                "rows": [{"tc": r.tc, "qd": r.qd, "iops": r.iops, "lat_mean_us": r.lat_mean_us,
                          "lat_max_us": r.lat_max_us, "cpu_pct": r.cpu_pct} for r in self.rows],
                "ceiling_us": self.ceiling_us, "mid_rule": self.mid_rule,
                "points": [{"point": n, "tc": tc, "qd": qd} for n, tc, qd in self.points], "note": self.note}

    @classmethod
    def from_dict(cls, d: dict) -> "DemandTable":
        rows = tuple(DemandRow(int(r["tc"]), int(r["qd"]), num(r.get("iops")), num(r.get("lat_mean_us")),
                               num(r.get("lat_max_us")), num(r.get("cpu_pct"))) for r in d.get("rows") or ())
        bs = d.get("block_size_bytes")
        return cls(None if bs is None else int(bs), str(d.get("mix", "")), rows, float(d.get("ceiling_us") or 5000.0),
                   str(d.get("mid_rule") or "iops-midpoint"),
                   tuple((str(p["point"]), int(p["tc"]), int(p["qd"])) for p in d.get("points") or ()),
                   str(d.get("note") or ""), d.get("unit", "IOPS"))

    def cells(self) -> list[Cell]:
        out = []
        for r in self.rows:
            p = demand_label(r.tc, r.qd)
            out += [Cell("iops", self.block_size_bytes, self.mix, r.iops, p),
                    Cell("lat_mean_us", self.block_size_bytes, self.mix, r.lat_mean_us, p),
                    Cell("lat_max_us", self.block_size_bytes, self.mix, r.lat_max_us, p),
                    Cell("cpu_pct", self.block_size_bytes, self.mix, r.cpu_pct, p)]
        return out


# ---- the operating points' 10-minute measurements ----------------------------------------------------

@dataclass(frozen=True, slots=True)
class PointRow:
    point: str  # Max | Mid | Min
    tc: int
    qd: int
    iops: float | None
    lat_mean_us: float | None
    lat_p999_us: float | None
    lat_p9999_us: float | None
    lat_p99999_us: float | None
    lat_max_us: float | None
    prewrite_iops: float | None  # the 60-min pre-write before it

    METRICS: ClassVar[tuple[str, ...]] = ("iops", "lat_mean_us", "lat_p999_us", "lat_p9999_us", "lat_p99999_us",
                                          "lat_max_us", "prewrite_iops")


@dataclass(frozen=True, slots=True)
class PointsTable:
    block_size_bytes: int | None
    mix: str
    rows: tuple[PointRow, ...]
    unit: str = "µs"
    kind: ClassVar[str] = "operating-points"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "block_size_bytes": self.block_size_bytes, "mix": self.mix,
                "rows": [{"point": r.point, "tc": r.tc, "qd": r.qd, **{m: getattr(r, m) for m in PointRow.METRICS}}
                         for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict) -> "PointsTable":
        bs = d.get("block_size_bytes")
        rows = tuple(PointRow(str(r["point"]), int(r["tc"]), int(r["qd"]), *(num(r.get(m)) for m in PointRow.METRICS))
                     for r in d.get("rows") or ())
        return cls(None if bs is None else int(bs), str(d.get("mix", "")), rows, d.get("unit", "µs"))

    def cells(self) -> list[Cell]:
        return [Cell(m, self.block_size_bytes, self.mix, getattr(r, m), r.point) for r in self.rows
                for m in PointRow.METRICS]


def _block_size(w: Workload) -> int | None:
    return None if w.name else w.block_size_bytes


def build_table(steps: list[Step], cells: WindowCells, ceiling_us: float = 5000.0,
                mid_rule: str = "iops-midpoint") -> Any:
    part = steps[0].part if steps else ""
    if part == "precondition":
        w = steps[0].workload
        return level_table([Tracking(f"{w.label} TC32/QD32 IOPS, minute {TRACKED_MINUTE} of the round",
                                     minute_cell(TRACKED_MINUTE), "iops", "IOPS")], steps, cells)
    if part == "demand-intensity":
        sweep = [s for s in steps if s.key != "prewrite"]
        rows = []
        for s in sweep:
            ms = cells.get(s.key, [])
            rows.append(DemandRow(s.workload.threads, s.workload.iodepth, average([m.iops for m in ms]),
                                  average([m.lat_mean_ns / 1e3 for m in ms]), average([m.lat_max_ns / 1e3 for m in ms]),
                                  average([m.cpu_usr_pct + m.cpu_sys_pct for m in ms if m.cpu_usr_pct is not None])))
        chosen, note = choose_points(rows, ceiling_us, mid_rule)
        w = sweep[0].workload
        return DemandTable(_block_size(w), w.mix, tuple(rows), ceiling_us, mid_rule,
                           tuple((n, *chosen[n]) for n in POINTS if n in chosen), note)
    measured = [s for s in steps if not s.key.endswith("prewrite")]
    rows = []
    for s in measured:
        ms = cells.get(s.key, [])
        pre = cells.get(f"{s.key}-prewrite", [])
        m = ms[-1] if ms else None
        pct = {p: (m.lat_percentile_ns(p) if m else None) for p in PERCENTILES}
        rows.append(PointRow(s.key.capitalize(), s.workload.threads, s.workload.iodepth,
                             m.iops if m else None, m.lat_mean_ns / 1e3 if m else None,
                             *(None if pct[p] is None else pct[p] / 1e3 for p in PERCENTILES),
                             m.lat_max_ns / 1e3 if m else None, pre[-1].iops if pre else None))
    w = measured[0].workload if measured else steps[0].workload
    return PointsTable(_block_size(w), w.mix, tuple(rows))


COMPARED = ("iops", "lat_mean_us", "lat_p999_us", "lat_p9999_us", "lat_p99999_us", "lat_max_us")


def headlines(mix: str | None) -> tuple:
    return (("iops", None, "0/100", "precondition"), ("iops", None, mix, "TC32/QD32"), ("iops", None, mix, "Max"),
            ("lat_mean_us", None, mix, "Max"), ("lat_p99999_us", None, mix, "Max"), ("iops", None, mix, "Min"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    if point == "precondition":
        return "steady state (preconditioning, 100% W)"
    return f"{point}" if point else str(mix)
