"""The one set of repeated-run rules (src/ssdpts/stats.py), pinned rule by rule, and held to be the
rules quick, replay and compare --repeats apply."""

from __future__ import annotations

import math

import pytest

from ssdpts import stats
from ssdpts.errors import UserError


def test_median_is_a_measured_run_never_an_average():
    st = stats.repeat_stats([10.0, 30.0, 20.0])
    assert (st.median, st.median_index) == (20.0, 2)
    even = stats.repeat_stats([4.0, 1.0, 3.0, 2.0])  # no middle run: the lower-middle one
    assert (even.median, even.median_index) == (2.0, 3)
    tie = stats.repeat_stats([5.0, 5.0, 5.0])
    assert tie.median_index == 1  # ties broken by position: the middle run


def test_rse_is_s_over_mean_root_n_with_sample_deviation():
    v = [100.0, 110.0, 90.0, 105.0, 95.0]
    st = stats.repeat_stats(v)
    mean = sum(v) / 5
    s = math.sqrt(sum((x - mean) ** 2 for x in v) / 4)
    assert st.stdev == pytest.approx(s) and st.rse == pytest.approx(s / (mean * math.sqrt(5)))


@pytest.mark.parametrize("values, planned, verdict", [
    ([100.0, 101.0, 99.0], 3, True),  # RSE 0.6%
    ([100.0, 150.0, 60.0], 3, False),  # RSE above 5%
    ([0.0, 0.0, 0.0], 3, False),  # no RSE (mean 0): no evidence, unreliable
    ([100.0, 101.0], 3, None),  # fewer than planned: not judged
    ([100.0, 101.0, 99.0], 5, None),  # the RSE rule asked for two more: not judged yet
    ([100.0, 101.0], 1, None),  # never judged below three runs
])
def test_the_verdict(values, planned, verdict):
    assert stats.reliable(values, planned) is verdict


def test_the_rse_limit_is_inclusive():
    # two values symmetric around 100 with N = 3 chosen so the RSE is exactly at the limit is not
    # reachable in floats; check on each side of it instead
    lo = [100 - 8.6, 100.0, 100 + 8.6]  # s = 8.6, RSE = 8.6 / (100 * sqrt 3) = 4.97%
    hi = [100 - 8.7, 100.0, 100 + 8.7]  # 5.02%
    assert stats.repeat_stats(lo).rse < stats.RSE_LIMIT < stats.repeat_stats(hi).rse
    assert stats.reliable(lo) is True and stats.reliable(hi) is False


def test_runs_are_added_two_at_a_time_up_to_seven():
    noisy = [100.0, 150.0, 60.0]
    assert stats.runs_needed(noisy[:2], 3) == 3
    assert stats.runs_needed(noisy, 3) == 5
    assert stats.runs_needed(noisy + [120.0, 80.0], 3) == 7
    assert stats.runs_needed(noisy + [120.0, 80.0, 130.0, 70.0], 3) == 7  # at 7: stop, unreliable
    assert stats.runs_needed([100.0, 101.0, 99.0], 3) == 3
    assert stats.runs_needed([0.0, 0.0, 0.0], 3) == 3  # no RSE: more runs would not give one


def test_summary_of_a_figure():
    assert stats.summary([], 3) == {"values": [], "n": 0, "median": None, "median_run": None, "rse": None,
                                    "reliable": None}
    one = stats.summary([42.0], 3)
    assert (one["median"], one["median_run"], one["rse"], one["reliable"]) == (42.0, 1, None, None)
    three = stats.summary([3.0, 1.0, 2.0], 3)
    assert (three["median"], three["median_run"], three["n"]) == (2.0, 3, 3)


@pytest.mark.parametrize("runs", [1, 2, 4, 101])
def test_runs_must_be_odd_and_bounded(runs):
    with pytest.raises(UserError, match="odd number of runs"):
        stats.check_runs(runs)


@pytest.mark.parametrize("values", [[100.0, 101.0, 99.0], [100.0, 150.0, 60.0], [0.0, 0.0, 0.0]])
def test_quick_replay_and_repeats_give_one_verdict(values):
    """The drift this module ended: a figure without an RSE was UNRELIABLE in quick and reliable in
    replay. The same values now get the same verdict from all three."""
    from ssdpts.compare import _stats
    from ssdpts.pts.workload import Workload
    from ssdpts.workloads import quick, replay

    fig = quick.Figure("k", "K", "g", Workload("rand", 100, 4096, 1, 1), "kIOPS")
    q = quick.figure_result(fig, values, [], [])["reliable"]
    r = replay.figures([{"completion_s": v, "iops": v, "mb_per_s": v} for v in values], 3)
    rep = _stats(values)
    assert q is stats.reliable(values)
    assert [f["reliable"] for f in r] == [q] * 3
    assert rep.flagged is (not q)
