"""Checks that can refuse a run, done before the first byte is written to the device.

The results disk: ``--out`` must name a directory that exists or can be created, is writable and
on a writable filesystem, with room for at least the first round (the runner stops cleanly before
any later round that no longer fits, see store.ensure_space). The whole run's raw output is
estimated too, from the number of steps the run may take at most: when it does not fit, the run
still starts (most runs stop at steady state long before the maximum), with a warning saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ssdpts.errors import UserError

# Raw output per step: fio's json+ (with the latency histogram), its line in steps.jsonl (with the
# histogram again) and the job file section. Measured 12.5 KB per step on a loop device (LAT,
# fio 3.33: 75 KB of json+ and 32 KB of steps.jsonl for 9 steps); a drive with a wider latency
# distribution has more histogram bins, hence the margin.
RAW_BYTES_PER_STEP = 32 * 1024
# What the runner requires free before any round (runner.MIN_ROUND_SPACE_BYTES) plus the manifest,
# the device files and the report.
FIRST_ROUND_BYTES = 8 * 1024 * 1024 + 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ResultsSpace:
    directory: str
    free_bytes: int
    first_round_bytes: int
    run_max_bytes: int  # estimate, at the maximum number of rounds

    @property
    def warning(self) -> str | None:
        if self.free_bytes >= self.run_max_bytes:
            return None
        return (f"the results disk has {self.free_bytes / 1e6:,.0f} MB free; a run that needs every allowed round "
                f"writes about {self.run_max_bytes / 1e6:,.0f} MB of raw output: if it fills up, the run stops "
                "cleanly and 'ssdpts resume' continues it once there is space")

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "free_bytes": self.free_bytes,
                "first_round_bytes": self.first_round_bytes, "run_max_bytes_estimate": self.run_max_bytes}


def max_steps(parts: Iterable[Any]) -> int:
    """Steps the parts take at most (every round up to max_rounds; WSAT to its time limit)."""
    n = 0
    for p in parts:
        n += 1 if p.wipc is not None else 0
        n += p.wsat_max_steps if p.stop_rule == "wsat" else len(p.round_steps(1)) * p.max_rounds
    return n


def results_space(out_dir: str | os.PathLike[str], parts: Iterable[Any]) -> ResultsSpace:
    """Refuse (UserError) when ``out_dir`` cannot take a run directory with its first round."""
    text = os.fspath(out_dir)
    if not text.strip():
        raise UserError("--out is empty: give the directory where run directories go (default: ./ssdpts-runs)")
    path = Path(text)
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise UserError(f"--out {text}: {existing} is not a directory: give a directory")
    try:
        vfs = os.statvfs(existing)
    except OSError as exc:
        raise UserError(f"cannot inspect the results directory {existing} ({exc.strerror}): pick another --out") from None
    if vfs.f_flag & os.ST_RDONLY:
        raise UserError(f"the results directory {existing} is on a read-only filesystem: pick another --out")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"cannot write to the results directory {existing}: pick another --out")
    free = vfs.f_bavail * vfs.f_frsize
    parts = list(parts)
    space = ResultsSpace(directory=str(existing), free_bytes=free, first_round_bytes=FIRST_ROUND_BYTES,
                         run_max_bytes=FIRST_ROUND_BYTES + max_steps(parts) * RAW_BYTES_PER_STEP)
    if free < space.first_round_bytes:
        raise UserError(f"the results disk under {existing} has {free / 1e6:.1f} MB free, less than the "
                        f"{space.first_round_bytes / 1e6:.0f} MB the first round needs: free space there or pick "
                        "another --out (nothing was written to the target)")
    return space
