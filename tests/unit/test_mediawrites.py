"""Media (physical) writes for write amplification (issue 32, item 4): the OCP C0h log, SATA vendor
attributes, the reference SSD's ctl file; their telemetry sources; WAF on the datasheet.

Recorded outputs (tests/fixtures/SOURCES.md, "Media writes"): two ``nvme ocp smart-add-log`` outputs
in nvme-cli's normal format (CacheLib's test fixtures), a Phison-family SATA SSD's ``smartctl -A -j``
and a Crucial/Micron attribute table. No public recording of ``nvme ocp smart-add-log -o json`` nor of
a raw C0h page was found: those are built here as nvme-cli's source and the OCP layout define them,
from the recorded values."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from ssdpts.device import mediawrites as mw, telemetry
from ssdpts.device.interfaces import ata
from ssdpts.device.tools import FakeTools
from ssdpts.pts.wsat import WsatSample, WsatTable
from ssdpts.report import datasheet
from ssdpts.report.pages.wsat import reference_table

from .test_telemetry import FakeAdmin, TOOLS, _fake_block, _fake_nvme, source, sysfs  # noqa: F401  (fixture)

WDC = "nvme-cli-ocp-smart-add-log-wdc-wus6a7619pjp8x7.txt"
HFS = "nvme-cli-ocp-smart-add-log-model-hfs11111abc.txt"
PHISON = "smartctl-7.4-A-sata-ssd-phison-flash-writes-gib.json"
CRUCIAL = "smartctl-ata-attributes-crucial-mx500-excerpt.json"
GIB = 1 << 30


def ocp_page(written: int, read: int = 0, version: int = 3, guid: int = mw.OCP_SMART_GUID) -> bytes:
    """A C0h page as the OCP specification lays it out (a test fixture: ssdpts never builds one)."""
    page = bytearray(512)
    page[0:16] = written.to_bytes(16, "little")
    page[16:32] = read.to_bytes(16, "little")
    page[494:496] = version.to_bytes(2, "little")
    page[496:512] = guid.to_bytes(16, "little")
    return bytes(page)


# --- NVMe: the OCP SMART / Health Information Extended log -----------------------------------------


@pytest.mark.parametrize("name,written,read", [(WDC, 80410014056448, 84923571298304),
                                               (HFS, 88403820249088, 101477049159680)])
def test_recorded_ocp_smart_add_log(name: str, written: int, read: int) -> None:
    # the values CacheLib's own test expects of these outputs (NandWritesTest.cpp), read in bytes
    m = mw.parse_ocp_smart_add_log((TOOLS / name).read_text())
    assert m == {"physical_media_written_bytes": written, "physical_media_read_bytes": read,
                 "physical_media_unit_bytes": 1}


def test_ocp_page_layout_and_guid() -> None:
    # the GUID's bytes in the page as nvme-cli's plugin holds them (scao_guid, C5 AF 10 28 ...)
    page = ocp_page(80410014056448, 84923571298304)
    assert page[496:500] == bytes([0xC5, 0xAF, 0x10, 0x28]) and page[508:512] == bytes([0xC9, 0x14, 0xD5, 0xAF])
    assert mw.parse_ocp_smart_page(page) == {"physical_media_written_bytes": 80410014056448,
                                            "physical_media_read_bytes": 84923571298304,
                                            "physical_media_unit_bytes": 1, "ocp_smart_log_version": 3}
    assert mw.parse_ocp_smart_page(ocp_page((1 << 100) + 5))["physical_media_written_bytes"] == (1 << 100) + 5
    with pytest.raises(ValueError, match="not the OCP"):
        mw.parse_ocp_smart_page(ocp_page(1, guid=0x1234))  # a vendor's own C0h page
    with pytest.raises(ValueError, match="too short"):
        mw.parse_ocp_smart_page(bytes(100))


def test_ocp_json_both_output_formats() -> None:
    # nvme-cli's JSON for the recorded WDC drive: format 1 (its keys since 2.3) and format 2 (2.12+)
    v1 = {"Physical media units written": {"hi": 0, "lo": 80410014056448},
          "Physical media units read": {"hi": 0, "lo": 84923571298304}, "Log page version": 3,
          "Log page GUID": "0xafd514c97c6f4f9ca4f2bfea2810afc5"}
    v2 = {"physical_media_units_written": {"hi": 1, "lo": 7}, "physical_media_units_read": {"hi": 0, "lo": 9},
          "log_page_version": 4, "log_page_guid": "0xafd514c97c6f4f9ca4f2bfea2810afc5"}
    assert mw.parse_ocp_smart_add_log(json.dumps(v1))["physical_media_written_bytes"] == 80410014056448
    m = mw.parse_ocp_smart_add_log(json.dumps(v2))
    assert m["physical_media_written_bytes"] == (1 << 64) + 7 and m["ocp_smart_log_version"] == 4
    with pytest.raises(ValueError, match="GUID"):
        mw.parse_ocp_smart_add_log(json.dumps({**v1, "Log page GUID": "0x0"}))
    with pytest.raises(ValueError):
        mw.parse_ocp_smart_add_log("Error: NVMe status: INVALID_LOG_PAGE")


class OcpAdmin(FakeAdmin):
    """A drive with the OCP log: 1 MiB more media writes at every read."""

    written = 10 * GIB

    def get_log(self, lid: int, length: int = 512, uuid_index: int = 0) -> bytes:
        if lid == mw.LID_OCP_SMART:
            OcpAdmin.written += 1 << 20
            return ocp_page(OcpAdmin.written)
        return super().get_log(lid, length)


def test_nvme_source_reads_c0h_beside_the_smart_log(sysfs: Path) -> None:  # noqa: F811
    _fake_nvme(sysfs)
    src = source(sysfs, "nvme0n1", nvme_admin=OcpAdmin)
    a, b = src.snapshot(), src.snapshot()
    assert src.describe()["media_writes"] == "OCP SMART extended log C0h (nvme-ioctl)"
    assert b["physical_media_written_bytes"] - a["physical_media_written_bytes"] == 1 << 20
    assert a["physical_media_unit_bytes"] == 1 and a["health"] == "nvme-ioctl"


def test_nvme_without_c0h_is_decided_once_and_quiet(sysfs: Path) -> None:  # noqa: F811
    _fake_nvme(sysfs)
    asked = []

    class Qemu(FakeAdmin):
        def get_log(self, lid: int, length: int = 512, uuid_index: int = 0) -> bytes:
            asked.append(lid)
            return super().get_log(lid, length)

    src = source(sysfs, "nvme0n1", nvme_admin=Qemu)
    snaps = [src.snapshot() for _ in range(3)]
    assert asked.count(mw.LID_OCP_SMART) == 1  # at set-up only, never per snapshot
    assert src.describe()["media_writes"].startswith("not available: /dev/nvme0 has no OCP SMART")
    assert src.reason is None  # not a missing part of the telemetry: the drive has no such log
    assert all("physical_media_written_bytes" not in s and "physical_media_error" not in s for s in snaps)


def test_nvme_cli_fallback_where_the_ioctl_is_refused(sysfs: Path) -> None:  # noqa: F811
    _fake_nvme(sysfs)

    class Refused:
        def __init__(self, dev):
            raise PermissionError(13, "Permission denied")

    tools = FakeTools({("nvme", "smart-log"): (TOOLS / "nvme-cli-2.16-smart-log-samsung-pm981a.json").read_text(),
                       ("nvme", "ocp", "smart-add-log"): (TOOLS / WDC).read_text()})
    src = source(sysfs, "nvme0n1", tools, nvme_admin=Refused)
    snap = src.snapshot()
    assert src.describe()["media_writes"] == "OCP SMART extended log C0h (nvme ocp smart-add-log)"
    assert snap["physical_media_written_bytes"] == 80410014056448 and snap["health"] == "nvme-cli smart-log"
    assert ("nvme", "ocp", "smart-add-log", "/dev/nvme0", "-o", "json") in tools.calls


# --- SATA vendor attributes ---------------------------------------------------------------------


def test_recorded_phison_flash_writes_gib() -> None:
    # Phison Driven SSDs (drivedb): 233 Flash_Writes_GiB, 241 Lifetime_Writes_GiB; no devstat in -A
    s = ata.parse_smartctl(json.loads((TOOLS / PHISON).read_text()))["smart"]
    assert s["physical_media_written_bytes"] == 17618 * GIB and s["physical_media_unit_bytes"] == GIB
    assert s["physical_media_attribute"] == "Flash_Writes_GiB"
    assert s["data_written_bytes"] == 11520 * GIB  # the GiB attribute by its name, not 11520 LBAs
    assert s["physical_media_written_bytes"] / s["data_written_bytes"] == pytest.approx(1.5293, abs=1e-4)


def test_recorded_crucial_program_pages() -> None:
    # Crucial/Micron Client SSDs: WAF = (host + FTL program pages) / host pages (Micron TN-FD-23)
    table = json.loads((TOOLS / CRUCIAL).read_text())["ata_smart_attributes"]["table"]
    m = mw.ata_media_writes(table)
    assert m == {"host_program_pages": 19344786, "nand_program_pages": 19344786 + 16994048}
    assert m["nand_program_pages"] / m["host_program_pages"] == pytest.approx(1.8785, abs=1e-4)
    assert mw.ata_host_written_bytes(table) == 619033175 * 512  # 246 Total_LBAs_Written


def test_a_drive_without_a_nand_attribute_has_no_media_fields() -> None:
    s = ata.parse_smartctl(json.loads((TOOLS / "smartctl-7.0-sata-ssd-samsung-860evo-500gb-x.json").read_text()))
    assert not {k for k in s["smart"] if k in mw.FIELDS and s["smart"][k] is not None}
    assert s["smart"]["data_written_bytes"] % 512 == 0  # devstat's logical sectors
    assert telemetry._ata_media({}).startswith("not available: no ATA attribute")


def test_smartctl_reader_keeps_the_media_fields() -> None:
    tools = FakeTools({("smartctl",): (TOOLS / PHISON).read_text()})
    first = telemetry._smartctl_reader("/dev/sda", "ata", tools)()
    assert first["physical_media_written_bytes"] == 17618 * GIB
    assert telemetry._ata_media(first) == "ATA attribute Flash_Writes_GiB (smartctl; drivedb's name)"


def test_every_table_row_names_its_unit_and_drivedb_families() -> None:
    for c in (*mw.ATA_NAND.values(), *mw.ATA_HOST.values()):
        assert c.unit_bytes in (512, 32 << 20, 1 << 30) and c.families
        # the unit is in the name drivedb gives, except for the 512-byte LBAs
        assert {512: "LBAs", 32 << 20: "32MiB", 1 << 30: "GiB"}[c.unit_bytes] in c.name


# --- the reference SSD's ctl ----------------------------------------------------------------------


CTL = ('{"host_read_ios":5,"host_write_ios":7,"host_trim_ios":0,"host_read_pages":5,"host_write_pages":70,'
       '"host_trim_pages":0,"flash_read_pages":9,"flash_prog_pages":140,"gc_copy_pages":70,"erases":2,'
       '"fg_gc_blocks":2,"bg_gc_blocks":0,"formats":0,"free_blocks":3,"valid_pages":70,"page_bytes":4096}\n')


def test_refssd_ctl() -> None:
    m = mw.parse_refssd_ctl(CTL)
    assert m["physical_media_written_bytes"] == 140 * 4096 and m["data_written_bytes"] == 70 * 4096
    assert m["physical_media_unit_bytes"] == 4096 and m["host_write_commands"] == 7
    with pytest.raises(ValueError):
        mw.parse_refssd_ctl('{"host_write_pages": 1}')  # an older refssd without page_bytes
    assert mw.refssd_ctl_for(None) is None and mw.refssd_ctl_for("/var/tmp/x.img") is None


def test_loop_over_a_refssd_disk_reads_its_ctl(sysfs: Path, tmp_path: Path) -> None:  # noqa: F811
    d = _fake_block(sysfs, "loop5")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    (mnt / "disk").write_bytes(b"")
    (mnt / "ctl").write_text(CTL)
    (d / "loop").mkdir()
    (d / "loop" / "backing_file").write_text(f"{mnt / 'disk'}\n")
    src = source(sysfs, "loop5")
    snap = src.snapshot()
    assert src.health_method.startswith("refssd-ctl (") and snap["health"] == src.health_method
    assert snap["physical_media_written_bytes"] == 140 * 4096 and snap["block"]["sectors_written"] == 160
    assert "refssd ctl" in src.describe()["media_writes"]
    (mnt / "ctl").write_text(CTL.replace('"flash_prog_pages":140', '"flash_prog_pages":150'))
    assert src.snapshot()["physical_media_written_bytes"] == 150 * 4096


def test_a_plain_loop_device_has_no_media_source(sysfs: Path, tmp_path: Path) -> None:  # noqa: F811
    d = _fake_block(sysfs, "loop6")
    (d / "loop").mkdir()
    (d / "loop" / "backing_file").write_text(f"{tmp_path / 'disk'}\n")  # named disk, no ctl beside it
    src = source(sysfs, "loop6")
    assert src.health is None and "media_writes" not in src.describe()


# --- the datasheet --------------------------------------------------------------------------------


def rec(before: dict | None, after: dict | None):
    return SimpleNamespace(telemetry={"available": True, "before": before, "after": after})


def snap(t: float, media: int, host: int, unit: int = 1) -> dict:
    return {"t_unix_s": t, "physical_media_written_bytes": media, "data_written_bytes": host,
            "physical_media_unit_bytes": unit}


def test_waf_spans_the_first_before_to_the_last_after() -> None:
    recs = [rec(snap(0, 1000, 500), snap(10, 1600, 900)), rec(snap(10, 1600, 900), snap(20, 4000, 1500))]
    w = datasheet.waf_of(recs)
    assert w.value == pytest.approx(3000 / 1000) and w.note == "" and "20 s" in w.span
    # a coarse counter: 1 GiB units over 3 GiB written is ± 33%
    w = datasheet.waf_of([rec(snap(0, 0, 0, GIB), snap(5, 3 * GIB, 2 * GIB, GIB))])
    assert w.value == 1.5 and w.note.startswith("± 33.3%")
    pages = [rec({"t_unix_s": 0, "nand_program_pages": 10, "host_program_pages": 5},
                 {"t_unix_s": 9, "nand_program_pages": 28, "host_program_pages": 15})]
    assert datasheet.waf_of(pages).value == pytest.approx(1.8)
    assert datasheet.waf_of([rec({"t_unix_s": 0}, {"t_unix_s": 1})]) is None  # no media counter
    assert datasheet.waf_of([rec(snap(0, 5, 7), snap(1, 9, 7))]) is None  # no host writes


def test_waf_target_figures() -> None:
    t = datasheet.parse_targets("figure,limit,direction\nwaf_wsat,1.4,lower\n")
    assert t["waf_wsat"].limit == 1.4 and t["waf_wsat"].better == "lower"
    f = datasheet.figure("waf_tp-128KiB")
    assert f.part == "tp-128KiB" and f.stat == "waf" and f.better == "lower"
    assert "waf_<part>" in datasheet.figure_ids()


def test_wsat_reference_shows_the_measured_steady_wa() -> None:
    series = [WsatSample(i, 8000.0 if i < 3 else 2700.0, 0.1 * i, 0.5 * i, 400.0, 900.0, None, 100.0 + 2 * i)
              for i in range(1, 9)]
    tab = WsatTable(tuple(series), 0.8, 4.0, (4, 5, 6, 7, 8), 2700.0)
    ref = {"steady_wa_greedy_mean_field": 2.6258}
    row = reference_table("wsat", ref, tab, 2.61).rows[0]
    assert row[0].text == "steady write amplification" and row[2].value == 2.61 and row[3].text == "-0.6%"
    assert reference_table("wsat", ref, tab).rows[0][2].text == "not measured"
