"""ssdpts plan TEST... --target PATH: what 'run' would do, step by step, and how long each test
takes (at the PTS's length unless --step-seconds compresses it). Touches nothing."""

from __future__ import annotations

import json

from ..errors import UserError
from .common import add_run_options
from ..pts.units import fmt_capacity


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="show what run would do and how long each test takes (touches nothing)",
                       description=__doc__)
    add_run_options(p, fio_path=False)
    p.add_argument("--fio", action="store_true", help="print round 1's fio job file of each test part")
    p.add_argument("--json", action="store_true",
                   help="print the plan as one JSON object instead (units in the key names: _bytes, _s, _pct; "
                        "with --fio each part's fio_job_file too; README.md); the exit status is the same")
    p.add_argument("--write-rate", metavar="SEQ[,RND]", type=write_rates,
                   help="the drive's write rate in MB/s, for the preconditioning's time both ways: SEQ that of SEQ "
                        "128KiB writes (the PTS's WIPC), RND that of RND 4KiB writes at QD32 (the sprandom fill; "
                        "SEQ when not given); an estimate (docs/methodology.md#time-to-result)")
    p.add_argument("--spr-op", metavar="OP", type=spr_op,
                   help="the over-provisioning the sprandom fill is shown at beside the PTS's WIPC, as "
                        "--precondition sprandom:OP takes it (0.07 or 7%%); a sprandom plan shows its own")
    p.set_defaults(func=cmd)


def write_rates(text: str) -> tuple[float, float]:
    """'3000' or '3000,1200' (MB/s) -> (SEQ, RND) in bytes/s."""
    import argparse

    try:
        vals = [float(v) for v in text.split(",")]
    except ValueError:
        vals = []
    if not 1 <= len(vals) <= 2 or min(vals) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give SEQ[,RND] in MB/s, e.g. 3000 or 3000,1200")
    return vals[0] * 1e6, vals[-1] * 1e6


def spr_op(text: str) -> float:
    """An OP as --precondition sprandom:OP takes it."""
    import argparse

    from .common import parse_precondition

    try:
        _, op = parse_precondition(f"sprandom:{text}")
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    assert op is not None
    return op


def fmt_duration(seconds: float) -> str:
    h, rem = divmod(int(round(seconds)), 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m or seconds >= 10:
        return f"{m}m{s:02d}s"
    return f"{seconds:.3g}s"


def step_lines(runs) -> list[str]:
    """Each StepRun (run/preview.py) as one line: '360 x RND 4KiB 0/100 TC4/QD32 5 s, then 5 s idle
    — wait state 1: ...'."""
    out = []
    for r in runs:
        line = (f"{r.count:4d} × {r.label:<20} TC{r.threads}/QD{r.iodepth}  {r.duration_s:g} s"
                + (f", then {r.idle_after_s:g} s with no IO" if r.idle_after_s else ""))
        if r.cell_label:
            line += f"  — {r.cell_label}"
        out.append(line)
    return out


def cmd(args) -> int:
    """ssdpts plan: what a run would do (run/preview.py), printed without touching the device, or
    as one JSON object (--json)."""
    from ssdpts.run.preview import preview
    from .request import run_request

    pv = preview(run_request(args, plan=True), job_files=args.fio, rates=args.write_rate, spr_op=args.spr_op)
    if args.json:
        if pv.purge_refusal:
            raise UserError(pv.purge_refusal)
        print(json.dumps(pv.to_dict(), indent=1, ensure_ascii=False))
    else:
        print_preview(pv)
    return 0 if pv.usable else 2


def print_preview(pv) -> None:
    """The plan printed in the order a user reads it, each section a few lines of the preview."""
    from rich.console import Console
    from rich.markup import escape

    from ..pts.registry import title as test_title
    from ..pts.steady_state import WINDOW_ROUNDS

    c = Console(highlight=False)
    c.print(("[bold]safety[/] " if pv.usable else "[bold red]refused[/] ") + escape(pv.verdict))
    if pv.purge_refusal:
        raise UserError(pv.purge_refusal)
    c.print(f"[bold]target[/] {pv.target_path} ({pv.target_kind}, {fmt_capacity(pv.target_size_bytes)}, model "
            f"{pv.target_model or '—'}, serial {pv.target_serial or '—'})")
    c.print(f"[bold]purge[/] {pv.purge}" + (" (auto)" if pv.purge_auto else "")
            + f"; --purge methods this device supports: {', '.join(pv.purges_supported)}")
    c.print(f"[bold]settings[/] profile {pv.profile}, PTS {pv.pts_version}, TC{pv.threads}/QD{pv.iodepth}, active range "
            f"{pv.active_range_pct:g}% = {fmt_capacity(pv.active_range_bytes)}, step {pv.step_s:g} s, at most "
            f"{pv.rounds_max} rounds, ioengine {pv.ioengine}, seed {pv.seed}")
    from ssdpts.engine.fiobin import SOURCES

    c.print(f"[bold]fio[/] {escape(pv.fio_path)} ({pv.fio_version}, {SOURCES.get(pv.fio_source, pv.fio_source)}; "
            f"sprandom: {'yes' if pv.fio_sprandom else 'no'}); 'ssdpts run --fio PATH' runs another")
    if pv.precondition != "pts":
        c.print(f"[bold]preconditioning[/] by fio's sprandom, OP {pv.precondition.split(':', 1)[1]}"
                + (f" ({escape(pv.spr_op_source)})" if pv.spr_op_source else "")
                + ": one physical fill of the active range in place of the WIPC (TP keeps its WIPC) "
                "(docs/methodology.md#preconditioning-by-sprandom)")
    if pv.segments:
        c.print(f"[bold]segments[/] {pv.segments}; fio: random_distribution={pv.segments_fio[:60]}…", markup=True)
    # The run's own list: what the options ask for and what the target forces (lab defect D8:
    # a 4096-byte-LBA namespace leaves out the 0.5 KiB block sizes), and a fallback purge.
    if pv.deviations:
        c.print("[yellow]not PTS compliant:[/] " + "; ".join(pv.deviations))
    for part in pv.parts:
        _print_part(c, pv, part, WINDOW_ROUNDS)
    c.print("\n[bold]wall time per test[/] (stimulus; purge and WIPC come on top and depend on the device):")
    for test, (lo, hi) in pv.tests.items():
        written = sum(p.wsat_bytes_max or 0 for p in pv.parts if p.test == test and p.stop_rule == "wsat")
        span = (fmt_duration(hi) if lo == hi else
                f"up to {fmt_duration(hi)}, less once {fmt_capacity(written)} is written" if written else
                f"{fmt_duration(lo)} to {fmt_duration(hi)}")
        c.print(f"  {test_title(test):<44} {span}")
    pre = "the sprandom fill (TP: WIPC)" if pv.precondition != "pts" else "WIPC"
    c.print(f"\n[bold]total[/]: {pre} and WSAT write up to {fmt_capacity(pv.written_bytes_max)}, plus the writes of the "
            f"rounds; estimated {fmt_duration(pv.duration_min_s)} to {fmt_duration(pv.duration_max_s)} of stimulus "
            f"plus {pre} time (device-dependent)")
    _print_both(c, pv)
    c.print("[dim]plan touched nothing.[/]")
    if not pv.usable:
        c.print(f"[bold red]'ssdpts run' would refuse this target[/]: {escape(pv.verdict)}")


def _print_part(c, pv, part, window_rounds: int) -> None:
    c.print(f"\n[bold]{part.title}[/]")
    if part.purge:
        c.print(f"  purge: {pv.purge} — {pv.purge_disclosure}")
    if part.wipc_method == "sprandom":
        op = float(pv.precondition.split(":", 1)[1])
        c.print(f"  preconditioning by sprandom: {part.wipc_label} TC{part.wipc_threads}/QD{part.wipc_iodepth}, up to "
                f"{fmt_capacity(part.wipc_bytes)} ({1 + op:g} x active range: its physical capacity, written once)")
    elif part.wipc_label is not None:
        c.print(f"  WIPC: {part.wipc_label} TC{part.wipc_threads}/QD{part.wipc_iodepth}, "
                f"{fmt_capacity(part.wipc_bytes)} ({pv.wipc_capacity_multiple:g} x active range)")
    if part.stop_rule == "wsat":
        first = part.steps[0]
        c.print(f"  WSAT: {first.label} TC{first.threads}/QD{first.iodepth}, one sample per {pv.step_s:g} s step, up to "
                f"{part.wsat_samples_max} samples or {fmt_capacity(part.wsat_bytes_max)} written "
                f"({pv.wsat_capacity_multiple:g} x capacity), saved every {pv.wsat_chunk_samples} samples")
        c.print(f"  duration: up to {fmt_duration(part.duration_max_s)}")
    elif part.stop_rule == "fixed":
        c.print(f"  a fixed plan of {part.steps_total} steps in {part.rounds_max} rounds (one fio process and one save "
                f"each, at most {part.round_steps_max} steps):")
        for line in step_lines(part.steps):
            c.print("    " + line, markup=False)
        if part.needs:
            c.print(f"  [dim]the TC/QD of each point is chosen from {part.needs}'s steady-state window "
                    "(shown: placeholders)[/]")
        c.print(f"  duration: {fmt_duration(part.duration_max_s)}")
    else:
        c.print(f"  round: {part.round_steps} steps, {fmt_duration(part.round_s)} per round, no delay between steps")
        for line in step_lines(part.steps):
            c.print("    " + line, markup=False)
        c.print("  tracking: " + "; ".join(part.tracking)
                + f" — steady state: last {window_rounds} rounds, range <= 20% and best-fit excursion <= 10% of average"
                + (", all variables in the same window" if len(part.tracking) > 1 else ""))
        c.print(f"  duration: {fmt_duration(part.duration_min_s)} ({window_rounds} rounds) to "
                f"{fmt_duration(part.duration_max_s)} ({part.rounds_max} rounds)"
                + ("" if part.wipc_label is None else " plus the sprandom fill" if part.wipc_method == "sprandom"
                   else " plus WIPC"))
    if part.fio_job_file is not None:
        c.print(f"  [dim]# round 1 fio job file of {part.title}[/]")
        c.print(part.fio_job_file, markup=False, soft_wrap=True)  # a job file line is never wrapped: usable as is


def _cost(n: int | None, secs: float | None) -> str:
    if n is None:
        return "—"
    return fmt_capacity(n) + (f", {fmt_duration(secs)}" if secs is not None else "")


def _print_both(c, pv) -> None:
    """Each part's preconditioning both ways, side by side: bytes, and time at --write-rate."""
    rows = [p for p in pv.parts if p.precondition_pts_bytes is not None or p.precondition_sprandom_bytes is not None]
    if not rows:
        return
    from ..pts.steady_state import WINDOW_ROUNDS

    rated = pv.write_rate_seq_bytes_per_s is not None
    op = f"OP {pv.spr_op_shown:g}" if pv.spr_op_shown is not None else "no OP known: --spr-op OP"
    c.print(f"\n[bold]preconditioning both ways[/] (docs/methodology.md#time-to-result): the PTS's WIPC (none: "
            f"its rounds precondition it) | the sprandom fill ({op}); either is followed by {WINDOW_ROUNDS} to {pv.rounds_max} rounds")
    for p in rows:
        pts = _cost(p.precondition_pts_bytes, p.precondition_pts_s) if p.precondition_pts_bytes is not None else "none"
        spr = _cost(p.precondition_sprandom_bytes, p.precondition_sprandom_s)
        if p.precondition_sprandom_bytes is None and p.precondition_pts_bytes is not None and pv.spr_op_shown is not None:
            spr = "none: keeps its WIPC (a sequential steady state, docs/methodology.md#preconditioning-by-sprandom)"
        c.print(f"  {p.title}: WIPC {pts} | sprandom {spr}")
    if rated:
        c.print(f"  [dim]time estimated at {pv.write_rate_seq_bytes_per_s / 1e6:g} MB/s of SEQ 128KiB writes and "
                f"{pv.write_rate_rnd_bytes_per_s / 1e6:g} MB/s of RND 4KiB writes (--write-rate): an estimate; "
                "the rounds to steady state after each are measured, not planned[/]")
    else:
        c.print("  [dim]give --write-rate SEQ[,RND] (MB/s) for their time[/]")
