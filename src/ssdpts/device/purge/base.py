"""What a purge is (PTS 2.0.2 §3.2, docs/pts-reference.md#purge): the record it leaves, the method protocol, and the
shapes the device-level methods share. The methods themselves live next to the interface they
drive (interfaces/nvme.py, ata.py, scsi.py), each naming in its class the device classes it
serves, its tool, its ``--purge`` names and the capability it needs; the fallbacks are in
fallback.py, the choice and the registry in registry.py.

Contract: ``PurgeMethod.run`` destroys data. Call it only after ``safety.check_writable(target,
...)`` passed for this target (the runner does). As a second line of defence every destructive
method re-runs the read-only ``safety.assess`` and refuses if the target became unusable (mounted
since, etc.), but that does not replace the confirmation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from ssdpts.device.block import device_class
from ssdpts.device.safety import guard as safety
from ssdpts.device.target import Target
from ssdpts.device.tools import PACKAGES, Tools
from ssdpts.errors import RunFailed, UserError

Log = Callable[[str], None]
State = tuple[str, float | None, str]  # ("running" | "done" | "failed", progress % or None, detail)


def quiet(_line: str) -> None:
    pass


@dataclass(frozen=True, slots=True)
class PurgeRecord:
    """What was done, for the manifest and the report header."""

    method: str
    disclosure: str
    started_at: str  # ISO 8601, UTC
    duration_s: float
    is_pts_purge: bool
    detail: str
    notes: tuple[str, ...] = field(default=())  # why stronger methods were not used

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = list(self.notes)
        return d


class PurgeMethod(Protocol):
    name: str
    disclosure: str  # one line for the report header

    def applies(self, target: Target) -> bool: ...

    def run(self, target: Target, log: Log = ...) -> PurgeRecord: ...


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def recheck(target: Target) -> None:
    """Belt and braces: refuse if the target became unusable since check_writable."""
    verdict = safety.assess(target)
    if not verdict.usable:
        raise UserError(verdict.reasons[0])


def poll_until_done(check: Callable[[], State], *, timeout_s: float, what: str,
                    log: Log = quiet, interval_s: float = 10.0, sleep: Callable[[float], None] = time.sleep,
                    clock: Callable[[], float] = time.monotonic) -> float:
    """Poll ``check`` → (state "running" | "done" | "failed", progress % or None, detail) until done.

    Logs progress when it changes (at most once a minute otherwise); raises RunFailed on "failed"
    or when ``timeout_s`` passes, saying that the device may still be busy. Returns seconds waited.
    """
    t0 = clock()
    last_pct: float | None = None
    last_log = -1e9
    while True:
        state, pct, detail = check()
        now = clock()
        if state == "done":
            log(f"purge: {what} complete after {now - t0:.0f} s")
            return now - t0
        if state == "failed":
            raise RunFailed(f"{what} failed: {detail}: check the drive (smartctl/nvme error log) before re-running")
        if now - t0 > timeout_s:
            raise RunFailed(f"{what} did not finish within {timeout_s:.0f} s (last progress "
                            f"{'unknown' if last_pct is None else f'{last_pct:.1f}%'}): the drive may still be "
                            "working; wait for it to finish (check its status), then resume the run")
        if pct != last_pct or now - last_log >= 60:
            log(f"purge: {what} {'in progress' if pct is None else f'{pct:.1f}%'} ({now - t0:.0f} s elapsed)")
            last_pct, last_log = pct, now
        sleep(interval_s)


class DevicePurge:
    """A device-level purge (a PTS purge): the device classes it serves, the tool it needs, the
    capability identify must have found before it is sent by name (``need``), its ``--purge``
    names (``variants``) and the instance a name gets (``configured``), the safety re-check.
    Never applies to a partition: it would erase the whole disk, and the confirmation named only
    the partition."""

    device_classes: tuple[str, ...] = ()
    tool = ""
    name = ""
    disclosure = ""
    need: tuple[str, str] | None = None  # (identify group, field) that must be true to run it by name

    @classmethod
    def variants(cls) -> list["DevicePurge"]:
        """One instance per ``--purge`` name, for the registry."""
        return [cls()]

    def configured(self, info: dict, target: Target) -> "DevicePurge":
        """A fresh instance for ``--purge=NAME``, with what it needs from identify's ``info``."""
        return type(self)()

    def __init__(self, notes: tuple[str, ...] | list[str] = (), *, tools: Tools | None = None,
                 guard: Callable[[Target], None] = recheck):
        self.notes = tuple(notes)
        self.tools = tools or Tools(destructive=True)
        self.guard = guard  # the safety re-check before anything is sent to the device

    def applies(self, target: Target) -> bool:
        return target.kind == "block" and not target.is_partition and device_class(target) in self.device_classes

    def _start(self, target: Target, log: Log) -> tuple[str, float]:
        self.guard(target)
        if self.tools.which(self.tool) is None:
            raise RunFailed(f"{self.tool} is not installed: install {PACKAGES.get(self.tool, self.tool)}, "
                            "or pass --purge=discard (a disclosed fallback, not a PTS purge)")
        log(f"purge: {self.disclosure} on {target.path}")
        return now_iso(), time.monotonic()

    def _record(self, started: str, t0: float, detail: str) -> PurgeRecord:
        return PurgeRecord(self.name, self.disclosure, started, time.monotonic() - t0, True, detail, self.notes)


@dataclass(frozen=True, slots=True)
class Operation:
    """One command-then-poll operation on one device node, and how messages name it."""

    argv: list[str]
    what: str  # the command, as error messages name it ("nvme sanitize /dev/nvme0")
    progress: str  # the operation, as progress lines name it ("sanitize (block erase) of /dev/nvme0")
    done: str  # what was done, for the record ("..., completed after N s" is added)
    limit_s: float  # give up after this long (unless the method was given its own timeout)


class CommandPollPurge(DevicePurge):
    """The one shape of NVMe Sanitize, ATA SANITIZE and SCSI SANITIZE / FORMAT UNIT: a command that
    returns as soon as the device has accepted the operation, then the device's progress polled
    until it reports done (or failed, or the time limit passes). A method says what to run
    (``operation``) and how to read the device's progress (``state``)."""

    hint = ""  # what to do when the command fails
    interval_s = 10.0
    timeout_s: float | None = None

    def device(self, target: Target) -> str:
        """The node the command addresses (the controller for NVMe, the disk otherwise)."""
        return f"/dev/{target.name}"

    def operation(self, dev: str) -> Operation:
        raise NotImplementedError

    def state(self, dev: str) -> State:
        raise NotImplementedError

    def run(self, target: Target, log: Log = quiet) -> PurgeRecord:
        started, t0 = self._start(target, log)
        dev = self.device(target)
        op = self.operation(dev)
        self.tools.must(op.argv, op.what, self.hint)
        waited = poll_until_done(lambda: self.state(dev), what=op.progress, timeout_s=self.timeout_s or op.limit_s,
                                 log=log, interval_s=self.interval_s)
        return self._record(started, t0, f"{op.done}, completed after {waited:.0f} s")


class SanitizePurge(CommandPollPurge):
    """A SANITIZE of one kind (``action``: block erase, crypto erase, ...). The NVMe, ATA and SCSI
    forms are named alike: ``--purge=<interface>-sanitize-<action>``."""

    interface = ""  # nvme | ata | scsi
    label = ""  # how the disclosure names the command ("NVMe Sanitize")
    kinds: dict[str, str] = {}  # action -> how the disclosure names it
    actions: tuple[str, ...] = ("block", "crypto")  # the actions registered as --purge names
    capability: dict[str, str] = {}  # action -> the field of the interface's identify group saying it is supported

    def __init__(self, action: str = "block", notes: tuple[str, ...] | list[str] = (), *,
                 timeout_s: float | None = None, **seams: Any):
        super().__init__(notes, **seams)
        self.action, self.timeout_s = action, timeout_s
        self.name = f"{self.interface}-sanitize-{action}"
        self.disclosure = f"{self.label}, {self.kinds[action]} (PTS purge)"
        self.need = (self.interface, self.capability[action]) if action in self.capability else None

    @classmethod
    def variants(cls) -> list["DevicePurge"]:
        return [cls(action) for action in cls.actions]

    def configured(self, info: dict, target: Target) -> "DevicePurge":
        return type(self)(self.action)


def estimate_timeout(estimate_s: float | None, default_s: float) -> float:
    """A generous limit: three times the device's estimate plus 10 minutes, else the default."""
    return 3 * estimate_s + 600 if estimate_s else default_s
