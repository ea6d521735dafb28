"""device/fingerprint.py: which changes make a device another device, and when the identity is proven.
The real fingerprints of loop and zram devices are exercised in tests/integration/test_wrong_device.py."""

from __future__ import annotations

import pytest

from ssdpts.device import fingerprint


def drive(**kw) -> dict:
    fp = {"format": 1, "kind": "block", "class": "drive", "path": "/dev/disk/by-id/nvme-X", "real_path": "/dev/nvme0n1",
          "devnum": "259:0", "model": "ACME X1", "serial": "SN123", "firmware": "1.0", "wwid": "eui.0011",
          "eui": None, "nguid": None, "uuid": None, "size_bytes": 10**12, "logical_block_size_bytes": 512,
          "physical_block_size_bytes": 4096, "read_only": False, "diskseq": 7, "boot_id": "b1",
          "partition": None, "loop": None, "zram": None}
    fp.update(kw)
    return fp


def loop(**kw) -> dict:
    fp = drive(**{"class": "loop", "path": "/dev/loop3", "real_path": "/dev/loop3", "devnum": "7:3", "model": None,
                  "serial": None, "firmware": None, "wwid": None, "diskseq": 90})
    fp["loop"] = {"backing_file": "/img/A.img", "backing_dev": "254:0", "backing_inode": 12, "offset_bytes": 0,
                  "sizelimit_bytes": 0, "direct_io": True, "autoclear": False}
    fp["loop"].update(kw.pop("loop", {}))
    fp.update(kw)
    return fp


def test_a_drive_found_under_another_node_is_the_same_drive():
    before, now = drive(), drive(real_path="/dev/nvme1n1", devnum="259:5", diskseq=12, boot_id="b2")
    assert fingerprint.differences(before, now) == []
    assert fingerprint.proven_same(before, now) == "same serial SN123"


@pytest.mark.parametrize("field,value,label", [
    ("serial", "SN999", "serial"), ("firmware", "2.0", "firmware"), ("size_bytes", 10**12 - 4096, "capacity"),
    ("logical_block_size_bytes", 4096, "logical block size"), ("wwid", "eui.0022", "WWID"), ("model", "ACME X2", "model"),
])
def test_a_drive_that_differs_in_an_identifying_field_is_another(field, value, label):
    (diff,) = fingerprint.differences(drive(), drive(**{field: value}))
    assert diff[0] == label


def test_without_a_serial_the_node_is_part_of_the_identity():
    before = drive(serial=None, wwid=None, model="QEMU HARDDISK")
    (diff,) = fingerprint.differences(before, drive(serial=None, wwid=None, model="QEMU HARDDISK", real_path="/dev/vdb"))
    assert diff == ("resolved path", "/dev/nvme0n1", "/dev/vdb")
    assert fingerprint.proven_same(before, before) is None


def test_loop_device_reattached_to_another_file():
    diffs = fingerprint.differences(loop(), loop(loop={"backing_file": "/img/B.img", "backing_inode": 13}, diskseq=92))
    assert [d[0] for d in diffs] == ["backing file", "backing file's inode"]
    msg = fingerprint.describe_difference("/dev/loop3", *diffs[0])
    assert msg == "/dev/loop3 is not the device this run started on: its backing file was '/img/A.img', now '/img/B.img'"


def test_loop_device_proof_is_its_diskseq_in_this_boot():
    assert fingerprint.proven_same(loop(), loop()).startswith("same loop device instance")
    again = loop(diskseq=95)  # the same file attached again: a reused inode number would look the same
    assert fingerprint.differences(loop(), again) == []
    assert fingerprint.proven_same(loop(), again) is None
    assert "attached again" in fingerprint.why_unproven(loop(), again)
    assert "restarted" in fingerprint.why_unproven(loop(), loop(boot_id="b9"))


def test_zram_is_never_proven():
    z = drive(**{"class": "zram", "path": "/dev/zram1", "real_path": "/dev/zram1", "serial": None, "wwid": None,
                 "model": None, "zram": {"disksize_bytes": 2**29, "comp_algorithm": "lzo-rle"}})
    assert fingerprint.differences(z, z) == []
    assert fingerprint.proven_same(z, z) is None
    assert "zram" in fingerprint.why_unproven(z, z)
    (diff,) = fingerprint.differences(z, {**z, "zram": {"disksize_bytes": 2**29, "comp_algorithm": "zstd"}})
    assert diff[0] == "zram compression algorithm"


def test_file_targets_compare_path_and_size_only():
    f = {"kind": "file", "class": "file", "path": "t.img", "real_path": "/d/t.img", "size_bytes": 2**26,
         "file": {"dev": "8:1", "inode": 5, "size_bytes": 2**26, "btime_ns": 1, "generation": 2}}
    recreated = {**f, "file": {**f["file"], "inode": 6, "btime_ns": 3}}  # the purge recreates the file
    assert fingerprint.differences(f, recreated) == []
    assert fingerprint.differences(f, {**f, "real_path": "/e/t.img"})[0][0] == "resolved path"
    assert fingerprint.differences(f, drive())[0][0] == "kind"


def test_same_file_ignores_what_the_filesystem_does_not_keep():
    rec = {"dev": "8:1", "inode": 5, "size_bytes": 10, "btime_ns": None, "generation": 4}
    assert fingerprint.same_file(rec, {**rec, "btime_ns": 99})
    assert not fingerprint.same_file(rec, {**rec, "generation": 5})
    assert not fingerprint.same_file(rec, None) and not fingerprint.same_file(None, rec)


def test_file_identity_tells_a_new_file_from_the_old_one(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 100)
    old = fingerprint.file_identity(str(p))
    assert old["size_bytes"] == 100 and old["inode"] == p.stat().st_ino
    p.unlink()
    p.write_bytes(b"y" * 100)
    new = fingerprint.file_identity(str(p))
    assert not fingerprint.same_file(old, new)
    assert fingerprint.file_identity(str(tmp_path / "absent")) is None
    assert fingerprint.file_identity(str(tmp_path)) is None  # a directory is not a file target


def test_zram_algorithm_in_brackets():
    assert fingerprint._selected("lzo [lz4] zstd") == "lz4"
    assert fingerprint._selected("zstd") == "zstd" and fingerprint._selected(None) is None


def test_a_partition_of_a_loop_device_carries_the_disks_backing_file():
    p = loop(**{"class": "partition", "path": "/dev/loop3p1", "real_path": "/dev/loop3p1",
                "partition": {"disk": "loop3", "number": 1, "start_sector": 2048, "sectors": 100}})
    assert fingerprint.proven_same(p, p).startswith("same loop device instance")
    other = {**p, "loop": {**p["loop"], "backing_file": "/img/B.img", "backing_inode": 13}, "diskseq": 99}
    assert [d[0] for d in fingerprint.differences(p, other)] == ["backing file", "backing file's inode"]
    moved = {**p, "partition": {**p["partition"], "start_sector": 4096}}
    assert [d[0] for d in fingerprint.differences(p, moved)] == ["partition start"]


def test_a_backing_file_is_the_same_by_its_identity_whatever_path_names_it():
    """A hard link or a rename of the backing file is the same file (its device and inode); another
    file at the same path is not; a backing block device is the same device whatever node named it."""
    before = loop()
    linked = loop(loop={"backing_file": "/img/hardlink-of-A.img"})
    assert fingerprint.differences(before, linked) == []
    replaced = loop(loop={"backing_inode": 99})
    assert [d[0] for d in fingerprint.differences(before, replaced)] == ["backing file's inode"]
    on_dev = loop(loop={"backing_file": "/dev/loop0", "backing_dev": "0:6", "backing_inode": 94, "backing_rdev": "7:0"})
    alias = loop(loop={"backing_file": "/tmp/alias-node", "backing_dev": "254:0", "backing_inode": 5, "backing_rdev": "7:0"})
    assert fingerprint.differences(on_dev, alias) == []
    other = loop(loop={"backing_file": "/dev/loop0", "backing_dev": "0:6", "backing_inode": 94, "backing_rdev": "7:1"})
    assert [d[0] for d in fingerprint.differences(on_dev, other)] == ["backing device"]
