"""The step gate driven from another host (issue 31): engine/gateproxy.py's GateProxy on this side,
engine/gatehost.py's GateHost on the device's side, joined by the agent's stream (here: in-process,
each message through JSON as on the wire, the device host's clocks shifted by a known offset), the
hooks run by real shells as fio runs them (tests/unit/test_gate.py)."""

from __future__ import annotations

import json
import threading
import time


from ssdpts.engine import gate as gate_module, gatehost
from ssdpts.engine.gatehost import GateHost
from ssdpts.engine.gateproxy import AgentClock, GateProxy

from .test_gate import hook, wait_until

SHIFT_MONO, SHIFT_UNIX = -12345.5, 3600.25  # the device host's clocks against this host's


class _Shifted:
    """The time module as the device's host reads it."""

    @staticmethod
    def monotonic() -> float:
        return time.monotonic() + SHIFT_MONO

    @staticmethod
    def time() -> float:
        return time.time() + SHIFT_UNIX

    def __getattr__(self, name):
        return getattr(time, name)


class Wire:
    """The agent's stream: requests answered by a GateHost whose clocks read SHIFT later/earlier."""

    def __init__(self, monkeypatch):
        self.handler = None
        # the device host's clocks (its gate's stamps and its answers), this host's unchanged
        monkeypatch.setattr(gatehost, "time", _Shifted())
        monkeypatch.setattr(gate_module, "time", _Shifted())
        self.host = GateHost(self._from_agent)
        self._lock = threading.Lock()

    def _from_agent(self, msg: dict) -> None:
        msg = json.loads(json.dumps(msg))
        if self.handler is not None:
            self.handler(msg)

    def listen_gate(self, handler) -> None:
        self.handler = handler

    def request(self, op: str, **kw):
        with self._lock:
            return json.loads(json.dumps(getattr(self.host, f"op_{op}")(json.loads(json.dumps(kw)))))


def test_steps_are_released_there_and_stamped_on_this_hosts_clocks(monkeypatch):
    wire = Wire(monkeypatch)
    clock = AgentClock(wire)
    proxy = GateProxy(wire, clock)
    try:
        news: list[tuple[str, int]] = []
        a, b = proxy.add([1, 1], idles=[0.2, 0.0], durations=[None, None],
                         listener=lambda kind, e: news.append((kind, e.number)))
        root = proxy.remote_root
        waiting = hook(proxy.prerun(b), root, "s0002")
        t0 = time.time()
        proxy.release(a)
        assert hook(proxy.prerun(a), root).wait(timeout=5) == 0
        hook(proxy.postrun(a), root, mode="postrun").wait(timeout=5)
        assert waiting.wait(timeout=5) == 0, "step 2 released by step 1's end there, after its planned idle"
        assert wait_until(lambda: ("released", b.number) in news and ("ended", a.number) in news), news
        proxy.sync()
        # stamps on this host's clocks (time.time here is unshifted)
        assert t0 - 0.5 < a.released_unix_s < b.released_unix_s < time.time() + 0.5
        assert abs(a.released_mono_s - (time.monotonic() - (time.time() - a.released_unix_s))) < 0.05
        assert 0.19 < b.released_mono_s - a.ended_mono_s < 0.6  # the idle, kept there (a loaded host: late)
        assert b.chained and abs(clock.unix_off + SHIFT_UNIX) < 0.05 and abs(clock.mono_off + SHIFT_MONO) < 0.05
        # a release planned here (an idle that ended a batch) goes back by the same offset
        (c,) = proxy.add([1], listener=lambda kind, e: news.append((kind, e.number)))
        proxy.release(c, time.monotonic() + 0.3)
        t1 = time.monotonic()
        assert hook(proxy.prerun(c), root, "s0003").wait(timeout=5) == 0
        assert 0.25 < time.monotonic() - t1 < 0.8
        proxy.close_entries([a, b, c])
    finally:
        proxy.close()
        wire.host.close()
