"""Every run directory under some directories, at a glance: ``ssdpts status``.

Read-only, and without taking any lock: a run holds ``.lock`` in its directory (flock) for as long
as its process writes it, and the kernel lists every flock in ``/proc/locks`` with the holder's PID
and the file's device and inode. One read of that file answers "is its process alive?" for every
run at once; nothing is opened for writing and no lock is ever requested, so a status can never
stall or disturb a run, and may be run in a loop beside 24 of them.

States (``RunStatus.state``):

* ``running``: a process holds the run's lock (``pid``), or the manifest says running and the run
  was started on another host, whose processes cannot be seen from here (``alive`` None);
* ``interrupted``: stopped by a signal, the guard or a lost host — or the manifest still says
  running but no process holds the lock (killed, or the host went down): ``ssdpts resume`` it;
* ``failed``: the run failed (``error``);
* ``complete``;
* ``damaged``: a stopped run whose files fail the cheap check below.

The cheap check (what status can afford for a thousand runs in about a second) looks only at
what the directory lists and the sizes of two files, never at contents: the manifest parses; a
complete run has summary.json with the size recorded when it was written, and a steps.jsonl that
ends with a whole line; every raw fio file recorded in the manifest is present. It does not
compute a checksum or recompute a step from fio's output: ``ssdpts verify RUN`` does, for one run
(seconds for a long one), and ``db add`` does for the library.

What a running run is doing comes from the tail of its steps.jsonl (the last few rounds of the
part in progress, read backwards; only the tracking cells' lines are parsed) and its plan
(rebuilt from the manifest, as ``ssdpts plan`` makes it): the part, round and step, the last value
of each tracking variable with its range and excursion against the steady-state limits (20% and
10% of the window's average), and the time left: from the rounds still allowed (and the 5-round
window still to fill) at the planned step length; purge and WIPC, which depend on the device,
come on top and are said to.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field, fields
import json
import os
from pathlib import Path
import re
import socket
import time

from ssdpts.errors import UserError
from ssdpts.kinds import KINDS, PTS
from ssdpts.results.reader import find_run_dirs, run_uid
from ssdpts.store import MANIFEST, STEPS, SUMMARY, read_json

LOCK_FILE = ".lock"
STATES = ("running", "interrupted", "failed", "damaged", "complete")  # display order
WINDOW = 5  # rounds of a steady-state window (docs/pts-reference.md#steady-state)


@dataclass
class Tracking:
    """The last value of one tracking variable and its window against the steady-state limits."""

    name: str
    unit: str
    value: float | None
    rounds: int  # complete rounds of the part seen so far (eligible for a window)
    range_pct: float | None = None  # of the window's average; limit 20
    excursion_pct: float | None = None  # limit 10
    reached: bool | None = None  # None: fewer than 5 rounds, no window yet


@dataclass
class RunStatus:
    path: str
    name: str
    state: str
    manifest_status: str | None
    alive: bool | None  # a process holds the run's lock (None: cannot be seen from here)
    pid: int | None
    kind: str  # "pts", or the manifest's kind (quick, replay)
    tests: list[str]
    device: str
    host: str | None
    created: str | None
    updated: str | None
    ended: str | None
    elapsed_s: float | None
    since_update_s: float | None  # seconds since the run last saved (manifest updated)
    part: str | None = None  # title of the part in progress (or the last one)
    part_id: str | None = None
    phase: str | None = None  # purge/WIPC, round, sample, fixed
    round: int | None = None
    step: int | None = None  # the step in progress, 1-based
    step_estimated: bool = False  # from the time since the last saved step (a round is saved when it ends)
    steps_in_round: int | None = None
    parts_done: int = 0
    parts_total: int = 0
    eta_s: tuple[float, float] | None = None  # (soonest, latest) seconds left, at the run's pace
    pace: float = 1.0  # seconds the run takes per planned second of stimulus (observed)
    eta_note: str = ""
    wsat: dict | None = None  # samples, max_samples, written_bytes, max_bytes
    tracking: list[Tracking] = field(default_factory=list)
    stop_reasons: dict[str, str] = field(default_factory=dict)  # part id -> stop reason (finished parts)
    error: str | None = None
    problems: list[str] = field(default_factory=list)  # the cheap check's findings (damaged)
    note: str = ""
    # the run's identity as the results library gives it, and its target (metrics.py labels its series with them)
    run_id: str | None = None
    target: str | None = None  # the target's path as given
    serial: str | None = None
    model: str | None = None

    def to_dict(self) -> dict:
        """As JSON wants it (by hand: dataclasses.asdict's deep copies cost a third of a 1,000-run scan)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["eta_s"] = list(self.eta_s) if self.eta_s is not None else None
        d["tracking"] = [dict(vars(t)) for t in self.tracking]
        return d


# ---- processes -----------------------------------------------------------------------------------

def held_locks(path: str = "/proc/locks") -> dict[tuple[int, int, int], int] | None:
    """(major, minor, inode) -> PID of every flock the kernel lists; None when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        f = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" (a blocked waiter has "->" after the id)
        if f[1:2] == ["->"]:
            continue
        if len(f) >= 6 and f[1] == "FLOCK":
            try:
                major, minor, ino = f[5].split(":")
                out[(int(major, 16), int(minor, 16), int(ino))] = int(f[4])
            except ValueError:
                continue
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _lock_holder(run_dir: Path, locks: dict | None) -> int | None:
    if not locks:
        return None
    try:
        st = os.stat(run_dir / LOCK_FILE)
    except OSError:
        return None
    pid = locks.get((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    return pid if pid and _alive(pid) else None


# ---- the cheap check --------------------------------------------------------------------------------

def quick_problems(run_dir: Path, man: dict, *, complete: bool) -> list[str]:
    """What the directory listing and two file sizes show to be wrong with a run that is not
    writing (see the module's docstring); [] when nothing is."""
    out = []
    if complete and man.get("kind") is None:
        recorded = (man.get("summary_file") or {}).get("bytes")
        try:
            size = os.stat(run_dir / SUMMARY).st_size
            if isinstance(recorded, int) and size != recorded:
                out.append(f"{SUMMARY} has {size} bytes, not the {recorded} recorded when it was written")
        except OSError:
            out.append(f"{SUMMARY} is missing")
        try:
            with open(run_dir / STEPS, "rb") as f:
                end = f.seek(0, os.SEEK_END)
                if end:
                    f.seek(end - 1)
                    if f.read(1) != b"\n":
                        out.append(f"{STEPS} ends in a cut-off line")
        except OSError:
            out.append(f"{STEPS} is missing")
    listed: dict[str, set[str] | None] = {}  # directory (relative) -> its names: one listing per part
    base = str(run_dir)
    for pid, part in (man.get("parts") or {}).items():
        rounds = part.get("rounds") if isinstance(part, dict) else None
        for name, rec in (rounds.items() if isinstance(rounds, dict) else ()):
            for rel in (rec.get("files") or {}) if isinstance(rec, dict) else ():
                d, _, leaf = rel.rpartition("/")
                if d not in listed:
                    try:
                        listed[d] = set(os.listdir(os.path.join(base, d)))
                    except OSError:
                        listed[d] = None
                names = listed[d]
                if names is None or leaf not in names:
                    out.append(f"{rel} is missing ({name} of {pid})")
    return out


# ---- the tail of steps.jsonl ----------------------------------------------------------------------

_FIELD = {k: re.compile(rf'"{k}":\s*("(?:[^"\\]|\\.)*"|-?[0-9.e+-]+|null)')
          for k in ("test", "part", "phase", "round", "index", "session", "key", "end_time")}
_OPTIONAL = ("session", "end_time")


def _light(line: bytes) -> dict | None:
    """The identifying fields of a step line and its end, from its first bytes (the measurement is
    not parsed); None when they are not all there (the caller parses the line)."""
    head = line[:1200].decode("utf-8", "replace")
    rec = {}
    for k, rx in _FIELD.items():
        m = rx.search(head)
        if m is None:
            if k in _OPTIONAL:
                continue
            return None
        rec[k] = json.loads(m.group(1))
    return rec


def _lines_backwards(path: Path, block: int = 1 << 16):
    """steps.jsonl's whole lines from the last to the first. What follows the file's last newline
    is a line being written (or cut off by a crash): not a step, skipped however long it is."""
    try:
        f = open(path, "rb")
    except OSError:
        return
    with f:
        pos, rest, cut = f.seek(0, os.SEEK_END), b"", True
        while pos > 0:
            n = min(block, pos)
            pos -= n
            f.seek(pos)
            lines = (f.read(n) + rest).split(b"\n")
            rest, body = lines[0], lines[1:]
            if cut:
                if not body:  # no newline yet: all of it belongs to the cut-off line
                    rest = b""
                    continue
                body, cut = body[:-1], False
            for line in reversed(body):
                if line.strip():
                    yield line
        if rest.strip() and not cut:
            yield rest


def tail_records(run_dir: Path, tracked: dict[tuple[str, str], set[str]], rounds: int = WINDOW + 1,
                 sampled: frozenset[tuple[str, str]] = frozenset()) -> list[dict]:
    """The step lines of the part the run was last in: those of its last ``rounds`` rounds (the
    first of them may be partial), in file order. Each is a light record (test, part, phase,
    round, index, session, key); the lines of tracked cells (``tracked[(test, part)]``) and of every
    step of a part stopped by its samples (``sampled``: WSAT's stop rule) carry their measurement too."""
    out: list[dict] = []
    current = None
    seen: list[int] = []
    for line in _lines_backwards(run_dir / STEPS):
        rec = _light(line)
        if rec is None:
            try:
                full = json.loads(line)
            except ValueError:
                continue
            rec = {k: full.get(k) for k in _FIELD}
        tp = (rec["test"], rec["part"])
        if current is None:
            current = tp
        if tp != current:
            break
        if rec["phase"] == "round" and rec["round"] not in seen:
            if len(seen) == rounds:
                break
            seen.append(rec["round"])
        if rec["key"] in tracked.get(tp, ()) or tp in sampled:
            try:
                rec["measurement"] = json.loads(line)["measurement"]
            except (ValueError, KeyError):
                pass
        out.append(rec)
    out.reverse()
    return out


# ---- one run directory -------------------------------------------------------------------------------

def _next(kind: str, run_dir: Path) -> str:
    """What to do with a run of this kind whose process is gone."""
    k = KINDS.get(kind)
    return k.resume_hint(run_dir) if k is not None else f"read it with the ssdpts that made it (kind {kind!r})"


def _device(man: dict) -> str:
    t = man.get("target") or {}
    name = t.get("model") or t.get("name") or os.path.basename(str(t.get("path") or "?"))
    serial = t.get("serial")
    return f"{name} {serial[-8:]}" if serial else str(name)


def _unix(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")))
    except (ValueError, OverflowError):
        return None


def read_status(run_dir: Path, locks: dict | None, *, now: float | None = None,
                hostname: str | None = None) -> RunStatus:
    """The status of one run directory (never raises for a damaged one: it says so)."""
    now = time.time() if now is None else now
    hostname = hostname or socket.gethostname()
    pid = _lock_holder(run_dir, locks)
    try:
        man = read_json(run_dir / MANIFEST, "run manifest")
    except UserError as exc:
        return RunStatus(str(run_dir), run_dir.name, "running" if pid else "damaged", None, pid is not None, pid, PTS,
                         [], "?", None, None, None, None, None, None, problems=[str(exc)])
    status = man.get("status")
    kind = man.get("kind") or PTS
    spec = man.get("run_spec") or man.get("spec") or {}
    tests = list(spec.get("tests") or ([kind] if kind != PTS else []))
    host = (man.get("host") or {}).get("hostname")
    # quick and replay runs recorded before they wrote "ended" wrote "finished"
    created, updated = man.get("created") or man.get("started"), man.get("updated")
    ended = man.get("ended") or man.get("finished")
    t0, tu, te = _unix(created), _unix(updated), _unix(ended)
    st = RunStatus(str(run_dir), run_dir.name, str(status), status, pid is not None, pid, kind, tests, _device(man),
                   host, created, updated, ended, elapsed_s=None if t0 is None else (te or now) - t0,
                   since_update_s=None if tu is None else now - tu, error=man.get("error"))
    target = man.get("target") or {}
    st.run_id = run_uid(man.get("created"), host, target.get("real_path") or target.get("path"), run_dir.name,
                        (man.get("run_spec") or {}).get("seed"))  # as results/reader.RunResults.uid
    st.target, st.serial, st.model = target.get("path"), target.get("serial"), target.get("model")
    st.stop_reasons = {k: v["stop_reason"] for k, v in (man.get("parts") or {}).items()
                       if isinstance(v, dict) and v.get("stop_reason")}
    remote = bool(host) and host != hostname and not man.get("device_host")
    if pid is not None:
        st.state = "running"
    elif status == "running":
        if remote and locks is not None:
            st.alive = None
            st.note = f"started on {host}: its process cannot be seen from here"
        elif locks is None:
            st.alive = None
            st.note = "/proc/locks cannot be read here: whether its process lives is unknown"
        else:
            st.state = "interrupted"
            st.note = f"its process is gone (killed, or the host went down): {_next(kind, run_dir)}"
    elif status not in ("complete", "interrupted", "failed"):
        st.state = "damaged"
        st.problems.append(f"{MANIFEST} has status {status!r}")
    if st.state != "running":
        st.problems += quick_problems(run_dir, man, complete=status == "complete")
        if st.problems:
            st.state = "damaged"
    if kind != PTS and st.state == "running" and kind in KINDS:  # a run beside the PTS: its own results file
        _other_progress(st, KINDS[kind].progress(run_dir))
    if kind == PTS and st.state != "complete":  # a PTS run's plan says where it is
        try:
            _progress(st, run_dir, man, now)
        except (UserError, KeyError, TypeError, ValueError) as exc:
            st.note = (st.note + "; " if st.note else "") + f"progress not available: {exc}"
    return st


def _other_progress(st: RunStatus, got: dict | None) -> None:
    """A quick or replay run's place and time left (kinds.Kind.progress)."""
    if not got:
        st.phase = "starting"
        return
    st.part, st.phase = got["part"], f"run {got['step']} of {got['steps']}"
    st.step, st.steps_in_round = got["step"], got["steps"]
    st.parts_done, st.parts_total = got["parts_done"], got["parts_total"]
    st.eta_s = tuple(got["left_s"])


def _progress(st: RunStatus, run_dir: Path, man: dict, now: float) -> None:
    """Part, round, step, tracking and time left, from the plan and the tail of steps.jsonl."""
    from ssdpts.results.analysis import kept_sessions
    from ssdpts.pts.plan import build_parts, part_seconds
    from ssdpts.results.records import Manifest

    spec, target = Manifest.from_dict(man).run_spec_and_target()
    parts = build_parts(spec, target.size_bytes, target.logical_block_size_bytes or 512)
    st.parts_total = len(parts)
    tracked = {(p.test, p.part): {t.key for t in p.tracking} for p in parts}
    recs = tail_records(run_dir, tracked, sampled=frozenset((p.test, p.part) for p in parts if p.stop_rule == "wsat"))
    k = next((i for i, p in enumerate(parts) if recs and (p.test, p.part) == (recs[-1]["test"], recs[-1]["part"])), 0)
    left = part_seconds(parts[k], spec)
    if recs:  # the part the steps end in: where it is, and its tracking variables
        left = _part_left(st, parts[k], recs, spec.step_seconds, now)
        st.tracking = _tracking(parts[k], recs, kept_sessions(Manifest.from_dict(man))) or st.tracking
        if parts[k].id in st.stop_reasons:  # it is finished: the next part's purge and WIPC come first
            if k + 1 == len(parts):
                st.part, st.part_id, st.parts_done, st.phase = parts[k].title, parts[k].id, len(parts), "finished"
                st.round = st.step = st.steps_in_round = None
                return
            k += 1
            st.tracking, st.round, st.step, st.steps_in_round = [], None, None, None
            left = tuple(x * st.pace for x in part_seconds(parts[k], spec))
            recs = []
    if not recs:
        st.phase = "purge and WIPC" if parts[k].purge or parts[k].wipc else "starting"
    st.part, st.part_id, st.parts_done = parts[k].title, parts[k].id, k
    if st.state == "running":
        later = [tuple(x * st.pace for x in part_seconds(p, spec)) for p in parts[k + 1:]]
        st.eta_s = (left[0] + sum(lo for lo, _ in later), left[1] + sum(hi for _, hi in later))
        if st.phase == "purge and WIPC" or any(p.purge or p.wipc for p in parts[k + 1:]):
            st.eta_note = "plus purge and WIPC, which depend on the device"


def _tracking(part, recs: list[dict], keep: frozenset[int]) -> list[Tracking]:
    """The part's tracking variables: last value, and the latest window against the limits."""
    from ssdpts.results.analysis import complete_rounds, tracking_series, verdicts
    from ssdpts.results.steprecord import StepHead

    rounds = complete_rounds([StepHead.from_dict(r) for r in recs], part)
    series = tracking_series(rounds, part)
    out = []
    for t, v in zip(part.tracking, verdicts(rounds, part, keep)):
        ys = series[t.name][1]
        tr = Tracking(t.name, t.unit, ys[-1] if ys else None, len(ys))
        if v is not None and v.average:
            tr.range_pct, tr.excursion_pct = 100 * v.range / v.average, 100 * v.excursion / v.average
            tr.reached = v.reached
        out.append(tr)
    return out


def pace(recs: list[dict], planned_s, by: str = "round") -> float:
    """Seconds the run takes per planned second: the median over consecutive rounds (WSAT:
    samples) of the time from one's last step end to the next's, against the next one's planned
    length (fio's start-up, the saves and a busy host make a round longer than its steps); 1.0
    when that cannot be seen yet. ``planned_s(round)``: a round's planned seconds."""
    ends: dict[int, float] = {}
    for x in recs:
        key = x[by]
        if x["phase"] == "round" and isinstance(x.get("end_time"), (int, float)):
            ends[key] = max(ends.get(key, 0.0), float(x["end_time"]))
    ratios = sorted((ends[k] - ends[k - 1]) / planned_s(k) for k in ends if k - 1 in ends and planned_s(k) > 0)
    return max(ratios[len(ratios) // 2], 1.0) if ratios else 1.0


def _part_left(st: RunStatus, part, recs: list[dict], step_s: float, now: float) -> tuple[float, float]:
    """(soonest, latest) seconds the part in progress still needs, at the run's pace; sets phase,
    round, step (and for WSAT its samples) and the pace."""
    from ssdpts.results.analysis import complete_rounds
    from ssdpts.results.steprecord import StepHead

    last = recs[-1]
    ran = max(now - last["end_time"], 0.0) if st.state == "running" and last.get("end_time") else 0.0
    if part.stop_rule == "wsat":
        st.pace = pace(recs, lambda k: step_s, by="index")  # a sample is a step: its period is one step's
        samples = [x for x in recs if x["phase"] == "round"]
        n = last["index"] if samples else 0
        per = [x["measurement"]["write"]["io_bytes"] for x in samples if "measurement" in x]
        written = n * sum(per) / len(per) if per else 0.0  # estimated from the recent samples
        by_bytes = (part.wsat_max_bytes - written) / (sum(per) / len(per)) if per and sum(per) else float("inf")
        left = max(min(part.wsat_max_steps - n, max(by_bytes, 0.0)) * step_s * st.pace - ran, 0.0)
        now_at = min(n + 1 + int(ran / st.pace // step_s), part.wsat_max_steps) if step_s > 0 else n + 1
        st.phase, st.step, st.steps_in_round, st.step_estimated = "sample", now_at, part.wsat_max_steps, ran > 0
        st.wsat = {"samples": n, "max_samples": part.wsat_max_steps, "written_bytes_estimate": round(written),
                   "max_bytes": part.wsat_max_bytes}
        st.tracking = [Tracking("IOPS", "IOPS", samples[-1].get("measurement", {}).get("iops") if samples else None, n)]
        return left, left
    r, i = (1, 0) if last["phase"] == "wipc" else (last["round"], last["index"])
    if i >= len(part.round_steps(r)):
        r, i = r + 1, 0
    steps = part.round_steps(r)
    st.pace = pace(recs, lambda q: sum(s.planned_s for s in part.round_steps(q)))
    # A round's steps are saved when the round ends: the step in progress is estimated from the
    # time since the last saved step ended, at the planned step lengths and the run's pace.
    planned = [s.planned_s * st.pace for s in steps[i:]]
    done = 0
    while done < len(planned) - 1 and ran >= sum(planned[:done + 1]):
        done += 1
    st.phase, st.round, st.step, st.steps_in_round = "round", r, i + 1 + done, len(steps)
    st.step_estimated = ran > 0
    this_round = max(sum(planned) - ran, 0.0)
    if part.stop_rule == "fixed":
        rest = sum(s.planned_s for q in range(r + 1, part.max_rounds + 1) for s in part.round_steps(q)) * st.pace
        return this_round + rest, this_round + rest
    round_s = sum(s.planned_s for s in part.round_steps(1)) * st.pace
    heads = [StepHead.from_dict(x) for x in recs]
    soonest = this_round + max(WINDOW - len(complete_rounds(heads, part)) - 1, 0) * round_s
    return soonest, this_round + max(part.max_rounds - r, 0) * round_s


# ---- many ----------------------------------------------------------------------------------------------

def scan(dirs: list[str | Path], *, now: float | None = None) -> list[RunStatus]:
    """The status of every run directory in or under ``dirs``, running ones first."""
    found = find_run_dirs(dirs)
    locks = held_locks()
    now = time.time() if now is None else now
    host = socket.gethostname()
    out = [read_status(d, locks, now=now, hostname=host) for d in found]
    order = {s: i for i, s in enumerate(STATES)}
    return sorted(out, key=lambda s: (order.get(s.state, 9), s.path))


def counts(runs: list[RunStatus]) -> dict[str, int]:
    return {s: n for s in STATES if (n := sum(1 for r in runs if r.state == s))}
