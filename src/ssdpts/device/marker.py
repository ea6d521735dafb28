"""The marker that proves a file target is ssdpts's own: ``<file>.ssdpts-target`` beside it.

Files are safe targets because ssdpts creates them. The marker vouches for one file only: the
device, inode, size, birth time and generation of the file as created (format 2), so a file someone
else puts at that path later — after deleting ssdpts's — is not taken for it, even when the
filesystem hands out the same inode number again (ext4 does so at once; birth time and generation
tell the two apart). A format-1 marker (path and time only) cannot tell, and is not trusted.
"""

from __future__ import annotations

from datetime import datetime, timezone
import json
import os
from typing import Any

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
    marker = marker_path(path)
    record = {
        "created_by": "ssdpts",
        "format": MARKER_FORMAT,
        "path": os.path.realpath(path),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "identity": identity if identity is not None else fingerprint.file_identity(os.path.realpath(path)),
    }
    if previous is not None:
        record["previous"] = previous
    tmp = f"{marker}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, marker)


def marker_status(path: str) -> str:
    """"ours": the marker vouches for the file now at ``path``; "none": no valid marker; "other": a
    marker for another file (the one ssdpts made was deleted or replaced); "old": a marker without a
    file identity (made by an older ssdpts), which cannot tell its file from another."""
    try:
        with open(marker_path(path), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return "none"
    if not isinstance(record, dict) or record.get("created_by") != "ssdpts":
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
