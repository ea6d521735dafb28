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


def resolve(target: str, hosts: dict[str, str]) -> tuple[str, str | None]:
    """A target as (path on its host, fio server or None for this host)."""
    name, sep, path = target.partition(":")
    if sep and name in hosts:
        return path, hosts[name]
    if sep and name and not name.startswith("/") and "/" not in name and hosts:
        raise UserError(f"--target {target}: no --host {name}=ADDRESS was given: add it, or name one of "
                        f"{', '.join(sorted(hosts))}")
    return target, None


def check_reachable(server: str) -> None:
    """Device identity, safety checks, claim, purge and telemetry run here, on this host's view of
    the device: so the fio server must run on this host (loopback, or one of its addresses). A
    server elsewhere needs those collectors run on its host, which is not built yet (docs/hosts.md)."""
    from ..engine.fioclient import server_address

    try:
        server = server_address(server)
    except ValueError as exc:
        raise UserError(f"--fio-server: {exc}") from None
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
        raise UserError(f"fio server {server} is on another host: ssdpts does not yet run its device checks, "
                        "purge and telemetry there (docs/hosts.md); run ssdpts on that host, nothing was written")


def executor(server: str | None):
    from ..engine.fio import FioExecutor

    if not server:
        return FioExecutor()
    from ..engine.fioclient import FioClientExecutor

    check_reachable(server)
    fio = FioClientExecutor(server)
    fio.check()
    return fio
