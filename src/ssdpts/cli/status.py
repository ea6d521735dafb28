"""ssdpts status [DIR...] [--json] [--watch]: every run directory under DIR (default ./ssdpts-runs),
read-only and without taking any lock: running, interrupted, failed, complete or damaged; its
process, tests, part, round and step, time elapsed and left, the last tracking values against the
steady-state limits, device and host. See docs/status.md."""

from __future__ import annotations

import json
import os
import sys
import time

from .plan import fmt_duration


def add_parser(sub) -> None:
    p = sub.add_parser("status", help="every run under DIR at a glance: running, interrupted, failed, complete, damaged "
                                      "(read-only, takes no lock)", description=__doc__)
    p.add_argument("dirs", nargs="*", metavar="DIR", default=["ssdpts-runs"],
                   help="directories that hold run directories, searched recursively (default: ./ssdpts-runs)")
    p.add_argument("--json", action="store_true", help="print the runs as one JSON document on one line (with --watch: "
                                                       "one per refresh)")
    p.add_argument("--watch", action="store_true", help="refresh every --interval until Ctrl-C: in place on a "
                                                        "terminal, a frame after another into a pipe or file")
    p.add_argument("--openmetrics", nargs="?", const="-", metavar="FILE",
                   help="the runs as metrics (docs/status.md, Live metrics): OpenMetrics text on standard output, "
                        "or into FILE in the Prometheus text format node_exporter's textfile collector reads "
                        "(replaced whole; with --watch kept current every --interval)")
    p.add_argument("--serve", metavar="ADDR:PORT",
                   help="answer /metrics on ADDR:PORT until Ctrl-C, each scrape reading the runs afresh "
                        "(e.g. 127.0.0.1:9877, or :9877 on every address)")
    p.add_argument("--interval", type=float, default=2.0, metavar="S", help="seconds between refreshes (default: 2)")
    p.add_argument("--all", action="store_true", help="list complete runs one by one too (default: counted only, "
                                                     "unless nothing else is there)")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..errors import UserError
    from ssdpts.status import counts, scan

    if args.interval <= 0:
        raise UserError(f"--interval {args.interval:g}: give a positive number of seconds")
    if args.serve is not None or args.openmetrics is not None:
        return _metrics(args)
    if not args.watch:
        runs = scan(args.dirs)
        if args.json:  # compact: 1,000 runs make a megabyte, which json's indenting encoder writes 5x slower
            print(json.dumps(_doc(args.dirs, runs), ensure_ascii=False, separators=(",", ":")))
        else:
            _print(render(args.dirs, runs, show_complete=args.all))
        return 0
    try:
        _watch(args)
    except KeyboardInterrupt:  # Ctrl-C is how a watch ends: quietly, exit 0
        pass
    except BrokenPipeError:  # the reader of the pipe went away (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error from the flush at exit
    return 0


def _metrics(args) -> int:
    """--openmetrics and --serve (ssdpts/metrics.py)."""
    from .. import metrics
    from ..errors import UserError

    if args.json:
        raise UserError("--json and --openmetrics/--serve are two formats: give one")
    from ssdpts.results.reader import find_run_dirs

    find_run_dirs(args.dirs)  # a DIR that is not a directory: one line now, not a failed scrape later
    if args.serve is not None:
        host, _, port = args.serve.rpartition(":")
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise UserError(f"--serve {args.serve}: give ADDR:PORT, e.g. 127.0.0.1:9877 (or :9877 for every address)")
        try:
            server, _thread = metrics.serve(args.serve, args.dirs)
        except OSError as exc:
            raise UserError(f"--serve {args.serve}: cannot listen there ({exc.strerror}): give another address or "
                            "port") from None
        print(f"serving http://{host or '0.0.0.0'}:{port}/metrics (Ctrl-C ends)", flush=True)
        try:
            while True:
                if args.openmetrics not in (None, "-"):
                    metrics.write_textfile(args.openmetrics, args.dirs)
                time.sleep(args.interval)
        except KeyboardInterrupt:
            server.shutdown()
        return 0
    if args.openmetrics == "-":
        if args.watch:
            raise UserError("--watch --openmetrics keeps a file current: give it a FILE (standard output gets the "
                            "metrics once)")
        sys.stdout.buffer.write(metrics.exposition(args.dirs))
        sys.stdout.flush()
        return 0
    try:
        while True:
            try:
                metrics.write_textfile(args.openmetrics, args.dirs)
            except OSError as exc:
                raise UserError(f"cannot write {args.openmetrics} ({exc.strerror}): give a writable FILE") from None
            if not args.watch:
                return 0
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _watch(args) -> None:
    """A frame per interval: JSON lines with --json; redrawn in place on a terminal; into a pipe or
    file, one text frame after another, each under its time."""
    from ssdpts.status import scan

    if args.json:
        while True:
            print(json.dumps(_doc(args.dirs, scan(args.dirs)), ensure_ascii=False, separators=(",", ":")), flush=True)
            time.sleep(args.interval)
    if not sys.stdout.isatty():
        import io

        from rich.console import Console

        while True:  # each frame drawn aside, then written: a closed pipe is ours to handle, not rich's exit(1)
            buf = io.StringIO()
            Console(file=buf, highlight=False, soft_wrap=True).print(
                render(args.dirs, scan(args.dirs), show_complete=args.all, stamp=True))
            sys.stdout.write(buf.getvalue() + "\n")
            sys.stdout.flush()
            time.sleep(args.interval)
    from rich.console import Console
    from rich.live import Live

    console = Console()
    with Live(console=console, auto_refresh=False, screen=False, transient=False) as live:
        while True:
            live.update(render(args.dirs, scan(args.dirs), show_complete=args.all, stamp=True), refresh=True)
            time.sleep(args.interval)


def _doc(dirs, runs) -> dict:
    from ssdpts.status import counts

    return {"format": 1, "kind": "status", "dirs": list(dirs), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "counts": counts(runs), "runs": [r.to_dict() for r in runs]}


def _print(renderable) -> None:
    from rich.console import Console

    Console(highlight=False, soft_wrap=not sys.stdout.isatty()).print(renderable)


STYLE = {"running": "bold green", "interrupted": "bold yellow", "failed": "bold red", "damaged": "bold red",
         "complete": "dim"}


def tracking_text(t) -> str:
    """'RND 4KiB 0/100 IOPS 10,128: range 12.1%/20% excursion 3.0%/10%' (✓ steady, ✗ not yet)."""
    from ssdpts.run.progress import fmt_tracking_value

    head = f"{t.name} {fmt_tracking_value(t.value)}" + ("" if t.unit in t.name else f" {t.unit}")
    if t.reached is None:
        return f"{head} ({t.rounds} of 5 rounds)"
    mark = "✓" if t.reached else "✗"
    return f"{head}: range {t.range_pct:.1f}%/20% excursion {t.excursion_pct:.1f}%/10% {mark}"


def where_text(r) -> str:
    """What the run is doing (or was, when it stopped)."""
    if r.state == "complete":
        missed = [p for p, why in r.stop_reasons.items() if why == "max-rounds"]
        return "steady state NOT reached: " + ", ".join(missed) if missed else "done"
    if not r.part:
        return "—"
    head = f"{r.part}" + (f" (part {r.parts_done + 1} of {r.parts_total})" if r.parts_total > 1 else "")
    near = "~" if r.step_estimated else ""
    if r.phase == "round":
        return f"{head}: round {r.round}, step {near}{r.step}/{r.steps_in_round}"
    if r.phase == "sample" and r.wsat:
        return f"{head}: sample {near}{r.step}/{r.wsat['max_samples']}"
    return f"{head}: {r.phase}"


def left_text(r) -> str:
    lo, hi = r.eta_s
    text = fmt_duration(hi) if abs(hi - lo) < 1 else f"{fmt_duration(lo)} to {fmt_duration(hi)}"
    return text + (" + purge/WIPC" if r.eta_note else "")


def render(dirs, runs, *, show_complete: bool = False, stamp: bool = False):
    """The runs, one block each (state, run, device and host; what it is doing, times; tracking and
    problems), running ones first, with a line of counts. Complete runs are counted, and listed
    one line each with ``show_complete`` (or when there is nothing else)."""
    from rich.console import Group
    from rich.text import Text

    from ssdpts.status import counts

    n = counts(runs)
    head = f"{len(runs)} run{'s' if len(runs) != 1 else ''} under {', '.join(map(str, dirs))}"
    if runs:
        head += ": " + ", ".join(f"{v} {k}" for k, v in n.items())
    if stamp:
        head += time.strftime("   (%H:%M:%S; Ctrl-C ends)")
    out = [Text(head, style="bold")]
    listed = [r for r in runs if show_complete or r.state != "complete" or len(n) == 1]
    for r in listed:
        block = Text()
        block.append(f"{r.state:<12}", style=STYLE.get(r.state, ""))
        block.append(r.name, style="bold")
        block.append(f"  {r.device} on {r.host or '?'}  {','.join(r.tests)}")
        if r.pid:
            block.append(f"  pid {r.pid}", style="green")
        pad = " " * 12
        times = f"elapsed {fmt_duration(r.elapsed_s)}" if r.elapsed_s is not None else ""
        if r.eta_s is not None:
            times += f", left {left_text(r)}"
        lines = [x for x in (where_text(r), times) if x]
        block.append("\n" + pad + " · ".join(lines), style="dim" if r.state == "complete" else "")
        notes = [tracking_text(x) for x in r.tracking]
        if r.error and r.state in ("failed", "damaged"):
            notes.append(r.error)
        notes += r.problems[:3]
        if len(r.problems) > 3:
            notes.append(f"… and {len(r.problems) - 3} more: see 'ssdpts verify {r.path}'")
        if r.note:
            notes.append(r.note)
        for x in notes:
            block.append("\n" + pad + x, style="red" if x in r.problems or x == r.error else "")
        out.append(block)
    hidden = len(runs) - len(listed)
    if hidden:
        out.append(Text(f"{hidden} complete run{'s' if hidden != 1 else ''} not listed (--all lists them)", style="dim"))
    return Group(*out)
