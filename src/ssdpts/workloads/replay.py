"""Trace replay as a test (ssdpts trace replay): a recorded trace played onto a target N times by
fio's ``read_iolog``, each figure the median of the runs with its RSE (docs/design.md#repeated-runs).

A run directory like a quick run's: manifest.json (kind "replay"), device/, fio/replay-rNN.fio and
.json (json+), trace/ (the trace given, its summary, and replay.iolog: what fio replayed, offsets
wrapped to the target), replay.json (every run's values, the medians, the response-time
distribution of the median run). docs/trace.md, docs/results-format.md "Replay runs".

Address scaling: when the trace reaches beyond the target, offsets are taken modulo the target's
usable size, aligned (fio's ``replay_scale`` divides offsets instead, which turns sequential runs
into overlapping ones and misaligns them; the modulo keeps every IO's size, alignment and
sequentiality, and folds the heat map over itself). The number of IOs moved is disclosed.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Callable

from ssdpts.errors import UserError
from ssdpts.measurement import Measurement
from ssdpts.pts.workload import Iolog, Step, Workload
from ssdpts.results.formats import FORMAT
from ssdpts.results.repeated import RepeatedRun, read_repeated
from ssdpts.stats import check_runs, summary
from ssdpts.store import RunStore, file_digest, utc_now, write_json_atomic
from ssdpts.pts.units import fmt_capacity

KIND = "replay"
REPLAY_JSON = "replay.json"
PRECONDITIONS = ("none", "wipc")
PCTS = (50.0, 90.0, 99.0, 99.9, 99.99)
# (key, label, unit, kind for the performance delta)
FIGURES = (("completion_s", "Completion time", "s", "time"), ("iops", "IOPS", "IOPS", "speed"),
           ("mb_per_s", "Throughput", "MB/s", "speed"))


@dataclass(frozen=True)
class ReplaySpec:
    runs: int = 3
    no_stall: bool = False  # fio replay_no_stall: as fast as possible, order kept
    time_scale_pct: int = 100  # fio replay_time_scale: 200 = twice the recorded IO rate
    iodepth: int | None = None  # None: the trace's highest queue depth (32 when it has none)
    precondition: str = "none"  # "wipc": PTS purge, then WIPC (twice the capacity in SEQ 128KiB writes)
    ioengine: str = "libaio"

    def __post_init__(self) -> None:
        check_runs(self.runs)
        if not 1 <= self.time_scale_pct <= 100_000:
            raise UserError(f"--time-scale {self.time_scale_pct}: give a percentage of the recorded IO rate, 1..100000")
        if self.iodepth is not None and not 1 <= self.iodepth <= 65536:
            raise UserError(f"--iodepth {self.iodepth}: give 1..65536")
        if self.precondition not in PRECONDITIONS:
            raise UserError(f"--precondition {self.precondition!r}: choose one of {', '.join(PRECONDITIONS)}")

    def to_dict(self) -> dict:
        return {"runs": self.runs, "no_stall": self.no_stall, "time_scale_pct": self.time_scale_pct,
                "iodepth": self.iodepth, "precondition": self.precondition, "ioengine": self.ioengine}


def wrap_offsets(offset, size, capacity_bytes: int):
    """(offsets fitted to the target, how many moved): unchanged when the trace fits; else each
    offset modulo the largest aligned span that leaves room for the largest IO."""
    import numpy as np

    end = offset + size
    if not len(offset) or int(end.max()) <= capacity_bytes:
        return offset, 0
    align = 4096 if not (offset % 4096).any() else 512
    span = (capacity_bytes - int(size.max())) // align * align
    if span <= 0:
        raise UserError(f"the trace has {int(size.max())}-byte IOs, larger than the target ({capacity_bytes} bytes): "
                        "give a larger target")
    moved = end > capacity_bytes
    new = np.where(moved, offset % span, offset)
    return new, int(moved.sum())


def prepare_trace(trace_path: Path | str):
    """The trace, read and checked before any device is touched (bad input: one line, exit 2)."""
    from ssdpts.workloads.iotrace import read_trace

    trace = read_trace(trace_path)
    if not len(trace):
        raise UserError(f"{trace_path} has no read or write: nothing to replay")
    return trace


def replay_step(n: int, iolog: Path, spec: ReplaySpec, iodepth: int, read_pct: int) -> Step:
    """Replay n as a step of the core (engine/ executors, the step gate, the device trace): its
    stimulus the iolog; the workload only describes it (the trace's read share, the queue depth)."""
    return Step(KIND, "replay", "round", n, 1, Workload("rand", read_pct, 4096, 1, iodepth), None,
                iolog=Iolog(str(iolog.absolute()), spec.no_stall, spec.time_scale_pct))


def replay_run(store: RunStore, step: Step, target_path: str, capacity_bytes: int, ioengine: str, executor) -> dict:
    """One replay through the executor (its raw files recorded as a round's), its figures from what
    the executor measured (:func:`run_values`)."""
    from ssdpts.engine.base import Area, Batch

    name = f"replay-r{step.round:02d}"
    batch = Batch([step], target_path, Area(0, capacity_bytes), 1, ioengine,
                  job_path=store.path / "fio" / f"{name}.fio", output_path=store.path / "fio" / f"{name}.json")
    result = executor.run(batch)
    store.record_round(KIND, f"r{step.round:02d}", [batch.job_path, batch.output_path], [])
    return run_values(result.measurements[0], (result.timelines or [{}])[0].get("fio_job_runtime_ms"))


def run_values(m: Measurement, job_runtime_ms: float | None = None) -> dict:
    """One replay's figures from its Measurement: completion time = fio's job_runtime (the job from
    its first IO to its last completion: the step's timeline, engine/fio.py step_timeline; the
    measured duration where the executor gives none), IOPS and MB/s over it, per IO type its
    response times (fio's total latency, lat_ns: submission to completion) from the json+ histogram.

    IOPS is the replay's IOs over its completion time, as docs/results-format.md "Replay runs"
    defines it: the rate Measurement.iops gives too (read IOPS + write IOPS, each over fio's run time
    of its direction), but over the completion time; fio 3.33 gave each direction a run time 1 ms
    longer than job_runtime on every replay measured (0.03% of IOPS on 2-6 s replays)."""
    from ssdpts.measurement import percentile_from_bins

    runtime_s = float(job_runtime_ms or 0) / 1000.0 or m.duration_s
    ios = m.ios
    io_bytes = m.read.io_bytes + m.write.io_bytes
    per = {}
    for kind, d in (("read", m.read), ("write", m.write)):
        if not d.ios:
            per[kind] = None
            continue
        per[kind] = {"ios": d.ios, "io_bytes": d.io_bytes, "lat_mean_us": d.lat_mean_ns / 1000,
                     "lat_max_us": d.lat_max_ns / 1000,
                     **{f"lat_p{p:g}_us": _capped_us(percentile_from_bins(d.lat_bins_ns, p), d.lat_max_ns)
                        for p in PCTS}}
    return {"completion_s": runtime_s, "ios": ios, "io_bytes": io_bytes,
            "iops": ios / runtime_s if runtime_s else None,
            "mb_per_s": io_bytes / runtime_s / 1e6 if runtime_s else None,
            "read_ios": m.read.ios, "write_ios": m.write.ios, "lat_kind": m.lat_kind, "types": per}


def _capped_us(value_ns: float | None, max_ns: float) -> float | None:
    """A percentile in µs as ssdpts run reports one (Measurement.lat_percentile_ns): fio's bin midpoint
    capped at the maximum fio measured, so that no row shows p99.99 > max; None without a histogram."""
    if value_ns is None:
        return None
    return (min(value_ns, max_ns) if max_ns else value_ns) / 1000


def figures(runs: list[dict], planned: int = 0) -> list[dict]:
    """Median and RSE of every figure over the runs; the median run is the completion time's. Fewer
    runs than ``planned`` (in progress, or interrupted): not judged, reliability None."""
    out = []
    for key, label, unit, kind in FIGURES:
        out.append({"key": key, "label": label, "unit": unit, "kind": kind,
                    **summary([r[key] for r in runs], planned=planned)})
    return out


def execute(store: RunStore, spec: ReplaySpec, trace, target_path: str, capacity_bytes: int, executor,
            purge: Callable[[], dict] | None, log: Callable[[str], None], guard: Callable[[], None] | None) -> dict:
    """Purge and WIPC when asked, then the N replays, replay.json written after every run."""
    from ssdpts.workloads.iotrace import save, summary, write_iolog
    from ssdpts.workloads.quick import precondition_step

    tdir = store.path / "trace"
    tdir.mkdir(exist_ok=True)
    offsets, moved = wrap_offsets(trace.offset_bytes, trace.size_bytes, capacity_bytes)
    iolog = tdir / "replay.iolog"
    write_iolog(iolog, "/dev/ssdpts-trace", trace.issue_ns, offsets, trace.size_bytes, trace.write)
    save(trace, tdir / "trace.iolog")  # the trace as given (with its completions when it had them)
    tsum = summary(trace)
    qd = (tsum["queue_depth"] or {}).get("max")
    iodepth = spec.iodepth or qd or 32
    read_pct = round(100 * tsum["reads"] / max(tsum["ios"], 1))
    doc = {"format": FORMAT, "kind": KIND, "spec": spec.to_dict(), "started": utc_now(), "iodepth": iodepth,
           "trace": {"ios": tsum["ios"], "reads": tsum["reads"], "writes": tsum["writes"],
                     "block_sizes": tsum["block_sizes"], "duration_s": tsum["duration_s"], "source": tsum["source"],
                     "timed": tsum["timed"], "moved_ios": moved, "other_actions": tsum["other_actions"],
                     "summary": "trace/trace.iolog.summary.json", "replayed_iolog": "trace/replay.iolog",
                     "replayed_sha256": file_digest(iolog).sha256},
           "purge": None, "precondition": None, "runs": [], "figures": [], "median_run": None}
    write_json_atomic(store.path / REPLAY_JSON, doc)
    if spec.precondition == "wipc":
        if guard is not None:
            guard()
        log("purge (PTS: before the preconditioning)")
        doc["purge"] = purge() if purge is not None else None
        from ssdpts.engine.base import Area, Batch

        step = precondition_step("wipc", capacity_bytes, KIND)
        log(f"WIPC: {fmt_capacity(step.io_bytes)} SEQ 128KiB writes")
        batch = Batch([step], target_path, Area(0, capacity_bytes), 1, spec.ioengine,
                      job_path=store.path / "fio" / "precondition.fio", output_path=store.path / "fio" / "precondition.json")
        m = executor.run(batch).measurements[0]
        store.record_round("replay", "precondition", [batch.job_path, batch.output_path], [])
        doc["precondition"] = {"method": "wipc", "io_bytes": step.io_bytes, "file": "fio/precondition.json",
                               "duration_s": m.duration_s}
        write_json_atomic(store.path / REPLAY_JSON, doc)
    for i in range(1, spec.runs + 1):
        if guard is not None:
            guard()
        step = replay_step(i, iolog, spec, iodepth, read_pct)
        v = replay_run(store, step, target_path, capacity_bytes, spec.ioengine, executor)
        doc["runs"].append({"file": f"fio/replay-r{i:02d}.json", **v})
        doc["figures"] = figures(doc["runs"], spec.runs)
        doc["median_run"] = doc["figures"][0]["median_run"]
        write_json_atomic(store.path / REPLAY_JSON, doc)
        log(f"run {i}: {v['completion_s']:.3f} s, {v['iops'] or 0:,.0f} IOPS, {v['mb_per_s'] or 0:,.1f} MB/s "
            f"({v['read_ios']:,} reads, {v['write_ios']:,} writes)")
    doc["finished"] = utc_now()
    write_json_atomic(store.path / REPLAY_JSON, doc)
    return doc


def disclosures(spec: ReplaySpec, trace=None, moved: int | None = None) -> list[str]:
    out = [f"each figure: median of {spec.runs} replays, with its RSE (docs/compare.md#repeated-runs)",
           "not a PTS test: a trace replayed by fio read_iolog (replay_redirect to the target)",
           "as fast as possible, IO order kept (replay_no_stall)" if spec.no_stall else
           f"timed as recorded, at {spec.time_scale_pct}% of the recorded IO rate (replay_time_scale)",
           "purged, then PTS WIPC (twice the capacity in SEQ 128KiB writes) before the replays"
           if spec.precondition == "wipc" else "no purge, no preconditioning: the device as it was"]
    if trace is not None and not trace.timed:
        out.append("the trace has no times (iolog v2 without waits): every replay is as fast as possible")
    if moved:
        out.append(f"{moved:,} IOs lay beyond the target: their offsets were wrapped (modulo the target's size)")
    return out


def start_replay(spec: ReplaySpec, trace_path: Path | str, target, *, executor, out_dir: Path, confirm: str | None,
                 interactive: bool = False, argv: list[str] | None = None, describe: str | None = None,
                 log: Callable[[str], None] = lambda _s: None,
                 render_partial: Callable[[Path], object] | None = None) -> tuple[RunStore, dict]:
    """The checks of ``ssdpts run``, the same manifest and device records (session.start_other_run),
    then the replays. An interruption or a failed fio marks the run and keeps every replay measured
    (with ``render_partial``'s report of them)."""
    from ssdpts.run.session import start_other_run

    trace = prepare_trace(trace_path)

    def entries(target) -> dict:
        _o, moved = wrap_offsets(trace.offset_bytes, trace.size_bytes, target.size_bytes)
        return {"replay_spec": spec.to_dict(), "trace_file": str(Path(trace_path).resolve()),
                "deviations": disclosures(spec, trace, moved)}

    def body(store: RunStore, target, side, info) -> dict:
        def purge() -> dict:
            return side.purge("auto", info, log)  # judged by its effect (device/purge/check.py)

        return execute(store, spec, trace, target.real_path, target.size_bytes, executor, purge, log, side.guard)

    return start_other_run(KIND, target, executor=executor, out_dir=out_dir, confirm=confirm, interactive=interactive,
                           argv=argv, describe=describe, entries=entries, body=body,
                           purge="auto" if spec.precondition == "wipc" else None, render_partial=render_partial)


def progress(run_dir: Path | str) -> dict | None:
    """Where a running replay is, from its replay.json (written after every replay): the replays done
    and planned, and the time left at the pace of those done (else the trace's own length)."""
    try:
        doc = json.loads((Path(run_dir) / REPLAY_JSON).read_text())
        planned = int(doc["spec"]["runs"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    runs = doc.get("runs") or []
    took = [float(r["completion_s"]) for r in runs if isinstance(r.get("completion_s"), (int, float))]
    each = (sum(took) / len(took)) if took else float((doc.get("trace") or {}).get("duration_s") or 0.0)
    left = max(planned - len(runs), 0) * each
    return {"part": "replay", "step": min(len(runs) + 1, planned), "steps": planned, "parts_done": 0,
            "parts_total": 1, "left_s": (left, left)}


def load(run_dir: Path | str) -> RepeatedRun:
    """A replay run directory, read (results/repeated.py); UserError when it is not one."""
    return read_repeated(run_dir, KIND, REPLAY_JSON, "ssdpts trace replay")


def db_rows(run_dir: Path | str, run_uid: str) -> list[dict]:
    """Results library rows: per figure its median (metric completion_s, iops, mb_per_s) and RSE."""
    run = load(run_dir)
    rows = []
    t = run.doc["trace"]
    rp = round(100 * t["reads"] / max(t["ios"], 1))  # the trace's read share by IO count
    for f in run.figures:
        base = {"run_uid": run_uid, "test": KIND, "part": "replay", "block_size_bytes": None,
                "mix": f"{rp}/{100 - rp}", "point": f"QD{run.doc['iodepth']}", "steady_state_reached": None}
        rows.append({**base, "metric": f.key, "value": f.median, "unit": f.unit})
        rows.append({**base, "metric": f"{f.key}_rse", "value": f.rse, "unit": "fraction"})
    return [{**r, "ord": i} for i, r in enumerate(rows)]


def compare(run_dirs: list[str | Path], baseline: str | Path | None = None) -> dict:
    """Replays of the same trace on drives A (, C, ...) against baseline B: per figure the medians
    and the performance delta (docs/design.md#repeated-runs): completion time is a time, Δ = time_B/time_A − 1; IOPS and MB/s
    are speeds, Δ = A/B − 1; positive = A is faster. Replays of different traces or settings are refused."""
    from ssdpts.compare import baseline_first, compare_repeated

    runs = [load(d) for d in baseline_first(run_dirs, baseline)]
    for r in runs[1:]:
        if r.doc["trace"]["replayed_sha256"] != runs[0].doc["trace"]["replayed_sha256"]:
            raise UserError(f"{r.path} replayed another trace (or one wrapped to another size) than the baseline "
                            f"{runs[0].path}: compare replays of the same trace")
    return compare_repeated(runs, "replay runs", ("no_stall", "time_scale_pct", "precondition"),
                            ("key", "label", "unit", "kind", "values", "reliable", "deltas"), "replay-comparison")


def comparison_text(cmp: dict) -> str:
    from ssdpts.compare import repeated_text

    return repeated_text(cmp, 18, lambda v, unit: f"{v:,.3f}" if unit == "s" else f"{v:,.1f}",
                         "Δ (docs/compare.md#delta): completion time time_B/time_A − 1, IOPS and MB/s A/B − 1; positive = A is "
                         "faster; * = unreliable (RSE above 5%)")
