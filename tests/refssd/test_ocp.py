"""ocp-trim on the reference SSD (docs/ocp.md): the same drive served twice, once without
deallocation processing (a trim is a mapping update: reads never wait for it) and once with it
(each deallocated page costs its die 300 µs after the trim completes, and reads queue behind it).
The proof (ocp_proof.py): ssdpts's change of mean read latency within 2 pp of the drive's own (its
io log's service times over ssdpts's windows), the clean drive passes at 5% and the other fails, and
ssdpts's figure made 5% low fails the proof (the mutation check). The drive's reads take ~3 ms
(tR 3,000 µs) so that the host's path (~0.1-0.2 ms) is a small part of every latency.
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run
from .ocp_proof import ocp_proof, with_under_mean
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "64M", "pages_per_block": 32, "t_read_us": 3000}
ARGS = ("ocp-trim", "--step-seconds", "3", "--ocp-trim-rate", "10", "--ocp-trim-size", "1M")


def _run(tmp_path_factory, name: str, **extra):
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp(f"refssd-{name}"), io_log=True, interval_ms=10,
                                  **DRIVE, **extra) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp(f"ocp-{name}"), *ARGS, timeout=900)
        ssd.stop()
        summary = json.loads((run / "summary.json").read_text())
        return ocp_proof(summary, "ocp-trim", ssd.io_log_path, ssd.truth_path), summary, ssd


def test_ocp_trim_against_the_drives_deallocation_processing(tmp_path_factory):
    require_refssd()
    clean, _, _ = _run(tmp_path_factory, "clean")
    busy, summary, ssd = _run(tmp_path_factory, "dealloc", dealloc_die_us_per_page=300)
    low = ocp_proof(with_under_mean(summary, "ocp-trim", 0.95), "ocp-trim", ssd.io_log_path, ssd.truth_path)
    record("ocp-trim", clean=clean.figures, dealloc=busy.figures, mutation={"mean under x 0.95": str(low)})
    assert clean.ok, clean
    assert busy.ok, busy
    assert clean.figures["verdict"] == "pass", clean.figures
    assert busy.figures["verdict"] == "fail" and busy.figures["truth_change_pct"] > 5.0, busy.figures
    assert busy.figures["trim"]["waited_dealloc_us_per_read"] > 0 == clean.figures["trim"]["waited_dealloc_us_per_read"]
    assert low.failed("change vs truth"), low
