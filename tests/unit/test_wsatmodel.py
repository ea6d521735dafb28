"""WSAT's drive model (results/wsatmodel.py, docs/methodology.md#drive-model) on a recorded run of the
reference SSD (tests/fixtures/wsatmodel: 128 MiB, 18% over-provisioning, 32 pages per block, steps
of 2 s; its step lines with the histograms and block-layer fields taken out, its drive.json the
figures `refssd params` gave) and fio's per-interval log parser on a recorded log."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ssdpts.engine.fioparse import interval_ios
from ssdpts.results import wsatmodel
from ssdpts.results.steprecord import StepRecord

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "wsatmodel"
DRIVE = json.loads((HERE / "drive.json").read_text())


def records() -> list[StepRecord]:
    return [StepRecord.from_dict(json.loads(ln)) for ln in (HERE / "steps.jsonl").read_text().splitlines()]


def model(recs=None, **kw) -> dict:
    args = dict(window=tuple(DRIVE["final_window_minutes"]), steady_iops=DRIVE["final_window_iops"],
                pages_per_block=DRIVE["pages_per_block"])
    args.update(kw)
    return wsatmodel.model(records() if recs is None else recs, DRIVE["capacity_bytes"], **args).to_dict()


def test_the_interval_log_is_read_per_clone_on_one_grid():
    text = (HERE / "round-001.s0003_iops.log").read_text()
    rows = [ln.split(",") for ln in text.splitlines()]
    starts = [i for i in range(1, len(rows)) if float(rows[i][0]) <= float(rows[i - 1][0])]
    assert len(starts) == 3  # four clones (TC 4), one after another in the file
    step = next(r for r in records() if r.index == 3)
    ios, covered = interval_ios(text, 20, step.fio.start_time * 1000)
    # what the log counts is the sample's IOs less the part of an interval at its end, give or take its first row's span
    assert 0.98 * step.fio.write.ios <= covered <= 1.02 * step.fio.write.ios
    assert 95 <= len(ios) <= 101 and abs(sum(ios) - covered) <= 0.02 * covered  # the grid ends with the first clone's log


def log(*clones: list[tuple[int, int]]) -> str:
    return "\n".join(f"{t}, {v}, 1, 0, 0" for rows in clones for t, v in rows)


def test_a_gap_in_a_clones_rows_is_read_by_what_the_others_did_in_it():
    """fio's helper writes every clone's row at each tick of the period, the IOs since its row before
    as a rate over the time since then. Clone a has no row at 60 ms where clone b has one: a completed
    nothing in that period, and its row at 80 ms is the 20 ms before it (1000/s x 20 ms = 20 IOs, not
    40). At 100 to 140 ms neither has a row: the helper was late, and each row at 140 ms is the rate
    over all 40 ms."""
    a = [(20, 1000), (40, 1000), (80, 1000), (100, 1000), (140, 1000)]
    b = [(20, 1000), (40, 1000), (60, 1000), (80, 1000), (100, 1000), (140, 1000)]
    ios, covered = interval_ios(log(a, b), 20, 0.0)
    assert covered == 20 + 20 + 20 + 20 + 40 + 20 + 20 + 20 + 20 + 20 + 40
    assert ios[:7] == [40, 40, 20, 40, 40, 40, 40]  # a's third period is empty; 120 to 140 ms: half of the late rows
    # one clone alone cannot tell a late helper from an empty period: its row is its last period's
    assert interval_ios(log(a), 20, 0.0)[1] == 20 + 20 + 20 + 20 + 20
    # the helper visited at 60 ms (d logged) and next, late, at 90 ms: c's row there is the 30 ms since
    # that visit, not one period; and e's first row at 45 ms is the 25 ms since the helper's visit at 20
    c, d = [(20, 1000), (40, 1000), (90, 1000)], [(20, 1000), (40, 1000), (60, 1000), (90, 1000)]
    assert interval_ios(log(c, d), 20, 0.0)[1] == (20 + 20 + 30) + (20 + 20 + 20 + 30)
    e, f = [(45, 1000)], [(20, 1000), (45, 1000)]
    assert interval_ios(log(e, f), 20, 0.0)[1] == 25 + (20 + 25)


def test_first_rows_of_clones_started_apart_are_read_at_the_rate_after_them():
    """A loaded host's first step (tests/fixtures/interval-log-loaded: the gate heard the four clones
    pass their barriers 61 ms apart, and fio's helper first logged them 124 ms after the start).
    Each first row read over the whole time from the step's start counted 25% more than the drive
    had done by 120 ms: a cliff from a level that was never there. Read at no more than the rate of
    the rows after them, within 5% of the drive's own count there, and within 2% by 600 ms."""
    d = json.loads((HERE.parent / "interval-log-loaded" / "step.json").read_text())
    text = (HERE.parent / "interval-log-loaded" / "round-001.s0001_iops.log").read_text()
    truth = d["truth_cumulative_ios"]

    def err(spread: float, j: int) -> float:
        ios, _ = interval_ios(text, d["period_ms"], d["start_unix_ms"], spread)
        return sum(ios[:j + 1]) / truth[j] - 1

    assert err(0.0, 5) > 0.20 and err(0.0, 29) > 0.05  # the clones' start taken as the step's
    assert abs(err(d["start_spread_ms"], 5)) < 0.05 and abs(err(d["start_spread_ms"], 29)) < 0.02
    # clones that started within half a period of each other: their first rows are read as before
    assert err(9.0, 5) == err(0.0, 5)


def test_the_row_fio_writes_as_a_clone_exits_is_its_last_period():
    """A later step of a loaded run (tests/fixtures/interval-log-loaded/exit-step*): every clone's
    last row comes 40-80 ms after its row before, after the step's end, holding the drained queue
    (31 IOs in 20 ms). Read over that whole gap the log counted 4.4% more than the drive did over the
    step, which no reading can (fio logs no part of an interval at a step's end); read as its last
    period, within 0.5%."""
    d = json.loads((HERE.parent / "interval-log-loaded" / "exit-step.json").read_text())
    text = (HERE.parent / "interval-log-loaded" / "exit-step_iops.log").read_text()
    _, gap = interval_ios(text, d["period_ms"], d["start_unix_ms"], d["start_spread_ms"])
    _, last = interval_ios(text, d["period_ms"], d["start_unix_ms"], d["start_spread_ms"], d["end_unix_ms"])
    assert gap > 1.03 * d["truth_ios"]
    assert abs(last / d["truth_ios"] - 1) < 0.005 and last <= d["fio_ios"] * 1.005


def test_a_cache_is_placed_where_the_drive_filled_it():
    """A recorded reference-SSD run with a dynamic SLC cache (tests/fixtures/wsatmodel-slc: 128 MiB,
    OP 30.8%, 32 pages per block, a cache of 32 MiB of host data at 800 us programs, steps of 2 s,
    each step's intervals as the parser reads its log; drive.json the figures `refssd params` gave
    and the truth log's first folding, first collection and costly collection). The cliff falls inside the first 2-s
    sample, which wrote 0.39 x capacity."""
    d = json.loads((HERE.parent / "wsatmodel-slc" / "drive.json").read_text())
    recs = [StepRecord.from_dict(json.loads(ln))
            for ln in (HERE.parent / "wsatmodel-slc" / "steps.jsonl").read_text().splitlines()]
    m = wsatmodel.model(recs, d["capacity_bytes"], window=tuple(d["final_window_minutes"]),
                        steady_iops=d["final_window_iops"], pages_per_block=d["pages_per_block"]).to_dict()
    assert m["slc_cache_bytes"] == pytest.approx(d["slc_cliff_bytes"], rel=0.03)
    # the dynamic cache's folding starts at the truth's first folded page: a second cliff
    assert m["cliffs"][1]["capacity_multiple"] == pytest.approx(d["first_fold_capacity_multiple"], abs=0.02)
    # GC onset where collection starts to cost die time (the truth log's first 1% of capacity with
    # copies of 5% of host pages: tests/refssd/proofs.Drive.gc_cost_onset), within 2% of capacity; after
    # the truth's first collection, whose victims the folding left all but empty and cost nothing
    assert m["gc_onset_capacity_multiple"] == pytest.approx(d["gc_cost_onset_capacity_multiple"], abs=0.02)
    assert m["gc_onset_capacity_multiple"] > d["first_gc_capacity_multiple"] + 0.05
    assert m["effective_spare"] is None and "cache written at a lower density" in m["effective_spare_reason"]
    assert m["consistent"]
    # the interval log of the sample the cliff falls in, read again: 0.80 s at 10,000 IOPS before it (the truth: 8,000 IOs)
    step = recs[0]
    ios, _ = interval_ios((HERE.parent / "wsatmodel-slc" / "round-001.s0001_iops.log").read_text(), 20,
                          step.fio.start_time * 1000)
    assert sum(ios[:40]) == pytest.approx(d["slc_cliff_host_pages"], rel=0.02)
    assert list(ios) == list(step.intervals.ios)


def test_the_greedy_model_is_the_references():
    a = DRIVE["gc_start_host_pages"] / DRIVE["logical_pages"]
    # refssd params at this geometry (its effective spare differs from the onset's by one page per die)
    assert wsatmodel.greedy_wa(1.171875, 32) == pytest.approx(DRIVE["reference_wa"], rel=1e-6)
    assert wsatmodel.greedy_wa(1.171875) == pytest.approx(3.5940259197962705, rel=1e-9)
    assert wsatmodel.greedy_wa(a, 32) < wsatmodel.greedy_wa(a)  # finite blocks: lower than the large-block limit
    assert wsatmodel.greedy_wa(1.0) == float("inf")


def test_the_recorded_run_gives_the_drives_figures():
    m = model()
    onset = DRIVE["gc_start_host_pages"] / DRIVE["logical_pages"]
    assert m["gc_onset_capacity_multiple"] == pytest.approx(onset, abs=0.005)
    assert m["effective_spare"] == pytest.approx(onset - 1, rel=0.05)
    assert m["steady_wa_source"].startswith("the drive's media")
    assert m["steady_wa_greedy"] == pytest.approx(DRIVE["reference_wa"], rel=0.05)
    assert m["slc_cache_bytes"] is None and m["slc_cache_bytes_reason"].startswith("no cliff")
    assert m["consistent"] and len(m["checks"]) == 2
    assert m["resolution"]["source"].startswith("fio's per-interval")
    for f in wsatmodel.FIGURES:  # every figure: a value with its uncertainty and source, or a reason
        assert (m[f] is not None and m[f"{f}_source"]) or m[f"{f}_reason"], f


def test_without_media_counters_the_greedy_model_gives_the_wa():
    recs = [dataclasses.replace(r, telemetry=None, doc=None) for r in records()]
    m = model(recs)
    assert m["steady_wa"] == m["steady_wa_greedy"] and "greedy" in m["steady_wa_source"]
    assert m["checks"][0]["name"] == "steady level against the bytes fio counted"
    large = model(recs, pages_per_block=None)
    assert large["steady_wa"] > m["steady_wa"] and "large-block" in large["steady_wa_source"]


def test_a_run_stopped_before_gc_says_not_reached():
    short = [r for r in records() if r.index <= 2]  # 2 samples of 2 s: about 0.97 x capacity, before GC
    m = model(short, window=(1, 2), steady_iops=None)
    assert m["gc_onset_capacity_multiple"] is None and m["effective_spare"] is None
    assert m["gc_onset_capacity_multiple_reason"].startswith("GC onset not reached in this run (stopped at 0.")


def test_a_run_that_ends_on_a_low_interval_has_no_onset():
    """A fall in the last 5% of capacity written is not judged: too little curve after it to tell
    whether it stays (a sample's last interval read low, in a run cut before GC)."""
    short = [r for r in records() if r.index <= 2]
    last = short[-1]
    ios = list(last.intervals.ios)
    low = ios[:-3] + [round(0.8 * v) for v in ios[-3:]]
    short[-1] = dataclasses.replace(last, intervals=dataclasses.replace(last.intervals, ios=tuple(low)), doc=None)
    m = model(short, window=(1, 2), steady_iops=None)
    assert m["gc_onset_capacity_multiple"] is None and m["gc_onset_capacity_multiple_reason"].startswith("GC onset not reached")


def test_iops_that_do_not_add_up_to_the_bytes_are_flagged():
    m = model(steady_iops=DRIVE["final_window_iops"] * 0.97)
    assert not m["consistent"] and not m["checks"][0]["ok"]


def test_another_pattern_is_not_modelled():
    m = model(pattern="seq128k-90")
    assert all(m[f] is None and "RND 4KiB" in m[f"{f}_reason"] for f in wsatmodel.FIGURES)


def test_a_flat_curve_has_no_onset():
    """A device that never collects (a loop device over a file): the same samples at FOB's level
    throughout."""
    first = records()[0]
    flat = [dataclasses.replace(first, index=i, round=i, doc=None) for i in range(1, 8)]
    m = model(flat, window=(3, 4, 5, 6, 7), steady_iops=first.fio.iops)
    assert m["gc_onset_capacity_multiple"] is None and m["cliffs"] == []
    assert m["gc_onset_capacity_multiple_reason"].startswith("no GC onset seen over 3.")


def test_the_site_filters_runs_by_what_the_model_found():
    from types import SimpleNamespace

    from ssdpts.library.site.data import drive_model_label
    from ssdpts.results.drivemodel import DriveModel

    def run(doc):
        part = SimpleNamespace(model=None if doc is None else DriveModel(doc))
        return SimpleNamespace(summary=SimpleNamespace(parts={"wsat": part}))

    assert drive_model_label(run(model())) == "GC onset"
    assert drive_model_label(run({**model(), "cliffs": [{"capacity_multiple": 0.2, "bytes": 1, "level_before_iops": 2,
                                                          "level_after_iops": 1}]})) == "SLC cache"
    assert drive_model_label(run({**model(), "gc_onset_capacity_multiple": None})) == "no GC onset"
    assert drive_model_label(run(None)) is None
