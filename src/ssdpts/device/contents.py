"""What a block device holds when a run stops, so that ``resume`` can tell whether anything new was
put on it since.

The fingerprint (fingerprint.py) proves that ``resume`` is looking at the same device; it cannot
say what was done to it in between: a run interrupted on Friday, the device formatted and filled
with a user's files over the weekend, ``ssdpts resume`` on Monday would destroy them without a
question. So whenever a run stops writing a block device — complete, failed or interrupted — the
run directory's manifest records what the device holds (:func:`take`: its size, the SHA-256 of its
first and last MiB and of 128 blocks spread evenly over it, and the signatures ``blkid -p`` finds),
and while a run writes, the manifest says so. ``resume`` compares (:func:`changes`): a new
filesystem or partition-table signature, a changed block, a different size — or no record at all (a
run killed before it could record one) — and the destruction must be confirmed again
(``--destroy-data-on``), with what changed said in one line. File targets are sealed the same way
by their marker (marker.py).

The blocks are read with ``O_DIRECT``: a write through another path to the same storage (a second
loop device over the same file) does not pass through this device's page cache, which could then
still hold what was there before; the cache is dropped (``BLKFLSBUF``) before ``blkid`` reads.

What it cannot see: a change confined to blocks it does not read (a user writing a few KiB in the
middle of a large device, away from every sample). Everything a filesystem, a partition table or
a volume manager writes to begin with lands on the first or last MiB.
"""

from __future__ import annotations

from datetime import datetime, timezone
import fcntl
import hashlib
import mmap
import os
from typing import Any

from ssdpts.device.safety.signatures import probe_signatures

SAMPLES = 128
SAMPLE_BYTES = 4096
EDGE_BYTES = 1 << 20  # the first and last MiB, whole
FORMAT = 1
_BLKFLSBUF = 0x1261  # _IO(0x12, 97): flush and drop the device's buffer cache
_BLKGETSIZE64 = 0x80081272
_SIGNATURE_KEYS = ("TYPE", "PTTYPE", "UUID", "PTUUID", "LABEL")  # what a new filesystem or table changes


def _size(fd: int) -> int:
    buf = fcntl.ioctl(fd, _BLKGETSIZE64, b"\0" * 8)
    return int.from_bytes(buf, "little")


def _read(fd: int, buf: mmap.mmap, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset`` (both multiples of 4 KiB), read with O_DIRECT into the
    page-aligned ``buf``."""
    view = memoryview(buf)[:length]
    got = 0
    while got < length:
        n = os.preadv(fd, [view[got:]], offset + got)
        if n <= 0:
            break
        got += n
    return bytes(view[:got])


def sample_offsets(size: int) -> list[int]:
    """SAMPLES offsets, SAMPLE_BYTES-aligned, spread evenly over ``size`` bytes (the first and the
    last block included): where a file's marker (marker.py) and a block device's record sample."""
    last = max(size - SAMPLE_BYTES, 0)
    return sorted({(last * i // (SAMPLES - 1)) // SAMPLE_BYTES * SAMPLE_BYTES for i in range(SAMPLES)})


def samples_differ(now: dict[str, Any], record: dict[str, Any]) -> str | None:
    """'N of M sampled blocks differ' between two records sampled at the same offsets, else None."""
    if now["offsets"] != record.get("offsets"):
        return None
    differ = sum(a != b for a, b in zip(now["sha256_16"], record.get("sha256_16") or []))
    return f"{differ} of {len(now['offsets'])} sampled blocks differ" if differ else None


def take(node: str) -> dict[str, Any]:
    """What the block device ``node`` holds now (see the module doc). Raises OSError when it
    cannot be read."""
    fd = os.open(node, os.O_RDONLY | os.O_DIRECT | os.O_CLOEXEC)
    try:
        size = _size(fd)
        buf = mmap.mmap(-1, EDGE_BYTES)  # page-aligned, as O_DIRECT needs
        try:
            offsets = sample_offsets(size)
            digests = [hashlib.sha256(_read(fd, buf, off, SAMPLE_BYTES)).hexdigest()[:16] for off in offsets]
            edge = min(EDGE_BYTES, size // SAMPLE_BYTES * SAMPLE_BYTES)
            tail = (size - edge) // SAMPLE_BYTES * SAMPLE_BYTES
            edges = {"first": hashlib.sha256(_read(fd, buf, 0, edge)).hexdigest(),
                     "last": hashlib.sha256(_read(fd, buf, tail, edge)).hexdigest(), "bytes": edge}
        finally:
            buf.close()
        try:
            fcntl.ioctl(fd, _BLKFLSBUF)
        except OSError:
            pass  # not allowed here: blkid may read a cached first block, the digests above do not
    finally:
        os.close(fd)
    sig, err = probe_signatures(node)
    return {"format": FORMAT, "state": "sealed",
            "sealed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "size_bytes": size, "sample_bytes": SAMPLE_BYTES, "offsets": offsets, "sha256_16": digests,
            "edges": edges, "signatures": sig or {}, **({"signature_error": err} if err else {})}


def writing(who: dict[str, Any]) -> dict[str, Any]:
    """The record while a run writes the device (``who``: its PID and command): a run that stops
    without sealing (killed) leaves this, which proves nothing."""
    return {"format": FORMAT, "state": "writing", **who,
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def unreadable(error: str, who: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record when what the device holds could not be read as the run stopped (``error``: why):
    like a run killed, it proves nothing."""
    return {**writing(who or {}), "state": "unreadable", "error": error}


def changes(node: str, shown: str, record: Any) -> list[str]:
    """What is different on ``node`` since ``record`` (a :func:`take` result, or a :func:`writing`
    one, or None) was made; empty when it holds what the run left there. ``shown``: the device's
    name in the messages."""
    if not isinstance(record, dict):
        return [f"the run's manifest has no record of what {shown} held when the run stopped (made by an "
                "older ssdpts), so nothing proves it holds only the run's data"]
    if record.get("state") == "writing":
        by = record.get("command") or "ssdpts"
        return [f"the run was writing {shown} ({by}, PID {record.get('pid', '?')}) and stopped without recording "
                "what it holds (killed?), so nothing proves it holds only the run's data"]
    if record.get("state") != "sealed":
        return [f"what {shown} held when the run stopped could not be read then ({record.get('error', '?')}), "
                "so nothing proves it holds only the run's data"]
    try:
        now = take(node)
    except OSError as exc:
        return [f"{shown} cannot be read to compare it with what the run left ({exc.strerror})"]
    found: list[str] = []
    new_sig = {k: v for k, v in now["signatures"].items() if k in _SIGNATURE_KEYS}
    old_sig = {k: v for k, v in (record.get("signatures") or {}).items() if k in _SIGNATURE_KEYS}
    if new_sig != old_sig:
        what = ", ".join(f"{k}={v}" for k, v in sorted(new_sig.items())) or "no signature"
        before = ", ".join(f"{k}={v}" for k, v in sorted(old_sig.items())) or "none"
        found.append(f"it now carries {what} (then: {before})")
    if now["size_bytes"] != record.get("size_bytes"):
        found.append(f"its size is {now['size_bytes']} bytes, not {record.get('size_bytes')}")
    else:
        edges0 = record.get("edges") or {}
        moved = [w for w in ("first", "last") if now["edges"].get(w) != edges0.get(w)]
        if moved:
            found.append(f"its {' and '.join(moved)} MiB changed")
        differ = samples_differ(now, record)
        if differ:
            found.append(differ)
    if not found:
        return []
    return [f"{shown} changed since the run stopped ({'; '.join(found)}; the run's record is of "
            f"{record.get('sealed_at', '?')}): it may hold someone's data now"]
