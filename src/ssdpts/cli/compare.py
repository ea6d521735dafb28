"""ssdpts compare RUN_DIR...: side-by-side comparison of runs with performance deltas against a
baseline, or (--repeats) the median run and relative standard error of repeated runs of one device.
Reads run directories only; never runs fio or touches a device."""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare runs (deltas against a baseline) or analyse repeated runs (--repeats)",
        description="Compare the results of runs side by side: IOPS matrix, throughput, latency and the WSAT "
                    "steady level, with the performance delta of each run against the baseline (positive = better: "
                    "speed-type A/B − 1, time-type B/A − 1). Runs whose settings make the comparison invalid "
                    "(profile, TC/QD, active range, step duration, PTS version, data pattern, ioengine) are refused "
                    "unless --allow-different. With --repeats: N >= 3 repeated runs of one device, the median run's "
                    "value and the relative standard error per metric (docs/compare.md).")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories made by 'ssdpts run'")
    p.add_argument("--baseline", metavar="RUN_DIR",
                   help="the run the others are measured against (default: the first RUN_DIR); may be one of the "
                        "RUN_DIRs or an extra one")
    p.add_argument("--allow-different", action="store_true",
                   help="compare even when settings differ; the differences are printed on the report")
    p.add_argument("--repeats", action="store_true",
                   help="the runs are repeats of one device with the same settings (N >= 3): report the median "
                        "run's value and the RSE per metric instead of deltas")
    p.add_argument("--format", default=None, metavar="html,pdf,json",
                   help="what --out writes, comma-separated (default: html,pdf; json: the numbers, machine-readable)")
    p.add_argument("--out", metavar="PATH",
                   help="write the comparison there as well as printing it: a directory (ssdpts-compare.<fmt>, "
                        "ssdpts-repeats.<fmt> with --repeats, inside it) or a file name (with several formats its "
                        "suffix is replaced by each format's); without --out nothing is written")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..compare import analyze_repeats, compare_runs, comparison_text, repeats_text
    from ..errors import UserError

    from .. import kinds

    if args.format is not None and not args.out:
        raise UserError("--format says what --out writes: give --out PATH (a directory or a file name) as well")
    kind = kinds.one_kind([*args.run_dirs, *([args.baseline] if args.baseline else [])])
    if not kind.pts:
        return _cmd_other(args, kind)
    if args.repeats:
        if args.baseline:
            raise UserError("--repeats has no baseline (every run is a repeat of the same measurement): drop --baseline")
        result = analyze_repeats(args.run_dirs, allow_different=args.allow_different)
        text = repeats_text(result)
    else:
        result = compare_runs(args.run_dirs, args.baseline, allow_different=args.allow_different)
        text = comparison_text(result)
    from ..report.compare_html import parse_formats, render  # matplotlib and jinja2 load only here

    from .report import warn_damage

    formats = parse_formats(args.format or "html,pdf")
    print(text)
    warn_damage(list(dict.fromkeys([*args.run_dirs, *([args.baseline] if args.baseline else [])])))
    for path in render(result, formats=formats, out=args.out) if args.out else ():
        print(f"wrote {path}")
    sys.stdout.flush()
    return 0


def _cmd_other(args, kind) -> int:
    """Quick runs (ssdpts quick) or trace replays (ssdpts trace replay): each figure's median against
    the baseline's, with the delta of docs/compare.md."""
    from ..errors import UserError

    if args.repeats:
        raise UserError(f"--repeats is for repeated PTS runs: each of the {kind.what} is already the median of its "
                        "runs; drop --repeats")
    from ..report.compare_html import parse_formats

    formats = parse_formats(args.format or "html,pdf")  # checked before anything is read
    cmp, text = kind.compare(args.run_dirs, args.baseline)
    print(text)
    for path in kind.render_comparison(cmp, formats=formats, out=args.out) if args.out else ():
        print(f"wrote {path}")
    sys.stdout.flush()
    return 0
