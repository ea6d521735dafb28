"""Capability-aware purge selection (device/purge/registry.py choose_purge) on recorded identify data.

The six cases of issue 3: NVMe with sanitize, NVMe with format only, ATA frozen, ATA enhanced,
SAS, loop device — plus the refusals around them. ``info`` is built the way identify.collect
builds it: the recorded tool outputs (tests/fixtures/tools) through the same parsers, wrapped with
build_group. Nothing is run against a device: choose_purge only reads ``info``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdpts.device.interfaces import ata
from ssdpts.device.interfaces import nvme
from ssdpts.device.purge import registry as purge
from ssdpts.device.interfaces import scsi
from ssdpts.device.interfaces.ata import parse_hdparm_identify, parse_smartctl
from ssdpts.device.fields import build_group
from ssdpts.device.target import Target
from ssdpts.device.tools import FakeTools
from ssdpts.errors import RunFailed, UserError

TOOLS = Path(__file__).parents[1] / "fixtures" / "tools"


def fixture(name: str) -> str:
    return (TOOLS / name).read_text(encoding="utf-8")


def target(name: str, **kw) -> Target:
    fields = dict(path=f"/dev/{name}", real_path=f"/dev/{name}", kind="block", name=name, size_bytes=1 << 30,
                  logical_block_size_bytes=512, physical_block_size_bytes=4096, model="M", serial="S", vendor=None,
                  firmware=None, transport=None, rotational=False, removable=False, read_only=False,
                  is_partition=False, parent=None, exists=True)
    fields.update(kw)
    return Target(**fields)  # type: ignore[arg-type]


def info_of(cls: str, *, discard_max: int = 1 << 30, **groups: dict) -> dict:
    info = {"device_class": cls, "queue": build_group("queue", {"discard_max_bytes": discard_max}, "-")}
    for g, values in groups.items():
        info[g] = build_group(g, values, "not reported")
    return info


def nvme_info(id_ctrl: str, *, namespaces: int = 1) -> dict:
    nv = nvme.parse_id_ctrl(json.loads(fixture(id_ctrl)))
    nv.update(nvme.parse_id_ns(json.loads(fixture("nvme-cli-2.3-id-ns-CONSTRUCTED.json"))))
    nv.update(controller="nvme0", namespace_id=1, namespaces_on_controller=namespaces)
    return info_of("nvme", nvme=nv)


def ata_info(hdparm: str | None) -> dict:
    parsed = parse_smartctl(json.loads(fixture("smartctl-7.0-sata-ssd-samsung-860evo-500gb-x.json")))
    ata = dict(parsed["ata"])
    if hdparm:
        ata.update({k: v for k, v in parse_hdparm_identify(fixture(hdparm)).items() if v is not None})
    return info_of("ata", ata=ata)


# --- the six cases -------------------------------------------------------------------------------


def test_nvme_with_sanitize_prefers_block_erase() -> None:
    m = purge.choose_purge(nvme_info("nvme-cli-2.x-id-ctrl-sanitize-DERIVED.json"), target("nvme0n1"))
    assert isinstance(m, nvme.SanitizePurge) and m.name == "nvme-sanitize-block"
    assert m.disclosure == "NVMe Sanitize, block erase (PTS purge)" and m.notes == ()


def test_nvme_with_format_only_keeps_lba_format() -> None:
    m = purge.choose_purge(nvme_info("nvme-cli-2.x-id-ctrl-samsung-980pro-1tb-keysorted.json"), target("nvme0n1"))
    assert isinstance(m, nvme.FormatPurge) and m.name == "nvme-format"
    assert m.ses == 1 and m.lbaf == 1  # the LBA format in use (4096 B), kept
    assert "Format NVM, secure erase (user data erase, SES=1)" in m.disclosure
    assert any("does not support sanitize" in n for n in m.notes)


def test_ata_frozen_falls_back_and_says_how_to_unfreeze() -> None:
    m = purge.choose_purge(ata_info("hdparm-I-sata-ssd-frozen-CONSTRUCTED.txt"), target("sda", transport="sata"))
    assert isinstance(m, purge.DiscardPurge) and m.disclosure == "discard (fallback, not a PTS purge)"
    note = " ".join(m.notes)
    assert "frozen" in note and "suspend" in note and "replugging" in note and "hdparm -I" in note


def test_ata_enhanced_security_erase() -> None:
    m = purge.choose_purge(ata_info(None), target("sda", transport="sata"))  # smartctl alone: state 0x21
    assert isinstance(m, ata.SecurityErasePurge) and m.enhanced and m.name == "ata-secure-erase-enhanced"
    assert m.disclosure == "ATA ENHANCED SECURITY ERASE UNIT (PTS purge)"


def test_sas_sanitize_then_format_unit() -> None:
    sas = parse_smartctl(json.loads(fixture("smartctl-7.4-sas-hdd-seagate-14tb-a.json")))["scsi"]
    ops = scsi.parse_sg_opcodes(fixture("sg_opcodes-sas-hdd-sanitize-CONSTRUCTED.txt"))
    m = purge.choose_purge(info_of("scsi", scsi={**sas, **ops}), target("sdb", transport="sas"))
    assert isinstance(m, scsi.SanitizePurge) and m.name == "scsi-sanitize-block"
    # without SANITIZE (opcode report not answered): FORMAT UNIT, keeping the drive's PI type 2
    f = purge.choose_purge(info_of("scsi", scsi=sas), target("sdb", transport="sas"))
    assert isinstance(f, scsi.FormatPurge) and f.protection_type == 2
    assert scsi.fmtpinfo(f.protection_type) == ["--fmtpinfo=3"]
    assert any("REPORT SUPPORTED OPERATION CODES" in n for n in f.notes)


def test_loop_device_discloses_fallback() -> None:
    m = purge.choose_purge(info_of("loop"), target("loop3"))
    assert isinstance(m, purge.DiscardPurge) and m.notes == ("/dev/loop3 is a loop device: it has no device-level "
                                                             "purge command",)
    z = purge.choose_purge(info_of("loop", discard_max=0), target("loop3"))
    assert isinstance(z, purge.ZeroFillPurge) and z.disclosure == "zero-fill (fallback, not a PTS purge)"
    assert any("cannot discard" in n for n in z.notes)


# --- around them ---------------------------------------------------------------------------------


def test_nvme_sanitize_not_used_on_a_shared_controller() -> None:
    info = nvme_info("nvme-cli-2.x-id-ctrl-sanitize-DERIVED.json", namespaces=2)
    m = purge.choose_purge(info, target("nvme0n1"))
    assert isinstance(m, nvme.FormatPurge)  # fna = 0: format is per namespace
    assert any("erases every namespace of nvme0 (2 namespaces)" in n for n in m.notes)
    info["nvme"]["format_applies_to_all_namespaces"] = {"value": True, "unit": ""}
    f = purge.choose_purge(info, target("nvme0n1"))
    assert isinstance(f, purge.DiscardPurge) and any("applies to every namespace" in n for n in f.notes)


def test_nvme_without_nvme_cli_or_id_ctrl() -> None:
    info = nvme_info("nvme-cli-2.x-id-ctrl-sanitize-DERIVED.json")
    info["tools"] = {"nvme": False}
    m = purge.choose_purge(info, target("nvme0n1"))
    assert isinstance(m, purge.DiscardPurge) and "install nvme-cli" in m.notes[0]
    unknown = info_of("nvme", nvme=None)
    m = purge.choose_purge(unknown, target("nvme0n1"))
    assert isinstance(m, purge.DiscardPurge) and "capabilities of nvme0n1 are unknown" in m.notes[0]


def test_ata_sanitize_preferred_over_security_erase() -> None:
    m = purge.choose_purge(ata_info("hdparm-I-sata-ssd-sanitize-CONSTRUCTED.txt"), target("sda", transport="sata"))
    assert isinstance(m, ata.SanitizePurge) and m.name == "ata-sanitize-block"


def test_ata_with_password_set_is_not_erased() -> None:
    info = ata_info(None)
    info["ata"]["security_enabled"] = {"value": True, "unit": ""}
    m = purge.choose_purge(info, target("sda", transport="sata"))
    assert isinstance(m, purge.DiscardPurge) and "password set" in m.notes[0]


def test_partition_never_gets_a_device_purge() -> None:
    t = target("nvme0n1p1", is_partition=True, parent="nvme0n1")
    m = purge.choose_purge(nvme_info("nvme-cli-2.x-id-ctrl-sanitize-DERIVED.json"), t)
    assert isinstance(m, purge.DiscardPurge) and "partition" in m.notes[0]
    assert not nvme.SanitizePurge("block").applies(t)


def test_file_target_is_recreated() -> None:
    t = target("f.img", kind="file")
    assert isinstance(purge.choose_purge({}, t), purge.FileRecreatePurge)


def test_named_method_refused_without_capability() -> None:
    info = nvme_info("nvme-cli-2.x-id-ctrl-samsung-980pro-1tb-keysorted.json")
    with pytest.raises(UserError, match="does not support nvme-sanitize-block"):
        purge.select_purge(target("nvme0n1"), "nvme-sanitize-block", info=info)
    m = purge.select_purge(target("nvme0n1"), "nvme-format", info=info)
    assert isinstance(m, nvme.FormatPurge) and m.lbaf == 1
    with pytest.raises(UserError, match="does not apply"):
        purge.select_purge(target("loop0"), "nvme-format", info=info)


def test_named_ata_secure_erase_refused_when_frozen() -> None:
    info = ata_info("hdparm-I-sata-ssd-frozen-CONSTRUCTED.txt")
    with pytest.raises(UserError, match="frozen"):
        purge.select_purge(target("sda", transport="sata"), "ata-secure-erase-enhanced", info=info)


def test_auto_uses_given_info_and_lists_all_methods() -> None:
    m = purge.select_purge(target("sdb", transport="sas"), "auto", info=info_of("scsi", scsi={"format_unit_supported": True}))
    assert isinstance(m, scsi.FormatPurge)
    names = purge.method_names()
    assert names[0] == "auto" and {"nvme-sanitize-block", "ata-secure-erase", "scsi-format", "discard"} <= set(names)


def test_purge_record_keeps_notes() -> None:
    rec = purge.PurgeRecord("discard", "discard (fallback, not a PTS purge)", "2024-01-01T00:00:00+00:00", 1.0,
                            False, "x", ("loop0 is a loop device",))
    assert rec.to_dict()["notes"] == ["loop0 is a loop device"]
    json.dumps(rec.to_dict())


# --- polling to completion ------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s


def test_poll_until_done_reports_progress() -> None:
    clock = Clock()
    states = iter([("running", None, "starting"), ("running", 25.0, ""), ("running", 75.0, ""), ("done", 100.0, "")])
    lines: list[str] = []
    waited = purge.poll_until_done(lambda: next(states), timeout_s=100, what="sanitize", log=lines.append,
                                   interval_s=5, sleep=clock.sleep, clock=clock)
    assert waited == 15 and any("25.0%" in ln for ln in lines) and lines[-1].startswith("purge: sanitize complete")


def test_poll_until_done_times_out_and_fails() -> None:
    clock = Clock()
    with pytest.raises(RunFailed, match="did not finish within 30 s .*last progress 10.0%"):
        purge.poll_until_done(lambda: ("running", 10.0, ""), timeout_s=30, what="sanitize", interval_s=10,
                              sleep=clock.sleep, clock=clock)
    with pytest.raises(RunFailed, match="sanitize failed: media error"):
        purge.poll_until_done(lambda: ("failed", None, "media error"), timeout_s=30, what="sanitize",
                              sleep=clock.sleep, clock=clock)


def test_nvme_sanitize_state_from_sanitize_log() -> None:
    logs = iter([fixture("nvme-cli-2.3-sanitize-log-in-progress-CONSTRUCTED.json"),
                 fixture("nvme-cli-2.3-sanitize-log-completed-CONSTRUCTED.json")])
    fake = FakeTools({("nvme", "sanitize-log"): lambda argv: next(logs)})
    assert nvme.sanitize_state("/dev/nvme0", fake) == ("running", 25.0, "in progress")
    assert nvme.sanitize_state("/dev/nvme0", fake)[0] == "done"


def test_named_method_refused_when_support_is_unknown() -> None:
    """Lab defects D1/D12: a method the drive has not said it supports is not sent (hdparm exits 0
    after the drive aborted SECURITY ERASE UNIT); refused before anything is written."""
    with pytest.raises(UserError, match="has not said it supports scsi-sanitize-block"):
        purge.select_purge(target("sdb", transport="sas"), "scsi-sanitize-block", info=info_of("scsi", scsi={}))
    with pytest.raises(UserError, match="has not said it supports ata-secure-erase "):
        purge.select_purge(target("sda", transport="sata"), "ata-secure-erase", info=info_of("ata", ata={}))
