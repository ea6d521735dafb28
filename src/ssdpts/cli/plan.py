"""ssdpts plan TEST... --target PATH: what 'run' would do, step by step. Touches nothing."""

from __future__ import annotations

from .common import add_run_options, prepare


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="show what run would do (touches nothing)", description=__doc__)
    add_run_options(p)
    p.add_argument("--fio", action="store_true", help="print round 1's fio job file of each test part")
    p.set_defaults(func=cmd)


def _dur(seconds: float) -> str:
    h, rem = divmod(int(round(seconds)), 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def cmd(args) -> int:
    from rich.console import Console

    from ..device.purge import select_purge
    from ..engine.base import Area, Batch
    from ..engine.fio import render_job_file
    from ..pts.steady_state import WINDOW_ROUNDS
    from ..pts.plan import active_range_bytes

    prep = prepare(args)
    spec, target = prep.spec, prep.target
    c = Console(highlight=False)
    ar = active_range_bytes(target.size_bytes, spec.ar_pct)
    purge = select_purge(target, spec.purge)
    c.print(f"[bold]target[/] {target.path} ({target.kind}, {target.size_bytes / 1e9:.2f} GB, model {target.model or '—'}, "
            f"serial {target.serial or '—'})")
    c.print(f"[bold]settings[/] profile {spec.profile}, PTS {spec.pts_version}, TC{spec.tc}/QD{spec.qd}, active range "
            f"{spec.ar_pct:g}% = {ar / 1e9:.2f} GB, step {spec.step_seconds:g} s, at most {spec.max_rounds} rounds, "
            f"ioengine {spec.ioengine}, seed {spec.seed}")
    if spec.deviations():
        c.print("[yellow]not PTS compliant:[/] " + "; ".join(spec.deviations()))
    total_written = 0
    lo_total = hi_total = 0.0
    for part in prep.parts:
        c.print(f"\n[bold]{part.title}[/]")
        if part.purge:
            c.print(f"  purge: {purge.name} — {purge.disclosure}")
        if part.wipc is not None:
            total_written += part.wipc.io_bytes
            c.print(f"  WIPC: {part.wipc.workload.label} TC{part.wipc.workload.threads}/QD{part.wipc.workload.iodepth}, "
                    f"{part.wipc.io_bytes / 1e9:.2f} GB ({spec.wipc_capacity_multiple:g} x active range)")
        steps = part.round_steps(1)
        round_s = sum(s.duration_s or 0 for s in steps)
        if part.stop_rule == "wsat":
            c.print(f"  WSAT: {steps[0].workload.label} TC{steps[0].workload.threads}/QD{steps[0].workload.iodepth}, "
                    f"one sample per {spec.step_seconds:g} s step, up to {part.wsat_max_steps} samples or "
                    f"{part.wsat_max_bytes / 1e9:.2f} GB written ({spec.wsat_capacity_multiple:g} x capacity), "
                    f"saved every {spec.wsat_chunk_steps} samples")
            total_written += part.wsat_max_bytes
            hi = part.wsat_max_steps * spec.step_seconds
            lo_total += 0
            hi_total += hi
            c.print(f"  duration: up to {_dur(hi)}")
        else:
            c.print(f"  round: {len(steps)} steps, {_dur(round_s)} per round, no delay between steps")
            for s in steps:
                w = s.workload
                c.print(f"    {s.index:3d}  {w.label:<22} TC{w.threads}/QD{w.iodepth}  {s.duration_s:g} s")
            c.print("  tracking: " + "; ".join(t.name for t in part.tracking)
                    + f" — steady state: last {WINDOW_ROUNDS} rounds, range <= 20% and best-fit excursion <= 10% of average"
                    + (", all variables in the same window" if len(part.tracking) > 1 else ""))
            lo, hi = WINDOW_ROUNDS * round_s, part.max_rounds * round_s
            lo_total += lo
            hi_total += hi
            c.print(f"  duration: {_dur(lo)} ({WINDOW_ROUNDS} rounds) to {_dur(hi)} ({part.max_rounds} rounds) plus WIPC")
        if args.fio:
            batch = Batch(steps=steps, filename=target.real_path, area=Area(0, ar), seed=spec.seed, ioengine=spec.ioengine)
            text, _ = render_job_file(batch)
            c.print(f"  [dim]# round 1 fio job file of {part.title}[/]")
            c.print(text, markup=False)
    c.print(f"\n[bold]total[/]: WIPC and WSAT write up to {total_written / 1e9:.2f} GB, plus the writes of the rounds; "
            f"estimated {_dur(lo_total)} to {_dur(hi_total)} of stimulus plus WIPC time (device-dependent)")
    c.print("[dim]plan touched nothing.[/]")
    return 0
