"""The cross-stimulus recovery test's page (XSR, docs/pts-reference.md#xsr): throughput across the three
access groups, G3's recovery, and MB/s with the response times per minute."""

from __future__ import annotations

from ...pts import xsr
from ...pts.xsr import XsrTable
from ..context import RunContext
from ..doc import Alert, Cell, Plot, Table
from ..fmt import fmt_value
from .extended import disclosure_section
from .kind import ReportKind


def sections(ctx: RunContext, pids: list[str]) -> list:
    sec = disclosure_section(ctx, "xsr-results", "XSR: throughput across the three access groups", "xsr",
                             unverified(ctx))
    part = ctx.parts.get(pids[0]) if pids else None
    tab = part.table if part is not None and isinstance(part.table, XsrTable) else None
    if tab is None or not tab.series:
        sec.blocks.append(Alert("bad", "not run", ["no minute of XSR finished before the run stopped"]))
        return [sec]
    names = dict(xsr.GROUPS)
    level = f"{fmt_value(tab.recovery_level_mb_per_s, 'MB/s')} MB/s"
    if tab.recovery_minutes is not None:
        sec.blocks.append(Alert("ok", f"G3 recovered after {tab.recovery_minutes} PTS minute"
                                      f"{'s' if tab.recovery_minutes != 1 else ''}",
                                [f"first G3 minute at or above {level} "
                                 f"less {tab.recovery_tolerance_pct:g}% ({tab.recovery_rule})"]))
    else:
        sec.blocks.append(Alert("warn", "G3 did not recover", [
            f"no G3 minute reached {level} less {tab.recovery_tolerance_pct:g}% ({tab.recovery_rule})"]))
    rows = [[Cell(names.get(g.group, g.group)), Cell(str(g.minutes), g.minutes),
             Cell(fmt_value(g.mb_per_s, "MB/s"), g.mb_per_s), Cell(fmt_value(g.final_mb_per_s, "MB/s"), g.final_mb_per_s),
             Cell(fmt_value(g.peak_lat_mean_us, "µs"), g.peak_lat_mean_us),
             Cell(fmt_value(g.lat_max_us, "µs"), g.lat_max_us)] for g in tab.groups]
    sec.blocks.append(Table("xsr-table", "XSR: per access group",
                            ["Group", "Minutes", "Mean MB/s", "End MB/s (last 5 min)", "Peak mean response time (µs)",
                             "Max response time (µs)"], rows,
                            note="MB/s = 10⁶ bytes per second of writes; response time = total latency of every IO."))
    x = [float(s.minute) for s in tab.series]
    bounds = [float(s.minute) - 0.5 for i, s in enumerate(tab.series) if i and s.group != tab.series[i - 1].group]
    segs = [(names.get(g, g), [float(s.minute) for s in tab.series if s.group == g],
             [s.mb_per_s for s in tab.series if s.group == g]) for g, _ in xsr.GROUPS]
    g3_start = next((s.minute for s in tab.series if s.group == "g3"), None)
    marker = (g3_start + tab.recovery_minutes - 1, "G3 recovered") if tab.recovery_minutes and g3_start else None
    sec.blocks.append(Plot("xsr-mbps", "XSR: MB/s vs time",
                           "Write MB/s of every PTS minute, coloured by access group; dashed: the recovery level; "
                           f"dotted: the first G3 minute at that level less {tab.recovery_tolerance_pct:g}%.",
                           "segments_vs_time", {"segments": [sg for sg in segs if sg[1]], "xlabel": "time (PTS minutes)",
                                                "ylabel": "MB/s (10⁶ B/s)",
                                                "level": (tab.recovery_level_mb_per_s,
                                                          f"recovery level ({tab.recovery_rule})")
                                                if tab.recovery_level_mb_per_s else None, "marker": marker},
                           size=(10, 4.2)))
    sec.blocks.append(Plot("xsr-lat", "XSR: MB/s with mean and maximum response time",
                           "Left axis: write MB/s; right axis (log): mean and maximum response time of each minute; "
                           "dotted: group boundaries.",
                           "rate_and_latency", {"x": x, "rate": [s.mb_per_s for s in tab.series], "rate_label": "MB/s",
                                                "lat": {"mean response time": [s.lat_mean_us for s in tab.series],
                                                        "max response time": [s.lat_max_us for s in tab.series]},
                                                "xlabel": "time (PTS minutes)", "bounds": bounds}, size=(10, 4.2)))
    return [sec]


# ---- XSR as a kind (pages/kind.py; docs/pts-reference.md#extended) ----------------------------------------------

def unverified(ctx: RunContext) -> list[str]:
    """Its [?] choices (pages/extended.py)."""
    g1 = "G1 mean" if ctx.option("xsr_recovery") == "g1-mean" else "the mean of G1’s last 5 minutes"
    return [f"recovery: the first minute of G3 whose MB/s reaches {g1} "
            f"less {float(ctx.option('xsr_recovery_tolerance_pct')):g}% "
            "(--xsr-recovery, --xsr-recovery-tolerance; AD uses G1's mean)",
            "each one-minute SEQ step starts at the beginning of the active range (a fio job per minute, as "
            "the TP test): on a drive that writes less than the active range in a minute the stream does not "
            "sweep the whole range"]


def stimulus(ctx: RunContext, _test: str, _pids: list[str]) -> str:
    g = list(ctx.option("xsr_minutes"))
    return (f"TC1/QD32, one sample per minute, back to back: G1 SEQ 1024KiB W {g[0]} min, G2 RND 8KiB W "
            f"{g[1]} min, G3 SEQ 1024KiB W {g[2]} min")


def params(ctx: RunContext, _test: str) -> list[tuple[str, str]]:
    return [("Recovery rule", f"{ctx.option('xsr_recovery')}, within "
                              f"{float(ctx.option('xsr_recovery_tolerance_pct')):g}% [?]")]


KINDS = {"xsr": ReportKind(sections, stimulus=stimulus, params=params,
                           preconditioning=lambda *_: ("none (XSR starts from a purged device)", "none"))}
