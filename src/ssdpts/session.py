"""Starting and resuming runs: safety guard, run directory, purger and executor wired together.

The CLI's run, resume and demo commands are thin adapters over these two functions, which the
tests call directly (with a FakeExecutor where no real I/O is wanted).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import sys

from . import __version__
from .device import audit, host, identify, safety, telemetry, writecache
from .device.purge import is_pts_purge, select_purge
from .device.target import Target, open_target
from .engine.base import Area, Executor
from .analysis import kept_sessions
from .errors import UserError
from .runner import RunContext, execute
from .spec.runspec import RunSpec
from .spec.tests import active_range_bytes, build_parts, deviations_for, required_bytes
from .store import RunStore, utc_now


def _prepare_file(target: Target) -> Target:
    """Files are safe targets: ssdpts creates them (sparse) and marks them as its own."""
    if target.kind != "file":
        return target
    if not target.exists:
        with open(target.path, "wb") as f:
            f.truncate(target.size_bytes)
        safety.mark_created(target.path)
        return open_target(target.path)
    return target


def _context(store: RunStore, spec: RunSpec, target: Target, executor: Executor, progress, info: dict | None,
             telemetry_source, session: int = 0, keep: frozenset[int] = frozenset()) -> RunContext:
    parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    method = select_purge(target, spec.purge, info=info)
    deviations = _deviations(spec, target, method)

    def purge(log):
        return method.run(target, log=log).to_dict()

    return RunContext(
        store=store, parts=parts, executor=executor, filename=target.real_path,
        area=Area(0, active_range_bytes(target.size_bytes, spec.ar_pct)), capacity_bytes=target.size_bytes,
        seed=spec.seed, ioengine=spec.ioengine, purger=purge,
        deviations=deviations, progress=progress,
        telemetry=telemetry_source, session=session, keep=keep,
    )


def _deviations(spec: RunSpec, target: Target, method) -> list[str]:
    out = deviations_for(spec, target.logical_block_size_bytes)
    if spec.purge != "none" and not is_pts_purge(method):
        out.append(f"purge by {method.disclosure}")
    return out


def _execute(store: RunStore, spec: RunSpec, target: Target, executor: Executor, progress, info: dict | None,
             session: int = 0, keep: frozenset[int] = frozenset()) -> dict:
    """Write cache per profile (restored afterwards, also after an interrupt), telemetry, run."""
    src = telemetry.make_source(target, info=info)
    cache = writecache.apply(target, spec.prof.write_cache, info=info)
    store.update_manifest(write_cache=cache.summary, write_cache_record=cache.to_dict(), telemetry=src.describe())
    try:
        return execute(_context(store, spec, target, executor, progress, info, src, session, keep))
    finally:
        src.close()
        restored = writecache.restore(cache, target)
        try:
            store.update_manifest(write_cache_restored=restored.to_dict())
        except UserError:
            pass  # the results disk is full: the run's own error says so


def start_run(spec: RunSpec, target: Target, *, executor: Executor, out_dir: Path, confirm: str | None,
              interactive: bool = False, progress=None, argv: list[str] | None = None,
              describe: str | None = None) -> tuple[RunStore, dict]:
    """Check, create the run directory, run. Returns (store, summary); raises on refusal/failure."""
    from .runner import NullProgress

    parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    needed = required_bytes(parts)
    safety.check_writable(target, needed_bytes=needed if target.kind == "block" else target.size_bytes,
                          confirm=confirm, interactive=interactive)
    description = identify.load_description(describe) if describe else None
    tool_version = executor.version()
    target = _prepare_file(target)
    info, raw = identify.gather(target)
    method = select_purge(target, spec.purge, info=info)  # refuse an unknown method before anything is written
    checks = audit.audit()
    deviations = _deviations(spec, target, method)
    manifest = {
        "ssdpts_version": __version__,
        "fio_version": tool_version,
        "executor": executor.name,
        "command_line": argv if argv is not None else sys.argv,
        "run_spec": spec.to_dict(),
        "pts_compliant": not deviations,
        "deviations": deviations,
        "target": target.to_dict(),
        "confirmation": confirm,
        "device": info,
        "host": host.collect(fio_version=tool_version),
        "audit": audit.manifest_entry(checks),
        "description": description,
        "active_range_bytes": active_range_bytes(target.size_bytes, spec.ar_pct),
        "parts": {},
        "resumptions": [],
    }
    label = "-".join(spec.tests) + "-" + target.identity_label
    store = RunStore.create(out_dir, label, manifest)
    for name, text in raw.items():
        store.write_device_file(name, text)
    store.write_device_file("host.json", json.dumps(manifest["host"], indent=1, default=str))
    store.write_device_file("audit.json", json.dumps(manifest["audit"], indent=1, default=str))
    progress = progress or NullProgress()
    for c in checks:
        if c.ok is False:
            progress.message(f"host audit: {c.name} is {c.current}, recommended {c.recommended}: {c.fix_command}")
    return store, _execute(store, spec, target, executor, progress, info)


def resume_run(run_dir: Path, *, executor: Executor, progress=None, interactive: bool = False,
               keep_window: bool = False) -> tuple[RunStore, dict]:
    """Continue an interrupted run. By default every part in progress re-preconditions: its
    interrupted round is run again and its steady-state window counts only rounds run from now on
    (hours of idle break the PTS's 'no delay between rounds'; analysis.window_rounds_from).
    ``keep_window``: rounds from before count too, and the window discloses the resume it spans."""
    from .runner import NullProgress

    store = RunStore.open(run_dir)
    store.lock()
    try:
        return store, _resume(store, run_dir, executor, progress or NullProgress(), interactive, keep_window)
    finally:
        store.unlock()


def _resume(store: RunStore, run_dir: Path, executor: Executor, progress, interactive: bool,
            keep_window: bool = False) -> dict:
    man = store.manifest()
    status = man.get("status")
    if status == "complete":
        raise UserError(f"{run_dir} is already complete: nothing to resume (regenerate reports with 'ssdpts report')")
    try:
        spec = RunSpec.from_dict(man["run_spec"])
        recorded = man["target"]
    except (KeyError, TypeError) as exc:
        raise UserError(f"{run_dir}/manifest.json lacks {exc}: it is not a complete ssdpts manifest") from None
    target = open_target(recorded["path"])
    for field in ("kind", "serial", "size_bytes", "model"):
        if recorded.get(field) != getattr(target, field):
            raise UserError(f"{recorded['path']} is not the device this run started on ({field} was "
                            f"{recorded.get(field)!r}, now {getattr(target, field)!r}): reattach the right device")
    parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes)
    if target.kind == "block":
        safety.check_writable(target, needed_bytes=required_bytes(parts), confirm=man.get("confirmation"),
                              interactive=interactive)
    elif not safety.is_ssdpts_file(target.path):
        raise UserError(f"{target.path} was not created by ssdpts: refusing to write to it")
    resumptions = man.get("resumptions", [])
    resumptions.append({"at": utc_now(), "previous_status": status, "pid": os.getpid(),
                        "steps_kept": sum(1 for _ in store.iter_steps()), "keep_window": keep_window})
    man = store.update_manifest(resumptions=resumptions, status="running", error=None)
    return _execute(store, spec, target, executor, progress, man.get("device"), session=len(resumptions),
                    keep=kept_sessions(man))
