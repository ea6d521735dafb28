"""SIGINT, SIGTERM and SIGKILL at varied points of a real run (during WIPC, mid-round, between
rounds); after each the run directory is valid, no finished step is lost or duplicated, the
status is right, and resume completes the run. Every terminating signal (SIGTERM, SIGHUP from a
closed terminal, SIGINT once or twice, SIGQUIT) is an interruption: status interrupted, one line,
a partial report, exit 128 + n, no fio left."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
import pty
import signal
import subprocess
import termios
import threading
import time

import pytest

from .conftest import finished_lines, finished_steps, ssdpts
from .test_run_devices import _assert_unique_complete, _fio_children_gone, start_background_run, steps_of

pytestmark = pytest.mark.root

STATUS_AFTER = {signal.SIGINT: "interrupted", signal.SIGTERM: "interrupted", signal.SIGKILL: "running"}


def _wait(cond, proc: subprocess.Popen, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return
        if proc.poll() is not None:
            pytest.fail(f"ssdpts ended early ({proc.returncode}): {proc.stderr.read()}")
        time.sleep(0.02)
    pytest.fail("the run never reached the point to inject the signal")


def _lines(run_out: Path) -> int:
    dirs = [d for d in run_out.iterdir() if d.is_dir()] if run_out.exists() else []
    if not dirs or not (dirs[0] / "steps.jsonl").exists():
        return -1
    return len(finished_lines(dirs[0] / "steps.jsonl"))


def _in_wipc(out: Path) -> bool:
    dirs = [d for d in out.iterdir() if d.is_dir()] if out.exists() else []
    return bool(dirs) and (dirs[0] / "fio" / "iops" / "wipc.fio").exists() and _lines(out) == 0


POINTS = {
    "wipc": _in_wipc,
    "mid-round": lambda out: _lines(out) >= 1 + 56,
    "between-rounds": lambda out: _lines(out) >= 1 + 2 * 56,
}
DELAY = {"wipc": 0.0, "mid-round": 1.0, "between-rounds": 0.0}  # s after the point: a round takes ~3 s


# Every signal at every point in the full suite ('make test-full'); CI's 'make test' keeps one of
# each signal and one of each point.
IN_CI = {(signal.SIGKILL, "mid-round"), (signal.SIGINT, "between-rounds"), (signal.SIGTERM, "wipc")}
CASES = [pytest.param(sig, point, id=f"{sig.name}-{point}",
                      marks=() if (sig, point) in IN_CI else pytest.mark.slow)
         for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL) for point in POINTS]


@pytest.mark.parametrize("sig,point", CASES)
def test_signal_then_resume(make_loop, tmp_path, sig, point):
    dev = make_loop("256M")
    out = tmp_path / "runs"
    proc, run = start_background_run(dev, out)
    try:
        _wait(lambda: POINTS[point](out), proc)
        time.sleep(DELAY[point])
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _fio_children_gone(run), "fio outlived ssdpts"
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig, err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "resume" in lines[0], err
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == STATUS_AFTER[sig]
    before = finished_steps(run / "steps.jsonl")  # SIGKILL mid-append may leave a torn last line
    confirm: list[str] = []
    if sig == signal.SIGKILL:  # killed, the run could not record what the device holds: confirm again
        assert man["contents_seal"]["state"] == "writing"
        r = ssdpts("resume", str(run), "--quiet")
        assert r.returncode == 2 and "stopped without recording what it holds" in r.stderr, r.stderr
        confirm = ["--destroy-data-on", dev]
    else:
        assert man["contents_seal"]["state"] == "sealed"
    r = ssdpts("resume", str(run), "--quiet", *confirm)
    assert r.returncode == 0, r.stderr
    after = _assert_unique_complete(run)
    assert after[: len(before)] == before, "a finished step changed or was lost"
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "complete"
    assert [r["previous_status"] for r in man["resumptions"]] == [STATUS_AFTER[sig]]
    assert len([s for s in after if s["phase"] == "round"]) >= 5 * 56


def test_sigint_during_the_report_keeps_the_complete_run(make_loop, tmp_path):
    """The measurements are complete before the report starts: an interrupt while it renders
    leaves a complete run whose report 'ssdpts report' regenerates."""
    dev = make_loop("256M")
    out = tmp_path / "runs"
    proc = subprocess.Popen(["ssdpts", "run", "lat", "--target", dev, "--step-seconds", "0.1", "--max-rounds", "5",
                             "--destroy-data-on", dev, "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def rendering() -> bool:
        dirs = [d for d in out.iterdir() if d.is_dir()] if out.exists() else []
        if not dirs or not (dirs[0] / "summary.json").exists():
            return False
        return json.loads((dirs[0] / "manifest.json").read_text()).get("status") == "complete"

    _wait(rendering, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 130), err  # 0 if the report was already written
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    r = ssdpts("report", str(run))
    assert r.returncode == 0, r.stderr
    assert (run / "report.html").stat().st_size > 10_000 and (run / "report.pdf").stat().st_size > 10_000


def _mid_round(out: Path) -> bool:
    return POINTS["mid-round"](out)


class _Terminal(threading.Thread):
    """The master side of a pseudo-terminal: reads what ssdpts shows (rich's live display) so that
    it never blocks writing, and closes it on request — in this thread, so that no read is in
    flight on the descriptor when it goes (the kernel hangs the terminal up at that close)."""

    def __init__(self, master: int):
        super().__init__(daemon=True)
        self.master = master
        self.hang_up = threading.Event()
        self.seen = bytearray()  # what ssdpts showed, for the failure message

    def run(self) -> None:
        import select

        while not self.hang_up.is_set():
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    pass
        os.close(self.master)

    def close(self) -> None:
        self.hang_up.set()
        self.join(timeout=10)


def _start_on_a_terminal(dev: str, out: Path) -> tuple[subprocess.Popen, _Terminal]:
    """ssdpts as a session leader with a pseudo-terminal as its controlling terminal, progress display
    on: closing the terminal's master side is a terminal window being closed (SIGHUP, then EIO)."""
    master, slave = pty.openpty()

    def controlling_tty() -> None:  # runs after setsid (start_new_session)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(["ssdpts", "run", "iops", "--target", dev, "--step-seconds", "0.1", "--max-rounds", "6",
                             "--destroy-data-on", dev, "--out", str(out)], stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, preexec_fn=controlling_tty)
    os.close(slave)
    terminal = _Terminal(master)
    terminal.start()
    return proc, terminal


# SIGQUIT takes the same path as SIGTERM (in CI above): full suite only.
TERMINATING = [pytest.param("SIGHUP", id="SIGHUP-terminal-closed"),
               pytest.param("SIGQUIT", id="SIGQUIT", marks=pytest.mark.slow),
               pytest.param("SIGINT-twice", id="SIGINT-twice")]


@pytest.mark.parametrize("how", TERMINATING)
def test_every_terminating_signal_is_an_interruption(make_loop, tmp_path, how):
    dev = make_loop("256M")
    out = tmp_path / "runs"
    if how == "SIGHUP":
        proc, terminal = _start_on_a_terminal(dev, out)
        _wait(lambda: _mid_round(out), proc)
        terminal.close()  # the terminal goes away: the kernel sends SIGHUP, writes now fail with EIO
        err = terminal.seen[-2000:].decode(errors="replace")
        proc.wait(timeout=180)
        sig = signal.SIGHUP
    else:
        proc = subprocess.Popen(["ssdpts", "run", "iops", "--target", dev, "--step-seconds", "0.1", "--max-rounds", "6",
                                 "--destroy-data-on", dev, "--out", str(out), "--quiet"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait(lambda: _mid_round(out), proc)
        sig = signal.SIGQUIT if how == "SIGQUIT" else signal.SIGINT
        proc.send_signal(sig)
        if how == "SIGINT-twice":
            run = [d for d in out.iterdir() if d.is_dir()][0]
            # the second Ctrl-C arrives while the first is being handled (run marked, report rendering)
            _wait(lambda: json.loads((run / "manifest.json").read_text()).get("status") == "interrupted", proc)
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=180)
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    assert _fio_children_gone(run), "fio outlived ssdpts"
    assert proc.returncode == 128 + sig, (proc.returncode, err, {k: v for k, v in json.loads((run / "manifest.json").read_text()).items() if k in ("status", "error", "interruption", "failure")})
    if how != "SIGHUP":
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and f"interrupted by {sig.name}" in lines[0] and "resume" in lines[0], err
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "interrupted" and man["interruption"]["signal"] == sig.name
    assert "PARTIAL" in (run / "report.html").read_text() and (run / "report.pdf").stat().st_size > 10_000
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert len(steps_of(run)) >= 1 + 56  # WIPC and round 1 kept


def _holders(dev: str) -> list[str]:
    """Processes with the block device open (any fd whose target is the device node)."""
    rdev = os.stat(dev).st_rdev
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fds = list((d / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                st = fd.stat()
            except OSError:
                continue
            if st.st_rdev == rdev and (st.st_mode & 0o170000) == 0o060000:
                try:
                    cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    cmd = "?"
                out.append(f"{d.name}: {cmd[:200]}")
                break
    return out


def test_sigkill_leaves_nothing_holding_the_device(make_zram, tmp_path):
    """A SIGKILLed run's fio dies with it, and so do the hook shells its jobs wait in at their
    barriers (they inherit fio's open target): within seconds nothing holds the device, and the
    next run on it starts (a held zram device answers EBUSY and cannot be removed)."""
    dev = make_zram(512 * 2**20)
    out = tmp_path / "runs"
    argv = ["ssdpts", "run", "lat", "--target", dev, "--step-seconds", "0.5", "--max-rounds", "5",
            "--destroy-data-on", dev, "--quiet"]
    proc = subprocess.Popen([*argv, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: _lines(out) >= 1 + 3, proc)  # a round under way: later steps wait at barriers
        waiting = [h for h in _holders(dev) if "read x <" in h]
        assert waiting, "the run had hook shells waiting at their barriers when it was killed"
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    t0 = time.monotonic()
    while _holders(dev) and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    assert not _holders(dev), f"still holding {dev} 5 s after the run was killed: {_holders(dev)}"
    out2 = tmp_path / "runs2"
    again = subprocess.Popen([*argv, "--out", str(out2)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: _lines(out2) >= 1 + 1, again)
        again.send_signal(signal.SIGINT)
        _, err = again.communicate(timeout=120)
    finally:
        if again.poll() is None:
            again.kill()
    assert again.returncode == 128 + signal.SIGINT, err
