"""What every page of a run's report reads: the run (results.reader.RunResults) with its step
records grouped by part, the device's identity, and the window statistics of each cell (pts/qos.py),
computed once. The pages (report/pages/) and the front matter take it; nothing here makes blocks
but the two temperature notes."""

from __future__ import annotations

from collections import defaultdict
import time
from typing import Any

from ..pts.qos import WindowLatency, window_latency
from ..pts.registry import TESTS, option
from ..pts.workload import Workload
from ..results.reader import RunResults
from ..results.records import PartResult, StepRecord
from .doc import Para
from .fmt import NA, fmt_rounds, na

TEST_ORDER = tuple(TESTS)


class RunContext:
    def __init__(self, run: RunResults, targets=None, damage: list[str] | None = None):
        self.run = run
        self.damage = damage or []  # 'ssdpts verify' problems
        self.run_dir = run.path
        self.man = run.manifest
        self.summary = run.summary
        self.notes = list(run.notes)
        self.spec = run.manifest.settings
        self.profile = self.spec.profile_params
        self.host = run.manifest.host
        self.parts = run.summary.parts
        self.targets = targets
        self.outlier_ms = self.spec.outlier_ms  # latency outlier thresholds (pts/qos.outliers)
        self.records: dict[tuple[str, str], list[StepRecord]] = defaultdict(list)
        for s in run.steps or ():
            self.records[(s.test, s.part)].append(s)
        self.status = run.status
        self.partial = self.status != "complete"
        self.generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        self.test_id = run.uid
        self.details: dict[str, dict] = {}  # report/details.py: per cell, by its Cell.detail id
        self._cells: dict[str, dict[int, dict[str, StepRecord]]] = {}
        self._lat: dict[tuple[str, str], WindowLatency] = {}

    # ---- the device ---------------------------------------------------------------------------------
    def target(self, name: str):
        """A field of the recorded target (None when the manifest has no target)."""
        t = self.man.target
        return getattr(t, name) if t is not None else None

    def description(self) -> dict:
        desc = self.man.description
        return desc if isinstance(desc, dict) else {}

    def identity(self, name: str) -> str:
        """A device identity field (vendor, model, serial, firmware): what the device reported, else
        what the operator's --describe file says, marked as described (a loop device over a drive
        model, a disk behind a RAID controller), else "not available"."""
        v = self.target(name)
        if v:
            return str(v)
        d = self.description().get(name)
        return f"{d} (described)" if d else NA

    def sponsor(self) -> str:
        desc = self.man.description or {}
        return na(self.spec.extra.get("sponsor") or self.man.doc.get("sponsor") or desc.get("sponsor"))

    def purge_methods(self, part_ids: list[str] | None = None) -> str:
        seen = []
        for pid, p in self.man.parts.items():
            if part_ids is not None and pid not in part_ids:
                continue
            if p.purge is not None:
                d = p.purge.disclosure or p.purge.method
                if d and d not in seen:
                    seen.append(str(d))
        if seen:
            return "; ".join(seen)
        return "none (--purge none)" if self.spec.purge == "none" else NA

    # ---- tests and parts ------------------------------------------------------------------------------
    def tests_in_run(self) -> list[str]:
        present = list(self.summary.tests) or list(self.spec.tests)
        return [t for t in TEST_ORDER if t in present] + [t for t in present if t not in TEST_ORDER]

    def part_ids(self, test: str) -> list[str]:
        ids = self.summary.tests.get(test)
        if ids:
            return [i for i in ids if i in self.parts]
        return [pid for pid, p in self.parts.items() if p.test == test]

    def round_records(self, part: PartResult) -> list[StepRecord]:
        """A part's step records of its rounds (not its preconditioning)."""
        return [r for r in self.records.get((part.test, part.part), []) if r.phase == "round"]

    def first_workload(self, test: str) -> Workload | None:
        for pid in self.part_ids(test):
            for r in self.records.get((test, self.parts[pid].part), []):
                if r.phase == "round":
                    return r.workload
        return None

    def toio(self, test: str) -> str:
        """A test's demand intensity: its first round's, else its kind's (pages/kind.py), else the run's."""
        from .pages import of

        w = self.first_workload(test)
        kind = of(test)
        own = None if w or kind is None else kind.toio(self)
        if w:
            tc, qd = w.threads, w.iodepth
        elif own is not None:
            tc, qd = own
        else:
            tc, qd = self.spec.resolved_threads, self.spec.resolved_iodepth
        if tc is None or qd is None:
            return NA
        return f"TC {tc} × QD {qd} = TOIO {tc * qd}"

    def option(self, name: str) -> Any:
        """An option of a test kind as this run recorded it, or its value in a run recorded without it
        (pts/registry.option: each kind declares its options once)."""
        return option(self.spec.doc, name)

    def time_scale(self) -> float:
        """The run's step length over the PTS's minute (1: not time-compressed)."""
        return (self.spec.step_seconds or 60.0) / 60.0

    # ---- a part's window -------------------------------------------------------------------------------
    def cells_by_round(self, part: PartResult) -> dict[int, dict[str, StepRecord]]:
        """Round -> cell key -> step, for the complete rounds summary.json lists."""
        if part.id in self._cells:
            return self._cells[part.id]
        rounds = {r for s in part.series.values() for r in s.rounds}
        out: dict[int, dict[str, StepRecord]] = {}
        for r in self.records.get((part.test, part.part), []):
            if r.phase == "round" and r.round in rounds:
                out.setdefault(r.round, {})[r.key] = r
        self._cells[part.id] = dict(sorted(out.items()))
        return self._cells[part.id]

    def window_steps(self, part: PartResult, key: str) -> list[StepRecord]:
        cells = self.cells_by_round(part)
        return [cells[r][key] for r in part.window_rounds if r in cells and key in cells[r]]

    def cell_steps(self, part: PartResult, key: str) -> list[StepRecord]:
        """A cell's steps in its window; for a part of one fixed round (the OCP tests' phases), its
        step (the last, where a resumed round ran it twice), or the steps of every pair of a phase
        named without its pair ("trim": "trim-1", "trim-2", ...)."""
        if part.steady_state is not None:
            return self.window_steps(part, key)
        last = {r.key: r for r in self.round_records(part)
                if r.key == key or (r.key.rpartition("-")[0] == key and r.key.rpartition("-")[2].isdigit())}
        return list(last.values())

    def latency(self, part: PartResult, key: str) -> WindowLatency:
        """The response-time statistics of a cell over its window (pts/qos.py)."""
        k = (part.id, key)
        if k not in self._lat:
            self._lat[k] = window_latency([s.measurement for s in self.window_steps(part, key)])
        return self._lat[k]

    @staticmethod
    def not_reached_note(part: PartResult) -> str:
        if part.reached:
            return f"Averages over the steady-state window, rounds {fmt_rounds(part.window_rounds)}."
        return (f"Steady state NOT reached: averages over rounds {fmt_rounds(part.window_rounds)}, "
                f"which are not a steady-state window.")

    @staticmethod
    def ss_suffix(part: PartResult) -> str:
        return "" if part.reached else " — steady state NOT reached"

    # ---- temperature -------------------------------------------------------------------------------------
    def temperatures(self, test: str, part: str) -> tuple[tuple[list[int], list[float]] | None, Para | None]:
        """Per round the highest temperature the device reported in it (°C), as the (rounds, °C)
        overlay of plots.rounds_lines, or None with the note saying why there is none."""
        per: dict[int, float] = {}
        for r in self.records.get((test, part), []):
            c = temperature_c(r.telemetry)
            if c is not None and r.phase == "round":
                per[r.round] = max(per.get(r.round, c), c)
        if per:
            return (list(per), list(per.values())), None
        return None, self.temperature_note()

    def temperature_reason(self) -> str:
        """Why a run has no temperature: the telemetry's own reason, else that it recorded none."""
        tel = self.man.telemetry or {}
        for s in self.run.steps or ():
            t = s.telemetry or {}
            for snap in (t.get("after"), t.get("before")):
                if isinstance(snap, dict) and isinstance(snap.get("health"), str):
                    return str(snap["health"])
            if isinstance(t.get("reason"), str):
                return str(t["reason"])
            break
        if isinstance(tel.get("health"), str):
            return str(tel["health"])
        if isinstance(tel.get("reason"), str):
            return str(tel["reason"])
        if self.man.executor == "fake":
            return "not available: synthetic data (FakeExecutor) has no device telemetry"
        return "not available: the run directory records no device telemetry"

    def temperature_unavailable(self) -> str:
        """'not available: <why>', the run's reason for having no temperature."""
        reason = self.temperature_reason()
        return reason if reason.startswith("not available") else f"not available: {reason}"

    def temperature_note(self) -> Para:
        """The note under a plot that would overlay the temperature, when the run has none."""
        return Para(f"Temperature and throttling: {self.temperature_unavailable()}.")


def temperature_c(tel: Any) -> float | None:
    """A temperature in °C from a step's telemetry record, whatever its exact shape: a number under
    temperature_c / temperature_celsius / composite_temperature_c / temperature (kelvin when > 200,
    as nvme smart-log reports it), at the top level or under "after" / "smart" / "smart_log"."""
    if not isinstance(tel, dict):
        return None
    for sub in (tel, tel.get("after"), tel.get("smart"), tel.get("smart_log"), tel.get("end")):
        if not isinstance(sub, dict):
            continue
        for k in ("temperature_c", "temperature_celsius", "composite_temperature_c"):
            v = sub.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
        for k in ("temperature_k", "temperature"):
            v = sub.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v) - 273.15 if (k == "temperature_k" or v > 200) else float(v)
    return None
