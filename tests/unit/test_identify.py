"""Collector parsers on recorded tool output (tests/fixtures/tools, provenance in tests/fixtures/SOURCES.md),
the field catalogue, a whole collection on a fake NVMe device, host facts and write-cache parsing.

Nothing here runs a real tool against a real device: tools are replaced by their recorded output."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from ssdpts.device import block, fields, identify, writecache
from ssdpts.device.interfaces import ata
from ssdpts.device.host import host
from ssdpts.device.interfaces import nvme
from ssdpts.device.host import pcie
from ssdpts.device.interfaces import scsi
from ssdpts.device import target as tgt
from ssdpts.device.tools import FakeTools, Sysfs
from ssdpts.errors import UserError

TOOLS = Path(__file__).parents[1] / "fixtures" / "tools"
DOCS = Path(__file__).parents[2] / "docs" / "results-format.md"


def text(name: str) -> str:
    path = TOOLS / name
    if not path.is_file():
        pytest.fail(f"missing fixture {path}: see tests/fixtures/SOURCES.md")
    return path.read_text(encoding="utf-8")


def doc(name: str):
    return json.loads(text(name))


# --- nvme-cli -------------------------------------------------------------------------------------


def test_nvme_list_flat_layout_2_3() -> None:
    e = nvme.parse_nvme_list(doc("nvme-cli-2.3-list-seagate-firecuda530-x2.json"), "/dev/nvme1n1")
    assert e["serial"] == "XXX01YYY" and e["model"] == "Seagate FireCuda 530 ZP4000GM30023"
    assert e["physical_size_bytes"] == 4000787030016 and e["sector_size_bytes"] == 512
    assert nvme.parse_nvme_list(doc("nvme-cli-2.3-list-seagate-firecuda530-x2.json"), "nvme9n1") == {}


def test_nvme_list_nested_layout_2_11() -> None:
    e = nvme.parse_nvme_list(doc("nvme-cli-2.11-list-verbose-tree-seagate-firecuda530-x3.json"), "nvme2n1")
    assert (e["controller"], e["pci_address"], e["serial"]) == ("nvme2", "0000:61:00.0", "7VS00KNX")
    assert e["subsystem_nqn"].startswith("nqn.2014.08.org.nvmexpress:") and e["namespace_id"] == 1


def test_id_ctrl_samsung_980pro() -> None:
    c = nvme.parse_id_ctrl(doc("nvme-cli-2.x-id-ctrl-samsung-980pro-1tb-keysorted.json"))
    assert (c["model"], c["serial"], c["firmware"]) == ("Samsung SSD 980 PRO 1TB", "S5P2NG0R824326R", "3B2QGXA7")
    assert c["nvme_version"] == "1.3" and c["pci_vendor_id"] == "0x144d"
    assert c["total_capacity_bytes"] == 1000204886016
    # sanicap 0, oacs 0x17 (format supported), fna 4 (crypto erase in format, per namespace)
    assert c["sanicap"] == 0 and not c["sanitize_block_erase_supported"] and not c["sanitize_crypto_erase_supported"]
    assert c["format_nvm_supported"] and c["format_crypto_erase_supported"]
    assert not c["format_applies_to_all_namespaces"] and not c["secure_erase_applies_to_all_namespaces"]
    assert c["volatile_write_cache_present"] and c["apst_supported"]
    assert c["warning_temp_c"] == pytest.approx(81.85) and c["critical_temp_c"] == pytest.approx(84.85)
    assert c["max_power_ps0_w"] == pytest.approx(8.49) and c["power_states"] == 5 and c["firmware_slots"] == 3


def test_id_ctrl_derived_with_sanitize() -> None:
    c = nvme.parse_id_ctrl(doc("nvme-cli-2.x-id-ctrl-sanitize-DERIVED.json"))
    assert c["sanitize_crypto_erase_supported"] and c["sanitize_block_erase_supported"]
    assert not c["sanitize_overwrite_supported"] and c["volatile_write_cache_present"] is False


def test_id_ns_lba_format_in_use() -> None:
    n = nvme.parse_id_ns(doc("nvme-cli-2.3-id-ns-CONSTRUCTED.json"))
    assert n["lba_format_index"] == 1 and n["lba_data_size_bytes"] == 4096 and n["lba_metadata_size_bytes"] == 0
    assert n["namespace_size_bytes"] == 244190646 * 4096
    assert [f["data_size_bytes"] for f in n["lba_formats"]] == [512, 4096]
    assert [f["in_use"] for f in n["lba_formats"]] == [False, True]
    assert n["deallocated_read_value"] == "all bytes 00h"
    assert n["nguid"] is None and n["eui64"] == "002538b821b0a3c4"  # all-zero NGUID = not reported


def test_id_ns_flbas_upper_bits() -> None:
    lbafs = [{"ms": 0, "ds": 9, "rp": 0}] * 17 + [{"ms": 8, "ds": 12, "rp": 0}]
    n = nvme.parse_id_ns({"nsze": 10, "flbas": (17 & 0xF) | ((17 >> 4) << 5), "lbafs": lbafs})
    assert n["lba_format_index"] == 17 and n["lba_data_size_bytes"] == 4096 and n["lba_metadata_size_bytes"] == 8


@pytest.mark.parametrize("name, cw, temp_c, sensors", [
    ("nvme-cli-2.3-smart-log.json", 0, 36.85, None),  # critical_warning is an int
    ("nvme-cli-2.11-smart-log-seagate-firecuda530.json", 0, 50.85, None),  # ... an object from 2.11
    ("nvme-cli-2.16-smart-log-samsung-pm981a.json", 0, 48.85, [48.85, 70.85]),
])
def test_smart_log_versions(name: str, cw: int, temp_c: float, sensors) -> None:
    s = nvme.parse_nvme_smart_log(doc(name))
    assert s["critical_warning"] == cw and s["composite_temperature_c"] == pytest.approx(temp_c)
    assert s["temperature_sensors_c"] == sensors
    assert s["data_written_bytes"] == s["data_units_written"] * 512_000
    assert isinstance(s["host_write_commands"], int) and s["media_errors"] == 0


def test_smart_log_2_11_throttle_counters() -> None:
    s = nvme.parse_nvme_smart_log(doc("nvme-cli-2.11-smart-log-seagate-firecuda530.json"))
    assert s["thermal_mgmt_t1_transitions"] == 3 and s["thermal_mgmt_t1_time_s"] == 1474
    assert s["percentage_used_pct"] == 30


def test_critical_warning_object_bits() -> None:
    assert nvme.critical_warning_int({"value": 2}) == 2
    assert nvme.critical_warning_int({"available_spare": 0, "temp_threshold": 1}) == 2
    assert nvme.critical_warning_int(4) == 4


def test_get_feature_text_all_fids() -> None:
    raw = nvme.parse_get_feature(text("nvme-cli-2.3-get-feature-fids-01-0a-CONSTRUCTED.txt"))
    assert sorted(raw) == list(nvme.FEATURE_IDS)
    decoded = dict(nvme.decode_feature(f, v) for f, v in raw.items())
    assert decoded["volatile_write_cache_enabled"] is True
    assert decoded["feature_temperature_threshold_c"] == pytest.approx(350 - 273.15 + 1)  # 0x15f = 351 K
    assert decoded["feature_number_of_queues"]["io_submission_queues"] == 64
    assert decoded["feature_arbitration"]["arbitration_burst"] == 8
    assert decoded["feature_power_management"]["power_state"] == 0  # printed "00000000" (no 0x for zero)
    assert decoded["feature_interrupt_vector_config"]["coalescing_disable"] is True


def test_get_feature_json_form() -> None:
    assert nvme.parse_get_feature(text("nvme-cli-2.x-get-feature-json-vwc-CONSTRUCTED.json")) == {6: 1}


def test_fw_log() -> None:
    f = nvme.parse_fw_log(doc("nvme-cli-2.3-fw-log-CONSTRUCTED.json"))
    assert f == {"active_firmware_slot": 1, "firmware_slot_revisions": {"1": "3B2QGXA7"}}


def test_sanitize_log_progress_and_completion() -> None:
    p = nvme.parse_sanitize_log(doc("nvme-cli-2.3-sanitize-log-in-progress-CONSTRUCTED.json"))
    assert (p["status_code"], p["sanitize_status"], p["sanitize_progress_pct"]) == (2, "in progress", 25.0)
    assert p["estimate_block_erase_s"] == 120 and p["estimate_overwrite_s"] is None  # 0xffffffff: no estimate
    d = nvme.parse_sanitize_log(doc("nvme-cli-2.3-sanitize-log-completed-CONSTRUCTED.json"))
    assert (d["status_code"], d["sanitize_progress_pct"], d["global_erased"]) == (1, 100.0, True)
    # one nvme-cli release used the status text as the key: the "(N)" is still found
    odd = {"nvme0": {"sprog": 0, "sstat": {"global_erased": 0, "Sanitize in Progress.": "(2) Sanitize in Progress."}}}
    assert nvme.parse_sanitize_log(odd)["status_code"] == 2


# --- smartctl / hdparm / sdparm / sg_opcodes -------------------------------------------------------


def test_smartctl_sata_ssd() -> None:
    r = ata.parse_smartctl(doc("smartctl-7.0-sata-ssd-samsung-860evo-500gb-x.json"))
    assert r["identity"]["model"] == "Samsung SSD 860 EVO 500GB" and r["identity"]["rotation_rate_rpm"] == 0
    assert r["identity"]["interface"] == "SATA 3.1 (6.0 Gb/s)"
    a = r["ata"]
    # ata_security.state 33 = 0x21: supported (bit 0) + enhanced erase supported (bit 5), not frozen
    assert a["security_supported"] and a["enhanced_erase_supported"] and a["security_frozen"] is False
    assert a["write_cache_enabled"] is True and a["read_lookahead_enabled"] is True
    s = r["smart"]
    assert s["composite_temperature_c"] == 36 and s["smart_passed"] is True and s["power_on_hours"] == 14551
    assert s["percentage_used_pct"] == 19  # device statistics: Percentage Used Endurance Indicator
    assert s["data_written_bytes"] % 512 == 0 and s["host_write_commands"] > 0
    assert {a["id"] for a in s["ata_attributes"]} >= {5, 9, 12, 177, 241}


def test_smartctl_sata_hdd() -> None:
    r = ata.parse_smartctl(doc("smartctl-7.3-sata-hdd-wdc-wd181kryz-18tb-a.json"))
    assert r["identity"]["rotation_rate_rpm"] == 7200 and r["identity"]["physical_block_size_bytes"] == 4096
    assert r["ata"]["trim_supported"] is False and r["smart"]["composite_temperature_c"] == 49


@pytest.mark.parametrize("name, media_errors, temp", [
    ("smartctl-7.0-nvme-samsung-970evo-500gb-x-media-errors.json", 7, 35),
    ("smartctl-7.4-nvme-sabrent-rocket4-1tb-a.json", 0, 48),
])
def test_smartctl_nvme(name: str, media_errors: int, temp: int) -> None:
    r = ata.parse_smartctl(doc(name))
    assert r["smart"]["media_errors"] == media_errors and r["smart"]["composite_temperature_c"] == temp
    assert r["smart"]["data_units_written"] > 0 and r["ata"] == {} and r["scsi"] == {}


def test_smartctl_sas() -> None:
    r = ata.parse_smartctl(doc("smartctl-7.4-sas-hdd-seagate-14tb-a.json"))
    sc = r["scsi"]
    assert sc["transport_protocol"] == "SAS (SPL-4)" and sc["protection_type"] == 2 and sc["scsi_version"] == "SPC-5"
    assert sc["grown_defects"] == 0 and r["identity"]["interface"] == "SAS (SPL-4)"
    assert r["smart"]["media_errors"] == 0 and r["smart"]["composite_temperature_c"] == 24
    assert r["smart"]["data_read_bytes"] == int(316009.846e9)


def test_hdparm_identify_frozen() -> None:
    h = ata.parse_hdparm_identify(text("hdparm-I-sata-ssd-frozen-CONSTRUCTED.txt"))
    assert h["security_supported"] and h["security_frozen"] and not h["security_enabled"]
    assert h["enhanced_erase_supported"] and h["enhanced_erase_time_min"] == 2
    assert not h["sanitize_supported"] and h["trim_supported"] and h["trim_reads_zeros"]
    assert h["write_cache_enabled"] is True


def test_hdparm_identify_sanitize() -> None:
    h = ata.parse_hdparm_identify(text("hdparm-I-sata-ssd-sanitize-CONSTRUCTED.txt"))
    assert h["sanitize_supported"] and h["sanitize_block_erase_supported"] and h["sanitize_crypto_scramble_supported"]
    assert h["security_frozen"] is False and h["security_erase_time_min"] == 4 and h["enhanced_erase_time_min"] == 8


def test_sdparm_and_sg_opcodes() -> None:
    assert scsi.parse_sdparm(text("sdparm-get-WCE-RCD-sas-CONSTRUCTED.txt")) == {
        "write_cache_enabled": False, "read_cache_disabled": False}
    ops = scsi.parse_sg_opcodes(text("sg_opcodes-sas-hdd-sanitize-CONSTRUCTED.txt"))
    assert ops == {"sanitize_overwrite_supported": True, "sanitize_block_erase_supported": True,
                   "sanitize_crypto_erase_supported": True, "format_unit_supported": True}
    assert scsi.parse_sg_opcodes("Report supported operation codes: Illegal request") == {}


# --- sysfs, lsblk, PCIe ---------------------------------------------------------------------------


def test_lspci_link_and_aspm() -> None:
    p = pcie.parse_lspci(text("lspci-vv-nvme-gen4-downgraded-CONSTRUCTED.txt"))
    assert (p["max_link_speed_gts"], p["max_link_width"]) == (16.0, 4)
    assert (p["current_link_speed_gts"], p["current_link_width"]) == (8.0, 4)
    assert p["aspm"] == "Disabled" and "980PRO" in p["device_name"]
    v = pcie.parse_lspci(text("lspci-3.9.0-vv-virtio-blk-local.txt"))
    assert v == {"device_name": "Red Hat, Inc. Virtio 1.0 block device (rev 01)"}


def test_parse_pcie_from_sysfs_and_lspci() -> None:
    raw = {"hops": [
        {"address": "0000:00:01.1", "current_link_speed": "16.0 GT/s PCIe", "current_link_width": "4",
         "max_link_speed": "16.0 GT/s PCIe", "max_link_width": "4"},
        {"address": "0000:01:00.0", "current_link_speed": "8.0 GT/s PCIe", "current_link_width": "4",
         "max_link_speed": "16.0 GT/s PCIe", "max_link_width": "4", "numa_node": "0", "driver": "nvme"}]}
    p, why = pcie.parse_pcie(raw, text("lspci-vv-nvme-gen4-downgraded-CONSTRUCTED.txt"))
    assert why is None and p["pcie_generation"] == "Gen3" and p["link_downgraded"] is True
    assert p["topology_path"] == ["0000:00:01.1", "0000:01:00.0"] and p["driver"] == "nvme"
    none, why = pcie.parse_pcie({"hops": []})
    assert none is None and "not on a PCI bus" in why


def test_lsblk_loop_and_virtio() -> None:
    lp = block.parse_lsblk(doc("lsblk-2.38.1-JOb-loop-local.json"), "loop7")
    assert lp["type"] == "loop" and lp["size_bytes"] == 64 << 20 and lp["disc_max_bytes"] > 0
    assert lp["rota"] is True and lp["sched"] == "none" and lp["tran"] is None
    vd = block.parse_lsblk(doc("lsblk-2.38.1-JOb-virtio-vda-local.json"), "vda")
    assert vd["name"] == "vda" and vd["subsystems"] == "block:virtio:pci" and vd["log_sec_bytes"] == 512


def test_parse_queue() -> None:
    q = block.parse_queue({"scheduler": "none [mq-deadline] kyber", "nr_requests": "256", "rotational": "0",
                              "write_cache": "write back", "discard_max_bytes": "0", "mq_hw_queues": "8"})
    assert q["scheduler"] == "mq-deadline" and q["schedulers_available"] == ["none", "mq-deadline", "kyber"]
    assert q["rotational"] is False and q["nr_requests"] == 256 and q["nr_hw_queues"] == 8
    assert q["write_cache"] == "write back" and q["discard_max_bytes"] == 0


# --- the catalogue --------------------------------------------------------------------------------


def test_catalogue_is_unique_and_complete() -> None:
    keys = [(f.group, f.name) for f in fields.FIELDS]
    assert len(keys) == len(set(keys))
    for f in fields.FIELDS:
        assert f.type in ("int", "float", "str", "bool", "list", "dict") and f.description
        if f.name.endswith("_bytes"):
            assert f.unit == "bytes", f
        if f.name.endswith("_c"):
            assert f.unit == "°C", f


def test_build_group_lists_every_field() -> None:
    g = fields.build_group("queue", {"nr_requests": 64, "scheduler": "none"}, "not in sysfs")
    assert set(g) == {f.name for f in fields.group_fields("queue")}
    assert g["nr_requests"] == {"value": 64, "unit": "requests"}
    assert g["fua"] == "not available: not in sysfs"
    whole = fields.build_group("nvme", None, "loop0 is a loop device")
    assert all(v == "not available: loop0 is a loop device" for v in whole.values())


def test_docs_document_every_field() -> None:
    if not DOCS.is_file():
        pytest.fail("docs/results-format.md is missing")
    doc_text = DOCS.read_text(encoding="utf-8")
    for heading in ("## manifest.device", "## manifest.host", "## manifest.audit", "## steps.jsonl telemetry"):
        assert heading in doc_text, heading
    for f in (*fields.FIELDS, *host.HOST_FIELDS):
        row = re.search(rf"^\| `{re.escape(f.name)}` \| {f.type} \| {re.escape(f.unit or '—')} \|", doc_text, re.M)
        assert row, f"docs/results-format.md lacks {f.group}.{f.name} ({f.unit})"


# --- a whole collection on a fake NVMe namespace -------------------------------------------------


def _fake_nvme_sysfs(root: Path) -> Path:
    pci = root / "devices" / "pci0000:00" / "0000:00:01.1" / "0000:01:00.0"
    ctrl = pci / "nvme" / "nvme0"
    ns = ctrl / "nvme0n1"
    (ns / "queue").mkdir(parents=True)
    for name, value in (("size", "1953525168"), ("ro", "0"), ("removable", "0"), ("dev", "259:0"), ("nsid", "1"),
                        ("stat", "1 0 8 0 2 0 16 0 0 1 1 0 0 0 0 0 0")):
        (ns / name).write_text(value + "\n")
    for attr, value in (("scheduler", "[none] mq-deadline"), ("logical_block_size", "512"),
                        ("physical_block_size", "512"), ("rotational", "0"), ("write_cache", "write back"),
                        ("nr_requests", "1023"), ("discard_max_bytes", "2199023255040")):
        (ns / "queue" / attr).write_text(value + "\n")
    (ns / "device").symlink_to(ctrl)
    for name, value in (("model", "Samsung SSD 980 PRO 1TB"), ("serial", "S5P2NG0R824326R"),
                        ("firmware_rev", "3B2QGXA7")):
        (ctrl / name).write_text(value + "\n")
    for d, speed in ((pci.parent, "16.0 GT/s PCIe"), (pci, "8.0 GT/s PCIe")):
        (d / "current_link_speed").write_text(speed + "\n")
        (d / "current_link_width").write_text("4\n")
        (d / "max_link_speed").write_text("16.0 GT/s PCIe\n")
        (d / "max_link_width").write_text("4\n")
    (root / "class" / "block").mkdir(parents=True)
    (root / "class" / "nvme").mkdir(parents=True)
    (root / "class" / "block" / "nvme0n1").symlink_to(ns)
    (root / "class" / "nvme" / "nvme0").symlink_to(ctrl)
    (root / "dev" / "block").mkdir(parents=True)
    (root / "dev" / "block" / "259:0").symlink_to(ns)
    return ns


def _fake_tools(missing: set[str] = frozenset()) -> FakeTools:
    features = text("nvme-cli-2.3-get-feature-fids-01-0a-CONSTRUCTED.txt").splitlines(keepends=True)
    by_fid = {int(re.search(r"get-feature:(0x[0-9a-f]+)", ln).group(1), 16): ln for ln in features}
    return FakeTools({
        ("nvme", "version"): "nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n",
        ("nvme", "list"): text("nvme-cli-2.3-list-seagate-firecuda530-x2.json"),
        ("nvme", "id-ctrl"): text("nvme-cli-2.x-id-ctrl-samsung-980pro-1tb-keysorted.json"),
        ("nvme", "id-ns"): text("nvme-cli-2.3-id-ns-CONSTRUCTED.json"),
        ("nvme", "smart-log"): text("nvme-cli-2.16-smart-log-samsung-pm981a.json"),
        ("nvme", "fw-log"): text("nvme-cli-2.3-fw-log-CONSTRUCTED.json"),
        ("nvme", "get-feature"): lambda argv: by_fid[int(argv[argv.index("-f") + 1], 16)],
        ("lspci", "-D"): text("lspci-vv-nvme-gen4-downgraded-CONSTRUCTED.txt"),
    }, missing=missing)


@pytest.fixture
def fake_nvme(tmp_path: Path):
    """A fake NVMe namespace: a sysfs tree in tmp_path and nvme-cli/lspci answering from recordings."""
    root = tmp_path / "sys"
    _fake_nvme_sysfs(root)
    sysfs = Sysfs(str(root))

    def install(missing: set[str] = frozenset()):
        fake = _fake_tools(missing)
        return tgt.block_target_from_sysfs("nvme0n1", sysfs=sysfs, tools=fake), fake, sysfs

    return install


def test_collect_fake_nvme(fake_nvme, tmp_path: Path) -> None:
    target, fake, sysfs = fake_nvme({"smartctl"})
    info = identify.collect(target, tmp_path / "device", tools=fake, sysfs=sysfs)
    calls = fake.calls
    assert info["device_class"] == "nvme"
    nv, smart, ident = info["nvme"], info["smart"], info["identity"]
    assert nv["controller"] == {"value": "nvme0", "unit": ""} and nv["namespaces_on_controller"]["value"] == 1
    assert nv["lba_data_size_bytes"] == {"value": 4096, "unit": "bytes"}
    assert nv["volatile_write_cache_enabled"]["value"] is True
    assert nv["feature_temperature_threshold_c"]["unit"] == "°C"
    assert nv["sanitize_status"].startswith("not available: the controller does not support sanitize")
    assert smart["temperature_sensors_c"] == {"value": [48.85, 70.85], "unit": "°C"}
    assert ident["model"]["value"] == "Samsung SSD 980 PRO 1TB" and ident["interface"]["value"] == "NVMe 1.3"
    assert info["pcie"]["link_downgraded"]["value"] is True and info["pcie"]["aspm"]["value"] == "Disabled"
    assert info["queue"]["scheduler"]["value"] == "none"
    assert info["ata"]["security_frozen"].startswith("not available: nvme0n1 is an NVMe device")
    for name in ("nvme-id-ctrl.json", "nvme-id-ns.json", "nvme-smart-log.json", "nvme-fw-log.json",
                 "nvme-get-feature.txt", "sysfs-queue.json", "lspci.txt", "nvme-list.json"):
        assert (tmp_path / "device" / name).is_file(), name
    assert info["raw_files"] == sorted(os.listdir(tmp_path / "device"))
    # only read commands were issued
    assert {c[1] for c in calls if c[0] == "nvme"} <= {"version", "list", "id-ctrl", "id-ns", "get-feature",
                                                         "smart-log", "fw-log", "sanitize-log"}
    json.dumps(info)


def test_collect_fake_nvme_without_nvme_cli(fake_nvme) -> None:
    target, fake, sysfs = fake_nvme({"nvme", "smartctl"})
    info = identify.collect(target, None, tools=fake, sysfs=sysfs)
    assert info["nvme"]["sanicap"] == "not available: nvme is not installed (install nvme-cli)"
    assert info["smart"]["composite_temperature_c"].startswith("not available")
    assert info["identity"]["model"]["value"] == "Samsung SSD 980 PRO 1TB"  # sysfs still knows
    assert info["tools"]["nvme"] is False


def test_collect_never_raises(tmp_path: Path) -> None:
    class Broken(FakeTools):
        def which(self, tool):
            raise RuntimeError("unexpected")

    t = tgt.Target(path="/dev/x", real_path="/dev/x", kind="block", name="x", size_bytes=1, logical_block_size_bytes=512,
                   physical_block_size_bytes=512, model=None, serial=None, vendor=None, firmware=None, transport=None,
                   rotational=None, removable=None, read_only=False, is_partition=False, parent=None, exists=True)
    info = identify.collect(t, tmp_path, tools=Broken(), sysfs=Sysfs(str(tmp_path)))
    assert info["identity"]["model"].startswith("not available: device metadata collection failed")


# --- --describe -----------------------------------------------------------------------------------


def test_load_description(tmp_path: Path) -> None:
    toml = tmp_path / "d.toml"
    toml.write_text('nand_type = "TLC"\nchannels = 8\ndram_bytes = 1073741824\nnotes = "sample from lot 7"\n')
    assert identify.load_description(toml) == {"nand_type": "TLC", "channels": 8, "dram_bytes": 1073741824,
                                               "notes": "sample from lot 7"}
    js = tmp_path / "d.json"
    js.write_text('{"nand_type": "QLC"}')
    assert identify.load_description(js)["nand_type"] == "QLC"
    bad = tmp_path / "bad.toml"
    bad.write_text("nand_type = \n")
    with pytest.raises(UserError, match="neither valid TOML nor JSON"):
        identify.load_description(bad)
    with pytest.raises(UserError, match="cannot read"):
        identify.load_description(tmp_path / "missing.toml")


# --- host -----------------------------------------------------------------------------------------


def test_lshw_both_top_level_shapes() -> None:
    a = host.parse_lshw(doc("lshw-asrockrack-e3c246d4i-array-format.json"))
    assert a["board"] == "E3C246D4I-NL" and a["board_vendor"] == "ASRockRack"
    assert len(a["memory_dimms"]) == 2 and a["memory_installed_bytes"] == 32 << 30
    assert a["memory_summary"] == "2 x 16 GiB DDR4 2666 MT/s"
    o = host.parse_lshw(doc("lshw-dell-r6515-micron9300-nvme-object-format.json"))
    assert o["system_product"].startswith("PowerEdge R6515") and o["cpu_model"] == "AMD EPYC 7502P 32-Core Processor"
    assert len(o["memory_dimms"]) == 8 and o["memory_summary"] == "8 x 32 GiB DDR4 3200 MT/s"
    assert o["memory_dimms"][0]["part"] == "HMA84GR7DJR4N-XN" and o["memory_dimms"][0]["speed_mts"] == 3200


def test_dmidecode_memory() -> None:
    d = host.parse_dmidecode_memory(text("dmidecode-3.4-t17-CONSTRUCTED.txt"))
    assert [x["slot"] for x in d["memory_dimms"]] == ["A1", "B1"]  # the empty A2 is skipped
    assert d["memory_dimms"][1]["speed_mts"] == 2933  # configured speed, not the rated one
    assert d["memory_installed_bytes"] == 64 << 30


def test_cpuinfo_and_swaps() -> None:
    cpuinfo = "".join(
        f"processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
        f"physical id\t: {i // 4}\ncore id\t\t: {(i // 2) % 2}\nflags\t\t: fpu vme ht\n\n" for i in range(8))
    c = host.parse_cpuinfo(cpuinfo)
    assert (c["cpu_threads"], c["cpu_sockets"], c["cpu_cores"]) == (8, 2, 4)
    assert c["cpu_model"].startswith("Intel(R) Xeon(R) Gold 6338") and c["hypervisor_flag"] is False
    swaps = host.parse_swaps("Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 1048572 512 100\n")
    assert swaps == [{"name": "/dev/zram0", "type": "partition", "size_bytes": 1048572 * 1024,
                      "used_bytes": 512 * 1024, "priority": 100}]


def test_host_collect_here_is_complete() -> None:
    h = host.collect(fio_version="fio-3.33", use_lshw=False)
    assert set(h) == {f.name for f in host.HOST_FIELDS}
    assert h["fio_version"] == "fio-3.33" and isinstance(h["memory_bytes"], int)
    for k, v in h.items():
        assert v is None or not isinstance(v, str) or v.strip(), k
    json.dumps(h)


# --- write cache parsing and decisions ------------------------------------------------------------


def test_writecache_parsers() -> None:
    assert writecache.parse_hdparm_w(text("hdparm-W-on-CONSTRUCTED.txt")) == "enabled"
    assert writecache.parse_hdparm_w(text("hdparm-W-off-CONSTRUCTED.txt")) == "disabled"
    assert writecache.parse_sdparm_wce(text("sdparm-get-WCE-RCD-sas-CONSTRUCTED.txt")) == "disabled"
    assert writecache.parse_nvme_vwc("get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n") == "enabled"
    assert writecache.parse_nvme_vwc("get-feature:0x06 (Volatile Write Cache), Current value:00000000\n") == "disabled"
    assert writecache.parse_hdparm_w("garbage") is None


def test_writecache_plans() -> None:
    p = writecache.plan("nvme", "/dev/nvme0n1", ctrl_dev="/dev/nvme0", vwc_present=True)
    assert p.set_argv["disabled"] == ("nvme", "set-feature", "/dev/nvme0", "--feature-id=6", "--value=0")
    assert "--save" not in " ".join(p.set_argv["enabled"])  # current power cycle only
    assert writecache.plan("nvme", "/dev/nvme0n1", vwc_present=False).startswith("not applicable: the controller has no")
    a = writecache.plan("ata", "/dev/sda")
    assert a.set_argv == {"enabled": ("hdparm", "-W1", "/dev/sda"), "disabled": ("hdparm", "-W0", "/dev/sda")}
    s = writecache.plan("scsi", "/dev/sdb")
    assert s.set_argv["disabled"] == ("sdparm", "--clear=WCE", "/dev/sdb") and s.get_argv == ("sdparm", "--get=WCE", "/dev/sdb")
    loop = writecache.plan("loop", "/dev/loop3", kernel_write_cache="write back")
    assert loop.startswith("not applicable: loop3 is a loop device") and "write back" in loop


def test_writecache_restore_only_what_changed() -> None:
    def hdparm(argv):
        return " write-caching =  0 (off)\n" if argv[1] in ("-W", "-W0") else " write-caching =  1 (on)\n"

    fake = FakeTools({("hdparm",): hdparm}, destructive=True)
    calls = fake.calls
    rec = writecache.WriteCacheRecord("enabled", "disabled", "disabled", "hdparm -W", None, "/dev/sda", True)
    back = writecache.restore(rec, tools=fake)
    assert ("hdparm", "-W1", "/dev/sda") in calls and back.requested == "enabled"
    calls.clear()
    same = writecache.WriteCacheRecord("disabled", "disabled", "disabled", "hdparm -W", "already", "/dev/sda", False)
    assert writecache.restore(same, tools=fake) is same and calls == []


# --- lab defects (docs/lab.md): what QEMU's drives showed the parsers and decisions getting wrong ----


def test_fw_log_slot_revision_is_the_slots_bytes() -> None:
    """D7: nvme-cli shows a slot as '<u64> (<display form>)', non-printing bytes as dots."""
    fw = nvme.parse_fw_log(json.loads(text("nvme-cli-2.3-fw-log-qemu-7.2-lab.json")))
    assert fw == {"active_firmware_slot": 1, "firmware_slot_revisions": {"1": "1.0"}}


def test_sdparm_exit_5_with_the_current_value_is_read() -> None:
    """D4: QEMU's scsi-hd has no saved values page; sdparm prints WCE 1 and exits 5."""
    from ssdpts.device.tools import ToolResult

    out = text("sdparm-1.12-get-WCE-RCD-qemu-7.2-scsi-hd-exit5-lab.txt")
    fake = FakeTools({("sdparm",): ToolResult(("sdparm",), 5, out, "", None)})
    p = writecache.plan("scsi", "/dev/sdb")
    assert writecache.read_state(p, fake) == "enabled"
    g = identify.Gather(fake, Sysfs("/nonexistent"))
    group, _ = scsi.collect("/dev/sdb", g, {})
    assert group["write_cache_enabled"] is True and group["read_cache_disabled"] is False


def test_write_cache_whose_state_cannot_be_read_is_not_changed(monkeypatch) -> None:
    """D4: changing a setting whose prior state is unknown means never restoring it."""
    from ssdpts.device.tools import ToolResult

    fake = FakeTools({("sdparm", "--get=WCE"): ToolResult(("sdparm",), 1, "", "sdparm: cannot read", None)},
                     destructive=True)
    monkeypatch.setattr(writecache, "_plan_for", lambda target, info, sysfs: writecache.plan("scsi", "/dev/sdb"))
    monkeypatch.setattr(writecache, "_kernel_state", lambda target, sysfs=None: None)
    t = tgt.Target(path="/dev/sdb", real_path="/dev/sdb", kind="block", name="sdb", size_bytes=1 << 30,
                   logical_block_size_bytes=512, physical_block_size_bytes=512, model="M", serial="S", vendor=None,
                   firmware=None, transport=None, rotational=False, removable=False, read_only=False,
                   is_partition=False, parent=None, exists=True)
    rec = writecache.apply(t, "disabled", tools=fake)
    assert not rec.changed and rec.before.startswith("unknown") and rec.in_force == rec.before
    assert "not changed" in rec.note
    assert not any(c[:2] == ("sdparm", "--clear=WCE") for c in fake.calls), fake.calls


def test_hdparm_without_security_section_means_no_security_feature_set() -> None:
    """D2/D3: QEMU's ide-hd: hdparm -I has no Security section and no TRIM line, smartctl says
    'ATA Security is: Unavailable' and 'TRIM Command: Available'."""
    dump = "\n/dev/sda:\n\nATA device, with non-removable media\n\tModel Number:       QEMU HARDDISK\n" \
           "Commands/features:\n\tEnabled\tSupported:\n\t   *\tSMART feature set\n\t   *\tWrite cache\n"
    hd = ata.parse_hdparm_identify(dump)
    assert hd["security_supported"] is False and hd["enhanced_erase_supported"] is False
    assert "trim_supported" not in hd  # absent line: smartctl's word decides
    frozen = ata.parse_hdparm_identify(text("hdparm-I-sata-ssd-frozen-CONSTRUCTED.txt"))
    assert frozen["security_supported"] is True
