"""Progress: a live rich display on a terminal, plain log lines otherwise (CI, nohup, pipes)."""

from __future__ import annotations

import sys
import time

from ssdpts.pts.parts import Part
from ssdpts.pts.units import fmt_capacity


def _fmt_rate(info: dict) -> str:
    iops = info.get("iops")
    bw = info.get("bw_bytes_per_s")
    if iops is None:
        return ""
    return f"{iops:,.0f} IOPS  {bw / 1e6:,.1f} MB/s"


def fmt_tracking_value(v: float | None) -> str:
    """A tracking variable's value as the live display and 'ssdpts status' show it."""
    if v is None:
        return "—"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _verdict_text(t: dict) -> str:
    if t["reached"] is None:
        return f"{t['name']}: {fmt_tracking_value(t['value'])} {t['unit']} (window needs 5 rounds)"
    mark = "steady" if t["reached"] else "not steady"
    return (f"{t['name']}: {fmt_tracking_value(t['value'])} {t['unit']}  range {t['range_pct']:.1f}%/20%  "
            f"excursion {t['excursion_pct']:.1f}%/10%  {mark}")


class _Vanishing:
    """A stream that may go away mid-run: a closed terminal (EIO after SIGHUP) or a log reader gone
    (EPIPE). Progress is a courtesy: a failed write must never end a run that is measuring — the
    signal that usually follows ends it properly (interrupted, exit 128 + n), and the run directory
    keeps everything. Other attributes (isatty, fileno, encoding) are the stream's own."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self.gone = True

    def __getattr__(self, name):
        return getattr(self._stream, name)


class PlainProgress:
    """One line per event, timestamped, flushed: readable in a log file."""

    def __init__(self, stream=None):
        self.stream = _Vanishing(stream or sys.stdout)
        self.part: Part | None = None

    def _p(self, text: str) -> None:
        print(time.strftime("%H:%M:%S ") + text, file=self.stream, flush=True)

    def part_started(self, part, n, total):
        self.part = part
        self._p(f"[{n}/{total}] {part.title}")

    def phase(self, part, text):
        self._p(f"  {part.title}: {text}")

    def round_started(self, part, round_no, n_steps, step_s, limit=None):
        of = "" if limit is None else f"/{limit}"
        self._p(f"  {part.title}: round {round_no}{of}, {n_steps} steps" + (f" × {step_s:.3g} s" if step_s else ""))

    def sample(self, info):
        pass  # per-second samples would flood a log

    def round_finished(self, part, round_no, summary):
        if part.stop_rule == "wsat":
            self._p(f"  WSAT: {summary['samples']}/{summary['max_samples']} samples, "
                    f"{fmt_capacity(summary['written_bytes'])} of {fmt_capacity(summary['max_bytes'])} written, "
                    f"last {summary['last_iops']:,.0f} IOPS")
        else:
            for t in summary["tracking"]:
                self._p("    " + _verdict_text(t))
        if summary.get("stop_reason"):
            self._p(f"  {part.title}: done ({summary['stop_reason']})")

    def message(self, text):
        self._p("  " + text)

    def close(self):
        pass


class LiveProgress(PlainProgress):
    """rich Live panel: test, round x/N, step y/M, current rate, tracking status, ETA."""

    def __init__(self):
        from rich.console import Console
        from rich.live import Live

        super().__init__(stream=None)
        self.console = Console(file=self.stream)
        self.live = Live(console=self.console, refresh_per_second=4, transient=False)
        self.live.start()
        self.state: dict = {"title": "", "round": "", "steps": 0, "step_s": None, "t0": time.monotonic(),
                            "rate": "", "tracking": [], "phase": ""}

    def _p(self, text: str) -> None:
        self.live.console.print(time.strftime("%H:%M:%S ") + text, highlight=False)

    def _render(self) -> None:
        from rich.table import Table

        st = self.state
        t = Table.grid(padding=(0, 2))
        elapsed = time.monotonic() - st["t0"]
        line = f"[bold]{st['title']}[/]  {st['round']}"
        if st["steps"] and st["step_s"]:
            step = min(int(elapsed // st["step_s"]) + 1, st["steps"])
            eta = max(0.0, st["steps"] * st["step_s"] - elapsed)
            line += f"  step {step}/{st['steps']}  round ETA {eta:,.0f} s"
        elif st["phase"]:
            line += f"  {st['phase']}  {elapsed:,.0f} s"
        t.add_row(line)
        if st["rate"]:
            t.add_row("now: " + st["rate"])
        for tr in st["tracking"]:
            t.add_row(_verdict_text(tr))
        self.live.update(t)

    def part_started(self, part, n, total):
        super().part_started(part, n, total)
        self.state.update(title=f"[{n}/{total}] {part.title}", round="", steps=0, tracking=[], phase="")
        self._render()

    def phase(self, part, text):
        super().phase(part, text)
        self.state.update(phase=text, steps=0, t0=time.monotonic(), rate="")
        self._render()

    def round_started(self, part, round_no, n_steps, step_s, limit=None):
        of = "" if limit is None else f"/{limit}"
        self.state.update(round=f"round {round_no}{of}", steps=n_steps, step_s=step_s, t0=time.monotonic(),
                          phase="", rate="")
        self._render()

    def sample(self, info):
        self.state["rate"] = _fmt_rate(info)
        self._render()

    def round_finished(self, part, round_no, summary):
        super().round_finished(part, round_no, summary)
        self.state["tracking"] = summary.get("tracking", [])
        self._render()

    def close(self):
        self.live.stop()


class EventProgress:
    """A run under ``ssdpts run --target A --target B`` (parallel.py): progress as one JSON object
    per line on a pipe the supervising process reads (``--events-fd``), for its one view of every
    device. Like a terminal, the pipe may vanish (the supervisor was killed): the run goes on."""

    SAMPLE_EVERY_S = 0.5  # the view redraws a few times a second; per-second samples are plenty

    def __init__(self, fd: int):
        import os

        self.stream = _Vanishing(os.fdopen(fd, "w", buffering=1, encoding="utf-8"))
        self._last_sample = 0.0

    def _emit(self, ev: str, **fields) -> None:
        import json

        self.stream.write(json.dumps({"ev": ev, **fields}, default=str) + "\n")
        self.stream.flush()

    def part_started(self, part, n, total):
        self._emit("part", title=f"[{n}/{total}] {part.title}")

    def phase(self, part, text):
        self._emit("phase", text=text)

    def round_started(self, part, round_no, n_steps, step_s, limit=None):
        self._emit("round", round=round_no, of=limit,
                   steps=n_steps, step_s=step_s)

    def sample(self, info):
        now = time.monotonic()
        if now - self._last_sample >= self.SAMPLE_EVERY_S:
            self._last_sample = now
            self._emit("sample", rate=_fmt_rate(info))

    def round_finished(self, part, round_no, summary):
        if part.stop_rule == "wsat":
            lines = [f"WSAT {summary['samples']}/{summary['max_samples']} samples"]
        else:
            lines = [_verdict_text(t) for t in summary["tracking"]]
        self._emit("round_done", round=round_no, tracking=lines, stop_reason=summary.get("stop_reason"),
                   steady=_steady_word(summary))

    def message(self, text):
        self._emit("message", text=text)

    def ready(self, stdin=None) -> bool:
        """Every check of this device passed: say so, and wait until the supervisor says go (every
        other device passed too) or not (one was refused: then nothing is written here either)."""
        self._emit("ready")
        line = (stdin or sys.stdin).readline()
        return line.strip() == "go"

    def ended(self, status: str, run_dir, error: str | None = None) -> None:
        self._emit("end", status=status, run_dir=str(run_dir) if run_dir else None, error=error)

    def close(self):
        pass


def _steady_word(summary: dict) -> str:
    """The steady-state status of a round's tracking variables, in a word or two."""
    tracking = summary.get("tracking") or []
    if not tracking:
        return ""
    if any(t["reached"] is None for t in tracking):
        return "window filling"
    n = sum(1 for t in tracking if t["reached"])
    return "steady" if n == len(tracking) else f"not steady ({n}/{len(tracking)})"


def make_progress(quiet: bool = False):
    from ssdpts.run.runner import NullProgress

    if quiet:
        return NullProgress()
    if sys.stdout.isatty():
        return LiveProgress()
    return PlainProgress()
