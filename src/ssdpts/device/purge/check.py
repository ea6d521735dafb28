"""A purge is judged by its effect, not by the tool's exit status (PTS 2.0.2 §3.2: the purge must
leave no user data readable).

Before a purge of a block device, blocks unique to this purge are written at sampled offsets (the
first and last block and evenly spread ones between); after it they are read back. A block that
still holds what was written has survived the purge, whatever the tool said: hdparm exits 0 after a
drive aborted SECURITY ERASE UNIT, QEMU's SCSI disk accepts FORMAT UNIT and keeps the data, and a
discard the device ignores leaves everything in place (docs/lab.md, D6). Zeroes, deallocated blocks
and anything else but the written content count as erased. The device's confirmation already covers
these writes: they go to the device the purge is about to destroy.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from contextlib import contextmanager
from dataclasses import dataclass

from ssdpts.device.target import Target
from ssdpts.errors import RunFailed

SAMPLES = 16


@dataclass(frozen=True, slots=True)
class Samples:
    path: str
    token: bytes
    block_bytes: int
    offsets: tuple[int, ...]


def sample_offsets(size_bytes: int, block_bytes: int, n: int = SAMPLES) -> tuple[int, ...]:
    """Block-aligned offsets from the first to the last whole block, evenly spread."""
    last = size_bytes // block_bytes - 1
    if last < 0:
        return ()
    return tuple(sorted({(last * i // max(n - 1, 1)) * block_bytes for i in range(n)}))


def _content(token: bytes, offset: int, block_bytes: int) -> bytes:
    seed = hashlib.sha256(token + offset.to_bytes(8, "little")).digest()
    return (seed * (block_bytes // len(seed) + 1))[:block_bytes]


@contextmanager
def _direct(path: str, flags: int, block_bytes: int):
    """An O_DIRECT descriptor of the device and a page-aligned one-block buffer, as O_DIRECT needs."""
    buf = mmap.mmap(-1, block_bytes)
    fd = os.open(path, flags | os.O_DIRECT | os.O_CLOEXEC)
    try:
        yield fd, buf
    finally:
        os.close(fd)
        buf.close()


def _write(path: str, block_bytes: int, offsets: tuple[int, ...], token: bytes) -> None:
    with _direct(path, os.O_RDWR, block_bytes) as (fd, buf):
        for off in offsets:
            buf[:] = _content(token, off, block_bytes)
            os.pwritev(fd, [buf], off)
        os.fsync(fd)


def _survivors(path: str, block_bytes: int, offsets: tuple[int, ...], token: bytes) -> int:
    """How many of the sampled blocks still hold what was written to them."""
    left = 0
    with _direct(path, os.O_RDONLY, block_bytes) as (fd, buf):
        for off in offsets:
            os.preadv(fd, [buf], off)
            left += buf[:] == _content(token, off, block_bytes)
    return left


def applies(target: Target, method_name: str) -> bool:
    return target.kind == "block" and method_name != "none"


def write_samples(target: Target) -> Samples:
    block = max(4096, target.logical_block_size_bytes or 512)
    offsets = sample_offsets(target.size_bytes, block)
    token = os.urandom(16)
    try:
        _write(target.real_path, block, offsets, token)
    except OSError as exc:
        raise RunFailed(f"cannot write the purge check blocks to {target.path} ({exc.strerror}): "
                        "check the device, or use --purge=none (not PTS compliant)") from None
    return Samples(target.real_path, token, block, offsets)


def check(samples: Samples, target: Target, method_name: str) -> None:
    """RunFailed when any sampled block survived the purge."""
    try:
        left = _survivors(samples.path, samples.block_bytes, samples.offsets, samples.token)
    except OSError as exc:
        raise RunFailed(f"cannot read {target.path} back after the purge ({exc.strerror}): check the device") from None
    if left:
        raise RunFailed(f"purge {method_name} of {target.path} erased nothing verifiable: {left} of "
                        f"{len(samples.offsets)} blocks written before it still hold their data although the tool "
                        "reported success; use a method the drive really performs (--purge=zero-fill erases by "
                        "writing)")
