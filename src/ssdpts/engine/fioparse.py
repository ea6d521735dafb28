"""fio's output format, read in one place: fio's JSON / json+ output, from fio 2.1 to 3.43 (a
local run's ``jobs``, a fio server's ``client_stats``), into Measurement records.

Everything ssdpts reads from fio's output goes through this module: the executors (engine/fio.py,
engine/fioclient.py, with its server probe), and results/verify/proof.py, which rebuilds each step's
measurement from the raw file with the same parser and the same assembly (:func:`step_measurement`)
to prove the step records (what it proves is the records, not this code). The job file fio reads is
written by engine/jobfile.py.

Real captures are not always pure JSON: fio prints warnings and error lines (``fio: pid=0,
err=22/...``), ``hostname=...`` banners in client/server mode, or ``fio: terminating on signal 2``
before the document, and sometimes text after it. The document starts at the first line that
begins with ``{``; everything before it is kept as ``preamble`` so that callers can show fio's own
words. Client/server output has ``client_stats`` instead of ``jobs`` and may repeat keys in
``global options`` (json.loads keeps the last, which is fine: nothing here reads them).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
import json
import re

from ..measurement import DirectionStats, Measurement

_ERR_LINE = re.compile(r"^fio: .*(err=|error|failed|terminating|No such|Invalid|Permission)", re.I)


class FioOutputError(ValueError):
    """fio's output could not be read; the message is one line meant for the user."""


@dataclass(frozen=True, slots=True)
class FioOutput:
    version: str
    timestamp_ms: int | None
    jobs: list[dict]
    preamble: str  # text before the JSON document (warnings, errors, banners)
    trailer: str  # text after it
    raw: dict = field(repr=False)

    @property
    def error_lines(self) -> list[str]:
        return [ln.strip() for ln in (self.preamble + "\n" + self.trailer).splitlines() if _ERR_LINE.match(ln.strip())]

    @property
    def major_version(self) -> int:
        m = re.match(r"fio-(\d+)", self.version)
        return int(m.group(1)) if m else 3


def parse_fio_output(text: str) -> FioOutput:
    """Split fio's output into preamble / JSON document / trailer and decode the document."""
    start = None
    pos = 0
    for line in text.splitlines(keepends=True):
        if line.startswith("{"):
            start = pos
            break
        pos += len(line)
    if start is None:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise FioOutputError(f"fio printed no JSON result{': ' + first if first else ' (empty output)'}")
    try:
        doc, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise FioOutputError(f"fio's JSON result is truncated or corrupt ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict):
        raise FioOutputError("fio's JSON result is not an object")
    jobs = doc.get("jobs")
    if jobs is None:
        jobs = doc.get("client_stats")
    if not isinstance(jobs, list):
        raise FioOutputError("fio's JSON result has neither 'jobs' nor 'client_stats'")
    ts = doc.get("timestamp_ms") or (doc["timestamp"] * 1000 if "timestamp" in doc else None)
    return FioOutput(
        version=str(doc.get("fio version", "unknown")),
        timestamp_ms=int(ts) if isinstance(ts, (int, float)) else None,
        jobs=[j for j in jobs if isinstance(j, dict)],
        preamble=text[:start],
        trailer=text[end:].strip(),
        raw=doc,
    )


def step_jobs(out: FioOutput) -> list[dict]:
    """The jobs that are steps, in order: fio --client adds an "All clients" sum after the jobs,
    even of one server, which is not a step."""
    return [j for j in out.jobs if j.get("jobname") != "All clients"]


def server_answered(text: str) -> bool:
    """Whether ``fio --client``'s output is a fio server's answer: a JSON document with
    ``client_stats`` (only a fio server sends one back; engine/fioclient.py's probe)."""
    try:
        return bool(parse_fio_output(text).raw.get("client_stats"))
    except FioOutputError:
        return False


def job_errors(out: FioOutput) -> list[tuple[str, int]]:
    """(job name, fio's error code) of every step job fio reports an error for, in order."""
    return [(str(j.get("jobname")), int(j["error"])) for j in step_jobs(out) if int(j.get("error", 0) or 0)]


def job_options(job: dict) -> dict:
    """The options fio reports a job ran with (``job options``: numjobs, iodepth, bs, rw, rwmixread, ...)."""
    return job.get("job options") or {}


def job_clock(job: dict, clones: int) -> tuple[float | None, int | None]:
    """fio's own clock of a step's job: ``job_runtime`` per clone in ms (from the job's clock start
    until its IO loop ended and its in-flight IOs completed; fio sums it over a group's clones) and
    ``job_start`` in ms since the epoch (fio >= 3.36); None where fio does not write them."""
    runtime_ms = job.get("job_runtime")
    return (None if runtime_ms is None else round(float(runtime_ms) / max(clones, 1), 3),
            int(job["job_start"]) if job.get("job_start") else None)


def _lat_block(d: dict, major: int) -> tuple[dict, float, str]:
    """Pick the response-time block of one direction: (block, scale to ns, kind).

    Prefer total latency with percentiles (``lat_ns``, written when lat_percentiles=1), else
    completion latency (``clat_ns``), else fio 2.x ``lat``/``clat`` in microseconds by the same
    rule (fio 2.x has percentiles only under ``clat``: using ``lat`` there lost them)."""
    if "lat_ns" in d and ("percentile" in d["lat_ns"] or "bins" in d["lat_ns"]):
        return d["lat_ns"], 1.0, "total"
    if "clat_ns" in d and ("percentile" in d["clat_ns"] or "bins" in d["clat_ns"]):
        return d["clat_ns"], 1.0, "completion"
    if "lat_ns" in d:
        return d["lat_ns"], 1.0, "total"
    if "lat" in d and ("percentile" in d["lat"] or "bins" in d["lat"]):  # fio 2.x: microseconds
        return d["lat"], 1000.0, "total"
    if "clat" in d and ("percentile" in d["clat"] or "bins" in d["clat"]):
        return d["clat"], 1000.0, "completion"
    if "lat" in d:
        return d["lat"], 1000.0, "total"
    if "clat" in d:
        return d["clat"], 1000.0, "completion"
    return {}, 1.0, "total"


def _pct_key(k: str) -> str:
    return f"{float(k):g}"


def direction_stats(d: dict, major: int) -> tuple[DirectionStats, str]:
    if not d:
        return DirectionStats.empty(), "total"
    lat, scale, kind = _lat_block(d, major)
    if "io_kbytes" in d or major >= 3:
        io_bytes = int(d.get("io_bytes", 0))
    else:  # fio 2.x printed kilobytes under "io_bytes"
        io_bytes = int(d.get("io_bytes", 0)) * 1024
    bw = float(d["bw_bytes"]) if "bw_bytes" in d else float(d.get("bw", 0)) * 1024  # bw: KiB/s
    runtime_s = float(d.get("runtime", 0)) / 1000.0
    iops = float(d.get("iops", 0))
    ios = int(d["total_ios"]) if "total_ios" in d else int(round(iops * runtime_s))
    # fio 2.x ends the list with a bogus "0.00": 0 entry; a 0th percentile is never asked for.
    pcts = {_pct_key(k): float(v) * scale for k, v in (lat.get("percentile") or {}).items() if float(k) > 0}
    # fio >= 3.x can also give clat percentiles when we chose total latency: keep ours consistent.
    bins = {int(k): int(v) for k, v in (lat.get("bins") or {}).items()}
    if scale != 1.0:
        bins = {int(k * scale): v for k, v in bins.items()}
    stats = DirectionStats(
        ios=ios,
        io_bytes=io_bytes,
        iops=iops,
        bw_bytes_per_s=bw,
        runtime_s=runtime_s,
        lat_mean_ns=float(lat.get("mean", 0)) * scale,
        lat_min_ns=float(lat.get("min", 0)) * scale,
        lat_max_ns=float(lat.get("max", 0)) * scale,
        lat_stddev_ns=float(lat.get("stddev", 0)) * scale,
        lat_percentiles_ns=pcts,
        lat_bins_ns=bins,
    )
    return stats, kind


def job_measurement(job: dict, *, major: int = 3, start_time: float | None = None,
                    end_time: float | None = None, duration_s: float | None = None) -> Measurement:
    """One fio job (a step, with group_reporting) as a Measurement.

    Start and end time: the observed timeline the caller passes (engine/fio.py step_timeline);
    without one, fio's ``job_start`` (ms since the epoch, fio >= 3.36) and the duration.
    Duration: the longer of the read and write run times."""
    read, kr = direction_stats(job.get("read", {}), major)
    write, kw = direction_stats(job.get("write", {}), major)
    kind = kr if read.ios else kw
    measured = max(read.runtime_s, write.runtime_s)
    dur = measured if measured > 0 else (duration_s or 0.0)
    if start_time is not None:
        start = start_time
    elif job.get("job_start"):
        start = float(job["job_start"]) / 1000.0
    else:
        start = 0.0
    end = end_time if end_time is not None else start + dur
    trim_d = job.get("trim") or {}
    trim = direction_stats(trim_d, major)[0] if int(trim_d.get("total_ios") or 0) else None
    return Measurement(
        read=read, write=write, duration_s=dur, start_time=start, end_time=max(end, start),
        lat_kind=kind, error=int(job.get("error", 0) or 0), jobname=str(job.get("jobname", "")),
        cpu_usr_pct=_cpu(job.get("usr_cpu")), cpu_sys_pct=_cpu(job.get("sys_cpu")), trim=trim,
    )


def step_measurement(out: FioOutput, index: int, *, start_time: float | None, end_time: float | None,
                     duration_s: float | None) -> Measurement:
    """Step ``index`` of a batch (the ``index``-th of :func:`step_jobs`) as a Measurement, read by
    fio's version, at the start and end time its timeline gives (fio does not know them);
    ``duration_s``, the planned one, only where fio measured no run time. The one assembly of a
    step's measurement: the executors make each step's with it, results/verify/proof.py remakes it from
    the raw file and the times the step's record holds."""
    return job_measurement(step_jobs(out)[index], major=out.major_version, start_time=start_time,
                           end_time=end_time, duration_s=duration_s)


def step_measurements(out: FioOutput, steps, timelines: list[dict]) -> list[Measurement]:
    """Every step of a batch (``steps``: pts.workload.Step, in the job file's order) at the start
    and end times of its timeline (engine/fio.py step_timeline)."""
    return [step_measurement(out, i, start_time=tl["start_unix_s"], end_time=tl["end_unix_s"],
                             duration_s=s.duration_s) for i, (s, tl) in enumerate(zip(steps, timelines))]


def _cpu(v) -> float | None:
    """fio's usr_cpu / sys_cpu (percent), when the job reports it."""
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


# ---- fio's per-interval log (write_iops_log with log_avg_msec) ------------------------------------


def _row_spans(rows: list[tuple[float, float]], start_ms: float, period_ms: float, ticks: list[float],
               clones: bool, end_ms: float | None = None) -> tuple[list[float], list[float]]:
    """One clone's cumulative IOs at its rows' times: (times, counts), from the step's start.

    fio's helper thread visits every clone at each tick of ``log_avg_msec`` (fio stat.c,
    __add_samples): it takes the IOs the clone completed since its last visit, as a rate over the
    whole milliseconds since then, writes a row if there were any, and restarts the clone's clock
    either way. A gap of more than 1.5 periods between a clone's rows is one of two things. Either the
    helper was late or missed a tick (no clone has a row inside the gap: a busy host), and the row's
    rate is over the whole gap; or the helper visited and this clone had completed nothing (another
    clone has a row inside it: a slow drive serving a deep queue completes in bursts), and the row's
    rate is over the time since the helper's last visit inside the gap, the clone's count flat before
    it. The first row is read the same way from the step's start. Read the first way throughout, a
    run on the reference SSD counted 24% more IOs than fio did; as one period a row, the count within
    a sample was 5.5-16.5% off the drive's own on average (a cache's cliff 5% early), this way 0.4-1.4%
    (docs/methodology.md#drive-model). With one clone the two cannot
    be told apart and a row is its last period's (its first, from the step's start).

    A clone's last row after the step's end (``end_ms``: its IO and the drain of its queue done) is
    not a visit's: fio writes it as the clone exits (stat.c, finalize_logs), the mean of the samples
    its averaging window still held, each over a period up to a visit before the exit. Read over the
    whole gap before it, those rows counted 3.6% more than a 2-s sample on the reference SSD (at
    QD 32 each held the drained queue: 31 IOs in 20 ms, read over 60); it is its last period's."""
    def since(t0: float, t1: float) -> float:
        """The span a row at t1 covers after the clone's previous row (or the step's start) at t0."""
        gap = t1 - t0
        if gap <= 1.5 * period_ms:
            return gap
        if not clones:
            return period_ms if t0 != start_ms else gap
        i, j = bisect.bisect_right(ticks, t0 + period_ms / 2), bisect.bisect_left(ticks, t1 - period_ms / 2)
        return t1 - ticks[j - 1] if i < j else gap  # the helper's last visit inside the gap, else all of it

    ts, cum = [start_ms], [0.0]
    prev = start_ms
    for n, (t1, v) in enumerate(rows, start=1):
        if n == len(rows) and end_ms is not None and t1 >= end_ms and n > 1:
            span = min(period_ms, t1 - prev)  # the exit's row: its window's last period
        else:
            span = max(since(prev, t1), 0.0)  # (never more than the gap)
        if 0 < span < t1 - prev:
            ts.append(t1 - span)
            cum.append(cum[-1])
        ts.append(max(t1, ts[-1]))
        cum.append(cum[-1] + v * span / 1000.0)
        prev = t1
    return ts, cum


NEXT_ROWS = 4  # the rows after a clone's first whose mean rate bounds it where all first rows came late


def _late_first_rows(paths: list[tuple[list[float], list[float]]], series: list[list[tuple[float, float]]],
                     start_ms: float, period_ms: float) -> list[tuple[list[float], list[float]]]:
    """The clones' cumulative counts, their first rows bounded where every clone's came late and
    the clones started over more than half a period.

    A clone's first rate is over the time since its own start, which the log does not give. The
    gate gives the first and the last clone's (engine/fio.py step_timeline): within half a period of
    each other, the step's start is every clone's. On a loaded host fio may set its clones up over
    tens of ms (the gate heard them pass their barriers 61 ms apart on the reference SSD, at the
    first step of a run, with the first rows 124 ms after the start: the helper thread late for its
    first visit as well). Each first row read over the whole time from the step's start then counted
    more IOs than the clone did, 20% more together than the drive's own count, and the curve fell
    from them as from a cache. There the first rows together are read at no more than the mean rate
    of the rows after them (NEXT_ROWS of each clone, summed over the clones): the rate cannot be told
    inside that gap, and the level after it is the one the log can show."""
    if len(series) < 2 or any(len(rows) < 2 or rows[0][0] - start_ms <= 1.5 * period_ms for rows in series):
        return paths
    first = sum(rows[0][1] for rows in series)
    after = sum(sum(v for _t, v in rows[1:1 + NEXT_ROWS]) / len(rows[1:1 + NEXT_ROWS]) for rows in series)
    if not first or after >= first:
        return paths
    f = after / first
    out = []
    for (ts, cum), rows in zip(paths, series):
        i = ts.index(rows[0][0], 1)  # the first row's point (after a flat one where its span is short)
        cut = cum[i] * (1 - f)
        out.append((ts, cum[:i] + [c - cut for c in cum[i:]]))
    return out


def interval_ios(text: str, period_ms: int, start_ms: float = 0.0, start_spread_ms: float = 0.0,
                 end_ms: float | None = None) -> tuple[list[int], int] | None:
    """One step's per-interval IOPS log (jobfile.interval_log) as the step's IOs in each period
    from its start, on one grid for all its clones: (IOs per period, the IOs the log covers).

    fio writes a row per clone and data direction every ``log_avg_msec``: ``time_ms, value, ddir,
    bs, offset[, prio]``, the value the average IOPS since the clone's row before (its first: since
    its start), the time a Unix time (``log_unix_epoch=1``; the step's start ``start_ms`` on the same
    clock; without it the time from the clone's start, and ``start_ms`` 0). With ``per_job_logs=0``
    every clone's rows go into the one file, a clone's after another's (its time starting again). A
    row's IOs are its rate over the span _row_spans gives it (its period, or the whole gap to the row
    before where the helper thread was late), the first row's over its span from the step's start;
    each clone's cumulative count is read at the grid's times by linear interpolation and the clones'
    counts summed. The grid ends with the clone whose log ends first; the IOs after it (fio logs no
    part of an interval at its end) are the step's count less the returned total. Where the clones
    started over more than half a period (``start_spread_ms``: the gate heard the first and the last
    pass its barrier that far apart) and their first rows all came late, those are read at no more
    than the rate of the rows after them (_late_first_rows); a clone's last row after the step's end
    (``end_ms``) is the one fio writes as the clone exits, its last period's.
    None: no row could be read."""
    streams: dict[str, list[list[tuple[float, float]]]] = {}
    for line in text.splitlines():
        f = [x.strip() for x in line.split(",")]
        if len(f) < 3:
            continue
        try:
            t, v = float(f[0]), float(f[1])
        except ValueError:
            continue
        clones = streams.setdefault(f[2], [])
        if not clones or t <= clones[-1][-1][0]:
            clones.append([])
        clones[-1].append((t, v))
    series = [c for cs in streams.values() for c in cs if c]
    if not series or period_ms <= 0:
        return None
    ticks = sorted(t for c in series for t, _v in c)
    paths = [_row_spans(rows, start_ms, period_ms, ticks, len(series) > 1, end_ms) for rows in series]
    if start_spread_ms > period_ms / 2:
        paths = _late_first_rows(paths, series, start_ms, period_ms)
    end = min(ts[-1] for ts, _cum in paths) - start_ms
    grid = [start_ms + period_ms * j for j in range(1, int(end // period_ms) + 1)]
    total = [0.0] * len(grid)
    covered = 0.0
    for ts, cum in paths:
        covered += cum[-1]
        k = 0
        for j, g in enumerate(grid):
            while ts[k + 1] < g:
                k += 1
            span = ts[k + 1] - ts[k]
            total[j] += cum[k] + (cum[k + 1] - cum[k]) * ((g - ts[k]) / span if span else 1.0)
    counts = [round(x) for x in total]
    return [b - a for a, b in zip([0] + counts[:-1], counts)], round(covered)
