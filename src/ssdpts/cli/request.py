"""The one place the options of ``run``, ``plan`` and ``resume`` become a typed request
(run/request.py): every check of the input that needs no device happens here, and nothing after it
reads the parsed options."""

from __future__ import annotations

import argparse
import sys

from ..errors import UserError


def run_request(args: argparse.Namespace, *, plan: bool = False):
    """The RunRequest of ``ssdpts run`` (``plan``: of ``ssdpts plan``, one target and no hosts).
    On several targets a refusal of the shared options names the first, as each target's own run
    would refuse it (cli/parallel.py)."""
    from ssdpts.run.request import RunRequest
    from .common import build_spec, check_paths, size_option
    from .hosts import placements
    from .parallel import named, one_confirmation, solo_command, targets_of

    if plan:
        from ssdpts.run.request import Placement

        given = [Placement(given=args.target, path=args.target)]  # its path checked with the others below
    else:
        given = placements(args, targets_of(args))
    many = len(given) > 1
    cpus = args.cpus
    if args_cpus_per_device(args) and not many:
        from ssdpts.run.cpus import split

        cpus = split(args.cpus_per_device, 1)[0]

    def spec():
        from ..pts.runspec import expand_tests

        check_paths(args)
        built = build_spec(args, expand_tests(args.tests), cpus)
        if built.realtime:
            if getattr(args, "fio_server", None) or getattr(args, "host", None):
                raise UserError("--realtime sets the priority of fio on this host; a fio server's fio runs with the "
                                "server's own (start it with 'chrt -f 1 fio --server'): drop --realtime")
            from ..engine import rtsched

            rtsched.check()
        return built, size_option(args)
    built, size = named(given[0].given, spec) if many else spec()
    confirm = args.destroy_data_on
    confirmations = tuple(confirm if isinstance(confirm, list) else [confirm] if confirm else [])
    if not many and not plan:
        one_confirmation(list(confirmations))
    events_fd = getattr(args, "events_fd", None)
    return RunRequest(spec=built, targets=tuple(given), out_dir=_out(args), confirmations=confirmations,
                      size_bytes=size, describe=args.describe, interactive=sys.stdin.isatty(),
                      quiet=bool(getattr(args, "quiet", False)), argv=tuple(solo_command(sys.argv)), events_fd=events_fd,
                      cpus_per_device=args_cpus_per_device(args), cpus=args.cpus or "",
                      fio=getattr(args, "fio_path", None), spare_of=_spare_of)


def _spare_of(serial: str) -> tuple[float, str] | None:
    """A drive's over-provisioning from the drive model of its newest WSAT in the results library
    (library/spare.py): --precondition sprandom without an OP."""
    from ssdpts.library.spare import earlier_spare

    return earlier_spare(serial)


def args_cpus_per_device(args: argparse.Namespace) -> int | None:
    return getattr(args, "cpus_per_device", None)


def _out(args: argparse.Namespace):
    from pathlib import Path

    return Path(args.out)


def resume_request(args: argparse.Namespace):
    """The ResumeRequest of ``ssdpts resume``: its RUN_DIR arguments as the unfinished run
    directories they name."""
    from ssdpts.run.request import ResumeRequest, unfinished_runs

    return ResumeRequest(run_dirs=tuple(unfinished_runs(args.run_dir)),
                         confirmations=tuple(args.destroy_data_on or ()), keep_window=args.keep_window,
                         interactive=sys.stdin.isatty(), quiet=args.quiet, events_fd=args.events_fd,
                         fio=getattr(args, "fio_path", None))
