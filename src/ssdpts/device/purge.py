"""Purge: return the target to a known state before each test (PTS 2.0.2 §3.2 "Purge").

The PTS requires a device-level purge (ATA Security Erase / Sanitize, SCSI Format Unit / Sanitize,
NVMe Format / Sanitize). Those capability-aware methods plug into the registry below later; what
exists now are fallbacks whose records say plainly that they are not a PTS purge, so the report
header discloses it.

Contract: ``PurgeMethod.run`` destroys data. Call it only after
``safety.check_writable(target, ...)`` passed for this target (the runner does). As a second line
of defence each destructive method re-runs the read-only ``safety.assess`` and refuses if the
target became unusable (mounted since, etc.), but that does not replace the confirmation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from ssdpts.device import safety
from ssdpts.device import target as tgt
from ssdpts.device.target import Target
from ssdpts.errors import RunFailed, UserError

Log = Callable[[str], None]


def _quiet(_line: str) -> None:
    pass


@dataclass(frozen=True, slots=True)
class PurgeRecord:
    """What was done, for the manifest and the report header."""

    method: str
    disclosure: str
    started_at: str  # ISO 8601, UTC
    duration_s: float
    is_pts_purge: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class PurgeMethod(Protocol):
    name: str
    disclosure: str  # one line for the report header

    def applies(self, target: Target) -> bool: ...

    def run(self, target: Target, log: Log = ...) -> PurgeRecord: ...


# --- helpers --------------------------------------------------------------------------------------


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _recheck(target: Target) -> None:
    """Belt and braces: refuse if the target became unusable since check_writable."""
    verdict = safety.assess(target)
    if not verdict.usable:
        raise UserError(verdict.reasons[0])


def _run_tool(argv: list[str], what: str, hint: str) -> str:
    if shutil.which(argv[0]) is None:
        raise RunFailed(f"{argv[0]} is not installed: install util-linux, or {hint}")
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise RunFailed(f"{what} failed: {last}: {hint}")
    return proc.stdout.strip()


def _queue_int(target: Target, attr: str) -> int:
    disk = target.parent or target.name  # partitions have no queue/ of their own
    text = tgt.read_sysfs(os.path.join(tgt.sysfs_block_dir(disk), "queue", attr))
    try:
        return int(text) if text else 0
    except ValueError:
        return 0


def supports_discard(target: Target) -> bool:
    """The kernel's view: discard_max_bytes is 0 when the device cannot discard."""
    return target.kind == "block" and _queue_int(target, "discard_max_bytes") > 0


def _blkdiscard_force() -> list[str]:
    # util-linux >= 2.36 blkdiscard refuses devices with signatures unless --force; the guard has
    # already decided (and confirmed) that this device may be destroyed.
    try:
        helptext = subprocess.run(["blkdiscard", "--help"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return []
    return ["--force"] if "--force" in helptext else []


# --- methods --------------------------------------------------------------------------------------


class DiscardPurge:
    """Discard (TRIM/UNMAP/Deallocate) every LBA with blkdiscard."""

    name = "discard"
    disclosure = "discard (fallback, not a PTS purge)"

    def applies(self, target: Target) -> bool:
        return target.kind == "block"

    def run(self, target: Target, log: Log = _quiet) -> PurgeRecord:
        _recheck(target)
        started, t0 = _now_iso(), time.monotonic()
        log(f"purge: discarding all of {target.path}")
        _run_tool(
            ["blkdiscard", *_blkdiscard_force(), target.real_path],
            f"blkdiscard {target.path}",
            "use --purge=zero-fill, or --purge=none (not PTS compliant)",
        )
        return PurgeRecord(self.name, self.disclosure, started, time.monotonic() - t0, False,
                           f"blkdiscard of all {target.size_bytes} bytes of {target.path}")


class ZeroFillPurge:
    """Write zeros over the whole device: BLKZEROOUT (blkdiscard -z), else dd with O_DIRECT."""

    name = "zero-fill"
    disclosure = "zero-fill (fallback, not a PTS purge)"

    def applies(self, target: Target) -> bool:
        return target.kind == "block"

    def run(self, target: Target, log: Log = _quiet) -> PurgeRecord:
        _recheck(target)
        started, t0 = _now_iso(), time.monotonic()
        log(f"purge: writing zeros over all of {target.path}")
        hint = "use --purge=none (not PTS compliant) or check the device"
        try:
            _run_tool(["blkdiscard", *_blkdiscard_force(), "-z", target.real_path],
                      f"blkdiscard -z {target.path}", hint)
            how = "BLKZEROOUT (blkdiscard -z)"
        except RunFailed as exc:
            log(f"purge: {exc}; falling back to dd")
            # count_bytes makes count a byte count, so the last partial block is written too and
            # dd stops at the end instead of failing with ENOSPC.
            _run_tool(
                ["dd", "if=/dev/zero", f"of={target.real_path}", "bs=4M", f"count={target.size_bytes}",
                 "iflag=count_bytes", "oflag=direct", "conv=fsync", "status=none"],
                f"dd zero-fill of {target.path}", hint,
            )
            how = "dd oflag=direct"
        return PurgeRecord(self.name, self.disclosure, started, time.monotonic() - t0, False,
                           f"zeros written over all {target.size_bytes} bytes of {target.path} by {how}")


class FileRecreatePurge:
    """Delete the file and create it again, sparse, at its size: no old data is left to read."""

    name = "file-recreate"
    disclosure = "file-recreate (file target: removed and recreated sparse)"

    def applies(self, target: Target) -> bool:
        return target.kind == "file"

    def run(self, target: Target, log: Log = _quiet) -> PurgeRecord:
        _recheck(target)
        path = target.real_path
        # Checked here too, not only in assess: the file may have appeared since the target was
        # opened (exists=False then), and deleting someone's file is exactly what we promise not to do.
        if os.path.exists(path) and not safety.is_ssdpts_file(path):
            raise UserError(f"{target.path} was not created by ssdpts: delete it yourself or give a new file path")
        started, t0 = _now_iso(), time.monotonic()
        log(f"purge: recreating {target.path} ({target.size_bytes} bytes, sparse)")
        # Marker first: a crash between the two steps leaves a marked missing file (harmless),
        # never an unmarked file that ssdpts would then refuse to touch.
        safety.mark_created(path)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.ftruncate(fd, target.size_bytes)
            os.fsync(fd)
        finally:
            os.close(fd)
        return PurgeRecord(self.name, self.disclosure, started, time.monotonic() - t0, False,
                           f"{target.path} recreated sparse at {target.size_bytes} bytes")


class NoPurge:
    name = "none"
    disclosure = "none (user chose no purge: not PTS compliant)"

    def applies(self, target: Target) -> bool:
        return True

    def run(self, target: Target, log: Log = _quiet) -> PurgeRecord:
        log("purge: skipped (--purge=none): results are not PTS compliant")
        return PurgeRecord(self.name, self.disclosure, _now_iso(), 0.0, False, "no purge performed")


# --- registry -------------------------------------------------------------------------------------

_REGISTRY: dict[str, PurgeMethod] = {}


def register(method: PurgeMethod) -> None:
    """Add a purge method (the NVMe/ATA/SAS ones plug in here)."""
    _REGISTRY[method.name] = method


def method_names() -> list[str]:
    return ["auto", *_REGISTRY]


for _method in (DiscardPurge(), ZeroFillPurge(), FileRecreatePurge(), NoPurge()):
    register(_method)


def select_purge(target: Target, requested: str) -> PurgeMethod:
    """Pick the purge for ``target``: "auto", "none" or a registered method name.

    auto: files are recreated; block devices are discarded, or zero-filled when the kernel says the
    device cannot discard (discard_max_bytes == 0).
    """
    if requested == "auto":
        if target.kind == "file":
            return _REGISTRY["file-recreate"]
        return _REGISTRY["discard" if supports_discard(target) else "zero-fill"]
    method = _REGISTRY.get(requested)
    if method is None:
        raise UserError(f"unknown purge method {requested!r}: use one of {', '.join(method_names())}")
    if not method.applies(target):
        usable = [n for n in method_names() if n == "auto" or _REGISTRY[n].applies(target)]
        raise UserError(
            f"purge method {requested} does not apply to {target.kind} target {target.path}: "
            f"use one of {', '.join(usable)}"
        )
    return method
