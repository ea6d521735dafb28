"""ssdpts plan TEST... --target PATH: what 'run' would do, step by step, and how long each test
takes (at the PTS's length unless --step-seconds compresses it). Touches nothing."""

from __future__ import annotations

from itertools import groupby

from .common import add_run_options, prepare


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="show what run would do and how long each test takes (touches nothing)",
                       description=__doc__)
    add_run_options(p)
    p.add_argument("--fio", action="store_true", help="print round 1's fio job file of each test part")
    p.set_defaults(func=cmd)


def fmt_duration(seconds: float) -> str:
    h, rem = divmod(int(round(seconds)), 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m or seconds >= 10:
        return f"{m}m{s:02d}s"
    return f"{seconds:.3g}s"


def step_runs(steps) -> list[str]:
    """Consecutive steps of the same stimulus as one line: '360 x RND 4KiB 0/100 TC4/QD32 5 s, then
    5 s idle — wait state 1: ...'."""
    out = []
    for (label, tc, qd, dur, idle), group in groupby(
            steps, key=lambda s: (s.workload.label, s.workload.threads, s.workload.iodepth, s.duration_s,
                                  s.idle_after_s)):
        g = list(group)
        cells = {s.cell_label for s in g}
        line = f"{len(g):4d} × {label:<20} TC{tc}/QD{qd}  {dur:g} s" + (f", then {idle:g} s with no IO" if idle else "")
        if len(cells) == 1 and g[0].cell_label:
            line += f"  — {g[0].cell_label}"
        out.append(line)
    return out


def cmd(args) -> int:
    """ssdpts plan: what a run would do, printed without touching the device. One piece: the plan
    printed in the order a user reads it, each section a few lines on the same resolved plan."""
    from rich.console import Console
    from rich.markup import escape

    from ..device.identify import purge_facts
    from ..device.purge.registry import select_purge
    from ..engine.base import Area, Batch
    from ..engine.jobfile import render_job_file, zoned_abs
    from ..pts.plan import active_range_bytes, part_seconds, segments_of
    from ..pts.segments import disclosure
    from ..pts.registry import title as test_title
    from ..pts.steady_state import WINDOW_ROUNDS
    from ..device.side import purge_choice
    from ssdpts.run.session import run_deviations

    prep = prepare(args)
    spec, target = prep.spec, prep.target
    c = Console(highlight=False)
    usable, verdict = plan_verdict(args, prep)
    c.print(("[bold]safety[/] " if usable else "[bold red]refused[/] ") + escape(verdict))
    ar = active_range_bytes(target.size_bytes, spec.ar_pct)
    info = purge_facts(target) if target.kind == "block" else None  # the device probed once (read-only)
    purge = select_purge(target, spec.purge, info)
    c.print(f"[bold]target[/] {target.path} ({target.kind}, {target.size_bytes / 1e9:.2f} GB, model {target.model or '—'}, "
            f"serial {target.serial or '—'})")
    c.print(f"[bold]purge[/] {purge.name}" + (" (auto)" if spec.purge == "auto" else "")
            + f"; --purge methods this device supports: {', '.join(supported_purges(target, info))}")
    c.print(f"[bold]settings[/] profile {spec.profile}, PTS {spec.pts_version}, TC{spec.tc}/QD{spec.qd}, active range "
            f"{spec.ar_pct:g}% = {ar / 1e9:.2f} GB, step {spec.step_seconds:g} s, at most {spec.max_rounds} rounds, "
            f"ioengine {spec.ioengine}, seed {spec.seed}")
    segs = segments_of(spec, ar)
    if segs:
        c.print(f"[bold]segments[/] {disclosure(spec.ar_segments, segs)}; fio: random_distribution="
                f"{zoned_abs(segs)[:60]}…", markup=True)
    # The run's own list: what the options ask for and what the target forces (lab defect D8:
    # a 4096-byte-LBA namespace leaves out the 0.5 KiB block sizes), and a fallback purge.
    deviations = run_deviations(spec, target, purge_choice(purge))
    if deviations:
        c.print("[yellow]not PTS compliant:[/] " + "; ".join(deviations))
    total_written = 0
    lo_total = hi_total = 0.0
    per_test: dict[str, list[float]] = {}
    for part in prep.parts:
        c.print(f"\n[bold]{part.title}[/]")
        if part.purge:
            c.print(f"  purge: {purge.name} — {purge.disclosure}")
        if part.wipc is not None:
            total_written += part.wipc.io_bytes
            c.print(f"  WIPC: {part.wipc.workload.label} TC{part.wipc.workload.threads}/QD{part.wipc.workload.iodepth}, "
                    f"{part.wipc.io_bytes / 1e9:.2f} GB ({spec.wipc_capacity_multiple:g} x active range)")
        steps = part.round_steps(1)
        lo, hi = part_seconds(part, spec)
        if part.stop_rule == "wsat":
            c.print(f"  WSAT: {steps[0].workload.label} TC{steps[0].workload.threads}/QD{steps[0].workload.iodepth}, "
                    f"one sample per {spec.step_seconds:g} s step, up to {part.wsat_max_steps} samples or "
                    f"{part.wsat_max_bytes / 1e9:.2f} GB written ({spec.wsat_capacity_multiple:g} x capacity), "
                    f"saved every {spec.wsat_chunk_steps} samples")
            total_written += part.wsat_max_bytes
            c.print(f"  duration: up to {fmt_duration(hi)}")
        elif part.stop_rule == "fixed":
            every = [s for r in range(1, part.max_rounds + 1) for s in part.round_steps(r)]
            c.print(f"  a fixed plan of {len(every)} steps in {part.max_rounds} rounds (one fio process and one save "
                    f"each, at most {max(len(part.round_steps(r)) for r in range(1, part.max_rounds + 1))} steps):")
            for line in step_runs(every):
                c.print("    " + line, markup=False)
            if part.needs:
                c.print(f"  [dim]the TC/QD of each point is chosen from {part.needs}'s steady-state window "
                        "(shown: placeholders)[/]")
            c.print(f"  duration: {fmt_duration(hi)}")
        else:
            round_s = sum(s.planned_s for s in steps)
            c.print(f"  round: {len(steps)} steps, {fmt_duration(round_s)} per round, no delay between steps")
            for line in step_runs(steps):
                c.print("    " + line, markup=False)
            c.print("  tracking: " + "; ".join(t.name for t in part.tracking)
                    + f" — steady state: last {WINDOW_ROUNDS} rounds, range <= 20% and best-fit excursion <= 10% of average"
                    + (", all variables in the same window" if len(part.tracking) > 1 else ""))
            c.print(f"  duration: {fmt_duration(lo)} ({WINDOW_ROUNDS} rounds) to {fmt_duration(hi)} ({part.max_rounds} rounds)"
                    + (" plus WIPC" if part.wipc is not None else ""))
        lo_total += lo
        hi_total += hi
        t = per_test.setdefault(part.test, [0.0, 0.0])
        t[0] += lo
        t[1] += hi
        if args.fio:
            batch = Batch(steps=steps, filename=target.real_path, area=Area(0, ar, segs), seed=spec.seed,
                          ioengine=spec.ioengine)
            text, _ = render_job_file(batch)
            c.print(f"  [dim]# round 1 fio job file of {part.title}[/]")
            c.print(text, markup=False, soft_wrap=True)  # a job file line is never wrapped: it stays usable as is
    c.print("\n[bold]wall time per test[/] (stimulus; purge and WIPC come on top and depend on the device):")
    for test, (lo, hi) in per_test.items():
        span = fmt_duration(hi) if lo == hi else f"{fmt_duration(lo)} to {fmt_duration(hi)}"
        c.print(f"  {test_title(test):<44} {span}")
    c.print(f"\n[bold]total[/]: WIPC and WSAT write up to {total_written / 1e9:.2f} GB, plus the writes of the rounds; "
            f"estimated {fmt_duration(lo_total)} to {fmt_duration(hi_total)} of stimulus plus WIPC time (device-dependent)")
    c.print("[dim]plan touched nothing.[/]")
    if not usable:
        c.print(f"[bold red]'ssdpts run' would refuse this target[/]: {escape(verdict)}")
        return 2
    return 0


def supported_purges(target, info: dict | None) -> list[str]:
    """The --purge methods ``target`` supports: those 'ssdpts run' would accept for it (select_purge
    on the device's capabilities, ``info``), strongest first as the registry lists them."""
    from ..device.purge.registry import method_names, select_purge
    from ..errors import UserError

    out = []
    for name in method_names():
        if name == "auto":
            continue
        try:
            select_purge(target, name, info if info is not None else {})
        except UserError:
            continue
        out.append(name)
    return out


def plan_verdict(args, prep) -> tuple[bool, str]:
    """What 'ssdpts run' would say about the target before writing anything (device/safety.preview,
    the results directory on the target's stack), in its words."""
    from ..device.safety import guard as safety
    from ..device.safety import stack
    from ..pts.plan import required_bytes

    target = prep.target
    needed = required_bytes(prep.parts) if target.kind == "block" else target.size_bytes
    usable, line = safety.preview(target, needed_bytes=needed, confirm=getattr(args, "destroy_data_on", None))
    if usable:
        why = stack.out_dir_conflict(target, getattr(args, "out", None) or "ssdpts-runs")
        if why:
            return False, why
    return usable, line
