"""What the drive wrote to its media: the physical side of write amplification (docs/ocp.md "WAF").

Write amplification (WAF) is what a drive programmed into its media per byte the host wrote. The
host side is the health log's own count (NVMe SMART 02h data units written, ATA devstat logical
sectors written); the physical side only the drive knows, and only some drives tell:

* **NVMe**: the OCP SMART / Health Information Extended log (log page C0h, 512 bytes, OCP
  Datacenter NVMe SSD specification): Physical Media Units Written, bytes 0-15, a little-endian
  128-bit count of *bytes*; Physical Media Units Read at 16-31; the log page version at 494-495 and
  the log page GUID at 496-511, which must be AFD514C97C6F4F9CA4F2BFEA2810AFC5 (read as one
  little-endian number, as the spec and nvme-cli print it) before the page is trusted: a vendor's
  own C0h page has another layout. telemetry.py reads it with the admin ioctl it reads the SMART log
  with; where that is refused, ``nvme ocp smart-add-log -o json`` (nvme-cli's ocp plugin).
* **SATA**: vendor attributes named as smartmontools' drivedb.h names them (:data:`ATA_NAND`,
  :data:`ATA_HOST`, each row citing its drivedb family). Most count whole GiB or 32 MiB: over a short
  test the difference of two readings is that coarse, so the unit is recorded beside the bytes.
  Crucial/Micron count NAND *pages* (247 host program pages, 248 FTL program pages, Micron
  TN-FD-23): both are recorded and the WAF is their ratio (host + FTL) / host, no page size assumed.
* **The reference SSD** (refssd/): its ``ctl`` file beside the ``disk`` file a loop device rests
  on gives the simulator's own counters (host pages written, flash pages programmed, page size).

A snapshot carries, where the drive gives them (every field left out where it does not):

=============================== ======================================================================
``physical_media_written_bytes`` bytes programmed into the media (NVMe C0h PMUW, ATA NAND attribute × unit, refssd flash pages × page size)
``physical_media_unit_bytes``    the counter's resolution (1 for C0h, 2^30 for a GiB attribute, the page size for refssd)
``nand_program_pages``           ATA 247 + 248 (Crucial/Micron): every page programmed
``host_program_pages``           ATA 247: the pages programmed with host data
=============================== ======================================================================

Parsers are pure: tests/unit/test_mediawrites.py runs them on recorded outputs (tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import os
import re
from typing import Any

LID_OCP_SMART = 0xC0
OCP_SMART_GUID = 0xAFD514C97C6F4F9CA4F2BFEA2810AFC5
OCP_SMART_GUID_HEX = f"{OCP_SMART_GUID:032x}"
_GIB, _MIB = 1 << 30, 1 << 20


# ==================================================================================================
# NVMe: the OCP SMART / Health Information Extended log (C0h)
# ==================================================================================================

def parse_ocp_smart_page(page: bytes) -> dict[str, Any]:
    """The 512-byte C0h page → media fields; ValueError when it is short or not the OCP page."""
    if len(page) < 512:
        raise ValueError(f"log page C0h too short ({len(page)} bytes)")
    guid = int.from_bytes(page[496:512], "little")
    if guid != OCP_SMART_GUID:
        raise ValueError(f"log page C0h is not the OCP SMART / Health Information Extended log "
                         f"(GUID {guid:032X}, expected {OCP_SMART_GUID:032X})")
    return {"physical_media_written_bytes": int.from_bytes(page[0:16], "little"),
            "physical_media_read_bytes": int.from_bytes(page[16:32], "little"),
            "physical_media_unit_bytes": 1,
            "ocp_smart_log_version": int.from_bytes(page[494:496], "little")}


def _guid_ok(text: Any) -> bool:
    """nvme-cli prints the GUID as 0x + the high and the low 64 bits in hex, each without leading
    zeros (``"0x%"PRIx64"%"PRIx64``); the OCP GUID's halves have none to lose."""
    if not isinstance(text, str):
        return False
    t = text.strip().lower()
    while t.startswith("0x"):  # a wdc plugin prints "0x0x..."
        t = t[2:]
    return t == OCP_SMART_GUID_HEX


def _hilo(v: Any) -> int | None:
    if isinstance(v, dict) and isinstance(v.get("hi"), int) and isinstance(v.get("lo"), int):
        return (v["hi"] << 64) | v["lo"]
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def parse_ocp_smart_add_log_json(doc: Any) -> dict[str, Any]:
    """``nvme ocp smart-add-log -o json``: its keys as nvme-cli's ocp plugin writes them (output
    format 1: "Physical media units written" {"hi", "lo"}, "Log page GUID"; format 2, nvme-cli ≥ 2.12
    with ``--output-format-version=2``: "physical_media_units_written", "log_page_guid")."""
    if not isinstance(doc, dict):
        raise ValueError("nvme ocp smart-add-log: not a JSON object")
    guid = doc.get("Log page GUID", doc.get("log_page_guid", doc.get("Log Page GUID")))
    if not _guid_ok(guid):
        raise ValueError(f"nvme ocp smart-add-log: log page GUID {guid!r} is not the OCP SMART log's")
    w = _hilo(doc.get("Physical media units written", doc.get("physical_media_units_written")))
    r = _hilo(doc.get("Physical media units read", doc.get("physical_media_units_read")))
    if w is None:
        raise ValueError("nvme ocp smart-add-log: no physical media units written")
    out = {"physical_media_written_bytes": w, "physical_media_unit_bytes": 1}
    if r is not None:
        out["physical_media_read_bytes"] = r
    ver = doc.get("Log page version", doc.get("log_page_version"))
    if isinstance(ver, int):
        out["ocp_smart_log_version"] = ver
    return out


_TEXT_PMU = re.compile(r"Physical media units (written|read)\s*-?\s*:?\s*(\d+)\s+(\d+)", re.I)
_TEXT_GUID = re.compile(r"Log page GUID\s*:?\s*(\S+)", re.I)


def parse_ocp_smart_add_log_text(text: str) -> dict[str, Any]:
    """``nvme ocp smart-add-log`` in its normal output ("Physical media units written -  HI LO"):
    what public recordings of the command exist in (tests/fixtures/SOURCES.md)."""
    g = _TEXT_GUID.search(text or "")
    if not g or not _guid_ok(g.group(1)):
        raise ValueError("nvme ocp smart-add-log: no OCP log page GUID in the output")
    vals = {m.group(1).lower(): (int(m.group(2)) << 64) | int(m.group(3)) for m in _TEXT_PMU.finditer(text)}
    if "written" not in vals:
        raise ValueError("nvme ocp smart-add-log: no physical media units written")
    out = {"physical_media_written_bytes": vals["written"], "physical_media_unit_bytes": 1}
    if "read" in vals:
        out["physical_media_read_bytes"] = vals["read"]
    return out


def parse_ocp_smart_add_log(stdout: str) -> dict[str, Any]:
    """nvme-cli's output, JSON (``-o json``) or, from an nvme-cli that ignores it, the normal text."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return parse_ocp_smart_add_log_text(stdout)
    return parse_ocp_smart_add_log_json(doc)


# ==================================================================================================
# SATA: vendor attributes (smartctl -j -A: ata_smart_attributes.table[] with id, name, raw.value)
# ==================================================================================================

@dataclass(frozen=True)
class AtaCounter:
    """One attribute as drivedb.h names it: its unit in bytes and the drivedb families that use the
    name (smartmontools drivedb/drivedb.h @ f1d0da9c, the family names as written there)."""

    name: str
    unit_bytes: int
    families: str


# The media (NAND) side, by attribute name. Left out on purpose: "SandForce_Internal" (233/234 on
# SandForce drives: drivedb does not say what it counts), "NAND_GB_Written_TLC/_SLC" (WD Blue: GB
# or GiB is not stated, and the SLC cache's writes are folded into TLC later, so their sum is not
# the media's), "Total_NAND_Written" / "Total_Media_Writes" (SSSTC, SK hynix: unit not stated).
ATA_NAND = {c.name: c for c in (
    AtaCounter("NAND_Writes_1GiB", _GIB, "Intel 520/525/53x/330/335/540/545s/5400s, DC S3110 (249); "
               "Samsung CM871a/PM871 (249); Supermicro SuperDOM (233)"),
    AtaCounter("NAND_Writes_32MiB", 32 * _MIB, "Intel 730 and DC S35x0/3610/3700, 3710, S3520, S46x0/S45x0 (243); "
               "Silicon Motion based USB SSDs (233)"),
    AtaCounter("Flash_Writes_GiB", _GIB, "Phison Driven SSDs, Phison Driven OEM SSDs (Kingston and others, 233); "
               "Seagate BarraCuda, IronWolf (Pro) 125 (233)"),
    AtaCounter("Flash_Writes_32MiB", 32 * _MIB, "Innodisk 3IE2/3ME2/3MG2/3SE2/3TG6 (233), XITC SSDs (233)"),
    AtaCounter("NAND_GiB_Written", _GIB, "SandForce Driven SSDs (SanDisk SSD Plus, Z400s; 233)"),
    AtaCounter("Total_NAND_Writes_GiB", _GIB, "Marvell based SanDisk SSDs (233)"),
    AtaCounter("Total_NAND_Prog_Ct_GiB", _GIB, "Indilinx Barefoot 3 based SSDs, OCZ Intrepid 3000 (249)"),
    AtaCounter("Lifetime_NAND_Prg_GiB", _GIB, "SK hynix SATA SSDs (234)"),
)}
# The host side where devstat's "Logical Sectors Written" is missing, by attribute name.
ATA_HOST = {c.name: c for c in (
    AtaCounter("Host_Writes_32MiB", 32 * _MIB, "Intel (225, 241), Innodisk, Silicon Motion, Plextor, Toshiba HK4R, XITC"),
    AtaCounter("Host_Writes_GiB", _GIB, "Indilinx Barefoot 3, Kingston UV400/500, Maxio, WD Blue, Seagate BarraCuda (241)"),
    AtaCounter("Lifetime_Writes_GiB", _GIB, "Phison Driven SSDs, SandForce Driven SSDs, SuperDOM (241), SK hynix (235); "
               "drivedb notes one KIOXIA EXCERIA firmware may count 32 MiB"),
    AtaCounter("Total_Writes_GiB", _GIB, "Marvell based SanDisk SSDs (241)"),
    AtaCounter("Total_LBAs_Written", 512, "DEFAULT (241), Crucial/Micron (246), Samsung (241): 512-byte LBAs"),
)}
# Crucial/Micron Client SSDs (247/248: "Crucial/Micron Client SSDs", tnfd22) count NAND pages.
ATA_HOST_PAGES, ATA_FTL_PAGES = "Host_Program_Page_Count", "FTL_Program_Page_Count"


def _raw(row: dict) -> int | None:
    v = (row.get("raw") or {}).get("value") if isinstance(row, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def ata_media_writes(table: list[dict] | None) -> dict[str, Any]:
    """The media-write fields of an ATA drive's attribute table (empty when it has none known)."""
    by_name = {r.get("name"): _raw(r) for r in table or [] if isinstance(r, dict)}
    out: dict[str, Any] = {}
    for name, c in ATA_NAND.items():
        if by_name.get(name) is not None:
            out.update(physical_media_written_bytes=by_name[name] * c.unit_bytes,
                       physical_media_unit_bytes=c.unit_bytes, physical_media_attribute=name)
            break
    host, ftl = by_name.get(ATA_HOST_PAGES), by_name.get(ATA_FTL_PAGES)
    if host is not None and ftl is not None:
        out.update(host_program_pages=host, nand_program_pages=host + ftl)
    return out


def ata_host_written_bytes(table: list[dict] | None) -> int | None:
    """Host bytes written from a named host attribute (the first of ATA_HOST's order the table has)."""
    by_name = {r.get("name"): _raw(r) for r in table or [] if isinstance(r, dict)}
    for name, c in ATA_HOST.items():
        if by_name.get(name) is not None:
            return by_name[name] * c.unit_bytes
    return None


# ==================================================================================================
# The reference SSD: its ctl file
# ==================================================================================================

def refssd_ctl_for(backing_file: str | None) -> str | None:
    """The refssd ``ctl`` beside a loop device's backing file, when that file is a refssd ``disk``."""
    if not backing_file:
        return None
    path = backing_file.removesuffix(" (deleted)")
    if os.path.basename(path) != "disk":
        return None
    ctl = os.path.join(os.path.dirname(path), "ctl")
    return ctl if os.path.isfile(ctl) else None


def parse_refssd_ctl(text: str) -> dict[str, Any]:
    """refssd's counters (refssd/src/truth.rs counters_json) → snapshot fields."""
    d = json.loads(text)
    try:
        page, host, prog = int(d["page_bytes"]), int(d["host_write_pages"]), int(d["flash_prog_pages"])
        reads = int(d["host_read_pages"])
    except (KeyError, TypeError, ValueError):
        raise ValueError("not the reference SSD's counters (page_bytes, host_write_pages, flash_prog_pages)") from None
    return {"data_written_bytes": host * page, "data_read_bytes": reads * page,
            "physical_media_written_bytes": prog * page, "physical_media_unit_bytes": page,
            "host_write_commands": int(d.get("host_write_ios", 0)), "host_read_commands": int(d.get("host_read_ios", 0))}


def read_refssd_ctl(ctl: str) -> dict[str, Any]:
    """One read of the ctl file: refssd makes its counters when the file is opened."""
    with open(ctl, encoding="ascii") as f:
        return parse_refssd_ctl(f.read())


# Snapshot fields from this module (telemetry.py keeps them).
FIELDS = ("physical_media_written_bytes", "physical_media_read_bytes", "physical_media_unit_bytes",
          "physical_media_attribute", "ocp_smart_log_version", "nand_program_pages", "host_program_pages")
