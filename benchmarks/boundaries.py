"""Step and round boundaries measured at the block layer, independently of ssdpts.

    sudo python benchmarks/boundaries.py [--device loop|zram] [--test lat|iops] [--step-seconds S]
        [--rounds N] [--schedule gate|startdelay|stonewall|wait_for|process|server|all] [--load N]

Runs N rounds of the LAT test (9 steps, TC1/QD1) or the IOPS test (56 steps, TC4/QD32) on a
scratch device with the chosen schedule, while the kernel's block tracepoints record every IO of
that device (a private ftrace instance; engine/blocktrace.py). From the trace alone (each IO is
given to a step by its size: consecutive steps always differ in block size) it prints, for the
boundaries within rounds and those between rounds:

* idle: the first IO of the next step issued minus the last IO of the previous step completed,
  when positive (no IO in flight); median, worst, and how many exceed the 10 ms limit;
* overlap: the same difference when negative (both steps' IOs in flight), and how many IOs of the
  next step were issued while the previous step still had one in flight;
* IOs issued while another IO was in flight (for LAT, TC1/QD1: IOs issued at QD > 1);
* for the gate schedule (the one ssdpts uses), the agreement of what ssdpts recorded in its
  timeline (steps.jsonl "timeline", "boundary") with the trace, per boundary.

Schedules: gate = ssdpts' FioExecutor (steps released through exec_prerun barriers, the next
round's fio started ahead); startdelay = the schedule ssdpts used before (one fio per round, steps
at startdelay offsets); stonewall / wait_for = one fio per round, each step waiting for the
previous one by fio's own options; process = one fio per step; server = one persistent
``fio --server``, one ``fio --client`` submission per step.

``--load N`` runs N busy loops (one Python process each, ``while True: pass``) beside the
benchmark: on a 2-core host, ``--load 2`` keeps both cores busy. Load averages are printed.
A measurement, not a test: the figures depend on the host and its load.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
import json
import os
from pathlib import Path
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _devices import loop_device, zram_device

from ssdpts.engine import blocktrace as bt
from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor, default_ioengine
from ssdpts.engine.jobfile import render_job_file
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import active_range_bytes, build_parts

SCHEDULES = ("gate", "startdelay", "stonewall", "wait_for", "process", "server")
LIMIT_MS = 10.0


@contextmanager
def cpu_load(n: int):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def rounds_of(test: str, size: int, step_s: float, n: int, lbs: int = 512) -> list[list]:
    spec = RunSpec(tests=(test,), step_seconds=step_s, ioengine=default_ioengine())
    part = build_parts(spec, size, lbs)[0]  # zram: 4 KiB logical blocks, no 0.5 KiB steps
    return [part.round_steps(r) for r in range(1, n + 1)]


def _batch(steps, dev: str, size: int, wd: Path, name: str) -> Batch:
    return Batch(steps=steps, filename=dev, area=Area(0, active_range_bytes(size, 100)), seed=1,
                 ioengine=default_ioengine(), job_path=wd / f"{name}.fio", output_path=wd / f"{name}.json")


def run_gate(dev: str, size: int, rounds: list[list], wd: Path) -> list[dict]:
    """ssdpts' own executor, each round given the next as batch.next (as the runner does)."""
    ex = FioExecutor()
    timelines: list[dict] = []
    batches = [_batch(steps, dev, size, wd, f"r{i}") for i, steps in enumerate(rounds, start=1)]
    for b, nxt in zip(batches, batches[1:] + [None]):
        b.next = nxt
        timelines += ex.run(b).timelines
    ex.cancel_ahead()
    return timelines


def _fio(job: Path, out: Path, client: str | None = None) -> None:
    argv = ["fio", "--output-format=json", f"--output={out}", str(job)]
    if client:
        argv.insert(1, f"--client={client}")
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def run_fio_schedule(dev: str, size: int, rounds: list[list], wd: Path, how: str) -> None:
    """The alternatives, each round (or step) a fio process started after the previous one exited."""
    server = None
    sock = wd / "fio.sock"
    if how == "server":
        server = subprocess.Popen(["fio", f"--server=sock:{sock}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
    try:
        for r, steps in enumerate(rounds, start=1):
            if how in ("process", "server"):
                for i, s in enumerate(steps, start=1):
                    text, _ = render_job_file(_batch([s], dev, size, wd, "p"))
                    (wd / "p.fio").write_text(text)
                    _fio(wd / "p.fio", wd / f"r{r}s{i}.json", client=f"sock:{sock}" if server else None)
                continue
            text, _ = render_job_file(_batch(steps, dev, size, wd, "r"))
            if how != "startdelay":
                text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("startdelay="))
            if how == "stonewall":
                text = text.replace("new_group", "stonewall")
            elif how == "wait_for":
                out, n = [], 0
                for ln in text.splitlines():
                    out.append(ln)
                    if ln.startswith("[s"):
                        n += 1
                        if n > 1:
                            out.append(f"wait_for=s{n - 1:04d}")
                text = "\n".join(out)
            (wd / f"r{r}.fio").write_text(text)
            _fio(wd / f"r{r}.fio", wd / f"r{r}.json")
    finally:
        if server is not None:
            server.terminate()
            server.wait()


def _stats(vals: list[float]) -> str:
    if not vals:
        return "-"
    return f"median {statistics.median(vals):7.2f}  worst {max(vals):7.2f}"


def report(name: str, ios: bt.TracedIOs, rounds: list[list], timelines: list[dict] | None, mono_to_unix_ns: int,
           qd1: bool) -> dict:
    steps = [s for r in rounds for s in r]
    shapes = [bt.StepShape.of(s.workload) for s in steps]
    owner = bt.attribute(ios, shapes)
    spans = bt.step_spans(ios, owner, len(steps))
    bounds = bt.boundaries(ios, owner, spans)
    busy = bt.issued_while_busy(ios)
    n = len(rounds[0])
    out = {"schedule": name, "ios": len(ios), "unattributed": int((owner < 0).sum()),
           "ios_issued_while_busy": int(busy.sum())}
    print(f"\n== {name}: {len(ios)} IOs traced ({out['unattributed']} unattributed), "
          f"{sum(1 for s in spans if s is None)} steps without IO")
    for kind, grp in (("within rounds", [b for b in bounds if b.next % n]),
                      ("between rounds", [b for b in bounds if not b.next % n])):
        idle = [b.idle_ms for b in grp]
        over = [b.overlap_ms for b in grp if b.overlap_ms > 0]
        print(f"  {kind:15s} {len(grp):3d} boundaries  idle ms: {_stats(idle)}  over {LIMIT_MS:g} ms: "
              f"{sum(1 for x in idle if x > LIMIT_MS):3d}  overlapping: {len(over):3d} "
              f"(worst {max(over, default=0):.2f} ms, {sum(b.overlapping_ios for b in grp)} IOs of the next step "
              f"issued while the previous one had an IO in flight)")
        out[kind] = {"n": len(grp), "idle_median_ms": statistics.median(idle) if idle else None,
                     "idle_worst_ms": max(idle, default=None), "over_limit": sum(1 for x in idle if x > LIMIT_MS),
                     "overlapping": len(over), "overlap_worst_ms": max(over, default=0.0)}
    idle = bt.idle_before(ios)
    inside = idle[1:][(owner[1:] == owner[:-1]) & (owner[1:] >= 0) & (idle[1:] > 0)]
    if len(inside):
        print(f"  idle periods inside steps (host stalls, for comparison): {len(inside)}, median "
              f"{np.median(inside):.3f} ms, 99.9th percentile {np.percentile(inside, 99.9):.2f} ms, worst "
              f"{inside.max():.2f} ms, over {LIMIT_MS:g} ms: {int((inside > LIMIT_MS).sum())}")
        out["inside_idle_worst_ms"] = float(inside.max())
    label = "at QD > 1 (a second IO in flight)" if qd1 else "while another IO was in flight"
    print(f"  IOs issued {label}: {out['ios_issued_while_busy']} of {len(ios)}")
    if timelines is not None:
        off = mono_to_unix_ns
        d_start = [((tl["start_unix_s"] * 1e9 - off) - sp[0]) / 1e6 for tl, sp in zip(timelines, spans) if sp]
        d_end = [((tl["end_unix_s"] * 1e9 - off) - sp[1]) / 1e6 for tl, sp in zip(timelines, spans) if sp]
        d_gap = []
        for b in bounds:
            a, c = timelines[b.prev], timelines[b.next]
            rec = (c["start_unix_s"] - a["end_unix_s"]) * 1000
            d_gap.append(rec - b.gap_ms)
        hear = [((timelines[b.prev]["end_signal_unix_s"] * 1e9 - off) - b.last_complete_ns) / 1e6 for b in bounds
                if timelines[b.prev]["end_signal_unix_s"]]
        go = [(b.first_issue_ns - (timelines[b.next]["released_unix_s"] * 1e9 - off)) / 1e6 for b in bounds
              if timelines[b.next]["released_unix_s"] and timelines[b.next]["chained"]]
        print(f"  where a boundary's idle goes, ms: last IO completed -> the gate hears the step's end: {_stats(hear)}; "
              f"the gate releases the next step -> its first IO issued: {_stats(go)}")
        late = [tl["late_ms"] for tl in timelines if tl.get("late_ms") and tl.get("chained")]
        rec_idle = [max(0.0, (timelines[k + 1]["start_unix_s"] - timelines[k]["end_unix_s"]) * 1000)
                    for k in range(len(timelines) - 1)]
        rec_over = [max(0.0, (timelines[k]["end_unix_s"] - timelines[k + 1]["start_unix_s"]) * 1000)
                    for k in range(len(timelines) - 1)]
        print(f"  as ssdpts recorded them (steps.jsonl boundary): idle ms {_stats(rec_idle)}, over "
              f"{LIMIT_MS:g} + 1 ms: {sum(1 for x in rec_idle if x > LIMIT_MS + 1)}; overlap worst {max(rec_over):.2f} ms")
        out["recorded"] = {"idle_median_ms": statistics.median(rec_idle), "idle_worst_ms": max(rec_idle),
                           "over_limit": sum(1 for x in rec_idle if x > LIMIT_MS + 1), "overlap_worst_ms": max(rec_over)}
        print(f"  recorded - traced, ms: step start {_stats(d_start)}; step end {_stats(d_end)}; "
              f"boundary gap {_stats(d_gap)} (min {min(d_gap, default=0):.2f})")
        if late:
            print(f"  steps whose fio job reached its barrier after the release: {len(late)} (worst {max(late):.1f} ms late)")
        out["agreement_gap_ms"] = {"median": statistics.median(d_gap) if d_gap else None,
                                   "min": min(d_gap, default=None), "max": max(d_gap, default=None)}
    return out


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM too: remove the scratch device and the trace instance


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("loop", "zram"), default="loop")
    ap.add_argument("--test", choices=("lat", "iops"), default="lat")
    ap.add_argument("--step-seconds", type=float, default=None, help="default: 1 (lat), 0.5 (iops)")
    ap.add_argument("--rounds", type=int, default=None, help="default: 5 (lat), 3 (iops)")
    ap.add_argument("--schedule", choices=(*SCHEDULES, "all"), default="gate")
    ap.add_argument("--load", type=int, default=0, metavar="N", help="N busy-loop processes beside the run")
    ap.add_argument("--nice", type=int, default=0, help="run the benchmark (the gate's thread, fio) at this nice value")
    ap.add_argument("--buffer-mb", type=int, default=256, help="trace buffer per CPU (MB)")
    ap.add_argument("--keep", type=Path, help="copy each trace and the executor's records here")
    a = ap.parse_args()
    if a.nice:
        os.nice(a.nice)
    step_s = a.step_seconds or (1.0 if a.test == "lat" else 0.5)
    n_rounds = a.rounds or (5 if a.test == "lat" else 3)
    size = 1024**3
    make = loop_device if a.device == "loop" else zram_device
    schedules = SCHEDULES if a.schedule == "all" else (a.schedule,)
    print(f"{a.test} rounds of {step_s:g}-s steps x {n_rounds} on {a.device}, fio {FioExecutor().version()}, "
          f"{os.cpu_count()} CPUs, --load {a.load}, nice {os.nice(0)}, kernel {os.uname().release}")
    with make(size) as dev, cpu_load(a.load):
        name = os.path.basename(os.path.realpath(dev))
        nomerges = Path(f"/sys/block/{name}/queue/nomerges")
        if nomerges.exists():  # a merged pair of IOs would look like one IO of twice the size
            nomerges.write_text("2")
        lbs = int(Path(f"/sys/block/{name}/queue/logical_block_size").read_text())
        rounds = rounds_of(a.test, size, step_s, n_rounds, lbs)
        for how in schedules:
            with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
                wd = Path(d)
                load0 = os.getloadavg()[0]
                off = min((time.time_ns() - time.monotonic_ns() for _ in range(5)))
                with bt.BlockTrace(dev, wd / "trace.txt", buffer_kb_per_cpu=a.buffer_mb * 1024) as tr:
                    tls = run_gate(dev, size, rounds, wd) if how == "gate" else None
                    if how != "gate":
                        run_fio_schedule(dev, size, rounds, wd, how)
                print(f"\n(load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after; "
                      f"trace level: block_{'rq' if tr.level == 'rq' else 'bio'}_*)")
                report(how, tr.ios(), rounds, tls, off, a.test == "lat")
                if a.keep:
                    a.keep.mkdir(parents=True, exist_ok=True)
                    tag = f"{a.test}-{a.device}-{how}-load{a.load}"
                    shutil.copy(wd / "trace.txt", a.keep / f"{tag}.trace.txt")
                    if tls is not None:
                        (a.keep / f"{tag}.timelines.json").write_text(json.dumps({"mono_to_unix_ns": off, "timelines": tls}))


if __name__ == "__main__":
    main()
