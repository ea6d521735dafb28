"""The purges that are not a PTS purge, each disclosed as a deviation (PTS 2.0.2 §3.2, docs/pts-reference.md#purge):
discard (blkdiscard), zero-fill, a file target recreated, or none at all; and :func:`fallback`,
the one every device without a usable device-level purge gets (discard where the kernel can, else
zeros), with the notes saying why no device-level method was used.
"""

from __future__ import annotations

import os
import time

from ssdpts.device import fingerprint, marker
from ssdpts.device import target as tgt
from ssdpts.device.fields import value
from ssdpts.device.purge.base import Log, PurgeMethod, PurgeRecord, now_iso, quiet, recheck
from ssdpts.device.target import Target
from ssdpts.device.tools import Tools
from ssdpts.errors import RunFailed, UserError


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


def _blkdiscard_force(tools: Tools) -> list[str]:
    # util-linux >= 2.36 blkdiscard refuses devices with signatures unless --force; the guard has
    # already decided (and confirmed) that this device may be destroyed.
    res = tools.run(["blkdiscard", "--help"], ok_codes=lambda rc: True)
    return ["--force"] if "--force" in res.stdout else []


class _Fallback:
    """A purge that is not a PTS purge (disclosed as a deviation), or none at all."""

    name = ""
    disclosure = ""
    target_kind = "block"  # the kind of target (block device or file) the method purges

    def __init__(self, notes: tuple[str, ...] | list[str] = (), *, tools: Tools | None = None):
        self.notes = tuple(notes)
        self.tools = tools or Tools(destructive=True)

    def applies(self, target: Target) -> bool:
        return target.kind == self.target_kind

    def _record(self, started: str, t0: float, detail: str) -> PurgeRecord:
        return PurgeRecord(self.name, self.disclosure, started, time.monotonic() - t0, False, detail, self.notes)


# --- fallbacks (no device-level purge) ------------------------------------------------------------


class DiscardPurge(_Fallback):
    """Discard (TRIM/UNMAP/Deallocate) every LBA with blkdiscard."""

    name = "discard"
    disclosure = "discard (fallback, not a PTS purge)"

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        recheck(target)
        started, t0 = now_iso(), time.monotonic()
        log(f"purge: discarding all of {target.path}")
        self.tools.must(["blkdiscard", *_blkdiscard_force(self.tools), target.real_path], f"blkdiscard {target.path}",
                        "use --purge=zero-fill, or --purge=none (not PTS compliant)")
        return self._record(started, t0, f"blkdiscard of all {target.size_bytes} bytes of {target.path}")


class ZeroFillPurge(_Fallback):
    """Write zeros over the whole device: BLKZEROOUT (blkdiscard -z), else dd with O_DIRECT."""

    name = "zero-fill"
    disclosure = "zero-fill (fallback, not a PTS purge)"

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        recheck(target)
        started, t0 = now_iso(), time.monotonic()
        log(f"purge: writing zeros over all of {target.path}")
        hint = "use --purge=none (not PTS compliant) or check the device"
        try:
            self.tools.must(["blkdiscard", *_blkdiscard_force(self.tools), "-z", target.real_path],
                            f"blkdiscard -z {target.path}", hint)
            how = "BLKZEROOUT (blkdiscard -z)"
        except RunFailed as exc:
            log(f"purge: {exc}; falling back to dd")
            # count_bytes makes count a byte count, so the last partial block is written too and
            # dd stops at the end instead of failing with ENOSPC.
            self.tools.must(["dd", "if=/dev/zero", f"of={target.real_path}", "bs=4M", f"count={target.size_bytes}",
                             "iflag=count_bytes", "oflag=direct", "conv=fsync", "status=none"],
                            f"dd zero-fill of {target.path}", hint)
            how = "dd oflag=direct"
        return self._record(started, t0, f"zeros written over all {target.size_bytes} bytes of {target.path} by {how}")


class FileRecreatePurge(_Fallback):
    """Delete the file and create it again, sparse, at its size: no old data is left to read."""

    name = "file-recreate"
    disclosure = "file-recreate (file target: removed and recreated sparse)"
    target_kind = "file"

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        recheck(target)
        path = target.real_path
        # Checked here too, not only in assess: the file may have appeared since the target was
        # opened (exists=False then), and deleting someone's file is exactly what we promise not to do.
        if os.path.exists(path) and not marker.is_ssdpts_file(path):
            raise UserError(f"{target.path} was not created by ssdpts: delete it yourself or give a new file path")
        started, t0 = now_iso(), time.monotonic()
        log(f"purge: recreating {target.path} ({target.size_bytes} bytes, sparse)")
        # The new file is made beside the old one, the marker then vouches for it (and, until the
        # rename, for the old one), then it replaces the old file: a crash at any point leaves a
        # file at the path that the marker vouches for, never one ssdpts would then refuse.
        new = path + ".ssdpts-new"
        try:
            os.unlink(new)  # left by a crash in this very step
        except FileNotFoundError:
            pass
        fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.ftruncate(fd, target.size_bytes)
            os.fsync(fd)
        finally:
            os.close(fd)
        identity = fingerprint.file_identity(new)
        marker.mark_created(path, identity=identity, previous=fingerprint.file_identity(path))
        os.replace(new, path)
        marker.mark_created(path, identity=identity)  # the old file is gone: vouch for the new one only
        return self._record(started, t0, f"{target.path} recreated sparse at {target.size_bytes} bytes")


class NoPurge(_Fallback):
    name = "none"
    disclosure = "none (user chose no purge: not PTS compliant)"

    def applies(self, target: Target) -> bool:
        return True

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        log("purge: skipped (--purge=none): results are not PTS compliant")
        return PurgeRecord(self.name, self.disclosure, now_iso(), 0.0, False, "no purge performed", self.notes)


def fallback(info: dict, target: Target, notes: list[str]) -> PurgeMethod:
    dmax = value(info, "queue", "discard_max_bytes")
    can_discard = dmax > 0 if isinstance(dmax, int) else supports_discard(target)
    if can_discard:
        return DiscardPurge(notes)
    return ZeroFillPurge([*notes, f"{target.path} cannot discard (discard_max_bytes = 0): zeros are written instead"])
