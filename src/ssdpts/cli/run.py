"""ssdpts run TEST... --target PATH [--target PATH ...]: run PTS tests on devices or files."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import add_run_options, prepare, size_option
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
    from ssdpts.run.progress import EventProgress, make_progress
    from ssdpts.run.session import start_run
    from .parallel import events_ready, one_confirmation, run_one, run_parallel, solo_command, targets_of

    targets = targets_of(args)
    if len(targets) > 1:
        return run_parallel(args, targets)
    from .hosts import check_reachable, executor, hosts_of, remote_side, resolve, shells_of

    hosts = hosts_of(args)
    args.target, server, name = resolve(targets[0], hosts)
    server = server or args.fio_server
    shells = shells_of(args, hosts)
    remote = shells.get(name) is not None  # name None: --fio-server's shell
    if server:
        # before the target is looked at: without a remote shell its checks would run on this host
        check_reachable(server, remote)
    if args.cpus_per_device:
        from ssdpts.run.cpus import split

        args.cpus = split(args.cpus_per_device, 1)[0]
    side = remote_side(args.target, server, name, shells, size_bytes=size_option(args))
    try:
        prep = prepare(args, target=side.target if side else None)
        fio = executor(server, remote, side)
        events = EventProgress(args.events_fd) if args.events_fd is not None else None
        return run_one(lambda: start_run(
            prep.spec, prep.target, executor=fio, out_dir=Path(args.out),
            confirm=one_confirmation(args.destroy_data_on), interactive=sys.stdin.isatty() and side is None,
            progress=events or make_progress(args.quiet), argv=solo_command(sys.argv), describe=args.describe,
            ready=events_ready(events), side=side), events)
    finally:
        if side is not None:
            side.close()
