"""CBW and DIRTH on the reference SSD (make test-full): the demand-intensity tests' tables (PTS
2.0.2 sections 12 and 13, pts/demand.py) as summary.json holds them and the report renders them,
cell by cell, against the simulator's own record of the same steps (tests/refssd/reported.py
demand_tables): the preconditioning's steady level (minute 1 of each window round), every TC x QD
cell of the sweep and every operating point with its pre-write (IOPS: the step's commands over their
span on the drive: -(0.5% + 1.5 ms of each step) ... +1%), and their mean response times by Little's
law on the simulator's rate (TC x QD IOs outstanding / its IOPS: an upper bound, +1%; below, fio's
own time between IOs, the host's: -10%; their 3% mutations recorded, not required); and the drive
never held more commands at once than the
cell's TC x QD (its own record). Each IOPS figure scaled by 1.03 and by 0.97 in a copy of the summary
must fail. CPU and the tail percentiles are the host's, not the drive's: not judged.

What it found (2026-11-28, fio 3.33, io_uring): every QD 6 cell of DIRTH's sweep ran 8 IOs per
thread at the drive (TC16/QD6: 128 commands at once, TC1/QD6: 8), its mean response times 25-30%
above what 6 outstanding IOs per thread allow at the rate the drive delivered; the QD 6 steps are
the only ones whose job sections carry fio's default batching (engine/jobfile.py sets
iodepth_batch_submit and iodepth_batch_complete_max from QD 8 up). CBW the same. Until that is
settled the test fails on those cells. Under heavy load (CBW at load 100-200) some steps' recorded
intervals did not hold their IO (fio counted 992 IOs in a step whose interval held 642 at the
drive) and fio's run time ran up to 1.6% beyond the drive's: the summary's timing (recomputed
and marked steps, results/timing.py) is what makes those figures judgeable; a marked step's
figure is inconclusive here.

The drive is 64 MiB; the PTS minute is compressed to 1 s and the rounds are capped at 5, so a
test's three parts (preconditioning, the 49-cell sweep after a 5-minute pre-write, the three
points each after a 60-minute pre-write) take about 10 minutes. Set REFSSD_FIGURES=FILE to
collect the figures."""

from __future__ import annotations

import time

import pytest

from . import reported
from .conftest import refssd_host, require_refssd, ssdpts_run
from .proofs import Drive, Run
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32}


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_demand_tables_are_the_simulators(test, tmp_path_factory):
    require_refssd()
    t = time.monotonic()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), io_log=True, interval_ms=10, **DRIVE) as ssd:
        run = Run.read(ssdpts_run(ssd, tmp_path_factory.mktemp(f"{test}-runs"), test, "--step-seconds", "1",
                                  "--max-rounds", "5", timeout=3600))
        drive = Drive.of(ssd, max(s["measurement"]["end_time"] for s in run.of(test, phase=None)))
    v = reported.demand_tables(run, drive, test)
    mutated = reported.mutation_check(lambda r: reported.demand_tables(r, drive, test), run, v)
    record(test, run_s=time.monotonic() - t, checks=v.checks, failures=[str(f) for f in v.failures],
           mutations=mutated, **reported.summary_figures(v))
    reported.assert_proved(v, mutated)
