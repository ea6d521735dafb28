"""What the extended tests' pages (HIR, XSR, CBW/DIRTH; PTS-EXTENDED.md) share: the choices no
source confirms ([?] in PTS-EXTENDED.md), listed on the test's first page under "as implemented by
ssdpts (PTS text not verified)" with the option that changes each, a steady-state part's section,
and PTS minutes."""

from __future__ import annotations

from ...pts.tables import LevelTable
from ...results.records import PartResult, StepRecord
from ..context import RunContext
from ..doc import Alert, Plot, Section
from .common import one_section, tracking

VERIFY = "as implemented by ssdpts (PTS text not verified)"


def unverified(ctx: RunContext, test: str) -> Alert | None:
    """The [?] choices of a test, as an Alert."""
    s = ctx.spec.doc
    items = {
        "hir": [f"{s.get('hir_bursts', 360)} bursts per wait state and 5-s samples per return to baseline "
                "(--hir-bursts); the wait states as CH and AD implement them",
                "the tracking variable is each preconditioning round's last-minute IOPS (CH, AD)"],
        "xsr": [f"recovery: the first minute of G3 whose MB/s reaches {'G1 mean' if s.get('xsr_recovery', 'g1-mean') == 'g1-mean' else 'the mean of G1’s last 5 minutes'} "
                f"less {float(s.get('xsr_recovery_tolerance_pct', 0.0)):g}% "
                "(--xsr-recovery, --xsr-recovery-tolerance; AD uses G1's mean)",
                "each one-minute SEQ step starts at the beginning of the active range (a fio job per minute, as "
                "the TP test): on a drive that writes less than the active range in a minute the stream does not "
                "sweep the whole range"],
        "cbw": [], "dirth": [f"access pattern RND {int(s.get('dirth_block_size', 8192)) / 1024:g}KiB "
                             f"{s.get('dirth_read_pct', 65)}/{100 - int(s.get('dirth_read_pct', 65))} "
                             "(--dirth-block-size, --dirth-read-pct; PTS-E 1.1 fixes one, not known to us)"],
    }.get(test, [])
    if test in ("cbw", "dirth"):
        items += [f"Max = the highest IOPS whose mean response time is below {s.get('op_ceiling_ms', 5):g} ms "
                  "(--op-ceiling-ms)",
                  "Mid = " + ("the IOPS nearest (Max + Min) / 2" if s.get("op_mid", "iops-midpoint") == "iops-midpoint"
                              else "the TOIO nearest the geometric middle of Max's and Min's") + " (--op-mid)",
                  "each operating point's 60-min pre-write runs at TC32/QD32 100% W, as the rounds' pre-write"]
    return Alert("info", VERIFY, items) if items else None


def disclosure_section(ctx: RunContext, sid: str, title: str, test: str) -> Section:
    sec = Section(sid, title, 3, test)
    a = unverified(ctx, test)
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
