"""``ssdpts devices`` and ``ssdpts info --json`` against the drives' own tools, field by field, in the guest.

For every emulated drive the reference is what nvme-cli, smartctl, hdparm, sdparm, sg3-utils,
lspci and sysfs say about the same drive (tests/lab/truth.py). One test per (drive, field), so a
wrong field fails alone; fields ssdpts gets wrong today are strict xfails naming the lab defect
(docs/lab.md lists them).
"""

from __future__ import annotations

import pytest

from ssdpts.pts.units import fmt_capacity

from .conftest import TARGETS
from .truth import ssdpts_value, truth


NVME = ["identity.model", "identity.serial", "identity.firmware", "identity.capacity_bytes",
        "identity.logical_block_size_bytes", "identity.physical_block_size_bytes", "identity.rotational",
        "identity.interface", "nvme.namespace_id", "nvme.namespaces_on_controller", "nvme.lba_format_index",
        "nvme.lba_data_size_bytes", "nvme.lba_metadata_size_bytes", "nvme.namespace_size_bytes",
        "nvme.format_nvm_supported", "nvme.sanitize_crypto_erase_supported", "nvme.sanitize_block_erase_supported",
        "nvme.format_crypto_erase_supported", "nvme.format_applies_to_all_namespaces",
        "nvme.dsm_deallocate_supported", "nvme.volatile_write_cache_present", "nvme.volatile_write_cache_enabled",
        "nvme.active_firmware_slot", "pcie.current_link_speed_gts", "pcie.current_link_width",
        "pcie.max_link_speed_gts", "pcie.max_link_width"]
ATA = ["identity.model", "identity.serial", "identity.firmware", "identity.capacity_bytes",
       "identity.logical_block_size_bytes", "identity.physical_block_size_bytes", "identity.rotational",
       "identity.rotation_rate_rpm", "identity.transport", "ata.ata_version", "ata.trim_reads_zeros",
       "ata.sanitize_supported", "ata.write_cache_enabled", "smart.smart_passed", "smart.composite_temperature_c"]
SCSI = ["identity.model", "identity.serial", "identity.firmware", "identity.capacity_bytes",
        "identity.logical_block_size_bytes", "identity.physical_block_size_bytes", "identity.rotational",
        "identity.rotation_rate_rpm", "scsi.scsi_vendor", "scsi.scsi_product", "scsi.scsi_version",
        "scsi.lb_provisioning"]

# Fields ssdpts got wrong on these drives (docs/lab.md, "Defects the lab found"), each now a plain
# case: D7 fw-log slot revision, D10 NVMe driver, D3 ATA TRIM, D2 ATA security, D4 SCSI write
# cache, D11 SCSI protection type. A field ssdpts gets wrong today gets conftest.D(n, why) here.
DEFECTS: dict = {}

CASES = ([("nvme", f) for f in [*NVME, "identity.driver", "nvme.firmware_slot_revisions"]]
         + [("nvme4k", f) for f in NVME]
         + [("nvme4k-ns2", f) for f in ["identity.capacity_bytes", "identity.logical_block_size_bytes",
                                        "nvme.namespace_id", "nvme.namespaces_on_controller",
                                        "nvme.lba_format_index", "nvme.namespace_size_bytes"]]
         + [("sata", f) for f in [*ATA, "ata.trim_supported", "ata.security_supported"]]
         + [("scsi", f) for f in [*SCSI, "scsi.write_cache_enabled", "scsi.protection_type"]])


def _close(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= 0.5  # temperatures: the tools print whole degrees, ssdpts keeps K - 273.15
    return a == b


@pytest.mark.parametrize("key,field", [pytest.param(k, f, id=f"{k}-{f}", marks=DEFECTS.get(f, ()))
                                       for k, f in CASES])
def test_info_field_matches_the_drive_tools(lab, key, field):
    want = truth(lab, key)[field]
    got = ssdpts_value(lab.info(key), field)
    assert _close(got, want), f"{key} {field}: ssdpts says {got!r}, the drive's tools say {want!r}"


@pytest.mark.parametrize("key", ["nvme", "sata", "scsi"])  # scsi: D9, model without its vendor
def test_info_names_the_drive_as_the_run_will(lab, key):
    """One drive, one name: the target (run directory label, 'devices', the safety prompt) and the
    identity section of the same manifest must agree on model, serial and firmware."""
    info = lab.info(key)
    for f in ("model", "serial", "firmware"):
        ident = ssdpts_value(info, f"identity.{f}")
        assert info["target"][f] == ident, f"{key}: target.{f} {info['target'][f]!r} but identity.{f} {ident!r}"


def test_devices_lists_every_drive_with_its_serial_and_size(lab):
    res = lab.ssdpts("devices")
    assert res.rc == 0, res.stderr
    rows, head = {}, None
    for line in res.stdout.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│")[1:-1]]  # rich draws the header with ┃
        if cells and cells[0] == "device":
            head = cells
        elif cells and cells[0].startswith("/dev/"):
            rows[cells[0]] = dict(zip(head, cells))
    for key, t in TARGETS.items():
        dev = lab.dev[key]
        assert dev in rows, f"{key} ({dev}) missing from 'ssdpts devices':\n{res.stdout}"
        row = rows[dev]
        model, serial, size, verdict = row["model"], row["serial"], row["size"], row["verdict"]
        assert row["rests on"] == "—", row  # an emulated drive rests on no other device
        want = truth(lab, key)
        assert serial == t.serial
        assert size == fmt_capacity(want["identity.capacity_bytes"])
        assert verdict.startswith("usable"), verdict
        if t.kind in ("nvme", "ata"):
            assert model == want["identity.model"]
