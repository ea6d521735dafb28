"""The device's temperature over the run (its telemetry of each step), by test."""

from __future__ import annotations

from ...pts.registry import title as test_title
from ..context import RunContext, temperature_c
from ..doc import Alert, Cell, Plot, Section, Table


def section(ctx: RunContext) -> Section:
    pts: list[tuple[float, float, str]] = []
    for (test, _part), recs in ctx.records.items():
        for r in recs:
            c = temperature_c(r.telemetry)
            if c is not None and r.end_time is not None:
                pts.append((float(r.end_time), c, test_title(str(test))))
    sec = Section("temperature", "Device temperature", 2, None, new_page=bool(pts))
    if not pts:
        sec.blocks.append(Alert("info", "temperature " + ctx.temperature_unavailable()))
        return sec
    pts.sort()
    t0 = pts[0][0]
    sec.blocks.append(Plot("temperature-plot", "Device temperature over the run",
                           "Composite temperature reported by the device (telemetry of each step), by test.",
                           "temperature", {"t_min": [(p[0] - t0) / 60 for p in pts], "temp_c": [p[1] for p in pts],
                                          "tests": [p[2] for p in pts]}, size=(10, 3.8)))
    temps = [p[1] for p in pts]
    sec.blocks.append(Table("temperature-table", "Temperature summary",
                            ["Samples", "Min °C", "Mean °C", "Max °C"],
                            [[Cell(str(len(temps)), len(temps)), Cell(f"{min(temps):.1f}", min(temps)),
                              Cell(f"{sum(temps) / len(temps):.1f}", sum(temps) / len(temps)),
                              Cell(f"{max(temps):.1f}", max(temps))]]))
    return sec
