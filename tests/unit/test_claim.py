"""device/safety/claim.py on file targets (no device needed): one ssdpts process per target, refusals that
name the run and PID holding it, lock files that go with their holder. The kernel's exclusive
claim on block devices is exercised in tests/integration/test_wrong_device.py and
test_safety_devices.py."""

from __future__ import annotations

import os

import pytest

from ssdpts.device.safety import claim as claim_mod
from ssdpts.device import marker
from ssdpts.device.safety.claim import Claim
from ssdpts.device.safety.locks import holder_of, lock_dir
from ssdpts.device.target import open_target
from ssdpts.errors import UserError


@pytest.fixture(autouse=True)
def private_lock_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(claim_mod.LOCK_DIR_ENV, str(tmp_path / "locks"))


def test_second_claim_is_refused_naming_the_run_and_pid(tmp_path):
    t = open_target(str(tmp_path / "t.img"), size_bytes=1 << 20)
    first = Claim(t).acquire(run_dir=tmp_path / "runs" / "r1")
    try:
        with pytest.raises(UserError) as exc:
            Claim(open_target(str(tmp_path / "t.img"), size_bytes=1 << 20)).acquire()
        msg = str(exc.value)
        assert "\n" not in msg and f"ssdpts run {tmp_path / 'runs' / 'r1'}" in msg and f"PID {os.getpid()}" in msg
        assert f"kill -INT {os.getpid()}" in msg
        # through a symlink: the same file, the same lock (a link to a file not yet there is refused
        # as a target: test_dangling_symlink_is_not_a_file_target)
        (tmp_path / "t.img").write_bytes(b"")
        link = tmp_path / "link.img"
        link.symlink_to(tmp_path / "t.img")
        with pytest.raises(UserError, match="in use by the ssdpts run"):
            Claim(open_target(str(link), size_bytes=1 << 20)).acquire()
        h = holder_of(t)
        assert h is not None and h.pid == os.getpid()
    finally:
        first.release()
    assert holder_of(t) is None
    assert not list(lock_dir().iterdir()), "the lock file outlived its holder"
    with Claim(t):  # free again
        pass


def test_a_holder_still_starting_is_named_by_its_command(tmp_path):
    t = open_target(str(tmp_path / "t.img"), size_bytes=1 << 20)
    c = Claim(t)
    c.lock()
    try:
        with pytest.raises(UserError, match="another ssdpts process .*PID"):
            Claim(t).lock()
    finally:
        c.release()


def test_other_targets_are_not_blocked(tmp_path):
    a = Claim(open_target(str(tmp_path / "a.img"), size_bytes=1 << 20)).acquire()
    try:
        with Claim(open_target(str(tmp_path / "b.img"), size_bytes=1 << 20)):
            pass
    finally:
        a.release()


def test_lock_dir_falls_back_when_unwritable(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv(claim_mod.LOCK_DIR_ENV, str(blocker / "locks"))
    d = lock_dir()
    assert d != blocker / "locks" and d.is_dir() and os.access(d, os.W_OK)


def test_guard_on_a_file_target(tmp_path):
    from ssdpts.device.safety import guard as safety

    path = tmp_path / "t.img"
    path.write_bytes(b"\0" * 4096)
    marker.mark_created(str(path))
    t = open_target(str(path))
    with Claim(t) as c:
        c.check()  # ours, present
        path.unlink()
        path.write_bytes(b"mine" * 1024)  # replaced under the run by someone's file
        assert "not the file ssdpts created there" in c.unsafe_reasons()[0]
        path.unlink()
        assert c.unsafe_reasons() == [f"{t.path} was deleted during the run"]


def test_a_replaced_file_target_does_not_keep_its_old_identity_locked(tmp_path):
    """A file target is locked by its identity (device and inode) too. When a run's target is
    replaced (its file-recreate purge: a new file at the path), the old inode number is the
    filesystem's to give to any new file — seen in CI, another run's new target got it and was
    refused as 'in use'. The run gives the old identity up (rekey), and a lock whose holder's file
    has another identity now is not in use by it; the same file through another name still is."""
    a = tmp_path / "a.img"
    a.write_bytes(b"\0" * 4096)
    first = Claim(open_target(str(a))).acquire(run_dir=tmp_path / "runs" / "a")
    try:
        c = tmp_path / "c.img"
        os.link(a, c)  # the same file under another name: in use
        with pytest.raises(UserError, match="in use by the ssdpts run"):
            Claim(open_target(str(c))).acquire()
        # the run's target replaced (as its purge does): a.img is a new file; c.img keeps the old inode
        new = tmp_path / "a.new"
        new.write_bytes(b"\0" * 4096)
        os.replace(new, a)
        old_key = next(k for k, _ in Claim(open_target(str(c))).keys if k.startswith("inode-"))
        assert (lock_dir() / f"{old_key}.lock").exists()  # still held: the run has not rekeyed yet
        second = Claim(open_target(str(c))).acquire()  # ... but its holder's file is another now
        second.release()
        first.rekey()
        assert not (lock_dir() / f"{old_key}.lock").exists()  # given up
        assert any(k.startswith("inode-") and k != old_key for k, _ in first.keys)  # the new file's, held
        with pytest.raises(UserError, match="in use by the ssdpts run"):
            Claim(open_target(str(a))).acquire()
    finally:
        first.release()
