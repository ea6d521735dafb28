"""Traces (iotrace.py) and replay's pure parts (replay.py) on real recorded input: the block
tracepoint recordings of tests/fixtures/trace and an iolog fio 3.33 wrote (SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ssdpts.workloads import iotrace
from ssdpts.engine import blocktrace as bt
from ssdpts.errors import UserError
from ssdpts.workloads.replay import ReplaySpec, figures, replay_step, wrap_offsets

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "trace"
FIO_V3 = TRACES / "fio-3.33-write_iolog-v3-randrw.log"


def recorded(name: str) -> iotrace.IOTrace:
    ios = bt.parse_trace((TRACES / f"{name}-8k-read-qd1-then-4k-write-qd4.txt").read_text().splitlines())
    return iotrace.from_traced(ios, f"/dev/{name}2", 64 * 2**20)


def test_recorded_trace_summary_and_round_trip(tmp_path):
    tr = recorded("loop")
    s = iotrace.summary(tr)
    assert (s["ios"], s["reads"], s["writes"]) == (24, 12, 12)
    assert s["block_sizes"] == [{"size_bytes": 4096, "reads": 0, "writes": 12},
                                {"size_bytes": 8192, "reads": 12, "writes": 0}]
    # the reads ran at QD1; 10 of the 12 writes were issued while another was in flight (SOURCES.md)
    qd = iotrace.queue_depths(tr)
    assert (qd[:12] == 1).all() and int((qd[12:] > 1).sum()) == 10
    assert sum(s["queue_depth"]["histogram"].values()) == 24 and s["queue_depth"]["max"] <= 4
    # ~299 ms of idle between the jobs: the largest inter-arrival gap
    assert s["inter_arrival"]["max_us"] > 290_000 and sum(s["inter_arrival"]["log2_us_histogram"]) == 23
    assert sum(s["lba_heat_map"]["reads"]) == 12 and sum(s["lba_heat_map"]["writes"]) == 12
    assert len(s["lba_heat_map"]["reads"]) == iotrace.HEAT_BINS

    out = tmp_path / "t.iolog"
    iotrace.save(tr, out)
    assert out.read_text().splitlines()[0] == "fio version 3 iolog"
    back = iotrace.read_trace(out)
    assert back.complete_ns is not None  # from the .npz
    for a, b in ((back.issue_ns, tr.issue_ns), (back.complete_ns, tr.complete_ns), (back.offset_bytes, tr.offset_bytes),
                 (back.size_bytes, tr.size_bytes), (back.write, tr.write)):
        assert np.array_equal(a, b)
    stored, again = json.loads(iotrace.summary_path(out).read_text()), iotrace.summary(back)
    assert stored.pop("source") == "tracefs" and again.pop("source") == "fio iolog v3 + completion times (.npz)"
    assert stored == again
    # without the .npz: µs times from the iolog, no queue depth
    iotrace.sidecar(out).unlink()
    alone = iotrace.read_trace(out)
    assert alone.complete_ns is None and iotrace.summary(alone)["queue_depth"] is None
    assert np.array_equal(alone.issue_ns, tr.issue_ns // 1000 * 1000)


def test_iolog_v3_written_by_fio():
    tr = iotrace.read_trace(FIO_V3)
    s = iotrace.summary(tr)
    # fio's own json for that job: 23 reads (708608 bytes), 17 writes (622592 bytes)
    assert (s["reads"], s["writes"], s["read_bytes"], s["write_bytes"]) == (23, 17, 708608, 622592)
    assert {b["size_bytes"] for b in s["block_sizes"]} == {4096, 65536}
    assert s["timed"] and s["source"] == "fio iolog v3" and tr.filename == "/tmp/i18t/g.img"
    assert tr.issue_ns[0] == 0 and (np.diff(tr.issue_ns) >= 0).all()


def test_iolog_v2_waits_and_left_out_actions(tmp_path):
    p = tmp_path / "v2.log"  # the v2 format of fio's HOWTO
    p.write_text("fio version 2 iolog\n/dev/sdx add\n/dev/sdx open\n/dev/sdx read 0 4096\n/dev/sdx wait 1500 0\n"
                 "/dev/sdx write 8192 16384\n/dev/sdx trim 0 4096\n/dev/sdx sync 0 0\n/dev/sdx close\n")
    tr = iotrace.read_trace(p)
    assert list(tr.issue_ns) == [0, 1_500_000] and list(tr.write) == [False, True] and tr.other_actions == 2
    assert tr.timed and iotrace.summary(tr)["inter_arrival"]["max_us"] == 1500
    p.write_text("fio version 2 iolog\n/dev/sdx add\n/dev/sdx open\n/dev/sdx read 0 4096\n/dev/sdx read 4096 4096\n")
    assert not iotrace.read_trace(p).timed and iotrace.summary(iotrace.read_trace(p))["inter_arrival"] is None


@pytest.mark.parametrize("content, words", [
    ((0x65617407).to_bytes(4, "little") + b"\0" * 44, "no completed read or write"),  # one blktrace record, no IO
    (b"time,offset,size\n1,2,3\n", "not an fio iolog"),
    (b"fio version 3 iolog\n0 /dev/x add\n5 /dev/x read 4096\n", "line 3"),
    (b"fio version 3 iolog\n0 /dev/x add\n5 /dev/x wait 100 0\n", "line 3"),
    (b"fio version 2 iolog\n/dev/x read -4096 4096\n", "negative offset"),
])
def test_bad_traces_refused_in_one_line(tmp_path, content, words):
    p = tmp_path / "bad"
    p.write_bytes(content)
    with pytest.raises(UserError, match=words) as e:
        iotrace.read_trace(p)
    assert "\n" not in str(e.value)


def test_record_refuses_before_tracing(tmp_path):
    with pytest.raises(UserError, match="--seconds"):
        iotrace.record("/dev/null", 0, tmp_path / "x")
    (tmp_path / "x").write_text("")
    with pytest.raises(UserError, match="never overwritten"):
        iotrace.record("/dev/null", 1, tmp_path / "x")
    with pytest.raises(UserError, match="not a block device"):
        iotrace.record("/dev/null", 1, tmp_path / "y")


def test_wrap_offsets_keeps_sizes_alignment_and_sequential_runs():
    off = np.array([0, 4096, 8192, 100 * 2**20, 100 * 2**20 + 65536], dtype=np.int64)
    size = np.array([4096, 4096, 4096, 65536, 65536], dtype=np.int64)
    same, moved = wrap_offsets(off, size, 200 * 2**20)
    assert moved == 0 and same is off
    new, moved = wrap_offsets(off, size, 64 * 2**20)
    assert moved == 2 and list(new[:3]) == [0, 4096, 8192]
    assert ((new + size) <= 64 * 2**20).all() and not (new % 4096).any()
    assert new[4] - new[3] == 65536  # a sequential run stays sequential
    with pytest.raises(UserError, match="larger than the target"):
        wrap_offsets(off, size, 32768)


@pytest.mark.parametrize("argv, word", [
    (["--runs", "4"], "odd number"),
    (["--runs", "1"], "odd number"),
    (["--runs", "101"], "3 to 99"),
    (["--time-scale", "0"], "--time-scale"),
])
def test_replay_bad_input_one_line_exit_2_nothing_written(tmp_path, capsys, argv, word):
    from ssdpts.cli import main as M

    target, out = tmp_path / "t.img", tmp_path / "runs"
    rc = M.main(["trace", "replay", "--trace", str(FIO_V3), "--target", str(target), "--size", "64M",
                 "--out", str(out), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and word in err and len(err.strip().splitlines()) == 1
    assert not target.exists() and not out.exists()


def test_replay_spec_and_job():
    with pytest.raises(UserError, match="odd"):
        ReplaySpec(runs=4)
    with pytest.raises(UserError, match="--time-scale"):
        ReplaySpec(time_scale_pct=0)
    with pytest.raises(UserError, match="--precondition"):
        ReplaySpec(precondition="fill")
    # a replay is a step of the core: the executors' job file, the step gate's hooks around it
    from ssdpts.engine.base import Area, Batch
    from ssdpts.engine.jobfile import render_job_file

    step = replay_step(2, Path("/r/replay.iolog"), ReplaySpec(no_stall=True, time_scale_pct=200), 8, 70)
    text, _ = render_job_file(Batch([step], "/dev/loop9", Area(0, 2**30), 1, "libaio"), [("pre", "post")])
    lines = text.splitlines()
    for line in ("read_iolog=/r/replay.iolog", "replay_redirect=/dev/loop9", "replay_no_stall=1",
                 "replay_time_scale=200", "iodepth=8", "direct=1", "lat_percentiles=1", "exec_prerun=pre",
                 "exec_postrun=post"):
        assert line in lines
    assert not [ln for ln in lines if ln.startswith(("rw=", "bs=", "runtime=", "io_size="))]
    assert (step.round, step.workload.read_pct, step.duration_s, step.io_bytes) == (2, 70, None, None)


def test_figures_median_run_and_rse():
    runs = [{"completion_s": c, "iops": 3000 / c, "mb_per_s": 40 / c} for c in (0.25, 0.20, 0.30)]
    f = figures(runs)
    assert f[0]["median"] == 0.25 and f[0]["median_run"] == 1
    mean, s = 0.25, 0.05
    assert f[0]["rse"] == pytest.approx(s / (mean * 3 ** 0.5)) and not f[0]["reliable"]  # 11.5% > 5%
    assert f[1]["median"] == pytest.approx(12000)
    # two of three planned runs (interrupted): not judged
    assert [x["reliable"] for x in figures(runs[:2], 3)] == [None, None, None]
    assert figures(runs, 3)[0]["reliable"] is False


def test_replay_percentiles_never_above_the_measured_max():
    """fio's json+ bins are bucket midpoints: the top one can lie above the maximum fio measured
    (recorded fio 3.33 output, read: top bin 17,170,432 ns, max 17,080,884 ns). A replay's response
    times are capped at that maximum as ssdpts run's are (Measurement.lat_percentile_ns)."""
    from ssdpts.engine.fioparse import job_measurement
    from ssdpts.workloads.replay import PCTS, run_values

    job = json.loads((TRACES.parent / "fio" / "fio-3.33-jsonplus-3steps-loop.json").read_text())["jobs"][0]
    lat = job["read"]["lat_ns"]
    assert max(int(b) for b in lat["bins"]) > lat["max"]  # the case this test is about
    read = run_values(job_measurement(job), job["job_runtime"])["types"]["read"]
    assert read["lat_max_us"] == pytest.approx(lat["max"] / 1000)
    assert read["lat_p99.99_us"] <= read["lat_max_us"]
    assert all(read[f"lat_p{p:g}_us"] <= read["lat_max_us"] for p in PCTS)



def test_replay_figures_are_the_executors_measurements_without_any_fio_output(tmp_path):
    """A replay's figures come from the Measurement the executor returns, not from a file read
    behind its back: an executor that writes no fio output replays too, each run's IOs, bytes and
    response times its measurement's, IOPS and MB/s over its measured duration."""
    import dataclasses

    from ssdpts.device.target import open_target
    from ssdpts.engine.base import BatchResult
    from ssdpts.engine.fake import synth_measurement
    from ssdpts.workloads.replay import start_replay

    class Silent:  # measures, writes nothing where fio's output would be
        name = "silent"
        ran: list = []

        def version(self):
            return "silent-1"

        def cancel_ahead(self):
            return None

        def run(self, batch):
            step = batch.steps[0]
            m = synth_measurement(dataclasses.replace(step, iolog=None, duration_s=0.5 + step.round / 10),
                                  1000.0 * step.round, 0.0)
            self.ran.append(m)
            return BatchResult([m], m.duration_s, "silent-1", timelines=[{"source": "silent"}])

    target = open_target(str(tmp_path / "t.img"), size_bytes=64 * 2**20)
    store, doc = start_replay(ReplaySpec(runs=3), FIO_V3, target, executor=Silent(), out_dir=tmp_path / "runs",
                              confirm=None, argv=["ssdpts", "trace", "replay"])
    assert len(doc["runs"]) == 3 and not (store.path / "fio" / "replay-r01.json").exists()
    for run, m in zip(doc["runs"], Silent.ran):
        assert m.ios and run["completion_s"] == m.duration_s and run["ios"] == m.ios == run["read_ios"] + run["write_ios"]
        assert run["iops"] == pytest.approx(m.iops) and run["mb_per_s"] == pytest.approx(m.bw_bytes_per_s / 1e6)
        assert run["types"]["read"]["lat_mean_us"] == pytest.approx(m.read.lat_mean_ns / 1000)
