"""Client test active range segmentation on a real device: a client-profile LAT run with
--ar-segments 2048 on a loop device, traced with the kernel's block_bio_queue tracepoint in a
private ftrace instance. Every IO of the test loop (4 KiB and smaller: WIPC writes 128 KiB) must
land in the segments the run recorded, and the segments must be the ones the job files name."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from ssdpts.engine.fioparse import parse_fio_output

from .conftest import ssdpts
from .test_run_devices import run_dir_of

pytestmark = pytest.mark.root

TRACEFS = Path("/sys/kernel/tracing")


class BioTrace:
    """block_bio_queue events of one device in a private ftrace instance (never the global buffer)."""

    def __init__(self, dev: str):
        st = os.stat(dev)
        self.devt = (os.major(st.st_rdev) << 20) | os.minor(st.st_rdev)
        self.inst = TRACEFS / "instances" / f"ssdpts-segments-{os.getpid()}"

    def __enter__(self) -> "BioTrace":
        if not (TRACEFS / "instances").is_dir():
            pytest.skip("tracefs is not mounted at /sys/kernel/tracing")
        self.inst.mkdir()
        (self.inst / "buffer_size_kb").write_text("32768")
        ev = self.inst / "events" / "block" / "block_bio_queue"
        (ev / "filter").write_text(f"dev == {self.devt}")
        (ev / "enable").write_text("1")
        return self

    def sectors(self, comm: str = "fio") -> list[tuple[int, int]]:
        """(sector, sectors) of every bio a process named ``comm`` queued (the kernel's and udev's
        own reads of the partition table are not the test's)."""
        out = []
        for line in (self.inst / "trace").read_text().splitlines():
            if "block_bio_queue:" in line:
                rest = line.split("block_bio_queue:")[1].split()  # "7,3 WS 123456 + 8 [fio]"
                if rest[5].strip("[]").startswith(comm):
                    out.append((int(rest[2]), int(rest[4])))
        return out

    def lost(self) -> int:
        """Events the instance's buffer lost (overwritten or dropped), over all CPUs: a trace that
        lost any cannot say that every IO was seen."""
        n = 0
        for stats in (self.inst / "per_cpu").glob("cpu*/stats"):
            for line in stats.read_text().splitlines():
                key, _, val = line.partition(":")
                if key.strip() in ("overrun", "dropped events"):
                    n += int(val.split()[0])
        return n

    def __exit__(self, *exc) -> None:
        (self.inst / "events" / "block" / "block_bio_queue" / "enable").write_text("0")
        self.inst.rmdir()


def _empty_segments_bound(n: int, segments: int = 100, p: float = 1e-6) -> int:
    """The number of segments that n uniform IOs leave empty is exceeded with probability < p
    (Poisson with the expected count, a close upper tail for this occupancy problem)."""
    lam = segments * (1 - 1 / segments) ** n
    k, term = 0, math.exp(-lam)
    tail = 1.0 - term
    while tail >= p:
        k += 1
        term *= lam / k
        tail -= term
    return k


def test_client_segments_hold_every_test_io(make_loop, tmp_path):
    from ssdpts.pts.plan import active_range_bytes
    from ssdpts.pts.segments import place

    dev = make_loop("512M")
    out = tmp_path / "runs"
    with BioTrace(dev) as trace:
        r = ssdpts("run", "lat", "--target", dev, "--profile", "client", "--ar-segments", "2048", "--ar-amount", "128M",
                   "--step-seconds", "0.05", "--max-rounds", "5", "--destroy-data-on", dev, "--out", str(out), "--quiet",
                   env={**os.environ, "SSDPTS_DB": str(tmp_path / "db")})
        assert r.returncode == 0, r.stderr
        bios = trace.sectors()
        lost = trace.lost()
    run = run_dir_of(out)
    man = json.loads((run / "manifest.json").read_text())
    assert any("100 random, non-adjacent segments instead of 2048" in d for d in man["deviations"])
    ar = man["active_range_bytes"]
    assert ar == active_range_bytes(512 * 2**20, 75.0)
    segs = place(ar, 128 * 2**20, 2048, man["run_spec"]["seed"])
    assert len(segs) == 100 and all(b[0] - (a[0] + a[1]) >= 2**20 for a, b in zip(segs, segs[1:]))  # none adjacent
    job = (run / "fio" / "lat" / "round-001.fio").read_text()
    rd = {ln.split("=", 1)[1] for ln in job.splitlines() if ln.startswith("random_distribution=")}
    assert len(rd) == 1 and rd.pop().count(":1/") == 100  # every test step: 100 zones of 1% each
    assert "random_distribution" not in (run / "fio" / "lat" / "wipc.fio").read_text()
    # PTS-C: the write cache enabled on the device, and O_DIRECT kept (AD drops direct=1 instead)
    assert man["write_cache_record"]["requested"] == "enabled" and "direct=1" in job.splitlines()
    small = [(s * 512, n * 512) for s, n in bios if n * 512 <= 8192]
    # Every test IO was traced: as many as fio completed in the rounds, and the buffer lost none.
    # (How many there are depends on the host: at load 11 a run did 6,560, at load 18 1,056; the
    # trace held exactly fio's count in both.)
    assert lost == 0, f"the trace buffer lost {lost} events: it cannot show where every IO went"
    fio_ios = sum(int(j[d]["total_ios"]) for f in sorted((run / "fio" / "lat").glob("round-*.json"))
                  for j in parse_fio_output(f.read_text()).jobs for d in ("read", "write"))
    assert len(small) == fio_ios, f"traced {len(small)} test IOs, fio completed {fio_ios}"
    assert len(small) >= 100, f"only {len(small)} test IOs ran (a host too busy to test the spread)"
    outside = [(off, ln) for off, ln in small
               if not any(o <= off and off + ln <= o + sz for o, sz in segs)]
    assert not outside, f"{len(outside)} of {len(small)} test IOs outside the segments, e.g. {outside[:3]}"
    hit = {i for off, _ in small for i, (o, sz) in enumerate(segs) if o <= off < o + sz}
    # ... and they spread over every segment: n IOs, each in one of 100 segments of 1% at random,
    # leave a segment without any with probability 0.99**n; allowed are as many empty segments as
    # such chance leaves with probability 1e-6 (none from 2,000 IOs on; 1,000: 2; 369: 13)
    assert 100 - len(hit) <= _empty_segments_bound(len(small)), (len(small), 100 - len(hit))
    big = [n for _, n in bios if n * 512 > 8192]
    assert big  # the WIPC's sequential writes ran over the whole range
    # the segments are disclosed where they are read: the report's test header and the plan
    from ssdpts.report.assemble import load

    hdr = dict(load(run).tests["lat"].setup)
    assert hdr["AR segments"].startswith("test active range: 100 random, non-adjacent segments of 1 MiB")
    p = ssdpts("plan", "lat", "--target", dev, "--profile", "client", "--ar-segments", "2048", "--ar-amount", "128M",
               "--step-seconds", "0.05", "--max-rounds", "5", "--fio")
    assert p.returncode == 0, p.stderr
    assert "segments test active range: 100 random, non-adjacent segments" in " ".join(p.stdout.split())
    ran = next(ln for ln in job.splitlines() if ln.startswith("random_distribution="))
    assert ran in p.stdout.splitlines()  # the plan's job file names the very zones the run used, on one line
