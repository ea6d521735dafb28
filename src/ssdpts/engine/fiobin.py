"""Which fio ssdpts runs, and what that fio can do (docs/methodology.md#fio).

The choice, the first that applies: ``--fio PATH``; the fio ``make fio`` built for ssdpts
(build/fio/bin/fio in the source tree ssdpts runs from: scripts/build-fio.sh); the fio on PATH (the
system's). Every run records which one ran (the manifest's ``fio_binary`` and ``fio_version``).

What a fio can do is asked of it, not inferred from its version: ``fio --cmdhelp=OPTION`` prints
the option's own help line when fio has the option; one it lacks it answers with "No such command"
(or the closest option it has) and exit status 0, so only the option's own line counts.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import re
import shutil
import subprocess

from ..errors import UserError

# src/ssdpts/engine/fiobin.py -> the source tree's root
BUILT = Path(__file__).resolve().parents[3] / "build" / "fio" / "bin" / "fio"
SPRANDOM_VERSION = "3.41"  # the first fio with sprandom
SOURCES = {"--fio": "given by --fio", "built": "built by make fio", "system": "the system's, on PATH"}
# (name, the fio option that proves it, what it is for)
FEATURES = (
    ("sprandom", "sprandom", f"--precondition sprandom (fio {SPRANDOM_VERSION})"),
    ("spr_cs", "spr_cs", "sprandom's drive cache size (after fio 3.41; not used yet)"),
    ("job_start", "job_start_clock_id", "each job's start time in its JSON output (fio 3.36)"),
)


@dataclass(frozen=True)
class Fio:
    """The fio a run uses: its absolute ``path`` and why it is this one (``source``: a key of SOURCES)."""

    path: str
    source: str

    def to_dict(self) -> dict:
        return {"path": self.path, "source": self.source}


def _runnable(path: str | os.PathLike) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def choose(explicit: str | None = None) -> Fio:
    """``--fio PATH`` (``explicit``), else the built fio, else the system's; a missing one refused in one line."""
    if explicit:
        found = explicit if os.sep in explicit else shutil.which(explicit)
        if not found or not _runnable(found):
            raise UserError(f"--fio {explicit}: not an executable file: give the path of a fio binary ('make fio' "
                            f"builds one in {BUILT.relative_to(BUILT.parents[2])})")
        return Fio(os.path.abspath(found), "--fio")
    if _runnable(BUILT):
        return Fio(str(BUILT), "built")
    path = shutil.which("fio")
    if not path:
        raise UserError("fio is not installed: install it (Debian/Ubuntu: apt-get install fio) or build one with "
                        "'make fio', and run again")
    return Fio(path, "system")


def version(path: str) -> str:
    """``fio --version``'s line (fio-3.41), or a UserError when fio cannot be run."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"cannot run {path} --version ({exc}): check the fio installation") from None
    return out.stdout.strip() or "unknown"


def knows(path: str, option: str) -> bool:
    """Whether the fio at ``path`` has the job option ``option`` (its own line in ``--cmdhelp``)."""
    try:
        out = subprocess.run([path, f"--cmdhelp={option}"], capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return re.search(rf"^\s*{re.escape(option)}\s*:", out.stdout, re.M) is not None


def features(path: str) -> dict[str, bool]:
    """Each of FEATURES: whether the fio at ``path`` has it."""
    return {name: knows(path, option) for name, option, _ in FEATURES}


def version_at_least(text: str, wanted: str) -> bool | None:
    """Whether a version line (fio-3.41, fio-3.41-12-gabc) is ``wanted`` or later; None when it names none."""
    m = re.search(r"(\d+)\.(\d+)", text or "")
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2))) >= tuple(int(x) for x in wanted.split("."))


def sprandom_refusal(where: str, version_text: str) -> str:
    """The one line that refuses --precondition sprandom with a fio too old (``where``: which fio)."""
    return (f"--precondition sprandom needs fio {SPRANDOM_VERSION} or later, but {where} is {version_text}: build one "
            "with 'make fio' (ssdpts then runs it), or give --fio PATH of one (docs/methodology.md#fio)")


def require_sprandom(fio: Fio) -> None:
    """Refuse, in one line, a fio without sprandom."""
    if not knows(fio.path, "sprandom"):
        raise UserError(sprandom_refusal(fio.path, version(fio.path)))
