"""Host facts recorded with every run (the data set, docs/pts-reference.md#report-header, docs/design.md#host-settings, #data-set).

``collect()`` returns a flat dict, units in the key names (docs/design.md#units-in-names), so the report
header reads e.g. ``cpu_model`` and ``memory_bytes`` directly. A fact that cannot be read is the
string ``"not available: <why>"``; no collector can fail a run. :data:`HOST_FIELDS` is the one
catalogue of these keys (type, unit, description), also rendered into docs/results-format.md.

Sources: /proc/cpuinfo, /sys/devices/system/cpu (cpufreq, cpuidle, SMT, intel_pstate),
/proc/meminfo, DMI (/sys/devices/virtual/dmi/id), ``lshw -json`` (DIMMs; both of its top-level
JSON shapes: one object from older lshw, an array from newer) or ``dmidecode -t 17``, /proc/swaps,
/sys/module/nvme*/parameters, /etc/os-release, ``fio --version``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

from ssdpts.device.fields import Field, not_available
from ssdpts.device.tools import Tools

SYS_CPU = "/sys/devices/system/cpu"
SYS_MODULE = "/sys/module"
DMI = "/sys/devices/virtual/dmi/id"
PROC = "/proc"


def _h(rows: list[tuple[str, str, str, str]]) -> tuple[Field, ...]:
    return tuple(Field("host", n, t, u, d) for n, t, u, d in rows)


HOST_FIELDS: tuple[Field, ...] = _h([
    ("hostname", "str", "", "host name"),
    ("kernel", "str", "", "kernel release (uname -r)"),
    ("kernel_version", "str", "", "kernel build string (uname -v)"),
    ("kernel_cmdline", "str", "", "kernel command line (/proc/cmdline)"),
    ("arch", "str", "", "machine architecture"),
    ("distribution", "str", "", "operating system (os-release PRETTY_NAME)"),
    ("python", "str", "", "Python version running ssdpts"),
    ("ssdpts_version", "str", "", "ssdpts version"),
    ("fio_version", "str", "", "fio --version"),
    ("hypervisor", "str", "", "hypervisor vendor when running in a VM, else 'none'"),
    ("cpu_model", "str", "", "CPU model name"),
    ("cpu_vendor", "str", "", "CPU vendor id"),
    ("cpu_count", "int", "count", "logical CPUs online"),
    ("cpu_threads", "int", "count", "logical CPUs (hardware threads)"),
    ("cpu_cores", "int", "count", "physical cores (all sockets)"),
    ("cpu_sockets", "int", "count", "CPU packages"),
    ("threads_per_core", "int", "count", "hardware threads per core"),
    ("smt_control", "str", "", "SMT control: on, off, forceoff, notsupported, notimplemented"),
    ("smt_active", "bool", "", "SMT (hyper-threading) active"),
    ("numa_nodes", "int", "count", "NUMA nodes"),
    ("cpu_max_mhz", "float", "MHz", "highest CPU frequency (cpufreq cpuinfo_max_freq)"),
    ("cpu_min_mhz", "float", "MHz", "lowest CPU frequency"),
    ("cpu_base_mhz", "float", "MHz", "base (non-turbo) frequency where the driver reports it"),
    ("cpufreq_driver", "str", "", "frequency scaling driver (intel_pstate, amd-pstate, acpi-cpufreq, ...)"),
    ("cpufreq_governor", "str", "", "governor of every CPU, or 'mixed: ...'"),
    ("energy_performance_preference", "str", "", "EPP hint of CPU 0 (intel_pstate / amd-pstate active mode)"),
    ("turbo", "str", "", "turbo / boost: enabled or disabled"),
    ("intel_pstate_min_perf_pct", "int", "%", "intel_pstate min_perf_pct"),
    ("intel_pstate_max_perf_pct", "int", "%", "intel_pstate max_perf_pct"),
    ("cpuidle_driver", "str", "", "idle driver (intel_idle, acpi_idle, haltpoll, ...)"),
    ("cpuidle_governor", "str", "", "idle governor (menu, teo, ladder, haltpoll)"),
    ("idle_states", "list", "", "idle states of CPU 0: name, exit latency (µs), CPUs on which it is disabled"),
    ("memory_bytes", "int", "bytes", "RAM the kernel sees (MemTotal)"),
    ("memory_installed_bytes", "int", "bytes", "RAM installed per lshw/dmidecode"),
    ("memory_dimms", "list", "", "populated DIMMs: slot, size_bytes, description, speed_mts, vendor, part"),
    ("memory_summary", "str", "", "e.g. '8 x 32 GiB DDR4 3200 MT/s'"),
    ("memory_source", "str", "", "where the DIMM data came from (lshw, dmidecode)"),
    ("board", "str", "", "motherboard product"),
    ("board_vendor", "str", "", "motherboard vendor"),
    ("system_vendor", "str", "", "system vendor"),
    ("system_product", "str", "", "system product"),
    ("bios_vendor", "str", "", "BIOS vendor"),
    ("bios_version", "str", "", "BIOS version"),
    ("bios_date", "str", "", "BIOS release date"),
    ("swap_total_bytes", "int", "bytes", "swap space configured (0 = swap off)"),
    ("swap_devices", "list", "", "active swap areas: name, type, size_bytes, used_bytes, priority"),
    ("swappiness", "int", "", "vm.swappiness"),
    ("pcie_aspm_policy", "str", "", "PCIe ASPM policy in force (pcie_aspm.policy)"),
    ("nvme_module_parameters", "dict", "", "parameters of the nvme / nvme_core modules (/sys/module/nvme*/parameters)"),
    ("io_uring_disabled", "int", "", "kernel.io_uring_disabled sysctl (0 = io_uring allowed)"),
])


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


# --- CPU ------------------------------------------------------------------------------------------


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """Model, vendor, sockets, cores and threads from /proc/cpuinfo (x86 and most others)."""
    procs = [blk for blk in text.split("\n\n") if blk.strip()]
    model = vendor = None
    sockets: set[str] = set()
    cores: set[tuple[str, str]] = set()
    hypervisor = False
    for blk in procs:
        kv = {}
        for line in blk.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                kv[k.strip().lower()] = v.strip()
        model = model or kv.get("model name") or kv.get("cpu model") or kv.get("processor" if not kv.get("processor", "").isdigit() else "")
        vendor = vendor or kv.get("vendor_id") or kv.get("cpu implementer")
        if "physical id" in kv:
            sockets.add(kv["physical id"])
            if "core id" in kv:
                cores.add((kv["physical id"], kv["core id"]))
        if " hypervisor " in f" {kv.get('flags', '')} ":
            hypervisor = True
    threads = sum(1 for blk in procs if re.search(r"^processor\s*:", blk, re.M))
    return {"cpu_model": model or None, "cpu_vendor": vendor, "cpu_threads": threads or None,
            "cpu_sockets": len(sockets) or None, "cpu_cores": len(cores) or None, "hypervisor_flag": hypervisor}


def _cpu_dirs() -> list[str]:
    try:
        return sorted((os.path.join(SYS_CPU, e) for e in os.listdir(SYS_CPU) if re.match(r"^cpu\d+$", e)),
                      key=lambda p: int(re.sub(r"\D", "", os.path.basename(p))))
    except OSError:
        return []


def cpufreq_facts() -> dict[str, Any]:
    out: dict[str, Any] = {}
    cpus = _cpu_dirs()
    govs = [g for g in (_read(os.path.join(c, "cpufreq", "scaling_governor")) for c in cpus) if g]
    reason = "no cpufreq in /sys (virtual machine, or no frequency driver loaded)"
    if govs:
        uniq = sorted(set(govs))
        out["cpufreq_governor"] = uniq[0] if len(uniq) == 1 else "mixed: " + ", ".join(
            f"{g} ×{govs.count(g)}" for g in uniq)
    else:
        out["cpufreq_governor"] = not_available(reason)
    c0 = os.path.join(cpus[0], "cpufreq") if cpus else ""
    out["cpufreq_driver"] = _read(os.path.join(c0, "scaling_driver")) or not_available(reason)
    for key, f in (("cpu_max_mhz", "cpuinfo_max_freq"), ("cpu_min_mhz", "cpuinfo_min_freq"),
                   ("cpu_base_mhz", "base_frequency")):
        khz = _int(_read(os.path.join(c0, f)))
        out[key] = khz / 1000 if khz else not_available(reason if not govs else f"cpufreq has no {f}")
    out["energy_performance_preference"] = (_read(os.path.join(c0, "energy_performance_preference"))
                                            or not_available("the frequency driver has no EPP"))
    no_turbo = _read(os.path.join(SYS_CPU, "intel_pstate", "no_turbo"))
    boost = _read(os.path.join(SYS_CPU, "cpufreq", "boost"))
    amd_boost = _read(os.path.join(c0, "boost"))
    if no_turbo is not None:
        out["turbo"] = "disabled" if no_turbo == "1" else "enabled"
    elif boost is not None:
        out["turbo"] = "enabled" if boost == "1" else "disabled"
    elif amd_boost is not None:
        out["turbo"] = "enabled" if amd_boost == "1" else "disabled"
    else:
        out["turbo"] = not_available("no intel_pstate/no_turbo or cpufreq/boost control (VM or firmware-managed)")
    for key, f in (("intel_pstate_min_perf_pct", "min_perf_pct"), ("intel_pstate_max_perf_pct", "max_perf_pct")):
        v = _int(_read(os.path.join(SYS_CPU, "intel_pstate", f)))
        out[key] = v if v is not None else not_available("intel_pstate is not the frequency driver")
    return out


def cpuidle_facts() -> dict[str, Any]:
    out: dict[str, Any] = {}
    drv = _read(os.path.join(SYS_CPU, "cpuidle", "current_driver"))
    out["cpuidle_driver"] = drv if drv and drv != "none" else not_available("no cpuidle driver")
    out["cpuidle_governor"] = (_read(os.path.join(SYS_CPU, "cpuidle", "current_governor"))
                               or _read(os.path.join(SYS_CPU, "cpuidle", "current_governor_ro"))
                               or not_available("no cpuidle governor"))
    cpus = _cpu_dirs()
    states = []
    if cpus:
        base = os.path.join(cpus[0], "cpuidle")
        try:
            names = sorted((e for e in os.listdir(base) if e.startswith("state")), key=lambda s: int(s[5:]))
        except OSError:
            names = []
        for st in names:
            disabled_on = [os.path.basename(c) for c in cpus
                           if _read(os.path.join(c, "cpuidle", st, "disable")) == "1"]
            states.append({"state": st, "name": _read(os.path.join(base, st, "name")),
                           "exit_latency_us": _int(_read(os.path.join(base, st, "latency"))),
                           "disabled_on": disabled_on})
    out["idle_states"] = states or not_available("no cpuidle states in /sys")
    return out


def smt_facts() -> dict[str, Any]:
    ctl = _read(os.path.join(SYS_CPU, "smt", "control"))
    act = _read(os.path.join(SYS_CPU, "smt", "active"))
    return {"smt_control": ctl or not_available("no /sys/devices/system/cpu/smt"),
            "smt_active": (act == "1") if act is not None else not_available("no /sys/devices/system/cpu/smt")}


# --- memory, board --------------------------------------------------------------------------------


def _walk(node: Any):
    if isinstance(node, list):
        for n in node:
            yield from _walk(n)
    elif isinstance(node, dict):
        yield node
        for c in node.get("children") or []:
            yield from _walk(c)


def _gib(n: int) -> str:
    return f"{n / 2**30:g} GiB"


def parse_lshw(doc: Any) -> dict[str, Any]:
    """``lshw -json``: one object (older lshw) or an array of objects (newer) → DIMMs, board, system."""
    roots = doc if isinstance(doc, list) else [doc]
    root = next((r for r in roots if isinstance(r, dict)), {})
    out: dict[str, Any] = {"system_vendor": root.get("vendor"), "system_product": root.get("product")}
    dimms = []
    installed = None
    for n in _walk(roots):
        hw_class, nid = n.get("class"), str(n.get("id", ""))  # lshw's node class (bus, memory, processor)
        if hw_class == "bus" and nid == "core":
            out.setdefault("board", n.get("product"))
            out.setdefault("board_vendor", n.get("vendor"))
        if hw_class == "memory" and nid.split(":")[0] == "memory" and str(n.get("description", "")).lower() == "system memory":
            installed = n.get("size") if isinstance(n.get("size"), int) else installed
        if hw_class == "memory" and nid.startswith("bank") and isinstance(n.get("size"), int) and n["size"] > 0:
            clock = n.get("clock")
            m = re.search(r"(\d+)\s*MHz", str(n.get("description", "")))
            speed = int(m.group(1)) if m else (round(clock / 1e6) if isinstance(clock, (int, float)) else None)
            dimms.append({"slot": n.get("slot"), "size_bytes": n["size"], "description": n.get("description"),
                          "speed_mts": speed, "vendor": n.get("vendor"), "part": n.get("product")})
        if hw_class == "processor" and n.get("product") and "cpu_model" not in out:
            out["cpu_model"] = n.get("product")
    out["memory_dimms"] = dimms or None
    out["memory_installed_bytes"] = installed or (sum(d["size_bytes"] for d in dimms) if dimms else None)
    out["memory_summary"] = summarize_dimms(dimms)
    return {k: v for k, v in out.items() if v is not None}


def summarize_dimms(dimms: list[dict]) -> str | None:
    if not dimms:
        return None
    groups: dict[tuple, int] = {}
    for d in dimms:
        desc = str(d.get("description") or "")
        kind = next((t for t in ("DDR5", "DDR4", "DDR3", "LPDDR5", "LPDDR4") if t in desc), "")
        key = (d["size_bytes"], kind, d.get("speed_mts"))
        groups[key] = groups.get(key, 0) + 1
    parts = []
    for (size, kind, speed), n in sorted(groups.items(), key=lambda kv: -kv[1]):
        parts.append(" ".join(x for x in (f"{n} x {_gib(size)}", kind, f"{speed} MT/s" if speed else "") if x))
    return ", ".join(parts)


def parse_dmidecode_memory(text: str) -> dict[str, Any]:
    """``dmidecode -t 17`` (Memory Device) blocks → DIMMs (empty slots skipped)."""
    dimms = []
    for blk in re.split(r"\n(?=Handle )", text or ""):
        if "Memory Device" not in blk:
            continue
        kv = {}
        for line in blk.splitlines():
            m = re.match(r"^\s+([^:]+):\s*(.*)$", line)
            if m:
                kv.setdefault(m.group(1).strip(), m.group(2).strip())
        m = re.match(r"(\d+)\s*(MB|GB|TB|KB)", kv.get("Size", ""))
        if not m:
            continue
        size = int(m.group(1)) * {"KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}[m.group(2)]
        sp = re.match(r"(\d+)", kv.get("Configured Memory Speed") or kv.get("Speed") or "")
        dimms.append({"slot": kv.get("Locator"), "size_bytes": size,
                      "description": " ".join(x for x in (kv.get("Form Factor"), kv.get("Type"), kv.get("Type Detail")) if x),
                      "speed_mts": int(sp.group(1)) if sp else None, "vendor": kv.get("Manufacturer"),
                      "part": kv.get("Part Number")})
    return {"memory_dimms": dimms or None, "memory_installed_bytes": sum(d["size_bytes"] for d in dimms) or None,
            "memory_summary": summarize_dimms(dimms)}


def _mem_bytes() -> int | str:
    text = _read(f"{PROC}/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return not_available("no /proc/meminfo")


def parse_swaps(text: str) -> list[dict[str, Any]]:
    out = []
    for line in (text or "").splitlines()[1:]:
        f = line.split()
        if len(f) >= 5:
            out.append({"name": f[0], "type": f[1], "size_bytes": int(f[2]) * 1024, "used_bytes": int(f[3]) * 1024,
                        "priority": int(f[4])})
    return out


def module_parameters(prefix: str = "nvme") -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    try:
        mods = sorted(m for m in os.listdir(SYS_MODULE) if m == prefix or m.startswith(prefix + "_"))
    except OSError:
        return out
    for m in mods:
        pdir = os.path.join(SYS_MODULE, m, "parameters")
        try:
            params = sorted(os.listdir(pdir))
        except OSError:
            continue
        out[m] = {p: v for p in params if (v := _read(os.path.join(pdir, p))) is not None}
    return out


def _distro() -> str:
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return not_available("no /etc/os-release")


def _active(text: str | None) -> str | None:
    if not text:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text


def fio_version_probe(tools: Tools | None = None) -> str:
    res = (tools or Tools()).run(["fio", "--version"], timeout=15)
    return res.stdout.strip() if res.ok and res.stdout.strip() else (res.reason or not_available("fio --version failed"))


# --- collect --------------------------------------------------------------------------------------


def collect(fio_version: str | None = None, raw_dir: Path | None = None, *, use_lshw: bool = True,
            tools: Tools | None = None) -> dict:
    """Host facts (flat; see HOST_FIELDS). ``fio_version``: the executor's, else probed.
    ``raw_dir``: where to keep lshw's / dmidecode's raw output (the run's device/ directory).
    ``tools``: a read-only tool runner (fio, lshw, dmidecode).

    One piece: independent probes of a few lines each, filling one flat record in HOST_FIELDS' order."""
    tools = tools or Tools()
    from ssdpts import __version__

    out: dict[str, Any] = {
        "hostname": platform.node(), "kernel": platform.release(), "kernel_version": platform.version(),
        "kernel_cmdline": _read(f"{PROC}/cmdline") or not_available("no /proc/cmdline"),
        "arch": platform.machine(), "distribution": _distro(), "python": sys.version.split()[0],
        "ssdpts_version": __version__,
        "fio_version": fio_version or fio_version_probe(tools),
        "cpu_count": os.cpu_count(),
    }
    try:
        cpu = parse_cpuinfo(_read(f"{PROC}/cpuinfo") or "")
    except Exception:  # noqa: BLE001 - host facts must never fail a run
        cpu = {}
    out["cpu_model"] = cpu.get("cpu_model") or platform.processor() or not_available("/proc/cpuinfo has no model name")
    out["cpu_vendor"] = cpu.get("cpu_vendor") or not_available("/proc/cpuinfo has no vendor")
    out["cpu_threads"] = cpu.get("cpu_threads") or os.cpu_count()
    out["cpu_cores"] = cpu.get("cpu_cores") or not_available("/proc/cpuinfo has no core ids")
    out["cpu_sockets"] = cpu.get("cpu_sockets") or not_available("/proc/cpuinfo has no physical ids")
    if isinstance(out["cpu_cores"], int) and out["cpu_threads"]:
        out["threads_per_core"] = max(1, out["cpu_threads"] // out["cpu_cores"])
    else:
        out["threads_per_core"] = not_available("core count unknown")
    hv = _read("/sys/hypervisor/type") or _read(f"{DMI}/sys_vendor")
    out["hypervisor"] = (hv or "yes (vendor unknown)") if cpu.get("hypervisor_flag") else "none"
    try:
        nodes = [e for e in os.listdir("/sys/devices/system/node") if re.match(r"^node\d+$", e)]
        out["numa_nodes"] = len(nodes) or not_available("no NUMA nodes in /sys")
    except OSError:
        out["numa_nodes"] = not_available("no /sys/devices/system/node")
    out.update(smt_facts())
    out.update(cpufreq_facts())
    out.update(cpuidle_facts())

    out["memory_bytes"] = _mem_bytes()
    mem: dict[str, Any] = {}
    if use_lshw:
        res = tools.run(["lshw", "-json", "-quiet"], timeout=90)
        if res.ok:
            try:
                mem = parse_lshw(json.loads(res.stdout))
                mem["memory_source"] = "lshw"
                if raw_dir is not None:
                    _keep(raw_dir, "lshw.json", res.stdout)
            except (ValueError, TypeError):
                mem = {}
        lshw_reason = res.reason or "lshw output had no DIMMs"
    else:
        lshw_reason = "lshw not run"
    if not mem.get("memory_dimms"):
        res = tools.run(["dmidecode", "-t", "17"], timeout=30)
        if res.ok:
            d = parse_dmidecode_memory(res.stdout)
            if d.get("memory_dimms"):
                mem.update({k: v for k, v in d.items() if v is not None}, memory_source="dmidecode")
                if raw_dir is not None:
                    _keep(raw_dir, "dmidecode-memory.txt", res.stdout)
        dmi_reason = res.reason or "dmidecode lists no memory devices"
    else:
        dmi_reason = ""
    why = "; ".join(r.removeprefix("not available: ") for r in (lshw_reason, dmi_reason) if r) or "no DIMM data"
    for k in ("memory_installed_bytes", "memory_dimms", "memory_summary", "memory_source"):
        out[k] = mem.get(k) if mem.get(k) is not None else not_available(why)
    if isinstance(mem.get("cpu_model"), str) and not isinstance(out["cpu_model"], str):
        out["cpu_model"] = mem["cpu_model"]

    dmi_reason = "no DMI data in /sys (VM or non-x86 firmware)"
    for key, f, alt in (("board", "board_name", "board"), ("board_vendor", "board_vendor", "board_vendor"),
                        ("system_vendor", "sys_vendor", "system_vendor"),
                        ("system_product", "product_name", "system_product"),
                        ("bios_vendor", "bios_vendor", None), ("bios_version", "bios_version", None),
                        ("bios_date", "bios_date", None)):
        out[key] = _read(f"{DMI}/{f}") or (mem.get(alt) if alt else None) or not_available(dmi_reason)

    swaps = parse_swaps(_read(f"{PROC}/swaps") or "")
    out["swap_devices"] = swaps
    out["swap_total_bytes"] = sum(s["size_bytes"] for s in swaps)
    out["swappiness"] = _int(_read(f"{PROC}/sys/vm/swappiness")) if _read(f"{PROC}/sys/vm/swappiness") else not_available("no vm.swappiness")
    out["pcie_aspm_policy"] = _active(_read(f"{SYS_MODULE}/pcie_aspm/parameters/policy")) or not_available(
        "no pcie_aspm module parameters (ASPM not built in)")
    params = module_parameters("nvme")
    out["nvme_module_parameters"] = params or not_available("no nvme / nvme_core module loaded (no NVMe driver)")
    iou = _read(f"{PROC}/sys/kernel/io_uring_disabled")
    out["io_uring_disabled"] = _int(iou) if iou is not None else not_available(
        "no kernel.io_uring_disabled sysctl (kernel < 6.6: io_uring allowed when built in)")
    return out


def _keep(raw_dir: Path, name: str, text: str) -> None:
    try:
        Path(raw_dir).mkdir(parents=True, exist_ok=True)
        (Path(raw_dir) / name).write_text(text)
    except OSError:
        pass
