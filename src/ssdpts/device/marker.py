"""The marker that proves a file target is ssdpts's own: ``<file>.ssdpts-target`` beside it.

Files are safe targets because ssdpts creates them. The marker vouches for one file only: the
device, inode, size, birth time and generation of the file as created (format 2), so a file someone
else puts at that path later — after deleting ssdpts's — is not taken for it, even when the
filesystem hands out the same inode number again (ext4 does so at once; birth time and generation
tell the two apart). A format-1 marker (path and time only) cannot tell, and is not trusted.

The identity alone cannot tell ssdpts's data from a user's: ``cp user.img f.img`` keeps the inode.
So whenever ssdpts has finished writing the file (a run that completed, failed or was interrupted)
the marker records its contents (:func:`seal`: size, modification and change times, checksums of
sampled blocks), and before ssdpts writes it again (:func:`unseal`) any change is found
(:func:`changes`): the user confirms the destruction again for that path, or picks another file.
A run killed before it could seal leaves the marker saying who was writing: that, too, needs the
confirmation again, since nothing proves what happened to the file since.
"""

from __future__ import annotations

from datetime import datetime, timezone
import hashlib
import json
import os
from typing import Any

from ssdpts.atomic import write_atomic
from ssdpts.device import contents as sampling
from ssdpts.device import fingerprint

MARKER_SUFFIX = ".ssdpts-target"
MARKER_FORMAT = 2  # 2: the marker carries the file's identity (device, inode, size, birth time)


def marker_path(path: str) -> str:
    """Sidecar that proves ssdpts created the file at ``path``."""
    return os.path.realpath(path) + MARKER_SUFFIX


def mark_created(path: str, *, identity: dict[str, Any] | None = None, previous: dict[str, Any] | None = None) -> None:
    """Record that ssdpts created the file at ``path`` (written atomically: tmp file + rename).

    The marker vouches for one file only: its device, inode, size, birth time and generation
    (``identity``, default: the file now at ``path``), so a file someone else puts at that path later
    is not taken for ssdpts's, even when the filesystem gives it the same inode number.
    ``previous``: the identity of the file being replaced (accepted until the replacement is in place,
    so that a crash between writing the marker and the rename leaves a file ssdpts still knows)."""
    record = {
        "created_by": "ssdpts",
        "format": MARKER_FORMAT,
        "path": os.path.realpath(path),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "identity": identity if identity is not None else fingerprint.file_identity(os.path.realpath(path)),
    }
    if previous is not None:
        record["previous"] = previous
    writing = (_read(path) or {}).get("writing")
    if writing:
        record["writing"] = writing  # a purge recreating the file mid-run: still being written
    _write(path, record)


def _read(path: str) -> dict | None:
    try:
        with open(marker_path(path), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("created_by") == "ssdpts" else None


def _write(path: str, record: dict) -> None:
    write_atomic(marker_path(path), json.dumps(record) + "\n", durable=True)


# --- the contents: what proves the file still holds only what ssdpts wrote -----------------------

SAMPLES = sampling.SAMPLES
SAMPLE_BYTES = sampling.SAMPLE_BYTES


def contents(path: str) -> dict:
    """Size, modification and change times, and a short SHA-256 of each of SAMPLES blocks spread
    evenly over the file (the first and the last included): what a later run compares before it
    writes. Reading 512 KiB takes milliseconds whatever the file's size."""
    st = os.stat(path)
    size = st.st_size
    offsets = sampling.sample_offsets(size)
    digests = []
    with open(path, "rb", buffering=0) as f:
        for off in offsets:
            f.seek(off)
            digests.append(hashlib.sha256(f.read(SAMPLE_BYTES)).hexdigest()[:16])
    return {"size_bytes": size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
            "sample_bytes": SAMPLE_BYTES, "offsets": offsets, "sha256_16": digests}


def seal(path: str) -> None:
    """ssdpts has finished writing the file (a run that completed, failed or was interrupted):
    record its contents, so that a change made after this is noticed before the next write."""
    record = _read(path)
    if record is None or marker_status(path) != "ours":
        return  # not ours (any more): nothing to vouch for
    record.pop("writing", None)
    record["contents"] = contents(os.path.realpath(path))
    record["sealed_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _write(path, record)


def unseal(path: str, who: dict) -> None:
    """ssdpts is about to write the file: its recorded contents no longer hold. ``who``: the run
    (run directory, PID) that writes it, for the message should it stop without sealing."""
    record = _read(path)
    if record is None:
        return
    record.pop("contents", None)
    record["writing"] = who
    _write(path, record)


def changes(path: str) -> list[str]:
    """What is different about the file since ssdpts last finished writing it (empty: nothing; the
    file holds what ssdpts left there). Call only when marker_status says "ours"."""
    record = _read(path) or {}
    rec = record.get("contents")
    shown = os.path.realpath(path)
    if not isinstance(rec, dict):
        writing = record.get("writing")
        if isinstance(writing, dict):
            by = writing.get("run_dir") or writing.get("command") or "an ssdpts process"
            return [f"{shown} was being written by {by} (PID {writing.get('pid', '?')}), which stopped without "
                    "recording its contents (killed?): nothing proves it holds only ssdpts's data"]
        return [f"ssdpts has no record of what {shown} holds (a marker from an older ssdpts)"]
    try:
        now = contents(os.path.realpath(path))
    except OSError as exc:
        return [f"{shown} cannot be read ({exc.strerror})"]
    out = []
    if now["size_bytes"] != rec.get("size_bytes"):
        out.append(f"its size is {now['size_bytes']} bytes, not {rec.get('size_bytes')}")
    if now["mtime_ns"] != rec.get("mtime_ns"):
        out.append(f"it was modified at {_when(now['mtime_ns'])}")
    elif now["ctime_ns"] != rec.get("ctime_ns"):
        out.append(f"its inode changed at {_when(now['ctime_ns'])}")
    differ = sampling.samples_differ(now, rec)
    if differ:
        out.append(differ)
    if not out:
        return []
    return [f"{shown} changed since ssdpts last wrote it ({', '.join(out)}, after ssdpts's record of "
            f"{record.get('sealed_at', '?')}): it may hold someone's data now"]


def _when(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def marker_status(path: str) -> str:
    """"ours": the marker vouches for the file now at ``path``; "none": no valid marker; "other": a
    marker for another file (the one ssdpts made was deleted or replaced); "old": a marker without a
    file identity (made by an older ssdpts), which cannot tell its file from another."""
    record = _read(path)
    if record is None:
        return "none"
    if record.get("format") != MARKER_FORMAT or not isinstance(record.get("identity"), dict):
        return "old"
    now = fingerprint.file_identity(os.path.realpath(path))
    if any(fingerprint.same_file(record.get(k), now) for k in ("identity", "previous")):
        return "ours"
    return "other"


def is_ssdpts_file(path: str) -> bool:
    """True when the marker next to ``path`` vouches for the file now there."""
    return marker_status(path) == "ours"
