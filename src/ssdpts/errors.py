"""The one error type for expected failures (docs/design.md#user-error, #say-what-next).

Library code raises these; only ``cli.main`` catches them and turns them into one red line and an
exit code. Every message says what is wrong and what to do next.
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130; a run stopped by signal n exits 128 + n


class UserError(Exception):
    """Bad input or a refusal: exit 2, nothing written to any device."""

    exit_code = EXIT_BAD_INPUT


class RunFailed(UserError):
    """The run started but could not go on (fio failed, I/O error, results disk full): exit 1."""

    exit_code = EXIT_FAILED


class Interrupted(Exception):
    """The run was stopped (a signal, or the device became unsafe); everything finished so far is
    kept and the run is marked ``interrupted``. ``exit_code``: 128 + the signal's number."""

    exit_code = EXIT_INTERRUPTED


class DeviceUnsafe(Interrupted):
    """The guard found the device no longer safe to write between rounds (mounted, partitioned,
    re-attached, ...): the run stops ``interrupted`` with the reason, exit 1."""

    exit_code = EXIT_FAILED


class DeviceAlarm(KeyboardInterrupt):
    """The device watcher (device/safety/claim.py) found a new way to the target's storage while the run
    wrote (a loop device attached over its file, a partition added): raised in the run's main thread
    wherever it is, as a signal is (run/alarm.py), so that fio is stopped at once and every cleanup
    path runs; the run stops ``interrupted`` with the reason, exit 1."""

    exit_code = EXIT_FAILED

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class HostLost(Interrupted):
    """The fio server running the run's batches stopped answering (engine/fioclient.py): the run
    stops ``interrupted`` (exit 1) and resumes once the server is back."""

    exit_code = EXIT_FAILED


class Signalled(KeyboardInterrupt):
    """A terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) arrived: raised by cli.main's handler
    wherever the program is, so every ``except KeyboardInterrupt`` cleanup path runs."""

    def __init__(self, signum: int):
        super().__init__()
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name
