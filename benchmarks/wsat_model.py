"""What the drive model (results/wsatmodel.py, docs/methodology.md#drive-model) adds to the summary of
a 24-hour WSAT: 1,440 samples (the PTS's 1-minute step), each with its 100 intervals of fio's
per-interval log — the recorded reference-SSD run of tests/fixtures/wsatmodel repeated (its curve
tiled: a real drive's 1,440 samples hold the same number of points).

    python benchmarks/wsat_model.py [--samples 1440] [--repeat 5]

Prints, each the median of --repeat and side by side in one process: the WSAT part's summary
without the model, the model alone, and the summary with it (summary.summarize_part as a run
writes it). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
import statistics
import time

from ssdpts.pts.plan import build_parts
from ssdpts.pts.runspec import RunSpec
from ssdpts.results import summary, wsatmodel
from ssdpts.results.steprecord import StepRecord

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "wsatmodel"


def records(n: int) -> list[StepRecord]:
    base = [StepRecord.from_dict(json.loads(ln)) for ln in (FIXTURE / "steps.jsonl").read_text().splitlines()]
    chunk = 30
    return [dataclasses.replace(base[i % len(base)], index=i + 1, round=i // chunk + 1, doc=None) for i in range(n)]


def median_s(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1440)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    drive = json.loads((FIXTURE / "drive.json").read_text())
    cap = drive["capacity_bytes"]
    recs = records(a.samples)
    part = next(p for p in build_parts(RunSpec(tests=("wsat",), wsat_hours=24, wsat_capacity_multiple=1000), cap)
                if p.test == "wsat")
    window = tuple(r.index for r in recs[-5:])
    steady = sum(r.fio.iops for r in recs[-5:]) / 5
    real = wsatmodel.model
    with_model = median_s(lambda: summary.summarize_part(part, recs, cap), a.repeat)
    wsatmodel.model = lambda *_a, **_k: None  # the same summary without it
    try:
        without = median_s(lambda: summary.summarize_part(part, recs, cap), a.repeat)
    finally:
        wsatmodel.model = real
    alone = median_s(lambda: wsatmodel.model(recs, cap, window=window, steady_iops=steady), a.repeat)
    points = sum(len(r.intervals.ios) if r.intervals else 1 for r in recs)
    print(f"{a.samples} samples, {points:,} points of the curve; median of {a.repeat}")
    print(f"  WSAT summary without the model  {without * 1000:8.1f} ms")
    print(f"  the model alone                 {alone * 1000:8.1f} ms")
    print(f"  WSAT summary with the model     {with_model * 1000:8.1f} ms  ({with_model / without:.2f} x)")


if __name__ == "__main__":
    main()
