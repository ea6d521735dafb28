"""Every number a reader trusts, proven from what fio wrote: each step record recomputed from its
raw fio output, and the summary recomputed from the steps.

The integrity records (store.record_round, store.write_summary) prove that a file is the one ssdpts
wrote; this module proves that what it says follows from the files below it:

* a step's ``measurement`` is what engine/fioparse.py reads from the job of fio's json+ output the
  step names (``fio_json``, ``fio_job_index``), at the start and end time the step's timeline gave
  (fio does not know them); its ``workload`` is the job fio ran (``numjobs``, ``iodepth``, ``bs``,
  the read mix);
* summary.json is what summary.py makes of the steps (planned for the target the run recorded).

A value that differs is named, with both values and what it affects. Floats are compared to 12
significant digits: the recomputation runs the same code on the same numbers, so anything more is
an edit.

The step's measurement is remade by the executors' own parser and assembly
(``fioparse.step_measurement``), not by a second reading of fio's format: what this proves is the
records, not the parser (the unit tests on recorded fio outputs prove that). It stays independent of
the records: its inputs are the raw fio file (whose bytes the round's digests prove) and, from the
step's record, only what fio cannot know (the start and end times, the planned duration); every
other number of the record is compared, never used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ...measurement import Measurement
from ..records import Manifest, Summary
from ..steprecord import StepRecord
from ...engine.fioparse import FioOutput, FioOutputError, job_options, parse_fio_output, step_jobs, step_measurement

_REL = 1e-12


@dataclass(frozen=True, slots=True)
class Difference:
    key: str  # "measurement.read.lat_mean_ns", "parts.lat.table.rows[3].mean_us"
    recorded: Any
    recomputed: Any

    def text(self, source: str) -> str:
        return f"{self.key} is {_show(self.recorded)}; recomputed from {source}: {_show(self.recomputed)}"


def _show(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.12g}"
    text = json.dumps(v, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def differences(recorded: Any, recomputed: Any, key: str = "") -> Iterator[Difference]:
    """Every leaf where two JSON documents differ (floats to 12 significant digits)."""
    if isinstance(recorded, dict) and isinstance(recomputed, dict):
        for k in dict.fromkeys([*recorded, *recomputed]):
            sub = f"{key}.{k}" if key else str(k)
            if k not in recorded:
                yield Difference(sub, "(missing)", recomputed[k])
            elif k not in recomputed:
                yield Difference(sub, recorded[k], "(nothing)")
            else:
                yield from differences(recorded[k], recomputed[k], sub)
        return
    if isinstance(recorded, list) and isinstance(recomputed, list):
        if len(recorded) != len(recomputed):
            yield Difference(f"{key} (length)", len(recorded), len(recomputed))
            return
        for i, (a, b) in enumerate(zip(recorded, recomputed)):
            yield from differences(a, b, f"{key}[{i}]")
        return
    if _same(recorded, recomputed):
        return
    yield Difference(key, recorded, recomputed)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=_REL, abs_tol=0.0) or a == b
    return a == b


# --- steps from fio's output --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepCheck:
    line: int  # 1-based line of steps.jsonl
    record: StepRecord
    diffs: tuple[Difference, ...]
    recomputed: Measurement | None  # the measurement as fio's output gives it


def _load(path: Path) -> FioOutput | None:
    """fio's output, or None when the file is not fio's (a model run's placeholder, engine/fake.py)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        out = parse_fio_output(text)
    except FioOutputError:
        return None
    return out if "fake" not in out.raw else None


def _workload_diffs(workload: dict, job: dict, beside: dict | None = None) -> list[Difference]:
    opts = job_options(job)
    if beside and str(opts.get("rw", "")) in ("trim", "randtrim"):
        # fio reports a step with a job beside it (OCP's deallocation) under the options of that job
        return [Difference(f"beside.{k}", beside.get(k), f"{opt}={opts[opt]}")
                for k, opt in (("rw", "rw"), ("block_size_bytes", "bs"), ("threads", "numjobs"))
                if opt in opts and str(beside.get(k)) != str(opts[opt])]
    out = []
    for key, opt in (("threads", "numjobs"), ("iodepth", "iodepth")):
        if opt in opts and str(workload.get(key)) != str(opts[opt]):
            out.append(Difference(f"workload.{key}", workload.get(key), f"{opt}={opts[opt]}"))
    if "bs" in opts and not workload.get("bssplit") and str(workload.get("block_size_bytes")) != str(opts["bs"]):
        out.append(Difference("workload.block_size_bytes", workload.get("block_size_bytes"), f"bs={opts['bs']}"))
    rw = str(opts.get("rw", ""))
    if rw:
        read_pct = {"read": 100, "randread": 100, "write": 0, "randwrite": 0}.get(rw)
        if read_pct is None and "rwmixread" in opts:
            read_pct = int(opts["rwmixread"])
        if read_pct is not None and workload.get("read_pct") != read_pct:
            out.append(Difference("workload.read_pct", workload.get("read_pct"), f"rw={rw}"
                                  + (f", rwmixread={opts['rwmixread']}" if "rwmixread" in opts else "")))
        pattern = "rand" if rw.startswith("rand") else "seq"
        if workload.get("pattern") != pattern:
            out.append(Difference("workload.pattern", workload.get("pattern"), f"rw={rw}"))
    return out


def check_steps(run_dir: Path, steps: list[StepRecord], skip: set[str]) -> tuple[list[StepCheck], int, int]:
    """Each step recomputed from the fio output it names (files in ``skip`` are already known to be
    missing or altered). Returns (the steps that differ, steps proven, steps whose output is not
    fio's: a model run)."""
    cache: dict[str, FioOutput | None] = {}
    bad: list[StepCheck] = []
    proven = unprovable = 0
    for n, rec in enumerate(steps, start=1):
        rel = rec.fio_json
        if not rel or rel in skip:
            continue
        if rel not in cache:
            cache[rel] = _load(run_dir / rel)
        out = cache[rel]
        if out is None:
            unprovable += 1
            continue
        jobs = step_jobs(out)
        idx = rec.fio_job_index
        meas = rec.to_dict()["measurement"]  # as recorded
        if not isinstance(idx, int) or not 0 <= idx < len(jobs):
            bad.append(StepCheck(n, rec, (Difference("fio_job_index", idx, f"one of the {len(jobs)} jobs"),), None))
            continue
        try:
            again = step_measurement(out, idx, start_time=float(meas["start_time"]), end_time=float(meas["end_time"]),
                                     duration_s=rec.planned_duration_s)
        except (KeyError, TypeError, ValueError) as exc:
            bad.append(StepCheck(n, rec, (Difference("measurement", f"unreadable ({exc})", "a measurement"),), None))
            continue
        diffs = [*differences(meas, again.to_dict(), "measurement"),
                 *_workload_diffs(rec.to_dict().get("workload") or {}, jobs[idx], rec.beside)]
        if diffs:
            bad.append(StepCheck(n, rec, tuple(diffs), again))
        else:
            proven += 1
    return bad, proven, unprovable


def describe_step(rec: StepRecord) -> str:
    phase = rec.phase
    where = "the WIPC" if phase == "wipc" else f"round {rec.round}" if phase == "round" else str(phase)
    part = rec.test + (f"-{rec.part}" if rec.part else "")
    return f"{rec.label} in {where} of {part}"


# --- the summary from the steps -----------------------------------------------------------------


def summary_differences(manifest: Manifest, summary: Mapping[str, Any],
                        records: list[StepRecord]) -> tuple[list[Difference], dict[str, Any]]:
    """Where summary.json differs from what its steps give, and what they give. A summary without a
    recorded checksum (made by an older ssdpts) is compared on the values it has: a key an older
    analysis did not write is not a difference."""
    from ..seal import version_of
    from ..summary import recompute_summary

    again = json.loads(json.dumps(recompute_summary(manifest, records, summary.get("status")).to_dict(), default=str))
    diffs = list(differences({k: v for k, v in summary.items() if k != "format"}, again))
    if manifest.summary_file is None and version_of(manifest.doc) is None:
        diffs = [d for d in diffs if "(missing)" != d.recorded and "(nothing)" != d.recomputed]
    return diffs, again


# How far a summary.json is proven by the records above it (summary_state):
PROVEN = "proven"  # its checksum is the one recorded, in a manifest that matches its digests (and seal)
ALTERED = "altered"  # it is not the file ssdpts recorded
UNRECORDED = "unrecorded"  # its checksum record is missing from a run that always writes it: removed
UNCOVERED = "uncovered"  # its record is there, but was edited since ssdpts wrote it (or the seal is broken)
OLDER = "older"  # a run made before summaries were recorded: nothing proves it


def summary_state(run_dir: Path, manifest: Manifest, key=None) -> str:
    """What proves summary.json (one of the states above). A run of the current format (results/seal.py)
    records its summary whenever ssdpts writes it; so did every complete run whose rounds carry the
    step lines' checksums (they came with it). ``key``: the seal key to check the manifest's seal with."""
    from ...store import SUMMARY
    from .. import seal

    recorded = manifest.summary_file
    if recorded is None:
        current = seal.version_of(manifest.doc) is not None or (manifest.status == "complete" and any(
            r.steps_sha256 for p in manifest.parts.values() for r in (p.rounds or {}).values()))
        return UNRECORDED if current else OLDER
    try:
        now = seal.file_digest(run_dir / SUMMARY)
    except OSError:
        return ALTERED
    if now != recorded:
        return ALTERED
    if seal.version_of(manifest.doc) is not None and (
            {name for name, _ in seal.manifest_changes(manifest.doc)} & {"summary_file", seal.KEY}
            or seal.check_seal(manifest.doc, key).state == "broken"):
        return UNCOVERED
    return PROVEN


def trusted_summary(run_dir: Path, manifest: Manifest, summary: Mapping[str, Any],
                    records: Callable[[], list[StepRecord]]) -> tuple[Summary, str | None]:
    """summary.json as a reader may present it: as written when its records prove it (PROVEN) or it
    is what its steps give; otherwise the results recomputed from the steps, with the note saying
    why. ``records``: a callable giving steps.jsonl's records (read only when needed). A summary
    that does not match its steps is presented as the run's results only when ssdpts's own records
    prove it was written so (an analysis other than this one's), or when the run was made before
    summaries were recorded (read as it always was): 'ssdpts verify' notes the difference."""
    from .. import seal

    if manifest.kind is not None:
        return Summary.from_dict(summary), None
    state = summary_state(run_dir, manifest, seal.configured_key())
    if state in (PROVEN, OLDER):  # an older run reads as it always did: 'ssdpts verify' notes its differences
        return Summary.from_dict(summary), None
    try:
        diffs, again = summary_differences(manifest, summary, records())
    except (KeyError, TypeError, ValueError, AttributeError):
        return Summary.from_dict(summary), None  # cannot be planned again ('ssdpts verify' names why)
    if not diffs:
        return Summary.from_dict(summary), None
    return Summary.from_dict(again), f"{summary_why(state)} ({diffs[0].text('its steps')}" + (
        f", and {len(diffs) - 1} more" if len(diffs) > 1 else "") + \
        "): the results shown are what its steps give ('ssdpts verify' says more)"


def summary_why(state: str) -> str:
    """Why summary.json is not presented as written, in a reader's note."""
    return {ALTERED: "summary.json was altered after ssdpts wrote it",
            UNRECORDED: "summary.json's checksum record was removed from manifest.json",
            UNCOVERED: "summary.json's checksum record in manifest.json was edited after ssdpts wrote it"}[state]
