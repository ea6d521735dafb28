"""Device metadata for the data set: identity, NVMe/ATA/SCSI capabilities, SMART, queue, PCIe, lsblk.

Seed 002 (PTS.md §6): a result is only worth modelling when everything that can move it is
recorded with it. ``collect`` runs every collector that applies to the target, keeps each tool's
raw output (``raw_dir``, the run's ``device/`` directory) and returns the parsed fields grouped
by source. Every field is ``{"value": ..., "unit": "..."}`` or the string
``"not available: <reason>"``; a collector that cannot run (tool missing, not permitted, not
applicable to this kind of device) never raises.

**One place knows each field** (DESIGN.md convention 3): :data:`FIELDS` is the catalogue (group,
name, type, unit, description). Parsers return plain ``{name: value}`` dicts; :func:`build_group`
wraps them with the catalogue's unit, and docs/results-format.md is generated from the same table
(:func:`fields_markdown`).

Read-only: everything here reads sysfs, runs identify/log/get commands (nvme id-ctrl, id-ns,
get-feature, smart-log, fw-log, sanitize-log; smartctl -x; hdparm -I; sdparm --get; sg_opcodes;
lsblk; lspci) and never a command that changes the device. Devices without a management
interface (loop, zram, virtio, dm, md) are not even opened: only sysfs and lsblk are read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ssdpts.device import target as tgt
from ssdpts.device.target import Target

NA = "not available"

# ==================================================================================================
# The catalogue
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class Field:
    group: str
    name: str
    type: str  # int, float, str, bool, list, dict
    unit: str  # "" when the value has no unit
    description: str


def _f(group: str, rows: list[tuple[str, str, str, str]]) -> list[Field]:
    return [Field(group, n, t, u, d) for n, t, u, d in rows]


FIELDS: tuple[Field, ...] = tuple(
    _f("identity", [
        ("device_class", "str", "", "nvme, ata, scsi, usb, virtio, loop, zram, dm, md, other, or file"),
        ("path", "str", "", "device node as given"),
        ("kernel_name", "str", "", "kernel block device name (nvme0n1, sda, loop3)"),
        ("vendor", "str", "", "vendor (sysfs / smartctl / SCSI INQUIRY)"),
        ("model", "str", "", "model number"),
        ("serial", "str", "", "serial number"),
        ("firmware", "str", "", "firmware revision in use"),
        ("capacity_bytes", "int", "bytes", "user capacity (sysfs size × 512)"),
        ("logical_block_size_bytes", "int", "bytes", "logical block (sector) size"),
        ("physical_block_size_bytes", "int", "bytes", "physical block size reported by the kernel"),
        ("interface", "str", "", "interface as reported (e.g. NVMe 1.4 over PCIe, SATA 3.1 6.0 Gb/s, SAS (SPL-4))"),
        ("transport", "str", "", "lsblk TRAN: nvme, sata, sas, usb, ..."),
        ("rotational", "bool", "", "kernel rotational flag"),
        ("rotation_rate_rpm", "int", "rpm", "rotation rate, 0 for solid state (smartctl)"),
        ("form_factor", "str", "", "form factor (smartctl)"),
        ("wwn", "str", "", "world wide name / EUI-64 / NGUID as the kernel reports it"),
        ("driver", "str", "", "kernel driver bound to the device"),
        ("loop_backing_file", "str", "", "backing file of a loop device"),
        ("loop_direct_io", "bool", "", "loop device uses direct I/O on its backing file"),
    ])
    + _f("nvme", [
        ("nvme_cli_version", "str", "", "nvme-cli version used for the NVMe fields"),
        ("controller", "str", "", "NVMe controller character device name (nvme0)"),
        ("namespace_id", "int", "", "namespace ID of the target"),
        ("namespaces_on_controller", "int", "count", "namespaces attached to the controller (sanitize/format may hit all)"),
        ("subsystem_nqn", "str", "", "NVM subsystem NQN (id-ctrl subnqn)"),
        ("pci_address", "str", "", "PCI address of the controller (nvme list)"),
        ("pci_vendor_id", "str", "", "PCI vendor ID (id-ctrl vid, hex)"),
        ("ieee_oui", "str", "", "IEEE OUI (id-ctrl ieee, hex)"),
        ("nvme_version", "str", "", "NVMe specification version the controller implements (id-ctrl ver)"),
        ("controller_id", "int", "", "controller ID (id-ctrl cntlid)"),
        ("total_capacity_bytes", "int", "bytes", "total NVM capacity (id-ctrl tnvmcap)"),
        ("unallocated_capacity_bytes", "int", "bytes", "unallocated NVM capacity (id-ctrl unvmcap)"),
        ("mdts", "int", "log2 (units of CAP.MPSMIN)", "maximum data transfer size exponent, 0 = no limit (id-ctrl mdts)"),
        ("max_namespaces", "int", "count", "number of namespaces supported (id-ctrl nn)"),
        ("oacs", "int", "bitfield", "optional admin command support (id-ctrl oacs)"),
        ("oncs", "int", "bitfield", "optional NVM command support (id-ctrl oncs)"),
        ("format_nvm_supported", "bool", "", "Format NVM supported (oacs bit 1)"),
        ("fna", "int", "bitfield", "format NVM attributes (id-ctrl fna)"),
        ("format_applies_to_all_namespaces", "bool", "", "format applies to every namespace (fna bit 0)"),
        ("secure_erase_applies_to_all_namespaces", "bool", "", "secure erase applies to every namespace (fna bit 1)"),
        ("format_crypto_erase_supported", "bool", "", "cryptographic erase as a secure erase setting (fna bit 2)"),
        ("sanicap", "int", "bitfield", "sanitize capabilities (id-ctrl sanicap)"),
        ("sanitize_crypto_erase_supported", "bool", "", "sanitize crypto erase (sanicap bit 0)"),
        ("sanitize_block_erase_supported", "bool", "", "sanitize block erase (sanicap bit 1)"),
        ("sanitize_overwrite_supported", "bool", "", "sanitize overwrite (sanicap bit 2)"),
        ("dsm_deallocate_supported", "bool", "", "Dataset Management / deallocate (TRIM) supported (oncs bit 2)"),
        ("write_zeroes_supported", "bool", "", "Write Zeroes supported (oncs bit 3)"),
        ("volatile_write_cache_present", "bool", "", "controller has a volatile write cache (id-ctrl vwc bit 0)"),
        ("apst_supported", "bool", "", "autonomous power state transitions supported (id-ctrl apsta bit 0)"),
        ("power_states", "int", "count", "number of power states (id-ctrl npss + 1)"),
        ("max_power_ps0_w", "float", "W", "maximum power of power state 0"),
        ("warning_temp_c", "float", "°C", "warning composite temperature threshold (id-ctrl wctemp)"),
        ("critical_temp_c", "float", "°C", "critical composite temperature threshold (id-ctrl cctemp)"),
        ("hctm_supported", "bool", "", "host controlled thermal management supported (id-ctrl hctma bit 0)"),
        ("thermal_mgmt_min_c", "float", "°C", "minimum thermal management temperature (id-ctrl mntmt)"),
        ("thermal_mgmt_max_c", "float", "°C", "maximum thermal management temperature (id-ctrl mxtmt)"),
        ("firmware_slots", "int", "count", "firmware slots (id-ctrl frmw bits 3:1)"),
        ("firmware_slot1_read_only", "bool", "", "firmware slot 1 is read only (frmw bit 0)"),
        ("active_firmware_slot", "int", "", "slot the running firmware was loaded from (fw-log afi bits 2:0)"),
        ("firmware_slot_revisions", "dict", "", "firmware revision in each filled slot (fw-log)"),
        ("namespace_size_blocks", "int", "blocks", "namespace size in logical blocks (id-ns nsze)"),
        ("namespace_capacity_blocks", "int", "blocks", "namespace capacity in logical blocks (id-ns ncap)"),
        ("namespace_utilization_blocks", "int", "blocks", "allocated logical blocks (id-ns nuse)"),
        ("namespace_size_bytes", "int", "bytes", "namespace size (nsze × LBA data size)"),
        ("lba_format_index", "int", "", "LBA format in use (id-ns flbas)"),
        ("lba_data_size_bytes", "int", "bytes", "data size of the LBA format in use"),
        ("lba_metadata_size_bytes", "int", "bytes", "metadata size of the LBA format in use"),
        ("lba_relative_performance", "int", "", "relative performance of the LBA format in use (0 best … 3 degraded)"),
        ("lba_formats", "list", "", "every LBA format: index, data_size_bytes, metadata_size_bytes, relative_performance, in_use"),
        ("deallocated_read_value", "str", "", "what a deallocated block reads as (id-ns dlfeat bits 2:0)"),
        ("nguid", "str", "", "namespace globally unique identifier"),
        ("eui64", "str", "", "IEEE extended unique identifier"),
        ("feature_arbitration", "dict", "", "feature 0x01: arbitration burst and priority weights (raw dword too)"),
        ("feature_power_management", "dict", "", "feature 0x02: power state and workload hint"),
        ("feature_temperature_threshold_c", "float", "°C", "feature 0x04: composite over-temperature threshold in force"),
        ("feature_error_recovery", "dict", "", "feature 0x05: time-limited error recovery (ms) and DULBE"),
        ("volatile_write_cache_enabled", "bool", "", "feature 0x06: volatile write cache enable (WCE) in force"),
        ("feature_number_of_queues", "dict", "", "feature 0x07: I/O submission/completion queues allocated"),
        ("feature_interrupt_coalescing", "dict", "", "feature 0x08: aggregation time (µs) and threshold"),
        ("feature_interrupt_vector_config", "dict", "", "feature 0x09: interrupt vector 0 coalescing disable"),
        ("feature_write_atomicity", "dict", "", "feature 0x0A: write atomicity normal (disable normal)"),
        ("sanitize_status", "str", "", "most recent sanitize status (sanitize-log)"),
        ("sanitize_progress_pct", "float", "%", "progress of a sanitize in progress (sanitize-log sprog)"),
    ])
    + _f("smart", [
        ("smart_source", "str", "", "where the health fields come from (nvme smart-log, smartctl)"),
        ("smartctl_version", "str", "", "smartctl version"),
        ("smart_passed", "bool", "", "overall health self-assessment passed (smartctl)"),
        ("critical_warning", "int", "bitfield", "NVMe critical warning (bit 1 = temperature)"),
        ("composite_temperature_c", "float", "°C", "composite / drive temperature"),
        ("temperature_sensors_c", "list", "°C", "temperature sensors 1..8 that report a value"),
        ("available_spare_pct", "int", "%", "available spare"),
        ("available_spare_threshold_pct", "int", "%", "available spare threshold"),
        ("percentage_used_pct", "int", "%", "endurance used estimate (NVMe percentage used / ATA devstat)"),
        ("data_units_read", "int", "512000-byte units", "NVMe data units read (thousands of 512-byte units)"),
        ("data_units_written", "int", "512000-byte units", "NVMe data units written"),
        ("data_read_bytes", "int", "bytes", "host data read (NVMe data units × 512000, ATA LBAs read × 512)"),
        ("data_written_bytes", "int", "bytes", "host data written"),
        ("host_read_commands", "int", "count", "host read commands completed"),
        ("host_write_commands", "int", "count", "host write commands completed"),
        ("controller_busy_time_min", "int", "min", "controller busy time"),
        ("power_cycles", "int", "count", "power cycles"),
        ("power_on_hours", "int", "h", "power-on hours"),
        ("unsafe_shutdowns", "int", "count", "unsafe shutdowns"),
        ("media_errors", "int", "count", "media and data integrity errors (ATA: reported uncorrectable; SCSI: uncorrected)"),
        ("error_log_entries", "int", "count", "error information log entries"),
        ("warning_temp_time_min", "int", "min", "time above the warning composite temperature (ATA: time over temperature)"),
        ("critical_temp_time_min", "int", "min", "time above the critical composite temperature"),
        ("thermal_mgmt_t1_transitions", "int", "count", "thermal management temperature 1 (light throttle) transitions"),
        ("thermal_mgmt_t2_transitions", "int", "count", "thermal management temperature 2 (heavy throttle) transitions"),
        ("thermal_mgmt_t1_time_s", "int", "s", "total time throttled at thermal management temperature 1"),
        ("thermal_mgmt_t2_time_s", "int", "s", "total time throttled at thermal management temperature 2"),
        ("ata_attributes", "list", "", "ATA SMART attributes: id, name, value, worst, thresh, raw"),
    ])
    + _f("ata", [
        ("ata_version", "str", "", "ATA standard version"),
        ("sata_version", "str", "", "SATA version"),
        ("interface_speed_max", "str", "", "maximum SATA link speed"),
        ("interface_speed_current", "str", "", "current SATA link speed"),
        ("security_supported", "bool", "", "ATA security feature set supported"),
        ("security_enabled", "bool", "", "a user password is set"),
        ("security_locked", "bool", "", "security locked"),
        ("security_frozen", "bool", "", "security frozen (SECURITY ERASE refused until unfrozen)"),
        ("enhanced_erase_supported", "bool", "", "enhanced security erase supported"),
        ("security_erase_time_min", "int", "min", "time the drive estimates for SECURITY ERASE UNIT"),
        ("enhanced_erase_time_min", "int", "min", "time the drive estimates for ENHANCED SECURITY ERASE UNIT"),
        ("sanitize_supported", "bool", "", "SANITIZE feature set supported (hdparm -I)"),
        ("sanitize_block_erase_supported", "bool", "", "BLOCK ERASE EXT supported"),
        ("sanitize_crypto_scramble_supported", "bool", "", "CRYPTO SCRAMBLE EXT supported"),
        ("sanitize_overwrite_supported", "bool", "", "OVERWRITE EXT supported"),
        ("trim_supported", "bool", "", "DATA SET MANAGEMENT TRIM supported"),
        ("trim_reads_zeros", "bool", "", "deterministic read zeros after TRIM"),
        ("write_cache_enabled", "bool", "", "volatile write cache enabled"),
        ("read_lookahead_enabled", "bool", "", "read look-ahead enabled"),
    ])
    + _f("scsi", [
        ("scsi_vendor", "str", "", "INQUIRY vendor"),
        ("scsi_product", "str", "", "INQUIRY product"),
        ("scsi_revision", "str", "", "INQUIRY revision"),
        ("scsi_version", "str", "", "SCSI standard version (SPC-n)"),
        ("transport_protocol", "str", "", "SCSI transport protocol (e.g. SAS (SPL-4))"),
        ("protection_type", "int", "", "T10 protection information type (0 = none)"),
        ("logical_unit_id", "str", "", "logical unit identifier (NAA)"),
        ("lb_provisioning", "str", "", "logical block provisioning (fully / resource / thin)"),
        ("grown_defects", "int", "count", "grown defect list entries"),
        ("write_cache_enabled", "bool", "", "caching mode page WCE (sdparm)"),
        ("read_cache_disabled", "bool", "", "caching mode page RCD (sdparm)"),
        ("sanitize_overwrite_supported", "bool", "", "SANITIZE overwrite (REPORT SUPPORTED OPCODES)"),
        ("sanitize_block_erase_supported", "bool", "", "SANITIZE block erase"),
        ("sanitize_crypto_erase_supported", "bool", "", "SANITIZE cryptographic erase"),
        ("format_unit_supported", "bool", "", "FORMAT UNIT supported"),
    ])
    + _f("queue", [
        ("scheduler", "str", "", "I/O scheduler in use"),
        ("schedulers_available", "list", "", "I/O schedulers the kernel offers for this queue"),
        ("nr_requests", "int", "requests", "request queue depth (per hardware queue)"),
        ("rotational", "bool", "", "rotational flag"),
        ("max_sectors_kb", "int", "KiB", "largest request the block layer issues"),
        ("max_hw_sectors_kb", "int", "KiB", "largest request the hardware accepts"),
        ("write_cache", "str", "", "kernel's view of the write cache: write back or write through"),
        ("fua", "bool", "", "device supports Force Unit Access"),
        ("logical_block_size_bytes", "int", "bytes", "logical block size"),
        ("physical_block_size_bytes", "int", "bytes", "physical block size"),
        ("minimum_io_size_bytes", "int", "bytes", "minimum preferred I/O size"),
        ("optimal_io_size_bytes", "int", "bytes", "optimal I/O size (0 = not reported)"),
        ("discard_granularity_bytes", "int", "bytes", "discard granularity"),
        ("discard_max_bytes", "int", "bytes", "largest discard the kernel issues (0 = no discard)"),
        ("discard_max_hw_bytes", "int", "bytes", "largest discard the hardware accepts"),
        ("write_zeroes_max_bytes", "int", "bytes", "largest write-zeroes request"),
        ("read_ahead_kb", "int", "KiB", "read-ahead"),
        ("nomerges", "int", "", "merging: 0 all, 1 simple only, 2 none"),
        ("rq_affinity", "int", "", "completion CPU affinity: 0 none, 1 group, 2 same CPU"),
        ("add_random", "bool", "", "device contributes to the entropy pool"),
        ("iostats", "bool", "", "I/O statistics collected"),
        ("io_poll", "bool", "", "polled I/O enabled"),
        ("io_timeout_ms", "int", "ms", "request timeout"),
        ("wbt_lat_usec", "int", "µs", "writeback throttling target latency (0 = off)"),
        ("zoned", "str", "", "zoned model: none, host-aware, host-managed"),
        ("dax", "bool", "", "direct access (DAX) capable"),
        ("nr_hw_queues", "int", "count", "hardware queues (blk-mq mq/ entries)"),
    ])
    + _f("pcie", [
        ("pci_address", "str", "", "PCI address of the device's function"),
        ("device_name", "str", "", "lspci's name for the device"),
        ("driver", "str", "", "kernel driver bound to the PCI function"),
        ("current_link_speed_gts", "float", "GT/s", "negotiated link speed"),
        ("current_link_width", "int", "lanes", "negotiated link width"),
        ("max_link_speed_gts", "float", "GT/s", "maximum link speed of the device"),
        ("max_link_width", "int", "lanes", "maximum link width of the device"),
        ("pcie_generation", "str", "", "PCIe generation of the negotiated speed (Gen1..Gen6)"),
        ("link_downgraded", "bool", "", "link runs below its maximum speed or width"),
        ("aspm", "str", "", "ASPM state of the link (lspci LnkCtl)"),
        ("numa_node", "int", "", "NUMA node of the device (-1 = none)"),
        ("topology_path", "list", "", "PCI functions from the root port down to the device"),
        ("topology", "list", "", "each hop: address, current/max link speed (GT/s) and width (lanes)"),
    ])
    + _f("lsblk", [
        ("name", "str", "", "lsblk NAME"),
        ("path", "str", "", "device node"),
        ("maj_min", "str", "", "major:minor"),
        ("type", "str", "", "disk, part, loop, ..."),
        ("size_bytes", "int", "bytes", "size"),
        ("tran", "str", "", "transport"),
        ("subsystems", "str", "", "subsystem chain (e.g. block:nvme:pci)"),
        ("hctl", "str", "", "SCSI host:channel:target:lun"),
        ("model", "str", "", "model"),
        ("serial", "str", "", "serial"),
        ("rev", "str", "", "revision"),
        ("vendor", "str", "", "vendor"),
        ("wwn", "str", "", "world wide name"),
        ("rota", "bool", "", "rotational"),
        ("sched", "str", "", "scheduler"),
        ("rq_size", "int", "requests", "request queue size"),
        ("phy_sec_bytes", "int", "bytes", "physical sector size"),
        ("log_sec_bytes", "int", "bytes", "logical sector size"),
        ("min_io_bytes", "int", "bytes", "minimum I/O size"),
        ("opt_io_bytes", "int", "bytes", "optimal I/O size"),
        ("disc_gran_bytes", "int", "bytes", "discard granularity"),
        ("disc_max_bytes", "int", "bytes", "discard max bytes"),
        ("disc_zero", "bool", "", "discard zeroes data"),
        ("wsame_bytes", "int", "bytes", "write same max bytes"),
        ("ra_kb", "int", "KiB", "read-ahead"),
        ("zoned", "str", "", "zone model"),
        ("fstype", "str", "", "filesystem signature on the whole device"),
        ("children", "list", "", "partitions/holders: name, type, size_bytes, fstype"),
    ])
    + _f("block_stat", [
        ("reads_completed", "int", "count", "reads completed (/sys/class/block/NAME/stat field 1)"),
        ("reads_merged", "int", "count", "reads merged"),
        ("sectors_read", "int", "512-byte sectors", "sectors read"),
        ("read_time_ms", "int", "ms", "time spent reading (sum over requests)"),
        ("writes_completed", "int", "count", "writes completed"),
        ("writes_merged", "int", "count", "writes merged"),
        ("sectors_written", "int", "512-byte sectors", "sectors written"),
        ("write_time_ms", "int", "ms", "time spent writing"),
        ("in_flight", "int", "requests", "requests in flight at the sample"),
        ("io_ticks_ms", "int", "ms", "time the device had I/O in flight (busy time)"),
        ("time_in_queue_ms", "int", "ms", "weighted time in queue"),
        ("discards_completed", "int", "count", "discards completed (kernel ≥ 4.18)"),
        ("discards_merged", "int", "count", "discards merged"),
        ("sectors_discarded", "int", "512-byte sectors", "sectors discarded"),
        ("discard_time_ms", "int", "ms", "time spent discarding"),
        ("flushes_completed", "int", "count", "flush requests completed (kernel ≥ 5.5)"),
        ("flush_time_ms", "int", "ms", "time spent flushing"),
    ])
)

GROUPS = ("identity", "nvme", "smart", "ata", "scsi", "queue", "pcie", "lsblk")
_BY_KEY = {(f.group, f.name): f for f in FIELDS}


def field(group: str, name: str) -> Field:
    return _BY_KEY[(group, name)]


def group_fields(group: str) -> list[Field]:
    return [f for f in FIELDS if f.group == group]


def unit_of(group: str, name: str) -> str:
    return _BY_KEY[(group, name)].unit


def not_available(reason: str) -> str:
    reason = " ".join(str(reason).split())
    return reason if reason.startswith(NA) else f"{NA}: {reason}"


def build_group(group: str, values: dict[str, Any] | None, reason: str) -> dict[str, Any]:
    """Every catalogue field of ``group``: ``{"value", "unit"}`` where ``values`` has it, else the
    reason ("not available: ..."). ``values=None`` means the whole group could not be collected."""
    out: dict[str, Any] = {}
    for f in group_fields(group):
        v = None if values is None else values.get(f.name)
        if v is None or (isinstance(v, str) and v.startswith(NA)):
            out[f.name] = v if isinstance(v, str) else not_available(reason)
        else:
            out[f.name] = {"value": v, "unit": f.unit}
    return out


def value(info: dict, group: str, name: str, default: Any = None) -> Any:
    """The plain value of a collected field, or ``default`` when it is not available."""
    entry = (info.get(group) or {}).get(name) if isinstance(info, dict) else None
    if isinstance(entry, dict) and "value" in entry:
        return entry["value"]
    return default


def fields_markdown(group: str) -> str:
    """The catalogue of one group as a Markdown table (docs/results-format.md)."""
    lines = ["| field | type | unit | description |", "|---|---|---|---|"]
    for f in group_fields(group):
        lines.append(f"| `{f.name}` | {f.type} | {f.unit or '—'} | {f.description} |")
    return "\n".join(lines)


# ==================================================================================================
# Running tools
# ==================================================================================================

PACKAGES = {
    "nvme": "nvme-cli", "smartctl": "smartmontools", "hdparm": "hdparm", "sdparm": "sdparm",
    "sg_opcodes": "sg3-utils", "sg_sanitize": "sg3-utils", "sg_format": "sg3-utils", "sg_requests": "sg3-utils",
    "lspci": "pciutils", "lshw": "lshw", "lsblk": "util-linux", "dmidecode": "dmidecode", "fio": "fio",
    "blkdiscard": "util-linux",
}


# Tools whose presence is recorded (purge selection needs to know which methods can run).
TOOLS = ("nvme", "smartctl", "hdparm", "sdparm", "sg_opcodes", "sg_sanitize", "sg_format", "sg_requests",
         "lspci", "lsblk", "blkdiscard")


@dataclass(frozen=True, slots=True)
class ToolResult:
    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    reason: str | None  # None when the tool ran and its output can be used
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.reason is None


def install_hint(tool: str) -> str:
    pkg = PACKAGES.get(tool)
    return f"{tool} is not installed (install {pkg})" if pkg else f"{tool} is not installed"


def run_tool(argv: list[str], *, timeout: float = 30.0, ok_codes: Callable[[int], bool] | None = None) -> ToolResult:
    """Run a read-only tool; never raises. ``reason`` says why its output cannot be used."""
    t0 = time.monotonic()
    if shutil.which(argv[0]) is None:
        return ToolResult(tuple(argv), None, "", "", not_available(install_hint(argv[0])))
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return ToolResult(tuple(argv), None, "", "", not_available(f"{' '.join(argv)} did not finish in {timeout:.0f} s"),
                          time.monotonic() - t0)
    except OSError as exc:
        return ToolResult(tuple(argv), None, "", "", not_available(f"cannot run {argv[0]}: {exc.strerror}"),
                          time.monotonic() - t0)
    good = ok_codes(proc.returncode) if ok_codes else proc.returncode == 0
    reason = None
    if not good:
        last = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        if re.search(r"permission denied|operation not permitted|must be root|requires root", proc.stderr + proc.stdout, re.I):
            reason = not_available(f"{argv[0]} needs root ({last.strip()})")
        else:
            reason = not_available(f"{' '.join(argv[:2])} failed: {last.strip()}")
    return ToolResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr, reason, time.monotonic() - t0)


def _json(text: str) -> Any:
    """JSON document in a tool's output (some tools print warnings before it)."""
    text = text.strip()
    if not text:
        raise ValueError("empty output")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
        if not starts:
            raise
        return json.loads(text[min(starts):])


# ==================================================================================================
# Small value helpers
# ==================================================================================================


def kelvin_to_c(k: Any) -> float | None:
    """NVMe reports temperatures in kelvin; 0 means "not reported"."""
    try:
        k = int(k)
    except (TypeError, ValueError):
        return None
    return round(k - 273.15, 2) if k > 0 else None


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    text = str(v).strip().replace(",", "")
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        try:
            return int(float(text))
        except ValueError:
            return None


def _str(v: Any) -> str | None:
    if v is None:
        return None
    text = str(v).strip()
    return text or None


def _bit(v: int | None, n: int) -> bool | None:
    return None if v is None else bool((v >> n) & 1)


# ==================================================================================================
# nvme-cli parsers (pure; tested on recorded outputs in tests/fixtures/tools)
# ==================================================================================================


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
                out.update(model=_str(dev.get("ModelNumber")), serial=_str(dev.get("SerialNumber")),
                           firmware=_str(dev.get("Firmware")), product_name=_str(dev.get("ProductName")),
                           namespace_id=_int(dev.get("NameSpace")), sector_size_bytes=_int(dev.get("SectorSize")),
                           physical_size_bytes=_int(dev.get("PhysicalSize")), used_bytes=_int(dev.get("UsedBytes")),
                           maximum_lba=_int(dev.get("MaximumLBA")))
                return out
            continue
        for sub in dev.get("Subsystems") or []:
            ctrls = sub.get("Controllers") or []
            spaces = [(ns, c) for c in ctrls for ns in (c.get("Namespaces") or [])]
            spaces += [(ns, ctrls[0] if ctrls else {}) for ns in (sub.get("Namespaces") or [])]
            for ns, ctrl in spaces:
                if ns.get("NameSpace") == name:
                    out.update(model=_str(ctrl.get("ModelNumber")), serial=_str(ctrl.get("SerialNumber")),
                               firmware=_str(ctrl.get("Firmware")), controller=_str(ctrl.get("Controller")),
                               transport=_str(ctrl.get("Transport")), pci_address=_str(ctrl.get("Address")),
                               subsystem=_str(sub.get("Subsystem")), subsystem_nqn=_str(sub.get("SubsystemNQN")),
                               namespace_id=_int(ns.get("NSID")), sector_size_bytes=_int(ns.get("SectorSize")),
                               physical_size_bytes=_int(ns.get("PhysicalSize")), used_bytes=_int(ns.get("UsedBytes")),
                               maximum_lba=_int(ns.get("MaximumLBA")))
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
    oacs, oncs, fna, sanicap = (_int(d.get(k)) for k in ("oacs", "oncs", "fna", "sanicap"))
    vwc, apsta, frmw, hctma = (_int(d.get(k)) for k in ("vwc", "apsta", "frmw", "hctma"))
    npss = _int(d.get("npss"))
    ps0 = (d.get("psds") or [None])[0]
    max_power = None
    if isinstance(ps0, dict) and _int(ps0.get("max_power")) is not None:
        # max_power is in 0.01 W, or 0.0001 W when the state's MXPS bit (max_power_scale) is set.
        scale = 0.0001 if _int(ps0.get("max_power_scale")) else 0.01
        max_power = round(_int(ps0.get("max_power")) * scale, 4)
    vid, ieee = _int(d.get("vid")), _int(d.get("ieee"))
    return {
        "model": _str(d.get("mn")), "serial": _str(d.get("sn")), "firmware": _str(d.get("fr")),
        "subsystem_nqn": _str(d.get("subnqn")),
        "pci_vendor_id": f"0x{vid:04x}" if vid is not None else None,
        "ieee_oui": f"0x{ieee:06x}" if ieee is not None else None,
        "nvme_version": _nvme_version(_int(d.get("ver"))),
        "controller_id": _int(d.get("cntlid")),
        "total_capacity_bytes": _int(d.get("tnvmcap")),
        "unallocated_capacity_bytes": _int(d.get("unvmcap")),
        "mdts": _int(d.get("mdts")),
        "max_namespaces": _int(d.get("nn")),
        "oacs": oacs, "oncs": oncs, "fna": fna, "sanicap": sanicap,
        "format_nvm_supported": _bit(oacs, 1),
        "format_applies_to_all_namespaces": _bit(fna, 0),
        "secure_erase_applies_to_all_namespaces": _bit(fna, 1),
        "format_crypto_erase_supported": _bit(fna, 2),
        "sanitize_crypto_erase_supported": _bit(sanicap, 0),
        "sanitize_block_erase_supported": _bit(sanicap, 1),
        "sanitize_overwrite_supported": _bit(sanicap, 2),
        "dsm_deallocate_supported": _bit(oncs, 2),
        "write_zeroes_supported": _bit(oncs, 3),
        "volatile_write_cache_present": _bit(vwc, 0),
        "apst_supported": _bit(apsta, 0),
        "power_states": None if npss is None else npss + 1,
        "max_power_ps0_w": max_power,
        "warning_temp_c": kelvin_to_c(d.get("wctemp")),
        "critical_temp_c": kelvin_to_c(d.get("cctemp")),
        "hctm_supported": _bit(hctma, 0),
        "thermal_mgmt_min_c": kelvin_to_c(d.get("mntmt")),
        "thermal_mgmt_max_c": kelvin_to_c(d.get("mxtmt")),
        "firmware_slots": None if frmw is None else (frmw >> 1) & 0x7,
        "firmware_slot1_read_only": _bit(frmw, 0),
    }


_DLFEAT = {0: "not reported", 1: "all bytes 00h", 2: "all bytes FFh"}


def parse_id_ns(doc: dict) -> dict[str, Any]:
    """``nvme id-ns -o json`` → namespace size and the LBA format in use (flbas)."""
    d = doc or {}
    flbas = _int(d.get("flbas")) or 0
    # FLBAS bits 3:0 index the format; with more than 16 formats bits 6:5 are the upper bits.
    index = (flbas & 0xF) | (((flbas >> 5) & 0x3) << 4)
    formats = []
    for i, lbaf in enumerate(d.get("lbafs") or []):
        ds = _int(lbaf.get("ds"))
        formats.append({"index": i, "data_size_bytes": (1 << ds) if ds else None,
                        "metadata_size_bytes": _int(lbaf.get("ms")), "relative_performance": _int(lbaf.get("rp")),
                        "in_use": i == index})
    cur = formats[index] if index < len(formats) else {}
    nsze = _int(d.get("nsze"))
    size = cur.get("data_size_bytes")
    dlfeat = _int(d.get("dlfeat"))
    eui, nguid = _str(d.get("eui64")), _str(d.get("nguid"))
    return {
        "namespace_size_blocks": nsze, "namespace_capacity_blocks": _int(d.get("ncap")),
        "namespace_utilization_blocks": _int(d.get("nuse")),
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
        fid = _int(d.get("feature"))
        val = next((_int(v) for k, v in d.items() if k.lower() in ("current", "default", "saved", "value")), None)
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
            return _int(v.get("value"))
        bits = ("available_spare", "temp_threshold", "reliability_degraded", "ro", "vmbu_failed", "pmr_ro")
        return sum((1 << i) for i, b in enumerate(bits) if _int(v.get(b)))
    return _int(v)


def parse_nvme_smart_log(doc: dict) -> dict[str, Any]:
    """``nvme smart-log -o json`` (2.3 / 2.11 / 2.16 shapes) → smart group fields, units in names."""
    d = doc or {}
    sensors = []
    for i in range(1, 9):
        c = kelvin_to_c(d.get(f"temperature_sensor_{i}"))
        if c is not None:
            sensors.append(c)
    dur, duw = _int(d.get("data_units_read")), _int(d.get("data_units_written"))
    return {
        "smart_source": "nvme smart-log",
        "critical_warning": critical_warning_int(d.get("critical_warning")),
        "composite_temperature_c": kelvin_to_c(d.get("temperature")),
        "temperature_sensors_c": sensors or None,
        "available_spare_pct": _int(d.get("avail_spare")),
        "available_spare_threshold_pct": _int(d.get("spare_thresh")),
        "percentage_used_pct": _int(d.get("percent_used", d.get("percentage_used"))),
        "data_units_read": dur, "data_units_written": duw,
        "data_read_bytes": None if dur is None else dur * 512_000,
        "data_written_bytes": None if duw is None else duw * 512_000,
        "host_read_commands": _int(d.get("host_read_commands")),
        "host_write_commands": _int(d.get("host_write_commands")),
        "controller_busy_time_min": _int(d.get("controller_busy_time")),
        "power_cycles": _int(d.get("power_cycles")),
        "power_on_hours": _int(d.get("power_on_hours")),
        "unsafe_shutdowns": _int(d.get("unsafe_shutdowns")),
        "media_errors": _int(d.get("media_errors")),
        "error_log_entries": _int(d.get("num_err_log_entries")),
        "warning_temp_time_min": _int(d.get("warning_temp_time")),
        "critical_temp_time_min": _int(d.get("critical_comp_time")),
        "thermal_mgmt_t1_transitions": _int(d.get("thm_temp1_trans_count")),
        "thermal_mgmt_t2_transitions": _int(d.get("thm_temp2_trans_count")),
        "thermal_mgmt_t1_time_s": _int(d.get("thm_temp1_total_time")),
        "thermal_mgmt_t2_time_s": _int(d.get("thm_temp2_total_time")),
    }


def parse_fw_log(doc: dict) -> dict[str, Any]:
    """``nvme fw-log -o json``: {"nvme0": {"Active Firmware Slot (afi)": N, "Firmware Rev Slot k": "… (REV)"}}."""
    body = doc
    if isinstance(doc, dict) and len(doc) == 1 and isinstance(next(iter(doc.values())), dict):
        body = next(iter(doc.values()))
    body = body or {}
    afi = _int(body.get("Active Firmware Slot (afi)", body.get("afi")))
    slots: dict[str, str] = {}
    for k, v in body.items():
        m = re.match(r"Firmware Rev Slot (\d+)", k)
        if m:
            rev = re.search(r"\(([^)]*)\)\s*$", str(v))
            slots[m.group(1)] = (rev.group(1) if rev else str(v)).strip()
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
        code = (_int(sstat) or 0) & 0x7
    sprog = _int(body.get("sprog"))
    if code == 2 and sprog is not None:
        progress = round(100.0 * sprog / 65536, 2)
    elif code in (1, 4):
        progress = 100.0
    else:
        progress = None

    def est(key: str) -> int | None:
        v = _int(body.get(key))
        return None if v is None or v == 0xFFFFFFFF else v

    return {
        "status_code": code, "sanitize_status": SANITIZE_STATUS.get(code) if code is not None else None,
        "sanitize_progress_pct": progress,
        "global_erased": bool(_int(sstat.get("global_erased"))) if isinstance(sstat, dict) and "global_erased" in sstat else None,
        "estimate_overwrite_s": est("time_over_write"), "estimate_block_erase_s": est("time_block_erase"),
        "estimate_crypto_erase_s": est("time_crypto_erase"),
    }


# ==================================================================================================
# smartctl / hdparm / sdparm / sg_opcodes parsers
# ==================================================================================================


def _devstat(doc: dict) -> dict[str, int]:
    out = {}
    for page in (doc.get("ata_device_statistics") or {}).get("pages") or []:
        for row in page.get("table") or []:
            if isinstance(row, dict) and row.get("name") and isinstance(row.get("value"), int):
                valid = (row.get("flags") or {}).get("valid", True)
                if valid:
                    out[row["name"]] = row["value"]
    return out


def _attr_raw(doc: dict, ids: tuple[int, ...]) -> int | None:
    for row in (doc.get("ata_smart_attributes") or {}).get("table") or []:
        if row.get("id") in ids:
            return _int((row.get("raw") or {}).get("value"))
    return None


def smartctl_version(doc: dict) -> str | None:
    v = (doc.get("smartctl") or {}).get("version")
    return ".".join(str(x) for x in v) if isinstance(v, list) else _str(v)


def parse_smartctl(doc: dict) -> dict[str, dict[str, Any]]:
    """``smartctl -j -x`` (or -a) for ATA, SCSI/SAS and NVMe → {"identity", "smart", "ata", "scsi"}.

    Units in the names; the unknown stays None (build_group turns it into "not available")."""
    d = doc or {}
    dev = d.get("device") or {}
    protocol = str(dev.get("protocol") or "")
    cap = (d.get("user_capacity") or {}).get("bytes")
    temp = d.get("temperature") or {}
    ident: dict[str, Any] = {
        "model": _str(d.get("model_name") or d.get("scsi_model_name")),
        "serial": _str(d.get("serial_number")),
        "firmware": _str(d.get("firmware_version") or d.get("scsi_revision")),
        "vendor": _str(d.get("scsi_vendor")),
        "capacity_bytes": _int(cap),
        "logical_block_size_bytes": _int(d.get("logical_block_size")),
        "physical_block_size_bytes": _int(d.get("physical_block_size")),
        "rotation_rate_rpm": _int(d.get("rotation_rate")),
        "form_factor": _str((d.get("form_factor") or {}).get("name")),
    }
    wwn = d.get("wwn")
    if isinstance(wwn, dict) and {"naa", "oui", "id"} <= set(wwn):
        ident["wwn"] = f"{wwn['naa']:x} {wwn['oui']:06x} {wwn['id']:09x}"
    sata = (d.get("sata_version") or {}).get("string")
    speed = ((d.get("interface_speed") or {}).get("current") or {}).get("string")
    if protocol == "ATA":
        ident["interface"] = " ".join(x for x in (sata, f"({speed})" if speed else None) if x) or "ATA"
    elif protocol == "SCSI":
        ident["interface"] = _str((d.get("scsi_transport_protocol") or {}).get("name")) or "SCSI"
    elif protocol == "NVMe":
        ver = (d.get("nvme_version") or {}).get("string")
        ident["interface"] = f"NVMe {ver}" if ver else "NVMe"

    smart: dict[str, Any] = {
        "smart_source": "smartctl", "smartctl_version": smartctl_version(d),
        "smart_passed": (d.get("smart_status") or {}).get("passed"),
        "composite_temperature_c": temp.get("current"),
        "power_on_hours": _int((d.get("power_on_time") or {}).get("hours")),
        "power_cycles": _int(d.get("power_cycle_count")),
    }
    nv = d.get("nvme_smart_health_information_log")
    if isinstance(nv, dict):
        dur, duw = _int(nv.get("data_units_read")), _int(nv.get("data_units_written"))
        sensors = [t for t in (nv.get("temperature_sensors") or []) if isinstance(t, (int, float))]
        smart.update(
            critical_warning=_int(nv.get("critical_warning")), composite_temperature_c=nv.get("temperature"),
            temperature_sensors_c=sensors or None,
            available_spare_pct=_int(nv.get("available_spare")),
            available_spare_threshold_pct=_int(nv.get("available_spare_threshold")),
            percentage_used_pct=_int(nv.get("percentage_used")),
            data_units_read=dur, data_units_written=duw,
            data_read_bytes=None if dur is None else dur * 512_000,
            data_written_bytes=None if duw is None else duw * 512_000,
            host_read_commands=_int(nv.get("host_reads")), host_write_commands=_int(nv.get("host_writes")),
            controller_busy_time_min=_int(nv.get("controller_busy_time")),
            unsafe_shutdowns=_int(nv.get("unsafe_shutdowns")), media_errors=_int(nv.get("media_errors")),
            error_log_entries=_int(nv.get("num_err_log_entries")),
            warning_temp_time_min=_int(nv.get("warning_temp_time")),
            critical_temp_time_min=_int(nv.get("critical_comp_time")),
        )
    if protocol == "ATA":
        ds = _devstat(d)
        lsw, lsr = ds.get("Logical Sectors Written"), ds.get("Logical Sectors Read")
        lsw = lsw if lsw is not None else _attr_raw(d, (241,))
        lsr = lsr if lsr is not None else _attr_raw(d, (242,))
        smart.update(
            data_written_bytes=None if lsw is None else lsw * 512,
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
        unc = [_int((errs.get(k) or {}).get("total_uncorrected_errors")) for k in ("read", "write", "verify")]
        if any(u is not None for u in unc):
            smart["media_errors"] = sum(u for u in unc if u is not None)
        pu = d.get("scsi_percentage_used_endurance_indicator")
        smart["percentage_used_pct"] = _int(pu)
        for k, key in (("read", "data_read_bytes"), ("write", "data_written_bytes")):
            gb = (errs.get(k) or {}).get("gigabytes_processed")
            try:
                smart[key] = int(float(gb) * 1e9) if gb is not None else None
            except ValueError:
                pass

    sec = d.get("ata_security") or {}
    state = _int(sec.get("state"))
    ata: dict[str, Any] = {}
    if protocol == "ATA":
        ata = {
            "ata_version": _str((d.get("ata_version") or {}).get("string")), "sata_version": _str(sata),
            "interface_speed_max": _str(((d.get("interface_speed") or {}).get("max") or {}).get("string")),
            "interface_speed_current": _str(speed),
            # ATA IDENTIFY word 128 (smartctl prints it as ata_security.state): bit 0 supported,
            # 1 enabled, 2 locked, 3 frozen, 5 enhanced security erase supported.
            "security_supported": _bit(state, 0), "security_enabled": sec.get("enabled", _bit(state, 1)),
            "security_locked": sec.get("locked", _bit(state, 2)), "security_frozen": sec.get("frozen", _bit(state, 3)),
            "enhanced_erase_supported": _bit(state, 5),
            "trim_supported": (d.get("trim") or {}).get("supported"),
            "write_cache_enabled": (d.get("write_cache") or {}).get("enabled"),
            "read_lookahead_enabled": (d.get("read_lookahead") or {}).get("enabled"),
        }
    scsi: dict[str, Any] = {}
    if protocol == "SCSI":
        lbp = d.get("scsi_lb_provisioning") or {}
        scsi = {
            "scsi_vendor": _str(d.get("scsi_vendor")), "scsi_product": _str(d.get("scsi_product")),
            "scsi_revision": _str(d.get("scsi_revision")), "scsi_version": _str(d.get("scsi_version")),
            "transport_protocol": _str((d.get("scsi_transport_protocol") or {}).get("name")),
            "protection_type": _int(d.get("scsi_protection_type")),
            "logical_unit_id": _str(d.get("logical_unit_id")), "lb_provisioning": _str(lbp.get("name")),
            "grown_defects": _int(d.get("scsi_grown_defect_list")),
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
    out["trim_supported"] = bool(re.search(r"Data Set Management TRIM supported", joined))
    out["trim_reads_zeros"] = bool(re.search(r"Deterministic read ZEROs after TRIM", joined))
    sec_start = next((i for i, ln in enumerate(lines) if ln.startswith("Security:")), None)
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
# sysfs, lsblk, PCIe
# ==================================================================================================

QUEUE_ATTRS = ("scheduler", "nr_requests", "rotational", "max_sectors_kb", "max_hw_sectors_kb", "write_cache",
               "fua", "logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size",
               "discard_granularity", "discard_max_bytes", "discard_max_hw_bytes", "write_zeroes_max_bytes",
               "read_ahead_kb", "nomerges", "rq_affinity", "add_random", "iostats", "io_poll", "io_timeout",
               "wbt_lat_usec", "zoned", "dax")


def read_queue(disk: str) -> dict[str, str]:
    """Raw /sys/class/block/DISK/queue/* attributes (strings, as the kernel prints them)."""
    qdir = os.path.join(tgt.sysfs_block_dir(disk), "queue")
    raw: dict[str, str] = {}
    for attr in QUEUE_ATTRS:
        text = tgt.read_sysfs(os.path.join(qdir, attr))
        if text is not None:
            raw[attr] = text
    try:
        raw["mq_hw_queues"] = str(len([e for e in os.listdir(os.path.join(tgt.sysfs_block_dir(disk), "mq"))
                                       if e.isdigit()]))
    except OSError:
        pass
    return raw


def parse_queue(raw: dict[str, str]) -> dict[str, Any]:
    def i(k):
        return _int(raw.get(k))

    def b(k):
        v = i(k)
        return None if v is None else v != 0

    sched = raw.get("scheduler")
    active = None
    avail = None
    if sched:
        m = re.search(r"\[([^\]]+)\]", sched)
        active = m.group(1) if m else sched.split()[0]
        avail = [s.strip("[]") for s in sched.split()]
    return {
        "scheduler": active, "schedulers_available": avail, "nr_requests": i("nr_requests"),
        "rotational": b("rotational"), "max_sectors_kb": i("max_sectors_kb"), "max_hw_sectors_kb": i("max_hw_sectors_kb"),
        "write_cache": raw.get("write_cache"), "fua": b("fua"),
        "logical_block_size_bytes": i("logical_block_size"), "physical_block_size_bytes": i("physical_block_size"),
        "minimum_io_size_bytes": i("minimum_io_size"), "optimal_io_size_bytes": i("optimal_io_size"),
        "discard_granularity_bytes": i("discard_granularity"), "discard_max_bytes": i("discard_max_bytes"),
        "discard_max_hw_bytes": i("discard_max_hw_bytes"), "write_zeroes_max_bytes": i("write_zeroes_max_bytes"),
        "read_ahead_kb": i("read_ahead_kb"), "nomerges": i("nomerges"), "rq_affinity": i("rq_affinity"),
        "add_random": b("add_random"), "iostats": b("iostats"), "io_poll": b("io_poll"),
        "io_timeout_ms": i("io_timeout"), "wbt_lat_usec": i("wbt_lat_usec"), "zoned": raw.get("zoned"),
        "dax": b("dax"), "nr_hw_queues": i("mq_hw_queues"),
    }


_LSBLK_KEYS = {
    "name": ("name", _str), "path": ("path", _str), "maj_min": ("maj:min", _str), "type": ("type", _str),
    "size_bytes": ("size", _int), "tran": ("tran", _str), "subsystems": ("subsystems", _str), "hctl": ("hctl", _str),
    "model": ("model", _str), "serial": ("serial", _str), "rev": ("rev", _str), "vendor": ("vendor", _str),
    "wwn": ("wwn", _str), "sched": ("sched", _str), "rq_size": ("rq-size", _int), "phy_sec_bytes": ("phy-sec", _int),
    "log_sec_bytes": ("log-sec", _int), "min_io_bytes": ("min-io", _int), "opt_io_bytes": ("opt-io", _int),
    "disc_gran_bytes": ("disc-gran", _int), "disc_max_bytes": ("disc-max", _int), "wsame_bytes": ("wsame", _int),
    "ra_kb": ("ra", _int), "zoned": ("zoned", _str), "fstype": ("fstype", _str),
}


def _lsblk_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if v is None:
        return None
    return str(v).strip() in ("1", "true")


def parse_lsblk(doc: dict, name: str) -> dict[str, Any]:
    """``lsblk -J -O -b DEV`` → the named device's columns (older lsblk prints numbers as strings)."""
    devices = (doc or {}).get("blockdevices") or []
    node = next((d for d in devices if isinstance(d, dict) and (d.get("kname") == name or d.get("name") == name)),
                devices[0] if devices else None)
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {k: conv(node.get(src)) for k, (src, conv) in _LSBLK_KEYS.items()}
    out["rota"] = _lsblk_bool(node.get("rota"))
    out["disc_zero"] = _lsblk_bool(node.get("disc-zero"))
    kids = node.get("children") or []
    out["children"] = [{"name": c.get("name"), "type": c.get("type"), "size_bytes": _int(c.get("size")),
                        "fstype": _str(c.get("fstype"))} for c in kids if isinstance(c, dict)] or None
    if out.get("path") is None and out.get("name"):
        out["path"] = f"/dev/{out['name']}"
    return out


_PCI_ADDR = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_GEN = {2.5: "Gen1", 5.0: "Gen2", 8.0: "Gen3", 16.0: "Gen4", 32.0: "Gen5", 64.0: "Gen6"}


def parse_link_speed(text: str | None) -> float | None:
    """sysfs "16.0 GT/s PCIe" / lspci "16GT/s" → 16.0; "Unknown" → None."""
    m = re.search(r"([\d.]+)\s*GT/s", text or "")
    return float(m.group(1)) if m else None


def pcie_generation(gts: float | None) -> str | None:
    return _GEN.get(gts) if gts is not None else None


def pci_chain(disk: str) -> list[str]:
    """sysfs directories of the PCI functions above a block device, root port first."""
    real = os.path.realpath(tgt.sysfs_block_dir(disk))
    parts = real.split(os.sep)
    chain = []
    for i, p in enumerate(parts):
        if _PCI_ADDR.match(p):
            chain.append(os.sep.join(parts[: i + 1]))
    return chain


def read_pcie(disk: str) -> dict[str, Any]:
    """Link attributes of every PCI function from the root down to the device (raw strings)."""
    hops = []
    for d in pci_chain(disk):
        hop: dict[str, Any] = {"address": os.path.basename(d), "sysfs": d}
        for attr in ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "numa_node",
                     "class", "vendor", "device"):
            v = tgt.read_sysfs(os.path.join(d, attr))
            if v is not None:
                hop[attr] = v
        drv = os.path.join(d, "driver")
        if os.path.islink(drv):
            hop["driver"] = os.path.basename(os.path.realpath(drv))
        hops.append(hop)
    return {"hops": hops}


def parse_pcie(raw: dict[str, Any], lspci_text: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """(pcie fields, reason when the device has no PCIe link) from read_pcie + lspci -vv."""
    hops = raw.get("hops") or []
    if not hops:
        return None, "not on a PCI bus (virtual or non-PCI device)"
    dev = hops[-1]
    topo = [{"address": h["address"],
             "current_link_speed_gts": parse_link_speed(h.get("current_link_speed")),
             "current_link_width": _int(h.get("current_link_width")),
             "max_link_speed_gts": parse_link_speed(h.get("max_link_speed")),
             "max_link_width": _int(h.get("max_link_width"))} for h in hops]
    cur = topo[-1]
    out: dict[str, Any] = {
        "pci_address": dev["address"], "driver": dev.get("driver"), "numa_node": _int(dev.get("numa_node")),
        "topology_path": [h["address"] for h in hops], "topology": topo,
        "current_link_speed_gts": cur["current_link_speed_gts"], "current_link_width": cur["current_link_width"],
        "max_link_speed_gts": cur["max_link_speed_gts"], "max_link_width": cur["max_link_width"],
    }
    lsp = parse_lspci(lspci_text or "")
    out["device_name"] = lsp.get("device_name")
    out["aspm"] = lsp.get("aspm")
    for k in ("current_link_speed_gts", "current_link_width", "max_link_speed_gts", "max_link_width"):
        if out[k] is None:
            out[k] = lsp.get(k)
    out["pcie_generation"] = pcie_generation(out["current_link_speed_gts"])
    if out["current_link_speed_gts"] is not None and out["max_link_speed_gts"] is not None:
        out["link_downgraded"] = (out["current_link_speed_gts"] < out["max_link_speed_gts"]
                                  or (out["current_link_width"] or 0) < (out["max_link_width"] or 0))
    if out["current_link_speed_gts"] is None and out["max_link_speed_gts"] is None:
        reason = f"{dev['address']} reports no PCIe link (conventional PCI or a virtual device)"
        for k in ("current_link_speed_gts", "current_link_width", "max_link_speed_gts", "max_link_width",
                  "pcie_generation", "link_downgraded"):
            out[k] = not_available(reason)
    return out, None


def parse_lspci(text: str) -> dict[str, Any]:
    """``lspci -vv -s ADDR``: name, LnkCap / LnkSta speed and width, ASPM in LnkCtl."""
    out: dict[str, Any] = {}
    if not text:
        return out
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.startswith("lspci:")), "")
    m = re.match(r"^\S+\s+[^:]+:\s*(.+)$", first)
    if m:
        out["device_name"] = m.group(1).strip()
    m = re.search(r"LnkCap:\s*Port #\d+,\s*Speed ([\d.]+GT/s),\s*Width x(\d+)", text)
    if m:
        out["max_link_speed_gts"], out["max_link_width"] = parse_link_speed(m.group(1)), int(m.group(2))
    m = re.search(r"LnkSta:\s*Speed ([\d.]+GT/s)[^,]*,\s*Width x(\d+)", text)
    if m:
        out["current_link_speed_gts"], out["current_link_width"] = parse_link_speed(m.group(1)), int(m.group(2))
    m = re.search(r"LnkCtl:\s*ASPM ([^;]+);", text)
    if m:
        out["aspm"] = m.group(1).strip()
    return out


# ==================================================================================================
# Device classes and NVMe naming
# ==================================================================================================

_VIRTUAL = (("loop", "loop"), ("zram", "zram"), ("ram", "ram"), ("dm-", "dm"), ("md", "md"), ("nbd", "nbd"),
            ("vd", "virtio"), ("xvd", "xen"), ("pmem", "pmem"), ("rbd", "rbd"))


def device_class(target: Target) -> str:
    """nvme, ata, scsi, usb, virtio, loop, zram, ram, dm, md, nbd, xen, pmem, rbd, other, file."""
    if target.kind == "file":
        return "file"
    disk = target.parent or target.name
    if re.match(r"^nvme\d+(c\d+)?n\d+$", disk):
        return "nvme"
    for prefix, cls in _VIRTUAL:
        if disk.startswith(prefix) and (prefix != "md" or re.match(r"^md\d+$|^md_", disk)):
            return cls
    if re.match(r"^(sd|sr|st)[a-z]+$", disk):
        tran = (target.transport or "").lower()
        if tran in ("sata", "ata"):
            return "ata"
        if tran == "sas":
            return "scsi"
        if tran == "usb":
            return "usb"
        vendor = (tgt.read_sysfs(os.path.join(tgt.sysfs_block_dir(disk), "device", "vendor")) or "").strip()
        return "ata" if vendor == "ATA" else "scsi"
    return "other"


def nvme_names(target: Target) -> tuple[str | None, int | None, int | None]:
    """(controller, namespace id, namespaces on that controller) of an NVMe block device."""
    disk = target.parent or target.name
    ddir = tgt.sysfs_block_dir(disk)
    ctrl = None
    dev = os.path.realpath(os.path.join(ddir, "device"))
    base = os.path.basename(dev)
    if re.match(r"^nvme\d+$", base):
        ctrl = base
    elif base.startswith("nvme-subsys"):
        try:
            ctrl = next((e for e in sorted(os.listdir(dev)) if re.match(r"^nvme\d+$", e)), None)
        except OSError:
            ctrl = None
    if ctrl is None:
        m = re.match(r"^(nvme\d+)", disk)
        ctrl = m.group(1) if m else None
    nsid = _int(tgt.read_sysfs(os.path.join(ddir, "nsid")))
    if nsid is None:
        m = re.search(r"n(\d+)$", disk)
        nsid = int(m.group(1)) if m else None
    count = None
    for cdir in (os.path.join(tgt.SYSFS, "class", "nvme", ctrl or "-"), dev):
        try:
            names = [e for e in os.listdir(cdir) if re.match(r"^nvme\d+(c\d+)?n\d+$", e)]
        except OSError:
            continue
        if names:
            count = len({re.sub(r"c\d+n", "n", n) for n in names})
            break
    return ctrl, nsid, count


# ==================================================================================================
# Collection
# ==================================================================================================


@dataclass
class _Gather:
    raw: dict[str, str]
    collectors: dict[str, str]

    def keep(self, name: str, text: str | None) -> None:
        if text:
            self.raw[name] = text if text.endswith("\n") else text + "\n"

    def note(self, what: str, res: ToolResult | str | None) -> None:
        if isinstance(res, ToolResult):
            self.collectors[what] = "ok" if res.ok else (res.reason or "not available")
        else:
            self.collectors[what] = res or "ok"


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """Fill dst from src where dst has nothing yet."""
    for k, v in src.items():
        if v is not None and dst.get(k) is None:
            dst[k] = v


def _nvme_json(g: _Gather, argv: list[str], raw_name: str, what: str) -> dict | None:
    res = run_tool(argv)
    if res.ok:
        try:
            doc = _json(res.stdout)
        except ValueError as exc:
            g.note(what, not_available(f"{' '.join(argv[:2])} printed no JSON ({exc})"))
            g.keep(raw_name.replace(".json", ".txt"), res.stdout)
            return None
        g.keep(raw_name, res.stdout)
        g.note(what, res)
        return doc if isinstance(doc, dict) else None
    g.note(what, res)
    if res.stderr or res.stdout:
        g.keep(raw_name.replace(".json", ".err.txt"), (res.stderr or "") + (res.stdout or ""))
    return None


def _collect_nvme(target: Target, g: _Gather, ident: dict, smart: dict) -> tuple[dict | None, str]:
    ctrl, nsid, count = nvme_names(target)
    if shutil.which("nvme") is None:
        return None, install_hint("nvme")
    nv: dict[str, Any] = {"controller": ctrl, "namespace_id": nsid, "namespaces_on_controller": count}
    ver = run_tool(["nvme", "version"])
    if ver.ok:
        m = re.search(r"version\s+([\w.\-+~]+)", ver.stdout)
        nv["nvme_cli_version"] = m.group(1) if m else ver.stdout.strip()
    disk = target.parent or target.name
    ns_dev = f"/dev/{disk}"
    ctrl_dev = f"/dev/{ctrl}" if ctrl else ns_dev
    doc = _nvme_json(g, ["nvme", "list", "-o", "json"], "nvme-list.json", "nvme list")
    if doc:
        entry = parse_nvme_list(doc, disk)
        for k in ("pci_address", "subsystem_nqn"):
            if entry.get(k):
                nv[k] = entry[k]
        _merge(ident, {k: entry.get(k) for k in ("model", "serial", "firmware")})
    doc = _nvme_json(g, ["nvme", "id-ctrl", ctrl_dev, "-o", "json"], "nvme-id-ctrl.json", "nvme id-ctrl")
    if doc is None:
        reason = g.collectors.get("nvme id-ctrl", "nvme id-ctrl failed")
        return nv, reason
    idc = parse_id_ctrl(doc)
    _merge(ident, {k: idc.pop(k) for k in ("model", "serial", "firmware")})
    if idc.get("nvme_version") and not ident.get("interface"):
        ident["interface"] = f"NVMe {idc['nvme_version']}"
    nv.update({k: v for k, v in idc.items() if v is not None or k not in nv})
    doc = _nvme_json(g, ["nvme", "id-ns", ns_dev, "-o", "json"], "nvme-id-ns.json", "nvme id-ns")
    if doc:
        nv.update(parse_id_ns(doc))
        if not ident.get("wwn"):
            ident["wwn"] = nv.get("nguid") or nv.get("eui64")
    texts = []
    for fid in FEATURE_IDS:
        res = run_tool(["nvme", "get-feature", ctrl_dev, "-f", f"0x{fid:02x}"])
        texts.append(f"# nvme get-feature {ctrl_dev} -f 0x{fid:02x} (exit {res.returncode})\n{res.stdout}{res.stderr}")
        for f_id, dword in parse_get_feature(res.stdout).items():
            name, val = decode_feature(f_id, dword)
            nv[name] = val
        if not res.ok:
            name, _ = decode_feature(fid, 0)
            nv.setdefault(name, res.reason)
    g.keep("nvme-get-feature.txt", "\n".join(texts))
    g.note("nvme get-feature", None)
    doc = _nvme_json(g, ["nvme", "smart-log", ctrl_dev, "-o", "json"], "nvme-smart-log.json", "nvme smart-log")
    if doc:
        smart.update({k: v for k, v in parse_nvme_smart_log(doc).items() if v is not None})
    doc = _nvme_json(g, ["nvme", "fw-log", ctrl_dev, "-o", "json"], "nvme-fw-log.json", "nvme fw-log")
    if doc:
        nv.update(parse_fw_log(doc))
    if nv.get("sanicap"):
        doc = _nvme_json(g, ["nvme", "sanitize-log", ctrl_dev, "-o", "json"], "nvme-sanitize-log.json",
                         "nvme sanitize-log")
        if doc:
            s = parse_sanitize_log(doc)
            nv["sanitize_status"], nv["sanitize_progress_pct"] = s["sanitize_status"], s["sanitize_progress_pct"]
    else:
        nv.setdefault("sanitize_status", not_available("the controller does not support sanitize (sanicap = 0)"))
        nv.setdefault("sanitize_progress_pct", not_available("the controller does not support sanitize (sanicap = 0)"))
    return nv, "not reported by nvme-cli"


def _collect_smartctl(dev: str, g: _Gather, cls: str) -> dict[str, dict[str, Any]] | None:
    argv = ["smartctl", "-j", "-x", dev]
    if cls == "nvme":
        argv[3:3] = ["-d", "nvme"]
    # smartctl's exit status is a bit mask: bits 0-1 = could not run/open; others describe health.
    res = run_tool(argv, timeout=60, ok_codes=lambda rc: rc & 0x3 == 0)
    g.note("smartctl", res)
    if res.stdout:
        g.keep("smartctl.json", res.stdout)
    if not res.ok:
        return None
    try:
        doc = _json(res.stdout)
    except ValueError as exc:
        g.note("smartctl", not_available(f"smartctl printed no JSON ({exc}); smartctl ≥ 7.0 is needed for -j"))
        return None
    return parse_smartctl(doc)


def _file_backing_disk(target: Target) -> str | None:
    try:
        st = os.stat(os.path.dirname(target.real_path) or ".")
    except OSError:
        return None
    name = tgt.name_for_devnum(os.major(st.st_dev), os.minor(st.st_dev))
    return tgt.disk_of(name) if name else None


def gather(target: Target) -> tuple[dict[str, Any], dict[str, str]]:
    """Collect everything for ``target``: (parsed info, {raw file name: text}). Writes nothing."""
    g = _Gather(raw={}, collectors={})
    cls = device_class(target)
    info: dict[str, Any] = {"format": 1, "collected_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "device_class": cls,
                            "tools": {t: shutil.which(t) is not None for t in TOOLS}}
    block_name = target.parent or target.name
    note = None
    if target.kind == "file":
        backing = _file_backing_disk(target)
        if backing is None:
            reason = f"{target.path} is a file on a filesystem without a backing block device"
            info.update({grp: build_group(grp, None, reason) for grp in GROUPS})
            info["identity"] = build_group("identity", {"device_class": "file", "path": target.path,
                                                         "capacity_bytes": target.size_bytes}, reason)
            info["collectors"], info["raw_files"] = {"all": not_available(reason)}, []
            return info, g.raw
        block_name = backing
        note = f"file target: device fields describe {backing}, the disk under {os.path.dirname(target.real_path)}"
        info["note"] = note
        try:
            target = tgt.block_target_from_sysfs(backing)
        except Exception:  # noqa: BLE001 - metadata must never fail a run
            pass
        cls_backing = device_class(target)
        info["backing_device_class"] = cls_backing
        cls = cls_backing
    disk_dev = f"/dev/{block_name}"

    ident: dict[str, Any] = {
        "device_class": "file" if note else cls, "path": target.path, "kernel_name": target.name,
        "vendor": target.vendor, "model": target.model, "serial": target.serial, "firmware": target.firmware,
        "capacity_bytes": target.size_bytes, "logical_block_size_bytes": target.logical_block_size_bytes,
        "physical_block_size_bytes": target.physical_block_size_bytes, "transport": target.transport,
        "rotational": target.rotational, "wwn": target.wwid,
    }
    devlink = os.path.join(tgt.sysfs_block_dir(block_name), "device", "driver")
    if os.path.islink(devlink):
        ident["driver"] = os.path.basename(os.path.realpath(devlink))
    if cls == "loop":
        ident["loop_backing_file"] = tgt.loop_backing_file(block_name)
        dio = tgt.read_sysfs(os.path.join(tgt.sysfs_block_dir(block_name), "loop", "dio"))
        ident["loop_direct_io"] = None if dio is None else dio == "1"
        ident["driver"] = ident.get("driver") or "loop"
    elif cls == "zram":
        ident["driver"] = ident.get("driver") or "zram"
    ident["interface"] = {"loop": "loop (file-backed block device)", "zram": "zram (compressed RAM block device)",
                          "virtio": "virtio-blk (virtual disk)", "dm": "device-mapper", "md": "md RAID",
                          "nbd": "network block device", "xen": "Xen virtual block device"}.get(cls)

    smart: dict[str, Any] = {}
    groups: dict[str, tuple[dict | None, str]] = {}
    mgmt_reason = {
        "loop": f"{block_name} is a loop device (a file seen as a disk): it has no SMART/NVMe/ATA/SCSI interface",
        "zram": f"{block_name} is a zram device (compressed RAM): it has no SMART/NVMe/ATA/SCSI interface",
        "virtio": f"{block_name} is a virtio disk: the hypervisor hides the physical drive and its SMART data",
    }.get(cls, f"{block_name} is a {cls} device: not an NVMe, ATA or SCSI drive")

    # --- NVMe / ATA / SCSI ---------------------------------------------------------------------
    if cls == "nvme":
        nv, why = _collect_nvme(target, g, ident, smart)
        groups["nvme"] = (nv, why)
        if not smart and shutil.which("smartctl"):
            sc = _collect_smartctl(f"/dev/{nvme_names(target)[0] or block_name}", g, cls)
            if sc:
                _merge(ident, sc["identity"])
                _merge(smart, sc["smart"])
        groups["ata"] = (None, f"{block_name} is an NVMe device (ATA fields do not apply)")
        groups["scsi"] = (None, f"{block_name} is an NVMe device (SCSI fields do not apply)")
    elif cls in ("ata", "scsi", "usb"):
        groups["nvme"] = (None, f"{block_name} is not an NVMe device")
        sc = _collect_smartctl(disk_dev, g, cls)
        if sc:
            # sysfs truncates ATA model strings to the 16-byte SCSI INQUIRY field: smartctl's are whole.
            ident.update({k: v for k, v in sc["identity"].items() if v is not None})
            smart.update({k: v for k, v in sc["smart"].items() if v is not None})
            if sc["ata"] and cls != "scsi":
                cls = "ata"
            elif sc["scsi"] and cls != "ata":
                cls = "scsi"
        ata = dict(sc["ata"]) if sc and sc["ata"] else {}
        scsi = dict(sc["scsi"]) if sc and sc["scsi"] else {}
        if cls == "ata":
            res = run_tool(["hdparm", "-I", disk_dev])
            g.note("hdparm -I", res)
            if res.ok:
                g.keep("hdparm-I.txt", res.stdout)
                hd = parse_hdparm_identify(res.stdout)
                # hdparm reads IDENTIFY directly: trust it over smartctl where both speak.
                ata.update({k: v for k, v in hd.items() if v is not None})
            groups["ata"] = (ata if ata else None, "not reported by smartctl or hdparm"
                             if ata else (g.collectors.get("smartctl") or "smartctl and hdparm gave nothing"))
            groups["scsi"] = (None, f"{block_name} is an ATA device (SCSI fields do not apply)")
        else:
            res = run_tool(["sdparm", "--get=WCE,RCD", disk_dev])
            g.note("sdparm", res)
            if res.ok:
                g.keep("sdparm.txt", res.stdout)
                scsi.update({k: v for k, v in parse_sdparm(res.stdout).items() if v is not None})
            res = run_tool(["sg_opcodes", disk_dev])
            g.note("sg_opcodes", res)
            if res.ok:
                g.keep("sg-opcodes.txt", res.stdout)
                scsi.update(parse_sg_opcodes(res.stdout))
            groups["scsi"] = (scsi if scsi else None, "not reported by smartctl, sdparm or sg_opcodes"
                              if scsi else (g.collectors.get("smartctl") or "no SCSI tool answered"))
            groups["ata"] = (None, f"{block_name} is a SCSI device (ATA fields do not apply)")
    else:
        for grp in ("nvme", "ata", "scsi"):
            groups[grp] = (None, mgmt_reason)
    if smart:
        groups["smart"] = (smart, f"not reported by {smart.get('smart_source', 'the SMART tool')}")
    else:
        why = mgmt_reason if cls not in ("nvme", "ata", "scsi", "usb") else (
            g.collectors.get("nvme smart-log") or g.collectors.get("smartctl") or "no SMART tool answered")
        groups["smart"] = (None, why)

    # --- queue ---------------------------------------------------------------------------------
    raw_q = read_queue(block_name)
    if raw_q:
        g.keep("sysfs-queue.json", json.dumps(raw_q, indent=1))
        groups["queue"] = (parse_queue(raw_q), f"not in /sys/class/block/{block_name}/queue on this kernel")
        g.note("sysfs queue", None)
    else:
        groups["queue"] = (None, f"no /sys/class/block/{block_name}/queue")
        g.note("sysfs queue", not_available(f"no /sys/class/block/{block_name}/queue"))

    # --- lsblk ---------------------------------------------------------------------------------
    res = run_tool(["lsblk", "-J", "-O", "-b", disk_dev], timeout=20)
    if not res.ok and shutil.which("lsblk"):  # util-linux < 2.27 has no -O: the essentials then
        res = run_tool(["lsblk", "-J", "-b", "-o", "NAME,KNAME,MAJ:MIN,TYPE,SIZE,TRAN,MODEL,SERIAL,REV,VENDOR,"
                        "ROTA,SCHED,RQ-SIZE,PHY-SEC,LOG-SEC,MIN-IO,OPT-IO,DISC-GRAN,DISC-MAX,DISC-ZERO,FSTYPE",
                        disk_dev], timeout=20)
    g.note("lsblk", res)
    lsb = None
    if res.ok:
        g.keep("lsblk.json", res.stdout)
        try:
            lsb = parse_lsblk(_json(res.stdout), block_name)
        except ValueError:
            lsb = None
    groups["lsblk"] = (lsb, "lsblk reports no value for this device" if lsb else (res.reason or "lsblk printed nothing"))
    if lsb:
        _merge(ident, {"transport": lsb.get("tran"), "vendor": lsb.get("vendor"), "model": lsb.get("model"),
                       "serial": lsb.get("serial"), "wwn": lsb.get("wwn")})

    # --- PCIe ----------------------------------------------------------------------------------
    raw_p = read_pcie(block_name)
    lspci_text = None
    if raw_p["hops"]:
        g.keep("sysfs-pcie.json", json.dumps(raw_p, indent=1))
        addr = raw_p["hops"][-1]["address"]
        res = run_tool(["lspci", "-D", "-vv", "-s", addr])
        g.note("lspci", res)
        if res.ok:
            lspci_text = res.stdout
            g.keep("lspci.txt", res.stdout)
    pc, why = parse_pcie(raw_p, lspci_text)
    groups["pcie"] = (pc, "not reported by sysfs or lspci" if pc else why or "no PCIe data")
    if pc is None:
        g.note("pcie", not_available(why or "no PCIe data"))

    info["device_class"] = "file" if note else cls
    ident["device_class"] = info["device_class"]
    ident = {k: (_str(v) if isinstance(v, str) else v) for k, v in ident.items()}
    groups["identity"] = (ident, "not reported for this device")
    for grp in GROUPS:
        values, reason = groups.get(grp, (None, "not collected"))
        info[grp] = build_group(grp, values, reason)
    info["collectors"] = g.collectors
    info["raw_files"] = sorted(g.raw)
    return info, g.raw


def collect(target: Target, raw_dir: Path | None) -> dict[str, Any]:
    """Collect, keep every raw output as a file in ``raw_dir`` (the run's device/ directory; None:
    keep nothing), return the parsed fields (manifest["device"]). Never raises for a collector."""
    try:
        info, raw = gather(target)
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


def purge_facts(target: Target) -> dict[str, Any]:
    """What purge selection needs (select_purge's probe when it is given no info): the full
    read-only gather() for devices with a device-level purge (nvme, ata, scsi, usb), and just the
    device class for the others (loop, zram, virtio, ...), which need no tool at all."""
    cls = device_class(target)
    if cls not in ("nvme", "ata", "scsi", "usb"):
        return {"device_class": cls}
    info, _ = gather(target)
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
