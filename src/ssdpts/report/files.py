"""Where documents go and how they are written: formats, output paths, atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

from .. import atomic
from ..errors import UserError

FORMATS = ("html", "pdf")


def parse_formats(text: str | None) -> tuple[str, ...]:
    """'html,pdf' -> ('html', 'pdf'); unknown names refused."""
    if not text:
        return FORMATS
    out = []
    for f in text.replace(" ", "").lower().split(","):
        if not f:
            continue
        if f not in FORMATS:
            raise UserError(f"unknown report format {f!r}: choose html, pdf or html,pdf")
        if f not in out:
            out.append(f)
    if not out:
        raise UserError("no report format given: choose html, pdf or html,pdf")
    return tuple(out)


def output_paths(directory: Path | str, formats: tuple[str, ...], out: Path | str | None,
                 stem: str = "report") -> dict[str, Path]:
    """Where each format goes. Default: <stem>.<fmt> in ``directory`` (a report: report.<fmt> in the
    run directory; a comparison: ssdpts-compare.<fmt> in "."). ``out`` may be a directory (an
    existing one, or a string ending in '/'), or a file name: with one format it is used as given,
    with several its suffix is replaced by each format's."""
    if out is None:
        return {f: Path(directory) / f"{stem}.{f}" for f in formats}
    is_dir = isinstance(out, str) and out.endswith(("/", os.sep))
    out = Path(out)
    if is_dir or out.is_dir():
        return {f: out / f"{stem}.{f}" for f in formats}
    if len(formats) == 1:
        return {formats[0]: out}
    return {f: out.with_suffix(f".{f}") for f in formats}


def write_atomic(path: Path, data: bytes, what: str = "the report") -> None:
    """Write ``data`` whole or not at all (atomic.py, durably): a reader never sees half a file.
    ``what`` names the file in the error message ("": the path alone)."""
    try:
        atomic.write_atomic(path, data, durable=True, mkdir=True)
    except OSError as exc:
        named = f"{what} {path}" if what else str(path)
        raise UserError(f"cannot write {named} ({exc.strerror}): pick another --out") from None
