"""The block layer: sysfs queue attributes, lsblk, and the device class (which interface, if any,
manages a block device). Every block device has these, loop and zram too; nothing here opens one.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ssdpts.device import target as tgt
from ssdpts.device.fields import not_available
from ssdpts.device.target import Target
from ssdpts.device.tools import Gather, Sysfs, as_int, as_str, parse_json


QUEUE_ATTRS = ("scheduler", "nr_requests", "rotational", "max_sectors_kb", "max_hw_sectors_kb", "write_cache",
               "fua", "logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size",
               "discard_granularity", "discard_max_bytes", "discard_max_hw_bytes", "write_zeroes_max_bytes",
               "read_ahead_kb", "nomerges", "rq_affinity", "add_random", "iostats", "io_poll", "io_timeout",
               "wbt_lat_usec", "zoned", "dax")


def read_queue(disk: str, sysfs: Sysfs | None = None) -> dict[str, str]:
    """Raw /sys/class/block/DISK/queue/* attributes (strings, as the kernel prints them)."""
    sysfs = sysfs or tgt.host_sysfs()
    qdir = os.path.join(sysfs.block_dir(disk), "queue")
    raw: dict[str, str] = {}
    for attr in QUEUE_ATTRS:
        text = sysfs.read(os.path.join(qdir, attr))
        if text is not None:
            raw[attr] = text
    try:
        raw["mq_hw_queues"] = str(len([e for e in os.listdir(os.path.join(sysfs.block_dir(disk), "mq"))
                                       if e.isdigit()]))
    except OSError:
        pass
    return raw


def parse_queue(raw: dict[str, str]) -> dict[str, Any]:
    def i(k):
        return as_int(raw.get(k))

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
    "name": ("name", as_str), "path": ("path", as_str), "maj_min": ("maj:min", as_str), "type": ("type", as_str),
    "size_bytes": ("size", as_int), "tran": ("tran", as_str), "subsystems": ("subsystems", as_str), "hctl": ("hctl", as_str),
    "model": ("model", as_str), "serial": ("serial", as_str), "rev": ("rev", as_str), "vendor": ("vendor", as_str),
    "wwn": ("wwn", as_str), "sched": ("sched", as_str), "rq_size": ("rq-size", as_int), "phy_sec_bytes": ("phy-sec", as_int),
    "log_sec_bytes": ("log-sec", as_int), "min_io_bytes": ("min-io", as_int), "opt_io_bytes": ("opt-io", as_int),
    "disc_gran_bytes": ("disc-gran", as_int), "disc_max_bytes": ("disc-max", as_int), "wsame_bytes": ("wsame", as_int),
    "ra_kb": ("ra", as_int), "zoned": ("zoned", as_str), "fstype": ("fstype", as_str),
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
    out["children"] = [{"name": c.get("name"), "type": c.get("type"), "size_bytes": as_int(c.get("size")),
                        "fstype": as_str(c.get("fstype"))} for c in kids if isinstance(c, dict)] or None
    if out.get("path") is None and out.get("name"):
        out["path"] = f"/dev/{out['name']}"
    return out


_VIRTUAL = (("loop", "loop"), ("zram", "zram"), ("ram", "ram"), ("dm-", "dm"), ("md", "md"), ("nbd", "nbd"),
            ("vd", "virtio"), ("xvd", "xen"), ("pmem", "pmem"), ("rbd", "rbd"))


def device_class(target: Target, sysfs: Sysfs | None = None) -> str:
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
        vendor = ((sysfs or tgt.host_sysfs()).block_attr(disk, "device", "vendor") or "").strip()
        return "ata" if vendor == "ATA" else "scsi"
    return "other"


def file_backing_disk(target: Target, sysfs: Sysfs | None = None) -> str | None:
    """The whole disk under a file target's filesystem, or None (tmpfs, overlay, NFS...)."""
    sysfs = sysfs or tgt.host_sysfs()
    try:
        st = os.stat(os.path.dirname(target.real_path) or ".")
    except OSError:
        return None
    name = sysfs.name_for_devnum(os.major(st.st_dev), os.minor(st.st_dev))
    return sysfs.disk_of(name) if name else None


# ==================================================================================================
# Collection
# ==================================================================================================


def collect_queue(block_name: str, g: Gather) -> tuple[dict[str, Any] | None, str]:
    raw_q = read_queue(block_name, g.sysfs)
    if raw_q:
        g.keep("sysfs-queue.json", json.dumps(raw_q, indent=1))
        g.note("sysfs queue", None)
        return parse_queue(raw_q), f"not in /sys/class/block/{block_name}/queue on this kernel"
    g.note("sysfs queue", not_available(f"no /sys/class/block/{block_name}/queue"))
    return None, f"no /sys/class/block/{block_name}/queue"


def collect_lsblk(dev: str, block_name: str, g: Gather) -> tuple[dict[str, Any] | None, str]:
    res = g.tools.run(["lsblk", "-J", "-O", "-b", dev], timeout=20)
    if not res.ok and g.tools.which("lsblk"):  # util-linux < 2.27 has no -O: the essentials then
        res = g.tools.run(["lsblk", "-J", "-b", "-o", "NAME,KNAME,MAJ:MIN,TYPE,SIZE,TRAN,MODEL,SERIAL,REV,VENDOR,"
                           "ROTA,SCHED,RQ-SIZE,PHY-SEC,LOG-SEC,MIN-IO,OPT-IO,DISC-GRAN,DISC-MAX,DISC-ZERO,FSTYPE",
                           dev], timeout=20)
    g.note("lsblk", res)
    lsb = None
    if res.ok:
        g.keep("lsblk.json", res.stdout)
        try:
            lsb = parse_lsblk(parse_json(res.stdout), block_name)
        except ValueError:
            lsb = None
    return lsb, "lsblk reports no value for this device" if lsb else (res.reason or "lsblk printed nothing")
