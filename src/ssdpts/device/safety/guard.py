"""The guard every write passes first (docs/design.md#safety).

Two levels of "no":

* **Refusals** (``Verdict.reasons``) no confirmation can override: the device, one of its
  partitions or anything stacked on it is mounted or swap; it backs LVM/md/dm/crypt (holders) or
  carries a ZFS/LVM/md member signature; it holds the running system; it is read-only; it is too
  small; the kernel refuses an exclusive open (in use somewhere we cannot see, e.g. another mount
  namespace or an imported ZFS pool). Files: an existing file ssdpts did not create, no free space,
  a path under /dev, /proc or /sys that is not a block device.
* **Confirmation** (``Verdict.needs_confirmation``): every block device, because a test destroys
  everything on it. ``Verdict.existing_data`` lists what was found on it (partition table,
  filesystem signatures) so the refusal or the prompt can say exactly what would be lost. Finding
  data does not add a new rule: the same confirmation that names the device (its serial or path)
  allows it; without one, the refusal names the data.

Everything here only reads: sysfs, /proc, ``stat``, ``blkid -p`` and ``lsblk`` (both read-only),
and one ``open(O_RDONLY | O_EXCL)`` that asks the kernel whether anyone holds the device. A disk
that holds the running system is not even opened or probed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ssdpts.device import target as tgt
from ssdpts.device.marker import changes as marker_changes
from ssdpts.device.marker import marker_path, marker_status
from ssdpts.device.safety import held
from ssdpts.device.safety import locks
from ssdpts.device.safety import stack as stack_mod
from ssdpts.device.safety import usage
from ssdpts.device.safety.signatures import _describe_signature, _member_reason, probe_signatures
from ssdpts.device.target import Target
from ssdpts.errors import UserError

# Read at call time so unit tests can point it at a fake tree (like target.SYSFS).
PROC = "/proc"

# Mount points whose backing disks hold the running system.
SYSTEM_MOUNTPOINTS = ("/", "/boot", "/boot/efi", "/usr", "/var")

# Paths where a "file" target would be a pseudo-file or a device node created by accident.
_PSEUDO_ROOTS = ("/dev", "/proc", "/sys")

_BLKROGET = 0x125E  # _IO(0x12, 94): read-only flag of a block device

@dataclass(frozen=True, slots=True)
class Verdict:
    """Result of :func:`assess`.

    usable: no refusal found (confirmation may still be needed).
    reasons: refusal sentences, each one line saying what is wrong and what to do next.
    needs_confirmation: True for every block device (its data will be destroyed).
    details: JSON-safe facts that led to the verdict (mounts, holders, signatures, ...).
    existing_data: what was found on a block device (partition table, filesystem signatures),
        one phrase each such as "/dev/loop3 holds an ext4 filesystem".
    """

    usable: bool
    reasons: tuple[str, ...]
    needs_confirmation: bool
    details: dict[str, Any]
    existing_data: tuple[str, ...] = field(default=())


# --- public API -----------------------------------------------------------------------------------


def assess(target: Target, *, needed_bytes: int = 0, probe: bool = True) -> Verdict:
    """Inspect ``target`` read-only and say whether a test may write to it.

    ``probe=False``: without reading the device (no blkid signatures, no exclusive-open probe) — the
    cheap re-check between rounds, while the run's own exclusive claim keeps other claimants out."""
    if target.kind == "file":
        return _assess_file(target, needed_bytes, probe=probe)
    return _assess_block(target, needed_bytes, probe=probe)


def check_writable(
    target: Target,
    *,
    needed_bytes: int,
    confirm: str | None,
    interactive: bool = False,
    ask: Callable[[str], str] = input,
) -> None:
    """Raise UserError unless writing ``needed_bytes`` to ``target`` is allowed and confirmed.

    Block devices need a confirmation naming this exact device: ``confirm`` (from
    ``--destroy-data-on``) equal to its path, its resolved path, or its serial; or, when
    ``interactive``, the serial (path when it has none) typed at the prompt. A partition is
    confirmed by its path only, because the serial names the whole disk.
    """
    verdict = assess(target, needed_bytes=needed_bytes)
    if not verdict.usable:
        raise UserError(verdict.reasons[0])
    if confirm is not None and not confirm.strip():
        raise UserError(
            f"--destroy-data-on is empty: pass --destroy-data-on={confirm_token(target)} to confirm"
        )
    if confirm is not None:
        if not confirmation_matches(target, confirm):
            raise UserError(_mismatch_message(target, confirm))
        return
    if target.kind == "file" and not verdict.needs_confirmation:
        return  # files are safe targets: ssdpts created them, and nothing changed them since (the marker)

    token = confirm_token(target)
    if not interactive:
        if verdict.existing_data:
            raise UserError(
                f"{'; '.join(verdict.existing_data)}: pass --destroy-data-on={token} "
                "to destroy it, or pick another target"
            )
        raise UserError(
            f"a test destroys all data on {target.path}: "
            f"pass --destroy-data-on={token} to confirm, or pick another target"
        )
    try:
        answer = ask(_prompt(target, verdict, token))
    except EOFError:
        answer = ""
    answer = (answer or "").strip()
    if not answer or not (answer == token or confirmation_matches(target, answer)):
        typed = f"typed {answer!r}" if answer else "nothing typed"
        raise UserError(
            f"{typed}, which is not {token}: nothing was written; "
            f"type {token} exactly, or pass --destroy-data-on={token}"
        )


def preview(target: Target, *, needed_bytes: int, confirm: str | None) -> tuple[bool, str]:
    """The verdict ``run`` would give, without asking anything or holding anything: (False, the
    refusal in run's words) where run would refuse whatever is typed at its prompt; (True, what run
    will need or do) otherwise. ``ssdpts plan`` prints it before the plan."""
    try:
        check_writable(target, needed_bytes=needed_bytes, confirm=confirm, interactive=False)
    except UserError as exc:
        verdict = assess(target, needed_bytes=needed_bytes)
        if not verdict.usable or confirm is not None:
            return False, str(exc)
        return True, f"usable once confirmed: {exc}"
    if confirm is not None:
        return True, f"usable: --destroy-data-on {confirm.strip()} confirms the destruction of {target.path}"
    if target.kind == "file":
        return True, f"usable: {target.path} is " + ("ssdpts's own file" if target.exists else "a new file ssdpts creates")
    return True, f"usable: {target.path}"


def confirm_token(target: Target) -> str:
    """What the user must type or pass: the serial of a whole disk, else the path."""
    if target.kind == "block" and target.serial and not target.is_partition:
        return target.serial
    return target.path


def confirmation_matches(target: Target, confirm: str) -> bool:
    """True when ``confirm`` names ``target``: its path, resolved path, or (whole disk) serial.

    A path that resolves to the same device node (another symlink, /dev/disk/by-id/...) counts:
    it names the same device. Serial comparison is exact (case and all) on purpose.
    """
    text = confirm.strip()
    if not text:
        return False
    if target.kind == "block" and not target.is_partition and target.serial and text == target.serial:
        return True
    paths = {target.path, target.real_path, os.path.normpath(target.path)}
    if text in paths or os.path.normpath(text) in paths:
        return True
    if "/" not in text and target.kind == "block":
        return False  # a bare word is a serial; never resolve it against the cwd for a device
    resolved = os.path.realpath(text)
    if resolved == target.real_path:
        return True
    if target.kind == "block":
        # Two device nodes for one device (e.g. a copy made with mknod): same major:minor.
        try:
            mine, theirs = os.stat(target.real_path), os.stat(resolved)
        except OSError:
            return False
        return stat.S_ISBLK(theirs.st_mode) and theirs.st_rdev == mine.st_rdev
    return False


# --- files ----------------------------------------------------------------------------------------


def _assess_file(target: Target, needed_bytes: int, *, probe: bool = True) -> Verdict:
    reasons: list[str] = []
    existing: list[str] = []  # a change since ssdpts last wrote the file: confirm again to write it
    real = target.real_path
    details: dict[str, Any] = {"kind": "file", "real_path": real, "exists": target.exists}

    root = next((r for r in _PSEUDO_ROOTS if real == r or real.startswith(r + "/")), None)
    if root is not None:
        reasons.append(
            f"{target.path} is under {root} but is not a block device: "
            "give a block device, or a file on a real filesystem"
        )
        return Verdict(False, tuple(reasons), False, details)

    allocated = 0
    if target.exists:
        try:
            allocated = os.stat(real).st_blocks * 512
        except OSError:
            pass
        status = marker_status(real)
        if status == "ours" and probe:  # between rounds the run itself is writing it
            existing.extend(marker_changes(real))
        if status == "none":
            reasons.append(
                f"{target.path} exists and was not created by ssdpts (no {marker_path(real)}): "
                "delete it yourself or give a new file path with --size"
            )
        elif status == "other":
            reasons.append(
                f"{target.path} is not the file ssdpts created there (its inode, size or birth time differ from "
                f"{marker_path(real)}): it is someone else's file now; delete it yourself or give a new file path"
            )
        elif status == "old":
            reasons.append(
                f"{marker_path(real)} was written by an older ssdpts and cannot tell its file from another: "
                f"delete {target.path} and its marker, then let ssdpts create the file again with --size"
            )
        swap = _active_swap_file(real)
        if swap is not None:
            named = "" if swap == real else f" (it is {swap}, by another name)"
            reasons.append(f"{target.path} is an active swap file{named}: run swapoff {swap} or pick another file")
        loop = _loop_backed_by(real)
        if loop:
            reasons.append(f"{target.path} backs /dev/{loop}: detach it (losetup -d /dev/{loop}) or pick another file")

    directory = os.path.dirname(real) or "."
    try:
        vfs = os.statvfs(directory)
    except OSError as exc:
        reasons.append(f"cannot inspect {directory}: {exc.strerror}: pick another directory")
        return Verdict(False, tuple(reasons), False, details)
    if vfs.f_flag & os.ST_RDONLY:
        reasons.append(f"{directory} is on a read-only filesystem: pick a writable directory")
    elif not os.access(directory, os.W_OK):
        reasons.append(f"cannot write to {directory}: pick a directory you can write to")

    size = target.size_bytes
    if size <= 0:
        reasons.append(f"{target.path} is empty (0 bytes): give its size with --size")
    elif needed_bytes > size:
        reasons.append(
            f"{target.path} is {_fmt_bytes(size)}, less than the {_fmt_bytes(needed_bytes)} "
            "this test needs: give a larger --size"
        )
    # The file will be filled to its full size (preconditioning writes all of it), so the space
    # it does not already occupy must be free now; discovering ENOSPC in hour 3 helps nobody.
    free = vfs.f_bavail * vfs.f_frsize
    missing = max(size, needed_bytes) - allocated
    details.update(free_bytes=free, allocated_bytes=allocated, size_bytes=size)
    if missing > free:
        reasons.append(
            f"not enough free space for {target.path}: {_fmt_bytes(free)} free in {directory}, "
            f"{_fmt_bytes(missing)} more needed: free some space, give a smaller --size or pick another directory"
        )
    return Verdict(not reasons, tuple(reasons), bool(existing), details, tuple(existing))


def _active_swap_file(real_path: str) -> str | None:
    """The active swap file that ``real_path`` is, by its identity (a hard link or another path to
    it is the same file), as /proc/swaps names it; None when it is none."""
    try:
        st = os.stat(real_path)
    except OSError:
        return None
    return next((p for p in _swap_entries() if usage.same_file(p, st)), None)


def _loop_backed_by(real_path: str) -> str | None:
    """A loop device resting on this file, by its identity (a hard link, a bind mount or another
    path to the same file is the same file), else by the path the kernel names."""
    try:
        loops = stack_mod.loops_on_file(os.stat(real_path))
    except OSError:
        loops = []
    if loops:
        return loops[0]
    try:
        names = os.listdir(os.path.join(tgt.SYSFS, "block"))
    except OSError:
        return None
    for name in sorted(names):
        backing = tgt.loop_backing_file(name) if name.startswith("loop") else None
        # The kernel appends " (deleted)" when the file was unlinked; compare the path part.
        if backing and backing.removesuffix(" (deleted)") == real_path:
            return name
    return None


# --- block devices --------------------------------------------------------------------------------


def _assess_block(target: Target, needed_bytes: int, *, probe: bool = True) -> Verdict:
    """Every refusal of a block device, in the order they are reported: each rule a few lines on
    the same device stack. One piece: split, the order of the verdict's reasons would be implicit."""
    name = target.name
    disk = target.parent or tgt.disk_of(name)
    parts = [] if target.is_partition else tgt.partitions_of(name)
    members = [name, *parts]  # what the test overwrites
    stacked = stack_mod.above(members)  # what is built on top of it (dm, md, loop devices, ...)
    reasons: list[str] = []
    existing: list[str] = []
    details: dict[str, Any] = {
        "kind": "block", "name": name, "disk": disk, "partitions": parts, "holders": stacked,
    }

    def dev(n: str) -> str:
        return target.path if n == name else f"/dev/{n}"

    # 1. The running system: refuse the disk behind /, /boot, ... and any partition of it.
    system = _system_disks()
    details["system_disks"] = dict(system)
    if disk in system:
        on = target.path if disk == name else f"{target.path} is a partition of /dev/{disk}, which"
        reasons.append(
            f"{on} holds the running system (it backs {', '.join(system[disk])}): pick another target"
        )

    # 2. Mounted: the device, its partitions, anything stacked on it; a partition's whole disk too.
    watched = members + stacked + ([disk] if target.is_partition else [])
    mounts = _mounts_of(watched)
    details["mounts"] = [{"device": f"/dev/{n}", "mountpoint": mp, "fstype": fs} for n, mp, fs in mounts]
    for n, mp, _fs in mounts:
        reasons.append(f"{_describe(n, name, disk, target.path)} is mounted at {mp}: unmount it or pick another target")

    # 3. Swap.
    swaps = _swap_devices(members + stacked)
    details["swaps"] = [f"/dev/{n}" for n in swaps]
    for n in swaps:
        reasons.append(f"{_describe(n, name, disk, target.path)} is in use as swap: run swapoff /dev/{n} or pick another target")

    # 4. Holders: LVM, md, dm-crypt, multipath, bcache sit on the device.
    for n in members:
        for holder in usage.holders(n):
            reasons.append(
                f"{_describe(n, name, disk, target.path)} is in use by {usage.holder_label(holder)} "
                "(LVM, RAID, device-mapper or encryption built on it): remove that or pick another target"
            )

    # 5. What it rests on (device/safety/stack.py): a loop device's backing device or file, a partition's
    #    disk, device-mapper members, down to the bottom; each checked as the target is.
    stack = stack_mod.resolve(name)
    details["stack"] = [{"device": f"/dev/{la.name}", "on_top_of": f"/dev/{la.above}", "how": la.how}
                        for la in stack.layers] + [{"file": b.path, "identity": b.file_id, "loop": f"/dev/{b.loop}"}
                                                   for b in stack.files]
    reasons.extend(stack_mod.reasons(stack, target.path, system, PROC))

    # 6. Read-only, empty, too small.
    if target.read_only or any(tgt.read_sysfs(os.path.join(tgt.sysfs_block_dir(n), "ro")) == "1" for n in members):
        reasons.append(f"{target.path} is read-only: make it writable or pick another target")
    if target.size_bytes <= 0:
        reasons.append(f"{target.path} has no capacity (0 bytes): pick another target")
    elif needed_bytes > target.size_bytes:
        reasons.append(
            f"{target.path} is {_fmt_bytes(target.size_bytes)}, less than the "
            f"{_fmt_bytes(needed_bytes)} this test needs: pick a larger target"
        )

    # 7. Signatures and the exclusive-open probe. Skipped for the system disk: it is refused
    #    already and we do not even open it read-only. Skipped between rounds (probe=False): the
    #    run's exclusive claim keeps every other claimant out, and blkid would read the device.
    if disk not in system and probe:
        signatures: dict[str, dict[str, str]] = {}
        errors: list[str] = []
        for n in members:
            node = dev(n)
            sig, err = probe_signatures(target.real_path if n == name else node)
            if err:
                errors.append(f"{node}: {err}")
            if sig:
                signatures[node] = sig
                member = _member_reason(node, sig)
                if member:
                    reasons.append(member)
                existing.extend(_describe_signature(node, sig, parts if n == name else []))
        if parts and not any("partition table" in e for e in existing):
            existing.insert(0, f"{target.path} has {_plural(len(parts), 'partition')} ({', '.join(parts)})")
        details["signatures"] = signatures
        if not reasons:
            busy, ro, probe_errors = _exclusive_probe({n: (target.real_path if n == name else f"/dev/{n}")
                                                       for n in members + [m for m in stacked if stack_mod.is_loop(m)]})
            errors.extend(probe_errors)
            holder = _ssdpts_holder(target) if busy else None
            for node in busy:
                if holder is not None:
                    reasons.append(f"{node} is in use by {holder.describe()}: wait for it to finish or stop it")
                    continue
                shown = node
                if node not in (target.real_path, target.path) and os.path.basename(node) in stacked:
                    shown = f"{node} (built on {target.path})"
                reasons.append(f"{shown} is in use ({_busy_use(node)}): stop that user or pick another target")
            if ro and not target.read_only:
                reasons.append(f"{target.path} is read-only: make it writable or pick another target")
            reasons.extend(_probe_below(target, stack, system, holder if busy else None, errors))
            reasons.extend(_probe_ways(target, stack, system, probed={*members, *stacked}, errors=errors))
        details["probe_errors"] = errors

    return Verdict(not reasons, tuple(dict.fromkeys(reasons)), True, details, tuple(existing))


def _probe_below(target: Target, stack: stack_mod.Stack, system: dict, holder, errors: list[str]) -> list[str]:
    """The exclusive-open probe of each backing device under the target (a mount in another
    namespace, a program holding it), and another ssdpts run holding any device or file of the
    stack (its lock, device/safety/claim.py)."""
    out = []
    below = {la.name: f"/dev/{la.name}" for la in stack.layers
             if la.how == "backing" and tgt.disk_of(la.name) not in system}
    busy, _ro, probe_errors = _exclusive_probe(below)
    errors.extend(probe_errors)
    if holder is None:
        holder = _ssdpts_holder(target)
        if holder is not None and holder.pid != os.getpid():
            out.append(f"{target.path} is in use by {holder.describe()}: wait for it to finish or stop it")
    for node in busy:
        lead = stack.rests_on(os.path.basename(node), target.path)
        if holder is not None:
            out.append(f"{lead}, which is in use by {holder.describe()}: wait for it to finish or stop it")
        else:
            out.append(f"{lead}, which is in use ({_busy_use(node)}): stop that user or pick another target")
    return out


def _busy_use(node: str) -> str:
    """What holds a node (a path) the kernel refused us exclusively: usage.busy_because by its name."""
    try:
        st = os.stat(node)
        name = tgt.name_for_devnum(os.major(st.st_rdev), os.minor(st.st_rdev))
    except OSError:
        name = None
    return usage.busy_because(name, PROC) if name else usage.HELD_UNSEEN


def _probe_ways(target: Target, stack: stack_mod.Stack, system: dict, probed: set[str],
                errors: list[str]) -> list[str]:
    """The exclusive-open probe of every other way to the target's storage (device/safety/stack.py
    ``ways``: another loop device over the same file or device, at any offset, and loop devices
    resting on any of them): the kernel's claim sees a mount in any mount namespace, which this
    process's mount table does not. Each busy one is refused, naming what uses it (its mount
    found in whichever namespace has it)."""
    out = []
    for way in stack_mod.ways(target.name, target.path, frozenset(system), stack):
        if way.how == "below" or way.name in probed:
            continue  # _probe_below and the target's own probe had them
        busy, _ro, probe_errors = _exclusive_probe({way.name: f"/dev/{way.name}"})
        errors.extend(probe_errors)
        if busy:
            out.append(f"{way.text}, which is {usage.busy_because(way.name, PROC)}: "
                       "stop that use or pick another target")
    return out


def _describe(n: str, name: str, disk: str, path: str) -> str:
    if n == name:
        return path
    if n == disk:
        return f"/dev/{n} (the disk {path} is on)"
    if tgt.is_partition_name(n) and tgt.disk_of(n) == name:
        return f"/dev/{n} (a partition of {path})"
    return f"/dev/{n} (built on {path})"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _fmt_bytes(n: int) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit} ({n} bytes)"
    return f"{n} bytes"


# --- holders, mounts, swap (device/safety/usage.py), read from PROC and SYSTEM_MOUNTPOINTS at call time ---

def whole_disks(name: str) -> set[str]:
    """The whole disks under kernel device ``name`` (usage.whole_disks)."""
    return usage.whole_disks(name, PROC)


def system_disk_names() -> set[str]:
    """The whole disks the running system lives on (kernel names)."""
    return set(_system_disks())


def _system_disks() -> dict[str, list[str]]:
    """{whole disk kernel name: [system mount points on it]}."""
    return usage.system_disks(SYSTEM_MOUNTPOINTS, PROC)


def _mounts_of(names: list[str]) -> list[tuple[str, str, str]]:
    return usage.mounts_of(names, PROC)


def _swap_entries() -> list[str]:
    return usage.swap_entries(PROC)


def _swap_devices(names: list[str]) -> list[str]:
    return usage.swap_devices(names, PROC)


# --- the exclusive probe ----------------------------------------------------------------------------


def _exclusive_probe(nodes: dict[str, str]) -> tuple[list[str], bool, list[str]]:
    """Open each node O_RDONLY|O_EXCL: EBUSY means the kernel knows a user we may not see
    (a mount in another namespace, an imported ZFS pool, md, a program holding it exclusively).
    Also reads BLKROGET on the way. Returns (busy nodes, any read-only, errors)."""
    busy, errors, read_only = [], [], False
    for node in nodes.values():
        if holds(node):
            continue  # our own run holds it exclusively: nobody else can, and the probe would find us
        fd, exc = held.open_exclusive(node)
        if fd is None:
            if exc is not None and exc.errno == errno.EBUSY:
                busy.append(node)
            else:
                errors.append(f"{node}: exclusive open: {exc.strerror if exc else '?'}")
            continue
        try:
            buf = fcntl.ioctl(fd, _BLKROGET, struct.pack("i", 0))
            read_only = read_only or struct.unpack("i", buf)[0] != 0
        except OSError as exc:
            errors.append(f"{node}: BLKROGET: {exc.strerror}")
        finally:
            os.close(fd)
    return busy, read_only, errors


def _ssdpts_holder(target: Target):
    """Another ssdpts process holding the target's lock (this process's own lock, taken before its
    verdict, is not another's)."""
    holder = locks.holder_of(target)
    return None if holder is None or holder.pid == os.getpid() else holder


def holds(node: str) -> bool:
    """True when this process holds the kernel claim on ``node``, its disk, or (for a disk) the disk
    ``node`` is a partition of."""
    try:
        st = os.stat(node)
    except OSError:
        return False
    if not stat.S_ISBLK(st.st_mode):
        return False
    if st.st_rdev in held.HELD:
        return True
    name = tgt.name_for_devnum(os.major(st.st_rdev), os.minor(st.st_rdev))
    if name and tgt.is_partition_name(name):
        disk_dev = tgt.devnum_of(tgt.disk_of(name))
        return any(f"{os.major(r)}:{os.minor(r)}" == disk_dev for r in held.HELD)
    return False


# --- messages -------------------------------------------------------------------------------------


def _mismatch_message(target: Target, confirm: str) -> str:
    ident = f"serial {target.serial}" if target.serial else "no serial"
    return (
        f"--destroy-data-on names {confirm.strip()} but the target is {target.path} ({ident}): "
        f"pass --destroy-data-on={confirm_token(target)} to destroy the data on {target.path}, "
        "or pick the target you meant"
    )


def _prompt(target: Target, verdict: Verdict, token: str) -> str:
    what = " ".join(x for x in (target.vendor, target.model) if x) or target.name
    found = f" Found: {'; '.join(verdict.existing_data)}." if verdict.existing_data else ""
    noun = "serial" if token == target.serial else "path"
    return (
        f"ALL DATA on {target.path} ({what}, {_fmt_bytes(target.size_bytes)}) will be destroyed."
        f"{found} Type its {noun} ({token}) to continue: "
    )
