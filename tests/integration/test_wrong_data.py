"""The second set of wrong-data holes, reproduced on real loop devices and files as they were found,
with the SHA-256 of every device and file involved taken before and after each refused command:

1. a loop device stacked on a block device checked only as itself (a mounted filesystem under it,
   a device a running run holds, the results directory on the filesystem under it);
2. the one-run-per-device lock of a loop device keyed by its backing file's path (a hard link of
   the same file took a lock of its own);
3. steps.jsonl and summary.json not proven (one digit changed went through verify, report,
   compare and the library);
4. a file target vouched for by its inode, not its contents ('cp user.img f.img' keeps the inode);

and plan printing a plan for the system disk with exit 0. Each is refused (exit 2, one line naming
the device or file and the reason) or caught (verify exit 1 naming the value).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
import shutil
import signal
import stat
import subprocess
import time

import pytest

from .conftest import checksum, run as sh, ssdpts, system_disk
from .test_wrong_device import LAT, _freeze, refused, sha, start_run_bg, wait_lines

pytestmark = pytest.mark.root


@contextlib.contextmanager
def stacked(dev: str, read_only: bool = False):
    """A loop device over block device ``dev`` (``losetup -f --show /dev/loopN``), detached at the end."""
    top = sh("losetup", "-f", "--show", *(["-r"] if read_only else []), dev).strip()
    try:
        yield top
    finally:
        subprocess.run(["umount", top], capture_output=True, check=False)
        subprocess.run(["losetup", "-d", top], check=False)


@contextlib.contextmanager
def mounted(dev: str, where: Path):
    where.mkdir(exist_ok=True)
    sh("mount", dev, where)
    try:
        yield where
    finally:
        subprocess.run(["umount", where], check=False)


def ext4(dev: str) -> None:
    # Everything initialised now: a mounted, idle filesystem then writes nothing on its own.
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)


def lat_run(target: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return ssdpts("run", "lat", "--target", target, *LAT, "--destroy-data-on", target, "--out", str(out), "--quiet",
                  *extra)


def devices_verdict(dev: str) -> str:
    """The verdict `ssdpts devices` gives ``dev`` (its table, read as one text)."""
    r = ssdpts("devices", env={**os.environ, "COLUMNS": "400"})
    assert r.returncode == 0, r.stderr
    row = next(ln for ln in r.stdout.splitlines() if f" {dev} " in ln)
    return " ".join(row.split())


# --- hole 1: the device stack -------------------------------------------------------------------


def test_loop_stacked_on_a_mounted_device_is_refused_everywhere(make_loop, tmp_path):
    low = make_loop("64M")
    ext4(low)
    with mounted(low, tmp_path / "mnt") as mnt, stacked(low) as top, stacked(top) as top2:
        (mnt / "user-data").write_bytes(os.urandom(1 << 20))
        os.sync()
        before = checksum(low)
        want = f"{top} rests on {low}, which is mounted at {mnt}"
        for purge in (["--purge", "none"], []):  # the default purge (a discard) used to destroy it first
            refused(lat_run(top, tmp_path / "runs", *purge), want)
        refused(lat_run(top2, tmp_path / "runs"), f"{top2} rests on {top} on {low}, which is mounted at {mnt}")
        # plan gives run's verdict in run's words, and exit 2
        r = ssdpts("plan", "lat", "--target", top)
        assert r.returncode == 2 and want in " ".join(r.stdout.split()), r.stdout[:600]
        assert want in devices_verdict(top) and low in devices_verdict(top)
        # --out on the filesystem under the stacked loop: refused before anything is written
        refused(lat_run(top, mnt / "runs", "--purge", "none"), f"--out {mnt}/runs", low)
        assert not (tmp_path / "runs").exists() and not (mnt / "runs").exists()
        assert checksum(low) == before, "a refused command wrote to the mounted device"


def test_a_device_with_a_mounted_loop_over_it_is_refused(make_loop, tmp_path):
    """The other way up: the kernel lists no holder for a loop device resting on a block device."""
    low = make_loop("64M")
    with stacked(low) as top:
        ext4(top)
        with mounted(top, tmp_path / "mnt") as mnt:
            os.sync()
            before = checksum(low)
            refused(lat_run(low, tmp_path / "runs"), f"{top} (built on {low}) is mounted at {mnt}")
            assert checksum(low) == before


def test_loop_stacked_on_a_running_runs_device_is_refused(make_loop, tmp_path):
    low = make_loop("128M")
    out = tmp_path / "first"
    proc = start_run_bg(low, out)
    run = wait_lines(out, 1 + 9, proc)
    _freeze(run, proc, signal.SIGSTOP)
    try:
        with stacked(low) as top:
            before = checksum(low)
            line = refused(lat_run(top, tmp_path / "second"), "in use by the ssdpts run", str(run))
            assert low in line
            r = ssdpts("plan", "lat", "--target", top)
            assert r.returncode == 2 and "in use by the ssdpts run" in r.stdout.replace("\n", " "), r.stdout[:400]
            assert checksum(low) == before and not (tmp_path / "second").exists()
    finally:
        _freeze(run, proc, signal.SIGCONT)
        proc.kill()
        proc.communicate(timeout=120)


def test_the_system_disk_under_a_loop_device_is_refused(make_loop, tmp_path, monkeypatch):
    """What the running system lives on, under a loop device: refused naming it. (This host refuses a
    loop device over its system disk even read-only, so a device of ours stands for the system
    disk: its filesystem is made one of the system's mount points.)"""
    from ssdpts.device.safety import guard as safety
    from ssdpts.device.target import open_target

    low = make_loop("64M")
    ext4(low)
    with mounted(low, tmp_path / "sys") as mnt, stacked(low) as top:
        monkeypatch.setattr(safety, "SYSTEM_MOUNTPOINTS", (str(mnt),))
        reasons = safety.assess(open_target(top)).reasons
        assert reasons[0] == (f"{top} rests on {low}, which holds the running system (it backs {mnt}): "
                              "pick another target"), reasons


def test_plan_refuses_the_system_disk_and_a_node_made_for_it(tmp_path):
    """plan used to print a plan to write the whole system disk, exit 0; through a device node made
    with mknod too. Read-only: the system disk is never opened for writing (nor probed)."""
    disk = system_disk()
    alias = tmp_path / "alias"
    os.mknod(alias, stat.S_IFBLK | 0o600, os.stat(disk).st_rdev)
    for target in (disk, str(alias)):
        r = ssdpts("plan", "lat", "--target", target, "--destroy-data-on", target)
        text = " ".join(r.stdout.split())
        assert r.returncode == 2 and "holds the running system" in text and "would refuse" in text, text[:600]


# --- hole 2: backing files by identity ----------------------------------------------------------


def test_two_loops_over_hard_links_of_one_file_are_one_device(make_loop, tmp_path):
    img = tmp_path / "a.img"
    sh("truncate", "-s", "128M", img)
    link = tmp_path / "hardlink.img"
    os.link(img, link)
    first, second = make_loop(image=img), make_loop(image=link)
    # one invocation with both: refused before anything is written
    r = ssdpts("run", "lat", "--target", first, "--target", second, *LAT, "--destroy-data-on", first,
               "--destroy-data-on", second, "--out", str(tmp_path / "both"), "--quiet")
    refused(r, "are one device", str(img))
    assert not (tmp_path / "both").exists()
    out = tmp_path / "first"
    proc = start_run_bg(first, out)
    run = wait_lines(out, 1 + 9, proc)
    _freeze(run, proc, signal.SIGSTOP)
    try:
        before = sha(img)
        refused(lat_run(second, tmp_path / "second"), "in use by the ssdpts run", str(run))
        assert sha(img) == before and not (tmp_path / "second").exists()
    finally:
        _freeze(run, proc, signal.SIGCONT)
        proc.kill()
        proc.communicate(timeout=120)


def test_a_loop_over_a_hard_link_of_a_mounted_loops_file_is_refused(make_loop, tmp_path):
    img = tmp_path / "fs.img"
    sh("truncate", "-s", "64M", img)
    link = tmp_path / "same-file.img"
    os.link(img, link)
    mounted_loop = make_loop(image=img)
    ext4(mounted_loop)
    with mounted(mounted_loop, tmp_path / "mnt") as mnt:
        os.sync()
        alias = make_loop(image=link)
        before = sha(img)
        refused(lat_run(alias, tmp_path / "runs"), f"{alias} rests on", f"which also backs {mounted_loop}",
                f"mounted at {mnt}")
        assert sha(img) == before


# --- hole 3: every file a reader trusts is proven -----------------------------------------------


@pytest.fixture(scope="module")
def a_run(tmp_path_factory):
    """One real LAT run on a loop device (its run directory; the device is gone)."""
    from .conftest import loop_factory

    base = tmp_path_factory.mktemp("proven")
    with loop_factory(base) as make:
        dev = make("64M")
        r = lat_run(dev, base / "runs")
        assert r.returncode == 0, r.stderr
    return next((base / "runs").iterdir())


def _edit_first(path: Path, pattern: str, edit) -> tuple[str, str]:
    """Change one number in ``path`` (the first match of ``pattern``'s group 1); returns (was, now)."""
    import re

    text = path.read_text()
    m = re.search(pattern, text)
    assert m, pattern
    was = m.group(1)
    now = edit(was)
    path.write_text(text[:m.start(1)] + now + text[m.end(1):])
    return was, now


def _one_digit(number: str) -> str:
    return str((int(number[0]) % 9) + 1) + number[1:]  # the first digit changed, never to 0


def test_one_digit_in_a_step_is_caught_and_never_reported(a_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(a_run, run)
    ok = ssdpts("verify", str(run))
    assert ok.returncode == 0 and "of them recomputed from fio's output" in ok.stdout, ok.stdout
    was, now = _edit_first(run / "steps.jsonl", r'"phase":"round","round":3,.*?"read":\{[^}]*?"lat_mean_ns":([0-9.]+)',
                           _one_digit)
    r = ssdpts("verify", str(run))
    assert r.returncode == 1, r.stdout
    assert f"measurement.read.lat_mean_ns is {float(now):.12g}; recomputed from fio's output: {float(was):.12g}" \
        in r.stdout, r.stdout
    assert "round 3 of lat" in r.stdout
    db = tmp_path / "lib.db"
    add = ssdpts("db", "add", "--db", str(db), str(run))
    assert "DAMAGED" in add.stdout + add.stderr, add.stdout + add.stderr
    export = ssdpts("db", "export", "--db", str(db), "--format", "json")
    assert export.returncode == 0 and json.loads(export.stdout) == [], export.stdout[:300]
    # the report shows fio's value, and names the altered one
    rep = ssdpts("report", str(run), "--format", "html")
    html = (run / "report.html").read_text()
    assert "DAMAGED" in html and "lat_mean_ns" in html, rep.stderr


def test_one_digit_in_the_summary_is_caught_and_recomputed(a_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(a_run, run)
    twin = tmp_path / "twin"
    shutil.copytree(a_run, twin)
    summary = json.loads((run / "summary.json").read_text())
    truth = summary["parts"]["lat"]["table"]["rows"][0]["lat_mean_us"]
    was, now = _edit_first(run / "summary.json", r'"lat_mean_us": ([0-9.]+)', _one_digit)
    assert float(was) == truth
    r = ssdpts("verify", str(run))
    assert r.returncode == 1 and "summary.json was altered after ssdpts wrote it" in r.stdout, r.stdout
    assert f"lat_mean_us is {float(now):.12g}; recomputed from its steps: {truth:.12g}" in r.stdout, r.stdout
    out = tmp_path / "cmp.json"
    c = ssdpts("compare", str(twin), str(run), "--format", "json", "--out", str(out))
    assert c.returncode == 0, c.stderr
    assert now not in out.read_text() and "is damaged" in c.stderr
    db = tmp_path / "lib.db"
    for d in (twin, run):
        ssdpts("db", "add", "--db", str(db), str(d))
    rows = json.loads(ssdpts("db", "export", "--db", str(db), "--format", "json").stdout)
    assert rows and all(str(row.get("run_dir", "")).endswith("twin") or row.get("run_dir") is None for row in rows)
    assert not any(float(now) == row.get("value") for row in rows)


# --- hole 4: file targets by their contents -----------------------------------------------------


def test_a_user_file_copied_over_a_file_target_is_refused(tmp_path):
    target = tmp_path / "f.img"
    first = ssdpts("run", "lat", "--target", str(target), "--size", "64M", *LAT, "--out", str(tmp_path / "runs"),
                   "--quiet")
    assert first.returncode == 0, first.stderr
    user = tmp_path / "user.img"
    with open(user, "wb") as f:
        f.write(os.urandom(64 << 20))
    sh("cp", user, target)  # the same inode: the user's data now in it
    mine = sha(target)
    line = refused(ssdpts("run", "lat", "--target", str(target), *LAT, "--out", str(tmp_path / "runs"), "--quiet"),
                   f"{target} changed since ssdpts last wrote it", f"--destroy-data-on={target}")
    assert "sampled blocks differ" in line
    r = ssdpts("plan", "lat", "--target", str(target))
    assert r.returncode == 0 and "usable once confirmed" in r.stdout, r.stdout[:300]
    assert sha(target) == mine and len(list((tmp_path / "runs").iterdir())) == 1
    again = ssdpts("run", "lat", "--target", str(target), *LAT, "--out", str(tmp_path / "runs"), "--quiet",
                   "--destroy-data-on", str(target))
    assert again.returncode == 0, again.stderr


def test_a_file_target_killed_mid_run_needs_the_confirmation_to_resume(tmp_path):
    target = tmp_path / "f.img"
    out = tmp_path / "runs"
    proc = subprocess.Popen(["ssdpts", "run", "lat", "--target", str(target), "--size", "64M", *LAT, "--out", str(out),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = wait_lines(out, 1 + 9, proc)
    proc.kill()  # SIGKILL: no chance to record what the file holds
    proc.communicate(timeout=60)
    time.sleep(0.5)
    refused(ssdpts("resume", str(run), "--quiet"), "stopped without recording its contents",
            f"--destroy-data-on={target}")
    r = ssdpts("resume", str(run), "--quiet", "--destroy-data-on", str(target))
    assert r.returncode == 0, r.stderr
    assert ssdpts("verify", str(run)).returncode == 0
    # finished: sealed again, the next run needs nothing
    nxt = ssdpts("run", "lat", "--target", str(target), *LAT, "--out", str(out), "--quiet")
    assert nxt.returncode == 0, nxt.stderr
