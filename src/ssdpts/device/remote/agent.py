"""``ssdpts agent PATH``: the device side of a run whose ssdpts runs on another host.

The controlling ssdpts starts this command on the device's host through a command prefix of the
user's choosing (``--remote-shell rack1='ssh -o BatchMode=yes rack1'``; docs/hosts.md) and talks
to it over the command's stdin and stdout, one JSON object per line: a request
``{"op": NAME, ...}``, then zero or more ``{"log": LINE}`` (a purge's progress) and one
``{"ok": RESULT, "id": ID}`` or ``{"error": MESSAGE, "type": CLASS, "id": ID}`` (ID: the request's). Every request is answered by the
same code a local run calls (device/side.py, LocalSide): the safety verdict, the confirmation,
the lock and the kernel's exclusive claim, identity, purge and its check, telemetry, the write
cache. Nothing listens on a port: the agent lives as long as its ssh session, and when that ends
(the controller finished, was killed, or lost the network) it closes the telemetry, restores the
write cache and releases the claim, so a lost controller never leaves the device held.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from typing import Any, Callable, TextIO

from ssdpts import __version__
from ssdpts.device.side import LocalSide
from ssdpts.device.target import open_target
from ssdpts.errors import Interrupted, UserError

PROTOCOL = 2  # 2: the step gate and the device's trace there (engine/gatehost.py)


class _Agent:
    def __init__(self, path: str, send: Callable[[dict], None], extra: object | None = None):
        self.path = path
        self.send = send
        self.side: LocalSide | None = None
        self.extra = extra  # more requests (the step gate there: engine/gatehost.py, given by cli/agent.py)

    def handler(self, op: object) -> Callable[[dict], Any] | None:
        fn = getattr(self, f"op_{op}", None)
        if fn is None and self.extra is not None:
            fn = getattr(self.extra, f"op_{op}", None)
        return fn

    def _side(self) -> LocalSide:
        if self.side is None:
            raise UserError("the agent has no target yet: the controller must send 'open' first")
        return self.side

    # every op takes the request and returns a JSON-safe result
    def op_open(self, req: dict) -> dict:
        self.side = LocalSide(open_target(self.path, size_bytes=req.get("size_bytes")))
        return {"target": self.side.target.to_dict()}

    def op_fingerprint(self, _req: dict) -> dict:
        return self._side().fingerprint()

    def op_check(self, req: dict) -> None:
        self._side().check(int(req["needed_bytes"]), req.get("confirm"))

    def op_take(self, req: dict) -> dict:
        # no terminal here: a confirmation comes from the controller (--destroy-data-on) or not at all
        side = self._side()
        side.on_alarm = lambda reason: self.send({"alarm": reason})  # the claim's watcher, at once
        return {"target": side.take(int(req["needed_bytes"]), req.get("confirm")).to_dict()}

    def op_collect(self, req: dict) -> dict:
        return self._side().collect(req.get("purge"), req.get("fio_version")).to_dict()

    def op_run_dir(self, req: dict) -> None:
        self._side().set_run_dir(str(req["run_dir"]))

    def op_telemetry(self, req: dict) -> dict:
        src = self._side().start_telemetry(req.get("info"))
        return {"available": src.available, "reason": src.reason, "describe": src.describe()}

    def op_snapshot(self, _req: dict) -> dict:
        src = self._side().telemetry
        if src is None:
            raise UserError("no telemetry source: the controller must send 'telemetry' first")
        return src.snapshot()

    def op_latmon(self, req: dict) -> dict:
        mon = self._side().start_latmon(tuple(req.get("thresholds_ms") or ()))
        return {"available": mon.available, "reason": mon.reason, "describe": mon.describe()}

    def op_latmon_arm(self, _req: dict) -> dict | None:
        mon = self._side().latmon
        return mon.arm() if mon is not None else None

    def op_latmon_collect(self, _req: dict) -> dict | None:
        mon = self._side().latmon
        return mon.collect() if mon is not None else None

    def op_latmon_finish(self, _req: dict) -> dict | None:
        return self._side().finish_latmon()

    def op_write_cache(self, req: dict) -> list:
        return list(self._side().apply_write_cache(req["want"], req.get("info")))

    def op_purge(self, req: dict) -> dict:
        return self._side().purge(req["requested"], req.get("info"), lambda line: self.send({"log": line}))

    def op_seal_contents(self, _req: dict) -> dict | None:
        return self._side().seal_contents()

    def op_contents_changes(self, req: dict) -> list[str]:
        return self._side().contents_changes(req.get("record"))

    def op_guard(self, _req: dict) -> None:
        self._side().guard()

    def op_finish(self, _req: dict) -> dict | None:
        return self._side().finish()

    def op_release(self, _req: dict) -> None:
        self._side().release()

    def close(self) -> None:
        try:
            close = getattr(self.extra, "close", None)
            if close is not None:
                close()  # the gate's FIFOs first: a fio job still waiting at its barrier fails, not runs
        finally:
            if self.side is not None:
                self.side.close()


def serve(path: str, rfile: TextIO = sys.stdin, wfile: TextIO = sys.stdout,
          extra: Callable[[Callable[[dict], None]], object] | None = None) -> int:
    """Answer requests until the controller closes stdin; then give everything back. ``extra``:
    makes, from the stream's ``send``, an object whose ``op_NAME`` methods answer more requests
    (the step gate: engine/gatehost.py); it may send messages of its own at any time (a step
    released, started, ended), so every message is written whole under a lock."""
    lock = threading.Lock()

    def send(obj: dict) -> None:
        line = json.dumps(obj, default=str, separators=(",", ":")) + "\n"
        with lock:
            wfile.write(line)
            wfile.flush()

    agent = _Agent(path, send, extra(send) if extra is not None else None)
    send({"agent": PROTOCOL, "ssdpts": __version__, "host": socket.gethostname()})
    try:
        for line in rfile:
            if not line.strip():
                continue
            req: Any = None
            try:
                req = json.loads(line)
                fn = agent.handler(req.get("op")) if isinstance(req, dict) else None
                if fn is None:
                    raise UserError(f"the agent does not know the request {line.strip()[:80]!r}: use the same "
                                    f"ssdpts version on both hosts (this one is {__version__})")
                result: Any = fn(req)
            except (UserError, Interrupted) as exc:
                send({"error": str(exc), "type": type(exc).__name__, "id": _id(req)})
                continue
            except (ValueError, KeyError, TypeError) as exc:
                send({"error": f"bad request to the agent ({exc.__class__.__name__}: {exc})", "type": "UserError",
                      "id": _id(req)})
                continue
            except OSError as exc:  # e.g. the gate's FIFOs could not be made there
                send({"error": f"{req.get('op') if isinstance(req, dict) else 'request'}: {exc}", "type": "UserError",
                      "id": _id(req)})
                continue
            send({"ok": result, "id": _id(req)})
    finally:
        agent.close()
    return 0


def _id(req: Any) -> Any:
    """The request's id, echoed in its answer: a controller interrupted while it waited (Ctrl-C
    during a purge) skips the late answer instead of taking it for the next request's."""
    return req.get("id") if isinstance(req, dict) else None
