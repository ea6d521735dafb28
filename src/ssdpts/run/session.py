"""Starting and resuming runs: safety guard, run directory, purger and executor wired together.

The CLI's run, resume and demo commands are thin adapters over these two functions, which the
tests call directly (with a FakeExecutor where no real I/O is wanted).
"""

from __future__ import annotations

from contextlib import contextmanager
import json
import os
from pathlib import Path
import sys
from typing import Callable

from ssdpts import __version__
from ssdpts.run import alarm, preflight
from ssdpts.device import contents, fingerprint, identify
from ssdpts.device.safety import guard as safety
from ssdpts.device.safety import stack
from ssdpts.device.safety.claim import Claim
from ssdpts.device.side import Collected, LocalSide, PurgeChoice
from ssdpts.device.target import Target, open_target
from ssdpts.engine import rtsched
from ssdpts.engine.base import Area, Executor
from ssdpts.engine.jobfile import path_problem
from ssdpts.results import analysis
from ssdpts.results.analysis import kept_sessions
from ssdpts.results.steprecord import read_steps
from ssdpts.results.records import Manifest, Resumption
from ssdpts.errors import HostLost, Interrupted, UserError
from ssdpts.run.runner import RunContext, close_trace, execute
from ssdpts.pts.parts import SPRANDOM_LABEL, Part
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import active_range_bytes, build_parts, deviations_for, required_bytes, segments_of
from ssdpts.results import seal
from ssdpts.results.verify import integrity
from ssdpts.store import RunStore, utc_now


def _context(store: RunStore, spec: RunSpec, parts: list[Part], side, executor: Executor, progress,
             info: dict | None, telemetry_source, session: int = 0, keep: frozenset[int] = frozenset(),
             latmon=None) -> RunContext:
    target = side.target
    ar = active_range_bytes(target.size_bytes, spec.ar_pct)
    return RunContext(
        store=store, parts=parts, executor=executor, filename=target.real_path,
        area=Area(0, ar, segments_of(spec, ar)), capacity_bytes=target.size_bytes,
        seed=spec.seed, ioengine=spec.ioengine, purger=lambda log: side.purge(spec.purge, info, log),
        deviations=store.manifest().doc.get("deviations") or [], progress=progress,  # as recorded: not reworded
        telemetry=telemetry_source, guard=side.guard, session=session, keep=keep,
        cpus_allowed=spec.cpus, latmon=latmon,
    )


def run_deviations(spec: RunSpec, target: Target, method: PurgeChoice) -> list[str]:
    """Every deviation from the PTS a run records (``ssdpts plan`` states the same list)."""
    out = deviations_for(spec, target.logical_block_size_bytes)
    if spec.purge != "none" and not method.pts:
        out.append(f"purge by {method.disclosure}")
    return out


def _execute(store: RunStore, spec: RunSpec, parts: list[Part], side, executor: Executor, progress,
             info: dict | None, session: int = 0, keep: frozenset[int] = frozenset()) -> dict:
    """Write cache per profile (restored afterwards, also after an interrupt), telemetry, run.
    ``parts``: the run's plan (pts/plan.build_parts), made once when the run started or resumed."""
    try:
        try:
            src = side.start_telemetry(info)
            summary, record = side.apply_write_cache(spec.prof.write_cache, info)
        except HostLost as exc:  # the device's host went away before the first round (device/remote/remote.py)
            store.update_manifest(status="interrupted", interruption={
                "at": utc_now(), "signal": None, "reason": str(exc), "host_lost": True})
            stop = Interrupted(f"interrupted: {exc}: nothing was measured yet; once it is back continue with "
                               f"'ssdpts resume {store.path}'")
            stop.exit_code = exc.exit_code  # type: ignore[misc]
            stop.run_dir = store.path  # type: ignore[attr-defined]
            raise stop from None
        store.update_manifest(write_cache=summary, write_cache_record=record, telemetry=src.describe())
        mon = _latmon(store, spec, side, progress)
        # the tests only: the report is drawn at normal priority; a new way to the storage found
        # mid-round stops the run at once (run/alarm.py)
        with rtsched.realtime(spec.realtime), alarm.armed(side):
            return execute(_context(store, spec, parts, side, executor, progress, info, src, session, keep, mon))
    finally:
        _latmon_finish(store, side)
        restored = side.finish()
        _record_end(store, side, restored)


def _record_end(store: RunStore, side, restored: dict | None) -> None:
    """The run has stopped writing (any end): the write cache's restore and what the device holds
    now (device/contents.py: what resume compares), in the manifest."""
    block = side.target.kind == "block"
    if restored is not None or block:
        try:
            store.update_manifest(**({} if restored is None else {"write_cache_restored": restored}), **(
                {"contents_seal": side.seal_contents() or contents.unreadable("the device's host did not answer",
                                                                               {"pid": os.getpid()})} if block else {}))
        except (UserError, OSError):
            pass  # the results disk is full: the run's own error says so (and resume asks again)


def _latmon(store: RunStore, spec: RunSpec, side, progress):
    """The drive's OCP latency monitor, decided once per session (device/latmon.py): its description
    in the manifest; where there is none, that one line (``not available: why``) and nothing else."""
    start = getattr(side, "start_latmon", None)
    if start is None:  # a side without the monitor's requests
        return None
    mon = start(spec.latmon_ms)
    store.update_manifest(latency_monitor=mon.describe())
    if not mon.available:
        progress.message(f"latency monitor: {mon.reason}")
    return mon


def _latmon_finish(store: RunStore, side) -> None:
    """The configuration the drive's latency monitor had at the start set again, and recorded."""
    finish = getattr(side, "finish_latmon", None)
    if finish is None:
        return
    try:
        restored = finish()
        if restored is not None:
            store.update_manifest(latency_monitor_restored=restored)
    except (UserError, HostLost, OSError):
        pass  # the run's own error says what happened; the drive's saved configuration was never changed


def start_run(spec: RunSpec, target: Target, *, executor: Executor, out_dir: Path, confirm: str | None,
              interactive: bool = False, progress=None, argv: list[str] | None = None,
              describe: str | None = None, ready: Callable[[], None] | None = None,
              side=None, parts: list | None = None) -> tuple[RunStore, dict]:
    """Check, create the run directory, run. Returns (store, summary); raises on refusal/failure.

    ``ready``: called once every check has passed, before the run directory is made and the first
    byte written; a parallel run (parallel.py) waits there until every other device passed too, and
    raises to stop when one did not. ``side``: where the device's checks, purge and telemetry run
    (device/side.py; default: this host, on ``target``; device/remote/remote.py: the device's own host).
    ``parts``: the run's plan when the caller made it for this spec and target (run/launch.py, which
    previewed it), so that a run is planned once.

    Every check that can refuse comes before the first byte is written, to the device or anywhere
    else: the results disk, the ssdpts lock on the device (another run?), the safety verdict and the
    confirmation, the kernel's exclusive claim. The claim is then held until the run ends."""
    from ssdpts.run.runner import NullProgress

    progress = progress or NullProgress()
    side = side or LocalSide(target)
    # the run's plan, made once: the claimed target below is this one (a file target is created at
    # this size, in this directory: the same logical block size)
    if parts is None:
        parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    needed = required_bytes(parts)
    space = preflight.results_space(out_dir, parts)
    seal.configured_key()  # a seal key that cannot be read is refused before anything is written
    _refuse_out_on_target(side, target, out_dir)
    description = identify.load_description(describe) if describe else None
    tool_version = executor.version()
    with side.claimed(needed if target.kind == "block" else target.size_bytes, confirm, interactive):
        target = side.target
        got = side.collect(spec.purge, tool_version)  # refuses an unknown purge method before anything is written
        deviations = run_deviations(spec, target, got.purge)
        if getattr(executor, "stonewall", False):  # engine/fioclient.py: a fio server without the gate there
            deviations.append("steps scheduled by a fio server's stonewall (fio --client): gaps of ~0.1-0.4 s "
                              "between steps, boundaries not measured")
        manifest = device_manifest(target, got, executor.name, tool_version, confirm, argv, description, space,
                                   side, fio_binary=chosen_fio(executor)).with_changes(
            fio_server=getattr(executor, "server", None),  # engine/fioclient.py; resume runs there again
            run_spec=spec.to_dict(), pts_compliant=not deviations, deviations=deviations,
            active_range_bytes=active_range_bytes(target.size_bytes, spec.ar_pct), parts={}, resumptions=[],
            **_writing(target))
        if ready is not None:
            ready()
        label = "-".join(spec.tests) + "-" + target.identity_label
        store = RunStore.create(out_dir, label, manifest)
        side.set_run_dir(str(store.path))
        store_device_files(store, got)
        if space.warning:
            progress.message(space.warning)
        for line in got.audit_failed:
            progress.message(line)
        return store, _execute(store, spec, parts, side, executor, progress, got.info)


def _writing(target: Target) -> dict:
    """The manifest's record that a run writes the block device now (device/contents.py): replaced by
    what it holds when the run stops; a run killed before that leaves this, which proves nothing."""
    if target.kind != "block":
        return {}
    return {"contents_seal": contents.writing({"pid": os.getpid(), "command": " ".join(["ssdpts", *sys.argv[1:]])[:300]})}


def _refuse_unnameable(run_dir, paths: list[str]) -> None:
    """A run made before such paths were refused at input: a target or run directory fio's job
    file cannot name (engine/jobfile.py) is refused before anything is written, not at the first
    job file."""
    for where in dict.fromkeys(paths):
        why = path_problem(where)
        if why is not None:
            raise UserError(f"{run_dir} cannot be continued: {where!r}: {why}; start a new run on a path fio can "
                            "name (nothing was written)")


def _resume_confirmation(side, man: Manifest, parts, confirm: str | None, proof, why: str | None,
                         interactive: bool) -> tuple[str | None, int, Callable[[str], str], list[str]]:
    """(confirmation to use, bytes needed, the prompt, what changed) for a resume. A block device:
    the run's confirmation stands when its identity is proven and it holds what the run left
    (device/contents.py); otherwise the destruction must be confirmed again, on the command line or
    at the prompt, saying why. A file: its marker decides (safety.py)."""
    target = side.target
    if target.kind != "block":
        return confirm, target.size_bytes, input, []
    changed = side.contents_changes(man.doc.get("contents_seal")) if confirm is None else []
    use = confirm if confirm is not None else (man.doc.get("confirmation") if proof and not changed else None)
    ask = input
    if use is None and (changed or why is not None):
        lead = "; ".join([*([f"{why}, so nothing proves it is the device this run started on"] if why else []),
                          *changed[:1]])
        if not interactive:
            raise UserError(f"{lead}: pass --destroy-data-on={safety.confirm_token(target)} to 'ssdpts resume' "
                            "to confirm that its data may be destroyed (nothing was written)")

        def ask(prompt: str) -> str:
            return input(f"{lead}. {prompt}")
    return use, required_bytes(parts), ask, changed


def _contents_note(confirm: str | None, changed: list[str]) -> str:
    """How a resumption knew the block device held only the run's data (device/contents.py)."""
    if confirm is not None:
        return "not compared: the destruction confirmed again by --destroy-data-on"
    return "changed: the destruction confirmed again at the prompt" if changed else "unchanged since the run stopped"


def _refuse_out_on_target(side, target: Target, out_dir) -> None:
    """The results must not live on what the run destroys (device/safety/stack.py); a device on another
    host cannot hold this host's results directory."""
    if side is not None and side.remote:
        return
    why = stack.out_dir_conflict(target, str(out_dir))
    if why:
        raise UserError(why)


@contextmanager
def claimed(target: Target, needed_bytes: int, confirm: str | None, interactive: bool):
    """The checks every writing command passes before its first byte (device/side.py,
    LocalSide.claimed). Yields (side, target); the claim is held until the block ends."""
    with LocalSide(target).claimed(needed_bytes, confirm, interactive) as side:
        yield side, side.target


def device_manifest(target: Target, got: Collected, executor_name: str, tool_version: str, confirm: str | None,
                    argv: list[str] | None, description, space, side, kind: str | None = None,
                    fio_binary: dict | None = None) -> Manifest:
    """The manifest with the entries every run directory has (Manifest.new); ``fio_binary``: which
    fio ran and why (:func:`chosen_fio`)."""
    man = Manifest.new(kind=kind, ssdpts_version=__version__, fio_version=tool_version, executor=executor_name,
                       command_line=argv if argv is not None else sys.argv, target=target,
                       fingerprint=got.fingerprint, confirmation=confirm, claim=got.claim,
                       results_space=space.to_dict(), device=got.info, host=got.host, audit=got.audit,
                       description=description, device_host=side.remote)
    return man.with_changes(fio_binary=fio_binary) if fio_binary else man


def chosen_fio(executor: Executor) -> dict | None:
    """The fio an executor runs, its path and why that one (engine/fiobin.py: --fio PATH, built by
    make fio, the system's); None for an executor without fio (the model)."""
    chosen = getattr(executor, "chosen", None)
    return chosen.to_dict() if chosen is not None else None


def store_device_files(store: RunStore, got: Collected) -> None:
    """The collectors' raw output, the host record and the audit, under device/."""
    for name, text in got.raw.items():
        store.write_device_file(name, text)
    store.write_device_file("host.json", json.dumps(got.host, indent=1, default=str))
    store.write_device_file("audit.json", json.dumps(got.audit, indent=1, default=str))


def start_other_run(kind: str, target: Target, *, executor: Executor, out_dir: Path, confirm: str | None,
                    interactive: bool, argv: list[str] | None, describe: str | None,
                    entries: Callable[[Target], dict], body: Callable[[RunStore, Target, LocalSide, dict | None], dict],
                    purge: str | None = None,
                    render_partial: Callable[[Path], object] | None = None) -> tuple[RunStore, dict]:
    """Start a run that is not a PTS run (``kind``: ssdpts quick, trace replay): the checks of
    ``ssdpts run`` (claimed: lock, safety verdict and confirmation, kernel claim), the same manifest
    and device records (``entries(target)``: the kind's own manifest entries, its ``deviations``
    among them), then ``body(store, target, side, info)`` under outcome_recorded: the kind purges
    through ``side.purge`` (judged by its effect, as every run's purge) and checks the device is
    still its own through ``side.guard``. ``purge``: the method the run will ask for, chosen (and an
    unsupported one refused) before anything is written; None: the run does not purge.
    ``render_partial``: the kind's report of what a stopped run measured (kinds.Kind.render_partial,
    given by the command: the run machinery does not import renderers). Returns (store,
    body's document); the run directory is unlocked whatever the end, so that the next command
    (report, verify, the results library) may take it."""
    space = preflight.results_space(out_dir, [])
    seal.configured_key()
    _refuse_out_on_target(None, target, out_dir)
    description = identify.load_description(describe) if describe else None
    tool_version = executor.version()
    with claimed(target, target.size_bytes, confirm, interactive) as (side, target):
        got = side.collect(purge, tool_version)
        manifest = device_manifest(target, got, executor.name, tool_version, confirm, argv, description, space, side,
                                   kind, fio_binary=chosen_fio(executor)).with_changes(**entries(target))
        store = RunStore.create(out_dir, f"{kind}-{target.identity_label}", manifest)
        try:
            side.set_run_dir(str(store.path))
            store_device_files(store, got)
            try:
                with outcome_recorded(store, list(manifest.to_dict()["deviations"]), render_partial), alarm.armed(side):
                    doc = body(store, target, side, got.info)
            finally:
                close_trace(executor, store)
        finally:
            store.unlock()
        return store, doc


@contextmanager
def outcome_recorded(store: RunStore, deviations: list[str], render_partial: Callable[[Path], object] | None):
    """The end of a run that is not a PTS run (ssdpts quick, trace replay): its status in the
    manifest and a summary.json without PTS parts (the results library and 'ssdpts verify' read
    every run directory through it); on an interruption or a failed fio, also report.html of what
    was measured (the PDF needs Chromium: 'ssdpts report' later), and the stop goes on up."""
    from ssdpts.errors import Interrupted
    from ssdpts.results.records import Summary

    def mark(status: str, error: str | None = None) -> None:
        store.write_summary(Summary(status, False, tuple(deviations), {}, {}))
        store.update_manifest(status=status, ended=utc_now(), **({"error": error} if error else {}))

    def partial() -> None:
        if render_partial is None:
            return
        try:
            render_partial(store.path)
        except (UserError, OSError, ImportError, KeyError, TypeError):
            pass  # the run directory holds every number; the stop's own error is what the user must see

    try:
        yield
    except (KeyboardInterrupt, Interrupted) as exc:
        mark("interrupted", str(exc) or "interrupted")
        partial()
        # the user must learn where the measured runs are: the run directory is otherwise printed
        # only at the end; the signal's exit status (128 + N) is kept
        stop = Interrupted(f"{str(exc) or 'interrupted'}: every run measured so far is in {store.path} "
                           "(with report.html); such a run is not resumed, start a new one")
        stop.exit_code = getattr(exc, "exit_code", Interrupted.exit_code)
        raise stop from exc
    except UserError as exc:
        mark("failed", str(exc))
        partial()
        exc.args = (f"{exc} (the runs measured before are in {store.path})",)
        raise
    mark("complete")


def resume_run(run_dir: Path, *, executor: Executor, progress=None, interactive: bool = False,
               confirm: str | None = None, keep_window: bool = False,
               ready: Callable[[], None] | None = None, side=None) -> tuple[RunStore, dict]:
    """Continue a run at the round in flight, on the device it started on. ``confirm``: ``resume
    --destroy-data-on``, needed (or typed at the prompt when ``interactive``) when nothing proves the
    device is the one the run started on (no serial: loop re-attached, zram, a manifest without a
    fingerprint).

    By default every part in progress re-preconditions: its interrupted round is run again and its
    steady-state window counts only rounds run from now on (hours of idle break the PTS's 'no delay
    between rounds'; analysis.window_rounds_from). ``keep_window``: rounds from before count too,
    and the window discloses the resume it spans. ``ready``: as for start_run, before anything is
    written. ``side``: where the device is (default: this host, at the manifest's target path;
    device/remote/remote.py for a run whose device is on another host)."""
    from ssdpts.run.runner import NullProgress

    store = RunStore.open(run_dir)
    store.lock()
    try:
        return store, _resume(store, Path(run_dir), executor, progress or NullProgress(), interactive, confirm,
                              keep_window, ready, side)
    finally:
        store.unlock()


def _refuse_changed_preconditioning(store: RunStore, parts: list[Part], run_dir: Path) -> None:
    """Refuse, before anything is written, a resume whose unfinished part was preconditioned one way
    (the sprandom fill, or its WIPC) and which this ssdpts plans the other: its next rounds would
    continue from a state its plan no longer puts the drive in (an older ssdpts filled before TP,
    which now keeps its WIPC: docs/methodology.md#preconditioning-by-sprandom). A part that finished
    keeps its result, labelled by how it was preconditioned."""
    steps = read_steps(store)
    for part in parts:
        records = analysis.part_records(steps, part)
        pre = [r for r in records if r.phase == "wipc"]
        if not pre or analysis.stop_reason(records, part) or part.wipc is None:
            continue
        filled = any(r.label.startswith(SPRANDOM_LABEL) for r in pre)
        if filled != bool(part.wipc.sprandom):
            was, now = ("the sprandom fill", "its WIPC") if filled else ("its WIPC", "the sprandom fill")
            raise UserError(f"{run_dir}: {part.title} was preconditioned by {was}, and this ssdpts preconditions "
                            f"it by {now} (docs/methodology.md#preconditioning-by-sprandom): its next rounds would "
                            f"continue from the wrong state; start a new run of {part.test.upper()} (nothing was written)")


def _resume(store: RunStore, run_dir: Path, executor: Executor, progress, interactive: bool,
            confirm: str | None, keep_window: bool = False, ready: Callable[[], None] | None = None,
            side=None) -> dict:
    man = store.manifest()
    status = man.status
    if status == "complete":
        raise UserError(f"{run_dir} is already complete: nothing to resume (regenerate reports with 'ssdpts report')")
    if man.kind:  # a run beside the PTS (quick, replay): kinds.py says why it is not resumed (cli/resume.py)
        raise UserError(f"{run_dir} is a run of kind {man.kind!r}: 'ssdpts resume' continues PTS runs only; "
                        "start a new run of its kind")
    try:
        spec = RunSpec.from_dict(man.doc["run_spec"])  # as recorded: a manifest without one is refused
        recorded = man.doc["target"]
        path = recorded["path"]
    except (KeyError, TypeError) as exc:
        raise UserError(f"{run_dir}/manifest.json lacks {exc}: it is not a complete ssdpts manifest") from None
    if spec.realtime:  # as the run started: the same schedule, or a clear refusal before anything is written
        rtsched.check()
    _refuse_unnameable(run_dir, [path, recorded.get("real_path") or path, str(Path(run_dir).resolve())])
    damage = integrity.check(run_dir)
    if damage.problems:
        raise UserError(f"{run_dir} is damaged, resuming would build on it: "
                        f"{integrity.describe(damage.problems, run_dir)}; restore the files or start a new run")
    seal.writable(man.doc, seal.configured_key(), str(run_dir))  # its seal, if any, kept: the same key
    side = side or LocalSide(open_target(path))
    target = side.target
    before = man.doc.get("fingerprint")
    now = side.fingerprint()
    if isinstance(before, dict):
        diffs = fingerprint.differences(before, now)
        if diffs:
            what, was, is_now = diffs[0]
            raise UserError(f"{fingerprint.describe_difference(path, what, was, is_now)}: attach the device the run "
                            f"started on at {path}, or start a new run (nothing was written)")
        proof = fingerprint.proven_same(before, now)
        why = None if proof else fingerprint.why_unproven(before, now)
    else:  # a manifest from before fingerprints: the fields it has, and no proof
        for field in ("kind", "serial", "size_bytes", "model"):
            if recorded.get(field) != getattr(target, field):
                raise UserError(f"{path} is not the device this run started on ({field} was "
                                f"{recorded.get(field)!r}, now {getattr(target, field)!r}): reattach the right device")
        proof, why = None, f"the run's manifest has no fingerprint of {path} (made by an older ssdpts)"
    parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    _refuse_changed_preconditioning(store, parts, run_dir)
    preflight.results_space(run_dir, parts)
    _refuse_out_on_target(side, target, run_dir)
    use, needed, ask, changed = _resume_confirmation(side, man, parts, confirm, proof, why, interactive)
    with side.claimed(needed, use, interactive, ask):
        if ready is not None:
            ready()
        if target.kind == "block":
            store.update_manifest(**_writing(target))
        side.set_run_dir(str(store.path))
        forgotten = store.forget_unbacked_rounds()
        resumptions = [*man.resumptions, Resumption(
            utc_now(), status, keep_window, pid=os.getpid(), steps_kept=store.count_steps(),
            identity=proof or ("confirmed again by --destroy-data-on" if confirm is not None
                               else "confirmed again at the prompt"),
            contents=_contents_note(confirm, changed) if target.kind == "block" else None,
            rounds_measured_again=tuple(forgotten), interruption=man.doc.get("interruption"))]
        store.update_manifest(resumptions=[r.to_dict() for r in resumptions], status="running", error=None,
                              interruption=None)
        man = store.manifest()
        for note in damage.notes:
            progress.message(note)
        progress.message("resumed with the steady-state window kept: rounds from before the resumption may count, and "
                         "the report says so where a window spans it (--keep-window)" if keep_window else
                         "resumed: the interrupted round runs again and the steady-state window counts only rounds run "
                         "from now on (docs/methodology.md, Saving and resuming)")
        return _execute(store, spec, parts, side, executor, progress, man.doc.get("device"),
                        session=len(resumptions), keep=kept_sessions(man))
