"""Benchmark: render the report of a full run of all four tests, 25 IOPS rounds (1,400 IOPS steps).

    python benchmarks/report_render.py                          # this checkout, 3 repetitions
    python benchmarks/report_render.py --against main           # side by side with the renderer of git ref 'main'
    python benchmarks/report_render.py --keep /tmp/bench-report # keep the run directory and the reports

The run directory is made once with the FakeExecutor and a model that never converges: IOPS, TP
and LAT run all 25 rounds, WSAT runs 24 h of 1-s samples (1,440 samples; its capacity limit raised to 100×) on an 8 GB sparse file
target. Its making is not part of the figures. Each repetition renders, in a fresh process
(the imports count: 'ssdpts report' pays them):

* html: ``render(run, formats=("html",))``
* pdf:  ``render(run, formats=("pdf",))``
* both: ``render(run)`` (what 'ssdpts report RUN' does)

Targets: HTML ≤ 2 s, PDF ≤ 4 s. Wall time on a shared machine depends on the load:
with ``--against REF`` the old and the new renderer take turns (old, new, old, new, ...), and the
ratio of their medians is the figure to quote; CPU seconds (the render's process, any processes
it forked (the matplotlib renderer's plot workers, for --against an older ref) and Chromium's whole
process tree) are printed too, Chromium's share separately. Last figures: docs/report.md, "Speed".
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HTML_TARGET_S, PDF_TARGET_S = 2.0, 4.0
ROOT = Path(__file__).resolve().parents[1]


def never_converges(step) -> float:
    w = step.workload
    base = 200_000 * (4096 / max(w.block_size_bytes, 4096)) ** 0.8 / (1 + 2 * (100 - w.read_pct) / 100)
    return base * (1 + 0.5 * (step.round % 3)) if step.test != "wsat" else base * (0.4 + 0.6 / (1 + step.index / 60))


def make_run(tmp: Path) -> Path:
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.pts.runspec import RunSpec
    from ssdpts.run.session import start_run

    target = open_target(str(tmp / "target.bin"), size_bytes=8 * 10**9)
    spec = RunSpec(tests=("wsat", "iops", "tp", "lat"), step_seconds=1, max_rounds=25, wsat_hours=24, wsat_capacity_multiple=100,
                   wsat_chunk_steps=60)
    store, _ = start_run(spec, target, executor=FakeExecutor(model=never_converges, noise=0.02),
                         out_dir=tmp / "runs", confirm=None)
    return store.path


# One render in a fresh process. CPU = this process + the processes it waited for (an older
# renderer's forked plot workers or PDF process) + Chromium's process tree, read from /proc just
# before the browser closes: Chromium's renderer processes are reaped by its zygote, so
# getrusage(RUSAGE_CHILDREN) alone sees about a quarter of Chromium's CPU time.
CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
t0, c0 = time.perf_counter(), time.process_time()
chrome = [0.0]
at_close = []
try:
    from ssdpts.report import chromium
except ImportError:  # the old renderer has no Chromium
    chromium = None
if chromium is not None:
    tck = os.sysconf("SC_CLK_TCK")
    def tree_cpu(root):
        kids = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    st = open(f"/proc/{d}/stat").read()
                except OSError:
                    continue
                kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(d))
        total, todo = 0, [root]
        while todo:
            p = todo.pop()
            todo += kids.get(p, [])
            try:
                st = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            total += sum(int(x) for x in st[st.rindex(")") + 2:].split()[11:15])
        return total / tck
    close = chromium.Browser.close
    def measured_close(self):
        if self.proc.poll() is None:
            chrome[0] += tree_cpu(self.proc.pid)
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the plot workers, not yet the browser
            at_close.append(ru.ru_utime + ru.ru_stime)
        close(self)
    chromium.Browser.close = measured_close
from ssdpts.report import render
paths = render(sys.argv[1], formats=tuple(sys.argv[2].split(",")), out=sys.argv[3])
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
waited = at_close[-1] if at_close else ru.ru_utime + ru.ru_stime  # Chromium counted once, from /proc
cpu = time.process_time() - c0 + waited + chrome[0]
print(json.dumps({"wall": wall, "cpu": cpu, "chromium_cpu": chrome[0],
                  "sizes": {p.suffix[1:]: p.stat().st_size for p in map(Path, paths)}}))
"""


def run_once(src: Path, run: Path, formats: str, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    p = subprocess.run([sys.executable, "-c", CHILD, str(run), formats, str(out) + "/"], env=env,
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"render failed ({src}): {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def export(ref: str, dest: Path) -> Path:
    """The src/ tree of a git ref, to import the old renderer from."""
    dest.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return dest / "src"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", metavar="DIR", help="make the run in DIR and keep it and the reports")
    ap.add_argument("--against", metavar="REF", help="also time the renderer of this git ref, taking turns")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of each measurement (default 3)")
    ap.add_argument("--formats", default="html,pdf,both", help="which measurements (default html,pdf,both)")
    args = ap.parse_args(argv)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ssdpts-bench-report-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        sys.path.insert(0, str(ROOT / "src"))
        t0 = time.perf_counter()
        run = make_run(tmp)
        steps = sum(1 for _ in open(run / "steps.jsonl"))
        print(f"run directory: {run} ({steps} step records) made in {time.perf_counter() - t0:.1f} s")
        trees = {"new": ROOT / "src"}
        if args.against:
            trees = {"old": export(args.against, tmp / "old"), **trees}
        results: dict[tuple[str, str], list[dict]] = {}
        for what in args.formats.split(","):
            formats = "html,pdf" if what == "both" else what
            for i in range(args.repeat):
                for name, src in trees.items():
                    r = run_once(src, run, formats, tmp / "out" / f"{name}-{what}-{i}")
                    results.setdefault((name, what), []).append(r)
        print(f"\n{'':4} {'':5} {'wall s (median)':>16} {'CPU s (median)':>15} {'of it Chromium':>15} {'size MB':>8}")
        for (name, what), rs in results.items():
            wall = statistics.median(r["wall"] for r in rs)
            cpu = statistics.median(r["cpu"] for r in rs)
            ch = statistics.median(r.get("chromium_cpu", 0.0) for r in rs)
            size = " ".join(f"{k} {v / 1e6:.2f}" for k, v in rs[0]["sizes"].items())
            print(f"{name:4} {what:5} {wall:16.2f} {cpu:15.2f} {ch:15.2f}   {size}")
        if args.against:
            print()
            for what in args.formats.split(","):
                old, new = results[("old", what)], results[("new", what)]
                rw = statistics.median(r["wall"] for r in new) / statistics.median(r["wall"] for r in old)
                rc = statistics.median(r["cpu"] for r in new) / statistics.median(r["cpu"] for r in old)
                print(f"new/old {what:5}: wall × {rw:.2f}, CPU × {rc:.2f}")
        new_html = statistics.median(r["wall"] for r in results.get(("new", "html"), [{"wall": 0}]))
        new_pdf = statistics.median(r["wall"] for r in results.get(("new", "pdf"), [{"wall": 0}]))
        print(f"\nnew html {new_html:.2f} s (target ≤ {HTML_TARGET_S:g} s), pdf {new_pdf:.2f} s "
              f"(target ≤ {PDF_TARGET_S:g} s); load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
