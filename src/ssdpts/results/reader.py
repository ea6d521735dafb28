"""The one reader of a run directory: manifest.json, summary.json and steps.jsonl into typed records.

Reports, comparisons, the results library and the CLI read runs only through :func:`read_run`.
Older formats are upgraded and newer ones refused (formats.py). A run that stopped before writing
summary.json has its results rebuilt from steps.jsonl, planned for the target it ran on (its
recorded capacity and logical block size: a 4Kn drive never ran the 0.5KiB steps).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
import hashlib
import json
import os
from pathlib import Path

from ..errors import UserError
from ..pts.registry import TESTS
from ..store import MANIFEST, SUMMARY, RunStore
from .verify.proof import trusted_summary
from .records import Manifest, PartResult, Summary
from .steprecord import StepRecord, read_steps

PARTIAL_STATUSES = ("interrupted", "failed", "running")
MISSING_SUMMARY_NOTE = ("summary.json is missing (the run stopped before writing it): the results were recomputed "
                        "from steps.jsonl")


def run_uid(created: str | None, hostname: str | None, target_path: str | None, name: str, seed: object) -> str:
    """A run's id (``RunResults.uid``) from the fields it is made of: 'ssdpts status' computes it from
    the manifest alone."""
    ident = [created, hostname, target_path, name, seed]
    return hashlib.sha256(json.dumps(ident, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class RunResults:
    """One run directory, read."""

    path: Path
    manifest: Manifest
    summary: Summary
    steps: tuple[StepRecord, ...] | None = None  # None: not read (read_run(steps=True) reads them)
    notes: tuple[str, ...] = ()  # what the reader had to do (e.g. rebuild a missing summary)
    label: str = ""  # short name in comparisons: the device, or "run N" for repeats
    damage: tuple[str, ...] = ()  # 'ssdpts verify' problems (set by the results library)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def status(self) -> str:
        """complete, or the reason the results are partial (interrupted, failed, running); damaged:
        complete, but its files differ from what the run recorded (ssdpts verify)."""
        if self.damage:
            return "damaged"
        ms, ss = self.manifest.status, self.summary.status
        if ms == "complete" and ss in ("complete", None):
            return "complete"
        for s in (ms, ss):
            if s in PARTIAL_STATUSES:
                return s
        return str(ms or ss or "unknown")

    @property
    def created(self) -> str:
        return self.manifest.created or ""

    @property
    def deviations(self) -> tuple[str, ...]:
        return self.summary.deviations or self.manifest.deviations or ()

    @property
    def pts_compliant(self) -> bool:
        return self.summary.pts_compliant

    @property
    def kind(self) -> str | None:
        """The manifest's kind of a run beside the PTS ("quick", "replay"); None for a PTS run."""
        kind = self.manifest.doc.get("kind") if isinstance(self.manifest.doc, dict) else None
        return str(kind) if kind else None

    @property
    def uid(self) -> str:
        """Stable identity of the run, from its own files (the same after a copy or a database rebuild)."""
        t = self.manifest.target
        return run_uid(self.created, self.manifest.host.get("hostname"), (t.real_path or t.path) if t else None,
                       self.name, self.manifest.settings.seed)

    @property
    def device_key(self) -> tuple:
        """Same device = same serial (and model); targets without a serial (loop, zram, files): same path."""
        t = self.manifest.target
        if t is not None and t.serial:
            return ("serial", t.model, t.serial)
        return ("path", (t.real_path or t.path) if t else None)

    @property
    def device_name(self) -> str:
        t = self.manifest.target
        if t is None:
            return "?"
        name = t.model or t.name or Path(str(t.path or "?")).name
        if t.serial:
            name += f" {t.serial[-8:]}"
        return name

    def part_ids(self) -> list[str]:
        """Part ids in run order (WSAT, IOPS, TP, LAT)."""
        parts = self.summary.parts
        ids = [pid for ids in self.summary.tests.values() for pid in ids if pid in parts]
        ids += [pid for pid in parts if pid not in ids]
        order = {t: i for i, t in enumerate(TESTS)}
        return sorted(ids, key=lambda pid: order.get(parts[pid].test, 99))

    def part(self, pid: str) -> PartResult | None:
        return self.summary.parts.get(pid)

    def reached(self, pid: str) -> bool | None:
        p = self.part(pid)
        return None if p is None else p.reached

    def steps_of(self, test: str, part: str) -> list[StepRecord]:
        return [s for s in self.steps or () if s.test == test and s.part == part]


def _check_dir(path: Path) -> None:
    if not path.is_dir():
        raise UserError(f"{path} is not a directory: give a run directory made by 'ssdpts run'")
    if not (path / MANIFEST).exists():
        raise UserError(f"{path} is not an ssdpts run directory: {path / MANIFEST} does not exist; "
                        "give directories made by 'ssdpts run'")


def read_run(path: str | Path, *, steps: bool = False, need_summary: str | None = None,
             records: list[StepRecord] | None = None) -> RunResults:
    """Read a run directory, or refuse in one line saying what is wrong and what to do.

    ``steps``: read steps.jsonl too (reports need the per-round values). ``need_summary``: the
    command that needs summary.json as written (e.g. "compare"); without it a missing summary is
    rebuilt from steps.jsonl and said so in ``notes``. ``records``: steps.jsonl as
    steprecord.read_steps read it, when the caller has it already (a report reads it once)."""
    path = Path(path)
    _check_dir(path)
    store = RunStore(path)
    manifest = store.manifest()
    if records is None and (steps or not (path / SUMMARY).exists()):
        records = read_steps(store)
    notes: tuple[str, ...] = ()
    if (path / SUMMARY).exists():
        summary, note = trusted_summary(path, manifest, store.summary_document(),
                                        lambda: records if records is not None else read_steps(store))
        notes = (note,) if note else ()
    elif need_summary:
        raise UserError(f"{path} has no {SUMMARY} yet (status {manifest.status or 'unknown'}): let the run finish "
                        f"or 'ssdpts resume {path}', then {need_summary}")
    else:
        summary = _rebuilt(manifest, records or [])
        notes = (MISSING_SUMMARY_NOTE,)
    typed_steps = None if not steps else tuple(records or ())
    return RunResults(path, manifest, summary, typed_steps, notes)


def read_run_checked(path: str | Path) -> tuple[RunResults, list[str]]:
    """A run with its steps (:func:`read_run`) and the problems 'ssdpts verify' finds in it (one line
    each), steps.jsonl read once for both: a report needs both, and a long run's file is 10 MB of JSON.
    Steps whose values differ from fio's output are read with fio's values (the problems name them)."""
    from .verify.integrity import check

    path = Path(path)
    _check_dir(path)
    res = check(path, read_steps(RunStore(path)))
    # A step that does not match fio's output is shown as fio's output gives it (the problem names it).
    run = read_run(path, steps=True, records=res.repaired)
    return run, [p.line() for p in res.problems]


def _rebuilt(manifest: Manifest, records: list[StepRecord]) -> Summary:
    """The results of a run that stopped before writing summary.json (summary.recompute_summary)."""
    from .summary import recompute_summary as recompute

    try:
        return recompute(manifest, records)
    except UserError as exc:
        raise UserError(f"cannot rebuild the results: summary.json is missing and {exc}; re-run or restore "
                        "summary.json") from None


def find_run_dirs(dirs: Iterable[str | Path]) -> list[Path]:
    """Every run directory in or under the given directories (a run directory may be given itself).
    The search does not descend into a run directory."""
    out: list[Path] = []
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            raise UserError(f"{d} is not a directory: give directories that hold run directories")
        for root, subdirs, files in os.walk(d):
            if MANIFEST in files:
                out.append(Path(root))
                subdirs[:] = []
            else:
                subdirs.sort()
    return list(dict.fromkeys(out))


def read_runs(paths: Iterable[str | Path], *, need_summary: str) -> list[RunResults]:
    """Several run directories (each once), for a comparison or the results library."""
    runs: list[RunResults] = []
    seen: set[Path] = set()
    for p in paths:
        rp = Path(p).resolve()
        if rp in seen:
            raise UserError(f"{p} is given twice: name each run directory once")
        seen.add(rp)
        runs.append(read_run(p, need_summary=need_summary))
    return runs


def labelled(runs: list[RunResults], *, repeats: bool = False) -> list[RunResults]:
    """Short, unique labels for tables and legends: the device, or 'run N' for repeats of one device."""
    if repeats:
        return [replace(r, label=f"run {i}") for i, r in enumerate(runs, start=1)]
    bases = [r.device_name for r in runs]
    return [replace(r, label=b if bases.count(b) == 1 else f"{b} #{i}")
            for i, (r, b) in enumerate(zip(runs, bases), start=1)]


def drive_spare(path: str | Path) -> float | None:
    """The effective spare of the drive model a run's WSAT fitted (summary.json's
    ``parts.wsat.model.effective_spare``: spare over user capacity, the over-provisioning ratio
    fio's sprandom takes, docs/methodology.md#preconditioning-by-sprandom); None where the run has none."""
    try:
        doc = json.loads((Path(path) / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    node: object = doc
    for key in ("parts", "wsat", "model", "effective_spare"):
        node = node.get(key) if isinstance(node, dict) else None
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None
