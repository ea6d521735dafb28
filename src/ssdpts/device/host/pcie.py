"""PCIe: the link of an NVMe (or any PCI-attached) device and of every hop above it, from sysfs and
lspci -vv: negotiated and maximum speed and width, generation, ASPM, NUMA node.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ssdpts.device import target as tgt
from ssdpts.device.fields import not_available
from ssdpts.device.tools import Gather, Sysfs, as_int


_PCI_ADDR = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_GEN = {2.5: "Gen1", 5.0: "Gen2", 8.0: "Gen3", 16.0: "Gen4", 32.0: "Gen5", 64.0: "Gen6"}


def parse_link_speed(text: str | None) -> float | None:
    """sysfs "16.0 GT/s PCIe" / lspci "16GT/s" → 16.0; "Unknown" → None."""
    m = re.search(r"([\d.]+)\s*GT/s", text or "")
    return float(m.group(1)) if m else None


def pcie_generation(gts: float | None) -> str | None:
    return _GEN.get(gts) if gts is not None else None


def pci_chain(disk: str, sysfs: Sysfs | None = None) -> list[str]:
    """sysfs directories of the PCI functions above a block device, root port first."""
    real = os.path.realpath((sysfs or tgt.host_sysfs()).block_dir(disk))
    parts = real.split(os.sep)
    chain = []
    for i, p in enumerate(parts):
        if _PCI_ADDR.match(p):
            chain.append(os.sep.join(parts[: i + 1]))
    return chain


def read_pcie(disk: str, sysfs: Sysfs | None = None) -> dict[str, Any]:
    """Link attributes of every PCI function from the root down to the device (raw strings)."""
    sysfs = sysfs or tgt.host_sysfs()
    hops = []
    for d in pci_chain(disk, sysfs):
        hop: dict[str, Any] = {"address": os.path.basename(d), "sysfs": d}
        for attr in ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "numa_node",
                     "class", "vendor", "device"):
            v = sysfs.read(os.path.join(d, attr))
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
             "current_link_width": as_int(h.get("current_link_width")),
             "max_link_speed_gts": parse_link_speed(h.get("max_link_speed")),
             "max_link_width": as_int(h.get("max_link_width"))} for h in hops]
    cur = topo[-1]
    out: dict[str, Any] = {
        "pci_address": dev["address"], "driver": dev.get("driver"), "numa_node": as_int(dev.get("numa_node")),
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


def collect(block_name: str, g: Gather) -> tuple[dict[str, Any] | None, str]:
    raw_p = read_pcie(block_name, g.sysfs)
    lspci_text = None
    if raw_p["hops"]:
        g.keep("sysfs-pcie.json", json.dumps(raw_p, indent=1))
        res = g.run_kept(["lspci", "-D", "-vv", "-s", raw_p["hops"][-1]["address"]], "lspci.txt", "lspci")
        if res.ok:
            lspci_text = res.stdout
    pc, why = parse_pcie(raw_p, lspci_text)
    if pc is None:
        g.note("pcie", not_available(why or "no PCIe data"))
    return pc, "not reported by sysfs or lspci" if pc else why or "no PCIe data"
