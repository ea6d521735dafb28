"""The progress display never ends a run: a terminal that goes away (EIO after SIGHUP) or a log
reader that goes away (EPIPE) only silences it."""
import os

from ssdpts.run.progress import LiveProgress, PlainProgress


class _Part:
    title = "IOPS"
    max_rounds = 25
    stop_rule = "steady"


def _gone_pipe():
    r, w = os.pipe()
    os.close(r)  # the reader is gone: every write now fails with EPIPE
    return os.fdopen(w, "w", buffering=1)


def test_plain_progress_survives_a_reader_that_went_away():
    stream = _gone_pipe()
    p = PlainProgress(stream)
    p.part_started(_Part(), 1, 1)
    p.round_started(_Part(), 1, 56, 60.0)
    p.message("still measuring")
    assert p.stream.gone
    p.close()


def test_live_progress_survives_a_terminal_that_went_away(monkeypatch):
    import pty

    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", buffering=1)
    monkeypatch.setattr("sys.stdout", stream)
    p = LiveProgress()
    p.part_started(_Part(), 1, 1)
    os.close(master)  # the terminal window closed: writes to the slave now fail with EIO
    for _ in range(50):
        p.round_started(_Part(), 2, 56, 60.0)
        p.message("still measuring")
    p.close()
    assert p.stream.gone
