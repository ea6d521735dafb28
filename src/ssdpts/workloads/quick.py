"""ssdpts quick: the short synthetic table drive evaluators publish (docs/quick.md), in minutes.

Figures (docs/quick.md "The figures", the Iometer tables): SEQ 1MiB read/write at T1 QD64 (MB/s), RND 4KiB
read/write at T4 QD64 (kIOPS), the same four at T1 QD1, mixed RND 4KiB 80/20 and 70/30 at T1 QD1
(kIOPS); optionally CrystalDiskMark 8's "Default" and "NVMe SSD" profiles (docs/quick.md), MB/s.

Statistics (docs/design.md#repeated-runs): every figure is the median of N warm runs (N odd, >= 3): a measured
value, never an average; RSE = s / (x̄ · √N) (stats.py). A figure whose RSE is above 5%
gets two more runs (N stays odd) until its RSE is at most 5% or N = 7; above 5% at 7 runs it is
marked unreliable ("discarded or studied", §4.2). An optional unmeasured cold run of each figure
(§5.1.3) and a preconditioning (none, one sequential fill, or the PTS WIPC: twice the capacity in
SEQ 128KiB writes) come first and are disclosed.

The run directory: manifest.json (kind "quick"), device/, fio/<figure>-rNN.json (fio json+ of every
run, cold-NN for the cold run, precondition.json), and quick.json with every run's value, as
docs/results-format.md describes. Every figure is recomputable from the json+ files alone.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Callable

from ssdpts.engine.base import Area, Batch, Executor
from ssdpts.errors import UserError
from ssdpts.measurement import Measurement
from ssdpts.pts.workload import Step, Workload
from ssdpts.results import timing
from ssdpts.results.repeated import RepeatedRun, read_repeated
from ssdpts.results.formats import FORMAT
from ssdpts.stats import MAX_REPEATS, MIN_REPEATS, RSE_LIMIT, check_runs, runs_needed, summary
from ssdpts.store import RunStore, utc_now, write_json_atomic
from ssdpts.pts.units import fmt_capacity

KIB, MIB = 1024, 1024 * 1024
QUICK_JSON = "quick.json"
KIND = "quick"
PRECONDITIONS = ("none", "seq-fill", "wipc")
CDM_PROFILES = ("default", "nvme")


@dataclass(frozen=True, slots=True)
class Figure:
    """One cell of the quick table: a workload and the unit it is reported in."""

    key: str  # e.g. "seq1m-read-t1q64"
    label: str
    group: str
    workload: Workload
    unit: str  # "MB/s" (bytes / 10^6 per second, as the seed's tables and CrystalDiskMark) | "kIOPS"

    def value(self, m: Measurement) -> float:
        """The figure's number from one run's measurement (reads and writes together)."""
        return m.bw_bytes_per_s / 1e6 if self.unit == "MB/s" else m.iops / 1e3


def _fig(group: str, pattern: str, bs: int, read_pct: int, threads: int, qd: int, unit: str, key: str = "") -> Figure:
    w = Workload(pattern, read_pct, bs, threads, qd)
    size = "1MiB" if bs == MIB else f"{bs // KIB}KiB"
    what = {100: "read", 0: "write"}.get(read_pct, f"{read_pct}/{100 - read_pct} mix")
    kind = "SEQ" if pattern == "seq" else "RND"
    key = key or f"{kind.lower()}{size.lower().replace('ib', '')}-{what.split('/')[0]}-t{threads}q{qd}"
    return Figure(key, f"{kind} {size} {what} T{threads} QD{qd}", group, w, unit)


# docs/quick.md "The figures": the Iometer figures, in the published order
SEED_FIGURES: tuple[Figure, ...] = (
    _fig("T1/T4 QD64", "seq", MIB, 100, 1, 64, "MB/s"),
    _fig("T1/T4 QD64", "seq", MIB, 0, 1, 64, "MB/s"),
    _fig("T1/T4 QD64", "rand", 4 * KIB, 100, 4, 64, "kIOPS"),
    _fig("T1/T4 QD64", "rand", 4 * KIB, 0, 4, 64, "kIOPS"),
    _fig("T1 QD1", "seq", MIB, 100, 1, 1, "MB/s"),
    _fig("T1 QD1", "seq", MIB, 0, 1, 1, "MB/s"),
    _fig("T1 QD1", "rand", 4 * KIB, 100, 1, 1, "kIOPS"),
    _fig("T1 QD1", "rand", 4 * KIB, 0, 1, 1, "kIOPS"),
    _fig("Mixed T1 QD1", "rand", 4 * KIB, 80, 1, 1, "kIOPS", "rnd4k-mix80-t1q1"),
    _fig("Mixed T1 QD1", "rand", 4 * KIB, 70, 1, 1, "kIOPS", "rnd4k-mix70-t1q1"),
)


def _cdm(profile: str, rows: tuple[tuple[str, int, int, int], ...], mix: bool) -> tuple[Figure, ...]:
    """CrystalDiskMark 8 rows (pattern, block size, QD, threads), read and write, in MB/s; "Default
    [+ Mix]" adds R70%/W30% to each (docs/quick.md)."""
    out = []
    for pattern, bs, qd, threads in rows:
        for read_pct in (100, 0) + ((70,) if mix else ()):
            f = _fig(f"CrystalDiskMark {profile}", pattern, bs, read_pct, threads, qd, "MB/s")
            out.append(Figure(f"cdm-{profile.split()[0].lower()}-{f.key}", f.label, f.group, f.workload, f.unit))
    return tuple(out)


# CrystalDiskMark 8 test settings: "Default" and, with Settings > "NVMe SSD", its own four rows.
CDM_FIGURES: dict[str, tuple[Figure, ...]] = {
    "default": _cdm("Default", (("seq", MIB, 8, 1), ("seq", MIB, 1, 1), ("rand", 4 * KIB, 32, 1),
                                ("rand", 4 * KIB, 1, 1)), mix=True),
    "nvme": _cdm("NVMe SSD", (("seq", MIB, 8, 1), ("seq", 128 * KIB, 32, 1), ("rand", 4 * KIB, 32, 16),
                              ("rand", 4 * KIB, 1, 1)), mix=False),
}


@dataclass(frozen=True, slots=True)
class QuickSpec:
    runs: int = MIN_REPEATS  # N warm runs per figure before the RSE rule adds any
    seconds: float = 10.0  # of each run
    cold_run: bool = False
    precondition: str = "none"
    cdm: tuple[str, ...] = ()
    only: tuple[str, ...] = ()  # figure keys to measure (default: all)
    ioengine: str = "libaio"
    seed: int = 1

    def __post_init__(self) -> None:
        check_runs(self.runs)
        # fio's runtime is whole milliseconds and runtime=0 means no limit: a run under 1 ms would never end
        if not 0.001 <= self.seconds <= 3600:
            raise UserError(f"--seconds {self.seconds:g}: give the length of one run, 0.001 to 3600")
        if self.precondition not in PRECONDITIONS:
            raise UserError(f"--precondition {self.precondition!r}: choose one of {', '.join(PRECONDITIONS)}")
        for c in self.cdm:
            if c not in CDM_PROFILES:
                raise UserError(f"--cdm {c!r}: choose default or nvme (CrystalDiskMark 8's profiles)")
        known = [f.key for f in self._all()]
        for k in self.only:
            if k not in known:
                raise UserError(f"--only {k!r} is not a figure of this table: choose from {', '.join(known)}")

    def _all(self) -> tuple[Figure, ...]:
        return SEED_FIGURES + tuple(f for c in self.cdm for f in CDM_FIGURES[c])

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(f for f in self._all() if not self.only or f.key in self.only)

    @classmethod
    def from_dict(cls, d: dict) -> "QuickSpec":
        """The spec as quick.json records it (to_dict); UserError when a value is out of range."""
        return cls(runs=int(d["runs"]), seconds=float(d["seconds"]), cold_run=bool(d.get("cold_run")),
                   precondition=str(d.get("precondition") or "none"), cdm=tuple(d.get("cdm") or ()),
                   only=tuple(d.get("only") or ()), ioengine=str(d.get("ioengine") or "libaio"),
                   seed=int(d.get("seed") or 1))

    def to_dict(self) -> dict:
        return {"runs": self.runs, "seconds": self.seconds, "cold_run": self.cold_run,
                "precondition": self.precondition, "cdm": list(self.cdm), "only": list(self.only), "ioengine": self.ioengine,
                "seed": self.seed, "rse_limit": RSE_LIMIT, "max_runs": MAX_REPEATS}


def figure_result(fig: Figure, values: list[float], files: list[str], cold: list[str], judged: bool = True) -> dict:
    """One figure's record. ``judged`` False: its runs are not all in (in progress, or the run was
    interrupted), so its reliability is not known: None, neither reliable nor unreliable."""
    # docs/design.md#repeated-runs (stats.py): above 5% after 7 runs the set is to be discarded or studied; no RSE
    # at all (a mean of 0: the device moved no data) is no evidence either
    return {"key": fig.key, "label": fig.label, "group": fig.group, "unit": fig.unit,
            "workload": fig.workload.to_dict(), "values": values, "files": files, "cold_files": cold,
            **summary(values, planned=len(values) if judged else len(values) + 1)}


def precondition_step(method: str, capacity_bytes: int, test: str = KIND) -> Step | None:
    """The preconditioning of a quick or replay run: "seq-fill", the whole target once in SEQ
    128KiB writes; "wipc", twice (PTS 2.0.2 §3); "none": None."""
    if method == "none":
        return None
    times = {"seq-fill": 1, "wipc": 2}[method]
    return Step(test, "precondition", "wipc", 0, 1, Workload("seq", 0, 128 * KIB, 1, 32), None,
                io_bytes=times * capacity_bytes)


def execute(store: RunStore, spec: QuickSpec, executor: Executor, filename: str, capacity_bytes: int,
            log: Callable[[str], None] = lambda _s: None, guard: Callable[[], None] | None = None) -> dict:
    """Run the precondition, then each figure's cold run and warm runs, writing quick.json after
    every run (an interruption keeps everything measured). Returns quick.json's document."""
    area = Area(0, capacity_bytes)
    fio_dir = store.path / "fio"
    doc = {"format": FORMAT, "kind": KIND, "spec": spec.to_dict(), "started": utc_now(), "precondition": None, "figures": []}

    checks: list[dict] = []

    def run(step: Step, name: str) -> Measurement:
        if guard is not None:
            guard()
        batch = Batch([step], filename, area, spec.seed, spec.ioengine, job_path=fio_dir / f"{name}.fio",
                      output_path=fio_dir / f"{name}.json")
        result = executor.run(batch)
        # its rates as the device did them (results/timing.py), the check kept with the figure's values
        m, check = timing.of_result(result.measurements[0], result.devices[0] if result.devices else None)
        checks.append(check.to_dict())
        # size and SHA-256 of its raw files, for 'ssdpts verify' (no step lines: quick.json holds the values)
        store.record_round(step.part, name.removeprefix(step.part + "-"), [batch.job_path, batch.output_path], [])
        return m

    pre = precondition_step(spec.precondition, capacity_bytes)
    if pre is not None:
        log(f"precondition: {spec.precondition}, {fmt_capacity(pre.io_bytes)} SEQ 128KiB writes")
        m = run(pre, "precondition")
        doc["precondition"] = {"method": spec.precondition, "io_bytes": pre.io_bytes, "file": "fio/precondition.json",
                               "duration_s": m.duration_s}
        write_json_atomic(store.path / QUICK_JSON, doc)
    for i, fig in enumerate(spec.figures, start=1):
        # each run is its own sample (docs/design.md#repeated-runs): its own fio randseed (jobfile._step_seed mixes in
        # the round), so no run repeats another's offsets and data; the cold run is round 0
        def step(n: int) -> Step:
            return Step("quick", fig.key, "round", n, i, fig.workload, spec.seconds)

        cold = []
        checks.clear()
        if spec.cold_run:
            run(step(0), f"{fig.key}-cold")
            cold.append(f"fio/{fig.key}-cold.json")
        values: list[float] = []
        files: list[str] = []
        doc["figures"].append(figure_result(fig, values, files, cold, judged=False))
        goal = spec.runs  # judged only when a whole odd set is in: runs are added two at a time
        while len(values) < goal:
            name = f"{fig.key}-r{len(values) + 1:02d}"
            values.append(fig.value(run(step(len(values) + 1), name)))
            files.append(f"fio/{name}.json")
            if len(values) == goal:
                goal = runs_needed(values, spec.runs)
            doc["figures"][-1] = figure_result(fig, values, files, cold, judged=len(values) >= goal) | {
                "rate_checks": checks[len(cold):]}
            write_json_atomic(store.path / QUICK_JSON, doc)
        r = doc["figures"][-1]
        log(f"{fig.label}: {r['median']:.1f} {fig.unit} (median of {r['n']}, RSE {100 * (r['rse'] or 0):.2f}%)"
            + ("" if r["reliable"] else " UNRELIABLE"))
    doc["finished"] = utc_now()
    write_json_atomic(store.path / QUICK_JSON, doc)
    return doc


def progress(run_dir: Path | str) -> dict | None:
    """Where a running quick run is, from its quick.json (written after every run): the figure in
    progress, its runs done and planned, the figures done, and the time left at the runs' planned
    length, (soonest: N runs a figure, latest: MAX_REPEATS); None before the first run is written."""
    try:
        doc = json.loads((Path(run_dir) / QUICK_JSON).read_text())
        spec = QuickSpec.from_dict(doc["spec"])
    except (OSError, ValueError, KeyError, TypeError, UserError):
        return None
    figures, done = spec.figures, doc.get("figures") or []
    current = done[-1] if done and done[-1].get("reliable") is None else None  # not judged yet: in progress
    complete = len(done) - (current is not None)
    runs_now = len(current["values"]) if current else 0
    per = spec.seconds + (spec.seconds if spec.cold_run else 0)
    left = len(figures) - complete
    lo = max(left * spec.runs * spec.seconds + (left - (current is not None)) * (per - spec.seconds)
             - runs_now * spec.seconds, 0.0)
    hi = max(left * MAX_REPEATS * spec.seconds + (left - (current is not None)) * (per - spec.seconds)
             - runs_now * spec.seconds, lo)
    fig = figures[min(complete, len(figures) - 1)] if figures else None
    return {"part": fig.label if fig else None, "step": runs_now + 1, "steps": spec.runs if runs_now < spec.runs
            else MAX_REPEATS, "parts_done": complete, "parts_total": len(figures), "left_s": (lo, hi)}


def load(run_dir: Path | str) -> RepeatedRun:
    """A quick run directory, read (results/repeated.py); UserError when it is not one."""
    return read_repeated(run_dir, KIND, QUICK_JSON, "ssdpts quick")


def start_quick(spec: QuickSpec, target, *, executor: Executor, out_dir: Path, confirm: str | None,
                interactive: bool = False, argv: list[str] | None = None, describe: str | None = None,
                log: Callable[[str], None] = lambda _s: None,
                render_partial: Callable[[Path], object] | None = None) -> tuple[RunStore, dict]:
    """The checks of ``ssdpts run``, the same manifest and device records (session.start_other_run),
    then the quick table. An interruption or a failed fio marks the run and keeps every run measured
    so far (with ``render_partial``'s report of them)."""
    from ssdpts.run.session import start_other_run

    def body(store: RunStore, target, side, _info) -> dict:
        return execute(store, spec, executor, target.real_path, target.size_bytes, log, guard=side.guard)

    return start_other_run(KIND, target, executor=executor, out_dir=out_dir, confirm=confirm, interactive=interactive,
                           argv=argv, describe=describe, body=body, render_partial=render_partial,
                           entries=lambda _t: {"quick_spec": spec.to_dict(), "deviations": disclosures(spec)})


def db_rows(run_dir: Path | str, run_uid: str) -> list[dict]:
    """A quick run's rows for the results library's measurements table: per figure its median (metric
    mb_per_s or kiops) and its RSE (metric rse, a fraction); test 'quick', part = the figure's key,
    point = its TC/QD."""
    rows = []
    for f in load(run_dir).figures:
        w = f.workload
        assert w is not None
        base = {"run_uid": run_uid, "test": KIND, "part": f.key, "block_size_bytes": w.block_size_bytes,
                "mix": w.mix, "point": f"T{w.threads}/QD{w.iodepth}", "steady_state_reached": None}
        metric = "mb_per_s" if f.unit == "MB/s" else "kiops"
        rows.append({**base, "metric": metric, "value": f.median, "unit": f.unit})
        rows.append({**base, "metric": "rse", "value": f.rse, "unit": "fraction"})
    return [{**r, "ord": i} for i, r in enumerate(rows)]


def disclosures(spec: QuickSpec) -> list[str]:
    """What the report states about how the table was made (docs/design.md#data-set: record the variables)."""
    out = [f"each figure: median of {spec.runs} warm runs of {spec.seconds:g} s, up to {MAX_REPEATS} when the "
           f"RSE is above {RSE_LIMIT:.0%}", "not a PTS test: no purge, no steady state, the write cache as the "
           "device had it"]
    out.append({"none": "no preconditioning",
                "seq-fill": "preconditioned by one sequential fill (SEQ 128KiB writes over the whole target)",
                "wipc": "preconditioned by the PTS WIPC (twice the capacity in SEQ 128KiB writes)"}[spec.precondition])
    out.append("one unmeasured cold run before each figure" if spec.cold_run else "no cold run")
    if spec.only:
        out.append(f"only these figures: {', '.join(spec.only)}")
    return out


def compare(run_dirs: list[str | Path], baseline: str | Path | None = None) -> dict:
    """Quick results of drives A (, C, ...) against the baseline B, per figure: the medians and seed
    004's speed-type delta A/B − 1 (every quick figure is a speed: MB/s or kIOPS). Runs made with
    other settings (run length, preconditioning, cold run) or another workload are refused; an
    unreliable figure's delta is shown and flagged (compare.compare_repeated)."""
    from ssdpts.compare import baseline_first, compare_repeated

    runs = [load(d) for d in baseline_first(run_dirs, baseline)]
    return compare_repeated(runs, "quick runs", ("seconds", "precondition", "cold_run"),
                            ("key", "label", "group", "unit", "values", "deltas", "reliable"), "quick-comparison")


def comparison_text(cmp: dict) -> str:
    from ssdpts.compare import repeated_text

    return repeated_text(cmp, 34, lambda v, _unit: f"{v:,.1f}",
                         "Δ = A/B − 1 (docs/compare.md#delta, positive = A is faster); * = unreliable (RSE above 5% after 7 runs)")
