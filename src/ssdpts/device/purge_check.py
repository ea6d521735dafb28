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


def _io(path: str, block_bytes: int, offsets: tuple[int, ...], token: bytes, write: bool) -> int:
    """Write the samples (returns how many), or count those still holding their content."""
    buf = mmap.mmap(-1, block_bytes)  # page-aligned, as O_DIRECT needs
    fd = os.open(path, (os.O_RDWR if write else os.O_RDONLY) | os.O_DIRECT | os.O_CLOEXEC)
    try:
        left = 0
        for off in offsets:
            want = _content(token, off, block_bytes)
            if write:
                buf[:] = want
                os.pwritev(fd, [buf], off)
            else:
                os.preadv(fd, [buf], off)
                left += buf[:] == want
        if write:
            os.fsync(fd)
            return len(offsets)
        return left
    finally:
        os.close(fd)
        buf.close()


def applies(target: Target, method_name: str) -> bool:
    return target.kind == "block" and method_name != "none"


def write_samples(target: Target) -> Samples:
    block = max(4096, target.logical_block_size_bytes or 512)
    offsets = sample_offsets(target.size_bytes, block)
    token = os.urandom(16)
    try:
        _io(target.real_path, block, offsets, token, write=True)
    except OSError as exc:
        raise RunFailed(f"cannot write the purge check blocks to {target.path} ({exc.strerror}): "
                        "check the device, or use --purge=none (not PTS compliant)") from None
    return Samples(target.real_path, token, block, offsets)


def check(samples: Samples, target: Target, method_name: str) -> None:
    """RunFailed when any sampled block survived the purge."""
    try:
        left = _io(samples.path, samples.block_bytes, samples.offsets, samples.token, write=False)
    except OSError as exc:
        raise RunFailed(f"cannot read {target.path} back after the purge ({exc.strerror}): check the device") from None
    if left:
        raise RunFailed(f"purge {method_name} of {target.path} erased nothing verifiable: {left} of "
                        f"{len(samples.offsets)} blocks written before it still hold their data although the tool "
                        "reported success; use a method the drive really performs (--purge=zero-fill erases by "
                        "writing)")
