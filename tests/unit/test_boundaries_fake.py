"""Step boundaries, the round started ahead, telemetry matched by time, and steady-state windows
across resumptions: the runner end to end on the FakeExecutor (virtual time, scripted gaps)."""

from __future__ import annotations

from dataclasses import replace
import json
from pathlib import Path
import time
from types import SimpleNamespace

import pytest

from ssdpts.measurement import DirectionStats, Measurement
from ssdpts.pts.workload import Workload
from ssdpts.results import analysis, steprecord
from ssdpts.results.records import Manifest
from ssdpts.results.steprecord import StepRecord
from ssdpts.device.target import open_target
from ssdpts.engine.base import Area
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import Interrupted
from ssdpts.run.runner import RunContext, execute
from ssdpts.run.session import resume_run, start_run
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import build_parts
from ssdpts.store import RunStore

MiB = 1024 * 1024
SIZE = 256 * MiB
LAT = RunSpec(tests=("lat",), step_seconds=1, max_rounds=8)
IOPS = RunSpec(tests=("iops",), step_seconds=1, max_rounds=6)
HOURS = 3600.0


@pytest.fixture(autouse=True)
def files_on_a_512_byte_disk(monkeypatch):
    from ssdpts.device import target as target_mod

    if hasattr(target_mod, "_fs_block_sizes"):
        monkeypatch.setattr(target_mod, "_fs_block_sizes", lambda directory: (512, 4096))


def start(tmp: Path, spec: RunSpec, ex: FakeExecutor, **kw):
    target = open_target(str(tmp / "target.img"), size_bytes=SIZE)
    return start_run(spec, target, executor=ex, out_dir=tmp / "runs", confirm=None, argv=["test"], **kw)


def steps_of(run: Path) -> list[dict]:
    return [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines() if ln.strip()]


def only_run(tmp: Path) -> Path:
    (d,) = list((tmp / "runs").iterdir())
    return d


# ---- boundaries --------------------------------------------------------------------------------------

def test_every_step_records_its_boundary_and_the_summary_per_round(tmp_path):
    store, summary = start(tmp_path, LAT, FakeExecutor())
    steps = steps_of(store.path)
    wipc, rounds = steps[0], steps[1:]
    assert wipc["boundary"]["kind"] == "purge" and wipc["boundary"]["over_limit"] is False
    kinds = [s["boundary"]["kind"] for s in rounds]
    assert kinds[0] == "wipc" and kinds.count("round") == summary["parts"]["lat"]["rounds_run"] - 1
    assert kinds.count("step") == 8 * summary["parts"]["lat"]["rounds_run"]
    for s in rounds:
        b = s["boundary"]
        assert b["idle_ms"] == pytest.approx(2.0) and b["overlap_ms"] == 0 and not b["over_limit"]
        assert s["timeline"]["chained"] is True and s["session"] == 0
    b = summary["parts"]["lat"]["boundaries"]
    assert b["idle_limit_ms"] == 10.0
    assert b["within_rounds"]["boundaries"] == 8 * len(b["rounds"]) and b["within_rounds"]["over_limit"] == 0
    assert b["between_rounds"]["idle_ms"] == {"median": 2.0, "worst": 2.0}
    assert [r["round"] for r in b["rounds"]] == list(range(1, summary["parts"]["lat"]["rounds_run"] + 1))
    assert all(r["boundaries"] == 9 and r["idle_ms"]["worst"] == 2.0 for r in b["rounds"])
    assert b["flagged"] == [] and summary["boundaries"]["over_limit"] == 0


def test_boundaries_over_the_limits_are_flagged(tmp_path):
    """Idle over 10 ms anywhere, and any overlap into or out of a TC1/QD1 (LAT) step."""

    def gap(prev, nxt) -> float:
        if nxt.phase == "round" and nxt.round == 2 and nxt.index == 4:
            return 0.025  # 25 ms idle within round 2
        if nxt.round == 3 and nxt.index == 1:
            return -0.0025  # round 3 starts 2.5 ms before round 2 drained: a second IO at QD1
        return 0.002

    _, summary = start(tmp_path, LAT, FakeExecutor(gap=gap))
    b = summary["parts"]["lat"]["boundaries"]
    flagged = {(f["round"], f["index"]): f for f in b["flagged"]}
    assert set(flagged) == {(2, 4), (3, 1)}
    assert flagged[(2, 4)]["why"] == "idle 25.0 ms > 10 ms" and flagged[(2, 4)]["kind"] == "step"
    assert flagged[(3, 1)]["overlap_ms"] == pytest.approx(2.5) and flagged[(3, 1)]["kind"] == "round"
    assert "(a TC1/QD1 step)" in flagged[(3, 1)]["why"]
    r2 = next(r for r in b["rounds"] if r["round"] == 2)
    assert r2["idle_ms"] == {"median": 2.0, "worst": 25.0} and r2["over_limit"] == 1
    assert summary["boundaries"]["over_limit"] == 2 and summary["boundaries"]["worst_idle_ms"] == 25.0


def test_overlap_within_the_drain_is_allowed_at_qd_above_one(tmp_path):
    # the fake's maximum response time at TC4/QD32 is 4 x TC x QD / IOPS: far above 1 ms
    _, summary = start(tmp_path, IOPS, FakeExecutor(gap=lambda p, n: -0.001))
    b = summary["parts"]["iops"]["boundaries"]
    assert b["within_rounds"]["overlap_ms"]["worst"] == pytest.approx(1.0) and b["flagged"] == []


def test_the_round_started_ahead_is_cancelled_and_disclosed_when_the_stop_rule_holds(tmp_path):
    ex = FakeExecutor()
    spec = LAT.with_(max_rounds=10)
    store, summary = start(tmp_path, spec, ex)
    rounds = summary["parts"]["lat"]["rounds_run"]
    assert summary["parts"]["lat"]["stop_reason"] == "steady-state" and rounds < spec.max_rounds
    assert ex.cancelled == 1
    assert [b.next.steps[0].round if b.next else None for b in ex.batches] == [*range(1, rounds + 1), rounds + 1]
    part = json.loads((store.path / "manifest.json").read_text())["parts"]["lat"]
    assert part["discarded_after_stop"]["round"] == rounds + 1
    assert not (store.path / "fio" / "lat" / f"round-{rounds + 1:03d}.json").exists()


def test_no_round_beyond_the_limit_is_started_ahead(tmp_path):
    def never(step) -> float:
        return 1000 * 1.2 ** step.round

    ex = FakeExecutor(model=never)
    _, summary = start(tmp_path, LAT.with_(max_rounds=5), ex)
    assert summary["parts"]["lat"]["stop_reason"] == "max-rounds"
    assert ex.batches[-1].next is None and ex.cancelled == 0


# ---- telemetry matched by time ------------------------------------------------------------------

class SlowTelemetry:
    """A collector whose 5th snapshot takes 0.4 s and whose 6th is taken only at the 7th boundary."""

    available = True
    reason = None

    def __init__(self, ex: FakeExecutor):
        self.ex, self.calls = ex, 0

    def snapshot(self) -> dict:
        self.calls += 1
        delay = {5: 0.4, 6: 1.0}.get(self.calls, 0.0)
        return {"t_unix_s": self.ex.now + delay, "call": self.calls}


def test_a_slow_collector_never_shifts_another_step(tmp_path):
    spec = LAT.with_(max_rounds=5)
    ex = FakeExecutor(gap_s=0.0)
    parts = build_parts(spec, SIZE)
    store = RunStore.create(tmp_path, "t", Manifest.from_dict({"run_spec": spec.to_dict()}))
    ctx = RunContext(store=store, parts=parts, executor=ex, filename=str(tmp_path / "f"), area=Area(0, SIZE),
                     capacity_bytes=SIZE, seed=1, ioengine="psync", purger=lambda log: {"method": "none"},
                     deviations=[], telemetry=SlowTelemetry(ex))
    execute(ctx)
    steps = [s for s in steps_of(store.path) if s["phase"] == "round" and s["round"] == 1]
    # call 1 is the part's own (before its first batch), 2 the WIPC start, 3 its end, 4 round 1's
    # step 1 start, 5 step 2's ...
    tel = [s["telemetry"] for s in steps]
    assert tel[0]["before"]["offset_ms"] == 0 and tel[0]["after"]["offset_ms"] == 400  # nearest: the slow one
    assert tel[1]["before"]["call"] == 5 and tel[1]["before"]["offset_ms"] == 400
    # step 3's start snapshot was taken 1 s late (at step 4's start): step 3 gets the nearest ones, and
    # from step 4 on every snapshot is the one taken at that step's own boundary, exactly
    for i, t in enumerate(tel[3:], start=4):
        assert t["before"]["t_unix_s"] == pytest.approx(steps[i - 1]["start_time"]) and t["before"]["offset_ms"] == 0
        assert abs(t["after"]["offset_ms"]) == 0
    assert all(t["available"] for t in tel)


# ---- resumptions and the steady-state window ----------------------------------------------------------

def interrupted(tmp: Path, spec: RunSpec, batch: int) -> Path:
    with pytest.raises(Interrupted):
        start(tmp, spec, FakeExecutor(interrupt_on_batch=batch, model=slow_decay))
    return only_run(tmp)


def slow_decay(step) -> float:
    """Steady from round 4 on: any window of rounds >= 4 is steady, one with rounds 2 or 3 is not."""
    return 10_000 * (1.0 if step.round >= 4 or step.phase != "round" else 1.0 + 0.3 * (4 - step.round))


def later(hours: float):
    return lambda: time.time() + hours * HOURS


def test_resume_restarts_the_window_by_default(tmp_path):
    run = interrupted(tmp_path, LAT, batch=4)  # WIPC, rounds 1-2 saved, Ctrl-C in round 3
    ex = FakeExecutor(model=slow_decay, clock=later(3))
    _, summary = resume_run(run, executor=ex)
    lat = summary["parts"]["lat"]
    ss = lat["steady_state"]
    assert ex.batches[0].steps[0].round == 3  # the interrupted round is repeated
    assert ss["window_from_round"] == 3 and min(ss["window_rounds"]) >= 3
    assert ss["window_rounds"] == [4, 5, 6, 7, 8] and ss["reached"] and ss["spans_resume"] is None
    (res,) = lat["resumptions"]
    assert res["after_round"] == 2 and res["window"] == "restarted" and res["idle_h"] == pytest.approx(3, abs=0.01)
    rec = [s for s in steps_of(run) if s["phase"] == "round" and s["round"] == 3 and s["index"] == 1][0]
    assert rec["session"] == 1 and rec["boundary"]["kind"] == "resume" and rec["boundary"]["over_limit"] is False


def test_keep_window_discloses_the_resume_the_window_spans(tmp_path):
    spec = LAT.with_(max_rounds=6)
    run = interrupted(tmp_path, spec, batch=6)  # rounds 1-4 saved
    _, summary = resume_run(run, executor=FakeExecutor(model=slow_decay, clock=later(3)), keep_window=True)
    ss = summary["parts"]["lat"]["steady_state"]
    assert ss["window_rounds"] == [2, 3, 4, 5, 6] and ss["window_from_round"] is None
    assert ss["spans_resume"]["text"] == "spans a resume of 3.0 h"
    assert summary["parts"]["lat"]["resumptions"][0]["window"] == "kept (--keep-window)"
    man = json.loads((run / "manifest.json").read_text())
    assert man["resumptions"][0]["keep_window"] is True


def test_a_resume_near_the_round_limit_extends_it_for_a_full_window(tmp_path):
    spec = LAT.with_(max_rounds=5)
    run = interrupted(tmp_path, spec, batch=6)  # rounds 1-4 saved, round 5 interrupted
    ex = FakeExecutor(model=slow_decay, clock=later(1))
    seen = Said()
    _, summary = resume_run(run, executor=ex, progress=seen)
    lat = summary["parts"]["lat"]
    assert lat["round_limit"] == 9 and lat["steady_state"]["window_rounds"] == [5, 6, 7, 8, 9]
    assert lat["stop_reason"] == "steady-state"
    # said at the time, once, and every round counted against the extended limit
    extended = [m for m in seen.messages if "max rounds extended" in m]
    assert len(extended) == 1 and "from 5 to 9" in extended[0], seen.messages
    assert any(m.startswith("resumed: the interrupted round runs again") for m in seen.messages), seen.messages
    assert seen.rounds == [(5, 9), (6, 9), (7, 9), (8, 9), (9, 9)]
    # and the report's header names both limits
    from ssdpts.report.context import RunContext as ReportContext
    from ssdpts.report.headers import test_header
    from ssdpts.results.reader import read_run

    params = dict(test_header(ReportContext(read_run(run)), "lat").params)
    assert params["Max rounds"].startswith("5 (PTS: 25); extended to 9 after a resumption"), params["Max rounds"]


class Said:
    """A progress that keeps what the run said (messages, rounds and their limit)."""

    def __init__(self):
        self.messages: list[str] = []
        self.rounds: list[tuple[int, int | None]] = []

    def round_started(self, part, round_no, n_steps, step_s, limit=None):
        self.rounds.append((round_no, limit))

    def message(self, text):
        self.messages.append(text)

    def __getattr__(self, name):
        return lambda *a, **k: None


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("batch", [3, 4, 5, 6, 7, 8])
def test_no_window_spans_a_resumption_without_saying_so(tmp_path, batch, keep):
    """Whatever round is interrupted, and with either policy: a window whose rounds come from more
    than one session exists only with --keep-window, and then carries the disclosure."""
    run = interrupted(tmp_path, LAT, batch=batch)
    _, summary = resume_run(run, executor=FakeExecutor(model=slow_decay, clock=later(2)), keep_window=keep)
    steps = steps_of(run)
    for pid, part in summary["parts"].items():
        window = part["steady_state"]["window_rounds"]
        sessions = {s["session"] for s in steps if s["phase"] == "round" and s["round"] in window}
        spans = part["steady_state"]["spans_resume"]
        if len(sessions) > 1:
            assert keep and spans and spans["text"].startswith("spans a resume of "), (pid, window, sessions)
        else:
            assert spans is None
    # the same verdict when the summary is recomputed from the run directory alone (the reader's path
    # when summary.json is missing: report, compare, the library)
    from ssdpts.results.summary import recompute_summary

    again = recompute_summary(Manifest.from_dict(json.loads((run / "manifest.json").read_text())),
                              steprecord.read_steps(RunStore(run))).to_dict()
    assert again["parts"]["lat"]["steady_state"] == summary["parts"]["lat"]["steady_state"]


def test_window_rules_on_records(tmp_path):
    def rounds_in(*sessions: int) -> dict[int, list[steprecord.StepHead]]:
        return {r: [steprecord.StepHead("lat", "", "round", r, 1, "k", s)] for r, s in enumerate(sessions, start=1)}

    assert analysis.window_rounds_from(rounds_in(0, 0, 0)) is None
    assert analysis.window_rounds_from(rounds_in(0, 0, 1, 1)) == 3
    assert analysis.window_rounds_from(rounds_in(0, 0, 1, 1), keep=frozenset({1})) is None
    assert analysis.window_rounds_from(rounds_in(0, 1, 1, 2, 2), keep=frozenset({1})) == 4
    assert analysis.kept_sessions(Manifest.from_dict({"resumptions": [{"keep_window": False},
                                                                       {"keep_window": True}]})) == {2}


def test_a_step_never_takes_a_snapshot_from_the_wrong_side_of_it():
    """Seen in the device lab (NVMe under TCG): fio took 2.9 s to set up a part's WIPC, the only
    snapshot near that step was the one taken after it ended, and "before" and "after" were the same
    snapshot (the smart log said +0 bytes across 384 MiB written). A before is never later than the
    step's end, an after never earlier than its start; with no such snapshot the side is None."""
    from ssdpts.run.runner import _telemetry

    class Src:
        available, reason = True, None

    rec = SimpleNamespace(start_time=214.57, end_time=215.98)
    late = {"t_unix_s": 216.16, "data_written_bytes": 403_456_000}
    tel = _telemetry(Src(), [late], rec)
    assert tel["before"] is None and tel["after"]["data_written_bytes"] == 403_456_000
    early = {"t_unix_s": 211.70, "data_written_bytes": 1_024_000}
    tel = _telemetry(Src(), [early, late], rec)
    assert tel["before"]["t_unix_s"] == 211.70 and tel["after"]["t_unix_s"] == 216.16
    assert tel["before"]["offset_ms"] == pytest.approx(-2870.0) and tel["after"]["offset_ms"] == pytest.approx(180.0)


def test_every_part_samples_before_its_first_batch(tmp_path):
    """Every step of every part, on the FakeExecutor with a sampling source: its before was taken no
    later than its end and its after no earlier than its start, and never the same snapshot."""
    spec = LAT.with_(max_rounds=5)
    ex = FakeExecutor(gap_s=0.0)

    class Clocked:
        available, reason = True, None

        def snapshot(self) -> dict:
            return {"t_unix_s": ex.now}

    store = RunStore.create(tmp_path, "t", Manifest.from_dict({"run_spec": spec.to_dict()}))
    ctx = RunContext(store=store, parts=build_parts(spec, SIZE), executor=ex, filename=str(tmp_path / "f"),
                     area=Area(0, SIZE), capacity_bytes=SIZE, seed=1, ioengine="psync",
                     purger=lambda log: {"method": "none"}, deviations=[], telemetry=Clocked())
    execute(ctx)
    steps = steps_of(store.path)
    assert any(s["phase"] == "wipc" for s in steps)
    for s in steps:
        b, a = s["telemetry"]["before"], s["telemetry"]["after"]
        assert b is not None and a is not None, s["phase"]
        assert b["t_unix_s"] <= s["end_time"] and a["t_unix_s"] >= s["start_time"]
        assert b["t_unix_s"] < a["t_unix_s"]


@pytest.mark.parametrize("idle_ms, flagged", [(2000.0, False), (1998.4, False), (1991.0, False), (1988.0, True),
                                              (2013.0, True), (2009.0, False)])
def test_a_planned_idle_is_held_to_the_limit_both_ways(idle_ms, flagged):
    """HIR's planned idle: the 10-ms limit holds for the idle beyond the plan and for an idle short of
    it (the gate times the idle from the step's planned end, fio's clock starts a little later: a
    2,000-ms idle came out 1,998.4 ms in CI, and was flagged by a 1-ms rule)."""
    w = Workload.from_dict({"pattern": "rand", "read_pct": 0, "block_size_bytes": 4096, "threads": 1, "iodepth": 32})
    m = Measurement(DirectionStats.empty(), DirectionStats.empty(), 1.0, 100.0, 101.0)
    prev = StepRecord("hir", "", "round", 1, 1, w.key, w.label, w, m, None, 100.0, 101.0, planned_idle_after_s=2.0)
    rec = replace(prev, index=2, start_time=101.0 + idle_ms / 1000, end_time=103.0 + idle_ms / 1000,
                  planned_idle_after_s=None)
    b = steprecord.boundary(prev, rec)
    assert b.planned_idle_ms == 2000.0 and b.over_limit is flagged, b
