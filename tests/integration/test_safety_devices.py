"""The safety guard and purge methods against real block devices.

Writes go only to loop devices these tests create (see conftest.make_loop). The system disk is
only ever *assessed*: the guard must refuse it, and it never even opens it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from ssdpts.device import marker
from ssdpts.device.purge import registry as purge
from ssdpts.device.safety import guard as safety
from ssdpts.device.target import list_block_devices, open_target
from ssdpts.errors import UserError

from .conftest import require_root_and_losetup, run, system_disk

pytestmark = pytest.mark.root

MiB = 1 << 20


@pytest.fixture(autouse=True)
def _root_only() -> None:
    require_root_and_losetup()


def sha256_of(dev: str) -> str:
    """Checksum of the whole device, read with O_DIRECT so the page cache cannot hide a write."""
    proc = subprocess.run(["dd", f"if={dev}", "bs=4M", "iflag=direct", "status=none"],
                          capture_output=True, check=True)
    return hashlib.sha256(proc.stdout).hexdigest()


def read_bytes(dev: str, offset: int, length: int) -> bytes:
    proc = subprocess.run(
        ["dd", f"if={dev}", "bs=1M", f"skip={offset}", f"count={length}",
         "iflag=direct,skip_bytes,count_bytes", "status=none"],
        capture_output=True, check=True,
    )
    return proc.stdout


def refused(exc: pytest.ExceptionInfo[UserError]) -> str:
    message = str(exc.value)
    assert "\n" not in message, f"refusal must be one line: {message!r}"
    assert ": " in message, f"refusal must say what to do next: {message!r}"
    return message


def write_mbr(image: Path, partitions: list[tuple[int, int]]) -> None:
    """A minimal MBR: (start sector, sector count) Linux partitions. No partitioning tool needed."""
    sector = bytearray(512)
    for i, (start, count) in enumerate(partitions):
        # status, CHS start (unused), type 0x83 Linux, CHS end (unused), LBA start, sector count
        sector[446 + 16 * i: 446 + 16 * (i + 1)] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, count)
    sector[510:512] = b"\x55\xaa"
    with open(image, "r+b") as f:
        f.write(sector)


# --- the system disk: refused, read-only checks only -------------------------------------------


def test_system_disk_refused_by_assess() -> None:
    dev = system_disk()
    verdict = safety.assess(open_target(dev), needed_bytes=MiB)
    assert not verdict.usable
    assert "running system" in verdict.reasons[0]
    assert "signatures" not in verdict.details  # the system disk is not even probed


def test_system_disk_refused_by_check_writable_even_confirmed() -> None:
    dev = system_disk()
    target = open_target(dev)
    for confirm in filter(None, (dev, target.serial)):
        with pytest.raises(UserError) as exc:
            safety.check_writable(target, needed_bytes=MiB, confirm=confirm)
        assert "running system" in refused(exc)


def test_symlink_to_system_disk_refused(tmp_path: Path) -> None:
    dev = system_disk()
    link = tmp_path / "innocent-looking-name"
    link.symlink_to(dev)
    target = open_target(str(link))
    assert target.real_path == dev and target.kind == "block"
    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=str(link))
    assert "running system" in refused(exc)


# --- identity ------------------------------------------------------------------------------------


def test_loop_identity(make_loop) -> None:
    dev = make_loop()
    target = open_target(dev)
    name = os.path.basename(dev)
    assert (target.kind, target.name, target.exists, target.is_partition) == ("block", name, True, False)
    assert target.size_bytes == 256 * MiB
    assert target.logical_block_size_bytes == 512 and target.read_only is False
    assert target.identity_label == name
    json.dumps(target.to_dict())
    assert dev in [t.path for t in list_block_devices()]
    assert all(t.size_bytes > 0 for t in list_block_devices())


# --- blank loop device ------------------------------------------------------------------------------


def test_blank_loop_needs_confirmation(make_loop, tmp_path: Path) -> None:
    dev = make_loop()
    target = open_target(dev)
    verdict = safety.assess(target, needed_bytes=MiB)
    assert verdict.usable and verdict.needs_confirmation and verdict.existing_data == ()
    before = sha256_of(dev)

    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=None)
    assert f"--destroy-data-on={dev}" in refused(exc)

    other = make_loop()
    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=other)
    message = refused(exc)
    assert f"names {other} but the target is {dev}" in message

    assert sha256_of(dev) == before  # nothing written by refusals

    safety.check_writable(target, needed_bytes=MiB, confirm=dev)
    link = tmp_path / "by-id-like"
    link.symlink_to(dev)
    safety.check_writable(target, needed_bytes=MiB, confirm=str(link))  # resolves to the same device
    safety.check_writable(open_target(str(link)), needed_bytes=MiB, confirm=dev)


def test_interactive_confirmation(make_loop) -> None:
    dev = make_loop()
    target = open_target(dev)
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return f"  {dev}\n"

    safety.check_writable(target, needed_bytes=MiB, confirm=None, interactive=True, ask=ask)
    assert dev in prompts[0] and "destroyed" in prompts[0]

    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=None, interactive=True, ask=lambda _p: "/dev/sdz")
    assert "nothing was written" in refused(exc)

    def eof(_prompt: str) -> str:
        raise EOFError

    with pytest.raises(UserError):
        safety.check_writable(target, needed_bytes=MiB, confirm=None, interactive=True, ask=eof)


def test_too_small_refused(make_loop) -> None:
    dev = make_loop("16M")
    target = open_target(dev)
    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=target.size_bytes + 1, confirm=dev)
    assert "less than" in refused(exc)
    safety.check_writable(target, needed_bytes=target.size_bytes, confirm=dev)


def test_read_only_loop_refused(make_loop) -> None:
    dev = make_loop(read_only=True)
    target = open_target(dev)
    assert target.read_only
    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=dev)
    assert "read-only" in refused(exc)


def test_exclusively_held_device_refused(make_loop) -> None:
    """Somebody holds the device (as a mount in another namespace or md would): refuse."""
    dev = make_loop()
    fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
    try:
        with pytest.raises(UserError) as exc:
            safety.check_writable(open_target(dev), needed_bytes=MiB, confirm=dev)
        assert "in use" in refused(exc)
    finally:
        os.close(fd)
    safety.check_writable(open_target(dev), needed_bytes=MiB, confirm=dev)


# --- filesystems, mounts, swap, partitions ----------------------------------------------------------


@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="mkfs.ext4 (e2fsprogs) is missing")
def test_ext4_loop(make_loop, tmp_path: Path) -> None:
    dev = make_loop()
    run("mkfs.ext4", "-q", "-F", dev)
    target = open_target(dev)
    before = sha256_of(dev)

    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=None)
    message = refused(exc)
    assert f"{dev} holds an ext4 filesystem" in message and f"--destroy-data-on={dev}" in message
    assert sha256_of(dev) == before

    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return dev

    safety.check_writable(target, needed_bytes=MiB, confirm=None, interactive=True, ask=ask)
    assert "ext4" in prompts[0]

    safety.check_writable(target, needed_bytes=MiB, confirm=dev)  # confirmed and unmounted: allowed

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    run("mount", dev, mnt)
    try:
        with pytest.raises(UserError) as exc:
            safety.check_writable(target, needed_bytes=MiB, confirm=dev)
        assert f"is mounted at {mnt}" in refused(exc)
        bind = tmp_path / "bind"
        bind.mkdir()
        run("mount", "--bind", mnt, bind)
        try:
            mounts = safety.assess(target).details["mounts"]
            assert {m["mountpoint"] for m in mounts} == {str(mnt), str(bind)}
        finally:
            run("umount", bind)
    finally:
        run("umount", mnt)
    safety.check_writable(target, needed_bytes=MiB, confirm=dev)


@pytest.mark.skipif(shutil.which("swapon") is None or shutil.which("mkswap") is None,
                    reason="mkswap/swapon (util-linux) missing")
def test_swap_loop_refused(make_loop) -> None:
    # The kernel may page out to an active swap area at any moment (CI under memory pressure did),
    # so the area is kept to 64 KiB at the start of the device: the header page, which swapping
    # never writes, and everything past the area must be unchanged; pages 1..15 are the kernel's.
    dev = make_loop()
    area = 64 * 1024
    run("mkswap", dev, str(area // 1024))
    run("swapon", dev)

    def untouchable() -> tuple[bytes, str]:
        header = read_bytes(dev, 0, 4096)
        rest = subprocess.run(["dd", f"if={dev}", "bs=4M", f"skip={area}", "iflag=direct,skip_bytes",
                               "status=none"], capture_output=True, check=True).stdout
        return header, hashlib.sha256(rest).hexdigest()

    try:
        before = untouchable()
        assert before[0][4086:4096] == b"SWAPSPACE2"
        with pytest.raises(UserError) as exc:
            safety.check_writable(open_target(dev), needed_bytes=MiB, confirm=dev)
        assert "swap" in refused(exc)
        assert untouchable() == before
    finally:
        run("swapoff", dev)


def test_partitioned_loop(make_loop, tmp_path: Path) -> None:
    image = tmp_path / "parted.img"
    run("truncate", "-s", "256M", image)
    write_mbr(image, [(2048, 100 * 2048), (102 * 2048, 100 * 2048)])
    dev = make_loop(image=image, partscan=True)
    part1 = f"{dev}p1"
    if not os.path.exists(part1) and shutil.which("partx"):
        # Kernels built without the msdos parser: tell the kernel about the partitions (BLKPG).
        run("partx", "-a", dev)
    if not os.path.exists(part1):
        pytest.skip(f"the kernel did not create {part1} (no msdos partition parser, no partx)")
    target = open_target(dev)
    verdict = safety.assess(target)
    assert verdict.usable and verdict.details["partitions"] == [os.path.basename(part1), os.path.basename(f"{dev}p2")]

    with pytest.raises(UserError) as exc:
        safety.check_writable(target, needed_bytes=MiB, confirm=None)
    assert "partition table" in refused(exc)

    part = open_target(part1)
    assert part.is_partition and part.parent == os.path.basename(dev)
    assert part.size_bytes == 100 * MiB

    if shutil.which("mkfs.ext4") is None:
        return
    run("mkfs.ext4", "-q", "-F", part1)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    run("mount", part1, mnt)
    try:
        # A mounted partition refuses the whole disk, even confirmed ...
        with pytest.raises(UserError) as exc:
            safety.check_writable(target, needed_bytes=MiB, confirm=dev)
        assert f"{part1} (a partition of {dev}) is mounted at {mnt}" in refused(exc)
        # ... and the partition itself; the other partition stays usable.
        with pytest.raises(UserError) as exc:
            safety.check_writable(part, needed_bytes=MiB, confirm=part1)
        assert "mounted" in refused(exc)
        safety.check_writable(open_target(f"{dev}p2"), needed_bytes=MiB, confirm=f"{dev}p2")
    finally:
        run("umount", mnt)


# --- files ---------------------------------------------------------------------------------------


def test_file_backing_a_loop_device_refused(make_loop, tmp_path: Path) -> None:
    dev = make_loop()
    image = Path(subprocess.run(["losetup", "-n", "-O", "BACK-FILE", dev], capture_output=True,
                                text=True, check=True).stdout.strip())
    marker.mark_created(str(image))  # even a file ssdpts made must not be rewritten under a loop
    with pytest.raises(UserError) as exc:
        safety.check_writable(open_target(str(image)), needed_bytes=0, confirm=None)
    assert f"backs {dev}" in refused(exc)


# --- purge ---------------------------------------------------------------------------------------

PATTERN = bytes(range(256)) * 4096  # 1 MiB, no zero run longer than one byte


def _write_pattern(dev: str, size: int) -> None:
    # Start, middle and end, so a purge that only touched the beginning would be caught.
    for offset in (0, size // 2, size - len(PATTERN)):
        subprocess.run(["dd", f"of={dev}", "bs=1M", f"seek={offset}", "oflag=direct,seek_bytes",
                        "conv=notrunc", "status=none"], input=PATTERN, check=True)
        assert read_bytes(dev, offset, len(PATTERN)) == PATTERN


def _assert_zeros(dev: str, size: int) -> None:
    for offset in (0, size // 2, size - len(PATTERN)):
        assert read_bytes(dev, offset, len(PATTERN)) == bytes(len(PATTERN))


@pytest.mark.skipif(shutil.which("blkdiscard") is None, reason="blkdiscard (util-linux) missing")
def test_discard_purge_zeroes_loop(make_loop) -> None:
    dev = make_loop()
    target = open_target(dev)
    safety.check_writable(target, needed_bytes=target.size_bytes, confirm=dev)
    _write_pattern(dev, target.size_bytes)
    method = purge.select_purge(target, "auto")
    assert method.name == "discard"  # loop devices on a sparse file support discard
    lines: list[str] = []
    record = method.run(target, log=lines.append)
    assert record.method == "discard" and not record.is_pts_purge
    assert record.disclosure == "discard (fallback, not a PTS purge)" and lines
    _assert_zeros(dev, target.size_bytes)


@pytest.mark.skipif(shutil.which("blkdiscard") is None, reason="blkdiscard (util-linux) missing")
def test_zero_fill_purge_zeroes_loop(make_loop) -> None:
    dev = make_loop("64M")
    target = open_target(dev)
    safety.check_writable(target, needed_bytes=0, confirm=dev)
    _write_pattern(dev, target.size_bytes)
    record = purge.select_purge(target, "zero-fill").run(target)
    assert record.disclosure == "zero-fill (fallback, not a PTS purge)"
    _assert_zeros(dev, target.size_bytes)


@pytest.mark.skipif(shutil.which("blkdiscard") is None, reason="blkdiscard (util-linux) missing")
def test_purge_is_judged_by_its_effect(make_loop) -> None:
    """The sampled blocks written before a purge: gone after a discard of the loop device, but a
    'purge' that did nothing (as QEMU's no-op FORMAT UNIT) fails the run, naming the method."""
    from ssdpts.device.purge import check as purge_check
    from ssdpts.errors import RunFailed

    dev = make_loop("64M")
    target = open_target(dev)
    safety.check_writable(target, needed_bytes=0, confirm=dev)
    samples = purge_check.write_samples(target)
    assert samples.offsets[0] == 0 and samples.offsets[-1] == target.size_bytes - samples.block_bytes
    assert len(samples.offsets) == purge_check.SAMPLES
    with pytest.raises(RunFailed, match=r"purge scsi-format of .* 16 of 16 blocks written before it still hold"):
        purge_check.check(samples, target, "scsi-format")
    purge.select_purge(target, "discard").run(target)
    purge_check.check(samples, target, "discard")  # erased: no error


def test_purge_refuses_mounted_device_even_if_called_directly(make_loop, tmp_path: Path) -> None:
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 (e2fsprogs) is missing")
    dev = make_loop("64M")
    run("mkfs.ext4", "-q", "-F", dev)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    run("mount", dev, mnt)
    try:
        with pytest.raises(UserError):
            purge.select_purge(open_target(dev), "discard").run(open_target(dev))
    finally:
        run("umount", mnt)
    assert (safety.probe_signatures(dev)[0] or {}).get("TYPE") == "ext4"  # still intact


def test_file_recreate_purge(tmp_path: Path) -> None:
    path = tmp_path / "target.img"
    target = open_target(str(path), size_bytes=32 * MiB)
    assert target.kind == "file" and not target.exists
    safety.check_writable(target, needed_bytes=32 * MiB, confirm=None)
    method = purge.select_purge(target, "auto")
    assert method.name == "file-recreate"
    method.run(target)
    assert path.stat().st_size == 32 * MiB and marker.is_ssdpts_file(str(path))

    with open(path, "r+b") as f:
        f.write(PATTERN)
    marker.seal(str(path))  # as a run does when it has finished writing the file
    again = open_target(str(path))
    assert again.exists and again.size_bytes == 32 * MiB
    safety.check_writable(again, needed_bytes=32 * MiB, confirm=None)
    record = purge.select_purge(again, "auto").run(again)
    assert record.method == "file-recreate"
    assert path.read_bytes()[: len(PATTERN)] == bytes(len(PATTERN))
