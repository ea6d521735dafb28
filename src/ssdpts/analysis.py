"""From steps to results: per-round tracking values, steady-state verdicts and the
measurement-window tables. Pure: reads step records, never fio or a device.

All reported values are averages over the steady-state measurement window (PTS.md §2): the
5 rounds in which steady state was reached, or the last 5 rounds when it was not.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from .device.telemetry import throttle_warnings
from .measurement import Measurement
from .pts import wsat
from .pts.parts import Part
from .pts.registry import TESTS
from .pts.steady_state import WINDOW_ROUNDS, SteadyState, all_reached, latest_window
from .pts.tables import Table
from .pts.workload import Step
from .results.records import NoWindow, PartResult, Series, SteadyStateResult, Summary, Wipc


def part_records(steps: Iterable[dict], part: Part) -> list[dict]:
    return [s for s in steps if s["test"] == part.test and s["part"] == part.part]


def complete_rounds(records: list[dict], part: Part) -> dict[int, list[dict]]:
    """Round number -> its step records, for rounds that finished with every planned step."""
    by_round: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        if r["phase"] == "round":
            by_round[r["round"]].append(r)
    out = {}
    for rno in sorted(by_round):
        planned = len(part.round_steps(rno))
        recs = sorted(by_round[rno], key=lambda x: x["index"])
        if len(recs) == planned:
            out[rno] = recs
    return out


def _m(rec: dict) -> Measurement:
    return Measurement.from_dict(rec["measurement"])


def tracking_series(rounds: dict[int, list[dict]], part: Part) -> dict[str, tuple[list[int], list[float]]]:
    """Tracking variable name -> (round numbers, values)."""
    out = {}
    for t in part.tracking:
        xs, ys = [], []
        for rno, recs in rounds.items():
            cell = next((r for r in recs if r["key"] == t.key), None)
            if cell is not None:
                xs.append(rno)
                ys.append(_m(cell).metric(t.metric))
        out[t.name] = (xs, ys)
    return out


def verdicts(rounds: dict[int, list[dict]], part: Part) -> list[SteadyState | None]:
    units = {t.name: t.unit for t in part.tracking}
    return [latest_window(name, xs, ys, units[name]) for name, (xs, ys) in tracking_series(rounds, part).items()]


def wsat_totals(records: list[dict]) -> tuple[int, int]:
    """(samples taken, bytes written) of a WSAT part."""
    rs = [r for r in records if r["phase"] == "round"]
    return len(rs), sum(int(r["measurement"]["write"]["io_bytes"]) for r in rs)


def stop_reason(records: list[dict], part: Part) -> str | None:
    """Why the part is finished, or None while it must go on."""
    rounds = complete_rounds(records, part)
    if part.stop_rule == "wsat":
        n, written = wsat_totals(records)
        if written >= part.wsat_max_bytes:
            return "capacity-written"
        if n >= part.wsat_max_steps:
            return "time-limit"
        return None
    if all_reached(verdicts(rounds, part)):
        return "steady-state"
    if rounds and max(rounds) >= part.max_rounds:
        return "max-rounds"
    return None


def _window(rounds: dict[int, list[dict]]) -> list[int]:
    return sorted(rounds)[-WINDOW_ROUNDS:]


def _cells(rounds: dict[int, list[dict]], window: list[int]) -> dict[str, list[Measurement]]:
    cells: dict[str, list[Measurement]] = defaultdict(list)
    for rno in window:
        for r in rounds[rno]:
            cells[r["key"]].append(_m(r))
    return cells


def table_for(part: Part, rounds: dict[int, list[dict]], window: list[int]) -> Table:
    """The part's measurement-window table, built by its test (pts/iops.py etc.)."""
    steps = part.round_steps(window[0]) if window else part.round_steps(1)
    return TESTS[part.test].build_table(steps, _cells(rounds, window))


def wsat_table(records: list[dict], capacity_bytes: int) -> Table:
    rs = sorted((r for r in records if r["phase"] == "round"), key=lambda r: r["index"])
    return wsat.build_table([(r["index"], _m(r)) for r in rs], capacity_bytes)


def summarize_part(part: Part, steps: list[dict], capacity_bytes: int) -> PartResult:
    records = part_records(steps, part)
    wipc = [r for r in records if r["phase"] == "wipc"]
    base = dict(id=part.id, test=part.test, part=part.part, title=part.title, stop_reason=stop_reason(records, part),
                wipc=Wipc(wipc[-1]["label"], wipc[-1]["measurement"]["write"]["io_bytes"],
                          wipc[-1]["measurement"]["duration_s"]) if wipc else None)
    if part.test == "wsat":
        n, _written = wsat_totals(records)
        return PartResult(**base, samples=n, table=wsat_table(records, capacity_bytes),
                          warnings=tuple(throttle_warnings([r for r in records if r["phase"] == "round"])))
    rounds = complete_rounds(records, part)
    window = _window(rounds)
    vs = verdicts(rounds, part)
    series = tracking_series(rounds, part)
    return PartResult(
        **base, rounds_run=len(rounds),
        series={name: Series(tuple(xs), tuple(ys)) for name, (xs, ys) in series.items()},
        steady_state=SteadyStateResult(all_reached(vs), tuple(window), tuple(
            v if v is not None else NoWindow(t.name, t.unit, tuple(series[t.name][0]), tuple(series[t.name][1]))
            for t, v in zip(part.tracking, vs))),
        table=table_for(part, rounds, window) if window else None,
        warnings=tuple(throttle_warnings([r for rno in window for r in rounds[rno]]) if window else ()),
    )


def summarize_typed(parts: list[Part], steps: list[dict], capacity_bytes: int, *, status: str,
                    deviations: list[str]) -> Summary:
    out_parts = [summarize_part(p, steps, capacity_bytes) for p in parts]
    tests: dict[str, list[str]] = defaultdict(list)
    for p in out_parts:
        tests[p.test].append(p.id)
    return Summary(status, not deviations, tuple(deviations), {t: tuple(ids) for t, ids in tests.items()},
                   {p.id: p for p in out_parts})


def summarize(parts: list[Part], steps: list[dict], capacity_bytes: int, *, status: str,
              deviations: list[str]) -> dict:
    """summary.json's content (results/records.py Summary, written as JSON)."""
    return summarize_typed(parts, steps, capacity_bytes, status=status, deviations=deviations).to_dict()


def step_record(step: Step, m: Measurement, *, fio_json: str, job_index: int, label: str | None = None) -> dict:
    return {
        "test": step.test, "part": step.part, "phase": step.phase, "round": step.round, "index": step.index,
        "key": step.workload.key, "label": label or step.workload.label, "workload": step.workload.to_dict(),
        "planned_duration_s": step.duration_s, "planned_io_bytes": step.io_bytes,
        "start_time": m.start_time, "end_time": m.end_time,
        "measurement": m.to_dict(), "telemetry": None,
        "fio_json": fio_json, "fio_job_index": job_index,
    }
