"""SCSI / SAS: sdparm and sg_opcodes (REPORT SUPPORTED OPERATION CODES) parsed into the
catalogue's fields, and the SCSI purges (SANITIZE, FORMAT UNIT), polled with sg_requests.

smartctl's SCSI fields come from ata.parse_smartctl (one parser for every protocol smartctl speaks).
"""

from __future__ import annotations

import glob
import os
import re
from typing import Any

from ssdpts.device.fields import value
from ssdpts.device.interfaces.ata import SmartctlInterface
from ssdpts.device.interfaces.base import Capabilities, Plan
from ssdpts.device.purge import base as purge_base
from ssdpts.device.purge.base import Operation, State
from ssdpts.device.purge.fallback import fallback
from ssdpts.device.target import Target
from ssdpts.device.tools import Gather, Tools

# sdparm --get exits 5 (illegal request) when the drive has no saved values page (QEMU's scsi-hd),
# after printing the current values, which are the ones read.
SDPARM_GET_OK_RCS = (0, 5)


def parse_sdparm(text: str) -> dict[str, Any]:
    """``sdparm --get=WCE,RCD`` → write_cache_enabled / read_cache_disabled.

    Lines look like ``WCE           1  [cha: y, def:  1, sav:  1]``."""
    out: dict[str, Any] = {}
    for m in re.finditer(r"^\s*(WCE|RCD)\s+(\d+)", text or "", re.M):
        key = "write_cache_enabled" if m.group(1) == "WCE" else "read_cache_disabled"
        out[key] = m.group(2) == "1"
    return out


def parse_sg_opcodes(text: str) -> dict[str, Any]:
    """``sg_opcodes`` (REPORT SUPPORTED OPERATION CODES) → SANITIZE service actions, FORMAT UNIT.

    Table rows look like `` 48        2       10             Sanitize, block erase``."""
    if not re.search(r"Opcode", text or ""):
        return {}
    rows = re.findall(r"^\s*([0-9a-fA-F]{2})\s+(?:([0-9a-fA-F]{1,4})\s+)?\d+\s+.*?([A-Z][^\n]*)$", text, re.M)
    names = {(op.lower(), (sa or "").lower()): name.strip() for op, sa, name in rows}
    return {
        "sanitize_overwrite_supported": ("48", "1") in names,
        "sanitize_block_erase_supported": ("48", "2") in names,
        "sanitize_crypto_erase_supported": ("48", "3") in names,
        "format_unit_supported": any(op == "04" for op, _ in names),
    }


# ==================================================================================================
# Collection
# ==================================================================================================


def collect(dev: str, g: Gather, scsi: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The scsi group: smartctl's fields (``scsi``), completed by sdparm (caching mode page) and
    sg_opcodes (which SANITIZE service actions and FORMAT UNIT the device supports)."""
    res = g.run_kept(["sdparm", "--get=WCE,RCD", dev], "sdparm.txt", "sdparm",
                     ok_codes=lambda rc: rc in SDPARM_GET_OK_RCS)
    if res.ok:
        scsi.update({k: v for k, v in parse_sdparm(res.stdout).items() if v is not None})
    res = g.run_kept(["sg_opcodes", dev], "sg-opcodes.txt", "sg_opcodes")
    if res.ok:
        scsi.update(parse_sg_opcodes(res.stdout))
    if scsi.get("protection_type") is None:
        # The sd driver's view of READ CAPACITY(16) (prot_en, p_type): smartctl omits it when prot_en = 0.
        name = os.path.basename(dev)
        for path in sorted(glob.glob(g.sysfs.path("class", "block", name, "device", "scsi_disk", "*",
                                                  "protection_type"))):
            pt = g.sysfs.read_int(path)
            if pt is not None:
                scsi["protection_type"] = pt
                break
    if scsi:
        return scsi, "not reported by smartctl, sdparm, sg_opcodes or sysfs"
    return None, g.collectors.get("smartctl") or "no SCSI tool answered"


# ==================================================================================================
# Purge (PTS purge: SANITIZE or FORMAT UNIT)
# ==================================================================================================


def progress_state(dev: str, tools: Tools) -> State:
    res = tools.run(["sg_requests", "--progress", dev], timeout=30, ok_codes=lambda rc: True)
    m = re.search(r"Progress indication:\s*([\d.]+)\s*%", res.stdout + res.stderr)
    if m:
        return "running", float(m.group(1)), "in progress"
    tur = tools.run(["sg_turs", dev], timeout=30)
    if tur.ok:
        return "done", 100.0, "ready"
    return "running", None, "not ready"


class SanitizePurge(purge_base.SanitizePurge):
    """sg_sanitize --block|--crypto --quick --early, polled with sg_requests --progress."""

    device_classes, tool, interface, label = ("scsi", "usb"), "sg_sanitize", "scsi", "SCSI SANITIZE"
    kinds = {"block": "block erase", "crypto": "cryptographic erase"}
    capability = {"block": "sanitize_block_erase_supported", "crypto": "sanitize_crypto_erase_supported"}
    hint = "check sg_opcodes for SANITIZE support, or pass --purge=scsi-format"

    @property
    def flag(self) -> str:
        return "--block" if self.action == "block" else "--crypto"

    def state(self, dev: str) -> State:
        return progress_state(dev, self.tools)

    def operation(self, dev: str) -> Operation:
        return Operation(["sg_sanitize", self.flag, "--quick", "--early", dev], f"sg_sanitize {self.flag} {dev}",
                         f"SCSI sanitize ({self.action}) of {dev}", f"sg_sanitize {self.flag} on {dev}", 24 * 3600)


def fmtpinfo(protection_type: int | None) -> list[str]:
    """sg_format options that keep the current T10 PI type (FORMAT UNIT clears PI by default)."""
    return {1: ["--fmtpinfo=2"], 2: ["--fmtpinfo=3"], 3: ["--fmtpinfo=3", "--pfu=1"]}.get(protection_type or 0, [])


class FormatPurge(purge_base.CommandPollPurge):
    """sg_format --format (keeps the block size and protection type), polled with sg_requests."""

    device_classes, tool = ("scsi", "usb"), "sg_format"
    name = "scsi-format"
    disclosure = "SCSI FORMAT UNIT (PTS purge)"
    hint = "check the drive, or pass --purge=discard (a disclosed fallback)"
    interval_s = 30

    def __init__(self, notes: tuple[str, ...] | list[str] = (), *, protection_type: int | None = None,
                 timeout_s: float | None = None, **seams: Any):
        super().__init__(notes, **seams)
        self.protection_type, self.timeout_s = protection_type, timeout_s

    def configured(self, info: dict, target: Target) -> purge_base.DevicePurge:
        return type(self)(protection_type=value(info, "scsi", "protection_type"))

    def state(self, dev: str) -> State:
        return progress_state(dev, self.tools)

    def operation(self, dev: str) -> Operation:
        argv = ["sg_format", "--format", "--quick", "--early", *fmtpinfo(self.protection_type), dev]
        return Operation(argv, f"sg_format {dev}", f"FORMAT UNIT of {dev}", " ".join(argv), 48 * 3600)


class SCSI(SmartctlInterface):
    """A SCSI/SAS disk: smartctl, sdparm and sg_opcodes, SANITIZE and FORMAT UNIT, the caching
    mode page's WCE bit."""

    cls = "scsi"
    purges = (SanitizePurge, FormatPurge)
    cache_method = "sdparm WCE"

    def groups(self, disk_dev, block_name, g, sc, groups) -> None:
        groups["scsi"] = collect(disk_dev, g, dict(sc["scsi"]) if sc and sc["scsi"] else {})
        groups["ata"] = (None, f"{block_name} is a SCSI device (ATA fields do not apply)")

    def device_purge(self, caps: Capabilities, target: Target, notes: list[str]):
        """SANITIZE (block, then crypto erase), else FORMAT UNIT, else the fallback."""
        v, info, dev = caps.v, caps.info, f"/dev/{target.parent or target.name}"
        if caps.have("sg_sanitize") and v("scsi", "sanitize_block_erase_supported"):
            return SanitizePurge("block", notes)
        if caps.have("sg_sanitize") and v("scsi", "sanitize_crypto_erase_supported"):
            return SanitizePurge("crypto", notes)
        if v("scsi", "sanitize_block_erase_supported") is None:
            notes.append(f"SANITIZE support of {dev} unknown (REPORT SUPPORTED OPERATION CODES not answered)")
        else:
            notes.append(f"{dev} does not support SANITIZE block or crypto erase")
        if not caps.have("sg_format"):
            notes.append("sg3-utils is not installed: install sg3-utils for FORMAT UNIT")
            return fallback(info, target, notes)
        if v("scsi", "format_unit_supported") is not False:
            return FormatPurge(notes, protection_type=v("scsi", "protection_type"))
        notes.append(f"{dev} does not report FORMAT UNIT")
        return fallback(info, target, notes)

    def write_cache(self, dev, *, ctrl_dev=None, vwc_present=None) -> Plan:
        return Plan(self.cache_method, dev, ("sdparm", "--get=WCE", dev),
                    {"enabled": ("sdparm", "--set=WCE", dev), "disabled": ("sdparm", "--clear=WCE", dev)}, "sdparm",
                    SDPARM_GET_OK_RCS)


class USB(SCSI):
    """A disk behind a USB bridge: smartctl says whether it speaks ATA or SCSI; no device-level
    purge (the bridge does not pass SANITIZE / FORMAT UNIT reliably) and no write cache control."""

    cls = "usb"
    purges = ()
    cache_method = None

    def __init__(self, ata: SmartctlInterface, scsi: SmartctlInterface, **texts: str):
        super().__init__(**texts)
        self.ata, self.scsi = ata, scsi

    def refined(self, sc):
        if sc and sc["ata"]:
            return self.ata
        return self.scsi if sc and sc["scsi"] else self

    def device_purge(self, caps, target, notes):
        notes.append(f"/dev/{target.parent or target.name} is behind a USB bridge: SCSI SANITIZE/FORMAT UNIT are "
                     "not passed reliably")
        return fallback(caps.info, target, notes)

    def write_cache(self, dev, *, ctrl_dev=None, vwc_present=None) -> None:
        return None
