"""What the drive's own tools say about it, inside the lab guest: the reference ssdpts is compared with.

Each ``*_truth`` function asks nvme-cli, smartctl, hdparm, sdparm, sg3-utils, lspci and sysfs in
the guest and returns ``{"group.field": value}`` in ssdpts's field names and units, so a test
compares ``ssdpts info --json`` with it field by field. Only facts that do not change while the
lab runs are taken (no counters).
"""

from __future__ import annotations

import json
import re


def _sysfs(lab, key: str, rel: str) -> str:
    name = lab.dev[key].rsplit("/", 1)[1]
    return lab.sh(["cat", f"/sys/block/{name}/{rel}"], check=True).stdout.strip()


def _block(lab, key: str) -> dict:
    return {
        "identity.capacity_bytes": int(_sysfs(lab, key, "size")) * 512,
        "identity.logical_block_size_bytes": int(_sysfs(lab, key, "queue/logical_block_size")),
        "identity.physical_block_size_bytes": int(_sysfs(lab, key, "queue/physical_block_size")),
        "identity.rotational": _sysfs(lab, key, "queue/rotational") == "1",
    }


def lspci_link(text: str) -> dict:
    """LnkCap / LnkSta of one function from ``lspci -vv -s ADDR``: speeds in GT/s, widths in lanes."""
    out = {}
    for reg, pre in (("LnkCap", "max"), ("LnkSta", "current")):
        m = re.search(rf"{reg}:.*?Speed ([\d.]+)GT/s.*?Width x(\d+)", text)
        if m:
            out[f"pcie.{pre}_link_speed_gts"] = float(m.group(1))
            out[f"pcie.{pre}_link_width"] = int(m.group(2))
    return out


def fw_slot_revision(raw: str) -> str:
    """nvme-cli's fw-log JSON gives a slot as '<u64> (<display>)'; the revision is the u64's 8 bytes,
    little-endian ASCII, space padded (NVMe Base 2.0, Firmware Slot Information log, FRS1..7)."""
    n = int(str(raw).split()[0])
    return n.to_bytes(8, "little").decode("ascii", "replace").rstrip(" \0")


def write_cache_argv(kind: str, dev: str) -> list[str]:
    """The drive's own tool reading its volatile write cache: nvme get-feature 6, hdparm -W, sdparm WCE."""
    if kind == "nvme":
        return ["nvme", "get-feature", dev.rsplit("n", 1)[0], "--feature-id=6"]
    return ["hdparm", "-W", dev] if kind == "ata" else ["sdparm", "--get=WCE", dev]


def write_cache_state(kind: str, text: str) -> str:
    """What ``write_cache_argv`` printed: "enabled" or "disabled". sdparm exits 5 on QEMU's disk (no
    saved values page) but prints the current value first."""
    if kind == "nvme":
        return "enabled" if int(text.rsplit(":", 1)[1].strip(), 16) & 1 else "disabled"
    if kind == "ata":
        return "enabled" if "(on)" in text else "disabled"
    line = next(ln for ln in text.splitlines() if ln.split()[:1] == ["WCE"])
    return "enabled" if line.split()[1] == "1" else "disabled"


def nvme_truth(lab, key: str) -> dict:
    dev = lab.dev[key]
    ctrl = re.sub(r"n\d+$", "", dev)
    idc = lab.tool_json(["nvme", "id-ctrl", ctrl, "-o", "json"])
    idns = lab.tool_json(["nvme", "id-ns", dev, "-o", "json"])
    fw = lab.tool_json(["nvme", "fw-log", ctrl, "-o", "json"])
    fw = next(iter(fw.values())) if len(fw) == 1 and isinstance(next(iter(fw.values())), dict) else fw
    lsns = lab.tool_json(["nvme", "list-ns", ctrl, "-o", "json"])
    feat = lab.sh(write_cache_argv("nvme", dev), check=True).stdout
    addr = lab.sh(["readlink", "-f", f"/sys/class/nvme/{ctrl.rsplit('/', 1)[1]}/device"], check=True).stdout
    lspci = lab.sh(["lspci", "-vv", "-s", addr.strip().rsplit("/", 1)[1]], check=True).stdout
    fmt = idns["flbas"] & 0xF
    lbaf = idns["lbafs"][fmt]
    ver = idc["ver"]
    afi = fw["Active Firmware Slot (afi)"] & 0x7
    t = {
        "identity.model": idc["mn"].strip(),
        "identity.serial": idc["sn"].strip(),
        "identity.firmware": idc["fr"].strip(),
        "identity.interface": f"NVMe {ver >> 16}.{(ver >> 8) & 0xFF}",
        "identity.driver": "nvme",
        "nvme.namespace_id": int(_sysfs(lab, key, "nsid")),
        "nvme.namespaces_on_controller": len(lsns["nsid_list"]),
        "nvme.lba_format_index": fmt,
        "nvme.lba_data_size_bytes": 2 ** lbaf["ds"],
        "nvme.lba_metadata_size_bytes": lbaf["ms"],
        "nvme.namespace_size_bytes": idns["nsze"] * 2 ** lbaf["ds"],
        "nvme.format_nvm_supported": bool(idc["oacs"] & 0x2),
        "nvme.sanitize_crypto_erase_supported": bool(idc["sanicap"] & 0x1),
        "nvme.sanitize_block_erase_supported": bool(idc["sanicap"] & 0x2),
        "nvme.format_crypto_erase_supported": bool(idc["fna"] & 0x4),
        "nvme.format_applies_to_all_namespaces": bool(idc["fna"] & 0x1),
        "nvme.dsm_deallocate_supported": bool(idc["oncs"] & 0x4),
        "nvme.volatile_write_cache_present": bool(idc["vwc"] & 0x1),
        "nvme.volatile_write_cache_enabled": write_cache_state("nvme", feat) == "enabled",
        "nvme.active_firmware_slot": afi,
        "nvme.firmware_slot_revisions": {str(afi): fw_slot_revision(fw[f"Firmware Rev Slot {afi}"])},
        **_block(lab, key),
        **lspci_link(lspci),
    }
    return t


def ata_truth(lab, key: str) -> dict:
    dev = lab.dev[key]
    sm = lab.tool_json(["smartctl", "-x", "-j", dev], ok_rc=tuple(range(256)))
    hd = lab.sh(["hdparm", "-I", dev]).stdout
    w = lab.sh(write_cache_argv("ata", dev), check=True).stdout
    tran = json.loads(lab.sh(["lsblk", "-J", "-d", "-o", "TRAN", dev], check=True).stdout)["blockdevices"][0]["tran"]
    return {
        "identity.model": sm["model_name"],
        "identity.serial": sm["serial_number"],
        "identity.firmware": sm["firmware_version"],
        "identity.rotation_rate_rpm": sm["rotation_rate"],
        "identity.transport": tran,
        "ata.ata_version": sm["ata_version"]["string"],
        "ata.trim_supported": sm["trim"]["supported"],
        "ata.trim_reads_zeros": sm["trim"]["zeroed"],
        # smartctl prints "ATA Security is: Unavailable" and hdparm -I has no "Security:" section:
        # IDENTIFY word 82 bit 1 is clear, the feature set is not supported.
        "ata.security_supported": "ata_security" in sm or "Security:" in hd,
        "ata.sanitize_supported": "SANITIZE" in hd.upper(),
        "ata.write_cache_enabled": write_cache_state("ata", w) == "enabled",
        "smart.smart_passed": sm["smart_status"]["passed"],
        "smart.composite_temperature_c": sm["temperature"]["current"],
        **_block(lab, key),
    }


def scsi_truth(lab, key: str) -> dict:
    dev = lab.dev[key]
    sm = lab.tool_json(["smartctl", "-x", "-j", dev], ok_rc=tuple(range(256)))
    wce = lab.sh(write_cache_argv("scsi", dev)).stdout  # exit 5 on QEMU's disk: write_cache_state
    cap = lab.sh(["sg_readcap", "-l", dev], check=True).stdout
    prot = re.search(r"prot_en=(\d), p_type=(\d)", cap)
    return {
        "identity.model": sm["scsi_model_name"],
        "identity.serial": sm["serial_number"],
        "identity.firmware": sm["scsi_revision"],
        "identity.rotation_rate_rpm": sm["rotation_rate"],
        "scsi.scsi_vendor": sm["scsi_vendor"],
        "scsi.scsi_product": sm["scsi_product"],
        "scsi.scsi_version": sm["scsi_version"],
        "scsi.lb_provisioning": sm["scsi_lb_provisioning"]["name"],
        "scsi.write_cache_enabled": write_cache_state("scsi", wce) == "enabled",
        # T10 PI type: 0 when protection is off, else p_type + 1 (SBC-4 READ CAPACITY (16)).
        "scsi.protection_type": 0 if prot.group(1) == "0" else int(prot.group(2)) + 1,
        **_block(lab, key),
    }


def truth(lab, key: str) -> dict:
    from .conftest import TARGETS

    if ("truth", key) not in lab.cache:
        kind = TARGETS[key].kind
        lab.cache[("truth", key)] = {"nvme": nvme_truth, "ata": ata_truth, "scsi": scsi_truth}[kind](lab, key)
    return lab.cache[("truth", key)]


def ssdpts_value(info: dict, path: str):
    """A field of ``ssdpts info --json``: its value, or the "not available: ..." string."""
    group, name = path.split(".", 1)
    v = info["device"].get(group, {})
    v = v.get(name) if isinstance(v, dict) else v
    return v["value"] if isinstance(v, dict) and "value" in v else v
