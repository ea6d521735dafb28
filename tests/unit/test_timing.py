"""Rates as the device did them (results/timing.py): each step's fio run time held against the block
layer's span of its IO, on the recorded demo run's real step records with a device view added."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from ssdpts.pts.plan import build_parts
from ssdpts.results import steprecord, summary, timing
from ssdpts.measurement import Measurement
from ssdpts.results.records import Manifest, StepRecord
from ssdpts.results.steprecord import Boundary

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runs" / "demo-loop-format1"


@pytest.fixture(scope="module")
def recorded():
    steps = [json.loads(ln) for ln in gzip.decompress((FIXTURE / "steps.jsonl.gz").read_bytes()).decode().splitlines()]
    return json.loads((FIXTURE / "manifest.json").read_text()), steps


def seen(rec: dict, span_s: float, *, first: float | None = 0.0) -> dict:
    """The record as a traced run writes it: the block layer saw its IO over ``span_s``."""
    r = copy.deepcopy(rec)
    t0 = float(r["start_time"])
    r["device"] = {"source": "block layer", "device": "loop0", "first_issue_unix_s": None if first is None else t0,
                   "last_complete_unix_s": t0 + span_s, "gap_ms": 1.0, "ios_seen": 10, "busy_issues": 0}
    return r


def check(r: dict) -> timing.RateCheck:
    """The rate check of a step line (StepRecord.from_dict's)."""
    return timing.check(Measurement.from_dict(r["measurement"]), r.get("device"), r.get("beside"))


def as_device_did(r: dict) -> Measurement:
    return timing.as_device_did(Measurement.from_dict(r["measurement"]), r.get("device"), r.get("beside"))


def wsat_steps(steps):
    return [s for s in steps if s["test"] == "wsat"]


def runtime(rec) -> float:
    m = rec["measurement"]
    return max(m["read"]["runtime_s"], m["write"]["runtime_s"])


def test_a_span_within_the_tolerance_keeps_fios_figures(recorded):
    rec = wsat_steps(recorded[1])[3]
    r = seen(rec, runtime(rec) * 1.009)
    assert check(r).state == "fio"
    assert as_device_did(r).iops == rec["measurement"]["iops"]


def test_a_span_beyond_it_gives_the_device_rates(recorded):
    rec = wsat_steps(recorded[1])[3]
    span = runtime(rec) * 1.18  # fio's clock 18% short of the device's span
    r = seen(rec, span)
    c = check(r)
    assert c.state == "device" and c.differs_pct == pytest.approx(18.0, abs=0.01)
    m = as_device_did(r)
    w = rec["measurement"]["write"]
    span = r["device"]["last_complete_unix_s"] - r["device"]["first_issue_unix_s"]  # as the record holds it
    assert m.write.iops == pytest.approx(w["ios"] / span, rel=1e-12)
    assert m.write.bw_bytes_per_s == pytest.approx(w["io_bytes"] / span, rel=1e-12)
    assert m.write.lat_mean_ns == w["lat_mean_ns"] and m.write.ios == w["ios"]  # response times are fio's
    assert StepRecord.from_dict(r).measurement.iops == m.iops  # every reader gets the device's rate
    # fio's measurement in the record is untouched (it is proven from fio's output)
    assert r["measurement"] == rec["measurement"]


def test_short_steps_are_not_judged_finer_than_fios_whole_ms(recorded):
    rec = copy.deepcopy(wsat_steps(recorded[1])[0])
    for d in ("read", "write"):
        rec["measurement"][d]["runtime_s"] = 0.05 if rec["measurement"][d]["ios"] else 0.0  # a 50-ms step (HIR's bursts)
    assert check(seen(rec, 0.05 + 0.0009)).state == "fio"  # 1.8%, but within fio's whole ms
    assert check(seen(rec, 0.05 - 0.0011)).state == "device"  # 2.2%: more than 1 ms
    for d in ("read", "write"):
        rec["measurement"][d]["runtime_s"] = 1.0 if rec["measurement"][d]["ios"] else 0.0
    assert check(seen(rec, 1.0 + 0.0095)).state == "fio"  # 9.5 ms of 1 s: within 1%
    assert check(seen(rec, 1.0 + 0.0105)).state == "device"


def test_unchecked_where_the_trace_did_not_see_both_ends(recorded):
    rec = wsat_steps(recorded[1])[0]
    assert check(rec).state == "unchecked"
    assert "not recorded" in check(rec).why
    assert "one end" in check(seen(rec, 1.5, first=None)).why
    beside = seen(rec, 1.5) | {"beside": {"rw": "trim"}}
    assert check(beside).state == "unchecked" and "beside" in check(beside).why
    assert as_device_did(beside).iops == rec["measurement"]["iops"]


def test_a_boundary_over_the_limits_marks_the_step_after_it(recorded):
    rec = copy.deepcopy(wsat_steps(recorded[1])[4])
    rec["boundary"] = {"kind": "step", "after": "round 1 step 4", "over_limit": True, "why": "idle 37.0 ms > 10 ms"}
    assert StepRecord.from_dict(rec).mark == "after round 1 step 4: idle 37.0 ms > 10 ms"
    rec["boundary"]["kind"] = "resume"  # a resumption is listed, not held to the limit
    assert timing.marked(Boundary.from_dict(rec["boundary"])) is None


def test_the_summary_uses_the_device_rates_and_says_so(recorded):
    """WSAT: the recomputed samples are the table's, the marked one is counted in the part's timing and
    warnings and marks the datasheet's figure; a recomputation from the records alone gives the same."""
    manifest, steps = recorded
    man = Manifest.from_dict(manifest)
    spec, target = man.run_spec_and_target()
    parts = [p for p in build_parts(spec, target.size_bytes, 512) if p.test == "wsat"]
    ws = wsat_steps(steps)
    changed = {2: 1.25, 7: 0.8}
    lines = [seen(s, runtime(s) * changed.get(i, 1.0)) for i, s in enumerate(ws)]
    lines[9]["device"]["gap_ms"] = 85.0  # the block layer saw 85 ms without IO before sample 10
    new = [StepRecord.from_dict(r) for r in lines]
    for i, r in enumerate(new):
        new[i] = r.with_boundary(steprecord.boundary(new[i - 1] if i else None, r))
    before = summary.summarize_part(parts[0], [StepRecord.from_dict(s) for s in ws], target.size_bytes)
    after = summary.summarize_part(parts[0], new, target.size_bytes)
    b, a = before.table.series, after.table.series
    for i, (x, y) in enumerate(zip(b, a)):
        want = x.iops / changed.get(i, 1.0)
        assert y.iops == pytest.approx(want, rel=1e-5), i  # fio rounds its IOPS; the spans are Unix seconds (µs)
    t = after.timing
    assert (t["recomputed"], t["marked"], t["unchecked"], t["checked"]) == (2, 1, 0, len(ws))
    assert [x["step"] for x in t["recomputed_steps"]] == ["round 1 step 3", "round 1 step 8"]
    assert t["worst_differs_pct"] == pytest.approx(25.0, abs=0.01)
    assert any("2 of the 30 samples" in w and "device's span" in w for w in after.warnings)
    assert any("1 of the 30 samples are marked" in w for w in after.warnings)
    assert t["marked_steps"][0]["index"] == 10 and t["marked_steps"][0]["phase"] == "round"
    # a headline figure is marked only where the marked sample is among those it comes from
    assert timing.flag(t, lambda m: m["index"] in {10, 11}).startswith("marked: 1 of the steps it comes from")
    assert timing.flag(t, lambda m: m["index"] in {26, 27, 28, 29, 30}) == ""
    assert before.timing["unchecked"] == len(ws) and not timing.flag(before.timing, lambda m: True)
    run = timing.run_timing([t, before.timing])
    assert (run.recomputed, run.marked, run.unchecked) == (2, 1, len(ws))
