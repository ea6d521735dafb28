"""The device lab's pytest side: one guest per test session (tests/lab/guest.py), shared by every test.

Tests get the ``lab`` fixture: ``lab.dev[key]`` is the guest's device node of a drive ("nvme",
"nvme4k", "nvme4k-ns2", "sata", "scsi"), ``lab.sh``/``lab.ssdpts`` run commands in the guest,
``lab.info`` caches ``ssdpts info --json`` per drive, ``lab.scenario`` runs ``ssdpts run`` stopped
at a known point (tests/lab/scenario.py), ``lab.markers`` writes/checks purge markers.

The lab skips (with the reason) only when QEMU or the guest kernel cannot be had; a guest that
does not boot is a failure. Its accelerator, cold-start and boot times and every lab test's time
are printed at the end of the session.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import unavailable

from .guest import Guest, GuestError, LabUnavailable, prepare
from .truth import write_cache_argv, write_cache_state

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Target:
    key: str
    kind: str  # nvme | ata | scsi
    serial: str  # the drive's (controller's) serial: what --destroy-data-on names
    nsid: int | None = None


def D(n: int, why: str):
    """A lab defect not fixed yet: a strict xfail, so its fix shows as an XPASS (docs/lab.md)."""
    return pytest.mark.xfail(strict=True, reason=f"lab defect D{n}: {why}")


TARGETS = {
    "nvme": Target("nvme", "nvme", "LABNVME512A", 1),
    "nvme4k": Target("nvme4k", "nvme", "LABNVME4KB", 1),
    "nvme4k-ns2": Target("nvme4k-ns2", "nvme", "LABNVME4KB", 2),
    "sata": Target("sata", "ata", "LABSATA0001"),
    "scsi": Target("scsi", "scsi", "LABSCSI0001"),
}

# Finds each drive's node in the guest by its serial, from sysfs (no udev needed).
_FIND = r'''
import glob, json, os
out = []
for b in sorted(glob.glob("/sys/block/*")):
    n = os.path.basename(b)
    def rd(p):
        try:
            return open(os.path.join(b, p), "rb").read()
        except OSError:
            return b""
    if n.startswith("nvme"):
        out.append({"dev": "/dev/" + n, "serial": rd("device/serial").decode().strip(),
                    "nsid": int(rd("nsid") or 0)})
    elif n.startswith("sd"):
        pg80 = rd("device/vpd_pg80")
        out.append({"dev": "/dev/" + n, "serial": pg80[4:].decode(errors="replace").strip(), "nsid": None})
print(json.dumps(out))
'''


@dataclass
class Lab:
    guest: Guest
    scratch: Path
    dev: dict[str, str]
    prepare_s: float
    cache: dict = field(default_factory=dict)
    _n: int = 0

    # -- running things in the guest

    def sh(self, cmd: str | list[str], *, timeout: float = 300, check: bool = False, env: dict | None = None):
        return self.guest.run(cmd, timeout=timeout, check=check, env={"COLUMNS": "200", **(env or {})})

    def ssdpts(self, *args: str, timeout: float = 600):
        return self.sh(["ssdpts", *args], timeout=timeout)

    def py(self, script: str, *args: str, timeout: float = 300):
        """Run one of tests/lab's guest scripts with the guest's (= the host's) python."""
        return self.sh(["python", str(HERE / script), *args], timeout=timeout)

    def tool_json(self, argv: list[str], *, ok_rc: tuple[int, ...] = (0,)) -> dict:
        res = self.sh(argv, timeout=60)
        assert res.rc in ok_rc, f"{res.argv}: rc={res.rc}: {res.stderr[-500:]}"
        return json.loads(res.stdout)

    # -- cached facts

    def info(self, key: str) -> dict:
        """``ssdpts info DEV --json`` of a drive, once per session."""
        if ("info", key) not in self.cache:
            res = self.ssdpts("info", self.dev[key], "--json")
            assert res.rc == 0, f"ssdpts info {self.dev[key]} failed ({res.rc}): {res.stderr[-2000:]}"
            self.cache[("info", key)] = json.loads(res.stdout)
        return self.cache[("info", key)]

    def fresh_out(self, name: str) -> str:
        self._n += 1
        return str(self.scratch / "runs" / f"{self._n:02d}-{name}")

    def markers(self, op: str, key: str, tag: str) -> dict:
        res = self.py("markers.py", op, self.dev[key], tag, timeout=120)
        assert res.rc == 0, f"markers {op} {key}: {res.stderr[-1000:]}"
        return json.loads(res.stdout)

    def checksum(self, key: str) -> str:
        res = self.sh(["sha256sum", self.dev[key]], timeout=300, check=True)
        return res.stdout.split()[0]

    def scenario(self, key: str, *run_args: str, stop: str = "sigkill", probes: tuple[str, ...] = (),
                 timeout: float = 900, name: str = "", target: str | None = None) -> dict:
        """``ssdpts run RUN_ARGS --target DEV`` stopped per ``stop`` (see scenario.py); its outcome.
        ``target`` overrides the drive's node (e.g. one of its partitions)."""
        out = self.fresh_out(name or f"{key}-{stop}")
        argv = ["python", str(HERE / "scenario.py"), "--stop", stop, "--out", out,
                "--fio-stop-dir", str(self.scratch / "fio-stop"), "--timeout", str(timeout)]
        for p in probes:
            argv += ["--probe", p]
        argv += ["--", *run_args, "--target", target or self.dev[key]]
        res = self.sh(argv, timeout=timeout + 120)
        assert res.rc == 0, f"scenario failed: {res.stderr[-2000:]}"
        return json.loads(res.stdout)

    def wce(self, key: str) -> str:
        """The drive's volatile write cache as the real tool reads it: "enabled" or "disabled"."""
        kind = TARGETS[key].kind
        res = self.sh(write_cache_argv(kind, self.dev[key]), check=kind != "scsi")  # sdparm: exit 5, see truth.py
        return write_cache_state(kind, res.stdout)


_LAB: dict = {}
_TIMES: list[tuple[str, float, str]] = []
_LAST_USER: list[str] = []


@pytest.fixture(scope="session")
def lab() -> Lab:
    if "skip" in _LAB:
        unavailable(_LAB["skip"])
    if "lab" in _LAB:
        return _LAB["lab"]
    try:
        image = prepare(log=lambda s: print(s, flush=True))
    except LabUnavailable as exc:
        _LAB["skip"] = f"device lab unavailable: {exc}"
        unavailable(_LAB["skip"])
    # Not under pytest's basetemp: other pytest sessions on the machine prune old basetemps, and the
    # drive images and run directories must live as long as this guest (kept after a failed session).
    scratch = Path(tempfile.mkdtemp(prefix="ssdpts-lab-", dir=os.environ.get("SSDPTS_LAB_SCRATCH", "/var/tmp")))
    _LAB["scratch"] = scratch
    (scratch / "runs").mkdir()
    guest = Guest(image, scratch)
    try:
        guest.start()
    except GuestError as exc:
        _LAB["error"] = str(exc)
        raise
    _LAB["guest"] = guest
    found = json.loads(guest.run(["python", "-c", _FIND], check=True).stdout)
    dev = {}
    for key, t in TARGETS.items():
        match = [f["dev"] for f in found if f["serial"] == t.serial and (t.nsid is None or f["nsid"] == t.nsid)]
        if len(match) != 1:
            raise GuestError(f"drive {key} (serial {t.serial}) not found once in the guest: {found}")
        dev[key] = match[0]
    _LAB["lab"] = Lab(guest, scratch, dev, image.built_s)
    return _LAB["lab"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).startswith(str(HERE)):
            item.add_marker(pytest.mark.lab)


def pytest_collection_finish(session):
    """The last test to run that uses the guest (after -m and -k deselected theirs)."""
    users = [item.nodeid for item in session.items if "lab" in getattr(item, "fixturenames", ())]
    _LAST_USER[:] = users[-1:]


def pytest_runtest_logfinish(nodeid, location):
    """The guest is powered off after the last test that uses it, not at the session's end: an idle
    guest under TCG still takes most of a core, and the reference SSD's timing proofs (make
    test-full runs them after the lab) need a quiet host."""
    if nodeid in _LAST_USER and _LAB.get("guest") is not None:
        _LAB["guest"].stop()


def pytest_runtest_logreport(report):
    if report.when == "call" and "tests/lab/" in report.nodeid:
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        _TIMES.append((report.nodeid.split("::", 1)[-1], report.duration, outcome))


def pytest_sessionfinish(session, exitstatus):
    guest = _LAB.get("guest")
    if guest is not None:
        guest.stop()
    scratch = _LAB.get("scratch")
    if scratch is not None and exitstatus == 0 and not os.environ.get("SSDPTS_LAB_KEEP"):
        shutil.rmtree(scratch, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    if not _LAB:
        return
    tr = terminalreporter
    tr.write_sep("-", "ssdpts device lab")
    if "skip" in _LAB:
        tr.write_line(f"lab skipped: {_LAB['skip']}")
        return
    lab = _LAB.get("lab")
    guest = _LAB.get("guest")
    if guest is not None:
        tr.write_line(f"accelerator: {guest.accel or 'none'} ({guest.accel_note}); guest kernel "
                      f"{guest.ready.get('uname', '?')}")
        tr.write_line(f"kernel+initramfs from cache or built: {lab.prepare_s if lab else 0:.1f} s; "
                      f"QEMU start to first command: {guest.boot_s:.1f} s; guest commands: {len(guest.log)}")
    if _LAB.get("scratch") is not None and _LAB["scratch"].exists():
        tr.write_line(f"lab scratch kept (drive images, run directories, console.log): {_LAB['scratch']}")
    if "error" in _LAB:
        tr.write_line(f"guest failed: {_LAB['error']}")
    for name, secs, outcome in _TIMES:
        tr.write_line(f"  {secs:7.1f} s  {outcome:8s} {name}")
