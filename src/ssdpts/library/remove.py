"""Take runs out of the results library (``ssdpts db remove``), and their run directories only when
asked (docs/results-db.md "Removing runs").

A run is named by its id, its directory's name or its directory's path, as ``db list`` shows them.
All or nothing: every name is found first, so one unknown name removes nothing. The run's digests
stay (the library recorded what the run held when it first added it): a copy edited since and added
again is still marked damaged. Its directory goes only with ``delete_dirs``, and only a directory
that is the run the library held (its manifest names the same run id); it is never the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import shutil

from ssdpts.errors import UserError
from ssdpts.library.db import ResultsDB
from ssdpts.store import MANIFEST


@dataclass(frozen=True)
class Removed:
    uid: str
    name: str
    path: Path
    deleted: bool  # its run directory deleted too


def _find(db: ResultsDB, ref: str) -> list[tuple[str, str, str]]:
    rows = db.con.execute("SELECT run_uid, run_name, path FROM runs WHERE run_uid = ? OR run_name = ? OR path = ?",
                          (ref, ref, str(Path(ref).resolve()) if ref else ref)).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def _owned_run_dir(path: Path, uid: str) -> str | None:
    """Why ``path`` may not be deleted as the run ``uid``'s directory; None when it may (or is gone)."""
    from ssdpts.results.reader import read_run

    if not path.exists():
        return None
    if not (path / MANIFEST).is_file():
        return f"{path} has no {MANIFEST}: it is not an ssdpts run directory"
    try:
        held = read_run(path).uid
    except (OSError, ValueError, UserError) as exc:
        return f"{path} cannot be read as a run ({exc})"
    return None if held == uid else f"{path} now holds another run ({held}) than {uid}"


def remove(db: ResultsDB, refs: list[str], *, delete_dirs: bool = False) -> list[Removed]:
    """Remove the runs ``refs`` name from the library; with ``delete_dirs`` their run directories too."""
    found: dict[str, tuple[str, str, str]] = {}
    for ref in refs:
        rows = _find(db, ref)
        if not rows:
            raise UserError(f"no run {ref!r} in {db.path}: name a run by its id, directory name or path, as "
                            "'ssdpts db list' shows them; nothing was removed")
        if len(rows) > 1:
            raise UserError(f"{ref!r} names {len(rows)} runs in {db.path} ({', '.join(r[0] for r in rows)}): name "
                            "each by its run id; nothing was removed")
        found[rows[0][0]] = rows[0]
    if delete_dirs:
        for uid, _name, path in found.values():
            why = _owned_run_dir(Path(path), uid)
            if why is not None:
                raise UserError(f"{why}: not deleting it; run without --delete-run-dirs to take the run out of "
                                "the library only; nothing was removed")
    with db.con:
        for uid in found:
            db.con.execute("DELETE FROM runs WHERE run_uid = ?", (uid,))  # cascades to parts, measurements
    out = []
    for uid, name, path in found.values():
        p = Path(path)
        gone = delete_dirs and p.is_dir()
        if gone:
            shutil.rmtree(p)
        out.append(Removed(uid, name, p, gone))
    return out
