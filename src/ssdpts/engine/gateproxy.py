"""The step gate of a device on another host, as this host's executor sees it.

:class:`GateProxy` has engine/gate.py's Gate interface (add, prerun, postrun, link, release,
detach, sync, close_entries, close), so FioExecutor's supervision — every step's release, the next
round's fio started ahead and linked to this round's last step, the gate's time-outs, HIR's
planned idles — runs unchanged for a fio server's device. Each call is a request to the gate that
``ssdpts agent`` holds on the device's host (engine/gatehost.py), over the agent's stream (the
``channel``: device/remote/remote.py's RemoteSide, ``request(op, **kw)`` and ``listen_gate(handler)``);
the gate's news (a step released, started, ended) comes back on the same stream and updates this
side's :class:`Entry`, whose listener then hears it as from a local gate.

The releases themselves never wait for this host: a step is released by the previous one's drain
there, by that host's gate thread, as locally. Only a fresh batch's first step (``release``) and
a batch started ahead (``link``) are this host's requests, neither on a boundary's path.

Clocks: the device's host stamps every event with its own ``time.monotonic()`` and
``time.time()``. :class:`AgentClock` measures both offsets to this host's clocks over the stream
(the request with the shortest round trip of a few: its middle is taken as the moment the agent
answered) and places every stamp on this host's clocks by them; a release planned here (the end
of a planned idle) goes back by the same monotonic offset, so nothing is lost in the round trip.
Boundaries are differences of stamps of one host: the offsets do not enter them. The offsets
and the round trip are recorded with each step's timeline (``clock``).
"""

from __future__ import annotations

import tempfile
import threading
import time
from typing import Any, Callable, Protocol

from .gate import Entry
from .gatehost import STATE


class Channel(Protocol):
    def request(self, op: str, **kw: Any) -> Any: ...

    def listen_gate(self, handler: Callable[[dict], None] | None) -> None: ...


class AgentClock:
    """The device host's clocks against this host's: ``mono_off`` and ``unix_off`` are added to
    that host's times."""

    def __init__(self, channel: Channel, tries: int = 7):
        tried = []
        for _ in range(max(tries, 1)):
            m0, u0 = time.monotonic(), time.time()
            got = channel.request("gate_clock")
            m1, u1 = time.monotonic(), time.time()
            tried.append((m1 - m0, (m0 + m1) / 2 - float(got["mono"]), (u0 + u1) / 2 - float(got["unix"])))
        self.rtt_s, self.mono_off, self.unix_off = min(tried)

    def record(self, host: str | None) -> dict:
        """What a step's timeline keeps of it: the other host's name, its offset and the round trip
        (the offset's uncertainty is at most half of it)."""
        return {"host": host, "offset_s": round(self.unix_off, 6), "rtt_ms": round(self.rtt_s * 1000, 3)}


_MONO = {k for k in STATE if k.endswith("_mono_s")}
_UNIX = {k for k in STATE if k.endswith("_unix_s")}


class GateProxy:
    """Gate's interface, forwarding to the agent's gate (see the module's docstring)."""

    def __init__(self, channel: Channel, clock: AgentClock):
        self.channel, self.clock = channel, clock
        self.on_release = None  # the device's host tells its own trace (engine/gatehost.py)
        self._lock = threading.Lock()
        self._entries: dict[int, Entry] = {}
        self._hooks: dict[int, tuple[str, str]] = {}
        channel.listen_gate(self._news)
        got = channel.request("gate_open")
        self.remote_root = got["root"]
        # fio's client runs here: its working directory (no hook output comes here; the server's
        # hooks write theirs on its host)
        self.root = tempfile.mkdtemp(prefix="ssdpts-client-")

    # ---- what fio runs (on the device's host) --------------------------------------------------
    def prerun(self, e: Entry) -> str:
        return self._hooks[e.number][0]

    def postrun(self, e: Entry) -> str:
        return self._hooks[e.number][1]

    # ---- the chain ------------------------------------------------------------------------------
    def add(self, clones: list[int], *, idles: list[float] | None = None,
            durations: list[float | None] | None = None,
            listener: Callable[[str, Entry], None] | None = None) -> list[Entry]:
        idles = idles or [0.0] * len(clones)
        durations = durations or [None] * len(clones)
        if len(idles) != len(clones) or len(durations) != len(clones):
            raise ValueError("one planned idle and one run time per step")
        got = self.channel.request("gate_add", clones=list(clones), idles=list(idles), durations=list(durations))
        out: list[Entry] = []
        with self._lock:
            prev = None
            for g, n, idle, dur in zip(got, clones, idles, durations):
                e = Entry(number=int(g["n"]), clones=n, fd=-1, prev=prev, listener=listener,
                          idle_after_s=float(idle), duration_s=dur)
                if prev is not None:
                    prev.next = e
                self._entries[e.number] = e
                self._hooks[e.number] = (str(g["prerun"]), str(g["postrun"]))
                out.append(e)
                prev = e
        return out

    def link(self, after: Entry, e: Entry) -> None:
        with self._lock:
            e.prev, after.next = after, e
        self.channel.request("gate_link", after=after.number, n=e.number)

    def release(self, e: Entry, at_mono_s: float | None = None) -> None:
        at = None if at_mono_s is None else at_mono_s - self.clock.mono_off
        self.channel.request("gate_release", n=e.number, at_mono_s=at)

    def detach(self, e: Entry) -> None:
        with self._lock:
            if e.prev is not None and e.prev.next is e:
                e.prev.next = None
            e.prev = None
        self.channel.request("gate_detach", n=e.number)

    def sync(self, timeout_s: float = 10.0) -> None:  # noqa: ARG002 - the agent's gate waits
        """Every line fio wrote before now read on the device's host, and this side's entries
        brought up to what its gate knows of them."""
        with self._lock:
            numbers = [n for n, e in self._entries.items() if not e.closed]
        got = self.channel.request("gate_sync", n=numbers)
        with self._lock:
            for n, st in (got or {}).items():
                e = self._entries.get(int(n))
                if e is not None:
                    self._apply(e, st)

    def close_entries(self, entries: list[Entry]) -> None:
        numbers = []
        with self._lock:
            for e in entries:
                if e.closed:
                    continue
                e.closed = True
                if e.next is not None and e.next.prev is e:
                    e.next.prev = None
                self._entries.pop(e.number, None)
                self._hooks.pop(e.number, None)
                numbers.append(e.number)
        if numbers:
            self.channel.request("gate_close_entries", n=numbers)

    def close(self) -> None:
        import shutil

        with self._lock:
            for e in self._entries.values():
                e.closed = True
            self._entries.clear()
        try:
            self.channel.request("gate_close")
        finally:
            self.channel.listen_gate(None)
            shutil.rmtree(self.root, ignore_errors=True)

    # ---- the device's host's news ------------------------------------------------------------------
    def _apply(self, e: Entry, st: dict) -> None:
        """Caller holds the lock: the device host's stamps of ``e``, on this host's clocks."""
        for k, v in st.items():
            if k not in STATE:
                continue
            if v is not None and k in _MONO:
                v = float(v) + self.clock.mono_off
            elif v is not None and k in _UNIX:
                v = float(v) + self.clock.unix_off
            setattr(e, k, v)

    def _news(self, msg: dict) -> None:
        with self._lock:
            e = self._entries.get(int(msg.get("n", -1)))
            if e is None or e.closed:
                return
            self._apply(e, msg.get("s") or {})
        if e.listener is not None:
            try:
                e.listener(str(msg.get("gate")), e)
            except Exception:  # noqa: BLE001 - a listener must never stop the schedule
                pass


class RemoteTrace:
    """engine/devtrace.py's DeviceTrace as FioExecutor reads it (``views``, ``view``, ``device``,
    ``lost``, ``stats``, ``overrun``, ``close``), for the trace the agent runs on the device's host:
    its events are that host's, its views placed on this host's monotonic clock."""

    def __init__(self, channel: Channel, clock: AgentClock, device: str):
        self.channel, self.clock, self.device = channel, clock, device
        self.lost: str | None = None
        self.stats: dict | None = None
        self.overrun: int | None = None
        self._views: dict[int, dict] = {}

    def _place(self, v: dict) -> dict:
        v = dict(v)
        for k in ("first_issue_ns", "last_complete_ns"):
            if v.get(k) is not None:
                v[k] = int(v[k] + self.clock.mono_off * 1e9)
        return v

    def views(self, keys: list[int | None], *, settle: bool, timeout_s: float = 2.0,
              ends: list[int | None] | None = None) -> list[dict | None]:
        if self.lost:
            return [None] * len(keys)
        got = self.channel.request("trace_views", keys=keys, settle=settle, timeout_s=timeout_s, ends=ends,
                                   also=[k for k in self._views if k not in keys][-4:])
        self.lost = got.get("lost") if got.get("lost") not in (None, "closed") else self.lost
        for k, v in (got.get("views") or {}).items():
            self._views[int(k)] = self._place(v)
        for k in sorted(self._views)[:-64]:  # a boundary needs this step and the one before
            del self._views[k]
        return [None if k is None else self._views.get(k) for k in keys]

    def view(self, key: int | None) -> dict | None:
        return None if key is None else self._views.get(key)

    def close(self) -> None:
        self.lost = self.lost or "closed"
        got = self.channel.request("trace_close") or {}
        self.stats, self.overrun = got.get("stats"), got.get("overrun")


__all__ = ["AgentClock", "Channel", "GateProxy", "RemoteTrace"]
