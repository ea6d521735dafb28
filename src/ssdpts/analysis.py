"""From steps to results: per-round tracking values, steady-state verdicts and the
measurement-window tables. Pure: reads step records, never fio or a device.

All reported values are averages over the steady-state measurement window (PTS.md §2): the
5 rounds in which steady state was reached, or the last 5 rounds when it was not.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

import numpy as np

from .device.telemetry import throttle_warnings
from .measurement import Measurement
from .pts.steady_state import WINDOW_ROUNDS, SteadyState, all_reached, latest_window
from .pts.parts import Part
from .pts.workload import Step


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


def _avg(values: list[float]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _cells(rounds: dict[int, list[dict]], window: list[int]) -> dict[str, list[Measurement]]:
    cells: dict[str, list[Measurement]] = defaultdict(list)
    for rno in window:
        for r in rounds[rno]:
            cells[r["key"]].append(_m(r))
    return cells


def table_for(part: Part, rounds: dict[int, list[dict]], window: list[int]) -> dict:
    cells = _cells(rounds, window)
    steps = part.round_steps(window[0]) if window else part.round_steps(1)
    if part.test == "iops":
        bss = list(dict.fromkeys(s.workload.block_size_bytes for s in steps))
        mixes = list(dict.fromkeys(s.workload.mix for s in steps))
        rows = []
        for bs in bss:
            vals = {}
            for s in steps:
                if s.workload.block_size_bytes == bs:
                    vals[s.workload.mix] = _avg([m.iops for m in cells.get(s.workload.key, [])])
            rows.append({"block_size_bytes": bs, "values": vals})
        return {"kind": "iops-matrix", "unit": "IOPS", "mixes": mixes, "rows": rows}
    if part.test == "tp":
        read = next(s for s in steps if s.workload.read_pct == 100)
        write = next(s for s in steps if s.workload.read_pct == 0)
        return {
            "kind": "throughput", "unit": "MB/s", "block_size_bytes": read.workload.block_size_bytes,
            "read_mb_per_s": _avg([m.read.bw_bytes_per_s / 1e6 for m in cells.get(read.workload.key, [])]),
            "write_mb_per_s": _avg([m.write.bw_bytes_per_s / 1e6 for m in cells.get(write.workload.key, [])]),
        }
    if part.test == "lat":
        rows = []
        for s in steps:
            ms = cells.get(s.workload.key, [])
            p5 = [m.lat_percentile_ns(99.999) for m in ms]
            rows.append({
                "block_size_bytes": s.workload.block_size_bytes, "mix": s.workload.mix,
                "lat_mean_us": _avg([m.lat_mean_ns / 1e3 for m in ms]),
                "lat_p99999_us": _avg([p / 1e3 for p in p5 if p is not None]),
                "lat_max_us": _avg([m.lat_max_ns / 1e3 for m in ms]),
                "lat_max_in_window_us": max((m.lat_max_ns / 1e3 for m in ms), default=None),
                "iops": _avg([m.iops for m in ms]),
            })
        return {"kind": "latency", "unit": "µs", "rows": rows}
    raise ValueError(part.test)


def wsat_series(records: list[dict], capacity_bytes: int) -> dict:
    rs = sorted((r for r in records if r["phase"] == "round"), key=lambda r: r["index"])
    series = []
    written = 0
    for r in rs:
        m = _m(r)
        written += m.write.io_bytes
        series.append({
            "minute": r["index"], "iops": m.iops, "tgbw_gb": written / 1e9,
            "drive_fills": written / capacity_bytes if capacity_bytes else None,
            "lat_mean_us": m.lat_mean_ns / 1e3, "lat_max_us": m.lat_max_ns / 1e3,
            "lat_p99999_us": (lambda p: p / 1e3 if p is not None else None)(m.lat_percentile_ns(99.999)),
            "start_time": m.start_time,
        })
    last = series[-WINDOW_ROUNDS:]
    return {
        "kind": "wsat", "unit": "IOPS", "series": series,
        "tgbw_gb": written / 1e9, "drive_fills": written / capacity_bytes if capacity_bytes else None,
        "final_window_minutes": [s["minute"] for s in last],
        "final_window_iops": _avg([s["iops"] for s in last]),
    }


def summarize_part(part: Part, steps: list[dict], capacity_bytes: int) -> dict:
    records = part_records(steps, part)
    base = {"id": part.id, "test": part.test, "part": part.part, "title": part.title,
            "stop_reason": stop_reason(records, part)}
    wipc = [r for r in records if r["phase"] == "wipc"]
    base["wipc"] = ({"workload": wipc[-1]["label"], "io_bytes": wipc[-1]["measurement"]["write"]["io_bytes"],
                     "duration_s": wipc[-1]["measurement"]["duration_s"]} if wipc else None)
    if part.test == "wsat":
        n, written = wsat_totals(records)
        base.update({"samples": n, "steady_state": None, "table": wsat_series(records, capacity_bytes),
                     "warnings": throttle_warnings([r for r in records if r["phase"] == "round"])})
        return base
    rounds = complete_rounds(records, part)
    window = _window(rounds)
    vs = verdicts(rounds, part)
    base["rounds_run"] = len(rounds)
    base["series"] = {name: {"rounds": xs, "values": ys} for name, (xs, ys) in tracking_series(rounds, part).items()}
    series = tracking_series(rounds, part)
    base["steady_state"] = {
        "reached": all_reached(vs),
        "window_rounds": window,
        "variables": [
            v.to_dict() if v is not None else
            {"variable": t.name, "unit": t.unit, "rounds": series[t.name][0], "values": series[t.name][1],
             "reached": False, "note": f"fewer than {WINDOW_ROUNDS} rounds: no steady-state window"}
            for t, v in zip(part.tracking, vs)
        ],
    }
    base["table"] = table_for(part, rounds, window) if window else None
    base["warnings"] = throttle_warnings([r for rno in window for r in rounds[rno]]) if window else []
    return base


def summarize(parts: list[Part], steps: list[dict], capacity_bytes: int, *, status: str,
              deviations: list[str]) -> dict:
    out_parts = [summarize_part(p, steps, capacity_bytes) for p in parts]
    tests: dict[str, list[str]] = defaultdict(list)
    for p in out_parts:
        tests[p["test"]].append(p["id"])
    return {
        "status": status,
        "pts_compliant": not deviations,
        "deviations": deviations,
        "tests": dict(tests),
        "parts": {p["id"]: p for p in out_parts},
    }


def step_record(step: Step, m: Measurement, *, fio_json: str, job_index: int, label: str | None = None) -> dict:
    return {
        "test": step.test, "part": step.part, "phase": step.phase, "round": step.round, "index": step.index,
        "key": step.workload.key, "label": label or step.workload.label, "workload": step.workload.to_dict(),
        "planned_duration_s": step.duration_s, "planned_io_bytes": step.io_bytes,
        "start_time": m.start_time, "end_time": m.end_time,
        "measurement": m.to_dict(), "telemetry": None,
        "fio_json": fio_json, "fio_job_index": job_index,
    }
