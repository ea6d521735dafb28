"""What a run is asked to do, as one typed record: the command line (cli/) builds it once from its
options and everything below the command line reads it, never the options themselves.

A ``RunRequest`` says which targets (each a ``Placement``: its path on its host, the fio server
that runs its fio, the shell that runs its device checks there; docs/hosts.md), what to run on them
(the ``RunSpec``), where the run directories go, what was confirmed and how the run is watched. A
``ResumeRequest`` says the same of ``ssdpts resume``. What a resume needs of a run directory before
it starts (where it ran, whether it is finished) comes from :func:`recorded`, the one reading of a
manifest for it here.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Callable

from ssdpts.errors import UserError
from ssdpts.pts.runspec import RunSpec


@dataclass(frozen=True)
class Placement:
    """Where one target is. ``given``: as named on the command line (``NAME:PATH`` or ``PATH``);
    ``path``: the path on its host; ``server``: the fio server that runs its fio (None: fio on
    this host); ``host``: the ``--host NAME`` of that server; ``shell``: the command that runs the
    device's agent on its host (``--remote-shell``; None: its checks, purge and telemetry run
    here)."""

    given: str
    path: str
    server: str | None = None
    host: str | None = None
    shell: tuple[str, ...] | None = None

    @property
    def remote(self) -> bool:
        return self.shell is not None


@dataclass(frozen=True)
class RunRequest:
    """One ``ssdpts run`` or ``ssdpts plan``: every choice the command line made, typed.
    ``confirmations``: the ``--destroy-data-on`` values as given (each names one target);
    ``size_bytes``: a file target's size to create; ``argv``: the command line the manifest
    records; ``events_fd``: the pipe a supervising parallel run reads this run's progress from;
    ``cpus_per_device``: CPUs of its own for each device's fio, else ``cpus``: --cpus as given,
    for every device (docs/parallel.md); ``fio``: --fio PATH, the fio to run (None: the one make
    fio built, else the system's: engine/fiobin.py); ``spare_of``: a drive's over-provisioning by
    its serial number from an earlier WSAT's drive model, (OP, where from) or None, for
    ``--precondition sprandom`` without an OP (the command line gives the results library's)."""

    spec: RunSpec
    targets: tuple[Placement, ...]
    out_dir: Path
    confirmations: tuple[str, ...] = ()
    size_bytes: int | None = None
    describe: str | None = None
    interactive: bool = False
    quiet: bool = False
    argv: tuple[str, ...] = ()
    events_fd: int | None = None
    cpus_per_device: int | None = None
    cpus: str = ""
    fio: str | None = None
    spare_of: Callable[[str], tuple[float, str] | None] | None = None

    @property
    def confirm(self) -> str | None:
        """The one confirmation of a run on one target (the command line refuses several)."""
        return self.confirmations[0] if self.confirmations else None


@dataclass(frozen=True)
class ResumeRequest:
    """One ``ssdpts resume``: the unfinished run directories, the confirmations given again,
    whether the steady-state window may span the resume (``keep_window``), --fio PATH (``fio``)."""

    run_dirs: tuple[Path, ...]
    confirmations: tuple[str, ...] = ()
    keep_window: bool = False
    interactive: bool = False
    quiet: bool = False
    events_fd: int | None = None
    fio: str | None = None

    @property
    def confirm(self) -> str | None:
        return self.confirmations[0] if self.confirmations else None


def check_path(label: str, path: str, *, fio: bool = True, resolved: str | None = None) -> None:
    """Refuse, in one line (exit 2, before anything is written), a path that fio's job file cannot
    hold as it is named (engine/jobfile.py path_problem: control characters, ';', '#', '${...}',
    fio's $keywords, blanks at the ends); with ``fio`` False, one holding a control character (a
    path that never reaches fio). ``resolved``: the path as fio would be given it (absolute,
    symbolic links followed), checked too."""
    from ssdpts.engine.jobfile import control_problem, path_problem

    for p in dict.fromkeys([path] + ([resolved] if resolved else [])):
        why = (path_problem if fio else control_problem)(p)
        if why is not None:
            that = "" if p == path else f" (that is {_shown(p)})"
            raise UserError(f"{label} {_shown(path)}{that}: {why}")


def _shown(path: str) -> str:
    """A path as a one-line message shows it: quoted and escaped when it has control characters or
    blanks at its ends, which the line would hide."""
    return path if path.isprintable() and path == path.strip() else ascii(path)


@dataclass(frozen=True)
class Recorded:
    """What ``resume`` needs of a run directory before it starts: its status, the fio server it ran
    through (``fio_server``), the host its device is on when that is not this one (``device_host``:
    its record, device/remote/remote.py side_for), the target's path there. None where the manifest does not say (or cannot be read: the resume
    of it says what is wrong)."""

    status: str | None = None
    fio_server: str | None = None
    device_host: dict | None = None
    target_path: str | None = None
    precondition: str | None = None  # the run spec's (sprandom needs a fio that has it)


def is_run_dir(path: Path) -> bool:
    from ssdpts.store import MANIFEST

    return (Path(path) / MANIFEST).exists()


def recorded(run_dir: Path) -> Recorded:
    """The run directory's :class:`Recorded` facts; an unreadable manifest gives an empty one."""
    from ssdpts.store import MANIFEST

    try:
        man = json.loads((Path(run_dir) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Recorded()
    if not isinstance(man, dict):
        return Recorded()
    target = man.get("target")
    path = target.get("path") if isinstance(target, dict) else None

    def text(v) -> str | None:
        return v if isinstance(v, str) else None
    spec = man.get("run_spec")
    return Recorded(status=text(man.get("status")), fio_server=text(man.get("fio_server")),
                    device_host=man.get("device_host") or None, target_path=text(path),
                    precondition=text(spec.get("precondition")) if isinstance(spec, dict) else None)


def unfinished_runs(paths: list[str]) -> list[Path]:
    """RUN_DIR arguments of resume: run directories, or directories holding run directories (the
    --out of a parallel run): of those, every run that is not complete."""
    out: list[Path] = []
    for p in map(Path, paths):
        runs = [d for d in sorted(p.iterdir()) if is_run_dir(d)] if p.is_dir() else []
        if is_run_dir(p) or not runs:
            out.append(p)  # a run directory, or not one at all: resume says what is wrong with it
            continue
        found = [d for d in runs if recorded(d).status != "complete"]
        if not found:
            raise UserError(f"{p} holds no unfinished run directory: nothing to resume")
        out += found
    return list(dict.fromkeys(out))
