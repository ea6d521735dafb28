"""NVMe: nvme-cli's identify, features and logs parsed into the catalogue's fields, the controller
and namespace names from sysfs, and the NVMe purges (Sanitize, Format NVM with Secure Erase).

Parsers are pure and tested on recorded outputs in tests/fixtures/tools; they read the JSON shapes
of nvme-cli 1.x to 2.16. Collection only runs read commands (id-ctrl, id-ns, get-feature,
smart-log, fw-log, sanitize-log, list, version).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ssdpts.device.fields import not_available, value
from ssdpts.device.interfaces import ata
from ssdpts.device.interfaces.base import Capabilities, Interface, Plan
from ssdpts.device.nvme_admin import nvme_names
from ssdpts.device.purge import base as purge_base
from ssdpts.device.purge.base import DevicePurge, Log, Operation, PurgeRecord, State, estimate_timeout, quiet
from ssdpts.device.purge.fallback import fallback
from ssdpts.device.target import Target
from ssdpts.device.tools import Gather, Sysfs, Tools, as_int, as_str, bit, fill_missing, install_hint, parse_json
from ssdpts.errors import RunFailed


def kelvin_to_c(k: Any) -> float | None:
    """NVMe reports temperatures in kelvin; 0 means "not reported"."""
    try:
        k = int(k)
    except (TypeError, ValueError):
        return None
    return round(k - 273.15, 2) if k > 0 else None


def parse_nvme_list(doc: dict, device: str) -> dict[str, Any]:
    """This device's entry of ``nvme list -o json``, in the flat (1.x-2.10) or nested (2.11+) layout.

    Returns {} when the device is not listed. ``device`` is a node such as /dev/nvme0n1 or nvme0n1.
    """
    name = os.path.basename(device)
    out: dict[str, Any] = {}
    for dev in (doc or {}).get("Devices") or []:
        if not isinstance(dev, dict):
            continue
        if "DevicePath" in dev:  # flat layout
            if os.path.basename(str(dev.get("DevicePath"))) == name:
                out.update(model=as_str(dev.get("ModelNumber")), serial=as_str(dev.get("SerialNumber")),
                           firmware=as_str(dev.get("Firmware")), product_name=as_str(dev.get("ProductName")),
                           namespace_id=as_int(dev.get("NameSpace")), sector_size_bytes=as_int(dev.get("SectorSize")),
                           physical_size_bytes=as_int(dev.get("PhysicalSize")), used_bytes=as_int(dev.get("UsedBytes")),
                           maximum_lba=as_int(dev.get("MaximumLBA")))
                return out
            continue
        for sub in dev.get("Subsystems") or []:
            ctrls = sub.get("Controllers") or []
            spaces = [(ns, c) for c in ctrls for ns in (c.get("Namespaces") or [])]
            spaces += [(ns, ctrls[0] if ctrls else {}) for ns in (sub.get("Namespaces") or [])]
            for ns, ctrl in spaces:
                if ns.get("NameSpace") == name:
                    out.update(model=as_str(ctrl.get("ModelNumber")), serial=as_str(ctrl.get("SerialNumber")),
                               firmware=as_str(ctrl.get("Firmware")), controller=as_str(ctrl.get("Controller")),
                               transport=as_str(ctrl.get("Transport")), pci_address=as_str(ctrl.get("Address")),
                               subsystem=as_str(sub.get("Subsystem")), subsystem_nqn=as_str(sub.get("SubsystemNQN")),
                               namespace_id=as_int(ns.get("NSID")), sector_size_bytes=as_int(ns.get("SectorSize")),
                               physical_size_bytes=as_int(ns.get("PhysicalSize")), used_bytes=as_int(ns.get("UsedBytes")),
                               maximum_lba=as_int(ns.get("MaximumLBA")))
                    return out
    return out


def _nvme_version(ver: int | None) -> str | None:
    if not ver:
        return None
    major, minor, tertiary = ver >> 16, (ver >> 8) & 0xFF, ver & 0xFF
    return f"{major}.{minor}.{tertiary}" if tertiary else f"{major}.{minor}"


def parse_id_ctrl(doc: dict) -> dict[str, Any]:
    """``nvme id-ctrl -o json`` → nvme group fields (+ identity model/serial/firmware)."""
    d = doc or {}
    oacs, oncs, fna, sanicap = (as_int(d.get(k)) for k in ("oacs", "oncs", "fna", "sanicap"))
    vwc, apsta, frmw, hctma = (as_int(d.get(k)) for k in ("vwc", "apsta", "frmw", "hctma"))
    npss = as_int(d.get("npss"))
    ps0 = (d.get("psds") or [None])[0]
    max_power = None
    if isinstance(ps0, dict) and as_int(ps0.get("max_power")) is not None:
        # max_power is in 0.01 W, or 0.0001 W when the state's MXPS bit (max_power_scale) is set.
        scale = 0.0001 if as_int(ps0.get("max_power_scale")) else 0.01
        max_power = round(as_int(ps0.get("max_power")) * scale, 4)
    vid, ieee = as_int(d.get("vid")), as_int(d.get("ieee"))
    return {
        "model": as_str(d.get("mn")), "serial": as_str(d.get("sn")), "firmware": as_str(d.get("fr")),
        "subsystem_nqn": as_str(d.get("subnqn")),
        "pci_vendor_id": f"0x{vid:04x}" if vid is not None else None,
        "ieee_oui": f"0x{ieee:06x}" if ieee is not None else None,
        "nvme_version": _nvme_version(as_int(d.get("ver"))),
        "controller_id": as_int(d.get("cntlid")),
        "total_capacity_bytes": as_int(d.get("tnvmcap")),
        "unallocated_capacity_bytes": as_int(d.get("unvmcap")),
        "mdts": as_int(d.get("mdts")),
        "max_namespaces": as_int(d.get("nn")),
        "oacs": oacs, "oncs": oncs, "fna": fna, "sanicap": sanicap,
        "format_nvm_supported": bit(oacs, 1),
        "format_applies_to_all_namespaces": bit(fna, 0),
        "secure_erase_applies_to_all_namespaces": bit(fna, 1),
        "format_crypto_erase_supported": bit(fna, 2),
        "sanitize_crypto_erase_supported": bit(sanicap, 0),
        "sanitize_block_erase_supported": bit(sanicap, 1),
        "sanitize_overwrite_supported": bit(sanicap, 2),
        "dsm_deallocate_supported": bit(oncs, 2),
        "write_zeroes_supported": bit(oncs, 3),
        "volatile_write_cache_present": bit(vwc, 0),
        "apst_supported": bit(apsta, 0),
        "power_states": None if npss is None else npss + 1,
        "max_power_ps0_w": max_power,
        "warning_temp_c": kelvin_to_c(d.get("wctemp")),
        "critical_temp_c": kelvin_to_c(d.get("cctemp")),
        "hctm_supported": bit(hctma, 0),
        "thermal_mgmt_min_c": kelvin_to_c(d.get("mntmt")),
        "thermal_mgmt_max_c": kelvin_to_c(d.get("mxtmt")),
        "firmware_slots": None if frmw is None else (frmw >> 1) & 0x7,
        "firmware_slot1_read_only": bit(frmw, 0),
    }


_DLFEAT = {0: "not reported", 1: "all bytes 00h", 2: "all bytes FFh"}


def parse_id_ns(doc: dict) -> dict[str, Any]:
    """``nvme id-ns -o json`` → namespace size and the LBA format in use (flbas)."""
    d = doc or {}
    flbas = as_int(d.get("flbas")) or 0
    # FLBAS bits 3:0 index the format; with more than 16 formats bits 6:5 are the upper bits.
    index = (flbas & 0xF) | (((flbas >> 5) & 0x3) << 4)
    formats = []
    for i, lbaf in enumerate(d.get("lbafs") or []):
        ds = as_int(lbaf.get("ds"))
        formats.append({"index": i, "data_size_bytes": (1 << ds) if ds else None,
                        "metadata_size_bytes": as_int(lbaf.get("ms")), "relative_performance": as_int(lbaf.get("rp")),
                        "in_use": i == index})
    cur = formats[index] if index < len(formats) else {}
    nsze = as_int(d.get("nsze"))
    size = cur.get("data_size_bytes")
    dlfeat = as_int(d.get("dlfeat"))
    eui, nguid = as_str(d.get("eui64")), as_str(d.get("nguid"))
    return {
        "namespace_size_blocks": nsze, "namespace_capacity_blocks": as_int(d.get("ncap")),
        "namespace_utilization_blocks": as_int(d.get("nuse")),
        "namespace_size_bytes": nsze * size if nsze is not None and size else None,
        "lba_format_index": index if formats else None,
        "lba_data_size_bytes": size, "lba_metadata_size_bytes": cur.get("metadata_size_bytes"),
        "lba_relative_performance": cur.get("relative_performance"),
        "lba_formats": formats or None,
        "deallocated_read_value": None if dlfeat is None else _DLFEAT.get(dlfeat & 0x7, "reserved"),
        "nguid": None if not nguid or set(nguid) <= {"0"} else nguid,
        "eui64": None if not eui or set(eui) <= {"0"} else eui,
    }


FEATURE_IDS = (0x01, 0x02, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A)

_FEATURE_LINE = re.compile(r"get-feature:\s*(0x[0-9a-fA-F]+|\d+)\s*\(([^)]*)\),\s*(\w+)\s+value:\s*(0x[0-9a-fA-F]+|\d+)")


def parse_get_feature(text: str) -> dict[int, int]:
    """``nvme get-feature -f FID`` output (text in every nvme-cli 1.x/2.x, or 2.x ``-o json``) →
    {fid: dword}. Handles several features concatenated in one capture."""
    out: dict[int, int] = {}
    for m in _FEATURE_LINE.finditer(text or ""):
        # nvme-cli prints both with "%#0*x": hex, and without the 0x prefix when the value is 0.
        out[int(m.group(1), 16)] = int(m.group(4), 16)
    if out:
        return out
    # nvme-cli ≥ 2.5 with -o json: {"feature": "0x06", "name": "...", "Current": "0x00000001"}
    for chunk in re.findall(r"\{[^{}]*\}", text or ""):
        try:
            d = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        fid = as_int(d.get("feature"))
        val = next((as_int(v) for k, v in d.items() if k.lower() in ("current", "default", "saved", "value")), None)
        if fid is not None and val is not None:
            out[fid] = val
    return out


def decode_feature(fid: int, dword: int) -> tuple[str, Any]:
    """(field name, decoded value) for one Get Features dword (NVMe base spec, Set Features)."""
    raw = f"0x{dword:08x}"
    if fid == 0x01:
        ab = dword & 0x7
        return "feature_arbitration", {"raw": raw, "arbitration_burst": None if ab == 7 else 1 << ab,
                                       "low_priority_weight": ((dword >> 8) & 0xFF) + 1,
                                       "medium_priority_weight": ((dword >> 16) & 0xFF) + 1,
                                       "high_priority_weight": ((dword >> 24) & 0xFF) + 1}
    if fid == 0x02:
        return "feature_power_management", {"raw": raw, "power_state": dword & 0x1F, "workload_hint": (dword >> 5) & 0x7}
    if fid == 0x04:
        return "feature_temperature_threshold_c", kelvin_to_c(dword & 0xFFFF)
    if fid == 0x05:
        return "feature_error_recovery", {"raw": raw, "time_limited_error_recovery_ms": (dword & 0xFFFF) * 100,
                                          "dulbe": bool((dword >> 16) & 1)}
    if fid == 0x06:
        return "volatile_write_cache_enabled", bool(dword & 1)
    if fid == 0x07:
        return "feature_number_of_queues", {"raw": raw, "io_submission_queues": (dword & 0xFFFF) + 1,
                                            "io_completion_queues": ((dword >> 16) & 0xFFFF) + 1}
    if fid == 0x08:
        return "feature_interrupt_coalescing", {"raw": raw, "aggregation_threshold": (dword & 0xFF) + 1,
                                                "aggregation_time_us": ((dword >> 8) & 0xFF) * 100}
    if fid == 0x09:
        return "feature_interrupt_vector_config", {"raw": raw, "interrupt_vector": dword & 0xFFFF,
                                                   "coalescing_disable": bool((dword >> 16) & 1)}
    if fid == 0x0A:
        return "feature_write_atomicity", {"raw": raw, "disable_normal": bool(dword & 1)}
    return f"feature_0x{fid:02x}", {"raw": raw}


def critical_warning_int(v: Any) -> int | None:
    """smart-log critical_warning: an int up to nvme-cli 2.10, an object with "value" from 2.11."""
    if isinstance(v, dict):
        if "value" in v:
            return as_int(v.get("value"))
        bits = ("available_spare", "temp_threshold", "reliability_degraded", "ro", "vmbu_failed", "pmr_ro")
        return sum((1 << i) for i, b in enumerate(bits) if as_int(v.get(b)))
    return as_int(v)


def parse_nvme_smart_log(doc: dict) -> dict[str, Any]:
    """``nvme smart-log -o json`` (2.3 / 2.11 / 2.16 shapes) → smart group fields, units in names."""
    d = doc or {}
    sensors = []
    for i in range(1, 9):
        c = kelvin_to_c(d.get(f"temperature_sensor_{i}"))
        if c is not None:
            sensors.append(c)
    dur, duw = as_int(d.get("data_units_read")), as_int(d.get("data_units_written"))
    return {
        "smart_source": "nvme smart-log",
        "critical_warning": critical_warning_int(d.get("critical_warning")),
        "composite_temperature_c": kelvin_to_c(d.get("temperature")),
        "temperature_sensors_c": sensors or None,
        "available_spare_pct": as_int(d.get("avail_spare")),
        "available_spare_threshold_pct": as_int(d.get("spare_thresh")),
        "percentage_used_pct": as_int(d.get("percent_used", d.get("percentage_used"))),
        "data_units_read": dur, "data_units_written": duw,
        "data_read_bytes": None if dur is None else dur * 512_000,
        "data_written_bytes": None if duw is None else duw * 512_000,
        "host_read_commands": as_int(d.get("host_read_commands")),
        "host_write_commands": as_int(d.get("host_write_commands")),
        "controller_busy_time_min": as_int(d.get("controller_busy_time")),
        "power_cycles": as_int(d.get("power_cycles")),
        "power_on_hours": as_int(d.get("power_on_hours")),
        "unsafe_shutdowns": as_int(d.get("unsafe_shutdowns")),
        "media_errors": as_int(d.get("media_errors")),
        "error_log_entries": as_int(d.get("num_err_log_entries")),
        "warning_temp_time_min": as_int(d.get("warning_temp_time")),
        "critical_temp_time_min": as_int(d.get("critical_comp_time")),
        "thermal_mgmt_t1_transitions": as_int(d.get("thm_temp1_trans_count")),
        "thermal_mgmt_t2_transitions": as_int(d.get("thm_temp2_trans_count")),
        "thermal_mgmt_t1_time_s": as_int(d.get("thm_temp1_total_time")),
        "thermal_mgmt_t2_time_s": as_int(d.get("thm_temp2_total_time")),
    }


def _slot_revision(v: Any) -> str:
    """A firmware slot's revision: nvme-cli prints the slot's 8 bytes as a little-endian integer
    followed by a display form with non-printing bytes as dots ("2314885530819505713 (1.0.....)");
    the revision is those 8 ASCII bytes, space-padded (NVMe Base 2.0, Firmware Slot Information)."""
    text = str(v).strip()
    m = re.match(r"^(\d+)\s*\(", text)
    if m and int(m.group(1)) < 1 << 64:
        return int(m.group(1)).to_bytes(8, "little").decode("ascii", "replace").rstrip(" \x00")
    rev = re.search(r"\(([^)]*)\)\s*$", text)
    return (rev.group(1) if rev else text).strip()


def parse_fw_log(doc: dict) -> dict[str, Any]:
    """``nvme fw-log -o json``: {"nvme0": {"Active Firmware Slot (afi)": N, "Firmware Rev Slot k": "… (REV)"}}."""
    body = doc
    if isinstance(doc, dict) and len(doc) == 1 and isinstance(next(iter(doc.values())), dict):
        body = next(iter(doc.values()))
    body = body or {}
    afi = as_int(body.get("Active Firmware Slot (afi)", body.get("afi")))
    slots: dict[str, str] = {}
    for k, v in body.items():
        m = re.match(r"Firmware Rev Slot (\d+)", k)
        if m:
            slots[m.group(1)] = _slot_revision(v)
    return {"active_firmware_slot": None if afi is None else afi & 0x7, "firmware_slot_revisions": slots or None}


SANITIZE_STATUS = {0: "never sanitized", 1: "completed", 2: "in progress", 3: "failed",
                   4: "completed without deallocation"}


def parse_sanitize_log(doc: dict) -> dict[str, Any]:
    """``nvme sanitize-log -o json`` (nested under the device name) → status, progress, estimates.

    SPROG is progress in 1/65536ths (65535 = done). The status number appears as "(N) text" in
    sstat.status (one nvme-cli release used the status text itself as the key, so every string in
    sstat is searched). Estimated times are seconds, 0xFFFFFFFF = no estimate.
    """
    body = doc
    if isinstance(doc, dict) and "sprog" not in doc and len(doc) == 1 and isinstance(next(iter(doc.values())), dict):
        body = next(iter(doc.values()))
    body = body or {}
    sstat = body.get("sstat")
    code = None
    if isinstance(sstat, dict):
        for v in sstat.values():
            m = re.match(r"\s*\((\d+)\)", str(v))
            if m:
                code = int(m.group(1))
                break
    elif sstat is not None:
        code = (as_int(sstat) or 0) & 0x7
    sprog = as_int(body.get("sprog"))
    if code == 2 and sprog is not None:
        progress = round(100.0 * sprog / 65536, 2)
    elif code in (1, 4):
        progress = 100.0
    else:
        progress = None

    def est(key: str) -> int | None:
        v = as_int(body.get(key))
        return None if v is None or v == 0xFFFFFFFF else v

    return {
        "status_code": code, "sanitize_status": SANITIZE_STATUS.get(code) if code is not None else None,
        "sanitize_progress_pct": progress,
        "global_erased": bool(as_int(sstat.get("global_erased"))) if isinstance(sstat, dict) and "global_erased" in sstat else None,
        "estimate_overwrite_s": est("time_over_write"), "estimate_block_erase_s": est("time_block_erase"),
        "estimate_crypto_erase_s": est("time_crypto_erase"),
    }


def collect(target: Target, g: Gather, ident: dict, smart: dict) -> tuple[dict | None, str]:
    """The nvme group (and identity, SMART fields it knows) from nvme-cli: identify, features, logs."""
    ctrl, nsid, count = nvme_names(target, g.sysfs)
    if g.tools.which("nvme") is None:
        return None, install_hint("nvme")
    nv: dict[str, Any] = {"controller": ctrl, "namespace_id": nsid, "namespaces_on_controller": count}
    ver = g.tools.run(["nvme", "version"])
    if ver.ok:
        m = re.search(r"version\s+([\w.\-+~]+)", ver.stdout)
        nv["nvme_cli_version"] = m.group(1) if m else ver.stdout.strip()
    disk = target.parent or target.name
    ns_dev = f"/dev/{disk}"
    ctrl_dev = f"/dev/{ctrl}" if ctrl else ns_dev
    doc = g.run_json(["nvme", "list", "-o", "json"], "nvme-list.json", "nvme list")
    if doc:
        entry = parse_nvme_list(doc, disk)
        for k in ("pci_address", "subsystem_nqn"):
            if entry.get(k):
                nv[k] = entry[k]
        fill_missing(ident, {k: entry.get(k) for k in ("model", "serial", "firmware")})
    doc = g.run_json(["nvme", "id-ctrl", ctrl_dev, "-o", "json"], "nvme-id-ctrl.json", "nvme id-ctrl")
    if doc is None:
        reason = g.collectors.get("nvme id-ctrl", "nvme id-ctrl failed")
        return nv, reason
    idc = parse_id_ctrl(doc)
    fill_missing(ident, {k: idc.pop(k) for k in ("model", "serial", "firmware")})
    if idc.get("nvme_version") and not ident.get("interface"):
        ident["interface"] = f"NVMe {idc['nvme_version']}"
    nv.update({k: v for k, v in idc.items() if v is not None or k not in nv})
    doc = g.run_json(["nvme", "id-ns", ns_dev, "-o", "json"], "nvme-id-ns.json", "nvme id-ns")
    if doc:
        nv.update(parse_id_ns(doc))
        if not ident.get("wwn"):
            ident["wwn"] = nv.get("nguid") or nv.get("eui64")
    texts = []
    for fid in FEATURE_IDS:
        res = g.tools.run(["nvme", "get-feature", ctrl_dev, "-f", f"0x{fid:02x}"])
        texts.append(f"# nvme get-feature {ctrl_dev} -f 0x{fid:02x} (exit {res.returncode})\n{res.stdout}{res.stderr}")
        for f_id, dword in parse_get_feature(res.stdout).items():
            name, val = decode_feature(f_id, dword)
            nv[name] = val
        if not res.ok:
            name, _ = decode_feature(fid, 0)
            nv.setdefault(name, res.reason)
    g.keep("nvme-get-feature.txt", "\n".join(texts))
    g.note("nvme get-feature", None)
    doc = g.run_json(["nvme", "smart-log", ctrl_dev, "-o", "json"], "nvme-smart-log.json", "nvme smart-log")
    if doc:
        smart.update({k: v for k, v in parse_nvme_smart_log(doc).items() if v is not None})
    doc = g.run_json(["nvme", "fw-log", ctrl_dev, "-o", "json"], "nvme-fw-log.json", "nvme fw-log")
    if doc:
        nv.update(parse_fw_log(doc))
    if nv.get("sanicap"):
        doc = g.run_json(["nvme", "sanitize-log", ctrl_dev, "-o", "json"], "nvme-sanitize-log.json",
                         "nvme sanitize-log")
        if doc:
            s = parse_sanitize_log(doc)
            nv["sanitize_status"], nv["sanitize_progress_pct"] = s["sanitize_status"], s["sanitize_progress_pct"]
    else:
        nv.setdefault("sanitize_status", not_available("the controller does not support sanitize (sanicap = 0)"))
        nv.setdefault("sanitize_progress_pct", not_available("the controller does not support sanitize (sanicap = 0)"))
    return nv, "not reported by nvme-cli"


# ==================================================================================================
# Purge (PTS purge: Sanitize or Format NVM with Secure Erase)
# ==================================================================================================


def controller_dev(target: Target, sysfs: Sysfs | None = None) -> str:
    ctrl = nvme_names(target, sysfs)[0]
    return f"/dev/{ctrl}" if ctrl else target.real_path


def sanitize_state(ctrl_dev: str, tools: Tools) -> State:
    res = tools.run(["nvme", "sanitize-log", ctrl_dev, "-o", "json"], timeout=30)
    if not res.ok:
        return "running", None, res.reason or "sanitize-log failed"  # transient: keep polling until timeout
    s = parse_sanitize_log(parse_json(res.stdout))
    code = s["status_code"]
    if code in (1, 4):
        return "done", 100.0, s["sanitize_status"]
    if code == 3:
        return "failed", None, "the sanitize-log reports the operation failed"
    return "running", s["sanitize_progress_pct"], s["sanitize_status"] or "starting"


class SanitizePurge(purge_base.SanitizePurge):
    """nvme sanitize --sanact=2 (block erase) or 4 (crypto erase), polled with sanitize-log. It
    erases every namespace of the controller (purge.choose_purge uses it only for a lone namespace)."""

    device_classes, tool, interface, label = ("nvme",), "nvme", "nvme", "NVMe Sanitize"
    kinds = {"block": "block erase", "crypto": "crypto erase", "overwrite": "overwrite erase"}
    capability = {"block": "sanitize_block_erase_supported", "crypto": "sanitize_crypto_erase_supported"}
    hint = "check the drive's sanitize-log, or pass --purge=nvme-format"
    interval_s = 5

    def __init__(self, action: str = "block", notes: tuple[str, ...] | list[str] = (), *,
                 estimate_s: float | None = None, **kw: Any):
        super().__init__(action, notes, **kw)
        self.estimate_s = estimate_s
        self.sanact = {"block": "2", "crypto": "4", "overwrite": "3"}[action]

    def device(self, target: Target) -> str:
        return controller_dev(target)

    def operation(self, dev: str) -> Operation:
        return Operation(["nvme", "sanitize", dev, f"--sanact={self.sanact}"], f"nvme sanitize {dev}",
                         f"sanitize ({self.action} erase) of {dev}",
                         f"nvme sanitize --sanact={self.sanact} on {dev} (all namespaces of the controller)",
                         estimate_timeout(self.estimate_s, 4 * 3600))

    def state(self, dev: str) -> State:
        return sanitize_state(dev, self.tools)


class FormatPurge(DevicePurge):
    """nvme format --ses=1 (user data erase) or 2 (crypto erase), keeping the LBA format in use.
    The command returns when the format is complete: nothing to poll."""

    device_classes, tool = ("nvme",), "nvme"

    def __init__(self, ses: int = 1, lbaf: int | None = None, notes: tuple[str, ...] | list[str] = (), **seams: Any):
        super().__init__(notes, **seams)
        self.ses, self.lbaf = ses, lbaf
        self.name = "nvme-format" if ses == 1 else "nvme-format-crypto"
        kind = "user data erase" if ses == 1 else "cryptographic erase"
        self.disclosure = f"NVMe Format NVM, secure erase ({kind}, SES={ses}) (PTS purge)"
        self.need = ("nvme", "format_nvm_supported" if ses == 1 else "format_crypto_erase_supported")

    @classmethod
    def variants(cls) -> list[DevicePurge]:
        return [cls(1), cls(2)]

    def configured(self, info: dict, target: Target) -> DevicePurge:
        return type(self)(self.ses, value(info, "nvme", "lba_format_index"))

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        started, t0 = self._start(target, log)
        disk = f"/dev/{target.parent or target.name}"
        lbaf = self.lbaf
        if lbaf is None:  # keep the LBA format in use (docs/pts-reference.md#purge): read it now if not given
            res = self.tools.run(["nvme", "id-ns", disk, "-o", "json"])
            lbaf = parse_id_ns(parse_json(res.stdout)).get("lba_format_index") if res.ok else None
            if lbaf is None:
                raise RunFailed(f"cannot read the LBA format in use of {disk} ({res.reason}): "
                                "pass --purge=discard (a disclosed fallback) or fix nvme-cli")
        helpres = self.tools.run(["nvme", "format", "--help"], ok_codes=lambda rc: True)
        helptext = helpres.stdout + helpres.stderr
        argv = ["nvme", "format", disk, f"--lbaf={lbaf}", f"--ses={self.ses}", "--timeout=7200000"]
        if "--force" in helptext:
            argv.append("--force")  # nvme-cli ≥ 2.x asks for confirmation otherwise; the guard already did
        log(f"purge: {' '.join(argv)} (the command returns when the format is complete)")
        self.tools.must(argv, f"nvme format {disk}", "check the drive, or pass --purge=discard (a disclosed fallback)",
                        timeout=7300)
        return self._record(started, t0, f"nvme format --ses={self.ses} on {disk}, LBA format {lbaf} kept")


class NVMe(Interface):
    """An NVMe namespace: nvme-cli (and smartctl beside it), Sanitize and Format NVM, Set Features
    0x06 for the write cache, the admin ioctl for health, the OCP latency monitor."""

    cls, managed, health, latency_monitor = "nvme", True, "nvme", True
    smartctl_health_args = ("-d", "nvme")
    purges = (SanitizePurge, FormatPurge)
    cache_method = "nvme set-feature 0x06"

    def driver(self, g: Gather, devdir: str) -> str | None:
        # device/ is the controller's class device (nvme0); the driver is bound to its PCI parent.
        return g.sysfs.driver_of(devdir) or g.sysfs.driver_of(os.path.join(devdir, "device"))

    def manage(self, target, block_name, g, ident, smart, groups) -> str:
        groups["nvme"] = collect(target, g, ident, smart)
        if not smart and g.tools.which("smartctl"):
            sc = ata.collect_smartctl(f"/dev/{nvme_names(target, g.sysfs)[0] or block_name}", g, ("-d", "nvme"))
            if sc:
                fill_missing(ident, sc["identity"])
                fill_missing(smart, sc["smart"])
        groups["ata"] = (None, f"{block_name} is an NVMe device (ATA fields do not apply)")
        groups["scsi"] = (None, f"{block_name} is an NVMe device (SCSI fields do not apply)")
        return self.cls

    def no_smart(self, block_name: str, g: Gather) -> str:
        return g.collectors.get("nvme smart-log") or g.collectors.get("smartctl") or "no SMART tool answered"

    def device_purge(self, caps: Capabilities, target: Target, notes: list[str]):
        """Sanitize (block, then crypto erase) on a lone namespace, else Format NVM (SES=1) keeping
        the LBA format in use, else the fallback; every method not used says why in ``notes``."""
        v, name, info = caps.v, target.parent or target.name, caps.info
        if not caps.have("nvme"):
            notes.append(f"nvme-cli is not installed: install nvme-cli for a sanitize/format purge of {name}")
            return fallback(info, target, notes)
        if v("nvme", "sanicap") is None and v("nvme", "format_nvm_supported") is None:
            why = (info.get("nvme") or {}).get("sanicap")
            notes.append(f"the NVMe capabilities of {name} are unknown ({why or 'nvme id-ctrl gave nothing'}): "
                         "run as root with nvme-cli installed for a PTS purge")
            return fallback(info, target, notes)
        n_ns = v("nvme", "namespaces_on_controller")
        only = n_ns == 1
        ctrl = v("nvme", "controller") or "the controller"
        for action, key in (("block", "sanitize_block_erase_supported"), ("crypto", "sanitize_crypto_erase_supported")):
            if not v("nvme", key):
                continue
            if only:
                return SanitizePurge(action, notes)
            notes.append(f"sanitize ({action} erase) not used: it erases every namespace of {ctrl} "
                         f"({n_ns if n_ns is not None else 'an unknown number of'} namespaces)")
        if not v("nvme", "sanitize_block_erase_supported") and not v("nvme", "sanitize_crypto_erase_supported"):
            notes.append(f"{ctrl} does not support sanitize (id-ctrl sanicap = {v('nvme', 'sanicap')})")
        if not v("nvme", "format_nvm_supported"):
            notes.append(f"{ctrl} does not support Format NVM (id-ctrl oacs bit 1 = 0)")
            return fallback(info, target, notes)
        lbaf = v("nvme", "lba_format_index")
        all_ns = v("nvme", "format_applies_to_all_namespaces") or v("nvme", "secure_erase_applies_to_all_namespaces")
        if lbaf is None:
            notes.append("format not used: the LBA format in use is unknown (nvme id-ns failed)")
        elif all_ns and not only:
            notes.append(f"format not used: on {ctrl} it applies to every namespace (id-ctrl fna = {v('nvme', 'fna')})")
        else:
            return FormatPurge(1, lbaf, notes)
        return fallback(info, target, notes)

    def write_cache(self, dev, *, ctrl_dev=None, vwc_present=None) -> Plan | str:
        if vwc_present is False:
            return ("not applicable: the controller has no volatile write cache (id-ctrl VWC bit 0 = 0): "
                    "every write is persistent")
        c = ctrl_dev or dev
        return Plan(self.cache_method, c, ("nvme", "get-feature", c, "--feature-id=6"),
                    {"enabled": ("nvme", "set-feature", c, "--feature-id=6", "--value=1"),
                     "disabled": ("nvme", "set-feature", c, "--feature-id=6", "--value=0")}, "nvme")

    def cache_plan(self, target, info, sysfs, kernel_write_cache):
        ctrl = nvme_names(target, sysfs)[0]
        return self.cache_plan_for(f"/dev/{target.parent or target.name}", ctrl_dev=f"/dev/{ctrl}" if ctrl else None,
                                   vwc_present=value(info or {}, "nvme", "volatile_write_cache_present"),
                                   kernel_write_cache=kernel_write_cache)
