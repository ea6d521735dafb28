"""The PTS as code (docs/pts-reference.md#terms, #tests): test loops, tracking variables, WIPC, WSAT bounds, profiles
and RunSpec validation."""

from __future__ import annotations

import pytest

from ssdpts.errors import UserError
from ssdpts.pts.runspec import RunSpec, expand_tests
from ssdpts.pts.plan import active_range_bytes, build_parts, required_bytes

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
CAP = 64 * GiB  # a capacity large enough for every profile

# PTS order, written out here rather than imported: outer mix (read %), inner block size.
IOPS_MIXES = [100, 95, 65, 50, 35, 5, 0]
IOPS_BLOCK_SIZES = [1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512]


def parts_by_id(spec: RunSpec, capacity: int = CAP) -> dict:
    return {p.id: p for p in build_parts(spec, capacity)}


# ---- IOPS ------------------------------------------------------------------------------------------

def test_iops_round_has_56_steps_in_pts_order():
    spec = RunSpec(tests=("iops",), step_seconds=60)
    part = parts_by_id(spec)["iops"]
    steps = part.round_steps(3)
    assert len(steps) == 56
    assert [(s.workload.read_pct, s.workload.block_size_bytes) for s in steps] == [
        (m, bs) for m in IOPS_MIXES for bs in IOPS_BLOCK_SIZES
    ]
    assert [s.index for s in steps] == list(range(1, 57))
    assert {s.round for s in steps} == {3}
    assert {s.phase for s in steps} == {"round"}
    assert {s.workload.pattern for s in steps} == {"rand"}
    assert {s.duration_s for s in steps} == {60}
    assert {(s.workload.threads, s.workload.iodepth) for s in steps} == {(4, 32)}  # PTS-E TC4/QD32
    assert steps[0].workload.label == "RND 1024KiB 100/0"
    assert steps[-1].workload.label == "RND 0.5KiB 0/100"
    assert part.purge and part.stop_rule == "steady-state" and part.max_rounds == 25


def test_iops_tracks_three_variables_under_2_0_2():
    part = parts_by_id(RunSpec(tests=("iops",)))["iops"]
    assert [t.key for t in part.tracking] == ["rand-4096-0", "rand-65536-65", "rand-1048576-100"]
    assert [t.name for t in part.tracking] == [
        "RND 4KiB 0/100 IOPS", "RND 64KiB 65/35 IOPS", "RND 1024KiB 100/0 IOPS"]
    assert {t.metric for t in part.tracking} == {"iops"}
    # Every tracked cell is a cell of the round.
    keys = {s.workload.key for s in part.round_steps(1)}
    assert {t.key for t in part.tracking} <= keys


def test_iops_tracks_one_variable_under_1_1():
    spec = RunSpec(tests=("iops",), pts_version="1.1")
    part = parts_by_id(spec)["iops"]
    assert [t.key for t in part.tracking] == ["rand-4096-0"]
    assert any("1.1" in d for d in spec.deviations())


def test_iops_uses_threads_and_iodepth_from_the_spec():
    part = parts_by_id(RunSpec(tests=("iops",), threads=8, iodepth=4))["iops"]
    assert {(s.workload.threads, s.workload.iodepth) for s in part.round_steps(1)} == {(8, 4)}
    assert part.tracking[0].key == "rand-4096-0"


# ---- WIPC and active range -------------------------------------------------------------------------

def test_wipc_writes_twice_the_active_range_sequentially():
    cap = 10 * GiB
    spec = RunSpec(tests=("iops", "lat"))
    for part in build_parts(spec, cap):
        w = part.wipc
        assert w is not None
        assert w.phase == "wipc" and w.round == 0 and w.duration_s is None
        assert w.io_bytes == 2 * cap  # enterprise AR 100%
        assert (w.workload.pattern, w.workload.read_pct, w.workload.block_size_bytes) == ("seq", 0, 128 * KiB)


def test_wipc_follows_the_active_range_and_multiple():
    cap = 10 * GiB
    spec = RunSpec(tests=("iops",), active_range_pct=50, wipc_capacity_multiple=3)
    (part,) = build_parts(spec, cap)
    assert part.wipc.io_bytes == 3 * active_range_bytes(cap, 50) == 3 * 5 * GiB
    assert any("3x" in d for d in spec.deviations())


def test_active_range_is_aligned_to_1_mib():
    ar = active_range_bytes(1_000_000_000, 75)  # 750e6 bytes = 715.26 MiB
    assert ar == 715 * MiB
    assert ar % MiB == 0
    for bs in IOPS_BLOCK_SIZES:
        assert ar % bs == 0
    assert active_range_bytes(8 * GiB, 100) == 8 * GiB


# ---- TP ----------------------------------------------------------------------------------------------

def test_tp_enterprise_has_1024k_and_128k_parts():
    parts = build_parts(RunSpec(tests=("tp",)), CAP)
    assert [p.id for p in parts] == ["tp-1024KiB", "tp-128KiB"]
    for p, bs in zip(parts, (1024 * KiB, 128 * KiB)):
        assert p.purge
        # WIPC at the test block size (docs/pts-reference.md#wipc: Enterprise TP may use the test block size).
        assert p.wipc.workload.block_size_bytes == bs and p.wipc.workload.read_pct == 0
        steps = p.round_steps(2)
        assert [(s.workload.pattern, s.workload.read_pct, s.workload.block_size_bytes) for s in steps] == [
            ("seq", 100, bs), ("seq", 0, bs)]
        assert [s.part for s in steps] == [p.part, p.part]
        assert {(s.workload.threads, s.workload.iodepth) for s in steps} == {(1, 32)}
        (t,) = p.tracking
        assert t.key == f"seq-{bs}-0" and t.metric == "write_mb_per_s" and t.unit == "MB/s"


def test_tp_client_has_only_1024k():
    parts = build_parts(RunSpec(tests=("tp",), profile="client"), CAP)
    assert [p.id for p in parts] == ["tp-1024KiB"]


# ---- LAT -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("threads,iodepth", [(None, None), (16, 64), (1, 1)])
def test_lat_is_nine_steps_at_tc1_qd1(threads, iodepth):
    spec = RunSpec(tests=("lat",), threads=threads, iodepth=iodepth, step_seconds=2)
    part = parts_by_id(spec)["lat"]
    steps = part.round_steps(1)
    assert len(steps) == 9
    assert [(s.workload.read_pct, s.workload.block_size_bytes) for s in steps] == [
        (m, bs) for m in (100, 65, 0) for bs in (8 * KiB, 4 * KiB, 512)]
    assert {(s.workload.threads, s.workload.iodepth) for s in steps} == {(1, 1)}
    assert {s.workload.pattern for s in steps} == {"rand"}
    assert {s.duration_s for s in steps} == {2}
    (t,) = part.tracking
    assert t.key == "rand-4096-0" and t.metric == "lat_mean_us"


# ---- WSAT ------------------------------------------------------------------------------------------

def test_wsat_has_no_wipc_and_runs_in_chunks():
    cap = 4 * GiB
    spec = RunSpec(tests=("wsat",), wsat_hours=1, wsat_chunk_steps=25, threads=2, iodepth=8)
    (part,) = build_parts(spec, cap)
    assert part.id == "wsat" and part.wipc is None and part.purge
    assert part.stop_rule == "wsat"
    assert part.wsat_max_steps == 60  # one sample per minute for 1 h
    assert part.wsat_max_bytes == 4 * cap  # PTS: stop at 4x user capacity
    assert part.max_rounds == 3  # ceil(60 / 25)
    chunks = [part.round_steps(r) for r in (1, 2, 3, 4)]
    assert [[s.index for s in c] for c in chunks[:3]] == [
        list(range(1, 26)), list(range(26, 51)), list(range(51, 61))]
    assert chunks[3] == []
    s = chunks[0][0]
    assert (s.workload.pattern, s.workload.read_pct, s.workload.block_size_bytes) == ("rand", 0, 4 * KiB)
    assert (s.workload.threads, s.workload.iodepth) == (2, 8)
    assert {st.round for st in chunks[1]} == {2}


def test_wsat_defaults_are_24h_and_4x_capacity():
    spec = RunSpec(tests=("wsat",))
    (part,) = build_parts(spec, CAP)
    assert part.wsat_max_steps == 24 * 60
    assert part.wsat_max_bytes == 4 * CAP
    assert spec.deviations() == []


def test_wsat_capacity_multiple_and_hours_are_parameters():
    spec = RunSpec(tests=("wsat",), wsat_hours=0.5, wsat_capacity_multiple=1.5)
    (part,) = build_parts(spec, 2 * GiB)
    assert part.wsat_max_steps == 30
    assert part.wsat_max_bytes == 3 * GiB
    assert any("WSAT" in d for d in spec.deviations())


# ---- profiles ------------------------------------------------------------------------------------

def test_client_profile_is_75_percent_tc2_qd16():
    spec = RunSpec(tests=("iops",), profile="client")
    assert spec.ar_pct == 75 and spec.tc == 2 and spec.qd == 16
    assert spec.prof.write_cache == "enabled"
    cap = 8 * GiB
    (part,) = build_parts(spec, cap)
    assert {(s.workload.threads, s.workload.iodepth) for s in part.round_steps(1)} == {(2, 16)}
    assert part.wipc.io_bytes == 2 * active_range_bytes(cap, 75) == 2 * 6 * GiB


def test_enterprise_profile_defaults():
    spec = RunSpec(tests=("iops",))
    assert spec.ar_pct == 100 and spec.tc == 4 and spec.qd == 32
    assert spec.prof.write_cache == "disabled"


def test_explicit_settings_override_the_profile():
    spec = RunSpec(tests=("iops",), profile="client", threads=1, iodepth=1, active_range_pct=10)
    assert (spec.tc, spec.qd, spec.ar_pct) == (1, 1, 10)
    d = spec.to_dict()
    assert d["resolved"]["threads"] == 1 and d["resolved"]["active_range_pct"] == 10


# ---- RunSpec validation ------------------------------------------------------------------------

@pytest.mark.parametrize("kw,word", [
    ({"iodepth": 0}, "iodepth"),
    ({"iodepth": 5000}, "iodepth"),
    ({"threads": 0}, "threads"),
    ({"step_seconds": -1}, "step-seconds"),
    ({"step_seconds": 0}, "step-seconds"),
    ({"tests": ("iops", "bogus")}, "unknown test"),
    ({"tests": ()}, "no test"),
    ({"profile": "datacenter"}, "profile"),
    ({"max_rounds": 4}, "max-rounds"),
    ({"active_range_pct": 0}, "active-range"),
    ({"active_range_pct": 101}, "active-range"),
    ({"wsat_hours": 0}, "wsat-hours"),
    ({"wsat_capacity_multiple": -1}, "wsat-capacity-multiple"),
    ({"wsat_chunk_steps": 0}, "wsat_chunk_steps"),
    ({"pts_version": "3.0"}, "pts-version"),
    ({"ioengine": "windowsaio"}, "ioengine"),
    ({"wipc_capacity_multiple": 0}, "WIPC"),
])
def test_runspec_refuses_bad_values(kw, word):
    args = {"tests": ("iops",), **kw}
    with pytest.raises(UserError) as exc:
        RunSpec(**args)
    msg = str(exc.value)
    assert word in msg
    assert "\n" not in msg
    assert exc.value.exit_code == 2


def test_with_revalidates():
    spec = RunSpec(tests=("iops",))
    with pytest.raises(UserError):
        spec.with_(iodepth=0)
    assert spec.with_(iodepth=8).qd == 8


def test_expand_tests():
    assert expand_tests(["all"]) == ("wsat", "iops", "tp", "lat")
    assert expand_tests(["LAT", "iops", "iops"]) == ("iops", "lat")
    with pytest.raises(UserError, match="unknown test 'foo'"):
        expand_tests(["foo"])
    with pytest.raises(UserError, match="no test"):
        expand_tests([])


def test_runspec_round_trips_through_dict():
    spec = RunSpec(tests=("iops", "tp"), profile="client", iodepth=8, step_seconds=2, max_rounds=7, seed=42)
    again = RunSpec.from_dict(spec.to_dict())
    assert again == spec


# ---- build_parts ------------------------------------------------------------------------------------

def test_build_parts_orders_parts_by_test_list():
    parts = build_parts(RunSpec(tests=("wsat", "iops", "tp", "lat")), CAP)
    assert [p.id for p in parts] == ["wsat", "iops", "tp-1024KiB", "tp-128KiB", "lat"]


def test_too_small_target_is_refused():
    spec = RunSpec(tests=("iops",))  # 1024KiB x TC4 x QD32 = 128 MiB needed
    with pytest.raises(UserError) as exc:
        build_parts(spec, 100 * MiB)
    assert "too small" in str(exc.value) and "\n" not in str(exc.value)
    assert required_bytes(build_parts(spec, 256 * MiB)) == 128 * MiB


def test_too_small_active_range_is_refused():
    with pytest.raises(UserError, match="too small"):
        build_parts(RunSpec(tests=("lat",), active_range_pct=10), 256 * MiB)  # 25 MiB < 64 MiB minimum


def test_small_target_fits_with_lower_demand():
    parts = build_parts(RunSpec(tests=("iops",), threads=1, iodepth=4), 100 * MiB)
    assert parts[0].id == "iops"


# ---- deviations --------------------------------------------------------------------------------------

def test_default_spec_is_pts_compliant():
    assert RunSpec(tests=("wsat", "iops", "tp", "lat")).deviations() == []


def test_deviations_list_time_compression_and_others():
    spec = RunSpec(tests=("iops",), step_seconds=1, max_rounds=8, purge="none")
    devs = spec.deviations()
    assert "time-compressed: steps of 1 s instead of 60 s" in devs
    assert any("8 rounds" in d for d in devs)
    assert any("no purge" in d for d in devs)
    assert len(devs) == 3
