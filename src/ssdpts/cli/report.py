"""ssdpts report RUN_DIR: (re)generate the HTML and PDF report of a run from its run directory."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="render the HTML and PDF report of a run directory",
                       description="Render the SNIA-format report of a run from its run directory alone "
                                   "(manifest.json, steps.jsonl, summary.json); never runs fio or touches a device. "
                                   "Works on interrupted runs too: the report is then marked PARTIAL.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run directory made by 'ssdpts run' or 'ssdpts demo'")
    p.add_argument("--format", default=None, metavar="html,pdf",
                   help="which formats to write, comma-separated (default: html,pdf; none with --ocptv unless given)")
    p.add_argument("--out", metavar="PATH",
                   help="where to write: a directory, or a file name (with several formats its suffix is replaced "
                        "by each format's); default: report.html and report.pdf in RUN_DIR")
    p.add_argument("--targets", metavar="FILE",
                   help="datasheet targets (the vendor's datasheet or an OCP-style target table) as CSV with the "
                        "columns figure,limit,direction: page 1 then gives the difference and pass/fail per figure "
                        "(docs/report.md lists the figures)")
    p.add_argument("--ocptv", metavar="FILE",
                   help="write the run's results as OCP Test & Validation output (JSON lines, schema 2.0: a test step "
                        "per part with its measurements, a validator and diagnosis per target of --targets) to FILE; "
                        "the HTML and PDF only when --format is given too (docs/report.md)")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from .. import kinds
    from ..report import parse_formats  # matplotlib and jinja2 load only here (Chromium for the PDF)

    kind = kinds.of(args.run_dir)
    if args.ocptv:
        if not kind.pts:
            raise UserError(f"--ocptv: {args.run_dir} is a {kind.name} run; OCPTV output is made for runs of "
                            "'ssdpts run' (PTS and OCP tests)")
        from ..report import ocptv

        print(ocptv.write(Path(args.run_dir), args.ocptv, targets=args.targets))
    if args.format is not None or not args.ocptv:
        formats = parse_formats(args.format or "html,pdf")
        for path in kind.render(Path(args.run_dir), formats, args.out or None, targets=args.targets):
            print(path)
    warn_damage([Path(args.run_dir)])
    return 0


def warn_damage(run_dirs) -> None:
    """One warning line per problem 'ssdpts verify' finds, the results library's record of the run
    included (report and compare still work: the run's summary may be right, but it can no longer be
    checked against fio's raw output)."""
    import sys

    from ..library.db import compare_with_library
    from ..results.verify import integrity

    for d in run_dirs:
        res = integrity.check(d)
        for p in [*res.problems, *compare_with_library(res)[0]]:
            print(f"ssdpts: warning: {d} is damaged: {p.line()}", file=sys.stderr)
