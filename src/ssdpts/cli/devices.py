"""ssdpts devices: block devices with model, size and the safety verdict (read-only)."""

from __future__ import annotations
from ssdpts.pts.units import fmt_capacity


def add_parser(sub) -> None:
    p = sub.add_parser("devices", help="list block devices and whether ssdpts may use them", description=__doc__)
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from rich.markup import escape

    from ..device.safety.guard import assess
    from ..device.safety.stack import resolve
    from ..device.target import list_block_devices

    t = Table(title="block devices")
    for h in ("device", "model", "serial", "size", "rests on", "verdict"):
        t.add_column(h, overflow="fold")
    for d in list_block_devices():
        v = assess(d)
        verdict = ("[green]usable[/] (needs --destroy-data-on)" if v.usable
                   else "[red]refused[/]: " + escape("; ".join(v.reasons)))
        t.add_row(d.path, escape(d.model or "—"), escape(d.serial or "—"), fmt_capacity(d.size_bytes),
                  escape(rests_on(resolve(d.name))), verdict)
    Console().print(t)
    return 0


def rests_on(stack) -> str:
    """What a device rests on, one step per arrow: '/dev/loop3 -> /srv/a.img'; '—' for a plain drive."""
    steps = [f"/dev/{la.name}" for la in stack.layers if la.how != "disk"]
    steps += [b.path.removesuffix(" (deleted)") for b in stack.files if b.path]
    return " → ".join(steps) or "—"
