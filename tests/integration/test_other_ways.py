"""Every way to the target's storage, held and watched for the whole run, and what the device holds
checked again before a resume writes it: the third set of wrong-data holes, reproduced on real loop
and zram devices and mount namespaces (``unshare -m``, as a container mounts a device) as they
were found, with the SHA-256 of every device and file involved before and after:

1. another loop device over the target's file (or zram device) mounted in another mount namespace:
   the run wrote the filesystem under it (this process's mount table does not show that mount);
2. another loop device over the same storage formatted and mounted while the run wrote, or one
   attached mid-run (over a loop device's file, over a file target): everything succeeded and the
   run noticed at the next round, after writing over the new filesystem;
3. ``resume`` onto a device formatted and filled since the run stopped: no question asked;
4. the wording of a refusal when the kernel's claim finds a device busy (it named ssdpts's own
   PID); a hard link to an active swap file; a dangling symlink as a file target.

The same through 'ssdpts agent' on another host (docs/hosts.md).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
import signal
import subprocess
import time

import pytest

from .conftest import checksum, finished_lines, run as sh, ssdpts
from .test_wrong_data import ext4, lat_run
from .test_wrong_device import manifest, refused, sha, wait_lines

pytestmark = pytest.mark.root


@contextlib.contextmanager
def mounted_elsewhere(dev: str, where: Path, write_mib: int = 1):
    """``dev`` mounted at ``where`` in a mount namespace of its own (``unshare -m``, as a container
    does), with a file of ``write_mib`` MiB written there; this process's mount table does not show
    it. Unmounted (the namespace ends) when the block ends."""
    where.mkdir(exist_ok=True)
    script = (f"mount {dev} {where} && dd if=/dev/urandom of={where}/user.bin bs=1M count={write_mib} "
              f"status=none && sync && echo ready && exec sleep 600")
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "ready", proc.stderr.read() if proc.stderr else line
        assert str(where) not in Path("/proc/self/mounts").read_text(), "the mount leaked into this namespace"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def losetup(backing: str | Path, *opts: str) -> str:
    return sh("losetup", *opts, "-f", "--show", backing).strip()


def detach(*devs: str) -> None:
    for d in devs:
        subprocess.run(["losetup", "-d", d], capture_output=True, check=False)


def start_bg(target: str, out: Path, *extra: str, step: str = "0.3", confirm: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(["ssdpts", "run", "lat", "--target", target, "--step-seconds", step, "--max-rounds", "5",
                             "--destroy-data-on", confirm or target, "--out", str(out), "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def user_filesystem(dev: str, where: Path, mib: int) -> None:
    """What a user does with a device: ext4 made, mounted, ``mib`` MiB written, unmounted."""
    ext4(dev)
    where.mkdir()
    sh("mount", dev, where)
    try:
        (where / "user.bin").write_bytes(os.urandom(mib << 20))
        os.sync()
    finally:
        sh("umount", where)


def tried(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


# --- 1. a way to the same storage in use in another mount namespace -----------------------------------


@pytest.mark.parametrize("under", ["file", "zram"])
def test_another_loop_over_the_storage_mounted_in_another_namespace_is_refused(under, make_zram, tmp_path):
    if under == "file":
        backing: str = str(tmp_path / "shared.img")
        sh("truncate", "-s", "128M", backing)
    else:
        backing = make_zram(128 * 2**20)
    a = losetup(backing, "--direct-io=on")
    b = losetup(backing)
    try:
        ext4(b)
        with mounted_elsewhere(b, tmp_path / "mnt"):
            before = sha(backing)
            line = refused(lat_run(a, tmp_path / "runs", "--purge", "none"), a, b, "another mount namespace",
                           str(tmp_path / "mnt"))
            assert "ssdpts process" not in line and f"PID {os.getpid()}" not in line
            r = ssdpts("plan", "lat", "--target", a, "--destroy-data-on", a)
            assert r.returncode == 2 and "another mount namespace" in " ".join(r.stdout.split()), r.stdout[-600:]
            assert sha(backing) == before, "a refused run wrote the filesystem of the other namespace"
            assert not (tmp_path / "runs").exists()
    finally:
        detach(a, b)


# --- 2. held for the whole run; a new way found mid-round stops it ------------------------------------


def test_every_other_way_is_held_for_the_whole_run(make_loop, tmp_path):
    """Another loop device over the target's file, idle when the run starts: while the run holds it,
    mkfs and a mount in another namespace fail 'busy'; the run completes; afterwards both work."""
    img = tmp_path / "shared.img"
    a = make_loop("64M", image=img)
    b = losetup(img)
    try:
        out = tmp_path / "runs"
        proc = start_bg(a, out, "--purge", "none")
        run = wait_lines(out, 1 + 9, proc)  # WIPC and round 1
        mkfs = tried("mkfs.ext4", "-q", "-F", b)
        (tmp_path / "mnt").mkdir()
        mount = tried("unshare", "-m", "sh", "-c", f"mount {b} {tmp_path / 'mnt'}")
        proc.communicate(timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert mkfs.returncode != 0 and "in use" in mkfs.stderr, (mkfs.returncode, mkfs.stderr)
        assert mount.returncode != 0 and "busy" in mount.stderr, (mount.returncode, mount.stderr)
        man = manifest(run)
        assert man["status"] == "complete" and man["claim"]["held"] == [b], man["claim"]
        assert tried("mkfs.ext4", "-q", "-F", b).returncode == 0  # given back with the run
    finally:
        detach(b)


@pytest.mark.parametrize("target_kind", ["loop", "file"])
def test_a_loop_attached_over_the_storage_mid_round_stops_the_run_at_once(target_kind, make_loop, tmp_path):
    """A loop device attached over the target's file mid-round (a file target's own file, or the
    file under a loop target) is another way to the storage the run writes: the watcher holds it
    (the user's mkfs fails 'busy') and the run stops in the round in flight, long before the guard
    at the next round would have run; the user's filesystem made after the stop stays intact."""
    img = tmp_path / "bench.img"
    if target_kind == "loop":
        target = make_loop("64M", image=img)
        extra: tuple[str, ...] = ("--purge", "none")
    else:
        target, extra = str(img), ("--size", "64M")
    out = tmp_path / "runs"
    proc = start_bg(target, out, *extra, step="2")  # rounds of 9 x 2 s
    run = wait_lines(out, 1, proc)  # WIPC done: round 1 (18 s) is running
    time.sleep(1)
    lines = len(finished_lines(run / "steps.jsonl"))
    t0 = time.monotonic()
    c = losetup(img)
    try:
        mkfs = tried("mkfs.ext4", "-q", "-F", c)
        _, err = proc.communicate(timeout=120)
        took = time.monotonic() - t0
        assert proc.returncode == 1, (proc.returncode, err)
        stderr_lines = [ln for ln in err.splitlines() if ln.startswith("ssdpts:")]
        assert stderr_lines and c in stderr_lines[-1] and "was attached over" in stderr_lines[-1], err
        # stopped in the round in flight: no step of it saved, within a fraction of that round
        assert len(finished_lines(run / "steps.jsonl")) == lines
        assert took < 10, f"the run went on for {took:.1f} s after {c} was attached (rounds are 18 s)"
        man = manifest(run)
        assert man["status"] == "interrupted" and c in man["interruption"]["device_unsafe"]
        if mkfs.returncode != 0:  # the watcher held it before mkfs opened it, or between mkfs's opens
            assert "in use" in mkfs.stderr or "busy" in mkfs.stderr, mkfs.stderr
        # the user's filesystem, made once the run had stopped, is theirs
        user_filesystem(c, tmp_path / "mnt", 8)
        before = checksum(c)
        time.sleep(1)
        assert checksum(c) == before and not subprocess.run(["pgrep", "-f", f"fio .*{run}"],
                                                            capture_output=True).stdout
    finally:
        detach(c)


# --- 3. resume by contents ---------------------------------------------------------------------------


def test_resume_onto_a_device_changed_since_the_stop_needs_the_confirmation(make_loop, tmp_path):
    dev = make_loop("128M")
    out = tmp_path / "runs"
    proc = start_bg(dev, out, "--max-rounds", "25")
    run = wait_lines(out, 1 + 9, proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    seal = manifest(run)["contents_seal"]
    assert seal["state"] == "sealed" and len(seal["sha256_16"]) == 128

    # untouched since: resumed without a question (the kept confirmation stands), stopped again
    proc = subprocess.Popen(["ssdpts", "resume", str(run), "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    n = len(finished_lines(run / "steps.jsonl"))
    deadline = time.monotonic() + 120
    while len(finished_lines(run / "steps.jsonl")) < n + 9 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert manifest(run)["resumptions"][-1]["contents"] == "unchanged since the run stopped"

    # formatted and filled since: refused, naming what changed; nothing written
    user_filesystem(dev, tmp_path / "mnt", 30)
    before = checksum(dev), (run / "manifest.json").read_bytes(), (run / "steps.jsonl").read_bytes()
    line = refused(ssdpts("resume", str(run), "--quiet"), dev, "changed since the run stopped", "TYPE=ext4",
                   "--destroy-data-on")
    assert "sampled blocks differ" in line
    assert (checksum(dev), (run / "manifest.json").read_bytes(), (run / "steps.jsonl").read_bytes()) == before
    r = ssdpts("resume", str(run), "--quiet", "--destroy-data-on", dev)
    assert r.returncode == 0, r.stderr
    man = manifest(run)
    assert man["status"] == "complete" and man["contents_seal"]["state"] == "sealed"
    assert man["resumptions"][-1]["contents"].startswith("not compared")


def test_resume_after_a_kill_needs_the_confirmation(make_loop, tmp_path):
    """Killed, a run cannot record what the device holds: nothing proves what happened since."""
    dev = make_loop("128M")
    out = tmp_path / "runs"
    proc = start_bg(dev, out, "--max-rounds", "25")
    run = wait_lines(out, 1 + 9, proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert manifest(run)["contents_seal"]["state"] == "writing"
    refused(ssdpts("resume", str(run), "--quiet"), "stopped without recording what it holds", "--destroy-data-on")


# --- 4. wording, swap files by identity, dangling symlinks --------------------------------------------


def test_a_device_another_program_holds_is_refused_in_the_kernels_words(make_loop, tmp_path):
    """The exclusive probe finds the device busy: the refusal says the kernel refused the claim,
    never 'another ssdpts process' with ssdpts's own PID."""
    dev = make_loop("64M")
    holder = subprocess.Popen(["python3", "-c", f"import os,sys,time; os.open({dev!r}, os.O_RDONLY | os.O_EXCL); "
                               "print('held', flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout and holder.stdout.readline().strip() == "held"
        line = refused(lat_run(dev, tmp_path / "runs"), dev, "in use", "the kernel refused an exclusive open")
        assert "ssdpts process" not in line and f"PID {os.getpid()}" not in line
    finally:
        holder.kill()
        holder.wait()


def test_a_hard_link_to_an_active_swap_file_is_refused(tmp_path):
    from ssdpts.device import marker

    target = tmp_path / "f.img"
    sh("dd", "if=/dev/zero", f"of={target}", "bs=1M", "count=64", "status=none")
    os.chmod(target, 0o600)
    marker.mark_created(str(target))
    marker.seal(str(target))
    link = tmp_path / "swap.img"
    os.link(target, link)
    sh("mkswap", link)
    if tried("swapon", str(link)).returncode != 0:
        pytest.skip("this machine cannot swap on a file here")
    try:
        before = sha(target)
        refused(lat_run(str(target), tmp_path / "runs"),
                "active swap file", str(link))
        assert sha(target) == before
    finally:
        subprocess.run(["swapoff", str(link)], check=False)


def test_a_dangling_symlink_is_not_a_file_target(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "bench.img"
    link.symlink_to(elsewhere / "nothing.img")
    refused(ssdpts("run", "lat", "--target", str(link), "--size", "64M", "--step-seconds", "0.1", "--max-rounds", "5",
                   "--out", str(tmp_path / "runs"), "--quiet"),
            "symbolic link", "does not exist")
    assert not (elsewhere / "nothing.img").exists() and not (tmp_path / "runs").exists()


# --- the same through the agent on another host --------------------------------------------------------


@pytest.fixture
def host_on_loop(tmp_path):
    """The other host of test_remote_hosts, its device a loop device over ``shared.img``."""
    from .test_remote_hosts import OtherHost

    img = tmp_path / "shared.img"
    sh("truncate", "-s", "64M", img)
    dev = losetup(img, "--direct-io=on")
    h = OtherHost(tmp_path, dev)
    try:
        h.start()
        yield h, img
    finally:
        h.remove()
        detach(dev)


def _remote(h, out: Path, *extra: str) -> list[str]:
    return ["ssdpts", "run", "lat", "--host", f"h={h.address}", "--target", f"h:{h.path}", "--remote-shell",
            h.shell_option, "--destroy-data-on", h.path, "--step-seconds", "1", "--threads", "1", "--iodepth", "4",
            "--max-rounds", "5", "--purge", "none", "--out", str(out), "--quiet", *extra]


def test_through_the_agent_a_mounted_sibling_refuses_and_a_new_one_stops_the_run(host_on_loop, tmp_path):
    h, img = host_on_loop
    b = losetup(img)
    try:
        ext4(b)
        with mounted_elsewhere(b, tmp_path / "mnt"):
            before = sha(img)
            r = subprocess.run(_remote(h, tmp_path / "refused"), capture_output=True, text=True, timeout=300)
            refused(r, "on host h:", b, "another mount namespace")
            assert sha(img) == before
    finally:
        detach(b)
    out = tmp_path / "runs"
    proc = subprocess.Popen(_remote(h, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = wait_lines(out, 1, proc, timeout=240)  # WIPC done: round 1 (6 steps of 1 s) runs
    lines = len(finished_lines(run / "steps.jsonl"))
    c = losetup(img)
    try:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, err
        assert "on host h:" in err and c in err and "was attached over" in err, err
        assert len(finished_lines(run / "steps.jsonl")) == lines
        man = json.loads((run / "manifest.json").read_text())
        assert man["status"] == "interrupted" and c in man["interruption"]["device_unsafe"]
    finally:
        detach(c)
