"""Everything a run does to its device other than fio, behind one seam: on this host
(:class:`LocalSide`) or on the device's own host through ``ssdpts agent`` (device/remote/remote.py).

A run (session.py) asks its side, in this order: claim the device (the ssdpts lock, the safety
verdict and destruction confirmation, the kernel's exclusive claim), collect what identifies it
and its host, then during the run its telemetry, write cache, purge and guard, and at the end
give everything back. The remote side sends the same requests to the agent, which answers each
one by calling this class on its host: one implementation of every check, wherever the device is.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict, dataclass
import os
from typing import Any, Callable, Iterator

from ssdpts.device import contents, fingerprint, identify, latmon, marker, telemetry, writecache
from ssdpts.device.host import audit
from ssdpts.device.host import host
from ssdpts.device.purge import check as purge_check
from ssdpts.device.purge.registry import is_pts_purge, select_purge
from ssdpts.device.safety import guard as safety
from ssdpts.device.safety.claim import Claim
from ssdpts.device.target import Target, open_target

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class PurgeChoice:
    """The purge a run will use, as the plan and the manifest need it (the method runs on the side)."""

    name: str
    disclosure: str
    pts: bool  # a device-level purge the PTS names (else a deviation to disclose)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def purge_choice(method) -> PurgeChoice:
    return PurgeChoice(method.name, method.disclosure, is_pts_purge(method))


@dataclass
class Collected:
    """What a run records about its device and host before the first byte is written."""

    info: dict
    raw: dict[str, str]  # collectors' raw output: device/<name> in the run directory
    purge: PurgeChoice | None  # None: a run that does not purge (ssdpts quick, trace replay)
    audit: dict  # audit.manifest_entry
    audit_failed: list[str]  # one line per failed host-audit check (warnings at the start)
    fingerprint: dict
    claim: dict
    host: dict

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["purge"] = self.purge.to_dict() if self.purge else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Collected":
        return cls(**{**d, "purge": PurgeChoice(**d["purge"]) if d.get("purge") else None})


class DeviceSide:
    """What LocalSide and RemoteSide share: the claim held for the length of a block."""

    remote: dict | None = None  # where the side is, for the manifest (None: this host)

    def take(self, needed_bytes: int, confirm: str | None, interactive: bool = False,
             ask: Callable[[str], str] = input) -> Target:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    @contextmanager
    def claimed(self, needed_bytes: int, confirm: str | None, interactive: bool,
                ask: Callable[[str], str] = input) -> Iterator["DeviceSide"]:
        """The checks every writing command passes before its first byte, in this order: the ssdpts
        lock on the device (another run?), the safety verdict and the destruction confirmation, the
        kernel's exclusive claim; a file target is then created. Held until the block ends."""
        self.take(needed_bytes, confirm, interactive, ask)
        try:
            yield self
        finally:
            self.release()


class LocalSide(DeviceSide):
    """The device on this host: the collectors and checks called directly."""

    def __init__(self, target: Target):
        self.target = target
        self.claim: Claim | None = None
        self._writing = False  # a file target ssdpts has unsealed (device/marker.py) and seals at release
        self._cache: writecache.WriteCacheRecord | None = None
        self.telemetry: telemetry.TelemetrySource | None = None  # from start_telemetry until finish
        self.latmon: latmon.Monitor | latmon.Unavailable | None = None  # from start_latmon until finish
        # Where the claim's watcher reports a new way to the storage found mid-run (run/alarm.py
        # sets it for the length of the run; the agent sends it on its stream). Unset, the guard
        # raises what the watcher found before the next batch.
        self.on_alarm: Callable[[str], None] | None = None

    # ---- before the first byte ---------------------------------------------------------------
    def fingerprint(self) -> dict:
        return fingerprint.take(self.target)

    def check(self, needed_bytes: int, confirm: str | None, interactive: bool = False) -> None:
        """The safety verdict and the confirmation alone (nothing held): a parallel run's pre-check."""
        safety.check_writable(self.target, needed_bytes=needed_bytes, confirm=confirm, interactive=interactive)

    def take(self, needed_bytes: int, confirm: str | None, interactive: bool = False,
             ask: Callable[[str], str] = input) -> Target:
        claim = Claim(self.target)
        claim.lock()
        self.claim = claim
        try:
            safety.check_writable(self.target, needed_bytes=needed_bytes, confirm=confirm, interactive=interactive,
                                  ask=ask)
            claim.claim_device()
            self.target = _prepare_file(self.target)
            claim.target = self.target
            claim.watch(self._alarm)
            if self.target.kind == "file":  # from here on ssdpts writes it: its recorded contents no longer hold
                marker.unseal(self.target.real_path, {k: claim.record.get(k) for k in ("pid", "command", "since")})
                self._writing = True
        except BaseException:
            self.release()
            raise
        return self.target

    def collect(self, purge: str | None, fio_version: str | None) -> Collected:
        """``purge``: the requested method, chosen now (an unknown one refused before anything is
        written); None for a run that does not purge."""
        info, raw = identify.gather(self.target)
        choice = purge_choice(select_purge(self.target, purge, info=info)) if purge is not None else None
        checks = audit.audit()
        assert self.claim is not None
        return Collected(
            info=info, raw=raw, purge=choice, audit=audit.manifest_entry(checks),
            audit_failed=[f"host audit: {c.name} is {c.current}, recommended {c.recommended}: {c.fix_command}"
                          for c in checks if c.ok is False],
            fingerprint=fingerprint.take(self.target, self.claim.fd), claim=claim_record(self.claim),
            host=host.collect(fio_version=fio_version))

    def set_run_dir(self, run_dir: str) -> None:
        if self.claim is not None:
            self.claim.set_run_dir(run_dir)
            if self._writing:
                marker.unseal(self.target.real_path, {k: self.claim.record.get(k) for k in ("pid", "run_dir", "since")})

    # ---- during the run ----------------------------------------------------------------------
    def start_telemetry(self, info: dict | None):
        self.telemetry = telemetry.make_source(self.target, info=info)
        return self.telemetry

    def start_latmon(self, thresholds_ms: tuple) -> latmon.Monitor | latmon.Unavailable:
        """The OCP latency monitor, decided once (device/latmon.py): armed per test by the runner."""
        self.latmon = latmon.make_monitor(self.target, thresholds_ms)
        return self.latmon

    def apply_write_cache(self, want: str, info: dict | None) -> tuple[str, dict]:
        self._cache = writecache.apply(self.target, want, info=info)
        return self._cache.summary, self._cache.to_dict()

    def purge(self, requested: str, info: dict | None, log: Log) -> dict:
        """Purge by the selected method, judged by its effect (device/purge/check.py): blocks written
        before it must not survive it."""
        method = select_purge(self.target, requested, info=info)
        samples = purge_check.write_samples(self.target) if purge_check.applies(self.target, method.name) else None
        rec = method.run(self.target, log=log)
        if self.claim is not None and self.target.kind == "file":
            self.claim.rekey()  # the recreated file is a new file: lock it by its identity too
        if samples is not None:
            purge_check.check(samples, self.target, method.name)
        return rec.to_dict()

    def finish_latmon(self) -> dict | None:
        """The latency monitor's configuration found at the start set again; its record (None: untouched)."""
        mon, self.latmon = self.latmon, None
        if mon is None:
            return None
        try:
            return mon.restore()
        finally:
            mon.close()

    def guard(self) -> None:
        if self.claim is not None:
            self.claim.check()

    def seal_contents(self) -> dict | None:
        """What the block device holds now that the run has stopped writing it (device/contents.py),
        for the manifest; None for a file target (its marker is sealed at release)."""
        if self.target.kind != "block":
            return None
        try:
            return contents.take(self.target.real_path)
        except OSError as exc:
            return contents.unreadable(exc.strerror)

    def contents_changes(self, record: dict | None) -> list[str]:
        """What changed on the block device since the run recorded what it held (device/contents.py);
        nothing for a file target (its marker says it: safety/guard.py)."""
        if self.target.kind != "block":
            return []
        return contents.changes(self.target.real_path, self.target.path, record)

    def _alarm(self, reason: str) -> None:
        """The claim's watcher found a new way to the storage (another thread): to whoever listens."""
        listener = self.on_alarm
        if listener is not None:
            listener(reason)

    def finish(self) -> dict | None:
        """Telemetry closed, the write cache restored: the restore's record (None: nothing applied).
        The latency monitor's configuration is set back by finish_latmon, before this."""
        if self.telemetry is not None:
            self.telemetry.close()
            self.telemetry = None
        self.finish_latmon()
        cache, self._cache = self._cache, None
        return writecache.restore(cache, self.target).to_dict() if cache is not None else None

    def release(self) -> None:
        claim, self.claim = self.claim, None
        writing, self._writing = self._writing, False
        if claim is not None:
            try:
                if writing and os.path.exists(self.target.real_path):
                    marker.seal(self.target.real_path)  # finished writing: what it holds now is ssdpts's
            finally:
                claim.release()

    def close(self) -> None:
        self.finish()
        self.release()


def _prepare_file(target: Target) -> Target:
    """Files are safe targets: ssdpts creates them (sparse) and marks them as its own."""
    if target.kind != "file":
        return target
    if not target.exists:
        with open(target.path, "wb") as f:
            f.truncate(target.size_bytes)
        marker.mark_created(target.path)
        return open_target(target.path)
    return target


def claim_record(claim: Claim) -> dict:
    return {"kernel_exclusive": claim.fd is not None, "locks": [what for _key, what in claim.keys],
            "held": [f"/dev/{n}" for n in claim.held_ways]}
