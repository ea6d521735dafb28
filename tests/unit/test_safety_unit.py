"""Pure tests of the safety guard, target identity and purge selection.

Block-device logic runs against a fake sysfs/procfs tree in tmp_path (target.SYSFS and
safety.PROC are read at call time for this), with blkid and the exclusive-open probe replaced,
so nothing here touches a real device.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ssdpts.device import fingerprint, marker
from ssdpts.device.purge import registry as purge
from ssdpts.device.safety import guard as safety
from ssdpts.device.safety import usage
from ssdpts.device import target as tgt
from ssdpts.device.target import Target, open_target
from ssdpts.errors import UserError

MiB = 1 << 20


def one_line(exc: pytest.ExceptionInfo[UserError]) -> str:
    message = str(exc.value)
    assert message and "\n" not in message, f"refusal must be one line: {message!r}"
    return message


def block(**overrides: object) -> Target:
    fields: dict[str, object] = dict(
        path="/dev/disk/by-id/nvme-Fake_SSD_S5GXNF0R123456X", real_path="/dev/fake0", kind="block",
        name="fake0", size_bytes=1 << 30, logical_block_size_bytes=512, physical_block_size_bytes=4096,
        model="Fake SSD 1TB", serial="S5GXNF0R123456X", vendor=None, firmware="1B2QGXA7",
        transport="nvme", rotational=False, removable=False, read_only=False, is_partition=False,
        parent=None, exists=True,
    )
    fields.update(overrides)
    return Target(**fields)  # type: ignore[arg-type]


# --- fake sysfs / procfs -----------------------------------------------------------------------------


class FakeSys:
    """A tiny /sys + /proc: devices live under sys/devices, class/block and dev/block link to them."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sys, self.proc = root / "sys", root / "proc"
        for d in ("devices", "class/block", "dev/block", "block"):
            (self.sys / d).mkdir(parents=True)
        (self.proc / "self").mkdir(parents=True)
        (self.proc / "self" / "mountinfo").write_text("")
        (self.proc / "swaps").write_text("Filename Type Size Used Priority\n")
        self.next_minor = 0
        self.signatures: dict[str, dict[str, str]] = {}
        monkeypatch.setattr(tgt, "SYSFS", str(self.sys))
        monkeypatch.setattr(safety, "PROC", str(self.proc))
        monkeypatch.setattr(safety, "SYSTEM_MOUNTPOINTS", ())
        monkeypatch.setattr(safety, "probe_signatures", lambda dev: (self.signatures.get(dev, {}), None))
        monkeypatch.setattr(safety, "_exclusive_probe", lambda nodes: ([], False, []))
        monkeypatch.setattr(tgt, "lsblk_info", lambda dev: {})

    def disk(self, name: str, *, size_bytes: int = 1 << 30, ro: bool = False, discard_max: int = 0) -> Path:
        return self._device(self.sys / "devices" / name, name, size_bytes, ro, disk=True, discard_max=discard_max)

    def partition(self, disk: str, name: str, *, size_bytes: int = 1 << 29) -> Path:
        path = self._device(self.sys / "devices" / disk / name, name, size_bytes, False, disk=False)
        (path / "partition").write_text("1\n")
        return path

    def _device(self, path: Path, name: str, size_bytes: int, ro: bool, *, disk: bool, discard_max: int = 0) -> Path:
        path.mkdir(parents=True)
        (path / "holders").mkdir()
        (path / "slaves").mkdir()
        (path / "size").write_text(f"{size_bytes // 512}\n")
        (path / "ro").write_text("1\n" if ro else "0\n")
        dev = f"250:{self.next_minor}"
        self.next_minor += 1
        (path / "dev").write_text(dev + "\n")
        if disk:
            (path / "queue").mkdir()
            for attr, value in (("logical_block_size", 512), ("physical_block_size", 4096),
                                ("rotational", 0), ("discard_max_bytes", discard_max)):
                (path / "queue" / attr).write_text(f"{value}\n")
            (path / "removable").write_text("0\n")
            (self.sys / "block" / name).symlink_to(path)
        (self.sys / "class" / "block" / name).symlink_to(path)
        (self.sys / "dev" / "block" / dev).symlink_to(path)
        return path

    def hold(self, lower: str, holder: str) -> None:
        (self.sys / "class" / "block" / lower / "holders" / holder).symlink_to(self.sys / "class" / "block" / holder)
        (self.sys / "class" / "block" / holder / "slaves" / lower).symlink_to(self.sys / "class" / "block" / lower)

    def mount(self, name: str, mountpoint: str, fstype: str = "ext4") -> None:
        dev = (self.sys / "class" / "block" / name / "dev").read_text().strip()
        with open(self.proc / "self" / "mountinfo", "a") as f:
            f.write(f"99 1 {dev} / {mountpoint} rw,relatime - {fstype} /dev/{name} rw\n")


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSys:
    return FakeSys(tmp_path, monkeypatch)


def fake_target(name: str, *, serial: str | None = "SER-0001", **overrides: object) -> Target:
    target = tgt.block_target_from_sysfs(name, path=f"/dev/{name}", real_path=f"/dev/{name}")
    fields = {f: getattr(target, f) for f in Target.__dataclass_fields__}
    fields.update(serial=serial, **overrides)
    return Target(**fields)  # type: ignore[arg-type]


# --- Target ----------------------------------------------------------------------------------------


def test_identity_label_and_to_dict() -> None:
    t = block()
    assert t.identity_label == "Fake_SSD_1TB-R123456X"
    assert block(model=None, serial=None, name="loop0").identity_label == "loop0"
    assert block(model="a/b: c", serial=None).identity_label == "a_b_c"
    assert json.loads(json.dumps(t.to_dict()))["serial"] == "S5GXNF0R123456X"


def test_block_target_from_fake_sysfs(fake: FakeSys) -> None:
    fake.disk("fake0", size_bytes=8 * MiB, ro=True)
    fake.partition("fake0", "fake0p1", size_bytes=4 * MiB)
    disk = tgt.block_target_from_sysfs("fake0")
    assert (disk.size_bytes, disk.read_only, disk.is_partition, disk.physical_block_size_bytes) == (8 * MiB, True, False, 4096)
    part = tgt.block_target_from_sysfs("fake0p1")
    assert part.is_partition and part.parent == "fake0" and part.size_bytes == 4 * MiB
    assert part.read_only  # through its disk
    assert tgt.partitions_of("fake0") == ["fake0p1"]
    assert [t.name for t in tgt.list_block_devices()] == ["fake0"]


def test_list_block_devices_skips_empty_and_detached_loops(fake: FakeSys) -> None:
    fake.disk("loop0")  # no loop/backing_file: not attached
    fake.disk("zram0", size_bytes=0)
    attached = fake.disk("loop1")
    (attached / "loop").mkdir()
    (attached / "loop" / "backing_file").write_text("/tmp/x.img\n")
    assert [t.name for t in tgt.list_block_devices()] == ["loop1"]


# --- open_target refusals --------------------------------------------------------------------------


def test_nonexistent_path_without_size_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError) as exc:
        open_target(str(tmp_path / "nope.img"))
    assert "does not exist" in one_line(exc) and "--size" in str(exc.value)


def test_nonexistent_parent_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError) as exc:
        open_target(str(tmp_path / "no-dir" / "f.img"), size_bytes=MiB)
    assert "does not exist" in one_line(exc)


def test_new_file_target(tmp_path: Path) -> None:
    t = open_target(str(tmp_path / "new.img"), size_bytes=64 * MiB)
    assert (t.kind, t.exists, t.size_bytes, t.name) == ("file", False, 64 * MiB, "new.img")
    assert not (tmp_path / "new.img").exists()  # identifying never creates


def test_bad_size_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError) as exc:
        open_target(str(tmp_path / "new.img"), size_bytes=0)
    one_line(exc)


def test_directory_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError) as exc:
        open_target(str(tmp_path))
    assert "is a directory" in one_line(exc)


def test_character_device_refused() -> None:
    with pytest.raises(UserError) as exc:
        open_target("/dev/null")
    assert "character device" in one_line(exc)


# --- confirmation matching -------------------------------------------------------------------------


def test_confirmation_matches_path_real_path_serial() -> None:
    t = block()
    assert safety.confirmation_matches(t, t.path)
    assert safety.confirmation_matches(t, "/dev/fake0")
    assert safety.confirmation_matches(t, "S5GXNF0R123456X")
    assert safety.confirmation_matches(t, "  S5GXNF0R123456X ")  # whitespace from a shell/prompt


@pytest.mark.parametrize("other", ["", "   ", "s5gxnf0r123456x", "S5GXNF0R123456", "/dev/fake1", "fake0", "/dev/fake"])
def test_confirmation_rejects_anything_else(other: str) -> None:
    assert not safety.confirmation_matches(block(), other)


def test_partition_is_not_confirmed_by_the_disk_serial() -> None:
    part = block(path="/dev/fake0p1", real_path="/dev/fake0p1", name="fake0p1", is_partition=True, parent="fake0")
    assert not safety.confirmation_matches(part, "S5GXNF0R123456X")
    assert safety.confirmation_matches(part, "/dev/fake0p1")
    assert safety.confirm_token(part) == "/dev/fake0p1"
    assert safety.confirm_token(block()) == "S5GXNF0R123456X"
    assert safety.confirm_token(block(serial=None)) == block().path


def test_confirmation_through_symlink_to_file(tmp_path: Path) -> None:
    real = tmp_path / "data.img"
    real.write_bytes(b"")
    link = tmp_path / "link.img"
    link.symlink_to(real)
    t = open_target(str(real), size_bytes=MiB)
    assert safety.confirmation_matches(t, str(link))
    assert not safety.confirmation_matches(t, str(tmp_path / "other.img"))


# --- check_writable on a fake block device -----------------------------------------------------------


def test_block_needs_confirmation(fake: FakeSys) -> None:
    fake.disk("fake0")
    t = fake_target("fake0")
    verdict = safety.assess(t)
    assert verdict.usable and verdict.needs_confirmation and verdict.reasons == ()
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=MiB, confirm=None)
    assert "--destroy-data-on=SER-0001" in one_line(exc)
    safety.check_writable(t, needed_bytes=MiB, confirm="SER-0001")
    safety.check_writable(t, needed_bytes=MiB, confirm="/dev/fake0")


def test_confirmation_naming_another_device(fake: FakeSys) -> None:
    fake.disk("fake0")
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm="/dev/sdb")
    assert one_line(exc).startswith("--destroy-data-on names /dev/sdb but the target is /dev/fake0 (serial SER-0001): ")


def test_empty_confirmation_refused(fake: FakeSys) -> None:
    fake.disk("fake0")
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm=" ")
    assert "empty" in one_line(exc)


def test_interactive_confirmation_by_serial(fake: FakeSys) -> None:
    fake.disk("fake0")
    t = fake_target("fake0")
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return "SER-0001\n"

    safety.check_writable(t, needed_bytes=MiB, confirm=None, interactive=True, ask=ask)
    assert "serial (SER-0001)" in prompts[0] and "\n" not in prompts[0]
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=MiB, confirm=None, interactive=True, ask=lambda p: "yes")
    assert "typed 'yes'" in one_line(exc)

    def eof(_p: str) -> str:
        raise EOFError

    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=MiB, confirm=None, interactive=True, ask=eof)
    assert "nothing typed" in one_line(exc)


def test_confirmation_given_skips_prompt(fake: FakeSys) -> None:
    fake.disk("fake0")

    def never(_p: str) -> str:
        raise AssertionError("must not prompt when --destroy-data-on is given")

    safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm="SER-0001", interactive=True, ask=never)


def test_filesystem_signature_named_in_refusal(fake: FakeSys) -> None:
    fake.disk("fake0")
    fake.signatures["/dev/fake0"] = {"TYPE": "ext4", "USAGE": "filesystem"}
    t = fake_target("fake0")
    assert safety.assess(t).existing_data == ("/dev/fake0 holds an ext4 filesystem",)
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=MiB, confirm=None)
    assert one_line(exc).startswith("/dev/fake0 holds an ext4 filesystem: pass --destroy-data-on=SER-0001")
    safety.check_writable(t, needed_bytes=MiB, confirm="SER-0001")


def test_partitions_named_in_refusal(fake: FakeSys) -> None:
    fake.disk("fake0")
    fake.partition("fake0", "fake0p1")
    fake.signatures["/dev/fake0"] = {"PTTYPE": "gpt"}
    fake.signatures["/dev/fake0p1"] = {"TYPE": "xfs", "USAGE": "filesystem"}
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm=None)
    message = one_line(exc)
    assert "/dev/fake0 has a gpt partition table with 1 partition (fake0p1)" in message
    assert "/dev/fake0p1 holds an xfs filesystem" in message


@pytest.mark.parametrize("kind, words", [
    ("zfs_member", "ZFS pool member"),
    ("LVM2_member", "LVM physical volume"),
    ("linux_raid_member", "Linux RAID (md) member"),
    ("isw_raid_member", "storage pool member"),
])
def test_member_signatures_refused_even_confirmed(fake: FakeSys, kind: str, words: str) -> None:
    fake.disk("fake0")
    fake.partition("fake0", "fake0p1")
    fake.signatures["/dev/fake0p1"] = {"TYPE": kind}
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm="SER-0001")
    assert f"/dev/fake0p1 is a {words}" in one_line(exc)


def test_holders_refused(fake: FakeSys) -> None:
    fake.disk("fake0")
    fake.disk("dm-0")
    (fake.sys / "class/block/dm-0/dm").mkdir()
    (fake.sys / "class/block/dm-0/dm/name").write_text("vg0-data\n")
    fake.hold("fake0", "dm-0")
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm="SER-0001")
    assert one_line(exc).startswith("/dev/fake0 is in use by /dev/dm-0 (vg0-data)")


def test_partition_holder_and_stacked_mount_refused(fake: FakeSys) -> None:
    fake.disk("fake0")
    fake.partition("fake0", "fake0p2")
    fake.disk("md0")
    fake.hold("fake0p2", "md0")
    fake.mount("md0", "/srv/data")
    verdict = safety.assess(fake_target("fake0"))
    assert not verdict.usable
    assert any("/dev/md0 (built on /dev/fake0) is mounted at /srv/data" in r for r in verdict.reasons)
    assert any("/dev/fake0p2 (a partition of /dev/fake0) is in use by /dev/md0" in r for r in verdict.reasons)


def test_mount_with_escaped_path_refused(fake: FakeSys) -> None:
    fake.disk("fake0")
    fake.mount("fake0", "/mnt/my\\040disk")
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm="SER-0001")
    assert one_line(exc) == "/dev/fake0 is mounted at /mnt/my disk: unmount it or pick another target"


def test_partition_target_refused_when_its_disk_is_mounted(fake: FakeSys) -> None:
    fake.disk("fake0")
    fake.partition("fake0", "fake0p1")
    fake.mount("fake0", "/mnt/whole")
    part = fake_target("fake0p1")
    with pytest.raises(UserError) as exc:
        safety.check_writable(part, needed_bytes=MiB, confirm="/dev/fake0p1")
    assert "/dev/fake0 (the disk /dev/fake0p1 is on) is mounted at /mnt/whole" in one_line(exc)


def test_read_only_and_small_refused(fake: FakeSys) -> None:
    fake.disk("fake0", size_bytes=8 * MiB, ro=True)
    verdict = safety.assess(fake_target("fake0"), needed_bytes=16 * MiB)
    assert any("read-only" in r for r in verdict.reasons)
    assert any("less than the 16 MiB" in r for r in verdict.reasons)


def test_exclusive_open_busy_refused(fake: FakeSys, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.disk("fake0")
    monkeypatch.setattr(safety, "_exclusive_probe", lambda nodes: (list(nodes.values()), False, []))
    with pytest.raises(UserError) as exc:
        safety.check_writable(fake_target("fake0"), needed_bytes=MiB, confirm="SER-0001")
    assert "in use" in one_line(exc)


# --- the running system ------------------------------------------------------------------------------


def test_whole_disks_walks_partitions_and_slaves(fake: FakeSys) -> None:
    fake.disk("sda")
    fake.partition("sda", "sda2")
    fake.disk("sdb")
    fake.partition("sdb", "sdb2")
    fake.disk("md0")
    fake.disk("dm-0")
    fake.hold("sda2", "md0")
    fake.hold("sdb2", "md0")
    fake.hold("md0", "dm-0")
    assert safety.whole_disks("dm-0") == {"sda", "sdb"}
    assert safety.whole_disks("sda2") == {"sda"}


def test_system_disk_and_its_partitions_refused(fake: FakeSys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root on dm-0 (e.g. LVM) on sda2: sda and sda1 are both refused, confirmed or not."""
    fake.disk("sda")
    fake.partition("sda", "sda1")
    fake.partition("sda", "sda2")
    fake.disk("dm-0")
    fake.hold("sda2", "dm-0")
    # Make "/" of this fake world the directory tmp_path, whose st_dev maps to dm-0.
    st = os.stat(tmp_path)
    link = fake.sys / "dev" / "block" / f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    link.symlink_to(fake.sys / "class" / "block" / "dm-0")
    monkeypatch.setattr(safety, "SYSTEM_MOUNTPOINTS", (str(tmp_path),))
    for name, confirm in (("sda", "SER-0001"), ("sda1", "/dev/sda1")):
        with pytest.raises(UserError) as exc:
            safety.check_writable(fake_target(name), needed_bytes=MiB, confirm=confirm)
        assert "holds the running system" in one_line(exc)
    verdict = safety.assess(fake_target("sda"))
    assert "signatures" not in verdict.details  # the system disk is not probed


def test_mountinfo_unescape() -> None:
    assert usage.unescape(r"/mnt/a\040b\011c\134d") == "/mnt/a b\tc\\d"
    assert usage.unescape("/plain\\x") == "/plain\\x"


# --- files and markers -------------------------------------------------------------------------------


def test_marker_files(tmp_path: Path) -> None:
    path = tmp_path / "t.img"
    assert not marker.is_ssdpts_file(str(path))
    path.write_bytes(b"\0" * 4096)
    marker.mark_created(str(path))
    assert marker.is_ssdpts_file(str(path))
    record = json.loads(Path(str(path) + ".ssdpts-target").read_text())
    assert record["created_by"] == "ssdpts" and record["path"] == str(path)
    assert record["identity"]["inode"] == path.stat().st_ino and record["identity"]["size_bytes"] == 4096
    Path(str(path) + ".ssdpts-target").write_text("{not json")
    assert not marker.is_ssdpts_file(str(path))
    Path(str(path) + ".ssdpts-target").write_text('{"created_by": "someone"}')
    assert not marker.is_ssdpts_file(str(path))
    # a marker from before file identities cannot tell its file from another
    Path(str(path) + ".ssdpts-target").write_text('{"created_by": "ssdpts", "format": 1, "path": "x"}')
    assert marker.marker_status(str(path)) == "old" and not marker.is_ssdpts_file(str(path))


def test_marker_vouches_for_one_file_only(tmp_path: Path) -> None:
    """The file ssdpts made is deleted and another one put at its name: not ssdpts's, even when the
    filesystem hands out the same inode number again (ext4 does) and the size is the same."""
    path = tmp_path / "t.img"
    path.write_bytes(b"\0" * 8192)
    marker.mark_created(str(path))
    ino = path.stat().st_ino
    path.unlink()
    path.write_bytes(b"user data".ljust(8192, b"."))
    assert marker.marker_status(str(path)) == "other"
    t = open_target(str(path))
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=0, confirm=None)
    assert "not the file ssdpts created there" in one_line(exc)
    with pytest.raises(UserError):
        purge.select_purge(t, "auto").run(t)
    assert path.read_bytes().startswith(b"user data")
    if path.stat().st_ino == ino:  # the interesting case: told apart by birth time / generation
        assert fingerprint.file_identity(str(path))["inode"] == ino
    # the same file grown or shrunk is not the file the marker vouches for either
    path.unlink()
    path.write_bytes(b"\0" * 4096)
    marker.mark_created(str(path))
    with open(path, "ab") as f:
        f.write(b"x")
    assert marker.marker_status(str(path)) == "other"


def test_existing_foreign_file_refused(tmp_path: Path) -> None:
    path = tmp_path / "precious.db"
    path.write_bytes(b"important")
    t = open_target(str(path), size_bytes=MiB)
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=0, confirm=None)
    assert "was not created by ssdpts" in one_line(exc)
    with pytest.raises(UserError):
        purge.select_purge(t, "auto").run(t)  # the purge re-checks too
    assert path.read_bytes() == b"important"


def test_marked_and_new_files_allowed(tmp_path: Path) -> None:
    new = open_target(str(tmp_path / "new.img"), size_bytes=MiB)
    assert not safety.assess(new).needs_confirmation
    safety.check_writable(new, needed_bytes=MiB, confirm=None)
    path = tmp_path / "ours.img"
    path.write_bytes(b"\0" * 4096)
    marker.mark_created(str(path))
    marker.seal(str(path))  # ssdpts finished writing it
    safety.check_writable(open_target(str(path)), needed_bytes=0, confirm=None)


def test_file_confirmation_must_match_if_given(tmp_path: Path) -> None:
    t = open_target(str(tmp_path / "new.img"), size_bytes=MiB)
    safety.check_writable(t, needed_bytes=MiB, confirm=str(tmp_path / "new.img"))
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=MiB, confirm="/dev/nvme0n1")
    assert "names /dev/nvme0n1" in one_line(exc)


def test_file_too_small_or_no_space(tmp_path: Path) -> None:
    t = open_target(str(tmp_path / "new.img"), size_bytes=MiB)
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=2 * MiB, confirm=None)
    assert "give a larger --size" in one_line(exc)
    huge = open_target(str(tmp_path / "huge.img"), size_bytes=1 << 60)
    with pytest.raises(UserError) as exc:
        safety.check_writable(huge, needed_bytes=0, confirm=None)
    assert "not enough free space" in one_line(exc)


@pytest.mark.parametrize("path", ["/dev/ssdpts-unit-test-nonexistent", "/proc/ssdpts-unit-test", "/sys/ssdpts-x"])
def test_pseudo_filesystem_paths_refused(path: str) -> None:
    t = open_target(path, size_bytes=MiB)  # identifying is harmless; writing is what is refused
    with pytest.raises(UserError) as exc:
        safety.check_writable(t, needed_bytes=0, confirm=None)
    assert "is not a block device" in one_line(exc)
    assert not os.path.exists(path)


# --- purge selection ---------------------------------------------------------------------------------


def test_select_purge_for_files(tmp_path: Path) -> None:
    t = open_target(str(tmp_path / "f.img"), size_bytes=MiB)
    assert purge.select_purge(t, "auto").name == "file-recreate"
    assert purge.select_purge(t, "none").disclosure == "none (user chose no purge: not PTS compliant)"
    with pytest.raises(UserError) as exc:
        purge.select_purge(t, "discard")
    assert "use one of auto, file-recreate, none" in one_line(exc)


def test_select_purge_unknown_lists_names(tmp_path: Path) -> None:
    t = open_target(str(tmp_path / "f.img"), size_bytes=MiB)
    with pytest.raises(UserError) as exc:
        purge.select_purge(t, "secure-erase")
    message = one_line(exc)
    for name in ("auto", "discard", "zero-fill", "file-recreate", "none"):
        assert name in message


def test_select_purge_auto_for_block_follows_discard_support(fake: FakeSys) -> None:
    fake.disk("fake0", discard_max=1 << 30)
    fake.disk("fake1", discard_max=0)
    fake.partition("fake0", "fake0p1")
    assert purge.select_purge(fake_target("fake0"), "auto").name == "discard"
    assert purge.select_purge(fake_target("fake0p1"), "auto").name == "discard"  # queue of its disk
    zero = purge.select_purge(fake_target("fake1"), "auto")
    assert (zero.name, zero.disclosure) == ("zero-fill", "zero-fill (fallback, not a PTS purge)")
    assert purge.select_purge(fake_target("fake1"), "discard").disclosure == "discard (fallback, not a PTS purge)"
    with pytest.raises(UserError):
        purge.select_purge(fake_target("fake1"), "file-recreate")


def test_none_purge_record(tmp_path: Path) -> None:
    t = open_target(str(tmp_path / "f.img"), size_bytes=MiB)
    record = purge.select_purge(t, "none").run(t)
    assert record.method == "none" and not record.is_pts_purge and record.duration_s == 0.0
    assert record.started_at.endswith("+00:00")
    json.dumps(record.to_dict())
    assert not (tmp_path / "f.img").exists()


def test_file_recreate_purge_makes_sparse_marked_file(tmp_path: Path) -> None:
    path = tmp_path / "f.img"
    t = open_target(str(path), size_bytes=8 * MiB)
    lines: list[str] = []
    record = purge.select_purge(t, "file-recreate").run(t, log=lines.append)
    assert path.stat().st_size == 8 * MiB
    assert path.stat().st_blocks * 512 < 8 * MiB  # sparse
    assert marker.is_ssdpts_file(str(path)) and lines
    assert record.method == "file-recreate" and not record.is_pts_purge
