"""Build (and bring up to date) the results site of a library: see the package's docstring.

A build reads the library (list of runs), then each run directory that changed since the last
build (its manifest.json, summary.json and steps.jsonl by size and modification time, its library
entry, this ssdpts's version): its index row, its data file and its report. Unchanged runs are
taken from ``site.json`` as the last build left them, so a rebuild of a 500-run library that
gained one run reads one run and renders one report. The reports, the costly part (every step
proven from fio's output, as 'ssdpts report' does), render on every CPU at once.

Every file is written atomically (a temporary file, then a rename), the page's assets and data
before index.html and site.json, so that a reader of the site (a browser, a file share) never
sees a page that points at something not yet written. One build at a time per site (a lock on
``.build.lock`` in the site directory); run directories and the library are only read.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
import fcntl
import json
import os
from pathlib import Path
import time
from typing import Callable

from ssdpts import __version__, atomic
from ssdpts.errors import UserError
from ssdpts.store import MANIFEST, STEPS, SUMMARY
from ssdpts.library.site import data

MARK = "site.json"  # what the last build made: its runs' fingerprints, rows and files
LOCK = ".build.lock"
TEMPLATES = Path(__file__).parent / "templates"
ASSETS = ("site.js", "site.css")  # beside the report's chart.js, report.css and d3 in assets/


@dataclass
class Built:
    """What a build did."""

    site: Path
    runs: int = 0
    read: int = 0  # run directories read (new or changed)
    reports: int = 0  # reports rendered
    removed: int = 0  # runs no longer in the library whose files were removed
    problems: list[str] = field(default_factory=list)  # one line per run that could not be read or rendered
    seconds: float = 0.0


def _fingerprint(run_dir: Path, db_row: dict) -> list | None:
    """What says a run directory changed: its three documents by size and modification time, its
    library entry's status and path, and this ssdpts (a new one renders everything again)."""
    out: list = [data.FORMAT, __version__, db_row.get("status"), db_row.get("path")]
    for name in (MANIFEST, SUMMARY, STEPS):
        try:
            st = os.stat(run_dir / name)
        except OSError:
            if name == MANIFEST:
                return None
            out.append(None)
            continue
        out.append([st.st_size, st.st_mtime_ns])
    return out


def check_site_dir(site: Path) -> None:
    """Refuse a directory that is not (yet) a site: never write into a run directory or over a
    directory of something else."""
    here = site.resolve()
    for d in (here, *here.parents):
        if (d / MANIFEST).is_file():
            raise UserError(f"{site} is {'a run directory' if d == here else f'inside the run directory {d}'}: "
                            "give a directory of its own for the site, e.g. ./ssdpts-site")
    if site.exists() and not site.is_dir():
        raise UserError(f"{site} is not a directory: give a directory for the site, e.g. ./ssdpts-site")
    if site.is_dir() and any(site.iterdir()) and not (site / MARK).is_file():
        raise UserError(f"{site} is not empty and holds no ssdpts site ({MARK}): give an empty or new directory, or "
                        "the directory of an earlier 'ssdpts db site'")


def write_atomic(path: Path, payload: bytes) -> None:
    try:
        atomic.write_atomic(path, payload, mkdir=True)
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror}): give another site directory") from None


def _lock(site: Path) -> int:
    try:
        site.mkdir(parents=True, exist_ok=True)
        fd = os.open(site / LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    except OSError as exc:
        raise UserError(f"cannot create the site directory {site} ({exc.strerror}): give another one") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise UserError(f"another 'ssdpts db site' is building {site}: wait for it to finish") from None
    return fd


def _previous(site: Path) -> dict:
    try:
        doc = json.loads((site / MARK).read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) and doc.get("format") == data.FORMAT else {}
    except (OSError, ValueError):
        return {}


BACK = ('<nav class="site-back"><a href="../../index.html" title="the library\'s index">← all runs</a></nav>')


def _link_back(report: Path) -> None:
    """A run's page in the site leads back to the index (runs/<uid>/report.html: two folders down)."""
    text = report.read_text(encoding="utf-8")
    at = text.find(">", text.find("<body")) + 1
    if at > 0 and BACK not in text:
        write_atomic(report, (text[:at] + "\n" + BACK + text[at:]).encode("utf-8"))


def _render_report(run_dir: str, out: str) -> str | None:
    """One run's report into the site (a worker process); the error's line, or None."""
    from ssdpts import kinds

    try:
        kinds.of(run_dir).render(Path(run_dir), ("html",), out)
        _link_back(Path(out))
        return None
    except UserError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - one run's report must not stop the site
        return f"{exc.__class__.__name__}: {exc}"


def _read(path: Path, db_row: dict) -> tuple[dict, list[dict], dict]:
    """(index row, headline columns, run data) of one run directory of the library."""
    from ssdpts.results.reader import read_run
    from ssdpts.status import quick_problems

    run = read_run(path, need_summary="'ssdpts db site'")
    problems = quick_problems(path, dict(run.manifest.doc), complete=run.status == "complete")
    if db_row.get("status") == "damaged" and not problems:  # the library's proof found it: say what (rare, costly)
        from ssdpts.results.verify.integrity import check

        problems = [p.line() for p in check(path).problems] or [
            f"the library marked it damaged when it was added, but it checks intact now: 'ssdpts db add {path}' again"]
    row, cols = data.index_row(run, db_row, problems)
    return row, cols, data.run_data(run)


def build(site: str | Path, db_path: str | Path | None = None, *, reports: bool = True, jobs: int | None = None,
          log: Callable[[str], None] = lambda s: None) -> Built:
    """Build or update the site in ``site`` from the results library at ``db_path`` (the default
    library when None)."""
    from ssdpts.library.db import ResultsDB

    t0 = time.monotonic()
    site = Path(site)
    check_site_dir(site)
    with ResultsDB(db_path, create=False) as db:
        db_rows = db.list_runs()
        library = str(db.path)
    fd = _lock(site)
    try:
        return _build(site, db_rows, library, reports, jobs, log, t0)
    finally:
        os.close(fd)


def _build(site: Path, db_rows: list[dict], library: str, reports: bool, jobs: int | None, log, t0: float) -> Built:
    out = Built(site, runs=len(db_rows))
    before = _previous(site).get("runs") or {}
    now: dict[str, dict] = {}
    todo: list[tuple[str, str, str]] = []  # (uid, run dir, report path) of the reports to render
    for db_row in db_rows:
        uid, path = db_row["run_uid"], Path(db_row.get("path") or "")
        fp = _fingerprint(path, db_row) if path.is_dir() else None
        old = before.get(uid)
        report = f"runs/{uid}/report.html"
        if fp is None:  # its directory is gone: listed from the library alone, what the site had of it goes
            _drop(site, uid, old)
            now[uid] = {"fp": None, "row": data.missing_row(db_row), "cols": []}
            continue
        if old and old.get("fp") == fp and (site / old["row"].get("data", "")).is_file() \
                and (not old["row"].get("report") or (site / old["row"]["report"]).is_file()):
            if reports and not old["row"].get("report"):
                todo.append((uid, str(path), report))
            now[uid] = old
            continue
        try:
            row, cols, run_data = _read(path, db_row)
        except UserError as exc:
            out.problems.append(f"{path}: {exc}")
            _drop(site, uid, old)
            now[uid] = {"fp": None, "row": {**data.missing_row(db_row), "status": "unreadable",
                                            "problems": [str(exc)]}, "cols": []}
            continue
        row["data"] = f"data/runs/{uid}.js"
        write_atomic(site / row["data"], b"ssdptsSiteRun(" + _js(run_data) + b");\n")
        row["report"] = None  # rendered below; without reports, a changed run's old report is stale: it goes
        (site / report).unlink(missing_ok=True)
        now[uid] = {"fp": fp, "row": row, "cols": cols}
        out.read += 1
        if reports:
            todo.append((uid, str(path), report))
    _render_all(site, todo, now, out, jobs, log)
    for uid, old in before.items():  # runs the library no longer has: their files go
        if uid not in now:
            _drop(site, uid, old)
            out.removed += 1
    _write_page(site, now, library)
    out.seconds = time.monotonic() - t0
    return out


def _drop(site: Path, uid: str, entry: dict | None) -> None:
    """Remove what the site has of a run (its data and report)."""
    row = (entry or {}).get("row") or {}
    for rel in (row.get("data"), row.get("report")):
        if rel:
            (site / rel).unlink(missing_ok=True)
    try:
        (site / "runs" / uid).rmdir()
    except OSError:
        pass


def _render_all(site: Path, todo: list[tuple[str, str, str]], now: dict[str, dict], out: Built, jobs: int | None,
                log) -> None:
    """The reports of new and changed runs, on ``jobs`` processes (default: every CPU)."""
    if not todo:
        return
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    log(f"rendering {len(todo)} report{'s' if len(todo) != 1 else ''} on {workers} process{'es' if workers > 1 else ''}")
    dirs, dests = [d for _, d, _ in todo], [str(site / rel) for _, _, rel in todo]
    if workers == 1:
        results = list(map(_render_report, dirs, dests))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_render_report, dirs, dests))
    for (uid, d, rel), err in zip(todo, results):
        now[uid]["row"]["report"] = rel if err is None else None
        if err is None:
            out.reports += 1
        else:
            out.problems.append(f"{d}: no report: {err}")


def _js(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str).encode("utf-8")


def _write_page(site: Path, now: dict[str, dict], library: str) -> None:
    """Assets, then index.html, then site.json."""
    from ssdpts.report.html import D3, TEMPLATES as REPORT_TEMPLATES

    sources = {f"assets/{D3}": REPORT_TEMPLATES / "vendor" / D3, "assets/chart.js": REPORT_TEMPLATES / "chart.js",
               "assets/report.css": REPORT_TEMPLATES / "report.css",
               **{f"assets/{a}": TEMPLATES / a for a in ASSETS}}
    for rel, src in sources.items():
        payload = src.read_bytes()
        dest = site / rel
        if not dest.is_file() or dest.read_bytes() != payload:
            write_atomic(dest, payload)
    cols: dict[str, dict] = {}
    for e in now.values():
        for c in e["cols"]:
            cols.setdefault(c["key"], c)
    runs = sorted((e["row"] for e in now.values()), key=lambda r: (r.get("created") or "", r["uid"]), reverse=True)
    doc = {"format": data.FORMAT, "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "ssdpts": __version__, "library": library, **data.meta(),
           "columns": sorted(cols.values(), key=lambda c: c["order"]), "runs": runs}
    write_atomic(site / "index.html", page(doc, D3).encode("utf-8"))
    write_atomic(site / MARK, json.dumps({"format": data.FORMAT, "ssdpts": __version__, "runs": now},
                                         ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def page(doc: dict, d3: str) -> str:
    """index.html: the page (templates/index.html.j2) with the library's index inline."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    text = _js(doc).decode("utf-8").replace("<", "\\u003c")  # nothing inside the element can end it
    return env.get_template("index.html.j2").render(d=doc, data=Markup(text), d3=d3)
