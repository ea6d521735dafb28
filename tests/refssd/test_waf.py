"""WAF end to end on the reference SSD (slow): ssdpts runs WSAT on a loop device
over refssd's disk, its telemetry reads the drive's own counters from the ctl file beside it
('refssd-ctl'), and the write amplification its report shows per test is the simulator's over the
same span within 1% (tests/refssd/waf_proof.py: the flash pages from the truth log, the host
pages from the io log, not from the counters ssdpts reads), the drive's host bytes being what fio
wrote (1%). The report's datasheet shows the figure (its HTML cell's value is the one checked) and a
--targets line judges it. The proof fails when the host bytes come from the wrong span or the media
counter is one step off, and when the WAF it reports is 3% high or low.

The drive: 128 MiB, 25% over-provisioning, 32 pages of 4 KiB per block (tests/refssd/test_wsat_purge.py);
WSAT to 3 x capacity in 2-s steps (~40 s). Set REFSSD_FIGURES=FILE to collect the figures."""

from __future__ import annotations

import subprocess

import pytest

from . import waf_proof
from .conftest import refssd_host, require_refssd, ssdpts_run
from .proofs import Drive
from .test_wsat_purge import record
from ..report_numbers import html_numbers

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "128M", "pages_per_block": 32}
STEP_S = 2.0


@pytest.fixture(scope="module")
def waf_run(tmp_path_factory):
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), io_log=True, interval_ms=10, **DRIVE) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp("waf-runs"), "wsat", "--step-seconds", str(STEP_S),
                         "--wsat-capacity-multiple", "3", "--wsat-hours", "2")
        last = max(s["measurement"]["end_time"] for s in waf_proof.steps(run))
        yield run, Drive.of(ssd, last + 1.0)


def test_waf_per_test_is_the_simulators(waf_run):
    run, drive = waf_run
    v = waf_proof.waf_proof(run, drive)
    record("waf", checks=v.checks, failures=[str(f) for f in v.failures], margins=v.margins, **v.figures)
    assert v.ok, v
    assert all(m["host_pages_from"] == "io log" for m in v.margins), v.margins
    assert v.figures["wsat"]["ssdpts_waf"] > 1.2  # GC ran: the check is not 1.0 = 1.0


def test_the_report_shows_it_and_a_target_judges_it(waf_run, tmp_path):
    run, _ = waf_run
    targets = tmp_path / "targets.csv"
    targets.write_text("figure,limit,direction\nwaf_wsat,1.1,lower   # tighter than this drive can be\n")
    out = subprocess.run(["ssdpts", "report", str(run), "--targets", str(targets), "--format", "html"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    html = next(run.glob("report*.html")).read_text()
    cells = {ref: val for table, val, ref, _ in html_numbers(html) if table in ("datasheet-wa", "datasheet-table")}
    assert cells["wsat:waf"] == pytest.approx(waf_proof.ssdpts_waf(run)["wsat"]["waf"], rel=1e-9)
    assert "Write amplification, wsat" in html and "FAIL" in html


def test_waf_proof_fails_on_known_errors(waf_run):
    run, drive = waf_run
    recs = waf_proof.steps(run)
    host = waf_proof.waf_proof(run, drive, waf_proof.host_from_wrong_span(recs, "wsat"))
    assert host.failed("WAF wsat"), host
    media = waf_proof.waf_proof(run, drive, waf_proof.media_off_by_a_step(recs, "wsat"))
    assert media.failed("WAF wsat"), media
    # the reported figure 3% high or low
    high, low = (waf_proof.waf_proof(run, drive, scale=k) for k in (1.03, 0.97))
    assert high.failed("WAF wsat") and low.failed("WAF wsat"), (high, low)
    record("waf-mutations", host_wrong_span=str(host), media_off_by_a_step=str(media), waf_x103=str(high),
           waf_x097=str(low))
