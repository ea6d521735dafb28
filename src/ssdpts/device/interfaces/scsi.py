"""SCSI / SAS: sdparm and sg_opcodes (REPORT SUPPORTED OPERATION CODES) parsed into the
catalogue's fields, and the SCSI purges (SANITIZE, FORMAT UNIT), polled with sg_requests.

smartctl's SCSI fields come from ata.parse_smartctl (one parser for every protocol smartctl speaks).
"""

from __future__ import annotations

import glob
import os
import re
from typing import Any

from ssdpts.device.purge import base as purge_base
from ssdpts.device.purge.base import Operation, State
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

    device_cls, tool, interface, label = "scsi", "sg_sanitize", "scsi", "SCSI SANITIZE"
    kinds = {"block": "block erase", "crypto": "cryptographic erase"}
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

    device_cls, tool = "scsi", "sg_format"
    name = "scsi-format"
    disclosure = "SCSI FORMAT UNIT (PTS purge)"
    hint = "check the drive, or pass --purge=discard (a disclosed fallback)"
    interval_s = 30

    def __init__(self, notes: tuple[str, ...] | list[str] = (), *, protection_type: int | None = None,
                 timeout_s: float | None = None, **seams: Any):
        super().__init__(notes, **seams)
        self.protection_type, self.timeout_s = protection_type, timeout_s

    def state(self, dev: str) -> State:
        return progress_state(dev, self.tools)

    def operation(self, dev: str) -> Operation:
        argv = ["sg_format", "--format", "--quick", "--early", *fmtpinfo(self.protection_type), dev]
        return Operation(argv, f"sg_format {dev}", f"FORMAT UNIT of {dev}", " ".join(argv), 48 * 3600)
