"""Many devices on one host: one ``ssdpts run`` (or ``resume``) process per device, supervised.

Why processes, not threads: each device's run is then *exactly* a solo run -- the same code path,
run directory, manifest (its command line is the solo command that would have made it), claim and
locks, signal handling and report -- and a failure of one (fio killed, a device gone, an exception,
even a crash of Python) ends that process only. Threads would share the one process's signal
handlers, the GIL that fio's step gate and telemetry sampling time against, and its fate.

The supervisor (this module) only starts the children, shows their progress, forwards signals and
collects outcomes. Two phases:

1. Gate: every child runs all its checks (safety verdict, confirmation, kernel claim, locks,
   results space) and reports ``ready`` without writing anything (session.start_run's ``ready``).
   Only when *every* child is ready are they told ``go``; if one refuses, the others are told to
   stop (their stdin closed) and exit having written nothing.
2. Run: each child sends its progress as JSON lines on a pipe (progress.EventProgress); the
   supervisor draws one view of all. A terminating signal (Ctrl-C reaches every child of the
   terminal's process group anyway) is forwarded to each child still running; each stops as a solo
   run does (interrupted, every finished round kept) and the supervisor waits for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from ssdpts.errors import EXIT_BAD_INPUT, Signalled

GATE_TIMEOUT_S = 600.0  # identification, audit and space checks of one device take seconds


@dataclass
class Child:
    """One device's run: its label in the view, the solo command (argv after 'ssdpts') it runs."""

    label: str
    argv: list[str]
    proc: subprocess.Popen | None = None
    state: dict = field(default_factory=dict)
    stderr: list[str] = field(default_factory=list)
    ready: bool = False
    status: str = "starting"  # starting, ready, running, complete, failed, interrupted, refused, stopped
    run_dir: str | None = None
    error: str | None = None
    readers: list[threading.Thread] = field(default_factory=list)
    command: list[str] | None = None  # the program instead of this ssdpts (tests: a scripted child)

    @property
    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.returncode


def child_command(argv: list[str]) -> list[str]:
    """How a child is started: this Python, this ssdpts (the venv's, the worktree's)."""
    return [sys.executable, "-m", "ssdpts.cli.main", *argv]


def _read_events(child: Child, fd: int, events: queue.Queue) -> None:
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            events.put((child, ev))
    events.put((child, {"ev": "_closed"}))


def _read_stderr(child: Child, stream) -> None:
    for line in stream:
        if line.strip():
            child.stderr.append(line.rstrip("\n"))
            del child.stderr[:-50]


def _start(child: Child, events: queue.Queue) -> None:
    r, w = os.pipe()
    cmd = [*(child.command or child_command([])), *child.argv, "--events-fd", str(w)]
    child.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=(w,), text=True)
    os.close(w)
    child.readers = [threading.Thread(target=_read_events, args=(child, r, events), daemon=True),
                     threading.Thread(target=_read_stderr, args=(child, child.proc.stderr), daemon=True)]
    for t in child.readers:
        t.start()


def _tell(child: Child, word: str | None) -> None:
    """Answer a child waiting at the gate: 'go', or None = stop (stdin closed, nothing written)."""
    try:
        if word:
            child.proc.stdin.write(word + "\n")
            child.proc.stdin.flush()
        child.proc.stdin.close()
    except (OSError, ValueError):
        pass  # it has ended already


def _apply(child: Child, ev: dict, view) -> None:
    kind = ev.get("ev")
    st = child.state
    if kind == "ready":
        child.ready, child.status = True, "ready"
    elif kind == "part":
        st.update(title=ev["title"], round="", steps=0, step_s=None, rate="", phase="", steady="")
    elif kind == "phase":
        st.update(phase=ev["text"], steps=0, rate="", t0=time.monotonic())
    elif kind == "round":
        of = f"/{ev['of']}" if ev.get("of") else ""
        st.update(round=f"{ev['round']}{of}", steps=ev["steps"], step_s=ev["step_s"], t0=time.monotonic(),
                  phase="", rate="")
    elif kind == "sample":
        st["rate"] = ev.get("rate", "")
    elif kind == "round_done":
        st["steady"] = ev.get("steady") or ""
        if ev.get("stop_reason"):
            st["steady"] = (st["steady"] + "; " if st["steady"] else "") + f"done: {ev['stop_reason']}"
    elif kind == "end":
        child.status, child.run_dir, child.error = ev["status"], ev.get("run_dir"), ev.get("error")
    view.event(child, ev)


def _drain(events: queue.Queue, view, timeout: float) -> None:
    try:
        child, ev = events.get(timeout=timeout)
    except queue.Empty:
        view.tick()
        return
    _apply(child, ev, view)
    while True:
        try:
            child, ev = events.get_nowait()
        except queue.Empty:
            break
        _apply(child, ev, view)
    view.tick()


def _settle(child: Child, gate_passed: bool) -> None:
    """A child's final status once it has exited."""
    for t in child.readers:
        t.join(timeout=5)
    last = child.stderr[-1] if child.stderr else f"exited with status {child.exit_code}"
    if not gate_passed:
        if child.ready:  # its checks passed, another device's did not: it wrote nothing
            child.status, child.error = "stopped", None
        else:
            child.status, child.error = "refused", child.error or last
    elif child.status in ("starting", "ready", "running"):  # ended without saying how: killed, crashed
        child.status, child.error = "failed", child.error or last


def supervise(children: list[Child], view) -> int:
    """Run every child to its end; returns the number of the signal that interrupted the
    supervisor (0: none). When a child refuses at the gate, every child stops before writing:
    status 'refused' on the ones that refused, 'stopped' on the others."""
    events: queue.Queue = queue.Queue()
    caught, gate_passed = 0, False
    try:
        for c in children:
            _start(c, events)
        caught = _gate(children, events, view)
        gate_passed = not caught and all(c.ready for c in children)
        for c in children:
            if gate_passed:
                c.status = "running"
            _tell(c, "go" if gate_passed else None)
        caught = _wait_all(children, events, view, caught)
    finally:
        for c in children:  # the supervisor itself failed: no child may be left waiting at the gate
            if c.proc is not None and c.proc.poll() is None and c.status in ("starting", "ready"):
                _tell(c, None)
    for c in children:
        _settle(c, gate_passed)
    view.close()
    return caught


def _gate(children: list[Child], events: queue.Queue, view) -> int:
    deadline = time.monotonic() + GATE_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if all(c.ready or c.proc.poll() is not None for c in children):
                return 0
            if any(not c.ready and c.proc.poll() is not None for c in children):
                return 0  # one refused: no need to wait for the others' checks
            _drain(events, view, 0.1)
        for c in children:
            if not c.ready:
                c.error = f"its checks did not finish within {GATE_TIMEOUT_S:g} s"
        return 0
    except Signalled as sig:
        return sig.signum


def _wait_all(children: list[Child], events: queue.Queue, view, caught: int) -> int:
    """Until every child has ended. A signal is passed on to each child still running (their own
    handlers stop them as solo runs stop); later signals are ignored by the CLI's handler."""
    while True:
        try:
            while any(c.proc.poll() is None for c in children):
                _drain(events, view, 0.25)
            while not events.empty():
                _drain(events, view, 0)
            return caught
        except Signalled as sig:
            caught = caught or sig.signum
            for c in children:
                if c.proc.poll() is None:
                    try:
                        c.proc.send_signal(sig.signum)
                    except OSError:
                        pass


def exit_code(children: list[Child], caught: int) -> int:
    """The supervisor's exit status: a signal's 128 + n, else 2 when a device was refused, else
    1 when any run failed, else the first child's non-zero status, else 0."""
    if caught:
        return 128 + caught
    if any(c.status in ("refused", "stopped") for c in children):
        return EXIT_BAD_INPUT
    codes = [c.exit_code for c in children]
    if any(c.status == "failed" for c in children):
        return 1
    return next((code for code in codes if code), 0)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _step_text(st: dict) -> str:
    """Step y/M of the round in flight, from its start and the step length (as LiveProgress)."""
    if not st.get("steps") or not st.get("step_s"):
        return st.get("phase", "")
    elapsed = time.monotonic() - st.get("t0", time.monotonic())
    return f"{min(int(elapsed // st['step_s']) + 1, st['steps'])}/{st['steps']}"


class PlainView:
    """Without a terminal: one timestamped line per event, prefixed by the device."""

    def __init__(self, stream=None):
        from ssdpts.run.progress import _Vanishing

        self.stream = _Vanishing(stream or sys.stdout)

    def _p(self, child: Child, text: str) -> None:
        print(time.strftime("%H:%M:%S ") + f"{child.label}: {text}", file=self.stream, flush=True)

    def event(self, child: Child, ev: dict) -> None:
        kind = ev.get("ev")
        if kind == "ready":
            self._p(child, "checks passed")
        elif kind == "part":
            self._p(child, ev["title"])
        elif kind == "phase":
            self._p(child, ev["text"])
        elif kind == "round":
            self._p(child, f"round {child.state['round']}, {ev['steps']} steps"
                    + (f" x {ev['step_s']:g} s" if ev.get("step_s") else ""))
        elif kind == "round_done":
            for line in ev.get("tracking") or ():
                self._p(child, "  " + line)
            if ev.get("stop_reason"):
                self._p(child, f"done ({ev['stop_reason']})")
        elif kind == "message":
            self._p(child, ev["text"])
        elif kind == "end":
            self._p(child, f"{ev['status']}" + (f": {ev['run_dir']}" if ev.get("run_dir") else ""))

    def tick(self) -> None:
        pass

    def close(self) -> None:
        pass


class LiveView(PlainView):
    """On a terminal: one rich table, a row per device (test, round, step, current rate, steady
    state, status), with messages printed above it."""

    def __init__(self):
        from rich.console import Console
        from rich.live import Live

        super().__init__()
        self.children: list[Child] = []
        self.live = Live(console=Console(file=self.stream), refresh_per_second=4, transient=False)
        self.live.start()

    def _p(self, child: Child, text: str) -> None:
        if child not in self.children:
            self.children.append(child)
        if not text.startswith(("round ", "  ")):  # rounds and verdicts are in the table
            self.live.console.print(time.strftime("%H:%M:%S ") + f"{child.label}: {text}", highlight=False)

    def tick(self) -> None:
        from rich.table import Table

        t = Table(box=None, padding=(0, 1))
        for h in ("device", "test", "round", "step", "now", "steady state", "status"):
            t.add_column(h)
        for c in self.children:
            st = c.state
            t.add_row(c.label, st.get("title", ""), st.get("round", ""), _step_text(st), st.get("rate", ""),
                      st.get("steady", ""), c.status)
        self.live.update(t)

    def close(self) -> None:
        self.tick()
        self.live.stop()


def make_view(children: list[Child], quiet: bool = False):
    view = LiveView() if sys.stdout.isatty() and not quiet else PlainView(open(os.devnull, "w") if quiet else None)
    if isinstance(view, LiveView):
        view.children = list(children)
    return view
