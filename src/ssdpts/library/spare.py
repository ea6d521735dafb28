"""The over-provisioning of a drive from an earlier run in the results library: what
``--precondition sprandom`` without an OP takes (docs/methodology.md#preconditioning-by-sprandom).

The drive model a WSAT run fits gives the drive's effective spare (summary.json's
``parts.wsat.model.effective_spare``, results/reader.drive_spare); the newest WSAT run of the drive
with that serial number that has one gives the OP.
"""

from __future__ import annotations

from pathlib import Path

from ssdpts.results.reader import drive_spare
from .db import ResultsDB, default_path


def earlier_spare(serial: str, db_path: str | Path | None = None) -> tuple[float, str] | None:
    """(OP, where it came from) for the drive with ``serial``: the effective spare of the drive
    model of its newest complete WSAT run in the library that has one, within (0, 1); None when
    there is no library, no such run, or no model."""
    path = Path(db_path) if db_path is not None else default_path()
    if not serial or not path.exists():
        return None
    with ResultsDB(path, create=False) as db:
        # the serial filter matches a part of it: the drive's own, and complete runs only (a damaged one fails verify)
        rows = [r for r in db.list_runs(serial=serial, test="wsat")
                if r.get("device_serial") == serial and r.get("status") == "complete"]
    for row in sorted(rows, key=lambda r: (r.get("created") or "", r.get("run_uid") or ""), reverse=True):
        op = drive_spare(row["path"])
        if op is not None and 0 < op < 1:
            return op, f"the drive model of WSAT run {row.get('run_name') or row['path']} ({row.get('created') or '?'})"
    return None
