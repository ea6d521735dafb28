"""ssdpts quick TARGET: the synthetic evaluation table (median of N runs with RSE) in minutes."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import add_run_directory_options, fio_option

PRECONDITIONS = ("none", "seq-fill", "wipc")  # quick.PRECONDITIONS (not imported: --help stays instant)
CDM_PROFILES = ("default", "nvme")


def add_parser(sub) -> None:
    p = sub.add_parser("quick", help="the short synthetic table drive evaluators publish: SEQ 1MiB and RND 4KiB at "
                                     "QD64 and QD1, mixed 80/20 and 70/30, median of N runs with RSE (docs/compare.md#repeated-runs)",
                       description="Measure the synthetic evaluation table on a block device or file: SEQ 1MiB read/write "
                                   "T1 QD64 (MB/s), RND 4KiB read/write T4 QD64 (kIOPS), the same four at T1 QD1, "
                                   "mixed RND 4KiB 80/20 and 70/30 at T1 QD1; optionally CrystalDiskMark 8's profiles. "
                                   "Every figure is the median of N runs with its relative standard error; above 5%% "
                                   "two runs are added up to 7, then the figure is marked unreliable. Destroys all "
                                   "data on a block device. Not a PTS test (docs/quick.md).")
    p.add_argument("target", metavar="TARGET", help="block device (e.g. /dev/nvme0n1) or file; files are created by ssdpts")
    p.add_argument("--runs", type=int, default=3, metavar="N", help="warm runs per figure, odd, 3 to 99 (default: 3)")
    p.add_argument("--seconds", type=float, default=10.0, metavar="S", help="length of each run (default: 10)")
    p.add_argument("--cold-run", action="store_true", help="one unmeasured run of each figure before its warm runs")
    p.add_argument("--precondition", choices=PRECONDITIONS, default="none",
                   help="before the table: nothing, one sequential fill, or the PTS WIPC (2x capacity); disclosed "
                        "(default: none)")
    p.add_argument("--cdm", action="append", choices=CDM_PROFILES, default=[], metavar="PROFILE",
                   help="also CrystalDiskMark 8's 'default' (+ Mix R70/W30) or 'nvme' (NVMe SSD) profile; repeatable")
    p.add_argument("--only", metavar="KEY,...", default="",
                   help="measure only these figures, by key (e.g. rnd4k-read-t1q1,rnd4k-write-t1q1; an unknown key "
                        "is refused with the list); disclosed")
    p.add_argument("--ioengine", default=None, help="fio ioengine (default: io_uring where the kernel has it, else libaio)")
    p.add_argument("--seed", type=int, default=1, help="base seed of fio's random offsets and data (default: 1)")
    add_run_directory_options(p)
    fio_option(p)
    p.add_argument("--quiet", action="store_true", help="print only the run directory and the report")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from ..engine import fiobin
    from ..engine.fio import FioExecutor, default_ioengine
    from ssdpts.kinds import KINDS
    from ssdpts.workloads.quick import QuickSpec, start_quick
    from .common import check_paths, open_target_option

    check_paths(args, {"target": "TARGET"})
    only = tuple(dict.fromkeys(k for k in args.only.replace(" ", "").split(",") if k))
    spec = QuickSpec(runs=args.runs, seconds=args.seconds, cold_run=args.cold_run, precondition=args.precondition,
                     cdm=tuple(dict.fromkeys(args.cdm)), only=only, ioengine=args.ioengine or default_ioengine(),
                     seed=args.seed)
    target, _size = open_target_option(args)
    say = (lambda _s: None) if args.quiet else (lambda s: print(s, flush=True))
    fio = FioExecutor(chosen=fiobin.choose(args.fio_path))
    store, _doc = start_quick(spec, target, executor=fio, out_dir=Path(args.out),
                              confirm=args.destroy_data_on, interactive=sys.stdin.isatty(), argv=sys.argv, log=say,
                              describe=args.describe, render_partial=KINDS["quick"].render_partial)
    print(f"run directory: {store.path}")
    from .output import finish

    finish(store.path, complete=True)  # as 'ssdpts run': report.html/.pdf and the results library entry
    return 0
