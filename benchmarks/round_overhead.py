"""Scheduling overhead of one PTS round run by ssdpts' FioExecutor.

    sudo python benchmarks/round_overhead.py [--device loop|zram] [--step-seconds 1] [--repeat 3]

Runs round 1 of the IOPS test (56 steps, enterprise TC4/QD32) on a scratch device and reports
    (round wall time - sum of step run times) / number of steps
where the round wall time is the whole fio process (start-up included) as the runner sees it and
a step's run time is what fio measured for it. Target: <= 5 ms per step at --step-seconds 1.
The figure is negative when steps overlap: a step's run time includes the drain of its in-flight
IOs, which completes while the next step (started by startdelay) is already running. Also printed:
(wall - scheduled stimulus time) / steps, the idle time fio's start-up adds once per round.
Also reported: the same figure for the alternatives the design rejected (one fio process per step;
stonewalled jobs in one process), measured on a 12-step slice so the run stays short.
A measurement, not a test: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import statistics
import subprocess
import tempfile
import time

from _devices import loop_device, zram_device

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor, default_ioengine, render_job_file
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import active_range_bytes, build_parts


def ssdpts_round(dev: str, size: int, step_s: float, workdir: Path) -> tuple[float, float, int]:
    spec = RunSpec(tests=("iops",), step_seconds=step_s, ioengine=default_ioengine())
    part = build_parts(spec, size)[0]
    steps = part.round_steps(1)
    batch = Batch(steps=steps, filename=dev, area=Area(0, active_range_bytes(size, 100)), seed=1,
                  ioengine=spec.ioengine, job_path=workdir / "r.fio", output_path=workdir / "r.json")
    t0 = time.monotonic()
    res = FioExecutor().run(batch)
    wall = time.monotonic() - t0
    return wall, sum(m.duration_s for m in res.measurements), len(steps)


def alternative(dev: str, size: int, step_s: float, workdir: Path, how: str, n: int = 12) -> tuple[float, float, int]:
    """The rejected schedules: 'process' = one fio per step, 'stonewall' = one fio, stonewalled jobs."""
    spec = RunSpec(tests=("iops",), step_seconds=step_s, ioengine=default_ioengine())
    steps = build_parts(spec, size)[0].round_steps(1)[:n]
    area = Area(0, active_range_bytes(size, 100))
    from ssdpts.engine.fioparse import parse_fio_output

    def runtime_sum(path: Path) -> float:
        out = parse_fio_output(path.read_text())
        return sum(max(j["read"]["runtime"], j["write"]["runtime"]) / 1000 for j in out.jobs)

    t0 = time.monotonic()
    total = 0.0
    if how == "process":
        for i, s in enumerate(steps):
            text, _ = render_job_file(Batch([s], dev, area, 1, spec.ioengine))
            (workdir / "p.fio").write_text(text)
            subprocess.run(["fio", "--output-format=json", f"--output={workdir / 'p.json'}", str(workdir / "p.fio")], check=True)
            total += runtime_sum(workdir / "p.json")
    else:
        text, _ = render_job_file(Batch(steps, dev, area, 1, spec.ioengine))
        text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("startdelay="))
        text = text.replace("new_group", "stonewall")
        (workdir / "s.fio").write_text(text)
        subprocess.run(["fio", "--output-format=json", f"--output={workdir / 's.json'}", str(workdir / "s.fio")], check=True)
        total = runtime_sum(workdir / "s.json")
    return time.monotonic() - t0, total, len(steps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("loop", "zram"), default="loop")
    ap.add_argument("--step-seconds", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--alternatives", action="store_true", help="also measure the rejected schedules")
    a = ap.parse_args()
    size = 1024**3
    make = loop_device if a.device == "loop" else zram_device
    with make(size) as dev, tempfile.TemporaryDirectory() as d:
        wd = Path(d)
        per_step = []
        for i in range(a.repeat):
            wall, run, n = ssdpts_round(dev, size, a.step_seconds, wd)
            per_step.append((wall - run) / n * 1000)
            print(f"ssdpts round {i + 1}: {n} steps, wall {wall:.3f} s, step run times {run:.3f} s, "
                  f"overhead {per_step[-1]:.2f} ms/step; wall - scheduled {n * a.step_seconds:.0f} s = "
                  f"{(wall - n * a.step_seconds) / n * 1000:.2f} ms/step (fio start-up and the last drain, once per round)")
        print(f"ssdpts startdelay schedule: median overhead {statistics.median(per_step):.2f} ms/step "
              f"(target <= 5 ms/step) on {a.device}, fio {FioExecutor().version()}")
        if a.alternatives:
            for how in ("process", "stonewall"):
                wall, run, n = alternative(dev, size, a.step_seconds, wd, how)
                print(f"rejected schedule '{how}': {n} steps, wall {wall:.3f} s, run {run:.3f} s, "
                      f"overhead {(wall - run) / n * 1000:.1f} ms/step")


if __name__ == "__main__":
    main()
