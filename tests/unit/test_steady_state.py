"""Steady state, PTS 2.0.2 §2.1.24 (docs/pts-reference.md#steady-state): range <= 20% and best-fit-line excursion
<= 10% of the window average, both inclusive, over the last 5 rounds."""

from __future__ import annotations

import pytest

from ssdpts.pts.steady_state import (
    EXCURSION_FRACTION,
    RANGE_FRACTION,
    WINDOW_ROUNDS,
    all_reached,
    evaluate_window,
    latest_window,
)

# The six windows TKperf reported as steady in seeds 001 and 003: (name, rounds, values, printed average).
# TKperf prints integer averages truncated (13043.8 -> "13043"), float averages in full.
SEED_WINDOWS = [
    ("001 IOPS", [1, 2, 3, 4, 5], [14230, 13458, 12111, 12102, 13318], 13043),
    ("001 TP", [0, 1, 2, 3, 4], [106436, 106163, 106231, 106083, 106280], 106238),
    ("001 LAT", [3, 4, 5, 6, 7], [59.764342, 53.823514, 53.879819, 54.460851, 55.594414], 55.504588),
    ("003 IOPS", [1, 2, 3, 4, 5], [16944, 19985, 20573, 20474, 18205], 19236),
    ("003 TP", [0, 1, 2, 3, 4], [577482, 553416, 553971, 555156, 572099], 562424),
    ("003 LAT", [3, 4, 5, 6, 7], [40.096325, 35.424761, 32.893141, 35.279585, 39.750545], 36.6888714),
]


def test_pts_constants():
    assert (WINDOW_ROUNDS, RANGE_FRACTION, EXCURSION_FRACTION) == (5, 0.20, 0.10)


@pytest.mark.parametrize("name,rounds,values,printed_avg", SEED_WINDOWS, ids=[w[0] for w in SEED_WINDOWS])
def test_seed_windows_pass(name, rounds, values, printed_avg):
    v = evaluate_window(name, rounds, values)
    assert v.range_ok and v.excursion_ok and v.reached
    assert v.rounds == tuple(rounds)
    assert v.values == tuple(float(x) for x in values)
    assert v.range == pytest.approx(max(values) - min(values))
    assert v.range_limit == pytest.approx(0.2 * v.average)
    assert v.excursion_limit == pytest.approx(0.1 * v.average)
    assert v.excursion == pytest.approx(abs(v.slope) * (rounds[-1] - rounds[0]))
    if isinstance(printed_avg, int):
        assert int(v.average) == printed_avg  # TKperf truncates
    else:
        assert v.average == pytest.approx(printed_avg, abs=1e-6)


def test_discriminating_vector_fails_on_excursion_only():
    v = evaluate_window("x", [1, 2, 3, 4, 5], [100, 104, 108, 112, 116])
    assert v.average == pytest.approx(108)
    assert v.range == pytest.approx(16)
    assert v.range / v.average == pytest.approx(0.148, abs=5e-4)
    assert v.range_ok  # 14.8% <= 20%
    assert v.slope == pytest.approx(4.0)
    assert v.excursion == pytest.approx(16.0)  # 4 per round x 4 rounds = 14.8% of the average
    assert not v.excursion_ok
    assert not v.reached
    # ... while TKperf's looser "slope < 10% of the average" would have let it pass:
    assert abs(v.slope) <= 0.1 * v.average


def test_boundary_vector_range_exactly_20_percent_passes():
    v = evaluate_window("x", [1, 2, 3, 4, 5], [90, 110, 100, 100, 100])
    assert v.average == pytest.approx(100)
    assert v.range == pytest.approx(20)
    assert v.range_limit == pytest.approx(20)
    assert v.range_ok and v.excursion_ok and v.reached


def test_just_over_the_range_limit_fails():
    v = evaluate_window("x", [1, 2, 3, 4, 5], [90, 110.01, 100, 100, 100])
    assert v.range > v.range_limit
    assert not v.range_ok
    assert v.excursion_ok  # it is the range rule that fails
    assert not v.reached


def test_excursion_exactly_at_the_limit_passes():
    # y = x + 37 over rounds 1..5: average 40, slope 1, excursion 4 = 10% of 40.
    v = evaluate_window("x", [1, 2, 3, 4, 5], [38, 39, 40, 41, 42])
    assert v.excursion == pytest.approx(4.0)
    assert v.excursion_limit == pytest.approx(4.0)
    assert v.excursion_ok and v.range_ok and v.reached


def test_excursion_just_over_the_limit_fails():
    # Same slope, average 39.9: limit 3.99 < excursion 4.
    v = evaluate_window("x", [1, 2, 3, 4, 5], [37.9, 38.9, 39.9, 40.9, 41.9])
    assert v.excursion == pytest.approx(4.0)
    assert v.excursion_limit == pytest.approx(3.99)
    assert v.range_ok and not v.excursion_ok and not v.reached


def test_slope_and_intercept_by_hand():
    # x = 3..7 (mean 5), y = 10,12,11,15,12 (mean 12):
    # Sxy = (-2)(-2) + (-1)(0) + 0(-1) + 1(3) + 2(0) = 7, Sxx = 10 -> b = 0.7, a = 12 - 0.7*5 = 8.5.
    v = evaluate_window("x", [3, 4, 5, 6, 7], [10, 12, 11, 15, 12])
    assert v.slope == pytest.approx(0.7)
    assert v.intercept == pytest.approx(8.5)
    assert v.excursion == pytest.approx(2.8)
    assert v.average == pytest.approx(12.0)
    assert v.range == pytest.approx(5.0)
    assert not v.range_ok  # 5 > 2.4
    assert not v.excursion_ok  # 2.8 > 1.2


def test_falling_line_uses_the_absolute_slope():
    v = evaluate_window("x", [1, 2, 3, 4, 5], [116, 112, 108, 104, 100])
    assert v.slope == pytest.approx(-4.0)
    assert v.excursion == pytest.approx(16.0)
    assert not v.excursion_ok


def test_zero_average_is_not_steady():
    v = evaluate_window("x", [1, 2, 3, 4, 5], [0, 0, 0, 0, 0])
    assert not v.reached


def test_evaluate_window_rejects_bad_input():
    with pytest.raises(ValueError):
        evaluate_window("x", [1, 2, 3], [1.0, 2.0])
    with pytest.raises(ValueError):
        evaluate_window("x", [1], [1.0])


def test_latest_window_needs_five_rounds():
    assert latest_window("x", [1, 2, 3, 4], [10, 10, 10, 10]) is None
    v = latest_window("x", [1, 2, 3, 4, 5], [10, 10, 10, 10, 10], unit="IOPS")
    assert v is not None and v.reached and v.unit == "IOPS"


def test_latest_window_uses_the_last_five_rounds():
    rounds = [1, 2, 3, 4, 5, 6, 7]
    values = [500, 300, 100, 100, 100, 100, 100]
    v = latest_window("x", rounds, values)
    assert v.rounds == (3, 4, 5, 6, 7)
    assert v.values == (100.0,) * 5
    assert v.reached
    # The same data one round earlier is not steady (500/300 drag the window).
    assert not latest_window("x", rounds[:6], values[:6]).reached


def test_all_reached_needs_every_variable():
    ok = evaluate_window("a", [1, 2, 3, 4, 5], [10, 10, 10, 10, 10])
    bad = evaluate_window("b", [1, 2, 3, 4, 5], [100, 104, 108, 112, 116])
    assert all_reached([ok, ok, ok])
    assert not all_reached([ok, bad, ok])
    assert not all_reached([ok, None])
    assert not all_reached([])


def test_to_dict_carries_the_verdict():
    d = evaluate_window("RND 4KiB 0/100 IOPS", [1, 2, 3, 4, 5], [100, 104, 108, 112, 116], "IOPS").to_dict()
    assert d["variable"] == "RND 4KiB 0/100 IOPS"
    assert d["rounds"] == [1, 2, 3, 4, 5]
    assert d["values"] == [100.0, 104.0, 108.0, 112.0, 116.0]
    assert d["reached"] is False and d["range_ok"] is True and d["excursion_ok"] is False
