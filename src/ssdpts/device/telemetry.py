"""Telemetry around every step: device health (temperature, wear, throttling) and block-layer counters.

The data set (docs/design.md#data-set) records nvme smart-log before and after every one-minute WDPC step so heating
and wear can be modelled. The runner calls :meth:`TelemetrySource.snapshot` when the step gate
reports a boundary (engine.fio ``on_boundary``, never in the gate's way: sampling adds no gap
between steps); each snapshot carries its own time and steps are matched to the nearest ones. A
snapshot should still be cheap, so that it lands close to its boundary. What each source costs:

* **block counters** (every block device, also loop/zram/virtio): one read of
  ``/sys/class/block/NAME/stat`` — tens of microseconds.
* **NVMe health**: the SMART / Health Information log page (02h) read with the
  ``NVME_IOCTL_ADMIN_CMD`` ioctl on the controller's character device, opened once — well under a
  millisecond, no process started. Admin commands go to the admin queue, not the I/O queues, so
  they do not disturb the measured I/O. Fallback when the ioctl is refused (not root, old
  kernel): ``nvme smart-log -o json`` (one process per snapshot, a few ms), then smartctl.
* **ATA/SCSI health**: ``smartctl -j -A`` (+ ``-l devstat`` on ATA) — one process, typically
  10-50 ms. On SATA a SMART read is a non-queued command that briefly drains the NCQ queue; at
  one read per step (one per minute in a PTS run) that is negligible, and it is disclosed here.

Every snapshot is a flat dict (units in the names, the same names as identify's "smart" group)::

    {"t_unix_s": 1700000000.123, "snapshot_ms": 0.4,
     "health": "nvme-ioctl" | "not available: <why>",
     "composite_temperature_c": 41.85, "temperature_sensors_c": [...], "data_units_written": ...,
     "warning_temp_c": 81.85, "critical_temp_c": 84.85,
     "block": {"reads_completed": ..., "sectors_written": ..., "io_ticks_ms": ...} | "not available: <why>"}

Health fields a device does not report are left out of the snapshot. results/throttle.py reads
them back: a drive that throttled or crossed its warning temperature inside the steady-state
window, because measurements there describe the cooling, not the drive.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

from ssdpts.device import mediawrites
from ssdpts.device import target as tgt
from ssdpts.device.block import file_backing_disk
from ssdpts.device.fields import not_available, value
from ssdpts.device.interfaces import ata, choice, nvme
from ssdpts.device.interfaces.base import Interface
from ssdpts.device.nvme_admin import Admin, nvme_names
from ssdpts.device.target import Target
from ssdpts.device.tools import Sysfs, Tools, install_hint, parse_json

# ==================================================================================================
# /sys/class/block/NAME/stat
# ==================================================================================================

STAT_FIELDS = ("reads_completed", "reads_merged", "sectors_read", "read_time_ms", "writes_completed",
               "writes_merged", "sectors_written", "write_time_ms", "in_flight", "io_ticks_ms", "time_in_queue_ms",
               "discards_completed", "discards_merged", "sectors_discarded", "discard_time_ms",
               "flushes_completed", "flush_time_ms")


def parse_block_stat(text: str) -> dict[str, int]:
    """Documentation/block/stat.rst: 11 fields, 15 from 4.18 (discard), 17 from 5.5 (flush)."""
    values = [int(x) for x in text.split()]
    return dict(zip(STAT_FIELDS, values))


def block_stat_path(name: str, sysfs: Sysfs | None = None) -> str:
    return os.path.join((sysfs or tgt.host_sysfs()).block_dir(name), "stat")


# ==================================================================================================
# NVMe SMART / Health log (read through device/nvme_admin.py)
# ==================================================================================================


def _u128(b: bytes) -> int:
    return int.from_bytes(b, "little")


def parse_smart_log_page(page: bytes) -> dict[str, Any]:
    """The 512-byte SMART / Health Information log (NVMe base spec, log page 02h) → smart fields."""
    if len(page) < 232:
        raise ValueError(f"SMART log page too short ({len(page)} bytes)")

    def u16(o):
        return int.from_bytes(page[o:o + 2], "little")

    def u32(o):
        return int.from_bytes(page[o:o + 4], "little")

    sensors = [nvme.kelvin_to_c(u16(200 + 2 * i)) for i in range(8)]
    dur, duw = _u128(page[32:48]), _u128(page[48:64])
    return {
        "critical_warning": page[0],
        "composite_temperature_c": nvme.kelvin_to_c(u16(1)),
        "available_spare_pct": page[3], "available_spare_threshold_pct": page[4], "percentage_used_pct": page[5],
        "data_units_read": dur, "data_units_written": duw,
        "data_read_bytes": dur * 512_000, "data_written_bytes": duw * 512_000,
        "host_read_commands": _u128(page[64:80]), "host_write_commands": _u128(page[80:96]),
        "controller_busy_time_min": _u128(page[96:112]), "power_cycles": _u128(page[112:128]),
        "power_on_hours": _u128(page[128:144]), "unsafe_shutdowns": _u128(page[144:160]),
        "media_errors": _u128(page[160:176]), "error_log_entries": _u128(page[176:192]),
        "warning_temp_time_min": u32(192), "critical_temp_time_min": u32(196),
        "temperature_sensors_c": [s for s in sensors if s is not None] or None,
        "thermal_mgmt_t1_transitions": u32(216), "thermal_mgmt_t2_transitions": u32(220),
        "thermal_mgmt_t1_time_s": u32(224), "thermal_mgmt_t2_time_s": u32(228),
    }


def temperature_limits_from_id_ctrl(data: bytes) -> dict[str, float | None]:
    """WCTEMP (bytes 266-267) and CCTEMP (268-269) of the Identify Controller data structure."""
    return {"warning_temp_c": nvme.kelvin_to_c(int.from_bytes(data[266:268], "little")),
            "critical_temp_c": nvme.kelvin_to_c(int.from_bytes(data[268:270], "little"))}


# ==================================================================================================
# Health readers
# ==================================================================================================

HealthReader = Callable[[], dict[str, Any]]
_KEEP = ("critical_warning", "composite_temperature_c", "temperature_sensors_c", "available_spare_pct",
         "percentage_used_pct", "data_units_read", "data_units_written", "data_read_bytes", "data_written_bytes",
         "host_read_commands", "host_write_commands", "controller_busy_time_min", "power_on_hours",
         "unsafe_shutdowns", "media_errors", "error_log_entries", "warning_temp_time_min", "critical_temp_time_min",
         "thermal_mgmt_t1_transitions", "thermal_mgmt_t2_transitions", "thermal_mgmt_t1_time_s",
         "thermal_mgmt_t2_time_s", *mediawrites.FIELDS)


def _keep(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in _KEEP if d.get(k) is not None}


def _smartctl_reader(dev: str, cls: str, tools: Tools) -> HealthReader:
    argv = ["smartctl", "-j", "-A", *choice.for_class(cls).smartctl_health_args, dev]

    def read() -> dict[str, Any]:
        res = tools.run(argv, timeout=10, ok_codes=lambda rc: rc & 0x3 == 0)
        if not res.ok:
            raise OSError(res.reason)
        return _keep(ata.parse_smartctl(parse_json(res.stdout))["smart"])

    return read


def _nvme_cli_reader(ctrl_dev: str, tools: Tools) -> HealthReader:
    def read() -> dict[str, Any]:
        res = tools.run(["nvme", "smart-log", ctrl_dev, "-o", "json"], timeout=10)
        if not res.ok:
            raise OSError(res.reason)
        return _keep(nvme.parse_nvme_smart_log(parse_json(res.stdout)))

    return read


# ==================================================================================================
# The source
# ==================================================================================================


class TelemetrySource:
    """``available``: some telemetry (health or block counters) can be sampled; ``reason``: why a
    part is missing (None when nothing is). ``snapshot()`` never raises."""

    def __init__(self, *, block_name: str | None, block_reason: str | None, health: HealthReader | None,
                 health_method: str | None, health_reason: str | None, limits: dict[str, Any] | None = None,
                 closer: Callable[[], None] | None = None, sysfs: Sysfs | None = None, media: str | None = None):
        self.block_name = block_name
        self.block_stat = block_stat_path(block_name, sysfs) if block_name else None
        self.block_reason = block_reason
        self.health = health
        self.health_method = health_method
        self.health_reason = health_reason
        self.limits = {k: v for k, v in (limits or {}).items() if v is not None}
        self._closer = closer
        self.media = media  # how the media (physical) writes are read, or why not (mediawrites.py)
        self.available = bool(block_name) or health is not None
        missing = [r for r in (health_reason, block_reason) if r]
        self.reason = "; ".join(missing) if missing else None
        self.last_ms: float | None = None

    def describe(self) -> dict[str, Any]:
        """For the manifest: what is sampled and how."""
        out = {"available": self.available, "health": self.health_method or self.health_reason,
               "block": f"/sys/class/block/{self.block_name}/stat" if self.block_name else self.block_reason,
               **self.limits}
        if self.media:
            out["media_writes"] = self.media
        return out

    def snapshot(self) -> dict[str, Any]:
        t0 = time.perf_counter()
        snap: dict[str, Any] = {"t_unix_s": round(time.time(), 3)}
        if self.health is not None:
            try:
                snap.update(self.health())
                snap["health"] = self.health_method
            except Exception as exc:  # noqa: BLE001 - telemetry must never stop a measurement
                snap["health"] = not_available(f"{self.health_method} failed: {exc}")
        else:
            snap["health"] = self.health_reason
        snap.update(self.limits)
        if self.block_name:
            try:
                with open(self.block_stat, encoding="ascii") as f:
                    snap["block"] = parse_block_stat(f.read())
            except (OSError, ValueError) as exc:
                snap["block"] = not_available(f"cannot read {self.block_stat}: {exc}")
        else:
            snap["block"] = self.block_reason
        self.last_ms = (time.perf_counter() - t0) * 1000
        snap["snapshot_ms"] = round(self.last_ms, 3)
        return snap

    def close(self) -> None:
        if self._closer:
            try:
                self._closer()
            except OSError:
                pass
            self._closer = None


def _no_health_reason(iface: Interface, name: str) -> str:
    return not_available(f"{name} is {iface.health_what}: no temperature/wear/throttle log; block-layer counters only")


def make_source(target: Target, *, info: dict | None = None, prefer: str | None = None, tools: Tools | None = None,
                sysfs: Sysfs | None = None, nvme_admin: Callable[[str], Any] | None = None) -> TelemetrySource:
    """Pick the cheapest working way to sample ``target``; never raises.

    ``info``: identify.collect()'s result, for the warning/critical temperatures (id-ctrl) and the
    device class. ``prefer``: force "nvme-cli" or "smartctl" (tests, or a misbehaving ioctl).
    ``tools`` (read-only), ``sysfs`` and ``nvme_admin`` (nvme_admin.Admin's constructor): the seams to the host.
    """
    try:
        return _make_source(target, info, prefer, _Host(tools or Tools(), sysfs or tgt.host_sysfs(),
                                                        nvme_admin or Admin))
    except Exception as exc:  # noqa: BLE001 - telemetry must never stop a run
        reason = not_available(f"telemetry setup failed: {exc.__class__.__name__}: {exc}")
        return TelemetrySource(block_name=None, block_reason=reason, health=None, health_method=None,
                               health_reason=reason)


class _Host:
    def __init__(self, tools: Tools, sysfs: Sysfs, nvme_admin: Callable[[str], Any]):
        self.tools, self.sysfs, self.nvme_admin = tools, sysfs, nvme_admin


def _make_source(target: Target, info: dict | None, prefer: str | None, host: _Host) -> TelemetrySource:
    iface = choice.of(target, host.sysfs)
    block_name, block_reason = None, None
    if target.kind == "file":
        backing = file_backing_disk(target, host.sysfs)
        if backing is None:
            reason = not_available(f"{target.path} is on a filesystem without a backing block device")
            return TelemetrySource(block_name=None, block_reason=reason, health=None, health_method=None,
                                   health_reason=reason)
        disk_target = tgt.block_target_from_sysfs(backing, sysfs=host.sysfs, tools=host.tools)
        src = _make_source(disk_target, info, prefer, host)
        src.block_reason = None
        src.reason = src.health_reason
        src.health_method = src.health_method and f"{src.health_method} ({backing}, the disk under the file)"
        return src
    # Partitions have their own stat file; health is the whole drive's.
    if os.path.exists(block_stat_path(target.name, host.sysfs)):
        block_name = target.name
    else:
        block_reason = not_available(f"no {block_stat_path(target.name, host.sysfs)}")
    limits: dict[str, Any] = {}
    if info:
        limits = {"warning_temp_c": value(info, "nvme", "warning_temp_c"),
                  "critical_temp_c": value(info, "nvme", "critical_temp_c")}
    disk = target.parent or target.name
    health, method, reasons, closer, media = None, None, [], None, None
    if iface.health:
        health, method, reasons, closer, media = _HEALTH[iface.health](target, disk, prefer, host, limits, iface)
    health_reason = None
    if health is None:
        health_reason = (not_available("; ".join(reasons)) if reasons
                         else _no_health_reason(iface, disk))
    return TelemetrySource(block_name=block_name, block_reason=block_reason, health=health, health_method=method,
                           health_reason=health_reason, limits=limits, closer=closer, sysfs=host.sysfs, media=media)


def _smartctl_health(target: Target, disk: str, prefer: str | None, host: _Host, limits: dict[str, Any],
                     iface: Interface):
    """(reader, method, reasons, closer, media) of a disk smartctl speaks for (ATA, SCSI, a USB bridge)."""
    health, method, media, reasons = None, None, None, []
    if host.tools.which("smartctl") is None:
        reasons.append(install_hint("smartctl"))
    else:
        reader = _smartctl_reader(f"/dev/{disk}", iface.cls, host.tools)
        try:
            first = reader()
            health, method = reader, "smartctl"
            media = _ata_media(first) if iface.smartctl_media else None
        except (OSError, ValueError) as exc:
            reasons.append(str(exc))
    return health, method, reasons, None, media


def _refssd_health(target: Target, disk: str, prefer: str | None, host: _Host, limits: dict[str, Any],
                   iface: Interface):
    """(reader, method, reasons, closer, media) of a loop device: the reference SSD's counters, where it rests on one."""
    health, method = _refssd_reader(target.name, host)
    return health, method, [], None, method and "the reference SSD's flash pages programmed (refssd ctl)"


def _nvme_health(target: Target, disk: str, prefer: str | None, host: _Host, limits: dict[str, Any],
                 iface: Interface):
    """(reader, method, reasons, closer, media) of an NVMe drive: the admin ioctl, else nvme-cli, else
    smartctl; the OCP C0h log beside it where the drive has one. ``limits`` gains id-ctrl's temperatures."""
    health: HealthReader | None = None
    method, closer, media, admin = None, None, None, None
    reasons: list[str] = []
    ctrl = nvme_names(target, host.sysfs)[0] or disk
    ctrl_dev = f"/dev/{ctrl}"
    if prefer in (None, "ioctl"):
        try:
            admin = host.nvme_admin(ctrl_dev)
            parse_smart_log_page(admin.smart_log())  # prove it works once
            if not limits.get("warning_temp_c"):
                try:
                    limits.update(temperature_limits_from_id_ctrl(admin.identify_controller()))
                except OSError:
                    pass
            health = lambda: _keep(parse_smart_log_page(admin.smart_log()))  # noqa: E731
            method, closer = "nvme-ioctl", admin.close
        except OSError as exc:
            admin = None
            reasons.append(f"NVMe admin ioctl on {ctrl_dev} refused ({exc})")
    if health is None and prefer in (None, "nvme-cli") and host.tools.which("nvme"):
        reader = _nvme_cli_reader(ctrl_dev, host.tools)
        try:
            reader()
            health, method = reader, "nvme-cli smart-log"
        except OSError as exc:
            reasons.append(str(exc))
    if health is None and host.tools.which("smartctl"):
        reader = _smartctl_reader(ctrl_dev, iface.cls, host.tools)
        try:
            reader()
            health, method = reader, "smartctl"
        except (OSError, ValueError) as exc:
            reasons.append(str(exc))
    if health is None and not reasons:
        reasons.append("install nvme-cli, or run as root for the NVMe admin ioctl")
    if health is not None:
        health, media = _with_ocp_media(health, admin, ctrl_dev, host.tools)
    return health, method, reasons, closer, media


# ==================================================================================================
# Media (physical) writes: decided once per source, read with the health fields (mediawrites.py)
# ==================================================================================================


def _refssd_reader(loop: str, host: _Host) -> tuple[HealthReader | None, str | None]:
    """The reference SSD's counters when the loop device rests on a refssd ``disk`` (its ``ctl`` beside it)."""
    ctl = mediawrites.refssd_ctl_for(host.sysfs.block_attr(loop, "loop", "backing_file"))
    if ctl is None:
        return None, None
    try:
        mediawrites.read_refssd_ctl(ctl)
    except (OSError, ValueError):
        return None, None
    return (lambda: mediawrites.read_refssd_ctl(ctl)), f"refssd-ctl ({ctl}: the reference SSD's own counters)"


def _with_ocp_media(health: HealthReader, admin: Any, ctrl_dev: str, tools: Tools) -> tuple[HealthReader, str]:
    """The health reader, with the OCP C0h log read beside it when the drive has the log; else the
    same reader and why not (one line in the run's telemetry description, nothing per snapshot)."""
    media: Callable[[], dict[str, Any]] | None = None
    if admin is not None:
        try:
            mediawrites.parse_ocp_smart_page(admin.get_log(mediawrites.LID_OCP_SMART))
            media = lambda: mediawrites.parse_ocp_smart_page(admin.get_log(mediawrites.LID_OCP_SMART))  # noqa: E731
            how = "OCP SMART extended log C0h (nvme-ioctl)"
        except (OSError, ValueError) as exc:
            return health, not_available(f"{ctrl_dev} has no OCP SMART / Health Information Extended log "
                                         f"(C0h): {exc}")
    elif tools.which("nvme"):
        def media() -> dict[str, Any]:
            res = tools.run(["nvme", "ocp", "smart-add-log", ctrl_dev, "-o", "json"], timeout=10)
            if not res.ok:
                raise OSError(res.reason)
            return mediawrites.parse_ocp_smart_add_log(res.stdout)
        try:
            media()
            how = "OCP SMART extended log C0h (nvme ocp smart-add-log)"
        except (OSError, ValueError) as exc:
            return health, not_available(f"nvme ocp smart-add-log {ctrl_dev}: {exc}")
    else:
        return health, not_available("the OCP C0h log needs the NVMe admin ioctl (root) or nvme-cli")

    def read() -> dict[str, Any]:
        out = health()
        try:
            out.update(media())
        except (OSError, ValueError) as exc:  # the field is left out of this snapshot, and why
            out["physical_media_error"] = f"{exc}"
        return out

    return read, how


def _ata_media(first: dict[str, Any]) -> str:
    if "physical_media_attribute" in first:
        return f"ATA attribute {first['physical_media_attribute']} (smartctl; drivedb's name)"
    if "nand_program_pages" in first:
        return "ATA 247 + 248 program page counts (smartctl; WAF from their ratio)"
    return not_available("no ATA attribute known to count NAND writes (device/mediawrites.py lists them)")


# Each interface names its health reader family (interfaces/base.py: Interface.health).
_HEALTH = {"nvme": _nvme_health, "smartctl": _smartctl_health, "refssd": _refssd_health}
