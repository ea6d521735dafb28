"""ssdpts db: the results library, an SQLite database of complete runs (run directories stay the
source of truth; 'db rebuild' recreates the database from them). See docs/results-db.md."""

from __future__ import annotations

import argparse
import json
from pathlib import PurePath

from ..errors import UserError
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
    fit = ls.add_mutually_exclusive_group()
    fit.add_argument("--wide", action="store_true", help="every column whole, however wide the terminal (as when "
                                                       "the output is not a terminal)")
    fit.add_argument("--width", type=int, metavar="N", help="fit the table to N columns, as to a terminal that wide "
                                                           "(default: the terminal's width; a pipe gets every column)")
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


# The table of 'db list' (docs/results-db.md#db-list): its columns, and what it gives up, in this
# order, until it fits a narrower terminal; the run id, status and model always stay, the id whole.
LIST_COLUMNS = (("run_uid", "run"), ("status", "status"), ("created", ("started (UTC)", "started (UTC)", "date (UTC)")),
                ("device_model", "model", 12), ("device_serial", "serial", 10), ("device_firmware", "firmware"),
                ("target_path", "target", 12), ("tests", "tests"), ("headline", "headline", 24, "end"),
                ("profile", "profile"), ("step_seconds", "step s"), ("run_name", "directory", 16))
NARROWING = (("created", "form", 1), ("target_path", 16), ("target_path", "drop"), ("step_seconds", "drop"),
             ("run_name", 24), ("run_name", "drop"), ("profile", "drop"), ("headline", 32),
             ("device_model", 28), ("device_serial", 16), ("headline", "drop"), ("tests", "drop"),
             ("created", "form", 2), ("device_model", 20), ("device_serial", 12), ("created", "drop"),
             ("device_serial", "drop"), ("device_firmware", "drop"))


def cmd_list(args) -> int:
    import shutil
    import sys
    import textwrap

    from ssdpts.library.db import ResultsDB

    from .output import Column, fit_table

    if args.width is not None and args.width < 20:
        raise UserError(f"--width {args.width}: give 20 or more")
    with ResultsDB(args.db, create=False) as db:
        runs = db.list_runs(**_flt(args))
        heads = {} if args.json else db.headlines(first=True)
    if args.json:
        for r in runs:
            for k in ("run_spec_json", "target_json", "host_json", "deviations"):
                r[k.removesuffix("_json")] = json.loads(r.pop(k)) if r.get(k) else None
        print(json.dumps(runs, indent=1, ensure_ascii=False))
        return 0
    if not runs:
        print("no runs match" if any(_flt(args).values()) else f"no runs in {db.path}: add some with 'ssdpts db add'")
        return 0
    rows = [_list_row(r, (heads.get(r["run_uid"]) or _headline_of(r))[:1]) for r in runs]
    figures = max(len(r["headline"][0]) for r in rows)  # each headline's figure right-aligned to the others,
    for r in rows:  # its mark beside it (never shortened away), then what it is
        fig, mark, label = r["headline"]
        r["headline"] = "—" if fig == "—" else f"{fig:>{figures}}{mark:2}  {label}"
    width = args.width if args.width is not None else (
        None if args.wide or not sys.stdout.isatty() else shutil.get_terminal_size().columns)
    lines, left_out = fit_table([Column(*c) for c in LIST_COLUMNS], rows, width, NARROWING)
    tail = [f"{len(runs)} run{'s' if len(runs) != 1 else ''}"]
    if any("†" in r["headline"] for r in rows) and "headline" not in left_out:
        tail.append("†: steady state NOT reached in that test")
    if left_out:
        tail.append(f"left out to fit {width} columns: {', '.join(left_out)} (--wide: every column)")
    text = "; ".join(tail)
    print("\n".join([*lines, *(textwrap.wrap(text, width, break_on_hyphens=False) if width else [text])]))
    return 0


def _list_row(r: dict, head: list[dict]) -> dict:
    """A run's cells in 'db list' (the start time in its forms: whole, to the minute, the day) and its
    headline: the first figure the results site's index shows for it (docs/results-db.md#headlines)."""
    from .output import figure

    row = {k: "—" if r[k] is None else (f"{r[k]:g}" if isinstance(r[k], float) else str(r[k]))
           for k, *_ in LIST_COLUMNS if k != "headline"}
    t = row["created"]
    row["created"] = (t, t[:16].replace("T", " "), t[:10]) if t != "—" else t
    if r["device_model"] is None and r["target_path"]:  # a file or a device without a model: its name, as the site
        row["device_model"] = PurePath(r["target_path"]).name
    row["headline"] = ("—", "", "") if not head else (figure(head[0]["value"], head[0]["unit"]),
                                                      " †" if head[0]["steady_state_reached"] == 0 else "",
                                                      head[0]["label"])
    return row


def _headline_of(r: dict) -> list[dict]:
    """The headlines of a run the library added before it kept them (schema 6), from its directory
    when it is still there; none otherwise."""
    from ssdpts.library.headlines import headline_rows
    from ssdpts.results.reader import read_run

    try:
        return headline_rows(read_run(r["path"]))
    except (UserError, OSError, ValueError, KeyError):
        return []


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
