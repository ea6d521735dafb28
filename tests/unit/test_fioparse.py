"""Reading real fio output (tests/fixtures/fio, provenance in tests/fixtures/SOURCES.md).

Every expected number below was read from the fixture files by hand, not computed by the parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdpts.engine.fioparse import FioOutputError, job_measurement, parse_fio_output
from ssdpts.measurement import Measurement, percentile_from_bins

FIO_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"

ALL_FIXTURES = sorted(p.name for p in FIO_FIXTURES.glob("fio-*") if p.suffix in (".json", ".out", ".txt"))
JSONPLUS = "fio-3.33-jsonplus-3steps-loop.json"


def measurements(text: str) -> list[Measurement]:
    out = parse_fio_output(text)
    return [job_measurement(j, major=out.major_version) for j in out.jobs]


def test_fixture_set_is_complete():
    assert len(ALL_FIXTURES) == 12  # the .log files of lost fio servers hold no result (test_fioclient.py)
    assert JSONPLUS in ALL_FIXTURES


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_parses(name, fio_fixture):
    out = parse_fio_output(fio_fixture(name))
    assert out.version.startswith("fio-")
    assert out.version.split("-")[1].split(".")[0] == str(out.major_version)
    assert out.jobs
    for m in measurements(fio_fixture(name)):
        assert m.iops == pytest.approx(m.read.iops + m.write.iops)
        assert m.end_time >= m.start_time


# ---- modern single-job layouts ----------------------------------------------------------------------

def test_fio_3_1_no_bw_bytes_and_clat_percentiles(fio_fixture):
    out = parse_fio_output(fio_fixture("fio-3.1-randread-4k-qd32-samsung860pro-hba.json"))
    assert out.version == "fio-3.1" and out.timestamp_ms == 1568394743479 and out.preamble == ""
    (m,) = measurements(fio_fixture("fio-3.1-randread-4k-qd32-samsung860pro-hba.json"))
    assert m.jobname == "random-read" and m.error == 0
    r = m.read
    assert r.iops == pytest.approx(58379.010350)
    assert r.io_bytes == 14347464704
    assert r.ios == 3502799
    assert r.runtime_s == pytest.approx(60.001)
    assert r.bw_bytes_per_s == 233516 * 1024  # fio 3.1 has only "bw" in KiB/s
    # lat_ns has no percentiles in 3.1, so the completion latency (with percentiles) is used.
    assert m.lat_kind == "completion"
    assert r.lat_mean_ns == pytest.approx(543152.342051)
    assert r.lat_percentiles_ns["99"] == 872448
    assert r.lat_percentiles_ns["99.99"] == 1581056
    assert m.write.ios == 0 and m.write.iops == 0
    assert m.iops == pytest.approx(58379.010350)


def test_fio_3_14_git_version(fio_fixture):
    out = parse_fio_output(fio_fixture("fio-3.14-randread-4k-qd4-nj4-intel-d3s4610.json"))
    assert out.version == "fio-3.14-6-g97134" and out.major_version == 3
    (m,) = measurements(fio_fixture("fio-3.14-randread-4k-qd4-nj4-intel-d3s4610.json"))
    assert m.read.iops == pytest.approx(52777.637039)
    assert m.read.bw_bytes_per_s == 216177201
    assert m.read.io_bytes == 12970848256
    assert m.read.ios == 3166711
    assert m.read.lat_mean_ns == pytest.approx(294496.492925)
    assert m.read.lat_percentiles_ns["99.99"] == 913408


def test_fio_3_16_mixed_step_iops_is_read_plus_write(fio_fixture):
    (m,) = measurements(fio_fixture("fio-3.16-randrw-4k-qd8-nj8-highpoint-mdraid5.json"))
    assert m.read.iops == pytest.approx(317.511513)
    assert m.write.iops == pytest.approx(322.066867)
    assert m.iops == pytest.approx(317.511513 + 322.066867)
    assert m.read.bw_bytes_per_s == 1300527 and m.write.bw_bytes_per_s == 1319185
    assert m.bw_bytes_per_s == 1300527 + 1319185
    assert (m.read.ios, m.write.ios) == (19098, 19372)
    assert (m.read.io_bytes, m.write.io_bytes) == (78225408, 79347712)
    assert m.read.lat_mean_ns == pytest.approx(70542578.167033)
    assert m.write.lat_mean_ns == pytest.approx(128769157.388963)
    assert m.read.lat_percentiles_ns["99.99"] == 910163968
    assert m.write.lat_percentiles_ns["99.99"] == 792723456
    # IO-weighted mean over both directions.
    assert m.lat_mean_ns == pytest.approx((70542578.167033 * 19098 + 128769157.388963 * 19372) / (19098 + 19372))
    assert m.duration_s == pytest.approx(60.149)


def test_fio_3_19_eight_separate_jobs(fio_fixture):
    out = parse_fio_output(fio_fixture("fio-3.19-rw-8jobs-nvme-24h-pbench.json"))
    assert len(out.jobs) == 8
    ms = measurements(fio_fixture("fio-3.19-rw-8jobs-nvme-24h-pbench.json"))
    assert {m.jobname for m in ms} == {"job-/dev/nvme8n1"}
    first = ms[0]
    assert first.read.iops == pytest.approx(96.77941)
    assert first.read.io_bytes == 34249953280
    assert first.read.ios == 8361769
    assert first.write.io_bytes == 34232373248
    assert first.duration_s == pytest.approx(86400.289)  # a 24 h run
    assert first.read.lat_percentiles_ns["99.99"] == 1333788672


def test_fio_3_40_readwrite_psync(fio_fixture):
    (m,) = measurements(fio_fixture("fio-3.40-readwrite-4k-psync.json"))
    assert m.jobname.startswith("hourly_automated_test,pattern:read")
    assert (m.read.ios, m.write.ios) == (100852, 100579)
    assert m.read.io_bytes == 413089792 and m.write.io_bytes == 411971584
    assert m.read.bw_bytes_per_s == 41304848
    assert m.write.iops == pytest.approx(10056.894311)
    assert m.read.lat_percentiles_ns["99.99"] == 493568
    assert m.write.lat_percentiles_ns["99.99"] == 1843200
    assert m.write.lat_mean_ns == pytest.approx(49045.755078)


# ---- text around the document, client/server ----------------------------------------------------

def test_fio_3_7_client_server_text_preamble_and_duplicate_keys(fio_fixture):
    text = fio_fixture("fio-3.7-client-server-2hosts-pbench.txt")
    out = parse_fio_output(text)
    assert out.version == "fio-3.7"
    assert out.timestamp_ms == 1536171052 * 1000  # no timestamp_ms in 3.7: derived from timestamp
    assert out.preamble.startswith("hostname=perf84, be=0, 64-bit")
    assert "Disk stats (read/write):" in out.preamble
    assert "{" not in out.preamble
    assert out.trailer == ""
    assert out.error_lines == []
    assert len(out.jobs) == 11  # 10 jobs in client_stats + "All clients"
    assert out.raw["global options"]["bs"] == "4k"  # duplicated key: the last one is kept
    ms = measurements(text)
    assert ms[0].jobname == "job-/tmp/fio"
    assert ms[0].read.iops == pytest.approx(7951.016328)
    assert ms[0].read.bw_bytes_per_s == 32576098
    assert ms[0].read.ios == 119305
    assert ms[0].read.lat_mean_ns == pytest.approx(3994084.886371)
    assert ms[0].read.lat_percentiles_ns["99.99"] == 32899072
    assert ms[-1].jobname == "All clients"
    assert ms[-1].read.iops == pytest.approx(93198.150858)
    assert ms[-1].read.io_bytes == 5740351488


def test_fio_3_43_client_stats_with_leading_blank_line(fio_fixture):
    text = fio_fixture("fio-3.43-client-server-2clients-loopback.json")
    assert text.startswith("\n{")
    out = parse_fio_output(text)
    assert out.version == "fio-3.43"
    assert out.preamble == "\n"
    assert isinstance(out.raw["global options"], list)
    assert [j["jobname"] for j in out.jobs] == ["test", "test", "All clients"]
    ms = measurements(text)
    assert ms[0].read.iops == pytest.approx(1110589.0)
    assert ms[1].read.iops == pytest.approx(1113931.0)
    assert ms[2].read.iops == pytest.approx(2224520.0)
    assert ms[2].read.bw_bytes_per_s == 9111633920
    assert ms[0].read.lat_mean_ns == pytest.approx(799.194842)
    assert ms[0].read.lat_percentiles_ns["99.99"] == 23936
    assert ms[0].duration_s == pytest.approx(1.0)


def test_fio_2_1_4_old_layout_usec_and_kb(fio_fixture):
    text = fio_fixture("fio-2.1.4-5jobs-libaio-pkb.json")
    out = parse_fio_output(text)
    assert out.version == "fio-2.1.4" and out.major_version == 2
    assert out.timestamp_ms is None  # no timestamp at all in 2.1.4
    ms = measurements(text)
    assert [m.jobname for m in ms] == ["sequential_write", "sequential_read", "random_write_test",
                                       "random_read_test", "random_read_test_parallel"]
    sw = ms[0]
    assert sw.write.io_bytes == 361984 * 1024  # "io_bytes" was kilobytes in fio 2.x
    assert sw.write.bw_bytes_per_s == 68118 * 1024  # "bw" in KiB/s
    assert sw.write.iops == 133
    assert sw.write.runtime_s == pytest.approx(5.314)
    # fio 2.x has percentiles only for completion latency ("clat", microseconds): the same rule
    # as for fio 3.x without lat_percentiles picks clat, so mean and percentiles agree.
    assert sw.lat_kind == "completion"
    assert sw.write.lat_mean_ns == pytest.approx(477734.84 * 1000)
    assert sw.write.lat_max_ns == pytest.approx(869891 * 1000)
    assert sw.write.lat_min_ns == pytest.approx(189263 * 1000)
    assert sw.write.lat_percentiles_ns["99.5"] == 847872 * 1000
    assert sw.write.lat_percentiles_ns["99.99"] == 872448 * 1000
    assert "0" not in sw.write.lat_percentiles_ns  # fio 2.x's trailing "0.00": 0 entry is dropped
    assert len(sw.write.lat_percentiles_ns) == 17
    assert sw.read.ios == 0
    rr = ms[3]
    assert rr.read.io_bytes == 36244 * 1024
    assert rr.read.lat_mean_ns == pytest.approx(3117.62 * 1000)
    assert rr.read.lat_percentiles_ns["50"] == 3280 * 1000
    assert rr.read.lat_percentiles_ns["99.99"] == 354304 * 1000
    assert rr.lat_percentile_ns(99.99) == 352736 * 1000  # capped at the measured max (fio's bin is above it)
    assert rr.read.ios == round(317 * 28.540)  # no total_ios in 2.x: iops x runtime


# ---- errors and interruptions ------------------------------------------------------------------

def test_error22_fixture_gives_a_job_error_and_fio_error_lines(fio_fixture):
    text = fio_fixture("fio-3.33-job-error22-stderr-preamble.out")
    out = parse_fio_output(text)
    assert out.version == "fio-3.33"
    assert out.preamble.startswith("fio: time_based requires a runtime/timeout setting\n")
    assert out.error_lines == [
        "fio: pid=0, err=22/file:filesetup.c:1155, func=total_file_size, error=Invalid argument"]
    (job,) = out.jobs
    assert job["error"] == 22
    (m,) = measurements(text)
    assert m.error == 22 and m.jobname == "1m"
    assert m.iops == 0 and m.ios == 0


def test_sigint_fixture_keeps_the_preamble(fio_fixture):
    text = fio_fixture("fio-3.34-randread-macos-sigint-preamble.out")
    out = parse_fio_output(text)
    assert out.preamble == "\nfio: terminating on signal 2\n"
    assert out.error_lines == ["fio: terminating on signal 2"]
    assert out.timestamp_ms == 1680135576805
    (m,) = measurements(text)
    assert m.jobname == "FIOJOB" and m.error == 0
    assert m.read.iops == pytest.approx(10102.601156)
    assert m.read.ios == 27964
    assert m.read.io_bytes == 114540544
    assert m.read.bw_bytes_per_s == 41380254
    assert m.duration_s == pytest.approx(2.768)  # interrupted after 2.8 s of a 10 s job
    assert m.read.lat_percentiles_ns["99.99"] == 468992
    assert m.lat_kind == "completion"


@pytest.mark.parametrize("text,word", [
    ("", "empty output"),
    ("   \n\n", "empty output"),
    ("fio: failed to open /dev/nope: No such file or directory\nmore text\n", "fio: failed to open /dev/nope"),
    ('{\n  "fio version" : "fio-3.33",\n  "jobs" : [\n    {\n      "jobname" : "s0001",', "truncated"),
    ("[1, 2, 3]\n", "no JSON"),
    ('{\n "fio version": "fio-3.33"\n}\n', "neither 'jobs' nor 'client_stats'"),
])
def test_unreadable_output_raises_a_one_line_error(text, word):
    with pytest.raises(FioOutputError) as exc:
        parse_fio_output(text)
    msg = str(exc.value)
    assert word in msg
    assert "\n" not in msg


def test_truncated_real_fixture_raises(fio_fixture):
    text = fio_fixture(JSONPLUS)
    with pytest.raises(FioOutputError, match="truncated or corrupt"):
        parse_fio_output(text[: len(text) // 2])


def test_trailer_after_the_document_is_kept(fio_fixture):
    text = fio_fixture("fio-3.40-readwrite-4k-psync.json") + "fio: file hash not empty on exit\n"
    out = parse_fio_output(text)
    assert out.trailer == "fio: file hash not empty on exit"
    assert len(out.jobs) == 1


# ---- json+ -----------------------------------------------------------------------------------------

def test_jsonplus_three_steps(fio_fixture):
    out = parse_fio_output(fio_fixture(JSONPLUS))
    assert out.version == "fio-3.33" and out.timestamp_ms == 1795345953334
    ms = measurements(fio_fixture(JSONPLUS))
    assert [m.jobname for m in ms] == ["s0001", "s0002", "s0003"]
    assert {m.lat_kind for m in ms} == {"total"}  # lat_percentiles=1: total latency with bins
    mixed, reads, writes = ms
    # mixed step: IOPS = read + write (docs/pts-reference.md#units)
    assert mixed.read.iops == pytest.approx(1722.664016)
    assert mixed.write.iops == pytest.approx(972.166998)
    assert mixed.iops == pytest.approx(1722.664016 + 972.166998)
    assert (mixed.read.ios, mixed.write.ios) == (1733, 978)
    assert mixed.read.lat_mean_ns == pytest.approx(299271.376803)
    assert mixed.write.lat_mean_ns == pytest.approx(7684805.674847)
    assert reads.read.iops == pytest.approx(44411.067194) and reads.write.ios == 0
    assert reads.read.bw_bytes_per_s == 181907731
    assert reads.read.ios == 44944
    assert writes.write.iops == pytest.approx(4236.055777) and writes.read.ios == 0
    assert writes.write.io_bytes == 17420288
    assert writes.write.lat_mean_ns == pytest.approx(1886252.268281)
    # bins are total-latency bins: one count per IO.
    assert sum(reads.read.lat_bins_ns.values()) == 44944
    assert sum(mixed.read.lat_bins_ns.values()) == 1733
    assert sum(mixed.lat_bins_ns.values()) == 1733 + 978


@pytest.mark.parametrize("job,direction,expected", [
    # (job index, direction, {percentile: fio's reported value in ns}) read from the fixture
    (1, "read", {50.0: 65280, 90.0: 220160, 99.0: 2056192, 99.9: 13434880, 99.99: 20578304, 99.999: 24248320}),
    (2, "write", {1.0: 134144, 50.0: 1318912, 95.0: 6389760, 99.0: 11075584, 99.5: 12517376, 99.99: 22413312}),
    (0, "read", {10.0: 27776, 50.0: 102912, 99.0: 3751936, 99.5: 11730944, 99.999: 17170432}),
    (0, "write", {5.0: 305152, 50.0: 7438336, 99.0: 22413312, 99.9: 26607616}),
])
def test_percentiles_from_bins_reproduce_fio(fio_fixture, job, direction, expected):
    m = measurements(fio_fixture(JSONPLUS))[job]
    d = getattr(m, direction)
    for pct, value in expected.items():
        assert d.lat_percentiles_ns[f"{pct:g}"] == value  # what fio printed
        assert percentile_from_bins(d.lat_bins_ns, pct) == value  # recomputed from its bins


def test_every_reported_percentile_matches_the_bins(fio_fixture):
    for m in measurements(fio_fixture(JSONPLUS)):
        for d in (m.read, m.write):
            if not d.ios:
                assert d.lat_bins_ns == {} and d.lat_percentiles_ns == {}
                continue
            assert len(d.lat_percentiles_ns) == 19
            for key, value in d.lat_percentiles_ns.items():
                assert percentile_from_bins(d.lat_bins_ns, float(key)) == value, key


def test_measurement_percentile_of_single_and_mixed_steps(fio_fixture):
    mixed, reads, writes = measurements(fio_fixture(JSONPLUS))
    # single direction: fio's own value
    assert reads.lat_percentile_ns(99.99) == 20578304
    assert writes.lat_percentile_ns(50) == 1318912
    # mixed: from the merged histogram, never above the measured maximum
    p = mixed.lat_percentile_ns(99.999)
    assert p is not None and p <= mixed.lat_max_ns
    assert mixed.lat_percentile_ns(50) == percentile_from_bins(mixed.lat_bins_ns, 50)


def test_percentile_from_bins_rule():
    bins = {100: 50, 200: 49, 1000: 1}
    assert percentile_from_bins(bins, 50) == 100  # cumulative 50 reaches 50% of 100
    assert percentile_from_bins(bins, 50.5) == 200
    assert percentile_from_bins(bins, 99) == 200
    assert percentile_from_bins(bins, 99.5) == 1000
    assert percentile_from_bins({}, 50) is None


def test_measurement_round_trips_through_dict(fio_fixture):
    for m in measurements(fio_fixture(JSONPLUS)):
        again = Measurement.from_dict(m.to_dict())
        assert again == m
        assert m.to_dict()["iops"] == pytest.approx(m.read.iops + m.write.iops)


def test_observed_timeline_wins_over_job_start(fio_fixture):
    out = parse_fio_output(fio_fixture(JSONPLUS))
    job = out.jobs[1]
    m = job_measurement(job, start_time=1000.0, duration_s=1.0)
    assert m.start_time == 1000.0 and m.end_time == pytest.approx(1000.0 + 1.012)
    m1 = job_measurement(job, start_time=1000.0, end_time=1001.5)
    assert m1.end_time == 1001.5 and m1.duration_s == pytest.approx(1.012)
    with_start = dict(job, job_start=1_700_000_000_123)
    assert job_measurement(with_start, start_time=1000.0).start_time == 1000.0
    # without an observed start, fio >= 3.36's job_start
    assert job_measurement(with_start).start_time == pytest.approx(1_700_000_000.123)


def test_the_format_home_reads_what_the_executors_and_the_proof_need(fio_fixture):
    """engine/fioparse.py is the one reader of fio's output: a step's job clock, the jobs' errors, a
    fio server's answer and each step's Measurement (the assembly the executors and
    results/verify/proof.py share), on recorded fio 3.33 output."""
    from ssdpts.engine.fioparse import (job_clock, job_errors, job_options, server_answered, step_jobs,
                                        step_measurement, step_measurements)

    out = parse_fio_output(fio_fixture(JSONPLUS))
    # job_runtime per clone (fio sums it over a group's clones: s0002 ran 2); fio 3.33 writes no job_start
    assert [job_clock(j, int(job_options(j)["numjobs"])) for j in out.jobs] == [(1005.0, None), (1010.5, None),
                                                                                (1003.0, None)]
    assert job_errors(out) == []
    assert job_errors(parse_fio_output(fio_fixture("fio-3.33-job-error22-stderr-preamble.out"))) == [("1m", 22)]
    client = fio_fixture("fio-3.33-client-jsonplus-6steps-zram.json")
    assert server_answered(client) and not server_answered(fio_fixture(JSONPLUS))
    assert not server_answered("") and not server_answered("HTTP/1.0 400 Bad request\n")
    # each step's Measurement: the job of its index (a client's "All clients" sum is no step) at its times
    cout = parse_fio_output(client)
    assert len(step_jobs(cout)) == 6 and cout.jobs[-1]["jobname"] == "All clients"

    class S:
        duration_s = 0.05

    tls = [{"start_unix_s": 100.0 + i, "end_unix_s": 100.5 + i} for i in range(6)]
    ms = step_measurements(cout, [S()] * 6, tls)
    for i, m in enumerate(ms):
        want = job_measurement(cout.jobs[i], major=3, start_time=100.0 + i, end_time=100.5 + i, duration_s=0.05)
        assert m == want == step_measurement(cout, i, start_time=100.0 + i, end_time=100.5 + i, duration_s=0.05)
