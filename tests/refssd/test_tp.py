"""TP on the reference SSD (make test-full): the Throughput test's tables (PTS 2.0.2 section 8: per
block size, SEQ read and SEQ write MB/s, each the mean over the steady-state window) as
summary.json holds them and the report renders them, cell by cell, against the simulator's own
bytes read and written over the same window steps (tests/refssd/reported.py tp_table: -(0.5% +
1.5 ms of each step) ... +1%). Each cell scaled by 1.03 and by 0.97 in a copy of the summary must fail.

The drive is 64 MiB (8 dies, ~30 MB/s of writes): TC 1 x QD 32 of 1 MiB keeps 32 MiB in flight, a
second of the drive's writing, so the PTS minute is compressed to 3 s; 6 rounds at most (SEQ
writes reach steady state at round 5). Set REFSSD_FIGURES=FILE to collect the figures."""

from __future__ import annotations

import time

import pytest

from . import reported
from .conftest import refssd_host, require_refssd, ssdpts_run
from .proofs import Drive, Run
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32}


def test_tp_tables_are_the_simulators_throughput(tmp_path_factory):
    require_refssd()
    t = time.monotonic()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), io_log=True, interval_ms=10, **DRIVE) as ssd:
        run = Run.read(ssdpts_run(ssd, tmp_path_factory.mktemp("tp-runs"), "tp", "--step-seconds", "3",
                                  "--max-rounds", "6", timeout=3600))
        drive = Drive.of(ssd, max(s["measurement"]["end_time"] for s in run.of("tp")))
    v = reported.tp_table(run, drive)
    mutated = reported.mutation_check(lambda r: reported.tp_table(r, drive), run, v)
    shown = reported.report_agrees(v, run)
    record("tp", run_s=time.monotonic() - t, checks=v.checks, failures=[str(f) for f in v.failures],
           mutations=mutated, report=shown, **reported.summary_figures(v))
    assert shown["shown"] == 4, shown  # read and write of both block sizes
    reported.assert_proved(v, mutated)
