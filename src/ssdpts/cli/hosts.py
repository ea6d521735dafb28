"""``--host NAME=SERVER`` and ``--target NAME:/dev/X``: a device's fio run by a fio server
(``fio --server`` on the device's host) through ``fio --client`` (engine/fioclient.py, docs/hosts.md)."""

from __future__ import annotations

import argparse
import ipaddress
import socket

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


def remote_side(path: str, server: str | None, name: str | None, shells: dict[str | None, list[str]],
                size_bytes: int | None = None):
    """The device side of a target whose host has a --remote-shell (device/remote.py), else None."""
    shell = shells.get(name)  # name None: --fio-server's shell
    if shell is None:
        return None
    if not server:
        raise UserError(f"--remote-shell for {name or path}: the device's fio needs that host's fio server too: "
                        "give --host NAME=ADDRESS and --target NAME:PATH (or --fio-server)")
    from ..device.remote.remote import RemoteSide

    return RemoteSide(shell, path, name=name or server, size_bytes=size_bytes)


def check_reachable(server: str, remote: bool = False) -> None:
    """Without a remote shell (``remote``), device identity, safety checks, claim, purge and telemetry
    run here, on this host's view of the device: so the fio server must run on this host (loopback,
    or one of its addresses). With one, they run on the server's host (device/agent.py)."""
    from ..engine.fioclient import server_address

    try:
        server = server_address(server)
    except ValueError as exc:
        raise UserError(f"--fio-server: {exc}") from None
    if remote:
        return
    addr = server.split(":", 1)[1] if server.startswith(("ip:", "ip6:")) else server
    addr = addr.rsplit(",", 1)[0].strip("[]")
    try:
        infos = {i[4][0] for i in socket.getaddrinfo(addr, None)}
    except OSError:
        raise UserError(f"fio server {server}: cannot resolve {addr}: check the address") from None
    own = set()
    try:
        own = {i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None)}
    except OSError:
        pass
    if not all(ipaddress.ip_address(a.split("%")[0]).is_loopback or a in own for a in infos):
        raise UserError(f"fio server {server} is on another host: the device's checks, purge and telemetry must run "
                        "there too: give --remote-shell NAME='ssh HOST' for its --host NAME (ssdpts installed on that "
                        "host; docs/hosts.md), nothing was written")


def executor(server: str | None, remote: bool = False, side=None):
    """The executor of a target: local fio, or a fio server's; with the device host's agent
    (``side``: device/remote.py's RemoteSide, or given later by ``use_agent``), the step gate runs
    there (engine/fioclient.py, docs/hosts.md)."""
    from ..engine.fio import FioExecutor

    if not server:
        return FioExecutor()
    from ..engine.fioclient import FioClientExecutor

    check_reachable(server, remote)
    fio = FioClientExecutor(server, agent=side)
    fio.check()
    return fio
