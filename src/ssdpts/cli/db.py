"""ssdpts db: the results library, an SQLite database of complete runs (run directories stay the
source of truth; 'db rebuild' recreates the database from them). See docs/results-db.md."""

from __future__ import annotations

import argparse
import json

from ..kinds import KINDS, PTS
from ..pts import catalog

OTHER_KINDS = tuple(k for k in KINDS if k != PTS)  # runs beside the PTS, filtered by their kind


def _db_opt(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH",
                   help="the database file (default: $SSDPTS_DB, else $XDG_DATA_HOME/ssdpts/results.db, "
                        "else ~/.local/share/ssdpts/results.db)")


def _filters(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters")
    g.add_argument("--model", help="device model contains this (case-insensitive)")
    g.add_argument("--firmware", help="firmware revision contains this")
    g.add_argument("--serial", help="serial number contains this")
    g.add_argument("--test", choices=(*catalog.names(), *OTHER_KINDS), help="runs that include this test (quick, "
                                                                             "replay: runs of that kind)")
    g.add_argument("--profile", choices=("enterprise", "client"), help="runs made with this profile")
    g.add_argument("--since", metavar="DATE", help="runs started on or after DATE (YYYY-MM-DD[THH:MM], UTC)")
    g.add_argument("--until", metavar="DATE", help="runs started on or before DATE (a date alone includes that day)")


def add_parser(sub) -> None:
    p = sub.add_parser("db", help="the results library: add runs, list them, export the data set, build its site",
                       description=__doc__)
    dsub = p.add_subparsers(dest="db_command", metavar="ACTION", parser_class=type(p))
    dsub.required = True

    a = dsub.add_parser("add", help="add complete runs to the database (interrupted or failed runs are refused)")
    a.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    _db_opt(a)
    a.set_defaults(func=cmd_add)

    ls = dsub.add_parser("list", help="list the runs in the database")
    _db_opt(ls)
    _filters(ls)
    ls.add_argument("--json", action="store_true", help="print the runs as JSON instead of a table")
    ls.set_defaults(func=cmd_list)

    e = dsub.add_parser("export", help="export every measurement-window value (one row per table cell)")
    _db_opt(e)
    e.add_argument("--format", default="csv", choices=("csv", "json", "parquet"),
                   help="csv (default), json (an array of objects) or parquet (typed columns; needs the parquet "
                        "extra: pip install 'ssdpts[parquet]')")
    e.add_argument("--out", metavar="FILE", help="write here (default: standard output; parquet needs a file)")
    e.add_argument("--metric", help="only this metric (iops, read_mb_per_s, lat_mean_us, ...)")
    _filters(e)
    e.set_defaults(func=cmd_export)

    r = dsub.add_parser("rebuild", help="recreate the database from run directories (searched recursively)")
    r.add_argument("dirs", nargs="+", metavar="DIR")
    _db_opt(r)
    r.set_defaults(func=cmd_rebuild)

    s = dsub.add_parser("schema", help="print the database schema (SQL)")
    s.set_defaults(func=cmd_schema)

    rm = dsub.add_parser("remove", help="take runs out of the database (their run directories stay unless asked)",
                         description="Remove runs from the results library, each named by its run id, directory name "
                                     "or path as 'ssdpts db list' shows them (all or nothing). The run directories "
                                     "stay where they are unless --delete-run-dirs. See docs/results-db.md.")
    rm.add_argument("runs", nargs="+", metavar="RUN")
    rm.add_argument("--delete-run-dirs", action="store_true",
                    help="delete each run's directory too (only a directory that still holds that run)")
    _db_opt(rm)
    rm.set_defaults(func=cmd_remove)

    w = dsub.add_parser("site", help="the whole library as a static site: every run, comparisons, trends, reports",
                        description="Build DIR into a static site of the library (index.html: sort, filter, search, "
                                    "select runs to compare them by 'ssdpts compare's rules, trends; each run's report). "
                                    "No server: it opens from file://, a web server or a file share. Run again, it "
                                    "reads and renders only what changed. See docs/results-db.md.")
    w.add_argument("site_dir", metavar="DIR", help="the site's directory (new, empty, or an earlier site)")
    _db_opt(w)
    w.add_argument("--jobs", type=int, metavar="N", help="reports rendered at the same time (default: one per CPU)")
    w.add_argument("--no-reports", action="store_true", help="render no report (an index and comparisons in seconds; "
                                                              "an unchanged run keeps the report an earlier build made)")
    w.set_defaults(func=cmd_site)


def _flt(args) -> dict:
    return {k: getattr(args, k) for k in ("model", "firmware", "serial", "test", "profile", "since", "until")}


def cmd_add(args) -> int:
    from ssdpts.library.db import ResultsDB

    with ResultsDB(args.db) as db:
        for run, replaced in db.add(args.run_dirs):
            mark = f" (DAMAGED, left out of export: {run.damage[0]}; see 'ssdpts verify')" if run.damage else ""
            print(f"{'updated' if replaced else 'added'} {run.uid} {run.name}{mark}")
        print(f"database: {db.path}")
    return 0


LIST_COLUMNS = (("run_uid", "run"), ("status", "status"), ("created", "started (UTC)"), ("device_model", "model"),
                ("device_serial", "serial"), ("device_firmware", "firmware"), ("target_path", "target"),
                ("tests", "tests"), ("profile", "profile"), ("step_seconds", "step s"), ("run_name", "directory"))


def cmd_list(args) -> int:
    from ssdpts.library.db import ResultsDB

    with ResultsDB(args.db, create=False) as db:
        runs = db.list_runs(**_flt(args))
    if args.json:
        for r in runs:
            for k in ("run_spec_json", "target_json", "host_json", "deviations"):
                r[k.removesuffix("_json")] = json.loads(r.pop(k)) if r.get(k) else None
        print(json.dumps(runs, indent=1, ensure_ascii=False))
        return 0
    if not runs:
        print("no runs match" if any(_flt(args).values()) else f"no runs in {db.path}: add some with 'ssdpts db add'")
        return 0
    table = [[h for _, h in LIST_COLUMNS]]
    for r in runs:
        table.append(["—" if r[k] is None else (f"{r[k]:g}" if isinstance(r[k], float) else str(r[k]))
                      for k, _ in LIST_COLUMNS])
    widths = [max(len(row[i]) for row in table) for i in range(len(LIST_COLUMNS))]
    for n, row in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print(f"{len(runs)} run{'s' if len(runs) != 1 else ''}")
    return 0


def cmd_remove(args) -> int:
    from ssdpts.library.db import ResultsDB
    from ssdpts.library.remove import remove

    with ResultsDB(args.db, create=False) as db:
        for r in remove(db, args.runs, delete_dirs=args.delete_run_dirs):
            kept = "its run directory deleted" if r.deleted else f"run directory kept: {r.path}"
            print(f"removed {r.uid} {r.name} ({kept})")
        print(f"database: {db.path}")
    return 0


def cmd_export(args) -> int:
    import sys

    from ssdpts.library.db import ResultsDB, export

    with ResultsDB(args.db, create=False) as db:
        rows = db.export_rows(metric=args.metric, **_flt(args))
    path = export(rows, args.format, args.out)
    if path is not None:
        print(f"wrote {len(rows)} rows to {path}", file=sys.stderr)
    return 0


def cmd_rebuild(args) -> int:
    from ssdpts.library.db import default_path, rebuild

    path = args.db or default_path()
    added, skipped = rebuild(path, args.dirs)
    for msg in skipped:
        print(f"skipped: {msg}")
    print(f"rebuilt {path}: {len(added)} run{'s' if len(added) != 1 else ''}"
          + (f", {len(skipped)} skipped" if skipped else ""))
    return 0


def cmd_schema(args) -> int:
    from ssdpts.library.db import schema_sql

    print(schema_sql(), end="")
    return 0


def cmd_site(args) -> int:
    from ..errors import UserError
    from ssdpts.library.site import build

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs {args.jobs}: give 1 or more")
    done = build(args.site_dir, args.db, reports=not args.no_reports, jobs=args.jobs, log=print)
    for line in done.problems:
        print(f"warning: {line}")
    print(f"{done.site / 'index.html'}: {done.runs} run{'s' if done.runs != 1 else ''} ({done.read} read, "
          f"{done.reports} report{'s' if done.reports != 1 else ''} rendered, {done.removed} removed) in "
          f"{done.seconds:.1f} s")
    return 0
