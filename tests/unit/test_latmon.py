"""The OCP latency monitor (device/latmon.py): the C3h page parsed as nvme-cli's OCP plugin lays it out,
the C5h feature data as its set-latency-monitor-feature builds it, support decided once, and a run
that arms it after each test's purge and reads it after the test's last round (FakeExecutor) — and
on a drive without it, one line and nothing else.

No recorded `nvme ocp latency-monitor-log` output or C3h page from a real drive was found in public
sources (tests/fixtures/SOURCES.md): the pages here are built from nvme-cli's own structure
(plugins/ocp/ocp-nvme.h ``struct ssd_latency_monitor_log``: offsets written out below, independently
of the module under test) and read back as its JSON printer (``json_c3_log``) reads them."""

from __future__ import annotations

import json
from pathlib import Path
import struct

import pytest

from ssdpts.device import latmon, nvme_admin
from ssdpts.device.side import LocalSide
from ssdpts.device.target import Target, open_target
from ssdpts.device.tools import Sysfs
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import UserError
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.session import start_run

MiB = 2**20
GUID_LE = bytes.fromhex("85D45E58D4E643709C6C84D08CC07A92")[::-1]  # nvme-cli prints the GUID reversed
NA = (1 << 64) - 1


def build_page(*, status=0x07, timer=0, timer_threshold=0x7E0, th=(1, 2, 5, 19), config=0xFFF, window=0,
               active=None, measured=None, stamps=None, static=None, version=4, guid=GUID_LE) -> bytes:
    """A C3h page at nvme-cli's offsets: counters[bucket][0 reserved, 1 trim, 2 write, 3 read] at 0x20,
    stamps[3 - bucket][0 trim, 1 write, 2 read] at 0x60, measured latency likewise at 0xC0, static
    counters at 0xF0; version at 0x1EE, GUID at 0x1F0. ``active``/``static``: {(bucket, kind): n};
    ``measured``: {(bucket, kind): ms}; ``stamps``: {(bucket, kind): u64}."""
    p = bytearray(512)
    p[0] = status
    struct.pack_into("<HH4BHB", p, 2, timer, timer_threshold, *th, config, window)
    col = {"deallocate": 1, "write": 2, "read": 3}
    for (b, k), n in (active or {}).items():
        struct.pack_into("<I", p, 0x20 + 16 * b + 4 * col[k], n)
    for (b, k), n in (static or {}).items():
        struct.pack_into("<I", p, 0xF0 + 16 * b + 4 * col[k], n)
    for b in range(4):
        for k in ("deallocate", "write", "read"):
            struct.pack_into("<Q", p, 0x60 + 24 * (3 - b) + 8 * (col[k] - 1), (stamps or {}).get((b, k), NA))
            struct.pack_into("<H", p, 0xC0 + 6 * (3 - b) + 2 * (col[k] - 1), (measured or {}).get((b, k), 0))
            struct.pack_into("<Q", p, 0x130 + 24 * (3 - b) + 8 * (col[k] - 1), NA)
    struct.pack_into("<H", p, 0x1EE, version)
    p[0x1F0:0x200] = guid
    return bytes(p)


# ---- the page ---------------------------------------------------------------------------------------

def test_page_parsed_as_nvme_cli_reads_it():
    host_set = (1 << 49) | 1_700_000_123_456  # origin 1 (set by the host), ms since the epoch
    page = build_page(active={(0, "read"): 7, (1, "read"): 2, (3, "write"): 1, (2, "deallocate"): 4},
                      measured={(1, "read"): 23, (3, "write"): 480, (2, "deallocate"): 77},
                      stamps={(1, "read"): host_set, (3, "write"): 12_345})
    got = latmon.parse_page(page)
    # json_c3_log: "Active Threshold A" = 5 * (raw + 1); timer threshold x 5 min; GUID printed reversed
    assert got["thresholds_ms"] == [10, 15, 30, 100]
    assert got["active_bucket_timer_threshold_min"] == 5 * 0x7E0
    assert got["guid"] == "85D45E58D4E643709C6C84D08CC07A92" and got["log_page_version"] == 4
    assert got["enabled"] and got["largest_mode_supported"] and got["measured_latency_supported"]
    a = got["active"]
    assert a["counts"] == {"read": [7, 2, 0, 0], "write": [0, 0, 0, 1], "deallocate": [0, 0, 4, 0]}
    # measured latency and stamps lie bucket 3 first: nvme-cli's [3 - i] (commit b60d1f697)
    assert a["measured_ms"]["read"] == [None, 23, None, None]
    assert a["measured_ms"]["write"] == [None, None, None, 480]
    assert a["measured_ms"]["deallocate"] == [None, None, 77, None]
    assert a["stamps"]["read"][1] == {"ms": 1_700_000_123_456, "synch": 0, "origin": 1}
    assert a["stamps"]["write"][3] == {"ms": 12_345, "synch": 0, "origin": 0}
    assert a["stamps"]["read"][0] is None  # all ones: no event
    assert latmon.worst(got)["write"] == {"ms": 480, "bucket": 3, "stamp": {"ms": 12_345, "synch": 0, "origin": 0}}
    assert latmon.worst(got)["read"]["ms"] == 23
    json.dumps(got)


def test_static_buckets_count_toward_the_test():
    page = latmon.parse_page(build_page(active={(0, "read"): 3}, static={(0, "read"): 5, (2, "write"): 1}))
    assert latmon.totals(page) == {"read": [8, 0, 0, 0], "write": [0, 0, 1, 0], "deallocate": [0, 0, 0, 0]}


def test_a_page_without_the_guid_is_not_the_monitor():
    with pytest.raises(ValueError, match="not the OCP latency monitor"):
        latmon.parse_page(build_page(guid=bytes(16)))
    with pytest.raises(ValueError, match="too short"):
        latmon.parse_page(bytes(100))


def test_feature_data_as_set_latency_monitor_feature_builds_it():
    data = latmon.feature_data([1, 2, 5, 19], config=0xFFF)
    assert len(data) == 4096
    # struct feature_latency_monitor: timer threshold u16, A-D, config u16, window, debug trigger u16,
    # discard debug log, enable; the rest reserved
    assert struct.unpack_from("<H4BHBHBB", data, 0) == (0, 1, 2, 5, 19, 0xFFF, 0, 0, 0, 1)
    assert not any(data[13:])
    assert [latmon.threshold_raw(ms) for ms in (10, 15, 30, 100)] == [1, 2, 5, 19]
    for bad in (0, 7, 1285, 12.5):
        with pytest.raises(ValueError):
            latmon.threshold_raw(bad)


def test_ocp_uuid_index_from_the_uuid_list():
    lst = bytearray(4096)
    lst[32 + 32 * 2 + 16: 32 + 32 * 2 + 32] = latmon.OCP_UUID
    assert latmon.ocp_uuid_index(bytes(lst)) == 3
    assert latmon.ocp_uuid_index(bytes(4096)) == 0


def test_thresholds_option_is_checked():
    assert RunSpec(tests=("iops",), latmon_ms=()).latmon_ms == ()
    assert "latmon_ms" not in RunSpec(tests=("iops",)).to_dict()  # the default is not recorded
    assert RunSpec.from_dict(RunSpec(tests=("iops",), latmon_ms=()).to_dict()).latmon_ms == ()
    for bad in ((10, 15, 30), (15, 10, 30, 100), (10, 15, 30, 1300), (10, 12, 30, 100)):
        with pytest.raises(UserError, match="--latmon-ms"):
            RunSpec(tests=("iops",), latmon_ms=bad)


# ---- a drive, and support decided once ---------------------------------------------------------------

class FakeDrive:
    """An OCP drive's admin queue: Set Features C5h loads the thresholds and resets the buckets
    (LMLLOG-14); every Get Log Page C3h after an arming sees ``per_read`` more slow commands."""

    log: list = []

    def __init__(self, ctrl_dev: str, *, status=0x07, per_read=None):
        self.ctrl_dev = ctrl_dev
        self.status = status
        self.th, self.config, self.window, self.timer_threshold, self.enabled = [1, 2, 5, 19], 0xFFF, 10, 0x7E0, True
        self.counts: dict = {}
        self.per_read = per_read or {(0, "read"): 5, (3, "write"): 1}
        FakeDrive.log = []

    def uuid_list(self) -> bytes:
        raise OSError("NVMe status 0x4002")

    def get_log(self, lid: int, length: int, uuid_index: int = 0) -> bytes:
        assert lid == 0xC3 and length == 512
        FakeDrive.log.append(("get", lid))
        for k, n in self.per_read.items():
            self.counts[k] = self.counts.get(k, 0) + n
        return build_page(status=(self.status & ~1) | int(self.enabled), th=tuple(self.th), config=self.config,
                          window=self.window, timer_threshold=self.timer_threshold, active=self.counts,
                          measured={(3, "write"): 250} if self.counts else None)

    def set_feature(self, fid: int, data: bytes, *, save: bool = False, uuid_index: int = 0) -> None:
        assert fid == 0xC5 and len(data) == 4096 and not save
        self.timer_threshold, *th, self.config, self.window, _trig, _discard, en = struct.unpack_from("<H4BHBHBB", data)
        self.th, self.enabled = list(th), bool(en)
        self.counts = {}
        FakeDrive.log.append(("set", tuple(th), self.config, self.window, en))

    def close(self) -> None:
        FakeDrive.log.append(("close",))


def _nvme_sysfs(root: Path) -> Sysfs:
    ctrl = root / "devices" / "pci0000:00" / "0000:01:00.0" / "nvme" / "nvme0"
    ns = ctrl / "nvme0n1"
    ns.mkdir(parents=True)
    (ns / "device").symlink_to(ctrl)
    (root / "class" / "block").mkdir(parents=True)
    (root / "class" / "block" / "nvme0n1").symlink_to(ns)
    return Sysfs(str(root))


def _block(name: str) -> Target:
    return Target(path=f"/dev/{name}", real_path=f"/dev/{name}", kind="block", name=name, size_bytes=1 << 30,
                  logical_block_size_bytes=512, physical_block_size_bytes=512, model=None, serial=None, vendor=None,
                  firmware=None, transport=None, rotational=False, removable=False, read_only=False,
                  is_partition=False, parent=None, exists=True)


def _nvme_target() -> Target:
    return _block("nvme0n1")


def test_an_ocp_drive_is_found_and_its_configuration_kept(tmp_path):
    mon = latmon.make_monitor(_nvme_target(), (10, 15, 30, 100), sysfs=_nvme_sysfs(tmp_path / "sys"), admin=FakeDrive)
    assert mon.available and mon.describe()["controller"] == "/dev/nvme0"
    assert mon.describe()["found"]["min_window_ms"] == 1000 and mon.describe()["latency_mode"] == "largest"


@pytest.mark.parametrize("admin, why", [
    (lambda dev: (_ for _ in ()).throw(PermissionError(13, "Permission denied")), "cannot open /dev/nvme0"),
])
def test_a_controller_that_cannot_be_opened_is_one_reason(tmp_path, admin, why):
    mon = latmon.make_monitor(_nvme_target(), (10, 15, 30, 100), sysfs=_nvme_sysfs(tmp_path / "sys"), admin=admin)
    assert not mon.available and mon.reason.startswith("not available: ") and why in mon.reason


def test_qemus_nvme_refuses_the_page_one_reason_nothing_set(tmp_path):
    class Qemu(FakeDrive):
        def get_log(self, lid, length, uuid_index=0):
            raise nvme_admin.AdminError("NVMe status 0x4002")  # Invalid Field | DNR: QEMU's answer to C3h

    mon = latmon.make_monitor(_nvme_target(), (10, 15, 30, 100), sysfs=_nvme_sysfs(tmp_path / "sys"), admin=Qemu)
    assert not mon.available
    assert mon.reason == "not available: /dev/nvme0 refused log page C3h (NVMe status 0x4002): no OCP latency monitor"
    assert ("set",) not in [e[:1] for e in FakeDrive.log] and FakeDrive.log[-1] == ("close",)
    assert mon.arm() is None and mon.collect() is None and mon.restore() is None


def test_other_devices_and_off_are_one_reason(tmp_path):
    loop = _block("loop3")
    assert latmon.make_monitor(loop, (10, 15, 30, 100), sysfs=Sysfs(str(tmp_path))).reason == (
        "not available: loop3 is a loop device, and only NVMe drives have the OCP latency monitor (log page C3h)")
    assert latmon.make_monitor(loop, ()).reason == "off (--latmon-ms off)"


def test_arm_collect_restore_on_the_drive(tmp_path):
    mon = latmon.make_monitor(_nvme_target(), (10, 15, 30, 100), sysfs=_nvme_sysfs(tmp_path / "sys"), admin=FakeDrive)
    armed = mon.arm()
    assert armed["thresholds_ms"] == [10, 15, 30, 100] and "error" not in armed
    assert FakeDrive.log[0] == ("get", 0xC3) and FakeDrive.log[1] == ("set", (1, 2, 5, 19), 0xFFF, 0, 1)
    got = mon.collect()
    # the fake counts 5 slow reads more at every read of the page: the arming's read-back and this one
    assert got["counts"]["read"][0] == 10 and got["counts"]["write"][3] == 2
    assert got["worst"]["write"]["ms"] == 250 and got["latency_mode"] == "largest"
    assert len(bytes.fromhex(got["page_hex"])) == 512
    restored = mon.restore()
    assert restored["restored"] and FakeDrive.log[-1] == ("set", (1, 2, 5, 19), 0xFFF, 10, 1)  # window 1 s back


def test_a_drive_without_largest_mode_keeps_the_first(tmp_path):
    def first_only(dev):
        return FakeDrive(dev, status=0x05)

    mon = latmon.make_monitor(_nvme_target(), (10, 15, 30, 100), sysfs=_nvme_sysfs(tmp_path / "sys"), admin=first_only)
    mon.arm()
    assert FakeDrive.log[1][2] == 0 and mon.collect()["latency_mode"] == "first"


def test_a_drive_that_did_not_take_the_thresholds_says_so(tmp_path):
    class Deaf(FakeDrive):
        def set_feature(self, fid, data, *, save=False, uuid_index=0):
            self.counts = {}

    mon = latmon.make_monitor(_nvme_target(), (20, 40, 60, 80), sysfs=_nvme_sysfs(tmp_path / "sys"), admin=Deaf)
    assert "after ssdpts set [20, 40, 60, 80] ms" in mon.arm()["error"]


# ---- a run --------------------------------------------------------------------------------------------

class Progress:
    def __init__(self):
        self.lines: list[str] = []

    def message(self, text):
        self.lines.append(text)

    def __getattr__(self, name):
        return lambda *a, **k: None


class OcpSide(LocalSide):
    """A file target whose 'drive' has the latency monitor (FakeDrive behind device/latmon.py)."""

    def purge(self, requested, info, log):
        FakeDrive.log.append(("purge", requested))
        return super().purge(requested, info, log)

    def start_latmon(self, thresholds_ms):
        self.latmon = latmon.Monitor(FakeDrive("/dev/nvme9"), "/dev/nvme9", 0,
                                     latmon.parse_page(build_page(th=(0, 1, 2, 3), window=10)), thresholds_ms)
        return self.latmon


SPEC = RunSpec(tests=("ocp-trim", "iops"), step_seconds=1, max_rounds=5, ocp_read_s=2, ocp_settle_s=1)


class LoggedExecutor(FakeExecutor):
    def run(self, batch):
        FakeDrive.log.append(("run", batch.steps[0].test))
        return super().run(batch)


def _run(tmp: Path, side_cls=None, spec=SPEC):
    tmp.mkdir(parents=True, exist_ok=True)
    t = open_target(str(tmp / "a.img"), size_bytes=256 * MiB)
    prog = Progress()
    store, _ = start_run(spec, t, executor=LoggedExecutor(), out_dir=tmp / "runs", confirm=None, argv=["test"],
                         progress=prog, side=side_cls(t) if side_cls else None)
    man = json.loads((store.path / "manifest.json").read_text())
    steps = [json.loads(ln) for ln in (store.path / "steps.jsonl").read_text().splitlines() if ln.strip()]
    return store, man, steps, prog


def test_a_run_arms_after_each_purge_and_reads_after_the_last_round(tmp_path):
    store, man, steps, prog = _run(tmp_path, OcpSide)
    assert man["latency_monitor"]["available"] and man["latency_monitor"]["thresholds_ms"] == [10, 15, 30, 100]
    assert not [ln for ln in prog.lines if ln.startswith("latency monitor")]
    sets = [e for e in FakeDrive.log if e[0] == "set"]
    assert len(sets) == 3  # one arming per test, then the configuration found set back
    assert sets[-1] == ("set", (0, 1, 2, 3), 0xFFF, 10, 1) and man["latency_monitor_restored"]["restored"]
    for pid, part in man["parts"].items():
        rec = part["latency_monitor"]
        assert rec["counts"]["read"][0] == 10 and rec["worst"]["write"]["ms"] == 250 and rec["session"] == 0
    # in the order the drive saw it: probe; per test: its purge, the arming, its batches, the page read
    seen = [e[:2] for e in FakeDrive.log if e[0] in ("set", "get", "run", "purge")]
    for test in ("ocp-trim", "iops"):
        runs = [i for i, e in enumerate(seen) if e == ("run", test)]
        arm = max(i for i, e in enumerate(seen[:runs[0]]) if e[0] == "set")
        assert seen[arm - 1][0] == "purge" and seen[arm + 1][0] == "get"  # the arming's read-back
        assert seen[runs[-1] + 1][0] == "get"  # read after the last batch
        assert all(e[0] == "run" for e in seen[arm + 2: runs[-1] + 1])
    from ssdpts.report.assemble import load

    rep = load(store.path)
    tables = [b for s in rep.sections for b in s.blocks if getattr(b, "id", "").endswith("-latmon")]
    assert len(tables) == 2 and tables[0].columns == ["Bucket", "Reads", "Writes", "Deallocations"]
    assert tables[0].rows[0][0].text == "bucket 0: 10–15 ms" and tables[0].rows[0][1].text == "10"
    assert tables[0].rows[4][2].text == "250"


def part_test(pid: str) -> str:
    return pid.split(":")[0] if ":" in pid else pid


def test_without_the_monitor_one_line_and_nothing_else(tmp_path):
    """A file target (no NVMe drive under the run): the reason once on the console, once in the
    manifest and once on the report; no part records anything of it, and the run's records are
    those of the same run with the monitor off but for that line."""
    store, man, steps, prog = _run(tmp_path / "a")
    lines = [ln for ln in prog.lines if "latency monitor" in ln]
    assert len(lines) == 1 and lines[0].startswith("latency monitor: not available: a.img is a file")
    assert man["latency_monitor"] == lines[0].removeprefix("latency monitor: ")
    assert not any("latency_monitor" in p for p in man["parts"].values()) and "latency_monitor_restored" not in man
    store_off, man_off, steps_off, prog_off = _run(tmp_path / "b", spec=SPEC.with_(latmon_ms=()))
    assert man_off["latency_monitor"] == "off (--latmon-ms off)"
    assert [ln for ln in prog_off.lines if "latency monitor" in ln] == ["latency monitor: off (--latmon-ms off)"]
    assert set(man) == set(man_off) and man["run_spec"].keys() - {"latmon_ms"} == man_off["run_spec"].keys() - {"latmon_ms"}
    assert [(s["test"], s["label"]) for s in steps] == [(s["test"], s["label"]) for s in steps_off]
    from ssdpts.report.assemble import load

    texts = [b.title for s in load(store.path).front for b in s.blocks if getattr(b, "kind", "") == "alert"]
    assert [t for t in texts if "latency monitor" in t] == [f"latency monitor: {man['latency_monitor']}"]
    assert not [s for s in load(store.path).sections if s.id.endswith("-latmon")]


def test_through_the_agent_a_file_has_no_monitor(tmp_path):
    """A device on another host is probed there (device/remote/agent.py 'latmon'): the same one reason."""
    import sys

    from ssdpts.device.remote.remote import RemoteSide

    src = str(Path(__file__).resolve().parents[2] / "src")
    agent = (sys.executable, "-c", "import sys; from ssdpts.cli.main import main; sys.exit(main())")
    with RemoteSide(["env", f"PYTHONPATH={src}"], str(tmp_path / "t.bin"), name="rack1", command=agent,
                    size_bytes=8 << 20) as s:
        with s.claimed(s.target.size_bytes, None, False):
            mon = s.start_latmon((10, 15, 30, 100))
            assert not mon.available and mon.reason.startswith("not available: t.bin is a file")
            assert mon.describe() == mon.reason and mon.arm() is None and mon.collect() is None
            assert s.finish_latmon() is None
