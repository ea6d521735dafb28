"""ssdpts run TEST... --target PATH [--target PATH ...]: run PTS tests on devices or files."""

from __future__ import annotations

import sys

from .common import add_run_options
from .parallel import add_options


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run PTS tests (wsat, iops, tp, lat, hir, xsr, cbw, dirth; all = the basic four) on a target",
                       description="Run SNIA PTS tests on a block device or a file. Destroys all data on a block device. "
                                   "Several targets run at the same time, each its own run (docs/parallel.md).")
    add_run_options(p, many=True)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_options(p)
    p.set_defaults(func=cmd, run_parser=p)


def cmd(args) -> int:
    from ssdpts.run import launch
    from ssdpts.run.progress import EventProgress, make_progress
    from .parallel import events_ready, run_one, run_parallel, solo_argv
    from .request import run_request

    req = run_request(args)
    if len(req.targets) > 1:
        return run_parallel(req, args.tests, solo_argv(args.run_parser, sys.argv[1:]))
    with launch.placed(req, req.targets[0]) as where:
        fio = launch.executor_of(where, req.fio)
        events = EventProgress(req.events_fd) if req.events_fd is not None else None
        return run_one(lambda: launch.start(req, where, fio, progress=events or make_progress(req.quiet),
                                            ready=events_ready(events)), events)
