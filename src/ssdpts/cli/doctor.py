"""ssdpts doctor: audit the host against the host settings for a measurement (docs/doctor.md).

One line per check: current value, recommended value and the command that changes it.
--apply changes the reversible settings that differ (sysfs values, systemd units) and records
them in a state file; --undo puts them back."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="check the host's tuning for storage benchmarking (and fix it)",
                       description=__doc__)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--apply", action="store_true",
                   help="apply the reversible fixes and record them (undo with --undo); needs root")
    g.add_argument("--undo", action="store_true", help="restore everything a previous --apply changed")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=cmd)


_MARK = {True: ("ok ", "green"), False: ("FIX", "yellow"), None: ("n/a", "dim")}


def print_checks(checks, console) -> None:
    from rich.markup import escape

    width = max((len(c.name) for c in checks), default=10)
    for c in checks:
        mark, color = _MARK[c.ok]
        extra = " [--apply can do this]" if c.ok is False and c.reversible else ""
        console.print(f"[{color}]{mark}[/] {escape(c.name.ljust(width))}  current: {escape(c.current)} | "
                      f"recommended: {escape(c.recommended)} | fix: {escape(c.fix_command)}{escape(extra)}",
                      soft_wrap=True, highlight=False)


def _chosen_path() -> str | None:
    from ..engine import fiobin
    from ..errors import UserError

    try:
        return fiobin.choose().path
    except UserError:
        return None  # none at all: the fio check says "not installed"


def fio_checks(checks: list) -> list:
    """The audit's fio check naming the fio a run uses and why that one (engine/fiobin.py: built by
    make fio, else the system's; --fio PATH chooses another), followed by what it can do, asked of
    it (fio --cmdhelp): docs/methodology.md#fio."""
    from dataclasses import replace

    from ..device.host.audit import Check
    from ..engine import fiobin
    from ..errors import UserError

    try:
        fio = fiobin.choose()
    except UserError:
        return checks
    have = fiobin.features(fio.path)
    i = next((n for n, c in enumerate(checks) if c.name == "fio"), None)
    if i is None:
        return checks
    base = checks[i]
    checks[i] = replace(base, current=f"{base.current} at {fio.path} ({fiobin.SOURCES[fio.source]})",
                        fix_command=base.fix_command + "; or 'make fio' (fio 3.41 or later in build/fio/bin/fio)")
    features = Check("fio features", ", ".join(f"{name} {'yes' if have[name] else 'no'}" for name in have),
                     f"sprandom (fio {fiobin.SPRANDOM_VERSION} or later) for --precondition sprandom",
                     True if have["sprandom"] else None,
                     "make fio (ssdpts then runs build/fio/bin/fio), or --fio PATH of a fio with it", False,
                     "; ".join(f"{name}: {what}" for name, _, what in fiobin.FEATURES) + " (docs/methodology.md#fio)")
    return checks[:i + 1] + [features] + checks[i + 1:]


def cmd(args) -> int:
    import json

    from rich.console import Console

    from ..device.host import audit

    console = Console(soft_wrap=True)
    if args.undo:
        restored, failed = audit.undo()
        if args.json:
            print(json.dumps({"restored": restored, "failed": failed, "state_file": str(audit.state_file())}, indent=1))
        else:
            if not restored and not failed:
                console.print(f"nothing to undo ({audit.state_file()} records no changes)", highlight=False)
            for line in restored:
                console.print(f"[green]restored[/] {line}", highlight=False, soft_wrap=True)
            for line in failed:
                console.print(f"[red]failed[/] {line}", highlight=False, soft_wrap=True)
        return 1 if failed else 0
    checks = fio_checks(audit.audit(fio_path=_chosen_path()))
    if args.apply:
        done, failed = audit.apply(checks)
        checks = fio_checks(audit.audit(fio_path=_chosen_path()))
        if args.json:
            print(json.dumps({"applied": done, "failed": failed, "state_file": str(audit.state_file()),
                              "checks": [c.to_dict() for c in checks]}, indent=1))
            return 1 if failed else 0
        for line in done:
            console.print(f"[green]applied[/] {line}", highlight=False, soft_wrap=True)
        for line in failed:
            console.print(f"[red]failed[/] {line}", highlight=False, soft_wrap=True)
        if done:
            console.print(f"recorded in {audit.state_file()}: 'ssdpts doctor --undo' restores it", highlight=False)
        elif not failed:
            console.print("nothing reversible to apply", highlight=False)
    if args.json and not args.apply:
        print(json.dumps([c.to_dict() for c in checks], indent=1))
        return 0
    print_checks(checks, console)
    differ = [c for c in checks if c.ok is False]
    console.print(f"{len(checks)} checks: {sum(1 for c in checks if c.ok)} as recommended, {len(differ)} differ, "
                  f"{sum(1 for c in checks if c.ok is None)} not applicable here", highlight=False)
    return 1 if args.apply and failed else 0
