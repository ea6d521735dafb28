"""The device claims this process holds (device/safety/claim.py), by the st_rdev of the claimed node: a
leaf, so that the tool runner (device/tools.py) and the safety verdict (device/safety/guard.py) can ask
about them without importing the claim. Safety's exclusive-open probe skips a device of ours (it
would otherwise find it "in use" by ourselves); a purge tool that opens the device exclusively
itself and meets our claim is lent it (:func:`blocked_by_own_claim`)."""

from __future__ import annotations

import os
import re
from typing import Any

HELD: dict[int, Any] = {}  # st_rdev -> the Claim holding it


def open_exclusive(node: str) -> tuple[int | None, OSError | None]:
    """``node`` opened read-only with ``O_EXCL`` (not waiting): (descriptor, None), or (None, the
    error): EBUSY when the kernel knows another exclusive user (a mount in any namespace, md, LVM,
    a program). The safety verdict's probe (closed at once) and the claim's holds (kept) both."""
    try:
        return os.open(node, os.O_RDONLY | os.O_EXCL | os.O_NONBLOCK | os.O_CLOEXEC), None
    except OSError as exc:
        return None, exc

_BUSY = re.compile(r"device or resource busy|\bEBUSY\b", re.I)


def blocked_by_own_claim(argv: list[str], output: str):
    """The claim of ours that made the tool ``argv`` fail with EBUSY, if that is what happened."""
    if not HELD or not _BUSY.search(output):
        return None
    for claim in HELD.values():
        t = claim.target
        names = {t.path, t.real_path, f"/dev/{t.name}", f"/dev/{t.parent}" if t.parent else t.real_path}
        if any(a in names or os.path.realpath(a) in names for a in argv[1:] if a.startswith("/")):
            return claim
    return None
