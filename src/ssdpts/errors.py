"""The one error type for expected failures (DESIGN.md conventions 8, 9).

Library code raises these; only ``cli.main`` catches them and turns them into one red line and an
exit code. Every message says what is wrong and what to do next.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """Bad input or a refusal: exit 2, nothing written to any device."""

    exit_code = EXIT_BAD_INPUT


class RunFailed(UserError):
    """The run started but could not go on (fio failed, I/O error, results disk full): exit 1."""

    exit_code = EXIT_FAILED


class Interrupted(Exception):
    """The user (SIGINT/SIGTERM) stopped the run; everything finished so far is kept."""

    exit_code = EXIT_INTERRUPTED
