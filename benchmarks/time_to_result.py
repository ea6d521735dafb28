"""Time to result, measured (docs/methodology.md#time-to-result): each PTS test run on the reference SSD
(refssd/, docs/reference-ssd.md) both ways, preconditioned as the PTS says (purge, WIPC, rounds) and
by fio's sprandom fill (docs/methodology.md#preconditioning-by-sprandom), each on a fresh drive of the
same geometry; per test and way: bytes written before the steady-state window, rounds to steady
state, the wall time (the manifest's time_to_result: purge, preconditioning and rounds), the window
values and the verdict. Then the same figures scaled to a drive of --scale-to bytes: the bytes as
shares of capacity, the time at --write-rate (an estimate: the plan's model, `ssdpts plan
--write-rate`, and the rounds' own planned length at the PTS's 60-s step).

    sudo python3 benchmarks/time_to_result.py [--tests iops,lat,hir] [--capacity 128M] [--json FILE]
    python3 benchmarks/time_to_result.py --runs DIR...      # the table of runs made before (e.g. the proof's)

Needs root (loop devices), FUSE and fio 3.41 (`make fio`). A measurement, not a test:
tests/refssd/test_precondition.py is the proof.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "refssd"))
sys.path.insert(0, str(ROOT / "src"))

import refssd_host  # noqa: E402

from ssdpts.results.timetoresult import TimeToResult  # noqa: E402

# the proofs' settings: 1-s steps, TC 1 x QD 2 (tests/refssd/test_iops.py says why)
ARGS = ("--step-seconds", "1", "--max-rounds", "12", "--threads", "1", "--iodepth", "2")
PTS_STEP_S = 60.0


def run_one(test: str, precondition: str, drive: dict, out: Path) -> tuple[Path, float]:
    """One ssdpts run of ``test`` on a fresh reference SSD; (its run directory, wall seconds of the command)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with refssd_host.ReferenceSSD(out / f"drive-{test}-{precondition.split(':')[0]}", **drive) as ssd:
        desc = ssd.describe_file(out / f"{test}-{precondition.split(':')[0]}-describe.json")
        runs = out / f"runs-{test}-{precondition.split(':')[0]}"
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "ssdpts.cli.main", "run", test, *ARGS, "--precondition", precondition,
                               "--target", ssd.device, "--destroy-data-on", ssd.device, "--describe", str(desc),
                               "--out", str(runs), "--quiet"], capture_output=True, text=True, env=env, timeout=7200)
        wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"ssdpts run {test} --precondition {precondition} failed: {proc.stdout}{proc.stderr}")
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    return run, wall


def figures(run: Path, wall_s: float | None = None) -> list[dict]:
    """One row per steady-state part of the run: its way, time to result and window."""
    man = json.loads((run / "manifest.json").read_text())
    summ = json.loads((run / "summary.json").read_text())
    spec = man["run_spec"]
    way = f"sprandom:{spec['spr_op']:.4g}" if spec.get("precondition") == "sprandom" else "pts"
    rows = []
    for pid, part in man["parts"].items():
        recorded = part.get("time_to_result")
        ss = summ["parts"][pid].get("steady_state")
        if not recorded or not ss:
            continue
        t = TimeToResult.from_dict(recorded)
        before = None if t.window is None else t.window.before_window
        pre = t.preconditioning
        rows.append({"run": str(run), "part": pid, "way": way, "capacity_bytes": man.get("active_range_bytes"),
                     "preconditioning_bytes": pre and pre.written_bytes, "preconditioning_s": pre and pre.s,
                     "bytes_before_window": before and before.written_bytes,
                     "rounds_before_window": before and before.rounds,
                     "rounds_to_steady_state": t.rounds_to_steady_state, "rounds_run": t.rounds.count,
                     "round_s": t.rounds.s / max(1, t.rounds.count), "total_s": t.total_s,
                     "command_wall_s": None if wall_s is None else round(wall_s, 1), "reached": ss["reached"],
                     "window": {v["variable"]: round(v["average"], 1) for v in ss["variables"]}})
    return rows


def scaled(row: dict, capacity: int, seq: float, rnd: float, round_pts_s: float | None) -> dict:
    """The row as a drive of ``capacity`` bytes would take it: bytes in shares of capacity, the
    preconditioning's time at the stated rates, the rounds before the window at their PTS length."""
    k = capacity / row["capacity_bytes"]
    pre = (row["preconditioning_bytes"] or 0) * k
    rounds_b = (row["bytes_before_window"] or 0) * k - pre
    pre_s = pre / (rnd if row["way"].startswith("sprandom") else seq)
    rounds = row["rounds_to_steady_state"] or row["rounds_run"]
    return {"bytes_before_window": pre + rounds_b, "preconditioning_s": pre_s,
            "to_result_s": None if round_pts_s is None else pre_s + rounds * round_pts_s}


def gb(n: float | None) -> str:
    return "—" if n is None else f"{n / 1e9:,.3f} GB" if n < 1e11 else f"{n / 1e12:,.2f} TB"


def hms(s: float | None) -> str:
    if s is None:
        return "—"
    h, r = divmod(int(round(s)), 3600)
    return f"{h}h{r // 60:02d}m" if h else f"{r // 60}m{r % 60:02d}s"


def table(rows: list[dict], scale_to: int, seq: float, rnd: float) -> str:
    from ssdpts.pts.plan import build_parts
    from ssdpts.pts.runspec import RunSpec

    lines = ["| part | way | preconditioning | bytes before the window | rounds to steady state | time to result "
             "(measured) | window values | verdict |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['part']} | {r['way']} | {gb(r['preconditioning_bytes'])}, {r['preconditioning_s']} s | "
                     f"{gb(r['bytes_before_window'])} ({r['rounds_before_window']} rounds) | "
                     f"{r['rounds_to_steady_state'] or 'not reached'} of {r['rounds_run']} | {hms(r['total_s'])} | "
                     + "; ".join(f"{k} {v:g}" for k, v in r["window"].items())
                     + f" | {'steady' if r['reached'] else 'NOT steady'} |")
    lines += ["", f"Scaled to {gb(scale_to)} (an estimate: preconditioning at {seq / 1e6:g} MB/s SEQ, "
              f"{rnd / 1e6:g} MB/s RND 4KiB; the rounds at the PTS's 60-s step):", "",
              "| part | way | bytes before the window | preconditioning | rounds | time to result |", "|---|---|---|---|---|---|"]
    for r in rows:
        test = r["part"].split("-")[0]
        try:
            part = next(p for p in build_parts(RunSpec(tests=(test,)), scale_to) if p.id == r["part"])
            round_s = sum(s.planned_s for s in part.round_steps(1))
        except Exception:  # noqa: BLE001  (a part the plan names otherwise: no round length)
            round_s = None
        s = scaled(r, scale_to, seq, rnd, round_s)
        lines.append(f"| {r['part']} | {r['way']} | {gb(s['bytes_before_window'])} | {hms(s['preconditioning_s'])} | "
                     f"{r['rounds_to_steady_state'] or r['rounds_run']} x {hms(round_s)} | {hms(s['to_result_s'])} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", default="iops,lat,hir",
                    help="tests run both ways (TP keeps its WIPC under sprandom: not one of them)")
    ap.add_argument("--capacity", default="128M")
    ap.add_argument("--pages-per-block", type=int, default=32)
    ap.add_argument("--runs", nargs="*", help="run directories made before: only their table")
    ap.add_argument("--scale-to", type=float, default=3.84e12, help="bytes of the drive the figures are scaled to")
    ap.add_argument("--write-rate", default="3000,1200", help="SEQ,RND MB/s for the scaled estimate")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    a = ap.parse_args()
    seq, rnd = (float(x) * 1e6 for x in a.write_rate.split(","))
    rows = []
    if a.runs:
        for d in a.runs:
            rows += figures(Path(d))
    else:
        drive = {"capacity": a.capacity, "pages_per_block": a.pages_per_block}
        op = refssd_host.params(**drive)["effective_spare_factor"] - 1
        out = Path(tempfile.mkdtemp(prefix="ttr-", dir=os.environ.get("TMPDIR", "/var/tmp")))
        for test in a.tests.split(","):
            for way in ("pts", f"sprandom:{op:.4f}"):
                run, wall = run_one(test, way, drive, out)
                rows += figures(run, wall)
                print(f"{test} {way}: {run} ({wall:.0f} s)", flush=True)
    print(table(rows, int(a.scale_to), seq, rnd))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
