"""A render corpus: every kind of document ssdpts writes, rendered from a fixed set of run
directories, so that a change to report/ can be proved to leave the documents as they were.

    python benchmarks/report_corpus.py make /tmp/rcorpus            # the run directories (FakeExecutor, fio for replay)
    python benchmarks/report_corpus.py render /tmp/rcorpus before   # every document's HTML -> /tmp/rcorpus/before/
    python benchmarks/report_corpus.py render /tmp/rcorpus after
    python benchmarks/report_corpus.py diff /tmp/rcorpus before after

The runs: a PTS run of the four core tests, one whose steady state is never reached, one
interrupted, one damaged (a step file changed after the run), the extended tests (HIR, XSR, CBW,
DIRTH), the OCP checks (ocp-trim, ocp-idle-gc), the stored format-1 fixture, three repeats of one run (a comparison and a repeats
analysis), two quick runs and two trace replays (each with its comparison). The replays run fio on
a file target (fio must be installed; without it they are left out, saying so).

The documents: each run's report (HTML; the PTS run also with datasheet targets), the comparison
and the repeats analysis (HTML and JSON), the quick and replay reports and their comparisons (HTML
and JSON); the OCP Test & Validation output of the core, extended and OCP runs, the terminal's
summary of every PTS run, and the results library's rows (`db list --json`, `db export`). Every clock reading of a render ("report date") is fixed to 2026-01-01 00:00 UTC, so
that two renders of the same corpus are byte-identical. The PDF is that HTML printed by Chromium
and embeds dates: look at one with ``pdftoppm -png -r 50``.
"""

from __future__ import annotations

import argparse
import difflib
import json
from pathlib import Path
import shutil
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
FIXED_CLOCK = time.struct_time((2026, 1, 1, 0, 0, 0, 3, 1, 0))
TARGETS = "figure,limit,direction\nrnd4k_read_iops,900000,higher\nqd1_4k_read_p99999_us,1500,lower\n" \
          "seq128k_write_mbps,100,higher\nwsat_steady_iops,20000,higher\n"


# ---- the run directories -----------------------------------------------------------------------------

def never_converges(step) -> float:
    return 1000 * (1 + 0.5 * (step.round % 3))


def demand_model(step) -> float:
    w = step.workload
    return min(200_000.0, 12_000.0 * (w.threads * w.iodepth) ** 0.8) * (0.6 if w.read_pct == 0 else 1.0)


def _pts(tmp: Path, name: str, tests, executor, **kw) -> Path:
    from ssdpts.device.target import open_target
    from ssdpts.errors import Interrupted
    from ssdpts.pts.runspec import RunSpec
    from ssdpts.run.session import start_run

    spec = RunSpec(tests=tests, step_seconds=1, **{"max_rounds": 6, "wsat_hours": 0.5, "wsat_capacity_multiple": 1000,
                                                   "wsat_chunk_steps": 12, **kw})
    device = name.split("-")[0] if name.startswith("rep-") else name  # repeats: runs of one device (one path)
    target = open_target(str(tmp / f"{device}.bin"), size_bytes=256 * 2**20)
    out = tmp / "made" / name
    try:
        start_run(spec, target, executor=executor, out_dir=out, confirm=None, argv=["ssdpts", "run", name])
    except Interrupted:
        pass
    (run,) = out.iterdir()
    return run


def make(root: Path) -> None:
    """Every run directory of the corpus under ROOT/runs/<name>."""
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor

    runs = root / "runs"
    if runs.exists():
        raise SystemExit(f"{runs} exists: the corpus is made once (remove it to make another)")
    tmp = root / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}
    core = ("wsat", "iops", "tp", "lat")
    made["pts-complete"] = _pts(tmp, "pts-complete", core, FakeExecutor(noise=0.02), wsat_hours=1.2)
    made["pts-not-steady"] = _pts(tmp, "pts-not-steady", ("iops", "lat"), FakeExecutor(model=never_converges),
                                  max_rounds=5)
    made["pts-interrupted"] = _pts(tmp, "pts-interrupted", core, FakeExecutor(noise=0.02, interrupt_on_batch=5))
    made["pts-extended"] = _pts(tmp, "pts-extended", ("hir", "xsr", "cbw", "dirth"), FakeExecutor(model=demand_model),
                                max_rounds=5, hir_bursts=2, xsr_minutes=(3, 3, 3))
    made["pts-ocp"] = _pts(tmp, "pts-ocp", ("ocp-trim", "ocp-idle-gc"), FakeExecutor(noise=0.02), max_rounds=5)
    for i in range(3):  # repeats of one experiment: a comparison and a repeats analysis
        made[f"rep-{i}"] = _pts(tmp, f"rep-{i}", ("iops", "tp", "lat"), FakeExecutor(noise=0.05, seed=i + 1),
                                max_rounds=5)
    from ssdpts.workloads import quick as Q

    for name in ("quick-a", "quick-b"):
        spec = Q.QuickSpec(runs=3, seconds=1.0)
        target = open_target(str(tmp / f"{name}.img"), size_bytes=64 * 2**20)
        store, _ = Q.start_quick(spec, target, executor=FakeExecutor(noise=0.1, seed=len(name) + ord(name[-1])),
                                 out_dir=tmp / "made" / name, confirm=None, argv=["ssdpts", "quick"])
        made[name] = store.path
    if shutil.which("fio"):
        from ssdpts.engine.fio import FioExecutor
        from ssdpts.workloads import replay as RP

        trace = ROOT / "tests" / "fixtures" / "trace" / "fio-3.33-write_iolog-v3-randrw.log"
        for name in ("replay-a", "replay-b"):
            target = open_target(str(tmp / f"{name}.img"), size_bytes=64 * 2**20)
            store, _ = RP.start_replay(RP.ReplaySpec(runs=3), trace, target, executor=FioExecutor(),
                                       out_dir=tmp / "made" / name, confirm=None, argv=["ssdpts", "trace", "replay"])
            made[name] = store.path
    else:
        print("fio is not installed: no replay runs in the corpus", file=sys.stderr)
    runs.mkdir()
    for name, path in made.items():
        shutil.copytree(path, runs / name, symlinks=True)
    fixture = ROOT / "tests" / "fixtures" / "runs" / "demo-loop-format1"
    shutil.copytree(fixture, runs / "fixture-format1", symlinks=True)
    # damaged: a fio output changed after the run ('ssdpts verify' finds it; the report says DAMAGED)
    shutil.copytree(runs / "pts-complete", runs / "pts-damaged", symlinks=True)
    victim = sorted((runs / "pts-damaged" / "fio").rglob("*.json"))
    if victim:
        victim[0].write_text(victim[0].read_text() + " ")
    else:
        summary = runs / "pts-damaged" / "summary.json"
        summary.write_text(summary.read_text().replace('"complete"', '"completed"', 1))
    (root / "targets.csv").write_text(TARGETS)
    shutil.rmtree(tmp)
    print(f"{len(list(runs.iterdir()))} run directories in {runs}")


# ---- the documents -------------------------------------------------------------------------------------

def _fix_clock() -> None:
    real = time.gmtime

    def gmtime(*args):
        return real(*args) if args else FIXED_CLOCK

    time.gmtime = gmtime


def render(root: Path, name: str) -> list[Path]:
    """Every document of the corpus (HTML, and JSON where a comparison writes one) into ROOT/NAME."""
    _fix_clock()
    from ssdpts.report import render as render_report
    from ssdpts.report import compare_html, quick_html, replay_html
    from ssdpts.compare import analyze_repeats, compare_runs
    from ssdpts.workloads import quick, replay

    compare_quick = getattr(quick, "compare_quick", None) or quick.compare  # the name in older trees
    compare_replays = getattr(replay, "compare_replays", None) or replay.compare

    runs = root / "runs"
    out = root / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written: list[Path] = []
    for run in sorted(runs.iterdir()):
        if run.name.startswith("quick-"):
            written += quick_html.render(run, ("html",), out / f"{run.name}.html")
        elif run.name.startswith("replay-"):
            written += replay_html.render(run, ("html",), out / f"{run.name}.html")
        else:
            written += render_report(run, formats=("html",), out=out / f"{run.name}.html")
    written += render_report(runs / "pts-complete", formats=("html",), out=out / "pts-complete-targets.html",
                             targets=root / "targets.csv")
    reps = [runs / f"rep-{i}" for i in range(3)]
    written += compare_html.render(compare_runs(reps), ("html", "json"), out / "compare.html")
    written += compare_html.render(compare_runs([runs / "pts-complete", runs / "pts-interrupted"]),
                                   ("html", "json"), out / "compare-partial.html")
    written += compare_html.render(analyze_repeats(reps), ("html", "json"), out / "repeats.html")
    written += quick_html.render_comparison(compare_quick([runs / "quick-a", runs / "quick-b"]), ("html", "json"),
                                            out / "compare-quick.html")
    if (runs / "replay-a").exists():
        written += replay_html.render_comparison(compare_replays([runs / "replay-a", runs / "replay-b"]),
                                                 ("html", "json"), out / "compare-replay.html")
    written += _other_outputs(root, runs, out)
    print(f"{len(written)} documents in {out}")
    return written


def _other_outputs(root: Path, runs: Path, out: Path) -> list[Path]:
    """What else a run is shown as: its OCP Test & Validation output, the terminal's summary at its
    end, and its rows in the results library (``db list --json``, ``db export --format json``)."""
    import contextlib
    import io
    import os
    import subprocess
    from types import SimpleNamespace

    from ssdpts.cli.output import print_summary
    from ssdpts.report import ocptv

    written = []
    for name in ("pts-complete", "pts-extended", "pts-ocp"):
        if (runs / name).exists():
            written.append(ocptv.write(runs / name, out / f"{name}.ocptv.jsonl"))
    for run in sorted(runs.iterdir()):
        summary = run / "summary.json"
        if summary.exists() and not run.name.startswith(("quick-", "replay-")):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                print_summary(SimpleNamespace(path=Path(run.name)), json.loads(summary.read_text()))
            written.append(out / f"{run.name}.terminal.txt")
            written[-1].write_text(buf.getvalue())
    db = root / "corpus.db"
    db.unlink(missing_ok=True)
    env = {**os.environ, "COLUMNS": "200", "SSDPTS_DB": str(db)}
    complete = [str(r) for r in sorted(runs.iterdir()) if r.name not in ("pts-interrupted", "pts-damaged")]
    subprocess.run([sys.executable, "-c", "from ssdpts.cli.main import main; main()", "db", "add", *complete], env=env, check=True,
                   capture_output=True)
    for what, args in (("db-list.json", ["list", "--json"]), ("db-export.json", ["export", "--format", "json"])):
        text = subprocess.run([sys.executable, "-c", "from ssdpts.cli.main import main; main()", "db", *args], env=env, check=True, capture_output=True,
                              text=True).stdout
        written.append(out / what)
        written[-1].write_text(text.replace(str(runs), "RUNS"))
    db.unlink()
    return written


def diff(root: Path, a: str, b: str) -> int:
    """0 when every document of A is byte-identical in B; else the differing lines of each, briefly."""
    da, db = root / a, root / b
    names = sorted({p.name for p in da.iterdir()} | {p.name for p in db.iterdir()})
    bad = 0
    for n in names:
        pa, pb = da / n, db / n
        if not pa.exists() or not pb.exists():
            print(f"{n}: only in {a if pa.exists() else b}")
            bad += 1
            continue
        if pa.read_bytes() == pb.read_bytes():
            continue
        bad += 1
        la = pa.read_text(encoding="utf-8").splitlines()
        lb = pb.read_text(encoding="utf-8").splitlines()
        lines = list(difflib.unified_diff(la, lb, f"{a}/{n}", f"{b}/{n}", n=0, lineterm=""))
        print(f"{n}: differs ({len(lines)} diff lines)")
        for ln in lines[:12]:
            print("   ", ln[:300])
    print(f"{len(names) - bad} of {len(names)} documents identical")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("make").add_argument("root", type=Path)
    r = sub.add_parser("render")
    r.add_argument("root", type=Path)
    r.add_argument("name")
    d = sub.add_parser("diff")
    d.add_argument("root", type=Path)
    d.add_argument("a")
    d.add_argument("b")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.cmd == "make":
        make(args.root)
        return 0
    if args.cmd == "render":
        render(args.root, args.name)
        return 0
    return diff(args.root, args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
