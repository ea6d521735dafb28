"""fio's memory and thread count for a round with many job sections (the CBW/DIRTH sweep round).

    sudo python benchmarks/fio_jobs.py [--device zram|loop] [--step-seconds 1] [--test cbw|dirth]

1. Parse-time memory per clone: fio allocates its per-job state (thread_data, latency histograms
   included) for every clone (numjobs) of every job section when it reads the job file, and keeps
   it until it exits. Measured as fio's VmRSS 1.5 s after start for job files of N clones whose
   sections all wait behind a long startdelay (no IO), fitted linearly over N.
2. A real demand-intensity round of ssdpts (5 min pre-write + 49 cells, TC 32..1 x QD 32..1, one
   fio process) run by FioExecutor, with fio's /proc/<pid>/status sampled every 20 ms: the peak
   Threads, VmRSS and VmHWM. fio creates a job's threads only when its startdelay has passed and
   they exit after its runtime, so the thread count peaks at one cell's TC plus the next one's
   during a hand-over (plus fio's own threads), not at the round's 515 clones.

A measurement, not a test: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import subprocess
import tempfile
import threading
import time

from _devices import loop_device, zram_device

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor, default_ioengine
from ssdpts.pts.plan import active_range_bytes, build_parts
from ssdpts.pts.runspec import RunSpec


def status(pid: int, tasks: bool = False) -> dict[str, int]:
    """Threads, VmRSS, VmHWM of a process; with ``tasks`` also its threads by name: fio's own
    ("fio") and io_uring's kernel workers ("iou-wrk-*", which count in Threads too)."""
    out = {}
    try:
        for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = ln.partition(":")
            if k in ("Threads", "VmRSS", "VmHWM"):
                out[k] = int(v.split()[0])
        if tasks:
            names = []
            for t in Path(f"/proc/{pid}/task").iterdir():
                try:
                    names.append((t / "comm").read_text().strip())
                except OSError:
                    continue
            out["fio_threads"] = sum(1 for n in names if n.startswith("fio"))
            out["iou_workers"] = sum(1 for n in names if n.startswith("iou-"))
    except OSError:
        pass
    return out


def parse_memory(dev: str, workdir: Path) -> list[tuple[int, int]]:
    """(clones, VmRSS KiB) for job files whose sections never start during the measurement."""
    out = []
    for sections, numjobs in ((2, 32), (8, 32), (16, 32), (32, 32)):
        lines = ["[global]", f"filename={dev}", "direct=1", f"ioengine={default_ioengine()}", "thread=1",
                 "group_reporting=1", "rw=randwrite", "bs=4096", "time_based=1", "runtime=1s", "lat_percentiles=1",
                 "clat_percentiles=0", ""]
        for i in range(sections):
            lines += [f"[s{i}]", "new_group", f"numjobs={numjobs}", "iodepth=32", "startdelay=3600s", ""]
        job = workdir / "parse.fio"
        job.write_text("\n".join(lines))
        p = subprocess.Popen(["fio", "--output-format=json+", f"--output={workdir / 'parse.json'}", str(job)])
        time.sleep(1.5)
        st = status(p.pid)
        p.terminate()
        p.wait()
        out.append((sections * numjobs, st.get("VmRSS", 0)))
    return out


def find_fio(job: Path, timeout: float = 10) -> int | None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    if str(job) in (d / "cmdline").read_bytes().decode(errors="replace"):
                        return int(d.name)
                except OSError:
                    continue
        time.sleep(0.01)
    return None


def sweep_round(dev: str, size: int, test: str, step_s: float, workdir: Path) -> dict:
    spec = RunSpec(tests=(test,), step_seconds=step_s, ioengine=default_ioengine())
    part = next(p for p in build_parts(spec, size, 4096 if "zram" in dev else 512) if p.part == "demand-intensity")
    steps = part.round_steps(1)
    job, out = workdir / "sweep.fio", workdir / "sweep.json"
    batch = Batch(steps=steps, filename=dev, area=Area(0, active_range_bytes(size, 100)), seed=1,
                  ioengine=spec.ioengine, job_path=job, output_path=out)
    samples: list[tuple[float, dict]] = []
    done = threading.Event()

    def poll() -> None:
        pid = find_fio(job)
        t0 = time.monotonic()
        while pid and not done.is_set():
            st = status(pid, tasks=True)
            if st:
                samples.append((time.monotonic() - t0, st))
            time.sleep(0.02)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    res = FioExecutor().run(batch)
    done.set()
    th.join()
    clones = sum(s.workload.threads for s in steps)
    return {"steps": len(steps), "clones": clones, "wall_s": res.wall_s,
            "threads_max": max((s["Threads"] for _, s in samples if "Threads" in s), default=0),
            "fio_threads_max": max((s.get("fio_threads", 0) for _, s in samples), default=0),
            "iou_workers_max": max((s.get("iou_workers", 0) for _, s in samples), default=0),
            "rss_max_kib": max((s.get("VmRSS", 0) for _, s in samples), default=0),
            "hwm_kib": max((s.get("VmHWM", 0) for _, s in samples), default=0), "samples": len(samples)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("zram", "loop"), default="zram")
    ap.add_argument("--step-seconds", type=float, default=1.0, help="one PTS minute (default 1: a 54-s round)")
    ap.add_argument("--test", choices=("cbw", "dirth"), default="cbw")
    a = ap.parse_args()
    size = 1024**3
    make = zram_device if a.device == "zram" else loop_device
    with make(size) as dev, tempfile.TemporaryDirectory() as d:
        wd = Path(d)
        pts = parse_memory(dev, wd)
        for n, kib in pts:
            print(f"parse-time memory: {n:5d} clones -> fio VmRSS {kib / 1024:7.1f} MiB")
        (n0, m0), (n1, m1) = pts[0], pts[-1]
        per = (m1 - m0) / (n1 - n0)
        print(f"per clone: {per:.0f} KiB (fit between {n0} and {n1} clones)")
        r = sweep_round(dev, size, a.test, a.step_seconds, wd)
        print(f"{a.test} demand-intensity round on {a.device} ({FioExecutor().version()}): {r['steps']} steps, "
              f"{r['clones']} clones, wall {r['wall_s']:.1f} s; fio peak Threads {r['threads_max']} (fio's own threads "
              f"at most {r['fio_threads_max']}, io_uring workers at most {r['iou_workers_max']}), peak VmRSS "
              f"{r['rss_max_kib'] / 1024:.0f} MiB, VmHWM {r['hwm_kib'] / 1024:.0f} MiB ({r['samples']} samples)")
        print(f"parse-time share of the round: {r['clones']} x {per:.0f} KiB = {r['clones'] * per / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
