"""What a test runs against: a block device or a regular file, and who it is.

Identity comes from sysfs first (always present, no tools needed) and from ``lsblk`` where it adds
something sysfs does not say directly (the transport, udev's serial). Nothing here opens a device:
everything is ``stat``, sysfs/procfs reads and ``lsblk`` (which only reads), so identifying the
system disk is as harmless as identifying a scratch loop device.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Literal

from ssdpts.device.tools import Sysfs, Tools
from ssdpts.errors import UserError

# Roots are module attributes (read at call time) so unit tests can point them at a fake tree.
SYSFS = "/sys"

TargetKind = Literal["block", "file"]


@dataclass(frozen=True, slots=True)
class Target:
    """One test target. Sizes are bytes; strings from the kernel are stripped, empty → None."""

    path: str  # as the user gave it (may be a /dev/disk/by-id symlink)
    real_path: str  # symlinks resolved
    kind: TargetKind
    name: str  # kernel name ("nvme0n1", "loop3") or the file's basename
    size_bytes: int  # for a file still to be created: the requested size
    logical_block_size_bytes: int
    physical_block_size_bytes: int
    model: str | None
    serial: str | None
    vendor: str | None
    firmware: str | None
    transport: str | None  # lsblk TRAN: nvme, sata, sas, usb, ...
    rotational: bool | None
    removable: bool | None
    read_only: bool
    is_partition: bool
    parent: str | None  # kernel name of the whole disk for a partition
    exists: bool
    wwid: str | None = None  # world-wide id (nvme namespace / SCSI), when the kernel exposes one

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: every field is already a str, int, bool or None."""
        return dataclasses.asdict(self)

    @property
    def identity_label(self) -> str:
        """Short filesystem-safe label for run directory names: model + serial tail, or the name.

        docs/design.md#run-directory names run directories ``<time>-<test>-<model>-<serial tail>``; the tail (last 8
        characters) is enough to tell drives of one model apart without a 20-character serial.
        """
        parts = [self.model] if self.model else [self.name]
        if self.serial:
            parts.append(self.serial[-8:])
        label = "-".join(_safe(p) for p in parts)
        return label or "target"


def _safe(text: str) -> str:
    # Only characters that are safe in a file name on every filesystem we care about.
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text.strip()).strip("_")


# --- sysfs (shared with safety/guard.py and the collectors) ---------------------------------------------


def host_sysfs(root: str | None = None) -> Sysfs:
    """The sysfs tree to read: ``root``, else SYSFS (read at call time)."""
    return Sysfs(root or SYSFS)


def sysfs_block_dir(name: str) -> str:
    return host_sysfs().block_dir(name)


def read_sysfs(path: str) -> str | None:
    """Stripped content of a sysfs attribute, or None when absent/unreadable/empty."""
    return host_sysfs().read(path)


def is_partition_name(name: str) -> bool:
    return host_sysfs().is_partition(name)


def disk_of(name: str) -> str:
    """Whole-disk kernel name for a partition (its sysfs parent directory), else ``name``."""
    return host_sysfs().disk_of(name)


def partitions_of(name: str) -> list[str]:
    """Kernel names of the partitions of a whole disk (sysfs subdirectories with a partition file)."""
    return host_sysfs().partitions_of(name)


def name_for_devnum(major: int, minor: int) -> str | None:
    """Kernel name of the block device with this major:minor (via /sys/dev/block), or None."""
    return host_sysfs().name_for_devnum(major, minor)


def devnum_of(name: str) -> str | None:
    """"major:minor" of a kernel block device name, as /proc/self/mountinfo writes it."""
    return host_sysfs().block_attr(name, "dev")


def loop_backing_file(name: str) -> str | None:
    return host_sysfs().block_attr(name, "loop", "backing_file")


# --- lsblk ----------------------------------------------------------------------------------------

# Columns that util-linux has had for years (no MOUNTPOINTS, which needs 2.37), so old hosts work.
_LSBLK_COLUMNS = "NAME,KNAME,MODEL,SERIAL,VENDOR,REV,TRAN,WWN,TYPE,SIZE"


def lsblk_info(dev_path: str, tools: Tools | None = None) -> dict[str, Any]:
    """lsblk's view of one device (no children), or {} when lsblk is missing or fails.

    lsblk reads sysfs and the udev database; it never writes. Its absence is not an error: sysfs
    already gave the essentials, lsblk only adds transport and udev's serial.
    """
    res = (tools or Tools()).run(["lsblk", "-J", "-b", "-d", "-o", _LSBLK_COLUMNS, dev_path], timeout=20)
    if not res.ok:
        return {}
    try:
        devices = json.loads(res.stdout).get("blockdevices") or []
    except (ValueError, AttributeError):
        return {}
    return devices[0] if devices and isinstance(devices[0], dict) else {}


def _vpd_unit_serial(path: str) -> str | None:
    """Serial from the SCSI Unit Serial Number VPD page (0x80): 4-byte header, then ASCII."""
    try:
        with open(path, "rb") as f:
            page = f.read()
    except OSError:
        return None
    if len(page) < 4:
        return None
    length = int.from_bytes(page[2:4], "big")
    return _clean(page[4 : 4 + length].decode("ascii", errors="replace"))


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


# --- open_target ----------------------------------------------------------------------------------


def open_target(path: str, *, size_bytes: int | None = None) -> Target:
    """Identify ``path`` without opening it. Raises UserError for anything that cannot be a target.

    A regular file's size is ``size_bytes`` when given (the file will be recreated at that size by
    the purge) and its current size otherwise. A path that does not exist becomes a file target
    with ``exists=False`` when its directory exists and a size is given.
    """
    if not path:
        raise UserError("no target given: give a block device (e.g. /dev/nvme0n1) or a file path")
    if size_bytes is not None and size_bytes <= 0:
        raise UserError(f"--size must be positive, got {size_bytes}: give a size such as 16G")
    real_path = os.path.realpath(path)
    try:
        st = os.stat(real_path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise UserError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist: a file "
                            "target is created where it is named; give the real path, or remove the link") from None
        return _new_file_target(path, real_path, size_bytes)
    except OSError as exc:
        raise UserError(f"cannot inspect {path}: {exc.strerror}: check the path and permissions")

    if stat.S_ISBLK(st.st_mode):
        return _block_target(path, real_path, os.major(st.st_rdev), os.minor(st.st_rdev))
    if stat.S_ISREG(st.st_mode):
        return _file_target(path, real_path, st, size_bytes)
    if stat.S_ISDIR(st.st_mode):
        raise UserError(
            f"{path} is a directory: give a block device, or a file path inside it "
            f"(e.g. {os.path.join(path, 'ssdpts.img')}) with --size"
        )
    what = "a character device" if stat.S_ISCHR(st.st_mode) else "not a block device or a file"
    raise UserError(f"{path} is {what}: give a block device (e.g. /dev/nvme0n1) or a file path")


def _new_file_target(path: str, real_path: str, size_bytes: int | None) -> Target:
    parent = os.path.dirname(real_path) or "."
    if size_bytes is None or not os.path.isdir(parent):
        raise UserError(
            f"{path} does not exist: give an existing block device, "
            "or a file path with --size to create one"
        )
    return _file_record(path, real_path, size_bytes, exists=False, directory=parent)


def _file_target(path: str, real_path: str, st: os.stat_result, size_bytes: int | None) -> Target:
    size = size_bytes if size_bytes is not None else st.st_size
    return _file_record(path, real_path, size, exists=True, directory=os.path.dirname(real_path))


def _fs_block_sizes(directory: str) -> tuple[int, int]:
    """(logical, physical) block size of the disk under ``directory``'s filesystem.

    O_DIRECT on a file must be aligned to the underlying device's logical block size; when the
    filesystem is not on a plain block device (tmpfs, overlay, NFS) fall back to 512 and the
    filesystem block size.
    """
    try:
        st = os.stat(directory)
        fs_block = os.statvfs(directory).f_bsize or 4096
    except OSError:
        return 512, 4096
    name = name_for_devnum(os.major(st.st_dev), os.minor(st.st_dev))
    if name is None:
        return 512, fs_block
    fs = host_sysfs()
    queue = os.path.join(fs.block_dir(fs.disk_of(name)), "queue")
    logical = fs.read_int(os.path.join(queue, "logical_block_size")) or 512
    physical = fs.read_int(os.path.join(queue, "physical_block_size")) or logical
    return logical, physical


def _file_record(path: str, real_path: str, size: int, *, exists: bool, directory: str) -> Target:
    # A file has no drive identity: model, serial etc. stay None (the host facts describe the disk).
    logical, physical = _fs_block_sizes(directory or ".")
    return Target(
        path=path, real_path=real_path, kind="file", name=os.path.basename(real_path),
        size_bytes=size, logical_block_size_bytes=logical, physical_block_size_bytes=physical,
        model=None, serial=None, vendor=None, firmware=None, transport=None, rotational=None,
        removable=None, read_only=False, is_partition=False, parent=None, exists=exists,
    )


def _block_target(path: str, real_path: str, major: int, minor: int) -> Target:
    name = name_for_devnum(major, minor)
    if name is None:
        raise UserError(
            f"{path} is a block device ({major}:{minor}) that sysfs does not know: "
            "check that /sys is mounted, or give another target"
        )
    return block_target_from_sysfs(name, path=path, real_path=real_path)


def block_target_from_sysfs(name: str, *, path: str | None = None, real_path: str | None = None,
                            sysfs: Sysfs | None = None, tools: Tools | None = None) -> Target:
    """Build a block Target from sysfs (+ lsblk) for kernel name ``name``."""
    fs = sysfs or host_sysfs()
    sysdir = fs.block_dir(name)
    partition = fs.is_partition(name)
    disk = fs.disk_of(name) if partition else name
    diskdir = fs.block_dir(disk)
    # nvme: /sys/class/block/nvme0n1/device is the controller (model, serial, firmware_rev);
    # SCSI/ATA: device/ is the scsi_device (model, vendor, rev); virtio-blk: serial at top level.
    devdir = os.path.join(diskdir, "device")
    node = path or f"/dev/{name}"
    info = {}
    if os.path.exists(f"/dev/{disk}"):
        info = lsblk_info(f"/dev/{disk}") if tools is None else lsblk_info(f"/dev/{disk}", tools)

    sectors = fs.read_int(os.path.join(sysdir, "size")) or 0  # always 512-byte units in sysfs
    queue = os.path.join(diskdir, "queue")
    model = fs.read(os.path.join(devdir, "model")) or _clean(info.get("model"))
    serial = (
        fs.read(os.path.join(devdir, "serial"))  # nvme controller
        or fs.read(os.path.join(diskdir, "serial"))  # virtio-blk
        or _clean(info.get("serial"))  # udev (ATA/SCSI via ID_SERIAL_SHORT)
        or _vpd_unit_serial(os.path.join(devdir, "vpd_pg80"))  # SCSI/SATA without udev
    )
    vendor = fs.read(os.path.join(devdir, "vendor")) or _clean(info.get("vendor"))
    # A SCSI drive's name is its INQUIRY vendor and product together ("SEAGATE ST4000NM0023"), as
    # smartctl and the identity section give it; libata puts "ATA" in vendor and the model in product.
    if model and vendor and vendor.upper() != "ATA" and os.path.exists(os.path.join(devdir, "vendor")) \
            and not model.upper().startswith(vendor.upper()):
        model = f"{vendor} {model}"
    firmware = (
        fs.read(os.path.join(devdir, "firmware_rev"))
        or fs.read(os.path.join(devdir, "rev"))
        or _clean(info.get("rev"))
    )
    wwid = (
        fs.read(os.path.join(diskdir, "wwid"))
        or fs.read(os.path.join(devdir, "wwid"))
        or _clean(info.get("wwn"))
    )
    return Target(
        path=node,
        real_path=real_path or os.path.realpath(node),
        kind="block",
        name=name,
        size_bytes=sectors * 512,
        logical_block_size_bytes=fs.read_int(os.path.join(queue, "logical_block_size")) or 512,
        physical_block_size_bytes=fs.read_int(os.path.join(queue, "physical_block_size")) or 512,
        model=model,
        serial=serial,
        vendor=vendor,
        firmware=firmware,
        transport=_clean(info.get("tran")),
        rotational=fs.read_bool(os.path.join(queue, "rotational")),
        removable=fs.read_bool(os.path.join(diskdir, "removable")),
        # A partition can be read-only on its own, or through its disk.
        read_only=bool(fs.read_bool(os.path.join(sysdir, "ro")) or fs.read_bool(os.path.join(diskdir, "ro"))),
        is_partition=partition,
        parent=disk if partition else None,
        exists=True,
        wwid=wwid,
    )


def list_block_devices() -> list[Target]:
    """Whole disks for ``ssdpts devices``: skip empty devices and unattached loop devices."""
    try:
        names = sorted(os.listdir(os.path.join(SYSFS, "block")))
    except OSError:
        return []
    targets = []
    for name in names:
        if (host_sysfs().read_int(os.path.join(sysfs_block_dir(name), "size")) or 0) == 0:
            continue  # unconfigured zram, empty CD drive, detached loop
        if name.startswith("loop") and loop_backing_file(name) is None:
            continue
        targets.append(block_target_from_sysfs(name))
    return targets
