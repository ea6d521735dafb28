"""The demand-intensity tests' pages (CBW/ECW and DIRTH, docs/pts-reference.md#cbw, #dirth): what ran, the
preconditioning and the demand-intensity rounds' steady state, IOPS and response time per TC × QD
with the operating points chosen from them, and the operating points' measurements."""

from __future__ import annotations

from ...pts import demand
from ...pts.demand import DemandTable, PointsTable, demand_label
from ..context import RunContext
from ..doc import Alert, Cell, Plot, Section, Table
from ..fmt import fmt_value, or_default
from .extended import disclosure_section, ss_sections
from .kind import ReportKind


def sections(ctx: RunContext, test: str, pids: list[str], choices: list[str]) -> list:
    """CBW's or DIRTH's pages (``choices``: its [?] choices, pages/extended.py)."""
    name = test.upper()
    out: list = [disclosure_section(ctx, f"{test}-disclosure", f"{name}: what ran", test, choices)]
    pre = next((p for p in pids if p.endswith("precondition")), None)
    sweep = next((p for p in pids if p.endswith("demand-intensity")), None)
    points = next((p for p in pids if p.endswith("operating-points")), None)
    if pre:
        out += ss_sections(ctx, pre, f"{name}: preconditioning", test)
    if sweep:
        out += ss_sections(ctx, sweep, f"{name}: demand-intensity rounds", test)
        out.append(results(ctx, sweep, f"{name}: demand intensity (steady-state window)", test, DemandTable,
                           "no demand-intensity round finished", sweep_blocks))
    if points:
        out.append(results(ctx, points, f"{name}: operating points", test, PointsTable,
                           "no operating point was measured before the run stopped", points_blocks))
    return out


def results(ctx: RunContext, pid: str, title: str, test: str, cls: type, missing: str, blocks) -> Section:
    """A part's results section: ``blocks`` of its table of the expected kind, else why there is none."""
    part = ctx.parts[pid]
    sec = Section(f"{pid}-results", title, 3, test)
    tab = part.table if isinstance(part.table, cls) and part.table.rows else None
    sec.blocks += [Alert("bad", "not run", [missing])] if tab is None else blocks(ctx, pid, tab)
    return sec


def matrix(tab: DemandTable, metric: str, unit: str, title: str, tid: str, note: str) -> Table:
    rows = []
    for tc in demand.TCS:
        line = [Cell(f"TC {tc}")]
        for qd in demand.QDS:
            r = tab.row(tc, qd)
            v = getattr(r, metric) if r else None
            line.append(Cell(fmt_value(v, unit), v))
        rows.append(line)
    return Table(tid, title, ["TC ↓ / QD →", *[str(q) for q in demand.QDS]], rows, note=note)


def sweep_blocks(ctx: RunContext, pid: str, tab: DemandTable) -> list:
    part = ctx.parts[pid]
    note = ctx.not_reached_note(part)
    suffix = ctx.ss_suffix(part)
    chosen = tab.chosen()
    out: list = [Alert("info", "operating points chosen from this window", [
        f"{n}: {demand_label(*chosen[n])}" + (f" — {fmt_value(tab.row(*chosen[n]).iops, 'IOPS')} IOPS, mean "
                                              f"{fmt_value(tab.row(*chosen[n]).lat_mean_us, 'µs')} µs"
                                              if tab.row(*chosen[n]) else "")
        for n in demand.POINTS if n in chosen] + ([tab.note] if tab.note else []))]
    out.append(matrix(tab, "iops", "IOPS", "IOPS per TC × QD" + suffix, f"{pid}-iops", note))
    out.append(matrix(tab, "lat_mean_us", "µs", "Mean response time (µs) per TC × QD" + suffix, f"{pid}-lat", note))
    by_tc = {tc: [tab.row(tc, qd) for qd in demand.QDS] for tc in demand.TCS}

    def groups(x, y) -> dict:
        return {f"TC {tc}": ([x(r) for r in rs if r], [y(r) for r in rs if r]) for tc, rs in by_tc.items()}

    hl = {f"{n} ({demand_label(*chosen[n])})": (tab.row(*chosen[n]).iops, tab.row(*chosen[n]).lat_mean_us)
          for n in demand.POINTS if n in chosen and tab.row(*chosen[n]) and tab.row(*chosen[n]).iops}
    out.append(Plot(f"{pid}-variation", "Demand variation: IOPS vs QD, one line per TC" + suffix,
                    "IOPS of each TC × QD combination (window average) against the queue depth per thread.",
                    "lines_per_group", {"groups": groups(lambda r: float(r.qd), lambda r: r.iops),
                                        "xlabel": "QD (fio iodepth)", "ylabel": "IOPS",
                                        "legend_title": "TC (fio numjobs)", "logx": True, "ticks": sorted(demand.QDS)},
                    size=(10, 4.4)))
    out.append(Plot(f"{pid}-intensity", "Demand intensity: mean response time vs IOPS, one line per TC" + suffix,
                    "Each TC's curve over its QDs (log response time); stars: the operating points.",
                    "lines_per_group", {"groups": groups(lambda r: r.iops, lambda r: r.lat_mean_us), "xlabel": "IOPS",
                                        "ylabel": "mean response time (µs)", "legend_title": "TC (fio numjobs)",
                                        "logy": True, "highlight": hl},
                    size=(10, 4.4)))
    toio_ticks = sorted({tc * qd for tc in demand.TCS for qd in (1, 32)})
    for metric, label, logy in (("iops", "IOPS", False), ("lat_mean_us", "mean response time (µs)", True)):
        out.append(Plot(f"{pid}-toio-{metric.replace('_', '-')}", f"{label} vs TOIO (TC × QD)" + suffix,
                        "Total outstanding IOs = TC × QD on a log axis, one line per TC.",
                        "lines_per_group", {"groups": groups(lambda r: float(r.toio), lambda r, m=metric: getattr(r, m)),
                                            "xlabel": "TOIO = TC × QD", "ylabel": label, "legend_title": "TC",
                                            "logx": True, "logy": logy, "ticks": toio_ticks},
                        size=(10, 3.8)))
    if any(r.cpu_pct is not None for r in tab.rows):
        out.append(Plot(f"{pid}-cpu", "CPU per TC × QD" + suffix,
                        "fio's usr + sys CPU of each combination's threads, % of one CPU per thread "
                        "(window average): how much host the demand intensity takes.",
                        "heatmap", {"rows": [f"TC {t}" for t in demand.TCS], "cols": [str(q) for q in demand.QDS],
                                    "z": [[(tab.row(t, q).cpu_pct if tab.row(t, q) else None) for q in demand.QDS]
                                          for t in demand.TCS], "label": "CPU % (usr + sys)",
                                    "row_name": "TC (numjobs)", "col_name": "QD (iodepth)"}, size=(8, 4.0)))
    return out


def points_blocks(ctx: RunContext, pid: str, tab: PointsTable) -> list:
    rows = [[Cell(r.point), Cell(demand_label(r.tc, r.qd)), Cell(fmt_value(r.iops, "IOPS"), r.iops),
             *[Cell(fmt_value(getattr(r, f), "µs"), getattr(r, f))
               for f in ("lat_mean_us", "lat_p999_us", "lat_p9999_us", "lat_p99999_us", "lat_max_us")],
             Cell(fmt_value(r.prewrite_iops, "IOPS"), r.prewrite_iops)] for r in tab.rows]
    out: list = [Table(f"{pid}-table", "Operating points: 10-minute measurement",
                       ["Point", "TC/QD", "IOPS", "Mean (µs)", "99.9% (µs)", "99.99% (µs)", "99.999% (µs)",
                        "Max (µs)", "Pre-write IOPS"], rows,
                       note="Percentiles from fio's json+ latency histogram of the 10-minute step (reads and "
                            "writes together; fio's bins are ~1.5% wide), capped at the measured maximum.")]
    panels = []
    for r in ctx.round_records(ctx.parts[pid]):
        if r.key.endswith("prewrite"):
            continue
        bins = r.measurement.lat_bins_ns
        if bins:
            panels.append((f"{r.key.capitalize()} {demand_label(r.workload.threads, r.workload.iodepth)}",
                           [(r.workload.size_label + " " + r.workload.mix, bins)]))
    if panels:
        out.append(Plot(f"{pid}-histograms", "Response-time histograms with confidence curves",
                        "Per operating point: IOs per response-time bin (solid) and the cumulative % of IOs "
                        "completed within a time (dashed, right axis).",
                        "latency_histograms", {"panels": panels}, size=(11, 4.6)))
    return out


# ---- CBW and DIRTH as kinds (pages/kind.py; docs/pts-reference.md#extended) -------------------------------------

CBW_ACCESS = ("RND CBW 40/60: bssplit 0.5K 4%, 1K-3.5K 1% each, 4K 67%, 8K 10%, 16K 7%, 32K 3%, 64K 3%; zoned "
              "50% of IOs to the first 5% of the range, 30% to the next 15%, 20% to the last 80%")


def dirth_access(ctx: RunContext) -> str:
    """DIRTH's access pattern, the operator's [?]."""
    pct = ctx.option("dirth_read_pct")
    return f"RND {int(ctx.option('dirth_block_size')) / 1024:g}KiB {pct}/{100 - int(pct)}"


def unverified(ctx: RunContext, own: list[str]) -> list[str]:
    """The [?] choices of CBW or DIRTH (``own``: the test's own, before those they share)."""
    return own + [f"Max = the highest IOPS whose mean response time is below {ctx.option('op_ceiling_ms'):g} ms "
                  "(--op-ceiling-ms)",
                  "Mid = " + ("the IOPS nearest (Max + Min) / 2" if ctx.option("op_mid") == "iops-midpoint"
                              else "the TOIO nearest the geometric middle of Max's and Min's") + " (--op-mid)",
                  "each operating point's 60-min pre-write runs at TC32/QD32 100% W, as the rounds' pre-write"]


def stimulus(access: str) -> str:
    return (f"{access}; rounds of 5 min TC32/QD32 100% W pre-write + 49 × 1 min over TC 32, 16, 8, 6, 4, 2, 1 "
            "(outer, fio numjobs) × QD 32 … 1 (inner, fio iodepth); then Max, Mid, Min operating points: "
            "60 min pre-write + 10 min measurement each")


def preconditioning(ctx: RunContext, _test: str) -> tuple[None, str]:
    return None, (f"the access pattern at 100% W, TC 32 × QD 32, rounds of 30 × 1 min until steady state (at most "
                  f"{or_default(ctx.spec.max_rounds, 25)} rounds)")


def params(ctx: RunContext, _test: str) -> list[tuple[str, str]]:
    return [("Demand intensity", "TC = fio numjobs (outer 32 → 1), QD = fio iodepth (inner 32 → 1)"),
            ("Operating points", f"Max: highest IOPS with mean response time < {ctx.option('op_ceiling_ms'):g} ms; "
                                 f"Mid: {ctx.option('op_mid')}; Min: TC1/QD1 [?]")]


def dirth_unverified(ctx: RunContext) -> list[str]:
    return [f"access pattern {dirth_access(ctx)} (--dirth-block-size, --dirth-read-pct; PTS-E 1.1 fixes one, "
            "not known to us)"]


KINDS = {
    "cbw": ReportKind(lambda ctx, pids: sections(ctx, "cbw", pids, unverified(ctx, [])),
                      stimulus=lambda *_: stimulus(CBW_ACCESS), preconditioning=preconditioning, params=params),
    "dirth": ReportKind(lambda ctx, pids: sections(ctx, "dirth", pids, unverified(ctx, dirth_unverified(ctx))),
                        stimulus=lambda ctx, *_: stimulus(dirth_access(ctx)), preconditioning=preconditioning,
                        params=params),
}
