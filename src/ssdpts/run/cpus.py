"""Which CPUs fio may use, and whether a step was limited by them rather than by the device.

Parallel runs share the host's CPUs: a run whose fio threads used about all the CPU
they could get measured the host, not the drive. fio reports each job group's usr and sys CPU
(``usr_cpu``, ``sys_cpu``: percent of one CPU per job thread, averaged over the group's threads),
kept in every step record (measurement.cpu_usr_pct / cpu_sys_pct); this module turns that into
CPUs used and compares it with the CPUs the step could use.
"""

from __future__ import annotations

import os

from ssdpts.errors import UserError

# A step is CPU-bound when its fio threads used at least this share of the CPUs open to them.
CPU_BOUND_SHARE = 0.9


def usable() -> list[int]:
    """The CPUs this process may run on (its affinity, not the host's count: taskset, cgroups)."""
    return sorted(os.sched_getaffinity(0))


def parse_list(text: str) -> list[int]:
    """fio's / taskset's CPU list syntax: "0-3,6" -> [0, 1, 2, 3, 6]."""
    out: set[int] = set()
    try:
        for item in text.replace(" ", "").split(","):
            lo, _, hi = item.partition("-")
            a, b = int(lo), int(hi or lo)
            if a < 0 or b < a:
                raise ValueError
            out.update(range(a, b + 1))
    except ValueError:
        raise UserError(f"--cpus {text!r} is not a CPU list: give e.g. 0-3 or 0,2,4") from None
    return sorted(out)


def format_list(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5" (fio's cpus_allowed)."""
    runs: list[list[int]] = []
    for c in sorted(cpus):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def check_list(text: str) -> str:
    """A --cpus value, refused unless every CPU in it is one this process may use; normalised."""
    cpus = parse_list(text)
    have = usable()
    missing = [c for c in cpus if c not in have]
    if missing:
        raise UserError(f"--cpus {text}: CPU {format_list(missing)} is not available to ssdpts here "
                        f"(usable: {format_list(have)}); pick CPUs from that list")
    return format_list(cpus)


def split(per_device: int, devices: int) -> list[str]:
    """--cpus-per-device: a disjoint CPU list for each device, refused when there are too few."""
    have = usable()
    if per_device < 1:
        raise UserError(f"--cpus-per-device {per_device} is out of range: give 1 or more")
    if per_device * devices > len(have):
        raise UserError(f"--cpus-per-device {per_device} needs {per_device * devices} CPUs for {devices} targets, "
                        f"ssdpts may use {len(have)} here ({format_list(have)}): lower it or drop it")
    return [format_list(have[i * per_device:(i + 1) * per_device]) for i in range(devices)]


def cpus_used(usr: float | None, sys_: float | None, threads: int) -> float | None:
    """CPUs a step's fio threads used on average (fio's usr + sys %), or None when fio did not say."""
    if usr is None or sys_ is None:
        return None
    return (usr + sys_) / 100.0 * threads


def cpu_bound(used: float | None, threads: int, cpus_allowed: str = "") -> bool:
    """True when the threads used CPU_BOUND_SHARE of what they could: one CPU each at most, and no
    more CPUs than they were pinned to (or this process may use)."""
    return used is not None and used >= CPU_BOUND_SHARE * open_cpus(threads, cpus_allowed)


def open_cpus(threads: int, cpus_allowed: str = "") -> int:
    """CPUs a step's threads could use: one each at most, and only those fio is pinned to (or this
    process may use)."""
    return min(threads, len(parse_list(cpus_allowed)) if cpus_allowed else len(usable()))
