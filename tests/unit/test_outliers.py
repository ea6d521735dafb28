"""Latency outliers (issue 32, item 3; pts/qos.outliers): the IOs above a threshold, bounded by the
edges of fio's histogram bin that holds the threshold, held to fio's own binning transcribed in
tests/report_numbers.py; the option, the targets and the report's numbers."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st
import pytest

from ssdpts.errors import UserError
from ssdpts.measurement import DirectionStats, Measurement
from ssdpts.pts.qos import FIO_PLAT_LAST, fio_bin, outliers, step_outliers, threshold_edges
from ssdpts.pts.runspec import OUTLIER_MS, RunSpec

from ..report_numbers import Recompute, fio_plat_idx, html_numbers, outlier_counts


def plat_idx_to_val(idx: int) -> int:
    """fio stat.c plat_idx_to_val, transcribed: the value fio's json+ names a bin by (its midpoint)."""
    if idx < 128:
        return idx
    error_bits = (idx >> 6) - 1
    base = 1 << (error_bits + 6)
    return int(base + ((idx % 64) + 0.5) * (1 << error_bits))


def step(latencies_ns: list[int]) -> Measurement:
    """A read-only step whose json+ bins fio would have written for these response times."""
    bins: dict[int, int] = {}
    for v in latencies_ns:
        key = plat_idx_to_val(fio_plat_idx(v))
        bins[key] = bins.get(key, 0) + 1
    n = len(latencies_ns)
    read = DirectionStats(n, 4096 * n, float(n), 4096.0 * n, 1.0, sum(latencies_ns) / max(n, 1),
                          float(min(latencies_ns, default=0)), float(max(latencies_ns, default=0)), 0.0,
                          lat_bins_ns=bins)
    return Measurement(read, DirectionStats.empty(), 1.0, 0.0, 1.0)


def test_every_bin_of_fio():
    for idx in range(FIO_PLAT_LAST + 1):
        low, high = fio_bin(plat_idx_to_val(idx))
        assert fio_plat_idx(low) == idx and (low == 0 or fio_plat_idx(low - 1) == idx - 1)
        if idx < FIO_PLAT_LAST:
            assert fio_plat_idx(high - 1) == idx and fio_plat_idx(high) == idx + 1
        else:
            assert high is None and fio_plat_idx(10**12) == idx  # the last bin takes everything slower


def test_a_threshold_inside_a_bin_is_bounded_by_its_edges():
    low, high = threshold_edges(10_000_000)  # 10 ms lies in the bin [9.961472, 10.092544) ms
    assert (low, high) == (9_961_472, 10_092_544)
    m = step([9_970_000, 10_050_000, 10_200_000, 1_000_000])  # two IOs above 10 ms; one of them in the bin
    assert step_outliers(m, 10_000_000) == (1, 3)
    o = outliers([m, m], 10_000.0)
    assert (o.at_least, o.at_most, o.steps, o.edge_low_us, o.edge_high_us) == (2, 6, 2, 9961.472, 10092.544)
    assert o.text() == "2–6" and not o.exact
    # the exact maximum: no IO above a threshold the slowest IO is below, one where it is above
    assert step_outliers(step([9_970_000, 9_980_000]), 9_990_000) == (0, 0)
    assert step_outliers(step([9_970_000, 9_995_000]), 9_990_000) == (1, 2)
    assert threshold_edges(9_961_471) == (9_961_472, 9_961_472)  # a bin edge: exact


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**35), min_size=1, max_size=40),
       st.integers(min_value=0, max_value=2**35))
def test_bounds_hold_the_true_count_and_match_fio(lat, threshold):
    m = step(lat)
    least, most = step_outliers(m, threshold)
    assert least <= sum(v > threshold for v in lat) <= most
    assert (least, most) == outlier_counts(m.read.lat_bins_ns, m.lat_max_ns, threshold)


def test_the_option():
    assert OUTLIER_MS == (10.0, 15.0) and "outlier_ms" not in RunSpec(tests=("lat",)).to_dict()
    spec = RunSpec(tests=("lat",), outlier_ms=(2.0, 5.0))
    assert RunSpec.from_dict(spec.to_dict()).outlier_ms == (2.0, 5.0)
    for bad in ((), (15.0, 10.0), (1.0, 1.0), (0.0,), (1.0, 2.0, 3.0, 4.0, 5.0)):
        with pytest.raises(UserError, match="--outlier-ms"):
            RunSpec(tests=("lat",), outlier_ms=bad)


def test_targets_name_any_threshold():
    from ssdpts.report.datasheet import figure, parse_targets

    t = parse_targets("figure,limit,direction\nqd1_4k_read_over_10ms,0,lower\nocp_trim_read_over_2.5ms,3,max\n")
    assert set(t) == {"qd1_4k_read_over_10ms", "ocp_trim_read_over_2.5ms"}
    f = figure("ocp_trim_read_over_2.5ms")
    assert (f.part, f.key, f.stat, f.unit) == ("ocp-trim", "trim", "over_2.5ms_most", "IOs")
    for bad in ("qd1_4k_over_10ms", "qd1_4k_read_over_ms", "qd1_4k_read_over_10"):
        with pytest.raises(UserError, match="unknown figure"):
            parse_targets(f"figure,limit,direction\n{bad},0,lower\n")


def test_report_numbers_of_an_ocp_run(tmp_path: Path):
    """The OCP page's phases and outliers and the datasheet's outlier figures against their targets,
    each recomputed from the step records (a FakeExecutor run; real fio: test_run_devices)."""
    pytest.importorskip("jinja2")
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.report import render
    from ssdpts.run.session import start_run

    spec = RunSpec(tests=("ocp-trim",), step_seconds=1, outlier_ms=(0.01, 1.0))
    store, _ = start_run(spec, open_target(str(tmp_path / "t.bin"), size_bytes=64 * 2**20),
                         executor=FakeExecutor(noise=0.02), out_dir=tmp_path / "runs", confirm=None)
    (tmp_path / "t.csv").write_text("figure,limit,direction\nocp_trim_read_over_0.01ms,10,lower\n"
                                    "ocp_trim_read_over_0.02ms,0,lower\n")
    (page,) = render(store.path, ("html",), targets=tmp_path / "t.csv")
    rc = Recompute(store.path, targets={"ocp_trim_read_over_0.01ms": 10, "ocp_trim_read_over_0.02ms": 0})
    checked = {}
    for table, value, ref, _ in html_numbers(page.read_text()):
        if ref:
            assert value == pytest.approx(rc.value(ref), rel=1e-9, abs=1e-9), (table, ref)
            checked.setdefault(table, []).append(ref)
    assert len(checked["ocp-trim-outliers"]) == 2 * 3 * (1 + 2 * 2)  # 3 pairs of phases
    assert {"ocp-trim:trim:over_0.01ms_most", "ocp-trim:trim:over_0.02ms_most"} <= set(checked["datasheet-table"])
    assert rc.value("ocp-trim:trim:over_0.01ms_most") > 0  # the fake drive's reads take longer than 10 µs
