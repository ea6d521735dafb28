"""Who a target is, in enough detail to prove on resume that it is the same device.

A run records a fingerprint when it starts; ``ssdpts resume`` takes a new one and refuses when
anything that identifies the device differs (:func:`differences`), and accepts the destruction
confirmation given at the start only when the identity is *proven* (:func:`proven_same`):

* a drive: model, serial, firmware, WWID / EUI-64 / NGUID / UUID, capacity, logical and physical
  block size, plus (for a partition) its start and length. A serial-like field that is present and
  equal proves the identity; the node it appears under (``/dev/sdb`` after a reboot may be
  ``/dev/sdc``) is then only noted.
* a loop device: its backing file's path, device and inode (from ``LOOP_GET_STATUS64``, which
  names the file the kernel really uses, even after a rename), offset, size limit and direct-I/O
  setting; the file is the same by its device and inode whatever path names it (a hard link, a
  rename), and a backing block device the same by its major:minor whatever node named it. A loop device has no serial: the kernel's disk sequence number (``diskseq``, unique per
  boot and increased by every attach) together with the boot id proves that it was not detached
  and re-attached since. A re-attach with the same file keeps every field but ``diskseq``: the
  inode number of a deleted file is reused at once on ext4, so that case is re-confirmed.
* a zram device: its disksize and compression algorithm. A reset and re-creation keeps even
  ``diskseq`` (measured on Linux 6.18: reset + disksize leaves it unchanged), so nothing proves a
  zram device: resume always asks for the confirmation again.
* a file target: its path and (device, inode, size, birth time, generation) — the last two tell a
  new file from an old one even when the filesystem reuses the inode number; the marker beside the
  file carries the same identity (``marker.mark_created``).

For every device without a serial-like field, a path that resolves to another node is another
device. Everything here only reads: sysfs, ``stat``/``statx`` and one ioctl on a read-only,
non-exclusive descriptor of a loop device.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import stat
import struct
from typing import Any

from ssdpts.device import target as tgt
from ssdpts.device.target import Target

FORMAT = 1

# Fields that prove a drive is the one confirmed at the start.
SERIAL_LIKE = ("serial", "wwid", "eui", "nguid", "uuid")

# (key, what the user reads, how to put it right) for fields whose change means "another device".
_IDENTITY: tuple[tuple[str, str], ...] = (
    ("kind", "kind"), ("class", "device type"),
    ("model", "model"), ("serial", "serial"), ("firmware", "firmware"), ("wwid", "WWID"), ("eui", "EUI-64"),
    ("nguid", "NGUID"), ("uuid", "namespace UUID"), ("size_bytes", "capacity"),
    ("logical_block_size_bytes", "logical block size"), ("physical_block_size_bytes", "physical block size"),
    ("partition.start_sector", "partition start"), ("partition.sectors", "partition length"),
    ("loop.backing_file", "backing file"), ("loop.backing_dev", "backing file's device"),
    ("loop.backing_inode", "backing file's inode"), ("loop.backing_rdev", "backing device"),
    ("loop.offset_bytes", "loop offset"),
    ("loop.sizelimit_bytes", "loop size limit"), ("loop.direct_io", "loop direct I/O"),
    ("zram.disksize_bytes", "zram disksize"), ("zram.comp_algorithm", "zram compression algorithm"),
)
# Where the device is found: part of the identity only when nothing serial-like proves it.
_LOCATION: tuple[tuple[str, str], ...] = (("real_path", "resolved path"), ("devnum", "major:minor"))

_LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit (u64), lo_number,
# lo_encrypt_type, lo_encrypt_key_size, lo_flags (u32), file name[64], crypt name[64], key[32], init[2] (u64)
_LOOP_INFO64 = struct.Struct("=QQQQQIIII64s64s32sQQ")
_LO_FLAGS_AUTOCLEAR = 4
_FS_IOC_GETVERSION = 0x80087601  # _IOR('v', 1, long): the inode's generation number
_STATX_BTIME = 0x800
_AT_FDCWD = -100


def boot_id() -> str | None:
    return tgt.read_sysfs("/proc/sys/kernel/random/boot_id")


def device_class(target: Target) -> str:
    """loop, zram, partition or drive (anything else with a queue), or file."""
    if target.kind == "file":
        return "file"
    if target.is_partition:
        return "partition"
    base = tgt.sysfs_block_dir(target.name)
    if os.path.isdir(os.path.join(base, "loop")) or target.name.startswith("loop"):
        return "loop"
    if target.name.startswith("zram") and os.path.exists(os.path.join(base, "disksize")):
        return "zram"
    return "drive"


def take(target: Target, fd: int | None = None) -> dict[str, Any]:
    """The fingerprint of ``target`` now. ``fd``: an open descriptor of the device (the claim's),
    used for the loop ioctl instead of opening the node again."""
    if target.kind == "file":
        return _file_fingerprint(target)
    name = target.name
    base = tgt.sysfs_block_dir(name)
    disk = target.parent or name
    diskdir = tgt.sysfs_block_dir(disk)
    sectors = _int(os.path.join(base, "size"))
    fp: dict[str, Any] = {
        "format": FORMAT, "kind": "block", "class": device_class(target),
        "path": target.path, "real_path": os.path.realpath(target.path), "devnum": tgt.devnum_of(name),
        "model": target.model, "serial": target.serial, "firmware": target.firmware, "wwid": target.wwid,
        "eui": tgt.read_sysfs(os.path.join(diskdir, "eui")), "nguid": tgt.read_sysfs(os.path.join(diskdir, "nguid")),
        "uuid": tgt.read_sysfs(os.path.join(diskdir, "uuid")),
        "size_bytes": None if sectors is None else sectors * 512,
        "logical_block_size_bytes": target.logical_block_size_bytes,
        "physical_block_size_bytes": target.physical_block_size_bytes,
        "read_only": _int(os.path.join(base, "ro")) == 1,
        "diskseq": _int(os.path.join(diskdir, "diskseq")), "boot_id": boot_id(),
        "partition": None, "loop": None, "zram": None,
    }
    if target.is_partition:
        fp["partition"] = {"disk": disk, "number": _int(os.path.join(base, "partition")),
                           "start_sector": _int(os.path.join(base, "start")), "sectors": sectors}
        if os.path.isdir(os.path.join(diskdir, "loop")):
            fp["loop"] = loop_info(f"/dev/{disk}", disk)  # a partition of a loop device: the disk's backing file
    ids = _IDS.get(fp["class"])
    if ids is not None:
        fp.update(ids(target, base, fd))
    return fp


def _loop_ids(target: Target, base: str, fd: int | None) -> dict[str, Any]:
    return {"loop": loop_info(target.real_path, target.name, fd)}


def _zram_ids(target: Target, base: str, fd: int | None) -> dict[str, Any]:
    return {"zram": {"disksize_bytes": _int(os.path.join(base, "disksize")),
                     "comp_algorithm": _selected(tgt.read_sysfs(os.path.join(base, "comp_algorithm")))}}


# What proves a device without a serial, by fingerprint class: a loop device's backing file, a zram
# device's size and algorithm (docstring above).
_IDS = {"loop": _loop_ids, "zram": _zram_ids}


def loop_info(node: str, name: str, fd: int | None = None) -> dict[str, Any]:
    """The loop device's backing file as the kernel holds it (LOOP_GET_STATUS64), else sysfs."""
    base = os.path.join(tgt.sysfs_block_dir(name), "loop")
    info: dict[str, Any] = {
        "backing_file": tgt.read_sysfs(os.path.join(base, "backing_file")),
        "backing_dev": None, "backing_inode": None,
        "offset_bytes": _int(os.path.join(base, "offset")), "sizelimit_bytes": _int(os.path.join(base, "sizelimit")),
        "direct_io": _int(os.path.join(base, "dio")) == 1,
        "autoclear": _int(os.path.join(base, "autoclear")) == 1,
    }
    own = fd is None
    try:
        if own:
            fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        raw = fcntl.ioctl(fd, _LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size))
    except OSError:
        return info  # not attached, or no permission: sysfs alone
    finally:
        if own and fd is not None:
            os.close(fd)
    dev, ino, rdev, offset, sizelimit, _n, _et, _ks, flags = _LOOP_INFO64.unpack(raw)[:9]
    info.update(backing_dev=f"{os.major(dev)}:{os.minor(dev)}", backing_inode=ino, offset_bytes=offset,
                sizelimit_bytes=sizelimit, autoclear=bool(flags & _LO_FLAGS_AUTOCLEAR))
    if rdev:  # a block device: the device itself, whichever node named it
        info["backing_rdev"] = f"{os.major(rdev)}:{os.minor(rdev)}"
    return info


def file_identity(path: str) -> dict[str, Any] | None:
    """(device, inode, size, birth time, generation) of the file at ``path``, or None if absent.

    Birth time (statx) and the inode generation (FS_IOC_GETVERSION) are None where the filesystem
    does not keep them; device, inode and size alone then decide."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return {"dev": f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", "inode": st.st_ino, "size_bytes": st.st_size,
            "btime_ns": _birth_time_ns(path), "generation": _generation(path)}


def same_file(recorded: dict[str, Any] | None, current: dict[str, Any] | None) -> bool:
    """True when ``current`` is the file ``recorded`` describes (fields recorded as None are not
    compared: the filesystem did not keep them)."""
    if not recorded or not current:
        return False
    return all(current.get(k) == v for k, v in recorded.items() if v is not None)


def _file_fingerprint(target: Target) -> dict[str, Any]:
    return {"format": FORMAT, "kind": "file", "class": "file", "path": target.path,
            "real_path": os.path.realpath(target.path), "size_bytes": target.size_bytes,
            "file": file_identity(target.real_path), "boot_id": boot_id()}


# --- comparing ----------------------------------------------------------------------------------


def _get(fp: dict[str, Any], key: str) -> Any:
    head, _, tail = key.partition(".")
    value = fp.get(head)
    if tail:
        return value.get(tail) if isinstance(value, dict) else None
    return value


def serial_like(fp: dict[str, Any]) -> list[str]:
    """The serial-like fields this fingerprint has (empty for loop, zram, files, bare virtual disks)."""
    return [k for k in SERIAL_LIKE if fp.get(k)]


def differences(before: dict[str, Any], now: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(what, was, now) for every field that identifies the device and changed.

    Files: the path only (ssdpts recreates a file target at every purge, so its inode changes by
    design; the marker proves it is still ssdpts's file). Devices without a serial-like field:
    also where the path resolves to."""
    out: list[tuple[str, Any, Any]] = []
    if before.get("kind") != now.get("kind"):
        return [("kind", before.get("kind"), now.get("kind"))]
    if now.get("kind") == "file":
        keys: tuple[tuple[str, str], ...] = (("real_path", "resolved path"), ("size_bytes", "size"))
    else:
        keys = _IDENTITY[:2] + (() if serial_like(before) else _LOCATION) + _IDENTITY[2:]
    same = _same_backing(before, now)
    for key, label in keys:
        if same and key in ("loop.backing_file", "loop.backing_dev", "loop.backing_inode"):
            continue  # the same file or device by identity, reached by another path (a hard link, a rename)
        a, b = _get(before, key), _get(now, key)
        if key == "loop.backing_rdev" and (a is None or b is None):
            continue  # recorded since this field exists: an older fingerprint has the node's identity only
        if a != b:
            out.append((label, a, b))
    return out


def _same_backing(before: dict[str, Any], now: dict[str, Any]) -> bool:
    """Both loop devices rest on the same backing block device (major:minor), or the same file
    (device and inode): the identity, whatever path the kernel names it by."""
    a, b = before.get("loop") or {}, now.get("loop") or {}
    if a.get("backing_rdev") or b.get("backing_rdev"):
        return bool(a.get("backing_rdev")) and a.get("backing_rdev") == b.get("backing_rdev")
    return (a.get("backing_inode") is not None and a.get("backing_dev") is not None
            and (a.get("backing_dev"), a.get("backing_inode")) == (b.get("backing_dev"), b.get("backing_inode")))


def proven_same(before: dict[str, Any], now: dict[str, Any]) -> str | None:
    """How the identity is proven (a sentence), or None when only a new confirmation can say it.

    Call after :func:`differences` found nothing."""
    if before.get("kind") == "file":
        return "file target: ssdpts's marker matches the file"
    have = [k for k in serial_like(before) if before.get(k) == now.get(k)]
    if have:
        return f"same {have[0]} {before[have[0]]}"
    if (before.get("loop") and before.get("diskseq") is not None
            and before.get("diskseq") == now.get("diskseq") and before.get("boot_id")
            and before.get("boot_id") == now.get("boot_id")):
        return f"same loop device instance (diskseq {before['diskseq']}, not detached or re-attached since)"
    return None


def why_unproven(before: dict[str, Any], now: dict[str, Any]) -> str:
    """Why :func:`proven_same` could not prove the identity, for the refusal or the prompt."""
    path = now.get("path") or before.get("path")
    if before.get("class") in _NEVER_PROVEN:
        return f"{path} is {_NEVER_PROVEN[before['class']]}"
    if before.get("loop"):
        if before.get("boot_id") != now.get("boot_id"):
            return f"{path} is a loop device and the machine was restarted since the run started"
        return (f"{path} is a loop device that was detached and attached again since the run started "
                f"(diskseq {before.get('diskseq')}, now {now.get('diskseq')})")
    return f"{path} has no serial number or other unique id"


# Devices whose identity nothing proves (fingerprint class → why), docstring above.
_NEVER_PROVEN = {"zram": "a zram device: it has no serial, and a reset and re-created zram device looks the same"}


def describe_difference(path: str, what: str, was: Any, now: Any) -> str:
    return f"{path} is not the device this run started on: its {what} was {_show(was)}, now {_show(now)}"


def _show(v: Any) -> str:
    return "none" if v is None or v == "" else repr(v) if isinstance(v, str) else str(v)


# --- small readers ------------------------------------------------------------------------------


def _int(path: str) -> int | None:
    text = tgt.read_sysfs(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _selected(algorithms: str | None) -> str | None:
    """zram's comp_algorithm lists all, the one in use in brackets: 'lzo [lz4] zstd' -> 'lz4'."""
    if not algorithms:
        return None
    for word in algorithms.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return algorithms


_libc = None


def _birth_time_ns(path: str) -> int | None:
    """statx(2) birth time in ns (glibc >= 2.28; None where the filesystem has none)."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        statx = _libc.statx
    except (OSError, AttributeError):
        return None
    buf = ctypes.create_string_buffer(256)
    if statx(_AT_FDCWD, os.fsencode(path), 0, _STATX_BTIME, buf) != 0:
        return None
    mask = struct.unpack_from("=I", buf, 0)[0]
    if not mask & _STATX_BTIME:
        return None
    sec, nsec = struct.unpack_from("=qI", buf, 0x50)  # struct statx: stx_btime at offset 0x50
    return sec * 1_000_000_000 + nsec


def _generation(path: str) -> int | None:
    """The inode generation (ext4, xfs, btrfs draw a new one for every inode allocated)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        # the kernel writes an int (the u32 i_generation) into the long it is given
        return struct.unpack_from("=I", fcntl.ioctl(fd, _FS_IOC_GETVERSION, bytes(8)))[0]
    except OSError:
        return None
    finally:
        os.close(fd)
