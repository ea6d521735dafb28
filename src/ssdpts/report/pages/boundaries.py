"""The run's step boundaries (docs/methodology.md): per part and round the idle and overlap at the
boundaries as the device saw them (the block layer, engine/devtrace.py) or as fio's timeline shows
them, every boundary over the limits and its likely cause."""

from __future__ import annotations

from ..context import RunContext
from ..doc import Alert, Cell, Section, Table
from ..fmt import fmt_fixed


def section(ctx: RunContext, tests: list[str]) -> Section | None:
    """Per part and round: median and worst idle and overlap at the step boundaries as the device
    saw them (the block layer, engine/devtrace.py) or, without a trace, as fio's timeline shows
    them; beside the device's worst, the timeline's where they differ; every boundary over the
    limits, and the likely cause (docs/methodology.md)."""
    rows, flagged = [], []
    limit, sources, contention = None, set(), 0
    parts = [ctx.parts[pid] for t in tests for pid in ctx.part_ids(t)]
    differs = any((p.boundaries or {}).get("differs_from_recorded") for p in parts)
    for part in parts:
        b = part.boundaries or {}
        limit = b.get("idle_limit_ms", limit)
        sources.update(x for x in str(b.get("source") or "fio timeline").split(" and ") if x)
        for r in b.get("rounds") or []:
            idle, over, rec = r.get("idle_ms") or {}, r.get("overlap_ms") or {}, r.get("recorded_idle_ms") or {}
            bad = r.get("over_limit", 0)
            ref = f"{part.id}:b{r['round']}:"  # recomputed from the steps' times (tests/report_numbers.py)
            rows.append([Cell(f"{part.title} · round {r['round']}"),
                         Cell(str(r.get("boundaries", 0)), r.get("boundaries"), ref=ref + "boundaries"),
                         Cell(fmt_fixed(idle.get("median"), 2), idle.get("median"), ref=ref + "idle_median"),
                         Cell(fmt_fixed(idle.get("worst"), 2), idle.get("worst"), ref=ref + "idle_worst"),
                         *([Cell(fmt_fixed(rec.get("worst"), 2), rec.get("worst"), ref=ref + "recorded_idle_worst",
                                 css="dim")] if differs else []),
                         Cell(fmt_fixed(over.get("worst"), 2), over.get("worst"), ref=ref + "overlap_worst"),
                         Cell(str(bad), bad, css="bad" if bad else "ok", ref=ref + "over_limit")])
        for f in b.get("flagged") or []:
            # released on time by fio's timeline, late at the device: fio's thread ran late
            host = (f.get("source") == "block layer" and f["idle_ms"] > (limit or 10.0)
                    and f.get("recorded_gap_ms", 0.0) - float(f.get("planned_idle_ms") or 0.0) <= (limit or 10.0))
            contention += host
            flagged.append(f"{part.title} round {f['round']} step {f['index']} ({f.get('label', '')}, after "
                           f"{f.get('after')}): {f.get('why')}"
                           + (f" (fio's timeline: {max(f.get('recorded_gap_ms', 0.0), 0.0):.1f} ms)" if host else ""))
    if not rows:
        return None
    device = "block layer" in sources
    sec = Section("boundaries", "Step boundaries", 2, None, new_page=True)
    if flagged:
        shown = flagged[:20] + ([f"… and {len(flagged) - 20} more (summary.json)"] if len(flagged) > 20 else [])
        if contention:
            shown.append(f"{contention} of them were released on time and stalled before fio's first IO reached "
                         "the device: the host was slow to run fio (CPU contention). --realtime (SCHED_FIFO for "
                         "ssdpts's schedule and fio) or a quieter host holds the boundaries.")
        by = " by the device's view" if device else ""
        sec.blocks.append(Alert("warn", f"{len(flagged)} step boundar{'y' if len(flagged) == 1 else 'ies'} "
                                        f"over the limits{by}", shown))
    else:
        sec.blocks.append(Alert("ok", "every step boundary within the limits" + (" as the device saw it" if device else ""),
                                [f"idle at most {limit:g} ms; no overlap into or out of a TC1/QD1 step"]))
    if not device:
        sec.blocks.append(Alert("warn", "boundaries from fio's timeline, not the device's", [
            "the kernel's block tracepoints were not available for this run ("
            + str(ctx.man.doc.get("boundary_source", {}).get("why") or "not recorded") + "): each boundary is "
            "the gate's release to fio's reported run time, which cannot see the time from a step's release to "
            "its first IO reaching the device, nor from its last completion to the gate hearing of it — a host "
            "stalling fio there is missed (run as root with tracefs to measure at the block layer)"]))
    sec.blocks.append(Table("boundaries-table", "Idle and overlap at step boundaries, per round (ms)",
                            ["Test · round", "Boundaries", "Idle median", "Idle worst",
                             *(["fio timeline: idle worst"] if differs else []), "Overlap worst", "Over limit"], rows,
                            note=f"A round's boundaries: the one from the previous round (or WIPC) and those between "
                                 f"its steps. Idle: no IO in flight, "
                                 + ("as the device saw it: the previous step's last completion to the next step's "
                                    "first issue at the block layer (kernel tracepoints, 1 µs)" if device else
                                    "from each step's observed timeline (resolution 1 ms)")
                                 + (f"; beside it, fio's timeline where the two differ by more than its 1 ms "
                                    "resolution" if differs else "")
                                 + f"; beyond the planned idle after a step where the test plans one (HIR). "
                                 f"Limits: idle ≤ {limit:g} ms; no overlap, and no IO issued while another is in "
                                 f"flight, when either step is TC1/QD1, else overlap at most the previous step's "
                                 f"maximum response time (its drain). Per boundary: steps.jsonl \"boundary\" and "
                                 f"\"device\". Schedule: {priority(ctx)}."))
    return sec

def priority(ctx: RunContext) -> str:
    if ctx.spec.doc.get("realtime"):
        return "ssdpts's step gate and fio at real-time priority (SCHED_FIFO 1, --realtime)"
    return ("ssdpts's step gate and fio at normal priority (a busy host can stretch boundaries; "
            "--realtime holds them)")
