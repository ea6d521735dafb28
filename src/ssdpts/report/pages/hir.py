"""The host idle recovery test's pages (HIR, docs/pts-reference.md#hir): what ran, the preconditioning's
steady state, and the IOPS of the bursts and of the return to baseline per wait state."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...pts import hir
from ...pts.hir import HirTable
from ..context import RunContext
from ..doc import Alert, Cell, Plot, Section, Table
from ..fmt import fmt_value
from .extended import disclosure_section, level, pts_minutes, seconds, ss_sections
from .kind import ReportKind


def sections(ctx: RunContext, pids: list[str]) -> list:
    out: list = [disclosure_section(ctx, "hir-disclosure", "HIR: what ran", "hir", unverified(ctx))]
    pre = next((p for p in pids if p.endswith("precondition")), None)
    if pre:
        out += ss_sections(ctx, pre, "HIR: preconditioning", "hir")
    wait = next((p for p in pids if p.endswith("wait-states")), None)
    sec = Section("hir-recovery", "HIR: wait states and recovery", 3, "hir")
    out.append(sec)
    part = ctx.parts.get(wait) if wait else None
    tab = part.table if part is not None and isinstance(part.table, HirTable) else None
    if tab is None or not tab.segments:
        sec.blocks.append(Alert("bad", "not run", ["no wait state finished before the run stopped"]))
        return out
    sec.blocks += recovery_blocks(ctx, part, tab, level(ctx.parts.get(pre)) if pre else None)
    return out


def recovery_blocks(ctx: RunContext, part, tab: HirTable, steady: float | None) -> list:
    c = ctx.time_scale()
    idles = [idle * c for _, idle in hir.WAIT_STATES]
    items = [f"each 5-s burst ({seconds(5 * c)} as run) is a fio job of its own; the step gate releases the next one "
             "by a timer once the planned idle after the burst's last IO has passed, so every thread is idle at once; "
             "each boundary's measured idle is in the Step boundaries section and steps.jsonl"]
    if c != 1:
        items.append(f"time compression shortens the idle periods (the shortest: {seconds(min(idles))}) but not the "
                     f"drive's own time constants: its idle garbage collection gets {c:.3g} × the time the PTS gives "
                     "it, so the recovery measured here is not the recovery at full length")
    out: list = [Alert("warn" if len(items) > 1 else "info", "idle periods", items)]
    by_ws: dict[int, dict[str, Any]] = defaultdict(dict)
    for sgm in tab.segments:
        by_ws[sgm.wait_state]["wait" if sgm.is_wait else "baseline"] = sgm

    def pct(v):
        return Cell("—") if v is None or not steady else Cell(f"{100 * v / steady:.0f}%", 100 * v / steady)

    rows = []
    for ws, idle in hir.WAIT_STATES:
        d = by_ws.get(ws, {})
        w, bl = d.get("wait"), d.get("baseline")
        rows.append([Cell(f"{ws}"), Cell(f"{idle:g} s", idle), Cell(seconds(idle * c), idle * c),
                     Cell(str(w.samples) if w else "—", w.samples if w else None),
                     Cell(fmt_value(w.iops if w else None, "IOPS"), w.iops if w else None), pct(w.iops if w else None),
                     Cell(fmt_value(bl.iops if bl else None, "IOPS"), bl.iops if bl else None),
                     pct(bl.iops if bl else None)])
    out.append(Table("hir-table", "HIR: mean IOPS per wait state",
                     ["Wait state", "Idle (PTS)", "Idle as run", "Bursts", "Burst IOPS", "of steady state",
                      "Baseline IOPS", "of steady state"], rows,
                     note=f"Burst IOPS: mean of the wait state's 5-s bursts; baseline: mean of the 5-s samples of "
                          f"the return to baseline after it; steady state: {fmt_value(steady, 'IOPS')} IOPS "
                          f"(preconditioning window)."))
    recs = ctx.round_records(part)
    series: dict[str, tuple[list[float], list[float]]] = {}
    for r, x in zip(recs, pts_minutes(ctx, recs)):
        key = r.key
        name = (f"WS{key[2:]} bursts ({dict(hir.WAIT_STATES)[int(key[2:])]:g} s idle)" if key.startswith("ws")
                else f"baseline after WS{key[2:]}")
        series.setdefault(name, ([], []))
        series[name][0].append(x)
        series[name][1].append(r.measurement.iops)
    lvl = (steady, "steady state") if steady else None
    out.append(Plot("hir-time", "HIR: IOPS vs time",
                    "IOPS of every 5-s burst and baseline sample against time since the first burst (PTS "
                    "minutes: time compression undone); dashed: the steady state of the preconditioning.",
                    "segments_vs_time", {"segments": [(k, v[0], v[1]) for k, v in series.items()],
                                         "xlabel": "time since the first burst (PTS minutes)", "ylabel": "IOPS",
                                         "level": lvl}, size=(10, 4.4)))
    shown = [ws for ws, _ in hir.WAIT_STATES if ws in by_ws]
    cats = [f"WS{ws}\n({idle:g} s)" for ws, idle in hir.WAIT_STATES if ws in by_ws]
    out.append(Plot("hir-bars", "HIR: mean IOPS of the bursts and of the return to baseline",
                    "Per wait state (its PTS idle time): mean IOPS of its bursts and of the baseline after it.",
                    "grouped_bars", {"categories": cats, "series": {
                        "bursts": [by_ws[ws]["wait"].iops if by_ws[ws].get("wait") else None for ws in shown],
                        "return to baseline": [by_ws[ws]["baseline"].iops if by_ws[ws].get("baseline") else None
                                               for ws in shown]}, "ylabel": "IOPS", "level": lvl}, size=(10, 3.8)))
    return out


# ---- HIR as a kind (pages/kind.py; docs/pts-reference.md#extended) ----------------------------------------------

def unverified(ctx: RunContext) -> list[str]:
    """Its [?] choices (pages/extended.py)."""
    return [f"{ctx.option('hir_bursts')} bursts per wait state and 5-s samples per return to baseline "
            "(--hir-bursts); the wait states as CH and AD implement them",
            "the tracking variable is each preconditioning round's last-minute IOPS (CH, AD)"]


def stimulus(ctx: RunContext, _test: str, _pids: list[str]) -> str:
    n = ctx.option("hir_bursts")
    return ("RND 4KiB 0/100: preconditioning rounds of 30 × 1 min; then wait states 1, 2, 3, 5, 10 — each "
            f"{n} × (5 s writes + 5, 10, 15, 25 or 50 s with no IO), each followed by "
            f"{n} × 5 s of continuous writes (return to baseline)")


def preconditioning(ctx: RunContext, test: str) -> tuple[str, str]:
    return ("none (HIR starts from a purged device)",
            f"RND 4KiB 0/100, {ctx.toio(test)}, rounds of 30 × 1 min until the last minute's IOPS is steady")


IDLE = ("Idle periods", "every thread idle at once: one fio job per burst, the next released by the "
                        "step gate's timer when the planned idle has passed (measured per boundary)")
KINDS = {"hir": ReportKind(sections, stimulus=stimulus, preconditioning=preconditioning,
                           params=lambda *_: [IDLE])}
