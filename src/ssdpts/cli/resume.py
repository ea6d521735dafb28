"""ssdpts resume RUN_DIR...: continue interrupted or failed runs at the round in flight (several at
the same time, each its own process, as 'ssdpts run' on several devices)."""

from __future__ import annotations

import sys
from pathlib import Path

from .parallel import add_events_fd


def add_parser(sub) -> None:
    p = sub.add_parser("resume", help="continue an interrupted run",
                       description="Continue an interrupted or failed run at the round in flight, on the device it "
                                   "started on: resume compares the device with the fingerprint taken at the start and "
                                   "refuses another one. When nothing proves the identity (a device without a serial: "
                                   "a loop device attached again, a zram device, ...) it asks again for the confirmation "
                                   "that its data may be destroyed.")
    p.add_argument("run_dir", metavar="RUN_DIR", nargs="+",
                   help="run directory made by 'ssdpts run', or a directory holding run directories (the --out of "
                        "a run on several devices): every unfinished run in it is continued, all at the same time")
    p.add_argument("--keep-window", action="store_true",
                   help="let the steady-state window include rounds from before the interruption (disclosed as "
                        "'spans a resume of N h'); default: repeat the interrupted round and count the window "
                        "only from there (PTS: no delay between rounds)")
    p.add_argument("--destroy-data-on", metavar="SERIAL_OR_PATH", action="append",
                   help="confirm again that every byte on the run's target may be destroyed: its serial number or "
                        "path (needed when its identity cannot be proven and there is no terminal to ask at); once per "
                        "target when resuming several runs")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_events_fd(p)
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from .hosts import executor
    from ..progress import make_progress
    from ..session import resume_run
    from ..progress import EventProgress
    from .parallel import events_ready, one_confirmation, resume_parallel, run_one, unfinished_runs

    run_dirs = unfinished_runs(args.run_dir)
    if len(run_dirs) > 1:
        return resume_parallel(args, run_dirs)
    events = EventProgress(args.events_fd) if args.events_fd is not None else None
    fio = executor(_fio_server(run_dirs[0]))
    return run_one(lambda: resume_run(
        run_dirs[0], executor=fio, progress=events or make_progress(args.quiet),
        interactive=sys.stdin.isatty(), confirm=one_confirmation(args.destroy_data_on), keep_window=args.keep_window,
        ready=events_ready(events)), events)


def _fio_server(run_dir: Path) -> str | None:
    """The fio server the run was started with (manifest ``fio_server``): a resume runs there too."""
    import json

    try:
        return json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8")).get("fio_server")
    except (OSError, ValueError, AttributeError):
        return None  # resume_run says what is wrong with the directory
