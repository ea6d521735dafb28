"""The step gate (engine/gate.py) with the very commands fio runs for its hooks, in real shells
(``sh -c "CMD > JOB.prerun.txt 2>&1"``, as fio's exec_string does), without fio."""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import time

import pytest

from ssdpts.engine.gate import Gate


def hook(cmd: str, cwd: Path, job: str = "s0001", mode: str = "prerun") -> subprocess.Popen:
    """Start a hook the way fio does: system("CMD > JOB.MODE.txt 2>&1") in fio's working directory."""
    return subprocess.Popen(["/bin/sh", "-c", f"{cmd} > {job}.{mode}.txt 2>&1"], cwd=cwd)


def wait_until(cond, timeout: float = 5.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def gate():
    g = Gate()
    yield g
    g.close()
    assert not g.root.exists(), "the gate's directory (FIFOs, hook output) is removed"


def test_a_step_starts_only_when_every_clone_of_the_previous_one_has_ended(gate):
    news: list[tuple[str, int]] = []
    a, b = gate.add([2, 1], listener=lambda kind, e: news.append((kind, e.number)))
    waiting = [hook(gate.prerun(b), gate.root, "s0002")]
    gate.release(a)
    clones = [hook(gate.prerun(a), gate.root) for _ in range(2)]
    assert all(p.wait(timeout=5) == 0 for p in clones), "both clones of step 1 pass their released barrier"
    assert wait_until(lambda: a.started_clones == 2 and a.ready_clones == 2)
    hook(gate.postrun(a), gate.root, mode="postrun").wait(timeout=5)  # clone 1 of step 1 has drained
    time.sleep(0.3)
    assert waiting[0].poll() is None and b.released_unix_s is None, "step 2 waits for the second clone"
    hook(gate.postrun(a), gate.root, mode="postrun").wait(timeout=5)
    assert waiting[0].wait(timeout=5) == 0, "released by the last clone's end"
    assert b.chained and b.released_unix_s >= a.ended_unix_s
    # The gate tells its listener after it has written the release (nothing may delay the next
    # step), so step 2's shell can exit before the gate's thread has told it: wait for the news.
    assert wait_until(lambda: ("ended", a.number) in news), news
    assert news.index(("released", b.number)) < news.index(("ended", a.number))
    # fio's own hook output files stay in the gate's directory, not in the caller's
    assert (gate.root / "s0001.postrun.txt").exists() and not Path("s0001.postrun.txt").exists()


def test_a_release_latches_for_a_clone_that_arrives_late(gate):
    (a,) = gate.add([3])
    gate.release(a)
    time.sleep(0.1)
    assert not a.ready_at_release
    late = [hook(gate.prerun(a), gate.root) for _ in range(3)]
    assert [p.wait(timeout=5) for p in late] == [0, 0, 0]
    assert wait_until(lambda: a.started_clones == 3)


def test_ready_at_release_when_every_clone_waits(gate):
    (a,) = gate.add([2])
    clones = [hook(gate.prerun(a), gate.root) for _ in range(2)]
    assert wait_until(lambda: a.ready_clones == 2)
    gate.release(a)
    assert [p.wait(timeout=5) for p in clones] == [0, 0]
    assert a.ready_at_release


def test_a_step_linked_to_an_ended_one_is_released_at_once(gate):
    (a,) = gate.add([1])
    gate.release(a)
    hook(gate.prerun(a), gate.root).wait(timeout=5)
    hook(gate.postrun(a), gate.root, mode="postrun").wait(timeout=5)
    assert wait_until(lambda: a.ended)
    (b,) = gate.add([1])  # the next round's fio, started after this round's last step ended
    gate.link(a, b)
    assert b.released_unix_s is not None and b.chained
    assert hook(gate.prerun(b), gate.root).wait(timeout=5) == 0


def test_a_planned_idle_delays_the_next_release_by_that_much(gate):
    """HIR: the next step is released the planned idle after the step drained, within a batch
    (the end releases it) and across batches (link to an ended step, release at a given time)."""
    a, b = gate.add([1, 1], idles=[0.3, 0.0])
    gate.release(a)
    hook(gate.prerun(a), gate.root).wait(timeout=5)
    waiting = hook(gate.prerun(b), gate.root, "s0002")
    hook(gate.postrun(a), gate.root, mode="postrun").wait(timeout=5)
    assert wait_until(lambda: a.ended)
    time.sleep(0.15)
    assert b.released_unix_s is None and waiting.poll() is None, "no step during the idle"
    assert waiting.wait(timeout=5) == 0
    # a Timer on a loaded host fires late: upper bounds leave 0.15 s, less than the idle twice over
    assert 0.3 <= b.released_unix_s - a.ended_unix_s < 0.45 and b.chained
    # a step of the next fio process linked after the idle has partly passed keeps the rest of it
    (c,) = gate.add([1], idles=[0.4])
    c.prev = None
    gate.link(b, c)  # b has not ended: released by its end
    hook(gate.prerun(c), gate.root, "s0003")
    hook(gate.postrun(b), gate.root, mode="postrun").wait(timeout=5)
    assert wait_until(lambda: c.released_unix_s is not None)
    hook(gate.postrun(c), gate.root, mode="postrun").wait(timeout=5)
    assert wait_until(lambda: c.ended)
    time.sleep(0.1)
    (d,) = gate.add([1])
    gate.link(c, d)
    assert d.released_unix_s is None and d.timer is not None
    assert wait_until(lambda: d.released_unix_s is not None)
    assert 0.4 <= d.released_unix_s - c.ended_unix_s < 0.49  # the idle counted again from the link: 0.5
    # a fresh batch released at a time (the idle a previous process ended with); closing cancels it
    (e,) = gate.add([1])
    t0 = time.monotonic()
    gate.release(e, t0 + 0.2)
    assert e.released_unix_s is None
    assert wait_until(lambda: e.released_unix_s is not None) and time.monotonic() - t0 >= 0.2
    (f,) = gate.add([1])
    gate.release(f, time.monotonic() + 0.2)
    gate.close_entries([f])
    time.sleep(0.3)
    assert f.released_unix_s is None and f.timer is None


def test_a_planned_idle_is_timed_from_the_end_of_the_run_time_not_from_the_heard_end(gate):
    """A timed step's IO ends its run time after it started; the gate hears the end later (the
    postrun shell forked, the thread on the CPU: tens of ms on a loaded host). The planned idle
    counts from the run time's end, so that late hearing does not lengthen it; a step heard to end
    before its run time (fio stopped it early) counts from the heard end."""
    a, b, c = gate.add([1, 1, 1], idles=[0.3, 0.3, 0.0], durations=[0.2, 0.5, 0.2])
    gate.release(a)
    hook(gate.prerun(a), gate.root).wait(timeout=5)
    assert wait_until(lambda: a.started_clones == 1)
    hook(gate.prerun(b), gate.root, "s0002")
    time.sleep(0.35)  # the end heard 0.15 s after the run time
    hook(gate.postrun(a), gate.root, mode="postrun").wait(timeout=5)
    assert wait_until(lambda: b.released_unix_s is not None)
    start_a = a.released_unix_s if a.ready_at_release else a.last_started_unix_s
    # from the heard end it would be 0.35 + 0.3 or more
    assert 0.2 + 0.3 <= b.released_unix_s - start_a < 0.2 + 0.3 + 0.12, "timed from the run time's end"
    assert b.released_unix_s - a.ended_unix_s < 0.3 - 0.1
    hook(gate.prerun(c), gate.root, "s0003")
    assert wait_until(lambda: b.started_clones == 1)
    hook(gate.postrun(b), gate.root, mode="postrun").wait(timeout=5)  # well before its 0.5 s
    assert wait_until(lambda: c.released_unix_s is not None)
    assert 0.3 <= c.released_unix_s - b.ended_unix_s < 0.45, "timed from the heard end"  # not the run time's: ~0.7


def test_closed_barrier_fails_the_waiting_hook_instead_of_hanging(gate):
    """A job whose fio was killed (or whose round is cancelled) must not wait for ever, and must
    not run: its prerun hook exits non-zero, which makes fio fail the job without any IO."""
    (a,) = gate.add([1])
    p = hook(gate.prerun(a), gate.root)
    assert wait_until(lambda: a.ready_clones == 1)
    gate.close_entries([a])
    assert p.wait(timeout=5) != 0
    assert not (gate.root / f"b{a.number}").exists()


def test_a_hook_never_blocks_on_reporting(gate):
    """The postrun hook opens the events FIFO read-write: it can report even if nobody reads."""
    (a,) = gate.add([1])
    gate.close()
    os.makedirs(gate.root, exist_ok=True)
    os.mkfifo(gate.root / "ev")
    p = hook(gate.postrun(a), gate.root, mode="postrun")
    assert p.wait(timeout=5) == 0
    for f in gate.root.iterdir():
        f.unlink()
    gate.root.rmdir()


def test_a_chained_release_survives_its_predecessor_closing_before_the_thread_read_its_end(gate):
    """Seen in `make demo` on a loaded host: fio exited right after its last step's end line, the
    executor closed that step's entry before the gate's thread had read the line, the line then
    matched no entry, and the next round (started ahead, chained to that step) waited at its
    barrier for ever. sync() makes close wait until the thread has read what fio wrote."""
    import threading

    a, = gate.add([1])
    b, = gate.add([1])
    gate.link(a, b)
    with gate._lock:  # the thread reads the end line and then waits here, as on a loaded host
        os.write(gate._ev_fd, f"e {a.number}\n".encode())
        closer = threading.Thread(target=lambda: (gate.sync(), gate.close_entries([a])))
        closer.start()
        time.sleep(0.3)
        assert closer.is_alive(), "closed before the thread had read the step's end"
    closer.join(timeout=5)
    assert not closer.is_alive()
    assert a.ended and b.released_unix_s is not None and b.chained


def _fake_fio(cmd: str, cwd: Path) -> subprocess.Popen:
    """A stand-in for fio: a process whose child is the hook's shell, started by system() as fio's
    job thread does."""
    import sys

    code = f"import os, time; os.system({f'{cmd} > s0001.prerun.txt 2>&1'!r}); time.sleep(600)"
    return subprocess.Popen([sys.executable, "-c", code], cwd=cwd)


def _shells_of(gate_root: Path) -> list[int]:
    """Shells whose command line waits at a barrier of this gate."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0") if d.name.isdigit() else []
            if len(argv) > 2 and os.path.basename(argv[0]) == b"sh" and f"read x < {gate_root}/b".encode() in argv[2]:
                out.append(int(d.name))
        except OSError:
            pass
    return out


@pytest.mark.parametrize("gate_alive", [True, False], ids=["gate-open", "gate-gone"])
def test_a_waiting_hook_dies_with_its_fio(gate, gate_alive):
    """A SIGKILLed ssdpts takes fio with it (parent-death signal): the barrier's shells must die
    too, whether the gate still holds the barrier (read blocks) or has gone without removing its
    directory (the shell's open of the FIFO then waits for a writer for ever)."""
    from ssdpts.engine import gate as gate_mod

    if gate_mod._setpriv() is None:
        pytest.skip("setpriv with --pdeathsig (util-linux >= 2.33) is not installed")
    (e,) = gate.add([1])
    cmd = gate.prerun(e)
    if not gate_alive:  # what SIGKILL leaves: no writer, the FIFO still there
        os.close(e.fd)
        e.fd = os.open("/dev/null", os.O_WRONLY)
    fio = _fake_fio(cmd, gate.root)
    try:
        assert wait_until(lambda: len(_shells_of(gate.root)) == 1), "the hook reached its barrier"
        if gate_alive:
            assert wait_until(lambda: e.ready_clones == 1)
    finally:
        fio.kill()
        fio.wait()
    assert wait_until(lambda: not _shells_of(gate.root), timeout=3), "the waiting shell outlived its fio"


def test_stale_hook_shells_of_a_dead_run_are_swept(tmp_path):
    """Shells of a run that died before the fix (waiting on a gate directory whose ssdpts is gone)
    are killed by the next gate made in that temporary directory; a live run's are left alone."""
    import sys
    from ssdpts.engine import gate as gate_mod

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale_dir, live_dir = tmp_path / f"ssdpts-gate-{dead.pid}-x", tmp_path / f"ssdpts-gate-{os.getpid()}-y"
    shells = []
    for d in (stale_dir, live_dir):
        d.mkdir()
        os.mkfifo(d / "b1")
        # The old hook form: its open of the barrier blocks, no writer ever comes.
        shells.append(hook(f"echo r 1 1<>{d}/ev && read x < {d}/b1 && echo s 1 1<>{d}/ev && :", d))
    try:
        assert wait_until(lambda: _shells_of(stale_dir) and _shells_of(live_dir))
        gate_mod._swept_shells = False
        g = Gate(root=Path(__import__("tempfile").mkdtemp(prefix=f"ssdpts-gate-{os.getpid()}-", dir=tmp_path)))
        g.close()
        assert shells[0].wait(timeout=5) == -9, "the dead run's shell is killed"
        assert not stale_dir.exists(), "and its directory removed"
        assert shells[1].poll() is None and live_dir.exists(), "a live run's shell is not touched"
    finally:
        for s in shells:
            s.kill()
            s.wait()


@pytest.mark.parametrize("tmp", ["a b", "a;b", "a$b", "a'b", "a\nb"])
def test_a_temporary_directory_the_hooks_cannot_name_unquoted_is_refused(tmp_path, monkeypatch, tmp):
    """The hooks name the gate's directory unquoted in fio's job file and to sh: under '/x/a b' the
    prerun's 'echo r G 1<>/x/a b/...' would write into /x/a. Refused before anything is made."""
    import tempfile

    from ssdpts.errors import UserError

    d = tmp_path / tmp
    d.mkdir()
    (tmp_path / "a").write_bytes(b"user's")
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    with pytest.raises(UserError, match="TMPDIR"):
        Gate()
    assert not any(d.iterdir()) and (tmp_path / "a").read_bytes() == b"user's"
