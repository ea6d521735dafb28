"""Report pages of the extended tests (HIR, XSR, CBW/ECW, DIRTH; PTS-EXTENDED.md) and WSAT's PTS 2.0
response-time series, built into the document model of model.py (Section, Table, Plot, Para,
Alert) from the run's results records. The Builder of model.py calls these; nothing here reads
files, runs fio or touches a device.

What no source confirms ([?] in PTS-EXTENDED.md) is listed on the test's first page under "as
implemented by ssdpts (PTS text not verified)", with the option that changes it.
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING, Any

from ..pts import demand, hir, xsr
from ..pts.demand import DemandTable, PointsTable, demand_label
from ..pts.hir import HirTable
from ..pts.tables import LevelTable
from ..pts.wsat import WsatTable
from ..pts.xsr import XsrTable
from ..results.records import PartResult, StepRecord
from . import plots, plots_ext

if TYPE_CHECKING:  # the Builder and the blocks live in model.py, which imports this module
    from .model import Builder

VERIFY = "as implemented by ssdpts (PTS text not verified)"

def _m():
    from . import model

    return model


def _scale(b: "Builder") -> float:
    return (b.spec.step_seconds or 60.0) / 60.0


def _s(seconds: float) -> str:
    return f"{seconds:.3g} s" if seconds < 100 else f"{seconds:,.0f} s"


def _level(part: PartResult | None) -> float | None:
    tab = part.table if part is not None else None
    return tab.rows[0].value if isinstance(tab, LevelTable) and tab.rows else None


# ---- test header pieces ----------------------------------------------------------------------------

def stimulus(b: "Builder", test: str) -> str | None:
    s = b.spec.doc
    if test == "hir":
        return ("RND 4KiB 0/100: preconditioning rounds of 30 × 1 min; then wait states 1, 2, 3, 5, 10 — each "
                f"{s.get('hir_bursts', 360)} × (5 s writes + 5, 10, 15, 25 or 50 s with no IO), each followed by "
                f"{s.get('hir_bursts', 360)} × 5 s of continuous writes (return to baseline)")
    if test == "xsr":
        g = list(s.get("xsr_minutes") or (480, 360, 480))
        return (f"TC1/QD32, one sample per minute, back to back: G1 SEQ 1024KiB W {g[0]} min, G2 RND 8KiB W "
                f"{g[1]} min, G3 SEQ 1024KiB W {g[2]} min")
    if test in ("cbw", "dirth"):
        access = ("RND CBW 40/60: bssplit 0.5K 4%, 1K-3.5K 1% each, 4K 67%, 8K 10%, 16K 7%, 32K 3%, 64K 3%; zoned "
                  "50% of IOs to the first 5% of the range, 30% to the next 15%, 20% to the last 80%"
                  if test == "cbw" else
                  f"RND {int(s.get('dirth_block_size', 8192)) / 1024:g}KiB {s.get('dirth_read_pct', 65)}/"
                  f"{100 - int(s.get('dirth_read_pct', 65))}")
        return (f"{access}; rounds of 5 min TC32/QD32 100% W pre-write + 49 × 1 min over TC 32, 16, 8, 6, 4, 2, 1 "
                "(outer, fio numjobs) × QD 32 … 1 (inner, fio iodepth); then Max, Mid, Min operating points: "
                "60 min pre-write + 10 min measurement each")
    return None


def segments_text(b: "Builder") -> str | None:
    """The client test active range's segments as run (pts/segments.py), None when not segmented."""
    s = b.spec.doc
    if not s.get("ar_segments") or not b.man.active_range_bytes:
        return None
    from ..pts.segments import disclosure, place

    return disclosure(int(s["ar_segments"]), place(b.man.active_range_bytes, int(s.get("ar_amount_bytes") or 0),
                                                   int(s["ar_segments"]), int(s.get("seed") or 0)))


def preconditioning(b: "Builder", test: str) -> tuple[str, str] | None:
    if test == "hir":
        return ("none (HIR starts from a purged device)",
                f"RND 4KiB 0/100, {b.toio(test)}, rounds of 30 × 1 min until the last minute's IOPS is steady")
    if test == "xsr":
        return "none (XSR starts from a purged device)", "none"
    if test in ("cbw", "dirth"):
        return None  # WIPC as the other tests; WDPC below
    return None


def params(b: "Builder", test: str) -> list[tuple[str, str]]:
    s = b.spec.doc
    out: list[tuple[str, str]] = []
    c = _scale(b)
    if c != 1:
        out.append(("Time compression", f"every PTS time constant × {c:.4g} (one PTS minute = {b.spec.step_seconds:g} s)"))
    if test == "hir":
        out.append(("Idle periods", "every thread idle at once: one fio job per burst, the next released by the "
                                    "step gate's timer when the planned idle has passed (measured per boundary)"))
    if test in ("cbw", "dirth"):
        out.append(("Demand intensity", "TC = fio numjobs (outer 32 → 1), QD = fio iodepth (inner 32 → 1)"))
        out.append(("Operating points", f"Max: highest IOPS with mean response time < {s.get('op_ceiling_ms', 5):g} ms; "
                                        f"Mid: {s.get('op_mid', 'iops-midpoint')}; Min: TC1/QD1 [?]"))
    if test == "xsr":
        out.append(("Recovery rule", f"{s.get('xsr_recovery', 'g1-mean')}, within "
                                     f"{float(s.get('xsr_recovery_tolerance_pct', 0.0)):g}% [?]"))
    return out


def unverified(b: "Builder", test: str) -> Any:
    """The [?] choices of a test, as an Alert."""
    s = b.spec.doc
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
    return _m().Alert("info", VERIFY, items) if items else None


# ---- helpers ---------------------------------------------------------------------------------------

def _records(b: "Builder", part: PartResult) -> list[StepRecord]:
    return [r for r in b.records.get((part.test, part.part), []) if r.phase == "round"]


def _ss_sections(b: "Builder", pid: str, title: str, test: str) -> list:
    """A steady-state part's pages: verdict, tracking per round, window plots."""
    m = _m()
    part = b.parts[pid]
    ssb = b.steady_state_blocks(part, pid)
    sec = m.Section(pid, title, 3, test)
    sec.blocks += ssb[:1]
    tvars = [(v.variable, v.unit, m._series_dict(part.series.get(v.variable)))
             for v in (part.steady_state.variables if part.steady_state else ())]
    if part.rounds_run:
        sec.blocks.append(m.Plot(f"{pid}-convergence", f"{title}: tracking variable per round",
                                 "The tracking variable of every round; the shaded band is the measurement window.",
                                 partial(plots.tracking_convergence, variables=tvars, window=list(part.window_rounds),
                                         reached=bool(part.reached)), size=(10, 3.6)))
    sec.blocks += ssb[1:]
    return [sec]


def _pts_minutes(b: "Builder", recs: list[StepRecord]) -> tuple[list[float], float]:
    """Each step's start in PTS minutes from the first (time compression undone)."""
    t0 = min((r.start_time for r in recs if r.start_time is not None), default=0.0)
    c = _scale(b)
    return [((r.start_time or t0) - t0) / c / 60 for r in recs], t0


# ---- HIR -----------------------------------------------------------------------------------------

def hir_sections(b: "Builder", pids: list[str]) -> list:
    m = _m()
    out: list = []
    first = m.Section("hir-disclosure", "HIR: what ran", 3, "hir")
    a = unverified(b, "hir")
    if a:
        first.blocks.append(a)
    out.append(first)
    pre = next((p for p in pids if p.endswith("precondition")), None)
    if pre:
        out += _ss_sections(b, pre, "HIR: preconditioning", "hir")
    wait = next((p for p in pids if p.endswith("wait-states")), None)
    sec = m.Section("hir-recovery", "HIR: wait states and recovery", 3, "hir")
    out.append(sec)
    part = b.parts.get(wait) if wait else None
    tab = part.table if part is not None and isinstance(part.table, HirTable) else None
    if tab is None or not tab.segments:
        sec.blocks.append(m.Alert("bad", "not run", ["no wait state finished before the run stopped"]))
        return out
    level = _level(b.parts.get(pre)) if pre else None
    c = _scale(b)
    idles = [idle * c for _, idle in hir.WAIT_STATES]
    items = [f"each 5-s burst ({_s(5 * c)} as run) is a fio job of its own; the step gate releases the next one by a "
             "timer once the planned idle after the burst's last IO has passed, so every thread is idle at once; "
             "each boundary's measured idle is in the Step boundaries section and steps.jsonl"]
    if c != 1:
        items.append(f"time compression shortens the idle periods (the shortest: {_s(min(idles))}) but not the drive's "
                     f"own time constants: its idle garbage collection gets {c:.3g} × the time the PTS gives it, so the "
                     "recovery measured here is not the recovery at full length")
    sec.blocks.append(m.Alert("warn" if len(items) > 1 else "info", "idle periods", items))
    rows = []
    by_ws: dict[int, dict[str, Any]] = defaultdict(dict)
    for sgm in tab.segments:
        by_ws[sgm.wait_state]["wait" if sgm.is_wait else "baseline"] = sgm
    for ws, idle in hir.WAIT_STATES:
        d = by_ws.get(ws, {})
        w, bl = d.get("wait"), d.get("baseline")

        def pct(v):
            return m.Cell("—") if v is None or not level else m.Cell(f"{100 * v / level:.0f}%", 100 * v / level)

        rows.append([m.Cell(f"{ws}"), m.Cell(f"{idle:g} s", idle), m.Cell(_s(idle * c), idle * c),
                     m.Cell(str(w.samples) if w else "—", w.samples if w else None),
                     m.Cell(m.fmt_value(w.iops if w else None, "IOPS"), w.iops if w else None), pct(w.iops if w else None),
                     m.Cell(m.fmt_value(bl.iops if bl else None, "IOPS"), bl.iops if bl else None),
                     pct(bl.iops if bl else None)])
    sec.blocks.append(m.Table("hir-table", "HIR: mean IOPS per wait state",
                              ["Wait state", "Idle (PTS)", "Idle as run", "Bursts", "Burst IOPS", "of steady state",
                               "Baseline IOPS", "of steady state"], rows,
                              note=f"Burst IOPS: mean of the wait state's 5-s bursts; baseline: mean of the 5-s samples of "
                                   f"the return to baseline after it; steady state: {m.fmt_value(level, 'IOPS')} IOPS "
                                   f"(preconditioning window)."))
    recs = _records(b, part)
    xs, _ = _pts_minutes(b, recs)
    series: dict[str, tuple[list[float], list[float]]] = {}
    for r, x in zip(recs, xs):
        key = r.key
        name = (f"WS{key[2:]} bursts ({dict(hir.WAIT_STATES)[int(key[2:])]:g} s idle)" if key.startswith("ws")
                else f"baseline after WS{key[2:]}")
        series.setdefault(name, ([], []))
        series[name][0].append(x)
        series[name][1].append(r.measurement.iops)
    sec.blocks.append(m.Plot("hir-time", "HIR: IOPS vs time",
                             "IOPS of every 5-s burst and baseline sample against time since the first burst (PTS "
                             "minutes: time compression undone); dashed: the steady state of the preconditioning.",
                             partial(plots_ext.segments_vs_time, segments=[(k, v[0], v[1]) for k, v in series.items()],
                                     xlabel="time since the first burst (PTS minutes)", ylabel="IOPS",
                                     level=(level, "steady state") if level else None),
                             size=(10, 4.4)))
    cats = [f"WS{ws}\n({idle:g} s)" for ws, idle in hir.WAIT_STATES if ws in by_ws]
    sec.blocks.append(m.Plot("hir-bars", "HIR: mean IOPS of the bursts and of the return to baseline",
                             "Per wait state (its PTS idle time): mean IOPS of its bursts and of the baseline after it.",
                             partial(plots_ext.grouped_bars, categories=cats, series={
                                 "bursts": [by_ws[ws].get("wait").iops if by_ws[ws].get("wait") else None
                                            for ws, _ in hir.WAIT_STATES if ws in by_ws],
                                 "return to baseline": [by_ws[ws].get("baseline").iops if by_ws[ws].get("baseline")
                                                        else None for ws, _ in hir.WAIT_STATES if ws in by_ws]},
                                     ylabel="IOPS", level=(level, "steady state") if level else None),
                             size=(10, 3.8)))
    return out


# ---- XSR -----------------------------------------------------------------------------------------

def xsr_sections(b: "Builder", pids: list[str]) -> list:
    m = _m()
    sec = m.Section("xsr-results", "XSR: throughput across the three access groups", 3, "xsr")
    a = unverified(b, "xsr")
    if a:
        sec.blocks.append(a)
    part = b.parts.get(pids[0]) if pids else None
    tab = part.table if part is not None and isinstance(part.table, XsrTable) else None
    if tab is None or not tab.series:
        sec.blocks.append(m.Alert("bad", "not run", ["no minute of XSR finished before the run stopped"]))
        return [sec]
    names = dict(xsr.GROUPS)
    if tab.recovery_minutes is not None:
        sec.blocks.append(m.Alert("ok", f"G3 recovered after {tab.recovery_minutes} PTS minute"
                                        f"{'s' if tab.recovery_minutes != 1 else ''}",
                                  [f"first G3 minute at or above {m.fmt_value(tab.recovery_level_mb_per_s, 'MB/s')} MB/s "
                                   f"less {tab.recovery_tolerance_pct:g}% ({tab.recovery_rule})"]))
    else:
        sec.blocks.append(m.Alert("warn", "G3 did not recover", [
            f"no G3 minute reached {m.fmt_value(tab.recovery_level_mb_per_s, 'MB/s')} MB/s less "
            f"{tab.recovery_tolerance_pct:g}% ({tab.recovery_rule})"]))
    rows = [[m.Cell(names.get(g.group, g.group)), m.Cell(str(g.minutes), g.minutes),
             m.Cell(m.fmt_value(g.mb_per_s, "MB/s"), g.mb_per_s), m.Cell(m.fmt_value(g.final_mb_per_s, "MB/s"), g.final_mb_per_s),
             m.Cell(m.fmt_value(g.peak_lat_mean_us, "µs"), g.peak_lat_mean_us),
             m.Cell(m.fmt_value(g.lat_max_us, "µs"), g.lat_max_us)] for g in tab.groups]
    sec.blocks.append(m.Table("xsr-table", "XSR: per access group",
                              ["Group", "Minutes", "Mean MB/s", "End MB/s (last 5 min)", "Peak mean response time (µs)",
                               "Max response time (µs)"], rows,
                              note="MB/s = 10⁶ bytes per second of writes; response time = total latency of every IO."))
    x = [float(s.minute) for s in tab.series]
    bounds = [float(s.minute) - 0.5 for i, s in enumerate(tab.series) if i and s.group != tab.series[i - 1].group]
    segs = [(names.get(g, g), [float(s.minute) for s in tab.series if s.group == g],
             [s.mb_per_s for s in tab.series if s.group == g]) for g, _ in xsr.GROUPS]
    g3_start = next((s.minute for s in tab.series if s.group == "g3"), None)
    marker = (g3_start + tab.recovery_minutes - 1, "G3 recovered") if tab.recovery_minutes and g3_start else None
    sec.blocks.append(m.Plot("xsr-mbps", "XSR: MB/s vs time",
                             "Write MB/s of every PTS minute, coloured by access group; dashed: the recovery level; "
                             f"dotted: the first G3 minute at that level less {tab.recovery_tolerance_pct:g}%.",
                             partial(plots_ext.segments_vs_time, segments=[sg for sg in segs if sg[1]],
                                     xlabel="time (PTS minutes)", ylabel="MB/s (10⁶ B/s)",
                                     level=(tab.recovery_level_mb_per_s, f"recovery level ({tab.recovery_rule})")
                                     if tab.recovery_level_mb_per_s else None, marker=marker),
                             size=(10, 4.2)))
    sec.blocks.append(m.Plot("xsr-lat", "XSR: MB/s with mean and maximum response time",
                             "Left axis: write MB/s; right axis (log): mean and maximum response time of each minute; "
                             "dotted: group boundaries.",
                             partial(plots_ext.rate_and_latency, x=x, rate=[s.mb_per_s for s in tab.series],
                                     rate_label="MB/s", lat={"mean response time": [s.lat_mean_us for s in tab.series],
                                                             "max response time": [s.lat_max_us for s in tab.series]},
                                     xlabel="time (PTS minutes)", bounds=bounds), size=(10, 4.2)))
    return [sec]


# ---- CBW / DIRTH ---------------------------------------------------------------------------------

def demand_sections(b: "Builder", test: str, pids: list[str]) -> list:
    m = _m()
    name = test.upper()
    out: list = []
    first = m.Section(f"{test}-disclosure", f"{name}: what ran", 3, test)
    a = unverified(b, test)
    if a:
        first.blocks.append(a)
    out.append(first)
    pre = next((p for p in pids if p.endswith("precondition")), None)
    sweep = next((p for p in pids if p.endswith("demand-intensity")), None)
    points = next((p for p in pids if p.endswith("operating-points")), None)
    if pre:
        out += _ss_sections(b, pre, f"{name}: preconditioning", test)
    if sweep:
        out += _ss_sections(b, sweep, f"{name}: demand-intensity rounds", test)
        out.append(_sweep_results(b, test, sweep))
    if points:
        out.append(_points_results(b, test, points))
    return out


def _matrix(m, tab: DemandTable, metric: str, unit: str, title: str, tid: str, note: str):
    rows = []
    for tc in demand.TCS:
        line = [m.Cell(f"TC {tc}")]
        for qd in demand.QDS:
            r = tab.row(tc, qd)
            v = getattr(r, metric) if r else None
            line.append(m.Cell(m.fmt_value(v, unit), v))
        rows.append(line)
    return m.Table(tid, title, ["TC ↓ / QD →", *[str(q) for q in demand.QDS]], rows, note=note)


def _results(b: "Builder", pid: str, title: str, test: str, cls: type, missing: str):
    """A part's results section and its table of the expected kind (None, the section saying why)."""
    m = _m()
    part = b.parts[pid]
    sec = m.Section(f"{pid}-results", title, 3, test)
    tab = part.table if isinstance(part.table, cls) and part.table.rows else None
    if tab is None:
        sec.blocks.append(m.Alert("bad", "not run", [missing]))
    return m, part, sec, tab


def _sweep_results(b: "Builder", test: str, pid: str):
    m, part, sec, tab = _results(b, pid, f"{test.upper()}: demand intensity (steady-state window)", test, DemandTable,
                                 "no demand-intensity round finished")
    if tab is None:
        return sec
    note = b.not_reached_note(part)
    suffix = b._ss_suffix(part)
    chosen = tab.chosen()
    sec.blocks.append(m.Alert("info", "operating points chosen from this window", [
        f"{n}: {demand_label(*chosen[n])}" + (f" — {m.fmt_value(tab.row(*chosen[n]).iops, 'IOPS')} IOPS, mean "
                                              f"{m.fmt_value(tab.row(*chosen[n]).lat_mean_us, 'µs')} µs"
                                              if tab.row(*chosen[n]) else "")
        for n in demand.POINTS if n in chosen] + ([tab.note] if tab.note else [])))
    sec.blocks.append(_matrix(m, tab, "iops", "IOPS", "IOPS per TC × QD" + suffix, f"{pid}-iops", note))
    sec.blocks.append(_matrix(m, tab, "lat_mean_us", "µs", "Mean response time (µs) per TC × QD" + suffix,
                              f"{pid}-lat", note))
    by_tc = {tc: [tab.row(tc, qd) for qd in demand.QDS] for tc in demand.TCS}
    hl = {f"{n} ({demand_label(*chosen[n])})": (tab.row(*chosen[n]).iops, tab.row(*chosen[n]).lat_mean_us)
          for n in demand.POINTS if n in chosen and tab.row(*chosen[n]) and tab.row(*chosen[n]).iops}
    sec.blocks.append(m.Plot(f"{pid}-variation", "Demand variation: IOPS vs QD, one line per TC" + suffix,
                             "IOPS of each TC × QD combination (window average) against the queue depth per thread.",
                             partial(plots_ext.lines_per_group, groups={
                                 f"TC {tc}": ([float(r.qd) for r in rs if r], [r.iops for r in rs if r])
                                 for tc, rs in by_tc.items()}, xlabel="QD (fio iodepth)", ylabel="IOPS",
                                 legend_title="TC (fio numjobs)", logx=True, ticks=sorted(demand.QDS)),
                             size=(10, 4.4)))
    sec.blocks.append(m.Plot(f"{pid}-intensity", "Demand intensity: mean response time vs IOPS, one line per TC"
                             + suffix, "Each TC's curve over its QDs (log response time); stars: the operating points.",
                             partial(plots_ext.lines_per_group, groups={
                                 f"TC {tc}": ([r.iops for r in rs if r], [r.lat_mean_us for r in rs if r])
                                 for tc, rs in by_tc.items()}, xlabel="IOPS", ylabel="mean response time (µs)",
                                 legend_title="TC (fio numjobs)", logy=True, highlight=hl),
                             size=(10, 4.4)))
    toio_ticks = sorted({tc * qd for tc in demand.TCS for qd in (1, 32)})
    for metric, label, logy in (("iops", "IOPS", False), ("lat_mean_us", "mean response time (µs)", True)):
        sec.blocks.append(m.Plot(f"{pid}-toio-{metric.replace('_', '-')}", f"{label} vs TOIO (TC × QD)" + suffix,
                                 "Total outstanding IOs = TC × QD on a log axis, one line per TC.",
                                 partial(plots_ext.lines_per_group, groups={
                                     f"TC {tc}": ([float(r.toio) for r in rs if r], [getattr(r, metric) for r in rs if r])
                                     for tc, rs in by_tc.items()}, xlabel="TOIO = TC × QD", ylabel=label,
                                     legend_title="TC", logx=True, logy=logy, ticks=toio_ticks),
                                 size=(10, 3.8)))
    if any(r.cpu_pct is not None for r in tab.rows):
        sec.blocks.append(m.Plot(f"{pid}-cpu", "CPU per TC × QD" + suffix,
                                 "fio's usr + sys CPU of each combination's threads, % of one CPU per thread "
                                 "(window average): how much host the demand intensity takes.",
                                 partial(plots_ext.heatmap, rows=[f"TC {t}" for t in demand.TCS],
                                         cols=[str(q) for q in demand.QDS],
                                         z=[[(tab.row(t, q).cpu_pct if tab.row(t, q) else None) for q in demand.QDS]
                                            for t in demand.TCS], label="CPU % (usr + sys)", row_name="TC (numjobs)",
                                         col_name="QD (iodepth)"), size=(8, 4.0)))
    return sec


def _points_results(b: "Builder", test: str, pid: str):
    m, part, sec, tab = _results(b, pid, f"{test.upper()}: operating points", test, PointsTable,
                                 "no operating point was measured before the run stopped")
    if tab is None:
        return sec
    rows = [[m.Cell(r.point), m.Cell(demand_label(r.tc, r.qd)), m.Cell(m.fmt_value(r.iops, "IOPS"), r.iops),
             *[m.Cell(m.fmt_value(getattr(r, f), "µs"), getattr(r, f))
               for f in ("lat_mean_us", "lat_p999_us", "lat_p9999_us", "lat_p99999_us", "lat_max_us")],
             m.Cell(m.fmt_value(r.prewrite_iops, "IOPS"), r.prewrite_iops)] for r in tab.rows]
    sec.blocks.append(m.Table(f"{pid}-table", "Operating points: 10-minute measurement",
                              ["Point", "TC/QD", "IOPS", "Mean (µs)", "99.9% (µs)", "99.99% (µs)", "99.999% (µs)",
                               "Max (µs)", "Pre-write IOPS"], rows,
                              note="Percentiles from fio's json+ latency histogram of the 10-minute step (reads and "
                                   "writes together; fio's bins are ~1.5% wide), capped at the measured maximum."))
    panels = []
    for r in _records(b, part):
        if r.key.endswith("prewrite"):
            continue
        bins = r.measurement.lat_bins_ns
        if bins:
            panels.append((f"{r.key.capitalize()} {demand_label(r.workload.threads, r.workload.iodepth)}",
                           [(r.workload.size_label + " " + r.workload.mix, bins)]))
    if panels:
        sec.blocks.append(m.Plot(f"{pid}-histograms", "Response-time histograms with confidence curves",
                                 "Per operating point: IOs per response-time bin (solid) and the cumulative % of IOs "
                                 "completed within a time (dashed, right axis).",
                                 partial(plots.latency_histograms, panels=panels), size=(11, 4.6)))
    return sec


# ---- WSAT, PTS 2.0 options --------------------------------------------------------------------------

def wsat_blocks(b: "Builder", pid: str, tab: WsatTable) -> list:
    """Response-time series (mean, 99.999%, max) vs drive fills, and the final window's response-time
    histogram (PTS 2.0); the same series vs time is the WSAT section's own plot."""
    m = _m()
    series = tab.series
    out: list = []
    if all(s.drive_fills is not None for s in series):
        fills = [float(s.drive_fills or 0.0) for s in series]
        lat = {"mean": (fills, [s.lat_mean_us for s in series]),
               "99.999%": (fills, [s.lat_p99999_us for s in series]),
               "max": (fills, [s.lat_max_us for s in series])}
        out.append(m.Plot(f"{pid}-rt-fills", "WSAT: response times vs drive fills (PTS 2.0)",
                          "The same response times against drive fills (bytes written ÷ user capacity; µs, log "
                          "scale).",
                          partial(plots.rounds_lines, panels=[("response time per sample", lat, "µs", True)],
                                  window=[], reached=True, xlabel="drive fills", dashed=("99.999%",)),
                          size=(10, 3.6)))
    final = set(tab.final_window_minutes)
    merged: dict[int, int] = defaultdict(int)
    label = ""
    for r in b.records.get(("wsat", b.parts[pid].part), []):
        if r.phase == "round" and r.index in final:
            label = f"{r.workload.size_label} {r.workload.mix}"
            for k, v in r.measurement.lat_bins_ns.items():
                merged[int(k)] += int(v)
    if merged:
        out.append(m.Plot(f"{pid}-histogram", "WSAT: response-time histogram of the final window (PTS 2.0)",
                          "IOs per response-time bin of the last 5 samples (fio json+, reads and writes together) and "
                          "the cumulative % of IOs completed within a time.",
                          partial(plots.latency_histograms, panels=[("final 5 samples", [(label, dict(merged))])]),
                          size=(8, 4.4)))
    return out
