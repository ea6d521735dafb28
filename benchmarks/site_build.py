"""Cost of `ssdpts db site` for a 500-run library, and of its page in Chromium.

    python benchmarks/site_build.py [--runs 500] [--jobs N] [--repeat 3] [--keep DIR]

The library: copies (benchmarks/_lab.py: hard links, each its own manifest, as ten models and five
firmware revisions) of two real runs made first with fio on file targets, `ssdpts run all` (WSAT of
30 samples, IOPS, TP, LAT; 0.1 s steps, 5 rounds) and `ssdpts run lat`, in a results library.
(The copies are entered as 'db add' enters a run, without its proof: their files are the two runs'.)

Prints: the build of the index and data alone (--no-reports), the whole first build (every report
rendered, on --jobs processes), a rebuild with nothing changed, a rebuild after one run was added;
the site's sizes (index.html with the index inline, the run data, the reports); and in headless
Chromium, the time until the index is interactive (its script has run: table, filters and the trend
plot drawn) and until a comparison of 2 and of 10 runs is drawn. Each figure the median of
--repeat. A measurement, not a test.
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

from _lab import clone, lab, real_run, tree_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(argv: list[str], repeat: int = 1, before=None) -> float:
    ts = []
    for _ in range(repeat):
        if before:
            before()
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def fill(db: Path, dirs: list[Path]) -> None:
    """The runs into the library as 'db add' enters them, without the proof of their (shared) files."""
    from ssdpts.library.db import ResultsDB, load_complete
    from ssdpts.results.reader import read_run

    with ResultsDB(db) as d:
        with d.con:
            for i, run in enumerate(dirs):
                d._put(load_complete(run) if i < 2 else read_run(run, need_summary="the benchmark"), run)


def browser_figures(site: Path, repeat: int) -> None:
    from ssdpts.report import chromium
    from tests.report_browser import Page

    ready, loaded, cmp2, cmp10 = [], [], [], []
    with chromium.Browser() as b:
        for _ in range(repeat):
            p = Page(b, width=1400, height=1000)
            p.open((site / "index.html").resolve())
            ready.append(p.js("window.ssdptsSiteReadyMs"))
            loaded.append(p.js("performance.getEntriesByType('navigation')[0].loadEventEnd"))
            for n, out in ((2, cmp2), (10, cmp10)):
                out.append(p.js(f"""(async () => {{
                  const uids = ssdptsSite.runs.filter(r => r.data && r.tests.length === 4).slice(0, {n}).map(r => r.uid);
                  const t0 = performance.now();
                  ssdptsSite.select(uids);
                  while (!ssdptsSite.comparison()) await new Promise(r => setTimeout(r, 5));
                  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
                  return performance.now() - t0; }})()"""))
            rows = p.js("document.querySelectorAll('#runs tbody tr').length")
    print(f"Chromium: {rows} rows; interactive (script done: table, filters, trend plot) {statistics.median(ready):.0f} ms, "
          f"load event {statistics.median(loaded):.0f} ms after navigation; comparison of 2 runs drawn in "
          f"{statistics.median(cmp2):.0f} ms, of 10 runs in {statistics.median(cmp10):.0f} ms (median of {repeat})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR", help="keep the site here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        d = Path(d)
        env = {"SSDPTS_DB": str(d / "made.db")}
        t0 = time.perf_counter()
        bases = [real_run(d / "base", "all", d / "all.img", env=env, extra=("--wsat-hours", "0.5")),
                 real_run(d / "base", "lat", d / "lat.img", env=env)]
        print(f"base runs made in {time.perf_counter() - t0:.0f} s")
        dirs = lab(d / "lab", bases, args.runs)
        db = d / "results.db"
        t0 = time.perf_counter()
        fill(db, dirs)
        print(f"library: {args.runs} runs ({tree_bytes(d / 'lab') / 1e9:.2f} GB of run directories), entered in "
              f"{time.perf_counter() - t0:.1f} s")
        site = d / "site"
        jobs = ["--jobs", str(args.jobs)] if args.jobs else []
        clear = lambda: shutil.rmtree(site, ignore_errors=True)  # noqa: E731
        print(f"first build, index and data alone (--no-reports): "
              f"{timed(['ssdpts', 'db', 'site', str(site), '--db', str(db), '--no-reports'], args.repeat, clear):.2f} s")
        clear()
        full = timed(["ssdpts", "db", "site", str(site), "--db", str(db), *jobs])
        print(f"first build with every report ({args.jobs or os.cpu_count()} processes): {full:.1f} s "
              f"({full / args.runs * 1e3:.0f} ms a run)")
        print(f"rebuild, nothing changed: {timed(['ssdpts', 'db', 'site', str(site), '--db', str(db)], args.repeat):.2f} s")
        extra = clone(bases[0], d / "lab" / "new" / f"{bases[0].name}-new", args.runs, __import__("random").Random(9))
        fill(db, [extra])
        print(f"rebuild after one run was added: {timed(['ssdpts', 'db', 'site', str(site), '--db', str(db)]):.2f} s")
        idx = (site / "index.html").stat().st_size
        data = tree_bytes(site / "data")
        reports = tree_bytes(site / "runs")
        assets = tree_bytes(site / "assets")
        doc = json.loads((site / "site.json").read_text())
        print(f"sizes: index.html {idx / 1e6:.2f} MB (the index of {len(doc['runs'])} runs inline), assets "
              f"{assets / 1e6:.2f} MB, run data {data / 1e6:.1f} MB ({data / len(doc['runs']) / 1e3:.0f} kB a run), "
              f"reports {reports / 1e6:.0f} MB ({reports / len(doc['runs']) / 1e6:.2f} MB a run)")
        browser_figures(site, args.repeat)
        if args.keep:
            shutil.copytree(site, args.keep, dirs_exist_ok=True)


if __name__ == "__main__":
    main()
