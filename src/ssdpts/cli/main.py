"""ssdpts command line: parse -> validate -> plan -> run -> store -> report.

Expected failures arrive here as UserError (one red line; exit 2 for bad input or a refusal,
1 for a failed run) or Interrupted. Every terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) is an
interruption: the run stops and is saved as ``interrupted`` with a partial report, and ssdpts exits
128 + the signal's number. A second signal while the first is being handled (Ctrl-C twice, a
SIGTERM after the terminal's SIGHUP) is ignored, so that the clean-up always finishes: fio stopped,
the run directory marked and the partial report written. Nothing else catches them."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from .. import __version__
from ..errors import EXIT_INTERRUPTED, Interrupted, Signalled, UserError

COMMANDS = ("run", "quick", "trace", "plan", "resume", "status", "report", "compare", "verify", "db", "devices", "info",
            "doctor", "demo", "agent")
TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, like every other bad input
        raise UserError(f"{message}: see '{self.prog} --help'")


def build_parser() -> argparse.ArgumentParser:
    from importlib import import_module

    p = _Parser(prog="ssdpts", description="SNIA SSS PTS 2.0.2 (Enterprise and Client) on fio.")
    p.add_argument("--version", action="version", version=f"ssdpts {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        import_module(f".{name}", __package__).add_parser(sub)
    return p


_first_signal: int | None = None


def _on_signal(signum, frame):
    """The first terminating signal stops whatever runs (Signalled is a KeyboardInterrupt, so every
    clean-up path of Ctrl-C runs); later ones are ignored until that clean-up is done."""
    global _first_signal
    if _first_signal is not None:
        return
    _first_signal = signum
    raise Signalled(signum)


def main(argv: list[str] | None = None) -> int:
    global _first_signal
    argv = list(sys.argv[1:] if argv is None else argv)
    _first_signal = None
    previous = {sig: signal.signal(sig, _on_signal) for sig in TERMINATING}
    try:
        try:
            code = _run(argv)
        except KeyboardInterrupt:  # the first signal came while the outcome was being reported
            code = EXIT_INTERRUPTED
        if _first_signal is not None:
            code = 128 + _first_signal
        _settle_streams()
        return code
    finally:
        for sig, handler in previous.items():  # main() may be called in-process (tests)
            signal.signal(sig, handler)


def _run(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except UserError as exc:
        _red(f"ssdpts: {exc}")
        return exc.exit_code
    except (Interrupted, KeyboardInterrupt) as exc:
        _red(f"ssdpts: {exc}" if str(exc) else "ssdpts: interrupted")
        return getattr(exc, "exit_code", EXIT_INTERRUPTED)


def _red(text: str) -> None:
    line = " ".join(str(text).split())  # always one line
    try:
        if sys.stderr.isatty():
            sys.stderr.write(f"\x1b[31m{line}\x1b[0m\n")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # the terminal is gone (SIGHUP): the run directory says what happened


def _settle_streams() -> None:
    """Flush stdout/stderr now; if the terminal is gone (EIO after SIGHUP), point them at /dev/null so
    that Python's flush at exit cannot turn the exit status into 120."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            stream.flush()
        except (OSError, ValueError):
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):
                pass
            setattr(sys, name, open(os.devnull, "w"))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
