"""Block IO traces: recorded from a device in real use, read from fio iologs, summarised.

* ``record``: ``blktrace`` where the kernel allows it (:func:`_record_blktrace`), else the
  kernel's block tracepoints in a private ftrace instance (engine/blocktrace.py; ``blktrace`` is
  refused by some kernels, this CI's among them). The device is never opened: the
  trace is taken from tracefs, filtered by the device number that ``stat`` gives. What is stored
  (docs/trace.md, docs/results-format.md "Traces"):

  - ``FILE``: fio iolog v3 (``fio version 3 iolog``; one line per IO: issue time in µs from the
    first issue, which is at 1 µs (see write_iolog), the device path, read|write, offset and length in bytes), what ``read_iolog``
    replays;
  - ``FILE.npz``: the same IOs with their issue and completion times in ns (CLOCK_MONOTONIC), from
    which queue depth and device latency follow (an iolog has no completion times);
  - ``FILE.summary.json``: :func:`summary` of the trace.

* ``read_trace``: fio iolog v2 (no times; ``wait`` lines add time) or v3 written anywhere, with
  the ``.npz`` beside it when there is one; or a blktrace binary trace (the per-CPU
  ``NAME.blktrace.N`` files blktrace writes, their base name ``NAME``, or one binary stream such as
  ``blkparse -d`` writes) (:func:`read_blktrace`).
"""

from __future__ import annotations

from dataclasses import dataclass
import glob
import json
import os
from pathlib import Path
import re
import struct
import time
from typing import Callable

import numpy as np

from ssdpts.errors import UserError
from ssdpts.pts.units import fmt_capacity

HEAT_BINS = 64  # LBA heat map: the device's (or the trace's) extent in 64 equal ranges
_BLKTRACE_MAGIC = (0x65617400).to_bytes(4, "little")[1:]  # 'tae' of blk_io_trace.magic, version in byte 0


@dataclass(frozen=True)
class IOTrace:
    """One trace's data IOs (reads and writes) in issue order."""

    issue_ns: np.ndarray  # int64, from the first issue (0)
    offset_bytes: np.ndarray  # int64
    size_bytes: np.ndarray  # int64
    write: np.ndarray  # bool
    complete_ns: np.ndarray | None  # int64 on issue_ns's clock; None: the source has no completions
    source: str  # "blktrace", "tracefs", "fio iolog v2", "fio iolog v3"
    filename: str  # the device or file the IOs were made on (the iolog's file name)
    timed: bool  # issue times are real (an iolog v2 without waits has none)
    extent_bytes: int  # size of the traced device when known, else the end of the furthest IO
    other_actions: int = 0  # iolog lines left out: trim, sync, datasync

    def __len__(self) -> int:
        return len(self.issue_ns)


# ---- recording ------------------------------------------------------------------------------------


def record(device: str, seconds: float, out: Path | str, log: Callable[[str], None] = lambda _s: None) -> IOTrace:
    """Trace ``device`` for ``seconds`` (Ctrl-C ends early and keeps what was traced) and store the
    iolog, its ``.npz`` and its summary. Read-only: the device node is only stat()ed."""
    from ssdpts.engine.blocktrace import BlockTrace, TraceUnavailable

    out = Path(out)
    if not 0 < seconds <= 86400:
        raise UserError(f"--seconds {seconds:g}: give how long to record, more than 0 and at most 86400")
    for p in (out, sidecar(out), summary_path(out)):
        if p.exists():
            raise UserError(f"{p} exists: give another --out (a trace is never overwritten)")
    if not out.parent.is_dir():
        raise UserError(f"{out.parent} is not a directory: give --out in an existing directory")
    if not os.path.exists(device):
        raise UserError(f"{device} does not exist: give a block device, e.g. /dev/nvme0n1")
    name = os.path.basename(os.path.realpath(device))
    try:
        extent = int(Path(f"/sys/class/block/{name}/size").read_text()) * 512
    except (OSError, ValueError):
        extent = 0
    traced = _record_blktrace(device, seconds, out, log)
    if traced is not None:
        trace = IOTrace(**{**traced.__dict__, "filename": device, "extent_bytes": max(extent, traced.extent_bytes)})
        save(trace, out)
        return trace
    raw = out.parent / f".{out.name}.tracefs.txt"
    try:
        tracer = BlockTrace(device, raw)
        with tracer:
            log(f"recording the block IO of {device} for {seconds:g} s (Ctrl-C ends early)")
            try:
                time.sleep(seconds)
            except KeyboardInterrupt:
                log("stopped early: keeping what was traced")
        ios = tracer.ios()
    except TraceUnavailable as exc:
        raise UserError(f"cannot trace {device}: {exc}") from None
    finally:
        raw.unlink(missing_ok=True)
    trace = from_traced(ios, device, extent)
    save(trace, out)
    return trace


def _record_blktrace(device: str, seconds: float, out: Path, log: Callable[[str], None]) -> IOTrace | None:
    """blktrace, where the kernel lets it trace ``device``: its per-CPU files, read by
    :func:`read_blktrace`, then removed. None when blktrace is not installed or the kernel refuses
    it — this CI's kernel does (blktrace prints "FAILED to start thread" and exits at once, with
    status 0): the caller then records from the block tracepoints. blktrace only reads the
    kernel's trace buffers (debugfs, mounted here when it is not); the device is not opened for
    writing."""
    import shutil
    import signal
    import subprocess

    exe = shutil.which("blktrace")
    if exe is None:
        return None
    debugfs = Path("/sys/kernel/debug")
    if not (debugfs / "block").is_dir():
        subprocess.run(["mount", "-t", "debugfs", "none", str(debugfs)], capture_output=True, check=False)
    work = out.parent / f".{out.name}.blktrace"
    work.mkdir()
    try:
        proc = subprocess.Popen([exe, "-d", device, "-D", str(work), "-o", "trace", "-w", f"{seconds:g}"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)  # our Ctrl-C is passed on below, once
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        if proc.returncode is not None:  # refused at once: no tracing on this kernel/device
            return None
        log(f"recording the block IO of {device} for {seconds:g} s with blktrace (Ctrl-C ends early)")
        try:
            proc.wait()
        except KeyboardInterrupt:
            log("stopped early: keeping what was traced")
            proc.send_signal(signal.SIGINT)
            proc.wait()
        report = proc.stdout.read() if proc.stdout else ""
        if not any(f.stat().st_size for f in work.glob("trace.blktrace.*")):
            if "FAILED" in report or "failed" in report:
                return None
            raise UserError(f"blktrace recorded no IO on {device}: nothing was issued while it traced")
        return read_blktrace(work / "trace")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def from_traced(ios, filename: str, extent_bytes: int = 0) -> IOTrace:
    """An IOTrace from engine/blocktrace.py's TracedIOs: times from the first issue."""
    t0 = int(ios.issue_ns[0]) if len(ios) else 0
    return IOTrace(issue_ns=ios.issue_ns - t0, offset_bytes=ios.offset_bytes, size_bytes=ios.size_bytes,
                   write=ios.write, complete_ns=ios.complete_ns - t0, source="tracefs", filename=filename, timed=True,
                   extent_bytes=extent_bytes or _end(ios.offset_bytes, ios.size_bytes))


def _end(offset: np.ndarray, size: np.ndarray) -> int:
    return int((offset + size).max()) if len(offset) else 0


def sidecar(path: Path | str) -> Path:
    return Path(f"{path}.npz")


def summary_path(path: Path | str) -> Path:
    return Path(f"{path}.summary.json")


def save(trace: IOTrace, out: Path | str) -> None:
    """The iolog v3, the ``.npz`` (when the trace has completions) and the summary."""
    out = Path(out)
    write_iolog(out, trace.filename, trace.issue_ns, trace.offset_bytes, trace.size_bytes, trace.write)
    if trace.complete_ns is not None:
        with open(sidecar(out), "wb") as f:
            np.savez_compressed(f, issue_ns=trace.issue_ns, complete_ns=trace.complete_ns,
                                offset_bytes=trace.offset_bytes, size_bytes=trace.size_bytes, write=trace.write,
                                extent_bytes=np.int64(trace.extent_bytes))
    summary_path(out).write_text(json.dumps(summary(trace), indent=1) + "\n")


def write_iolog(path: Path, filename: str, issue_ns, offset_bytes, size_bytes, write) -> None:
    """fio iolog v3: times in µs, the first IO at 1 µs (fio 3.31+ reads them; replay_no_stall ignores
    them). Not at 0: fio (3.33) skips the first non-zero delay of a log, so a first IO at 0 would
    lose the gap to the second one (measured: IOs at 0, 0.2, 1.0 s replay in 0.8 s; at 1 µs, 0.2 s
    and 1.0 s in 1.0 s; tests/integration/test_trace_real.py)."""
    if any(c.isspace() for c in filename):
        raise UserError(f"{filename!r} has white space: an iolog cannot name it")
    us = np.asarray(issue_ns, dtype=np.int64) // 1000 + 1
    act = np.where(np.asarray(write, dtype=bool), "write", "read")
    end = int(us[-1]) if len(us) else 0
    with open(path, "w", encoding="ascii") as f:
        f.write(f"fio version 3 iolog\n0 {filename} add\n0 {filename} open\n")
        f.writelines(f"{t} {filename} {a} {o} {n}\n" for t, a, o, n in
                     zip(us.tolist(), act.tolist(), np.asarray(offset_bytes).tolist(), np.asarray(size_bytes).tolist()))
        f.write(f"{end} {filename} close\n")


# ---- reading --------------------------------------------------------------------------------------


def read_trace(path: Path | str) -> IOTrace:
    """An iolog v2/v3 (any writer), with its ``.npz`` completions when present. UserError: one line."""
    path = Path(path)
    if not path.exists() and Path(f"{path}.blktrace.0").exists():
        return read_blktrace(path)
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        raise UserError(f"cannot read the trace {path} ({exc.strerror}): give an fio iolog (v2 or v3) "
                        "or a blktrace binary trace") from None
    if len(head) >= 4 and head[1:4] == _BLKTRACE_MAGIC:
        return read_blktrace(path)
    first = head.split(b"\n", 1)[0].strip()
    versions = {b"fio version 2 iolog": 2, b"fio version 3 iolog": 3}
    if first not in versions:
        raise UserError(f"{path} is not an fio iolog (its first line is not 'fio version 2 iolog' or "
                        "'fio version 3 iolog'): give a trace made by 'ssdpts trace record' or fio's write_iolog")
    version = versions[first]
    t_l: list[int] = []
    off_l: list[int] = []
    len_l: list[int] = []
    w_l: list[bool] = []
    names: list[str] = []
    other = 0
    clock_us = 0
    waited = False
    with open(path, encoding="utf-8", errors="replace") as f:
        next(f)
        for no, line in enumerate(f, start=2):
            tok = line.split()
            if not tok:
                continue
            try:
                if version == 3:
                    clock_us, tok = int(tok[0]), tok[1:]
                name, action = tok[0], tok[1]
                if action in ("read", "write"):
                    off_l.append(int(tok[2]))
                    len_l.append(int(tok[3]))
                    w_l.append(action == "write")
                    t_l.append(clock_us)
                    if name not in names:
                        names.append(name)
                elif action == "wait" and version == 2:
                    clock_us += int(tok[2])
                    waited = True
                elif action in ("trim", "sync", "datasync"):
                    other += 1
                elif action not in ("add", "open", "close"):
                    raise ValueError(action)
            except (ValueError, IndexError):
                raise UserError(f"{path} line {no} is not an iolog v{version} line ({line.strip()[:60]!r}): "
                                "fix or cut the trace") from None
    t = np.asarray(t_l, dtype=np.int64) * 1000
    off = np.asarray(off_l, dtype=np.int64)
    size = np.asarray(len_l, dtype=np.int64)
    wr = np.asarray(w_l, dtype=bool)
    if (off < 0).any() or (size <= 0).any():
        raise UserError(f"{path} has an IO with a negative offset or no length: fix the trace")
    if len(t):
        t = t - t.min()
    complete = None
    source = f"fio iolog v{version}"
    extent = _end(off, size)
    side = sidecar(path)
    if side.exists():
        with np.load(side) as z:
            if len(z["issue_ns"]) == len(t) and np.array_equal(z["offset_bytes"], off) and np.array_equal(z["write"], wr):
                t, complete = z["issue_ns"].astype(np.int64), z["complete_ns"].astype(np.int64)
                extent = max(extent, int(z["extent_bytes"]))
                source += " + completion times (.npz)"
    return IOTrace(issue_ns=t, offset_bytes=off, size_bytes=size, write=wr, complete_ns=complete,
                   source=source, filename=",".join(names), timed=version == 3 or waited,
                   extent_bytes=extent, other_actions=other)


# blk_io_trace (include/uapi/linux/blktrace_api.h): magic, sequence, time (ns), sector, bytes,
# action, pid, device, cpu, error, pdu_len; then pdu_len bytes of payload
_BLK_RECORD = 48
_BLK_TA_ISSUE, _BLK_TA_COMPLETE = 7, 8  # the request handed to the driver; its completion
_BLK_TC_WRITE, _BLK_TC_NOTIFY, _BLK_TC_PC, _BLK_TC_DISCARD = 1 << 17, 1 << 26, 1 << 25, 1 << 29  # categories << 16


def _blktrace_files(path: Path) -> list[Path]:
    """The per-CPU set ``NAME.blktrace.N`` that ``path`` (one of them, or ``NAME``) belongs to, else ``path``."""
    per_cpu = re.fullmatch(r"(.+)\.blktrace\.\d+", path.name)
    base = per_cpu.group(1) if per_cpu else path.name
    files = sorted(path.parent.glob(f"{glob.escape(base)}.blktrace.[0-9]*"))
    return files if (per_cpu or not path.exists()) and files else [path]


def read_blktrace(path: Path | str) -> IOTrace:
    """A blktrace binary trace: the per-CPU files ``NAME.blktrace.N`` blktrace writes (``path`` is
    one of them or ``NAME``: the whole set is read) or one stream of all CPUs' records
    (``blkparse -d``, what fio's read_iolog takes). The records are the kernel's fixed
    ``struct blk_io_trace``, read here directly: blkparse reads a single stream only through its
    pipe mode, which restarts its clock per CPU (measured on tests/fixtures/blktrace: the same
    request 54 ms apart), so it cannot time a merged trace; tests/unit/test_iotrace_blktrace.py
    checks this reader against blkparse on the per-CPU set. Each request is its issue to the
    driver paired with its completion by sector and length, in order (the device's view, after
    the block layer's merges). Reads and writes are kept; discards, flushes, passthrough commands
    and requests issued but not completed within the trace count in ``other_actions``."""
    path = Path(path)
    events: list[tuple[int, int, int, int, int]] = []  # time, action, sector, bytes, device
    for f in _blktrace_files(path):
        try:
            data = f.read_bytes()
        except OSError as exc:
            raise UserError(f"cannot read the trace {f} ({exc.strerror}): give a blktrace binary trace") from None
        order = "<" if data[1:4] == _BLKTRACE_MAGIC else ">"
        off = 0
        while off + _BLK_RECORD <= len(data):
            magic, _seq, t, sector, nbytes, action, _pid, dev, _cpu, _err, pdu = struct.unpack_from(
                order + "IIQQIIIIIHH", data, off)
            if magic & 0xFFFFFF00 != 0x65617400:
                raise UserError(f"{f} is not a blktrace trace at byte {off} (bad record magic): give the "
                                "files blktrace wrote, unchanged")
            off += _BLK_RECORD + pdu
            if action & _BLK_TC_NOTIFY or action & 0xFFFF not in (_BLK_TA_ISSUE, _BLK_TA_COMPLETE):
                continue
            events.append((t, action, sector, nbytes, dev))
    events.sort(key=lambda e: e[0])
    pending: dict[tuple[int, int, int], list[int]] = {}  # (device, sector, bytes) -> issued, not completed
    t_l: list[int] = []
    c_l: list[int] = []
    off_l: list[int] = []
    len_l: list[int] = []
    w_l: list[bool] = []
    other = 0
    for t, action, sector, nbytes, dev in events:
        issue = action & 0xFFFF == _BLK_TA_ISSUE
        if nbytes == 0 or action & (_BLK_TC_DISCARD | _BLK_TC_PC):
            other += issue
            continue
        key = (dev, sector, nbytes)
        if issue:
            pending.setdefault(key, []).append(len(t_l))
            t_l.append(t)
            c_l.append(-1)
            off_l.append(sector * 512)
            len_l.append(nbytes)
            w_l.append(bool(action & _BLK_TC_WRITE))
        elif pending.get(key):
            c_l[pending[key].pop(0)] = t
    c = np.asarray(c_l, dtype=np.int64)
    done = c >= 0
    other += int((~done).sum())
    if not done.any():
        raise UserError(f"{path} holds no completed read or write: give a blktrace trace of data IO")
    t = np.asarray(t_l, dtype=np.int64)[done]
    t0 = int(t[0])
    off = np.asarray(off_l, dtype=np.int64)[done]
    size = np.asarray(len_l, dtype=np.int64)[done]
    name = re.sub(r"\.blktrace\.\d+$", "", path.name)
    return IOTrace(issue_ns=t - t0, offset_bytes=off, size_bytes=size, write=np.asarray(w_l, dtype=bool)[done],
                   complete_ns=c[done] - t0, source="blktrace", filename=f"/dev/{name}", timed=True,
                   extent_bytes=_end(off, size), other_actions=other)


# ---- summary --------------------------------------------------------------------------------------


def _pcts(values_ns: np.ndarray) -> dict | None:
    if not len(values_ns):
        return None
    v = values_ns / 1000.0
    return {"mean_us": float(v.mean()), "p50_us": float(np.percentile(v, 50)), "p90_us": float(np.percentile(v, 90)),
            "p99_us": float(np.percentile(v, 99)), "max_us": float(v.max())}


def queue_depths(trace: IOTrace) -> np.ndarray | None:
    """IOs in flight on the device at each issue, that IO included (None without completions)."""
    if trace.complete_ns is None:
        return None
    done = np.sort(trace.complete_ns)
    # an IO completed in the same clock tick (1 µs) as a later issue counts as done; one completed in
    # the tick of its own issue (zram) would count itself out: at least 1, the IO being issued
    return np.maximum(np.arange(1, len(trace) + 1) - np.searchsorted(done, trace.issue_ns, side="right"), 1)


def summary(trace: IOTrace) -> dict:
    """IO count, read/write mix, block-size histogram, queue-depth and inter-arrival distributions,
    device latency (with completions), LBA heat map (IOs per 1/64 of the extent, reads and writes)."""
    n = len(trace)
    wr = trace.write
    sizes, inv = np.unique(trace.size_bytes, return_inverse=True)
    bs = [{"size_bytes": int(s), "reads": int(((inv == i) & ~wr).sum()), "writes": int(((inv == i) & wr).sum())}
          for i, s in enumerate(sizes)]
    out: dict = {
        "source": trace.source, "filename": trace.filename, "ios": n, "reads": int((~wr).sum()),
        "writes": int(wr.sum()), "read_bytes": int(trace.size_bytes[~wr].sum()),
        "write_bytes": int(trace.size_bytes[wr].sum()),
        "read_pct": round(100.0 * float((~wr).sum()) / n, 3) if n else None,
        "block_sizes": bs, "other_actions": trace.other_actions, "timed": trace.timed,
        "duration_s": None, "inter_arrival": None, "queue_depth": None, "latency": None,
        "extent_bytes": trace.extent_bytes,
    }
    if trace.timed and n:
        end = trace.complete_ns.max() if trace.complete_ns is not None else trace.issue_ns.max()
        out["duration_s"] = float(end - trace.issue_ns.min()) / 1e9
        gaps = np.diff(trace.issue_ns)
        if len(gaps):
            p = _pcts(gaps.astype(np.float64))
            # log2 histogram of the gaps in µs: bin k holds [2^(k-1), 2^k) µs, bin 0 below 1 µs
            k = np.where(gaps < 1000, 0, np.floor(np.log2(np.maximum(gaps, 1000) / 1000.0)).astype(np.int64) + 1)
            p["log2_us_histogram"] = np.bincount(k).tolist()
            out["inter_arrival"] = p
    qd = queue_depths(trace)
    if qd is not None and n:
        counts = np.bincount(qd)
        out["queue_depth"] = {"mean": float(qd.mean()), "max": int(qd.max()),
                              "histogram": {str(d): int(c) for d, c in enumerate(counts) if c}}
        lat = trace.complete_ns - trace.issue_ns
        out["latency"] = {"read": _pcts(lat[~wr].astype(np.float64)), "write": _pcts(lat[wr].astype(np.float64))}
    extent = max(trace.extent_bytes, 1)
    edges = np.linspace(0, extent, HEAT_BINS + 1)
    out["lba_heat_map"] = {"bins": HEAT_BINS, "extent_bytes": trace.extent_bytes,
                           "reads": np.histogram(trace.offset_bytes[~wr], edges)[0].tolist(),
                           "writes": np.histogram(trace.offset_bytes[wr], edges)[0].tolist()}
    return out


def _heat_line(counts: list[int]) -> str:
    ramp = " .:-=+*#%@"
    top = max(counts) if counts else 0
    return "".join(ramp[0 if not c else 1 + int((len(ramp) - 2) * c / top)] for c in counts)


def summary_text(s: dict) -> str:
    def size(b: int) -> str:
        return f"{b // 1024}KiB" if b % 1024 == 0 else f"{b}B"

    lines = [f"source: {s['source']} ({s['filename']})",
             f"IOs: {s['ios']:,} — reads {s['reads']:,} ({s['read_bytes'] / 1e6:,.1f} MB), writes {s['writes']:,} "
             f"({s['write_bytes'] / 1e6:,.1f} MB)" + (f", read share {s['read_pct']:.1f}%" if s["read_pct"] is not None else "")]
    if s["other_actions"]:
        lines.append(f"left out: {s['other_actions']} trim/sync lines")
    lines.append("block sizes: " + ", ".join(f"{size(b['size_bytes'])} {b['reads']:,}R/{b['writes']:,}W"
                                             for b in s["block_sizes"]))
    if s["duration_s"] is not None:
        lines.append(f"duration: {s['duration_s']:.3f} s")
    ia = s["inter_arrival"]
    if ia:
        lines.append(f"inter-arrival µs: mean {ia['mean_us']:.1f}, p50 {ia['p50_us']:.1f}, p90 {ia['p90_us']:.1f}, "
                     f"p99 {ia['p99_us']:.1f}, max {ia['max_us']:.1f}")
    else:
        lines.append("inter-arrival: the trace has no times (iolog v2 without waits)")
    qd = s["queue_depth"]
    if qd:
        lines.append(f"queue depth at issue: mean {qd['mean']:.2f}, max {qd['max']} — "
                     + ", ".join(f"QD{d}: {c:,}" for d, c in qd["histogram"].items()))
        for kind in ("read", "write"):
            lat = s["latency"][kind]
            if lat:
                lines.append(f"device latency {kind} µs: mean {lat['mean_us']:.1f}, p50 {lat['p50_us']:.1f}, "
                             f"p99 {lat['p99_us']:.1f}, max {lat['max_us']:.1f}")
    else:
        lines.append("queue depth and latency: not in this trace (no completion times; see docs/trace.md)")
    h = s["lba_heat_map"]
    lines.append(f"LBA heat map ({h['bins']} ranges of {fmt_capacity(h['extent_bytes'] / h['bins'])}):")
    lines.append(f"  reads  |{_heat_line(h['reads'])}|")
    lines.append(f"  writes |{_heat_line(h['writes'])}|")
    return "\n".join(lines)
