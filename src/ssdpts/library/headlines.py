"""A run's headline figures: what the results site's index shows for it, column by column, and
what the library keeps of them for 'ssdpts db list' (docs/results-db.md#headlines).

A PTS run's are each test's HEADLINES cells, as compare's summary table picks them (WSAT's steady
level, IOPS RND 4KiB read and write, ...), with their steady-state verdict; a run beside the PTS
(ssdpts quick, trace replay) has each of its figures' median. One function gives them to the
site (library/site/data.py) and to the library (library/db.py), so that the first figure
'db list' shows is the first the site's index shows for the run.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ssdpts.pts.registry import TESTS, headlines
from ssdpts.results.cells import shared_parts
from ssdpts.results.reader import RunResults
from ssdpts.results.registry import METRICS, SHORT

# (name, SQL type, description); docs/results-db.md mirrors them
HEADLINE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_uid", "TEXT NOT NULL REFERENCES runs(run_uid) ON DELETE CASCADE", "the run"),
    ("ord", "INTEGER NOT NULL", "the figure's place among the run's headlines, in the site index's column order "
                                "(0: the first, the one 'db list' shows)"),
    ("key", "TEXT NOT NULL", "the site's column of the figure: part|metric|block size|mix|point, or kind|figure"),
    ("test", "TEXT NOT NULL", "wsat, iops, tp, lat, hir, xsr, cbw, dirth, quick or replay"),
    ("label", "TEXT NOT NULL", "the figure as the site's index heads it, e.g. 'WSAT: RND 4KiB 0/100, final window'"),
    ("value", "REAL", "the measurement-window average (quick, replay: the median run's value); NULL: none"),
    ("unit", "TEXT", "IOPS, MB/s (10^6 B/s), µs, ...; quick and replay: their figures' units"),
    ("steady_state_reached", "INTEGER", "of the figure's part: 1, 0 (NOT reached), NULL (no criterion: WSAT, quick, "
                                        "replay)"),
)

HEADLINES_DDL = ("CREATE TABLE headlines (\n  " + ",\n  ".join(f"{n} {t}" for n, t, _ in HEADLINE_COLUMNS)
                 + ",\n  PRIMARY KEY (run_uid, ord)\n)")


def cell_key(pid: str, metric: str, bs, mix, point) -> str:
    """The site's key of a cell's column."""
    return "|".join("" if x is None else str(x) for x in (pid, metric, bs, mix, point))


def headline_cells(run: RunResults) -> list[tuple[dict, float | None, bool | None]]:
    """The run's headline cells (each test's HEADLINES, as compare's summary table picks them):
    (column, value, steady state reached) with the column's key, part, test and label."""
    out = []
    order = {t: i for i, t in enumerate(TESTS)}
    shared, _ = shared_parts([run])
    for sp in shared:
        for n, (metric, bs, mix, point) in enumerate(headlines(sp.test)):
            row = next((r for r in sp.rows if r.metric == metric and (bs is None or r.block_size_bytes == bs)
                        and (mix is None or r.mix == mix) and (point is None or r.point == point)), None)
            if row is None:
                continue
            cell = row.label + (f" {SHORT[row.metric]}" if row.metric in SHORT else "")
            where = sp.test.upper() + (f" {sp.part.split('-', 1)[1]}" if "-" in sp.part else "")
            col = {"key": cell_key(sp.part, row.metric, row.block_size_bytes, row.mix, row.point), "test": sp.test,
                   "part": sp.part, "label": f"{sp.title}: {cell}", "short": f"{where}: {cell}", "unit": row.unit,
                   "kind": METRICS[row.metric].kind, "order": [order.get(sp.test, 99), sp.part, n]}
            out.append((col, row.values[0], sp.reached[0]))
    return out


def figure_cells(run: RunResults) -> list[tuple[dict, float | None, bool | None]]:
    """A run beside the PTS (ssdpts quick, trace replay): each of its figures' median as a headline
    column of its kind, as headline_cells gives a PTS run's (no steady state to mark)."""
    from ssdpts import kinds

    if run.kind is None:
        return []
    kind = kinds.KINDS[run.kind]
    out = []
    for n, f in enumerate(kind.workload().load(run.path).figures):
        col = {"key": cell_key(kind.name, f.key, None, None, None), "test": kind.name, "part": kind.name,
               "label": f"{kind.command}: {f.label}", "short": f"{kind.name.upper()}: {f.label}", "unit": f.unit,
               "kind": f.kind, "order": [len(TESTS) + list(kinds.KINDS).index(kind.name), kind.name, n]}
        out.append((col, f.median, None))
    return out


def headline_rows(run: RunResults) -> list[dict[str, Any]]:
    """The run's headline figures as the library keeps them (HEADLINE_COLUMNS), in the order the
    site's index shows its columns: the first is the first the index shows for the run."""
    cells = sorted(headline_cells(run) + figure_cells(run), key=lambda c: c[0]["order"])
    return [{"run_uid": run.uid, "ord": i, "key": col["key"], "test": col["test"], "label": col["short"],
             "value": value, "unit": col["unit"], "steady_state_reached": None if reached is None else int(reached)}
            for i, (col, value, reached) in enumerate(cells)]


def stored_headlines(con: sqlite3.Connection, first: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Each run's headline figures as the library keeps them, in order (``first``: only the first),
    by run_uid; a run added before the library kept them (schema 6) has none."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in con.execute("SELECT * FROM headlines" + (" WHERE ord = 0" if first else "") + " ORDER BY run_uid, ord"):
        out.setdefault(r["run_uid"], []).append(dict(r))
    return out
