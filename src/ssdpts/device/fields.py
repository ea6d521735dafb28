"""The catalogue of device fields: one place knows each field (docs/design.md#one-place-per-field).

:data:`FIELDS` lists every field the collectors record (group, name, type, unit, description).
Parsers return plain ``{name: value}`` dicts; :func:`build_group` wraps them with the catalogue's
unit, and docs/results-format.md is generated from the same table (:func:`fields_markdown`).
Every field is ``{"value": ..., "unit": "..."}`` or the string ``"not available: <reason>"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NA = "not available"


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
