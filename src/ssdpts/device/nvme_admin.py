"""NVMe admin commands through the kernel's passthrough ioctl (NVME_IOCTL_ADMIN_CMD on /dev/nvmeX,
root: CAP_SYS_ADMIN): the one way ssdpts speaks to an NVMe controller without nvme-cli; and the
controller behind a namespace, as sysfs names it (:func:`nvme_names`).

Used for reads (the SMART / Health log and OCP's C0h for telemetry, Identify, the latency monitor's
C3h) and for one write-like command, Set Features of the OCP latency monitor (feature C5h, Save bit
clear). Admin commands go to the admin queue, never the measured I/O queues.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import struct

from ssdpts.device import target as tgt
from ssdpts.device.target import Target
from ssdpts.device.tools import Sysfs, as_int

# struct nvme_passthru_cmd (linux/nvme_ioctl.h), 72 bytes:
# opcode, flags, rsvd1, nsid, cdw2, cdw3, metadata, addr, metadata_len, data_len, cdw10..15, timeout_ms, result
_CMD = struct.Struct("<BBHIIIQQII6III")
assert _CMD.size == 72
NVME_IOCTL_ADMIN_CMD = 0xC0000000 | (_CMD.size << 16) | (ord("N") << 8) | 0x41  # _IOWR('N', 0x41, 72 bytes)
OPC_GET_LOG_PAGE, OPC_SET_FEATURES, OPC_IDENTIFY = 0x02, 0x09, 0x06
ALL_NAMESPACES = 0xFFFFFFFF
TIMEOUT_MS = 5000


class AdminError(OSError):
    """An admin command the drive completed with a non-zero status (the kernel's own refusals, such
    as EACCES or ENOTTY, stay the OSError the ioctl raised)."""


class Admin:
    """One controller's admin commands; ``close`` when done."""

    def __init__(self, ctrl_dev: str):
        self.ctrl_dev = ctrl_dev
        self.fd = os.open(ctrl_dev, os.O_RDONLY | os.O_CLOEXEC)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def command(self, opcode: int, *, nsid: int = 0, cdw10: int = 0, cdw11: int = 0, cdw14: int = 0,
                data: bytes | None = None, length: int = 0) -> bytes:
        """One admin command; ``data`` goes to the drive (Set Features), else ``length`` bytes come back."""
        size = len(data) if data is not None else length
        buf = ctypes.create_string_buffer(data if data is not None else b"", size) if size else None
        cmd = bytearray(_CMD.pack(opcode, 0, 0, nsid, 0, 0, 0, ctypes.addressof(buf) if buf else 0, 0, size,
                                  cdw10, cdw11, 0, 0, cdw14, 0, TIMEOUT_MS, 0))
        status = fcntl.ioctl(self.fd, NVME_IOCTL_ADMIN_CMD, cmd, True)
        if status != 0:
            raise AdminError(f"NVMe status 0x{status:x}")
        return buf.raw if buf is not None and data is None else b""

    def get_log(self, lid: int, length: int = 512, uuid_index: int = 0) -> bytes:
        """Get Log Page ``lid`` (all namespaces), ``length`` bytes (a multiple of 4)."""
        numdl = length // 4 - 1  # dwords - 1
        return self.command(OPC_GET_LOG_PAGE, nsid=ALL_NAMESPACES, cdw10=lid | (numdl << 16),
                            cdw14=uuid_index & 0x7F, length=length)

    def set_feature(self, fid: int, data: bytes, *, save: bool = False, uuid_index: int = 0) -> None:
        self.command(OPC_SET_FEATURES, cdw10=fid | (int(save) << 31), cdw14=uuid_index & 0x7F, data=data)

    def smart_log(self) -> bytes:
        return self.get_log(0x02)

    def identify_controller(self) -> bytes:
        return self.command(OPC_IDENTIFY, cdw10=0x01, length=4096)

    def uuid_list(self) -> bytes:
        return self.command(OPC_IDENTIFY, cdw10=0x17, length=4096)


def nvme_names(target: Target, sysfs: Sysfs | None = None) -> tuple[str | None, int | None, int | None]:
    """(controller, namespace id, namespaces on that controller) of an NVMe block device."""
    sysfs = sysfs or tgt.host_sysfs()
    disk = target.parent or target.name
    ddir = sysfs.block_dir(disk)
    ctrl = None
    dev = os.path.realpath(os.path.join(ddir, "device"))
    base = os.path.basename(dev)
    if re.match(r"^nvme\d+$", base):
        ctrl = base
    elif base.startswith("nvme-subsys"):
        try:
            ctrl = next((e for e in sorted(os.listdir(dev)) if re.match(r"^nvme\d+$", e)), None)
        except OSError:
            ctrl = None
    if ctrl is None:
        m = re.match(r"^(nvme\d+)", disk)
        ctrl = m.group(1) if m else None
    nsid = as_int(sysfs.read(os.path.join(ddir, "nsid")))
    if nsid is None:
        m = re.search(r"n(\d+)$", disk)
        nsid = int(m.group(1)) if m else None
    count = None
    for cdir in (sysfs.path("class", "nvme", ctrl or "-"), dev):
        try:
            names = [e for e in os.listdir(cdir) if re.match(r"^nvme\d+(c\d+)?n\d+$", e)]
        except OSError:
            continue
        if names:
            count = len({re.sub(r"c\d+n", "n", n) for n in names})
            break
    return ctrl, nsid, count
