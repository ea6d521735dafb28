"""The IO timeline of one block device as the kernel saw it: ftrace block tracepoints in a private
tracing instance, independent of fio and of ssdpts' own records.

Used to verify the step schedule (benchmarks/boundaries.py, tests/integration/test_boundaries.py):
where one step's IOs end and the next one's begin, whether the device ever had an IO of one step
in flight while the next step issued, and how many IOs were issued while another was in flight
(a LAT step must never put a second IO on the device).

* Request-based devices (loop, NVMe, SCSI): ``block_rq_issue`` (dispatched to the driver) and
  ``block_rq_complete``. Bio-based devices (zram) have no requests: ``block_bio_queue`` and
  ``block_bio_complete`` (on request-based devices the latter is traced only for bios that were
  split, so it cannot serve there). A request can be a piece of a larger IO (a 1 MiB IO of 256
  pages becomes two 512 KiB requests on a loop device, 128 segments each): ``attribute`` gives a
  piece to the step whose block size it divides. Requests can also merge: traced devices should
  have merging off (``queue/nomerges`` = 2; benchmarks/boundaries.py sets it on its scratch device).
* A private instance (engine/tracefs.py: other tracers on the host keep the global buffer; the
  events filtered to the one device; ``trace_clock=mono``, the clock of ``time.monotonic()``).
  The buffer is streamed to a file by ``cat trace_pipe`` (a reader
  in its own process: no Python thread competes with the run for the GIL or a CPU slice), which
  ends by itself when tracing is switched off and the buffer is drained.
* ``blktrace`` itself is not used: its ioctl is refused by some kernels (this CI's among them).
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import shutil
import subprocess
import time
from typing import Iterable, Sequence

import numpy as np

from .tracefs import BIO_EVENTS, RQ_EVENTS, Instance, TracefsUnavailable, ensure_mounted

class TraceUnavailable(RuntimeError):
    """Block tracing cannot run here; the message says why and what to do."""


def _dev_t(device: str) -> tuple[int, int, str]:
    st = os.stat(device)
    if not (st.st_mode & 0o170000 == 0o060000):
        raise TraceUnavailable(f"{device} is not a block device: block tracing needs one")
    return os.major(st.st_rdev), os.minor(st.st_rdev), os.path.basename(os.path.realpath(device))


def is_request_based(name: str) -> bool:
    """blk-mq devices have /sys/block/NAME/mq; bio-based ones (zram, md, dm) do not."""
    return Path(f"/sys/block/{name}/mq").is_dir()


class BlockTrace:
    """``with BlockTrace("/dev/loop3", out_path) as t: ...; ios = t.ios()``."""

    def __init__(self, device: str, out_path: Path, *, buffer_kb_per_cpu: int = 65536, level: str | None = None):
        self.device = device
        self.out_path = Path(out_path)
        self.buffer_kb = buffer_kb_per_cpu
        major, minor, self.name = _dev_t(device)
        self.dev = (major << 20) | minor  # the kernel's internal dev_t, as the tracepoints record it
        if level == "rq" and not is_request_based(self.name):
            raise TraceUnavailable(f"{device} is bio-based (no requests): trace it at level 'bio'")
        self.level = level or ("rq" if is_request_based(self.name) else "bio")
        self.events = RQ_EVENTS if self.level == "rq" else BIO_EVENTS
        self.inst: Instance | None = None
        self._cat: subprocess.Popen | None = None
        self.overrun = 0

    def __enter__(self) -> "BlockTrace":
        try:
            root = ensure_mounted()
        except TracefsUnavailable as exc:
            raise TraceUnavailable(str(exc)) from None
        self.inst = Instance(f"ssdpts-{os.getpid()}-{time.monotonic_ns() % 10**9}", self.events, f"dev == {self.dev}",
                             self.buffer_kb, root)
        try:
            self.inst.enable(True)
            self.inst.clear()
            self._out = open(self.out_path, "wb")
            self._cat = subprocess.Popen([shutil.which("cat") or "cat", str(self.inst.pipe)], stdout=self._out)
            self.inst.record(True)
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._teardown()

    def _teardown(self) -> None:
        if self.inst is None:
            return
        try:
            self.inst.record(False)
        except OSError:
            pass
        if self._cat is not None:
            try:
                self._cat.wait(timeout=10)  # returns at EOF: tracing off and the buffer drained
            except subprocess.TimeoutExpired:  # nothing was ever read: trace_pipe still blocks
                self._cat.kill()
                self._cat.wait()
            self._out.close()
        self.overrun += self.inst.overrun()
        self.inst.remove(wait_s=0.1)
        self.inst = None

    def ios(self) -> "TracedIOs":
        """Every completed IO (flushes, discards and zero-length requests left out), in issue order."""
        if self.overrun:
            raise TraceUnavailable(f"the trace buffer overran ({self.overrun} events lost): "
                                   f"raise buffer_kb_per_cpu (now {self.buffer_kb})")
        with open(self.out_path, encoding="ascii", errors="replace") as f:
            return parse_trace(f)


@dataclass(frozen=True)
class TracedIOs:
    """IOs as arrays (a LAT round is ~10^5 IOs, an IOPS round ~10^6-10^7), sorted by issue time."""

    issue_ns: np.ndarray  # int64, CLOCK_MONOTONIC
    complete_ns: np.ndarray  # int64
    size_bytes: np.ndarray  # int64
    write: np.ndarray  # bool
    offset_bytes: np.ndarray | None = None  # int64, from the device's start (trace record: the iolog's offsets)

    def __len__(self) -> int:
        return len(self.issue_ns)


_ISSUE = {"block_rq_issue": True, "block_bio_queue": True, "block_rq_complete": False, "block_bio_complete": False}


def parse_trace(lines: Iterable[str]) -> TracedIOs:
    """Pair each issue with the completion of the same (sector, direction), first in first out.

    Line forms (the text of trace_pipe)::

        fio-1234 [001] ..... 12345.678901: block_rq_issue: 7,2 W 4096 () 123456 + 8 none,0,0 [fio]
        fio-1234 [001] ..... 12345.678905: block_rq_complete: 7,2 W () 123456 + 8 none,0,0 [0]
        fio-1234 [001] ..... 12345.678901: block_bio_queue: 252,1 W 123456 + 8 [fio]
        fio-1234 [001] ..... 12345.678905: block_bio_complete: 252,1 W 123456 + 8 [0]
    """
    t_l: list[int] = []
    issue_l: list[bool] = []
    sec_l: list[int] = []
    n_l: list[int] = []
    w_l: list[bool] = []
    for line in lines:
        k = line.find(": block_")
        if k < 0:
            continue
        e = line.find(": ", k + 2)
        ev = line[k + 2:e]
        if ev not in _ISSUE:
            continue
        tok = line[e + 2:].split()
        try:
            plus = tok.index("+")
            rwbs = tok[1]
            n = int(tok[plus + 1])
            sector = int(tok[plus - 1])
        except (ValueError, IndexError):
            continue
        if n == 0 or "D" in rwbs or not ("R" in rwbs or "W" in rwbs):
            continue  # flush, discard (purge), or a request without data
        ts = line[line.rfind(" ", 0, k) + 1:k]
        sec, _, frac = ts.partition(".")
        t_l.append(int(sec) * 1_000_000_000 + int((frac + "000000000")[:9]))
        issue_l.append(_ISSUE[ev])
        sec_l.append(sector)
        n_l.append(n)
        w_l.append("W" in rwbs)
    t = np.asarray(t_l, dtype=np.int64)
    is_issue = np.asarray(issue_l, dtype=bool)
    sector = np.asarray(sec_l, dtype=np.int64)
    nsec = np.asarray(n_l, dtype=np.int64)
    wr = np.asarray(w_l, dtype=bool)
    key = sector * 2 + wr
    # k-th issue of a key pairs with the k-th completion of that key (FIFO per sector and direction)
    order = np.lexsort((t, key))
    key_o, iss_o = key[order], is_issue[order]
    new_key = np.r_[True, key_o[1:] != key_o[:-1]]
    grp = np.cumsum(new_key) - 1
    rank = np.zeros(len(order), dtype=np.int64)
    for flag in (True, False):
        sel = iss_o == flag
        g = grp[sel]
        first = np.r_[True, g[1:] != g[:-1]]
        start_idx = np.maximum.accumulate(np.where(first, np.arange(len(g)), 0))
        rank[sel] = np.arange(len(g)) - start_idx
    ii = order[iss_o]
    ci = order[~iss_o]
    ik = np.stack([key[ii], rank[iss_o]], axis=1)
    ck = np.stack([key[ci], rank[~iss_o]], axis=1)
    # join issues and completions on (key, rank)
    i_sort = np.lexsort((ik[:, 1], ik[:, 0]))
    c_sort = np.lexsort((ck[:, 1], ck[:, 0]))
    ik_s, ck_s = ik[i_sort], ck[c_sort]
    i_idx, c_idx = ii[i_sort], ci[c_sort]
    # rows present in both
    iv = ik_s[:, 0] * (1 << 24) + ik_s[:, 1]
    cv = ck_s[:, 0] * (1 << 24) + ck_s[:, 1]
    common, ia, ca = np.intersect1d(iv, cv, assume_unique=True, return_indices=True)
    issue_t, comp_t = t[i_idx[ia]], t[c_idx[ca]]
    ok = comp_t >= issue_t
    sel = np.argsort(issue_t[ok], kind="stable")
    return TracedIOs(issue_ns=issue_t[ok][sel], complete_ns=comp_t[ok][sel],
                     size_bytes=(nsec[i_idx[ia]][ok][sel] * 512), write=wr[i_idx[ia]][ok][sel],
                     offset_bytes=sector[i_idx[ia]][ok][sel] * 512)


# ==================================================================================================
# From IOs to steps and boundaries
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class StepShape:
    """What a step's IOs look like at the block layer: one size, reads and/or writes."""

    block_size_bytes: int
    reads: bool = True
    writes: bool = True

    @classmethod
    def of(cls, workload) -> "StepShape":
        """From a Workload or its dict (steps.jsonl "workload")."""
        get = workload.get if isinstance(workload, dict) else lambda k: getattr(workload, k)
        return cls(int(get("block_size_bytes")), int(get("read_pct")) > 0, int(get("read_pct")) < 100)


def attribute(ios: TracedIOs, shapes: Sequence[StepShape]) -> np.ndarray:
    """Step index (into ``shapes``, the planned order) of every IO, -1 for an IO no nearby step
    explains. Consecutive PTS steps always differ in block size (IOPS and LAT: block size is the
    inner loop; between rounds the last, smallest, size is followed by the first, largest), so an
    IO belongs to the current step, the next one (the schedule moves on) or the previous one (the
    drain of its last IOs); a piece of a split IO counts for the step whose block size it divides.
    Works on runs of IOs of equal size and direction, not on single IOs."""
    size, wr = ios.size_bytes, ios.write
    out = np.full(len(size), -1, dtype=np.int64)
    if not len(size):
        return out
    change = np.flatnonzero(np.r_[True, (size[1:] != size[:-1]) | (wr[1:] != wr[:-1])])
    ends = np.r_[change[1:], len(size)]

    def fits(k: int, sz: int, w: bool) -> bool:
        if not 0 <= k < len(shapes) or not (shapes[k].writes if w else shapes[k].reads):
            return False
        bs = shapes[k].block_size_bytes
        if sz == bs:
            return True
        # a piece of a split IO: smaller than the step's block size, dividing it, and not the size
        # of a neighbouring step
        near = {shapes[j].block_size_bytes for j in (k - 1, k + 1) if 0 <= j < len(shapes)}
        return sz < bs and bs % sz == 0 and sz not in near

    cur = 0
    for a, b in zip(change, ends):
        sz, w = int(size[a]), bool(wr[a])
        if fits(cur, sz, w):
            out[a:b] = cur
        elif fits(cur + 1, sz, w):
            cur += 1
            out[a:b] = cur
        elif fits(cur - 1, sz, w):
            out[a:b] = cur - 1
    return out


@dataclass(frozen=True, slots=True)
class TracedBoundary:
    prev: int  # step index
    next: int
    last_complete_ns: int  # of the previous step
    first_issue_ns: int  # of the next step
    overlapping_ios: int  # IOs of the next step issued while an IO of the previous one was in flight

    @property
    def gap_ms(self) -> float:
        return (self.first_issue_ns - self.last_complete_ns) / 1e6

    @property
    def idle_ms(self) -> float:
        return max(self.gap_ms, 0.0)

    @property
    def overlap_ms(self) -> float:
        return max(-self.gap_ms, 0.0)


def step_spans(ios: TracedIOs, owner: np.ndarray, n_steps: int) -> list[tuple[int, int, int] | None]:
    """(first issue, last completion, IO count) per step, None for a step without IOs."""
    order = np.argsort(owner, kind="stable")
    own = owner[order]
    lo = np.searchsorted(own, np.arange(n_steps), side="left")
    hi = np.searchsorted(own, np.arange(n_steps), side="right")
    out: list[tuple[int, int, int] | None] = []
    for k in range(n_steps):
        idx = order[lo[k]:hi[k]]
        out.append((int(ios.issue_ns[idx].min()), int(ios.complete_ns[idx].max()), len(idx)) if len(idx) else None)
    return out


def boundaries(ios: TracedIOs, owner: np.ndarray, spans: Sequence[tuple[int, int, int] | None]) -> list[TracedBoundary]:
    out = []
    for k in range(len(spans) - 1):
        a, b = spans[k], spans[k + 1]
        if a is not None and b is not None:
            # IOs issued between the next step's first issue and the previous step's last completion
            lo, hi = np.searchsorted(ios.issue_ns, [b[0], a[1]])
            n = int((owner[lo:hi] == k + 1).sum()) if hi > lo else 0
            out.append(TracedBoundary(k, k + 1, a[1], b[0], n))
    return out


def issued_while_busy(ios: TracedIOs) -> np.ndarray:
    """Per IO (in issue order): was another IO in flight on the device when it was issued?
    IOs issued before it minus completions up to its issue time (a later IO cannot complete
    before it is issued)."""
    done = np.searchsorted(np.sort(ios.complete_ns), ios.issue_ns, side="right")
    return (np.arange(len(ios.issue_ns)) - done) > 0


def idle_before(ios: TracedIOs) -> np.ndarray:
    """Per IO (in issue order): how long the device had no IO in flight before it was issued (ms,
    0 when another IO was in flight). The idle periods inside a step measure how often the host
    itself stalls fio (CPU starvation), the yardstick for the idle at a boundary."""
    if not len(ios):
        return np.zeros(0)
    prev_done = np.maximum.accumulate(ios.complete_ns)
    gap = np.r_[0, ios.issue_ns[1:] - prev_done[:-1]]
    return np.maximum(gap, 0) / 1e6
