"""``run`` and ``resume`` on many devices at once: every check here, then one solo run per device
(ssdpts/parallel.py supervises them)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import shlex

from ..errors import Interrupted, RunFailed, UserError

# Options of the parallel command that the per-device solo command does not take as they are.
_PER_DEVICE = {"target", "targets_from", "destroy_data_on", "cpus_per_device", "cpus", "quiet", "events_fd",
               "run_dir", "tests", "host", "fio_server", "remote_shell"}


def add_options(p: argparse.ArgumentParser) -> None:
    """--targets-from and --cpus-per-device (``--target`` and ``--destroy-data-on`` repeat)."""
    g = p.add_argument_group("many devices at once (docs/parallel.md)")
    g.add_argument("--targets-from", metavar="FILE",
                   help="targets to run in parallel, one per line (# comments), added to any --target")
    g.add_argument("--cpus-per-device", type=int, metavar="N",
                   help="pin each device's fio to N CPUs of its own (fio cpus_allowed); refused when there are "
                        "too few")
    from .hosts import add_options as host_options

    host_options(g)
    add_events_fd(p)


def add_events_fd(p: argparse.ArgumentParser) -> None:
    # The pipe a supervising 'ssdpts run --target A --target B' reads this run's progress from.
    p.add_argument("--events-fd", type=int, help=argparse.SUPPRESS)


def targets_of(args: argparse.Namespace) -> list[str]:
    """--target (repeatable) and the lines of --targets-from, in order; each device once."""
    from .common import check_path

    targets = list(args.target or [])
    if args.targets_from:
        try:
            text = Path(args.targets_from).read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--targets-from {args.targets_from}: cannot read it ({exc.strerror})") from None
        targets += [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]
    if not targets:
        raise UserError("no target: give --target PATH (repeat it, or --targets-from FILE, for several devices)")
    seen: dict[str, str] = {}
    for t in targets:
        check_path("--target", t)  # before anything starts for it (a remote agent, a check, a run)
        real = os.path.realpath(t)
        if real in seen:
            raise UserError(f"{t} is named twice (also as {seen[real]}): give each device once")
        seen[real] = t
    return targets


def one_confirmation(values: list[str] | None) -> str | None:
    """--destroy-data-on of a run on one device (repeatable only for many)."""
    if values and len(values) > 1:
        raise UserError(f"--destroy-data-on is given {len(values)} times for one target: give it once")
    return values[0] if values else None


def confirmations(values: list[str] | None, targets: list) -> list[str | None]:
    """Each target's --destroy-data-on: the one value that names it (safety.confirmation_matches);
    a value naming none of them is refused (a typo must not go unnoticed)."""
    from ..device.safety import guard as safety

    out: list[str | None] = [None] * len(targets)
    for v in values or []:
        hits = [i for i, t in enumerate(targets) if t is not None and safety.confirmation_matches(t, v)]
        if not hits:
            raise UserError(f"--destroy-data-on {v} names none of the targets: give each target's serial number or "
                            "path (nothing was written)")
        for i in hits:
            out[i] = v
    return out


def solo_argv(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """The command line without the options each device's run gets its own value of (and without
    the positionals, which the caller puts back): what stays is shared by every device."""
    longs = {o: a for a in parser._actions for o in a.option_strings}  # noqa: SLF001 - argparse has no public map
    out: list[str] = []
    skip = False
    for i, tok in enumerate(argv):
        if skip:
            skip = False
            continue
        if not tok.startswith("-") or tok == "-":
            prev = argv[i - 1] if i else ""
            if not prev.startswith("-") or "=" in prev or _nargs0(longs, prev):
                continue  # a positional (TEST or RUN_DIR): the caller adds them back
            out.append(tok)
            continue
        name = tok.split("=", 1)[0]
        hits = [o for o in longs if o == name] or [o for o in longs if o.startswith(name) and name.startswith("--")]
        action = longs[hits[0]] if len(hits) == 1 else None
        if action is not None and action.dest in _PER_DEVICE:
            skip = "=" not in tok and action.nargs != 0
            continue
        out.append(tok)
    return out


def _nargs0(longs: dict, tok: str) -> bool:
    name = tok.split("=", 1)[0]
    hits = [o for o in longs if o == name] or [o for o in longs if o.startswith(name) and name.startswith("--")]
    return len(hits) == 1 and longs[hits[0]].nargs == 0


def run_parallel(req, tests: list[str], shared: list[str]) -> int:
    """Every device of the request (run/request.py) checked here (as its own run will check it
    again), confirmed at the terminal when there is one, then one supervised solo run per device:
    ``ssdpts run TESTS SHARED`` with the device's own options (``shared``: the options every device
    shares, solo_argv)."""
    from contextlib import ExitStack

    from ssdpts.run import cpus, launch
    from ..device.safety import guard as safety
    from ..pts.plan import required_bytes

    seen: dict[str, str] = {}
    for pl in req.targets:
        key = f"{pl.host or pl.server}:{pl.path}" if pl.remote else os.path.realpath(pl.path)  # a remote path names a device there
        other = seen.setdefault(key, pl.given)
        if other != pl.given:
            raise UserError(f"{pl.given} and {other} are the same device on {'its host' if pl.remote else 'this host'}: "
                            "give each device once")
    with ExitStack() as stack:
        placed = [named(pl.given, stack.enter_context, launch.placed(req, pl)) for pl in req.targets]
        preps, sides = [w.prep for w in placed], [w.side for w in placed]
        _one_run_per_device([pl.given for pl in req.targets], preps, sides)
        confirm = confirmations(list(req.confirmations), [p.target for p in preps])
        pins = (cpus.split(req.cpus_per_device, len(req.targets)) if req.cpus_per_device
                else [req.cpus] * len(req.targets))
        tokens = []
        for pl, prep, conf, side in zip(req.targets, preps, confirm, sides):
            needed = required_bytes(prep.parts) if prep.target.kind == "block" else prep.target.size_bytes
            if side is not None:  # checked where the device is; no terminal there to ask at
                named(pl.given, side.check, needed, conf)
            else:
                named(pl.given, safety.check_writable, prep.target, needed_bytes=needed, confirm=conf,
                      interactive=req.interactive)
            tokens.append(conf or safety.confirm_token(prep.target) if prep.target.kind == "block" else None)
    children = []
    for pl, tok, pin in zip(req.targets, tokens, pins):
        argv = ["run", *tests, *shared]
        if pl.host is not None:  # the host keeps its name (messages, the manifest's device_host)
            argv += ["--host", f"{pl.host}={pl.server}", "--target", f"{pl.host}:{pl.path}"]
            argv += ["--remote-shell", f"{pl.host}={shlex.join(pl.shell)}"] if pl.shell else []
        else:
            argv += ["--target", pl.path, *(["--fio-server", pl.server] if pl.server else [])]
            argv += ["--remote-shell", shlex.join(pl.shell)] if pl.shell else []
        argv += ["--destroy-data-on", tok] if tok else []
        argv += ["--cpus", pin] if pin else []
        children.append(_child(pl.given if pl.server else os.path.basename(pl.given) or pl.given, argv))
    return _supervise(children, req.quiet)


def _one_run_per_device(targets: list[str], preps: list, sides: list) -> None:
    """Two targets of this host that share a device or file anywhere in their stacks (two loop
    devices over one file or its hard link, a loop device over another target, two partitions of
    one disk) are one device: refused before anything is written, as their runs' locks would."""
    from ..device.safety.claim import lock_keys

    owner: dict[str, tuple[str, str]] = {}
    for t, prep, side in zip(targets, preps, sides):
        if side is not None:
            continue
        for key, what in lock_keys(prep.target):
            other, seen = owner.setdefault(key, (t, what))
            if other != t:
                on = what if seen == what else f"{seen}, which {what} is another name of"
                raise UserError(f"{t} and {other} are one device (both rest on {on}): a test on one destroys the "
                                "other's data and measures it too; give each device once")


def named(target: str, fn, *a, **kw):
    """A check of one of many targets; its refusal names the target."""
    try:
        return fn(*a, **kw)
    except UserError as exc:
        if target not in str(exc) and os.path.realpath(target) not in str(exc):
            exc.args = (f"{target}: {exc}",)
        raise


def _child(label: str, argv: list[str]):
    from ssdpts.run.parallel import Child

    return Child(label=label, argv=argv)


def resume_parallel(req) -> int:
    """One supervised 'ssdpts resume RUN_DIR' per unfinished run of the request (run/request.py);
    --destroy-data-on values go to the run whose target they name."""
    from ssdpts.run.request import recorded
    from ..device.remote.remote import side_for
    from ..device.target import open_target

    def target_of(d: Path):
        rec = recorded(d)
        if rec.target_path is None:
            return None  # the child says what is wrong with it
        try:
            side = side_for(rec.device_host, rec.target_path)
            if side is None:
                return open_target(rec.target_path)
            with side:
                return side.target
        except (OSError, ValueError, KeyError, TypeError, UserError, Interrupted):
            return None  # the child says what is wrong with it

    confirm = confirmations(list(req.confirmations), [target_of(d) for d in req.run_dirs])
    children = []
    for d, conf in zip(req.run_dirs, confirm):
        argv = ["resume", str(d), *(["--keep-window"] if req.keep_window else [])]
        argv += ["--fio", req.fio] if req.fio else []
        argv += ["--destroy-data-on", conf] if conf else []
        t = target_of(d)
        children.append(_child(os.path.basename(t.path) if t else d.name, argv))
    return _supervise(children, req.quiet)


def _supervise(children: list, quiet: bool) -> int:
    from ssdpts.run.parallel import exit_code, make_view, signal_name, supervise

    caught = supervise(children, make_view(children, quiet))
    refused = [c for c in children if c.status == "refused"]
    if refused and not caught:
        c = refused[0]
        why = (c.error or "refused").removeprefix("ssdpts: ")
        why = why if c.label in why else f"{c.label}: {why}"
        raise UserError(why if "nothing was written" in why else why + "; nothing was written to any target")
    for c in children:
        line = f"{c.label}: {c.status}" + (f", {c.run_dir}" if c.run_dir else "")
        if c.error and c.status != "complete":
            line += f" ({c.error.removeprefix('ssdpts: ')})"
        print(line, flush=True)
    left = [c.run_dir for c in children if c.run_dir and c.status != "complete"]
    if left:
        print("continue with: ssdpts resume " + " ".join(left), flush=True)
    code = exit_code(children, caught)
    if caught:
        raise _interrupted(signal_name(caught), code)
    if code == 1:
        raise RunFailed(f"{sum(c.status != 'complete' for c in children)} of {len(children)} runs did not complete; "
                        "every other run is complete")
    return code


def _interrupted(name: str, code: int) -> Interrupted:
    exc = Interrupted(f"interrupted by {name}: every device's finished rounds are saved in its run directory")
    exc.exit_code = code  # type: ignore[misc]
    return exc


def events_ready(events):
    """The gate of a run under a supervisor: None for a solo run."""
    if events is None:
        return None

    def ready() -> None:
        if not events.ready():
            raise UserError("not started: another target of this parallel run was refused (nothing was written)")
    return ready


def solo_command(argv: list[str]) -> list[str]:
    """The command line recorded in the manifest: the solo command this run is (no --events-fd)."""
    out, skip = ["ssdpts"], False
    for tok in argv[1:]:
        if skip:
            skip = False
        elif tok == "--events-fd":
            skip = True
        elif not tok.startswith("--events-fd="):
            out.append(tok)
    return out


def run_one(start, events) -> int:
    """One run (``start()`` -> (store, summary)) as the CLI ends it: summary, report, library entry;
    under a supervisor (``events``) its outcome also goes down the pipe."""
    from .output import finish, print_summary

    try:
        store, summary = start()
    except (Interrupted, RunFailed) as exc:
        if events:
            events.ended("failed" if isinstance(exc, RunFailed) else "interrupted", getattr(exc, "run_dir", None),
                         str(exc))
        finish(getattr(exc, "run_dir", None), complete=False)
        raise
    except UserError as exc:
        if events:
            events.ended("refused", None, str(exc))
        raise
    if events is None:
        print_summary(store, summary)
    finish(store.path, complete=True)
    if events:
        events.ended("complete", store.path)
    return 0
