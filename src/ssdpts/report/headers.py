"""What heads each test's pages of a run's report: its set-up and test parameters (PTS.md §4, the
extended tests' own lines from PTS-EXTENDED.md) and the running header of its printed pages."""

from __future__ import annotations

from ..pts.registry import title as test_title
from ..pts.wsat import WsatTable
from .context import RunContext
from .doc import PageHeader, Report, TestHeader
from .fmt import NA, fmt_bytes10, fmt_fixed, fmt_rounds, fmt_time, na, or_default

# SNIA report page labels (seed 000, "SNIA report format"); a test without one gets "<title> Test – Report Page".
PAGE_LABELS = {
    "iops": "IOPS Test (REQUIRED) – Report Page",
    "tp": "Throughput Test (REQUIRED) – Report Page",
    "lat": "Latency Test (REQUIRED) – Report Page",
    "wsat": "Write Saturation Test (REQUIRED) – Report Page",
}
STIMULUS = {
    "iops": "RND; R/W mix 100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100 (outer) × block size 1024, 128, 64, "
            "32, 16, 8, 4, 0.5 KiB (inner)",
    "lat": "RND; R/W mix 100/0, 65/35, 0/100 (outer) × block size 8, 4, 0.5 KiB (inner)",
    "wsat": "RND 4KiB 0/100, continuous, one sample per step",
}


# ---- the extended tests' lines (PTS-EXTENDED.md) --------------------------------------------------------

def stimulus(ctx: RunContext, test: str) -> str | None:
    s = ctx.spec.doc
    if test == "hir":
        return ("RND 4KiB 0/100: preconditioning rounds of 30 × 1 min; then wait states 1, 2, 3, 5, 10 — each "
                f"{s.get('hir_bursts', 360)} × (5 s writes + 5, 10, 15, 25 or 50 s with no IO), each followed by "
                f"{s.get('hir_bursts', 360)} × 5 s of continuous writes (return to baseline)")
    if test == "xsr":
        g = list(s.get("xsr_minutes") or (480, 360, 480))
        return (f"TC1/QD32, one sample per minute, back to back: G1 SEQ 1024KiB W {g[0]} min, G2 RND 8KiB W "
                f"{g[1]} min, G3 SEQ 1024KiB W {g[2]} min")
    if test in ("ocp-trim", "ocp-idle-gc"):
        read = f"RND 4KiB 100/0 at TC 1 × QD 1 over the first half of the active range, {s.get('ocp_read_s', 60):g} s"
        settle, pairs = f"{s.get('ocp_settle_s', 60):g} s", int(s.get("ocp_pairs") or 1)
        if test == "ocp-trim":
            rate = s.get("ocp_trim_rate", 10.0)
            shown = ("at OCP 2.0 A.2.1's rate for the capacity, "
                     f"{float(s.get('ocp_trim_mib_s_per_tb', 117)):g} MiB/s per TB" if rate is None
                     else f"{float(rate):g}/s" if rate else "unlimited")
            return (f"{settle} idle; then {pairs} pairs, alternating: baseline: {read}; the same reads beside a "
                    f"deallocation job (fio rw=trim, {int(s.get('ocp_trim_size', 1 << 20)) // 1024} KiB ranges, "
                    f"{shown}, over the second half), then {settle} idle")
        gap = float(s.get("ocp_probe_gap_ms", 0) or 0)
        probes = f"{read}, {gap:g} ms with no IO after each read" if gap else read
        return (f"{settle} idle; then {pairs} times: baseline: {probes}; a write burst of RND 4KiB 0/100 at "
                f"{ctx.toio(test)}, {s.get('ocp_burst_s', 60):g} s; right after it the same probes (idle phase), "
                f"then {settle} idle")
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


def segments_text(ctx: RunContext) -> str | None:
    """The client test active range's segments as run (pts/segments.py), None when not segmented."""
    s = ctx.spec.doc
    if not s.get("ar_segments") or not ctx.man.active_range_bytes:
        return None
    from ..pts.segments import disclosure, place

    return disclosure(int(s["ar_segments"]), place(ctx.man.active_range_bytes, int(s.get("ar_amount_bytes") or 0),
                                                   int(s["ar_segments"]), int(s.get("seed") or 0)))


def preconditioning(ctx: RunContext, test: str) -> tuple[str, str] | None:
    """HIR's and XSR's preconditioning (the others: WIPC, then the test loop or their own WDPC)."""
    if test == "hir":
        return ("none (HIR starts from a purged device)",
                f"RND 4KiB 0/100, {ctx.toio(test)}, rounds of 30 × 1 min until the last minute's IOPS is steady")
    if test == "xsr":
        return "none (XSR starts from a purged device)", "none"
    if test == "ocp-idle-gc":
        return ("none (starts from a purged device)",
                f"RND 4KiB 0/100, {ctx.toio(test)}, rounds of 30 × 1 min until the last minute's IOPS is steady (as HIR)")
    return None


def extended_params(ctx: RunContext, test: str) -> list[tuple[str, str]]:
    s = ctx.spec.doc
    out: list[tuple[str, str]] = []
    c = ctx.time_scale()
    if c != 1:
        out.append(("Time compression", f"every PTS time constant × {c:.4g} (one PTS minute = {ctx.spec.step_seconds:g} s)"))
    if test == "hir":
        out.append(("Idle periods", "every thread idle at once: one fio job per burst, the next released by the "
                                    "step gate's timer when the planned idle has passed (measured per boundary)"))
    if test in ("cbw", "dirth"):
        out.append(("Demand intensity", "TC = fio numjobs (outer 32 → 1), QD = fio iodepth (inner 32 → 1)"))
        out.append(("Operating points", f"Max: highest IOPS with mean response time < {s.get('op_ceiling_ms', 5):g} ms; "
                                        f"Mid: {s.get('op_mid', 'iops-midpoint')}; Min: TC1/QD1 [?]"))
    if test in ("ocp-trim", "ocp-idle-gc"):
        judged = " and ".join({"p999": "p99.9"}.get(n, n) for n in (s.get("ocp_judge") or ("mean", "p99")))
        out.append(("Pass/fail", f"{judged} read latency: the 95% interval of the change over the pairs within "
                                 f"±{float(s.get('ocp_limit_pct', 5.0)):g}% of the baseline: pass; wholly beyond it: "
                                 "fail; straddling it: inconclusive (--ocp-limit; OCP 2.0 TRIM-6/7)"))
    if test == "xsr":
        out.append(("Recovery rule", f"{s.get('xsr_recovery', 'g1-mean')}, within "
                                     f"{float(s.get('xsr_recovery_tolerance_pct', 0.0)):g}% [?]"))
    return out


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
    ext = preconditioning(ctx, test)
    if ext:
        pc1 = ext[0]
    elif test == "wsat":
        pc1 = "none (WSAT starts from a purged device)"
    elif wipcs:
        pc1 = "; ".join(f"{w.workload}, TC 1 × QD 32, {mult:g}× AR = {w.io_bytes / 1e9:,.2f} GB "
                        f"in {w.duration_s:,.1f} s" for w in wipcs)
    else:
        pc1 = f"SEQ 128KiB writes, {mult:g}× AR (not reached: the run stopped first)"
    max_rounds = or_default(ctx.spec.max_rounds, 25)
    pc2 = f"the test loop, {toio}, until steady state (at most {max_rounds} rounds)" if test != "wsat" else "none"
    if ext:
        pc2 = ext[1]
    elif test in ("cbw", "dirth"):
        pc2 = (f"the access pattern at 100% W, TC 32 × QD 32, rounds of 30 × 1 min until steady state (at most "
               f"{max_rounds} rounds)")
    return [
        ("Data pattern", pattern),
        ("Active range", ar),
        ("AR segments", segments_text(ctx) or na(ctx.profile.get("segmentation"))),
        ("Preconditioning 1 (WIPC)", pc1),
        ("Preconditioning 2 (WDPC)", pc2),
        ("Purge", ctx.purge_methods(pids)),
        ("Write cache", na(ctx.man.write_cache or ctx.profile.get("write_cache"))),
    ]


def test_header(ctx: RunContext, test: str) -> TestHeader:
    pids = ctx.part_ids(test)
    step_s = ctx.spec.step_seconds
    step = (f"{step_s:g} s" + ("" if step_s == 60 else " (PTS: 60 s — time-compressed)")) if step_s is not None else NA
    max_rounds = or_default(ctx.spec.max_rounds, 25)
    toio = ctx.toio(test)
    setup = setup_fields(ctx, test, pids, toio)
    stim = STIMULUS.get(test) or (
        "SEQ, per block size " + ", ".join(ctx.parts[p].part or p for p in pids) + ": 100/0 then 0/100"
        if test == "tp" else None) or stimulus(ctx, test) or NA
    if test == "wsat" and ctx.spec.doc.get("wsat_pattern", "rnd4k-w") != "rnd4k-w":
        w = ctx.first_workload("wsat")
        stim = f"{w.label if w else ctx.spec.doc.get('wsat_pattern')}, continuous, one sample per step (PTS 2.0 option)"
    params = [
        ("Stimulus", stim),
        ("Demand intensity", toio),
        ("Step length", step),
    ]
    if test == "wsat":
        hours, multiple = ctx.spec.wsat_hours, ctx.spec.wsat_capacity_multiple
        params.append(("Stop rule", f"{hours:g} h of steps or {multiple:g}× capacity written (TGBW)"
                       if hours is not None and multiple is not None else NA))
        for p in pids:
            part = ctx.parts[p]
            tab = part.table
            params.append(("Samples", f"{part.samples or 0} ({part.stop_reason or 'stopped early'})"))
            if isinstance(tab, WsatTable):
                params.append(("Written (TGBW)", f"{tab.tgbw_gb:,.2f} GB = {fmt_fixed(tab.drive_fills, 2)} drive fills"))
    else:
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
        params.append(("Tracking variable" + ("s" if len(tracking) > 1 else ""), "; ".join(tracking) or NA))
        params.append(("Steady state", "; ".join(rounds) or NA))
        params.append(("Max rounds", f"{max_rounds}" + ("" if max_rounds == 25 else " (PTS: 25)")))
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
        (f"{cap / 1e9:,.2f} GB" if cap else "capacity " + NA)) if x)
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
        out[t] = PageHeader(PAGE_LABELS.get(t, f"{th.title} Test – Report Page"),
                            [admin, device, platform, test_line], right, " · ".join(foot))
    return out
