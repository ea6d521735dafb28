"""ATA (SATA): smartctl and hdparm -I parsed into the catalogue's fields, and the ATA purges
(SANITIZE, SECURITY ERASE UNIT).

smartctl speaks ATA, SCSI and NVMe; its parser lives here because ATA is the interface that has no
other source for most SMART fields. Parsers are pure and tested on recorded outputs.
"""

from __future__ import annotations

import re
from typing import Any

from ssdpts.device import mediawrites
from ssdpts.device.fields import not_available, value
from ssdpts.device.interfaces.base import Capabilities, Interface, Plan
from ssdpts.device.purge import base as purge_base
from ssdpts.device.purge.base import DevicePurge, Log, Operation, PurgeRecord, State, quiet
from ssdpts.device.purge.fallback import fallback
from ssdpts.device.target import Target
from ssdpts.device.tools import Gather, Tools, as_int, as_str, bit, parse_json
from ssdpts.errors import RunFailed, UserError


def _devstat(doc: dict) -> dict[str, int]:
    out = {}
    for page in (doc.get("ata_device_statistics") or {}).get("pages") or []:
        for row in page.get("table") or []:
            if isinstance(row, dict) and row.get("name") and isinstance(row.get("value"), int):
                valid = (row.get("flags") or {}).get("valid", True)
                if valid:
                    out[row["name"]] = row["value"]
    return out


def _attr_raw(doc: dict, ids: tuple[int, ...], name: str | None = None) -> int | None:
    for row in (doc.get("ata_smart_attributes") or {}).get("table") or []:
        if row.get("id") in ids and (name is None or row.get("name") == name):
            return as_int((row.get("raw") or {}).get("value"))
    return None


def smartctl_version(doc: dict) -> str | None:
    v = (doc.get("smartctl") or {}).get("version")
    return ".".join(str(x) for x in v) if isinstance(v, list) else as_str(v)


def parse_smartctl(doc: dict) -> dict[str, dict[str, Any]]:
    """``smartctl -j -x`` (or -a) for ATA, SCSI/SAS and NVMe → {"identity", "smart", "ata", "scsi"}.

    Units in the names; the unknown stays None (build_group turns it into "not available").

    One piece: one table from smartctl's JSON keys to ssdpts's fields for three transports;
    split, the one mapping would be scattered."""
    d = doc or {}
    dev = d.get("device") or {}
    protocol = str(dev.get("protocol") or "")
    cap = (d.get("user_capacity") or {}).get("bytes")
    temp = d.get("temperature") or {}
    ident: dict[str, Any] = {
        "model": as_str(d.get("model_name") or d.get("scsi_model_name")),
        "serial": as_str(d.get("serial_number")),
        "firmware": as_str(d.get("firmware_version") or d.get("scsi_revision")),
        "vendor": as_str(d.get("scsi_vendor")),
        "capacity_bytes": as_int(cap),
        "logical_block_size_bytes": as_int(d.get("logical_block_size")),
        "physical_block_size_bytes": as_int(d.get("physical_block_size")),
        "rotation_rate_rpm": as_int(d.get("rotation_rate")),
        "form_factor": as_str((d.get("form_factor") or {}).get("name")),
    }
    wwn = d.get("wwn")
    if isinstance(wwn, dict) and {"naa", "oui", "id"} <= set(wwn):
        ident["wwn"] = f"{wwn['naa']:x} {wwn['oui']:06x} {wwn['id']:09x}"
    sata = (d.get("sata_version") or {}).get("string")
    speed = ((d.get("interface_speed") or {}).get("current") or {}).get("string")
    if protocol == "ATA":
        ident["interface"] = " ".join(x for x in (sata, f"({speed})" if speed else None) if x) or "ATA"
    elif protocol == "SCSI":
        ident["interface"] = as_str((d.get("scsi_transport_protocol") or {}).get("name")) or "SCSI"
    elif protocol == "NVMe":
        ver = (d.get("nvme_version") or {}).get("string")
        ident["interface"] = f"NVMe {ver}" if ver else "NVMe"

    smart: dict[str, Any] = {
        "smart_source": "smartctl", "smartctl_version": smartctl_version(d),
        "smart_passed": (d.get("smart_status") or {}).get("passed"),
        "composite_temperature_c": temp.get("current"),
        "power_on_hours": as_int((d.get("power_on_time") or {}).get("hours")),
        "power_cycles": as_int(d.get("power_cycle_count")),
    }
    nv = d.get("nvme_smart_health_information_log")
    if isinstance(nv, dict):
        dur, duw = as_int(nv.get("data_units_read")), as_int(nv.get("data_units_written"))
        sensors = [t for t in (nv.get("temperature_sensors") or []) if isinstance(t, (int, float))]
        smart.update(
            critical_warning=as_int(nv.get("critical_warning")), composite_temperature_c=nv.get("temperature"),
            temperature_sensors_c=sensors or None,
            available_spare_pct=as_int(nv.get("available_spare")),
            available_spare_threshold_pct=as_int(nv.get("available_spare_threshold")),
            percentage_used_pct=as_int(nv.get("percentage_used")),
            data_units_read=dur, data_units_written=duw,
            data_read_bytes=None if dur is None else dur * 512_000,
            data_written_bytes=None if duw is None else duw * 512_000,
            host_read_commands=as_int(nv.get("host_reads")), host_write_commands=as_int(nv.get("host_writes")),
            controller_busy_time_min=as_int(nv.get("controller_busy_time")),
            unsafe_shutdowns=as_int(nv.get("unsafe_shutdowns")), media_errors=as_int(nv.get("media_errors")),
            error_log_entries=as_int(nv.get("num_err_log_entries")),
            warning_temp_time_min=as_int(nv.get("warning_temp_time")),
            critical_temp_time_min=as_int(nv.get("critical_comp_time")),
        )
    if protocol == "ATA":
        ds = _devstat(d)
        lsw, lsr = ds.get("Logical Sectors Written"), ds.get("Logical Sectors Read")
        table = (d.get("ata_smart_attributes") or {}).get("table") or []
        # without devstat: the host writes attribute by its drivedb name and unit (241 is 512-byte LBAs
        # on some drives, 32 MiB or GiB on others); reads only where 242 counts LBAs
        written = lsw * 512 if lsw is not None else mediawrites.ata_host_written_bytes(table)
        lsr = lsr if lsr is not None else _attr_raw(d, (242,), "Total_LBAs_Read")
        smart.update(mediawrites.ata_media_writes(table))
        smart.update(
            data_written_bytes=written,
            data_read_bytes=None if lsr is None else lsr * 512,
            host_write_commands=ds.get("Number of Write Commands"),
            host_read_commands=ds.get("Number of Read Commands"),
            percentage_used_pct=ds.get("Percentage Used Endurance Indicator"),
            media_errors=ds.get("Number of Reported Uncorrectable Errors", _attr_raw(d, (187,))),
            warning_temp_time_min=ds.get("Time in Over-Temperature"),
            ata_attributes=[{"id": a.get("id"), "name": a.get("name"), "value": a.get("value"),
                             "worst": a.get("worst"), "thresh": a.get("thresh"),
                             "raw": (a.get("raw") or {}).get("value")}
                            for a in (d.get("ata_smart_attributes") or {}).get("table") or []] or None,
        )
    if protocol == "SCSI":
        errs = d.get("scsi_error_counter_log") or {}
        unc = [as_int((errs.get(k) or {}).get("total_uncorrected_errors")) for k in ("read", "write", "verify")]
        if any(u is not None for u in unc):
            smart["media_errors"] = sum(u for u in unc if u is not None)
        pu = d.get("scsi_percentage_used_endurance_indicator")
        smart["percentage_used_pct"] = as_int(pu)
        for k, key in (("read", "data_read_bytes"), ("write", "data_written_bytes")):
            gb = (errs.get(k) or {}).get("gigabytes_processed")
            try:
                smart[key] = round(float(gb) * 1e9) if gb is not None else None  # (rounded: 4205.775 x 1e9 is 4205774999999.9995)
            except ValueError:
                pass

    sec = d.get("ata_security") or {}
    state = as_int(sec.get("state"))
    ata: dict[str, Any] = {}
    if protocol == "ATA":
        ata = {
            "ata_version": as_str((d.get("ata_version") or {}).get("string")), "sata_version": as_str(sata),
            "interface_speed_max": as_str(((d.get("interface_speed") or {}).get("max") or {}).get("string")),
            "interface_speed_current": as_str(speed),
            # ATA IDENTIFY word 128 (smartctl prints it as ata_security.state): bit 0 supported,
            # 1 enabled, 2 locked, 3 frozen, 5 enhanced security erase supported.
            "security_supported": bit(state, 0), "security_enabled": sec.get("enabled", bit(state, 1)),
            "security_locked": sec.get("locked", bit(state, 2)), "security_frozen": sec.get("frozen", bit(state, 3)),
            "enhanced_erase_supported": bit(state, 5),
            "trim_supported": (d.get("trim") or {}).get("supported"),
            "trim_reads_zeros": (d.get("trim") or {}).get("zeroed"),
            "write_cache_enabled": (d.get("write_cache") or {}).get("enabled"),
            "read_lookahead_enabled": (d.get("read_lookahead") or {}).get("enabled"),
        }
    scsi: dict[str, Any] = {}
    if protocol == "SCSI":
        lbp = d.get("scsi_lb_provisioning") or {}
        scsi = {
            "scsi_vendor": as_str(d.get("scsi_vendor")), "scsi_product": as_str(d.get("scsi_product")),
            "scsi_revision": as_str(d.get("scsi_revision")), "scsi_version": as_str(d.get("scsi_version")),
            "transport_protocol": as_str((d.get("scsi_transport_protocol") or {}).get("name")),
            "protection_type": as_int(d.get("scsi_protection_type")),
            "logical_unit_id": as_str(d.get("logical_unit_id")), "lb_provisioning": as_str(lbp.get("name")),
            "grown_defects": as_int(d.get("scsi_grown_defect_list")),
            "write_cache_enabled": (d.get("write_cache") or {}).get("enabled"),
            "read_cache_disabled": None if (d.get("read_cache") or {}).get("enabled") is None
            else not d["read_cache"]["enabled"],
        }
    return {"identity": ident, "smart": smart, "ata": ata, "scsi": scsi}


def parse_hdparm_identify(text: str) -> dict[str, Any]:
    """``hdparm -I`` text: security state and erase times, SANITIZE, TRIM, write cache.

    Feature lines look like ``\\t   *\\tWrite cache`` (``*`` = enabled) and the security block
    like ``\\tnot\\tfrozen`` / ``\\t\\tfrozen`` / ``\\t\\tsupported: enhanced erase``."""
    out: dict[str, Any] = {}
    if not text or "ATA device" not in text and "Security:" not in text and "Commands/features" not in text:
        return out
    lines = text.splitlines()

    def feature(name: str) -> tuple[bool, bool] | None:  # (supported, enabled)
        for ln in lines:
            m = re.match(r"^\s*(\*?)\s*" + re.escape(name) + r"\s*$", ln)
            if m:
                return True, m.group(1) == "*"
        return None

    wc = feature("Write cache")
    if wc:
        out["write_cache_enabled"] = wc[1]
    la = feature("Look-ahead")
    if la:
        out["read_lookahead_enabled"] = la[1]
    joined = "\n".join(lines)
    out["sanitize_supported"] = bool(re.search(r"SANITIZE feature set", joined))
    out["sanitize_block_erase_supported"] = bool(re.search(r"BLOCK_ERASE_EXT command", joined))
    out["sanitize_crypto_scramble_supported"] = bool(re.search(r"CRYPTO_SCRAMBLE_EXT command", joined))
    out["sanitize_overwrite_supported"] = bool(re.search(r"OVERWRITE_EXT command", joined))
    # hdparm 9.65 leaves the TRIM line out for QEMU's ide-hd although IDENTIFY word 169 says TRIM
    # (smartctl: "TRIM Command: Available"): only its presence is taken from hdparm.
    if re.search(r"Data Set Management TRIM supported", joined):
        out["trim_supported"] = True
        out["trim_reads_zeros"] = bool(re.search(r"Deterministic read ZEROs after TRIM", joined))
    sec_start = next((i for i, ln in enumerate(lines) if ln.startswith("Security:")), None)
    if sec_start is None and "Commands/features" in joined:
        # hdparm prints the Security section only for a drive with the ATA security feature set
        # (IDENTIFY word 82 bit 1); a complete dump without it is a drive without it (QEMU's ide-hd).
        out["security_supported"] = False
        out["enhanced_erase_supported"] = False
    if sec_start is not None:
        block = []
        for ln in lines[sec_start + 1:]:
            if ln and not ln[0].isspace():
                break
            block.append(ln)

        def state(word: str) -> bool | None:
            for ln in block:
                m = re.match(r"^\s*(not)?\s+" + word + r"\b", ln)
                if m and "expired" not in ln:
                    return m.group(1) is None
            return None

        out["security_supported"] = state("supported")
        out["security_enabled"] = state("enabled")
        out["security_locked"] = state("locked")
        out["security_frozen"] = state("frozen")
        out["enhanced_erase_supported"] = any(re.search(r"supported: enhanced erase", ln) for ln in block)
        for ln in block:
            m = re.search(r"(?:more than )?(\d+)min for SECURITY ERASE UNIT", ln)
            if m:
                out["security_erase_time_min"] = int(m.group(1))
            m = re.search(r"(?:more than )?(\d+)min for ENHANCED SECURITY ERASE UNIT", ln)
            if m:
                out["enhanced_erase_time_min"] = int(m.group(1))
    return out


# ==================================================================================================
# Collection
# ==================================================================================================


def collect_smartctl(dev: str, g: Gather, args: tuple[str, ...] = ()) -> dict[str, dict[str, Any]] | None:
    """``smartctl -j -x`` of an ATA, SCSI or NVMe device → {"identity", "smart", "ata", "scsi"};
    ``args``: the device type where smartctl cannot tell it (``-d nvme``)."""
    argv = ["smartctl", "-j", "-x", *args, dev]
    # smartctl's exit status is a bit mask: bits 0-1 = could not run/open; others describe health.
    res = g.tools.run(argv, timeout=60, ok_codes=lambda rc: rc & 0x3 == 0)
    g.note("smartctl", res)
    if res.stdout:
        g.keep("smartctl.json", res.stdout)
    if not res.ok:
        return None
    try:
        doc = parse_json(res.stdout)
    except ValueError as exc:
        g.note("smartctl", not_available(f"smartctl printed no JSON ({exc}); smartctl ≥ 7.0 is needed for -j"))
        return None
    return parse_smartctl(doc)


def collect(dev: str, g: Gather, ata: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The ata group: smartctl's fields (``ata``), completed by hdparm -I, which reads IDENTIFY
    directly and is trusted over smartctl where both speak."""
    res = g.run_kept(["hdparm", "-I", dev], "hdparm-I.txt", "hdparm -I")
    if res.ok:
        hd = parse_hdparm_identify(res.stdout)
        ata.update({k: v for k, v in hd.items() if v is not None})
    if ata:
        return ata, "not reported by smartctl or hdparm"
    return None, g.collectors.get("smartctl") or "smartctl and hdparm gave nothing"


# ==================================================================================================
# Purge (PTS purge: SANITIZE or SECURITY ERASE UNIT)
# ==================================================================================================

_HDPARM_PASS = "ssdpts"


def frozen_advice(dev: str) -> str:
    return (f"{dev} is frozen (its BIOS/firmware froze ATA security at boot), so SECURITY ERASE is refused: "
            "unfreeze it by suspending and resuming the host (systemctl suspend, or echo mem > /sys/power/state) "
            "or by hot-unplugging and replugging the drive's SATA cable, check hdparm -I shows 'not frozen', "
            "then run again")


class SecurityErasePurge(DevicePurge):
    """hdparm --security-set-pass then --security-erase[-enhanced]; the drive must not be frozen.
    hdparm returns when the erase is done: nothing to poll."""

    device_classes, tool = ("ata",), "hdparm"

    def __init__(self, enhanced: bool = True, notes: tuple[str, ...] | list[str] = (), *,
                 estimate_min: int | None = None, **seams: Any):
        super().__init__(notes, **seams)
        self.enhanced = enhanced
        self.estimate_min = estimate_min
        self.name = "ata-secure-erase-enhanced" if enhanced else "ata-secure-erase"
        self.disclosure = f"ATA {'ENHANCED ' if enhanced else ''}SECURITY ERASE UNIT (PTS purge)"
        self.need = ("ata", "enhanced_erase_supported" if enhanced else "security_supported")

    @classmethod
    def variants(cls) -> list[DevicePurge]:
        return [cls(True), cls(False)]

    def configured(self, info: dict, target: Target) -> DevicePurge:
        if value(info, "ata", "security_frozen"):
            raise UserError(frozen_advice(f"/dev/{target.name}"))
        return type(self)(self.enhanced, estimate_min=value(info, "ata", "enhanced_erase_time_min" if self.enhanced
                                                              else "security_erase_time_min"))

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        started, t0 = self._start(target, log)
        dev = f"/dev/{target.name}"
        state = parse_hdparm_identify(self.tools.run(["hdparm", "-I", dev]).stdout)
        if state.get("security_frozen"):
            raise RunFailed(frozen_advice(dev))
        self.tools.must(["hdparm", "--user-master", "u", "--security-set-pass", _HDPARM_PASS, dev],
                        f"hdparm --security-set-pass {dev}", "check hdparm -I (security state) or pass --purge=discard")
        op = "--security-erase-enhanced" if self.enhanced else "--security-erase"
        timeout = (self.estimate_min or 0) * 60 * 3 + 1800 if self.estimate_min else 12 * 3600
        log(f"purge: hdparm {op} {dev} (drive estimate: "
            f"{f'{self.estimate_min} min' if self.estimate_min else 'unknown'}; hdparm returns when done)")
        try:
            self.tools.must(["hdparm", "--user-master", "u", op, _HDPARM_PASS, dev], f"hdparm {op} {dev}",
                            "check hdparm -I; the temporary password is 'ssdpts'", timeout=timeout)
        except RunFailed:
            # Leave no password behind on a drive whose erase did not happen.
            self.tools.change(["hdparm", "--user-master", "u", "--security-disable", _HDPARM_PASS, dev])
            raise
        return self._record(started, t0, f"hdparm {op} on {dev} (temporary user password, cleared by the erase)")


def sanitize_state(dev: str, tools: Tools) -> State:
    res = tools.run(["hdparm", "--sanitize-status", dev], timeout=30)
    text = res.stdout + res.stderr
    m = re.search(r"Progress:\s*0x[0-9a-fA-F]+\s*\((\d+(?:\.\d+)?)%\)", text)
    if re.search(r"In Process", text, re.I):
        return "running", float(m.group(1)) if m else None, "in process"
    if re.search(r"Fail", text, re.I):
        return "failed", None, text.strip().splitlines()[-1] if text.strip() else "failed"
    if re.search(r"Completed Without Error|Succeeded|SD0|Idle", text, re.I):
        return "done", 100.0, "completed"
    return "running", None, "unknown state"


class SanitizePurge(purge_base.SanitizePurge):
    """hdparm --sanitize-block-erase / --sanitize-crypto-scramble, polled with --sanitize-status."""

    device_classes, tool, interface, label = ("ata",), "hdparm", "ata", "ATA SANITIZE"
    kinds = {"block": "block erase", "crypto": "crypto scramble"}
    capability = {"block": "sanitize_block_erase_supported", "crypto": "sanitize_crypto_scramble_supported"}
    hint = "check hdparm -I (SANITIZE feature set), or pass --purge=discard"

    @property
    def op(self) -> str:
        return "--sanitize-block-erase" if self.action == "block" else "--sanitize-crypto-scramble"

    def operation(self, dev: str) -> Operation:
        return Operation(["hdparm", "--yes-i-know-what-i-am-doing", self.op, dev], f"hdparm {self.op} {dev}",
                         f"ATA sanitize ({self.action}) of {dev}", f"hdparm {self.op} on {dev}", 12 * 3600)

    def state(self, dev: str) -> State:
        return sanitize_state(dev, self.tools)


# ==================================================================================================
# The interfaces smartctl speaks for: ATA here, SCSI and a USB bridge in scsi.py
# ==================================================================================================


class SmartctlInterface(Interface):
    """A disk smartctl identifies (ATA, SCSI, or either behind a USB bridge): its identity and
    SMART fields from ``smartctl -j -x``, then its own group from its own tools."""

    managed, health = True, "smartctl"

    def manage(self, target, block_name, g, ident, smart, groups) -> str:
        disk_dev = f"/dev/{block_name}"
        groups["nvme"] = (None, f"{block_name} is not an NVMe device")
        sc = collect_smartctl(disk_dev, g)
        if sc:
            # sysfs truncates ATA model strings to the 16-byte SCSI INQUIRY field: smartctl's are whole.
            ident.update({k: v for k, v in sc["identity"].items() if v is not None})
            smart.update({k: v for k, v in sc["smart"].items() if v is not None})
        iface = self.refined(sc)
        iface.groups(disk_dev, block_name, g, sc, groups)
        return iface.cls

    def refined(self, sc: dict | None) -> "SmartctlInterface":
        """The interface smartctl found the device to speak (a USB bridge's disk: ATA or SCSI)."""
        return self

    def groups(self, disk_dev: str, block_name: str, g: Gather, sc: dict | None,
               groups: dict[str, tuple[dict | None, str]]) -> None:
        raise NotImplementedError

    def no_smart(self, block_name: str, g: Gather) -> str:
        return g.collectors.get("nvme smart-log") or g.collectors.get("smartctl") or "no SMART tool answered"


class ATA(SmartctlInterface):
    """A SATA/ATA disk: smartctl and hdparm, SANITIZE and SECURITY ERASE UNIT, ``hdparm -W``."""

    cls = "ata"
    smartctl_health_args = ("-l", "devstat")
    smartctl_media = True
    purges = (SanitizePurge, SecurityErasePurge)
    cache_method = "hdparm -W"

    def groups(self, disk_dev, block_name, g, sc, groups) -> None:
        groups["ata"] = collect(disk_dev, g, dict(sc["ata"]) if sc and sc["ata"] else {})
        groups["scsi"] = (None, f"{block_name} is an ATA device (SCSI fields do not apply)")

    def device_purge(self, caps: Capabilities, target: Target, notes: list[str]):
        """SANITIZE (block erase, then crypto scramble), else (ENHANCED) SECURITY ERASE UNIT unless
        a password is set or the drive is frozen, else the fallback."""
        v, info = caps.v, caps.info
        dev = f"/dev/{target.parent or target.name}"
        if not caps.have("hdparm"):
            notes.append(f"hdparm is not installed: install hdparm for an ATA sanitize/security erase of {dev}")
            return fallback(info, target, notes)
        if v("ata", "sanitize_block_erase_supported"):
            return SanitizePurge("block", notes)
        if v("ata", "sanitize_crypto_scramble_supported"):
            return SanitizePurge("crypto", notes)
        if v("ata", "sanitize_supported") is None and v("ata", "security_supported") is None:
            notes.append(f"the ATA capabilities of {dev} are unknown (hdparm -I / smartctl gave nothing): "
                         "run as root with hdparm and smartmontools installed for a PTS purge")
            return fallback(info, target, notes)
        if not v("ata", "security_supported"):
            notes.append(f"{dev} supports neither SANITIZE nor the ATA security feature set")
        elif v("ata", "security_locked") or v("ata", "security_enabled"):
            notes.append(f"ATA security erase not used: {dev} has a security password set (enabled/locked); "
                         "disable it with hdparm --security-disable PASSWORD, then run again")
        elif v("ata", "security_frozen"):
            notes.append(frozen_advice(dev))
        else:
            enhanced = bool(v("ata", "enhanced_erase_supported"))
            est = v("ata", "enhanced_erase_time_min" if enhanced else "security_erase_time_min")
            return SecurityErasePurge(enhanced, notes, estimate_min=est)
        return fallback(info, target, notes)

    def write_cache(self, dev, *, ctrl_dev=None, vwc_present=None) -> Plan:
        return Plan(self.cache_method, dev, ("hdparm", "-W", dev),
                    {"enabled": ("hdparm", "-W1", dev), "disabled": ("hdparm", "-W0", dev)}, "hdparm")
