"""HIR on the reference SSD (make test-full): in write steady state the drive has no free blocks to
spare, so every host write waits for garbage collection; when the host leaves it idle, its
background GC collects victims and the writes after the idle run at the fresh-out-of-box rate
until those blocks are used. The longer the idle, the more blocks the simulator collects (up to
its target), and the faster the bursts that follow. The test checks ssdpts's burst and baseline
IOPS against the simulator's own host-write rate over the very same bursts, and that the burst
IOPS ssdpts reports rank the wait states as the blocks the simulator's background GC collected
in their idle periods do.

The drive is 64 MiB so that preconditioning reaches steady state in a few 30-step rounds; idle GC
starts after 50 ms without a command, so that a compressed wait state 1 (5 s of idle at 1-s PTS
minutes: 83 ms) leaves it 33 ms; TC 1 x QD 16 keeps the drive's 8 dies busy with a drain of
~2 ms at the end of an 83-ms burst. Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run, steps_of
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32, "bg_gc_idle_ms": 50}
WAIT_STATES = (1, 2, 3, 5, 10)
BURSTS = 8


def simulator_iops(done: np.ndarray, t0: float, t1: float) -> float:
    return float(np.searchsorted(done, t1) - np.searchsorted(done, t0)) / (t1 - t0)


def test_hir_recovery_grows_with_idle_as_the_simulators_background_gc(tmp_path_factory):
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), io_log=True, interval_ms=10, **DRIVE) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp("hir-runs"), "hir", "--step-seconds", "1",
                         "--max-rounds", "12", "--threads", "1", "--iodepth", "16", "--hir-bursts", str(BURSTS),
                         timeout=3600)
        steps = steps_of(run, "hir")
        truth = ssd.wait_truth(max(s["end_time"] for s in steps) + 0.1)
        done = np.array(refssd_host.completions(ssd.io_log_path))
    summary = json.loads((run / "summary.json").read_text())
    pre = summary["parts"]["hir-precondition"]
    assert pre["steady_state"]["reached"], pre["steady_state"]
    steady = pre["table"]["rows"][0]["value"]
    segs = {s["cell"]: s for s in summary["parts"]["hir-wait-states"]["table"]["segments"]}
    waits = sorted((s for s in steps if s["part"] == "wait-states" and s["phase"] == "round"), key=lambda s: s["index"])
    assert len(waits) == 2 * BURSTS * len(WAIT_STATES)

    rows = []
    for n, ws in enumerate(WAIT_STATES):
        bursts = [s for s in waits if s["key"] == f"ws{ws}"]
        base = [s for s in waits if s["key"] == f"bl{ws}"]
        # the blocks background GC collected in each idle period after a burst (the last burst's
        # idle is followed by the baseline), and the free blocks the next burst found
        idles = [(a["measurement"]["end_time"], b["measurement"]["start_time"]) for a, b in zip(bursts, bursts[1:])]
        bg = [truth.sum("bg_gc_blocks", t0, t1 + 0.02) for t0, t1 in idles]
        free = [truth.at(t1 - 0.005)["free_blocks"] for _t0, t1 in idles]
        sim_b = [simulator_iops(done, s["measurement"]["start_time"], s["measurement"]["end_time"]) for s in bursts]
        sim_l = [simulator_iops(done, s["measurement"]["start_time"], s["measurement"]["end_time"]) for s in base]
        rows.append({
            "wait_state": ws, "idle_s": segs[f"ws{ws}"]["idle_s"] / 60,
            "measured_idle_s": statistics.fmean(t1 - t0 for t0, t1 in idles),
            "simulator_bg_gc_blocks_per_idle": statistics.fmean(bg), "simulator_free_blocks_after_idle": statistics.fmean(free),
            # bursts after an idle (the first follows the previous baseline's continuous writes)
            "ssdpts_burst_iops": statistics.fmean(s["measurement"]["iops"] for s in bursts[1:]),
            "simulator_burst_iops": statistics.fmean(sim_b[1:]),
            "ssdpts_baseline_iops": segs[f"bl{ws}"]["iops"], "simulator_baseline_iops": statistics.fmean(sim_l),
            "ssdpts_baseline_last_iops": segs[f"bl{ws}"]["last_iops"], "simulator_baseline_last_iops": sim_l[-1],
            "ssdpts_segment_iops": segs[f"ws{ws}"]["iops"],
        })
        assert segs[f"ws{ws}"]["iops"] == pytest.approx(statistics.fmean(s["measurement"]["iops"] for s in bursts))
    record("hir", precondition_steady_iops=steady, window_rounds=pre["steady_state"]["window_rounds"], wait_states=rows)

    for r in rows:
        # ssdpts measures what the drive did: bursts and baselines within 5% of the simulator's rate
        assert r["ssdpts_burst_iops"] == pytest.approx(r["simulator_burst_iops"], rel=0.05), r
        assert r["ssdpts_baseline_iops"] == pytest.approx(r["simulator_baseline_iops"], rel=0.05), r
        # the drive recovered in every wait state (idle GC ran), so the bursts beat the steady state
        assert r["simulator_bg_gc_blocks_per_idle"] > 0, r
        assert r["ssdpts_burst_iops"] > 1.1 * r["ssdpts_baseline_iops"], r
        # and the return to baseline falls back to the preconditioning's steady level once the blocks
        # the idle GC made free are used (its first samples spend them: 8 compressed samples are
        # 0.67 s, where the PTS's 360 are 30 min): its last sample
        assert r["ssdpts_baseline_last_iops"] == pytest.approx(r["simulator_baseline_last_iops"], rel=0.05), r
        assert r["ssdpts_baseline_last_iops"] == pytest.approx(steady, rel=0.15), (r, steady)
    # the model's own claim: a longer idle collects at least as much (up to its target)
    bg = [r["simulator_bg_gc_blocks_per_idle"] for r in rows]
    assert all(b >= 0.95 * a for a, b in zip(bg, bg[1:])), bg
    # ssdpts's recovery follows it: where the simulator collected clearly more in one wait state's
    # idles than in another's, ssdpts's bursts are faster there; where about the same, about as fast
    for a in rows:
        for b in rows:
            ga, gb = a["simulator_bg_gc_blocks_per_idle"], b["simulator_bg_gc_blocks_per_idle"]
            if gb > 1.25 * ga:
                assert b["ssdpts_burst_iops"] > a["ssdpts_burst_iops"], (a, b)
            elif abs(gb / ga - 1) < 0.05:
                assert b["ssdpts_burst_iops"] == pytest.approx(a["ssdpts_burst_iops"], rel=0.05), (a, b)
    assert rows[-1]["ssdpts_burst_iops"] > 1.1 * rows[0]["ssdpts_burst_iops"], "no growth from wait state 1 to 10"
