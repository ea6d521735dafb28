"""The safety guard on emulated drives: a mounted filesystem on a partition refuses the partition and
its disk, and a confirmation naming another drive's serial refuses the run; nothing is written
(sha256 of the whole drive before and after, in the guest)."""

from __future__ import annotations

import pytest

from .conftest import HERE, TARGETS

MNT = "/tmp/lab-mnt"


def _refused(out: dict, *words: str) -> None:
    assert out["rc"] == 2, f"not refused (rc {out['rc']}, fio reached {out['fio_reached']}): {out['stderr'][-800:]}"
    lines = [ln for ln in out["stderr"].splitlines() if ln.strip()]
    assert len(lines) == 1, out["stderr"]
    for w in words:
        assert w in lines[0], lines[0]
    assert out["manifest"] is None, "a refused run created a run directory"


@pytest.fixture
def mounted_partition(lab):
    """nvme4k's second namespace (96 MiB) with an MBR, one 80 MiB ext4 partition (big enough for a run:
    the size check must not be what refuses it), mounted in the guest."""
    dev = lab.dev["nvme4k-ns2"]
    part = f"{dev}p1"
    repo = HERE.parent.parent
    lab.sh(["python", "-c", f"import sys; sys.path.insert(0, {str(repo)!r}); from pathlib import Path; "
            "from tests.integration.test_safety_devices import write_mbr; "
            f"write_mbr(Path({dev!r}), [(2048, 163840)])"], check=True)
    lab.sh(["blockdev", "--rereadpt", dev], check=True)
    lab.sh(f"udevadm settle; test -b {part}", check=True)
    # No lazy init: ext4 would otherwise keep writing inode tables in the background after mount.
    lab.sh(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", part], check=True)
    lab.sh(f"mkdir -p {MNT} && mount {part} {MNT} && sync", check=True)
    try:
        yield dev, part
    finally:
        lab.sh(f"umount {MNT}")
        lab.sh(["wipefs", "-a", "-q", part])
        lab.sh(["wipefs", "-a", "-q", dev])
        lab.sh(["blockdev", "--rereadpt", dev])


@pytest.mark.slow
def test_mounted_partition_refuses_the_partition_and_its_disk(lab, mounted_partition):
    dev, part = mounted_partition
    before = lab.checksum("nvme4k-ns2")
    for target, confirm in ((part, part), (dev, TARGETS["nvme4k-ns2"].serial), (dev, dev)):
        out = lab.scenario("nvme4k-ns2", "lat", "--destroy-data-on", confirm, "--step-seconds", "1", target=target,
                           name=f"mounted-{target.rsplit('/', 1)[1]}")
        _refused(out, "mounted")
    assert lab.checksum("nvme4k-ns2") == before, "a refused run wrote to the drive"


@pytest.mark.parametrize("key,other", [pytest.param("sata", "nvme", marks=pytest.mark.slow), ("nvme", "nvme4k")])
def test_confirmation_naming_another_drive_is_refused(lab, key, other):
    before = lab.checksum(key)
    out = lab.scenario(key, "lat", "--destroy-data-on", TARGETS[other].serial, "--step-seconds", "1",
                       name=f"wrong-serial-{key}")
    _refused(out, TARGETS[other].serial)
    assert lab.checksum(key) == before, "a refused run wrote to the drive"
