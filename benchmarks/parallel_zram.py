"""Many devices at once: aggregate IOPS of N zram devices run in parallel by ssdpts vs one
hand-written fio command driving the same N devices, and the harness's CPU per device.

    sudo .venv/bin/python benchmarks/parallel_zram.py [--n 1,2,4] [--step-seconds 1] [--steps 15]

For each N: N fresh zram devices (256 MiB, filled once). (a) ``ssdpts run wsat --target D1 ...
--target DN``: every WSAT step is RND 4KiB 0/100 at TC2/QD32, so all N devices run the same
workload at the same time; a device's IOPS is the mean of its WSAT steps (steps.jsonl), the
aggregate their sum. (b) One fio command with one job group per device, the same workload, TC, QD,
ioengine and time; the aggregate is the sum of its groups' IOPS. Alternately, --pairs times.

The harness's CPU: the CPU time of the whole ssdpts process tree (getrusage of the waited-for
children) minus that of its fio processes (sampled from /proc every 0.1 s), per device, and as a
share of the tree's CPU. It includes the supervisor, each device's checks, purge, step gate,
telemetry, and the report each run renders at its end. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from _devices import remove_zram

from ssdpts.engine.fio import default_ioengine

SIZE = 256 * 2**20
TC, QD = 2, 32


@contextlib.contextmanager
def zram_devices(n: int):
    made = []
    try:
        for _ in range(n):
            k = Path("/sys/class/zram-control/hot_add").read_text().strip()
            made.append(k)
            Path(f"/sys/block/zram{k}/disksize").write_text(str(SIZE))
        devs = [f"/dev/zram{k}" for k in made]
        for d in devs:  # allocated pages, as on a written drive
            subprocess.run(["fio", "--name=fill", f"--filename={d}", "--rw=write", "--bs=1m", "--direct=1",
                            "--ioengine=psync", "--output=/dev/null"], check=True)
        yield devs
    finally:
        for k in made:
            remove_zram(k)


class FioCpu:
    """CPU seconds of the fio processes under ``root`` (utime + stime from /proc, the last value
    seen per process)."""

    def __init__(self, root: int):
        self.root, self.seen, self.stop = root, {}, threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            for p in Path("/proc").iterdir():
                if not p.name.isdigit():
                    continue
                try:
                    stat = (p / "stat").read_text()
                except OSError:
                    continue
                if "(fio)" not in stat or not self._under(int(p.name)):
                    continue
                f = stat.rsplit(")", 1)[1].split()
                self.seen[p.name] = (int(f[11]) + int(f[12])) / self.tick
            time.sleep(0.1)

    def _under(self, pid: int) -> bool:
        for _ in range(6):
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                return False
            if pid == self.root:
                return True
        return False

    def total(self) -> float:
        self.stop.set()
        self.thread.join()
        return sum(self.seen.values())


def tree_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ssdpts_parallel(devs: list[str], step_s: float, steps: int, wd: Path) -> tuple[float, float, float, float, float]:
    """(sum of the devices' mean IOPS, IOPS over the common span, harness CPU s, fio CPU s, wall s) of
    one parallel ssdpts run."""
    out = wd / "runs"
    argv = [sys.executable, "-m", "ssdpts.cli.main", "run", "wsat", "--step-seconds", str(step_s),
            "--wsat-hours", f"{steps / 60:.6f}", "--wsat-capacity-multiple", "1000", "--threads", str(TC),
            "--iodepth", str(QD), "--purge", "none", "--out", str(out), "--quiet"]
    for d in devs:
        argv += ["--target", d, "--destroy-data-on", d]
    before = tree_cpu()
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    fio = FioCpu(proc.pid)
    _, err = proc.communicate()
    wall = time.monotonic() - t0
    fio_s = fio.total()
    total = tree_cpu() - before
    if proc.returncode:
        raise SystemExit(f"ssdpts failed ({proc.returncode}): {err.strip()}")
    agg, ios, starts, ends = 0.0, 0.0, [], []
    for run in out.iterdir():
        steps = [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines() if ln.strip()]
        agg += statistics.fmean(s["measurement"]["iops"] for s in steps)
        ios += sum(s["measurement"]["iops"] * (s["end_time"] - s["start_time"]) for s in steps)
        starts.append(min(s["start_time"] for s in steps))
        ends.append(max(s["end_time"] for s in steps))
    subprocess.run(["rm", "-rf", str(out)], check=True)
    # The devices' steps do not start at the same instant (each run purges and checks on its own):
    # besides the sum of the means, all IOs over the span from the first step's start to the last's end.
    return agg, ios / (max(ends) - min(starts)), total - fio_s, fio_s, wall


def hand_fio(devs: list[str], seconds: float, wd: Path, engine: str) -> float:
    """Aggregate IOPS of one fio command, one job group per device."""
    job = ["[global]", "direct=1", f"ioengine={engine}", "rw=randwrite", "bs=4k", f"numjobs={TC}",
           f"iodepth={QD}", "time_based=1", f"runtime={int(seconds * 1000)}ms", "group_reporting=1",
           "norandommap=1", "thread=1", "iodepth_batch_submit=16", "iodepth_batch_complete_max=16"]
    if engine == "io_uring":
        job += ["fixedbufs=1", "registerfiles=1"]
    for i, d in enumerate(devs):
        job += [f"[dev{i}]", "new_group", f"filename={d}"]
    (wd / "h.fio").write_text("\n".join(job) + "\n")
    subprocess.run(["fio", "--output-format=json", f"--output={wd / 'h.json'}", str(wd / "h.fio")], check=True)
    jobs = json.loads((wd / "h.json").read_text())["jobs"]
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in jobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="1,2,4", help="device counts (default 1,2,4)")
    ap.add_argument("--step-seconds", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=15, help="WSAT steps per run (default 15)")
    ap.add_argument("--pairs", type=int, default=2)
    a = ap.parse_args()
    engine = default_ioengine()
    print(f"{os.cpu_count()} CPUs, {engine}, RND 4KiB 0/100 TC{TC}/QD{QD}, {a.steps} x {a.step_seconds:g} s per run")
    for n in (int(x) for x in a.n.split(",")):
        with zram_devices(n) as devs, tempfile.TemporaryDirectory() as d:
            wd = Path(d)
            rows = []
            for _ in range(a.pairs):
                s, span, harness, fio_s, wall = ssdpts_parallel(devs, a.step_seconds, a.steps, wd)
                h = hand_fio(devs, a.step_seconds * a.steps, wd, engine)
                rows.append((s, span, h, harness, fio_s))
                print(f"N={n}: ssdpts {s:,.0f} IOPS (sum of means; {span:,.0f} over the common span), one fio "
                      f"command {h:,.0f} IOPS, ratio {s / h:.3f} ({span / h:.3f}); harness CPU {harness / n:.2f} s "
                      f"per device ({100 * harness / (harness + fio_s):.1f}% of the tree's CPU), fio {fio_s:.1f} s, "
                      f"wall {wall:.1f} s", flush=True)
            med = statistics.median
            print(f"N={n} median: ssdpts/fio aggregate IOPS {med(r[0] / r[2] for r in rows):.3f} (common span "
                  f"{med(r[1] / r[2] for r in rows):.3f}), harness {100 * med(r[3] / (r[3] + r[4]) for r in rows):.1f}% "
                  f"of CPU, {med(r[3] for r in rows) / n:.2f} CPU s per device", flush=True)

if __name__ == "__main__":
    main()
