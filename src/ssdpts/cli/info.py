"""ssdpts info TARGET: identity and metadata of a device (read-only; writes nothing anywhere).

Runs the same collectors as a run (sysfs, lsblk, lspci, and nvme-cli / smartctl / hdparm /
sdparm where they apply), keeps their raw output in memory only, and prints the parsed fields
with their units. --json prints the machine form (the manifest's "device" section)."""

from __future__ import annotations
from ssdpts.pts.units import fmt_capacity


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="show a device's identity and metadata (read-only)", description=__doc__)
    p.add_argument("target", metavar="TARGET", help="block device (e.g. /dev/nvme0n1) or file")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--host", action="store_true", help="also show the host facts recorded with a run")
    p.add_argument("--all", action="store_true", help="also list fields that are not available")
    p.set_defaults(func=cmd)


def _fmt(entry, unit_hidden: bool = False) -> str:
    import json

    v, unit = entry["value"], entry["unit"]
    if isinstance(v, bool):
        text = "yes" if v else "no"
    elif isinstance(v, int) and unit == "bytes":
        text = f"{v:,} bytes" + (f" ({fmt_capacity(v)})" if v >= 1e6 else "")
    elif isinstance(v, (list, dict)):
        text = json.dumps(v, separators=(", ", ": "), default=str)
    else:
        text = f"{v}" + ("" if unit_hidden or not unit or unit in ("bitfield", "count") else f" {unit}")
    if unit == "bitfield" and isinstance(v, int):
        text = f"{v} (0x{v:x})"
    return text


def cmd(args) -> int:
    import json

    from ..device import identify, telemetry
    from ..device.fields import GROUPS
    from ..device.target import open_target

    target = open_target(args.target)
    info, _raw = identify.gather(target)  # raw outputs stay in memory: info writes nothing
    src = telemetry.make_source(target, info=info)
    snap = src.snapshot()
    src.close()
    hostfacts = None
    if args.host:
        from ..device.host import host

        hostfacts = host.collect(use_lshw=True)
    if args.json:
        doc = {"target": target.to_dict(), "device": info, "telemetry": snap}
        if hostfacts is not None:
            doc["host"] = hostfacts
        print(json.dumps(doc, indent=1, default=str))
        return 0

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    ident = info.get("identity", {})

    def val(name: str) -> str:
        e = ident.get(name)
        return _fmt(e) if isinstance(e, dict) else "—"

    console.print(f"[bold]{escape(target.path)}[/]: {escape(val('model'))} · serial {escape(val('serial'))} · "
                  f"firmware {escape(val('firmware'))} · {escape(val('capacity_bytes'))}", highlight=False)
    if info.get("note"):
        console.print(escape(info["note"]), style="dim")
    for group in GROUPS:
        entries = info.get(group) or {}
        avail = {k: e for k, e in entries.items() if isinstance(e, dict)}
        missing = {k: e for k, e in entries.items() if isinstance(e, str)}
        if not avail:
            reasons = sorted(set(missing.values()))
            console.print(f"[bold]{group}[/]: {escape(reasons[0] if len(reasons) == 1 else 'not available')}",
                          highlight=False)
            continue
        t = Table(title=group, title_justify="left", show_header=True, header_style="bold")
        t.add_column("field", no_wrap=True)
        t.add_column("value", overflow="fold")
        for name, e in entries.items():
            if isinstance(e, dict):
                t.add_row(name, escape(_fmt(e)))
            elif args.all:
                t.add_row(name, f"[dim]{escape(e)}[/]")
        console.print(t)
        if missing and not args.all:
            console.print(f"  [dim]{len(missing)} more fields not available (--all lists them)[/]", highlight=False)
    health = snap.get("health")
    t = Table(title="telemetry (one snapshot now)", title_justify="left")
    t.add_column("field", no_wrap=True)
    t.add_column("value", overflow="fold")
    t.add_row("health", escape(str(health)))
    for k, v in snap.items():
        if k in ("health", "block"):
            continue
        t.add_row(k, escape(str(v)))
    blk = snap.get("block")
    t.add_row("block", escape(json.dumps(blk) if isinstance(blk, dict) else str(blk)))
    console.print(t)
    if hostfacts is not None:
        t = Table(title="host", title_justify="left")
        t.add_column("field", no_wrap=True)
        t.add_column("value", overflow="fold")
        for k, v in hostfacts.items():
            t.add_row(k, escape(json.dumps(v, default=str) if isinstance(v, (list, dict)) else str(v)))
        console.print(t)
    return 0
