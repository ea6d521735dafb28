"""The typed records of a run directory: what manifest.json, summary.json and steps.jsonl hold,
as frozen records (docs/design.md#frozen-records, #units-in-names; docs/results-format.md is the field reference).
A line of steps.jsonl is steprecord.StepRecord (here too, for readers of this module).

Each record reads its JSON form with ``from_dict`` — tolerant of fields older files lack (they
read as None or empty) — and the summary records write it back with ``to_dict``, which is what
summary.summarize stores: one model for writing and reading. The tables inside the summary
belong to their tests (pts/iops.py etc.). Format versions are checked by formats.py first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from ..device.purge.base import PurgeRecord
from ..device.target import Target
from ..errors import UserError
from ..pts.registry import table_from_dict
from ..pts.runspec import OUTLIER_MS, RunSpec
from ..pts.steady_state import WINDOW_ROUNDS, SteadyState
from ..pts.tables import Table, num
from .drivemodel import DriveModel
from .formats import Document, reworded
from .seal import FileDigest
from .steprecord import STEP_FIELDS, Boundary, StepRecord  # noqa: F401  (the records of steps.jsonl)
from .timetoresult import TimeToResult


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


# ==================================================================================================
# summary.json
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class NoWindow:
    """A tracking variable with fewer than WINDOW_ROUNDS rounds: no steady-state verdict yet."""

    variable: str
    unit: str
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    note: str = f"fewer than {WINDOW_ROUNDS} rounds: no steady-state window"
    reached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"variable": self.variable, "unit": self.unit, "rounds": list(self.rounds),
                "values": list(self.values), "reached": False, "note": self.note}


Verdict = SteadyState | NoWindow


def verdict_from_dict(d: Mapping[str, Any]) -> Verdict:
    if "note" in d or d.get("average") is None:
        return NoWindow(str(d.get("variable", "")), str(d.get("unit", "")), tuple(d.get("rounds") or ()),
                        tuple(d.get("values") or ()), str(d.get("note") or "no steady-state window"))
    return SteadyState(
        variable=str(d.get("variable", "")), unit=str(d.get("unit", "")), rounds=tuple(d.get("rounds") or ()),
        values=tuple(d.get("values") or ()), average=float(d["average"]), range=float(d.get("range", 0.0)),
        range_limit=float(d.get("range_limit", 0.0)), slope=float(d.get("slope", 0.0)),
        intercept=float(d.get("intercept", 0.0)), excursion=float(d.get("excursion", 0.0)),
        excursion_limit=float(d.get("excursion_limit", 0.0)), range_ok=bool(d.get("range_ok")),
        excursion_ok=bool(d.get("excursion_ok")))


@dataclass(frozen=True, slots=True)
class WindowResume:
    """Where a window stands to the run's resumptions (analysis.window_rounds_from, docs/methodology.md)."""

    window_from_round: int | None  # the first round the window may use (None: no re-preconditioning resume)
    spans_resume: Mapping[str, Any] | None  # with --keep-window: {"idle_h", "text": "spans a resume of N h"}


@dataclass(frozen=True, slots=True)
class SteadyStateResult:
    """A part's verdict: every tracking variable must pass in the same window (PTS 2.0.2)."""

    reached: bool
    window_rounds: tuple[int, ...]  # the measurement window (the last 5 rounds when not reached)
    variables: tuple[Verdict, ...]
    resume: WindowResume | None = None  # None: written by an ssdpts that did not record it

    @property
    def spans_resume(self) -> Mapping[str, Any] | None:
        return None if self.resume is None else self.resume.spans_resume

    def to_dict(self) -> dict[str, Any]:
        d = {"reached": self.reached, "window_rounds": list(self.window_rounds),
             "variables": [v.to_dict() for v in self.variables]}
        if self.resume is not None:
            d["window_from_round"] = self.resume.window_from_round
            d["spans_resume"] = None if self.resume.spans_resume is None else dict(self.resume.spans_resume)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SteadyStateResult":
        span = d.get("spans_resume")
        resume = WindowResume(_int(d.get("window_from_round")), span if isinstance(span, Mapping) else None) \
            if "window_from_round" in d or "spans_resume" in d else None
        return cls(bool(d.get("reached")), tuple(d.get("window_rounds") or ()),
                   tuple(verdict_from_dict(v) for v in d.get("variables") or ()), resume)


@dataclass(frozen=True, slots=True)
class Series:
    """One tracking variable over every complete round."""

    rounds: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Wipc:
    workload: str  # label, e.g. "SEQ 128KiB 0/100"
    io_bytes: int
    duration_s: float


@dataclass(frozen=True, slots=True)
class PartResult:
    """One part of a test in summary.json. WSAT parts have ``samples`` and no steady state; the
    others have ``rounds_run``, ``series`` and ``steady_state``."""

    id: str
    test: str
    part: str
    title: str
    stop_reason: str | None
    wipc: Wipc | None
    table: Table | None
    warnings: tuple[str, ...] = ()
    steady_state: SteadyStateResult | None = None
    rounds_run: int | None = None
    series: dict[str, Series] = field(default_factory=dict)
    samples: int | None = None  # WSAT only
    # Added to format 1 (None: written before they were): the round limit after a
    # re-preconditioning resume, the step boundaries (summary.boundary_summary, kept as recorded:
    # docs/results-format.md), the resumptions the part continued through.
    round_limit: int | None = None
    boundaries: Mapping[str, Any] | None = None
    resumptions: tuple[Mapping[str, Any], ...] | None = None
    # Added to format 1 (None: written before it was): rates as the device did them (timing.part_timing)
    timing: Mapping[str, Any] | None = None
    # Added to format 1 (None: written before it was): WSAT's drive model (results/wsatmodel.py)
    model: DriveModel | None = None

    @property
    def is_wsat(self) -> bool:
        return self.samples is not None

    @property
    def reached(self) -> bool | None:
        """True / False (NOT reached); None where the test has no steady-state rule (WSAT)."""
        return None if self.steady_state is None else self.steady_state.reached

    @property
    def window_rounds(self) -> tuple[int, ...]:
        return self.steady_state.window_rounds if self.steady_state else ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "test": self.test, "part": self.part, "title": self.title,
                             "stop_reason": self.stop_reason,
                             "wipc": None if self.wipc is None else {"workload": self.wipc.workload,
                                                                     "io_bytes": self.wipc.io_bytes,
                                                                     "duration_s": self.wipc.duration_s}}
        if self.is_wsat:
            d["samples"] = self.samples
        else:
            d["rounds_run"] = self.rounds_run
            d["series"] = {k: {"rounds": list(s.rounds), "values": list(s.values)} for k, s in self.series.items()}
        d["steady_state"] = None if self.steady_state is None else self.steady_state.to_dict()
        d["table"] = None if self.table is None else self.table.to_dict()
        d["warnings"] = list(self.warnings)
        if self.round_limit is not None:
            d["round_limit"] = self.round_limit
        if self.boundaries is not None:
            d["boundaries"] = self.boundaries
        if self.resumptions is not None:
            d["resumptions"] = list(self.resumptions)
        if self.timing is not None:
            d["timing"] = self.timing
        if self.model is not None:
            d["model"] = self.model.to_dict()
        return d

    @classmethod
    def from_dict(cls, pid: str, d: Mapping[str, Any]) -> "PartResult":
        w = d.get("wipc")
        ss = d.get("steady_state")
        return cls(
            id=str(d.get("id") or pid), test=str(d.get("test") or pid), part=str(d.get("part") or ""),
            title=str(d.get("title") or pid), stop_reason=_str(d.get("stop_reason")),
            wipc=Wipc(str(w.get("workload", "")), int(w.get("io_bytes") or 0), float(w.get("duration_s") or 0.0))
            if isinstance(w, Mapping) else None,
            table=table_from_dict(d.get("table")), warnings=tuple(d.get("warnings") or ()),
            steady_state=SteadyStateResult.from_dict(ss) if isinstance(ss, Mapping) else None,
            rounds_run=_int(d.get("rounds_run")),
            series={k: Series(tuple(s.get("rounds") or ()), tuple(s.get("values") or ()))
                    for k, s in _map(d.get("series")).items()},
            samples=_int(d.get("samples")), round_limit=_int(d.get("round_limit")),
            boundaries=d.get("boundaries") if isinstance(d.get("boundaries"), Mapping) else None,
            resumptions=tuple(r for r in d["resumptions"] if isinstance(r, Mapping))
            if isinstance(d.get("resumptions"), list) else None,
            timing=d.get("timing") if isinstance(d.get("timing"), Mapping) else None,
            model=DriveModel.from_dict(d["model"]) if isinstance(d.get("model"), Mapping) else None,
        )


@dataclass(frozen=True, slots=True)
class Summary(Document):
    """summary.json: the status, the deviations from the PTS and every part's results."""

    KIND: ClassVar[str] = "summary"

    status: str | None
    pts_compliant: bool
    deviations: tuple[str, ...]
    tests: dict[str, tuple[str, ...]]  # test -> its part ids, in run order
    parts: dict[str, PartResult]
    boundaries: Mapping[str, Any] | None = None  # over every part (summary.run_boundary_summary); None: not recorded
    timing: Mapping[str, Any] | None = None  # over every part (timing.run_timing); None: not recorded

    def to_dict(self) -> dict[str, Any]:
        d = {"status": self.status, "pts_compliant": self.pts_compliant, "deviations": list(self.deviations),
             "tests": {t: list(ids) for t, ids in self.tests.items()},
             "parts": {pid: p.to_dict() for pid, p in self.parts.items()}}
        if self.boundaries is not None:
            d["boundaries"] = self.boundaries
        if self.timing is not None:
            d["timing"] = self.timing
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Summary":
        devs = d.get("deviations")
        return cls(_str(d.get("status")), bool(d.get("pts_compliant", not devs)), tuple(map(reworded, devs or ())),
                   {str(t): tuple(ids or ()) for t, ids in _map(d.get("tests")).items()},
                   {str(pid): PartResult.from_dict(str(pid), p) for pid, p in _map(d.get("parts")).items()
                    if isinstance(p, Mapping)},
                   d.get("boundaries") if isinstance(d.get("boundaries"), Mapping) else None,
                   d.get("timing") if isinstance(d.get("timing"), Mapping) else None)


# ==================================================================================================
# live.json
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class Live:
    """live.json: the step in flight and its rate, about once a second while a run measures
    (docs/status.md "Live metrics"); run/runner.py writes it, metrics.py reads it."""

    t_unix_s: float  # when sampled
    part: str
    test: str
    phase: str
    round: int
    step: int
    step_label: str
    iops: float | None
    bw_bytes_per_s: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"t_unix_s": self.t_unix_s, "part": self.part, "test": self.test, "phase": self.phase,
                "round": self.round, "step": self.step, "step_label": self.step_label, "iops": self.iops,
                "bw_bytes_per_s": self.bw_bytes_per_s}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Live":
        return cls(float(num(d.get("t_unix_s")) or 0.0), str(d.get("part") or ""), str(d.get("test") or ""),
                   str(d.get("phase") or ""), _int(d.get("round")) or 0, _int(d.get("step")) or 0,
                   str(d.get("step_label") or ""), num(d.get("iops")), num(d.get("bw_bytes_per_s")))


# ==================================================================================================
# manifest.json
# ==================================================================================================

DEFAULT_DATA_PATTERN = "random (fio buffers, tausworthe64)"


@dataclass(frozen=True, slots=True)
class Settings:
    """The recorded run_spec: the options as given, and ``resolved`` (profile defaults applied when
    the run started — what the run used, even if a later ssdpts changes a profile)."""

    tests: tuple[str, ...]
    profile: str | None
    threads: int | None  # as given (None: the profile's); resolved_threads is what ran
    iodepth: int | None
    active_range_pct: float | None
    step_seconds: float | None
    max_rounds: int | None
    wsat_hours: float | None
    wsat_capacity_multiple: float | None
    wsat_chunk_steps: int | None
    ioengine: str | None
    purge: str | None
    pts_version: str | None
    seed: int | None
    wipc_capacity_multiple: float | None
    extra: Mapping[str, Any]
    resolved_threads: int | None
    resolved_iodepth: int | None
    resolved_active_range_pct: float | None
    profile_params: Mapping[str, Any]  # the profile as it was: write_cache, tp_threads, segmentation, ...
    doc: Mapping[str, Any] = field(default_factory=dict)  # run_spec as recorded (the library keeps it whole)

    @property
    def data_pattern(self) -> str:
        """The data written; ssdpts always writes fio's random buffers unless a run says otherwise."""
        return str(self.doc.get("data_pattern") or self.extra.get("data_pattern") or DEFAULT_DATA_PATTERN)

    @property
    def precondition(self) -> str:
        """'pts' (the PTS's WIPC), or 'sprandom:OP' (fio's sprandom in its place,
        docs/methodology.md#preconditioning-by-sprandom); a run recorded before the option: pts."""
        method = str(self.doc.get("precondition") or "pts")
        op = self.doc.get("spr_op")
        return f"{method}:{op:g}" if method == "sprandom" and isinstance(op, (int, float)) else method

    @property
    def outlier_ms(self) -> tuple[float, ...]:
        """The latency outlier thresholds, ms (recorded only when not the default)."""
        v = self.doc.get("outlier_ms")
        return tuple(float(t) for t in v) if isinstance(v, (list, tuple)) and v else OUTLIER_MS

    def run_spec(self) -> RunSpec:
        """The RunSpec again (validated), to plan the parts of this run."""
        return RunSpec.from_dict(dict(self.doc))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Settings":
        res = _map(d.get("resolved"))
        return cls(
            tests=tuple(d.get("tests") or ()), profile=_str(d.get("profile")), threads=_int(d.get("threads")),
            iodepth=_int(d.get("iodepth")), active_range_pct=num(d.get("active_range_pct")),
            step_seconds=num(d.get("step_seconds")), max_rounds=_int(d.get("max_rounds")),
            wsat_hours=num(d.get("wsat_hours")), wsat_capacity_multiple=num(d.get("wsat_capacity_multiple")),
            wsat_chunk_steps=_int(d.get("wsat_chunk_steps")), ioengine=_str(d.get("ioengine")),
            purge=_str(d.get("purge")), pts_version=_str(d.get("pts_version")), seed=_int(d.get("seed")),
            wipc_capacity_multiple=num(d.get("wipc_capacity_multiple")), extra=_map(d.get("extra")),
            resolved_threads=_int(res.get("threads", d.get("threads"))),
            resolved_iodepth=_int(res.get("iodepth", d.get("iodepth"))),
            resolved_active_range_pct=num(res.get("active_range_pct", d.get("active_range_pct"))),
            profile_params=_map(res.get("profile")), doc=d)


def _audit(audit: Any) -> Any:
    """The recorded host audit, its recommendations in today's words (formats.reworded)."""
    if not isinstance(audit, Mapping) or not isinstance(audit.get("checks"), list):
        return audit
    checks = [{k: reworded(v) if k in ("recommended", "why") and isinstance(v, str) else v for k, v in c.items()}
              if isinstance(c, Mapping) else c for c in audit["checks"]]
    return {**audit, "checks": checks}


def target_from_dict(d: Mapping[str, Any]) -> Target | None:
    """The recorded target; fields a manifest lacks read as None (False for the flags)."""
    if not d:
        return None
    kw: dict[str, Any] = {}
    for f in fields(Target):
        v = d.get(f.name)
        if f.name in ("read_only", "is_partition", "exists"):
            v = bool(v)
        elif f.name in ("size_bytes", "logical_block_size_bytes", "physical_block_size_bytes"):
            v = _int(v) or 0
        elif f.name in ("path", "real_path", "kind", "name"):
            v = str(v or "")
        kw[f.name] = v
    return Target(**kw)


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """manifest parts.<id>.rounds.<name>: a round's raw files and step lines, as store.record_round
    recorded them before the lines were appended (results/verify/integrity.py checks them)."""

    steps: int
    steps_sha256: str | None  # store.steps_digest of its lines (None: an older run directory)
    files: dict[str, FileDigest]  # relative path -> its size and SHA-256

    @property
    def fio_json(self) -> str | None:
        """fio's output of the round, as its step lines name it (``fio_json``)."""
        return next((f for f in self.files if f.endswith(".json")), None)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RoundRecord":
        return cls(int(d.get("steps", 0)), d.get("steps_sha256") or None,
                   {str(k): FileDigest.from_dict(v) for k, v in _map(d.get("files")).items()})


@dataclass(frozen=True, slots=True)
class PartState:
    """manifest parts.<id>: how far the run got with a part, and how it was purged."""

    purge: PurgeRecord | None
    preconditioned: str | None
    finished: str | None
    stop_reason: str | None
    rounds: dict[str, RoundRecord] | None = None  # None: the part records none (not a mapping)
    # what the part took to its result (results/analysis.time_to_result): None before it finished,
    # or in a run recorded before it was kept
    time_to_result: TimeToResult | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PartState":
        p = d.get("purge")
        purge = None
        if isinstance(p, Mapping):
            purge = PurgeRecord(str(p.get("method") or ""), str(p.get("disclosure") or ""), str(p.get("started_at") or ""),
                                float(p.get("duration_s") or 0.0), p.get("is_pts_purge"), str(p.get("detail") or ""),
                                tuple(p.get("notes") or ()))
        rounds = d.get("rounds")
        return cls(purge, _str(d.get("preconditioned")), _str(d.get("finished")), _str(d.get("stop_reason")),
                   {str(k): RoundRecord.from_dict(v) for k, v in rounds.items() if isinstance(v, Mapping)}
                   if isinstance(rounds, Mapping) else None,
                   TimeToResult.from_dict(d["time_to_result"]) if isinstance(d.get("time_to_result"), Mapping) else None)


@dataclass(frozen=True, slots=True)
class Resumption:
    """manifest resumptions[n - 1]: the n-th 'ssdpts resume' of the run (run/session.py makes it):
    when, from which status, by which process, the steps it kept, how the device was proven the
    same (``identity``) and what it holds (``contents``, block devices), the rounds it measured
    again, the interruption it continued after, and whether it kept the steady-state window."""

    at: str | None
    previous_status: str | None
    keep_window: bool  # the steady-state window kept across it (--keep-window)
    pid: int | None = None
    steps_kept: int | None = None
    identity: Any = None
    contents: Any = None  # None: not recorded (a file or zram target)
    rounds_measured_again: tuple[str, ...] = ()
    interruption: Mapping[str, Any] | None = None
    doc: Mapping[str, Any] | None = None  # as recorded: written back as it is (None: made here)

    def to_dict(self) -> dict[str, Any]:
        if self.doc is not None:
            return dict(self.doc)
        return {"at": self.at, "previous_status": self.previous_status, "pid": self.pid, "steps_kept": self.steps_kept,
                "identity": self.identity, **({} if self.contents is None else {"contents": self.contents}),
                "rounds_measured_again": list(self.rounds_measured_again), "interruption": self.interruption,
                "keep_window": self.keep_window}

    @classmethod
    def from_dict(cls, d: Any) -> "Resumption":
        if not isinstance(d, Mapping):  # not a resumption ssdpts wrote: counted, never kept
            return cls(None, None, False)
        ints = d.get("interruption")
        return cls(_str(d.get("at")), _str(d.get("previous_status")), bool(d.get("keep_window")), _int(d.get("pid")),
                   _int(d.get("steps_kept")), d.get("identity"), d.get("contents"),
                   tuple(d.get("rounds_measured_again") or ()), ints if isinstance(ints, Mapping) else None, d)


@dataclass(frozen=True, slots=True)
class Manifest(Document):
    """manifest.json. ``device``, ``host`` and ``audit`` stay mappings: their fields are described by
    the catalogues (device/fields.py FIELDS, device/host/host.py HOST_FIELDS, device/host/audit.py).

    A run makes it with ``new`` (the entries every run directory has) and ``with_changes`` (its
    kind's entries); the store writes it (``to_dict``: its fields in the order they were given,
    each as recorded) with the format, status and digests of a new run, and updates it by field."""

    KIND: ClassVar[str] = "manifest"

    status: str | None
    created: str | None
    updated: str | None
    ended: str | None
    error: str | None
    ssdpts_version: str | None
    fio_version: str | None
    executor: str | None
    command_line: tuple[str, ...]
    settings: Settings
    pts_compliant: bool | None
    deviations: tuple[str, ...] | None  # None: not recorded (runs from before deviations were)
    target: Target | None
    confirmation: str | None
    device: Mapping[str, Any]
    host: Mapping[str, Any]
    audit: Any
    description: Mapping[str, Any] | None
    active_range_bytes: int | None
    parts: dict[str, PartState]
    write_cache: str | None
    telemetry: Mapping[str, Any] | None
    doc: Mapping[str, Any]  # manifest.json as recorded (the library keeps run_spec, target and host whole)
    kind: str | None = None  # "quick", "replay"; None: a PTS run
    resumptions: tuple[Resumption, ...] = ()
    summary_file: FileDigest | None = None  # summary.json's size and SHA-256 (None: not recorded)

    @classmethod
    def new(cls, *, kind: str | None = None, ssdpts_version: str, fio_version: str | None, executor: str,
            command_line: list[str], target: Target, fingerprint: Any, confirmation: str | None, claim: Any,
            results_space: Mapping[str, Any], device: Mapping[str, Any] | None, host: Mapping[str, Any], audit: Any,
            description: Mapping[str, Any] | None, device_host: str | None = None) -> "Manifest":
        """The entries every run directory has: versions, command line, the target, its fingerprint
        and identity, the confirmation and claim, the results disk, the device, the host and its
        audit; ``kind`` first for a run beside the PTS; ``device_host``: the host the device is on,
        when that is not this one (device/remote/remote.py)."""
        return cls.from_dict({
            **({} if kind is None else {"kind": kind}),
            "ssdpts_version": ssdpts_version, "fio_version": fio_version, "executor": executor,
            "command_line": command_line, "target": target.to_dict(), "fingerprint": fingerprint,
            "confirmation": confirmation, "claim": claim, "results_space": results_space, "device": device,
            "host": host, "audit": audit, "description": description,
            **({"device_host": device_host} if device_host else {}),
        })

    def with_changes(self, **changes: Any) -> "Manifest":
        """The manifest with the fields named changed (a new field after the others, as the store
        writes it); each value in its JSON form, a record's ``to_dict``."""
        return Manifest.from_dict({**self.doc, **changes})

    def to_dict(self) -> dict[str, Any]:
        return dict(self.doc)

    @property
    def purge_methods(self) -> tuple[str, ...]:
        """The purge methods used, sorted (one per part; 'none' when the run did not purge)."""
        return tuple(sorted({str(p.purge.method) for p in self.parts.values() if p.purge is not None}))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Manifest":
        desc = d.get("description")
        devs = d.get("deviations")
        return cls(
            status=_str(d.get("status")), created=_str(d.get("created")), updated=_str(d.get("updated")),
            ended=_str(d.get("ended") or d.get("finished")), error=_str(d.get("error")), ssdpts_version=_str(d.get("ssdpts_version")),
            fio_version=_str(d.get("fio_version")), executor=_str(d.get("executor")),
            command_line=tuple(str(a) for a in d.get("command_line") or ()),
            settings=Settings.from_dict(_map(d.get("run_spec"))),
            pts_compliant=d.get("pts_compliant"), deviations=None if devs is None else tuple(map(reworded, devs)),
            target=target_from_dict(_map(d.get("target"))), confirmation=_str(d.get("confirmation")),
            device=_map(d.get("device")), host=_map(d.get("host")), audit=_audit(d.get("audit")),
            description=desc if isinstance(desc, Mapping) else None,
            active_range_bytes=_int(d.get("active_range_bytes")),
            parts={str(k): PartState.from_dict(v) for k, v in _map(d.get("parts")).items() if isinstance(v, Mapping)},
            write_cache=_str(d.get("write_cache")), telemetry=d.get("telemetry") if isinstance(d.get("telemetry"), Mapping) else None,
            doc=d, kind=d.get("kind") if isinstance(d.get("kind"), str) else None,
            resumptions=tuple(Resumption.from_dict(r) for r in d.get("resumptions") or ()),
            summary_file=FileDigest.from_dict(d["summary_file"]) if isinstance(d.get("summary_file"), Mapping) else None)

    def run_spec_and_target(self) -> tuple[RunSpec, Target]:
        """What planning this run's parts needs, or a UserError naming what is missing."""
        try:
            spec = self.settings.run_spec()
        except (KeyError, TypeError, ValueError, UserError) as exc:
            raise UserError(f"manifest.json lacks a usable run_spec ({exc})") from None
        if self.target is None or not self.target.size_bytes:
            raise UserError("manifest.json lacks a usable target (its size is unknown)")
        return spec, self.target
