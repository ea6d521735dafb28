"""From step records to rounds: complete rounds, tracking series, steady-state verdicts, the stop
rule and the measurement-window tables built by each test. Pure: reads step records, never fio or
a device. The runner asks it after every round whether a part is done; summary.py makes
summary.json of it.

Resumed runs: a window never includes rounds from before a resumption unless that resumption
kept the window (``ssdpts resume --keep-window``): window_rounds_from.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from ssdpts.device.purge.base import PurgeRecord
from ssdpts.measurement import Measurement
from ssdpts.pts import wsat
from ssdpts.pts.parts import Part
from ssdpts.pts.registry import TESTS
from ssdpts.pts.steady_state import WINDOW_ROUNDS, SteadyState, all_reached, latest_window
from ssdpts.pts.tables import Table
from ssdpts.results.records import Manifest
from ssdpts.results.steprecord import StepHead, StepRecord, session_of
from ssdpts.results.timetoresult import (BeforeWindow, Preconditioning, PurgeTime, RoundsTime, TimeToResult,
                                         WindowTime)

Rounds = dict[int, list[StepRecord]]  # round number -> its step records, in step order
Steps = list[StepRecord] | list[StepHead]  # a part's step records (StepHead: what 'ssdpts status' reads)


def part_records(steps: Iterable[StepRecord], part: Part) -> list[StepRecord]:
    return [s for s in steps if s.test == part.test and s.part == part.part]


def complete_rounds(records: Steps, part: Part) -> Rounds:
    """Round number -> its step records, for rounds that finished with every planned step."""
    by_round: Rounds = defaultdict(list)
    for r in records:
        if r.phase == "round":
            by_round[r.round].append(r)
    out = {}
    for rno in sorted(by_round):
        planned = len(part.round_steps(rno))
        recs = sorted(by_round[rno], key=lambda x: x.index)
        if len(recs) == planned:
            out[rno] = recs
    return out


def kept_sessions(manifest: Manifest) -> frozenset[int]:
    """Sessions (resumptions, numbered from 1) started with --keep-window."""
    return frozenset(i for i, r in enumerate(manifest.resumptions, start=1) if r.keep_window)


def window_rounds_from(rounds: Rounds, keep: frozenset[int] = frozenset()) -> int | None:
    """The first round a steady-state window may use: the first round run after the last
    resumption that re-preconditioned (resumed without --keep-window), None when there is none.

    PTS 2.0.2 §3 requires no delay between the rounds of a window: hours of idle between the
    interrupted run and its resumption let the drive reclaim blocks in the background, so rounds
    from before and after are not comparable. By default a resumption therefore restarts the
    window: the interrupted round is repeated and the window counts only rounds after it."""
    first = None
    prev = None
    for rno in sorted(rounds):
        sess = session_of(rounds[rno][0])
        if prev is not None and sess != prev and sess not in keep:
            first = rno
        prev = sess
    return first


def eligible_rounds(rounds: Rounds, keep: frozenset[int] = frozenset()) -> Rounds:
    first = window_rounds_from(rounds, keep)
    return rounds if first is None else {r: v for r, v in rounds.items() if r >= first}


def round_limit(part: Part, rounds: Rounds, keep: frozenset[int] = frozenset()) -> int:
    """The part's round limit: --max-rounds, extended (after a re-preconditioning resumption) so
    that a full window of rounds run after the resumption fits."""
    first = window_rounds_from(rounds, keep)
    return part.max_rounds if first is None else max(part.max_rounds, first + WINDOW_ROUNDS - 1)


def _m(rec: StepRecord | StepHead) -> Measurement:
    """A step's measurement with its rates as the device did them (timing.py; a StepHead: fio's)."""
    if rec.measurement is None:
        raise KeyError("measurement")
    return rec.measurement


def tracking_series(rounds: Rounds, part: Part) -> dict[str, tuple[list[int], list[float]]]:
    """Tracking variable name -> (round numbers, values)."""
    out = {}
    for t in part.tracking:
        xs, ys = [], []
        for rno, recs in rounds.items():
            cell = next((r for r in recs if r.key == t.key), None)
            if cell is not None:
                xs.append(rno)
                ys.append(_m(cell).metric(t.metric))
        out[t.name] = (xs, ys)
    return out


def verdicts(rounds: Rounds, part: Part, keep: frozenset[int] = frozenset()) -> list[SteadyState | None]:
    units = {t.name: t.unit for t in part.tracking}
    return [latest_window(name, xs, ys, units[name])
            for name, (xs, ys) in tracking_series(eligible_rounds(rounds, keep), part).items()]


def wsat_totals(records: list[StepRecord]) -> tuple[int, int]:
    """(samples taken, bytes written) of a WSAT part."""
    rs = [r for r in records if r.phase == "round"]
    return len(rs), sum(int(r.fio.write.io_bytes) for r in rs)


def stop_reason(records: list[StepRecord], part: Part, keep: frozenset[int] = frozenset()) -> str | None:
    """Why the part is finished, or None while it must go on."""
    rounds = complete_rounds(records, part)
    if part.stop_rule == "fixed":
        return "complete" if len(rounds) >= part.max_rounds else None
    if part.stop_rule == "wsat":
        n, written = wsat_totals(records)
        if written >= part.wsat_max_bytes:
            return "capacity-written"
        if n >= part.wsat_max_steps:
            return "time-limit"
        return None
    if all_reached(verdicts(rounds, part, keep)):
        return "steady-state"
    if rounds and max(rounds) >= round_limit(part, rounds, keep):
        return "max-rounds"
    return None


def window_of(rounds: Rounds, keep: frozenset[int] = frozenset()) -> list[int]:
    return sorted(eligible_rounds(rounds, keep))[-WINDOW_ROUNDS:]


def _records(rounds: Rounds, window: list[int]) -> dict[str, list[StepRecord]]:
    out: dict[str, list[StepRecord]] = defaultdict(list)
    for rno in window:
        for r in rounds[rno]:
            out[r.key].append(r)
    return out


def _cells(rounds: Rounds, window: list[int]) -> dict[str, list[Measurement]]:
    return defaultdict(list, {k: [_m(r) for r in rs] for k, rs in _records(rounds, window).items()})


def table_for(part: Part, rounds: Rounds, window: list[int]) -> Table:
    """The part's measurement-window table, built by its test (pts/iops.py etc.): from the cells of
    one round of the window, or for a fixed plan from the steps of every round it ran."""
    if part.stop_rule == "fixed":
        steps = [s for r in window for s in part.round_steps(r)]
    else:
        steps = part.round_steps(window[0]) if window else part.round_steps(1)
    test = TESTS[part.test]
    kw = dict(part.table_args)
    if getattr(test, "TABLE_TELEMETRY", False):
        # the OCP tests: what the drive counted over each phase (media writes: idle GC's evidence)
        kw["telemetry"] = {k: [r.telemetry for r in rs] for k, rs in _records(rounds, window).items()}
    return test.build_table(steps, _cells(rounds, window), **kw)


def wsat_table(records: list[StepRecord], part: Part, capacity_bytes: int) -> Table:
    rs = sorted((r for r in records if r.phase == "round"), key=lambda r: r.index)
    return wsat.build_table([(r.index, _m(r)) for r in rs], capacity_bytes, **part.table_args)


def _span_s(records: list[StepRecord]) -> float:
    """Seconds the steps ran, session by session (from the first one's start to the last one's end in
    each: a resumption's wait between two sessions is not the test's time)."""
    by: dict[int, list[StepRecord]] = defaultdict(list)
    for r in records:
        if r.start_time is not None and r.end_time is not None:
            by[session_of(r)].append(r)
    return round(sum(max(r.end_time for r in rs) - min(r.start_time for r in rs)  # type: ignore[type-var]
                     for rs in by.values()), 3)


def _written(records: list[StepRecord]) -> int:
    return sum(int(r.fio.write.io_bytes) for r in records)


def time_to_result(records: list[StepRecord], part: Part, purge: PurgeRecord | None = None,
                   keep: frozenset[int] = frozenset()) -> TimeToResult:
    """What it took the part to reach its result (docs/methodology.md#time-to-result): the purge, the
    preconditioning (the PTS's WIPC or the sprandom fill) and the rounds, each in seconds and bytes
    the host wrote; the bytes and seconds before the measurement window; the rounds to steady
    state (None when it was not reached). Pure: from the part's step records and the manifest's purge
    record (``purge``: its ``duration_s`` and ``method``)."""
    wipc = [r for r in records if r.phase == "wipc"]
    rounds = complete_rounds(records, part)
    run = [r for r in records if r.phase == "round"]
    window_time = None
    if part.stop_rule == "steady-state":
        window = window_of(rounds, keep)
        before = [r for r in run if window and r.round < window[0]]
        reached = all_reached(verdicts(rounds, part, keep)) if rounds else False
        window_time = WindowTime(tuple(window), window[-1] if reached and window else None,
                                 BeforeWindow(len({r.round for r in before}), round(_span_s(wipc) + _span_s(before), 3),
                                              _written(wipc) + _written(before)))
    return TimeToResult(
        purge=None if purge is None else PurgeTime(purge.method, purge.duration_s),
        preconditioning=None if not wipc else Preconditioning(
            "sprandom" if part.wipc is not None and part.wipc.sprandom else "wipc", _span_s(wipc), _written(wipc)),
        rounds=RoundsTime(len(rounds), _span_s(run), _written(run)), window=window_time,
        total_s=round(float(purge.duration_s if purge is not None else 0.0) + _span_s(wipc) + _span_s(run), 3),
        written_bytes=_written(wipc) + _written(run))
