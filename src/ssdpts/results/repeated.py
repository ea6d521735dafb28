"""Typed records of the runs that repeat a measurement and report each figure's median (ssdpts quick,
ssdpts trace replay): what their comparison, the results library and their documents read, instead
of the raw JSON. The files themselves (quick.json, replay.json) are written by the workloads, as
docs/results-format.md describes; every figure's statistics follow stats.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..pts.workload import Workload
from ..store import load_kind
from .records import Manifest
from .registry import SPEED


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of a repeated run: every run's value, the median run's value, RSE and verdict
    (True reliable, False unreliable, None not judged: its runs are not all in)."""

    key: str
    label: str
    unit: str
    values: tuple[float, ...]
    median: float | None
    median_run: int | None  # 1-based
    rse: float | None
    reliable: bool | None
    group: str = ""
    kind: str = SPEED  # the performance delta (docs/design.md#repeated-runs): "speed" (A/B - 1) or "time" (B/A - 1)
    workload: Workload | None = None  # quick: what each run ran; replay: the trace (None)
    files: tuple[str, ...] = ()  # each run's fio json+, relative to the run directory
    cold_files: tuple[str, ...] = ()
    # quick: each run's rate check (results/timing.py: "fio", "device" — its value over the block
    # layer's span — or "unchecked"); () where not recorded
    rate_checks: tuple[dict, ...] = ()

    @property
    def n(self) -> int:
        return len(self.values)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str) -> "Figure":
        try:
            return cls(str(d["key"]), str(d["label"]), str(d["unit"]), tuple(float(v) for v in d["values"]),
                       None if d.get("median") is None else float(d["median"]), d.get("median_run"),
                       None if d.get("rse") is None else float(d["rse"]), d.get("reliable"), str(d.get("group") or ""),
                       str(d.get("kind") or SPEED), Workload.from_dict(d["workload"]) if d.get("workload") else None,
                       tuple(d.get("files") or ()), tuple(d.get("cold_files") or ()),
                       tuple(c for c in d.get("rate_checks") or () if isinstance(c, dict)))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{where}: a figure is not in the form ssdpts writes ({exc.__class__.__name__}: {exc}): "
                            "was the file edited? 'ssdpts verify' checks the run directory") from None


@dataclass(frozen=True)
class RepeatedRun:
    """A quick or replay run directory, read: its manifest, its settings (the kind's spec), its
    figures in the order measured, and the results document for what only its kind has (a replay's
    trace and per-run response times, a quick run's preconditioning)."""

    path: Path
    kind: str
    manifest: Manifest
    spec: Mapping[str, Any]  # the kind's own settings (quick.json, replay.json "spec"): free-form, compared key by key
    figures: tuple[Figure, ...]
    doc: Mapping[str, Any] = field(repr=False)  # the kind's own results document: what only its kind has, read by it

    def figure(self, key: str) -> Figure | None:
        return next((f for f in self.figures if f.key == key), None)


def read_repeated(run_dir: Path | str, kind: str, results: str, command: str) -> RepeatedRun:
    """A run directory of ``kind`` (its manifest says so) with its results file ``results``; a
    UserError in one line when it is not one or its figures are not in ssdpts's form."""
    man, doc = load_kind(run_dir, kind, results, command)
    where = str(Path(run_dir) / results)
    figures = doc.get("figures")
    if not isinstance(figures, list) or not isinstance(doc.get("spec"), Mapping):
        raise UserError(f"{where} has no figures or settings: was the file edited? 'ssdpts verify' checks the run "
                        "directory")
    return RepeatedRun(Path(run_dir), kind, man, doc["spec"], tuple(Figure.from_dict(f, where) for f in figures), doc)
