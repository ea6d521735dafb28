"""Real-time scheduling of a run's schedule (``--realtime``): ssdpts, its step gate and fio run
under the kernel's SCHED_FIFO policy at its lowest priority (1) while the tests run.

Why: the PTS allows no delay between steps (docs/methodology.md "Step boundaries"). The step gate
releases the next step within ~2 ms of the previous one draining on an idle host, but every part
of that path — fio's job thread leaving its IO loop, the hook shell, the gate's thread, the next
job's first submission — waits for a CPU like any other task, so a busy host stretches boundaries
far beyond the 10 ms limit (measured: load average ~44, LAT on a loop device, worst idle 84 ms
within rounds and 78 ms between rounds; the same run under SCHED_FIFO 1: 6.0 ms and 1.9 ms).
A SCHED_FIFO task runs before every normal task, whatever their nice values.

What it costs: a CPU-bound fio (a RAM-backed target, or polled IO) then takes the CPUs from every
normal task of the host for as long as it runs. The kernel's real-time throttling
(``kernel.sched_rt_runtime_us``, 950,000 of every 1,000,000 µs by default) keeps 5% for the rest
of the host; with throttling switched off (-1) a CPU-bound fio could hang the host, so ssdpts
refuses ``--realtime`` then. It is therefore an option, never the default.

How: the policy is set on the thread that runs the tests (``realtime``) for the length of the
tests only; threads it starts (the gate's, its release timers) and processes it starts (fio, and
the hook shells fio starts) inherit it. Reports are rendered after it is dropped.
"""

from __future__ import annotations

from contextlib import contextmanager
import os
from pathlib import Path
import threading
from typing import Iterator

from ..errors import UserError

PRIORITY = 1  # the lowest real-time priority: above every normal task, below the kernel's IRQ threads
RT_RUNTIME = Path("/proc/sys/kernel/sched_rt_runtime_us")


def check(runtime_file: Path = RT_RUNTIME) -> None:
    """Refuse --realtime where it cannot be had or would be unsafe (nothing is changed here)."""
    if not hasattr(os, "sched_setscheduler"):
        raise UserError("--realtime needs Linux's real-time scheduling, which this system does not offer: drop --realtime")
    try:
        budget = int(runtime_file.read_text().strip())
    except (OSError, ValueError):
        budget = None
    if budget == -1:
        raise UserError(f"--realtime: real-time throttling is off ({runtime_file} is -1), so a CPU-bound fio at "
                        "real-time priority could starve this host: set it to 950000 "
                        "(sysctl kernel.sched_rt_runtime_us=950000) or drop --realtime")
    if budget == 0:
        raise UserError(f"--realtime: the kernel gives real-time tasks no CPU time ({runtime_file} is 0): "
                        "set kernel.sched_rt_runtime_us=950000 or drop --realtime")
    err: list[BaseException] = []

    def probe() -> None:  # a thread of its own: the policy it takes ends with it
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
        except OSError as exc:
            err.append(exc)

    t = threading.Thread(target=probe, name="ssdpts-rt-probe")
    t.start()
    t.join()
    if err:
        raise UserError(f"--realtime: the kernel refused real-time priority ({err[0].strerror}): run as root or "
                        "with CAP_SYS_NICE (in a container: with a real-time CPU budget), or drop --realtime")


@contextmanager
def realtime(on: bool) -> Iterator[None]:
    """The calling thread at SCHED_FIFO ``PRIORITY`` inside the block (and what it starts there),
    its previous policy restored after."""
    if not on:
        yield
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    try:
        yield
    finally:
        os.sched_setscheduler(0, policy, param)
