"""Warnings when the drive throttled or ran hot inside a steady-state window, from the telemetry
snapshots its step records carry (device/telemetry.py takes them at every step boundary): a
reading of records, so it lives with the readers."""

from __future__ import annotations

from collections.abc import Mapping
import time
from typing import Any, Iterable

_THROTTLE_COUNTERS = (
    ("thermal_mgmt_t1_transitions", "thermal management T1 (light throttle) transitions", ""),
    ("thermal_mgmt_t2_transitions", "thermal management T2 (heavy throttle) transitions", ""),
    ("thermal_mgmt_t1_time_s", "time throttled at T1", " s"),
    ("thermal_mgmt_t2_time_s", "time throttled at T2", " s"),
    ("warning_temp_time_min", "time above the warning temperature", " min"),
    ("critical_temp_time_min", "time above the critical temperature", " min"),
)


def _flatten(samples: Iterable[Any]) -> list[Mapping[str, Any]]:
    """Snapshots from snapshots, step telemetry {"before", "after"}, or step records {"telemetry"}.
    A snapshot stays a mapping: the device's health counters as read (device/telemetry.py), their
    names the drive's, not a record's fields."""
    out: list[Mapping[str, Any]] = []
    for s in samples or []:
        if not isinstance(s, dict):
            continue
        if "t_unix_s" in s:
            out.append(s)
        elif "before" in s or "after" in s:
            out.extend(x for x in (s.get("before"), s.get("after")) if isinstance(x, dict) and "t_unix_s" in x)
        elif isinstance(s.get("telemetry"), dict):
            out.extend(_flatten([s["telemetry"]]))
    return out


def throttle_warnings(samples: Iterable[Any], window: tuple[float, float] | None = None, *,
                      warning_temp_c: float | None = None) -> list[str]:
    """One-line warnings when the drive throttled or reached its warning composite temperature
    inside ``window`` = (start, end) in Unix seconds (None: all samples).

    ``samples``: snapshots, or steps' telemetry dicts / step records (both are unpacked). The
    warning temperature is ``warning_temp_c`` or the one the snapshots carry (id-ctrl WCTEMP).
    """
    snaps = sorted(_flatten(samples), key=lambda s: s["t_unix_s"])
    if window is not None:
        lo, hi = window
        snaps = [s for s in snaps if lo <= s["t_unix_s"] <= hi]
    if not snaps:
        return []
    span = f"{time.strftime('%H:%M:%S', time.gmtime(snaps[0]['t_unix_s']))}–" \
           f"{time.strftime('%H:%M:%S', time.gmtime(snaps[-1]['t_unix_s']))} UTC"
    out: list[str] = []
    rises = []
    for key, label, unit in _THROTTLE_COUNTERS:
        vals = [s[key] for s in snaps if isinstance(s.get(key), (int, float)) and not isinstance(s.get(key), bool)]
        if len(vals) >= 2 and vals[-1] > vals[0]:
            rises.append(f"{label} +{vals[-1] - vals[0]:g}{unit}")
    if rises:
        out.append(f"the drive throttled inside the steady-state window ({span}): {', '.join(rises)}; "
                   "values there reflect its cooling, not its steady state: improve airflow over the drive "
                   "(heatsink, fan) and re-run")
    limit = warning_temp_c
    if limit is None:
        limit = next((s["warning_temp_c"] for s in snaps if isinstance(s.get("warning_temp_c"), (int, float))), None)
    temps = [(s["composite_temperature_c"], s["t_unix_s"]) for s in snaps
             if isinstance(s.get("composite_temperature_c"), (int, float))]
    if limit and temps:
        hot = max(temps)
        if hot[0] >= limit:
            out.append(f"the drive reached {hot[0]:.1f} °C inside the steady-state window ({span}), at or above "
                       f"its warning composite temperature {limit:.1f} °C: it may have throttled; improve cooling "
                       "and re-run")
    if any((int(s.get("critical_warning") or 0) >> 1) & 1 for s in snaps):
        out.append(f"the drive raised its temperature critical warning inside the steady-state window ({span}): "
                   "improve cooling and re-run")
    return out
