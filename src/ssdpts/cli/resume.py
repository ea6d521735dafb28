"""ssdpts resume RUN_DIR: continue an interrupted or failed run at the round in flight."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("resume", help="continue an interrupted run",
                       description="Continue an interrupted or failed run at the round in flight, on the device it "
                                   "started on: resume compares the device with the fingerprint taken at the start and "
                                   "refuses another one. When nothing proves the identity (a device without a serial: "
                                   "a loop device attached again, a zram device, ...) it asks again for the confirmation "
                                   "that its data may be destroyed.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory made by 'ssdpts run'")
    p.add_argument("--keep-window", action="store_true",
                   help="let the steady-state window include rounds from before the interruption (disclosed as "
                        "'spans a resume of N h'); default: repeat the interrupted round and count the window "
                        "only from there (PTS: no delay between rounds)")
    p.add_argument("--destroy-data-on", metavar="SERIAL_OR_PATH",
                   help="confirm again that every byte on the run's target may be destroyed: its serial number or "
                        "path (needed when its identity cannot be proven and there is no terminal to ask at)")
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
                                    interactive=sys.stdin.isatty(), confirm=args.destroy_data_on,
                                    keep_window=args.keep_window)
    except (Interrupted, RunFailed) as exc:
        finish(getattr(exc, "run_dir", None), complete=False)
        raise
    print_summary(store, summary)
    finish(store.path, complete=True)
    return 0
