"""The fio job file of a batch: one job section per step (engine/fio.py runs it).

Each step's section carries its workload (docs/pts-reference.md#demand-intensity: TC = numjobs, QD = iodepth), its run time
(or io_size for WIPC, or fio's sprandom in its place), and either the step gate's hooks (engine/gate.py:
the schedule ssdpts runs) or fio's own ``startdelay`` at the planned offsets (:func:`schedule`, planned
idles included: the form kept for benchmarks/boundaries.py and for running a job file with fio alone).
"""

from __future__ import annotations

import math
from pathlib import Path
import re
import unicodedata
import zlib

from ..errors import RunFailed
from ..measurement import PERCENTILES
from ..pts.workload import Step
from .base import Batch

# The comment at the head of a job file ssdpts keeps, saying how the file is scheduled.
GATED_HEADER = """\
; ssdpts: every step waits in exec_prerun until ssdpts releases it (the step gate, see
; docs/methodology.md "Step boundaries"); outside ssdpts, delete the exec_prerun, exec_postrun
; and wait_for lines and add startdelay= to run this file with fio alone.
"""
STONEWALL_HEADER = """\
; ssdpts: run by a fio server through 'fio --client'; each step a stonewall, scheduled by fio (the
; step gate needs the controlling host's FIFOs, see engine/fioclient.py)
"""


# ---- paths in a job file --------------------------------------------------------------------
# How fio (3.33, and unchanged since) reads the value of an option in a job file:
#  * one option per line (init.c __parse_jobs_ini: fgets, or strsep at '\n' for a fio server): a
#    line break in a value starts a new option;
#  * the value ends at the first ';' or '#' anywhere in it, with no escape (parse.c
#    strip_blank_end; the HOWTO's "Job file format" names only a line that starts with them);
#  * blanks and control characters at either end are dropped (parse.c strip_blank_front,
#    strip_blank_end);
#  * every ${NAME} is replaced by the environment variable NAME, by nothing when it is unset, and
#    $pagesize, $mb_memory and $ncpus by numbers, after which a value holding + - * / is handed to
#    bc (options.c fio_option_dup_subs, fio_keyword_replace, bc_calc; HOWTO "Environment
#    variables", "Reserved keywords"), with no escape;
#  * filename= and read_iolog= are lists of names separated by ':', in which '\:' is a colon of
#    the name and any other backslash is itself (options.c get_next_str; HOWTO filename: "Each
#    colon in the wanted path must be escaped with a \ character"); replay_redirect= is one name,
#    taken as it is (iolog.c). '$' alone, '=', ',', quotes and blanks inside a name are kept.
_FIO_ENV = re.compile(r"\$\{[^}]*\}")
_FIO_KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")


def control_problem(path: str) -> str | None:
    """Why ``path`` cannot be written into a line of text (fio's job file, a one-line message), with
    what to do: a control or line-breaking character, or bytes that are not UTF-8; None otherwise."""
    for c in path:
        kind = unicodedata.category(c)
        if kind in ("Cc", "Zl", "Zp"):
            return (f"the path holds the control character {ascii(c)[1:-1]}: ssdpts writes paths into lines of "
                    "fio's job file and of its own records, which cannot hold one (to fio, a line break starts a "
                    "new option): give a path without control characters (rename the file or directory)")
        if kind == "Cs":
            return ("the path is not valid UTF-8, the encoding ssdpts writes fio's job file in: give a path in "
                    "UTF-8 (rename the file or directory)")
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot be the value of an option in fio's job file, with what to do; None when
    it can (as it is, or with its colons escaped: :func:`fio_names`). The one rule for every path
    ssdpts writes into a job file, and for the paths it takes that reach one (cli/common.py)."""
    why = control_problem(path)
    if why is not None:
        return why
    for c in ";#":
        if c in path:
            return (f"the path holds '{c}', where fio's job file ends a value (fio takes the rest of the line "
                    "for a comment): give a path without ';' and '#' (rename the file or directory)")
    env = _FIO_ENV.search(path)
    if env:
        return (f"the path holds '{env.group()}', which fio replaces with an environment variable in every job "
                "file value (fio HOWTO, \"Environment variables\"): give a path without '${' ... '}'")
    for k in _FIO_KEYWORDS:
        if k in path:
            return (f"the path holds '{k}', which fio replaces with a number in every job file value (fio HOWTO, "
                    f"\"Reserved keywords\"): give a path without '{k}'")
    if not path.strip(" "):
        return "the path is empty: give a file or device path"
    if path != path.strip(" "):
        return ("the path begins or ends with a blank, which fio drops from every job file value: give a path "
                "without blanks at its ends (rename the file or directory)")
    return None


def job_value(path: str) -> str:
    """``path`` as the value of a one-name option (replay_redirect=): as it is, once it can be one."""
    why = path_problem(path)
    if why is not None:
        # the paths a run takes are refused at input (cli/common.py check_paths): this is the last line
        raise RunFailed(f"fio's job file cannot name {ascii(path)}: {why}")
    return path


def fio_names(path: str) -> str:
    """``path`` as one name of a list option (filename=, read_iolog=): its colons escaped."""
    return job_value(path).replace(":", "\\:")


def _ms(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


def _step_seed(base: int, step: Step) -> int:
    # A different LBA/data sequence per step and round, reproducible from the recorded base seed.
    return (base * 1_000_003 + step.round * 1009 + step.index * 7 + zlib.crc32(step.part.encode()) % 997) % (2**63)


def steps_ahead(duration_s: float | None) -> int:
    """How many steps' jobs fio keeps created and waiting at their barrier beyond the running one.

    fio creates a job some 100-300 ms after it may (its main loop polls every 100 ms, then waits
    one more poll), and the job then allocates and registers its buffers: the job of step n+1 must
    be created early enough to be waiting before step n ends (at TC4/QD32 with 1 MiB blocks the
    set-up alone takes up to ~0.3 s on a loaded host). One step ahead is plenty for steps of two
    seconds or more (PTS steps are 60 s) and bounds the memory to two steps' buffers (up to
    2 x TC x QD x 1 MiB for IOPS); shorter (time-compressed) steps keep a second's worth ready."""
    if duration_s is None or duration_s >= 2.0:
        return 1
    return min(6, math.ceil(1.0 / max(duration_s, 1e-3)) + 1)


def schedule(steps: list[Step]) -> list[float]:
    """Each step's start offset from fio's start (s): back to back, except that a step's planned
    idle (``idle_after_s``) leaves the device without IO that long before the next step starts.
    The step gate (engine/gate.py) keeps the same rule by releasing each step that long after the
    previous one drained."""
    starts, t = [], 0.0
    for s in steps:
        starts.append(t)
        t += s.planned_s
    return starts


def _split(pairs, size: bool) -> str:
    """fio's a/b:c/d syntax; block sizes in k where they are whole KiB (1536 stays bytes)."""
    def fmt(v: int) -> str:
        return f"{v // 1024}k" if size and v % 1024 == 0 else str(v)
    return ":".join(f"{fmt(a)}/{b}" for a, b in pairs)


def zoned_abs(segments: tuple[tuple[int, int], ...]) -> str:
    """The segments of a client test active range as fio's random_distribution (pts/segments.py):
    each segment an equal whole percentage of the IOs, the gaps around it 0%, sizes in bytes from the
    start of the area; fio holds at most 256 such zones."""
    pct = 100 // len(segments)
    zones, pos = [], 0
    for off, size in segments:
        if off > pos:
            zones.append(f"0/{off - pos}")
        zones.append(f"{pct}/{size}")
        pos = off + size
    if len(zones) + 1 > 256 or pct * len(segments) != 100:
        raise ValueError(f"{len(segments)} segments do not fit fio's zoned_abs (256 zones, whole percentages)")
    return "zoned_abs:" + ":".join(zones)


INTERVAL_LOG_SUFFIX = "_iops.log"  # what fio appends to write_iops_log's prefix (per_job_logs=0)


def _interval_prefix(output_path, jobname: str) -> Path:
    out = Path(output_path)
    return out.with_name(f"{out.stem}.{jobname}")


def interval_log(output_path, jobname: str) -> Path:
    """Where a step's per-interval IOPS log lies: beside its batch's json+ (round-NNN.json ->
    round-NNN.sNNNN_iops.log), one file for all the step's clones (fio's per_job_logs=0)."""
    p = _interval_prefix(output_path, jobname)
    return p.with_name(p.name + INTERVAL_LOG_SUFFIX)


def interval_logs(output_path) -> list[Path]:
    """Every per-interval log a batch wrote."""
    out = Path(output_path)
    return sorted(out.parent.glob(f"{out.stem}.s*{INTERVAL_LOG_SUFFIX}"))


def render_job_file(batch: Batch, gate: list[tuple[str, str]] | None = None, *,
                    stonewall: bool = False) -> tuple[str, list[float]]:
    """The fio job file of a batch and each step's planned start offset (seconds, :func:`schedule`).

    ``gate``: per step, the (exec_prerun, exec_postrun) commands of the step gate (engine/gate.py):
    every step waits at its barrier until ssdpts releases it (after the previous step drained and
    its planned idle passed), and jobs are created ``steps_ahead`` steps in advance by ``wait_for``.
    Without a gate the steps are scheduled by ``startdelay`` at those offsets (fio's own clock; the
    schedule ssdpts used before the gate, kept for ``ssdpts plan --fio``, benchmarks/boundaries.py
    and running a job file with fio alone). ``stonewall``: without a gate, each step starts when fio
    sees the previous one ended (no overlap; fio's own poll, engine/fioclient.py) instead of at its
    offset.

    One piece: the job file's text in the order fio reads it."""
    g = [
        "[global]",
        f"filename={fio_names(batch.filename)}",
        "direct=1",
        f"ioengine={batch.ioengine}",
        "thread=1",
        "clocksource=clock_gettime",
        "group_reporting=1",
        "norandommap=1",
        "random_generator=tausworthe64",  # PTS: >= 48-bit RNG for LBAs and data
        # Each step's own randseed decides its LBAs and data only with randrepeat off: with fio's
        # default (randrepeat=1) fio 3.33 ignores randseed for the offsets and seeds a job by its
        # position in the job file, so the n-th job of every fio process (every round) wrote the
        # same LBAs in the same order. fio 3.36+ lets randseed win; randrepeat=0 works on both.
        "randrepeat=0",
        f"offset={batch.area.offset_bytes}",
        f"size={batch.area.size_bytes}",
        "lat_percentiles=1",  # response time = total latency (submission + completion)
        "clat_percentiles=0",  # ... and only that histogram: a second one costs CPU per IO
        "percentile_list=" + ":".join(f"{p:g}" for p in PERCENTILES),
        "exitall_on_error=1",
    ]
    if batch.cpus_allowed:
        # Parallel runs (--cpus-per-device): each device's fio on its own CPUs, so that one run's
        # threads do not take CPU time another run's device is waiting for.
        g.append(f"cpus_allowed={batch.cpus_allowed}")
    if batch.ioengine == "io_uring":
        # Host overhead, not device behaviour: pre-registered buffers and file (measured in
        # benchmarks/zram_iops.py against a hand-tuned fio command).
        g += ["fixedbufs=1", "registerfiles=1"]
    g.append("")
    timed = [s for s in batch.steps if s.duration_s is not None]
    if timed and len(timed) != len(batch.steps):
        raise ValueError("a batch is either all timed steps or one size-bound or replayed step")
    if not timed and len(batch.steps) != 1:
        raise ValueError("a size-bound (WIPC) or replayed batch has exactly one step")
    if gate is not None and len(gate) != len(batch.steps):
        raise ValueError("one gate command pair per step")
    ahead = steps_ahead(min((s.duration_s for s in timed), default=None))
    starts = schedule(batch.steps) if timed else [0.0]
    for n, (s, t) in enumerate(zip(batch.steps, starts), start=1):
        if s.iolog is not None:
            g += _replay_section(n, s, batch.filename) + _gate_lines(n, ahead, gate) + [""]
            continue
        w = s.workload
        rw = {"rand": ("randread", "randwrite", "randrw"), "seq": ("read", "write", "rw")}[w.pattern]
        rw_value = rw[0] if w.read_pct == 100 else rw[1] if w.read_pct == 0 else rw[2]
        # Demand intensity: TC = numjobs, QD = iodepth (docs/pts-reference.md#demand-intensity; never the other way round).
        size = f"bssplit={_split(w.bssplit, True)}" if w.bssplit else f"bs={w.block_size_bytes}"
        sec = [f"[s{n:04d}]", "new_group", f"rw={rw_value}", size,
               f"numjobs={w.threads}", f"iodepth={w.iodepth}", f"randseed={_step_seed(batch.seed, s)}"]
        if w.zones:
            sec.append(f"random_distribution=zoned:{_split(w.zones, False)}")
        elif batch.area.segments and w.pattern == "rand" and s.phase == "round":
            sec.append(f"random_distribution={zoned_abs(batch.area.segments)}")
        if batch.ioengine == "io_uring" and w.iodepth & (w.iodepth - 1):
            # fio 3.33's io_uring engine rounds the job's own queue depth up to a power of two
            # (engines/io_uring.c: td->o.iodepth = roundup_pow2(...); later releases keep it): QD 6
            # ran 8 IOs at once, at the device too. libaio keeps any depth (docs/methodology.md).
            sec.append("ioengine=libaio")
        if w.iodepth >= 8:
            # Submit and reap in batches of up to QD/2 (completions are reaped as soon as one is
            # ready, so no IO waits for a batch to fill; the queue still never exceeds QD).
            sec += [f"iodepth_batch_submit={w.iodepth // 2}", f"iodepth_batch_complete_max={w.iodepth // 2}"]
        if rw_value in ("randrw", "rw"):
            sec.append(f"rwmixread={w.read_pct}")
        if s.interval_ms and batch.output_path is not None:
            # The step's IOPS every interval_ms (fio's average over the interval), all clones in one
            # file: the WSAT curve finer than its samples (results/wsatmodel.py).
            prefix = _interval_prefix(Path(batch.output_path).absolute(), f"s{n:04d}")
            sec += [f"write_iops_log={job_value(str(prefix))}", f"log_avg_msec={s.interval_ms}", "per_job_logs=0",
                    "log_unix_epoch=1"]
        if s.gap_ms:
            # Probe reads (ocp-idle-gc): fio waits for the IO in flight, then stalls this long with
            # no IO before the next (thinktime, µs).
            sec += [f"thinktime={max(1, round(s.gap_ms * 1000))}", "thinktime_blocks=1"]
        if w.pattern == "seq" and w.threads > 1:
            # Each clone writes its own slice so that the device still sees sequential streams.
            sec.append("offset_increment=" + str(batch.area.size_bytes // w.threads // w.block_size_bytes * w.block_size_bytes))
            sec.append(f"size={batch.area.size_bytes // w.threads // w.block_size_bytes * w.block_size_bytes}")
        if s.duration_s is not None:
            sec += ["time_based=1", f"runtime={_ms(s.duration_s)}"]
            if gate is None and t > 0:
                sec.append("stonewall" if stonewall else f"startdelay={_ms(t)}")
        elif s.sprandom is not None:
            sec += _sprandom_lines(s)
        else:
            sec.append(f"io_size={s.io_bytes}")
        g += sec + _gate_lines(n, ahead, gate) + [""]
        if s.beside is not None:
            g += _beside_section(n, s, batch) + _gate_lines(n, ahead, gate) + [""]
    return "\n".join(g), starts


def _sprandom_lines(s: Step) -> list[str]:
    """fio's sprandom (3.41; docs/methodology.md#preconditioning-by-sprandom): it needs the LFSR
    generator (each block once) and no random map, and ends when it has written the area's physical
    size (it sets io_size itself: Sprandom.physical_bytes, the step's io_bytes)."""
    assert s.sprandom is not None
    return ["random_generator=lfsr", "sprandom=1", f"spr_op={s.sprandom.op:g}",
            f"spr_num_regions={s.sprandom.regions}"]


def _beside_section(n: int, s: Step, batch: Batch) -> list[str]:
    """The job beside step n (pts/workload.Beside: OCP's deallocation job): no ``new_group``, so
    fio reports it in the step's group (its IOs under "trim", apart from the step's reads and
    writes); the step's gate hooks, so it starts and ends with the step (the gate counts its clones:
    Step.clones). No registered buffers: fio's io_uring fails a trim-only job that registers them."""
    b = s.beside
    assert b is not None
    unit = 1 << 20 if batch.area.size_bytes % (1 << 20) == 0 else b.block_size_bytes
    off = batch.area.offset_bytes + round(batch.area.size_bytes * b.start_pct / 100) // unit * unit
    size = round(batch.area.size_bytes * b.size_pct / 100) // b.block_size_bytes * b.block_size_bytes
    sec = [f"[s{n:04d}b]", f"rw={b.rw}", f"bs={b.block_size_bytes}", f"offset={off}", f"size={size}",
           f"numjobs={b.threads}", f"iodepth={b.iodepth}", f"randseed={_step_seed(batch.seed, s) + 1}", "fixedbufs=0"]
    if b.rate_iops:
        sec.append(f"rate_iops=,,{max(1, round(b.rate_iops))}")
    if s.duration_s is not None:
        sec += ["time_based=1", f"runtime={_ms(s.duration_s)}"]
    return sec


def _gate_lines(n: int, ahead: int, gate: list[tuple[str, str]] | None) -> list[str]:
    """Step n's hooks of the step gate: created when step n - ahead starts (its predecessor's job
    has exited), then waiting at its barrier until the gate releases it (engine/gate.py)."""
    if gate is None:
        return []
    return ([f"wait_for=s{n - ahead - 1:04d}"] if n > ahead + 1 else []) + \
        [f"exec_prerun={job_value(gate[n - 1][0])}", f"exec_postrun={job_value(gate[n - 1][1])}"]


def _replay_section(n: int, s: Step, filename: str) -> list[str]:
    """A replayed trace (ssdpts trace replay): fio's read_iolog, every IO sent to the target
    (replay_redirect, whatever file the log names), at the trace's queue depth."""
    assert s.iolog is not None
    return [f"[s{n:04d}]", "new_group", f"read_iolog={fio_names(str(s.iolog.path))}",
            f"replay_redirect={job_value(filename)}",
            f"replay_no_stall={int(s.iolog.no_stall)}", f"replay_time_scale={s.iolog.time_scale_pct}",
            f"iodepth={s.workload.iodepth}"]
