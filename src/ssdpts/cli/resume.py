"""ssdpts resume RUN_DIR: continue an interrupted or failed run at the round in flight."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("resume", help="continue an interrupted run", description=__doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory made by 'ssdpts run'")
    p.add_argument("--keep-window", action="store_true",
                   help="let the steady-state window include rounds from before the interruption (disclosed as "
                        "'spans a resume of N h'); default: repeat the interrupted round and count the window "
                        "only from there (PTS: no delay between rounds)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..engine.fio import FioExecutor
    from ..progress import make_progress
    from ..session import resume_run
    from ..errors import Interrupted, RunFailed
    from .output import finish, print_summary

    try:
        store, summary = resume_run(Path(args.run_dir), executor=FioExecutor(), progress=make_progress(args.quiet),
                                    interactive=sys.stdin.isatty(), keep_window=args.keep_window)
    except (Interrupted, RunFailed) as exc:
        finish(getattr(exc, "run_dir", None), complete=False)
        raise
    print_summary(store, summary)
    finish(store.path, complete=True)
    return 0
