"""The queue depth a step asks for is the one fio keeps (engine/jobfile.py): fio 3.33's io_uring engine
rounds a job's depth up to a power of two, so a QD 6 step (DIRTH's and CBW's sweeps) kept 8 IOs in
flight. Such a step runs on libaio; fio's own count of the depth it kept (json+ iodepth_level, whose
bucket "4" holds depths 4-7 and "8" holds 8-15) must show no IO at 8 or more, on a real loop device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor
from ssdpts.pts.workload import Step, Workload

pytestmark = pytest.mark.root


def _levels(output: Path) -> list[dict]:
    text = output.read_text()
    return [j["iodepth_level"] for j in json.loads(text[text.index("\n{") + 1:])["jobs"]]


def test_qd6_keeps_six_in_flight_with_io_uring(make_loop, tmp_path):
    dev = make_loop("128M")
    steps = [Step("dirth", "", "round", 1, i + 1, Workload("rand", 100, 4096, 1, qd), 0.5) for i, qd in enumerate((6, 8))]
    ex = FioExecutor()
    try:
        ex.run(Batch(steps, dev, Area(0, 128 * 2**20), 7, "io_uring", job_path=tmp_path / "b.fio",
                     output_path=tmp_path / "b.json"))
    finally:
        ex.close()
    qd6, qd8 = _levels(tmp_path / "b.json")
    assert sum(float(qd6[k]) for k in ("8", "16", "32", ">=64")) == 0.0, qd6  # never more than 7 at once
    assert float(qd6["4"]) > 90.0, qd6  # ... and mostly 4-7: QD 6 kept
    assert float(qd8["8"]) > 0.0, qd8  # a power of two stays on io_uring, at its depth
