"""The extended tests as code (docs/pts-reference.md#extended): HIR, XSR, CBW (ECW) and DIRTH plans, their
fio job files, the operating-point rules, time compression, test selection and recorded options."""

from __future__ import annotations

import pytest

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.jobfile import render_job_file, schedule
from ssdpts.errors import UserError
from ssdpts.pts import cbw, demand, hir, xsr
from ssdpts.pts.demand import DemandRow, choose_points
from ssdpts.pts.parts import MAX_CLONES_PER_ROUND
from ssdpts.pts.plan import build_parts, deviations_for
from ssdpts.pts.runspec import RunSpec, expand_tests
from ssdpts.pts.workload import Step, Workload

KiB, MiB, GiB = 1024, 2**20, 2**30
CAP = 64 * GiB
TCS = QDS = [32, 16, 8, 6, 4, 2, 1]


def parts_of(spec: RunSpec, lbs: int = 512) -> dict:
    return {p.id: p for p in build_parts(spec, CAP, lbs)}


def every_step(part) -> list[Step]:
    return [s for r in range(1, part.max_rounds + 1) for s in part.round_steps(r)]


def seconds(steps) -> float:
    return sum(s.duration_s + s.idle_after_s for s in steps)


def sections(text: str) -> list[dict[str, str | None]]:
    out: list[dict[str, str | None]] = []
    for line in (ln.strip() for ln in text.splitlines()):
        if line.startswith("["):
            out.append({"name": line[1:-1]})
        elif line:
            k, sep, v = line.partition("=")
            out[-1][k] = v if sep else None
    return out


def job_file(steps) -> list[dict]:
    return sections(render_job_file(Batch(steps, "/dev/loop9", Area(0, CAP), 1, "libaio"))[0])[1:]


# ---- selection -----------------------------------------------------------------------------------

def test_all_keeps_meaning_the_four_basic_tests_and_the_others_have_names():
    assert expand_tests(["all"]) == ("wsat", "iops", "tp", "lat")
    assert expand_tests(["extended"]) == ("hir", "xsr", "cbw", "dirth")
    assert expand_tests(["every"]) == ("wsat", "iops", "tp", "lat", "hir", "xsr", "cbw", "dirth")
    assert expand_tests(["ECW", "hir"]) == ("hir", "cbw")  # PTS-E 1.1's name of CBW
    with pytest.raises(UserError, match="extended"):
        expand_tests(["hirr"])


# ---- HIR -----------------------------------------------------------------------------------------

def test_hir_preconditions_in_rounds_of_30_minutes_tracking_the_last_one():
    p = parts_of(RunSpec(tests=("hir",)))
    pre = p["hir-precondition"]
    assert pre.purge and pre.wipc is None and pre.stop_rule == "steady-state" and pre.max_rounds == 25
    steps = pre.round_steps(4)
    assert len(steps) == 30 and {s.duration_s for s in steps} == {60.0}
    assert {(s.workload.label, s.workload.threads, s.workload.iodepth) for s in steps} == {("RND 4KiB 0/100", 4, 32)}
    assert [t.key for t in pre.tracking] == ["m30"] == [steps[-1].key]


def test_hir_wait_states_are_360_bursts_with_real_idle_then_1800_s_of_writes():
    p = parts_of(RunSpec(tests=("hir",)))["hir-wait-states"]
    assert not p.purge and p.wipc is None and p.stop_rule == "fixed"
    steps = every_step(p)
    assert len(steps) == 5 * 720
    for n, (ws, idle) in enumerate(((1, 5), (2, 10), (3, 15), (5, 25), (10, 50))):
        seg = steps[n * 720:(n + 1) * 720]
        assert [s.key for s in seg] == [f"ws{ws}"] * 360 + [f"bl{ws}"] * 360
        assert {(s.duration_s, s.idle_after_s) for s in seg[:360]} == {(5.0, float(idle))}
        assert {(s.duration_s, s.idle_after_s) for s in seg[360:]} == {(5.0, 0.0)}  # 1,800 s back to back
    assert seconds(steps) == 46_800 + 5 * 1_800 == 15.5 * 3600  # docs/pts-reference.md#hir: ~15.5 h after preconditioning
    assert [s.index for s in steps] == list(range(1, 3601))
    for r in range(1, p.max_rounds + 1):  # a round's fio holds a bounded number of clones, one segment at a time
        rs = p.round_steps(r)
        assert sum(s.workload.threads for s in rs) <= MAX_CLONES_PER_ROUND
        assert len({s.key for s in rs}) == 1 and {s.round for s in rs} == {r}


def test_hir_time_compression_scales_bursts_idles_and_minutes():
    p = parts_of(RunSpec(tests=("hir",), step_seconds=6, hir_bursts=2))
    pre, wait = p["hir-precondition"], p["hir-wait-states"]
    assert {s.duration_s for s in pre.round_steps(1)} == {6.0}
    steps = every_step(wait)
    assert [(s.duration_s, s.idle_after_s) for s in steps[:4]] == [(0.5, 0.5), (0.5, 0.5), (0.5, 0.0), (0.5, 0.0)]
    assert {s.idle_after_s for s in steps if s.key == "ws10"} == {5.0}
    assert seconds(steps) == pytest.approx(2 * (25 + 105 + 25) * 0.1)


def test_hir_job_file_starts_each_burst_after_the_previous_one_and_its_idle():
    p = parts_of(RunSpec(tests=("hir",), threads=2, iodepth=8))["hir-wait-states"]
    jobs = job_file(p.round_steps(1))
    assert len(jobs) == 260 and {j["runtime"] for j in jobs} == {"5000ms"}
    assert [j.get("startdelay") for j in jobs[:3]] == [None, "10000ms", "20000ms"]  # 5 s burst + 5 s idle
    assert {(j["numjobs"], j["iodepth"], j["rw"]) for j in jobs} == {("2", "8", "randwrite")}


def test_schedule_keeps_idle():
    w = Workload("rand", 0, 4096, 1, 1)
    steps = [Step("hir", "x", "round", 1, i, w, 2.0, idle_after_s=idle) for i, idle in ((1, 3.0), (2, 0.0), (3, 1.0))]
    assert schedule(steps) == [0.0, 5.0, 7.0]
    text, starts = render_job_file(Batch(steps, "/dev/x", Area(0, 64 * MiB), 1, "libaio"))
    assert starts == [0.0, 5.0, 7.0]
    assert [j.get("startdelay") for j in sections(text)[1:]] == [None, "5000ms", "7000ms"]
    with pytest.raises(ValueError, match="idle_after_s"):
        Step("hir", "x", "round", 1, 1, w, None, io_bytes=1, idle_after_s=1.0)


# ---- XSR -----------------------------------------------------------------------------------------

def test_xsr_is_three_groups_of_minutes_back_to_back_at_tc1_qd32():
    (p,) = build_parts(RunSpec(tests=("xsr",)), CAP)
    assert p.purge and p.wipc is None and p.stop_rule == "fixed"
    steps = every_step(p)
    assert [s.key for s in steps] == ["g1"] * 480 + ["g2"] * 360 + ["g3"] * 480
    assert {s.key: s.workload.label for s in steps} == {"g1": "SEQ 1024KiB 0/100", "g2": "RND 8KiB 0/100",
                                                        "g3": "SEQ 1024KiB 0/100"}
    assert {(s.workload.threads, s.workload.iodepth, s.duration_s, s.idle_after_s) for s in steps} == {(1, 32, 60.0, 0.0)}
    assert seconds(steps) == 22 * 3600
    assert max(len(p.round_steps(r)) for r in range(1, p.max_rounds + 1)) == xsr.ROUND_MINUTES
    for r in range(1, p.max_rounds):  # a change of group never falls between two fio processes
        assert p.round_steps(r)[-1].key == p.round_steps(r + 1)[0].key


def test_xsr_recovery_rules():
    from ssdpts.pts.xsr import XsrMinute, recovery

    series = ([XsrMinute(i, "g1", v, 1, 1) for i, v in enumerate([100, 90, 80, 70, 60, 60], start=1)]
              + [XsrMinute(7, "g2", 10, 1, 1)]
              + [XsrMinute(8 + i, "g3", v, 1, 1) for i, v in enumerate([20, 50, 65, 80])])
    assert recovery(series, "g1-mean") == (pytest.approx(460 / 6), 4)  # first G3 minute >= 76.7
    assert recovery(series, "g1-final") == (pytest.approx(72.0), 4)  # mean of the last 5: 72 -> minute 4 (80)
    assert recovery(series[:7] + [XsrMinute(8, "g3", 1, 1, 1)], "g1-mean")[1] is None
    # with a tolerance: 65 is within 16% of 76.7 (minute 3) but not within 15%; "g1-final" 72 less 10%
    # is 64.8: minute 3 (65)
    assert recovery(series, "g1-mean", 16.0)[1] == 3 and recovery(series, "g1-mean", 15.0)[1] == 4
    assert recovery(series, "g1-final", 10.0) == (pytest.approx(72.0), 3)


def test_xsr_tolerance_recorded_and_old_runs_keep_the_exact_level():
    from ssdpts.pts.runspec import RunSpec

    spec = RunSpec(tests=("xsr",))
    assert spec.xsr_recovery_tolerance_pct == 2.0
    assert RunSpec.from_dict(spec.to_dict()).xsr_recovery_tolerance_pct == 2.0
    old = spec.to_dict()
    del old["xsr_recovery_tolerance_pct"]  # a manifest written before the option: judged as it was
    assert RunSpec.from_dict(old).xsr_recovery_tolerance_pct == 0.0
    assert "xsr_recovery_tolerance_pct" not in RunSpec(tests=("iops",)).to_dict()


# ---- CBW and DIRTH -------------------------------------------------------------------------------

def test_cbw_access_pattern_is_the_digests():
    w = cbw.workload()
    assert sum(p for _, p in w.bssplit) == 100
    assert w.bssplit == ((512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1), (4096, 67),
                         (8192, 10), (16384, 7), (32768, 3), (65536, 3))
    assert w.zones == ((50, 5), (30, 15), (20, 80)) and w.read_pct == 40 and w.block_size_bytes == 64 * KiB
    assert (w.label, w.key) == ("RND CBW 40/60", "rand-cbw-40")
    assert cbw.split_for(4096) == ((4096, 77), (8192, 10), (16384, 7), (32768, 3), (65536, 3))
    assert Workload.from_dict(w.to_dict()) == w


def test_cbw_flow_and_sweep_round_tc_outer_qd_inner_high_to_low():
    p = parts_of(RunSpec(tests=("cbw",)))
    pre, sweep, points = p["cbw-precondition"], p["cbw-demand-intensity"], p["cbw-operating-points"]
    assert pre.purge and pre.wipc is not None and pre.wipc.workload.label == "SEQ 128KiB 0/100"
    assert not sweep.purge and sweep.wipc is None and not points.purge
    # preconditioning: 30 PTS minutes at TC32/QD32 100% W; 30 sections x 32 clones would be 960, so the
    # tracked first minute is one step and the other 29 another
    steps = pre.round_steps(1)
    assert [(s.key, s.duration_s) for s in steps] == [("m01", 60.0), ("m02-30", 29 * 60.0)]
    assert {(s.workload.read_pct, s.workload.threads, s.workload.iodepth) for s in steps} == {(0, 32, 32)}
    assert [t.key for t in pre.tracking] == ["m01"]
    rnd = sweep.round_steps(2)
    assert (rnd[0].key, rnd[0].duration_s, rnd[0].workload.read_pct) == ("prewrite", 300.0, 0)
    cells = rnd[1:]
    assert [(s.workload.threads, s.workload.iodepth) for s in cells] == [(t, q) for t in TCS for q in QDS]
    assert {(s.workload.read_pct, s.duration_s) for s in cells} == {(40, 60.0)}
    assert [t.key for t in sweep.tracking] == ["tc32-qd32"]
    assert sum(s.workload.threads for s in rnd) == 515 <= MAX_CLONES_PER_ROUND
    # the job file: TC = numjobs, QD = iodepth, never swapped (AD's bug); rwmixread=40; bssplit; zones
    jobs = job_file(rnd)
    assert [(j["numjobs"], j["iodepth"]) for j in jobs[1:]] == [(str(t), str(q)) for t in TCS for q in QDS]
    assert {j["rwmixread"] for j in jobs[1:]} == {"40"} and "rwmixread" not in jobs[0]
    assert {j["bssplit"] for j in jobs} == {"512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"}
    assert {j["random_distribution"] for j in jobs} == {"zoned:50/5:30/15:20/80"}
    assert not any("bs" in j for j in jobs)
    # the operating points: three fixed rounds, planned from the sweep's table
    assert points.stop_rule == "fixed" and points.max_rounds == 3 and points.needs == "cbw-demand-intensity"
    assert [[(s.key, s.duration_s) for s in points.round_steps(r)] for r in (1, 2, 3)] == [
        [(f"{n}-prewrite", 3600.0), (n, 600.0)] for n in ("max", "mid", "min")]


def test_cbw_on_4kn_merges_small_blocks_and_says_so():
    p = parts_of(RunSpec(tests=("cbw",)), lbs=4096)
    assert {s.workload.bssplit for s in p["cbw-demand-intensity"].round_steps(1)} == {cbw.split_for(4096)}
    assert any("10% of IOs" in d for d in deviations_for(RunSpec(tests=("cbw",)), 4096))
    assert not any("CBW" in d for d in deviations_for(RunSpec(tests=("cbw",)), 512))


def test_dirth_takes_the_operators_pattern():
    p = parts_of(RunSpec(tests=("dirth",)))
    assert {s.workload.label for s in p["dirth-demand-intensity"].round_steps(1)[1:]} == {"RND 8KiB 65/35"}
    p = parts_of(RunSpec(tests=("dirth",), dirth_block_size=16384, dirth_read_pct=30))
    cells = p["dirth-demand-intensity"].round_steps(1)[1:]
    assert {s.workload.label for s in cells} == {"RND 16KiB 30/70"}
    assert {s.workload.label for s in p["dirth-precondition"].round_steps(1)} == {"RND 16KiB 0/100"}
    with pytest.raises(UserError, match="4096-byte"):
        build_parts(RunSpec(tests=("dirth",), dirth_block_size=512), CAP, 4096)


def rows(values: dict[tuple[int, int], tuple[float, float]]) -> list[DemandRow]:
    return [DemandRow(tc, qd, i, lat, lat * 3, 10.0) for (tc, qd), (i, lat) in values.items()]


def test_operating_points_follow_the_rules_and_their_options():
    r = rows({(1, 1): (10_000, 100), (2, 4): (60_000, 1_000), (4, 8): (100_000, 4_000), (8, 8): (120_000, 6_000),
              (32, 32): (130_000, 90_000), (1, 8): (55_000, 900)})
    chosen, note = choose_points(r, 5_000, "iops-midpoint")
    assert chosen == {"Max": (4, 8), "Mid": (1, 8), "Min": (1, 1)} and not note  # (100k+10k)/2 = 55k
    assert choose_points(r, 7_000, "iops-midpoint")[0]["Max"] == (8, 8)  # the ceiling is an option
    toio = choose_points(r, 5_000, "toio-midpoint")[0]  # sqrt(32 * 1) = 5.7: TOIO 8 is nearest
    assert toio["Mid"] == (2, 4)
    slow = rows({(1, 1): (1_000, 9_000), (2, 2): (1_500, 8_000)})
    chosen, note = choose_points(slow, 5_000, "iops-midpoint")
    assert chosen["Max"] == (2, 2) and "below 5 ms" in note


def test_points_part_is_planned_from_the_sweep_table():
    p = parts_of(RunSpec(tests=("cbw",)))
    table = demand.DemandTable(None, "40/60", (), 5000.0, "iops-midpoint", (("Max", 8, 4), ("Mid", 2, 2), ("Min", 1, 1)))
    bound = p["cbw-operating-points"].bound(table)
    assert [(s.workload.threads, s.workload.iodepth) for r in (1, 2, 3) for s in bound.round_steps(r)] == [
        (32, 32), (8, 4), (32, 32), (2, 2), (32, 32), (1, 1)]
    assert bound.bind is None and p["cbw-operating-points"].bound(None) is p["cbw-operating-points"]


# ---- options, disclosure, format ------------------------------------------------------------------

def test_options_are_recorded_only_for_the_tests_that_run():
    basic = RunSpec(tests=("iops",)).to_dict()
    assert not {"hir_bursts", "xsr_minutes", "op_ceiling_ms", "dirth_block_size", "wsat_pattern",
                "ar_segments"} & set(basic)
    d = RunSpec(tests=("hir", "cbw"), op_ceiling_ms=2.5).to_dict()
    assert d["hir_bursts"] == 360 and d["op_ceiling_ms"] == 2.5 and "xsr_minutes" not in d
    assert RunSpec.from_dict(RunSpec(tests=("xsr",), xsr_minutes=(10, 5, 10)).to_dict()).xsr_minutes == (10, 5, 10)


def test_time_compression_and_reduced_counts_are_disclosed():
    devs = RunSpec(tests=("hir", "xsr"), step_seconds=6, hir_bursts=10, xsr_minutes=(4, 4, 4)).deviations()
    assert any(d.startswith("time-compressed") and "scaled by 0.1" in d and "0.5 s" in d for d in devs)
    assert any("HIR: 10 bursts" in d for d in devs) and any("4/4/4 minutes" in d for d in devs)
    assert RunSpec(tests=("hir", "xsr", "cbw", "dirth")).deviations() == []


@pytest.mark.parametrize("kw, word", [
    ({"hir_bursts": 0}, "--hir-bursts"), ({"xsr_minutes": (1, 2)}, "--xsr-minutes"), ({"op_ceiling_ms": 0}, "--op-ceiling-ms"),
    ({"op_mid": "median"}, "--op-mid"), ({"dirth_block_size": 1000}, "--dirth-block-size"),
    ({"dirth_read_pct": 101}, "--dirth-read-pct"), ({"wsat_pattern": "x"}, "--wsat-pattern"),
    ({"xsr_recovery": "x"}, "--xsr-recovery"), ({"xsr_recovery_tolerance_pct": 60}, "--xsr-recovery-tolerance"),
    ({"xsr_recovery_tolerance_pct": -1}, "--xsr-recovery-tolerance")])
def test_bad_extended_options_are_refused(kw, word):
    with pytest.raises(UserError, match=word):
        RunSpec(tests=("hir",), **kw)


def test_wsat_pattern_option():
    for name, label in (("rnd8k-65", "RND 8KiB 65/35"), ("seq128k-90", "SEQ 128KiB 90/10"),
                        ("seq0.5k-50", "SEQ 0.5KiB 50/50"), ("cbw", "RND CBW 40/60")):
        (p,) = build_parts(RunSpec(tests=("wsat",), wsat_pattern=name), CAP)
        assert p.round_steps(1)[0].workload.label == label
        assert p.tracking[0].key == p.round_steps(1)[0].key


# ---- client segmentation ---------------------------------------------------------------------------

def test_segments_fit_fios_zoned_abs_and_are_random_and_apart():
    from ssdpts.engine.jobfile import zoned_abs
    from ssdpts.pts import segments

    assert [segments.segment_count(n) for n in (2048, 100, 99, 30, 7, 1)] == [100, 100, 50, 25, 5, 1]
    ar = 48 * GiB
    segs = segments.place(ar, 16 * GiB, 2048, seed=7)
    assert len(segs) == 100 and {s for _, s in segs} == {163 * MiB}
    assert all(o % MiB == 0 for o, _ in segs) and segs[-1][0] + segs[-1][1] <= ar
    assert all(b[0] - (a[0] + a[1]) >= MiB for a, b in zip(segs, segs[1:]))  # none adjacent
    assert segments.place(ar, 16 * GiB, 2048, seed=7) == segs != segments.place(ar, 16 * GiB, 2048, seed=8)
    z = zoned_abs(segs)
    zones = z.removeprefix("zoned_abs:").split(":")
    assert len(zones) + 1 <= 256 and sum(int(x.split("/")[0]) for x in zones) == 100
    pos = 0
    for x in zones:  # the zones tile the range from its start: 1% segments, 0% gaps
        pct, size = (int(v) for v in x.split("/"))
        assert (pct, size) in ((1, 163 * MiB),) or pct == 0
        pos += size
    assert pos == segs[-1][0] + segs[-1][1]
    with pytest.raises(UserError, match="--ar-amount"):
        build_parts(RunSpec(tests=("iops",), profile="client", ar_segments=2048, ar_amount_bytes=64 * GiB), CAP)


def test_segments_apply_to_random_test_steps_only():
    from ssdpts.pts.plan import segments_of

    spec = RunSpec(tests=("iops", "tp"), profile="client", ar_segments=2048, ar_amount_bytes=8 * GiB)
    p = parts_of(spec)
    area = Area(0, 48 * GiB, segments_of(spec, 48 * GiB))
    render = lambda steps: sections(render_job_file(Batch(steps, "/dev/x", area, 1, "libaio"))[0])[1:]  # noqa: E731
    assert all(j["random_distribution"].startswith("zoned_abs:") for j in render(p["iops"].round_steps(1)))
    assert not any("random_distribution" in j for j in render([p["iops"].wipc]))
    assert not any("random_distribution" in j for j in render(p["tp-1024KiB"].round_steps(1)))
    assert any("100 random, non-adjacent segments instead of 2048" in d for d in deviations_for(spec, 512))
