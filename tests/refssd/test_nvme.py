"""The reference SSD behind the device lab's emulated NVMe controller (make test-full).

QEMU backs an NVMe namespace with the file the simulator serves (`-drive file=.../disk`), so the
guest's own nvme driver, nvme-cli and ssdpts meet the simulated drive as an NVMe SSD: identify
data from QEMU's controller, Format NVM and Deallocate through the real driver, and every IO the
guest issues reaching the model. ssdpts chooses Format NVM as its purge there (a PTS purge, not
the discard it uses on a loop device); the test checks against the simulator's own record that
the Format reached the drive and left it fresh-out-of-box (every page unmapped, no page copied
by GC until the spare is used), that WSAT through the controller shows the drop where the model
puts it and the reference's steady write amplification (refssd params: reference_wa), that every
write ssdpts counted reached the drive and no other did, and that every sample's IOPS is the
simulator's rate (tests/refssd/proofs.py nvme_proof; shown to fail when ssdpts's IOPS are 3% low).

The guest runs under TCG here (docs/lab.md), which caps the IO rate it can issue: the drive is
scaled (every modeled time x3: FOB 2,667 IOPS; the guest issues ~4,000 at TC 1 x QD 32, ~2,700
at ssdpts's TC 4 x QD 32) so that the drive, not the guest, is the limit. The guest's clock is
set beside the host's by the agent's round trips, before and after the run: the rate at which
it runs against the host's (TCG guests calibrate their TSC at boot, seen 3% off) scales what
ssdpts measured in guest seconds to host seconds, where the simulator counts.
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import tempfile
import time

import pytest

from . import mutations
from .conftest import refssd_host, require_refssd, unavailable
from .proofs import Drive, Run, nvme_proof
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.lab]

SERIAL = "REFSSDNVME01"
DRIVE = {"capacity": "64M", "pages_per_block": 32, "time_scale": 3}
STEP_S = 2.0
# written to the drive by the WSAT run: enough for its WA to be steady over the last capacity
# (`refssd predict` on this drive: within 0.5% of reference_wa from 8 x capacity on; at 5 x, where
# this proof used to stop, still 5% below it)
CAPACITY_MULTIPLE = 8


def clock_offset(guest, n: int = 7) -> tuple[float, float]:
    """(host epoch, guest epoch minus host epoch in s), from the round trip with the shortest wait."""
    best = None
    for _ in range(n):
        t0 = time.time()
        out = guest.run(["date", "+%s.%N"], timeout=30, check=True).stdout
        t1 = time.time()
        if best is None or t1 - t0 < best[0]:
            best = (t1 - t0, (t0 + t1) / 2, float(out) - (t0 + t1) / 2)
    assert best[0] < 0.5, f"the guest answers too slowly to set its clock beside the host's: {best[0]:.3f} s"
    return best[1], best[2]


@pytest.fixture(scope="module")
def nvme(tmp_path_factory):
    require_refssd()
    from tests.lab.guest import Drive as LabDrive, Guest, LabUnavailable, prepare

    try:
        image = prepare(log=lambda s: print(s, flush=True))
    except LabUnavailable as exc:
        unavailable(f"device lab unavailable: {exc}")
    scratch = Path(tempfile.mkdtemp(prefix="ssdpts-lab-", dir=os.environ.get("SSDPTS_LAB_SCRATCH", "/var/tmp")))
    # io_log: each sample's rate from the commands' own completion times; the truth's 100-ms
    # intervals, taken pro rata, count short by the gap between steps (60-70 ms under TCG) when it
    # falls inside an interval a sample's window cuts (seen: +2.3% on average, one sample +5%)
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), loop=False, io_log=True, **DRIVE) as ssd:
        ssd.p = ssd.params()
        drive = LabDrive("refssd", "nvme", SERIAL, ssd.p["capacity_bytes"], "unmap",
                      ("pcie-root-port,id=rp0,chassis=1,slot=1,x-speed=8,x-width=4",
                       f"nvme,id=nvmec0,serial={SERIAL},bus=rp0",
                       "nvme-ns,drive=img-refssd,bus=nvmec0,nsid=1,logical_block_size=4096,physical_block_size=4096"),
                      path=str(ssd.disk))
        guest = Guest(image, scratch, drives=(drive,))
        guest.start()
        try:
            dev = guest.run("ls /sys/class/nvme/nvme0/ | grep -m1 '^nvme0n'", check=True).stdout.strip()
            got = guest.run(["cat", "/sys/class/nvme/nvme0/serial"], check=True).stdout.strip()
            assert got == SERIAL, got
            yield ssd, guest, f"/dev/{dev}", scratch
        finally:
            guest.stop()
            if not os.environ.get("SSDPTS_LAB_KEEP"):  # kept: the run directory, console.log
                shutil.rmtree(scratch, ignore_errors=True)


def test_wsat_through_nvme_format_starts_fresh_and_matches_the_simulator(nvme):
    ssd, guest, dev, scratch = nvme
    p = ssd.p
    info = json.loads(guest.run(["ssdpts", "info", dev, "--json"], check=True, timeout=120).stdout)
    desc = ssd.describe_file(scratch / "describe.json")
    out = scratch / "runs"
    # the drive starts in steady state: written over several times, so that only a real purge
    # can bring the FOB plateau back
    pre = guest.run(["fio", "--name=pre", f"--filename={dev}", "--direct=1", "--ioengine=io_uring", "--rw=randwrite",
                     "--bs=4k", "--iodepth=32", f"--io_size={4 * p['capacity_bytes']}", "--norandommap"],
                    timeout=1800)
    assert pre.rc == 0, pre.stderr[-2000:]
    before = ssd.counters()
    assert before["free_blocks"] < 0.25 * p["blocks_per_die"] * p["dies"], before
    h0, off0 = clock_offset(guest)
    res = guest.run(["ssdpts", "run", "wsat", "--target", dev, "--destroy-data-on", SERIAL, "--describe", str(desc),
                     "--step-seconds", str(STEP_S), "--wsat-capacity-multiple", str(CAPACITY_MULTIPLE), "--wsat-hours", "2",
                     "--threads", "1", "--iodepth", "32",
                     "--out", str(out), "--quiet"], timeout=3600)
    assert res.rc == 0, res.stdout[-2000:] + res.stderr[-3000:]
    h1, off1 = clock_offset(guest)
    rate = 1 + (off1 - off0) / (h1 - h0)  # guest seconds per host second
    assert abs(rate - 1) < 0.1, rate
    run = next(d for d in out.iterdir() if d.is_dir())
    man = json.loads((run / "manifest.json").read_text())
    purge = man["parts"]["wsat"]["purge"]
    assert purge["method"] == "nvme-format" and purge["is_pts_purge"], purge

    def host_time(t: float) -> float:  # the guest's epoch on the host's clock, the offset drifting linearly
        return t - (off0 + (off1 - off0) * (t - off0 - h0) / (h1 - h0))

    ran = Run.read(run)
    drive = Drive(ssd.wait_truth(host_time(ran.of("wsat")[-1]["measurement"]["end_time"]) + 0.5), ssd.io_log_path, p)
    after = ssd.counters()
    v = nvme_proof(ran, drive, before, after, host_time, rate)
    record("nvme-wsat", controller=info.get("identity", {}).get("model"), purge=purge["method"],
           guest_clock_rate=rate, guest_clock_offsets_s=(off0, off1), host_clock_at_s=(h0, h1), checks=v.checks,
           failures=[str(f) for f in v.failures], **v.figures)
    assert v.ok, v
    # the known error: ssdpts's IOPS 3% low
    low = nvme_proof(mutations.scale_iops(ran, 0.97), drive, before, after, host_time, rate)
    record("nvme-mutation", iops_low=str(low))
    assert low.failed("per-sample IOPS"), low
