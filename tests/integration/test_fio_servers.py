"""Many hosts (issue 17): two fio servers (``fio --server`` on 127.0.0.1, two ports), each with its own
zram device, driven by one 'ssdpts run --host ... --target HOST:DEV' through fio --client. One
server is killed mid-run: that host's run ends 'interrupted' with its finished rounds kept, the other
completes; 'resume' finishes the first once its server is back. LAT (6 steps a round), 0.05-s steps,
TC 1 / QD 4, five rounds: well under a minute."""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import socket
import subprocess
import time

import pytest

from ssdpts.results.verify import integrity

from .conftest import ssdpts
from .test_parallel_devices import _rounds_done, _run_dirs, _wait
from .test_run_devices import recompute_and_compare, steps_of

pytestmark = pytest.mark.root

FAST = ["--step-seconds", "0.05", "--threads", "1", "--iodepth", "4", "--max-rounds", "5"]
LAT_STEPS = 6  # 2 block sizes x 3 R/W mixes (0.5 KiB is below zram's 4096-byte logical block)


@pytest.fixture(autouse=True)
def _html_only(monkeypatch):
    monkeypatch.setenv("SSDPTS_CHROMIUM", "ssdpts-test-no-chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(address: str, proc: subprocess.Popen, log: Path, timeout_s: float = 10) -> None:
    """Until the fio server at ``address`` (process ``proc``, output in ``log``) listens."""
    t0 = time.monotonic()
    while True:  # fio's client without a job file: connects and exits, silent once the server listens
        probe = subprocess.run(["fio", f"--client={address}"], capture_output=True, text=True, timeout=10)
        if "connect" not in probe.stdout + probe.stderr:
            return
        assert proc.poll() is None and time.monotonic() - t0 < timeout_s, log.read_text()
        time.sleep(0.05)


class Server:
    """A fio server on 127.0.0.1:port, in a process group of its own (killed whole: its forked
    per-client process and job threads with it)."""

    def __init__(self, tmp: Path, port: int):
        self.port, self.log, self.proc = port, tmp / f"fio-server-{port}.log", None

    @property
    def address(self) -> str:
        return f"ip:127.0.0.1,{self.port}"

    def start(self) -> None:
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(["fio", f"--server={self.address}"], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        wait_listening(self.address, self.proc, self.log)

    def kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the whole group, even if the leader has ended
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)
        # its per-client child may outlive the leader for a moment: wait for the whole group
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)


@pytest.fixture
def fio_servers(tmp_path):
    servers = [Server(tmp_path, _free_port()) for _ in range(2)]
    try:
        for s in servers:
            s.start()
        yield servers
    finally:  # also when one did not start: never leave a server behind
        for s in servers:
            s.kill()


def _lat_shape(run: Path, server: Server) -> None:
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "complete", man.get("error") or man.get("interruption")
    assert man["executor"] == "fio-client" and man["fio_server"] == server.address
    assert not man["pts_compliant"] and any("fio server's stonewall" in d for d in man["deviations"])
    rounds: dict[int, list[int]] = {}
    for s in steps_of(run):
        if s["phase"] == "round":
            rounds.setdefault(s["round"], []).append(s["index"])
            assert s["timeline"]["source"] == "fio end of run (fio server)"
            assert s.get("boundary") is None  # not measured: no gate on a fio server
    assert sorted(rounds) == list(range(1, len(rounds) + 1))
    assert all(sorted(ix) == list(range(1, LAT_STEPS + 1)) for ix in rounds.values())
    out = json.loads((run / "fio/lat/round-001.json").read_text())
    assert "client_stats" in out and {j["port"] for j in out["client_stats"]} == {server.port}
    recompute_and_compare(run)
    report = (run / "report.html").read_text()
    assert 'id="boundaries"' not in report and not integrity.check(run).problems


def test_two_fio_servers_one_killed_then_resumed(make_zram, fio_servers, tmp_path):
    devs = [make_zram(64 * 2**20) for _ in range(2)]
    a, b = fio_servers
    out = tmp_path / "runs"
    argv = ["ssdpts", "run", "lat", "--host", f"a={a.address}", "--host", f"b={b.address}",
            "--target", f"a:{devs[0]}", "--target", f"b:{devs[1]}",
            "--destroy-data-on", devs[0], "--destroy-data-on", devs[1], *FAST, "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def a_round_done() -> bool:
        runs = _run_dirs(out) if out.exists() else {}
        return devs[0] in runs and (runs[devs[0]] / "steps.jsonl").exists() and _rounds_done(runs[devs[0]]) >= 1

    _wait(a_round_done, proc, f"a round on host a ({devs[0]})")
    a.kill()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    runs = _run_dirs(out)
    _lat_shape(runs[devs[1]], b)
    arun = runs[devs[0]]
    man = json.loads((arun / "manifest.json").read_text())
    assert man["status"] == "interrupted", man
    assert f"fio server {a.address} went away" in man["interruption"]["reason"] and man["interruption"]["host_lost"] is True
    kept = _rounds_done(arun)
    assert kept >= 1 and not integrity.check(arun).problems
    assert f"a:{devs[0]}: interrupted, {arun}" in stdout and f"b:{devs[1]}: complete" in stdout

    r = ssdpts("resume", str(out), "--destroy-data-on", devs[0], timeout=120)
    assert r.returncode == 2 and f"fio server {a.address} does not answer" in r.stderr, (r.returncode, r.stderr)
    assert json.loads((arun / "manifest.json").read_text())["status"] == "interrupted"  # untouched
    a.start()
    r = ssdpts("resume", str(out), "--destroy-data-on", devs[0], timeout=120)
    assert r.returncode == 0, r.stderr
    _lat_shape(arun, a)
    man = json.loads((arun / "manifest.json").read_text())
    assert man["resumptions"][-1]["previous_status"] in ("interrupted", "failed")
    assert man["resumptions"][0]["steps_kept"] >= kept * LAT_STEPS


def _ios(dev: str) -> int:
    """Reads and writes the device completed (LAT's first step reads only)."""
    f = Path(f"/sys/block/{os.path.basename(dev)}/stat").read_text().split()
    return int(f[0]) + int(f[4])


def test_ctrl_c_stops_the_servers_job_too(make_zram, fio_servers, tmp_path):
    """A signal to ssdpts interrupts the run as a local one, and the fio server stops the round's job
    at once (fio's client is told with SIGINT: a killed client would leave the server writing)."""
    dev = make_zram(64 * 2**20)
    a = fio_servers[0]
    out = tmp_path / "runs"
    proc = subprocess.Popen(["ssdpts", "run", "lat", "--fio-server", a.address, "--target", dev,
                             "--destroy-data-on", dev, "--step-seconds", "5", "--threads", "1", "--iodepth", "4",
                             "--max-rounds", "5", "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait(lambda: any(out.glob("*/fio/lat/round-001.fio")), proc, "round 1")
    t0 = time.monotonic()
    while _ios(dev) == (w := _ios(dev)) and time.monotonic() - t0 < 10:  # its first 5-s step runs
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    # the stop travels ssdpts -> fio's client -> the server's job: wait until the counters hold still
    # for 0.3 s, at most 2.5 s after the signal (the step would go on to 5 s), then 1 s more
    t0, before, still = time.monotonic(), _ios(dev), time.monotonic()
    while time.monotonic() - still < 0.3 and time.monotonic() - t0 < 2.5:
        time.sleep(0.05)
        if (now := _ios(dev)) != before:
            before, still = now, time.monotonic()
    time.sleep(1.0)  # still within the step the server was running
    assert _ios(dev) == before, "the fio server went on with the step after ssdpts was interrupted"
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    (run,) = [d for d in out.iterdir() if (d / "manifest.json").exists()]
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "interrupted" and man["interruption"]["signal"] == "SIGINT"
