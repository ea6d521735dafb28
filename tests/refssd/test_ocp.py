"""The OCP tests on the reference SSD (docs/ocp.md), each on the same drive served twice: once
without the interference and once with it. The proof (ocp_proof.py): ssdpts's change of mean read
latency within 2 pp of the drive's own (its io log's service times over ssdpts's windows), the
clean drive passes at 5% and the other fails, and ssdpts's figure made 5% low fails the proof (the
mutation check).

* ocp-trim: deallocation processing (each deallocated page costs its die 600 µs after the trim
  completes; reads queue behind it) against a drive where a trim is a mapping update only;
* ocp-idle-gc: idle GC that goes on while the host only reads, against one that stops when reads
  arrive.

What keeps the host's path (FUSE, loop device, fio: 0.1-0.2 ms a read, more on a loaded host) out
of the figures as far as it can be: the drive's reads take ~6 ms (tR 6,000 µs), so the path is
~2-3% of every latency and its drift between two phases a fraction of that; the phases are long
(10 s, ~1,600 reads, so that p99 is not a handful of host hiccups); ssdpts runs with --realtime and
the drive's threads at SCHED_FIFO, so a busy host delays neither the reads nor their completions.
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run
from .ocp_proof import ocp_proof, with_under_mean
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32, "t_read_us": 6000}
COMMON = ("--step-seconds", "1", "--ocp-read-s", "600")
TRIM = ("ocp-trim", *COMMON, "--ocp-trim-rate", "10", "--ocp-trim-size", "1M", "--ocp-judge", "mean")
IDLE = ("ocp-idle-gc", *COMMON, "--ocp-settle-s", "600", "--ocp-burst-s", "60")


INTERFERENCE = ("dealloc_die_us_per_page", "bg_gc_during_reads")  # what the clean drive is served without


def _run(tmp_path_factory, name: str, args, pid: str, **extra):
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp(f"refssd-{name}"), io_log=True, interval_ms=10,
                                  **DRIVE, **extra) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp(f"ocp-{name}"), *args, timeout=1500)
        ssd.stop()
        summary = json.loads((run / "summary.json").read_text())
        return ocp_proof(summary, pid, ssd.io_log_path, ssd.truth_path), summary, ssd


def _prove(tmp_path_factory, name: str, args, pid: str, under: str, wait_key: str, **interference):
    clean, _, _ = _run(tmp_path_factory, f"{name}-clean", args, pid, **{k: v for k, v in interference.items()
                                                                       if k not in INTERFERENCE})
    busy, summary, ssd = _run(tmp_path_factory, name, args, pid, **interference)
    low = ocp_proof(with_under_mean(summary, pid, 0.95), pid, ssd.io_log_path, ssd.truth_path)
    record(name, clean=clean.figures, interference=busy.figures, mutation={"mean under x 0.95": str(low)})
    assert clean.ok, clean
    assert busy.ok, busy
    assert clean.figures["verdict"] == "pass", clean.figures
    assert busy.figures["verdict"] == "fail" and busy.figures["truth_change_pct"] > 5.0, busy.figures
    assert busy.figures[under][wait_key] > 0 == clean.figures[under][wait_key]
    assert low.failed("change vs truth"), low


def test_ocp_trim_against_the_drives_deallocation_processing(tmp_path_factory):
    require_refssd()
    _prove(tmp_path_factory, "ocp-trim", TRIM, "ocp-trim", "trim", "waited_dealloc_us_per_read",
           dealloc_die_us_per_page=1500)


def test_ocp_idle_gc_against_the_drives_idle_gc(tmp_path_factory):
    require_refssd()
    _prove(tmp_path_factory, "ocp-idle-gc", IDLE, "ocp-idle-gc-measure", "after-burst", "waited_bg_gc_us_per_read",
           bg_gc_during_reads="yes", bg_gc_free_fraction=0.2)
