"""Honest comparisons (docs/design.md#repeated-runs): performance deltas between runs, and the median and
relative standard error of repeated runs. Pure analysis: reads run directories (manifest.json and
summary.json through the RunStore), never fio, never a device, no plotting.

Definitions (docs/design.md#repeated-runs):

- Performance delta of a run A over the baseline B, so that a positive delta always means "A is
  better": speed-type metrics (IOPS, MB/s) Δ = A/B − 1; time-type metrics (response times)
  Δ = time_B/time_A − 1.
- Repeated runs (N >= 3) of one device with the same settings: per metric the value of the median
  run and its relative standard error, by the rules of stats.py (the same for quick and replay).

Settings that make a comparison invalid (refused unless allowed; then listed on the report):
profile, TC and QD (resolved), active range, step duration, PTS version, data pattern, ioengine.
The seed is not one: a different seed is a different sample of the same experiment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .errors import UserError
from .pts.registry import headlines
from .results.cells import MIX_ORDER, CellRow, shared_parts, table_cells
from .results.reader import RunResults, labelled, read_runs
from .results.records import DEFAULT_DATA_PATTERN, Manifest
from .results.registry import (COMPARED_SETTINGS, METRICS, RUN_FIELDS, SHORT, SPEED, TIME, RunField, fmt_delta,
                               fmt_pct, fmt_value)
from .stats import MIN_REPEATS, RSE_LIMIT, RepeatStats, advice_for, repeat_stats

SETTINGS: tuple[RunField, ...] = tuple(RUN_FIELDS[n] for n in COMPARED_SETTINGS)

__all__ = ["DEFAULT_DATA_PATTERN", "METRICS", "MIX_ORDER", "SHORT", "SPEED", "TIME", "fmt_delta", "fmt_pct",
           "fmt_value", "table_cells"]


def baseline_first(run_dirs: Iterable[str | Path], baseline: str | Path | None) -> list[Path]:
    """Quick and replay comparisons: the run directories with the baseline B first (default: the
    first given), B not repeated among the others."""
    dirs = [Path(d) for d in run_dirs]
    base = Path(baseline) if baseline is not None else dirs[0]
    return [base] + [d for d in dirs if d.resolve() != base.resolve()]


def device_label(manifest: Manifest) -> str:
    """A run's drive as a comparison names it: model (or device name) and serial, else its path."""
    t = manifest.target
    if t is None:  # a manifest without its target (ssdpts always records one)
        return "?"
    return " ".join(str(x) for x in (t.model or t.name, t.serial) if x) or t.path


def delta(value: float | None, baseline: float | None, kind: str) -> float | None:
    """Performance delta of ``value`` (run A) over ``baseline`` (run B); positive = A is better.
    Speed-type: A/B − 1. Time-type: time_B/time_A − 1 (docs/design.md#repeated-runs). None when either is missing or 0."""
    if value is None or baseline is None or value <= 0 or baseline <= 0:
        return None
    if kind == SPEED:
        return value / baseline - 1
    if kind == TIME:
        return baseline / value - 1
    raise ValueError(f"metric kind must be {SPEED!r} or {TIME!r}, not {kind!r}")


def compare_repeated(runs: list, what: str, settings: tuple[str, ...], row_fields: tuple[str, ...],
                     kind: str) -> dict:
    """Runs that report each figure's median (quick, replay: results/repeated.py RepeatedRun), the
    baseline B first, against B: per figure every run's median, the performance delta by the figure's
    kind (speed: A/B − 1, time: time_B/time_A − 1; positive = A is faster) and its verdict (None:
    not measured in that run, or not judged). Runs whose ``settings`` differ from B's, or whose
    figure ran another workload, are refused. Every figure any run measured is a row, B's first (a
    figure only A measured has no baseline value and no delta). ``row_fields``: the row's fields in
    the order the kind's comparison document keeps them."""
    if len(runs) < 2:
        raise UserError(f"compare needs two {what} at least: give another run directory")
    base = runs[0]
    for r in runs[1:]:
        for k in settings:
            if r.spec.get(k) != base.spec.get(k):
                raise UserError(f"{r.path} was measured with {k} = {r.spec.get(k)!r}, the baseline {base.path} with "
                                f"{base.spec.get(k)!r}: compare {what} made with the same settings")
    shown = {f.key: f for f in base.figures}
    for r in runs[1:]:
        for f in r.figures:
            shown.setdefault(f.key, f)
    rows = []
    for key, ref in shown.items():
        figs = [r.figure(key) for r in runs]
        for r, f in zip(runs, figs):
            if f is not None and f.workload != ref.workload:
                raise UserError(f"{key} has another workload in {r.path}: it was made by another ssdpts")
        b = figs[0].median if figs[0] else None
        row = {"key": key, "label": ref.label, "group": ref.group, "unit": ref.unit, "kind": ref.kind,
               "values": [f.median if f else None for f in figs],
               "deltas": [delta(f.median if f else None, b, ref.kind) for f in figs],
               "reliable": [None if f is None or f.reliable is None else bool(f.reliable) for f in figs]}
        rows.append({k: row[k] for k in row_fields})
    return {"kind": kind, "baseline": str(base.path),
            "runs": [{"run_dir": str(r.path), "label": device_label(r.manifest)} for r in runs], "rows": rows}


def repeated_text(cmp: dict, label_width: int, fmt, note: str) -> str:
    """The text of :func:`compare_repeated`'s comparison: the runs, then a line per figure (``fmt``:
    (value, unit) -> text; * marks an unreliable median), then ``note``."""
    labels = [r["label"] for r in cmp["runs"]]
    lines = [f"baseline (B): {labels[0]}"] + [f"run {i}: {lab}" for i, lab in enumerate(labels[1:], start=1)]
    for row in cmp["rows"]:
        vals = "  ".join(("n/a" if v is None else fmt(v, row["unit"])) + ("*" if ok is False else "")
                         for v, ok in zip(row["values"], row["reliable"]))
        ds = "  ".join(fmt_delta(d) for d in row["deltas"][1:])
        lines.append(f"{row['label']:<{label_width}} {row['unit']:>5}  {vals}   Δ {ds}")
    lines.append(note)
    return "\n".join(lines)


# ---- settings -------------------------------------------------------------------------------------

def settings_of(run: RunResults) -> dict[str, str]:
    """The settings a comparison checks, as display strings (profile defaults resolved)."""
    return {s.name: s.text(run) for s in SETTINGS}


@dataclass(frozen=True, slots=True)
class Difference:
    setting: RunField
    values: tuple[str, ...]  # per run, in run order

    def text(self, labels: list[str]) -> str:
        return f"{self.setting.label}: " + ", ".join(f"{lab} {v}" for lab, v in zip(labels, self.values))


def setting_differences(runs: list[RunResults]) -> list[Difference]:
    """Every setting whose value is not the same in all runs (invalidating ones first)."""
    table = [settings_of(r) for r in runs]
    out = [Difference(s, tuple(t[s.name] for t in table)) for s in SETTINGS
           if len({t[s.name] for t in table}) > 1]
    return sorted(out, key=lambda d: not d.setting.invalidates)


def check_settings(runs: list[RunResults], allow_different: bool, *, what: str = "compare") -> list[Difference]:
    """Refuse (one line, every difference) when invalidating settings differ, unless allowed."""
    diffs = setting_differences(runs)
    bad = [d for d in diffs if d.setting.invalidates]
    if bad and not allow_different:
        labels = [r.label for r in runs]
        raise UserError(f"cannot {what} these runs: their settings differ — " + "; ".join(d.text(labels) for d in bad)
                        + ": use runs made with the same settings, or pass --allow-different to compare anyway "
                          "(the differences are then printed on the report)")
    return diffs


# ---- comparison -------------------------------------------------------------------------------------

@dataclass
class Row(CellRow):
    """One compared value: the same cell of every run (None: missing in that run -> "n/a"), and each
    run's delta against the baseline."""

    deltas: list[float | None] = field(default_factory=list)  # per run; None for the baseline and where missing

    @property
    def kind(self) -> str:
        return METRICS[self.metric].kind


@dataclass
class PartComparison:
    part: str
    test: str
    title: str
    rows: list[Row]
    ss_reached: list[bool | None]  # per run
    stop_reasons: list[str | None]

    def row(self, metric: str, bs: int | None = None, mix: str | None = None, point: str | None = None) -> Row | None:
        return next((r for r in self.rows if r.metric == metric and (bs is None or r.block_size_bytes == bs)
                     and (mix is None or r.mix == mix) and (point is None or r.point == point)), None)

    @property
    def ss_missed(self) -> list[int]:
        return [i for i, v in enumerate(self.ss_reached) if v is False]


@dataclass
class Comparison:
    runs: list[RunResults]  # the baseline first
    parts: list[PartComparison]
    differences: list[Difference]
    allowed_different: bool
    not_shared: list[str] = field(default_factory=list)  # parts some runs lack: "tp-128KiB (only in A, B)"
    notes: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> RunResults:
        return self.runs[0]

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    @property
    def invalidating(self) -> list[Difference]:
        return [d for d in self.differences if d.setting.invalidates]


def compare_runs(paths: Iterable[str | Path], baseline: str | Path | None = None, *,
                 allow_different: bool = False) -> Comparison:
    """Compare runs side by side against a baseline (default: the first run)."""
    paths = [Path(p) for p in paths]
    if baseline is not None:
        b = Path(baseline).resolve()
        rest = [p for p in paths if p.resolve() != b]
        paths = [Path(baseline), *rest]
    if len(paths) < 2:
        raise UserError("compare needs at least two run directories (or one and --baseline)")
    runs = labelled(read_runs(paths, need_summary="compare"))
    diffs = check_settings(runs, allow_different)
    notes = []
    for r in runs:
        if r.status != "complete":
            notes.append(f"{r.label}: run status {r.status} — its results cover only what finished")
        if r.manifest.executor == "fake":
            notes.append(f"{r.label}: synthetic data (FakeExecutor), not fio on a device")
    shared, not_shared = shared_parts(runs)
    parts = []
    for sp in shared:
        rows = [Row(c.part, c.test, c.metric, c.block_size_bytes, c.mix, c.values, c.point,
                    [None] + [delta(v, c.values[0], METRICS[c.metric].kind) for v in c.values[1:]]) for c in sp.rows]
        parts.append(PartComparison(sp.part, sp.test, sp.title, rows, sp.reached, sp.stop_reasons))
    if not parts:
        raise UserError("these runs share no test with results: compare runs of the same tests "
                        f"({'; '.join(f'{r.label}: {chr(44).join(r.part_ids()) or chr(8212)}' for r in runs)})")
    return Comparison(runs, parts, diffs, allow_different, not_shared, notes)


# ---- repeated runs ----------------------------------------------------------------------------------

@dataclass
class RepeatRow(CellRow):
    """One cell of repeated runs: its value in every run and their statistics."""

    stats: RepeatStats | None = None  # None when fewer than MIN_REPEATS runs have the value

    @property
    def flagged(self) -> bool:
        return self.stats is not None and self.stats.flagged


@dataclass
class RepeatPart:
    part: str
    test: str
    title: str
    rows: list[RepeatRow]
    ss_reached: list[bool | None]


@dataclass
class Repeats:
    runs: list[RunResults]
    parts: list[RepeatPart]
    differences: list[Difference]
    allowed_different: bool
    warnings: list[str]
    advice: str | None

    @property
    def n(self) -> int:
        return len(self.runs)

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    @property
    def rows(self) -> list[RepeatRow]:
        return [row for p in self.parts for row in p.rows]

    @property
    def flagged(self) -> list[RepeatRow]:
        return [r for r in self.rows if r.flagged]

    @property
    def invalidating(self) -> list[Difference]:
        return [d for d in self.differences if d.setting.invalidates]


def _stats(values: list[float | None]) -> RepeatStats | None:
    """Median run, mean, s and RSE of the runs that have the value (None below MIN_REPEATS of them);
    median_index counts every run given."""
    idx = [i for i, v in enumerate(values) if v is not None]
    if len(idx) < MIN_REPEATS:
        return None
    s = repeat_stats([values[i] for i in idx])
    return RepeatStats(s.n, s.median, idx[s.median_index], s.mean, s.stdev, s.rse)


def analyze_repeats(paths: Iterable[str | Path], *, allow_different: bool = False) -> Repeats:
    """Repeated runs of one device with the same settings: median run value and RSE per metric."""
    runs = read_runs(paths, need_summary="compare")
    n = len(runs)
    if n < MIN_REPEATS:
        raise UserError(f"--repeats needs at least {MIN_REPEATS} runs of one device (docs/compare.md#repeated-runs: the median of an odd "
                        f"number >= 3 of runs); {n} given")
    runs = labelled(runs, repeats=True)
    devices = {r.device_key for r in runs}
    if len(devices) > 1:
        raise UserError("--repeats takes repeated runs of ONE device, but these runs are of different devices ("
                        + "; ".join(f"{r.label}: {r.device_name}" for r in runs)
                        + "): compare different devices with 'ssdpts compare' without --repeats")
    diffs = check_settings(runs, allow_different, what="treat as repeats")
    warnings = []
    if n % 2 == 0:
        warnings.append(f"N = {n} is even: there is no middle run, so each metric's median is the lower-middle run's "
                        f"value; add one run to make N odd (docs/compare.md#repeated-runs)")
    for r in runs:
        if r.status != "complete":
            warnings.append(f"{r.label}: run status {r.status} — its results cover only what finished")
    parts = []
    for sp in shared_parts(runs)[0]:
        rows = [RepeatRow(c.part, c.test, c.metric, c.block_size_bytes, c.mix, c.values, c.point, _stats(c.values))
                for c in sp.rows]
        parts.append(RepeatPart(sp.part, sp.test, sp.title, rows, sp.reached))
        missed = [r.label for r, reached in zip(runs, sp.reached) if reached is False]
        if missed:
            warnings.append(f"{sp.title}: steady state NOT reached in {', '.join(missed)}")
    if not parts:
        raise UserError("these runs share no test with results: give repeated runs of the same tests")
    flagged = any(row.flagged for p in parts for row in p.rows)
    return Repeats(runs, parts, diffs, allow_different, warnings, advice_for(n, flagged))


# ---- text output ----------------------------------------------------------------------------------

def headline_rows(cmp: Comparison) -> list[tuple[PartComparison, Row]]:
    """A few representative rows per test for the summary (the PTS's tracking cells and TP)."""
    out = []
    for p in cmp.parts:
        for metric, bs, mix, point in headlines(p.test):
            row = p.row(metric, bs, mix, point)
            if row is not None:
                out.append((p, row))
    return out


def comparison_text(cmp: Comparison) -> str:
    """A plain-text summary for the terminal."""
    lines = [f"baseline: {cmp.baseline.label} ({cmp.baseline.name})"]
    for r in cmp.runs[1:]:
        lines.append(f"compared: {r.label} ({r.name})")
    if cmp.differences and any(d.setting.invalidates for d in cmp.differences):
        lines.append("settings differ (--allow-different): "
                     + "; ".join(d.text(cmp.labels) for d in cmp.invalidating))
    w = max([len(p.title) + len(row.label) + 3 for p, row in headline_rows(cmp)] + [10])
    head = f"{'':{w}}" + "".join(f"{lab[:18]:>20}" for lab in cmp.labels)
    lines.append(head)
    for p, row in headline_rows(cmp):
        cells = []
        for i, v in enumerate(row.values):
            s = fmt_value(v, row.unit)
            if i and row.deltas[i] is not None:
                s += f" ({fmt_delta(row.deltas[i])})"
            if p.ss_reached[i] is False:
                s += "*"
            cells.append(f"{s:>20}")
        name = f"{p.title}: {row.label}" + (f" {SHORT[row.metric]}" if row.metric in SHORT else "")
        lines.append(f"{name:{w}}" + "".join(cells) + f"  {row.unit}")
    if any(p.ss_missed for p in cmp.parts):
        lines.append("* steady state NOT reached in that run's test")
    lines.append("Δ: positive = better than the baseline (speed: A/B − 1; time: B/A − 1)")
    return "\n".join(lines)


def repeats_text(rep: Repeats) -> str:
    lines = [f"{rep.n} repeated runs of {rep.runs[0].device_name}"]
    lines += [f"warning: {w}" for w in rep.warnings]
    rows = rep.rows
    flagged = rep.flagged
    lines.append(f"{len(flagged)} of {len(rows)} metrics have RSE above {RSE_LIMIT:.0%}")
    for row in flagged[:10]:
        st = row.stats
        lines.append(f"  {row.part}: {row.label} {SHORT.get(row.metric, row.unit)}: RSE {fmt_pct(st.rse)} "
                     f"(median {fmt_value(st.median, row.unit)} {row.unit})")
    if len(flagged) > 10:
        lines.append(f"  … and {len(flagged) - 10} more (see the report)")
    if rep.advice:
        lines.append(f"advice: {rep.advice}")
    return "\n".join(lines)


# ---- machine-readable output ------------------------------------------------------------------------

def _run_dict(r: RunResults) -> dict:
    t = r.manifest.target
    return {"label": r.label, "run_dir": str(r.path), "run_uid": r.uid, "created": r.created, "status": r.status,
            "device": {k: getattr(t, k) if t else None for k in ("path", "kind", "name", "vendor", "model", "serial",
                                                                 "firmware", "size_bytes", "logical_block_size_bytes")},
            "settings": settings_of(r)}


def comparison_dict(cmp: Comparison) -> dict:
    """The comparison as JSON-ready data ('ssdpts compare --format json')."""
    return {
        "format": 1, "kind": "comparison",
        "delta_definition": "speed-type (IOPS, MB/s): A/B - 1; time-type (response time): B/A - 1; "
                            "A = the run, B = the baseline; positive = better than the baseline",
        "baseline": cmp.baseline.label,
        "runs": [_run_dict(r) for r in cmp.runs],
        "differences": [{"setting": d.setting.name, "invalidates": d.setting.invalidates, "values": list(d.values)}
                        for d in cmp.differences],
        "allowed_different": cmp.allowed_different,
        "not_shared": cmp.not_shared, "notes": cmp.notes,
        "parts": [{
            "part": p.part, "test": p.test, "title": p.title, "steady_state_reached": p.ss_reached,
            "stop_reasons": p.stop_reasons,
            "rows": [{"metric": r.metric, "kind": r.kind, "unit": r.unit, "block_size_bytes": r.block_size_bytes,
                      "mix": r.mix, **({"point": r.point} if r.point else {}), "values": r.values, "deltas": r.deltas}
                     for r in p.rows],
        } for p in cmp.parts],
    }


def repeats_dict(rep: Repeats) -> dict:
    """The repeated-runs analysis as JSON-ready data."""
    def st(s: RepeatStats | None):
        if s is None:
            return None
        return {"n": s.n, "median": s.median, "median_run": rep.runs[s.median_index].label, "mean": s.mean,
                "stdev": s.stdev, "rse": s.rse, "flagged": s.flagged}

    return {
        "format": 1, "kind": "repeats", "n": rep.n, "rse_limit": RSE_LIMIT,
        "median_rule": "odd N: the middle run's value; even N: the lower-middle run's value (warned)",
        "runs": [_run_dict(r) for r in rep.runs],
        "differences": [{"setting": d.setting.name, "invalidates": d.setting.invalidates, "values": list(d.values)}
                        for d in rep.differences],
        "warnings": rep.warnings, "advice": rep.advice,
        "parts": [{
            "part": p.part, "test": p.test, "title": p.title, "steady_state_reached": p.ss_reached,
            "rows": [{"metric": r.metric, "unit": r.unit, "block_size_bytes": r.block_size_bytes, "mix": r.mix,
                      **({"point": r.point} if r.point else {}), "values": r.values, "stats": st(r.stats)}
                     for r in p.rows],
        } for p in rep.parts],
    }
