"""The interface object of a device, chosen once from its device class (block.device_class): the
one place that maps a class to the object that knows how to identify, purge, sample and set it."""

from __future__ import annotations

from ssdpts.device.block import device_class
from ssdpts.device.interfaces.ata import ATA
from ssdpts.device.interfaces.base import Interface
from ssdpts.device.interfaces.block import Block, plain
from ssdpts.device.interfaces.file import File
from ssdpts.device.interfaces.nvme import NVMe
from ssdpts.device.interfaces.scsi import SCSI, USB
from ssdpts.device.target import Target
from ssdpts.device.tools import Sysfs

_ATA, _SCSI = ATA(), SCSI()
FILE = File()
# The interfaces with device-level purges and a controllable write cache, in the registry's order.
MANAGED: tuple[Interface, ...] = (NVMe(), _ATA, _SCSI)
_BY_CLASS: dict[str, Interface] = {i.cls: i for i in (*MANAGED, USB(_ATA, _SCSI, cache_what="behind a USB bridge"),
                                                      FILE, *plain())}


def for_class(cls: str) -> Interface:
    """The interface of device class ``cls`` (one of block.device_class's names)."""
    iface = _BY_CLASS.get(cls)
    if iface is None:
        iface = _BY_CLASS[cls] = Block(cls)
    return iface


def of(target: Target, sysfs: Sysfs | None = None, *, cls: str | None = None) -> Interface:
    """The interface of ``target``: of ``cls`` when identify already named it (a file is a file
    whatever identify says of the disk under it), else of the class block.device_class finds."""
    if not cls or target.kind == "file":
        cls = device_class(target, sysfs)
    return for_class(cls)


def by_cache_method(method: str) -> Interface | None:
    """The interface whose write cache plan has this method name (a record's, to restore it)."""
    return next((i for i in MANAGED if i.cache_method == method), None)
