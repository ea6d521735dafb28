"""What heads each test's pages of a run's report: its set-up and test parameters (docs/pts-reference.md#report-header, the
extended tests' own lines from docs/pts-reference.md#extended) and the running header of its printed pages."""

from __future__ import annotations

from ..pts.parts import SPRANDOM_LABEL
from ..pts.registry import TESTS, title as test_title
from .context import RunContext
from .doc import PageHeader, Report, TestHeader
from .fmt import NA, fmt_bytes10, fmt_rounds, fmt_time, na, or_default
from .pages import of as kind_of
from .pages.kind import ReportKind
from ..pts.units import fmt_capacity

NO_KIND = ReportKind(lambda ctx, pids: [])  # a test this ssdpts does not know: the generic lines only


def _kind(test: str) -> ReportKind:
    return kind_of(test) or NO_KIND


def segments_text(ctx: RunContext) -> str | None:
    """The client test active range's segments as run (pts/segments.py), None when not segmented."""
    s = ctx.spec.doc
    if not s.get("ar_segments") or not ctx.man.active_range_bytes:
        return None
    from ..pts.segments import disclosure, place

    return disclosure(int(s["ar_segments"]), place(ctx.man.active_range_bytes, int(s.get("ar_amount_bytes") or 0),
                                                   int(s["ar_segments"]), int(s.get("seed") or 0)))


def extended_params(ctx: RunContext, test: str) -> list[tuple[str, str]]:
    """The lines that replace or follow the generic test parameters: time compression, then the kind's own."""
    out: list[tuple[str, str]] = []
    c = ctx.time_scale()
    if c != 1:
        out.append(("Time compression", f"every PTS time constant × {c:.4g} (one PTS minute = {ctx.spec.step_seconds:g} s)"))
    return out + _kind(test).params(ctx, test)


# ---- set-up and test parameters ----------------------------------------------------------------------------

def setup_fields(ctx: RunContext, test: str, pids: list[str], toio: str) -> list[tuple[str, str]]:
    ar_pct = ctx.spec.resolved_active_range_pct
    ar_bytes = ctx.man.active_range_bytes
    ar = (f"{ar_pct:g}%" if isinstance(ar_pct, (int, float)) else NA) + (
        f" ({fmt_bytes10(ar_bytes).split(' (')[0]})" if ar_bytes else "")
    seed = ctx.spec.seed
    pattern = "random (fio buffers)" + (f", RNG tausworthe64, base seed {seed}" if seed is not None else "")
    wipcs = [ctx.parts[p].wipc for p in pids if ctx.parts[p].wipc]
    mult = or_default(ctx.spec.wipc_capacity_multiple, 2.0)
    own1, own2 = _kind(test).preconditioning(ctx, test)
    # the sprandom fill where it ran (its step's label says so), or, where nothing ran yet, where the
    # test's WIPC would have been replaced (not TP's: pts/<kind>.SPRANDOM_FILL; WSAT and XSR have none)
    fills = getattr(TESTS.get(test), "SPRANDOM_FILL", True)
    sprandom = any(w.workload.startswith(SPRANDOM_LABEL) for w in wipcs) or (
        ctx.spec.precondition.startswith("sprandom") and not wipcs and own1 is None and fills)
    if sprandom:
        op = ctx.spec.precondition.split(":", 1)[-1]
        pc1 = ("; ".join(f"{w.workload}, TC 1 × QD 32, (1 + OP) × AR = {fmt_capacity(w.io_bytes)} in "
                         f"{w.duration_s:,.1f} s" for w in wipcs) or f"the sprandom fill, OP {op} (not reached: the run "
                                                                     "stopped first)")
        pc1 += (f": one physical fill by fio's sprandom in place of the WIPC (OP {op}"
                + (f", {ctx.spec.doc['spr_op_source']}" if ctx.spec.doc.get("spr_op_source") else "")
                + ") — not PTS compliant (docs/methodology.md#preconditioning-by-sprandom)")
    elif own1 is not None:
        pc1 = own1
    elif wipcs:
        pc1 = "; ".join(f"{w.workload}, TC 1 × QD 32, {mult:g}× AR = {fmt_capacity(w.io_bytes)} "
                        f"in {w.duration_s:,.1f} s" for w in wipcs)
    else:
        pc1 = f"SEQ 128KiB writes, {mult:g}× AR (not reached: the run stopped first)"
    max_rounds = or_default(ctx.spec.max_rounds, 25)
    pc2 = own2 if own2 is not None else f"the test loop, {toio}, until steady state (at most {max_rounds} rounds)"
    return [
        ("Data pattern", pattern),
        ("Active range", ar),
        ("AR segments", segments_text(ctx) or na(ctx.profile.get("segmentation"))),
        ("Preconditioning 1 (sprandom)" if sprandom else "Preconditioning 1 (WIPC)", pc1),
        ("Preconditioning 2 (WDPC)", pc2),
        ("Purge", ctx.purge_methods(pids)),
        ("Write cache", na(ctx.man.write_cache or ctx.profile.get("write_cache"))),
    ]


def steady_state_params(ctx: RunContext, pids: list[str], max_rounds: int) -> list[tuple[str, str]]:
    """The tracking variables, each part's steady state (or fixed plan) and the round limit."""
    tracking = []
    rounds = []
    for p in pids:
        part = ctx.parts[p]
        ss = part.steady_state
        tracking += [v.variable for v in ss.variables] if ss else []
        prefix = f"{part.part}: " if part.part else ""
        if ss is None:  # a fixed plan (HIR's wait states, XSR, operating points): no steady-state rule
            rounds.append(f"{prefix}a fixed plan, {part.rounds_run or 0} rounds run "
                          f"({part.stop_reason or 'stopped early'})")
            continue
        verdict = "reached" if part.reached else "NOT reached"
        rounds.append(f"{prefix}{verdict}, window rounds {fmt_rounds(part.window_rounds)} "
                      f"of {part.rounds_run or 0} run")
    limits = sorted({ctx.parts[p].round_limit for p in pids
                     if (ctx.parts[p].round_limit or 0) > max_rounds and ctx.parts[p].steady_state})
    extended = (f"; extended to {', '.join(map(str, limits))} after a resumption, so that a "
                "whole 5-round window runs after it (docs/methodology.md, Saving and resuming)") if limits else ""
    return [("Tracking variable" + ("s" if len(tracking) > 1 else ""), "; ".join(tracking) or NA),
            ("Steady state", "; ".join(rounds) or NA),
            ("Max rounds", f"{max_rounds}" + ("" if max_rounds == 25 else " (PTS: 25)") + extended)]


def test_header(ctx: RunContext, test: str) -> TestHeader:
    pids = ctx.part_ids(test)
    step_s = ctx.spec.step_seconds
    step = (f"{step_s:g} s" + ("" if step_s == 60 else " (PTS: 60 s — time-compressed)")) if step_s is not None else NA
    max_rounds = or_default(ctx.spec.max_rounds, 25)
    toio = ctx.toio(test)
    setup = setup_fields(ctx, test, pids, toio)
    kind = _kind(test)
    params = [
        ("Stimulus", kind.stimulus(ctx, test, pids) or NA),
        ("Demand intensity", toio),
        ("Step length", step),
    ]
    own = kind.progress(ctx, test, pids)
    if own is not None:
        params += own
    else:
        params += steady_state_params(ctx, pids, max_rounds)
    for k, v in extended_params(ctx, test):  # the extended tests' own lines replace the generic ones
        i = next((n for n, (key, _) in enumerate(params) if key == k), None)
        if i is None:
            params.append((k, v))
        else:
            params[i] = (k, v)
    return TestHeader(test, test_title(test), setup, params)


# ---- the running header of the printed pages -----------------------------------------------------------------

def page_headers(ctx: RunContext, report: Report, tests: list[str]) -> dict[str, PageHeader]:
    """The running header of every printed page: SNIA's administrative data (page label, PTS
    revision, test ID, vendor, model, sponsor, dates), the device and the platform in one line
    each, and for a test its demand intensity, active range, purge and steady-state rounds."""
    h = ctx.host
    cap = ctx.target("size_bytes")
    device = " · ".join(x for x in (
        f"Vendor: {ctx.identity('vendor')}", f"SSD model: {ctx.identity('model')}",
        f"S/N {ctx.identity('serial')}", f"FW {ctx.identity('firmware')}",
        (fmt_capacity(cap) if cap else "capacity " + NA)) if x)
    platform = " · ".join(str(x) for x in (
        f"Platform: {na(h.get('hostname'))}", na(h.get("cpu_model")), na(h.get("kernel")),
        na(ctx.man.fio_version), f"ssdpts {na(ctx.man.ssdpts_version)}") if x)
    admin = f"{report.short_header['pts']} · Test ID {ctx.test_id} · Test sponsor: {ctx.sponsor()}"
    right = [f"Test run: {fmt_time(ctx.man.created)}", f"Report: {ctx.generated}"]
    status = []
    if ctx.damage:  # on every printed page: the numbers can no longer be checked against fio's output
        status.append("DAMAGED run directory (ssdpts verify)")
    if report.partial:
        status.append(f"PARTIAL REPORT (run {ctx.status})")
    if report.compliance:
        status.append(report.compliance.title)
    out = {"": PageHeader("SNIA Solid State Storage PTS — Test Report", [admin, device, platform], right,
                          " · ".join(status))}
    for t in tests:
        th = report.tests[t]
        pids = ctx.part_ids(t)
        missed = [ctx.parts[p].title or p for p in pids
                  if ctx.parts[p].steady_state is not None and not ctx.parts[p].reached]
        params = dict(th.params)
        setup = dict(th.setup)
        ss = []
        for p in pids:
            part = ctx.parts[p]
            if part.steady_state is None:
                continue
            verdict = "reached" if part.reached else "NOT reached"
            ss.append(f"{part.part + ' ' if part.part else ''}{verdict}, rounds {fmt_rounds(part.window_rounds)}")
        test_line = " · ".join(x for x in (
            params.get("Demand intensity", ""), f"AR {setup.get('Active range', NA)}",
            f"Purge: {setup.get('Purge', NA)}",
            f"Steady state: {'; '.join(ss)}" if ss else params.get("Samples", ""),
            f"step {params.get('Step length', NA)}") if x)
        foot = list(status) + ([f"steady state NOT reached: {', '.join(missed)}"] if missed else [])
        out[t] = PageHeader(_kind(t).page_label or f"{th.title} Test – Report Page",
                            [admin, device, platform, test_line], right, " · ".join(foot))
    return out
