"""Device metadata for the data set: the gathering that combines every interface's collectors.

The data set (docs/design.md#data-set): a result is only worth modelling when everything that can move it is
recorded with it. :func:`collect` runs every collector that applies to the target, keeps each
tool's raw output (``raw_dir``, the run's ``device/`` directory) and returns the parsed fields
grouped by source (the catalogue is fields.py). A collector that cannot run (tool missing, not
permitted, not applicable to this kind of device) never raises.

Where each source lives: the interface objects (interfaces/: nvme.py for nvme-cli, ata.py for
smartctl and hdparm, scsi.py for sdparm and sg_opcodes; block.py and file.py for the devices
ssdpts has no tool for), block.py (sysfs queue, lsblk, the device class), host/pcie.py (sysfs
links, lspci). The interface is chosen once from the device class (interfaces/choice.py).

Read-only: the gathering is given a read-only tool runner (tools.py), so it can only run
identify/log/get commands. Devices without a management interface (loop, zram, virtio, dm, md)
are not even opened: only sysfs and lsblk are read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ssdpts.device import block
from ssdpts.device import target as tgt
from ssdpts.device.fields import GROUPS, build_group, not_available
from ssdpts.device.host import pcie
from ssdpts.device.interfaces import choice
from ssdpts.device.interfaces.base import Interface
from ssdpts.device.target import Target
from ssdpts.device.tools import TOOLS, Gather, Sysfs, Tools, as_str, fill_missing



def _identity(target: Target, iface: Interface, block_name: str, g: Gather, *, is_file: bool) -> dict[str, Any]:
    """What sysfs and the Target already know; the interfaces' collectors fill in the rest."""
    ident: dict[str, Any] = {
        "device_class": "file" if is_file else iface.cls, "path": target.path, "kernel_name": target.name,
        "vendor": target.vendor, "model": target.model, "serial": target.serial, "firmware": target.firmware,
        "capacity_bytes": target.size_bytes, "logical_block_size_bytes": target.logical_block_size_bytes,
        "physical_block_size_bytes": target.physical_block_size_bytes, "transport": target.transport,
        "rotational": target.rotational, "wwn": target.wwid,
    }
    driver = iface.driver(g, os.path.join(g.sysfs.block_dir(block_name), "device"))
    if driver:
        ident["driver"] = driver
    iface.identity(ident, block_name, g)
    ident["interface"] = iface.interface
    return ident


def _management(target: Target, iface: Interface, block_name: str, g: Gather, ident: dict[str, Any],
                smart: dict[str, Any], groups: dict[str, tuple[dict | None, str]]) -> str:
    """The nvme / ata / scsi groups (and SMART) from the interface that manages the device.
    Returns the device class, refined by what smartctl says (a SATA disk behind a USB bridge)."""
    cls = iface.manage(target, block_name, g, ident, smart, groups)
    if smart:
        groups["smart"] = (smart, f"not reported by {smart.get('smart_source', 'the SMART tool')}")
    else:
        groups["smart"] = (None, iface.no_smart(block_name, g))
    return cls


def gather(target: Target, *, tools: Tools | None = None, sysfs: Sysfs | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Collect everything for ``target``: (parsed info, {raw file name: text}). Writes nothing.
    ``tools`` must be read-only (the default); ``sysfs``: the tree to read (default /sys)."""
    g = Gather(tools or Tools(), sysfs or tgt.host_sysfs())
    cls = block.device_class(target, g.sysfs)
    info: dict[str, Any] = {"format": 1, "collected_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "device_class": cls,
                            "tools": {t: g.tools.which(t) is not None for t in TOOLS}}
    block_name = target.parent or target.name
    is_file = target.kind == "file"
    if is_file:
        backing = block.file_backing_disk(target, g.sysfs)
        if backing is None:
            reason = f"{target.path} is a file on a filesystem without a backing block device"
            info.update({grp: build_group(grp, None, reason) for grp in GROUPS})
            info["identity"] = build_group("identity", {"device_class": "file", "path": target.path,
                                                         "capacity_bytes": target.size_bytes}, reason)
            info["collectors"], info["raw_files"] = {"all": not_available(reason)}, []
            return info, g.raw
        block_name = backing
        info["note"] = f"file target: device fields describe {backing}, the disk under {os.path.dirname(target.real_path)}"
        try:
            target = tgt.block_target_from_sysfs(backing, sysfs=g.sysfs, tools=g.tools)
        except Exception:  # noqa: BLE001 - metadata must never fail a run
            pass
        cls = block.device_class(target, g.sysfs)
        info["backing_device_class"] = cls

    iface = choice.for_class(cls)
    ident = _identity(target, iface, block_name, g, is_file=is_file)
    smart: dict[str, Any] = {}
    groups: dict[str, tuple[dict | None, str]] = {}
    cls = _management(target, iface, block_name, g, ident, smart, groups)
    groups["queue"] = block.collect_queue(block_name, g)
    groups["lsblk"] = lsb = block.collect_lsblk(f"/dev/{block_name}", block_name, g)
    if lsb[0]:
        fill_missing(ident, {"transport": lsb[0].get("tran"), "vendor": lsb[0].get("vendor"),
                             "model": lsb[0].get("model"), "serial": lsb[0].get("serial"), "wwn": lsb[0].get("wwn")})
    groups["pcie"] = pcie.collect(block_name, g)

    info["device_class"] = "file" if is_file else cls
    ident["device_class"] = info["device_class"]
    ident = {k: (as_str(v) if isinstance(v, str) else v) for k, v in ident.items()}
    groups["identity"] = (ident, "not reported for this device")
    for grp in GROUPS:
        values, reason = groups.get(grp, (None, "not collected"))
        info[grp] = build_group(grp, values, reason)
    info["collectors"] = g.collectors
    info["raw_files"] = sorted(g.raw)
    return info, g.raw


def collect(target: Target, raw_dir: Path | None, *, tools: Tools | None = None,
            sysfs: Sysfs | None = None) -> dict[str, Any]:
    """Collect, keep every raw output as a file in ``raw_dir`` (the run's device/ directory; None:
    keep nothing), return the parsed fields (manifest["device"]). Never raises for a collector."""
    try:
        info, raw = gather(target, tools=tools, sysfs=sysfs)
    except Exception as exc:  # noqa: BLE001 - metadata must never fail a run
        reason = not_available(f"device metadata collection failed: {exc.__class__.__name__}: {exc}")
        info = {"format": 1, "error": reason, **{grp: build_group(grp, None, reason) for grp in GROUPS}}
        raw = {}
    if raw_dir is not None:
        raw_dir = Path(raw_dir)
        written = []
        for name, text in raw.items():
            try:
                raw_dir.mkdir(parents=True, exist_ok=True)
                (raw_dir / name).write_text(text)
                written.append(name)
            except OSError as exc:
                info.setdefault("raw_errors", {})[name] = f"cannot write: {exc.strerror}"
        info["raw_files"] = sorted(written)
    return info


def purge_facts(target: Target, *, tools: Tools | None = None, sysfs: Sysfs | None = None) -> dict[str, Any]:
    """What purge selection needs (select_purge's probe when it is given no info): the full
    read-only gather() for devices with a device-level purge (nvme, ata, scsi, usb), and just the
    device class for the others (loop, zram, virtio, ...), which need no tool at all."""
    cls = block.device_class(target, sysfs)
    if not choice.for_class(cls).managed:
        return {"device_class": cls}
    info, _ = gather(target, tools=tools, sysfs=sysfs)
    return info


# ==================================================================================================
# --describe FILE: what no tool can read
# ==================================================================================================


def load_description(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A user description (TOML or JSON): NAND type, channels, DRAM, notes, sponsor...

    Stored with the run as manifest["description"] (report reads e.g. nand_type, sponsor). Raises
    UserError with what to fix, because a typo here is the user's input, not a collector failure.
    """
    from ssdpts.errors import UserError

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read --describe file {p} ({exc.strerror}): check the path") from None
    try:
        if p.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            import tomllib

            try:
                doc = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                doc = json.loads(text)
    except (ValueError, json.JSONDecodeError) as exc:
        raise UserError(f"--describe file {p} is neither valid TOML nor JSON ({exc}): fix it or leave it out") from None
    if not isinstance(doc, dict):
        raise UserError(f"--describe file {p} must hold a table/object of fields (e.g. nand_type = \"TLC\")")
    return json.loads(json.dumps(doc, default=str))
