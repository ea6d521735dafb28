"""IOPS on the reference SSD (make test-full): after WIPC fills the drive sequentially, random
writes first find victims full of valid pages, so the write-heavy cells start slow and speed up
round by round while the valid pages spread out: steady state can only come after that
transition, not at round 5. Every value in the steady-state window is checked against the
simulator's own rate over the same step.

The drive is 512 MiB (so that one round of the 56 steps writes a small part of it) and the run
uses TC 1 x QD 2: the drive serves 32 MB/s, and at QD 32 x TC 4 a 1 MiB step would keep 128 MiB
in flight, longer than a compressed step lasts (docs/reference-ssd.md, "Time compression").
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run, steps_of
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "512M", "pages_per_block": 32}


def test_iops_steady_state_only_after_the_transition(tmp_path_factory):
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), **DRIVE) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp("iops-runs"), "iops", "--step-seconds", "1",
                         "--max-rounds", "25", "--threads", "1", "--iodepth", "2", timeout=3600)
        steps = steps_of(run, "iops")
        truth = ssd.wait_truth(max(s["end_time"] for s in steps))
    summary = json.loads((run / "summary.json").read_text())
    ss = summary["parts"]["iops"]["steady_state"]
    window = ss["window_rounds"]
    rows = []
    for var in ss["variables"]:
        for s in steps:
            if s["phase"] != "round" or f'{s["label"]} IOPS' != var["variable"] or s["round"] not in window:
                continue
            m, bs = s["measurement"], s["workload"]["block_size_bytes"]
            # the simulator counts bytes: FUSE may split one fio I/O into several commands
            sim = (truth.rate("read_bytes", m["start_time"], m["end_time"]) +
                   truth.rate("write_bytes", m["start_time"], m["end_time"])) / bs
            rows.append({"variable": var["variable"], "round": s["round"], "ssdpts_iops": m["iops"],
                         "simulator_iops": sim, "difference": m["iops"] / sim - 1})
    record("iops", window_rounds=window, reached=ss["reached"], values=rows)
    assert len(rows) == 3 * len(window)
    assert ss["reached"], ss
    assert window[0] > 1, f"steady state already at round 5: {window}"
    off = [r for r in rows if abs(r["difference"]) > 0.05]
    assert not off, off
