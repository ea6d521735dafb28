"""One private ftrace instance (``/sys/kernel/tracing/instances/<name>``) of the kernel's block
tracepoints on one device: created, configured, switched, read and removed here, for every tracer
of ssdpts (engine/blocktrace.py's whole-run reader, engine/devtrace_child.py's boundary windows,
and through blocktrace ``ssdpts trace record``, workloads/iotrace.py).

A private instance, so that other tracers on the host keep the global buffer; the events filtered
to the one device; ``trace_clock=mono`` is CLOCK_MONOTONIC, the clock of ``time.monotonic()``."""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import time
from typing import Sequence

TRACEFS = Path("/sys/kernel/tracing")

# The events of each level: request-based devices (loop, NVMe, SCSI) are traced where a request is
# dispatched to the driver and completes; bio-based ones (zram, md, dm) have no requests.
RQ_EVENTS = ("block_rq_issue", "block_rq_complete")
BIO_EVENTS = ("block_bio_queue", "block_bio_complete")


class TracefsUnavailable(RuntimeError):
    """tracefs cannot be had here; the message says why."""


def ensure_mounted(root: Path = TRACEFS) -> Path:
    """tracefs at ``root`` with its instances, mounted there when it is not (root only)."""
    if os.geteuid() != 0:
        raise TracefsUnavailable("the kernel's block tracepoints need root")
    if not (root / "instances").is_dir():
        r = subprocess.run(["mount", "-t", "tracefs", "nodev", str(root)], capture_output=True, text=True, check=False)
        if r.returncode != 0 or not (root / "instances").is_dir():
            raise TracefsUnavailable(f"tracefs cannot be mounted at {root} ({r.stderr.strip() or 'no instances/'})")
    return root


def remove_orphans(prefix: str, root: Path = TRACEFS) -> None:
    """Instances named ``<prefix><pid>`` whose process is gone (killed with SIGKILL: nothing removed them)."""
    for d in (root / "instances").glob(f"{prefix}*"):
        try:
            if not Path(f"/proc/{int(d.name.rsplit('-', 1)[1])}").exists():
                d.rmdir()
        except (ValueError, OSError):
            pass


class Instance:
    """A private instance tracing ``events`` of one device (``dev_filter``: an ftrace filter such as
    ``dev == 7340035``), created stopped, its buffers ``buffer_kb`` per CPU. The events are enabled
    by :meth:`enable` and recorded while :meth:`record` is on; :meth:`remove` takes it away."""

    def __init__(self, name: str, events: Sequence[str], dev_filter: str, buffer_kb: int, root: Path = TRACEFS):
        self.root = root / "instances" / name
        self.events = tuple(events)
        self.on = False  # the events enabled
        self.root.mkdir()
        try:
            self.write("tracing_on", "0")
            self.write("trace_clock", "mono")
            self.write("buffer_size_kb", str(buffer_kb))
            for ev in self.events:
                self.write(f"events/block/{ev}/filter", dev_filter)
        except BaseException:
            self.remove()
            raise
        self._stats = sorted(self.root.glob("per_cpu/cpu*/stats"))

    @property
    def pipe(self) -> Path:
        """trace_pipe: what the buffer holds, consumed as read; at EOF once recording is off and it is drained."""
        return self.root / "trace_pipe"

    def write(self, rel: str, value: str) -> None:
        (self.root / rel).write_text(value)

    def record(self, on: bool) -> None:
        """The instance's recording (``tracing_on``)."""
        self.write("tracing_on", "1" if on else "0")

    def clear(self) -> None:
        self.write("trace", "")

    def enable(self, on: bool) -> None:
        """The events themselves on or off: an enabled tracepoint costs every IO its probe and filter
        even while the instance does not record."""
        if on != self.on:
            for ev in self.events:
                self.write(f"events/block/{ev}/enable", "1" if on else "0")
            self.on = on

    def counts(self) -> tuple[int, int]:
        """(events written since the start, events lost), over every CPU: what the kernel's own
        counters say, without reading the events."""
        written = lost = 0
        for path in self._stats:
            try:
                text = path.read_text()
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition(":")
                if key in ("entries", "read events", "overrun"):
                    written += int(value)
                if key == "overrun":
                    lost += int(value)
        return written, lost

    def overrun(self) -> int:
        """Events lost to a full buffer, over every CPU."""
        return self.counts()[1]

    def remove(self, tries: int = 50, wait_s: float = 0.05) -> None:
        """Recording and the events off, then the instance removed (EBUSY while a last reader closes:
        tried again)."""
        try:
            self.write("tracing_on", "0")
        except OSError:
            pass
        for ev in self.events:
            try:
                self.write(f"events/block/{ev}/enable", "0")
            except OSError:
                pass
        self.on = False
        for _ in range(tries):
            try:
                self.root.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(wait_s)
