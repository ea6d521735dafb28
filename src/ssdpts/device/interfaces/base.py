"""What an interface object is: one per way ssdpts speaks to a device (NVMe, ATA, SCSI and a USB
bridge, a plain block device such as loop or zram, a file), chosen once from the device class
(``interfaces/choice.py``). Each carries what differs between them, so that identify, purge,
write cache, telemetry and the latency monitor ask it instead of telling device classes apart:

* identify: the driver and identity fields sysfs gives (``driver``, ``identity``), the collectors
  of its management interface (``manage``), the reason when it has none;
* purge: its device-level purge classes (``purges``, each naming itself, its tool and the
  capability it needs, purge/base.py) and the PTS's ladder of choice among them (``device_purge``);
* write cache: how it is read and set (``write_cache``, a :class:`Plan`), or why it cannot be;
* telemetry: which health reader family samples it (``health``: "nvme", "smartctl", "refssd"
  or None; telemetry.py builds the reader) and the smartctl options it needs;
* the OCP latency monitor: whether it can have one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ssdpts.device.fields import value
from ssdpts.device.purge.fallback import fallback
from ssdpts.device.target import Target
from ssdpts.device.tools import Gather, Sysfs


@dataclass(frozen=True, slots=True)
class Plan:
    """How the volatile write cache of one device is read and set (writecache.py applies it)."""

    method: str
    device: str
    get_argv: tuple[str, ...]
    set_argv: dict[str, tuple[str, ...]]  # state → argv
    parse: str  # which parser reads get_argv's output: nvme | hdparm | sdparm
    ok_rcs: tuple[int, ...] = (0,)  # get_argv exit statuses after which its output is read


class Capabilities:
    """identify's collected ``info`` as the purge ladders read it: a field's value, a tool's presence."""

    def __init__(self, info: dict):
        self.info = info
        self.tools = info.get("tools") or {}

    def v(self, group: str, name: str) -> Any:
        return value(self.info, group, name)

    def have(self, tool: str) -> bool:
        return self.tools.get(tool, True)


class Interface:
    """One device class's way in; the defaults are a device without a management interface."""

    cls = ""  # the device class it serves (block.device_class's name)
    managed = False  # a management interface with its own tools: identify gathers it, purge may use it
    interface: str | None = None  # identify's "interface" field for a device ssdpts has no tool for
    health: str | None = None  # telemetry's health reader family
    smartctl_health_args: tuple[str, ...] = ()  # inserted before the device in ``smartctl -j -A``
    smartctl_media = False  # smartctl's attributes count the NAND writes (ATA)
    purges: tuple[type, ...] = ()  # its device-level purge classes, in the PTS's order of preference
    cache_method: str | None = None  # the write cache Plan's method name, when it has one
    latency_monitor = False  # can have the OCP latency monitor (log page C3h)

    def __init__(self, cls: str = "", *, what: str | None = None, health_what: str | None = None,
                 cache_what: str | None = None, no_interface: str | None = None, interface: str | None = None):
        self.cls = cls or self.cls
        self.what = what or f"a {self.cls} device"  # how purge's note names it
        self.health_what = health_what or f"a {self.cls} device"  # telemetry's "no health log" reason
        self.cache_what = cache_what or f"a {self.cls} device"  # writecache's "not applicable" reason
        self.named = f"a {self.cls} device"  # how the latency monitor's reason names it
        self._no_interface = no_interface  # identify's reason, {name} for the block device's name
        self.interface = interface if interface is not None else type(self).interface

    # --- identify --------------------------------------------------------------------------------

    def driver(self, g: Gather, devdir: str) -> str | None:
        """The driver bound to the device (sysfs ``device/driver``)."""
        return g.sysfs.driver_of(devdir)

    def identity(self, ident: dict[str, Any], block_name: str, g: Gather) -> None:
        """Fields sysfs gives for this kind of device (a loop device's backing file, ...)."""

    def no_interface(self, block_name: str) -> str:
        if self._no_interface:
            return self._no_interface.format(name=block_name)
        return f"{block_name} is a {self.cls} device: not an NVMe, ATA or SCSI drive"

    def manage(self, target: Target, block_name: str, g: Gather, ident: dict[str, Any], smart: dict[str, Any],
               groups: dict[str, tuple[dict | None, str]]) -> str:
        """Fill the nvme / ata / scsi groups (and SMART) from the management interface; returns the
        device class, refined by what its tools say (a SATA disk behind a USB bridge)."""
        for grp in ("nvme", "ata", "scsi"):
            groups[grp] = (None, self.no_interface(block_name))
        return self.cls

    def no_smart(self, block_name: str, g: Gather) -> str:
        """Why the SMART group is empty."""
        return self.no_interface(block_name)

    # --- purge -----------------------------------------------------------------------------------

    def choose_purge(self, info: dict, target: Target) -> Any:
        """The strongest purge this device supports, from identify's ``info`` (purge/registry.py's
        choose_purge). A partition is never given a device-level purge: it would erase the disk."""
        notes: list[str] = []
        if target.is_partition:
            name = target.parent or target.name
            notes.append(f"{target.path} is a partition: a device-level purge would erase all of {name}, "
                         "so only the partition is purged (test the whole disk for a PTS purge)")
            return fallback(info, target, notes)
        return self.device_purge(Capabilities(info), target, notes)

    def device_purge(self, caps: Capabilities, target: Target, notes: list[str]) -> Any:
        """The ladder of this interface's device-level purges; the fallback when none applies."""
        notes.append(f"{target.path} is {self.what}: it has no device-level purge command")
        return fallback(caps.info, target, notes)

    # --- write cache -----------------------------------------------------------------------------

    def write_cache(self, dev: str, *, ctrl_dev: str | None = None, vwc_present: bool | None = None) -> Plan | str | None:
        """How to read and set the write cache of ``dev``; a reason; or None (no cache ssdpts can control)."""
        return None

    def cache_plan(self, target: Target, info: dict | None, sysfs: Sysfs | None,
                   kernel_write_cache: str | None) -> Plan | str:
        """The write cache plan of ``target``, or "not applicable: why"."""
        disk = target.parent or target.name
        return self.cache_plan_for(f"/dev/{disk}", kernel_write_cache=kernel_write_cache)

    def cache_plan_for(self, dev: str, *, ctrl_dev: str | None = None, vwc_present: bool | None = None,
                       kernel_write_cache: str | None = None) -> Plan | str:
        plan = self.write_cache(dev, ctrl_dev=ctrl_dev, vwc_present=vwc_present)
        if plan is not None:
            return plan
        kernel = f"; kernel reports '{kernel_write_cache}'" if kernel_write_cache else ""
        return (f"not applicable: {os.path.basename(dev)} is {self.cache_what}: it has no drive write cache ssdpts "
                f"can control{kernel}")
