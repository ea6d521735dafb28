"""The OCP latency monitor (docs/ocp.md "Latency monitor"): the drive's own count of slow commands, per test.

An NVMe drive built to the OCP Datacenter NVMe SSD specification (2.0 on) counts, per read, write
and deallocate command, those whose latency falls in four buckets between thresholds A < B < C < D
that the host sets (Set Features, Feature Identifier C5h), and keeps, per bucket and command kind,
the latency and the time of the worst (or first) such command: the Latency Monitor log page C3h
(512 bytes). Layout and units here are nvme-cli's OCP plugin's (plugins/ocp/ocp-nvme.h ``struct
ssd_latency_monitor_log`` and ``struct feature_latency_monitor``, ocp-print-json.c ``json_c3_log``),
which agree with ocp-diag-autoval-ssd's lmparser and with the spec's tables (LMDATA-*, LMD5-*,
LMLLOG-*; a public transcription of spec 2.0, docs/ocp.md):

* thresholds are 5-ms steps, a byte value v meaning (v + 1) x 5 ms (1..1280 ms); they must rise
  (LMLLOG-11, else the drive answers Invalid Field);
* setting the feature resets the active and static buckets (LMLLOG-6/14): the counts read after a
  test are that test's (plus the static buckets, which only an active window that reached its
  timer threshold fills);
* the worst command of each bucket is kept when the Active Latency Mode bit of that bucket and
  command kind is 1 ("largest latency"; optional: Feature Status bit 1), else the first one; with
  an Active Latency Minimum Window of 0 every larger latency is recorded (Appendix C.2.3.6);
* a latency stamp is the NVMe Timestamp format (bits 47:0 ms, bit 48 synch, bits 51:49 origin;
  all ones: none); measured latencies are in ms (0: none).

Support is decided once, before a run's first byte (:func:`make_monitor`): the target is an NVMe
namespace, the controller's admin ioctl answers Get Log Page C3h, and the page carries the latency
monitor's GUID. Anything else is one reason, ``not available: <why>``, and nothing is set.

What the run does to the drive (``ssdpts run --latmon-ms``, default on where supported): before each
test's measurement its thresholds are set (Save bit clear: the drive's saved configuration stays as
it was and a power cycle restores it); after it, the page is read; at the end of the run the
configuration found at the start is set again (its counters reset once more). The admin commands
go to the admin queue, not the measured I/O queues.
"""

from __future__ import annotations

import struct
import time
from typing import Any, Callable

from ssdpts.device import target as tgt
from ssdpts.device.fields import not_available
from ssdpts.device.interfaces import choice
from ssdpts.device.nvme_admin import Admin, nvme_names
from ssdpts.device.target import Target
from ssdpts.device.tools import Sysfs

LID, FID = 0xC3, 0xC5
PAGE_BYTES, FEATURE_BYTES = 512, 4096
# The page's GUID as its bytes lie at 0x1F0 (nvme-cli prints it reversed: 85D45E58D4E643709C6C84D08CC07A92)
GUID = bytes((0x92, 0x7A, 0xC0, 0x8C, 0xD0, 0x84, 0x6C, 0x9C, 0x70, 0x43, 0xE6, 0xD4, 0x58, 0x5E, 0xD4, 0x85))
OCP_UUID = bytes((0xC1, 0x94, 0xD5, 0x5B, 0xE0, 0x94, 0x47, 0x94, 0xA2, 0x1D, 0x29, 0x99, 0x8F, 0x56, 0xBE, 0x6F))
KINDS = ("read", "write", "deallocate")
BUCKETS = 4
ALL_ONES = (1 << 64) - 1


def ocp_uuid_index(uuid_list: bytes) -> int:
    """The OCP UUID's index in an Identify UUID List (CNS 17h: 32-byte entries from byte 32, the
    UUID in each entry's bytes 16-31; indexes count from 1), 0 when absent (nvme-cli's rule)."""
    for i in range(127):
        entry = uuid_list[32 + 32 * i: 64 + 32 * i]
        if len(entry) < 32:
            break
        if entry[16:32] == OCP_UUID:
            return i + 1
    return 0


# ==================================================================================================
# The page and the feature's data
# ==================================================================================================

def threshold_ms(raw: int) -> int:
    return (raw + 1) * 5


def threshold_raw(ms: float) -> int:
    """A threshold in ms as the feature's byte: 5-ms steps from 5 to 1280 ms."""
    if ms != int(ms) or int(ms) % 5 or not 5 <= ms <= 1280:
        raise ValueError(f"{ms:g} ms is not a latency monitor threshold (5 to 1280 ms in steps of 5)")
    return int(ms) // 5 - 1


def stamp(value: int) -> dict[str, Any] | None:
    """An NVMe Timestamp (bits 47:0 ms, 48 synch, 51:49 origin: 1 = set by the host), None when all ones."""
    if value == ALL_ONES:
        return None
    return {"ms": value & ((1 << 48) - 1), "synch": (value >> 48) & 1, "origin": (value >> 49) & 7}


def _buckets(page: bytes, counters: int, stamps: int, measured: int, units: int) -> dict[str, Any]:
    """One set of buckets (active or static). Counters: [bucket][reserved, deallocate, write, read];
    stamps and measured latencies: [3 - bucket][deallocate, write, read] (nvme-cli's print order)."""
    order = {"deallocate": 0, "write": 1, "read": 2}
    out: dict[str, Any] = {"counts": {}, "measured_ms": {}, "stamps": {}}
    for k in KINDS:
        out["counts"][k] = [struct.unpack_from("<I", page, counters + 16 * b + 4 * (order[k] + 1))[0]
                            for b in range(BUCKETS)]
        out["measured_ms"][k] = [struct.unpack_from("<H", page, measured + 6 * (3 - b) + 2 * order[k])[0] or None
                                 for b in range(BUCKETS)]
        out["stamps"][k] = [stamp(struct.unpack_from("<Q", page, stamps + 24 * (3 - b) + 8 * order[k])[0])
                            for b in range(BUCKETS)]
    out["stamp_units"] = struct.unpack_from("<H", page, units)[0]
    return out


def parse_page(page: bytes) -> dict[str, Any]:
    """The 512-byte Latency Monitor log page (C3h) as a JSON-safe dict; ValueError when it is not one."""
    if len(page) < PAGE_BYTES:
        raise ValueError(f"latency monitor page too short ({len(page)} bytes, 512 expected)")
    guid = page[0x1F0:0x200]
    if guid != GUID:
        raise ValueError(f"log page C3h has GUID {guid[::-1].hex().upper()}, not the OCP latency monitor's "
                         f"{GUID[::-1].hex().upper()}")
    status = page[0]
    u16 = lambda o: struct.unpack_from("<H", page, o)[0]  # noqa: E731
    return {
        "log_page_version": u16(0x1EE), "guid": guid[::-1].hex().upper(),
        "feature_status": status, "enabled": bool(status & 1), "largest_mode_supported": bool(status & 2),
        "measured_latency_supported": bool(status & 4),
        "active_bucket_timer_min": 5 * u16(0x02), "active_bucket_timer_threshold_min": 5 * u16(0x04),
        "thresholds_ms": [threshold_ms(page[6 + i]) for i in range(4)],
        "thresholds_raw": [page[6 + i] for i in range(4)],
        "active_bucket_timer_threshold_raw": u16(0x04),
        "active_latency_config": u16(0x0A), "min_window_ms": 100 * page[0x0C],
        "active": _buckets(page, 0x20, 0x60, 0xC0, 0xD8),
        "static": _buckets(page, 0xF0, 0x130, 0x190, 0x1A8),
        "debug_log_trigger_enable": u16(0x1C0),
    }


def feature_data(thresholds_raw: list[int], *, timer_threshold: int = 0, config: int = 0, min_window: int = 0,
                 enable: bool = True) -> bytes:
    """Set Features C5h's 4096-byte data (LMD5-*): timer threshold, thresholds A-D, latency
    configuration, minimum window, debug log trigger 0, discard debug log 0, enable."""
    head = struct.pack("<H4BHBHBB", timer_threshold, *thresholds_raw, config, min_window, 0, 0, int(enable))
    return head + bytes(FEATURE_BYTES - len(head))


def largest_config(largest: bool) -> int:
    """Active Latency Configuration: bit 3 x bucket + (0 read, 1 write, 2 deallocate) = 1 keeps each
    bucket's largest latency (mode 1), 0 its first (mode 0)."""
    return 0x0FFF if largest else 0


def totals(page: dict[str, Any]) -> dict[str, list[int]]:
    """Commands per bucket over the test: the active buckets plus the static ones (which only a
    window that reached its timer threshold filled after the arming reset them)."""
    return {k: [a + s for a, s in zip(page["active"]["counts"][k], page["static"]["counts"][k])] for k in KINDS}


def worst(page: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Per command kind: the largest measured latency in any bucket and its stamp (None: none recorded)."""
    out: dict[str, dict[str, Any] | None] = {}
    for k in KINDS:
        best = None
        for side in ("active", "static"):
            for b in range(BUCKETS):
                ms = page[side]["measured_ms"][k][b]
                if ms and (best is None or ms > best["ms"]):
                    best = {"ms": ms, "bucket": b, "stamp": page[side]["stamps"][k][b]}
        out[k] = best
    return out


# ==================================================================================================
# The monitor a run uses
# ==================================================================================================

class Unavailable:
    """A target without the latency monitor (or a run that turned it off): one reason, nothing set."""

    available = False

    def __init__(self, reason: str):
        self.reason = reason

    def describe(self) -> str:
        return self.reason

    def arm(self) -> dict | None:
        return None

    def collect(self) -> dict | None:
        return None

    def restore(self) -> dict | None:
        return None

    def close(self) -> None:
        pass


class Monitor:
    """The latency monitor of one controller: ``arm`` before a test, ``collect`` after it, ``restore``
    at the end of the run. Never raises: a refused command is recorded as the step's error."""

    available = True
    reason = None

    def __init__(self, admin: Any, ctrl_dev: str, uuid_index: int, found: dict[str, Any], thresholds_ms: tuple,
                 clock: Callable[[], float] = time.time):
        self.admin, self.ctrl_dev, self.uuid_index = admin, ctrl_dev, uuid_index
        self.found = found  # the page read at the start: the configuration restored at the end
        self.thresholds_ms = [int(t) for t in thresholds_ms]
        self.largest = bool(found.get("largest_mode_supported"))
        self.clock = clock
        self.armed = False
        self.touched = False  # a Set Features was sent: the configuration found is set again at the end

    def describe(self) -> dict[str, Any]:
        """For the manifest: where, what is set, and the configuration found."""
        return {"available": True, "controller": self.ctrl_dev, "uuid_index": self.uuid_index,
                "thresholds_ms": self.thresholds_ms, "latency_mode": "largest" if self.largest else "first",
                "min_window_ms": 0, "save": False, "log_page_version": self.found.get("log_page_version"),
                "found": {k: self.found.get(k) for k in ("enabled", "thresholds_ms", "active_latency_config",
                                                         "min_window_ms", "active_bucket_timer_threshold_min")}}

    def _set(self, data: bytes) -> None:
        self.admin.set_feature(FID, data, save=False, uuid_index=self.uuid_index)

    def _read(self) -> dict[str, Any]:
        return parse_page(self.admin.get_log(LID, PAGE_BYTES, self.uuid_index))

    def arm(self) -> dict[str, Any]:
        """Set the thresholds (the buckets reset); the page read back proves what the drive took."""
        t = round(self.clock(), 3)
        self.touched = True
        try:
            self._set(feature_data([threshold_raw(ms) for ms in self.thresholds_ms],
                                   config=largest_config(self.largest)))
            back = self._read()
        except (OSError, ValueError) as exc:
            self.armed = False
            return {"armed_unix_s": t, "error": f"not armed: {exc}"}
        self.armed = True
        rec: dict[str, Any] = {"armed_unix_s": t, "thresholds_ms": back["thresholds_ms"],
                               "active_latency_config": back["active_latency_config"], "enabled": back["enabled"]}
        if back["thresholds_ms"] != self.thresholds_ms or not back["enabled"]:
            rec["error"] = (f"the drive reports thresholds {back['thresholds_ms']} ms, enabled {back['enabled']}, "
                            f"after ssdpts set {self.thresholds_ms} ms")
        return rec

    def collect(self) -> dict[str, Any] | None:
        """The page after the test: its buckets, worst latencies and the raw page (hex)."""
        if not self.armed:
            return None
        t = round(self.clock(), 3)
        try:
            raw = self.admin.get_log(LID, PAGE_BYTES, self.uuid_index)
            page = parse_page(raw)
        except (OSError, ValueError) as exc:
            return {"read_unix_s": t, "error": f"not read: {exc}"}
        return {"read_unix_s": t, "thresholds_ms": page["thresholds_ms"], "counts": totals(page),
                "worst": worst(page), "latency_mode": "largest" if page["active_latency_config"] else "first",
                "static_counts": sum(sum(v) for v in page["static"]["counts"].values()),
                "active_bucket_timer_min": page["active_bucket_timer_min"], "page_hex": raw[:PAGE_BYTES].hex()}

    def restore(self) -> dict[str, Any] | None:
        """The configuration found at the start set again (Save clear, as when arming)."""
        if not self.touched:
            return None
        f = self.found
        try:
            self._set(feature_data(list(f["thresholds_raw"]), timer_threshold=f["active_bucket_timer_threshold_raw"],
                                   config=f["active_latency_config"], min_window=f["min_window_ms"] // 100,
                                   enable=f["enabled"]))
        except (OSError, ValueError) as exc:
            return {"restored": False, "error": str(exc)}
        return {"restored": True, "thresholds_ms": f["thresholds_ms"], "enabled": f["enabled"],
                "note": "the drive's buckets were reset by setting the feature (OCP LMLLOG-14)"}

    def close(self) -> None:
        self.admin.close()


def make_monitor(target: Target, thresholds_ms: tuple = (), *, sysfs: Sysfs | None = None,
                 admin: Callable[[str], Any] | None = None) -> Monitor | Unavailable:
    """Decide once whether ``target`` has the latency monitor; never raises. ``thresholds_ms``
    empty: turned off by the run (nothing asked of the drive). ``admin``: Admin's constructor (tests)."""
    if not thresholds_ms:
        return Unavailable("off (--latmon-ms off)")
    try:
        return _probe(target, tuple(thresholds_ms), sysfs or tgt.host_sysfs(), admin or Admin)
    except Exception as exc:  # noqa: BLE001 - the monitor must never stop a run
        return Unavailable(not_available(f"latency monitor probe failed: {exc.__class__.__name__}: {exc}"))


def _probe(target: Target, thresholds_ms: tuple, sysfs: Sysfs, admin_of: Callable[[str], Any]) -> Monitor | Unavailable:
    iface = choice.of(target, sysfs)
    if not iface.latency_monitor:
        return Unavailable(not_available(f"{target.name} is {iface.named}, and only NVMe drives have the "
                                         "OCP latency monitor (log page C3h)"))
    ctrl = nvme_names(target, sysfs)[0] or (target.parent or target.name)
    ctrl_dev = f"/dev/{ctrl}"
    try:
        adm = admin_of(ctrl_dev)
    except OSError as exc:
        return Unavailable(not_available(f"cannot open {ctrl_dev} for admin commands ({exc})"))
    try:
        try:
            uuid_index = ocp_uuid_index(adm.uuid_list())
        except OSError:
            uuid_index = 0  # no UUID list (NVMe before 1.4): index 0, as nvme-cli
        try:
            raw = adm.get_log(LID, PAGE_BYTES, uuid_index)
        except OSError as exc:
            adm.close()
            return Unavailable(not_available(f"{ctrl_dev} refused log page C3h ({exc}): no OCP latency monitor"))
        try:
            found = parse_page(raw)
        except ValueError as exc:
            adm.close()
            return Unavailable(not_available(f"{ctrl_dev}: {exc}"))
        return Monitor(adm, ctrl_dev, uuid_index, found, thresholds_ms)
    except BaseException:
        adm.close()
        raise
