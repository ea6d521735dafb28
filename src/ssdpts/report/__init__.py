"""SNIA-format reports (HTML and PDF) generated from a run directory alone.

    from ssdpts.report import render
    render(Path("ssdpts-runs/20260101T000000Z-iops-..."))          # report.html + report.pdf in the run dir
    render(run_dir, formats=("pdf",), out=Path("/tmp/drive-a.pdf"))

Reads manifest.json, steps.jsonl and summary.json (never fio, never a device). matplotlib and
jinja2 are imported here only, so the rest of ssdpts starts fast without them.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def _write_atomic(path: Path, data: bytes, what: str = "the report") -> None:
    """Write ``data`` through a temporary file in the same directory (fsync, then rename): a reader
    never sees half a file. ``what`` names the file in the error message ("": the path alone)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        named = f"{what} {path}" if what else str(path)
        raise UserError(f"cannot write {named} ({exc.strerror}): pick another --out") from None


def _imports():
    try:
        from . import html, pdf
        from .model import load
    except ImportError as exc:  # matplotlib / jinja2 are the optional "report" extra
        raise UserError(f"reports need matplotlib and jinja2 ({exc.name} is missing): "
                        f"pip install 'ssdpts[report]'") from None
    return load, html, pdf


def _can_fork() -> bool:
    """Render the PDF in a forked child while the parent renders the HTML: the two are independent
    and each is mostly CPU-bound matplotlib work. Only where fork is safe (no other threads, e.g. a
    progress display still running) and useful (more than one CPU)."""
    import multiprocessing
    import threading

    return (PARALLEL and hasattr(os, "fork") and threading.active_count() == 1 and (os.cpu_count() or 1) > 1
            and "fork" in multiprocessing.get_all_start_methods())


PARALLEL = True


def _pdf_child(report, path: Path, conn) -> None:
    from . import pdf

    try:
        _write_atomic(path, pdf.render_pdf(report))
        conn.send(None)
    except UserError as exc:
        conn.send(("user", str(exc)))
    except BaseException as exc:  # noqa: BLE001  (reported to the parent, which retries in-process)
        conn.send(("other", f"{exc.__class__.__name__}: {exc}"))
    finally:
        conn.close()


def render(run_dir: Path, formats=FORMATS, out: Path | str | None = None) -> list[Path]:
    """Render the report of a run directory; returns the files written."""
    run_dir = Path(run_dir)
    if isinstance(formats, str):
        formats = parse_formats(formats)
    formats = tuple(formats)
    for f in formats:
        if f not in FORMATS:
            raise UserError(f"unknown report format {f!r}: choose html, pdf or html,pdf")
    load, html, pdf = _imports()
    report = load(run_dir)
    paths = output_paths(run_dir, formats, out)
    child = conn = None
    if "pdf" in formats and len(formats) > 1 and _can_fork():
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        conn, child_conn = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_pdf_child, args=(report, paths["pdf"], child_conn), daemon=True)
        try:
            child.start()
        except (OSError, AssertionError):  # e.g. no process left, or we are a daemonic process ourselves
            child = None
        child_conn.close()
    try:
        for fmt in formats:
            if fmt == "html":
                _write_atomic(paths[fmt], html.render_html(report).encode("utf-8"))
            elif child is None:
                _write_atomic(paths[fmt], pdf.render_pdf(report))
        if child is not None:
            try:
                result = conn.recv()
            except EOFError:
                result = ("other", f"the PDF process ended with exit code {child.exitcode}")
            child.join()
            child = None
            if result is not None:
                kind, msg = result
                if kind == "user":
                    raise UserError(msg)
                _write_atomic(paths["pdf"], pdf.render_pdf(report))  # retry here: a real error shows its traceback
    finally:
        if child is not None and child.is_alive():
            child.terminate()
            child.join()
    return [paths[f] for f in formats]


__all__ = ["render", "parse_formats", "output_paths", "FORMATS"]
