"""ssdpts resume RUN_DIR...: continue interrupted or failed runs at the round in flight (several at
the same time, each its own process, as 'ssdpts run' on several devices)."""

from __future__ import annotations

from .common import fio_option
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
    fio_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_events_fd(p)
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ssdpts.run.launch import executor
    from ssdpts.run.progress import EventProgress, make_progress
    from ssdpts.run.request import recorded
    from ssdpts.run.session import resume_run
    from .parallel import events_ready, one_confirmation, resume_parallel, run_one
    from .request import resume_request

    req = resume_request(args)
    from .. import kinds
    from ..errors import UserError

    for d in req.run_dirs:  # a kind that does not resume is said before anything is opened
        k = kinds.of(d)
        if k.not_resumed is not None:
            raise UserError(f"{d} is one of the {k.what}: {k.not_resumed}")
    if len(req.run_dirs) > 1:
        return resume_parallel(req)
    from ..device.remote.remote import side_for

    events = EventProgress(req.events_fd) if req.events_fd is not None else None
    run_dir = req.run_dirs[0]
    rec = recorded(run_dir)  # where it ran: a resume runs there too
    where = rec.device_host  # the device is on the fio server's host: its agent again, by the recorded shell
    fio = executor(rec.fio_server, remote=bool(where), fio=req.fio, sprandom=rec.precondition == "sprandom")
    sides = []

    def start():
        side = side_for(where, rec.target_path) if where else None
        if side is not None:
            sides.append(side)
            fio.use_agent(side)  # the step gate runs where the device is (engine/fioclient.py)
        return resume_run(run_dir, executor=fio, progress=events or make_progress(req.quiet),
                          interactive=req.interactive and side is None,
                          confirm=one_confirmation(list(req.confirmations)), keep_window=req.keep_window,
                          ready=events_ready(events), side=side)
    try:
        return run_one(start, events)
    finally:
        for side in sides:
            side.close()
