"""Honest comparisons (PTS.md §5, seed 004): performance deltas between runs, and the median and
relative standard error of repeated runs. Pure analysis: reads run directories (manifest.json and
summary.json through the RunStore), never fio, never a device, no plotting.

Definitions (seed 004, PTS.md §5):

- Performance delta of a run A over the baseline B, so that a positive delta always means "A is
  better": speed-type metrics (IOPS, MB/s) Δ = A/B − 1; time-type metrics (response times)
  Δ = time_B/time_A − 1.
- Repeated runs (N >= 3) of one device with the same settings: per metric the value of the median
  run — a measured value, never an average. With an odd N that is the middle run; with an even N
  there is no middle run, so ssdpts warns and takes the lower-middle run's value (the smaller of
  the two middle values in ascending order).
- Relative standard error RSE = s / (x̄ · √N), s the sample standard deviation (ddof = 1). Above
  5% the metric is too variable: add runs while N <= 7; beyond 7 runs discard the results or
  investigate the cause.

Settings that make a comparison invalid (refused unless allowed; then listed on the report):
profile, TC and QD (resolved), active range, step duration, PTS version, data pattern, ioengine.
The seed is not one: a different seed is a different sample of the same experiment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import hashlib
import json
import math
from pathlib import Path
from typing import Any, Iterable

from .errors import UserError
from .pts.units import fmt_block_size
from .store import MANIFEST, SUMMARY, RunStore

SPEED = "speed"
TIME = "time"
RSE_LIMIT = 0.05  # seed 004: RSE above 5% is too variable
MAX_REPEATS = 7  # seed 004: more than 7 runs needed -> discard / investigate
MIN_REPEATS = 3
TEST_ORDER = ("wsat", "iops", "tp", "lat")
TEST_TITLES = {"iops": "IOPS", "tp": "Throughput", "lat": "Latency", "wsat": "Write Saturation"}
DEFAULT_DATA_PATTERN = "random (fio buffers, tausworthe64)"


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    unit: str
    kind: str  # SPEED (higher is better) or TIME (lower is better)
    label: str


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("iops", "IOPS", SPEED, "IOPS"),
    Metric("read_mb_per_s", "MB/s", SPEED, "SEQ read MB/s"),
    Metric("write_mb_per_s", "MB/s", SPEED, "SEQ write MB/s"),
    Metric("lat_mean_us", "µs", TIME, "mean response time"),
    Metric("lat_p99999_us", "µs", TIME, "99.999th percentile response time"),
    Metric("lat_max_us", "µs", TIME, "max response time (window average)"),
    Metric("lat_max_in_window_us", "µs", TIME, "max response time (highest in window)"),
    Metric("final_window_iops", "IOPS", SPEED, "WSAT steady level (final window IOPS)"),
)}
SHORT = {"lat_mean_us": "mean", "lat_p99999_us": "99.999%", "lat_max_us": "max", "lat_max_in_window_us": "max in window"}

# The metrics a comparison shows per test (the database holds every table cell; see table_cells).
COMPARED: dict[str, tuple[str, ...]] = {
    "iops": ("iops",),
    "tp": ("read_mb_per_s", "write_mb_per_s"),
    "lat": ("lat_mean_us", "lat_p99999_us", "lat_max_us"),
    "wsat": ("final_window_iops",),
}


# ---- one value of a run ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CellValue:
    """One measurement-window value (one cell of a summary.json table)."""

    test: str
    part: str  # summary part id, e.g. "iops", "tp-1024KiB"
    metric: str
    block_size_bytes: int | None
    mix: str | None  # R/W mix "65/35", None where the table has none (TP: the metric says R or W; WSAT)
    value: float | None  # None: the cell exists but has no value (e.g. no rounds finished)
    unit: str
    steady_state_reached: bool | None  # None: the test has no steady-state criterion (WSAT)

    @property
    def key(self) -> tuple:
        return (self.part, self.metric, self.block_size_bytes, self.mix)


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def table_cells(summary: dict) -> list[CellValue]:
    """Every value of every measurement-window table in a summary.json (analysis.summarize)."""
    out: list[CellValue] = []
    for pid, p in (summary.get("parts") or {}).items():
        t = p.get("table")
        if not t:
            continue
        test = p.get("test", "")
        ss = p.get("steady_state")
        reached = None if ss is None else bool(ss.get("reached"))
        kind = t.get("kind")
        if kind == "iops-matrix":
            for row in t.get("rows") or []:
                for mix, v in (row.get("values") or {}).items():
                    out.append(CellValue(test, pid, "iops", int(row["block_size_bytes"]), mix, _num(v), "IOPS", reached))
        elif kind == "throughput":
            bs = int(t["block_size_bytes"])
            for m in ("read_mb_per_s", "write_mb_per_s"):
                out.append(CellValue(test, pid, m, bs, None, _num(t.get(m)), "MB/s", reached))
        elif kind == "latency":
            for row in t.get("rows") or []:
                for m in ("lat_mean_us", "lat_p99999_us", "lat_max_us", "lat_max_in_window_us", "iops"):
                    if m in row:
                        out.append(CellValue(test, pid, m, int(row["block_size_bytes"]), row.get("mix"), _num(row[m]),
                                             METRICS[m].unit, reached))
        elif kind == "wsat":
            out.append(CellValue(test, pid, "final_window_iops", 4096, "0/100", _num(t.get("final_window_iops")),
                                 "IOPS", reached))
    return out


def delta(value: float | None, baseline: float | None, kind: str) -> float | None:
    """Performance delta of ``value`` (run A) over ``baseline`` (run B); positive = A is better.
    Speed-type: A/B − 1. Time-type: time_B/time_A − 1 (seed 004). None when either is missing or 0."""
    if value is None or baseline is None or value <= 0 or baseline <= 0:
        return None
    if kind == SPEED:
        return value / baseline - 1
    if kind == TIME:
        return baseline / value - 1
    raise ValueError(f"metric kind must be {SPEED!r} or {TIME!r}, not {kind!r}")


# ---- a run ------------------------------------------------------------------------------------------

@dataclass
class Run:
    path: Path
    manifest: dict
    summary: dict
    label: str = ""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def spec(self) -> dict:
        return self.manifest.get("run_spec") or {}

    @property
    def target(self) -> dict:
        return self.manifest.get("target") or {}

    @property
    def host(self) -> dict:
        return self.manifest.get("host") or {}

    @property
    def status(self) -> str:
        ms, ss = self.manifest.get("status"), self.summary.get("status")
        if ms == "complete" and ss in ("complete", None):
            return "complete"
        return str(ms if ms != "complete" else ss)

    @property
    def created(self) -> str:
        return str(self.manifest.get("created") or "")

    @property
    def uid(self) -> str:
        """Stable identity of the run, from its own files (the same after a copy or a database rebuild)."""
        ident = [self.created, self.host.get("hostname"), self.target.get("real_path") or self.target.get("path"),
                 self.name, self.spec.get("seed")]
        return hashlib.sha256(json.dumps(ident, default=str).encode()).hexdigest()[:16]

    @property
    def device_key(self) -> tuple:
        """Same device = same serial (and model); targets without a serial (loop, zram, files): same path."""
        t = self.target
        if t.get("serial"):
            return ("serial", t.get("model"), t.get("serial"))
        return ("path", t.get("real_path") or t.get("path"))

    @property
    def device_name(self) -> str:
        t = self.target
        name = t.get("model") or t.get("name") or Path(str(t.get("path") or "?")).name
        if t.get("serial"):
            name += f" {t['serial'][-8:]}"
        return name

    def part_ids(self) -> list[str]:
        parts = self.summary.get("parts") or {}
        ids = [pid for tests in (self.summary.get("tests") or {}).values() for pid in tests if pid in parts]
        ids += [pid for pid in parts if pid not in ids]
        order = {t: i for i, t in enumerate(TEST_ORDER)}
        return sorted(ids, key=lambda pid: order.get(parts[pid].get("test"), 99))

    def part(self, pid: str) -> dict:
        return (self.summary.get("parts") or {}).get(pid) or {}

    def ss_reached(self, pid: str) -> bool | None:
        ss = self.part(pid).get("steady_state")
        return None if ss is None else bool(ss.get("reached"))

    def cells(self) -> dict[tuple, CellValue]:
        return {c.key: c for c in table_cells(self.summary)}


def load_run(path: str | Path) -> Run:
    """Read a run directory (manifest.json and summary.json) or refuse with a clear message."""
    path = Path(path)
    if not (path / MANIFEST).exists():
        raise UserError(f"{path} is not an ssdpts run directory (no {MANIFEST}): give directories made by 'ssdpts run'")
    store = RunStore.open(path)
    man = store.manifest()
    if not (path / SUMMARY).exists():
        raise UserError(f"{path} has no {SUMMARY} yet (status {man.get('status', 'unknown')}): "
                        f"let the run finish or 'ssdpts resume {path}', then compare")
    return Run(path=path, manifest=man, summary=store.summary())


def _label_runs(runs: list[Run], *, repeats: bool = False) -> None:
    """Short, unique labels for tables and legends: the device, or 'run N' for repeats of one device."""
    if repeats:
        for i, r in enumerate(runs, start=1):
            r.label = f"run {i}"
        return
    bases = [r.device_name for r in runs]
    for i, (r, b) in enumerate(zip(runs, bases), start=1):
        r.label = b if bases.count(b) == 1 else f"{b} #{i}"


def load_runs(paths: Iterable[str | Path]) -> list[Run]:
    runs: list[Run] = []
    seen: dict[Path, str] = {}
    for p in paths:
        rp = Path(p).resolve()
        if rp in seen:
            raise UserError(f"{p} is given twice: name each run directory once")
        seen[rp] = str(p)
        runs.append(load_run(p))
    return runs


# ---- settings -------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    label: str
    invalidates: bool  # True: a difference makes the comparison invalid (refused unless allowed)


SETTINGS: tuple[Setting, ...] = (
    Setting("profile", "profile", True),
    Setting("threads", "TC (threads)", True),
    Setting("iodepth", "QD (iodepth)", True),
    Setting("active_range_pct", "active range (%)", True),
    Setting("step_seconds", "step duration (s)", True),
    Setting("pts_version", "PTS version", True),
    Setting("data_pattern", "data pattern", True),
    Setting("ioengine", "ioengine", True),
    # Shown, and highlighted when they differ, but no reason to refuse:
    Setting("max_rounds", "max rounds", False),
    Setting("wipc_capacity_multiple", "WIPC (× capacity)", False),
    Setting("wsat_limits", "WSAT limits", False),
    Setting("purge", "purge method", False),
    Setting("seed", "seed", False),
    Setting("executor", "executor", False),
    Setting("fio_version", "fio version", False),
    Setting("ssdpts_version", "ssdpts version", False),
    Setting("capacity", "capacity (bytes)", False),
    Setting("logical_block_size_bytes", "logical block size (bytes)", False),
    Setting("host", "host", False),
)


def _fmt_setting(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def data_pattern(spec: dict) -> str:
    """The recorded data pattern; ssdpts always writes fio's random buffers unless a run says otherwise."""
    return str(spec.get("data_pattern") or (spec.get("extra") or {}).get("data_pattern") or DEFAULT_DATA_PATTERN)


def settings_of(run: Run) -> dict[str, str]:
    """The settings a comparison checks, as display strings (profile defaults resolved)."""
    s = run.spec
    res = s.get("resolved") or {}
    purges = sorted({str((p.get("purge") or {}).get("method")) for p in (run.manifest.get("parts") or {}).values()
                     if isinstance(p, dict) and p.get("purge")})
    tests = set(s.get("tests") or [])
    wsat = (f"{_fmt_setting(s.get('wsat_hours'))} h or {_fmt_setting(s.get('wsat_capacity_multiple'))}× capacity"
            if "wsat" in tests else "—")
    vals = {
        "profile": s.get("profile"),
        "threads": res.get("threads", s.get("threads")),
        "iodepth": res.get("iodepth", s.get("iodepth")),
        "active_range_pct": _num(res.get("active_range_pct", s.get("active_range_pct"))),
        "step_seconds": _num(s.get("step_seconds")),
        "pts_version": s.get("pts_version"),
        "data_pattern": data_pattern(s),
        "ioengine": s.get("ioengine"),
        "max_rounds": s.get("max_rounds"),
        "wipc_capacity_multiple": _num(s.get("wipc_capacity_multiple")),
        "wsat_limits": wsat,
        "purge": ", ".join(purges) if purges else s.get("purge"),
        "seed": s.get("seed"),
        "executor": run.manifest.get("executor"),
        "fio_version": run.manifest.get("fio_version"),
        "ssdpts_version": run.manifest.get("ssdpts_version"),
        "capacity": run.target.get("size_bytes"),
        "logical_block_size_bytes": run.target.get("logical_block_size_bytes"),
        "host": run.host.get("hostname"),
    }
    return {k: _fmt_setting(v) for k, v in vals.items()}


@dataclass(frozen=True, slots=True)
class Difference:
    setting: Setting
    values: tuple[str, ...]  # per run, in run order

    def text(self, labels: list[str]) -> str:
        return f"{self.setting.label}: " + ", ".join(f"{lab} {v}" for lab, v in zip(labels, self.values))


def setting_differences(runs: list[Run]) -> list[Difference]:
    """Every setting whose value is not the same in all runs (invalidating ones first)."""
    table = [settings_of(r) for r in runs]
    out = [Difference(s, tuple(t[s.name] for t in table)) for s in SETTINGS
           if len({t[s.name] for t in table}) > 1]
    return sorted(out, key=lambda d: not d.setting.invalidates)


def check_settings(runs: list[Run], allow_different: bool, *, what: str = "compare") -> list[Difference]:
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
class Row:
    """One compared value: the same cell of every run, and each run's delta against the baseline."""

    part: str
    test: str
    metric: str
    block_size_bytes: int | None
    mix: str | None
    values: list[float | None]  # per run (None: missing in that run -> "n/a")
    deltas: list[float | None]  # per run; None for the baseline and where a value is missing

    @property
    def kind(self) -> str:
        return METRICS[self.metric].kind

    @property
    def unit(self) -> str:
        return METRICS[self.metric].unit

    @property
    def label(self) -> str:
        return cell_label(self.test, self.metric, self.block_size_bytes, self.mix)


def cell_label(test: str, metric: str, bs: int | None, mix: str | None) -> str:
    if test == "tp":
        return f"SEQ {fmt_block_size(bs)} " + ("read" if metric.startswith("read") else "write")
    if test == "wsat":
        return "RND 4KiB 0/100, final window"
    return f"RND {fmt_block_size(bs)} {mix}" if bs else str(mix)


@dataclass
class PartComparison:
    part: str
    test: str
    title: str
    rows: list[Row]
    ss_reached: list[bool | None]  # per run
    stop_reasons: list[str | None]

    def row(self, metric: str, bs: int | None = None, mix: str | None = None) -> Row | None:
        return next((r for r in self.rows if r.metric == metric and (bs is None or r.block_size_bytes == bs)
                     and (mix is None or r.mix == mix)), None)

    @property
    def ss_missed(self) -> list[int]:
        return [i for i, v in enumerate(self.ss_reached) if v is False]


@dataclass
class Comparison:
    runs: list[Run]  # the baseline first
    parts: list[PartComparison]
    differences: list[Difference]
    allowed_different: bool
    not_shared: list[str] = field(default_factory=list)  # parts some runs lack: "tp-128KiB (only in A, B)"
    notes: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> Run:
        return self.runs[0]

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    @property
    def invalidating(self) -> list[Difference]:
        return [d for d in self.differences if d.setting.invalidates]


MIX_ORDER = ("100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100")  # PTS outer loop


def _order(key: tuple) -> tuple:
    """PTS order of a cell key (part, metric, block size, mix): the IOPS matrix by block size then
    mix, the LAT table by mix then block size (largest first, as the PTS lists them)."""
    _pid, metric, bs, mix = key
    m = list(METRICS).index(metric) if metric in METRICS else 99
    mi = MIX_ORDER.index(mix) if mix in MIX_ORDER else 99
    b = -(bs or 0)
    return (m, b, mi) if metric == "iops" and _pid.startswith("iops") else (m, mi, b)


def _shared_keys(cells: list[dict[tuple, CellValue]], pid: str, test: str) -> list[tuple]:
    keys = [k for k in dict.fromkeys(k for cs in cells for k in cs) if k[0] == pid and k[1] in COMPARED.get(test, ())]
    return sorted(keys, key=_order)


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
    runs = load_runs(paths)
    _label_runs(runs)
    diffs = check_settings(runs, allow_different)
    notes = []
    for r in runs:
        if r.status != "complete":
            notes.append(f"{r.label}: run status {r.status} — its results cover only what finished")
        if r.manifest.get("executor") == "fake":
            notes.append(f"{r.label}: synthetic data (FakeExecutor), not fio on a device")
    pids_all = [r.part_ids() for r in runs]
    shared = [pid for pid in pids_all[0] if all(pid in ids for ids in pids_all[1:])]
    not_shared = []
    for pid in dict.fromkeys(p for ids in pids_all for p in ids):
        if pid not in shared:
            have = [r.label for r, ids in zip(runs, pids_all) if pid in ids]
            not_shared.append(f"{pid} (only in {', '.join(have)})")
    cells = [r.cells() for r in runs]
    parts = []
    for pid in shared:
        bp = runs[0].part(pid)
        test = bp.get("test", pid)
        keys = _shared_keys(cells, pid, test)
        rows = []
        for key in keys:
            vals = [cs[key].value if key in cs else None for cs in cells]
            kind = METRICS[key[1]].kind
            deltas = [None] + [delta(v, vals[0], kind) for v in vals[1:]]
            rows.append(Row(pid, test, key[1], key[2], key[3], vals, deltas))
        parts.append(PartComparison(pid, test, bp.get("title") or pid, rows, [r.ss_reached(pid) for r in runs],
                                    [r.part(pid).get("stop_reason") for r in runs]))
    if not parts:
        raise UserError("these runs share no test with results: compare runs of the same tests "
                        f"({'; '.join(f'{r.label}: {chr(44).join(r.part_ids()) or chr(8212)}' for r in runs)})")
    return Comparison(runs, parts, diffs, allow_different, not_shared, notes)


# ---- repeated runs ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RepeatStats:
    n: int
    median: float  # the median run's measured value
    median_index: int  # position (in the list given) of the run whose value is the median
    mean: float
    stdev: float  # sample standard deviation, ddof = 1
    rse: float | None  # s / (mean * sqrt(n)); None when the mean is 0

    @property
    def flagged(self) -> bool:
        return self.rse is not None and self.rse > RSE_LIMIT


def repeat_stats(values: list[float]) -> RepeatStats:
    """Median run (odd N: the middle run; even N: the lower-middle run), mean, s (ddof=1), RSE."""
    n = len(values)
    if n < 2:
        raise ValueError("need at least two values")
    order = sorted(range(n), key=lambda i: (values[i], i))
    mid = order[(n - 1) // 2]  # odd: the middle; even: the lower of the two middle values
    mean = sum(values) / n
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    rse = s / (mean * math.sqrt(n)) if mean else None
    return RepeatStats(n, float(values[mid]), mid, mean, s, rse)


def advice_for(n: int, any_flagged: bool) -> str | None:
    if not any_flagged:
        return None
    if n < MAX_REPEATS:
        return (f"add runs: with N = {n}, metrics above {RSE_LIMIT:.0%} RSE are too variable to report; "
                f"add a run (seed 004: up to {MAX_REPEATS}) and compare again")
    if n == MAX_REPEATS:
        return (f"add one last run (N = {n}): if the RSE stays above {RSE_LIMIT:.0%} beyond {MAX_REPEATS} runs, "
                f"discard these results or investigate the cause (thermal throttling, background jobs, power states)")
    return (f"discard or investigate: N = {n} is more than {MAX_REPEATS} runs and the RSE is still above "
            f"{RSE_LIMIT:.0%} — look for thermal throttling, background jobs or power-state changes, fix them, "
            f"and start a new series")


@dataclass
class RepeatRow:
    part: str
    test: str
    metric: str
    block_size_bytes: int | None
    mix: str | None
    values: list[float | None]  # per run
    stats: RepeatStats | None  # None when fewer than MIN_REPEATS runs have the value

    @property
    def unit(self) -> str:
        return METRICS[self.metric].unit

    @property
    def label(self) -> str:
        return cell_label(self.test, self.metric, self.block_size_bytes, self.mix)

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
    runs: list[Run]
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


def analyze_repeats(paths: Iterable[str | Path], *, allow_different: bool = False) -> Repeats:
    """Repeated runs of one device with the same settings: median run value and RSE per metric."""
    runs = load_runs(paths)
    n = len(runs)
    if n < MIN_REPEATS:
        raise UserError(f"--repeats needs at least {MIN_REPEATS} runs of one device (seed 004: the median of an odd "
                        f"number >= 3 of runs); {n} given")
    _label_runs(runs, repeats=True)
    devices = {r.device_key for r in runs}
    if len(devices) > 1:
        raise UserError("--repeats takes repeated runs of ONE device, but these runs are of different devices ("
                        + "; ".join(f"{r.label}: {r.device_name}" for r in runs)
                        + "): compare different devices with 'ssdpts compare' without --repeats")
    diffs = check_settings(runs, allow_different, what="treat as repeats")
    warnings = []
    if n % 2 == 0:
        warnings.append(f"N = {n} is even: there is no middle run, so each metric's median is the lower-middle run's "
                        f"value; add one run to make N odd (seed 004)")
    for r in runs:
        if r.status != "complete":
            warnings.append(f"{r.label}: run status {r.status} — its results cover only what finished")
    pids_all = [r.part_ids() for r in runs]
    shared = [pid for pid in pids_all[0] if all(pid in ids for ids in pids_all[1:])]
    cells = [r.cells() for r in runs]
    parts = []
    for pid in shared:
        bp = runs[0].part(pid)
        test = bp.get("test", pid)
        keys = _shared_keys(cells, pid, test)
        rows = []
        for key in keys:
            vals = [cs[key].value if key in cs else None for cs in cells]
            have = [v for v in vals if v is not None]
            st = None
            if len(have) >= MIN_REPEATS:
                idx = [i for i, v in enumerate(vals) if v is not None]
                s = repeat_stats(have)
                st = RepeatStats(s.n, s.median, idx[s.median_index], s.mean, s.stdev, s.rse)
            rows.append(RepeatRow(pid, test, key[1], key[2], key[3], vals, st))
        parts.append(RepeatPart(pid, test, bp.get("title") or pid, rows, [r.ss_reached(pid) for r in runs]))
        missed = [r.label for r in runs if r.ss_reached(pid) is False]
        if missed:
            warnings.append(f"{bp.get('title') or pid}: steady state NOT reached in {', '.join(missed)}")
    if not parts:
        raise UserError("these runs share no test with results: give repeated runs of the same tests")
    flagged = any(row.flagged for p in parts for row in p.rows)
    return Repeats(runs, parts, diffs, allow_different, warnings, advice_for(n, flagged))


# ---- formatting (one place, shared by the terminal, HTML and PDF output) ----------------------------

def fmt_value(v: float | None, unit: str = "", missing: str = "n/a") -> str:
    """IOPS whole numbers (one decimal below 100); MB/s and µs one decimal (two below 10); thousands
    separated by commas. ``missing``: the text for no value (None)."""
    if v is None:
        return missing
    a = abs(v)
    if unit == "IOPS":
        return f"{v:,.0f}" if a >= 100 else f"{v:,.1f}"
    if a >= 10:
        return f"{v:,.1f}"
    return f"{v:,.2f}" if a >= 0.01 or a == 0 else f"{v:.2g}"


def fmt_delta(d: float | None) -> str:
    if d is None:
        return "n/a"
    if abs(d) < 0.0005:
        return "±0.0%"
    if abs(d) >= 10:  # +83,082% reads better than +83082.4%
        return f"{d * 100:+,.0f}%".replace("-", "−")
    return f"{d * 100:+.1f}%".replace("-", "−")


def fmt_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.2f}%"


HEADLINES: tuple[tuple[str, str, int | None, str | None], ...] = (
    ("iops", "iops", 4096, "100/0"),
    ("iops", "iops", 4096, "0/100"),
    ("iops", "iops", 65536, "65/35"),
    ("iops", "iops", 1048576, "100/0"),
    ("tp", "read_mb_per_s", None, None),
    ("tp", "write_mb_per_s", None, None),
    ("lat", "lat_mean_us", 4096, "100/0"),
    ("lat", "lat_mean_us", 4096, "0/100"),
    ("lat", "lat_p99999_us", 4096, "0/100"),
    ("wsat", "final_window_iops", None, None),
)


def headline_rows(cmp: Comparison) -> list[tuple[PartComparison, Row]]:
    """A few representative rows per test for the summary (the PTS's tracking cells and TP)."""
    out = []
    for p in cmp.parts:
        for test, metric, bs, mix in HEADLINES:
            if p.test != test:
                continue
            row = p.row(metric, bs, mix)
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

def _run_dict(r: Run) -> dict:
    t = r.target
    return {"label": r.label, "run_dir": str(r.path), "run_uid": r.uid, "created": r.created, "status": r.status,
            "device": {k: t.get(k) for k in ("path", "kind", "name", "vendor", "model", "serial", "firmware",
                                             "size_bytes", "logical_block_size_bytes")},
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
                      "mix": r.mix, "values": r.values, "deltas": r.deltas} for r in p.rows],
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
                      "values": r.values, "stats": st(r.stats)} for r in p.rows],
        } for p in rep.parts],
    }
