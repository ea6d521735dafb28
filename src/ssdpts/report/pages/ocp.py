"""The OCP tests' pages (ocp-trim, ocp-idle-gc; docs/ocp.md): the verdict, each phase's reads (IOs,
window, mean, p99, p99.9, max) with its change against the baseline, and, for ocp-idle-gc, the
preconditioning's steady state."""

from __future__ import annotations

from datetime import datetime, timezone

from ...pts import ocp
from ...pts.ocp import OcpTable
from ..context import RunContext
from ..doc import Alert, Cell, Plot, Section, Table
from ..fmt import fmt_value
from .common import outlier_table
from .extended import ss_sections

SOURCES = [
    "limit 5% (--ocp-limit): OCP Datacenter NVMe SSD spec 2.7 TRIM-6 (deallocation) and TRIM-7 (idle GC), as "
    "issue 32 quotes them; the spec's text was not available to confirm it",
    "what is judged by default (mean and p99; --ocp-judge), QD 1 4 KiB random reads, the phases' lengths (--ocp-read-s, --ocp-burst-s, "
    "--ocp-settle-s), the deallocation size and rate (--ocp-trim-size, --ocp-trim-rate): no source confirms them "
    "(docs/ocp.md)",
]


def _utc(t: float | None) -> str:
    if t is None:
        return "—"
    return datetime.fromtimestamp(t, timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def _pct(v: float | None, judged: bool, limit: float) -> Cell:
    if v is None:
        return Cell("—")
    css = ("bad" if v > limit else "ok") if judged else ""
    return Cell(f"{v:+.1f}%".replace("-", "−"), v, css=css)


def _names(stats: tuple[str, ...]) -> str:
    names = [dict(ocp.STATS)[n] for n in stats]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def verdict_alert(tab: OcpTable) -> Alert:
    ch = tab.changes()
    judged = ", ".join(f"{dict(ocp.STATS)[n]} {ch[n]:+.1f}%" for n in tab.judged if ch[n] is not None)
    if tab.verdict is None:
        return Alert("bad", "not run", ["the baseline and the reads under interference did not both finish"])
    level, word = ("ok", "PASS") if tab.verdict == "pass" else ("bad", "FAIL")
    return Alert(level, f"{word} at the {tab.limit_pct:g}% limit",
                 [f"read latency against the baseline: {judged} (each must be at most +{tab.limit_pct:g}%)"])


def phase_table(pid: str, tab: OcpTable) -> Table:
    base = tab.baseline
    ch = tab.changes()
    rows = []
    for p in tab.phases:
        is_base = p is base
        row = [Cell(p.label), Cell(f"{p.ios:,}", float(p.ios)),
               Cell(_utc(p.start_unix_s)),
               Cell("—" if p.duration_s is None else f"{p.duration_s:.3f} s", p.duration_s)]
        for n, _ in ocp.STATS:
            v = p.stat(n)
            row.append(Cell(fmt_value(v, "µs"), v, ref=f"{pid}:{p.cell}:{n}"))
        row.append(Cell(f"{p.trim_ios:,} ({p.trim_bytes / 2**20:,.0f} MiB)" if p.trim_ios else "—",
                        float(p.trim_ios) if p.trim_ios else None))
        rows.append(row)
    rows.append([Cell("change against the baseline"), Cell(""), Cell(""), Cell("")]
                + [_pct(ch[n], n in tab.judged, tab.limit_pct) for n, _ in ocp.STATS] + [Cell("")])
    return Table(f"{pid}-phases", "Read latency per phase (µs)",
                 ["Phase", "Reads", "Start (UTC)", "Length", "Mean", "p99", "p99.9", "Max", "Deallocations"], rows,
                 note="Response time = fio's total latency (submission + completion). Percentiles from fio's json+ "
                      "histogram (bins at most 1/64 of their value wide: a change under ~1.6% is within one bin). "
                      f"Judged: {_names(tab.judged)} (green within the limit, red beyond it); the others are "
                      "reported only (p99.9 and max: a few IOs decide them). Start and length: the phase's window, when its IO ran (its step's start and end; summary.json has both ends).")


def sections(ctx: RunContext, pids: list[str]) -> list:
    out: list = []
    for pid in pids:
        part = ctx.parts[pid]
        if part.steady_state is not None:
            out += ss_sections(ctx, pid, "OCP idle GC: preconditioning", part.test)
            continue
        sec = Section(f"{pid}-ocp", part.title, 3, part.test)
        out.append(sec)
        sec.blocks.append(Alert("info", "defaults and their sources", list(SOURCES)))
        tab = part.table if isinstance(part.table, OcpTable) else None
        if tab is None:
            sec.blocks.append(Alert("bad", "not run", ["the measurement did not finish before the run stopped"]))
            continue
        sec.blocks.append(verdict_alert(tab))
        sec.blocks.append(phase_table(pid, tab))
        outl = outlier_table(ctx, f"{pid}-outliers", "Latency outliers per phase",
                             [(p.label, f"{pid}:{p.cell}", [s.measurement for s in ctx.cell_steps(part, p.cell)])
                              for p in tab.phases])
        if outl:
            sec.blocks.append(outl)
        names = [p.label.split(":")[0] for p in tab.phases]
        sec.blocks.append(Plot(f"{pid}-bars", "Read latency: baseline and under interference",
                               "Mean, p99 and p99.9 read latency of each phase.", "grouped_bars",
                               {"categories": names, "series": {dict(ocp.STATS)[n]: [p.stat(n) for p in tab.phases]
                                                                for n in ("mean", "p99", "p999")},
                                "ylabel": "response time (µs)"}, size=(10, 3.6)))
    return out
