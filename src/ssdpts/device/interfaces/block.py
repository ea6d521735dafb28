"""Plain block devices: loop, zram, virtio, device-mapper, md and the rest, which have no
management interface ssdpts speaks. sysfs and lsblk describe them; their purge is a disclosed
fallback (discard, else zeros), their write cache is not the drive's, and their only health
source is a loop device resting on the reference SSD (its ``ctl`` counters, mediawrites.py).
"""

from __future__ import annotations

from typing import Any

from ssdpts.device.interfaces.base import Interface
from ssdpts.device.tools import Gather


class Block(Interface):
    """A block device without a management interface; ``driver``: the driver named when sysfs names none."""

    def __init__(self, cls: str, *, driver: str | None = None, **texts: Any):
        super().__init__(cls, **texts)
        self.default_driver = driver

    def identity(self, ident: dict[str, Any], block_name: str, g: Gather) -> None:
        if self.default_driver:
            ident["driver"] = ident.get("driver") or self.default_driver


class Loop(Block):
    """A loop device: a file (or another block device) seen as a disk; its backing file in identify,
    the reference SSD's counters as its health where it rests on one."""

    health = "refssd"

    def identity(self, ident: dict[str, Any], block_name: str, g: Gather) -> None:
        ident["loop_backing_file"] = g.sysfs.block_attr(block_name, "loop", "backing_file")
        dio = g.sysfs.block_attr(block_name, "loop", "dio")
        ident["loop_direct_io"] = None if dio is None else dio == "1"
        super().identity(ident, block_name, g)


def plain() -> list[Block]:
    """The plain block devices ssdpts names (any other class gets a ``Block`` of its name)."""
    return [
        Loop("loop", driver="loop", interface="loop (file-backed block device)",
             no_interface="{name} is a loop device (a file seen as a disk): it has no SMART/NVMe/ATA/SCSI interface",
             health_what="a loop device (a file seen as a disk)",
             cache_what="a loop device (the page cache of its backing file decides)"),
        Block("zram", driver="zram", interface="zram (compressed RAM block device)",
              no_interface="{name} is a zram device (compressed RAM): it has no SMART/NVMe/ATA/SCSI interface",
              health_what="a zram device (compressed RAM)", cache_what="a zram device (RAM: nothing to flush)"),
        Block("virtio", interface="virtio-blk (virtual disk)",
              no_interface="{name} is a virtio disk: the hypervisor hides the physical drive and its SMART data",
              what="a virtio disk (the hypervisor owns the drive)",
              health_what="a virtio disk (the hypervisor hides the physical drive)",
              cache_what="a virtio disk (the hypervisor owns the cache)"),
        Block("dm", interface="device-mapper", what="a device-mapper device", health_what="a device-mapper device",
              cache_what="a device-mapper device"),
        Block("md", interface="md RAID", what="an md RAID device", health_what="an md RAID device",
              cache_what="an md RAID device"),
        Block("nbd", interface="network block device"),
        Block("xen", interface="Xen virtual block device"),
    ]
