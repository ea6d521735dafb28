"""engine/tracefs.py, the one ftrace instance class, on a stand-in tracefs (a directory whose
instances/ populate on mkdir and empty on rmdir, as the kernel's do): what it writes where, the
kernel's counters read, removal, and orphans of dead tracing children."""

from __future__ import annotations

import os
from pathlib import Path
import shutil

import pytest

from ssdpts.engine import tracefs
from ssdpts.engine.tracefs import BIO_EVENTS, RQ_EVENTS, Instance

_mkdir, _rmdir = Path.mkdir, Path.rmdir


@pytest.fixture
def fake_tracefs(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "tracing"
    (root / "instances").mkdir(parents=True)

    def mkdir(self, *a, **kw):
        _mkdir(self, *a, **kw)
        if self.parent == root / "instances":  # the kernel populates a new instance
            for ev in (*RQ_EVENTS, *BIO_EVENTS, "block_rq_requeue"):
                _mkdir(self / "events" / "block" / ev, parents=True)
            for cpu in (0, 1):
                _mkdir(self / "per_cpu" / f"cpu{cpu}", parents=True)
                (self / "per_cpu" / f"cpu{cpu}" / "stats").write_text(
                    f"entries: {10 + cpu}\noverrun: {cpu * 3}\ncommit overrun: 0\nread events: 5\n")

    def rmdir(self):
        if self.parent == root / "instances":
            shutil.rmtree(self)
        else:
            _rmdir(self)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(Path, "rmdir", rmdir)
    return root


def read(inst: Instance, rel: str) -> str:
    return (inst.root / rel).read_text()


def test_an_instance_is_created_stopped_filtered_and_removed(fake_tracefs):
    inst = Instance("ssdpts-test-1", RQ_EVENTS, "dev == 7340035", 4096, fake_tracefs)
    assert inst.root == fake_tracefs / "instances" / "ssdpts-test-1" and inst.pipe == inst.root / "trace_pipe"
    assert (read(inst, "tracing_on"), read(inst, "trace_clock"), read(inst, "buffer_size_kb")) == ("0", "mono", "4096")
    for ev in RQ_EVENTS:
        assert read(inst, f"events/block/{ev}/filter") == "dev == 7340035"
        assert not (inst.root / f"events/block/{ev}/enable").exists()  # created with its events off
    assert not (inst.root / "events/block/block_bio_queue/filter").exists()
    inst.enable(True)
    inst.record(True)
    assert [read(inst, f"events/block/{ev}/enable") for ev in RQ_EVENTS] == ["1", "1"] and read(inst, "tracing_on") == "1"
    inst.clear()
    assert read(inst, "trace") == ""
    # the kernel's counters, over every CPU: written = entries + read events + overrun; lost = overrun
    assert inst.counts() == (10 + 0 + 5 + 11 + 3 + 5, 3) and inst.overrun() == 3
    enables = [inst.root / f"events/block/{ev}/enable" for ev in RQ_EVENTS]
    seen = {}
    real_write = Instance.write

    def spy(self, rel, value):
        real_write(self, rel, value)
        seen[rel] = value

    Instance.write = spy
    try:
        inst.remove()
    finally:
        Instance.write = real_write
    assert seen["tracing_on"] == "0" and all(seen[str(p.relative_to(p.parents[3]))] == "0" for p in enables)
    assert not inst.root.exists() and not inst.on
    inst.remove()  # twice: nothing left to remove


def test_enable_writes_only_a_change(fake_tracefs):
    inst = Instance("ssdpts-test-2", BIO_EVENTS, "dev == 1", 1024, fake_tracefs)
    inst.enable(False)
    assert not (inst.root / "events/block/block_bio_queue/enable").exists()
    inst.enable(True)
    (inst.root / "events/block/block_bio_queue/enable").write_text("x")
    inst.enable(True)  # already on: not written again (each write costs the kernel a patch of its tracepoint)
    assert read(inst, "events/block/block_bio_queue/enable") == "x"
    inst.remove()


def test_a_failed_configuration_leaves_no_instance(fake_tracefs):
    with pytest.raises(OSError):
        Instance("ssdpts-test-3", ("no_such_event",), "dev == 1", 1024, fake_tracefs)
    assert not list((fake_tracefs / "instances").iterdir())


def test_orphans_of_dead_children_are_removed(fake_tracefs):
    dead = 2**22 + 17  # above pid_max's default: no such process
    for pid in (os.getpid(), dead):
        Instance(f"ssdpts-dev-{pid}", RQ_EVENTS, "dev == 1", 1024, fake_tracefs)
    Instance("ssdpts-other-1", RQ_EVENTS, "dev == 1", 1024, fake_tracefs)
    tracefs.remove_orphans("ssdpts-dev-", fake_tracefs)
    assert sorted(p.name for p in (fake_tracefs / "instances").iterdir()) == [f"ssdpts-dev-{os.getpid()}", "ssdpts-other-1"]


def test_tracefs_needs_root(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(tracefs.TracefsUnavailable, match="need root"):
        tracefs.ensure_mounted(tmp_path)
