"""What is on a block device, read-only: ``blkid -p`` (a low-level probe: no cache, nothing
written), else lsblk; which signatures make a device part of something bigger (a ZFS pool, an LVM
volume group, an md array, bcache) and how guard.py names what it found."""

from __future__ import annotations

import json
import shutil
import subprocess


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# blkid TYPE values that mean "this device is part of a pool/array/volume group": writing to it
# corrupts something bigger than the device even when that is not assembled right now.
_MEMBER_NAMES = {
    "zfs_member": "ZFS pool member",
    "LVM2_member": "LVM physical volume",
    "linux_raid_member": "Linux RAID (md) member",
    "bcache": "bcache backing or cache device",
}


def probe_signatures(device: str) -> tuple[dict[str, str] | None, str | None]:
    """``blkid -p`` (low-level probe, no cache, read-only) → (fields, error).

    Returns ({}, None) when nothing was found. Falls back to lsblk's FSTYPE/PTTYPE when blkid is
    missing. An error is reported, not raised: the confirmation is required anyway.
    """
    if shutil.which("blkid") is None:
        return _lsblk_signatures(device)
    try:
        proc = subprocess.run(
            ["blkid", "-p", "-o", "export", device],
            capture_output=True, text=True, timeout=30, check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"blkid failed: {exc}"
    if proc.returncode == 2:
        return {}, None  # nothing found
    if proc.returncode == 8:
        return {"AMBIVALENT": "1"}, None  # several signatures, blkid cannot decide
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return None, f"blkid: {last}"
    fields = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip()
    fields.pop("DEVNAME", None)
    return fields, None


def _lsblk_signatures(device: str) -> tuple[dict[str, str] | None, str | None]:
    if shutil.which("lsblk") is None:
        return None, "neither blkid nor lsblk is installed (util-linux): signatures not checked"
    try:
        proc = subprocess.run(
            ["lsblk", "-J", "-d", "-o", "FSTYPE,PTTYPE", device],
            capture_output=True, text=True, timeout=30, check=False,
        )
        dev = (json.loads(proc.stdout).get("blockdevices") or [{}])[0] if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, AttributeError, IndexError) as exc:
        return None, f"lsblk failed: {exc}"
    if dev is None:
        return None, f"lsblk: {proc.stderr.strip() or 'failed'}"
    fields = {}
    if dev.get("fstype"):
        fields["TYPE"] = str(dev["fstype"])
    if dev.get("pttype"):
        fields["PTTYPE"] = str(dev["pttype"])
    return fields, None


def _member_reason(node: str, sig: dict[str, str]) -> str | None:
    kind = sig.get("TYPE", "")
    if kind not in _MEMBER_NAMES and not kind.endswith("_member"):
        return None
    what = _MEMBER_NAMES.get(kind, f"storage pool member ({kind})")
    return (
        f"{node} is a {what} (signature {kind}): if that data is no longer needed, remove it "
        f"yourself (e.g. wipefs -a {node}), or pick another target"
    )


def _describe_signature(node: str, sig: dict[str, str], parts: list[str]) -> list[str]:
    found = []
    if sig.get("PTTYPE"):
        listing = f" with {_plural(len(parts), 'partition')} ({', '.join(parts)})" if parts else ""
        found.append(f"{node} has a {sig['PTTYPE']} partition table{listing}")
    kind = sig.get("TYPE")
    if kind == "swap":
        found.append(f"{node} holds a swap signature")
    elif kind:
        found.append(f"{node} holds {_article(kind)} {kind} {'filesystem' if sig.get('USAGE', 'filesystem') == 'filesystem' else 'signature'}")
    if "AMBIVALENT" in sig:
        found.append(f"{node} holds several conflicting signatures")
    return found


# Filesystem names read letter by letter that start with a vowel sound ("an xfs filesystem").
_AN_ACRONYMS = {"xfs", "ntfs", "f2fs", "hfs", "hfsplus", "nilfs2", "lvm2"}


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" or word.lower() in _AN_ACRONYMS else "a"
