"""Host facts recorded with every run (the data-set view of seed 002; extended collectors later).

Every collector degrades to "not available: <why>" instead of failing the run."""

from __future__ import annotations

import os
import platform
from pathlib import Path
import sys


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "not available: /proc/cpuinfo has no model name"


def _distro() -> str:
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return "not available: no /etc/os-release"


def _mem_bytes() -> int | str:
    text = _read("/proc/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return "not available: no /proc/meminfo"


def collect() -> dict:
    from .. import __version__

    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "arch": platform.machine(),
        "distribution": _distro(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _mem_bytes(),
        "board": _read("/sys/devices/virtual/dmi/id/board_name") or "not available: no DMI board name",
        "python": sys.version.split()[0],
        "ssdpts_version": __version__,
    }
