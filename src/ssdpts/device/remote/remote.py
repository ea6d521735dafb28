"""The device side of a run on another host: ``ssdpts agent PATH`` there (device/remote/agent.py),
started through the user's command prefix (``--remote-shell``, e.g. ``ssh -o BatchMode=yes rack1``)
and asked, request by request, what a local run asks device/side.py's LocalSide.

:class:`RemoteSide` has LocalSide's methods, so a run (session.py) does not know where its device
is. A refusal there (unsafe device, wrong confirmation, device in use) arrives as the same one-line
UserError; an agent that goes away (the host or the network lost, ssh ended) is ``HostLost``: the
run ends ``interrupted`` with every finished round kept, and ``ssdpts resume`` continues it through
a new agent (its shell is recorded in the manifest as ``device_host``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Iterator

from ssdpts import errors
from ssdpts.device.side import Collected, DeviceSide
from ssdpts.device.target import Target
from ssdpts.errors import HostLost, UserError

Log = Callable[[str], None]
AGENT_PROTOCOL = 2  # device/remote/agent.py PROTOCOL


def parse_shell(text: str) -> list[str]:
    """A --remote-shell command prefix as argv (shell quoting rules); refused when empty."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise UserError(f"--remote-shell {text!r}: {exc}: quote it as a shell would") from None
    if not argv:
        raise UserError("--remote-shell is empty: give the command that runs a command on the device's host, "
                        "e.g. --remote-shell 'ssh -o BatchMode=yes rack1'")
    return argv


class RemoteSide(DeviceSide):
    """``ssdpts agent PATH`` on the device's host, through ``shell`` (argv prefix). ``name``: the
    host's name in this run (--host NAME=...), for messages and the manifest."""

    def __init__(self, shell: list[str], path: str, *, name: str, size_bytes: int | None = None,
                 command: tuple[str, ...] = ("ssdpts",)):
        self.shell = list(shell)
        self.name = name
        self._err = tempfile.TemporaryFile(mode="w+")
        argv = [*self.shell, *command, "agent", path]
        try:
            # its own session: a Ctrl-C at this terminal reaches ssdpts, which ends the agent by closing
            # its stdin after the run is saved, not the agent in the middle of a purge
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                          text=True, bufsize=1, start_new_session=True)
        except OSError as exc:
            raise UserError(f"cannot start {shlex.join(argv)} ({exc.strerror}): check --remote-shell "
                            f"{shlex.join(self.shell)!r} (nothing was written)") from None
        self._seq = 0
        self._send_lock = threading.Lock()
        self._waiting: dict[int, list] = {}  # request id -> [done event, answer, log]
        self._on_gate: Callable[[dict], None] | None = None
        self.on_alarm: Callable[[str], None] | None = None  # the agent's claim watcher (run/alarm.py)
        self._ended = False
        self._reader: threading.Thread | None = None
        try:
            hello = self._read("its start")
            if hello.get("agent") != AGENT_PROTOCOL:
                raise UserError(f"{self.name}: 'ssdpts agent' answered with protocol {hello.get('agent')!r}, this "
                                f"ssdpts speaks {AGENT_PROTOCOL}: install the same ssdpts version on both hosts")
            self.remote = {"name": name, "shell": self.shell, "agent_host": hello.get("host"),
                           "agent_ssdpts": hello.get("ssdpts")}
            # From here one thread reads the stream: answers go to their requests (several threads
            # ask: the run, live progress), the step gate's news to its proxy (engine/gateproxy.py).
            self._reader = threading.Thread(target=self._dispatch, name=f"ssdpts-agent-{name}", daemon=True)
            self._reader.start()
            self.target = Target(**self._call("open", size_bytes=size_bytes)["target"])
        except HostLost as exc:  # before anything was asked of the device: a refusal, not an interruption
            self.close()
            raise UserError(f"{exc}: check that {shlex.join(argv)} works (ssdpts installed there, run as root), "
                            "then try again (nothing was written)") from None
        except BaseException:
            self.close()
            raise

    # ---- the stream ---------------------------------------------------------------------------
    def _gone(self, when: str) -> HostLost:
        try:
            self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self._err.seek(0)
        said = " ".join(ln.strip() for ln in self._err.read().splitlines()[-3:] if ln.strip())
        code = self._proc.returncode
        why = f"exit {code}" if code is not None else "no answer"
        return HostLost(f"the ssdpts agent on {self.name} went away during {when} ({why}"
                        f"{': ' + said[-300:] if said else ''})")

    def _messages(self) -> Iterator[dict]:
        """The agent's messages as they come, until its stream ends; lines that are not the agent's
        (a login banner of the remote shell) skipped."""
        while True:
            line = self._proc.stdout.readline() if self._proc.stdout else ""
            if not line:
                return
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                yield msg

    def _read(self, when: str) -> dict:
        """The next message (the agent's hello, before the reader thread owns the stream)."""
        msg = next(self._messages(), None)
        if msg is None:
            raise self._gone(when)
        return msg

    def _dispatch(self) -> None:
        """The reader thread: every message to whoever waits for it, until the stream ends."""
        try:
            for msg in self._messages():
                if "alarm" in msg:  # a new way to the storage found there mid-run: stop now
                    listener = self.on_alarm
                    if listener is not None:
                        listener(f"on host {self.name}: {msg['alarm']}")
                    continue
                if "gate" in msg:
                    handler = self._on_gate
                    if handler is not None:
                        handler(msg)
                    continue
                with self._send_lock:
                    if "log" in msg:  # a purge's progress: to the one request that logs
                        logs = [w[2] for w in self._waiting.values() if w[2] is not None]
                        if logs:
                            logs[0](str(msg["log"]))
                        continue
                    w = self._waiting.get(msg.get("id"))  # type: ignore[arg-type]
                    if w is None:
                        continue  # the late answer of a request this side stopped waiting for
                    w[1] = msg
                    w[0].set()
        finally:
            with self._send_lock:
                self._ended = True
                for w in self._waiting.values():
                    w[0].set()

    def listen_gate(self, handler: Callable[[dict], None] | None) -> None:
        """Where the agent's step gate sends its news (engine/gateproxy.py); None: nobody."""
        self._on_gate = handler

    def request(self, op: str, **kw: Any) -> Any:
        """One request and its answer (any thread); a refusal there is a UserError, an agent gone HostLost."""
        return self._call(op, **kw)

    def _call(self, op: str, log: Log | None = None, **kw: Any) -> Any:
        if self._proc.poll() is not None or self._proc.stdin is None:
            raise self._gone(op)
        done = threading.Event()
        with self._send_lock:
            if self._ended:
                raise self._gone(op)
            self._seq += 1
            rid = self._seq
            w = self._waiting[rid] = [done, None, log]
            try:
                self._proc.stdin.write(json.dumps({"op": op, "id": rid, **kw}, default=str) + "\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                self._waiting.pop(rid, None)
                raise self._gone(op) from None
        try:
            done.wait()
        finally:
            with self._send_lock:
                self._waiting.pop(rid, None)
        msg = w[1]
        if msg is None:
            raise self._gone(op)
        if "error" in msg:
            cls = getattr(errors, str(msg.get("type")), None)
            cls = cls if isinstance(cls, type) and issubclass(cls, (UserError, errors.Interrupted)) else UserError
            text = str(msg["error"])
            raise cls(text if text.startswith(f"on host {self.name}: ") else f"on host {self.name}: {text}")
        return msg.get("ok")

    # ---- LocalSide's methods ------------------------------------------------------------------
    def fingerprint(self) -> dict:
        return self._call("fingerprint")

    def check(self, needed_bytes: int, confirm: str | None, interactive: bool = False) -> None:
        self._call("check", needed_bytes=needed_bytes, confirm=confirm)

    def take(self, needed_bytes: int, confirm: str | None, interactive: bool = False, ask=None) -> Target:
        """As LocalSide.take, on the device's host. No prompt: the agent has no terminal, so a block
        device needs its confirmation from the command line (--destroy-data-on)."""
        self.target = Target(**self._call("take", needed_bytes=needed_bytes, confirm=confirm)["target"])
        return self.target

    def collect(self, purge: str | None, fio_version: str | None) -> Collected:
        return Collected.from_dict(self._call("collect", purge=purge, fio_version=fio_version))

    def set_run_dir(self, run_dir: str) -> None:
        import socket

        self._call("run_dir", run_dir=f"{socket.gethostname()}:{run_dir}")

    def start_telemetry(self, info: dict | None) -> "RemoteTelemetry":
        return RemoteTelemetry(self, self._call("telemetry", info=info))

    def start_latmon(self, thresholds_ms: tuple) -> "RemoteLatmon":
        """The drive's latency monitor, probed there (device/latmon.py); an agent without the request
        (an older ssdpts there) is a monitor not available."""
        try:
            got = self._call("latmon", thresholds_ms=list(thresholds_ms))
        except UserError as exc:
            got = {"available": False, "reason": f"not available: {exc}", "describe": f"not available: {exc}"}
        return RemoteLatmon(self, got)

    def finish_latmon(self) -> dict | None:
        try:
            return self._call("latmon_finish")
        except (UserError, HostLost):
            return None

    def apply_write_cache(self, want: str, info: dict | None) -> tuple[str, dict]:
        summary, record = self._call("write_cache", want=want, info=info)
        return summary, record

    def purge(self, requested: str, info: dict | None, log: Log) -> dict:
        return self._call("purge", log=log, requested=requested, info=info)

    def guard(self) -> None:
        self._call("guard")

    def seal_contents(self) -> dict | None:
        """What the device holds, read there (device/contents.py); None where the agent cannot say (it is
        gone: the manifest then still says the run was writing, and resume asks again)."""
        try:
            return self._call("seal_contents")
        except (UserError, HostLost):
            return None

    def contents_changes(self, record: dict | None) -> list[str]:
        """As LocalSide.contents_changes, there; an agent that cannot compare proves nothing."""
        if self.target.kind != "block":
            return []
        try:
            return self._call("contents_changes", record=record)
        except UserError as exc:
            return [f"what {self.target.path} holds could not be compared with the run's record ({exc})"]

    def finish(self) -> dict | None:
        """The write cache restored there; an agent already gone restored it itself when its stdin
        closed (device/remote/agent.py), so nothing is lost by not asking."""
        try:
            return self._call("finish")
        except HostLost:
            return None

    def release(self) -> None:
        try:
            self._call("release")
        except HostLost:
            pass

    def close(self) -> None:
        """End the agent: it gives back whatever it still holds when its stdin closes."""
        proc = self._proc
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        if proc.stdout is not None and (self._reader is None or not self._reader.is_alive()):
            proc.stdout.close()
        self._err.close()

    def __enter__(self) -> "RemoteSide":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RemoteTelemetry:
    """The agent's telemetry source, as runner.TelemetrySource: a snapshot per request (at batch
    starts and ends: a fio server's steps have no boundaries of their own). Never raises."""

    def __init__(self, side: RemoteSide, got: dict):
        self.side = side
        self.available = bool(got.get("available"))
        self.reason = got.get("reason")
        self._describe = dict(got.get("describe") or {})
        self._describe["host"] = side.name
        self.last_ms: float | None = None

    def describe(self) -> dict:
        return self._describe

    def snapshot(self) -> dict:
        t0, wall0 = time.perf_counter(), time.time()
        try:
            snap = self.side._call("snapshot")  # noqa: SLF001 - the side's own stream
        except (UserError, errors.Interrupted) as exc:
            snap = {"health": f"not available: {exc}", "block": f"not available: {exc}"}
        self.last_ms = (time.perf_counter() - t0) * 1000
        # Steps are matched to snapshots by time (runner._telemetry), and a step's time is this
        # host's: the snapshot is placed at the middle of its request by this clock, the device
        # host's own time kept beside it (the two clocks need not agree).
        if "t_unix_s" in snap:
            snap["agent_t_unix_s"] = snap["t_unix_s"]
        snap["t_unix_s"] = round(wall0 + self.last_ms / 2000, 3)
        snap["request_ms"] = round(self.last_ms, 3)
        return snap

    def close(self) -> None:
        pass


class RemoteLatmon:
    """The agent's latency monitor, as device/latmon.py's Monitor: armed and read there. Never raises."""

    def __init__(self, side: RemoteSide, got: dict):
        self.side = side
        self.available = bool(got.get("available"))
        self.reason = got.get("reason")
        self._describe = got.get("describe")
        if isinstance(self._describe, dict):
            self._describe = {**self._describe, "host": side.name}

    def describe(self) -> dict | str | None:
        return self._describe

    def _ask(self, op: str) -> dict | None:
        try:
            return self.side._call(op)  # noqa: SLF001 - the side's own stream
        except (UserError, errors.Interrupted) as exc:
            return {"error": f"{op}: {exc}"}

    def arm(self) -> dict | None:
        return self._ask("latmon_arm")

    def collect(self) -> dict | None:
        return self._ask("latmon_collect")


def side_for(record: dict | None, path: str, size_bytes: int | None = None):
    """The side of a run: RemoteSide from its manifest's ``device_host`` (resume), else None (this host)."""
    if not record:
        return None
    shell = record.get("shell")
    if not isinstance(shell, list) or not shell:
        raise UserError("the run's manifest names a device host without a remote shell: it is damaged, "
                        "start a new run")
    return RemoteSide([str(a) for a in shell], path, name=str(record.get("name") or "remote"), size_bytes=size_bytes)


__all__ = ["RemoteSide", "RemoteTelemetry", "parse_shell", "side_for"]
