"""What the extended tests' pages (HIR, XSR, CBW/DIRTH; docs/pts-reference.md#extended) share: the choices no
source confirms ([impl] in docs/pts-reference.md), listed on the test's first page under "as implemented by
ssdpts (PTS text not verified)" with the option that changes each, a steady-state part's section,
and PTS minutes."""

from __future__ import annotations

from ...pts.tables import LevelTable
from ...results.records import PartResult, StepRecord
from ..context import RunContext
from ..doc import Alert, Plot, Section
from .common import one_section, tracking

VERIFY = "as implemented by ssdpts (PTS text not verified)"


def unverified(items: list[str]) -> Alert | None:
    """A test's [?] choices (each kind's own, with the option that changes each), as an Alert."""
    return Alert("info", VERIFY, items) if items else None


def disclosure_section(_ctx: RunContext, sid: str, title: str, test: str, choices: list[str]) -> Section:
    """A test's first section, with its [?] choices (``choices``)."""
    sec = Section(sid, title, 3, test)
    a = unverified(choices)
    if a:
        sec.blocks.append(a)
    return sec


def ss_sections(ctx: RunContext, pid: str, title: str, test: str) -> list:
    """A steady-state part's pages: verdict, tracking per round, window plots."""
    part = ctx.parts[pid]
    plot = [Plot(f"{pid}-convergence", f"{title}: tracking variable per round",
                 "The tracking variable of every round; the shaded band is the measurement window.",
                 "tracking_convergence", {"variables": tracking(part), "window": list(part.window_rounds),
                                          "reached": bool(part.reached)}, size=(10, 3.6))] if part.rounds_run else []
    return [one_section(part, pid, title, test, plot)]


def level(part: PartResult | None) -> float | None:
    """A steady-state part's level (its table's single value)."""
    tab = part.table if part is not None else None
    return tab.rows[0].value if isinstance(tab, LevelTable) and tab.rows else None


def pts_minutes(ctx: RunContext, recs: list[StepRecord]) -> list[float]:
    """Each step's start in PTS minutes from the first (time compression undone)."""
    t0 = min((r.start_time for r in recs if r.start_time is not None), default=0.0)
    c = ctx.time_scale()
    return [((r.start_time or t0) - t0) / c / 60 for r in recs]


def seconds(v: float) -> str:
    return f"{v:.3g} s" if v < 100 else f"{v:,.0f} s"
