"""Purge: return the target to a known state before each test (PTS 2.0.2 §3.2 "Purge", PTS.md §1).

The PTS requires a device-level purge: ATA SECURITY ERASE UNIT or SANITIZE, SCSI FORMAT UNIT or
SANITIZE, NVMe Format NVM with Secure Erase or Sanitize. :func:`choose_purge` picks the strongest
method the device supports from identify's capability fields (id-ctrl SANICAP / FNA / OACS, ATA
IDENTIFY security and sanitize bits, SCSI REPORT SUPPORTED OPERATION CODES); when none applies,
the fallbacks are discard (blkdiscard) then zero-fill, each disclosed as "fallback, not a PTS
purge", with notes saying why no device-level method was used (e.g. an ATA drive that is frozen,
and how to unfreeze it). The chosen method's disclosure and notes go in the manifest and the
report header.

Order of preference and why:

* NVMe: Sanitize block erase > Sanitize crypto erase > Format NVM, user-data erase (SES=1) >
  Format NVM, crypto erase (SES=2). Block erase leaves erased NAND (the fresh-out-of-box state
  the PTS wants to start from); crypto erase only discards the key. Sanitize and a Format whose
  FNA says "applies to all namespaces" erase every namespace of the controller, so they are only
  used when the target is the controller's only namespace. Format keeps the LBA format in use.
* ATA: SANITIZE BLOCK ERASE > SANITIZE CRYPTO SCRAMBLE > ENHANCED SECURITY ERASE > SECURITY ERASE.
  Security erase is impossible while the drive is "frozen" (BIOSes freeze it at boot).
* SCSI/SAS: SANITIZE block erase > SANITIZE crypto erase > FORMAT UNIT (keeps block size and PI).
* Everything else (loop, zram, virtio, partitions): discard, else zero-fill.

The device-level methods live next to the interface they drive (nvme.SanitizePurge,
nvme.FormatPurge, ata.SanitizePurge, ata.SecurityErasePurge, scsi.SanitizePurge,
scsi.FormatPurge) and share the shapes in purge_base.py; this module holds the fallbacks, the
choice and the registry of ``--purge`` names.

Contract: ``PurgeMethod.run`` destroys data. Call it only after
``safety.check_writable(target, ...)`` passed for this target (the runner does). As a second line
of defence each destructive method re-runs the read-only ``safety.assess`` and refuses if the
target became unusable (mounted since, etc.), but that does not replace the confirmation.
Device-level methods never apply to a partition: they would erase the whole disk, and the
confirmation named only the partition.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ssdpts.device import fingerprint, marker
from ssdpts.device.interfaces import ata
from ssdpts.device.interfaces import nvme
from ssdpts.device.interfaces import scsi
from ssdpts.device import target as tgt
from ssdpts.device.block import device_class
from ssdpts.device.fields import value
from ssdpts.device.identify import purge_facts
from ssdpts.device.purge.base import (DevicePurge, Log, PurgeMethod, PurgeRecord, now_iso, poll_until_done,
                                      quiet, recheck)
from ssdpts.device.target import Target
from ssdpts.device.tools import Tools
from ssdpts.errors import RunFailed, UserError

__all__ = ["DiscardPurge", "FileRecreatePurge", "NoPurge", "PurgeMethod", "PurgeRecord", "ZeroFillPurge",
           "choose_purge", "is_pts_purge", "method_names", "poll_until_done", "register", "select_purge",
           "supports_discard"]


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

    def __init__(self, notes: tuple[str, ...] | list[str] = (), *, tools: Tools | None = None):
        self.notes = tuple(notes)
        self.tools = tools or Tools(destructive=True)

    def _record(self, started: str, t0: float, detail: str) -> PurgeRecord:
        return PurgeRecord(self.name, self.disclosure, started, time.monotonic() - t0, False, detail, self.notes)


# --- fallbacks (no device-level purge) ------------------------------------------------------------


class DiscardPurge(_Fallback):
    """Discard (TRIM/UNMAP/Deallocate) every LBA with blkdiscard."""

    name = "discard"
    disclosure = "discard (fallback, not a PTS purge)"

    def applies(self, target: Target) -> bool:
        return target.kind == "block"

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

    def applies(self, target: Target) -> bool:
        return target.kind == "block"

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

    def applies(self, target: Target) -> bool:
        return target.kind == "file"

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


# --- choice ---------------------------------------------------------------------------------------


def _fallback(info: dict, target: Target, notes: list[str]) -> PurgeMethod:
    dmax = value(info, "queue", "discard_max_bytes")
    can_discard = dmax > 0 if isinstance(dmax, int) else supports_discard(target)
    if can_discard:
        return DiscardPurge(notes)
    return ZeroFillPurge([*notes, f"{target.path} cannot discard (discard_max_bytes = 0): zeros are written instead"])


def choose_purge(info: dict, target: Target) -> PurgeMethod:
    """The strongest purge ``target`` supports, from identify's collected ``info`` (pure: reads
    nothing but ``info``, except the kernel's discard support when ``info`` lacks it).

    Fallbacks carry ``notes`` saying why no device-level method was used.

    One piece: the PTS's order of preference (sanitize, format, secure erase, then the
    fallbacks) read as one ladder of decisions."""
    if target.kind == "file":
        return FileRecreatePurge()
    cls = info.get("device_class") or device_class(target)
    tools = info.get("tools") or {}

    def v(group: str, name: str) -> Any:
        return value(info, group, name)

    def have(tool: str) -> bool:
        return tools.get(tool, True)

    notes: list[str] = []
    name = target.parent or target.name
    if target.is_partition:
        notes.append(f"{target.path} is a partition: a device-level purge would erase all of {name}, "
                     "so only the partition is purged (test the whole disk for a PTS purge)")
        return _fallback(info, target, notes)
    if cls == "nvme":
        if not have("nvme"):
            notes.append(f"nvme-cli is not installed: install nvme-cli for a sanitize/format purge of {name}")
            return _fallback(info, target, notes)
        if v("nvme", "sanicap") is None and v("nvme", "format_nvm_supported") is None:
            why = (info.get("nvme") or {}).get("sanicap")
            notes.append(f"the NVMe capabilities of {name} are unknown ({why or 'nvme id-ctrl gave nothing'}): "
                         "run as root with nvme-cli installed for a PTS purge")
            return _fallback(info, target, notes)
        n_ns = v("nvme", "namespaces_on_controller")
        only = n_ns == 1
        ctrl = v("nvme", "controller") or "the controller"
        for action, key in (("block", "sanitize_block_erase_supported"), ("crypto", "sanitize_crypto_erase_supported")):
            if not v("nvme", key):
                continue
            if only:
                return nvme.SanitizePurge(action, notes)
            notes.append(f"sanitize ({action} erase) not used: it erases every namespace of {ctrl} "
                         f"({n_ns if n_ns is not None else 'an unknown number of'} namespaces)")
        if not v("nvme", "sanitize_block_erase_supported") and not v("nvme", "sanitize_crypto_erase_supported"):
            notes.append(f"{ctrl} does not support sanitize (id-ctrl sanicap = {v('nvme', 'sanicap')})")
        if v("nvme", "format_nvm_supported"):
            lbaf = v("nvme", "lba_format_index")
            all_ns = v("nvme", "format_applies_to_all_namespaces") or v("nvme", "secure_erase_applies_to_all_namespaces")
            if lbaf is None:
                notes.append("format not used: the LBA format in use is unknown (nvme id-ns failed)")
            elif all_ns and not only:
                notes.append(f"format not used: on {ctrl} it applies to every namespace (id-ctrl fna = {v('nvme', 'fna')})")
            else:
                return nvme.FormatPurge(1, lbaf, notes)
        else:
            notes.append(f"{ctrl} does not support Format NVM (id-ctrl oacs bit 1 = 0)")
        return _fallback(info, target, notes)
    if cls == "ata":
        dev = f"/dev/{name}"
        if not have("hdparm"):
            notes.append(f"hdparm is not installed: install hdparm for an ATA sanitize/security erase of {dev}")
            return _fallback(info, target, notes)
        if v("ata", "sanitize_block_erase_supported"):
            return ata.SanitizePurge("block", notes)
        if v("ata", "sanitize_crypto_scramble_supported"):
            return ata.SanitizePurge("crypto", notes)
        if v("ata", "sanitize_supported") is None and v("ata", "security_supported") is None:
            notes.append(f"the ATA capabilities of {dev} are unknown (hdparm -I / smartctl gave nothing): "
                         "run as root with hdparm and smartmontools installed for a PTS purge")
            return _fallback(info, target, notes)
        if v("ata", "security_supported"):
            if v("ata", "security_locked") or v("ata", "security_enabled"):
                notes.append(f"ATA security erase not used: {dev} has a security password set (enabled/locked); "
                             "disable it with hdparm --security-disable PASSWORD, then run again")
            elif v("ata", "security_frozen"):
                notes.append(ata.frozen_advice(dev))
            else:
                enhanced = bool(v("ata", "enhanced_erase_supported"))
                est = v("ata", "enhanced_erase_time_min" if enhanced else "security_erase_time_min")
                return ata.SecurityErasePurge(enhanced, notes, estimate_min=est)
        else:
            notes.append(f"{dev} supports neither SANITIZE nor the ATA security feature set")
        return _fallback(info, target, notes)
    if cls in ("scsi", "usb"):
        dev = f"/dev/{name}"
        if cls == "usb":
            notes.append(f"{dev} is behind a USB bridge: SCSI SANITIZE/FORMAT UNIT are not passed reliably")
            return _fallback(info, target, notes)
        if have("sg_sanitize") and v("scsi", "sanitize_block_erase_supported"):
            return scsi.SanitizePurge("block", notes)
        if have("sg_sanitize") and v("scsi", "sanitize_crypto_erase_supported"):
            return scsi.SanitizePurge("crypto", notes)
        if v("scsi", "sanitize_block_erase_supported") is None:
            notes.append(f"SANITIZE support of {dev} unknown (REPORT SUPPORTED OPERATION CODES not answered)")
        else:
            notes.append(f"{dev} does not support SANITIZE block or crypto erase")
        if not have("sg_format"):
            notes.append("sg3-utils is not installed: install sg3-utils for FORMAT UNIT")
            return _fallback(info, target, notes)
        if v("scsi", "format_unit_supported") is not False:
            return scsi.FormatPurge(notes, protection_type=v("scsi", "protection_type"))
        notes.append(f"{dev} does not report FORMAT UNIT")
        return _fallback(info, target, notes)
    what = {"loop": "a loop device", "zram": "a zram device", "virtio": "a virtio disk (the hypervisor owns the drive)",
            "dm": "a device-mapper device", "md": "an md RAID device"}.get(cls, f"a {cls} device")
    notes.append(f"{target.path} is {what}: it has no device-level purge command")
    return _fallback(info, target, notes)


# --- registry -------------------------------------------------------------------------------------

_REGISTRY: dict[str, PurgeMethod] = {}


def register(method: PurgeMethod) -> None:
    """Add a purge method under its name (``--purge=NAME``)."""
    _REGISTRY[method.name] = method


def method_names() -> list[str]:
    return ["auto", *_REGISTRY]


for _method in (nvme.SanitizePurge("block"), nvme.SanitizePurge("crypto"), nvme.FormatPurge(1), nvme.FormatPurge(2),
                ata.SanitizePurge("block"), ata.SanitizePurge("crypto"), ata.SecurityErasePurge(True),
                ata.SecurityErasePurge(False), scsi.SanitizePurge("block"), scsi.SanitizePurge("crypto"),
                scsi.FormatPurge(), DiscardPurge(), ZeroFillPurge(), FileRecreatePurge(), NoPurge()):
    register(_method)

# The capability each named device-level method needs, checked when it is asked for by name.
_NEEDS = {
    "nvme-sanitize-block": ("nvme", "sanitize_block_erase_supported"),
    "nvme-sanitize-crypto": ("nvme", "sanitize_crypto_erase_supported"),
    "nvme-format": ("nvme", "format_nvm_supported"),
    "nvme-format-crypto": ("nvme", "format_crypto_erase_supported"),
    "ata-sanitize-block": ("ata", "sanitize_block_erase_supported"),
    "ata-sanitize-crypto": ("ata", "sanitize_crypto_scramble_supported"),
    "ata-secure-erase-enhanced": ("ata", "enhanced_erase_supported"),
    "ata-secure-erase": ("ata", "security_supported"),
    "scsi-sanitize-block": ("scsi", "sanitize_block_erase_supported"),
    "scsi-sanitize-crypto": ("scsi", "sanitize_crypto_erase_supported"),
}


def _configured(requested: str, info: dict, target: Target) -> PurgeMethod:
    """A fresh instance of a named device-level method, with what it needs from ``info``."""
    v = lambda g, n: value(info, g, n)  # noqa: E731
    if requested.startswith("nvme-sanitize-"):
        return nvme.SanitizePurge(requested.rsplit("-", 1)[1])
    if requested in ("nvme-format", "nvme-format-crypto"):
        return nvme.FormatPurge(1 if requested == "nvme-format" else 2, v("nvme", "lba_format_index"))
    if requested.startswith("ata-sanitize-"):
        return ata.SanitizePurge(requested.rsplit("-", 1)[1])
    if requested.startswith("ata-secure-erase"):
        enhanced = requested.endswith("enhanced")
        if v("ata", "security_frozen"):
            raise UserError(ata.frozen_advice(f"/dev/{target.name}"))
        return ata.SecurityErasePurge(enhanced, estimate_min=v("ata", "enhanced_erase_time_min" if enhanced
                                                                else "security_erase_time_min"))
    if requested.startswith("scsi-sanitize-"):
        return scsi.SanitizePurge(requested.rsplit("-", 1)[1])
    if requested == "scsi-format":
        return scsi.FormatPurge(protection_type=v("scsi", "protection_type"))
    return _REGISTRY[requested]


def select_purge(target: Target, requested: str, info: dict | None = None) -> PurgeMethod:
    """Pick the purge for ``target``: "auto", "none" or a registered method name.

    auto: files are recreated; block devices get :func:`choose_purge` on ``info`` (identify's
    collected data; probed now with identify.purge_facts when not given). A named device-level
    method is refused when it does not apply to the target or the device lacks the capability.
    """
    if requested == "auto":
        if target.kind == "file":
            return _REGISTRY["file-recreate"]
        return choose_purge(info if info is not None else purge_facts(target), target)
    method = _REGISTRY.get(requested)
    if method is None:
        raise UserError(f"unknown purge method {requested!r}: use one of {', '.join(method_names())}")
    if not method.applies(target):
        usable = [n for n in method_names() if n == "auto" or _REGISTRY[n].applies(target)]
        raise UserError(
            f"purge method {requested} does not apply to {target.kind} target {target.path}: "
            f"use one of {', '.join(usable)}"
        )
    if isinstance(method, DevicePurge):
        info = info if info is not None else purge_facts(target)
        need = _NEEDS.get(requested)
        have = value(info, *need) if need else True
        if have is False:
            raise UserError(f"{target.path} does not support {requested} ({need[0]} {need[1]} is false): "
                            "use --purge=auto to pick the strongest method it supports")
        # Unknown is not supported: a drive without the feature set may abort the erase while the
        # tool still exits 0 (hdparm after an aborted SECURITY ERASE UNIT), so nothing is sent
        # to a drive that has not said it can do it.
        if have is not True:
            raise UserError(f"{target.path} has not said it supports {requested} ({need[0]} {need[1]} is unknown): "
                            "run as root with the drive's tools installed, or use --purge=auto")
        return _configured(requested, info, target)
    return method


def is_pts_purge(method: PurgeMethod) -> bool:
    """True for the device-level purges the PTS names (sanitize, secure erase, format); the
    fallbacks (discard, zero-fill, file-recreate) and 'none' are deviations to disclose."""
    return isinstance(method, DevicePurge)
