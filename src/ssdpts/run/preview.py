"""What a run would do, without touching the device (``ssdpts plan``): built from the same run
request (run/request.py) and by the same planning as the run, as one record the command prints as
text or as JSON (``ssdpts plan --json``; every key with a unit names it, README.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import groupby

from ssdpts.errors import UserError
from ssdpts.run.request import RunRequest


@dataclass(frozen=True)
class StepRun:
    """Consecutive steps of one stimulus (and one idle after each)."""

    count: int
    label: str
    threads: int
    iodepth: int
    duration_s: float
    idle_after_s: float
    cell_label: str | None  # the steps' cell, when they all have the same one


@dataclass(frozen=True)
class PartPreview:
    """One test part: its purge, WIPC (or sprandom fill), steps (round 1's, or the whole fixed plan), how long it
    takes and what it writes beyond its rounds (WIPC, WSAT)."""

    test: str
    title: str
    stop_rule: str  # steady-state, wsat or fixed
    purge: bool
    wipc_method: str | None  # "wipc" (the PTS's), "sprandom" (--precondition sprandom), None: none
    wipc_label: str | None
    wipc_threads: int | None
    wipc_iodepth: int | None
    wipc_bytes: int | None
    round_steps: int  # steps in round 1
    round_s: float  # round 1's planned seconds
    rounds_max: int
    steps_total: int | None  # fixed plans: every step of every round
    round_steps_max: int | None  # fixed plans: the most steps one round has
    needs: str | None  # the part whose table chooses this part's points
    tracking: tuple[str, ...]
    wsat_samples_max: int | None
    wsat_bytes_max: int | None
    written_bytes_max: int  # WIPC and WSAT (the rounds' writes come on top)
    duration_min_s: float
    duration_max_s: float
    steps: tuple[StepRun, ...]
    fio_job_file: str | None  # round 1's, when asked for
    # its preconditioning both ways (pts/plan.preconditioning_both): bytes, and seconds at the plan's
    # --write-rate (None: no rate given, or no such preconditioning: no WIPC, no OP for sprandom)
    precondition_pts_bytes: int | None = None
    precondition_sprandom_bytes: int | None = None
    precondition_pts_s: float | None = None
    precondition_sprandom_s: float | None = None


@dataclass(frozen=True)
class Preview:
    """``ssdpts plan``'s whole answer. ``usable``/``verdict``: what 'ssdpts run' would say about the
    target before writing (device/safety.preview); ``purge_refusal``: the --purge method the device
    cannot do, refused after the verdict is shown."""

    usable: bool
    verdict: str
    target_path: str
    target_kind: str
    target_size_bytes: int
    target_model: str | None
    target_serial: str | None
    purge: str | None
    purge_auto: bool
    purge_disclosure: str | None
    purges_supported: tuple[str, ...]
    purge_refusal: str | None
    profile: str
    pts_version: str
    threads: int
    iodepth: int
    active_range_pct: float
    active_range_bytes: int
    step_s: float
    rounds_max: int
    ioengine: str
    seed: int
    wipc_capacity_multiple: float
    precondition: str  # pts, or sprandom:OP
    spr_op_source: str | None  # where sprandom's OP came from
    fio_path: str  # the fio a run would use without --fio PATH (engine/fiobin.py)
    fio_source: str
    fio_version: str
    fio_sprandom: bool
    wsat_capacity_multiple: float
    wsat_chunk_samples: int
    segments: str | None  # the disclosure of the client test active range's segments
    segments_fio: str | None  # fio's random_distribution for them
    deviations: tuple[str, ...]
    pts_compliant: bool
    parts: tuple[PartPreview, ...]
    tests: dict[str, tuple[float, float]]  # seconds of stimulus per test: (min, max)
    written_bytes_max: int
    duration_min_s: float
    duration_max_s: float
    # the rates the preconditioning's time is estimated at ('ssdpts plan --write-rate'): SEQ 128KiB
    # writes (the WIPC) and RND 4KiB writes at QD32 (the sprandom fill); the OP the fill is shown at
    write_rate_seq_bytes_per_s: float | None = None
    write_rate_rnd_bytes_per_s: float | None = None
    spr_op_shown: float | None = None

    def to_dict(self) -> dict:
        """One JSON object; the per-test durations keyed ``duration_min_s`` / ``duration_max_s``."""
        d = asdict(self)
        d["tests"] = {t: {"duration_min_s": lo, "duration_max_s": hi} for t, (lo, hi) in self.tests.items()}
        return d


def step_runs(steps) -> tuple[StepRun, ...]:
    """Consecutive steps of the same stimulus, as one StepRun each."""
    out = []
    for (label, tc, qd, dur, idle), group in groupby(
            steps, key=lambda s: (s.workload.label, s.workload.threads, s.workload.iodepth, s.duration_s,
                                  s.idle_after_s)):
        g = list(group)
        cells = {s.cell_label for s in g}
        out.append(StepRun(len(g), label, tc, qd, dur, idle, g[0].cell_label if len(cells) == 1 and g[0].cell_label
                           else None))
    return tuple(out)


def supported_purges(target, info: dict | None) -> list[str]:
    """The --purge methods ``target`` supports: those 'ssdpts run' would accept for it (select_purge
    on the device's capabilities, ``info``), strongest first as the registry lists them."""
    from ssdpts.device.purge.registry import method_names, select_purge

    out = []
    for name in method_names():
        if name == "auto":
            continue
        try:
            select_purge(target, name, info if info is not None else {})
        except UserError:
            continue
        out.append(name)
    return out


def verdict(req: RunRequest, prep) -> tuple[bool, str]:
    """What 'ssdpts run' would say about the target before writing anything (device/safety.preview,
    the results directory on the target's stack), in its words."""
    from ssdpts.device.safety import guard as safety
    from ssdpts.device.safety import stack
    from ssdpts.pts.plan import required_bytes

    target = prep.target
    needed = required_bytes(prep.parts) if target.kind == "block" else target.size_bytes
    usable, line = safety.preview(target, needed_bytes=needed, confirm=req.confirm)
    if usable:
        why = stack.out_dir_conflict(target, str(req.out_dir))
        if why:
            return False, why
    return usable, line


def _part(part, spec, ar: int, segs, target, job_files: bool) -> PartPreview:
    from ssdpts.engine.base import Area, Batch
    from ssdpts.engine.jobfile import render_job_file
    from ssdpts.pts.plan import part_seconds

    steps = part.round_steps(1)
    lo, hi = part_seconds(part, spec)
    wipc = part.wipc
    written = wipc.io_bytes if wipc is not None else 0
    shown, total, most = steps, None, None
    if part.stop_rule == "wsat":
        written += part.wsat_max_bytes
    elif part.stop_rule == "fixed":
        shown = [s for r in range(1, part.max_rounds + 1) for s in part.round_steps(r)]
        total, most = len(shown), max(len(part.round_steps(r)) for r in range(1, part.max_rounds + 1))
    job = None
    if job_files:
        job, _ = render_job_file(Batch(steps=steps, filename=target.real_path, area=Area(0, ar, segs), seed=spec.seed,
                                       ioengine=spec.ioengine))
    wsat = part.stop_rule == "wsat"
    return PartPreview(
        test=part.test, title=part.title, stop_rule=part.stop_rule, purge=bool(part.purge),
        wipc_method=None if wipc is None else "sprandom" if wipc.sprandom else "wipc",
        wipc_label=wipc.label if wipc else None, wipc_threads=wipc.workload.threads if wipc else None,
        wipc_iodepth=wipc.workload.iodepth if wipc else None, wipc_bytes=wipc.io_bytes if wipc else None,
        round_steps=len(steps), round_s=sum(s.planned_s for s in steps), rounds_max=part.max_rounds,
        steps_total=total, round_steps_max=most, needs=part.needs or None,
        tracking=tuple(t.name for t in part.tracking or ()),
        wsat_samples_max=part.wsat_max_steps if wsat else None, wsat_bytes_max=part.wsat_max_bytes if wsat else None,
        written_bytes_max=written, duration_min_s=lo, duration_max_s=hi, steps=step_runs(shown), fio_job_file=job)


def _seconds(n: int | None, rate: float | None) -> float | None:
    return None if n is None or not rate else round(n / rate, 1)


def with_both(parts: tuple[PartPreview, ...], both: dict, ids: list[str],
              rates: tuple[float, float] | None) -> tuple[PartPreview, ...]:
    """The parts with their preconditioning both ways (bytes; seconds at ``rates``: SEQ, RND bytes/s)."""
    from dataclasses import replace

    seq, rnd = rates if rates else (None, None)
    out = []
    for pid, p in zip(ids, parts):
        b = both.get(pid)
        out.append(p if b is None else replace(
            p, precondition_pts_bytes=b["pts"], precondition_sprandom_bytes=b["sprandom"],
            precondition_pts_s=_seconds(b["pts"], seq), precondition_sprandom_s=_seconds(b["sprandom"], rnd)))
    return tuple(out)


def preview(req: RunRequest, *, job_files: bool = False, rates: tuple[float, float] | None = None,
            spr_op: float | None = None) -> Preview:
    """The plan of the request's one target, touching nothing (the device probed read-only for its
    purge methods). ``job_files``: each part's round-1 fio job file too. Each part's preconditioning is
    also shown both ways (the PTS's WIPC and the sprandom fill, at the spec's OP or ``spr_op``), its
    time at ``rates`` (bytes/s of SEQ 128KiB and of RND 4KiB writes) where they are given."""
    from ssdpts.device.identify import purge_facts
    from ssdpts.device.purge.registry import select_purge
    from ssdpts.device.side import purge_choice
    from ssdpts.engine.jobfile import zoned_abs
    from ssdpts.pts.plan import active_range_bytes, preconditioning_both, segments_of
    from ssdpts.pts.segments import disclosure
    from ssdpts.run.launch import prepare
    from ssdpts.run.session import run_deviations

    from ssdpts.engine import fiobin

    prep = prepare(req, req.targets[0])
    spec, target = prep.spec, prep.target
    fio = fiobin.choose()  # as a run without --fio PATH: refused alike when too old for sprandom
    has_sprandom = fiobin.knows(fio.path, "sprandom")
    if spec.precondition == "sprandom" and not has_sprandom:
        raise UserError(fiobin.sprandom_refusal(fio.path, fiobin.version(fio.path)))
    usable, line = verdict(req, prep)
    ar = active_range_bytes(target.size_bytes, spec.ar_pct)
    info = purge_facts(target) if target.kind == "block" else None  # the device probed once (read-only)
    try:
        purge = select_purge(target, spec.purge, info)
    except UserError as exc:
        purge, refusal = None, str(exc)
    else:
        refusal = None
    segs = segments_of(spec, ar)
    deviations = run_deviations(spec, target, purge_choice(purge)) if purge is not None else []
    parts = tuple(_part(p, spec, ar, segs, target, job_files) for p in prep.parts) if purge is not None else ()
    parts = with_both(parts, preconditioning_both(spec, target.size_bytes, target.logical_block_size_bytes, spr_op),
                      [p.id for p in prep.parts], rates)
    tests: dict[str, tuple[float, float]] = {}
    for p in parts:
        lo, hi = tests.get(p.test, (0.0, 0.0))
        tests[p.test] = (lo + p.duration_min_s, hi + p.duration_max_s)
    return Preview(
        usable=usable, verdict=line, target_path=target.path, target_kind=target.kind,
        target_size_bytes=target.size_bytes, target_model=target.model or None, target_serial=target.serial or None,
        purge=purge.name if purge else None, purge_auto=spec.purge == "auto",
        purge_disclosure=purge.disclosure if purge else None,
        purges_supported=tuple(supported_purges(target, info)) if purge else (), purge_refusal=refusal,
        profile=spec.profile, pts_version=spec.pts_version, threads=spec.tc, iodepth=spec.qd,
        active_range_pct=spec.ar_pct, active_range_bytes=ar, step_s=spec.step_seconds, rounds_max=spec.max_rounds,
        ioengine=spec.ioengine, seed=spec.seed, wipc_capacity_multiple=spec.wipc_capacity_multiple,
        precondition=f"sprandom:{spec.spr_op:g}" if spec.precondition == "sprandom" else spec.precondition,
        spr_op_source=spec.spr_op_source or None, fio_path=fio.path, fio_source=fio.source,
        fio_version=fiobin.version(fio.path), fio_sprandom=has_sprandom,
        wsat_capacity_multiple=spec.wsat_capacity_multiple, wsat_chunk_samples=spec.wsat_chunk_steps,
        segments=disclosure(spec.ar_segments, segs) if segs else None, segments_fio=zoned_abs(segs) if segs else None,
        deviations=tuple(deviations), pts_compliant=not deviations, parts=parts, tests=tests,
        written_bytes_max=sum(p.written_bytes_max for p in parts),
        duration_min_s=sum(p.duration_min_s for p in parts), duration_max_s=sum(p.duration_max_s for p in parts),
        write_rate_seq_bytes_per_s=rates[0] if rates else None, write_rate_rnd_bytes_per_s=rates[1] if rates else None,
        spr_op_shown=spec.spr_op if spec.spr_op is not None else spr_op)
