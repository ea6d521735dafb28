"""ssdpts command line: parse -> validate -> plan -> run -> store -> report (DESIGN.md convention 6).

Expected failures arrive here as UserError (one red line; exit 2 for bad input or a refusal,
1 for a failed run) or Interrupted (exit 130). Nothing else catches them."""

from __future__ import annotations

import argparse
import signal
import sys

from .. import __version__
from ..errors import EXIT_INTERRUPTED, Interrupted, UserError

COMMANDS = ("run", "plan", "resume", "report", "compare", "db", "devices", "info", "doctor", "demo")


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


def _on_sigterm(signum, frame):  # a SIGTERM is handled like Ctrl-C: stop fio, keep what is measured
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except UserError as exc:
        _red(f"ssdpts: {exc}")
        return exc.exit_code
    except (Interrupted, KeyboardInterrupt) as exc:
        _red(f"ssdpts: {exc}" if str(exc) else "ssdpts: interrupted")
        return EXIT_INTERRUPTED


def _red(text: str) -> None:
    line = " ".join(str(text).split())  # always one line
    if sys.stderr.isatty():
        sys.stderr.write(f"\x1b[31m{line}\x1b[0m\n")
    else:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
