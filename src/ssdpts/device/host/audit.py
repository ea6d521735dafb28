"""Host tuning audit: the host settings for a measurement in their Linux form (docs/doctor.md).

docs/doctor.md (the Solidigm SSD performance evaluation guide, §3.4) sets the platform so it does not mask the device:
EIST/P-states off (cpufreq governor ``performance``, intel_pstate min_perf_pct=100), Turbo on,
C-states off, PCIe ASPM off (and NVMe APST off), no paging file, no scheduled drive optimisation
(fstrim.timer and other background jobs that touch the device stopped); SMT is recorded. It also
needs the tools: fio, nvme-cli, smartctl, and io_uring for fio's default engine here.

``audit()`` returns one :class:`Check` per setting (stored in the run manifest). ``apply(checks)``
changes only reversible settings (sysfs values and systemd units, never the kernel command line
or packages) and records each change with its old value in a JSON file under the user's state
directory; ``undo()`` restores them. Nothing here touches a block device.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from ssdpts.atomic import write_atomic
from ssdpts.device.fields import not_available
from ssdpts.device.host import host
from ssdpts.device.tools import Tools

PROC_SYS = "/proc/sys"
SYS = "/sys"  # roots read at call time, so tests can point them at a fake tree
STATE_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Action:
    """One reversible change: write ``value`` to sysfs/procfs ``path`` (undo: the old value), or run
    ``argv`` (undo: ``undo_argv``)."""

    kind: str  # write | run
    path: str | None = None
    value: str | None = None
    argv: tuple[str, ...] = ()
    undo_argv: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"echo {self.value} > {self.path}" if self.kind == "write" else " ".join(self.argv)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    current: str
    recommended: str
    ok: bool | None  # None: not applicable here, or cannot tell
    fix_command: str
    reversible: bool  # --apply can change it and --undo restore it
    why: str = ""  # the source of the recommendation
    actions: tuple[Action, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("actions")
        return d


# --- helpers --------------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _install(pkg: str) -> str:
    for mgr, cmd in (("apt-get", "apt-get install"), ("dnf", "dnf install"), ("zypper", "zypper install"),
                     ("pacman", "pacman -S"), ("yum", "yum install")):
        if shutil.which(mgr):
            return f"{cmd} {pkg}"
    return f"install {pkg}"


def _version_tuple(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+(?:\.\d+)+|\d+)", text or "")
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def systemd_running() -> bool:
    return os.path.isdir("/run/systemd/system")


def _systemctl(*args: str) -> str:
    res = Tools().run(["systemctl", *args], timeout=15, ok_codes=lambda rc: True)
    return (res.stdout or "").strip() or (res.stderr or "").strip()


def _cpus() -> list[str]:
    return host._cpu_dirs()


# --- the checks -----------------------------------------------------------------------------------


def check_governor() -> Check:
    name, rec = "cpufreq governor", "performance"
    why = "docs/doctor.md: EIST / P-states disabled"
    paths = [os.path.join(c, "cpufreq", "scaling_governor") for c in _cpus()]
    govs = {p: _read(p) for p in paths}
    govs = {p: g for p, g in govs.items() if g}
    fix = "cpupower frequency-set -g performance"
    if not govs:
        return Check(name, not_available("no cpufreq in /sys (VM or no frequency driver)"), rec, None, fix, False, why)
    cur = sorted(set(govs.values()))
    avail = _read(os.path.join(os.path.dirname(next(iter(govs))), "scaling_available_governors")) or ""
    actions = tuple(Action("write", p, "performance") for p, g in govs.items() if g != "performance")
    ok = all(g == "performance" for g in govs.values())
    if not ok and "performance" not in avail.split():
        return Check(name, ", ".join(cur), rec, False, fix + f" (this driver offers only: {avail})", False, why)
    return Check(name, ", ".join(cur), rec, ok, fix, True, why, actions)


def check_min_perf() -> Check:
    name, rec, why = "intel_pstate min_perf_pct", "100", "docs/doctor.md: P-states disabled (Linux: min_perf_pct=100)"
    path = f"{host.SYS_CPU}/intel_pstate/min_perf_pct"
    cur = _read(path)
    fix = f"echo 100 > {path}"
    if cur is None:
        return Check(name, "not applicable: intel_pstate is not the frequency driver", rec, None, fix, False, why)
    ok = cur == "100"
    return Check(name, cur, rec, ok, fix, True, why, () if ok else (Action("write", path, "100"),))


def check_turbo() -> Check:
    name, rec, why = "turbo / boost", "enabled (recorded)", "docs/doctor.md: Intel Turbo Mode enabled in the synthetic column"
    nt = f"{host.SYS_CPU}/intel_pstate/no_turbo"
    boost = f"{host.SYS_CPU}/cpufreq/boost"
    if _read(nt) is not None:
        on = _read(nt) == "0"
        return Check(name, "enabled" if on else "disabled", rec, on, f"echo 0 > {nt}", True, why,
                     () if on else (Action("write", nt, "0"),))
    if _read(boost) is not None:
        on = _read(boost) == "1"
        return Check(name, "enabled" if on else "disabled", rec, on, f"echo 1 > {boost}", True, why,
                     () if on else (Action("write", boost, "1"),))
    return Check(name, not_available("no no_turbo/boost control (VM or firmware-managed)"), rec, None,
                 "set Turbo in the firmware (BIOS) setup", False, why)


def check_cstates() -> Check:
    """Idle states deeper than C1 (cpuidle state index ≥ 2: POLL, C1 are 0 and 1) disabled."""
    name, rec = "C-states", "limited to C1 (deeper idle states disabled)"
    why = "docs/doctor.md: C-states disabled (deep idle slows I/O completion)"
    fix = "cpupower idle-set -D 2   (boot-time: intel_idle.max_cstate=1 processor.max_cstate=1)"
    deep: dict[str, str] = {}
    names: set[str] = set()
    for c in _cpus():
        base = os.path.join(c, "cpuidle")
        try:
            states = [s for s in os.listdir(base) if s.startswith("state") and int(s[5:]) >= 2]
        except (OSError, ValueError):
            continue
        for s in states:
            p = os.path.join(base, s, "disable")
            v = _read(p)
            if v is not None:
                deep[p] = v
                names.add(_read(os.path.join(base, s, "name")) or s)
    if not deep:
        drv = _read(f"{host.SYS_CPU}/cpuidle/current_driver") or "none"
        return Check(name, f"no idle states deeper than C1 (cpuidle driver: {drv})", rec, True, fix, False, why)
    enabled = [p for p, v in deep.items() if v == "0"]
    cur = (f"{', '.join(sorted(names))} enabled on {len({p.split('/cpuidle')[0] for p in enabled})} CPUs"
           if enabled else f"{', '.join(sorted(names))} disabled")
    return Check(name, cur, rec, not enabled, fix, True, why, tuple(Action("write", p, "1") for p in enabled))


def check_aspm() -> Check:
    name, rec, why = "PCIe ASPM policy", "performance", "docs/doctor.md: PCIe ASPM disabled"
    path = f"{SYS}/module/pcie_aspm/parameters/policy"
    text = _read(path)
    fix = f"echo performance > {path}   (boot-time: pcie_aspm.policy=performance or pcie_aspm=off)"
    if text is None:
        return Check(name, not_available("no pcie_aspm policy (ASPM not built into this kernel)"), rec, None, fix, False, why)
    cur = host._active(text) or text
    ok = cur == "performance"
    return Check(name, cur, rec, ok, fix, True, why, () if ok else (Action("write", path, "performance"),))


def check_apst() -> Check:
    name, rec = "NVMe APST", "off (nvme_core.default_ps_max_latency_us=0)"
    why = "docs/doctor.md: NVMe autonomous power state transitions off"
    path = f"{SYS}/module/nvme_core/parameters/default_ps_max_latency_us"
    fix = "add nvme_core.default_ps_max_latency_us=0 to the kernel command line and reboot"
    cur = _read(path)
    if cur is None:
        return Check(name, "not applicable: no nvme_core module loaded (no NVMe devices)", rec, None, fix, False, why)
    tolerances = {}
    try:
        for ctrl in sorted(os.listdir(f"{SYS}/class/nvme")):
            p = f"{SYS}/class/nvme/{ctrl}/power/pm_qos_latency_tolerance_us"
            v = _read(p)
            if v is not None:
                tolerances[p] = v
    except OSError:
        pass
    ok = cur == "0" and all(v == "0" for v in tolerances.values())
    # Per controller, at run time: a latency tolerance of 0 makes the driver turn APST off.
    actions = tuple(Action("write", p, "0") for p, v in tolerances.items() if v != "0")
    shown = f"default_ps_max_latency_us={cur}" + (
        f"; per-controller tolerance {', '.join(sorted(set(tolerances.values())))} µs" if tolerances else "")
    if actions:
        fix = "; ".join(a.describe() for a in actions) + f"   (boot-time: {fix})"
    return Check(name, shown, rec, ok, fix, bool(actions), why, actions)


def check_swap() -> Check:
    name, rec, why = "swap", "off", "docs/doctor.md: no paging file"
    swaps = host.parse_swaps(_read(f"{host.PROC}/swaps") or "")
    if not swaps:
        return Check(name, "off", rec, True, "swapoff -a", False, why)
    cur = "on: " + ", ".join(f"{s['name']} ({s['size_bytes'] / 2**30:.1f} GiB, {s['used_bytes'] / 2**20:.0f} MiB used)"
                             for s in swaps)
    actions = tuple(Action("run", argv=("swapoff", s["name"]), undo_argv=("swapon", "-p", str(s["priority"]), s["name"]))
                    for s in swaps)
    return Check(name, cur, rec, False, "swapoff -a", True, why, actions)


def _unit_check(name: str, unit: str, why: str, rec: str = "inactive during runs") -> Check:
    fix = f"systemctl stop {unit}"
    if shutil.which("systemctl") is None:
        return Check(name, not_available("no systemctl (not a systemd system)"), rec, None, fix, False, why)
    enabled = _systemctl("is-enabled", unit)
    if not systemd_running():
        if enabled in ("enabled", "static", "enabled-runtime", "alias", "indirect", "generated"):
            return Check(name, f"unit {enabled}, but systemd is not running (PID 1 is not systemd): it cannot run",
                         rec, True, fix, False, why)
        return Check(name, f"{enabled or 'not installed'} (systemd not running)", rec, True, fix, False, why)
    active = _systemctl("is-active", unit)
    if active in ("active", "activating", "reloading"):
        return Check(name, f"{active} ({enabled})", rec, False, fix, True, why,
                     (Action("run", argv=("systemctl", "stop", unit), undo_argv=("systemctl", "start", unit)),))
    return Check(name, f"{active or 'inactive'} ({enabled or 'not installed'})", rec, True, fix, False, why)


def check_fstrim() -> Check:
    return _unit_check("fstrim.timer", "fstrim.timer",
                       "docs/doctor.md: scheduled drive optimisation off (a TRIM of the device under test changes its state)")


def check_smartd() -> Check:
    c = _unit_check("smartd", "smartd.service", "smartd polls drives and can start self-tests during a measurement")
    if c.ok is None or not systemd_running():
        pids = _procs_named("smartd")
        if pids:
            return Check("smartd", f"running (pid {', '.join(pids)})", c.recommended, False,
                         "stop smartd for the run (service manager, or kill)", False, c.why)
    return c


_JOB_PATTERN = re.compile(r"\b(fstrim|e4defrag|btrfs\s+(scrub|balance)|zpool\s+scrub|checkarray|mdcheck|"
                          r"raid-check|badblocks|smartctl\s+-t|e2scrub|updatedb|mlocate)\b")
_TIMER_PATTERN = re.compile(r"(fstrim|e2scrub|btrfs|scrub|mdcheck|mdmonitor-oneshot|raid-check|zfs|updatedb|"
                            r"plocate|mlocate|man-db|apt-daily|logrotate)", re.I)


def _procs_named(comm: str) -> list[str]:
    out = []
    try:
        for pid in os.listdir("/proc"):
            if pid.isdigit() and _read(f"/proc/{pid}/comm") == comm:
                out.append(pid)
    except OSError:
        pass
    return out


def check_background_jobs() -> Check:
    """Cron entries and systemd timers that would read/write/trim/scrub disks during a run."""
    name, rec = "background jobs", "none that touch block devices during runs"
    why = "docs/doctor.md: background tasks and scheduled maintenance off"
    found: list[str] = []
    actions: list[Action] = []
    cron_files = ["/etc/crontab"]
    for d in ("/etc/cron.d", "/etc/cron.daily", "/etc/cron.weekly", "/etc/cron.monthly", "/etc/cron.hourly",
              "/var/spool/cron/crontabs"):
        try:
            cron_files += [os.path.join(d, f) for f in sorted(os.listdir(d))]
        except OSError:
            pass
    for f in cron_files:
        text = _read(f) or ""
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
        hits = sorted({m.group(1) for ln in lines for m in [_JOB_PATTERN.search(ln)] if m})
        if hits:
            found.append(f"cron {f} ({', '.join(hits)})")
    if systemd_running() and shutil.which("systemctl"):
        text = _systemctl("list-timers", "--all", "--no-legend", "--plain")
        for ln in text.splitlines():
            units = [w for w in ln.split() if w.endswith(".timer")]
            for u in units:
                if _TIMER_PATTERN.search(u) and u != "fstrim.timer":
                    if _systemctl("is-active", u) == "active":
                        found.append(f"timer {u}")
                        actions.append(Action("run", argv=("systemctl", "stop", u), undo_argv=("systemctl", "start", u)))
    fix = "; ".join(a.describe() for a in actions) or "comment out the cron lines listed for the time of the run"
    if not found:
        return Check(name, "none found", rec, True, fix, False, why)
    return Check(name, "; ".join(found), rec, False, fix, bool(actions) and len(actions) == len(found), why,
                 tuple(actions))


def check_smt() -> Check:
    name, rec, why = "SMT (hyper-threading)", "recorded (left enabled)", "docs/doctor.md: Hyper-Threading enabled"
    f = host.smt_facts()
    cur = f["smt_control"] if isinstance(f["smt_control"], str) else "unknown"
    if isinstance(f["smt_active"], bool):
        cur += ", active" if f["smt_active"] else ", inactive"
    return Check(name, cur, rec, True, "echo on > /sys/devices/system/cpu/smt/control (if you want it on)", False, why)


def _tool_check(name: str, tool: str, pkg: str, argv: list[str], minimum: tuple[int, ...], rec: str,
                why: str, optional: bool = False) -> Check:
    fix = _install(pkg)
    if shutil.which(tool) is None:
        return Check(name, "not installed", rec, None if optional else False, fix, False, why)
    res = Tools().run(argv, timeout=15, ok_codes=lambda rc: True)
    text = (res.stdout or res.stderr).strip().splitlines()
    line = next((ln for ln in text if re.search(r"\d", ln)), text[0] if text else "")
    m = re.search(r"(?:version\s+|fio-|smartctl\s+)(\d+(?:\.\d+)+)", line) or re.search(r"(\d+\.\d+(?:\.\d+)*)", line)
    ver = m.group(1) if m else line.strip()
    ok = _version_tuple(ver) >= minimum if _version_tuple(ver) else None
    return Check(name, f"{ver or 'installed'}", rec, ok, fix + " (newer)" if ok is False else fix, False, why)


def check_fio(path: str = "fio") -> Check:
    """The fio at ``path`` (ssdpts doctor gives the one a run uses: engine/fiobin.py), else the one on PATH."""
    return _tool_check("fio", path, "fio", [path, "--version"], (3, 1), ">= 3.1 (json+ with clat_ns)",
                       "ssdpts runs every test with fio")


def check_nvme_cli() -> Check:
    return _tool_check("nvme-cli", "nvme", "nvme-cli", ["nvme", "version"], (2, 0), ">= 2.0 (JSON output)",
                       "NVMe identity, features, smart-log and sanitize/format purge")


def check_smartctl() -> Check:
    return _tool_check("smartctl", "smartctl", "smartmontools", ["smartctl", "--version"], (7, 0), ">= 7.0 (-j JSON)",
                       "SATA/SAS identity, SMART and telemetry")


def io_uring_works() -> tuple[bool, str]:
    """Ask the kernel: io_uring_setup(1, params) (syscall 425 on every architecture since 5.1)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(120)
        fd = libc.syscall(425, 1, params)
        if fd >= 0:
            os.close(fd)
            return True, "io_uring_setup works"
        err = ctypes.get_errno()
        return False, f"io_uring_setup failed: {os.strerror(err)}"
    except (OSError, AttributeError) as exc:
        return False, f"cannot call io_uring_setup ({exc})"


def check_io_uring() -> Check:
    name, rec, why = "io_uring", "available (kernel.io_uring_disabled=0)", "fio's io_uring engine (ssdpts' default)"
    path = f"{PROC_SYS}/kernel/io_uring_disabled"
    sysctl = _read(path)
    works, detail = io_uring_works()
    cur = ("available" if works else "unavailable") + (f" (io_uring_disabled={sysctl})" if sysctl is not None else "")
    if not works:
        cur += f": {detail}"
    fix = "sysctl -w kernel.io_uring_disabled=0" if sysctl is not None else "use a kernel ≥ 5.1 with CONFIG_IO_URING"
    actions = (Action("write", path, "0"),) if sysctl not in (None, "0") else ()
    return Check(name, cur, rec, works, fix, bool(actions), why, actions)


CHECKS: tuple[Callable[[], Check], ...] = (
    check_governor, check_min_perf, check_turbo, check_cstates, check_aspm, check_apst, check_smt, check_swap,
    check_fstrim, check_smartd, check_background_jobs, check_fio, check_nvme_cli, check_smartctl, check_io_uring,
)


def audit(fio_path: str | None = None) -> list[Check]:
    """Every check; one that fails to run becomes a Check saying so (never raises). ``fio_path``: the
    fio to check (None: the one on PATH)."""
    out = []
    for fn in CHECKS:
        try:
            out.append(check_fio(fio_path) if fn is check_fio and fio_path else fn())
        except Exception as exc:  # noqa: BLE001 - the audit must never fail a run
            name = fn.__name__.removeprefix("check_").replace("_", " ")
            out.append(Check(name, not_available(f"check failed: {exc.__class__.__name__}: {exc}"), "—", None, "—", False))
    return out


def manifest_entry(checks: list[Check] | None = None) -> dict[str, Any]:
    """What the run manifest stores under "audit"."""
    checks = audit() if checks is None else checks
    return {"format": 1, "audited_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "checks": [c.to_dict() for c in checks],
            "differs": [c.name for c in checks if c.ok is False]}


# --- apply / undo ---------------------------------------------------------------------------------


def state_file() -> Path:
    base = os.environ.get("SSDPTS_STATE_DIR")
    if base:
        return Path(base) / "doctor-applied.json"
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(xdg) / "ssdpts" / "doctor-applied.json"


def _load_state(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and doc.get("format") == STATE_FORMAT:
            return doc
    except (OSError, ValueError):
        pass
    return {"format": STATE_FORMAT, "changes": []}


def _save_state(path: Path, doc: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(doc, indent=1) + "\n", mkdir=True)


def _do(action: Action, tools: Tools) -> tuple[bool, str, str | None]:
    """Run one action → (ok, message, old value for writes)."""
    if action.kind == "write":
        old = _read(action.path)
        if old is not None and "[" in old:  # "[default] performance powersave": the bracketed one is in force
            old = host._active(old)
        try:
            with open(action.path, "w") as f:
                f.write(action.value)
        except OSError as exc:
            return False, f"{action.describe()}: {exc.strerror}", old
        return True, action.describe(), old
    res = tools.change(list(action.argv), timeout=600)
    return res.ok, (" ".join(action.argv) if res.ok else f"{' '.join(action.argv)}: {res.reason}"), None


def apply(checks: list[Check], *, state: Path | None = None, tools: Tools | None = None) -> tuple[list[str], list[str]]:
    """Apply the actions of reversible checks that are not ok; record them for undo().
    Returns (done, failed) one-line descriptions. ``tools``: runs the commands (systemctl, swapoff)."""
    tools = tools or Tools(destructive=True)
    path = state or state_file()
    doc = _load_state(path)
    seen_writes = {c["path"] for c in doc["changes"] if c["kind"] == "write"}
    done, failed = [], []
    for chk in checks:
        if chk.ok is not False or not chk.reversible:
            continue
        for a in chk.actions:
            ok, msg, old = _do(a, tools)
            if not ok:
                failed.append(f"{chk.name}: {msg}")
                continue
            done.append(f"{chk.name}: {msg}")
            entry = {"check": chk.name, "kind": a.kind, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            if a.kind == "write":
                if a.path in seen_writes:  # keep the first old value: undo goes back to the original
                    continue
                entry.update(path=a.path, value=a.value, old=old)
                seen_writes.add(a.path)
            else:
                entry.update(argv=list(a.argv), undo_argv=list(a.undo_argv))
            doc["changes"].append(entry)
    if done:
        _save_state(path, doc)
    return done, failed


def undo(*, state: Path | None = None, tools: Tools | None = None) -> tuple[list[str], list[str]]:
    """Restore every change apply() recorded, newest first. Returns (restored, failed); the state
    file is removed when everything was restored (kept with the failures otherwise)."""
    tools = tools or Tools(destructive=True)
    path = state or state_file()
    doc = _load_state(path)
    restored, failed, left = [], [], []
    for c in reversed(doc["changes"]):
        if c["kind"] == "write":
            if c.get("old") is None:
                failed.append(f"{c['check']}: no old value recorded for {c['path']}")
                left.append(c)
                continue
            ok, msg, _ = _do(Action("write", c["path"], c["old"]), tools)
        else:
            ok, msg, _ = _do(Action("run", argv=tuple(c["undo_argv"])), tools)
        (restored if ok else failed).append(f"{c['check']}: {msg}")
        if not ok:
            left.append(c)
    if left:
        doc["changes"] = list(reversed(left))
        _save_state(path, doc)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    return restored, failed
