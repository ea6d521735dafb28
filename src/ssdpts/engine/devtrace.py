"""Step boundaries as the device saw them: each step's first IO issued and last IO completed at the
block layer (the kernel's block tracepoints), recorded in every run that can read them.

What ssdpts's own threads see of a boundary (engine/gate.py: the release, fio's reported run time)
misses what happens between fio's thread waking and its first IO reaching the device, and between
the last completion and the gate hearing of it: under CPU contention exactly the stall the PTS
forbids. The block layer sees it.

How, at bounded cost (benchmarks/devtrace_cost.py):

* A private ftrace instance on the target's device (the whole disk of a partition), its issue and
  completion events filtered to that device, clock CLOCK_MONOTONIC (``trace_clock=mono``): the
  clock of the gate's release stamps.
* Tracing is switched on only around boundaries: from a timed step's planned end less LEAD_S (the
  drain of its last IOs) until the next step's first IO plus TAIL_S; a step of unknown length
  (the WIPC, bound by its size) and a step shorter than WHOLE_S (a time-compressed run) keep it
  on. At 60-s steps that is about 1% of the run's IOs.
* A child process (``python -m ssdpts.engine.devtrace``) owns the instance, switches tracing on and
  off, reads ``trace_pipe`` and keeps per step only what a boundary needs (first issue, last
  completion, IO count, IOs issued while another was in flight): it never shares the run's GIL,
  so the gate's thread answers fio as promptly as without it, and its memory does not grow with
  the run. The run tells it each release (step key, CLOCK_MONOTONIC ns, planned run time) on its
  stdin; it answers one JSON line per step once both ends of it are known.
* An IO belongs to the step released last before it was issued (the gate releases a step only
  after the previous one drained; an IO is issued after its step's release). Issues and
  completions are paired first in first out per (sector, direction), as engine/blocktrace.py does.

Where the tracepoints cannot be had (not root, no tracefs, a file target, a fio server's device),
boundaries come from fio's timeline as before, and the report says what that source cannot see.
"""


from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time

from .devtrace_child import INSTANCE_PREFIX
from .tracefs import TracefsUnavailable, ensure_mounted, remove_orphans

SOURCE = "block layer (kernel block tracepoints)"
ARM_WAIT_S = 0.2  # the longest a release after a settle waits for the child's window (a few ms)


class Unavailable(Exception):
    """The block tracepoints cannot be had for this target; the message says why."""


def traced_device(target_path: str) -> tuple[str, str, str]:
    """(kernel name, "major:minor" as the tracepoints' filter wants it, level) of what to trace for
    ``target_path``: the device itself, the whole disk of a partition. Raises Unavailable."""
    try:
        st = os.stat(target_path)
    except OSError as exc:
        raise Unavailable(f"cannot stat {target_path} ({exc.strerror})") from None
    if not (st.st_mode & 0o170000 == 0o060000):
        raise Unavailable("a file target: the block layer sees its filesystem's IO, not the steps'")
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"))
    if Path(f"/sys/class/block/{name}/partition").exists():
        name = Path(os.path.realpath(f"/sys/class/block/{name}")).parent.name
    dev = Path(f"/sys/class/block/{name}/dev").read_text().strip()
    major, minor = (int(x) for x in dev.split(":"))
    level = "rq" if Path(f"/sys/block/{name}/mq").is_dir() else "bio"
    return name, str((major << 20) | minor), level


def _tracefs_ready() -> None:
    try:
        ensure_mounted()
    except TracefsUnavailable as exc:
        raise Unavailable(str(exc)) from None
    remove_orphans(INSTANCE_PREFIX)  # left by a child killed with SIGKILL


class DeviceTrace:
    """The run's handle on its tracing child. ``released`` is called by the gate (any thread);
    ``views`` by the executor after each batch."""

    def __init__(self, target_path: str):
        self.name, dev, level = traced_device(target_path)
        _tracefs_ready()
        self.device = f"/dev/{self.name}"
        self._proc = subprocess.Popen([sys.executable, "-m", "ssdpts.engine.devtrace_child", dev, level],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, bufsize=1, preexec_fn=_die_with_parent)
        first = self._proc.stdout.readline().strip() if self._proc.stdout else ""
        if first != "ready":
            err = (self._proc.stderr.read() if self._proc.stderr else "").strip().splitlines()
            self._proc.kill()
            raise Unavailable(f"the block trace could not start ({(err or ['no reason given'])[-1]})")
        assert self._proc.stdin is not None
        self._stdin = self._proc.stdin.fileno()
        os.set_blocking(self._stdin, False)  # a release must never wait for the child
        self._lock = threading.Lock()
        self._next_key = 1
        self.lost: str | None = None  # why the child can no longer be told (its views then stop)
        self._views: dict[int, dict] = {}
        self._arrived = threading.Condition()
        self._settled = 0
        self._idle = False  # the child has settled and shut its window: the next release waits for "armed"
        self._armed = 0  # the child's "armed" answers
        self.overrun: int | None = None
        self.stats: dict | None = None  # the child's last words: events read, windows, CPU, memory, lag
        self._reader = threading.Thread(target=self._read, name="ssdpts-devtrace", daemon=True)
        self._reader.start()

    def arm(self) -> bool:
        """Before a step's release: where the child has settled (a part or a one-step batch ended)
        its window is shut; it is told to open it, and answers "armed" (waited for at most
        ARM_WAIT_S). True when it did: the caller then stamps the release, after which the step's
        first IO is seen. False where nothing needed arming or the child did not answer in time."""
        with self._lock:
            if not self._idle or self.lost:
                return False
            self._idle = False
            with self._arrived:
                before = self._armed
            self._tell("A\n")
        deadline = time.monotonic() + ARM_WAIT_S
        with self._arrived:
            while self._armed == before and time.monotonic() < deadline:
                self._arrived.wait(max(0.0, deadline - time.monotonic()))
            return self._armed != before

    def released(self, release_mono_s: float, duration_s: float | None) -> int:
        """A step was released at ``release_mono_s`` (time.monotonic()): its key for :meth:`views`."""
        with self._lock:
            key, self._next_key = self._next_key, self._next_key + 1
            self._tell(f"R {key} {int(release_mono_s * 1e9)} {'-' if duration_s is None else int(duration_s * 1e9)}\n")
        return key

    def _tell(self, line: str) -> None:
        """Caller holds the lock. Never blocks: a child that stopped reading is given up on."""
        if self.lost:
            return
        try:
            if os.write(self._stdin, line.encode()) != len(line):
                self.lost = "the block trace fell behind"
        except BlockingIOError:
            self.lost = "the block trace fell behind"
        except OSError as exc:
            self.lost = f"the block trace stopped ({exc.strerror})"

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            line = line.strip()
            with self._arrived:
                if line == "settled":
                    self._settled += 1
                elif line == "armed":
                    self._armed += 1
                elif line.startswith("{"):
                    doc = json.loads(line)
                    if "overrun" in doc:
                        self.overrun = int(doc["overrun"])
                        self.stats = doc
                    else:
                        self._views[int(doc["key"])] = doc  # its start first, then its whole view
                self._arrived.notify_all()

    def views(self, keys: list[int | None], *, settle: bool, timeout_s: float = 2.0,
              ends: list[int | None] | None = None) -> list[dict | None]:
        """The device's view of these steps (None: not known), waiting up to ``timeout_s`` for the
        start of each and the end of each in ``ends`` (default: every one). ``settle``: no step
        follows for now (the part ended): the child settles every step up to now."""
        ends = keys if ends is None else ends
        with self._arrived:
            settled = self._settled
        if settle:
            with self._lock:
                self._tell("F\n")
                self._idle = True
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while time.monotonic() < deadline:
                if all(k is None or k in self._views for k in keys) \
                        and all(k is None or self._views.get(k, {}).get("end") for k in ends) \
                        and (not settle or self._settled > settled):
                    break
                self._arrived.wait(max(0.0, deadline - time.monotonic()))
            return [None if k is None else self._views.get(k) for k in keys]

    def view(self, key: int | None) -> dict | None:
        with self._arrived:
            return None if key is None else self._views.get(key)

    def close(self) -> None:
        with self._lock:
            self.lost = self.lost or "closed"
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()  # end of input: the child drains, reports and removes its instance
            except OSError:
                pass
        try:
            self._proc.wait(timeout=60)  # it reads what the trace still holds, then reports
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=10)


def device_view(trace: DeviceTrace, key: int | None, prev: int | None, offset_s: float) -> dict | None:
    """What a step record keeps of the device's view (Unix seconds: CLOCK_MONOTONIC + ``offset_s``):
    its first issue and last completion, the previous step's last completion, and the gap between
    (idle when positive, overlap when negative) in ms from the trace's own clock."""
    v = trace.view(key)
    if v is None:
        return None
    p = trace.view(prev) if prev is not None else None
    first, last = v.get("first_issue_ns"), v.get("last_complete_ns")
    before = p.get("last_complete_ns") if p else None

    def unix(ns: int | None) -> float | None:
        return None if ns is None else round(ns / 1e9 + offset_s, 6)

    return {"source": SOURCE, "device": trace.device, "first_issue_unix_s": unix(first),
            "last_complete_unix_s": unix(last), "prev_last_complete_unix_s": unix(before),
            "gap_ms": None if first is None or before is None else round((first - before) / 1e6, 3),
            "ios_seen": v.get("ios"), "busy_issues": v.get("busy_issues")}


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


