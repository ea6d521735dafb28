"""ssdpts agent PATH: the device side of a run driven from another host (device/remote/agent.py)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("agent", help="the device side of a run whose ssdpts runs on another host (docs/hosts.md)",
                       description="Serve the device checks, purge, telemetry and write cache of PATH to an ssdpts "
                                   "on another host, which starts this command through its --remote-shell and talks "
                                   "to it over stdin/stdout (one JSON object per line). Not for use by hand: it ends "
                                   "when stdin closes, giving back everything it held.")
    p.add_argument("path", metavar="PATH", help="the device (or file) on this host")
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    import sys

    from ..device.remote.agent import serve
    from ..engine.gatehost import GateHost

    replies, sys.stdout = sys.stdout, sys.stderr  # a stray print must not break the controller's stream
    try:
        # the step gate of a fio server's jobs on this host, and the device's block trace (docs/hosts.md)
        return serve(args.path, sys.stdin, replies, extra=GateHost)
    finally:
        sys.stdout = replies
