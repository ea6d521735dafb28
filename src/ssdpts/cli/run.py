"""ssdpts run TEST... --target PATH: run PTS tests on a device or file."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import add_run_options, prepare


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run PTS tests (wsat, iops, tp, lat, hir, xsr, cbw, dirth; all = the basic four) on a target",
                       description="Run SNIA PTS tests on a block device or a file. Destroys all data on a block device.")
    add_run_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..engine.fio import FioExecutor
    from ..progress import make_progress
    from ..session import start_run
    from ..errors import Interrupted, RunFailed
    from .output import finish, print_summary

    prep = prepare(args)
    executor = FioExecutor()
    try:
        store, summary = start_run(prep.spec, prep.target, executor=executor, out_dir=Path(args.out),
                                   confirm=args.destroy_data_on, interactive=sys.stdin.isatty(),
                                   progress=make_progress(args.quiet), argv=["ssdpts", *sys.argv[1:]],
                                   describe=args.describe)
    except (Interrupted, RunFailed) as exc:
        finish(getattr(exc, "run_dir", None), complete=False)
        raise
    print_summary(store, summary)
    finish(store.path, complete=True)
    return 0
