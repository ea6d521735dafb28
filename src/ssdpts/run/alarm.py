"""The device watcher's alarm, delivered to the run's main thread.

The watcher (device/safety/claim.py, a thread beside the run; on another host the agent's, whose alarm
comes back on the agent's stream) finds a new way to the storage the run writes — a loop device
attached over the target's file mid-round. The run must stop before its next IO, not at the next
round's guard, which may be many minutes away: :func:`armed` has the alarm send this process's main
thread a signal of its own, whose handler raises :class:`~ssdpts.errors.DeviceAlarm` wherever the
run is — in fio's wait, a purge, a telemetry read — exactly as Ctrl-C does, so fio is killed and
the run is saved ``interrupted`` by the same tested path. Outside the block (before the run
directory exists, after the run ended) an alarm only stays on the claim, which the guard raises
before the next write.
"""

from __future__ import annotations

from contextlib import contextmanager
import signal
import threading
from typing import Iterator

from ssdpts.errors import DeviceAlarm

ALARM_SIGNAL = signal.SIGRTMIN + 2  # a real-time signal: nobody sends it to ssdpts by accident


@contextmanager
def armed(side) -> Iterator[None]:
    """For the length of the block, ``side``'s alarm (device/side.py ``on_alarm``) raises
    DeviceAlarm in this thread, which must be the main thread (elsewhere: nothing is armed, and the
    guard raises the alarm before the next batch)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(side, "on_alarm"):
        yield
        return
    pending: list[str] = []
    live = [True]
    main = threading.get_ident()

    def handler(_signum, _frame) -> None:
        if live[0] and pending:
            live[0] = False  # once: the cleanup that follows must not be interrupted again
            raise DeviceAlarm(pending[0])

    def fire(reason: str) -> None:
        if not pending:
            pending.append(reason)
        try:
            signal.pthread_kill(main, ALARM_SIGNAL)
        except (OSError, ValueError):
            pass  # the guard raises it before the next batch

    previous = signal.signal(ALARM_SIGNAL, handler)
    side.on_alarm = fire
    try:  # an alarm found before now is on the claim: the guard raises it before the first write
        yield
    finally:
        live[0] = False
        side.on_alarm = None
        signal.signal(ALARM_SIGNAL, previous)
