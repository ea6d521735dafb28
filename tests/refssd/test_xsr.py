"""XSR on the reference SSD (make test-full): sequential 1 MiB writes invalidate whole blocks, so
garbage collection copies nothing (write amplification 1) and the drive writes at its program
rate. Random 8 KiB writes leave every block part valid: GC copies, and throughput falls to the
random steady state. When sequential writes return, the victims are still the blocks the random
writes fragmented, and throughput recovers only as the sequential pass empties them. The
simulator records every copy it makes: the recovery ssdpts reports for group 3 must come when
the simulator's GC stopped copying, and every minute's MB/s must be the simulator's.

The drive is 64 MiB (8 dies, 32 MB/s): XSR's TC 1 x QD 32 of 1 MiB keeps 32 MiB in flight, one
second of the drive's work, so the PTS minute is compressed to 3 s. Groups of 8, 24 and 12
minutes: G1 writes the drive ~11 times over (its first minute is fresh-out-of-box, so the level
G3 must reach is G1's last 5 minutes, `--xsr-recovery g1-final`, within ssdpts's default 2%), G2
reaches the random steady state, G3 recovers.
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run, steps_of
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32}
MINUTES = (8, 24, 12)


def test_xsr_recovery_when_the_simulators_gc_stops_copying(tmp_path_factory):
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), **DRIVE) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp("xsr-runs"), "xsr", "--step-seconds", "3",
                         "--xsr-minutes", ",".join(map(str, MINUTES)), "--xsr-recovery", "g1-final", timeout=3600)
        steps = sorted((s for s in steps_of(run, "xsr") if s["phase"] == "round"), key=lambda s: s["index"])
        truth = ssd.wait_truth(steps[-1]["measurement"]["end_time"] + 0.2)
    tab = json.loads((run / "summary.json").read_text())["parts"]["xsr"]["table"]
    assert [s["key"] for s in steps] == ["g1"] * MINUTES[0] + ["g2"] * MINUTES[1] + ["g3"] * MINUTES[2]

    rows = []
    for s, m in zip(steps, tab["series"]):
        t0, t1 = s["measurement"]["start_time"], s["measurement"]["end_time"]
        rows.append({"minute": m["minute"], "group": m["group"], "ssdpts_mb_s": m["mb_per_s"],
                     "simulator_mb_s": truth.rate("write_bytes", t0, t1) / 1e6, "simulator_wa": truth.wa(t0, t1),
                     "simulator_gc_copy_pages": truth.sum("gc_copy_pages", t0, t1)})
    g3 = [r for r in rows if r["group"] == "g3"]
    level = tab["recovery_level_mb_per_s"]
    # the simulator's own recovery: the first G3 minute whose GC copied (almost) nothing
    sim_recovered = next((n for n, r in enumerate(g3, start=1) if r["simulator_wa"] <= 1.02), None)
    record("xsr", level_mb_s=level, ssdpts_recovery_minutes=tab["recovery_minutes"],
           simulator_recovery_minutes=sim_recovered, minutes=rows)

    # every minute's MB/s is the simulator's (the minutes at a change of group share their drain)
    for prev, r in zip(rows, rows[1:]):
        if prev["group"] == r["group"]:
            assert r["ssdpts_mb_s"] == pytest.approx(r["simulator_mb_s"], rel=0.05), r
    # the model: sequential writes copy nothing once steady, random writes do, G3 starts copying
    g1, g2 = [r for r in rows if r["group"] == "g1"], [r for r in rows if r["group"] == "g2"]
    assert g1[-1]["simulator_wa"] <= 1.02, g1[-1]
    assert g2[-1]["simulator_wa"] > 2.0, g2[-1]
    assert g3[0]["simulator_wa"] > 1.3, g3[0]
    # ssdpts: G2 slower than G1, G3 starts slow and recovers when the simulator's GC stops copying
    assert g2[-1]["ssdpts_mb_s"] < 0.7 * g1[-1]["ssdpts_mb_s"]
    assert g3[0]["ssdpts_mb_s"] < 0.9 * level
    assert sim_recovered is not None, g3
    assert tab["recovery_minutes"] is not None, tab
    assert abs(tab["recovery_minutes"] - sim_recovered) <= 1, (tab["recovery_minutes"], sim_recovered, g3)
