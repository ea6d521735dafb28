"""The wrong-device holes, reproduced on real loop devices and files exactly as they were found, with
the SHA-256 of every device and file involved taken before and after each refused command:

1. resume onto another device: a LAT run killed (SIGKILL), its loop node detached and attached to
   another file of the same size, then resumed;
2. a partition created, formatted and mounted on the target while a run writes to it;
3. a second run on the device of a run in flight;
4. a file target deleted by the user and replaced by their own file of the same name and size;

plus the lesser ones: the results disk checked before the purge, and cases found while closing
these (two partitions of one disk, two loop devices over one file, a loop device detached mid-run).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
import signal
import struct
import subprocess
import time

import pytest

from ssdpts.store import RunStore

from .conftest import checksum, finished_lines, loop_reattach, run as sh, small_ext4, ssdpts
from .test_run_devices import _fio_children_gone, run_dir_of

pytestmark = pytest.mark.root

LAT = ["--step-seconds", "0.1", "--max-rounds", "5"]


def sha(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def refused(r: subprocess.CompletedProcess, *needles: str) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, (r.returncode, r.stdout[-800:], r.stderr)
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def random_fill(path: Path | str, mib: int = 4) -> None:
    """Recognisable content: a write by a refused command would change its checksum."""
    with open(path, "r+b") as f:
        f.write(os.urandom(mib << 20))


def wait_lines(run_out: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> Path:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        dirs = [d for d in run_out.iterdir() if d.is_dir()] if run_out.exists() else []
        if dirs and len(finished_lines(dirs[0] / "steps.jsonl")) >= n:
            return dirs[0]
        if proc.poll() is not None:
            pytest.fail(f"ssdpts ended early ({proc.returncode}): {proc.stderr.read()}")
        time.sleep(0.02)
    pytest.fail(f"the run did not reach {n} steps")


def start_run_bg(dev: str, out: Path, *extra: str, test: str = "lat") -> subprocess.Popen:
    return subprocess.Popen(["ssdpts", "run", test, "--target", dev, *LAT, "--destroy-data-on", dev, "--out", str(out),
                             "--quiet", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# --- hole 1: resume onto another device -----------------------------------------------------------


def test_resume_onto_another_backing_file_is_refused(make_loop, tmp_path):
    a, b = tmp_path / "A.img", tmp_path / "B.img"
    sh("truncate", "-s", "128M", a, b)
    random_fill(b)
    dev = make_loop(image=a)
    out = tmp_path / "runs"
    proc = start_run_bg(dev, out)
    run = wait_lines(out, 1 + 2 * 9, proc)  # WIPC and rounds 1-2 of LAT
    proc.kill()
    proc.communicate(timeout=60)
    assert _fio_children_gone(run), "fio outlived ssdpts"
    assert manifest(run)["status"] == "running"
    loop_reattach(dev, b)  # the same node, now on another file of the same size

    def state() -> tuple:
        return sha(a), sha(b), (run / "manifest.json").read_bytes(), (run / "steps.jsonl").read_bytes()

    before = state()
    line = refused(ssdpts("resume", str(run), "--quiet"), "backing file", str(a), str(b))
    assert "not the device this run started on" in line
    # a confirmation cannot override a different identity
    refused(ssdpts("resume", str(run), "--quiet", "--destroy-data-on", dev), "backing file")
    assert state() == before, "a refused resume wrote to a file or the run directory"

    # The right file again: every field matches, but the node was detached and attached since
    # (diskseq), and a loop device has no serial: resume asks for the confirmation again.
    loop_reattach(dev, a)
    before = state()
    line = refused(ssdpts("resume", str(run), "--quiet"), "--destroy-data-on", "attached again")
    assert state() == before
    r = ssdpts("resume", str(run), "--quiet", "--destroy-data-on", dev)
    assert r.returncode == 0, r.stderr
    man = manifest(run)
    assert man["status"] == "complete"
    assert man["resumptions"][-1]["identity"] == "confirmed again by --destroy-data-on"
    assert sha(b) == before[1], "the run wrote to B"
    v = ssdpts("verify", str(run))
    assert v.returncode == 0 and "intact" in v.stdout, v.stdout


@pytest.mark.slow
def test_resume_through_a_repointed_symlink_is_refused(make_loop, tmp_path):
    """A path that now resolves elsewhere is another device, even one of the same size."""
    one, two = make_loop("128M"), make_loop("128M")
    random_fill(two)
    link = tmp_path / "scratch-disk"
    link.symlink_to(one)
    out = tmp_path / "runs"
    proc = subprocess.Popen(["ssdpts", "run", "lat", "--target", str(link), *LAT, "--destroy-data-on", str(link),
                             "--out", str(out), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = wait_lines(out, 1 + 9, proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    link.unlink()
    link.symlink_to(two)
    before = checksum(two)
    refused(ssdpts("resume", str(run), "--quiet", "--destroy-data-on", str(link)), "resolved path", one, two)
    assert checksum(two) == before


# --- hole 2: a filesystem mounted mid-run ---------------------------------------------------------


def _mbr(dev: str, start: int, count: int) -> None:
    sector = bytearray(512)
    sector[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, count)
    sector[510:512] = b"\x55\xaa"
    fd = os.open(dev, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, sector)
        os.fsync(fd)
    finally:
        os.close(fd)


def test_partition_and_mount_fail_while_a_run_holds_the_device(make_loop, tmp_path):
    dev = make_loop("128M", partscan=True)
    out = tmp_path / "runs"
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = start_run_bg(dev, out, "--max-rounds", "25")  # LAT: rounds of about a second, 25 at most
    run = wait_lines(out, 1 + 9, proc)  # round 2 is running
    part = f"{dev}p1"
    # ssdpts itself (not fio) is held still while the partition is made and mounted, so that the
    # claim is certainly still held then: otherwise the guard could stop the run in between.
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        _mbr(dev, 2048, 65536)  # a partition table written underneath the run...
        assert subprocess.run(["blockdev", "--rereadpt", dev], capture_output=True).returncode != 0  # BLKRRPART: EBUSY
        sh("partx", "-a", dev)  # ... and added with BLKPG, which the kernel allows
        assert os.path.exists(part)
        mkfs = subprocess.run(["mkfs.ext4", "-q", "-F", part], capture_output=True, text=True)
        assert mkfs.returncode != 0 and "in use" in mkfs.stderr, mkfs.stderr
        for node in (part, dev):
            m = subprocess.run(["mount", "-o", "ro", node, str(mnt)], capture_output=True, text=True)
            assert m.returncode != 0 and "busy" in m.stderr, (node, m.stderr)  # EBUSY before the superblock is read
        os.kill(proc.pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        subprocess.run(["umount", str(mnt)], capture_output=True)
        subprocess.run(["partx", "-d", dev], capture_output=True)
    assert _fio_children_gone(run)
    assert proc.returncode == 1, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"partition {part} appeared on {dev}" in lines[0] and "resume" in lines[0], err
    man = manifest(run)
    assert man["status"] == "interrupted" and "appeared" in man["interruption"]["device_unsafe"]
    assert "PARTIAL" in (run / "report.html").read_text()
    assert not os.listdir(mnt), "something was mounted"


# --- hole 3: two runs on one device ---------------------------------------------------------------


def _freeze(run: Path, proc: subprocess.Popen, sig: int) -> None:
    """SIGSTOP/SIGCONT ssdpts and its fio (fio has a session of its own). ssdpts first, then fio,
    looked for a few times: a fio started just before ssdpts stopped must not run on unseen."""
    os.kill(proc.pid, sig)
    for _ in range(3):
        pids = subprocess.run(["pgrep", "-f", f"fio .*{run}/fio/"], capture_output=True, text=True).stdout.split()
        for pid in map(int, pids):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def test_second_run_or_resume_on_a_busy_device_is_refused(make_loop, tmp_path):
    dev = make_loop("128M")
    link = tmp_path / "alias"
    link.symlink_to(dev)
    out = tmp_path / "runs"
    proc = start_run_bg(dev, out)
    run = wait_lines(out, 1 + 9, proc)
    _freeze(run, proc, signal.SIGSTOP)  # so that a write by the second run would show in the checksum
    try:
        before = checksum(dev)
        time.sleep(0.5)
        assert checksum(dev) == before, "the first run did not hold still (its I/O went on)"
        other = tmp_path / "other"
        for target in (dev, str(link)):
            line = refused(ssdpts("run", "lat", "--target", target, *LAT, "--destroy-data-on", target,
                                  "--out", str(other), "--quiet"), "in use by the ssdpts run", str(run), f"PID {proc.pid}")
            assert f"kill -INT {proc.pid}" in line
        # a resume of another run on the same device: refused the same way (the run directory is free)
        stale = tmp_path / "stale"
        sh("cp", "-a", str(run), str(stale))
        RunStore(stale).update_manifest(status="interrupted")  # by the store: an edit by hand is damage
        refused(ssdpts("resume", str(stale), "--quiet", "--destroy-data-on", dev), "in use by the ssdpts run", str(run))
        assert checksum(dev) == before, "a refused command wrote to the device"
        assert not other.exists(), "a refused run created a run directory"
    finally:
        _freeze(run, proc, signal.SIGCONT)
    # The first run goes on undisturbed: it saves its next round.
    wait_lines(out, 1 + 2 * 9, proc)
    proc.kill()  # SIGKILL: the kernel drops the claim and the lock with the process
    proc.communicate(timeout=60)
    assert _fio_children_gone(run)
    from ssdpts.device.safety.claim import Claim
    from ssdpts.device.target import open_target

    with Claim(open_target(dev)):  # the device is free again
        pass


def test_two_partitions_of_one_disk_and_two_loops_on_one_file_are_one_device(make_loop, tmp_path):
    """Found while closing hole 3: the kernel lets two holders claim two partitions of one disk, and
    two loop devices can share a backing file; two runs there would write one medium twice over."""
    img = tmp_path / "disk.img"
    sh("truncate", "-s", "256M", img)
    with open(img, "r+b") as f:
        for i, (start, count) in enumerate([(2048, 200_000), (204_800, 200_000)]):
            f.seek(446 + 16 * i)
            f.write(struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, count))
        f.seek(510)
        f.write(b"\x55\xaa")
    dev = make_loop(image=img, partscan=True)
    p1, p2 = f"{dev}p1", f"{dev}p2"
    if not os.path.exists(p2):
        sh("partx", "-a", dev)  # a kernel without the msdos parser: add them with BLKPG
    random_fill(p2, 2)
    twin = make_loop(image=img)  # a second loop device over the same file
    out = tmp_path / "runs"
    proc = start_run_bg(p1, out)
    run = wait_lines(out, 1, proc)
    os.kill(proc.pid, signal.SIGSTOP)  # the first run holds p1 (and the disk's lock) until it is let go
    try:
        before = checksum(p2)
        refused(ssdpts("run", "lat", "--target", p2, *LAT, "--destroy-data-on", p2, "--out", str(tmp_path / "o"),
                       "--quiet"), "in use by the ssdpts run", str(run))
        assert checksum(p2) == before
        refused(ssdpts("run", "lat", "--target", twin, *LAT, "--destroy-data-on", twin, "--out", str(tmp_path / "o"),
                       "--quiet"), str(img), "in use by the ssdpts run", str(run))
        assert not (tmp_path / "o").exists()
    finally:
        proc.kill()  # SIGKILL works on a stopped process
        proc.communicate(timeout=120)


@pytest.mark.slow
def test_loop_device_detached_mid_run_stops_the_run(make_loop, tmp_path):
    """Found while closing hole 3: 'losetup -d' on a device in use only marks it for detaching when
    its last user closes it; the held claim would keep it attached, and the run going, for hours."""
    dev = make_loop("256M")
    out = tmp_path / "runs"
    proc = start_run_bg(dev, out, test="iops")
    run = wait_lines(out, 1 + 56, proc)
    sh("losetup", "-d", dev)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "someone detached" in err, err
    assert manifest(run)["status"] == "interrupted"


# --- hole 4: a file target that is no longer ours -------------------------------------------------


def test_replaced_file_target_is_refused(tmp_path):
    from ssdpts.device.target import open_target
    from ssdpts.engine.fio import FioExecutor
    from ssdpts.run.session import start_run
    from ssdpts.pts.runspec import RunSpec

    path = tmp_path / "target.img"
    spec = RunSpec(tests=("lat",), step_seconds=0.1, max_rounds=5)
    start_run(spec, open_target(str(path), size_bytes=64 << 20), executor=FioExecutor(), out_dir=tmp_path / "runs",
              confirm=None)
    marker = Path(str(path) + ".ssdpts-target")
    assert marker.exists()
    size, ino = path.stat().st_size, path.stat().st_ino
    path.unlink()  # the user deletes it and puts their own file of the same name and size there
    with open(path, "wb") as f:
        f.write(os.urandom(1 << 20))
        f.truncate(size)
    reused = path.stat().st_ino == ino  # ext4 hands the inode number out again at once
    before, marker_before = sha(path), marker.read_bytes()
    for extra in ([], ["--size", "64M"]):
        refused(ssdpts("run", "lat", "--target", str(path), *LAT, *extra, "--out", str(tmp_path / "o"), "--quiet"),
                "not the file ssdpts created there")
    assert sha(path) == before and marker.read_bytes() == marker_before
    assert not (tmp_path / "o").exists()
    print(f"inode number reused: {reused}")


# --- lesser: the results disk is checked before anything is written ---------------------------------


def test_full_results_disk_is_refused_before_the_purge(make_loop, tmp_path):
    target = make_loop("128M")
    random_fill(target)
    with small_ext4(make_loop, tmp_path, "results", free_bytes=4 * 2**20) as mnt:
        before = checksum(target)
        refused(ssdpts("run", "lat", "--target", target, *LAT, "--destroy-data-on", target, "--out", str(mnt / "runs"),
                       "--quiet"), "results disk", "first round", "nothing was written to the target")
        assert checksum(target) == before, "the purge ran before the space check"
        assert not (mnt / "runs").exists()


# --- identity without a serial: zram ------------------------------------------------------------------


def test_zram_reset_and_recreated_needs_the_confirmation_again(make_zram, tmp_path):
    """A zram device has no serial, and a reset and re-created one keeps even its diskseq: resume
    cannot prove the identity, so it asks again (prompt or resume --destroy-data-on)."""
    import pty

    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.errors import Interrupted
    from ssdpts.run.session import resume_run, start_run
    from ssdpts.pts.runspec import RunSpec

    size = 256 << 20
    dev = make_zram(size)
    spec = RunSpec(tests=("lat",), step_seconds=0.1, max_rounds=5)
    with pytest.raises(Interrupted):  # the purge is real (blkdiscard); the rounds are modelled
        start_run(spec, open_target(dev), executor=FakeExecutor(interrupt_on_batch=3), out_dir=tmp_path / "runs",
                  confirm=dev)
    run = run_dir_of(tmp_path / "runs")
    n = dev.removeprefix("/dev/zram")
    Path(f"/sys/block/zram{n}/reset").write_text("1")
    Path(f"/sys/block/zram{n}/disksize").write_text(str(size))
    random_fill(dev)  # someone's data on the new device
    before = checksum(dev)
    refused(ssdpts("resume", str(run), "--quiet"), "zram device", f"--destroy-data-on={dev}")
    # at a terminal: the prompt, and a wrong answer is refused
    master, slave = pty.openpty()
    try:
        os.write(master, b"/dev/sda\n")
        r = subprocess.run(["ssdpts", "resume", str(run), "--quiet"], stdin=slave, capture_output=True, text=True,
                           timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    assert "zram device" in r.stdout and "Type its path" in r.stdout, r.stdout
    refused(r, "typed '/dev/sda'", "nothing was written")
    assert checksum(dev) == before
    _, summary = resume_run(run, executor=FakeExecutor(), confirm=dev)
    assert summary["status"] == "complete"
    assert manifest(run)["resumptions"][-1]["identity"] == "confirmed again by --destroy-data-on"


# --- purge tools beside the run's exclusive claim -----------------------------------------------------


def _held_exclusively(dev: str) -> bool:
    try:
        os.close(os.open(dev, os.O_RDONLY | os.O_EXCL))
    except OSError as exc:
        return exc.errno == 16  # EBUSY
    return False


@pytest.mark.parametrize("method,lend", [("discard", False), ("zero-fill", False), ("discard", True), ("zero-fill", True)],
                         ids=["discard", "zero-fill", "discard-tool-needs-O_EXCL", "zero-fill-tool-needs-O_EXCL"])
def test_purge_beside_the_claim(make_loop, monkeypatch, method, lend):
    """blkdiscard --force (discard, BLKZEROOUT) works while the run holds the device. A tool that
    insists on its own exclusive open (blkdiscard without --force stands in for one) meets EBUSY and
    is lent the claim, which is taken back at once."""
    from ssdpts.device.purge import fallback, registry as purge
    from ssdpts.device.safety.claim import Claim
    from ssdpts.device.target import open_target

    dev = make_loop("64M")
    random_fill(dev)
    if lend:
        monkeypatch.setattr(fallback, "_blkdiscard_force", lambda tools: [])
        r = subprocess.run(["blkdiscard", dev], capture_output=True, text=True)
        assert r.returncode == 0  # nobody holds it yet: without --force it works...
        random_fill(dev)
    t = open_target(dev)
    with Claim(t):
        if lend:  # ... and with the claim held it is refused, as a tool that opens O_EXCL would be
            assert "busy" in subprocess.run(["blkdiscard", dev], capture_output=True, text=True).stderr
        rec = purge.select_purge(t, method).run(t)
        assert _held_exclusively(dev), "the claim was not held (or not taken back) after the purge"
    assert rec.method == method
    if method == "zero-fill":
        assert "BLKZEROOUT" in rec.detail, rec.detail  # blkdiscard -z itself, not the dd fallback
    with open(dev, "rb") as f:
        assert f.read(4 << 20) == bytes(4 << 20), "the purge did not clear the device"
