"""``--host NAME=SERVER`` and ``--target NAME:/dev/X``: a device's fio run by a fio server
(``fio --server`` on the device's host) through ``fio --client`` (engine/fioclient.py, docs/hosts.md).
The options become each target's ``Placement`` (run/request.py); reaching the server and starting
the host's agent is the run side's (run/launch.py)."""

from __future__ import annotations

import argparse

from ..errors import UserError


def add_options(g) -> None:
    g.add_argument("--host", action="append", metavar="NAME=SERVER",
                   help="a fio server (fio --server on that host) as NAME=ADDRESS[,PORT]; then --target NAME:PATH runs "
                        "that device's fio there (docs/hosts.md)")
    g.add_argument("--fio-server", metavar="ADDRESS[,PORT]",
                   help="run fio through this fio server (fio --client); the target is a path on its host")
    g.add_argument("--remote-shell", action="append", metavar="[NAME=]COMMAND",
                   help="how to run a command on a fio server's host, e.g. rack1='ssh -o BatchMode=yes rack1': the "
                        "device's checks, purge and telemetry then run there ('ssdpts agent PATH', docs/hosts.md); "
                        "without NAME= it is the shell of --fio-server's host")


def hosts_of(args: argparse.Namespace) -> dict[str, str]:
    out: dict[str, str] = {}
    for h in getattr(args, "host", None) or []:
        name, sep, server = h.partition("=")
        if not sep or not name.strip() or not server.strip():
            raise UserError(f"--host {h!r}: give NAME=ADDRESS[,PORT], e.g. --host rack1=10.0.0.5,8765")
        if name in out:
            raise UserError(f"--host {name} is given twice: give each host once")
        out[name.strip()] = server.strip()
    return out


def resolve(target: str, hosts: dict[str, str]) -> tuple[str, str | None, str | None]:
    """A target as (path on its host, fio server or None for this host, the host's --host NAME)."""
    name, sep, path = target.partition(":")
    if sep and name in hosts:
        return path, hosts[name], name
    if sep and name and not name.startswith("/") and "/" not in name and hosts:
        raise UserError(f"--target {target}: no --host {name}=ADDRESS was given: add it, or name one of "
                        f"{', '.join(sorted(hosts))}")
    return target, None, None


def shells_of(args: argparse.Namespace, hosts: dict[str, str]) -> dict[str | None, list[str]]:
    """--remote-shell values by host NAME (None: the shell of --fio-server's host)."""
    from ..device.remote.remote import parse_shell

    out: dict[str | None, list[str]] = {}
    for text in getattr(args, "remote_shell", None) or []:
        name, sep, command = text.partition("=")
        key = name.strip() if sep and name.strip() in hosts else None
        if key is None and sep and " " not in name.strip() and hosts:
            raise UserError(f"--remote-shell {text!r}: no --host {name.strip()}=ADDRESS was given: name one of "
                            f"{', '.join(sorted(hosts))}")
        if key in out:
            raise UserError(f"--remote-shell is given twice for {key or '--fio-server'}: give it once per host")
        out[key] = parse_shell(command if key is not None else text)
    return out


def placements(args: argparse.Namespace, targets: list[str]) -> list:
    """Each target's Placement: its path on its host, its fio server (``--host NAME=SERVER`` with
    ``--target NAME:PATH``, else --fio-server's), its host's --remote-shell."""
    from ssdpts.run.request import Placement

    hosts = hosts_of(args)
    if len(targets) > 1:
        shells = shells_of(args, hosts)
        where = [resolve(t, hosts) for t in targets]
    else:
        where = [resolve(targets[0], hosts)]
        shells = shells_of(args, hosts)
    fio_server = getattr(args, "fio_server", None)
    out = []
    for t, (path, server, name) in zip(targets, where):
        shell = shells.get(name)  # name None: --fio-server's shell
        out.append(Placement(given=t, path=path, server=server or fio_server, host=name,
                             shell=tuple(shell) if shell is not None else None))
    return out
