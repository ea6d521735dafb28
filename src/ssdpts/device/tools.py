"""How device code reaches the host: external tools (nvme-cli, smartctl, hdparm, sdparm, sg3-utils,
lsblk, lspci) and sysfs, each behind one seam that tests replace.

* :class:`Tools` runs tools. A runner is read-only unless made with ``destructive=True``:
  :meth:`Tools.run` is for queries (identify, log pages, get-feature) and never raises;
  :meth:`Tools.change` and :meth:`Tools.must` are for commands that change a device or the host
  (purge, set-feature, hdparm -W) and refuse to start on a read-only runner. Collectors are given
  a read-only runner, so no mistake there can erase a drive.
* :class:`FakeTools` answers from recorded outputs (tests/fixtures/tools) and records every call.
* :class:`Sysfs` reads one sysfs tree; tests give it a fake tree in a temporary directory.
* :class:`Gather` is one collection: the runner, sysfs, the raw outputs kept for the run's
  ``device/`` directory and each collector's status.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ssdpts.device.fields import not_available
from ssdpts.errors import RunFailed

PACKAGES = {
    "nvme": "nvme-cli", "smartctl": "smartmontools", "hdparm": "hdparm", "sdparm": "sdparm",
    "sg_opcodes": "sg3-utils", "sg_sanitize": "sg3-utils", "sg_format": "sg3-utils", "sg_requests": "sg3-utils",
    "lspci": "pciutils", "lshw": "lshw", "lsblk": "util-linux", "dmidecode": "dmidecode", "fio": "fio",
    "blkdiscard": "util-linux",
}

# Tools whose presence is recorded (purge selection needs to know which methods can run).
TOOLS = ("nvme", "smartctl", "hdparm", "sdparm", "sg_opcodes", "sg_sanitize", "sg_format", "sg_requests",
         "lspci", "lsblk", "blkdiscard")

OkCodes = Callable[[int], bool]


@dataclass(frozen=True, slots=True)
class ToolResult:
    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    reason: str | None  # None when the tool ran and its output can be used
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.reason is None


def install_hint(tool: str) -> str:
    pkg = PACKAGES.get(tool)
    return f"{tool} is not installed (install {pkg})" if pkg else f"{tool} is not installed"


class ReadOnlyRunner(Exception):
    """A command that changes a device was given to a read-only runner (a programming error)."""


class Tools:
    """Runs external tools on this host."""

    def __init__(self, *, destructive: bool = False):
        self.destructive = destructive

    def which(self, tool: str) -> str | None:
        return shutil.which(tool)

    def _exec(self, argv: list[str], timeout: float | None) -> tuple[int, str, str]:
        # LC_ALL=C: the messages are read (the parsers, and EBUSY in must())
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL, errors="replace", env={**os.environ, "LC_ALL": "C"})
        return proc.returncode, proc.stdout, proc.stderr

    def run(self, argv: list[str], *, timeout: float = 30.0, ok_codes: OkCodes | None = None) -> ToolResult:
        """Run a query; never raises. ``reason`` says why its output cannot be used."""
        t0 = time.monotonic()
        if self.which(argv[0]) is None:
            return ToolResult(tuple(argv), None, "", "", not_available(install_hint(argv[0])))
        try:
            rc, out, err = self._exec(argv, timeout)
        except subprocess.TimeoutExpired:
            return ToolResult(tuple(argv), None, "", "", not_available(f"{' '.join(argv)} did not finish in "
                                                                       f"{timeout:.0f} s"), time.monotonic() - t0)
        except OSError as exc:
            return ToolResult(tuple(argv), None, "", "", not_available(f"cannot run {argv[0]}: {exc.strerror}"),
                              time.monotonic() - t0)
        return ToolResult(tuple(argv), rc, out, err, _failure(argv, rc, out, err, ok_codes), time.monotonic() - t0)

    def change(self, argv: list[str], *, timeout: float = 60.0, ok_codes: OkCodes | None = None) -> ToolResult:
        """Run a command that changes a device or the host; never raises for the command's own
        failure (the result says why), refuses on a read-only runner."""
        self._require_destructive(argv)
        return self.run(argv, timeout=timeout, ok_codes=ok_codes)

    def must(self, argv: list[str], what: str, hint: str, *, timeout: float | None = None) -> str:
        """Run a command that changes a device and must succeed (purge): its stdout, else RunFailed
        saying what failed and ``hint`` (what to do instead)."""
        self._require_destructive(argv)
        if self.which(argv[0]) is None:
            raise RunFailed(f"{argv[0]} is not installed: install {PACKAGES.get(argv[0], 'util-linux')}, or {hint}")
        from ssdpts.device.safety.held import blocked_by_own_claim

        try:
            rc, out, err = self._exec(argv, timeout)
            held = blocked_by_own_claim(argv, err + out) if rc != 0 else None
            if held is not None:
                # The tool opens the device exclusively itself and met the run's own claim: lend it
                # the claim (the ssdpts lock stays held) and run it again (device/safety/claim.py).
                with held.lent(argv[0]):
                    rc, out, err = self._exec(argv, timeout)
        except subprocess.TimeoutExpired:
            raise RunFailed(f"{what} did not finish in {timeout:.0f} s: {hint}") from None
        if rc != 0:
            last = (err.strip().splitlines() or out.strip().splitlines() or [f"exit status {rc}"])[-1]
            raise RunFailed(f"{what} failed: {last}: {hint}")
        return out.strip()

    def _require_destructive(self, argv: list[str]) -> None:
        if not self.destructive:
            raise ReadOnlyRunner(f"{' '.join(argv)} changes the device, but this tool runner is read-only")


def _failure(argv: list[str], rc: int, out: str, err: str, ok_codes: OkCodes | None) -> str | None:
    if (ok_codes(rc) if ok_codes else rc == 0):
        return None
    last = (err.strip().splitlines() or out.strip().splitlines() or [f"exit status {rc}"])[-1]
    if re.search(r"permission denied|operation not permitted|must be root|requires root", err + out, re.I):
        return not_available(f"{argv[0]} needs root ({last.strip()})")
    return not_available(f"{' '.join(argv[:2])} failed: {last.strip()}")


Answer = str | ToolResult | Callable[[list[str]], "str | ToolResult"]


class FakeTools(Tools):
    """Tools answered from recorded output. ``answers`` maps an argv prefix (a tuple: the longest
    matching prefix wins) to stdout text, a ToolResult, or a function of argv returning either.
    Tools in ``missing`` are not installed; any other argv fails with exit status 1. Every call is
    appended to ``calls``."""

    def __init__(self, answers: Mapping[tuple[str, ...], Answer] | None = None, *, missing: set[str] | frozenset = frozenset(),
                 destructive: bool = False, installed: set[str] | None = None):
        super().__init__(destructive=destructive)
        self.answers = dict(answers or {})
        self.missing = set(missing)
        self.installed = installed  # None: every tool not missing is installed
        self.calls: list[tuple[str, ...]] = []

    def which(self, tool: str) -> str | None:
        if tool in self.missing or (self.installed is not None and tool not in self.installed):
            return None
        return f"/usr/bin/{tool}"

    def _answer(self, argv: list[str]) -> ToolResult:
        key = max((k for k in self.answers if tuple(argv[:len(k)]) == k), key=len, default=None)
        if key is None:
            return ToolResult(tuple(argv), 1, "", "no such device", not_available(f"{argv[0]} failed"))
        ans = self.answers[key]
        if callable(ans):
            ans = ans(list(argv))
        return ans if isinstance(ans, ToolResult) else ToolResult(tuple(argv), 0, ans, "", None)

    def _exec(self, argv: list[str], timeout: float | None) -> tuple[int, str, str]:
        res = self._answer(argv)
        if res.returncode is None:  # a scripted failure to start (e.g. refused by the kernel)
            raise OSError(0, res.reason or "failed")
        return res.returncode, res.stdout, res.stderr

    def run(self, argv: list[str], *, timeout: float = 30.0, ok_codes: OkCodes | None = None) -> ToolResult:
        self.calls.append(tuple(argv))
        return super().run(argv, timeout=timeout, ok_codes=ok_codes)

    def must(self, argv: list[str], what: str, hint: str, *, timeout: float | None = None) -> str:
        self._require_destructive(argv)
        self.calls.append(tuple(argv))
        return super().must(argv, what, hint, timeout=timeout)


def parse_json(text: str) -> Any:
    """The JSON document in a tool's output (some tools print warnings before it)."""
    text = text.strip()
    if not text:
        raise ValueError("empty output")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
        if not starts:
            raise
        return json.loads(text[min(starts):])


# ==================================================================================================
# Values as tools print them
# ==================================================================================================


def as_int(v: Any) -> int | None:
    """An integer from a tool's number or text ("1,024", "0x1f", "12.0"); None when it is not one."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    text = str(v).strip().replace(",", "")
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        try:
            return int(float(text))
        except ValueError:
            return None


def as_str(v: Any) -> str | None:
    if v is None:
        return None
    text = str(v).strip()
    return text or None


def bit(v: int | None, n: int) -> bool | None:
    return None if v is None else bool((v >> n) & 1)


def fill_missing(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """Fill ``dst`` from ``src`` where ``dst`` has nothing yet (a second source never overrides a first)."""
    for k, v in src.items():
        if v is not None and dst.get(k) is None:
            dst[k] = v


# ==================================================================================================
# sysfs
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class Sysfs:
    """One sysfs tree (``/sys``, or a fake one in tests). Reads only."""

    root: str = "/sys"

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    def block_dir(self, name: str) -> str:
        return os.path.join(self.root, "class", "block", name)

    def read(self, path: str) -> str | None:
        """Stripped content of an attribute, or None when absent/unreadable/empty."""
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().strip()
        except OSError:
            return None
        return text or None

    def read_int(self, path: str) -> int | None:
        text = self.read(path)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    def read_bool(self, path: str) -> bool | None:
        value = self.read_int(path)
        return None if value is None else value != 0

    def block_attr(self, name: str, *attr: str) -> str | None:
        return self.read(os.path.join(self.block_dir(name), *attr))

    def is_partition(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.block_dir(name), "partition"))

    def disk_of(self, name: str) -> str:
        """Whole-disk kernel name for a partition (its sysfs parent directory), else ``name``."""
        if not self.is_partition(name):
            return name
        return os.path.basename(os.path.dirname(os.path.realpath(self.block_dir(name))))

    def partitions_of(self, name: str) -> list[str]:
        base = self.block_dir(name)
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            return []
        return [e for e in entries if os.path.isfile(os.path.join(base, e, "partition"))]

    def name_for_devnum(self, major: int, minor: int) -> str | None:
        link = os.path.join(self.root, "dev", "block", f"{major}:{minor}")
        if not os.path.exists(link):
            return None
        return os.path.basename(os.path.realpath(link))

    def driver_of(self, directory: str) -> str | None:
        """Name of the kernel driver bound to a sysfs device directory."""
        link = os.path.join(directory, "driver")
        return os.path.basename(os.path.realpath(link)) if os.path.islink(link) else None


# ==================================================================================================
# One collection
# ==================================================================================================


@dataclass
class Gather:
    """What one collection has: how to run tools and read sysfs, and what it keeps."""

    tools: Tools
    sysfs: Sysfs
    raw: dict[str, str] = field(default_factory=dict)  # device/ file name -> text
    collectors: dict[str, str] = field(default_factory=dict)  # collector -> "ok" | "not available: why"

    def keep(self, name: str, text: str | None) -> None:
        if text:
            self.raw[name] = text if text.endswith("\n") else text + "\n"

    def note(self, what: str, res: ToolResult | str | None) -> None:
        if isinstance(res, ToolResult):
            self.collectors[what] = "ok" if res.ok else (res.reason or "not available")
        else:
            self.collectors[what] = res or "ok"

    def run_json(self, argv: list[str], raw_name: str, what: str) -> dict | None:
        """Run a tool that prints JSON: keep its output, note how it went, return the document."""
        res = self.tools.run(argv)
        if res.ok:
            try:
                doc = parse_json(res.stdout)
            except ValueError as exc:
                self.note(what, not_available(f"{' '.join(argv[:2])} printed no JSON ({exc})"))
                self.keep(raw_name.replace(".json", ".txt"), res.stdout)
                return None
            self.keep(raw_name, res.stdout)
            self.note(what, res)
            return doc if isinstance(doc, dict) else None
        self.note(what, res)
        if res.stderr or res.stdout:
            self.keep(raw_name.replace(".json", ".err.txt"), (res.stderr or "") + (res.stdout or ""))
        return None

    def run_kept(self, argv: list[str], raw_name: str, what: str, **kw: Any) -> ToolResult:
        """Run a tool that prints text: note how it went and keep its output when it worked."""
        res = self.tools.run(argv, **kw)
        self.note(what, res)
        if res.ok:
            self.keep(raw_name, res.stdout)
        return res
