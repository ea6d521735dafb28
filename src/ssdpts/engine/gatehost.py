"""The step gate and the device's block trace on the device's host, for a run driven from another
host (docs/hosts.md "The step gate where the device is").

A fio server runs a job's ``exec_prerun`` and ``exec_postrun`` hooks on its own host, so the gate
whose FIFOs those hooks block on must live there too: ``ssdpts agent`` (device/remote/agent.py) holds one
:class:`GateHost`, whose ``op_*`` methods answer the controlling ssdpts's gate requests on the
agent's request stream, and whose events (a step released, started, ended) go back on the same
stream as ``{"gate": KIND, "n": N, "s": STATE}``. The gate itself is engine/gate.py's, unchanged:
each step is released by the previous one's drain *on this host* (its thread answers the hooks'
FIFOs), and a planned idle (HIR) is kept by its timer here; the controller only adds steps, links
a batch started ahead, releases a fresh batch's first step and reads the stamps
(engine/gateproxy.py). The device's block trace (engine/devtrace.py) is started here too, told
of each release by this gate, and its views are read on request.

Times are this host's (``time.monotonic()``, ``time.time()``): the controller places them on its
own clocks by an offset it measures over the stream (``gate_clock``) and records.
"""

from __future__ import annotations

import os
from pathlib import Path
import threading
import time
from typing import Callable

from .devtrace import DeviceTrace, Unavailable as TraceUnavailable
from .gate import Entry, Gate

# An entry's fields the controller mirrors (engine/gateproxy.py applies them to its own Entry).
STATE = ("released_unix_s", "released_mono_s", "ready_unix_s", "ready_clones", "ready_at_release",
         "started_unix_s", "started_mono_s", "last_started_unix_s", "last_started_mono_s", "started_clones",
         "ended_unix_s", "ended_mono_s", "ended_clones", "chained", "trace_key")


def state(e: Entry) -> dict:
    return {k: getattr(e, k) for k in STATE}


def block_counters(path: str) -> list[float] | None:
    """(completed IOs, bytes moved) so far from the kernel's block statistics of ``path``'s device,
    None for a file target (live progress, engine/sampler.py)."""
    try:
        st = os.stat(path)
        if st.st_mode & 0o170000 != 0o060000:
            return None
        name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"))
        f = Path(f"/sys/class/block/{name}/stat").read_text().split()
        return [float(f[0]) + float(f[4]), (float(f[2]) + float(f[6])) * 512]
    except (OSError, ValueError, IndexError):
        return None


class GateHost:
    """The agent's gate and trace. ``send``: writes one message to the controller (thread-safe)."""

    def __init__(self, send: Callable[[dict], None]):
        self.send = send
        self.gate: Gate | None = None
        self.trace: DeviceTrace | None = None
        self._entries: dict[int, Entry] = {}
        self._lock = threading.Lock()

    # ---- the gate -----------------------------------------------------------------------------
    def _gate(self) -> Gate:
        if self.gate is None:
            raise ValueError("no gate: the controller must send 'gate_open' first")
        return self.gate

    def _entry(self, n) -> Entry:
        e = self._entries.get(int(n))
        if e is None:
            raise ValueError(f"the gate has no step {n}")
        return e

    def _on_release(self, e: Entry) -> None:
        trace = self.trace
        if trace is not None and e.released_mono_s is not None:
            e.trace_key = trace.released(e.released_mono_s, e.duration_s)

    def _event(self, kind: str, e: Entry) -> None:
        try:
            self.send({"gate": kind, "n": e.number, "s": state(e)})
        except (OSError, ValueError):
            pass  # the controller is gone: the stream's end closes the gate (device/remote/agent.py)

    @staticmethod
    def op_gate_clock(_req: dict) -> dict:
        return {"mono": time.monotonic(), "unix": time.time()}

    def op_gate_open(self, _req: dict) -> dict:
        with self._lock:
            if self.gate is None:
                self.gate = Gate(on_release=self._on_release)
            return {"root": str(self.gate.root), "pid": os.getpid()}

    def op_gate_add(self, req: dict) -> list:
        gate = self._gate()
        entries = gate.add([int(c) for c in req["clones"]], idles=[float(i) for i in req["idles"]],
                           durations=[None if d is None else float(d) for d in req["durations"]],
                           listener=self._event)
        for e in entries:
            self._entries[e.number] = e
        return [{"n": e.number, "prerun": gate.prerun(e), "postrun": gate.postrun(e)} for e in entries]

    def op_gate_link(self, req: dict) -> None:
        self._gate().link(self._entry(req["after"]), self._entry(req["n"]))

    def op_gate_release(self, req: dict) -> None:
        at = req.get("at_mono_s")
        self._gate().release(self._entry(req["n"]), None if at is None else float(at))

    def op_gate_detach(self, req: dict) -> None:
        self._gate().detach(self._entry(req["n"]))

    def op_gate_sync(self, req: dict) -> dict:
        """Every line fio wrote before this request read; then the stamps of the steps asked for."""
        self._gate().sync()
        return {str(n): state(self._entries[int(n)]) for n in req.get("n", []) if int(n) in self._entries}

    def op_gate_close_entries(self, req: dict) -> None:
        entries = [self._entries.pop(int(n)) for n in req["n"] if int(n) in self._entries]
        self._gate().close_entries(entries)

    def op_gate_close(self, _req: dict) -> None:
        with self._lock:
            gate, self.gate = self.gate, None
        self._entries.clear()
        if gate is not None:
            gate.close()

    # ---- the device's block trace and statistics ------------------------------------------------
    def op_trace_open(self, req: dict) -> dict:
        self.op_trace_close({})
        try:
            self.trace = DeviceTrace(str(req["filename"]))
        except TraceUnavailable as exc:
            return {"unavailable": str(exc)}
        return {"device": self.trace.device}

    def op_trace_views(self, req: dict) -> dict:
        """The trace's views of these keys, waiting as DeviceTrace.views does (times on this host's
        monotonic clock: the controller places them, engine/gateproxy.py)."""
        trace = self.trace
        if trace is None:
            return {"lost": "closed", "views": {}}
        keys = [None if k is None else int(k) for k in req.get("keys", [])]
        ends = req.get("ends")
        got = trace.views(keys, settle=bool(req.get("settle")), timeout_s=float(req.get("timeout_s", 2.0)),
                          ends=None if ends is None else [None if k is None else int(k) for k in ends])
        wanted = {int(k) for k in req.get("also", [])}
        views = {str(k): v for k, v in zip(keys, got) if k is not None and v is not None}
        views.update({str(k): trace.view(k) for k in wanted if trace.view(k) is not None})
        return {"lost": trace.lost, "views": views}

    def op_trace_close(self, _req: dict) -> dict | None:
        trace, self.trace = self.trace, None
        if trace is None:
            return None
        trace.close()
        return {"device": trace.device, "stats": trace.stats, "overrun": trace.overrun}

    @staticmethod
    def op_blockstat(req: dict) -> dict:
        return {"counters": block_counters(str(req["filename"])), "mono": time.monotonic()}

    def close(self) -> None:
        """The controller is gone: every FIFO closed (a hook still waiting fails, its fio server job
        with it: nothing runs unreleased), the trace stopped."""
        self.op_gate_close({})
        self.op_trace_close({})


__all__ = ["GateHost", "STATE", "block_counters", "state"]
