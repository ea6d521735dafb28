"""Benchmark: render the HTML and PDF report of a full 25-round IOPS run (1,400 steps).

    cd /work/main && python benchmarks/report_render.py            # target: under 15 s in total
    python benchmarks/report_render.py --keep /tmp/bench-report    # keep the run directory and reports

The run directory is made with the FakeExecutor and a model that never converges (so all 25
rounds run, 56 steps each), in a temporary directory. Prints the time to build the run (not
part of the figure); the figure is the time of `render(run)` (HTML and PDF, as
`ssdpts report RUN` does: the PDF is drawn in a forked process while the HTML is drawn); each
format alone is timed too, for reference.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import shutil
import sys
import tempfile
import time

TARGET_S = 15.0


def never_converges(step) -> float:
    w = step.workload
    base = 200_000 * (4096 / max(w.block_size_bytes, 4096)) ** 0.8 / (1 + 2 * (100 - w.read_pct) / 100)
    return base * (1 + 0.5 * (step.round % 3))


def make_run(tmp: Path) -> Path:
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.session import start_run
    from ssdpts.pts.runspec import RunSpec

    target = open_target(str(tmp / "target.bin"), size_bytes=256 * 2**20)
    store, _ = start_run(RunSpec(tests=("iops",), step_seconds=1, max_rounds=25), target,
                         executor=FakeExecutor(model=never_converges, noise=0.02), out_dir=tmp / "runs", confirm=None)
    return store.path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", metavar="DIR", help="make the run in DIR and keep it")
    args = ap.parse_args(argv)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ssdpts-bench-report-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        run = make_run(tmp)
        steps = sum(1 for _ in open(run / "steps.jsonl"))
        print(f"run directory: {run} ({steps} step records) made in {time.perf_counter() - t0:.1f} s")

        import ssdpts.report  # noqa: F401  (the import of matplotlib/jinja2 counts: 'ssdpts report' pays it)

        from ssdpts.report import render

        t1 = time.perf_counter()
        both = render(run)  # what 'ssdpts report RUN' does: HTML here, PDF in a forked process alongside
        t2 = time.perf_counter()
        (tmp / "alone").mkdir(exist_ok=True)
        c2 = time.process_time()
        html = render(run, formats=("html",), out=tmp / "alone")
        t3, c3 = time.perf_counter(), time.process_time()
        pdf = render(run, formats=("pdf",), out=tmp / "alone")
        t4, c4 = time.perf_counter(), time.process_time()
        total = t2 - t1
        # CPU seconds too: on a shared machine the wall time depends on the load
        print(f"html alone: {t3 - t2:6.2f} s ({c3 - c2:.2f} s CPU)  {html[0].stat().st_size / 1e6:.2f} MB")
        print(f"pdf alone:  {t4 - t3:6.2f} s ({c4 - c3:.2f} s CPU)  {pdf[0].stat().st_size / 1e6:.2f} MB")
        print(f"html+pdf (ssdpts report): {total:.2f} s (target < {TARGET_S:g} s): "
              f"{'OK' if total < TARGET_S else 'TOO SLOW'}  {both[0].parent}")
        return 0 if total < TARGET_S else 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
