"""How far fio's per-interval IOPS log, as ssdpts reads it (engine/fioparse.interval_ios,
docs/methodology.md#drive-model), is from the drive's own count of completions: WSAT runs on the
reference SSD kept with their drive's truth log (REFSSD_KEEP=1, or a proof's pytest tmp_path).

    python benchmarks/interval_log_truth.py RUN_DIR:TRUTH_JSONL [...] [--against REV]

For each run and each WSAT sample with a log: the cumulative count the parser gives at each period's
end against the truth's (its 10-ms intervals, interpolated to the same Unix times), the mean
absolute difference as a share of the sample's IOs; printed per run as the mean and 90th
percentile over its samples. --against REV reads the same logs with fioparse.py as it was at git
revision REV too, side by side. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
import subprocess
import sys
import tempfile

import numpy as np

from ssdpts.engine.fioparse import interval_ios
from ssdpts.results.steprecord import StepRecord

ROOT = Path(__file__).resolve().parents[1]


def parser_at(rev: str):
    """interval_ios as engine/fioparse.py was at ``rev`` (its relative imports made absolute)."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/ssdpts/engine/fioparse.py"],
                          capture_output=True, text=True, check=True).stdout.replace("from ..", "from ssdpts.")
    path = Path(tempfile.mkdtemp()) / "fioparse_then.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("fioparse_then", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fioparse_then"] = mod
    spec.loader.exec_module(mod)
    return mod.interval_ios


def errors(run: Path, truth: Path, parse) -> list[float]:
    rows = [json.loads(x) for x in truth.read_text().splitlines() if x.strip()]
    rows = [r for r in rows if "t1" in r and "host_write_ios" in r]
    t1 = np.array([r["t1"] for r in rows])
    done = np.cumsum([r["host_write_ios"] for r in rows])
    out = []
    for line in (run / "steps.jsonl").read_text().splitlines():
        rec = StepRecord.from_dict(json.loads(line))
        if rec.phase != "round" or rec.intervals is None or not rec.fio_json:
            continue
        log = run / rec.fio_json.replace(".json", f".s{(rec.fio_job_index or 0) + 1:04d}_iops.log")
        if not log.exists():
            continue
        start = rec.fio.start_time
        got = parse(log.read_text(), rec.intervals.period_ms, start * 1000)
        if not got or not got[0]:
            continue
        cum = np.cumsum(got[0])
        ends = start + np.arange(1, len(cum) + 1) * rec.intervals.period_ms / 1000
        truth_cum = np.interp(ends, t1, done) - np.interp(start, t1, done)
        out.append(float(np.mean(np.abs(cum - truth_cum))) / max(1, rec.fio.write.ios))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="RUN_DIR:TRUTH_JSONL")
    ap.add_argument("--against", help="a git revision whose parser to read the same logs with")
    a = ap.parse_args()
    parsers = {"now": interval_ios}
    if a.against:
        parsers[a.against] = parser_at(a.against)
    for item in a.runs:
        run, truth = (Path(p) for p in item.split(":", 1))
        cells = []
        for name, parse in parsers.items():
            e = errors(run, truth, parse)
            cells.append(f"{name}: mean {100 * np.mean(e):.2f}%, p90 {100 * np.percentile(e, 90):.2f}% ({len(e)} samples)"
                         if e else f"{name}: no sample with a log")
        print(f"{run.name}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
