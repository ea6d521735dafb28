"""The kinds of run directory and, for each, the modules that read, file, compare and document it:
the one place that tells kinds apart (docs/architecture.md "Run kinds").

A run directory's manifest names its kind ("quick", "replay"; a PTS run's manifest has none). Every
kind runs through the same core (run/session.py's claim, checks and records, engine/ executors,
store.py), so what differs is what it measured and how that is shown:

- ``workload()``: the kind's module under workloads/ (quick, replay): ``load``, ``db_rows`` (its
  rows in the results library), ``compare`` and ``comparison_text``. A PTS run's are pts/, results/
  and compare.py, reached by the callers directly (``Kind.pts``).
- ``document()``: the renderer of its document and of its comparison (report/).

The kinds of test within a PTS run (WSAT, IOPS, ..., the OCP checks) are another registry:
pts/registry.py's modules with their report side in report/pages/ (docs/architecture.md "A test kind").

Commands call :func:`of` and use what it gives; a new kind (the datacenter checks) is one entry here,
a module in workloads/ and one in report/. Renderers and workloads are imported when used, so that
importing this module costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

from .errors import UserError
from .store import run_kind

PTS = "pts"


def _quick() -> ModuleType:
    from .workloads import quick

    return quick


def _quick_doc() -> ModuleType:
    from .report import quick_html

    return quick_html


def _replay() -> ModuleType:
    from .workloads import replay

    return replay


def _replay_doc() -> ModuleType:
    from .report import replay_html

    return replay_html


def _pts_doc() -> ModuleType:
    from . import report

    return report


@dataclass(frozen=True)
class Kind:
    name: str  # the manifest's "kind"; "pts" for a manifest without one
    command: str  # what makes such a run
    what: str  # how messages name several of them
    workload: Callable[[], ModuleType] | None  # None: a PTS run
    document: Callable[[], ModuleType]
    # why 'ssdpts resume' does not continue such a run, and what to do instead; None: it resumes
    not_resumed: str | None = None

    def resume_hint(self, run_dir: Path | str) -> str:
        """What to do with an interrupted or failed run of this kind."""
        return f"finish it with 'ssdpts resume {run_dir}'" if self.not_resumed is None else self.not_resumed

    @property
    def pts(self) -> bool:
        return self.workload is None

    def render(self, run_dir: Path | str, formats, out=None, targets=None) -> list[Path]:
        """The run's document (report.html / .pdf); ``targets``: the datasheet targets of a PTS
        report (other kinds have no datasheet)."""
        if self.pts:
            return self.document().render(Path(run_dir), formats, out, targets=targets)
        return self.document().render(Path(run_dir), formats, out)

    def render_partial(self, run_dir: Path) -> None:
        """report.html of what an interrupted or failed run measured (run/session.outcome_recorded)."""
        self.render(run_dir, ("html",))

    def progress(self, run_dir: Path | str) -> dict | None:
        """Where a running run of this kind is (its workload's ``progress``); None for a PTS run,
        whose plan status.py reads itself."""
        return None if self.workload is None else self.workload().progress(run_dir)

    def db_rows(self, run_dir: Path | str, run_uid: str) -> list[dict]:
        assert self.workload is not None, "a PTS run's rows are its tables' cells (library/db.py)"
        return self.workload().db_rows(run_dir, run_uid)

    def compare(self, run_dirs: list, baseline) -> tuple[dict, str]:
        """(comparison document, its text) of runs of this kind against the baseline."""
        assert self.workload is not None, "PTS runs compare through compare.py"
        w = self.workload()
        cmp = w.compare(run_dirs, baseline)
        return cmp, w.comparison_text(cmp)

    def render_comparison(self, cmp: dict, formats, out=None) -> list[Path]:
        return self.document().render_comparison(cmp, formats=formats, out=out)


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(PTS, "ssdpts run", "PTS runs", None, _pts_doc),
    Kind("quick", "ssdpts quick", "quick runs", _quick, _quick_doc,
         not_resumed="a quick table is not resumed (minutes long, every run it measured is kept in quick.json): "
                     "start a new 'ssdpts quick'"),
    Kind("replay", "ssdpts trace replay", "trace replays", _replay, _replay_doc,
         not_resumed="a trace replay is not resumed (every replay it measured is kept in replay.json): start a new "
                     "'ssdpts trace replay'"),
)}


def of(run_dir: Path | str) -> Kind:
    """The kind of a run directory (a directory without a manifest reads as a PTS run: its reader
    says what is missing); a kind this ssdpts does not know is refused in one line."""
    name = run_kind(run_dir) or PTS
    try:
        return KINDS[name]
    except KeyError:
        raise UserError(f"{run_dir} is a run of kind {name!r}, which this ssdpts does not know: read it with the "
                        "ssdpts that made it, or a newer one") from None


def one_kind(run_dirs: list) -> Kind:
    """The kind shared by run directories to be compared; runs of different kinds are refused."""
    ks = [of(d) for d in run_dirs]
    first = next((k for k in ks if not k.pts), ks[0])  # mixed with PTS runs: named after the other kind
    for d, k in zip(run_dirs, ks):
        if k is not first:
            raise UserError(f"{first.what} ({first.command}) compare with {first.what} only, but {d} is one of the "
                            f"{k.what} ({k.command}): give run directories made by the same command")
    return first
