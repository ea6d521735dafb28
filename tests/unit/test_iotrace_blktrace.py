"""blktrace binary traces: a trace recorded in the device lab's guest (Debian's
kernel, emulated NVMe, tests/fixtures/blktrace/record-in-lab.sh) while a known fio job ran; its
counts are fio's own (the job's JSON beside it)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ssdpts.workloads import iotrace
from ssdpts.errors import UserError

BT = Path(__file__).resolve().parents[1] / "fixtures" / "blktrace"
JOB = json.loads((BT / "nvme0n1.fio.json").read_text())["jobs"][0]
needs_blkparse = pytest.mark.skipif(shutil.which("blkparse") is None, reason="blkparse (blktrace package) not installed")


@pytest.mark.parametrize("name", ["nvme0n1", "nvme0n1.blktrace.0", "nvme0n1.blktrace.1"])
def test_the_trace_is_what_fio_did(name):
    tr = iotrace.read_trace(BT / name)  # the base name or any per-CPU file: the whole set
    assert tr.source == "blktrace" and tr.filename == "/dev/nvme0n1" and tr.timed
    assert int((~tr.write).sum()) == JOB["read"]["total_ios"] == 1737
    assert int(tr.write.sum()) == JOB["write"]["total_ios"] == 1176
    # bytes per direction equal fio's: the emulated drive merged nothing (random 4k/64k at QD 4)
    assert int(tr.size_bytes[~tr.write].sum()) == JOB["read"]["io_bytes"]
    assert int(tr.size_bytes[tr.write].sum()) == JOB["write"]["io_bytes"]
    assert set(np.unique(tr.size_bytes).tolist()) == {4096, 65536}  # bssplit=4k/70:64k/30
    assert tr.other_actions == 0 and tr.extent_bytes <= 64 << 20  # size=64M
    assert (np.diff(tr.issue_ns) >= 0).all() and (tr.complete_ns > tr.issue_ns).all()
    # fio's iodepth=4 bounds what the device had in flight
    qd = iotrace.queue_depths(tr)
    assert qd.max() == 4
    s = iotrace.summary(tr)
    assert s["ios"] == 2913 and s["source"] == "blktrace"


@needs_blkparse
def test_the_reader_agrees_with_blkparse():
    """blkparse (the blktrace package's decoder) on the per-CPU set: every request issued to the
    driver and completed, in the same order with the same times, sectors, sizes and directions."""
    out = subprocess.run(["blkparse", "-q", "-D", str(BT), "-i", "nvme0n1", "-a", "issue", "-a", "complete",
                          "-f", "%a %d %S %n %T %t\n"], capture_output=True, text=True, check=True).stdout
    issued, done = [], {}
    for line in out.splitlines():
        tok = line.split()
        if len(tok) != 6 or tok[0] not in ("D", "C"):
            continue  # "Input file ... added"
        t = int(tok[4]) * 10**9 + int(tok[5])
        key = (int(tok[2]) * 512, int(tok[3]) * 512)
        if tok[0] == "D":
            issued.append((t, key, "W" in tok[1]))
        else:
            done.setdefault(key, []).append(t)
    tr = iotrace.read_trace(BT / "nvme0n1")
    assert len(issued) == len(tr) == 2913
    t0 = issued[0][0]  # blkparse's times are from the trace's first event; ssdpts's from the first issue
    assert [t - t0 for t, _k, _w in issued] == tr.issue_ns.tolist()
    assert [k for _t, k, _w in issued] == list(zip(tr.offset_bytes.tolist(), tr.size_bytes.tolist()))
    assert [w for _t, _k, w in issued] == tr.write.tolist()
    assert sorted(t - t0 for ts in done.values() for t in ts) == sorted(tr.complete_ns.tolist())


@needs_blkparse
def test_one_merged_stream_reads_the_same(tmp_path):
    merged = tmp_path / "merged.bin"  # blkparse -d: every CPU's records in one stream, as fio's read_iolog takes
    subprocess.run(["blkparse", "-q", "-D", str(BT), "-i", "nvme0n1", "-d", str(merged), "-o", "/dev/null"],
                   check=True, capture_output=True)
    a, b = iotrace.read_trace(BT / "nvme0n1"), iotrace.read_trace(merged)
    assert len(a) == len(b) == 2913
    for f in ("issue_ns", "complete_ns", "offset_bytes", "size_bytes", "write"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


@pytest.mark.parametrize("cut", [10, 48 + 8 + 100])
def test_damaged_trace_refused_in_one_line(tmp_path, cut):
    data = (BT / "nvme0n1.blktrace.0").read_bytes()
    bad = tmp_path / "bad.bin"
    bad.write_bytes(data[:56] + b"\xff" * cut + data[56:])  # a record's boundary lost
    with pytest.raises(UserError, match="not a blktrace trace at byte") as e:
        iotrace.read_trace(bad)
    assert "\n" not in str(e.value)


def test_stored_as_an_iolog_it_reads_back_equal(tmp_path):
    tr = iotrace.read_trace(BT / "nvme0n1")
    iotrace.save(tr, tmp_path / "t.iolog")
    back = iotrace.read_trace(tmp_path / "t.iolog")
    assert len(back) == len(tr) and np.array_equal(back.offset_bytes, tr.offset_bytes)
    assert np.array_equal(back.complete_ns, tr.complete_ns)  # the .npz keeps the completions
