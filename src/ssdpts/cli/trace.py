"""ssdpts trace record|show|replay: block IO traces of real use, and their replay as a test.

Replay is ``trace replay`` rather than ``run replay``: ``run``'s options are the PTS parameters
(profile, TC/QD, active range, steady state, purge per test) and none applies to a replay, whose own
options (trace, timing, address wrapping, runs) belong with the trace commands (docs/trace.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import add_run_directory_options, fio_option

PRECONDITIONS = ("none", "wipc")  # replay.PRECONDITIONS (not imported: --help stays instant)


def add_parser(sub) -> None:
    p = sub.add_parser("trace", help="record the block IO of a device in use (read-only), summarise a trace, "
                                     "replay a trace onto a target as a test (docs/trace.md)",
                       description="Block IO traces: record (kernel block tracepoints, never writes), show (summary of "
                                   "an fio iolog v2/v3 or a blktrace binary trace), replay (fio read_iolog onto a target, median of N runs).")
    tsub = p.add_subparsers(dest="trace_command", metavar="ACTION", parser_class=type(p))
    tsub.required = True

    r = tsub.add_parser("record", help="record the block IO of a device for S seconds into an fio iolog v3 (read-only)",
                        description="Record every read and write the kernel issues to DEV for S seconds, from the block "
                                    "tracepoints in a private ftrace instance. The device is never opened. Writes FILE "
                                    "(fio iolog v3), FILE.npz (issue and completion times) and FILE.summary.json.")
    r.add_argument("--device", required=True, metavar="DEV", help="block device to record, e.g. /dev/nvme0n1")
    r.add_argument("--seconds", required=True, type=float, metavar="S", help="how long to record (Ctrl-C ends early)")
    r.add_argument("--out", required=True, metavar="FILE", help="the iolog to write (never overwritten)")
    r.add_argument("--quiet", action="store_true", help="print nothing but errors")
    r.set_defaults(func=cmd_record)

    s = tsub.add_parser("show", help="summary of a trace: IO count, mix, block sizes, queue depth, inter-arrival, LBA heat map",
                        description="Summarise an fio iolog (v2 or v3; with FILE.npz beside it: queue depth and latency).")
    s.add_argument("trace", metavar="FILE", help="fio iolog v2/v3 (e.g. made by 'ssdpts trace record') or a blktrace binary trace (NAME.blktrace.N, its base name NAME, or one blkparse -d stream)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_show)

    p2 = tsub.add_parser("replay", help="replay a trace onto a target N times (fio read_iolog): completion time, IOPS, "
                                        "MB/s, response times; destroys data",
                         description="Replay a trace onto a block device or file with fio (read_iolog, replay_redirect), "
                                     "N times; every figure is the median of the runs with its RSE (docs/compare.md#repeated-runs). Offsets "
                                     "beyond a smaller target are wrapped modulo its size. Destroys all data on a block "
                                     "device. Not a PTS test (docs/trace.md).")
    p2.add_argument("--trace", required=True, metavar="FILE", help="fio iolog v2/v3 or blktrace binary trace (NAME.blktrace.N or NAME) to replay")
    p2.add_argument("--target", required=True, metavar="PATH", help="block device or file to replay onto")
    p2.add_argument("--runs", type=int, default=3, metavar="N", help="replays, odd, 3 to 99 (default: 3)")
    p2.add_argument("--no-stall", action="store_true",
                    help="as fast as possible, keeping the IO order (fio replay_no_stall; default: timed as recorded)")
    p2.add_argument("--time-scale", type=int, default=100, metavar="PCT",
                    help="timed replay at PCT%% of the recorded IO rate (fio replay_time_scale; default: 100)")
    p2.add_argument("--iodepth", type=int, default=None, metavar="QD",
                    help="IOs fio may keep in flight (default: the trace's highest queue depth, else 32)")
    p2.add_argument("--precondition", choices=PRECONDITIONS, default="none",
                    help="wipc: PTS purge, then WIPC (twice the capacity in SEQ 128KiB writes) before the replays "
                         "(default: none)")
    p2.add_argument("--ioengine", default="libaio", help="fio ioengine (default: libaio)")
    add_run_directory_options(p2)
    fio_option(p2)
    p2.add_argument("--quiet", action="store_true", help="print only the run directory and the report")
    p2.set_defaults(func=cmd_replay)


def cmd_record(args) -> int:
    from ssdpts.workloads.iotrace import record, summary, summary_text
    from .common import check_paths

    check_paths(args, fio=())  # the device's name and the iolog's reach no job file (a replay copies the iolog)
    say = (lambda _s: None) if args.quiet else (lambda s: print(s, flush=True))
    trace = record(args.device, args.seconds, Path(args.out), log=say)
    say(summary_text(summary(trace)))
    say(f"trace: {args.out} (+ .npz, .summary.json)")
    return 0


def cmd_show(args) -> int:
    import json

    from ssdpts.workloads.iotrace import read_trace, summary, summary_text

    s = summary(read_trace(args.trace))
    print(json.dumps(s, indent=1) if args.json else summary_text(s))
    return 0


def cmd_replay(args) -> int:
    from ..engine import fiobin
    from ..engine.fio import FioExecutor
    from ssdpts.kinds import KINDS
    from ssdpts.workloads.replay import ReplaySpec, prepare_trace, start_replay
    from .common import check_paths, open_target_option

    check_paths(args)
    spec = ReplaySpec(runs=args.runs, no_stall=args.no_stall, time_scale_pct=args.time_scale, iodepth=args.iodepth,
                      precondition=args.precondition, ioengine=args.ioengine)
    prepare_trace(args.trace)  # a bad trace is refused before the target is even opened
    target, _size = open_target_option(args)
    say = (lambda _s: None) if args.quiet else (lambda s: print(s, flush=True))
    fio = FioExecutor(chosen=fiobin.choose(args.fio_path))
    store, _doc = start_replay(spec, args.trace, target, executor=fio, out_dir=Path(args.out),
                               confirm=args.destroy_data_on, interactive=sys.stdin.isatty(), argv=sys.argv, log=say,
                               describe=args.describe, render_partial=KINDS["replay"].render_partial)
    print(f"run directory: {store.path}")
    from .output import finish

    finish(store.path, complete=True)  # report.html/.pdf and the results library entry, as 'ssdpts run'
    return 0
