"""XSR on the reference SSD (make test-full): sequential 1 MiB writes invalidate whole blocks, so
garbage collection copies nothing (write amplification 1) and the drive writes at its program
rate. Random 8 KiB writes leave every block part valid: GC copies, and throughput falls to the
random steady state. When sequential writes return, the victims are still the blocks the random
writes fragmented, and throughput recovers only as the sequential pass empties them. The proof
(tests/refssd/proofs.py xsr_proof): every minute's MB/s is the simulator's (2%), and the recovery
ssdpts reports for group 3 comes when the simulator's GC stopped copying (within a minute). It is
shown to fail when ssdpts's rates are 3% low and when its minutes are misaligned by one step.

The drive is 64 MiB (8 dies, 32 MB/s): XSR's TC 1 x QD 32 of 1 MiB keeps 32 MiB in flight, one
second of the drive's work, so the PTS minute is compressed to 3 s. Groups of 8, 24 and 12
minutes: G1 writes the drive ~11 times over (its first minute is fresh-out-of-box, so the level
G3 must reach is G1's last 5 minutes, `--xsr-recovery g1-final`, within ssdpts's default 2%), G2
reaches the random steady state, G3 recovers.
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import pytest

from . import mutations
from .conftest import refssd_host, require_refssd, ssdpts_run
from .proofs import Drive, Run, xsr_proof
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32}
MINUTES = (8, 24, 12)


def test_xsr_recovery_when_the_simulators_gc_stops_copying(tmp_path_factory):
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), **DRIVE) as ssd:
        run = Run.read(ssdpts_run(ssd, tmp_path_factory.mktemp("xsr-runs"), "xsr", "--step-seconds", "3",
                                  "--xsr-minutes", ",".join(map(str, MINUTES)), "--xsr-recovery", "g1-final",
                                  timeout=3600))
        drive = Drive.of(ssd, run.of("xsr")[-1]["measurement"]["end_time"])
    assert [s["key"] for s in run.of("xsr")] == ["g1"] * MINUTES[0] + ["g2"] * MINUTES[1] + ["g3"] * MINUTES[2]
    v = xsr_proof(run, drive)
    low = xsr_proof(mutations.scale_iops(run, 0.97), drive)
    shifted = xsr_proof(mutations.misalign_samples(run, "xsr"), drive)
    record("xsr", checks=v.checks, failures=[str(f) for f in v.failures],
           mutations={"rates x 0.97": str(low), "misaligned": str(shifted)}, **v.figures)
    assert v.ok, v
    assert low.failed("minutes vs simulator"), low
    assert shifted.failed("minutes vs simulator"), shifted
