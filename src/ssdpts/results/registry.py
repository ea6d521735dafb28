"""One place knows each field of a run's results (docs/design.md#one-place-per-field): its name, type, unit,
how to read it from a run and how to show it.

* METRICS: every value a measurement-window table holds (unit, speed- or time-type, label), and
  :func:`fmt_value` — one number format for the terminal, HTML and PDF.
* RUN_FIELDS: every per-run field that comparisons check (``invalidates``: a difference refuses
  the comparison unless allowed) or the results library stores (``column``: its column), with the
  getter that reads it from a :class:`~ssdpts.results.reader.RunResults`. COMPARED_SETTINGS and
  LIBRARY_COLUMNS give the order of each view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import json
from typing import TYPE_CHECKING, Any

from ssdpts.pts import wsat

if TYPE_CHECKING:
    from .reader import RunResults

SPEED = "speed"
TIME = "time"


# ==================================================================================================
# Metrics
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    unit: str
    kind: str  # SPEED (higher is better) or TIME (lower is better)
    label: str
    short: str = ""  # the column name where a row shows several metrics of one cell


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("iops", "IOPS", SPEED, "IOPS"),
    Metric("read_mb_per_s", "MB/s", SPEED, "SEQ read MB/s"),
    Metric("write_mb_per_s", "MB/s", SPEED, "SEQ write MB/s"),
    Metric("lat_mean_us", "µs", TIME, "mean response time", "mean"),
    # pts/qos.py: the percentile of the window's pooled histogram, the largest IO of the window
    Metric("lat_p99999_us", "µs", TIME, "99.999th percentile response time (window)", "99.999%"),
    Metric("lat_max_us", "µs", TIME, "max response time (highest in window)", "max"),
    Metric("lat_max_in_window_us", "µs", TIME, "max response time (highest in window; = max)", "max in window"),
    Metric("final_window_iops", "IOPS", SPEED, "WSAT steady level (final window IOPS)"),
    # the extended tests (docs/pts-reference.md#extended)
    Metric("burst_iops", "IOPS", SPEED, "HIR: mean IOPS of a wait state's 5-s bursts", "bursts"),
    Metric("baseline_iops", "IOPS", SPEED, "HIR: mean IOPS of a return to baseline", "baseline"),
    Metric("mb_per_s", "MB/s", SPEED, "XSR: mean write MB/s of an access group", "mean MB/s"),
    Metric("final_mb_per_s", "MB/s", SPEED, "XSR: write MB/s of a group's last 5 minutes", "end MB/s"),
    Metric("peak_lat_mean_us", "µs", TIME, "XSR: highest per-minute mean response time", "peak mean"),
    Metric("recovery_minutes", "min", TIME, "XSR: PTS minutes until group 3 recovers", "recovery"),
    Metric("lat_p999_us", "µs", TIME, "99.9th percentile response time", "99.9%"),
    Metric("lat_p9999_us", "µs", TIME, "99.99th percentile response time", "99.99%"),
    Metric("cpu_pct", "%", TIME, "fio threads' CPU (usr + sys), % of one CPU per thread", "CPU"),
    Metric("prewrite_iops", "IOPS", SPEED, "IOPS of the pre-write before an operating point", "pre-write"),
    # the OCP tests (pts/ocp.py): QD 1 read latency and its change against the baseline
    Metric("lat_p99_us", "µs", TIME, "99th percentile response time", "99%"),
    Metric("lat_change_pct", "%", TIME, "OCP: change of read latency against the baseline", "change"),
    # WSAT's drive model (results/wsatmodel.py, docs/methodology.md#drive-model)
    # (each its own cell, named by its label: no short name appended)
    Metric("model_effective_spare_pct", "%", SPEED, "drive model: effective spare, % of user capacity"),
    Metric("model_gc_onset", "× capacity", SPEED, "drive model: GC onset, capacity written"),
    Metric("model_steady_wa", "×", TIME, "drive model: steady write amplification"),
    Metric("model_slc_cache_mib", "MiB", SPEED, "drive model: SLC cache, MiB of host data"),
)}
SHORT = {m.name: m.short for m in METRICS.values() if m.short}


def unit_of(metric: str) -> str:
    m = METRICS.get(metric)
    return m.unit if m else ""


def fmt_value(v: float | None, unit: str = "", missing: str = "n/a") -> str:
    """IOPS whole numbers (one decimal below 100); MB/s and µs one decimal (two below 10); thousands
    separated by commas. ``missing``: the text for no value (None)."""
    if v is None:
        return missing
    a = abs(v)
    if unit == "IOPS":
        return f"{v:,.0f}" if a >= 100 else f"{v:,.1f}"
    if unit == "min":
        return f"{v:,.0f}"
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


# ==================================================================================================
# Run fields: settings, identity, device, host
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class RunField:
    name: str  # the name comparisons use (JSON "setting")
    type: str  # int | float | str | list (a list is stored comma-separated)
    get: Callable[["RunResults"], Any]
    label: str = ""  # comparisons' label; "" = not compared
    invalidates: bool = False  # comparisons: a difference refuses unless --allow-different
    column: str = ""  # results-library column; "" = not stored
    sql: str = ""  # the column's SQL declaration ("" = its type's)
    description: str = ""  # the column's documentation (docs/results-db.md)

    def text(self, run: "RunResults") -> str:
        """The value as comparisons show it ("—" for none)."""
        v = self.get(run)
        if v is None:
            return "—"
        if isinstance(v, tuple):
            return ", ".join(str(x) for x in v)
        if isinstance(v, float):
            return f"{v:g}"
        return str(v)

    def stored(self, run: "RunResults") -> Any:
        """The value as the results library stores it (None for none)."""
        v = self.get(run)
        if self.type == "list":
            return ",".join(str(x) for x in v) if v else None
        if self.type == "int":
            return _as_int(v)
        if self.type == "float":
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if self.type == "json":
            return json.dumps(v, sort_keys=True, default=str)
        return None if v is None or v == "" else str(v)

    @property
    def sql_decl(self) -> str:
        return self.sql or {"int": "INTEGER", "float": "REAL"}.get(self.type, "TEXT")


def _as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _tc_qd(run: "RunResults", name: str) -> int | None:
    """The run's TC or QD where one of its tests runs at it (a kind's USES_TC_QD); a LAT-only run
    has none to show (it runs at TC1/QD1, whatever the profile says)."""
    from ssdpts.pts.registry import TESTS

    s = run.manifest.settings
    return getattr(s, name) if any(getattr(TESTS.get(t), "USES_TC_QD", False) for t in s.tests) else None


def _purge(run: "RunResults") -> tuple[str, ...] | None:
    methods = run.manifest.purge_methods
    return methods or ((run.manifest.settings.purge,) if run.manifest.settings.purge else None)


def _target(run: "RunResults", name: str) -> Any:
    t = run.manifest.target
    return getattr(t, name) if t is not None else None


def _f(name: str, type_: str, get: Callable[["RunResults"], Any], label: str = "", invalidates: bool = False,
       column: str | None = None, description: str = "", sql: str = "") -> RunField:
    return RunField(name, type_, get, label, invalidates, name if column is None else column, sql, description)


RUN_FIELDS: dict[str, RunField] = {f.name: f for f in (
    # identity of the run
    _f("run_uid", "str", lambda r: r.uid, sql="TEXT PRIMARY KEY",
       description="stable id: sha256 of created time, host name, target path, directory name, seed (16 hex)"),
    _f("run_name", "str", lambda r: r.name, sql="TEXT NOT NULL", description="run directory name"),
    _f("status", "str", lambda r: r.status, sql="TEXT NOT NULL",
       description="complete, or damaged: complete but failing 'ssdpts verify' (left out of export)"),
    _f("created", "str", lambda r: r.manifest.created, description="run start, UTC, ISO 8601 (YYYY-MM-DDTHH:MM:SSZ)"),
    _f("ended", "str", lambda r: r.manifest.ended, description="run end, UTC, ISO 8601"),
    _f("ssdpts_version", "str", lambda r: r.manifest.ssdpts_version, "ssdpts version",
       description="ssdpts version that made the run"),
    _f("fio_version", "str", lambda r: r.manifest.fio_version, "fio version",
       description="fio version (or the executor's)"),
    _f("executor", "str", lambda r: r.manifest.executor, "executor", description="fio, or fake for synthetic runs"),
    _f("pts_compliant", "int", lambda r: r.pts_compliant, description="1 when the run has no deviation from PTS 2.0.2"),
    _f("deviations", "json", lambda r: list(r.deviations), description="JSON array of the deviations from the PTS"),
    # settings (RunSpec, profile defaults resolved)
    _f("tests", "list", lambda r: r.manifest.settings.tests or ((r.kind,) if r.kind else ()),
       description="tests of the run, comma-separated (wsat,iops,tp,lat,hir,xsr,cbw,dirth,ocp-trim,ocp-idle-gc); "
                   "a run beside the PTS: its kind (quick, replay)"),
    _f("profile", "str", lambda r: r.manifest.settings.profile, "profile", True, description="enterprise or client"),
    _f("threads", "int", lambda r: _tc_qd(r, "resolved_threads"), "TC (threads)", True,
       description="the run's TC, of its tests that run at it (WSAT, IOPS, HIR, OCP idle GC; profile default "
                   "resolved); NULL when none does (LAT runs at TC1/QD1, TP, XSR, CBW and DIRTH at their own)"),
    _f("iodepth", "int", lambda r: _tc_qd(r, "resolved_iodepth"), "QD (iodepth)", True,
       description="the run's QD per thread, of its tests that run at it (resolved); NULL when none does"),
    _f("active_range_pct", "float", lambda r: r.manifest.settings.resolved_active_range_pct, "active range (%)", True,
       description="active range, % of LBAs (resolved)"),
    _f("step_seconds", "float", lambda r: r.manifest.settings.step_seconds, "step duration (s)", True,
       description="length of one PTS step, s (60 = PTS)"),
    _f("max_rounds", "int", lambda r: r.manifest.settings.max_rounds, "max rounds",
       description="rounds allowed to reach steady state"),
    _f("pts_version", "str", lambda r: r.manifest.settings.pts_version, "PTS version", True, description="2.0.2 or 1.1"),
    _f("ioengine", "str", lambda r: r.manifest.settings.ioengine, "ioengine", True, description="fio ioengine"),
    _f("data_pattern", "str", lambda r: r.manifest.settings.data_pattern, "data pattern", True,
       description="data written (random fio buffers, tausworthe64)"),
    _f("seed", "int", lambda r: r.manifest.settings.seed, "seed", description="base seed of fio's random LBAs and data"),
    _f("purge", "list", _purge, "purge method", description="purge methods used, comma-separated"),
    _f("wipc_capacity_multiple", "float", lambda r: r.manifest.settings.wipc_capacity_multiple, "WIPC (× capacity)",
       description="WIPC writes this × the active range"),
    _f("precondition", "str", lambda r: r.manifest.settings.precondition, "preconditioning",
       description="pts (the PTS's WIPC), or sprandom:OP (one physical fill by fio's sprandom in its place, OP the "
                   "over-provisioning ratio; not PTS compliant)"),
    _f("wsat_hours", "float", lambda r: r.manifest.settings.wsat_hours, description="WSAT time limit, h"),
    _f("wsat_capacity_multiple", "float", lambda r: r.manifest.settings.wsat_capacity_multiple,
       description="WSAT stops after this × capacity written"),
    _f("wsat_limits", "str", lambda r: wsat.run_limits(r.manifest.settings), "WSAT limits", column=""),
    # the device
    _f("target_kind", "str", lambda r: _target(r, "kind"), description="block or file"),
    _f("target_path", "str", lambda r: _target(r, "path"), description="device or file path as given"),
    _f("device_vendor", "str", lambda r: _target(r, "vendor"), description="vendor"),
    _f("device_model", "str", lambda r: _target(r, "model"), description="model"),
    _f("device_serial", "str", lambda r: _target(r, "serial"), description="serial number"),
    _f("device_firmware", "str", lambda r: _target(r, "firmware"), description="firmware revision"),
    _f("device_transport", "str", lambda r: _target(r, "transport"), description="nvme, sata, sas, usb, ..."),
    _f("device_wwid", "str", lambda r: _target(r, "wwid"), description="world-wide id"),
    _f("capacity", "int", lambda r: _target(r, "size_bytes"), "capacity (bytes)", column="capacity_bytes",
       description="user capacity, bytes"),
    _f("logical_block_size_bytes", "int", lambda r: _target(r, "logical_block_size_bytes"),
       "logical block size (bytes)", description="logical block size, bytes"),
    # the host
    _f("host", "str", lambda r: r.manifest.host.get("hostname"), "host", column="host_name", description="host name"),
    _f("host_kernel", "str", lambda r: r.manifest.host.get("kernel"), description="kernel release"),
    _f("host_distribution", "str", lambda r: r.manifest.host.get("distribution"), description="operating system"),
    _f("host_cpu_model", "str", lambda r: r.manifest.host.get("cpu_model"), description="CPU model"),
    _f("host_cpu_count", "int", lambda r: r.manifest.host.get("cpu_count"), description="logical CPUs online"),
    _f("host_memory_bytes", "int", lambda r: r.manifest.host.get("memory_bytes"),
       description="RAM the kernel sees, bytes"),
    # as recorded, whole
    _f("run_spec_json", "json", lambda r: r.manifest.settings.doc, description="manifest run_spec, JSON (every setting)"),
    _f("target_json", "json", lambda r: r.manifest.doc.get("target") or {}, description="manifest target, JSON"),
    _f("host_json", "json", lambda r: r.manifest.host, description="manifest host facts, JSON"),
)}

# Comparisons: the settings a comparison checks, invalidating ones first (a difference refuses).
COMPARED_SETTINGS: tuple[str, ...] = (
    "profile", "threads", "iodepth", "active_range_pct", "step_seconds", "pts_version", "data_pattern", "ioengine",
    # shown, and highlighted when they differ, but no reason to refuse:
    "max_rounds", "wipc_capacity_multiple", "precondition", "wsat_limits", "purge", "seed", "executor", "fio_version",
    "ssdpts_version", "capacity", "logical_block_size_bytes", "host",
)
