"""The step gate: ssdpts, not fio's job scheduler, decides when each step starts.

Why (measured per boundary with the kernel's block tracepoints, docs/methodology.md
"Step boundaries"): fio creates a job when its ``startdelay`` has passed, checking every ~100 ms,
then waits one more ~100 ms poll before releasing it, and the job's ``runtime`` clock starts
only after its own set-up. A step therefore starts late by 100-200+ ms and ends late by the
same amount; the boundary between two steps is the difference of two such delays: a few ms
usually, but ±100 ms when fio's polling phase wraps or the host is loaded, i.e. idle gaps or two
steps in flight at once (a LAT step at QD2). ``stonewall`` and ``wait_for`` wait for the same poll
(~250 ms per step), and a new fio process per round costs its start-up (~300 ms) between rounds.

How: every job (one per step) is created ahead of time and ends its set-up (device open,
buffers allocated and registered) inside fio's ``exec_prerun`` hook, which fio runs in the job's
own thread immediately before it starts the job's clock and issues the first IO. The hook blocks
on a FIFO the gate owns::

    exec_prerun=echo r G 1<>DIR/ev && read x < DIR/bG && echo s G 1<>DIR/ev && :
    exec_postrun=echo e G 1<>DIR/ev && :

(fio appends ``> JOB.prerun.txt 2>&1`` to the command: the trailing ``:`` takes it, so that
``echo`` still writes to the FIFO; ``;`` would start a comment in a fio job file.)

* ``read`` and ``echo`` are builtins of the shell fio starts (``system()``): no extra program is
  executed on the way from one step to the next. Where util-linux's ``setpriv`` can, that shell
  first execs ``setpriv --pdeathsig KILL sh -c 'CHAIN'`` (before its ``r`` line, i.e. while the job
  waits anyway): the waiting shell is then killed with fio, so a SIGKILLed run (fio killed by its
  own parent-death signal) leaves no shell holding the target open (see :meth:`Gate.prerun`).
* ``exec_postrun`` runs after the job's IO loop has ended and its in-flight IOs have completed;
  every clone (``numjobs``) reports ``e G``. When all clones of step G have reported, the gate
  writes one line per clone to step G+1's FIFO: each clone's ``read`` takes one line and the
  step starts. So a step never starts before the previous one has drained (no overlap, a LAT
  step never shares the device), and the idle between them is the time for a shell to report,
  the gate to answer and a shell to exit: about 2 ms.
* The gate holds every FIFO open for writing while it lives: a clone that reaches its barrier
  after the release still finds its line (the release latches), and if ssdpts dies, ``read``
  sees end-of-file, fails, and fio fails the job instead of running it unreleased. The events
  FIFO is opened read-write by the shells (``1<>``), so reporting never blocks.
* The gate is shared across fio processes: the first step of the next round, in a fio process
  started ahead, is released by the last step of the current round in the same way.
* A planned idle (HIR: ``Step.idle_after_s``, time with no IO from any thread) is the one delay
  the gate adds on purpose: the next step is released that long after the step has drained
  (a timer, not fio's ~100 ms poll), and the boundary's idle is measured against it. A timed
  step's drain is reckoned as its timeline reckons it, its start plus its run time (at most when
  the gate heard the end), not the moment the gate heard it: :meth:`Entry.idle_from_mono_s`.

Timestamps (host clock, CLOCK_REALTIME): ``released`` when the gate wrote the step's lines (its
thread is running then: the stamp is exact); ``ready`` and ``started`` when the gate received the
last clone's ``r G`` (set up, waiting at the barrier) and the first and last clone's ``s G``
(passed the barrier); ``ended`` when it received the last clone's ``e G``. Stamps of received
lines are late by the time the gate's thread takes to get the CPU (under 1 ms on an idle host,
up to ~10 ms under CPU load): a step's start is therefore its release when every clone was
waiting then (fio starts the job's clock ~0.5 ms later, as the block trace shows), and only
otherwise the arrival of its ``s`` lines (benchmarks/boundaries.py measures the agreement).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import functools
import itertools
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Callable

from ..errors import UserError


@dataclass(eq=False)
class Entry:
    """One step in the gate's chain."""

    number: int  # G: the step's number in the gate, unique for the gate's life
    clones: int  # fio numjobs: how many shells read the barrier and report the end
    fd: int  # write end of the step's barrier FIFO
    prev: "Entry | None" = None  # the step that must end before this one starts
    next: "Entry | None" = None
    listener: Callable[[str, "Entry"], None] | None = None  # ("released" | "started" | "ended", entry)
    idle_after_s: float = 0.0  # planned idle (HIR): the next step is released this long after the drain
    duration_s: float | None = None  # the step's run time (fio's runtime), None when size-bound (WIPC)
    timer: threading.Timer | None = None  # a release of this entry planned for later (its predecessor's idle)
    chained: bool = False  # released by its predecessor's end (not by the start of a fresh batch)
    released_unix_s: float | None = None
    released_mono_s: float | None = None
    ready_unix_s: float | None = None  # the last clone reached its barrier
    ready_clones: int = 0
    ready_at_release: bool = False  # every clone was waiting at its barrier when it was released
    started_unix_s: float | None = None  # the first clone passed its barrier
    started_mono_s: float | None = None
    last_started_unix_s: float | None = None  # the last clone passed its barrier
    last_started_mono_s: float | None = None
    started_clones: int = 0
    ended_unix_s: float | None = None
    ended_mono_s: float | None = None
    ended_clones: int = 0
    closed: bool = False
    trace_key: int | None = None  # the step's key in the device's block trace (engine/devtrace.py)

    @property
    def ended(self) -> bool:
        return self.ended_clones >= self.clones

    def idle_from_mono_s(self) -> float | None:
        """When a planned idle after this (ended) step begins: the end of its run time, reckoned
        from its start as the timeline reckons it (engine/fio.step_timeline: the release when every
        clone was waiting, else the last clone passing its barrier), at most when the gate heard the
        end. Not the heard end itself: that comes after the postrun shell was forked and the gate's
        thread got the CPU, 5-10 ms on a loaded host and at times 60 ms (measured on zram at load
        14), which lengthened every planned idle by as much (HIR, docs/pts-reference.md#hir)."""
        if self.ended_mono_s is None:
            return None
        start = self.released_mono_s if self.ready_at_release else self.last_started_mono_s
        if self.duration_s is None or start is None:
            return self.ended_mono_s
        return min(self.ended_mono_s, start + self.duration_s)


def _dead_owner(pid: int) -> bool:
    return pid != os.getpid() and not os.path.exists(f"/proc/{pid}")


_swept_shells = False


def _sweep_stale(tmp: Path) -> None:
    """Remove what ssdpts processes that no longer exist left behind (a SIGKILLed run cannot clean
    up): their gate directories, named by their pid, and, once per process, hook shells still
    waiting at a barrier in such a directory (ssdpts before the parent-death signal left them when
    it died: they keep the target open, which then answers EBUSY and cannot be removed)."""
    global _swept_shells
    if not _swept_shells:
        _swept_shells = True
        _kill_stale_hooks(tmp)
    for d in tmp.glob("ssdpts-gate-*-*"):
        try:
            pid = int(d.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if _dead_owner(pid):
            shutil.rmtree(d, ignore_errors=True)


def _kill_stale_hooks(tmp: Path) -> None:
    """SIGKILL the shells of our hooks (``sh -c`` with a barrier ``read`` of a gate directory in
    ``tmp``) whose gate's ssdpts is gone. Nothing else matches: the command names our FIFO."""
    pattern = re.compile(rf"read x < {re.escape(str(tmp))}/ssdpts-gate-(\d+)-[^/\s]+/b\d+")
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) < 3 or os.path.basename(argv[0]) != b"sh" or argv[1] != b"-c":
            continue
        m = pattern.search(argv[2].decode(errors="replace"))
        if m and _dead_owner(int(m.group(1))):
            try:
                os.kill(int(d.name), signal.SIGKILL)
            except OSError:
                pass


# A path the hooks name unquoted: one word to sh (no blank, quote, $, `, ~, glob or redirection) and
# a value fio's job file keeps as it is (no ';', '#', '${', blanks at the ends: engine/jobfile.py).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+,:@%=-]+")


def check_tmpdir() -> str:
    """The temporary directory the gate's directory goes in (TMPDIR, else /tmp), refused in one line
    (before anything is made) unless its path is plain: the hooks in fio's job file name it unquoted
    and sh runs them, so '/tmp/a b' would have ``echo ... 1<>/tmp/a b/ev`` write into /tmp/a."""
    tmp = tempfile.gettempdir()
    if not _PLAIN_PATH.fullmatch(tmp):
        raise UserError(f"the temporary directory {ascii(tmp)} (TMPDIR) is named unquoted in the step gate's "
                        "commands in fio's job file: set TMPDIR to a directory whose path has only letters, digits "
                        "and . _ - / + , : @ % = (docs/methodology.md \"Step boundaries\")")
    return tmp


def _new_root() -> Path:
    return Path(tempfile.mkdtemp(prefix=f"ssdpts-gate-{os.getpid()}-", dir=check_tmpdir()))


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv, if it can set the parent-death signal (util-linux >= 2.33) and its path
    can be named unquoted."""
    path = shutil.which("setpriv")
    if path is None or not _PLAIN_PATH.fullmatch(path):
        return None
    try:
        ok = subprocess.run([path, "--pdeathsig", "KILL", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if ok else None


@dataclass
class Gate:
    """A private directory with the FIFOs, and the thread that answers the shells."""

    root: Path = field(default_factory=_new_root)
    # Told of every release right after it (the device's block trace, engine/devtrace.py): must not block.
    on_release: Callable[[Entry], None] | None = None

    def __post_init__(self) -> None:
        _sweep_stale(self.root.parent)
        self.events = self.root / "ev"
        os.mkfifo(self.events, 0o600)
        # Read-write: the gate is always a reader (shells never block on it) and a writer
        # (a read never sees end-of-file; close() wakes the thread with a line of its own).
        self._ev_fd = os.open(self.events, os.O_RDWR | os.O_CLOEXEC)
        self._lock = threading.Lock()
        self._entries: dict[int, Entry] = {}
        self._count = 0
        self._syncs: dict[int, threading.Event] = {}  # sync(): tokens the thread has yet to read
        self._sync_tokens = itertools.count(1)
        self._thread = threading.Thread(target=self._serve, name="ssdpts-gate", daemon=True)
        self._thread.start()

    # ---- what fio runs ----------------------------------------------------------------------
    def prerun(self, e: Entry) -> str:
        ev = f"1<>{self.events}"
        chain = f"echo r {e.number} {ev} && read x < {self.root}/b{e.number} && echo s {e.number} {ev}"
        setpriv = _setpriv()
        if setpriv is None or any(c in str(self.root) for c in "'\" \t\\$`"):
            return f"{self._cd()}{chain} && :"
        # The shell that waits at the barrier dies with fio: setpriv gives it the parent-death
        # signal and execs the waiting shell in its place (same process, fio's child), which goes
        # on only if fio is still its parent (fio gone before the signal was set: it exits).
        # Without it, a shell of a SIGKILLed run (fio killed by its own parent-death signal) that
        # opened the barrier after ssdpts had gone waits for a writer for ever, the target open.
        # (Its output, which fio's appended redirection no longer takes, is discarded as before.)
        return f"exec {setpriv} --pdeathsig KILL sh -c '[ $PPID = \"$1\" ] && {chain}' sh $PPID >/dev/null 2>&1 && :"

    def postrun(self, e: Entry) -> str:
        return f"{self._cd()}echo e {e.number} 1<>{self.events} && :"

    def _cd(self) -> str:
        """fio appends its redirection of a hook's output to the command (to ':'): after this, that
        file is made here, not in fio's working directory, which a fio server's run does not choose
        (engine/gatehost.py)."""
        return "" if any(c in str(self.root) for c in "'\" \t\\$`") else f"cd {self.root} && "

    # ---- chain --------------------------------------------------------------------------------
    def add(self, clones: list[int], *, idles: list[float] | None = None,
            durations: list[float | None] | None = None,
            listener: Callable[[str, Entry], None] | None = None) -> list[Entry]:
        """Entries for consecutive steps (``clones[i]`` clones each, ``idles[i]`` s of planned idle
        after each, ``durations[i]`` s of run time), each released by the end of the one before
        plus its idle; the first by ``release`` or ``link``."""
        out: list[Entry] = []
        idles = idles or [0.0] * len(clones)
        durations = durations or [None] * len(clones)
        if len(idles) != len(clones) or len(durations) != len(clones):
            raise ValueError("one planned idle and one run time per step")
        with self._lock:
            prev = None
            for n, idle, dur in zip(clones, idles, durations):
                self._count += 1
                path = self.root / f"b{self._count}"
                os.mkfifo(path, 0o600)
                e = Entry(number=self._count, clones=n, fd=os.open(path, os.O_RDWR | os.O_CLOEXEC), prev=prev,
                          listener=listener, idle_after_s=float(idle), duration_s=dur)
                if prev is not None:
                    prev.next = e
                self._entries[e.number] = e
                out.append(e)
                prev = e
        return out

    def link(self, after: Entry, e: Entry) -> None:
        """``e`` starts when ``after`` has ended and its planned idle has passed (at once, or when
        the rest of the idle has passed, if it already has ended)."""
        with self._lock:
            e.prev, after.next = after, e
            if after.ended and not after.closed:
                self._release_after(after, e)

    def release(self, e: Entry, at_mono_s: float | None = None) -> None:
        """Release a step that has no predecessor in the gate (the first step of a fresh batch),
        at once or at ``at_mono_s`` (time.monotonic(): the end of an idle a previous batch ended with)."""
        with self._lock:
            if e.released_unix_s is None:
                self._release_at(e, at_mono_s)

    def detach(self, e: Entry) -> None:
        """Forget the link into ``e`` (its predecessor must no longer release it)."""
        with self._lock:
            if e.prev is not None and e.prev.next is e:
                e.prev.next = None
            e.prev = None
            self._cancel_timer(e)

    def sync(self, timeout_s: float = 10.0) -> None:
        """Return once the thread has read every line written to the event FIFO before this call.
        A fio that exited wrote its last step's end lines before it exited, but the thread may not
        have read them yet (a loaded host): closing that step's entry first would lose the release
        of the batch chained to it, whose jobs would then wait at their barrier for ever."""
        token = next(self._sync_tokens)
        done = self._syncs[token] = threading.Event()
        try:
            os.write(self._ev_fd, f"y {token}\n".encode())
        except OSError:
            self._syncs.pop(token, None)
            return
        done.wait(timeout_s)
        self._syncs.pop(token, None)

    def close_entries(self, entries: list[Entry]) -> None:
        """Done with these steps: close their FIFOs. A shell still waiting on one (its fio was
        killed) sees end-of-file, fails and exits instead of waiting for ever."""
        with self._lock:
            for e in entries:
                if e.closed:
                    continue
                e.closed = True
                self._cancel_timer(e)
                if e.next is not None and e.next.prev is e:
                    e.next.prev = None
                try:
                    os.close(e.fd)
                except OSError:
                    pass
                try:
                    (self.root / f"b{e.number}").unlink()
                except OSError:
                    pass
                self._entries.pop(e.number, None)

    def close(self) -> None:
        self.close_entries(list(self._entries.values()))
        try:
            os.write(self._ev_fd, b"q\n")
        except OSError:
            pass
        self._thread.join(timeout=5)
        try:
            os.close(self._ev_fd)
        except OSError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    # ---- the answering thread -------------------------------------------------------------------
    @staticmethod
    def _cancel_timer(e: Entry) -> None:
        if e.timer is not None:
            e.timer.cancel()
            e.timer = None

    def _release_after(self, prev: Entry, e: Entry) -> None:
        """Caller holds the lock: release ``e`` once ``prev`` (ended) has had its planned idle."""
        begin = prev.idle_from_mono_s()
        if prev.idle_after_s > 0 and begin is not None:
            self._release_at(e, begin + prev.idle_after_s)
        else:
            self._release(e)

    def _release_at(self, e: Entry, at_mono_s: float | None) -> None:
        """Caller holds the lock. A release in the future runs on a timer thread (docs/pts-reference.md#extended
        HIR: the idle is real, with every job of the step waiting at its barrier meanwhile)."""
        delay = None if at_mono_s is None else at_mono_s - time.monotonic()
        if delay is None or delay <= 0:
            self._release(e)
            return
        self._cancel_timer(e)

        def fire() -> None:
            with self._lock:
                if e.timer is t:
                    e.timer = None
                    self._release(e)

        t = threading.Timer(delay, fire)
        t.daemon = True
        e.timer = t
        t.start()

    def _release(self, e: Entry) -> None:
        """Caller holds the lock."""
        if e.closed or e.released_unix_s is not None:
            return
        self._cancel_timer(e)
        e.chained = e.prev is not None
        e.ready_at_release = e.ready_clones >= e.clones
        e.released_mono_s, e.released_unix_s = time.monotonic(), time.time()
        if self.on_release is not None:  # before the barrier opens: told before the step's first IO
            try:
                self.on_release(e)
            except Exception:  # noqa: BLE001 - a record must never stop the schedule
                pass
        try:
            os.write(e.fd, b"\n" * e.clones)  # one line per clone: each clone's read takes one
        except OSError:
            return
        self._notify("released", e)

    @staticmethod
    def _notify(kind: str, e: Entry) -> None:
        if e.listener is not None:
            try:
                e.listener(kind, e)
            except Exception:  # noqa: BLE001 - a listener must never stop the schedule
                pass

    def _serve(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._ev_fd, 4096)
            except OSError:
                return
            mono, unix = time.monotonic(), time.time()
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line == b"q":
                    return
                kind, _, num = line.partition(b" ")
                try:
                    n = int(num)
                except ValueError:
                    continue
                if kind == b"y":
                    done = self._syncs.get(n)
                    if done is not None:
                        done.set()
                    continue
                with self._lock:
                    e = self._entries.get(n)
                    if e is None:
                        continue
                    if kind == b"r":
                        e.ready_clones += 1
                        if e.ready_clones == e.clones:
                            e.ready_unix_s = unix
                    elif kind == b"s":
                        e.started_clones += 1
                        e.last_started_mono_s, e.last_started_unix_s = mono, unix
                        if e.started_unix_s is None:
                            e.started_mono_s, e.started_unix_s = mono, unix
                            self._notify("started", e)
                    elif kind == b"e":
                        e.ended_clones += 1
                        if e.ended:
                            e.ended_mono_s, e.ended_unix_s = mono, unix
                            if e.next is not None:
                                self._release_after(e, e.next)  # first: nothing may delay the next step
                            self._notify("ended", e)
