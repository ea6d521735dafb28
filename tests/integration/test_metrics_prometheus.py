"""ssdpts status's metrics, end to end (docs/status.md "Live metrics"): a real run (fio, LAT on a loop
device) measured while `ssdpts status --serve` answers /metrics, Debian's Prometheus server scraping
it every second, and the values read back through Prometheus's HTTP query API, checked against the
run's own files; and the textfile that node_exporter reads, parsed by prometheus_client's parser."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from ssdpts.metrics import FAMILIES
from ssdpts.results.reader import read_run

PROMETHEUS = shutil.which("prometheus")
pytestmark = [
    pytest.mark.slow,  # about a minute: make test-full, which installs the Prometheus server
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed: apt-get install fio"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port: int, expr: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.loads(r.read())
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def wait_for(what: str, fn, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            got = fn()
        except OSError:
            got = None
        if got:
            return got
        time.sleep(0.5)
    pytest.fail(f"{what}: not seen in {timeout:.0f} s")


def test_prometheus_scrapes_a_running_run(make_loop, tmp_path):
    assert PROMETHEUS is not None, "make test-full installs the Prometheus server (Debian: apt-get install prometheus)"
    dev = make_loop("256M")
    runs = tmp_path / "runs"
    runs.mkdir()
    mport, pport = free_port(), free_port()
    env = {**os.environ, "SSDPTS_DB": str(tmp_path / "r.db")}
    run = subprocess.Popen(["ssdpts", "run", "lat", "--target", dev, "--destroy-data-on", dev, "--step-seconds", "1",
                            "--max-rounds", "6", "--out", str(runs), "--quiet"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    serve = subprocess.Popen(["ssdpts", "status", str(runs), "--serve", f"127.0.0.1:{mport}", "--interval", "0.5",
                              "--openmetrics", str(tmp_path / "ssdpts.prom")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                   f"  - job_name: ssdpts\n    static_configs:\n      - targets: ['127.0.0.1:{mport}']\n")
    prom = subprocess.Popen([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{pport}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        running = wait_for("a running run in Prometheus",
                           lambda: query(pport, 'ssdpts_run_state{state="running"} == 1'), timeout=180)
        live = wait_for("live IOPS in Prometheus", lambda: query(pport, "ssdpts_live_iops > 0"), timeout=180)
        rnd = wait_for("the round in Prometheus", lambda: query(pport, "ssdpts_run_round >= 1"))
        assert run.wait(timeout=600) == 0, run.stderr.read()
        (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
        res = read_run(run_dir, steps=True)
        labels = running[0]["metric"]
        # the labels are the run's: its directory, the id the results library gives it, its device
        assert labels["run"] == run_dir.name and labels["run_id"] == res.uid and labels["device"] == dev
        assert labels["host"] == res.manifest.host.get("hostname") and labels["job"] == "ssdpts"
        assert live[0]["metric"]["part"] == "lat" and rnd[0]["metric"]["part"] == "lat"
        # a live sample is a rate the device did: within the range of the run's own step IOPS
        # (a one-second sample of a 1-second step on a loop device: a factor of 4 either way)
        step_iops = [s.measurement.iops for s in res.steps if s.phase == "round"]
        iops = float(live[0]["value"][1])
        assert min(step_iops) / 4 <= iops <= max(step_iops) * 4, (iops, min(step_iops), max(step_iops))
        done = wait_for("the complete run in Prometheus",
                        lambda: query(pport, 'ssdpts_run_state{state="complete"} == 1'))
        assert done[0]["metric"]["run_id"] == res.uid
        assert not query(pport, "ssdpts_live_iops")  # nothing live once the run has ended
        steady = query(pport, "last_over_time(ssdpts_tracking_steady[10m])")
        assert steady and {s["metric"]["part"] for s in steady} == {"lat"}
        # every query of the dashboard in docs is one Prometheus accepts, and each names a series it has
        dash = json.loads((Path(__file__).parents[2] / "docs" / "grafana-ssdpts.json").read_text())
        exprs = [t["expr"].replace("$host", ".*") for p in dash["panels"] for t in p["targets"]]
        names = {n for e in exprs for n in re.findall(r"\bssdpts_[a-z_]+", e)}
        assert names <= set(FAMILIES), names - set(FAMILIES)
        for e in exprs:
            query(pport, e)  # status "success", or the assertion in query() fails
    finally:
        for p in (run, serve, prom):
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in (run, serve, prom):
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
    assert serve.returncode in (0, 130), serve.stderr.read()
    # the textfile node_exporter reads, in the Prometheus text format
    from prometheus_client.parser import text_string_to_metric_families

    fams = {f.name: f for f in text_string_to_metric_families((tmp_path / "ssdpts.prom").read_text())}
    (state,) = [s for s in fams["ssdpts_run_state"].samples if s.labels["state"] == "complete"]
    assert state.value == 1.0 and state.labels["run_id"] == res.uid
