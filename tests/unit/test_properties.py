"""Property-based tests (hypothesis) for the fio output parser and the steady-state evaluator."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, given, settings, strategies as st
import numpy as np
import pytest

from ssdpts.engine.fioparse import FioOutputError, job_measurement, parse_fio_output
from ssdpts.measurement import percentile_from_bins
from ssdpts.pts.steady_state import evaluate_window, latest_window

finite = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=5, max_size=5), st.integers(min_value=0, max_value=100))
def test_verdict_matches_the_definition(values, first_round):
    rounds = list(range(first_round, first_round + 5))
    v = evaluate_window("x", rounds, values)
    avg = float(np.mean(values))
    assert v.average == pytest.approx(avg, rel=1e-12)
    assert v.range == pytest.approx(max(values) - min(values), rel=1e-9, abs=1e-9)
    assert v.excursion == pytest.approx(abs(np.polyfit(rounds, values, 1)[0]) * 4, rel=1e-6, abs=1e-6 * avg)
    # the verdict is the two inclusive comparisons, nothing else
    if v.range < 0.2 * avg * (1 - 1e-9) and v.excursion < 0.1 * avg * (1 - 1e-6):
        assert v.reached
    if v.range > 0.2 * avg * (1 + 1e-9) or v.excursion > 0.1 * avg * (1 + 1e-6):
        assert not v.reached


@given(st.lists(finite, min_size=5, max_size=5), st.floats(min_value=1e-3, max_value=1e3))
def test_verdict_is_scale_invariant(values, k):
    a = evaluate_window("x", range(1, 6), values)
    b = evaluate_window("x", range(1, 6), [v * k for v in values])
    # away from the boundaries, scaling every value cannot change the verdict
    assume(abs(a.range / a.average - 0.2) > 1e-6 and abs(a.excursion / a.average - 0.1) > 1e-6)
    assert a.reached == b.reached


@given(finite)
def test_constant_window_is_steady(c):
    assert evaluate_window("x", range(1, 6), [c] * 5).reached


@given(st.lists(finite, min_size=0, max_size=4))
def test_no_verdict_before_five_rounds(values):
    assert latest_window("x", list(range(1, len(values) + 1)), values) is None


@given(st.dictionaries(st.integers(min_value=1, max_value=10**10), st.integers(min_value=1, max_value=10**6),
                       min_size=1, max_size=50),
       st.floats(min_value=0.0, max_value=100.0))
def test_percentile_from_bins_is_a_bin_and_monotone(bins, pct):
    p = percentile_from_bins(bins, pct)
    assert p in {float(k) for k in bins}
    assert percentile_from_bins(bins, min(100.0, pct + 1)) >= p


def _job(iops_r: float, iops_w: float, runtime_ms: int) -> dict:
    def d(iops):
        return {"io_bytes": int(iops * runtime_ms / 1000) * 4096, "io_kbytes": int(iops * runtime_ms / 1000) * 4,
                "bw_bytes": int(iops * 4096), "bw": int(iops * 4), "iops": iops, "runtime": runtime_ms,
                "total_ios": int(iops * runtime_ms / 1000),
                "lat_ns": {"min": 1000, "max": 90000, "mean": 20000.0, "stddev": 5.0, "N": 10,
                           "percentile": {"99.999000": 80000}, "bins": {"20000": 5, "80000": 5}}}
    return {"jobname": "s0001", "groupid": 0, "error": 0, "read": d(iops_r), "write": d(iops_w)}


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_characters="{", blacklist_categories=("Cs",)), max_size=300),
       st.text(max_size=300), st.floats(min_value=0, max_value=1e7), st.floats(min_value=0, max_value=1e7),
       st.integers(min_value=1, max_value=10**7))
def test_parser_reads_json_surrounded_by_any_text(before, after, r, w, runtime):
    # text before the document never starts a line with '{' (that is where fio's JSON starts)
    before = "\n".join(ln for ln in before.splitlines() if not ln.lstrip().startswith("{"))
    doc = {"fio version": "fio-3.33", "timestamp": 1, "jobs": [_job(r, w, runtime)]}
    text = (before + "\n" if before else "") + json.dumps(doc, indent=1) + "\n" + after
    out = parse_fio_output(text)
    m = job_measurement(out.jobs[0], major=out.major_version, start_time=0.0)
    assert m.iops == pytest.approx(r + w)
    assert m.lat_kind == "total"
    assert m.duration_s == pytest.approx(runtime / 1000)


@given(st.text(max_size=2000))
def test_parser_never_raises_anything_but_its_own_error(text):
    try:
        out = parse_fio_output(text)
    except FioOutputError as exc:
        assert "\n" not in str(exc)
        return
    for j in out.jobs:
        try:
            job_measurement(j, major=out.major_version, start_time=0.0)
        except (ValueError, TypeError, KeyError, AttributeError):
            pass  # a JSON document that is not fio's: the executor turns these into a failed run


@given(st.integers(min_value=1, max_value=len(json.dumps({"fio version": "fio-3.33", "jobs": [_job(1, 1, 1)]})) - 1))
def test_truncated_json_is_one_clear_error(cut):
    text = json.dumps({"fio version": "fio-3.33", "jobs": [_job(100, 100, 1000)]})
    with pytest.raises(FioOutputError) as e:
        parse_fio_output(text[:cut])
    assert "\n" not in str(e.value)
