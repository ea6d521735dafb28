"""Bad input and refusals through the installed command: exit 2, one clear line, nothing written."""

from __future__ import annotations

import subprocess

import pytest

from .conftest import checksum, ssdpts

pytestmark = pytest.mark.root


def refused(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def run_args(dev: str, *extra: str) -> list[str]:
    return ["run", "iops", "--target", dev, "--step-seconds", "0.2", "--quiet", *extra]


def test_system_disk_is_refused_read_only(tmp_path):
    # /dev/vda (this machine's system disk) or whatever holds / elsewhere: the guard must refuse
    # before anything opens it for writing; the confirmation does not change that.
    import os

    disk = "/dev/vda" if os.path.exists("/dev/vda") else None
    if disk is None:
        pytest.skip("no /dev/vda on this machine")
    r = ssdpts(*run_args(disk, "--destroy-data-on", disk, "--out", str(tmp_path)))
    refused(r, "/dev/vda")
    assert not any(tmp_path.iterdir()), "no run directory may be created for a refused target"


@pytest.mark.parametrize("args,needle", [
    (["run", "iops", "--target", "/nonexistent/dev/x"], "does not exist"),
    (["run", "iops", "--target", "/tmp"], "directory"),
    (["run", "iopz", "--target", "/tmp/x.bin", "--size", "1G"], "unknown test"),
    (["run", "iops", "--target", "/tmp/x.bin", "--size", "1G", "--iodepth", "0"], "--iodepth"),
    (["run", "iops", "--target", "/tmp/x.bin", "--size", "1G", "--step-seconds", "-1"], "--step-seconds"),
    (["run", "iops", "--target", "/tmp/x.bin", "--size", "banana"], "--size"),
    (["plan", "iops", "--target", "/tmp/x.bin", "--size", "1G", "--max-rounds", "2"], "--max-rounds"),
    (["resume", "/nonexistent-run-dir"], "not a directory"),
    (["run", "--target", "/tmp/x.bin"], ""),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_exit_2(args, needle, tmp_path):
    refused(ssdpts(*args, "--out", str(tmp_path)) if args[0] == "run" else ssdpts(*args), needle)


def test_device_refusals_write_nothing(make_loop, tmp_path):
    blank = make_loop("256M")
    other = make_loop("256M")
    small = make_loop("32M")
    fs = make_loop("256M")
    subprocess.run(["mkfs.ext4", "-q", "-F", fs], check=True, capture_output=True)
    out = tmp_path / "runs"
    sums = {d: checksum(d) for d in (blank, other, small, fs)}

    # no confirmation at all (stdin is not a terminal)
    refused(ssdpts(*run_args(blank, "--out", str(out)), stdin=subprocess.DEVNULL), "--destroy-data-on")
    # a confirmation naming another device
    refused(ssdpts(*run_args(blank, "--destroy-data-on", other, "--out", str(out))), other)
    # a filesystem and no confirmation
    refused(ssdpts(*run_args(fs, "--out", str(out)), stdin=subprocess.DEVNULL), "ext4")
    # too small for the test (IOPS at TC4/QD32 of 1 MiB blocks needs 128 MiB)
    refused(ssdpts(*run_args(small, "--destroy-data-on", small, "--out", str(out))), "too small")
    assert {d: checksum(d) for d in sums} == sums, "a refused run wrote to a device"
    # mounted, even with the right confirmation (mounting itself changes the superblock, so the
    # file written inside the filesystem is what must survive)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", fs, str(mnt)], check=True)
    try:
        (mnt / "precious").write_text("keep me")
        refused(ssdpts(*run_args(fs, "--destroy-data-on", fs, "--out", str(out))), "mounted")
        assert (mnt / "precious").read_text() == "keep me"
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    assert not out.exists() or not any(out.iterdir()), "a refused run created a run directory"


def test_plan_lists_56_steps_in_pts_order_and_touches_nothing(make_loop):
    dev = make_loop("256M")
    before = checksum(dev)
    r = ssdpts("plan", "iops", "--target", dev, "--fio")
    assert r.returncode == 0, r.stderr
    # one line per run of equal steps ("1 × RND 1024KiB 100/0  TC4/QD32  60 s"): every IOPS step differs
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.split()[1:3] == ["×", "RND"]]
    assert len(rows) == 56 and all(row[0] == "1" for row in rows)
    labels = [(row[3], row[4]) for row in rows]
    expect = [(bs, mix) for mix in ("100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100")
              for bs in ("1024KiB", "128KiB", "64KiB", "32KiB", "16KiB", "8KiB", "4KiB", "0.5KiB")]
    assert labels == expect
    for var in ("RND 4KiB 0/100 IOPS", "RND 64KiB 65/35 IOPS", "RND 1024KiB 100/0 IOPS"):
        assert var in r.stdout
    assert r.stdout.count("startdelay=") == 55  # round 1's job file: steps back to back
    assert checksum(dev) == before
