"""Cross Stimulus Recovery (docs/pts-reference.md#xsr; source AD): how a drive recovers its sequential
write throughput after a long random write stimulus.

Purge; no WIPC; TC1/QD32; three access groups back to back with one sample per PTS minute:
G1 SEQ 1024KiB W for 8 h (480 min), G2 RND 8KiB W for 6 h (360 min), G3 SEQ 1024KiB W for 8 h
(480 min). Per minute: MB/s, mean and max response time. Recovery [definition ?, an option]: the
first minute of G3 whose MB/s reaches G1's level (default "g1-mean": G1's mean MB/s, as AD;
"g1-final": G1's mean over its last 5 minutes), within a tolerance (default 2%): a level is a
mean over many minutes, a G3 minute one sample, and a drive back at G1's steady rate measures a
hair below it as often as above (on the reference SSD: G3 at 29.937 MB/s, G1 at 29.940; G1's
mean, which holds its faster fresh-out-of-box minutes, is never reached at all).

Every minute is a step of its own (its values from its fio json+), back to back; rounds of
ROUND_MINUTES minutes are one fio process and one save each, cut so that a change of group falls
inside a round (no fio start-up gap at it). Time compression scales the minute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .parts import Part, chunks
from .runspec import XSR_MINUTES, RunSpec
from .tables import Cell, WindowCells, average, num
from .units import KiB
from .workload import Step, Workload

NAME = "xsr"
TITLE = "Cross Stimulus Recovery"
ORDER = 60  # its place in the run order (pts/catalog.py)

ROUND_MINUTES = 30
FINAL_MINUTES = 5  # "end" values of a group: the mean of its last 5 minutes
GROUPS = (("g1", "G1: SEQ 1024KiB W"), ("g2", "G2: RND 8KiB W"), ("g3", "G3: SEQ 1024KiB W"))
# The options a report reads, each with its value in a run recorded without it (before the tolerance: G1's level exactly).
OPTIONS = {"xsr_minutes": XSR_MINUTES, "xsr_recovery": "g1-mean", "xsr_recovery_tolerance_pct": 0.0}


def group_workloads() -> tuple[Workload, Workload, Workload]:
    # TC1/QD32 for all three groups [V AD]
    seq = Workload("seq", 0, 1024 * KiB, 1, 32)
    return seq, Workload("rand", 0, 8 * KiB, 1, 32), seq


def sequence(spec: RunSpec) -> list[Step]:
    out: list[Step] = []
    for (cell, label), w, minutes in zip(GROUPS, group_workloads(), spec.xsr_minutes):
        for _ in range(minutes):
            out.append(Step(test=NAME, part="", phase="round", round=0, index=len(out) + 1, workload=w,
                            duration_s=spec.step_seconds, cell=cell, cell_label=label))
    return out


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    rounds = chunks(sequence(spec), ROUND_MINUTES, cut_at_cell_change=False)
    return [Part(test=NAME, part="", title="Cross Stimulus Recovery", purge=True, wipc=None, tracking=(),
                 max_rounds=len(rounds), stop_rule="fixed", round_builder=lambda r: rounds[r - 1],
                 table_args={"rule": spec.xsr_recovery, "tolerance_pct": spec.xsr_recovery_tolerance_pct})]


# ---- the table: every minute, each group's summary and the recovery of group 3 ---------------------------

@dataclass(frozen=True, slots=True)
class XsrMinute:
    minute: int  # PTS minute from the start of the test
    group: str  # g1, g2, g3
    mb_per_s: float  # write MB/s (10^6 B/s)
    lat_mean_us: float
    lat_max_us: float

    def to_dict(self) -> dict[str, Any]:
        return {"minute": self.minute, "group": self.group, "mb_per_s": self.mb_per_s,
                "lat_mean_us": self.lat_mean_us, "lat_max_us": self.lat_max_us}


@dataclass(frozen=True, slots=True)
class XsrGroup:
    group: str
    minutes: int
    mb_per_s: float | None  # mean over the group
    final_mb_per_s: float | None  # mean of its last FINAL_MINUTES minutes
    peak_lat_mean_us: float | None  # the highest per-minute mean response time
    lat_max_us: float | None  # the highest response time of the group

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "minutes": self.minutes, "mb_per_s": self.mb_per_s,
                "final_mb_per_s": self.final_mb_per_s, "peak_lat_mean_us": self.peak_lat_mean_us,
                "lat_max_us": self.lat_max_us}


@dataclass(frozen=True, slots=True)
class XsrTable:
    series: tuple[XsrMinute, ...]
    groups: tuple[XsrGroup, ...]
    recovery_rule: str  # g1-mean | g1-final
    recovery_level_mb_per_s: float | None
    recovery_minutes: int | None  # minutes of G3 until the first minute at the level (1 = its first minute)
    recovery_tolerance_pct: float = 0.0  # "at the level" = at or above level x (1 - tolerance)
    unit: str = "MB/s"
    kind: ClassVar[str] = "xsr"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "series": [m.to_dict() for m in self.series],
                "groups": [g.to_dict() for g in self.groups], "recovery_rule": self.recovery_rule,
                "recovery_level_mb_per_s": self.recovery_level_mb_per_s, "recovery_minutes": self.recovery_minutes,
                "recovery_tolerance_pct": self.recovery_tolerance_pct}

    @classmethod
    def from_dict(cls, d: dict) -> "XsrTable":
        series = tuple(XsrMinute(int(m["minute"]), str(m["group"]), float(m["mb_per_s"]), float(m["lat_mean_us"]),
                                 float(m["lat_max_us"])) for m in d.get("series") or ())
        groups = tuple(XsrGroup(str(g["group"]), int(g.get("minutes") or 0), num(g.get("mb_per_s")),
                                num(g.get("final_mb_per_s")), num(g.get("peak_lat_mean_us")), num(g.get("lat_max_us")))
                       for g in d.get("groups") or ())
        rm = d.get("recovery_minutes")
        return cls(series, groups, str(d.get("recovery_rule") or "g1-mean"), num(d.get("recovery_level_mb_per_s")),
                   None if rm is None else int(rm), float(d.get("recovery_tolerance_pct") or 0.0), d.get("unit", "MB/s"))

    def cells(self) -> list[Cell]:
        out = []
        for g in self.groups:
            p = g.group.upper()
            out += [Cell("mb_per_s", None, "0/100", g.mb_per_s, p), Cell("final_mb_per_s", None, "0/100", g.final_mb_per_s, p),
                    Cell("peak_lat_mean_us", None, "0/100", g.peak_lat_mean_us, p),
                    Cell("lat_max_us", None, "0/100", g.lat_max_us, p)]
        out.append(Cell("recovery_minutes", None, "0/100", None if self.recovery_minutes is None
                        else float(self.recovery_minutes), "G3"))
        return out


def recovery(series: list[XsrMinute], rule: str, tolerance_pct: float = 0.0) -> tuple[float | None, int | None]:
    """(level, minutes of G3 until its first minute at or above level x (1 - tolerance)) [definition ?]."""
    g1 = [m.mb_per_s for m in series if m.group == "g1"]
    if not g1:
        return None, None
    level = average(g1) if rule == "g1-mean" else average(g1[-FINAL_MINUTES:])
    for n, m in enumerate((m for m in series if m.group == "g3"), start=1):
        if level is not None and m.mb_per_s >= level * (1 - tolerance_pct / 100):
            return level, n
    return level, None


def build_table(steps: list[Step], cells: WindowCells, rule: str = "g1-mean", tolerance_pct: float = 0.0) -> XsrTable:
    series: list[XsrMinute] = []
    minute = 0
    groups = []
    for cell, _label in GROUPS:
        ms = cells.get(cell, [])
        rows = []
        for m in ms:
            minute += 1
            rows.append(XsrMinute(minute, cell, m.write.bw_bytes_per_s / 1e6, m.lat_mean_ns / 1e3, m.lat_max_ns / 1e3))
        series += rows
        groups.append(XsrGroup(cell, len(rows), average([r.mb_per_s for r in rows]),
                               average([r.mb_per_s for r in rows[-FINAL_MINUTES:]]),
                               max((r.lat_mean_us for r in rows), default=None),
                               max((r.lat_max_us for r in rows), default=None)))
    level, minutes = recovery(series, rule, tolerance_pct)
    return XsrTable(tuple(series), tuple(groups), rule, level, minutes, tolerance_pct)


TABLES = (XsrTable,)  # the table records its build_table makes (registry.table_from_dict)
COMPARED = ("mb_per_s", "final_mb_per_s", "peak_lat_mean_us", "lat_max_us", "recovery_minutes")
HEADLINES = (("final_mb_per_s", None, "0/100", "G1"), ("final_mb_per_s", None, "0/100", "G3"),
             ("recovery_minutes", None, "0/100", "G3"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    names = {c.upper(): label for c, label in GROUPS}
    if metric == "recovery_minutes":
        return "G3 recovery"
    return names.get(str(point), str(point))


