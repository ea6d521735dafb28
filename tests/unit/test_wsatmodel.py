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
    # every row's rate x the period, a clone's first row's over its span from the step's start
    t0, expect, prev = step.fio.start_time * 1000, 0.0, None
    for r in rows:
        t, v = float(r[0]), float(r[1])
        expect += v * ((t - t0) if prev is None or t <= prev else 20) / 1000
        prev = t
    assert covered == round(expect)
    # what the log counts is the sample's IOs less the part of an interval at its end, give or take its first row's span
    assert 0.97 * step.fio.write.ios <= covered <= 1.02 * step.fio.write.ios
    assert 95 <= len(ios) <= 101 and abs(sum(ios) - covered) <= 0.02 * covered  # the grid ends with the first clone's log


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
