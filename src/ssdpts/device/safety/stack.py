"""What a block device rests on: every device and file a write to it reaches.

A test writes its target, and through it whatever the target is built on: a partition's whole disk
holds it, a loop device writes its backing file or backing block device (which may be a loop device
or a partition itself), device-mapper and md write their members ("slaves" in sysfs). The kernel
keeps no holder link from a loop device to a block device it rests on (``losetup -f /dev/loop3``
leaves ``/sys/block/loop3/holders`` empty), so nothing else tells that writing ``/dev/loop7``
destroys the filesystem mounted from ``/dev/loop3``. :func:`resolve` walks the whole stack down;
guard.py applies every check to every device in it, claim.py locks every one of them.

A backing file is known by its identity — the device and inode the kernel holds open
(``LOOP_GET_STATUS64``), not the path it was opened by — so a hard link, a bind mount or a rename
of the same file is the same file. A backing block device is known by its major:minor (a node made
with ``mknod``, a symlink: the same device).

Everything here only reads: sysfs, ``stat`` and one ioctl on a read-only, non-exclusive descriptor
of each loop device.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from dataclasses import dataclass

from ssdpts.device import target as tgt
from ssdpts.device.safety import usage

_LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit (u64), then fields not read here
_LOOP_INFO64 = struct.Struct("=QQQQQIIII64s64s32sQQ")


@dataclass(frozen=True, slots=True)
class Backing:
    """What one loop device rests on: a block device (``block``: its kernel name) or a regular file
    (``file_id``: "major:minor:inode" of the file the kernel holds), with the path the kernel names."""

    loop: str
    path: str | None
    block: str | None = None
    file_id: str | None = None


@dataclass(frozen=True, slots=True)
class Layer:
    """One block device under the target. ``how``: "backing" (a loop device's backing device),
    "member" (a device-mapper or md member), "disk" (the whole disk a partition is on)."""

    name: str
    above: str
    how: str

    @property
    def written(self) -> bool:
        """The target's writes land on it (a partition's whole disk holds it, but only the
        partition's range is written)."""
        return self.how != "disk"


@dataclass(frozen=True, slots=True)
class Stack:
    name: str
    layers: tuple[Layer, ...]
    backings: tuple[Backing, ...]

    @property
    def names(self) -> list[str]:
        """The target and every block device under it."""
        return [self.name, *(layer.name for layer in self.layers)]

    @property
    def files(self) -> list[Backing]:
        """The regular files under the target (backing files of loop devices in the stack)."""
        return [b for b in self.backings if b.file_id]

    def whole_disks(self) -> list[str]:
        """Every whole disk in the stack (a partition's disk in its place): what the ssdpts lock keys."""
        out: list[str] = []
        for n in self.names:
            d = tgt.disk_of(n)
            if d not in out:
                out.append(d)
        return out

    def rests_on(self, name: str, top: str | None = None) -> str:
        """'/dev/loop7 rests on /dev/loop3' (through every device between, when there are any)."""
        chain = [name]
        by_name = {layer.name: layer for layer in self.layers}
        while chain[-1] in by_name and by_name[chain[-1]].above != self.name:
            chain.append(by_name[chain[-1]].above)
        between = "".join(f" on /dev/{n}" for n in reversed(chain[1:]))
        return f"{top or '/dev/' + self.name} rests{between} on /dev/{name}"

    def file_rests_on(self, b: Backing, top: str | None = None) -> str:
        where = f"/dev/{b.loop}" if b.loop != self.name else None
        path = b.path.removesuffix(" (deleted)") if b.path else f"the file {b.file_id}"
        if where is None:
            return f"{top or '/dev/' + self.name} rests on the file {path}"
        return f"{self.rests_on(b.loop, top)}, which rests on the file {path}"


def is_loop(name: str) -> bool:
    return os.path.isdir(os.path.join(tgt.sysfs_block_dir(name), "loop"))


def file_id_of(st: os.stat_result) -> str:
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}:{st.st_ino}"


def backing_of(name: str) -> Backing | None:
    """What loop device ``name`` rests on, as the kernel holds it; None when it is not attached."""
    path = tgt.loop_backing_file(name)
    if path is None:
        return None
    try:
        fd = os.open(f"/dev/{name}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        fd = None
    if fd is not None:
        try:
            raw = fcntl.ioctl(fd, _LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size))
            dev, ino, rdev = _LOOP_INFO64.unpack(raw)[:3]
        except OSError:
            raw = None
        finally:
            os.close(fd)
        if raw is not None:
            if rdev:
                below = tgt.name_for_devnum(os.major(rdev), os.minor(rdev))
                return Backing(name, path, block=below or f"{os.major(rdev)}:{os.minor(rdev)}")
            return Backing(name, path, file_id=f"{os.major(dev)}:{os.minor(dev)}:{ino}")
    # No ioctl (no node, no permission): the path the kernel names, as it is now.
    try:
        st = os.stat(path.removesuffix(" (deleted)"))
    except OSError:
        return Backing(name, path, file_id=f"path:{path}")
    if stat.S_ISBLK(st.st_mode):
        below = tgt.name_for_devnum(os.major(st.st_rdev), os.minor(st.st_rdev))
        return Backing(name, path, block=below or f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    return Backing(name, path, file_id=file_id_of(st))


def _members(name: str) -> list[str]:
    try:
        return sorted(os.listdir(os.path.join(tgt.sysfs_block_dir(name), "slaves")))
    except OSError:
        return []


def resolve(name: str) -> Stack:
    """Every block device and file under kernel device ``name``, top down."""
    layers: list[Layer] = []
    backings: list[Backing] = []
    seen = {name}
    todo = [name]

    def add(n: str, above: str, how: str) -> None:
        if n not in seen:
            seen.add(n)
            layers.append(Layer(n, above, how))
            todo.append(n)

    while todo:
        n = todo.pop(0)
        if tgt.is_partition_name(n):
            add(tgt.disk_of(n), n, "disk")
            continue
        members = _members(n)
        for m in members:
            add(m, n, "member")
        if members or not is_loop(n):
            continue
        b = backing_of(n)
        if b is None:
            continue
        backings.append(b)
        if b.block:
            add(b.block, n, "backing")
    return Stack(name, tuple(layers), tuple(backings))


def loops_on(backing: Backing) -> list[str]:
    """Every attached loop device that rests on what ``backing`` rests on (the same block device or
    the same file, by identity), ``backing.loop`` included."""
    try:
        names = sorted(os.listdir(os.path.join(tgt.SYSFS, "block")))
    except OSError:
        return []
    out = []
    for n in names:
        if not n.startswith("loop") and not is_loop(n):
            continue
        if n == backing.loop:
            out.append(n)
            continue
        b = backing_of(n)
        if b is not None and ((backing.block and b.block == backing.block)
                              or (backing.file_id and b.file_id == backing.file_id)):
            out.append(n)
    return out


def loops_on_file(st: os.stat_result) -> list[str]:
    """Every attached loop device whose backing file is the file ``st`` describes."""
    return loops_on(Backing("", None, file_id=file_id_of(st)))


# --- every other way to the same storage -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Way:
    """A block device other than the target through which the target's storage is reached: "below"
    (a loop device's backing block device: the target writes it), "beside" (another loop device
    over the same file or block device, at any offset), "above" (a loop device resting on the
    target, on a device under it or on one beside it). ``text``: how it reaches, for a message."""

    name: str
    how: str
    text: str


def ways(name: str, top: str | None = None, system: frozenset[str] = frozenset(), st: Stack | None = None) -> list[Way]:
    """Every block device that reaches what a test on kernel device ``name`` writes, other than
    ``name`` and its partitions: what the run probes and then holds exclusively for its whole length
    (device/safety/claim.py), so that a mkfs or a mount through any of them fails "busy". Device-mapper and
    md holders are not listed: they hold their members themselves (guard.py refuses them).
    ``system``: whole disks of the running system, never listed (refused before anything is held).
    ``st``: ``name``'s stack, when already resolved."""
    st = st or resolve(name)
    ours = set(st.names)
    top = top or f"/dev/{name}"
    out: dict[str, Way] = {}
    for la in st.layers:
        if la.how == "backing" and tgt.disk_of(la.name) not in system:
            out[la.name] = Way(la.name, "below", st.rests_on(la.name, top))
    for b in st.backings:
        what = f"/dev/{b.block}" if b.block else (b.path or "its file").removesuffix(" (deleted)")
        for alias in loops_on(b):
            if alias not in ours and alias not in out:
                out[alias] = Way(alias, "beside", f"{_lead_of(st, b, top)} {what}, which also backs /dev/{alias}")
    written, _files = written_by(name, st)
    for n in above(sorted(written | set(out))):
        if n not in ours and n not in out and is_loop(n):
            out[n] = Way(n, "above", f"/dev/{n} rests on {top}'s storage")
    return list(out.values())


def ways_to_file(path: str, st: os.stat_result) -> list[Way]:
    """Every loop device over the file ``st`` describes (by its identity), and every loop device
    resting on one of those: the ways to a file target's storage."""
    direct = loops_on_file(st)
    out = {n: Way(n, "beside", f"{path} backs /dev/{n}") for n in direct}
    for n in above(direct):
        if n not in out and is_loop(n):
            out[n] = Way(n, "above", f"/dev/{n} rests on {path}")
    return list(out.values())


def reaches(name: str, names: set[str], files: set[str]) -> bool:
    """Whether loop device ``name`` rests on one of the block devices ``names`` (or a partition of
    one) or on one of the files ``files`` (identities): a way to that storage."""
    b = backing_of(name)
    if b is None:
        return False
    if b.file_id is not None:
        return b.file_id in files
    return b.block is not None and (b.block in names or tgt.disk_of(b.block) in names)


def loop_names() -> list[str]:
    """Every loop device the kernel has (attached or not)."""
    try:
        return sorted(n for n in os.listdir(os.path.join(tgt.SYSFS, "block")) if is_loop(n))
    except OSError:
        return []


# --- the checks on what lies under a target ---------------------------------------------------------


def _used_as(names: list[str], proc: str) -> list[tuple[str, str]]:
    """(device, 'mounted at X' | 'in use as swap' | 'in use by Y') for each use of ``names``."""
    out = [(n, f"mounted at {mp}") for n, mp, _fs in usage.mounts_of(names, proc)]
    out += [(n, "in use as swap") for n in usage.swap_devices(names, proc)]
    return out


def _whom(n: str, layer: str) -> str:
    if n == layer:
        return f"/dev/{layer}, which is"
    if tgt.is_partition_name(n) and tgt.disk_of(n) == layer:
        return f"/dev/{layer}, whose partition /dev/{n} is"
    return f"/dev/{layer}, under /dev/{n}, which is"


def reasons(stack: Stack, top: str, system: dict[str, list[str]], proc: str) -> list[str]:
    """Refusals for what lies under the target (the target itself is checked by guard.py): every
    device in its stack mounted, swap, built on by something else, or on the running system's disk;
    every other loop device resting on the same device or file in such use; a backing file that is
    an active swap file. ``top``: the target's path as the user gave it; ``system``: the running
    system's whole disks and their mount points (safety._system_disks)."""
    out: list[str] = []
    ours = set(stack.names)
    for layer in stack.layers:
        lead = stack.rests_on(layer.name, top).rsplit(" on ", 1)[0] + " on "
        disk = tgt.disk_of(layer.name)
        if disk in system:
            which = f"/dev/{layer.name}" + (f" (on /dev/{disk})" if disk != layer.name else "")
            out.append(f"{lead}{which}, which holds the running system (it backs {', '.join(system[disk])}): "
                       "pick another target")
        if not layer.written:  # a partition's disk: only a filesystem on the whole disk would be hit
            watched = [layer.name]
        else:
            parts = [] if tgt.is_partition_name(layer.name) else tgt.partitions_of(layer.name)
            above = [h for h in usage.holders_closure([layer.name, *parts]) if h not in ours]
            watched = [layer.name, *parts, *above]
        for n, use in _used_as(watched, proc):
            out.append(f"{lead}{_whom(n, layer.name)} {use}: {_fix(use, n)}")
        if layer.written:
            for h in usage.holders(layer.name):
                if h not in ours:
                    out.append(f"{lead}/dev/{layer.name}, which is in use by {usage.holder_label(h)}: "
                               "remove that or pick another target")
    for b in stack.backings:
        for alias in loops_on(b):
            if alias in ours:
                continue
            what = (f"/dev/{b.block}" if b.block else (b.path or "its file").removesuffix(" (deleted)"))
            parts = tgt.partitions_of(alias)
            users = _used_as([alias, *parts, *usage.holders_closure([alias, *parts])], proc)
            for n, use in users:
                via = f"/dev/{alias}" if n == alias else f"/dev/{alias} (through /dev/{n})"
                out.append(f"{_lead_of(stack, b, top)} {what}, which also backs {via}, {use}: {_fix(use, n)}")
        if b.file_id and any(_file_id_at(p) == b.file_id for p in usage.swap_entries(proc)):
            out.append(f"{stack.file_rests_on(b, top)}, which is an active swap file: pick another target")
    return list(dict.fromkeys(out))


def _file_id_at(path: str) -> str | None:
    try:
        return file_id_of(os.stat(path))
    except OSError:
        return None


def _lead_of(stack: Stack, b: Backing, top: str) -> str:
    if b.loop == stack.name:
        return f"{top} rests on"
    return stack.rests_on(b.loop, top) + ", which rests on"


def _fix(use: str, n: str) -> str:
    if use.startswith("mounted"):
        return "unmount it or pick another target"
    if use.endswith("swap"):
        return f"run swapoff /dev/{n} or pick another target"
    return "stop that use or pick another target"


def written_by(name: str, st: Stack | None = None) -> tuple[set[str], set[str]]:
    """(block devices, file identities) whose contents a test on kernel device ``name`` overwrites:
    the device, its partitions, every written device under it (with their partitions), and the
    backing files at the bottom."""
    st = st or resolve(name)  # ``st``: its stack, when already resolved
    names = {name} | {la.name for la in st.layers if la.written}
    for n in list(names):
        if not tgt.is_partition_name(n):
            names.update(tgt.partitions_of(n))
    return names, {b.file_id for b in st.files if b.file_id}


def out_dir_conflict(target, out_dir: str, proc: str = "/proc") -> str | None:
    """Why ``out_dir`` (where the run directory goes) lies on what the run destroys, or None: the
    filesystem holding it rests on the target, on a device under it, or on a backing file the target
    writes — the run would destroy its own results."""
    path = os.path.abspath(out_dir)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if target.kind == "file":
        try:
            names, files = set(), {file_id_of(os.stat(target.real_path))}
        except OSError:
            return None
    else:
        names, files = written_by(target.name)
    dev = usage.block_name_of_path(path, proc)
    if dev is None:
        return None
    under = resolve(dev)
    hit = next((n for n in under.names if n in names), None)
    via = f"/dev/{dev}" + (f" (resting on /dev/{hit})" if hit and hit != dev else "")
    if hit is None:
        b = next((b for b in under.files if b.file_id in files), None)
        if b is None:
            return None
        via = f"/dev/{dev}" + f" (resting on {b.path.removesuffix(' (deleted)') if b.path else 'the target file'})"
    return (f"--out {out_dir} is on the filesystem of {via}, which a test on {target.path} overwrites: the run "
            "would destroy its own results; pick an --out on another disk")


def above(names: list[str]) -> list[str]:
    """Every device built on ``names``, transitively: the kernel's holders (device-mapper, md) and
    the loop devices resting on one of them (which the kernel does not list as holders), with their
    partitions."""
    by_block: dict[str, list[str]] = {}
    try:
        loops = sorted(n for n in os.listdir(os.path.join(tgt.SYSFS, "block")) if is_loop(n))
    except OSError:
        loops = []
    for n in loops:
        b = backing_of(n)
        if b is not None and b.block:
            by_block.setdefault(b.block, []).append(n)
    seen: list[str] = []
    todo = list(names)
    while todo:
        n = todo.pop()
        for h in [*usage.holders(n), *by_block.get(n, [])]:
            for m in (h, *tgt.partitions_of(h)):
                if m not in seen and m not in names:
                    seen.append(m)
                    todo.append(m)
    return seen
