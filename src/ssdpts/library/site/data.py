"""What the site's page knows about each run: a row of the index, and the run's compared cells.

Everything a comparison in the page needs is what ``ssdpts compare`` reads (compare.py): the
cells of each part a comparison shows (results.cells.shared_parts of the run alone: the tests'
COMPARED metrics, in compare's order, with compare's sort key so that several runs' cells merge in
the same order), the steady-state verdicts and stop reasons, the settings a comparison checks
(compare.settings_of) and the device label (RunResults.device_name). The page applies compare's
rules to them (site/templates/site.js: delta, labels, settings check, median and RSE), and the
tests hold its numbers to ``ssdpts compare --format json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ssdpts.compare import SETTINGS, settings_of
from ssdpts.kinds import PTS
from ssdpts.library.headlines import figure_cells, headline_cells  # the index's headline columns (and the library's)
from ssdpts.pts.registry import TESTS, headlines
from ssdpts.pts.registry import site as kind_site
from ssdpts.results.cells import cell_rank, shared_parts
from ssdpts.results.reader import RunResults
from ssdpts.results.registry import METRICS, SHORT

FORMAT = 2  # of the page's data (index and run files); 2: a part says how a comparison draws it (its kind's site(part))


def meta() -> dict[str, Any]:
    """What every page needs once: the metrics (unit, speed or time), the compared settings."""
    return {
        "metrics": {m.name: {"unit": m.unit, "kind": m.kind, "label": m.label, "short": SHORT.get(m.name, "")}
                    for m in METRICS.values()},
        "settings": [{"name": s.name, "label": s.label, "invalidates": s.invalidates} for s in SETTINGS],
        "tests": {name: mod.TITLE for name, mod in TESTS.items()},
        "headlines": {name: [list(h) for h in headlines(name)] for name in TESTS},
    }


def _rank(test: str, pid: str, metric: str, bs, mix, point, position: int) -> list:
    """compare's order of a cell (results.cells.cell_rank) as a JSON array the page sorts by."""
    return list(cell_rank(test, (pid, metric, bs, mix, point), position))


def run_data(run: RunResults) -> dict[str, Any]:
    """The cells a comparison of this run uses, per part in run order, and what it checks."""
    parts = []
    shared, _ = shared_parts([run])
    for sp in shared:
        cells = [[r.metric, r.block_size_bytes, r.mix, r.point, r.values[0], r.label,
                  _rank(sp.test, sp.part, r.metric, r.block_size_bytes, r.mix, r.point, i)] for i, r in enumerate(sp.rows)]
        part: dict[str, Any] = {"id": sp.part, "test": sp.test, "title": sp.title, "reached": sp.reached[0],
                                "stop": sp.stop_reasons[0], "cells": cells}
        part.update(kind_site(run.part(sp.part)))
        parts.append(part)
    return {"format": FORMAT, "uid": run.uid, "parts": parts, "settings": settings_of(run)}


def drive_model_label(run: RunResults) -> str | None:
    """What the run's WSAT drive model found, in a word the index filters by (docs/methodology.md#drive-model):
    "SLC cache" (a cliff), "GC onset", "no GC onset"; None for a run without one."""
    models = [p.model for p in (run.summary.parts.values() if run.summary else ()) if p.model is not None]
    if not models:
        return None
    m = models[0]
    if m.cliffs:
        return "SLC cache"
    return "GC onset" if m.value("gc_onset_capacity_multiple") is not None else "no GC onset"


def index_row(run: RunResults, db_row: dict, problems: list[str]) -> tuple[dict[str, Any], list[dict]]:
    """The run's row of the index (from its library entry and the run itself) and its headline
    columns. ``problems``: why it is damaged (the library's verdict, or the site's cheap check)."""
    t = run.manifest.target
    heads = headline_cells(run) + figure_cells(run)
    row = {
        "uid": run.uid, "name": run.name, "path": str(db_row.get("path") or run.path),
        "status": "damaged" if problems else run.status, "problems": problems, "run_kind": run.kind or PTS,
        "created": run.created, "ended": run.manifest.ended,
        "tests": (db_row.get("tests") or "").split(",") if db_row.get("tests") else list(run.manifest.settings.tests),
        "profile": db_row.get("profile"),
        "tc": db_row.get("threads"), "qd": db_row.get("iodepth"), "step_s": db_row.get("step_seconds"),
        "compliant": bool(db_row.get("pts_compliant")), "deviations": list(run.deviations),
        "vendor": t.vendor if t else None, "model": t.model if t else None, "serial": t.serial if t else None,
        "firmware": t.firmware if t else None, "capacity": t.size_bytes if t else None,
        "transport": t.transport if t else None, "target": t.path if t else None, "kind": t.kind if t else None,
        "host": run.manifest.host.get("hostname"), "kernel": run.manifest.host.get("kernel"),
        "executor": run.manifest.executor, "fio": run.manifest.fio_version, "ssdpts": run.manifest.ssdpts_version,
        "device": run.device_name, "device_key": list(run.device_key),
        "h": {col["key"]: value for col, value, _ in heads},
        "drive_model": drive_model_label(run),
        "ss": {pid: run.reached(pid) for pid in run.part_ids()},
    }
    return row, [col for col, _, _ in heads]


def missing_row(db_row: dict) -> dict[str, Any]:
    """A library entry whose run directory is gone: listed from the library alone, not comparable."""
    return {
        "uid": db_row["run_uid"], "name": db_row["run_name"], "path": db_row.get("path"), "status": "missing",
        "problems": [f"the run directory is not at {db_row.get('path')} any more: 'ssdpts db rebuild' where the runs "
                     "are now"],
        "created": db_row.get("created"), "ended": db_row.get("ended"),
        "tests": (db_row.get("tests") or "").split(",") if db_row.get("tests") else [],
        "profile": db_row.get("profile"), "tc": db_row.get("threads"), "qd": db_row.get("iodepth"),
        "step_s": db_row.get("step_seconds"), "compliant": bool(db_row.get("pts_compliant")), "deviations": [],
        "vendor": db_row.get("device_vendor"), "model": db_row.get("device_model"),
        "serial": db_row.get("device_serial"), "firmware": db_row.get("device_firmware"),
        "capacity": db_row.get("capacity_bytes"), "transport": db_row.get("device_transport"),
        "target": db_row.get("target_path"), "kind": db_row.get("target_kind"), "host": db_row.get("host_name"),
        "kernel": db_row.get("host_kernel"), "executor": db_row.get("executor"), "fio": db_row.get("fio_version"),
        "ssdpts": db_row.get("ssdpts_version"), "device": db_row.get("device_model") or Path(
            str(db_row.get("target_path") or "?")).name, "device_key": None, "h": {}, "ss": {},
    }
