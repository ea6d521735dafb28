"""Telemetry: block counters, the NVMe SMART log page, source selection and throttle warnings.

Devices are faked (a sysfs tree in tmp_path, a fake NVMe admin ioctl); recorded nvme-cli smart-log
JSON (tests/fixtures/tools) is the reference the raw log page parser must agree with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ssdpts.device import fields, nvme_admin, telemetry
from ssdpts.results import throttle
from ssdpts.device.interfaces import nvme
from ssdpts.device import target as tgt
from ssdpts.device.tools import FakeTools, Sysfs

TOOLS = Path(__file__).parents[1] / "fixtures" / "tools"


def build_smart_log_page(fields: dict[str, Any]) -> bytes:
    """Inverse of telemetry.parse_smart_log_page: kelvin and raw counters in nvme-cli's key names (a
    test fixture: product code never builds a log page)."""
    page = bytearray(512)
    cw = nvme.critical_warning_int(fields.get("critical_warning")) or 0
    page[0] = cw
    page[1:3] = int(fields.get("temperature", 0)).to_bytes(2, "little")
    page[3], page[4], page[5] = (int(fields.get(k, 0)) for k in ("avail_spare", "spare_thresh", "percent_used"))
    for off, key in ((32, "data_units_read"), (48, "data_units_written"), (64, "host_read_commands"),
                     (80, "host_write_commands"), (96, "controller_busy_time"), (112, "power_cycles"),
                     (128, "power_on_hours"), (144, "unsafe_shutdowns"), (160, "media_errors"),
                     (176, "num_err_log_entries")):
        page[off:off + 16] = int(fields.get(key, 0)).to_bytes(16, "little")
    page[192:196] = int(fields.get("warning_temp_time", 0)).to_bytes(4, "little")
    page[196:200] = int(fields.get("critical_comp_time", 0)).to_bytes(4, "little")
    for i in range(8):
        page[200 + 2 * i:202 + 2 * i] = int(fields.get(f"temperature_sensor_{i + 1}", 0)).to_bytes(2, "little")
    for off, key in ((216, "thm_temp1_trans_count"), (220, "thm_temp2_trans_count"),
                     (224, "thm_temp1_total_time"), (228, "thm_temp2_total_time")):
        page[off:off + 4] = int(fields.get(key, 0)).to_bytes(4, "little")
    return bytes(page)


def fixture_json(name: str) -> dict:
    return json.loads((TOOLS / name).read_text(encoding="utf-8"))


# --- block counters -------------------------------------------------------------------------------


def test_block_stat_17_fields_recorded() -> None:
    s = telemetry.parse_block_stat((TOOLS / "sysfs-block-stat-vda-local.txt").read_text())
    assert list(s) == list(telemetry.STAT_FIELDS)
    assert s["reads_completed"] == 7580015 and s["sectors_written"] == 505212287 and s["flush_time_ms"] == 5202
    assert set(telemetry.STAT_FIELDS) == {f.name for f in fields.group_fields("block_stat")}


def test_block_stat_old_kernels() -> None:
    assert len(telemetry.parse_block_stat("1 2 3 4 5 6 7 8 9 10 11")) == 11  # before 4.18: no discard/flush


# --- the SMART / Health log page ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nvme-cli-2.3-smart-log.json", "nvme-cli-2.11-smart-log-seagate-firecuda530.json",
                                  "nvme-cli-2.16-smart-log-samsung-pm981a.json"])
def test_log_page_parser_agrees_with_nvme_cli(name: str) -> None:
    """The ioctl path and the nvme-cli path must produce the same snapshot for the same log."""
    doc = fixture_json(name)
    page = build_smart_log_page(doc)
    assert len(page) == 512
    raw = telemetry._keep(telemetry.parse_smart_log_page(page))
    cli = telemetry._keep(nvme.parse_nvme_smart_log(doc))
    assert raw == cli


def test_log_page_layout_offsets() -> None:
    page = bytearray(512)
    page[0] = 0x02  # temperature warning
    page[1:3] = (350).to_bytes(2, "little")
    page[48:64] = (10**20).to_bytes(16, "little")  # 128-bit counters
    page[220:224] = (7).to_bytes(4, "little")
    page[202:204] = (300).to_bytes(2, "little")  # sensor 2 only
    s = telemetry.parse_smart_log_page(bytes(page))
    assert s["critical_warning"] == 2 and s["composite_temperature_c"] == pytest.approx(76.85)
    assert s["data_units_written"] == 10**20 and s["thermal_mgmt_t2_transitions"] == 7
    assert s["temperature_sensors_c"] == [pytest.approx(26.85)]
    with pytest.raises(ValueError):
        telemetry.parse_smart_log_page(b"\0" * 100)


def test_admin_ioctl_number() -> None:
    # _IOWR('N', 0x41, struct nvme_admin_cmd) from linux/nvme_ioctl.h
    assert nvme_admin.NVME_IOCTL_ADMIN_CMD == 0xC0484E41
    limits = telemetry.temperature_limits_from_id_ctrl(bytes(266) + (355).to_bytes(2, "little") + (358).to_bytes(2, "little"))
    assert limits == {"warning_temp_c": pytest.approx(81.85), "critical_temp_c": pytest.approx(84.85)}


# --- sources on fake devices ----------------------------------------------------------------------


def _fake_block(root: Path, name: str, parent: Path | None = None) -> Path:
    d = (parent or root / "devices" / "virtual" / "block") / name
    (d / "queue").mkdir(parents=True)
    for f, v in (("size", "131072"), ("ro", "0"), ("removable", "0"), ("dev", "7:3"),
                 ("stat", "10 0 80 1 20 0 160 2 0 3 3 0 0 0 0 0 0")):
        (d / f).write_text(v + "\n")
    for f, v in (("logical_block_size", "512"), ("physical_block_size", "512"), ("rotational", "1")):
        (d / "queue" / f).write_text(v + "\n")
    (root / "class" / "block").mkdir(parents=True, exist_ok=True)
    (root / "class" / "block" / name).symlink_to(d)
    return d


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    root = tmp_path / "sys"
    root.mkdir()
    return root


def source(root: Path, name: str, tools: FakeTools | None = None, **kw) -> telemetry.TelemetrySource:
    """A telemetry source on kernel device ``name`` of the fake sysfs tree ``root`` (no tool installed
    unless ``tools`` says otherwise)."""
    tree, tools = Sysfs(str(root)), tools or FakeTools(installed=set())
    return telemetry.make_source(tgt.block_target_from_sysfs(name, sysfs=tree, tools=tools), sysfs=tree, tools=tools,
                                 **kw)


def test_loop_source_has_block_counters_and_says_why_no_health(sysfs: Path) -> None:
    _fake_block(sysfs, "loop3")
    src = source(sysfs, "loop3")
    assert src.available and "loop3 is a loop device" in src.reason
    snap = src.snapshot()
    assert snap["health"].startswith("not available: loop3 is a loop device")
    assert snap["block"]["sectors_written"] == 160 and snap["snapshot_ms"] >= 0
    assert "composite_temperature_c" not in snap
    json.dumps(snap)


def test_snapshot_never_raises(sysfs: Path) -> None:
    d = _fake_block(sysfs, "loop4")
    src = source(sysfs, "loop4")
    (d / "stat").unlink()
    snap = src.snapshot()
    assert snap["block"].startswith("not available: cannot read")


class FakeAdmin:
    calls = 0

    def __init__(self, ctrl_dev: str):
        self.ctrl_dev = ctrl_dev

    def smart_log(self) -> bytes:
        FakeAdmin.calls += 1
        doc = dict(fixture_json("nvme-cli-2.11-smart-log-seagate-firecuda530.json"))
        doc["thm_temp1_trans_count"] = 3 + FakeAdmin.calls
        return build_smart_log_page(doc)

    def identify_controller(self) -> bytes:
        return bytes(266) + (343).to_bytes(2, "little") + (353).to_bytes(2, "little")

    def get_log(self, lid: int, length: int = 512, uuid_index: int = 0) -> bytes:
        if lid == 0x02:
            return self.smart_log()
        raise OSError("NVMe status 0x4109")  # a drive without the log (QEMU's answer to C0h)

    def close(self) -> None:
        pass


def _fake_nvme(sysfs: Path) -> None:
    ctrl = sysfs / "devices" / "pci0000:00" / "0000:01:00.0" / "nvme" / "nvme0"
    ctrl.mkdir(parents=True)
    ns = _fake_block(sysfs, "nvme0n1", parent=ctrl)
    (ns / "device").symlink_to(ctrl)
    (sysfs / "class" / "nvme").mkdir(parents=True)
    (sysfs / "class" / "nvme" / "nvme0").symlink_to(ctrl)


def test_nvme_source_uses_the_admin_ioctl(sysfs: Path) -> None:
    _fake_nvme(sysfs)
    src = source(sysfs, "nvme0n1", nvme_admin=FakeAdmin)
    assert src.available and src.reason is None and src.health_method == "nvme-ioctl"
    a, b = src.snapshot(), src.snapshot()
    assert a["health"] == "nvme-ioctl" and a["composite_temperature_c"] == pytest.approx(50.85)
    assert a["warning_temp_c"] == pytest.approx(69.85)  # from Identify Controller WCTEMP
    assert b["thermal_mgmt_t1_transitions"] == a["thermal_mgmt_t1_transitions"] + 1
    assert a["block"]["reads_completed"] == 10
    assert src.describe()["health"] == "nvme-ioctl"


def test_nvme_source_falls_back_to_nvme_cli(sysfs: Path) -> None:
    _fake_nvme(sysfs)

    class Refused:
        def __init__(self, dev):
            raise PermissionError(13, "Permission denied")

    log = (TOOLS / "nvme-cli-2.16-smart-log-samsung-pm981a.json").read_text()
    info = {"nvme": fields.build_group("nvme", {"warning_temp_c": 84.85, "critical_temp_c": 87.85}, "-")}
    src = source(sysfs, "nvme0n1", FakeTools({(): log}), nvme_admin=Refused, info=info)
    snap = src.snapshot()
    assert src.health_method == "nvme-cli smart-log" and snap["temperature_sensors_c"] == [48.85, 70.85]
    assert snap["warning_temp_c"] == 84.85


def test_nvme_source_without_any_way_says_why(sysfs: Path) -> None:
    _fake_nvme(sysfs)

    class Refused:
        def __init__(self, dev):
            raise FileNotFoundError(2, "No such file or directory")

    src = source(sysfs, "nvme0n1", nvme_admin=Refused)
    assert src.available  # block counters still
    assert src.reason.startswith("not available: NVMe admin ioctl on /dev/nvme0 refused")
    assert src.snapshot()["health"] == src.health_reason


def test_make_source_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a, **k):
        raise RuntimeError("x")

    monkeypatch.setattr(telemetry, "_make_source", boom)
    src = telemetry.make_source(None)  # type: ignore[arg-type]
    assert not src.available and "telemetry setup failed" in src.reason
    assert src.snapshot()["health"].startswith("not available")


# --- throttle warnings ----------------------------------------------------------------------------


def snap(t: float, temp: float, t1: int = 0, warn: float | None = 70.0, cw: int = 0) -> dict:
    s = {"t_unix_s": t, "composite_temperature_c": temp, "thermal_mgmt_t1_transitions": t1,
         "thermal_mgmt_t1_time_s": t1 * 10, "critical_warning": cw, "health": "nvme-ioctl"}
    if warn is not None:
        s["warning_temp_c"] = warn
    return s


def test_no_warning_for_a_cool_steady_drive() -> None:
    assert throttle.throttle_warnings([snap(i * 60, 45.0) for i in range(10)], (0, 600)) == []


def test_throttle_counters_rising_inside_the_window() -> None:
    samples = [snap(i * 60, 60.0, t1=(0 if i < 6 else 2)) for i in range(10)]
    w = throttle.throttle_warnings(samples, (300, 540))
    assert len(w) == 1 and "throttled inside the steady-state window" in w[0]
    assert "T1 (light throttle) transitions +2" in w[0] and ": " in w[0]
    assert throttle.throttle_warnings(samples, (0, 300)) == []  # before the rise: nothing


def test_warning_temperature_crossed() -> None:
    samples = [snap(0, 60.0), snap(60, 71.5), snap(120, 69.0)]
    w = throttle.throttle_warnings(samples, (0, 120))
    assert len(w) == 1 and "71.5 °C" in w[0] and "70.0 °C" in w[0]
    assert throttle.throttle_warnings(samples, (0, 120), warning_temp_c=80.0) == []
    no_limit = [snap(0, 90.0, warn=None)]
    assert throttle.throttle_warnings(no_limit) == []  # unknown limit: no guess


def test_critical_warning_bit_and_step_records() -> None:
    steps = [{"telemetry": {"available": True, "before": snap(0, 50.0), "after": snap(60, 50.0, cw=2)}},
             {"telemetry": {"available": False, "reason": "not available: loop"}}]
    w = throttle.throttle_warnings(steps)
    assert len(w) == 1 and "critical warning" in w[0]
    assert throttle.throttle_warnings([{"available": False, "reason": "x"}, "junk", None]) == []
