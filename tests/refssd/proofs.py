"""The proofs on the reference SSD, as functions that can fail.

Each proof takes what ssdpts wrote (its run directory, read here as plain JSON: `Run`), what the
simulator recorded (its truth and io log: `Drive`) and the drive's reference figures (`refssd
params`, refssd/src/reference.rs), and returns the checks that failed, each with its figures.
A test asserts that the list is empty for the real run and, for its mutation checks, that the
same proof fails when ssdpts's output or input is made wrong in a known way (`mutations.py`).

Every tolerance is a named constant with the reason for its size: what the measurement itself
allows (edges of a step, the truth log's resolution, the drive not yet steady), never room for a
mis-measurement of ssdpts. docs/reference-ssd.md lists them with the last measured figures.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
import json
from pathlib import Path
import statistics

import numpy as np

from .conftest import refssd_host

# ---- tolerances --------------------------------------------------------------------------------

# ssdpts's IOPS of a WSAT sample against the simulator's completions over the same interval. fio
# divides the IOs by its own run time, ssdpts times the step by its gate (a few ms apart: a 2-s
# sample of 8,000 IOPS is ~16,000 IOs, so 5 ms of edge is 0.25%), and the first step of each fio
# process starts its clones a few ms apart (seen: +0.86% on the first sample, where fio's IOPS were
# above the drive's maximum). Every other sample has been within 0.2%.
WSAT_SAMPLE_REL = 0.02
# The bytes ssdpts counted against the host pages the simulator programmed, over the last 5
# samples: only the commands in flight at the two ends of a 10-s span can differ (TC 4 x QD 32 =
# 128 commands at most, ~0.5% of 27,000; seen 0.2%).
BYTES_REL = 0.01
# The simulator's own rate in the samples before GC starts, against the dies' program rate
# dies / tPROG: a sample loses only its ramp and drain (one response time, 16 ms of 2 s: 0.8%).
FOB_REL = 0.02
# ssdpts's drop: every sample that ends before the simulator's GC started is at FOB (less the
# FOB tolerance), every sample that starts after it below that.
# The simulator's WA over the last 5 samples of a 6 x capacity WSAT against reference_wa: the
# drive is still converging there. `refssd predict` at the same point (TC 4 x QD 32, 8 seeds):
# -0.8 ... -2.1% (steady, it is within 0.5%: tests/refssd/test_reference_model.py).
WSAT_WA_BELOW = 0.03
WSAT_WA_ABOVE = 0.01  # the window's own noise over 0.8 x capacity (0.5% in predict)
# ssdpts's steady IOPS (its last 5 samples) against the reference's steady rate: + from the WA
# still below its steady value (predict: +0.8 ... +2.2%), - from the ramp and drain of each 2-s
# sample at 47 ms mean response time (at most 2.4%).
WSAT_STEADY_BELOW = 0.03
WSAT_STEADY_ABOVE = 0.03
# GC onset: within one interval of the truth log (the truth's resolution).
# A purge (discard) leaves each die's open block and its victim in collection part used: the first
# GC copy may come up to one block per die (dies x N pages) before a fresh drive's onset.
PURGE_ONSET_BLOCKS_PER_DIE = 1


@dataclass
class Failure:
    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


@dataclass
class Verdict:
    """The checks a proof made, the ones that failed, and the figures it compared."""

    proof: str
    failures: list[Failure] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)

    def check(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(name)
        if not ok:
            self.failures.append(Failure(name, detail))
        return ok

    @property
    def ok(self) -> bool:
        return not self.failures

    def failed(self, name: str) -> bool:
        return any(f.check == name for f in self.failures)

    def __str__(self) -> str:
        return f"{self.proof}: " + ("passed" if self.ok else "; ".join(map(str, self.failures)))


# ---- what ssdpts wrote -------------------------------------------------------------------------

@dataclass
class Run:
    """A run directory as ssdpts wrote it: its step records, summary and manifest (plain JSON, so
    that a mutation can change them as a wrong ssdpts would have written them)."""

    path: Path
    steps: list[dict]
    summary: dict
    manifest: dict

    @classmethod
    def read(cls, path: Path) -> "Run":
        steps = [json.loads(x) for x in (path / "steps.jsonl").read_text().splitlines() if x.strip()]
        return cls(path, sorted(steps, key=lambda s: s["index"]), json.loads((path / "summary.json").read_text()),
                   json.loads((path / "manifest.json").read_text()))

    def of(self, test: str, part: str | None = None, phase: str | None = "round") -> list[dict]:
        return [s for s in self.steps if s["test"] == test and (part is None or s["part"] == part)
                and (phase is None or s["phase"] == phase)]


@dataclass
class Sample:
    index: int
    iops: float
    ios: int
    write_bytes: int
    t0: float
    t1: float
    written_before: int  # bytes ssdpts wrote in this run before the sample
    written: int  # ... and up to its end


def wsat_samples(run: Run) -> list[Sample]:
    out, written = [], 0
    for s in run.of("wsat"):
        m = s["measurement"]
        b = m["write"]["io_bytes"]
        out.append(Sample(s["index"], m["iops"], m["write"]["ios"], b, m["start_time"], m["end_time"], written,
                          written + b))
        written += b
    return out


# ---- what the simulator recorded ---------------------------------------------------------------

class Drive:
    """The simulator's record of one drive: its truth intervals and, when it kept one, its io log
    (every command's arrival and modeled service time), with its parameters and reference."""

    def __init__(self, truth: refssd_host.Truth, io_log: Path | None, params: dict):
        self.truth = truth
        self.p = params
        self.interval_s = truth.config["interval_s"] if truth.config else None
        self.arrivals = self.done = None
        if io_log is not None:
            cmds = sorted(refssd_host.io_log_commands(io_log, "W"))
            self.arrivals = np.array([a / 1e9 for a, _n, _s in cmds])
            self.done = np.sort(np.array([(a + s) / 1e9 for a, _n, s in cmds]))

    @classmethod
    def of(cls, ssd, until: float) -> "Drive":
        """The records of a running drive once they cover everything up to epoch time ``until``
        (the io log is written with the truth: refssd_host.ReferenceSSD.wait_truth)."""
        truth = ssd.wait_truth(until + 2 * (ssd.interval_ms / 1000) + 0.05)
        return cls(truth, ssd.io_log_path, ssd.params())

    def write_rate(self, t0: float, t1: float) -> float:
        """Host writes completed per second in [t0, t1]: counted one by one from the io log when
        there is one, else from the truth intervals pro rata."""
        if self.done is not None:
            return float(np.searchsorted(self.done, t1) - np.searchsorted(self.done, t0)) / (t1 - t0)
        return self.truth.rate("host_write_ios", t0, t1)

    def first(self, key: str, after: float = 0.0):
        """(the interval before, the first interval) in which ``key`` is positive, after epoch time
        ``after``."""
        prev = None
        for iv in self.truth.intervals:
            if iv["t0"] >= after and iv[key] > 0:
                return prev, iv
            prev = iv
        return prev, None

    def pages_total_at(self, t: float) -> int:
        """Host pages written up to epoch time t (the last truth record before it)."""
        i = bisect.bisect_right([iv["t1"] for iv in self.truth.intervals], t) - 1
        return self.truth.intervals[i]["host_write_pages_total"] if i >= 0 else 0


def per_sample_check(v: Verdict, samples: list[Sample], drive: Drive, rel: float = WSAT_SAMPLE_REL) -> list[float]:
    """Every sample's IOPS against the simulator's completions over the same interval."""
    diffs = [x.iops / drive.write_rate(x.t0, x.t1) - 1 for x in samples]
    if not samples:
        return diffs
    worst = max(range(len(samples)), key=lambda i: abs(diffs[i]))
    x = samples[worst]
    v.check("per-sample IOPS", abs(diffs[worst]) <= rel,
            f"sample {x.index}: ssdpts {x.iops:.0f} IOPS, simulator {drive.write_rate(x.t0, x.t1):.0f} "
            f"({diffs[worst]:+.2%}; limit {rel:.0%})")
    return diffs


# ---- WSAT --------------------------------------------------------------------------------------

def wsat_proof(run: Run, drive: Drive, fresh_drive: bool = True) -> Verdict:
    """WSAT on the reference SSD: every sample is the simulator's rate over the same interval, the
    bytes ssdpts counted are the pages the drive was given, the FOB plateau is the dies' program
    rate, GC starts where the geometry puts it and ssdpts's drop comes with it, and the end of the
    run is the reference's steady state as far as a 6 x capacity run gets there."""
    p = drive.p
    v = Verdict("wsat")
    s = wsat_samples(run)
    v.check("samples", len(s) >= 10, f"{len(s)} samples")
    if len(s) < 10:
        return v
    table = run.summary["parts"]["wsat"]["table"]
    # what ssdpts reports is what it measured
    series = [x["iops"] for x in table["series"]]
    v.check("reported series", np.allclose(series, [x.iops for x in s], rtol=1e-9),
            "the summary's series is not the samples' IOPS")
    window = s[-5:]
    v.check("reported steady value",
            abs(table["final_window_iops"] / statistics.fmean(x.iops for x in window) - 1) < 1e-9,
            f"final_window_iops {table['final_window_iops']} is not the mean of the last 5 samples")
    # every sample, the drop included, against the simulator over the same interval
    diffs = per_sample_check(v, s, drive)
    # the bytes ssdpts counted over the steady window are the pages the simulator programmed for
    # the host there, so the WA computed from ssdpts's bytes is the simulator's
    t0, t1 = window[0].t0, window[-1].t1
    host_pages = drive.truth.sum("host_write_pages", t0, t1)
    ssdpts_pages = sum(x.write_bytes for x in window) / p["page_bytes"]
    flash = drive.truth.sum("flash_prog_pages", t0, t1)
    wa_sim, wa_bytes = flash / host_pages, flash / ssdpts_pages
    v.check("WA from ssdpts's bytes", abs(wa_bytes / wa_sim - 1) <= BYTES_REL,
            f"{wa_bytes:.4f} from {ssdpts_pages:.0f} pages ssdpts wrote, simulator {wa_sim:.4f} from "
            f"{host_pages:.0f} ({wa_bytes / wa_sim - 1:+.2%}; limit {BYTES_REL:.0%})")
    # GC onset: where the geometry puts it, within one truth interval
    before, first = drive.first("fg_gc_blocks", after=s[0].t0 - 5)
    fob = p["fob_write_iops"]
    onset = p["gc_start_host_pages"] + 1
    if fresh_drive:
        lo = before["host_write_pages_total"] if before else 0
        hi = first["host_write_pages_total"] if first else None
        v.check("GC onset", first is not None and lo < onset <= hi,
                f"GC started between host pages {lo} and {hi}; reference: page {onset}")
    t_gc = first["t1"] if first else float("inf")
    pre = [x for x in s if x.t1 < t_gc - (drive.interval_s or 0)]
    post = [x for x in s if x.t0 > t_gc]
    v.check("FOB samples", len(pre) >= 2, f"{len(pre)} samples before GC started")
    fob_sim = [drive.write_rate(x.t0, x.t1) for x in pre]
    v.check("FOB rate", all(abs(r / fob - 1) <= FOB_REL for r in fob_sim),
            f"simulator {[round(r) for r in fob_sim]} IOPS before GC, reference {fob:.0f} (limit {FOB_REL:.0%})")
    v.check("drop", all(x.iops >= (1 - FOB_REL) * fob for x in pre) and all(x.iops < (1 - FOB_REL) * fob for x in post),
            f"ssdpts {[round(x.iops) for x in pre]} before GC started, {[round(x.iops) for x in post[:3]]} after")
    wa_ref = p["reference_wa"]
    v.check("steady WA", -WSAT_WA_BELOW <= wa_sim / wa_ref - 1 <= WSAT_WA_ABOVE,
            f"simulator {wa_sim:.4f} over the last 5 samples, reference {wa_ref:.4f} ({wa_sim / wa_ref - 1:+.2%}; "
            f"limits -{WSAT_WA_BELOW:.0%} +{WSAT_WA_ABOVE:.0%})")
    steady = table["final_window_iops"]
    ref_iops = p["steady_write_iops"]
    v.check("steady IOPS", -WSAT_STEADY_BELOW <= steady / ref_iops - 1 <= WSAT_STEADY_ABOVE,
            f"ssdpts {steady:.0f}, reference {ref_iops:.0f} ({steady / ref_iops - 1:+.2%})")
    v.figures = {"fob_reference_iops": fob, "fob_ssdpts_iops": [x.iops for x in pre], "fob_simulator_iops": fob_sim,
                 "gc_onset_reference_page": onset,
                 "gc_onset_truth_pages": [before and before["host_write_pages_total"], first and first["host_write_pages_total"]],
                 "per_sample_difference": diffs, "worst_sample_difference": max(diffs, key=abs),
                 "wa_reference": wa_ref, "wa_simulator_last5": wa_sim, "wa_from_ssdpts_bytes": wa_bytes,
                 "steady_reference_iops": ref_iops, "steady_ssdpts_iops": steady,
                 "steady_simulator_iops": drive.write_rate(t0, t1)}
    return v


def purge_proof(run: Run, drive: Drive, before: dict, after: dict) -> Verdict:
    """The purge ssdpts chose returned the drive to fresh-out-of-box: every page that held data
    was deallocated, and until the drive has used its spare again the simulator copied no page for
    GC (nothing valid to move), at the rate a fresh drive writes."""
    p = drive.p
    v = Verdict("purge")
    s = wsat_samples(run)
    diffs = per_sample_check(v, s, drive)
    mapped = before["valid_pages"]
    trimmed = after["host_trim_pages"] - before["host_trim_pages"]
    v.check("deallocated", mapped > 0 and trimmed >= mapped,
            f"{trimmed} pages deallocated of {mapped} that held data")
    # host pages the drive took before the run's first sample, from the simulator's record
    base = drive.pages_total_at(s[0].t0 - 0.001) if s else 0
    fresh_pages = p["gc_start_host_pages"] - PURGE_ONSET_BLOCKS_PER_DIE * p["dies"] * p["pages_per_block"]
    fresh = [x for x in s if drive.pages_total_at(x.t1) - base < fresh_pages]
    v.check("fresh samples", len(fresh) >= 2, f"{len(fresh)} samples before the spare could be used")
    copies = [drive.truth.sum("gc_copy_pages", x.t0, x.t1) for x in fresh]
    v.check("no GC copy while fresh", all(c == 0 for c in copies),
            f"GC copied {[round(c) for c in copies]} pages in the samples before the spare was used")
    # a fresh page costs a program, and at most 1/N of an erase (a discarded block idle GC had not
    # erased yet): the rate lies between the two, less a sample's ramp and drain
    fob = p["fob_write_iops"]
    slowest = p["dies"] * 1e9 / (p["t_prog_ns"] + p["t_erase_ns"] / p["pages_per_block"])
    rates = [drive.write_rate(x.t0, x.t1) for x in fresh]
    v.check("fresh rate", all((1 - FOB_REL) * slowest <= r <= (1 + FOB_REL) * fob for r in rates),
            f"simulator {[round(r) for r in rates]} IOPS, a fresh drive {slowest:.0f} ... {fob:.0f}")
    v.figures = {"per_sample_difference": diffs, "ssdpts_iops": [x.iops for x in s], "deallocated_pages": trimmed, "mapped_pages": mapped, "fresh_gc_copies": copies,
                 "fresh_simulator_iops": rates, "fresh_ssdpts_iops": [x.iops for x in fresh],
                 "fresh_bounds_iops": [slowest, fob]}
    return v


# ---- WSAT behind the emulated NVMe controller ----------------------------------------------------

# ssdpts's IOPS (per guest second, times the guest clock's rate) against the simulator's rate over
# the same interval on the host's clock. The guest clock is set beside the host's from the shortest
# of 7 round trips before and after the run (each within ~20 ms) and assumed to drift linearly:
# ~10 ms of edge on each 2-s sample.
NVME_SAMPLE_REL = 0.02
# The writes ssdpts counted against the simulator's over the whole run (the margin of 0.5 s around
# it holds no other writes: the guest is idle then) and over the last samples (commands in flight
# at the two edges, QD 32 of ~8,000)
NVME_COUNT_REL = 0.005
NVME_LAST_COUNT_REL = 0.01
# The simulator's WA over the samples of the last capacity written (8 x capacity: steady, within
# 0.5% in predict) against reference_wa, with that window's noise
NVME_WA_REL = 0.01


def nvme_proof(run: Run, drive: Drive, before: dict, after: dict, host_time, clock_rate: float) -> Verdict:
    """WSAT through QEMU's NVMe controller after ssdpts's Format NVM: the Format reached the drive
    as a deallocation of every page, the drive was fresh until the spare was used, every write
    ssdpts counted reached it, each sample is the simulator's rate, and the end of the run is the
    reference's steady WA."""
    p = drive.p
    v = Verdict("nvme-wsat")
    s = wsat_samples(run)
    for x in s:  # to the host's clock and seconds
        x.t0, x.t1, x.iops = host_time(x.t0), host_time(x.t1), x.iops * clock_rate
    v.check("samples", len(s) >= 10, f"{len(s)} samples")
    if len(s) < 10:
        return v
    trims = after["host_trim_ios"] - before["host_trim_ios"]
    extra = after["host_trim_pages"] - before["host_trim_pages"] - before["valid_pages"]
    # (the page or two ssdpts itself wrote before its purge, its claim on the drive, are unmapped too)
    v.check("format reached the drive", trims >= 1 and 0 <= extra <= 8,
            f"{trims} deallocations, {extra} pages beyond the {before['valid_pages']} that held data")
    diffs = per_sample_check(v, s, drive, NVME_SAMPLE_REL)
    page = p["page_bytes"]
    fresh_pages = p["gc_start_host_pages"] - PURGE_ONSET_BLOCKS_PER_DIE * p["dies"] * p["pages_per_block"]
    fresh = [x for x in s if x.written / page < fresh_pages]
    later = [x for x in s if x.written_before / page > p["gc_start_host_pages"] + p["logical_pages"] / 4]
    copies = {x.index: drive.truth.sum("gc_copy_pages", x.t0, x.t1) for x in s}
    v.check("fresh samples", len(fresh) >= 2, f"{len(fresh)} samples before the spare could be used")
    v.check("no GC copy while fresh", all(copies[x.index] == 0 for x in fresh),
            f"GC copied {[round(copies[x.index]) for x in fresh]} pages in the fresh samples")
    v.check("GC once the spare is used", bool(later) and all(copies[x.index] > 0 for x in later),
            f"{sum(copies[x.index] == 0 for x in later)} of {len(later)} later samples copied nothing")
    ssdpts_ios = sum(x.ios for x in s)
    sim_ios = drive.truth.sum("host_write_ios", s[0].t0 - 0.5, s[-1].t1 + 0.5)
    v.check("every write reached the drive", abs(sim_ios / ssdpts_ios - 1) <= NVME_COUNT_REL,
            f"ssdpts {ssdpts_ios}, simulator {sim_ios:.0f} (limit {NVME_COUNT_REL:.1%})")
    last = [x for x in s if x.written_before >= s[-1].written - p["capacity_bytes"]]
    last_ios = sum(x.ios for x in last)
    sim_last = drive.truth.sum("host_write_ios", last[0].t0, last[-1].t1)
    v.check("writes of the last capacity", abs(sim_last / last_ios - 1) <= NVME_LAST_COUNT_REL,
            f"ssdpts {last_ios}, simulator {sim_last:.0f} (limit {NVME_LAST_COUNT_REL:.0%})")
    wa = drive.truth.wa(last[0].t0, last[-1].t1)
    v.check("steady WA", abs(wa / p["reference_wa"] - 1) <= NVME_WA_REL,
            f"simulator {wa:.4f} over the last capacity written, reference {p['reference_wa']:.4f}")
    v.figures = {"per_sample_difference": diffs, "ssdpts_write_ios": ssdpts_ios, "simulator_write_ios": sim_ios,
                 "ssdpts_last_capacity_ios": last_ios, "simulator_last_capacity_ios": sim_last,
                 "wa_simulator_last_capacity": wa, "wa_reference": p["reference_wa"],
                 "fresh_gc_copies": [copies[x.index] for x in fresh],
                 "samples": [{"index": x.index, "iops": x.iops, "simulator_iops": drive.write_rate(x.t0, x.t1),
                              "gc_copy_pages": copies[x.index], "written": x.written} for x in s]}
    return v
