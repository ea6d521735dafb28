"""The OCP tests' proof on the reference SSD (docs/ocp.md): ssdpts's reported change of read latency
against the simulator's, from what ssdpts wrote (summary.json, read as plain JSON) and the drive's
own records (its io log: every read's modeled service time; its truth intervals: how long reads
waited on their die behind deallocation processing or idle GC). Kept apart from proofs.py (another
issue's work) and in its style: every tolerance named with the reason for its size."""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path

import numpy as np

CHANGE_PP = 2.0  # issue 32: ssdpts's change within 2 percentage points of the truth's. What it leaves
# room for: the host's path (FUSE, loop device, fio: ~0.15-0.2 ms a read on a quiet host) is in
# ssdpts's latencies and not in the model's, so ssdpts's change is the truth's x model / (model +
# path), and the path drifts between phases: the proof drives' reads take ~6 ms (tR 6,000 us) to
# keep the first under ~3.5% of the change and the drift under ~1 pp (docs/ocp.md).
READS_PCT = 1.0  # ssdpts's reads per phase vs the drive's: only commands at the window's edges differ


@dataclass
class OcpVerdict:
    checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    def failed(self, name: str) -> bool:
        return any(f.startswith(name) for f in self.failures)

    def check(self, name: str, ok: bool, text: str) -> None:
        self.checks.append(f"{name}: {text}")
        if not ok:
            self.failures.append(f"{name}: {text}")

    def __str__(self) -> str:
        return "; ".join(self.failures) or "ok"


def drive_reads(io_log: Path, t0: float, t1: float) -> np.ndarray:
    """Modeled service times (µs) of the 4 KiB reads that arrived in [t0, t1] (epoch seconds)."""
    lo, hi = int(t0 * 1e9), int(t1 * 1e9)
    out = []
    with open(io_log) as f:
        for line in f:
            p = line.rstrip("\n").split(",")
            if len(p) == 5 and p[1] == "R" and p[3] == "4096" and lo <= int(p[0]) <= hi:
                out.append(int(p[4]) / 1e3)
    return np.array(out)


def truth_waits(truth: Path, t0: float, t1: float) -> dict[str, float]:
    """The truth intervals' read waits (µs) behind each kind of die work, over [t0, t1]."""
    keys = ("read_wait_dealloc_us", "read_wait_bg_gc_us", "read_wait_host_us", "host_read_ios")
    out = dict.fromkeys(keys, 0.0)
    for ln in truth.read_text().splitlines():
        d = json.loads(ln)
        if d.get("type") == "interval" and t0 <= (d["t0"] + d["t1"]) / 2 <= t1:
            for k in keys:
                out[k] += float(d.get(k) or 0.0)
    return out


def ocp_proof(summary: dict, pid: str, io_log: Path, truth: Path) -> OcpVerdict:
    """One OCP part of a run against the drive's records."""
    v = OcpVerdict()
    tab = summary["parts"][pid]["table"]
    phases = {p["cell"]: p for p in tab["phases"]}
    base, under = tab["phases"]
    means = {}
    for p in (base, under):
        t = drive_reads(io_log, p["start_unix_s"], p["end_unix_s"])
        means[p["cell"]] = float(t.mean()) if len(t) else float("nan")
        w = truth_waits(truth, p["start_unix_s"], p["end_unix_s"])
        v.figures[p["cell"]] = {"ssdpts_reads": p["ios"], "drive_reads": len(t), "ssdpts_mean_us": p["mean_us"],
                                "drive_mean_us": means[p["cell"]],
                                "waited_dealloc_us_per_read": w["read_wait_dealloc_us"] / max(w["host_read_ios"], 1),
                                "waited_bg_gc_us_per_read": w["read_wait_bg_gc_us"] / max(w["host_read_ios"], 1),
                                "trim_ios": p["trim_ios"]}
        v.check(f"reads {p['cell']}", abs(len(t) - p["ios"]) <= max(2, READS_PCT / 100 * p["ios"]),
                f"ssdpts {p['ios']} vs the drive's {len(t)}")
    truth_change = 100 * (means[under["cell"]] / means[base["cell"]] - 1)
    ours = tab["change_pct"]["mean"]
    v.figures.update(truth_change_pct=truth_change, ssdpts_change_pct=ours, verdict=tab["verdict"],
                     limit_pct=tab["limit_pct"], p99_change_pct=tab["change_pct"]["p99"])
    v.check("change vs truth", abs(ours - truth_change) <= CHANGE_PP,
            f"ssdpts {ours:+.2f}% vs the drive's {truth_change:+.2f}% (±{CHANGE_PP:g} pp)")
    # what the truth charges to the interference explains the drive's own change
    added = v.figures[under["cell"]]["waited_dealloc_us_per_read"] + v.figures[under["cell"]]["waited_bg_gc_us_per_read"]
    v.figures["truth_added_us_per_read"] = added
    v.figures["drive_added_us_per_read"] = means[under["cell"]] - means[base["cell"]]
    del phases
    return v


def with_under_mean(summary: dict, pid: str, factor: float) -> dict:
    """Mutation: ssdpts's mean under interference scaled (its change recomputed as ssdpts would)."""
    s = json.loads(json.dumps(summary))
    tab = s["parts"][pid]["table"]
    base, under = tab["phases"]
    under["mean_us"] *= factor
    tab["change_pct"]["mean"] = 100 * (under["mean_us"] / base["mean_us"] - 1)
    return s
