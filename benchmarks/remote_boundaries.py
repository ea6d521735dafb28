"""Idle per step boundary of a device on another host, measured at the block layer: local fio
through the step gate, a fio server through the gate on the device's host (``ssdpts agent``,
docs/hosts.md), and the same fio server scheduling the steps by ``stonewall`` (no agent), side by side.

    sudo python benchmarks/remote_boundaries.py [--device zram|loop] [--step-seconds 1] [--rounds 5]
        [--schedule local|remote-gate|stonewall|all] [--load N]

The "other host" is a network namespace with its own veth address (as in
tests/integration/test_remote_hosts.py): its fio server listens there only, and its agent is
started through ``ip netns exec NS``, so the IO, the json+ and the agent's requests cross a network
stack; the device itself is this host's, so one block trace (a private ftrace instance on it,
engine/blocktrace.py, independent of ssdpts's own records) measures every schedule the same way.
Each schedule runs the same LAT rounds (TC1/QD1) one after another, each round given the next as
``batch.next`` as the runner does; the report per schedule is benchmarks/boundaries.py's (idle
within and between rounds: median, worst, how many over 10 ms; overlaps; IOs at QD > 1; where
ssdpts recorded a timeline, its agreement with the trace). Prints one summary table at the end.
A measurement, not a test: the figures depend on the host and its load (the load average is given).
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
import os
from pathlib import Path
import signal
import socket
import subprocess
import tempfile
import time

from _devices import loop_device, zram_device
from boundaries import _batch, cpu_load, report, rounds_of, run_gate

from ssdpts.device.remote.remote import RemoteSide
from ssdpts.engine import blocktrace as bt
from ssdpts.engine.fio import FioExecutor
from ssdpts.engine.fioclient import FioClientExecutor

SCHEDULES = ("local", "remote-gate", "stonewall")
PORT = 8765


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=30)


@contextmanager
def other_host():
    """A network namespace with its own address and a fio server listening only there: yields
    (the remote shell's argv prefix, the server's address)."""
    n = os.getpid() % 200 + 20
    ns, veth = f"ssdpts-bench{os.getpid()}", f"vsb{os.getpid()}"
    ip, peer = f"10.232.{n}.2", f"10.232.{n}.1"
    server = None
    try:
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", veth, "type", "veth", "peer", "name", veth + "b")
        sh("ip", "link", "set", veth + "b", "netns", ns)
        sh("ip", "addr", "add", f"{peer}/24", "dev", veth)
        sh("ip", "link", "set", veth, "up")
        for cmd in (["ip", "addr", "add", f"{ip}/24", "dev", veth + "b"], ["ip", "link", "set", veth + "b", "up"],
                    ["ip", "link", "set", "lo", "up"]):
            sh("ip", "netns", "exec", ns, *cmd)
        shell = ["ip", "netns", "exec", ns]
        address = f"ip:{ip},{PORT}"
        server = subprocess.Popen([*shell, "fio", f"--server={address}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True,
                                  cwd=tempfile.gettempdir())
        for _ in range(100):
            try:
                socket.create_connection((ip, PORT), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield shell, address
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", veth], capture_output=True, check=False)


def run_client(ex: FioClientExecutor, dev: str, size: int, rounds: list[list], wd: Path) -> list[dict]:
    """As boundaries.run_gate, through a fio server's executor."""
    timelines: list[dict] = []
    batches = [_batch(steps, dev, size, wd, f"r{i}") for i, steps in enumerate(rounds, start=1)]
    for b, nxt in zip(batches, batches[1:] + [None]):
        b.next = nxt
        timelines += ex.run(b).timelines
    ex.cancel_ahead()
    ex.close()
    return timelines


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM too: remove the namespace, the scratch device and the trace


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("loop", "zram"), default="zram")
    ap.add_argument("--step-seconds", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--schedule", choices=(*SCHEDULES, "all"), default="all")
    ap.add_argument("--load", type=int, default=0, metavar="N", help="N busy-loop processes beside the run")
    a = ap.parse_args()
    size = 1024**3
    make = loop_device if a.device == "loop" else zram_device
    schedules = SCHEDULES if a.schedule == "all" else (a.schedule,)
    print(f"lat rounds of {a.step_seconds:g}-s steps x {a.rounds} on {a.device}, fio {FioExecutor().version()}, "
          f"{os.cpu_count()} CPUs, --load {a.load}, kernel {os.uname().release}")
    results = []
    with make(size) as dev, cpu_load(a.load), other_host() as (shell, address):
        name = os.path.basename(os.path.realpath(dev))
        nomerges = Path(f"/sys/block/{name}/queue/nomerges")
        if nomerges.exists():  # a merged pair of IOs would look like one IO of twice the size
            nomerges.write_text("2")
        lbs = int(Path(f"/sys/block/{name}/queue/logical_block_size").read_text())
        rounds = rounds_of("lat", size, a.step_seconds, a.rounds, lbs)
        for how in schedules:
            with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
                wd = Path(d)
                load0 = os.getloadavg()[0]
                off = min((time.time_ns() - time.monotonic_ns() for _ in range(5)))
                with bt.BlockTrace(dev, wd / "trace.txt") as tr:
                    if how == "local":
                        tls = run_gate(dev, size, rounds, wd)
                    elif how == "remote-gate":
                        with RemoteSide(shell, dev, name="bench") as side:
                            tls = run_client(FioClientExecutor(address, agent=side), dev, size, rounds, wd)
                    else:
                        tls = None
                        run_client(FioClientExecutor(address), dev, size, rounds, wd)
                print(f"\n(load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after)")
                results.append(report(how, tr.ios(), rounds, tls, off, True))
    print("\nidle per boundary at the block layer, ms (median / worst, how many over 10 ms):")
    print(f"{'schedule':12s} {'within rounds':>28s} {'between rounds':>28s}")
    for r in results:
        cells = []
        for kind in ("within rounds", "between rounds"):
            k = r[kind]
            cells.append("-" if k["idle_median_ms"] is None else
                         f"{k['idle_median_ms']:.1f} / {k['idle_worst_ms']:.1f} ({k['over_limit']} of {k['n']})")
        print(f"{r['schedule']:12s} {cells[0]:>28s} {cells[1]:>28s}")


if __name__ == "__main__":
    main()
