"""The tracing child of engine/devtrace.py: ``python -m ssdpts.engine.devtrace_child DEV LEVEL``.
Owns a private ftrace instance on one device, switches it on and off around step boundaries
(traceagg.Aggregator.want_open), reads what it holds and answers each step's first issue and last
completion on its stdout as they become known; the run tells it each release on its stdin."""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time

from .traceagg import TAIL_S, Aggregator, StepView, parse_chunk, view_json
from .tracefs import BIO_EVENTS, RQ_EVENTS, Instance

TICK_S = 0.01  # while tracing is on, what it holds is read this often
START_TICK_S = 0.002  # while a released step's first IO is awaited, the kernel's event count is read this often
TAIL_NS = int(TAIL_S * 1e9)
RT_PRIORITY = 2  # SCHED_FIFO, above a --realtime run's fio (engine/rtsched.py: 1)
# The kernel's own bound on that priority (RLIMIT_RTTIME: CPU time at real-time priority without a
# blocking call, in µs): a loop that ran away would get SIGXCPU after 50 ms (and be dropped to normal
# priority) and SIGKILL after 200 ms, instead of holding a CPU. Its work never runs 3 ms unblocked.
RT_SOFT_US, RT_HARD_US = 50_000, 200_000
WORK_S = 0.003  # catching up on a backlog: at most this much reading and reducing per TICK_S
IDLE_S = 1.0  # with no window and nothing to read, it sleeps until the next window, this long at most
CHUNK_BYTES = 256 * 1024  # read and reduced at a time (~2,500 events, a few ms)
# The kernel's buffers, all CPUs together: 64 MiB (4 MiB per CPU at least) hold a few seconds of a
# device at 400k IOPS (~50 bytes an event), what the child may fall behind on a busy host.
BUFFER_TOTAL_KB = 64 * 1024
BUFFER_MIN_KB = 4096
INSTANCE_PREFIX = "ssdpts-dev-"


def _instance(dev: str, level: str) -> Instance:
    """This child's instance (``ssdpts-dev-<pid>``: engine/devtrace.py removes those of dead children)
    on this device's requests with data (a flush has none), recording from the start: the events
    themselves are switched on and off (``Instance.enable``): an enabled tracepoint costs every IO
    its probe and filter even while the instance does not record (measured on zram at 700k IOPS:
    7-13% fewer IOPS with recording switched off between windows). Enabling takes ~11 ms (the
    kernel patches the tracepoint in), disabling under 1 ms; a window's start is stamped after it."""
    events = (*RQ_EVENTS, "block_rq_requeue") if level == "rq" else BIO_EVENTS
    inst = Instance(f"{INSTANCE_PREFIX}{os.getpid()}", events, f"dev == {dev} && nr_sector > 0",
                    max(BUFFER_MIN_KB, BUFFER_TOTAL_KB // max(os.cpu_count() or 1, 1)))
    inst.record(True)
    return inst


def _demote(_sig, _frame) -> None:  # pragma: no cover - child
    """SIGXCPU: the child ran RT_SOFT_US at real-time priority without blocking; it goes on at
    normal priority (late windows are marked by the parent, a held CPU would not be)."""
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    sys.stderr.write("ssdpts devtrace: over its real-time budget, at normal priority from now on\n")


def _priority() -> None:  # pragma: no cover - child
    """It must switch its windows on time on a busy host: at real-time priority (SCHED_FIFO,
    above fio's own under --realtime). Measured on the CI machine's 2 CPUs with fio at 700k IOPS on
    zram: a process at nice -10 — even in a session and scheduling group of its own — waited on the
    run queue for up to 8 s at a time (its 10-ms timeouts returned seconds late; windows opened
    after the steps had ended); at SCHED_FIFO its wake-ups were at most 1 ms late. Its work is
    bounded (WORK_S of every TICK_S at most while catching up), and the kernel bounds it too
    (RLIMIT_RTTIME), so it cannot hold a CPU. Without the privilege: nice -10."""
    try:
        signal.signal(signal.SIGXCPU, _demote)
        resource.setrlimit(resource.RLIMIT_RTTIME, (RT_SOFT_US, RT_HARD_US))
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
        return
    except (OSError, AttributeError, ValueError):
        pass
    try:
        os.nice(-10)
    except OSError:
        pass


def _child(dev: str, level: str) -> int:  # pragma: no cover - runs as its own process (tests drive it)
    """The tracing child: switches its instance on and off (Aggregator.want_open), reads what the
    trace holds every TICK_S while it is on (a read per event would cost more than the events), and
    answers each step's start and end as they become known. Events lost to a full buffer (the
    kernel's overrun count) make every step not yet answered unknown.

    One piece: the child's event loop, whose state (the instance, the open windows, the read
    budget) every branch shares."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run stops it (stdin closed), not Ctrl-C
    try:  # never at the real-time priority of a --realtime run (inherited): it must not hold fio's CPU
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError):
        pass
    _priority()
    inst = _instance(dev, level)
    agg = Aggregator()
    out = sys.stdout
    pipe = os.open(inst.pipe, os.O_RDONLY | os.O_NONBLOCK)
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)
    buf, inbuf = b"", b""
    print("ready", flush=True)
    inst.enable(True)
    agg.window_opened(time.monotonic_ns())
    quit_after: int | None = None
    overrun, checked = 0, 0
    behind = False
    worked = time.monotonic_ns()
    # The step's first IO is noticed by the kernel's event count rising after its release, not by
    # reading the events: the window then closes TAIL_S later however far behind the reading is.
    armed: int | None = inst.counts()[0]  # the count when the current step was released (None: its IO seen)
    s: StepView
    try:
        while True:
            now = time.monotonic_ns()
            if armed is not None and inst.on and inst.counts()[0] > armed:
                agg.started_ns, armed = now, None
            want = agg.want_open(now)
            if want and not inst.on:
                inst.enable(True)
                agg.window_opened(time.monotonic_ns())
                _log(agg, "open")
            elif not want and inst.on:
                agg.window_closed(time.monotonic_ns())
                inst.enable(False)
                _log(agg, "close")
            nxt = agg.next_open_ns()
            # While a released step's first IO is awaited (and TAIL_S after it), the events wait in
            # the kernel's buffer: the loop only watches the count, so the window closes on time.
            waiting = inst.on and (armed is not None or (agg.started_ns is not None
                                                         and now < agg.started_ns + TAIL_NS))
            if waiting:
                timeout = START_TICK_S
            elif behind:  # catching up: WORK_S of each TICK_S at most
                timeout = max(0.0, TICK_S - WORK_S - (time.monotonic_ns() - worked) / 1e9)
            elif inst.on:
                timeout = TICK_S
            else:  # nothing to read and no window: asleep until the next one (or a command)
                timeout = IDLE_S if nxt is None else max(0.0, min(IDLE_S, (nxt - now) / 1e9))
            select.select([stdin], [], [], timeout)
            worked = time.monotonic_ns()
            # The trace first, then every command: a release is written before its step's barrier
            # opens, so each release before an event read here is read now, and applied first.
            # A bounded piece at a time: catching up on a backlog must not delay the next window's
            # opening (the loop comes back to the clock every few ms).
            chunk = b"" if waiting else _read_all(pipe, CHUNK_BYTES) or b""
            behind = len(chunk) >= CHUNK_BYTES
            data = _read_all(stdin)
            if data is None:
                quit_after = quit_after or time.monotonic_ns()
            else:
                inbuf += data
            *cmds, inbuf = inbuf.split(b"\n")
            settle_now = False
            for c in cmds:
                part = c.decode().split()
                if part and part[0] == "R":
                    agg.release(int(part[1]), int(part[2]), None if part[3] == "-" else int(part[3]))
                    armed = inst.counts()[0]  # an event from now on is the new step's first IO (or later)
                    _log(agg, f"release {part[1]}")
                elif part and part[0] == "A":
                    # a step follows a settle (a part's or a one-step batch's end), whose window is
                    # shut: open it now and say so; the run stamps the release and opens the barrier
                    # after hearing it, so that the step's first IO is seen
                    agg.idle = False
                    if not inst.on:
                        inst.enable(True)
                        agg.window_opened(time.monotonic_ns())
                        _log(agg, "open to arm")
                    out.write("armed\n")
                    out.flush()
                elif part and part[0] == "F":
                    settle_now = True
            buf += chunk
            cut = buf.rfind(b"\n") + 1  # whole lines now, the rest with the next read
            if cut:
                agg.feed_chunk(*parse_chunk(buf[:cut]))
                buf = buf[cut:]
                agg.max_lag_ns = max(agg.max_lag_ns, time.monotonic_ns() - agg.last_event_ns)
            if (inst.on or behind) and now - checked > 100_000_000 or settle_now or quit_after is not None:
                checked = now
                lost = inst.overrun()
                if lost > overrun:
                    overrun = lost
                    agg.lost()
            if settle_now:  # the run has ended its steps for now: settle up to now
                for s in agg.settle(_drain(pipe, agg, inst, buf)):
                    out.write(view_json(s) + "\n")
                buf = b""
                agg.idle = True
                out.write("settled\n")
            for s in agg.started():
                out.write(view_json(s) + "\n")
            for s in agg.settle():
                out.write(view_json(s) + "\n")
            out.flush()
            if quit_after is not None:
                for s in agg.settle(_drain(pipe, agg, inst, buf)):
                    out.write(view_json(s) + "\n")
                import resource

                ru = resource.getrusage(resource.RUSAGE_SELF)
                out.write(json.dumps({"overrun": inst.overrun(), "events": agg.events, "windows": agg.n_windows,
                                      "cpu_s": round(ru.ru_utime + ru.ru_stime, 3), "max_rss_kb": ru.ru_maxrss,
                                      "max_lag_ms": round(agg.max_lag_ns / 1e6, 1)}) + "\n")
                out.flush()
                return 0
    finally:
        inst.remove()


_LOG = open(os.environ["SSDPTS_DEVTRACE_LOG"], "a", encoding="utf-8") if os.environ.get("SSDPTS_DEVTRACE_LOG") else None


def _log(agg: Aggregator, what: str) -> None:  # pragma: no cover - a diagnosis aid (SSDPTS_DEVTRACE_LOG=FILE)
    """One line per window switched and release heard, with the time and how far the reading is."""
    if _LOG is not None:
        now = time.monotonic_ns()
        cur = agg.steps[-1] if agg.steps else None
        _LOG.write(f"{now / 1e9:.6f} {what}: read up to {agg.last_event_ns / 1e9:.6f} ({(now - agg.last_event_ns) / 1e6:.1f} ms "
                   f"behind), current step {cur and cur.key} released {cur and cur.release_ns / 1e9:.6f} first issue "
                   f"{cur and cur.first_issue_ns and cur.first_issue_ns / 1e9}\n")
        _LOG.flush()


def _read_all(fd: int, limit: int = 1 << 30) -> bytes | None:  # pragma: no cover - child
    """Everything waiting on a non-blocking fd (up to about ``limit`` bytes); None at end of input."""
    parts: list[bytes] = []
    n = 0
    while n < limit:
        try:
            data = os.read(fd, min(1 << 20, limit - n))
        except BlockingIOError:
            break
        if not data:
            if not parts:
                return None
            break
        parts.append(data)
        n += len(data)
    return b"".join(parts)


def _drain(pipe: int, agg: Aggregator, inst: Instance, rest: bytes = b"") -> int:  # pragma: no cover - child
    """Read what the trace holds up to now (tracing switched off first), feed it; returns now."""
    now = time.monotonic_ns()
    if inst.on:
        agg.window_closed(now)
    inst.enable(False)
    while True:  # a bounded piece at a time (trace_pipe gives about a page a read)
        chunk = _read_all(pipe, CHUNK_BYTES)
        if not chunk:
            break
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        agg.feed_chunk(*parse_chunk(data[:cut]))
        rest = data[cut:]
    if rest:
        agg.feed_chunk(*parse_chunk(rest))
    return now


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_child(sys.argv[1], sys.argv[2]))
