"""FioClientExecutor: a batch run by a fio server (``fio --server`` on the device's host) through
``fio --client``: the job file goes out, json+ comes back, both kept in the run directory on this
(the controlling) host exactly as FioExecutor keeps them.

With the device host's agent (``agent``: device/remote/remote.py's RemoteSide, ``ssdpts agent`` there,
docs/hosts.md), the run is scheduled as a local one: the step gate (engine/gate.py) runs on the
device's host inside the agent (engine/gatehost.py), the fio server's ``exec_prerun`` hooks block
on its FIFOs there, and this executor is FioExecutor itself — the same supervision, the next
round's fio client started ahead with its first step waiting at its barrier, HIR's planned idles
kept by the gate's timer there — with a GateProxy (engine/gateproxy.py) for the gate, the device's
block trace run there too, and live IOPS from that host's block statistics. Each step's timeline
is the gate's, its stamps placed on this host's clock by a measured offset (``clock``).

Without an agent (a fio server on this host, given no remote shell) there is no gate the server's
hooks could reach: every step after the first is a ``stonewall`` (it starts when fio sees the
previous one ended: never two steps at once), one fio client per batch, no round started ahead,
planned idles (HIR) refused. That costs ~0.1-0.3 s per boundary (fio's poll), disclosed as a
deviation; each step's timeline is ``source: "fio end of run (fio server)"`` and its boundaries
are not measured.

A server that goes away (host down, fio server killed, network gone) makes the client print
``client: host=H disconnected`` and exit 1 with an empty result: that is :class:`HostLost`, an
interruption, so the run ends ``interrupted`` with every finished round kept and ``ssdpts resume``
continues it when the server is back.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
import re
import signal
import subprocess
import time

from ..errors import HostLost, Interrupted, RunFailed, UserError
from . import fiobin
from .base import Batch, BatchResult
from .devtrace import Unavailable as TraceUnavailable
from .fio import _PR_SET_PDEATHSIG, FioExecutor, _Run, _prepare_child, _stop, measure, timelines_from_end
from .gateproxy import AgentClock, GateProxy, RemoteTrace
from .fioparse import FioOutputError, job_errors, parse_fio_output, server_answered, step_jobs
from .jobfile import STONEWALL_HEADER, render_job_file

# fio's client, when its server is gone: "client: host=127.0.0.1 disconnected" (fio 3.33).
_GONE = re.compile(r"client: host=(\S+) disconnected|fio: connect: |failed to connect|Connection refused", re.I)


def server_address(text: str) -> str:
    """A fio client address as fio takes it: ``host``, ``host,port``, ``ip:addr,port``,
    ``ip6:addr,port`` (fio's default port 8765 when none is given)."""
    text = text.strip()
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"{text!r} is not a fio server address (host[,port], e.g. 10.0.0.5,8765)")
    return text


class FioClientExecutor(FioExecutor):
    """Runs each batch on a fio server; see the module's docstring for what differs from a local run."""

    name = "fio-client"
    # A fio server takes ~1.3-1.5 s from a client's start to a job's prerun hook (fio 3.33, measured on
    # 127.0.0.1; local fio: 0.3-0.7 s): the next round's client starts this long before the round ends.
    NEXT_LEAD_S = 10.0

    def __init__(self, server: str, binary: str | None = None, agent=None, chosen=None):
        super().__init__(binary, chosen)
        self.server = server_address(server)
        self.agent = agent  # the device host's agent: the step gate runs there (engine/gateproxy.py)
        self._clock: AgentClock | None = None

    @property
    def stonewall(self) -> bool:
        """Steps scheduled by fio's stonewall (no gate on the device's host): a deviation (run/session.py)."""
        return self.agent is None

    def use_agent(self, agent) -> None:
        """The device host's agent, once it is started (a resume starts it after the executor)."""
        self.agent, self._clock = agent, None

    def check(self, timeout_s: float = 15.0, *, sprandom: bool = False) -> None:
        """Refuse (nothing written) unless a fio server answers. ``fio --client=S`` alone proves
        nothing: it exits 1 without a word both when connected and when anything else listens
        there (measured: an HTTP server). So the probe is a job for fio's null engine, which opens
        no file and moves no data: only a fio server sends back its JSON (``client_stats``).
        ``sprandom``: the server's fio must run sprandom too (--precondition sprandom): a second
        probe asks it to, and a fio without it refuses the job."""
        self._probe(timeout_s, "")
        if sprandom:
            try:
                self._probe(timeout_s, "rw=randwrite\nrandom_generator=lfsr\nnorandommap=1\nsprandom=1\n")
            except UserError:
                raise UserError(fiobin.sprandom_refusal(f"the fio of fio server {self.server}",
                                                        "older (it refused a sprandom job)")) from None

    def _probe(self, timeout_s: float, lines: str) -> None:
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".fio", prefix="ssdpts-probe-") as job:
            job.write("[ssdpts-probe]\nioengine=null\nsize=4k\nbs=4k\nfilename=ssdpts-probe\n" + lines)
            job.flush()
            try:
                out = subprocess.run([self.binary, f"--client={self.server}", "--output-format=json", job.name],
                                     capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise UserError(f"fio server {self.server} did not answer within {timeout_s:g} s: check that "
                                f"'fio --server' runs there (nothing was written)") from None
        said = (out.stdout + out.stderr).strip()
        if _GONE.search(said):
            raise UserError(f"fio server {self.server} does not answer ({said.splitlines()[-1].strip()}): start "
                            f"'fio --server' there and run again (nothing was written)")
        if not server_answered(out.stdout):
            raise UserError(f"{self.server} did not answer as a fio server (exit {out.returncode}, no fio JSON): "
                            f"give the address of a running 'fio --server' (nothing was written)")

    def _unanswered(self) -> str | None:
        """A client that failed without a word (seen when its server was SIGKILLed mid-round: exit 1,
        no output, no 'disconnected'): asked again, a server that no longer answers went away."""
        try:
            self.check(timeout_s=10.0)
        except UserError as exc:
            return f"fio's client ended silently and {exc}".split(": start", 1)[0].split(": check", 1)[0]
        return None

    def boundary_source(self) -> dict:
        """With the agent: as for a local run, measured on the device's host. Without: fio's end of run."""
        if self.agent is not None:
            return {**super().boundary_source(), "host": getattr(self.agent, "name", None)}
        return {"source": "fio timeline", "why": f"the steps ran on the fio server {self.server} without the step gate "
                                                 "there (no ssdpts agent: docs/hosts.md)"}

    def cancel_ahead(self) -> dict | None:
        if self.agent is None:
            return None  # nothing is ever started ahead
        return super().cancel_ahead()

    # ---- through the gate on the device's host (FioExecutor's hooks) ------------------------------
    _preexec = staticmethod(lambda: _prepare_client())
    _gate_dir = staticmethod(lambda: None)  # the gate is on the device's host: its agent's Gate checks there

    def _agent_clock(self) -> AgentClock:
        if self._clock is None:
            self._clock = AgentClock(self.agent)
        return self._clock

    def _new_gate(self):
        return GateProxy(self.agent, self._agent_clock())

    def _new_trace(self, filename: str):
        got = self.agent.request("trace_open", filename=filename)
        if got.get("unavailable"):
            raise TraceUnavailable(f"on host {getattr(self.agent, 'name', self.server)}: {got['unavailable']}")
        return RemoteTrace(self.agent, self._agent_clock(), str(got["device"]))

    def _command(self, job_path: Path, out_path: Path) -> list[str]:
        return [self.binary, f"--client={self.server}", "--output-format=json+", f"--output={out_path}",
                str(job_path)]

    def _counters(self, run: _Run):
        agent, filename = self.agent, run.batch.filename

        def counters() -> tuple[float, float] | None:
            got = agent.request("blockstat", filename=filename).get("counters")
            return None if not got else (float(got[0]), float(got[1]))
        return counters

    def _kill(self, run: _Run) -> None:
        """SIGINT has the client tell the server to stop; the steps' FIFOs closed on the device's
        host make a job still waiting at its barrier fail instead of waiting; SIGKILL if it hangs."""
        proc = run.proc
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass
        if self._gate is not None:
            try:
                self._gate.close_entries(run.entries)
            except (Interrupted, UserError):
                pass  # the agent is gone: its gate closed with it
        _interrupt(proc)

    def _close_gate_if_idle(self) -> None:
        try:
            super()._close_gate_if_idle()
        except (Interrupted, UserError):
            self._gate = None  # the agent is gone: its gate closed with it

    def close(self) -> None:
        try:
            super().close()
        except (Interrupted, UserError):
            self._trace = None

    def _result(self, batch: Batch, text: str, console: str, rc: int, wall: float, wall_start: float,
                entries=None) -> BatchResult:
        if entries is None:
            return self._client_result(batch, text, console, rc, wall, wall_start)
        if rc != 0:
            gone = host_lost(text + "\n" + console)
            if not gone and not text.strip() and not console.strip():
                gone = self._unanswered()
            if gone:
                raise HostLost(f"the fio server {self.server} went away during {Path(str(batch.output_path)).name} "
                               f"({gone})")
        res = super()._result(batch, text, console, rc, wall, wall_start, entries)
        clock = self._agent_clock().record(getattr(self.agent, "name", None))
        for tl in res.timelines:
            tl["clock"] = clock
        return res

    def run(self, batch: Batch) -> BatchResult:
        if self.agent is not None:
            return super().run(batch)
        if batch.job_path is None or batch.output_path is None:
            raise ValueError("FioClientExecutor needs a job path and an output path")
        job_path, out_path = Path(batch.job_path).absolute(), Path(batch.output_path).absolute()
        log_path = out_path.with_suffix(".log")
        if any(s.idle_after_s for s in batch.steps):
            raise RunFailed("planned idle periods (HIR) need the step gate, which a fio server on another host "
                            "cannot use: run HIR with fio on the device's own host")
        text, _ = render_job_file(batch, stonewall=True)
        job_path.write_text(STONEWALL_HEADER + text)
        cmd = [self.binary, f"--client={self.server}", "--output-format=json+", f"--output={out_path}",
               str(job_path)]
        _call(batch, 0)
        wall_start, t0 = time.time(), time.monotonic()
        with open(log_path, "w") as log:
            try:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True, preexec_fn=_prepare_client)
            except OSError as exc:
                raise RunFailed(f"cannot start fio ({exc}): check the fio installation") from None
            try:
                proc.wait()
            except BaseException:
                _interrupt(proc)
                raise
        wall = time.monotonic() - t0
        _call(batch, len(batch.steps))
        console = log_path.read_text(errors="replace") if log_path.exists() else ""
        if not console.strip():
            log_path.unlink(missing_ok=True)
        out = out_path.read_text(errors="replace") if out_path.exists() else ""
        if proc.returncode != 0:
            gone = host_lost(out + "\n" + console)
            if not gone and not out.strip() and not console.strip():
                gone = self._unanswered()
            if gone:
                raise HostLost(f"the fio server {self.server} went away during {out_path.name} ({gone})")
        return self._client_result(batch, out, console, proc.returncode, wall, wall_start)

    def _client_result(self, batch: Batch, text: str, console: str, rc: int, wall: float,
                       wall_start: float) -> BatchResult:
        try:
            out = parse_fio_output(text)
        except FioOutputError as exc:
            raise RunFailed(f"fio --client={self.server} failed (exit {rc}): {exc}: see {batch.output_path}") from None
        jobs = step_jobs(out)
        failed = job_errors(out)
        if failed:
            name, code = failed[0]
            raise RunFailed(f"fio on {self.server} reported an I/O error in job {name}: "
                            f"{os.strerror(code) if code < 200 else f'error {code}'}: check the device and "
                            f"{batch.output_path}")
        if rc != 0 or len(jobs) != len(batch.steps):
            said = next((ln.strip() for ln in (out.preamble + "\n" + console).splitlines() if ln.strip()), "")
            raise RunFailed(f"fio --client={self.server} exited with status {rc} and {len(jobs)} results for "
                            f"{len(batch.steps)} steps{': ' + said if said else ''}: see {batch.output_path}")
        ms, timelines = measure(batch, out, lambda jobs: timelines_from_end(jobs, batch.steps, wall_start + wall,
                                                                            "fio end of run (fio server)"))
        return BatchResult(measurements=ms, wall_s=wall, tool_version=out.version,
                           warnings=[ln for ln in out.preamble.splitlines() if ln.strip()], timelines=timelines)


def host_lost(text: str) -> str | None:
    """fio's own words when the client lost its server: mid-batch ``client: host=H disconnected``,
    between batches ``fio: failed to connect to H:P`` (fio 3.33, recorded in
    tests/fixtures/fio/fio-3.33-client-*)."""
    lines = [ln.strip() for ln in text.splitlines() if _GONE.search(ln)]
    return (next((ln for ln in lines if "failed to connect" in ln or "disconnected" in ln), None)
            or (lines[-1] if lines else None))


def _prepare_client() -> None:  # pragma: no cover - runs in the child
    """As for a local fio (engine/fio.py), but the client gets SIGINT, not SIGKILL, when ssdpts dies:
    a SIGKILLed client leaves the server running the job to its end (measured: it went on writing
    for the rest of a 10-s job), a SIGINTed one has the server stop it (within ~0.1 s)."""
    _prepare_child()
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)
    except OSError:
        pass


def _interrupt(proc: subprocess.Popen, timeout_s: float = 15.0) -> None:
    """Stop a batch: SIGINT has fio's client tell the server to stop its jobs; SIGKILL if it hangs."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=timeout_s)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    _stop(proc)


def _call(batch: Batch, i: int) -> None:
    """Telemetry at the batch's start and end (no per-step boundaries: fio schedules the steps)."""
    if batch.on_boundary is not None:
        try:
            batch.on_boundary(i)
        except Exception:  # noqa: BLE001 - telemetry must never stop a measurement
            pass
