"""The fio job files of a run directory (fio/<part>/round-NNN.fio beside round-NNN.json): their
sections and options, for reports that show the fio options that shape the results and the job
section of a table cell. Read-only; a missing or foreign file reads as no sections."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

Options = tuple[tuple[str, str | None], ...]  # (option, value) in file order; value None for flags (new_group)


def job_file(run_dir: Path, fio_json: str | None) -> Path | None:
    """The job file that produced a step's json+ output (same name, .fio), if it exists."""
    if not fio_json:
        return None
    path = Path(run_dir) / Path(fio_json).with_suffix(".fio")
    return path if path.is_file() else None


@lru_cache(maxsize=64)
def _sections(path: str, mtime_ns: int) -> tuple[tuple[str, Options, str], ...]:
    out: list[tuple[str, list[tuple[str, str | None]], list[str]]] = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith((";", "#")):
            continue
        if s.startswith("[") and s.endswith("]"):
            out.append((s[1:-1], [], [line]))
            continue
        if not out:
            continue  # options before any section: not a job file ssdpts wrote
        key, sep, value = s.partition("=")
        out[-1][1].append((key.strip(), value.strip() if sep else None))
        out[-1][2].append(line)
    return tuple((name, tuple(opts), "\n".join(lines)) for name, opts, lines in out)


def sections(path: Path | None) -> tuple[tuple[str, Options, str], ...]:
    """(section name, options, the section's text) for every section of a job file, [global] included."""
    if path is None:
        return ()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return ()
    return _sections(str(path), mtime)


def section(path: Path | None, name: str) -> tuple[Options, str] | None:
    for n, opts, text in sections(path):
        if n == name:
            return opts, text
    return None
