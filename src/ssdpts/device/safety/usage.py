"""Who uses a block device, as the kernel tells it: mounts (/proc/self/mountinfo), swap
(/proc/swaps), holders stacked on it (dm, md, LVM: sysfs holders/ and slaves/), and the disks the
running system lives on. Read-only; ``proc`` is the procfs root to read (tests give a fake one).
guard.py turns these facts into refusals.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from ssdpts.device import target as tgt


# --- holders / system disks -----------------------------------------------------------------------


def holders(name: str) -> list[str]:
    try:
        return sorted(os.listdir(os.path.join(tgt.sysfs_block_dir(name), "holders")))
    except OSError:
        return []


def holders_closure(names: Iterable[str]) -> list[str]:
    """Every device stacked on ``names``, transitively (dm on md on a partition, ...)."""
    seen: list[str] = []
    todo = list(names)
    while todo:
        for h in holders(todo.pop()):
            if h not in seen:
                seen.append(h)
                todo.append(h)
    return seen


def holder_label(holder: str) -> str:
    dm_name = tgt.read_sysfs(os.path.join(tgt.sysfs_block_dir(holder), "dm", "name"))
    return f"/dev/{holder} ({dm_name})" if dm_name else f"/dev/{holder}"


def whole_disks(name: str, proc: str, _seen: set[str] | None = None) -> set[str]:
    """The whole disks under kernel device ``name``: partition → disk, dm/md → slaves, loop → the
    disk holding its backing file. Used to find what the running system lives on."""
    seen = _seen if _seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    if tgt.is_partition_name(name):
        return whole_disks(tgt.disk_of(name), proc, seen)
    try:
        slaves = sorted(os.listdir(os.path.join(tgt.sysfs_block_dir(name), "slaves")))
    except OSError:
        slaves = []
    if slaves:
        return set().union(*(whole_disks(s, proc, seen) for s in slaves))
    backing = tgt.loop_backing_file(name) if name.startswith("loop") else None
    if backing:
        below = block_name_of_path(backing.removesuffix(" (deleted)"), proc)
        if below:
            return {name} | whole_disks(below, proc, seen)
    return {name}


def block_name_of_path(path: str, proc: str) -> str | None:
    """Kernel name of the block device holding the filesystem that ``path`` is on."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    name = tgt.name_for_devnum(os.major(st.st_dev), os.minor(st.st_dev))
    if name:
        return name
    # btrfs and friends report an anonymous st_dev: use the mount's source device instead.
    best: tuple[int, str] | None = None
    for entry in mountinfo(proc):
        mp = entry["mountpoint"]
        if (path == mp or path.startswith(mp.rstrip("/") + "/")) and (best is None or len(mp) >= best[0]):
            name = source_name(entry["source"])
            if name:
                best = (len(mp), name)
    return best[1] if best else None


def system_disks(mountpoints: Iterable[str], proc: str) -> dict[str, list[str]]:
    """{whole disk kernel name: [the system ``mountpoints`` on it]}."""
    result: dict[str, list[str]] = {}
    for mp in mountpoints:
        if not os.path.exists(mp):
            continue
        name = block_name_of_path(mp, proc)
        for disk in sorted(whole_disks(name, proc)) if name else []:
            result.setdefault(disk, []).append(mp)
    return result


# --- /proc parsing --------------------------------------------------------------------------------


def unescape(field_text: str) -> str:
    # /proc/self/mountinfo and /proc/swaps escape space, tab, newline and backslash as \ooo.
    out, i = [], 0
    while i < len(field_text):
        octal = field_text[i + 1 : i + 4]
        if field_text[i] == "\\" and len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(chr(int(octal, 8)))
            i += 4
        else:
            out.append(field_text[i])
            i += 1
    return "".join(out)


def mountinfo(proc: str, pid: str = "self") -> list[dict[str, str]]:
    """The mounts of process ``pid``'s mount namespace (``self``: ours)."""
    try:
        with open(os.path.join(proc, pid, "mountinfo"), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(rest) < 2:
            continue
        entries.append({
            "devnum": fields[2], "mountpoint": unescape(fields[4]),
            "fstype": rest[0], "source": unescape(rest[1]),
        })
    return entries


def rdev_of(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" if stat.S_ISBLK(st.st_mode) else None


def source_name(source: str) -> str | None:
    if not source.startswith("/"):
        return None
    devnum = rdev_of(source)
    if devnum is None:
        return None
    major, minor = devnum.split(":")
    return tgt.name_for_devnum(int(major), int(minor))


def mounts_of(names: list[str], proc: str) -> list[tuple[str, str, str]]:
    """(kernel name, mount point, fstype) for every mount of ``names``.

    Matched by major:minor (covers bind mounts, which repeat it) and by the mount's source device
    (covers btrfs, whose major:minor is anonymous). Mounted multi-device btrfs members are found
    through /sys/fs/btrfs/*/devices.
    """
    by_devnum = {d: n for n in names if (d := tgt.devnum_of(n))}
    found: list[tuple[str, str, str]] = []
    for entry in mountinfo(proc):
        n = by_devnum.get(entry["devnum"])
        if n is None and entry["source"].startswith("/"):
            n = by_devnum.get(rdev_of(entry["source"]) or "")
        if n is not None:
            found.append((n, entry["mountpoint"], entry["fstype"]))
    btrfs_root = os.path.join(tgt.SYSFS, "fs", "btrfs")
    try:
        fsids = os.listdir(btrfs_root)
    except OSError:
        fsids = []
    for fsid in fsids:
        for n in names:
            if os.path.exists(os.path.join(btrfs_root, fsid, "devices", n)) and not any(f[0] == n for f in found):
                found.append((n, f"a mounted btrfs filesystem ({fsid})", "btrfs"))
    return found


def mounts_elsewhere(names: list[str], proc: str) -> list[tuple[str, str, str, str]]:
    """(kernel name, mount point, PID, command) for each mount of ``names`` in a mount namespace
    other than this process's: a container's, ``unshare -m``'s. Every process's
    /proc/PID/mountinfo is read once per namespace (the first process found in it names it).
    Matched by major:minor only: a source path means nothing outside its namespace. Read for the
    words of a refusal (the kernel's exclusive claim is what finds such a user)."""
    by_devnum = {d: n for n in names if (d := tgt.devnum_of(n))}
    if not by_devnum:
        return []
    try:
        seen = {os.readlink(os.path.join(proc, "self", "ns", "mnt"))}
        pids = sorted((p for p in os.listdir(proc) if p.isdigit()), key=int)
    except OSError:
        return []
    found: list[tuple[str, str, str, str]] = []
    for pid in pids:
        try:
            ns = os.readlink(os.path.join(proc, pid, "ns", "mnt"))
        except OSError:
            continue  # gone, or a kernel thread
        if ns in seen:
            continue
        seen.add(ns)
        for entry in mountinfo(proc, pid):
            n = by_devnum.get(entry["devnum"])
            if n is not None:
                found.append((n, entry["mountpoint"], pid, _command_of(proc, pid)))
    return found


def _command_of(proc: str, pid: str) -> str:
    try:
        with open(os.path.join(proc, pid, "comm"), encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def busy_because(name: str, proc: str) -> str:
    """Why the kernel refuses an exclusive open of kernel device ``name``, as far as can be told
    from here: a mount (in this mount namespace or another), swap, a holder stacked on it; else a
    program holding it exclusively. One phrase, for a refusal ("X, which is <phrase>")."""
    here = next(iter(mounts_of([name], proc)), None)
    if here is not None:
        return f"mounted at {here[1]}"
    there = next(iter(mounts_elsewhere([name], proc)), None)
    if there is not None:
        _n, mp, pid, comm = there
        return f"mounted at {mp} in another mount namespace (a container's? that of PID {pid}, {comm})"
    if swap_devices([name], proc):
        return "in use as swap"
    above = holders(name)
    if above:
        return f"in use by {holder_label(above[0])}"
    return HELD_UNSEEN


# What holds a device exclusively when nothing here shows who (busy_because's last answer).
HELD_UNSEEN = ("held exclusively by a program or mounted where ssdpts cannot see (the kernel refused an "
               "exclusive open: RAID/LVM/ZFS or another program)")


def same_file(a: str, b: os.stat_result) -> bool:
    """True when path ``a`` names the file ``b`` describes (device and inode: a hard link, a bind
    mount or another path to the same file is the same file)."""
    try:
        st = os.stat(a)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (b.st_dev, b.st_ino)


def swap_entries(proc: str) -> list[str]:
    try:
        with open(os.path.join(proc, "swaps"), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()[1:]  # first line is the header
    except OSError:
        return []
    return [unescape(line.split()[0]) for line in lines if line.split()]


def swap_devices(names: list[str], proc: str) -> list[str]:
    by_devnum = {d: n for n in names if (d := tgt.devnum_of(n))}
    found = []
    for path in swap_entries(proc):
        n = by_devnum.get(rdev_of(path) or "")
        if n is not None:
            found.append(n)
    return found
