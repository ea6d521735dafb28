"""The OCP tests (pts/ocp.py, ocp_trim.py, ocp_idle_gc.py): their plans, the job beside the reads in
fio's job file, the table's changes and verdict, and summary.json's round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.jobfile import render_job_file
from ssdpts.errors import UserError
from ssdpts.measurement import DirectionStats, Measurement
from ssdpts.pts import ocp
from ssdpts.pts.plan import build_parts
from ssdpts.pts.registry import TESTS, table_from_dict
from ssdpts.pts.runspec import RunSpec, expand_tests
from ssdpts.pts.workload import Beside, Step


def test_the_group_and_every():
    assert expand_tests(["ocp"]) == ("ocp-trim", "ocp-idle-gc")
    assert "ocp-trim" not in expand_tests(["every"])
    assert set(TESTS) >= {"ocp-trim", "ocp-idle-gc"}


def test_plans():
    spec = RunSpec(tests=("ocp-trim", "ocp-idle-gc"), step_seconds=6.0)
    parts = build_parts(spec, 256 * 2**20, 512)
    trim, pre, meas = parts
    assert trim.wipc is not None and trim.purge and trim.stop_rule == "fixed"
    steps = trim.round_steps(1)
    assert [s.key for s in steps] == ["settle", "baseline", "trim"]
    assert steps[0].idle_after_s == pytest.approx(6.0)  # 60 s x 6/60
    assert all(s.workload.read_pct == 100 and s.workload.toio == 1 for s in steps)
    assert steps[1].duration_s == steps[2].duration_s == pytest.approx(6.0)
    assert steps[2].beside == Beside("trim", 1 << 20, 10.0, 50, 50) and steps[1].beside is None
    assert steps[2].clones == 2
    assert pre.stop_rule == "steady-state" and pre.purge
    assert [s.key for s in meas.round_steps(1)] == ["settle", "baseline", "burst", "after-burst"]
    assert meas.round_steps(1)[2].workload.read_pct == 0


def test_options_refused():
    for kw in ({"ocp_limit_pct": 0}, {"ocp_trim_size": 1000}, {"ocp_read_s": 0.5}, {"ocp_trim_rate": -1}):
        with pytest.raises(UserError):
            RunSpec(tests=("ocp-trim",), **kw)
    d = RunSpec(tests=("iops",)).to_dict()
    assert "ocp_limit_pct" not in d  # recorded only when an OCP test runs
    assert RunSpec(tests=("ocp-trim",)).to_dict()["ocp_trim_rate"] == 10.0


def test_job_file_runs_the_trim_job_in_the_steps_group():
    spec = RunSpec(tests=("ocp-trim",), step_seconds=1.0, ocp_trim_rate=20, ocp_trim_size=256 * 1024)
    steps = build_parts(spec, 256 * 2**20, 512)[0].round_steps(1)
    b = Batch(steps=steps, filename="/dev/x", area=Area(0, 256 * 2**20), seed=1, ioengine="io_uring",
              job_path=Path("/tmp/j.fio"), output_path=Path("/tmp/j.json"))
    text, _ = render_job_file(b, [("pre", "post")] * 3)
    sections = text.split("\n[")
    beside = next(s for s in sections if s.startswith("s0003b]"))
    assert "new_group" not in beside and "rw=trim" in beside and "bs=262144" in beside
    assert "rate_iops=,,20" in beside and f"offset={128 * 2**20}" in beside and f"size={128 * 2**20}" in beside
    assert "fixedbufs=0" in beside and "exec_prerun=pre" in beside and "runtime=" in beside
    reads = next(s for s in sections if s.startswith("s0003]"))
    assert "random_distribution=zoned:100/50:0/50" in reads and "rw=randread" in reads


def _m(mean_us: float, p99_us: float, ios: int = 1000, trim: int = 0) -> Measurement:
    bins = {int(mean_us * 1e3): ios - ios // 50, int(p99_us * 1e3): ios // 50}
    r = DirectionStats(ios, ios * 4096, ios / 1.0, ios * 4096.0, 1.0, mean_us * 1e3, 1.0, p99_us * 1e3 * 2, 1.0,
                       lat_bins_ns=bins)
    t = DirectionStats(trim, trim << 20, float(trim), 0.0, 1.0, 0.0, 0.0, 0.0, 0.0) if trim else None
    return Measurement(r, DirectionStats.empty(), 1.0, 100.0, 101.0, trim=t)


def test_changes_and_verdict():
    steps = build_parts(RunSpec(tests=("ocp-trim",)), 256 * 2**20, 512)[0].round_steps(1)
    ok = TESTS["ocp-trim"].build_table(steps, {"baseline": [_m(100, 200)], "trim": [_m(104, 209, trim=7)]}, 5.0)
    assert ok.changes()["mean"] == pytest.approx(4.0) and ok.changes()["p99"] == pytest.approx(4.5, abs=0.01)
    assert ok.verdict == "pass" and ok.under.trim_ios == 7 and ok.under.trim_bytes == 7 << 20
    bad = TESTS["ocp-trim"].build_table(steps, {"baseline": [_m(100, 200)], "trim": [_m(104, 230)]}, 5.0)
    assert bad.verdict == "fail"
    assert TESTS["ocp-trim"].build_table(steps, {"baseline": [_m(100, 200)]}, 5.0).verdict is None
    back = table_from_dict(bad.to_dict())
    assert back == bad and back.to_dict()["verdict"] == "fail"
    assert {c.point for c in bad.cells() if c.metric == "lat_change_pct"} == {"MEAN", "P99", "P999", "MAX"}


def test_judged_statistics_are_an_option():
    """--ocp-judge: the verdict holds only the named statistics to the limit, the table keeps them
    (summary.json round trip), and the CLI takes the report's label p99.9; anything else is refused."""
    from ssdpts.cli.common import _judged

    steps = build_parts(RunSpec(tests=("ocp-trim",)), 256 * 2**20, 512)[0].round_steps(1)
    cells = {"baseline": [_m(100, 200)], "trim": [_m(104, 230)]}  # mean +4%, p99 +15%
    assert TESTS["ocp-trim"].build_table(steps, cells, 5.0).verdict == "fail"
    mean_only = TESTS["ocp-trim"].build_table(steps, cells, 5.0, judged=("mean",))
    assert mean_only.verdict == "pass" and mean_only.to_dict()["judged"] == ["mean"]
    assert table_from_dict(mean_only.to_dict()) == mean_only
    old = mean_only.to_dict()
    del old["judged"]  # a run recorded before the option: mean and p99
    assert table_from_dict(old).judged == ("mean", "p99") and table_from_dict(old).verdict == "fail"
    spec = RunSpec(tests=("ocp-idle-gc",), ocp_judge=_judged("mean,p99.9"))
    assert spec.ocp_judge == ("mean", "p999") and RunSpec.from_dict(spec.to_dict()).ocp_judge == ("mean", "p999")
    assert build_parts(spec, 256 * 2**20, 512)[1].table_args["judged"] == ("mean", "p999")
    for bad in ("", "p98", "mean,mean"):
        with pytest.raises(UserError, match="--ocp-judge"):
            RunSpec(tests=("ocp-trim",), ocp_judge=_judged(bad))


def test_measurement_keeps_its_trims():
    m = _m(100, 200, trim=3)
    assert Measurement.from_dict(m.to_dict()) == m and m.ios == 1000  # trims never in the step's IOs
    assert "trim" not in _m(100, 200).to_dict()


def test_step_round_trip():
    s = Step("ocp-trim", "", "round", 1, 3, ocp.reads(RunSpec(tests=("ocp-trim",))), 1.0, cell="trim",
             beside=Beside("randtrim", 8192, 0))
    assert Step.from_dict(s.to_dict()) == s


def test_every_ocp_option_round_trips_for_each_test_that_uses_it():
    """The manifest records (RunSpec.to_dict) every option an OCP test uses, and reads it back as set:
    ocp-trim's settle was once dropped and read back as the default 60."""
    from dataclasses import fields

    from ssdpts.pts.runspec import TEST_OPTIONS

    ocp_fields = [f.name for f in fields(RunSpec) if f.name.startswith("ocp_")]
    assert set(ocp_fields) <= set(TEST_OPTIONS)
    for test in ("ocp-trim", "ocp-idle-gc"):
        spec = RunSpec(tests=(test,), ocp_settle_s=7.0, ocp_read_s=11.0, ocp_limit_pct=6.0)
        d = spec.to_dict()
        assert d["ocp_settle_s"] == 7.0 and d["ocp_read_s"] == 11.0, test
        back = RunSpec.from_dict(d)
        assert back.ocp_settle_s == 7.0 and back.ocp_limit_pct == 6.0, test
