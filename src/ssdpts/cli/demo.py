"""ssdpts demo: a time-compressed PTS run of all four tests on a scratch target made for it.

As root, the scratch target is a loop device over a sparse file (a real block device with direct
I/O and discard); otherwise a plain file. The scratch device and its file are removed at the end;
the run directory stays. The run is marked time-compressed (not PTS compliant) everywhere."""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

from ..errors import UserError
from ..pts.units import fmt_capacity

DEMO = {  # small enough to finish in a few minutes, large enough to show FOB -> steady state
    "size": 1024**3,
    "step_seconds": 0.5,
    "max_rounds": 7,
    "wsat_hours": 0.5,  # 30 samples at most
    "wsat_capacity_multiple": 4.0,
}


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="time-compressed run of all four tests on a scratch loop device", description=__doc__)
    p.add_argument("--out", default="ssdpts-runs", metavar="DIR", help="where the run directory goes (default: ./ssdpts-runs)")
    p.add_argument("--size", default="1G", metavar="SIZE", help="scratch target size (default: 1G)")
    p.add_argument("--step-seconds", type=float, default=DEMO["step_seconds"], metavar="S",
                   help=f"step length in seconds (default: {DEMO['step_seconds']})")
    p.add_argument("--max-rounds", type=int, default=DEMO["max_rounds"], metavar="N",
                   help=f"rounds before giving up on steady state (default: {DEMO['max_rounds']})")
    p.add_argument("--tests", nargs="+", default=["all"], metavar="TEST", help="tests to run (default: all)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=cmd)


def make_scratch(workdir: Path, size_bytes: int) -> tuple[str, str | None]:
    """(target path, loop device or None). Loop devices need root and losetup."""
    img = workdir / "scratch.img"
    if os.geteuid() == 0 and shutil.which("losetup"):
        with open(img, "wb") as f:
            f.truncate(size_bytes)
        try:
            out = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", str(img)], capture_output=True,
                                 text=True, check=True, timeout=30)
            dev = out.stdout.strip()
            return dev, dev
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
            img.unlink(missing_ok=True)
    return str(workdir / "scratch-target.bin"), None


def remove_loop(dev: str) -> None:
    subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=30)


def cmd(args) -> int:
    from ..engine.fio import FioExecutor, default_ioengine
    from ..device.target import open_target
    from ssdpts.run.progress import make_progress
    from ssdpts.run.session import start_run
    from ..pts.runspec import RunSpec, expand_tests
    from ..pts.units import parse_size
    from ..errors import Interrupted, RunFailed
    from .common import check_paths
    from .output import finish, print_summary

    check_paths(args)  # --out; the scratch target's directory (TMPDIR) is the gate's, checked by FioExecutor
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        raise UserError(f"--size: {exc}") from None
    executor = FioExecutor()  # refuses early when fio is missing
    spec = RunSpec(tests=expand_tests(args.tests), step_seconds=args.step_seconds, max_rounds=args.max_rounds,
                   wsat_hours=DEMO["wsat_hours"], wsat_capacity_multiple=DEMO["wsat_capacity_multiple"],
                   ioengine=default_ioengine(), wsat_chunk_steps=10)
    workdir = Path(tempfile.mkdtemp(prefix="ssdpts-demo-", dir=os.environ.get("TMPDIR", "/var/tmp")))
    loop = None
    try:
        path, loop = make_scratch(workdir, size)
        target = open_target(path, size_bytes=None if loop else size)
        print(f"demo: scratch target {path} ({'loop device over a sparse file' if loop else 'plain file'}, "
              f"{fmt_capacity(size)}); steps of {spec.step_seconds:g} s: time-compressed, not PTS compliant", flush=True)
        try:
            store, summary = start_run(spec, target, executor=executor, out_dir=Path(args.out),
                                       confirm=path, progress=make_progress(args.quiet),
                                       argv=["ssdpts", *sys.argv[1:]])
        except (Interrupted, RunFailed) as exc:
            finish(getattr(exc, "run_dir", None), complete=False)
            raise
        print_summary(store, summary)
        finish(store.path, complete=True)
    finally:
        if loop:
            remove_loop(loop)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0
