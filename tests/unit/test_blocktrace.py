"""The block-trace reader (engine/blocktrace.py) on real recorded tracepoint output
(tests/fixtures/trace, see SOURCES.md): pairing issues with completions, giving IOs to steps,
boundaries, and IOs issued while another was in flight."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ssdpts.engine import blocktrace as bt
from ssdpts.pts.workload import Workload

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "trace"
SHAPES = [bt.StepShape.of(Workload("rand", 100, 8192, 1, 1)), bt.StepShape.of(Workload("rand", 0, 4096, 1, 4))]


def load(name: str) -> bt.TracedIOs:
    return bt.parse_trace((TRACES / f"{name}-8k-read-qd1-then-4k-write-qd4.txt").read_text().splitlines())


@pytest.mark.parametrize("name", ["loop", "zram"])
def test_every_issue_is_paired_with_its_completion(name):
    ios = load(name)
    assert len(ios) == 24
    assert (ios.complete_ns >= ios.issue_ns).all() and (np.diff(ios.issue_ns) >= 0).all()
    assert list(ios.size_bytes) == [8192] * 12 + [4096] * 12
    assert list(ios.write) == [False] * 12 + [True] * 12


@pytest.mark.parametrize("name, gap_ms, busy_writes", [("loop", 298.985, 10), ("zram", 301.492, 0)])
def test_steps_boundaries_and_queue_depth_from_the_trace(name, gap_ms, busy_writes):
    ios = load(name)
    owner = bt.attribute(ios, SHAPES)
    assert list(owner) == [0] * 12 + [1] * 12
    spans = bt.step_spans(ios, owner, 2)
    assert [s[2] for s in spans] == [12, 12]
    (b,) = bt.boundaries(ios, owner, spans)
    # fio's stonewall waits for its ~100 ms polls: the idle the step gate removes
    assert b.gap_ms == pytest.approx(gap_ms) and b.idle_ms == b.gap_ms and b.overlap_ms == 0 and b.overlapping_ios == 0
    busy = bt.issued_while_busy(ios)
    assert not busy[:12].any(), "QD1 reads never had a second IO in flight"
    assert int(busy[12:].sum()) == busy_writes
    idle = bt.idle_before(ios)
    assert idle.max() == pytest.approx(gap_ms) and int(np.argmax(idle)) == 12


def test_attribution_follows_the_schedule_through_a_drain_and_skips_strangers():
    """IOs of the previous step completing after the next one started (a drain) stay with the
    previous step; an IO whose size or direction no nearby step has belongs to none."""
    t = np.arange(8, dtype=np.int64) * 1000
    ios = bt.TracedIOs(issue_ns=t, complete_ns=t + 1500,
                       size_bytes=np.array([8192, 8192, 4096, 8192, 4096, 131072, 4096, 512]),
                       write=np.array([False, False, True, False, True, True, True, True]))
    owner = bt.attribute(ios, SHAPES + [bt.StepShape(512, False, True)])
    assert list(owner) == [0, 0, 1, 0, 1, -1, 1, 2]
    spans = bt.step_spans(ios, owner, 3)
    b01, b12 = bt.boundaries(ios, owner, spans)
    assert b01.overlap_ms == pytest.approx(0.0025) and b01.overlapping_ios == 2
    assert b12.overlap_ms == pytest.approx(0.0005)


def test_lines_that_are_not_data_ios_are_ignored():
    lines = [
        "  kworker/0:1-9 [000] ..... 10.000001: block_rq_issue: 7,2 FWS 0 () 0 + 0 none,0,0 [kworker/0:1]",
        "  blkdiscard-7 [000] ..... 10.000002: block_rq_issue: 7,2 D 1048576 () 0 + 2048 none,0,0 [blkdiscard]",
        "# tracer: nop",
        "  fio-1 [000] ..... 10.000003: block_rq_insert: 7,2 R 4096 () 8 + 8 none,0,0 [fio]",
    ]
    assert len(bt.parse_trace(lines)) == 0


def test_tracing_needs_a_block_device(tmp_path):
    f = tmp_path / "not-a-device"
    f.write_text("x")
    with pytest.raises(bt.TraceUnavailable, match="not a block device"):
        bt.BlockTrace(str(f), tmp_path / "t.txt")


def test_pieces_of_a_split_io_belong_to_the_step_whose_block_size_they_divide():
    """A 1 MiB IO reaches a loop device as two 512 KiB requests; a piece the size of a neighbouring
    step's block size is that step's IO, not a piece."""
    shapes = [bt.StepShape(1048576, True, True), bt.StepShape(131072, True, True), bt.StepShape(65536, True, True)]
    t = np.arange(6, dtype=np.int64) * 1000
    ios = bt.TracedIOs(issue_ns=t, complete_ns=t + 500,
                       size_bytes=np.array([524288, 524288, 131072, 131072, 65536, 65536]),
                       write=np.array([True, True, False, False, True, True]))
    assert list(bt.attribute(ios, shapes)) == [0, 0, 1, 1, 2, 2]

