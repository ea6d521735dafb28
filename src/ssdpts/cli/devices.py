"""ssdpts devices: block devices with model, size and the safety verdict (read-only)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("devices", help="list block devices and whether ssdpts may use them", description=__doc__)
    p.set_defaults(func=cmd)


def cmd(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..device.safety import assess
    from ..device.target import list_block_devices

    t = Table(title="block devices")
    for h in ("device", "model", "serial", "size", "verdict"):
        t.add_column(h, overflow="fold")
    for d in list_block_devices():
        v = assess(d)
        verdict = ("[green]usable[/] (needs --destroy-data-on)" if v.usable else "[red]refused[/]: " + "; ".join(v.reasons))
        t.add_row(d.path, d.model or "—", d.serial or "—", f"{d.size_bytes / 1e9:,.2f} GB", verdict)
    Console().print(t)
    return 0
