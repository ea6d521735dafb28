"""The OCP tests' pages (ocp-trim, ocp-idle-gc; docs/ocp.md): the verdict (pass, fail or inconclusive)
with each judged statistic's change over the pairs and its interval, idle GC's evidence, each pair's
change, each phase's reads (IOs, window, mean, p99, p99.9, max, deallocations, media writes, duty
cycle), and, for ocp-idle-gc, the preconditioning's steady state."""

from __future__ import annotations

from datetime import datetime, timezone

from ...pts import ocp
from ...pts.ocp import OcpTable
from ..context import RunContext
from ..doc import Alert, Cell, Plot, Section, Table
from ..fmt import fmt_value
from .common import outlier_table
from .extended import ss_sections
from .kind import ReportKind
from ...pts.units import fmt_capacity

SOURCES = [
    "limit ±5% (--ocp-limit), two-sided: OCP Datacenter NVMe SSD Specification 2.0, section 4.10, TRIM-6 (\"Read "
    "latency shall not change more than 5% from baseline when the host is issuing De-Allocate/TRIM commands\") and "
    "TRIM-7 (\"... when the device is performing Idle GC\"); idle GC \"during periods of no I/O\": TRIM-5 "
    "(the text read: a public transcription of version 2.0; later versions' text was not seen)",
    "deallocation rate (ocp-trim, unless --ocp-trim-rate): OCP 2.0 Appendix A.2.1, HE_Flash_Short_wTRIM's \"TRIM BW "
    "per TB\" (117 MiB/s, 4K_L2R6DWPD_wTRIM; --ocp-trim-mib-s-per-tb) × the capacity; A.3's large trims: "
    "--ocp-trim-size 64M or 3G",
    "the verdict over --ocp-pairs alternating pairs and its 95% interval, what is judged by default (mean and p99; "
    "--ocp-judge), QD 1 4 KiB random reads, the phases' lengths (--ocp-read-s, --ocp-burst-s, --ocp-settle-s), the "
    "range size (--ocp-trim-size) and the probes' spacing (--ocp-probe-gap-ms): ssdpts's choices, no source in the "
    "specification (docs/ocp.md)",
]


def _utc(t: float | None) -> str:
    if t is None:
        return "—"
    return datetime.fromtimestamp(t, timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def _pct(v: float | None, css: str = "") -> Cell:
    if v is None:
        return Cell("—")
    return Cell(f"{v:+.1f}%".replace("-", "−"), v, css=css)


def _names(stats: tuple[str, ...]) -> str:
    names = [dict(ocp.STATS)[n] for n in stats]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def _interval(e: ocp.Estimate) -> str:
    if e.change_pct is None:
        return "no value"
    if e.lo_pct is None or e.hi_pct is None:
        return f"{e.change_pct:+.1f}% (one pair: no interval)"
    return f"{e.change_pct:+.1f}% (95% interval {e.lo_pct:+.1f} … {e.hi_pct:+.1f}%, {len(e.changes)} pairs)"


def verdict_alert(tab: OcpTable) -> Alert:
    if tab.verdict is None:
        return Alert("bad", "not run", ["no pair of a baseline and the reads under interference finished"])
    lim = tab.limit_pct
    lines = [f"{dict(ocp.STATS)[n]}: {_interval(tab.estimate(n))}: {tab.estimate(n).verdict(lim)}" for n in tab.judged]
    lines.append(f"pass: each interval within ±{lim:g}%; fail: one wholly beyond it (a decrease too: TRIM-6/7 say "
                 "\"change\"); inconclusive: one straddles it, the host's noise too large to decide at the limit")
    lines += tab.reasons()
    level, word = {"pass": ("ok", "PASS"), "fail": ("bad", "FAIL")}.get(tab.verdict, ("warn", "INCONCLUSIVE"))
    return Alert(level, f"{word} at the ±{lim:g}% limit", lines)


def gc_alert(tab: OcpTable) -> Alert | None:
    """ocp-idle-gc: whether the drive collected garbage in the idle phases, and what the probes took."""
    g = tab.gc()
    if g is None:
        return None
    idle = [p for p in tab.phases if not p.baseline]
    duty = [p.duty_pct for p in idle if p.duty_pct is not None]
    probes = (f"probes {tab.probe_gap_ms:g} ms apart (no IO in between); they kept the drive busy "
              f"{max(duty):.2f}% of the idle phases' time at most" if duty else f"probes {tab.probe_gap_ms:g} ms apart")
    if g == "observed":
        gc = [f"{p.label.split(':')[0]}: {fmt_capacity(p.gc_written_bytes or 0)} programmed beyond "
              f"{fmt_capacity(p.host_written_bytes or 0)} of host writes" for p in idle]
        return Alert("ok", "idle GC observed", gc + [probes])
    if g == "not observed":
        return Alert("warn", "no idle GC observed", [
            "the drive's media writes did not rise beyond its host writes in any idle phase: TRIM-7's condition "
            "(the device performing idle GC) did not hold, so the latency change says nothing about it; a drive "
            "whose idle threshold is longer than the probes' gap never sees idle time (--ocp-probe-gap-ms)", probes])
    return Alert("info", "idle GC: not observable", [
        "the drive reports no media-write counter (docs/ocp.md \"WAF\"), so whether it collected garbage in the idle "
        "phases is not known; the verdict rests on the latency alone", probes])


def _kinds(tab: OcpTable) -> str:
    """What each kind of phase is: its first phase's label, without the pair ("baseline: QD1 …")."""
    seen: dict[str, str] = {}
    for p in tab.phases:
        name, _, what = p.label.partition(":")
        seen.setdefault(name.rstrip("0123456789 "), what.strip())
    return "; ".join(f"{k}: {v}" for k, v in seen.items() if v)


def phase_table(pid: str, tab: OcpTable) -> Table:
    rows = []
    for p in tab.phases:
        row = [Cell(p.label.split(":")[0]), Cell(f"{p.ios:,}", float(p.ios)), Cell(_utc(p.start_unix_s)),
               Cell("—" if p.duration_s is None else f"{p.duration_s:.3f} s", p.duration_s)]
        for n, _ in ocp.STATS:
            v = p.stat(n)
            row.append(Cell(fmt_value(v, "µs"), v, ref=f"{pid}:{p.cell}:{n}"))
        row.append(Cell(f"{p.trim_ios:,} ({fmt_capacity(p.trim_bytes)})" if p.trim_ios else "—",
                        float(p.trim_ios) if p.trim_ios else None))
        gc = p.gc_written_bytes
        row.append(Cell("—" if gc is None else fmt_capacity(gc), None if gc is None else float(gc)))
        row.append(Cell("—" if p.duty_pct is None else f"{p.duty_pct:.2f}%", p.duty_pct))
        rows.append(row)
    return Table(f"{pid}-phases", "Read latency per phase (µs)",
                 ["Phase", "Reads", "Start (UTC)", "Length", "Mean", "p99", "p99.9", "Max", "Deallocations",
                  "Media writes beyond host", "Reads in flight"], rows,
                 note=f"Phases in the order they ran: baseline and interference alternate ({_kinds(tab)}). "
                      "Response time = fio's total "
                      "latency (submission + completion). Percentiles from fio's json+ histogram (bins at most 1/64 of "
                      "their value wide: a change under ~1.6% is within one bin). Media writes beyond host: what the "
                      "drive programmed over the phase beyond what the host wrote (its own GC), where it counts them. "
                      "Reads in flight: the share of the phase a read was outstanding (the probes' duty cycle). Start "
                      "and length: the phase's window, when its IO ran (summary.json has both ends).")


def pair_table(pid: str, tab: OcpTable) -> Table:
    rows = []
    for n, b, u in tab.pairs():
        rows.append([Cell(f"pair {n}")] + [_pct(ocp.change_pct(b.stat(s) if b else None, u.stat(s) if u else None))
                                           for s, _ in ocp.STATS])
    lim = tab.limit_pct
    for label, get in (("mean over the pairs", lambda e: e.change_pct), ("95% interval, low", lambda e: e.lo_pct),
                       ("95% interval, high", lambda e: e.hi_pct)):
        row = [Cell(label)]
        for s, _ in ocp.STATS:
            e = tab.estimate(s)
            v = e.verdict(lim) if s in tab.judged else None
            row.append(_pct(get(e), {"pass": "ok", "fail": "bad", "inconclusive": "approx"}.get(str(v), "")))
        rows.append(row)
    return Table(f"{pid}-pairs", "Change against the baseline, per pair and over the pairs",
                 ["", *(label for _, label in ocp.STATS)], rows,
                 note=f"Each pair's change: its interference phase against its own baseline. Over the pairs: the "
                      f"mean of the pairs' changes and its 95% interval (Student's t). Judged: {_names(tab.judged)} "
                      f"(green: the interval within ±{lim:g}%; red: wholly beyond it; amber: straddling it); the "
                      "others are reported only (p99.9 and max: a few IOs decide them).")


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
        gc = gc_alert(tab)
        if gc is not None:
            sec.blocks.append(gc)
        sec.blocks.append(pair_table(pid, tab))
        sec.blocks.append(phase_table(pid, tab))
        outl = outlier_table(ctx, f"{pid}-outliers", "Latency outliers per phase",
                             [(p.label, f"{pid}:{p.cell}", [s.measurement for s in ctx.cell_steps(part, p.cell)])
                              for p in tab.phases])
        if outl:
            sec.blocks.append(outl)
        names = [p.label.split(":")[0] for p in tab.phases]
        sec.blocks.append(Plot(f"{pid}-bars", "Read latency: baseline and under interference, in the order run",
                               "Mean, p99 and p99.9 read latency of each phase.", "grouped_bars",
                               {"categories": names, "series": {dict(ocp.STATS)[n]: [p.stat(n) for p in tab.phases]
                                                                for n in ("mean", "p99", "p999")},
                                "ylabel": "response time (µs)"}, size=(10, 3.6)))
    return out


# ---- the OCP checks as kinds (pages/kind.py; docs/ocp.md) -----------------------------------------

def _reads(ctx: RunContext) -> tuple[str, str, int]:
    """(the probe reads, the settling idle, the pairs) both checks share."""
    read = f"RND 4KiB 100/0 at TC 1 × QD 1 over the first half of the active range, {ctx.option('ocp_read_s'):g} s"
    return read, f"{ctx.option('ocp_settle_s'):g} s", int(ctx.option("ocp_pairs"))


def trim_stimulus(ctx: RunContext, _test: str, _pids: list[str]) -> str:
    read, settle, pairs = _reads(ctx)
    rate = ctx.option("ocp_trim_rate")
    shown = ("at OCP 2.0 A.2.1's rate for the capacity, "
             f"{float(ctx.option('ocp_trim_mib_s_per_tb')):g} MiB/s per TB" if rate is None
             else f"{float(rate):g}/s" if rate else "unlimited")
    return (f"{settle} idle; then {pairs} pairs, alternating: baseline: {read}; the same reads beside a "
            f"deallocation job (fio rw=trim, {int(ctx.option('ocp_trim_size')) // 1024} KiB ranges, "
            f"{shown}, over the second half), then {settle} idle")


def idle_gc_stimulus(ctx: RunContext, test: str, _pids: list[str]) -> str:
    read, settle, pairs = _reads(ctx)
    gap = float(ctx.option("ocp_probe_gap_ms"))
    probes = f"{read}, {gap:g} ms with no IO after each read" if gap else read
    return (f"{settle} idle; then {pairs} times: baseline: {probes}; a write burst of RND 4KiB 0/100 at "
            f"{ctx.toio(test)}, {ctx.option('ocp_burst_s'):g} s; right after it the same probes (idle phase), "
            f"then {settle} idle")


def idle_gc_preconditioning(ctx: RunContext, test: str) -> tuple[str, str]:
    return ("none (starts from a purged device)",
            f"RND 4KiB 0/100, {ctx.toio(test)}, rounds of 30 × 1 min until the last minute's IOPS is steady (as HIR)")


def params(ctx: RunContext, _test: str) -> list[tuple[str, str]]:
    judged = " and ".join({"p999": "p99.9"}.get(n, n) for n in ctx.option("ocp_judge"))
    return [("Pass/fail", f"{judged} read latency: the 95% interval of the change over the pairs within "
                          f"±{float(ctx.option('ocp_limit_pct')):g}% of the baseline: pass; wholly beyond it: "
                          "fail; straddling it: inconclusive (--ocp-limit; OCP 2.0 TRIM-6/7)")]


def ocptv(emit, part, at: str | None) -> list[str]:
    """The OCP tests' verdict per judged statistic (pts/ocp.py): the change over the pairs with its 95%
    interval, validated against ±--ocp-limit; an inconclusive one is an UNKNOWN diagnosis, and the
    test's own reasons (no deallocation, no idle GC observed) one more."""
    tab = part.table
    if not isinstance(tab, OcpTable):
        return []
    pid = part.id
    outcomes = []
    lim = tab.limit_pct
    for n in tab.judged:
        e, name = tab.estimate(n), f"{pid}_{n}_change_pct"
        what = f"change of the {dict(ocp.STATS)[n]} read latency against the baseline over {len(e.changes)} pairs"
        if e.change_pct is None:
            emit.step(emit.diagnosis(f"{name}-unknown", "UNKNOWN", f"{what}: no value in this run"), at)
            outcomes.append("UNKNOWN")
            continue
        validators = [{"name": f"{name} within -{lim:g}%", "type": "GREATER_THAN_OR_EQUAL", "value": -lim},
                      {"name": f"{name} within +{lim:g}%", "type": "LESS_THAN_OR_EQUAL", "value": lim}]
        emit.step(emit.measurement(name, e.change_pct, "%", validators, emit.clean(
            {"interval_95_lo_pct": e.lo_pct, "interval_95_hi_pct": e.hi_pct, "pairs_pct": list(e.changes)})), at)
        v = e.verdict(lim)
        ival = "no interval (one pair)" if e.lo_pct is None else f"95% interval {e.lo_pct:+.2f} … {e.hi_pct:+.2f}%"
        kind = {"pass": "PASS", "fail": "FAIL"}.get(str(v), "UNKNOWN")
        emit.step(emit.diagnosis(f"{name}-{v}", kind, f"{what}: {e.change_pct:+.2f}% ({ival}), limit ±{lim:g}% "
                                 f"(--ocp-limit; OCP 2.0 TRIM-6/7): {v}"), at)
        outcomes.append("INCONCLUSIVE" if kind == "UNKNOWN" else kind)
    for why in tab.reasons():
        emit.step(emit.diagnosis(f"{pid}-inconclusive", "UNKNOWN", why), at)
        outcomes.append("INCONCLUSIVE")
    return outcomes


KINDS = {
    "ocp-trim": ReportKind(sections, stimulus=trim_stimulus, params=params, ocptv=ocptv, outlier_cells=(
        (30, "ocp_trim_read", "OCP: QD1 reads beside deallocation", "ocp-trim", "trim"),)),
    "ocp-idle-gc": ReportKind(sections, stimulus=idle_gc_stimulus, preconditioning=idle_gc_preconditioning,
                              params=params, ocptv=ocptv, outlier_cells=(
                                  (31, "ocp_idle_gc_read", "OCP: QD1 probe reads in the idle time after a write burst",
                                   "ocp-idle-gc-measure", "idle"),)),
}
