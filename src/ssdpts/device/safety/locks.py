"""The ssdpts lock of a device: files in ``/run/ssdpts`` (``$SSDPTS_LOCK_DIR``), one per whole disk
and backing file a target rests on (device/safety/stack.py), locked with ``flock`` by the run that holds
the device and naming it (run directory, PID). What claim.py takes and holds; what guard.py, plan
and devices read to say who holds a device (:func:`holder_of`, a peek that takes nothing)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ssdpts.device import target as tgt
from ssdpts.device.safety import stack
from ssdpts.device.target import Target
from ssdpts.errors import UserError

LOCK_DIR_ENV = "SSDPTS_LOCK_DIR"
DEFAULT_LOCK_DIR = "/run/ssdpts"

def lock_dir() -> Path:
    """/run/ssdpts (or $SSDPTS_LOCK_DIR); a per-user directory in the temp dir where /run is not writable."""
    wanted = os.environ.get(LOCK_DIR_ENV) or DEFAULT_LOCK_DIR
    for d in (wanted, os.path.join(tempfile.gettempdir(), f"ssdpts-locks-{os.getuid()}")):
        try:
            os.makedirs(d, mode=0o755, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK | os.X_OK):
            return Path(d)
    raise UserError(f"cannot create a lock directory ({wanted} or the temp dir): set {LOCK_DIR_ENV} to a writable directory")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _file_key(path: str) -> tuple[str, str]:
    real = os.path.realpath(path.removesuffix(" (deleted)"))
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(real))[:40]
    return f"file-{base}-{_digest(real)}", real


def _inode_key(file_id: str, path: str | None) -> tuple[str, str]:
    """A file by its identity ("major:minor:inode"): every path to it (hard links, bind mounts,
    renames) takes the same lock."""
    shown = path.removesuffix(" (deleted)") if path else f"the file {file_id}"
    return f"inode-{re.sub(r'[^0-9A-Za-z]+', '_', file_id)}", shown


def lock_keys(target: Target) -> list[tuple[str, str]]:
    """(lock name, what it stands for): every whole disk the target rests on, by major:minor (its
    own, a partition's disk, a loop device's backing device and whatever that rests on), every
    backing file of a loop device in that stack by its identity, a file target by its resolved path
    and its identity."""
    if target.kind == "file":
        keys = [_file_key(target.real_path)]
        try:
            keys.append(_inode_key(stack.file_id_of(os.stat(target.real_path)), target.real_path))
        except OSError:
            pass  # a file still to be created: its path is its lock until it exists
        return keys
    layers = stack.resolve(target.name)
    keys = [(f"block-{tgt.devnum_of(d) or d}", f"/dev/{d}") for d in layers.whole_disks()]
    keys += [_inode_key(b.file_id, b.path) for b in layers.files if b.file_id]
    return list(dict.fromkeys(keys))


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lock, as its lock file says."""

    pid: int | None
    run_dir: str | None
    target: str | None
    command: str | None

    def describe(self) -> str:
        pid = f"PID {self.pid}" if self.pid else "PID unknown"
        if self.run_dir:
            return f"the ssdpts run {self.run_dir} ({pid})"
        return f"another ssdpts process ({self.command or 'starting'}, {pid})"


def _read_holder(fd: int) -> Holder:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        doc = json.loads(os.read(fd, 65536).decode() or "{}")
    except (OSError, ValueError, UnicodeDecodeError):
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    pid = doc.get("pid")
    return Holder(pid if isinstance(pid, int) else None, doc.get("run_dir"), doc.get("target"), doc.get("command"))


def holder_of(target: Target) -> Holder | None:
    """The ssdpts process holding ``target``'s lock, or None (read-only peek, for messages)."""
    try:
        directory = lock_dir()
    except UserError:
        return None
    for key, _what in lock_keys(target):
        path = directory / f"{key}.lock"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _read_holder(fd)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    return None
