"""ssdpts verify RUN_DIR...: check run directories against the checksums and step counts recorded
as each round was written (missing, truncated or altered raw files, steps.jsonl cut short).
Reads only. Exit 0 when every run is intact, 1 when one is damaged, 2 when one is not a run."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="check run directories for missing, truncated or altered files",
                       description=__doc__)
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories made by 'ssdpts run'")
    p.add_argument("--json", action="store_true", help="print the result as JSON (one object per run)")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..results import integrity

    results = [integrity.check(d) for d in args.run_dirs]
    for res in results:
        if args.json:
            print(integrity.to_json(res))
            continue
        print(res.summary_line())
        for p in res.problems:
            print(f"  {p.line()}")
        for note in res.notes:
            print(f"  note: {note}")
    return 0 if all(r.intact for r in results) else 1
