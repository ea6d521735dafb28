"""From the kernel's block trace to each step's first IO issued and last IO completed, as the
device saw them (engine/devtrace.py runs it in its tracing child). Pure: no files, no processes;
tested on recorded traces (tests/unit/test_devtrace.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import re

import numpy as np

LEAD_S = 0.05  # the window opens this long before a timed step's planned end: a step ends after it (fio
# starts its clock after the release), and the tracing child wakes within a millisecond (at real-time
# priority, devtrace_child.py); every 50 ms of window is ~100,000 events at 1M IOPS to read
WHOLE_S = 2.0  # a step shorter than this (a time-compressed run) is traced whole
TAIL_S = 0.005  # a window closes this long (trace time) after the next step's first IO

# Event kinds in the arrays of parse_chunk: an IO issued, completed, or requeued (blk-mq could not
# dispatch it and put it back: its next issue is the same IO, not a second one in flight).
ISSUE, COMPLETE, REQUEUED = 1, 2, 3
# "  fio-1 [001] ..... 12345.678901: block_rq_issue: 7,2 W 4096 () 123456 + 8 none,0,0 [fio]": the
# kernel's filter keeps only this device's requests with data (nr_sector > 0); a discard (rwbs with a
# D) is the one left to skip here
_MARK = b": block_"
_DISCARD = re.compile(rb": block_\w+: [\d,]+ [A-Z]*D")
_EMPTY = re.compile(rb" \+ 0 ")
_POW = 10 ** np.arange(13, dtype=np.int64)


def parse_chunk(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Whole trace_pipe lines → (times ns, kinds ISSUE / COMPLETE / REQUEUED) of the reads and
    writes, in their order. The positions of ': block_' found with bytes.find, the timestamp digits
    before them and the event's name after them read with numpy: about a microsecond per event on
    the CI machine, so that a window of a fast device is read about as fast as it is traced."""
    pos_l = []
    i = data.find(_MARK, 8)
    while i >= 0:
        pos_l.append(i)
        i = data.find(_MARK, i + 8)
    if not pos_l:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8)
    pos = np.asarray(pos_l, dtype=np.int64)
    skip = [m.start() for m in _DISCARD.finditer(data)]
    empty = [m.start() for m in _EMPTY.finditer(data)]  # where the kernel could not filter (no data: a flush)
    if empty:
        skip += pos[np.maximum(np.searchsorted(pos, np.asarray(empty, dtype=np.int64)) - 1, 0)].tolist()
    if skip:
        pos = pos[~np.isin(pos, np.asarray(skip, dtype=np.int64))]
    arr = np.frombuffer(data, dtype=np.uint8)
    pos = pos[pos + 13 < len(arr)]
    # microseconds: the six digits before ': block_'; seconds: the digits before the '.' before them
    digits = arr[pos[:, None] - np.arange(1, 7)[None, :]].astype(np.int64) - 48
    usec = (digits * _POW[:6]).sum(axis=1)
    sec = np.zeros(len(pos), dtype=np.int64)
    alive = np.ones(len(pos), dtype=bool)
    for k in range(13):
        c = arr[np.maximum(pos - 8 - k, 0)].astype(np.int64)
        alive &= (c >= 48) & (c <= 57)
        sec += np.where(alive, (c - 48) * _POW[k], 0)
    # the event: block_rq_{issue,complete,requeue} or block_bio_{queue,complete}
    rq = arr[pos + 8] == ord("r")
    c3, c4 = arr[pos + 11], arr[pos + 12]
    kind = np.where(rq, np.where(c3 == ord("i"), ISSUE, np.where(c3 == ord("c"), COMPLETE, REQUEUED)),
                    np.where(c4 == ord("q"), ISSUE, COMPLETE)).astype(np.int8)
    return sec * 1_000_000_000 + usec * 1000, kind


# --- the aggregation (pure: tested on recorded traces) ------------------------------------------


@dataclass
class StepView:
    key: int
    release_ns: int
    duration_ns: int | None
    first_issue_ns: int | None = None
    last_complete_ns: int | None = None
    ios: int = 0
    busy_issues: int = 0  # issued while another IO was in flight on the device
    end_final: bool = False
    lost: bool = False  # events lost while it was traced: its views are not reported
    start_told: bool = False  # its first issue has been reported (before its end is known)
    start_seen: bool = False  # tracing was on from its release to its first IO: that is the first
    end_seen: bool = False  # tracing was on from its last IO seen until the next release: that is the last


@dataclass
class Aggregator:
    """Per step, from release stamps and trace events in time order. Tracing is on only in
    windows: a step's first issue counts only if a window was open from its release to it, its
    last completion only if that window lasted until the next step's release (by then the step
    has drained: the gate releases a step only after the previous one drained, so every completion
    before the next step's first issue is this step's).

    Events come in chunks (arrays: :func:`parse_chunk`) and are reduced with numpy: per step its
    first issue, last completion, IO count and IOs issued while another was in flight (the number in
    flight carried from chunk to chunk, never below zero: IOs in flight when a window opened
    complete without their issue having been seen)."""

    steps: list[StepView] = field(default_factory=list)
    _releases: list[int] = field(default_factory=list)
    _inflight: int = 0
    windows: list[list[int | None]] = field(default_factory=list)  # [open ns, close ns or None]
    last_event_ns: int = 0
    idle: bool = False  # the run said no step follows for now (between parts)
    events: int = 0  # read and reduced (the cost's measure: benchmarks/devtrace_cost.py)
    n_windows: int = 0
    max_lag_ns: int = 0  # the longest a read event had waited to be read
    started_ns: int | None = None  # when the current step's first IO was noticed (want_open)

    def release(self, key: int, t_ns: int, duration_ns: int | None) -> None:
        self.steps.append(StepView(key, t_ns, duration_ns))
        self._releases.append(t_ns)
        self.idle = False
        self.started_ns = None

    def window_opened(self, t_ns: int) -> None:
        """Tracing is on from ``t_ns`` (it was off before): IOs in flight then are not known."""
        self._inflight = 0
        self.windows.append([t_ns, None])
        self.n_windows += 1

    def window_closed(self, t_ns: int) -> None:
        if self.windows and self.windows[-1][1] is None:
            self.windows[-1][1] = t_ns

    def _window_of(self, t_ns: int) -> list[int | None] | None:
        for w in reversed(self.windows):
            if w[0] <= t_ns and (w[1] is None or t_ns <= w[1]):
                return w
        return None

    def feed(self, t_ns: int, kind: int, *_ignored) -> None:
        """One event (tests): ``kind`` ISSUE, COMPLETE or REQUEUED."""
        self.feed_chunk(np.array([t_ns], dtype=np.int64), np.array([kind], dtype=np.int8))

    def feed_chunk(self, t: np.ndarray, kind: np.ndarray) -> None:
        if not len(t):
            return
        self.events += len(t)
        self.last_event_ns = max(self.last_event_ns, int(t[-1]), int(t.max()))
        if not self.steps:
            self._inflight = _carry(self._inflight, kind)
            return
        rel = np.asarray(self._releases, dtype=np.int64)
        issue = kind == ISSUE
        # the number in flight after each event, never below zero: x_t = max(0, x_{t-1} + d_t)
        d = np.where(issue, 1, -1).astype(np.int64)
        p = self._inflight + np.cumsum(d)
        x = p - np.minimum(0, np.minimum.accumulate(p))
        self._inflight = int(x[-1])
        ti = t[issue]
        if len(ti):
            owner = np.searchsorted(rel, ti, side="right") - 1
            busy = x[issue] >= 2  # another IO was in flight when it was issued
            for k in np.unique(owner[owner >= 0]):
                sel = owner == k
                st = self.steps[int(k)]
                first = int(ti[sel].min())
                if st.first_issue_ns is None or first < st.first_issue_ns:
                    st.first_issue_ns = first
                st.busy_issues += int(busy[sel].sum())
        tc = t[kind == COMPLETE]
        if len(tc):
            # a completion belongs to the step whose first issue came last before it
            firsts = np.array([st.first_issue_ns if st.first_issue_ns is not None else np.iinfo(np.int64).max
                               for st in self.steps], dtype=np.int64)
            firsts = np.maximum.accumulate(firsts)  # non-decreasing (a step not yet seen: at the end, never)
            owner = np.searchsorted(firsts, tc, side="right") - 1
            for k in np.unique(owner[owner >= 0]):
                sel = owner == k
                st = self.steps[int(k)]
                st.ios += int(sel.sum())
                last = int(tc[sel].max())
                if st.last_complete_ns is None or last > st.last_complete_ns:
                    st.last_complete_ns = last

    def lost(self) -> None:
        """Events were lost (the trace buffer overran): nothing not yet answered can be trusted."""
        for s in self.steps:
            if not s.end_final:
                s.lost = True

    def started(self) -> list[StepView]:
        """Steps whose first issue is now known and not yet reported: events come in time order, so
        the first one seen after the release is the first (it counts if a window was open from the
        release to it); reported once TAIL_S of trace time after it has been read too, so that the
        IOs issued while another was in flight at the boundary are counted with it."""
        out = []
        for s in self.steps:
            if s.start_told or s.end_final or s.first_issue_ns is None \
                    or self.last_event_ns < s.first_issue_ns + TAIL_S * 1e9:  # its start window with it
                continue
            w = self._window_of(s.first_issue_ns)
            s.start_seen = w is not None and w[0] <= s.release_ns
            s.start_told = True
            out.append(s)
        return out

    def settle(self, now_ns: int | None = None) -> list[StepView]:
        """Steps whose end is now known: the next step's first IO has been seen and TAIL_S of trace
        time after it (or ``now_ns``: everything up to now was read, no step follows for now)."""
        out = []
        for i, s in enumerate(self.steps):
            if s.end_final:
                continue
            nxt = self.steps[i + 1] if i + 1 < len(self.steps) else None
            done = now_ns is not None or (nxt is not None and nxt.first_issue_ns is not None
                                          and self.last_event_ns >= nxt.first_issue_ns + TAIL_S * 1e9)
            if not done:
                break
            until = nxt.release_ns if nxt is not None else now_ns
            if s.first_issue_ns is not None and not s.start_told:
                w = self._window_of(s.first_issue_ns)
                s.start_seen = w is not None and w[0] <= s.release_ns
            if s.last_complete_ns is not None and until is not None:
                w = self._window_of(s.last_complete_ns)
                s.end_seen = w is not None and (w[1] is None or w[1] >= until)
            s.end_final = True
            out.append(s)
        self._prune()
        return out

    def _prune(self) -> None:
        """Keep the steps not yet settled and the one before them (completions still attributed to it)."""
        first = next((i for i, s in enumerate(self.steps) if not s.end_final), len(self.steps))
        drop = max(first - 1, 0)
        if drop:
            del self.steps[:drop]
            del self._releases[:drop]
        oldest = self.steps[0].release_ns if self.steps else 0
        self.windows = [w for w in self.windows if w[1] is None or w[1] >= oldest - int(1e9)]

    def want_open(self, now_ns: int) -> bool:
        """Must tracing be on now? From a timed step's planned end less LEAD_S until the next step's
        first IO plus TAIL_S; all the time while a step of unknown length or shorter than WHOLE_S
        runs, or before the first release; not between parts. The first IO is ``started_ns``: when
        the tracing child noticed the kernel's event count rise after the release (it does not wait
        for reading the events, which may be far behind on a fast device)."""
        if self.idle:
            return False
        if not self.steps:
            return True
        if self.started_ns is None or now_ns < self.started_ns + TAIL_S * 1e9:
            return True  # its first IO not yet happened, or just
        return now_ns >= self.next_open_ns()

    def next_open_ns(self) -> int | None:
        """When the current step's end window opens: its planned end less LEAD_S; at once for a step
        shorter than WHOLE_S."""
        if self.idle or not self.steps or self.steps[-1].duration_ns is None:
            return None if self.idle or not self.steps else int(self.steps[-1].release_ns)
        cur = self.steps[-1]
        if cur.duration_ns < WHOLE_S * 1e9:
            return int(cur.release_ns)
        return int(cur.release_ns + cur.duration_ns - LEAD_S * 1e9)


def _carry(x0: int, kind: np.ndarray) -> int:
    d = np.where(kind == ISSUE, 1, -1).astype(np.int64)
    p = x0 + np.cumsum(d)
    return int((p - np.minimum(0, np.minimum.accumulate(p)))[-1])


def view_json(s: StepView) -> str:
    """What the run is told of a step: its first issue and last completion where they were seen
    (``end``: false while only its start is known; the full line follows once its end is)."""
    return json.dumps({"key": s.key, "first_issue_ns": s.first_issue_ns if s.start_seen and not s.lost else None,
                       "last_complete_ns": s.last_complete_ns if s.end_seen and not s.lost else None,
                       "ios": s.ios, "busy_issues": s.busy_issues, "end": s.end_final})


