"""Purge: return the target to a known state before each test (PTS 2.0.2 §3.2 "Purge", docs/pts-reference.md#purge).

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

The device-level methods live next to the interface they drive (interfaces/nvme.py, ata.py,
scsi.py), each class naming itself, the device classes it serves, its tool and the capability it
needs (purge/base.py ``DevicePurge``); each interface lists its classes and holds its ladder of
preference (``device_purge``). This module asks the target's interface for its choice and builds
the registry of ``--purge`` names from the interfaces' classes and the fallbacks (fallback.py).

Contract: ``PurgeMethod.run`` destroys data. Call it only after
``safety.check_writable(target, ...)`` passed for this target (the runner does). As a second line
of defence each destructive method re-runs the read-only ``safety.assess`` and refuses if the
target became unusable (mounted since, etc.), but that does not replace the confirmation.
Device-level methods never apply to a partition: they would erase the whole disk, and the
confirmation named only the partition.
"""

from __future__ import annotations

from ssdpts.device.fields import value
from ssdpts.device.identify import purge_facts
from ssdpts.device.interfaces import choice
from ssdpts.device.purge.base import DevicePurge, PurgeMethod, PurgeRecord, poll_until_done
from ssdpts.device.purge.fallback import (DiscardPurge, FileRecreatePurge, NoPurge, ZeroFillPurge,
                                          supports_discard)
from ssdpts.device.target import Target
from ssdpts.errors import UserError

__all__ = ["DiscardPurge", "FileRecreatePurge", "NoPurge", "PurgeMethod", "PurgeRecord", "ZeroFillPurge",
           "choose_purge", "is_pts_purge", "method_names", "poll_until_done", "register", "select_purge",
           "supports_discard"]


# --- choice ---------------------------------------------------------------------------------------


def choose_purge(info: dict, target: Target) -> PurgeMethod:
    """The strongest purge ``target`` supports, from identify's collected ``info`` (pure: reads
    nothing but ``info``, except the kernel's discard support when ``info`` lacks it): the PTS's
    order of preference is its interface's (interfaces/), the fallbacks carry ``notes`` saying why
    no device-level method was used."""
    return choice.of(target, cls=info.get("device_class")).choose_purge(info, target)


# --- registry -------------------------------------------------------------------------------------

_REGISTRY: dict[str, PurgeMethod] = {}


def register(method: PurgeMethod) -> None:
    """Add a purge method under its name (``--purge=NAME``)."""
    _REGISTRY[method.name] = method


def method_names() -> list[str]:
    return ["auto", *_REGISTRY]


for _method in (*(m for iface in choice.MANAGED for kind in iface.purges for m in kind.variants()),
                DiscardPurge(), ZeroFillPurge(), FileRecreatePurge(), NoPurge()):
    register(_method)


def select_purge(target: Target, requested: str, info: dict | None = None) -> PurgeMethod:
    """Pick the purge for ``target``: "auto", "none" or a registered method name.

    auto: files are recreated; block devices get :func:`choose_purge` on ``info`` (identify's
    collected data; probed now with identify.purge_facts when not given). A named device-level
    method is refused when it does not apply to the target or the device lacks the capability.
    """
    if requested == "auto":
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
        need = method.need
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
        return method.configured(info, target)
    return method


def is_pts_purge(method: PurgeMethod) -> bool:
    """True for the device-level purges the PTS names (sanitize, secure erase, format); the
    fallbacks (discard, zero-fill, file-recreate) and 'none' are deviations to disclose."""
    return isinstance(method, DevicePurge)
