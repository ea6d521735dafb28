"""Volatile write cache per profile (PTS 2.0.2: Enterprise WCD, Client WCE; docs/pts-reference.md#write-cache).

``apply(target, "disabled" | "enabled")`` sets the drive's volatile write cache through the
interface that owns it, reads it back and returns what is in force; ``restore(record)`` puts the
original setting back (call it in a ``finally`` so an interrupted run restores it too, or use
:func:`applied`). Settings are changed for the current power cycle only (no --save / SAVE bits),
so a crash that skips the restore is undone by the next power cycle.

* NVMe: Set Features 0x06 (Volatile Write Cache, WCE bit) on the controller —
  ``nvme set-feature /dev/nvme0 --feature-id=6 --value=0|1``; read with ``get-feature``. Only when
  id-ctrl VWC bit 0 says the controller has a volatile cache.
* SATA: ``hdparm -W0|-W1`` (read with ``hdparm -W``).
* SAS/SCSI: caching mode page WCE — ``sdparm --clear=WCE|--set=WCE`` (read with ``--get=WCE``).
* Devices without a controllable cache (loop, zram, virtio, dm, md): "not applicable: <why>",
  with the kernel's view from /sys/block/X/queue/write_cache recorded.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Iterator

from ssdpts.device import target as tgt
from ssdpts.device.interfaces import choice, nvme, scsi
from ssdpts.device.interfaces.base import Plan
from ssdpts.device.target import Target
from ssdpts.device.tools import Sysfs, Tools
from ssdpts.errors import UserError

STATES = ("enabled", "disabled")


@dataclass(frozen=True, slots=True)
class WriteCacheRecord:
    before: str  # enabled | disabled | "not applicable: ..." | "unknown: ..."
    requested: str  # enabled | disabled
    in_force: str  # read back after the change (or the unchanged state)
    method: str  # "nvme set-feature 0x06", "hdparm -W", "sdparm WCE", or "none"
    note: str | None
    device: str = ""  # the node the setting was read/changed on
    changed: bool = False  # True when apply changed the setting (restore has work to do)
    kernel_write_cache: str | None = None  # /sys/block/X/queue/write_cache after the change

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def summary(self) -> str:
        """One line for the report header: what is in force and how it got there."""
        if self.in_force.startswith("not applicable"):
            return self.in_force
        how = f" via {self.method}" if self.changed else ""
        was = f" (was {self.before})" if self.changed else ""
        return f"{self.in_force}{how}{was}"


# --- pure parsing and decisions -----------------------------------------------------------------


def parse_hdparm_w(text: str) -> str | None:
    """``hdparm -W DEV``: `` write-caching =  1 (on)``."""
    m = re.search(r"write-caching\s*=\s*(\d)", text or "")
    return None if m is None else ("enabled" if m.group(1) == "1" else "disabled")


def parse_sdparm_wce(text: str) -> str | None:
    v = scsi.parse_sdparm(text).get("write_cache_enabled")
    return None if v is None else ("enabled" if v else "disabled")


def parse_nvme_vwc(text: str) -> str | None:
    dword = nvme.parse_get_feature(text).get(0x06)
    return None if dword is None else ("enabled" if dword & 1 else "disabled")


def plan(cls: str, dev: str, *, ctrl_dev: str | None = None, vwc_present: bool | None = None,
         kernel_write_cache: str | None = None) -> Plan | str:
    """How to read and set the write cache of a device of class ``cls``, or "not applicable: why"."""
    return choice.for_class(cls).cache_plan_for(dev, ctrl_dev=ctrl_dev, vwc_present=vwc_present,
                                                kernel_write_cache=kernel_write_cache)


def _parse(kind: str, text: str) -> str | None:
    return {"nvme": parse_nvme_vwc, "hdparm": parse_hdparm_w, "sdparm": parse_sdparm_wce}[kind](text)


# --- applying -----------------------------------------------------------------------------------


def _kernel_state(target: Target, sysfs: Sysfs | None = None) -> str | None:
    disk = target.parent or target.name
    return (sysfs or tgt.host_sysfs()).block_attr(disk, "queue", "write_cache") if target.kind == "block" else None


def _plan_for(target: Target, info: dict | None, sysfs: Sysfs | None) -> Plan | str:
    return choice.of(target, sysfs).cache_plan(target, info, sysfs, _kernel_state(target, sysfs))


def read_state(p: Plan, tools: Tools | None = None) -> str:
    res = (tools or Tools()).run(list(p.get_argv), timeout=30, ok_codes=lambda rc: rc in p.ok_rcs)
    if not res.ok:
        return f"unknown: {res.reason}"
    state = _parse(p.parse, res.stdout)
    return state or f"unknown: cannot read the state from {' '.join(p.get_argv)}"


def apply(target: Target, want: str, *, info: dict | None = None, tools: Tools | None = None,
          sysfs: Sysfs | None = None) -> WriteCacheRecord:
    """Set the volatile write cache to ``want`` ("enabled" | "disabled"); never raises for a device
    that cannot do it (the record says why). ``info``: identify.collect()'s result, if at hand."""
    if want not in STATES:
        raise UserError(f"write cache must be 'enabled' or 'disabled', not {want!r}")
    tools = tools or Tools(destructive=True)
    kernel = _kernel_state(target, sysfs)
    p = _plan_for(target, info, sysfs)
    if isinstance(p, str):
        return WriteCacheRecord(p, want, p, "none", f"kernel write_cache: {kernel}" if kernel else None,
                                target.path, False, kernel)
    before = read_state(p, tools)
    if before == want:
        return WriteCacheRecord(before, want, before, p.method, "already in the requested state", p.device, False, kernel)
    if before not in STATES:
        # A setting whose prior state cannot be read could not be put back after the run.
        return WriteCacheRecord(before, want, before, p.method,
                                "not changed: its current state cannot be read, so it could not be restored after "
                                "the run", p.device, False, kernel)
    res = tools.change(list(p.set_argv[want]), timeout=60)
    if not res.ok:
        return WriteCacheRecord(before, want, before, p.method,
                                f"could not set it ({res.reason}): the run records the state in force", p.device,
                                False, kernel)
    after = read_state(p, tools)
    note = None if after == want else f"the drive kept '{after}' after {' '.join(p.set_argv[want])}"
    return WriteCacheRecord(before, want, after, p.method, note, p.device, True, _kernel_state(target, sysfs))


def restore(record: WriteCacheRecord, target: Target | None = None, *, tools: Tools | None = None) -> WriteCacheRecord:
    """Put the setting that was in force before ``apply`` back. Returns a record of that (or the
    input record, unchanged, when there is nothing to restore); never raises."""
    if not record.changed or record.before not in STATES:
        return record
    iface = choice.by_cache_method(record.method)
    if iface is None:
        return record
    p = iface.cache_plan_for(record.device, ctrl_dev=record.device)
    assert isinstance(p, Plan)
    tools = tools or Tools(destructive=True)
    res = tools.change(list(p.set_argv[record.before]), timeout=60)
    after = read_state(p, tools)
    note = None if res.ok and after == record.before else (
        f"restore to '{record.before}' failed ({res.reason or after}): set it by hand with "
        f"{' '.join(p.set_argv[record.before])}")
    kernel = _kernel_state(target) if target is not None else None
    return WriteCacheRecord(record.in_force, record.before, after, p.method, note, p.device, res.ok, kernel)


@contextmanager
def applied(target: Target, want: str, *, info: dict | None = None) -> Iterator[WriteCacheRecord]:
    """``with applied(target, "disabled") as rec:`` — restored on exit, also after Ctrl-C."""
    rec = apply(target, want, info=info)
    try:
        yield rec
    finally:
        restore(rec, target)
