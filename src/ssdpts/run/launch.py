"""From a run request (run/request.py) to a started run: each target placed where it is (its fio
server reached, its host's agent started when it has a remote shell: docs/hosts.md), opened and
planned, its executor chosen; then session.start_run with the request's choices."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
import ipaddress
import socket
from typing import Callable, Iterator

from ssdpts.errors import UserError
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.request import Placement, RunRequest, check_path


@dataclass
class Prepared:
    """A target opened and its parts planned for the request's RunSpec (nothing written)."""

    spec: RunSpec
    target: object
    parts: list
    size_bytes: int | None


def open_target_at(path: str, size_bytes: int | None, target=None):
    """The target at ``path`` (a file of ``size_bytes`` to create; ``target``: already opened
    where it is, device/remote/remote.py), its name as fio's job file gets it checked; ``--size`` on a
    block device refused."""
    from ssdpts.device.target import open_target

    target = target or open_target(path, size_bytes=size_bytes)
    check_path("--target", path, resolved=target.real_path)  # the name fio's job file gets
    if size_bytes is not None and target.kind == "block":
        raise UserError(f"--size applies to file targets only: {path} is a block device; drop --size")
    return target


def prepare(req: RunRequest, placement: Placement, target=None) -> Prepared:
    """The request's RunSpec planned on one target. ``target``: the target as its host's agent
    opened it (device/remote/remote.py), instead of opening the placement's path here."""
    from ssdpts.pts.plan import build_parts

    target = open_target_at(placement.path, req.size_bytes, target)
    spec = with_spare(req.spec, target, req.spare_of)
    parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    return Prepared(spec=spec, target=target, parts=parts, size_bytes=req.size_bytes)


def with_spare(spec: RunSpec, target, spare_of: Callable[[str], tuple[float, str] | None] | None) -> RunSpec:
    """``--precondition sprandom`` without an OP: the spec with the drive's over-provisioning from
    the drive model of an earlier WSAT of the same drive (``spare_of``, by its serial number), or
    refused in one line saying how to give it (docs/methodology.md#preconditioning-by-sprandom)."""
    if spec.precondition != "sprandom" or spec.spr_op is not None:
        return spec
    serial = getattr(target, "serial", None) or ""
    found = spare_of(serial) if serial and spare_of is not None else None
    if found is None:
        why = (f"the results library has no earlier WSAT of drive {serial} with a drive model to give it" if serial
               else f"{target.path} has no serial number to find an earlier WSAT's drive model by")
        raise UserError(f"--precondition sprandom: no OP given, and {why}: give it as sprandom:OP, e.g. sprandom:0.07 "
                        "for 7% spare (docs/methodology.md#preconditioning-by-sprandom)")
    return spec.with_(spr_op=found[0], spr_op_source=found[1])


def check_reachable(server: str, remote: bool = False) -> None:
    """Without a remote shell (``remote``), device identity, safety checks, claim, purge and telemetry
    run here, on this host's view of the device: so the fio server must run on this host (loopback,
    or one of its addresses). With one, they run on the server's host (device/remote/agent.py)."""
    from ssdpts.engine.fioclient import server_address

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


def remote_side(placement: Placement, size_bytes: int | None = None):
    """The device side of a target whose host has a --remote-shell (device/remote/remote.py), else None."""
    if placement.shell is None:
        return None
    if not placement.server:
        raise UserError(f"--remote-shell for {placement.host or placement.path}: the device's fio needs that host's "
                        "fio server too: give --host NAME=ADDRESS and --target NAME:PATH (or --fio-server)")
    from ssdpts.device.remote.remote import RemoteSide

    return RemoteSide(list(placement.shell), placement.path, name=placement.host or placement.server,
                      size_bytes=size_bytes)


def executor(server: str | None, remote: bool = False, side=None, *, fio: str | None = None,
             sprandom: bool = False):
    """The executor of a target: local fio, or a fio server's; with the device host's agent
    (``side``: device/remote/remote.py's RemoteSide, or given later by ``use_agent``), the step gate runs
    there (engine/fioclient.py, docs/hosts.md). ``fio``: --fio PATH (else the one make fio built,
    else the system's: engine/fiobin.py); ``sprandom``: the run preconditions by sprandom, which a
    fio too old for it refuses in one line, before anything is written."""
    from ssdpts.engine import fiobin
    from ssdpts.engine.fio import FioExecutor

    chosen = fiobin.choose(fio)
    if not server:
        if sprandom:
            fiobin.require_sprandom(chosen)
        return FioExecutor(chosen=chosen)
    from ssdpts.engine.fioclient import FioClientExecutor

    check_reachable(server, remote)
    client = FioClientExecutor(server, agent=side, chosen=chosen)
    client.check(sprandom=sprandom)
    return client


@dataclass
class Placed:
    """One target where it is: planned (``prep``), with its device side on its host (None: here)."""

    placement: Placement
    prep: Prepared
    side: object | None


@contextmanager
def placed(req: RunRequest, placement: Placement) -> Iterator[Placed]:
    """The target placed and planned: its fio server checked first (without a remote shell its
    checks would run on this host), its host's agent started when it has a remote shell, closed at
    the end."""
    if placement.server:
        check_reachable(placement.server, placement.remote)
    side = remote_side(placement, req.size_bytes)
    try:
        yield Placed(placement, prepare(req, placement, side.target if side else None), side)
    finally:
        if side is not None:
            side.close()


def executor_of(where: Placed, fio: str | None = None):
    """The executor of a placed target (:func:`executor`; ``fio``: --fio PATH)."""
    return executor(where.placement.server, where.placement.remote, where.side, fio=fio,
                    sprandom=where.prep.spec.precondition == "sprandom")


def start(req: RunRequest, where: Placed, fio, *, progress, ready: Callable[[], None] | None = None):
    """The request's run on its one placed target through ``fio`` (session.start_run): (store,
    summary)."""
    from ssdpts.run.session import start_run

    return start_run(where.prep.spec, where.prep.target, executor=fio, out_dir=req.out_dir, confirm=req.confirm,
                     interactive=req.interactive and where.side is None, progress=progress, argv=list(req.argv),
                     describe=req.describe, ready=ready, side=where.side, parts=where.prep.parts)
