"""One run per device, held exclusively for the whole run.

Two locks, taken before the first byte is written and held until the run ends (also on resume):

* **The kernel's exclusive claim**: the block device open with ``O_EXCL``. While it is held the
  kernel refuses every other exclusive opener with EBUSY: ``mount`` of the device or of any of its
  partitions, ``mkfs``, md/LVM/device-mapper, ``zpool``, ``blkdiscard`` without ``--force``,
  partition-table re-reads (BLKRRPART). fio opens the device without ``O_EXCL``, which the kernel
  allows beside the claim (measured on Linux 6.18 with fio 3.33, io_uring and libaio).
* **The ssdpts lock**: ``flock`` on a file in ``/run/ssdpts`` (``$SSDPTS_LOCK_DIR``) named after the
  whole disk's major:minor, and for a loop device also after its backing file, and for a file
  target after the file's path. It covers what the kernel claim cannot see: file targets, two
  partitions of one disk (the kernel lets two holders claim two partitions; two runs there would
  measure each other), two loop devices over one file, and the moment a purge tool needs the device
  for itself. The lock file records the run directory and PID, so a second ``ssdpts run`` or
  ``resume`` is refused with a line that names them.

Purge tools and the claim (checked in each tool's source and on a loop device): util-linux
``blkdiscard`` (>= 2.36) opens ``O_EXCL`` unless ``--force``, and ``nvme format`` (nvme-cli >= 2.0)
unless ``--force``: ssdpts passes ``--force`` (purge/fallback.py), and both work beside the claim.
``dd``, ``hdparm`` (``O_RDONLY|O_NONBLOCK``), ``sg_format`` and ``sg_sanitize`` (sg3_utils'
``sg_cmds_open_device``) and ``nvme sanitize`` (sent to the controller's character device) do
not open exclusively. A tool that does anyway (a version that adds it) fails with EBUSY; the purge
then runs it once more with the kernel claim lent to it (:func:`lent_to`) — the ssdpts lock stays
held throughout, and the claim is taken back the moment the tool exits.

Before the purge and before every round the runner calls :meth:`Claim.check`: the device must still
be the one fingerprinted at the start (same node, same backing file, not re-attached, not detached,
not read-only), nothing may be mounted on it or built on it, and no partition may have appeared —
the claim blocks mounts and mkfs, but ``partx``/BLKPG can still add a partition. Measured cost:
benchmarks/guard_cost.py (about a millisecond per call, against rounds of seconds to hours).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import select
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ssdpts.device import fingerprint
from ssdpts.device import target as tgt
from ssdpts.device.safety import guard as safety
from ssdpts.device.safety import held
from ssdpts.device.safety import locks
from ssdpts.device.safety import stack as stack_mod
from ssdpts.device.safety import usage
from ssdpts.device.safety.locks import _read_holder, lock_dir, lock_keys
from ssdpts.device.target import Target
from ssdpts.errors import DeviceUnsafe, UserError

LOCK_DIR_ENV = locks.LOCK_DIR_ENV


def _flock_briefly(fd: int, tries: int = 5) -> None:
    """LOCK_EX, retried for a moment: holder_of's shared peek holds the file for microseconds and
    must not make a starting run look refused."""
    for i in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if i == tries - 1:
                raise
            time.sleep(0.02)


def _stale_identity(key: str, holder) -> bool:
    """A file's identity lock ("inode-MAJ_MIN_INO") whose holder's file has another identity now:
    the holder's target was replaced (a file-recreate purge; a user's rm and cp) and the filesystem
    gave its inode number to a new file — the one being locked here. Not the holder's file, so not
    in use by it. Any doubt (no holder target, the target unreadable) keeps the lock held."""
    if not key.startswith("inode-") or not holder.target:
        return False
    try:
        st = os.stat(holder.target)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):  # a loop device's backing file: its holder's target is the loop device
        return False
    return key != locks._inode_key(locks.stack.file_id_of(st), holder.target)[0]


class Claim:
    """The locks and (block devices) the kernel claim on one target. Use as a context manager, or
    call :meth:`acquire` and :meth:`release` (idempotent)."""

    def __init__(self, target: Target):
        self.target = target
        self.keys = lock_keys(target)
        self._lock_fds: list[tuple[int, Path]] = []
        self._fd: int | None = None
        self._rdev: int | None = None
        self.record: dict[str, Any] = {"pid": os.getpid(), "run_dir": None, "target": target.path,
                                       "command": " ".join(["ssdpts", *sys.argv[1:]])[:300],
                                       "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self._fp0: dict[str, Any] | None = None
        self._parts0: set[str] = set()
        self._ways: dict[str, tuple[int, int]] = {}  # kernel name -> (fd held O_EXCL, its st_rdev)
        self._reach: set[str] = set()  # the target's own stack and what it writes (block devices)
        self._files: set[str] = set()  # the backing files it writes (identities)
        self._known: set[str] = set()  # ways seen when the claim was taken that could not be opened (gone)
        self._elsewhere: dict[str, tuple] = {}  # loop devices found resting on other storage: (diskseq, backing)
        self._sweep_lock = threading.Lock()
        self._watcher: _Watcher | None = None
        self.alarm: str | None = None  # what the watcher found (the guard raises it, the run stops)

    # ---- taking and giving back --------------------------------------------------------------
    def lock(self) -> None:
        """The ssdpts locks only: refuses, naming the holder, when another ssdpts process has one."""
        if self._lock_fds:
            return
        self._take_locks(self.keys)

    def rekey(self) -> None:
        """Lock what the target rests on now: a file target recreated by its purge is a new file, its
        identity locked from now on. The replaced file's identity is given up: its inode number is
        free for the filesystem to give to any new file (another run's target among them), which must
        not then be 'in use' by this run."""
        if not self._lock_fds:
            return
        now = lock_keys(self.target)
        new = [k for k in now if k not in self.keys]
        if new:
            try:
                self._take_locks(new, keep=True)
            except UserError as exc:
                raise DeviceUnsafe(str(exc)) from None
        gone = {f"{key}.lock" for key, _what in self.keys if key.startswith("inode-") and (key, _what) not in now}
        for fd, path in [x for x in self._lock_fds if x[1].name in gone]:
            self._lock_fds.remove((fd, path))
            try:
                os.unlink(path)  # while still locked, as unlock does
            except OSError:
                pass
            os.close(fd)
        self.keys = [k for k in self.keys if f"{k[0]}.lock" not in gone] + new

    def _take_locks(self, keys: list[tuple[str, str]], keep: bool = False) -> None:
        directory = lock_dir()
        for key, what in keys:
            path = directory / f"{key}.lock"
            while True:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                try:
                    _flock_briefly(fd)
                except BlockingIOError:
                    holder = _read_holder(fd)
                    os.close(fd)
                    if _stale_identity(key, holder):
                        fd = -1  # not held by us, not in use by the holder: its file is another now
                        break
                    if not keep:
                        self.unlock()
                    t = self.target
                    on = t.path if what in (t.path, t.real_path, f"/dev/{t.name}") else f"{t.path} rests on {what}, which"
                    stop = f"kill -INT {holder.pid}" if holder.pid else "stop it"
                    raise UserError(f"{on} is in use by {holder.describe()}: wait for it to finish or stop it "
                                    f"({stop}), then try again") from None
                # The holder removes its lock file when done (unlock): a file we locked after that
                # is no longer the lock; take the one now at the path.
                try:
                    if os.stat(path).st_ino == os.fstat(fd).st_ino:
                        break
                except FileNotFoundError:
                    pass
                os.close(fd)
            if fd >= 0:
                self._lock_fds.append((fd, path))
        self._write_record()

    def claim_device(self) -> None:
        """The kernel's exclusive claim (block devices; files have none), and then every other way
        to the same storage held exclusively too (:meth:`hold_ways`)."""
        if self.target.kind != "block" or self._fd is not None:
            return
        self._open_exclusive()
        self._fp0 = fingerprint.take(self.target, self._fd)
        self._parts0 = set(self._partitions())
        st = stack_mod.resolve(self.target.name)
        names, self._files = stack_mod.written_by(self.target.name, st)
        self._reach = set(st.names) | names
        try:
            self.hold_ways(st)
        except BaseException:
            self._close_exclusive()
            raise

    def hold_ways(self, st: "stack_mod.Stack | None" = None) -> None:
        """Open with ``O_EXCL``, and keep open until the run ends, every other block device through
        which the target's storage is reached (device/safety/stack.py ``ways``: the backing device under a
        loop device, every other loop device over the same file or device, loop devices resting on
        any of them): while they are held the kernel refuses ``mkfs``, ``mount`` (in any mount
        namespace), md, LVM and partition re-reads on each of them with EBUSY. One that is in use
        already is refused, naming the use (a mount in another namespace among them). ``st``: the
        target's stack, when already resolved."""
        t = self.target
        for way in stack_mod.ways(t.name, t.path, frozenset(safety.system_disk_names()), st):
            if way.name in self._ways:
                continue
            fd, busy = _open_excl(f"/dev/{way.name}")
            if busy:
                self._close_ways()
                raise UserError(f"{way.text}, which is {usage.busy_because(way.name, safety.PROC)}: "
                                "stop that use or pick another target")
            if fd is not None:
                self._keep_way(way.name, fd)
            else:
                self._known.add(way.name)

    def _keep_way(self, name: str, fd: int) -> None:
        rdev = os.fstat(fd).st_rdev
        self._ways[name] = (fd, rdev)
        held.HELD[rdev] = self

    def _close_ways(self) -> None:
        ways, self._ways = self._ways, {}
        for fd, rdev in ways.values():
            if held.HELD.get(rdev) is self:
                held.HELD.pop(rdev, None)
            os.close(fd)

    @property
    def held_ways(self) -> list[str]:
        """The other block devices this claim holds exclusively, by kernel name."""
        return sorted(self._ways)

    # ---- the watcher: a new way to the storage, found while the run writes -----------------------
    def watch(self, alarm: Callable[[str], None]) -> None:
        """Watch, for as long as the claim is held, for a new way to the target's storage that
        cannot be held in advance: a loop device attached over the target's file or device (or over
        any device the claim holds), a partition added to the target. Woken by the kernel's block
        uevents (a netlink socket; every 5 s regardless, or every 0.5 s where uevents cannot be
        had). What it finds is held at once where the kernel still allows (so that a mkfs or mount
        of it fails "busy"), kept in :attr:`alarm` (the guard raises it) and passed to ``alarm``
        (the run stops: run/alarm.py)."""
        if self._watcher is None:
            self._watcher = _Watcher(self, alarm)
            self._watcher.start()

    def _stop_watching(self) -> None:
        w, self._watcher = self._watcher, None
        if w is not None:
            w.stop()

    def sweep(self, first: tuple[str, ...] = ()) -> list[str]:
        """What is new since the claim was taken (and not seen before): loop devices resting on the
        target's storage, partitions of the target. Each new loop device is held if it can be.
        Reasons, one line each; also kept in :attr:`alarm` (the first). ``first``: devices a uevent
        just named, looked at before the rest (a user's mkfs may follow losetup within milliseconds)."""
        if not self._lock_fds and self._fd is None:
            return []
        with self._sweep_lock:
            t = self.target
            names = self._reach | set(self._ways)
            files = self._files
            if t.kind == "file":
                try:
                    files = {stack_mod.file_id_of(os.stat(t.real_path))}
                except OSError:
                    return []
            out: list[str] = []
            loops = stack_mod.loop_names()
            for n in [*(n for n in first if n in loops), *(n for n in loops if n not in first)]:
                if n in names or n in self._known:
                    continue
                # judged once per attachment (the kernel's disk sequence number changes with each):
                # the loop devices of everything else on the host are not opened on every sweep
                seen = (tgt.read_sysfs(os.path.join(tgt.sysfs_block_dir(n), "diskseq")),
                        tgt.loop_backing_file(n))
                if seen[1] is None or (seen[0] is not None and self._elsewhere.get(n) == seen):
                    continue
                if not stack_mod.reaches(n, names, files):
                    self._elsewhere[n] = seen
                    continue
                fd, busy = _open_excl(f"/dev/{n}")
                if fd is not None:
                    self._keep_way(n, fd)
                    held_now = "ssdpts held it until the run stopped"
                else:
                    held_now = f"it is {usage.busy_because(n, safety.PROC)}" if busy else "it could not be held"
                b = stack_mod.backing_of(n)
                over = (b.path or "").removesuffix(" (deleted)") if b is not None and b.file_id else \
                    (f"/dev/{b.block}" if b is not None and b.block else "")
                over = f"{over}, which {t.path} {'is' if t.kind == 'file' else 'rests on'}" if over and over != t.path \
                    else t.path
                out.append(f"/dev/{n} was attached over {over}, during the run: another way to the storage the run "
                           f"writes ({held_now}); the run stopped before writing again")
            if t.kind == "block":
                for p in sorted(set(self._partitions()) - self._parts0):
                    out.append(f"partition /dev/{p} appeared on {t.path} during the run (someone is partitioning it)")
                    self._parts0.add(p)
            if out and self.alarm is None:
                self.alarm = out[0]
            return out

    def acquire(self, run_dir: str | os.PathLike[str] | None = None) -> "Claim":
        self.lock()
        try:
            self.claim_device()
        except BaseException:
            self.release()
            raise
        if run_dir is not None:
            self.set_run_dir(run_dir)
        return self

    def set_run_dir(self, run_dir: str | os.PathLike[str]) -> None:
        self.record["run_dir"] = str(Path(run_dir).resolve())
        self._write_record()

    def release(self) -> None:
        self._stop_watching()
        self._close_ways()
        self._close_exclusive()
        self.unlock()

    def unlock(self) -> None:
        fds, self._lock_fds = self._lock_fds, []
        for fd, path in fds:
            try:
                os.unlink(path)  # while still locked: a waiting process then finds the file gone (see lock)
            except OSError:
                pass
            os.close(fd)

    def __enter__(self) -> "Claim":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    @property
    def fd(self) -> int | None:
        return self._fd

    def _write_record(self) -> None:
        data = json.dumps(self.record).encode()
        for fd, _path in self._lock_fds:
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
            except OSError:
                pass  # the record is for messages only; the flock is the lock

    def _open_exclusive(self) -> None:
        t = self.target
        try:
            fd = os.open(t.real_path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                raise UserError(
                    f"{t.path} is in use: the kernel refused ssdpts an exclusive claim (mounted, swap, part of "
                    "RAID/LVM/ZFS, or another program holds it): stop that user or pick another target") from None
            raise UserError(f"cannot open {t.path} ({exc.strerror}): check the device and permissions") from None
        self._fd = fd
        self._rdev = os.fstat(fd).st_rdev
        held.HELD[self._rdev] = self

    def _close_exclusive(self) -> None:
        fd, self._fd = self._fd, None
        if self._rdev is not None:
            held.HELD.pop(self._rdev, None)
        if fd is not None:
            os.close(fd)

    @contextlib.contextmanager
    def lent(self, tool: str) -> Iterator[None]:
        """Drop the kernel claim while ``tool`` (which opens the device exclusively itself) runs and
        take it back at once; the ssdpts lock stays held. If someone else claims the device in that
        moment the run stops (DeviceUnsafe)."""
        if self._fd is None:
            yield
            return
        self._close_exclusive()
        try:
            yield
        finally:
            try:
                self._open_exclusive()
            except UserError:
                raise DeviceUnsafe(f"another program claimed {self.target.path} while {tool} had it: "
                                   "find out who (lsblk, fuser -v) before resuming") from None

    # ---- the guard ---------------------------------------------------------------------------
    def check(self) -> None:
        """Raise DeviceUnsafe when the target is no longer safe to write (see the module doc)."""
        reasons = self.unsafe_reasons()
        if reasons:
            raise DeviceUnsafe(reasons[0])

    def unsafe_reasons(self) -> list[str]:
        t = self.target
        found = self.sweep()
        if self.alarm is not None and self.alarm not in found:
            found.insert(0, self.alarm)
        if t.kind == "file":
            if not os.path.exists(t.real_path):
                return [*found, f"{t.path} was deleted during the run"]
            return [*found, *safety.assess(t, needed_bytes=0, probe=False).reasons]
        out: list[str] = found
        now_real = os.path.realpath(t.path)
        if now_real != t.real_path:
            out.append(f"{t.path} now points to {now_real}, not {t.real_path}")
        try:
            if os.stat(t.real_path).st_rdev != self._rdev:
                out.append(f"{t.real_path} is now another device node")
        except OSError as exc:
            out.append(f"{t.real_path} is gone ({exc.strerror})")
        if out:
            return out
        now = fingerprint.take(t, self._fd)
        before = self._fp0 or now
        for what, was, is_now in fingerprint.differences(before, now):
            out.append(f"the {what} of {t.path} changed during the run (was {was!r}, now {is_now!r})")
        if now.get("read_only") and not before.get("read_only"):
            out.append(f"{t.path} became read-only during the run")
        if before.get("diskseq") is not None and now.get("diskseq") != before.get("diskseq"):
            out.append(f"the medium of {t.path} changed during the run (diskseq {before['diskseq']} -> {now['diskseq']})")
        loop0, loop1 = before.get("loop") or {}, now.get("loop") or {}
        if loop1.get("autoclear") and not loop0.get("autoclear"):
            out.append(f"someone detached {t.path} during the run (losetup -d; the kernel waits for ssdpts to close it)")
        out.extend(safety.assess(t, needed_bytes=0, probe=False).reasons)
        return list(dict.fromkeys(out))

    def _partitions(self) -> list[str]:
        return [] if self.target.is_partition else tgt.partitions_of(self.target.name)


def _open_excl(node: str) -> tuple[int | None, bool]:
    """(descriptor, busy): held.open_exclusive, busy when the kernel said EBUSY (None, False: the
    node cannot be opened at all, gone)."""
    fd, exc = held.open_exclusive(node)
    return fd, exc is not None and exc.errno == errno.EBUSY


_NETLINK_KOBJECT_UEVENT = 15


def _uevent_socket() -> socket.socket | None:
    """The kernel's uevents (netlink, group 1), or None where they cannot be had (no permission, a
    network namespace without them)."""
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK,
                             _NETLINK_KOBJECT_UEVENT)
    except (OSError, AttributeError):
        return None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        sock.bind((0, 1))
    except OSError:
        sock.close()
        return None
    return sock


class _Watcher(threading.Thread):
    """Claim.watch's thread: a sweep on every block uevent (the devices it names first), and every
    PERIOD_S regardless. Measured: benchmarks/watch_cost.py."""

    PERIOD_S = 5.0  # with uevents: a backstop for events lost (ENOBUFS)
    POLL_S = 0.5  # without uevents (a network namespace that gets none)

    def __init__(self, claim: Claim, alarm: Callable[[str], None]):
        super().__init__(name=f"ssdpts-watch-{claim.target.name}", daemon=True)
        self.claim = claim
        self.alarm = alarm
        self.sock = _uevent_socket()
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._stopping = False
        self.sweeps = 0
        self.fired = False

    def stop(self) -> None:
        self._stopping = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=5)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.sock is not None:
            self.sock.close()

    def _wait(self) -> tuple[str, ...]:
        """Until a block uevent, the period, or stop; the block devices the uevents named."""
        rlist = [self._wake_r] + ([self.sock] if self.sock is not None else [])
        try:
            ready, _, _ = select.select(rlist, [], [], self.PERIOD_S if self.sock is not None else self.POLL_S)
        except (OSError, ValueError):
            ready = []
            time.sleep(self.POLL_S)
        named: list[str] = []
        if self.sock is not None and self.sock in ready:
            try:
                while True:  # drain: one sweep answers every event that came together
                    fields = self.sock.recv(1 << 16).split(b"\0")
                    if b"SUBSYSTEM=block" in fields:
                        named += [f[8:].decode(errors="replace") for f in fields if f.startswith(b"DEVNAME=")]
            except (BlockingIOError, OSError):
                pass  # ENOBUFS (events lost) too: the sweep looks at everything anyway
        return tuple(dict.fromkeys(named))

    def run(self) -> None:
        while not self._stopping:
            named = self._wait()
            if self._stopping:
                return
            try:
                found = self.claim.sweep(first=named)
            except Exception:  # noqa: BLE001 - a sweep that fails must not end the watching
                continue
            self.sweeps += 1
            if found and not self.fired:
                self.fired = True
                try:
                    self.alarm(found[0])
                except Exception:  # noqa: BLE001 - the guard still raises claim.alarm
                    pass
