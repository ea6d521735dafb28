"""The results library: an SQLite database of finished runs, for queries and data-set export.

Run directories stay the source of truth (docs/design.md#read-the-store): the database is an index built from their
manifest.json and summary.json, and ``rebuild`` recreates it from them at any time. Only complete
runs are added; an interrupted, failed or still running run is refused with a message saying how
to finish it (its numbers would be a partial window and would pollute a data set).

Schema (version in ``PRAGMA user_version``; every column documented in docs/results-db.md):

    runs          one row per run: identity, device, host, settings (and the raw JSON they came from)
    parts         one row per test part: stop reason, steady-state verdict, rounds
    measurements  one row per measurement-window table cell: run, test, part, metric, block size,
                  mix, point, value, unit, steady_state_reached
    run_digests   what each run directory recorded when it was first added (results/seal.py
                  directory_digests), kept when the run is added again: 'ssdpts verify' and
                  'db add' name any later edit of a run the library holds
    headlines     one row per headline figure of a run, in the site index's order (library/headlines.py):
                  'db list' shows the first without reading the run directories

stdlib sqlite3 only; pyarrow is imported for Parquet export alone (the 'parquet' extra, not a dependency).
"""

from __future__ import annotations

import csv
from dataclasses import replace
from datetime import datetime, timedelta
import io
import json
import os
from pathlib import Path
import sqlite3
import sys
import time
from typing import TYPE_CHECKING, Any, Iterable

from ssdpts.atomic import write_atomic
from ssdpts.errors import UserError
from ssdpts.library.headlines import HEADLINE_COLUMNS, HEADLINES_DDL, headline_rows, stored_headlines
from ssdpts.results.cells import table_cells
from ssdpts.results.reader import RunResults, find_run_dirs, read_run
from ssdpts.results.registry import RUN_FIELDS

if TYPE_CHECKING:
    from ssdpts.results.verify.integrity import Problem, Result

# 2: measurements.point (the extended tests' cells); 3: run_digests; 4: parts' timing; 5: runs.precondition;
# 6: headlines
SCHEMA_VERSION = 6
ENV_DB = "SSDPTS_DB"
EXPORT_FORMATS = ("csv", "json", "parquet")

# (name, SQL type, description); docs/results-db.md mirrors them. A run's columns are the results
# registry's run fields (results/registry.py: one place knows each field), plus where the run was added.
_RUN_FIELDS = [f for f in RUN_FIELDS.values() if f.column]
RUN_COLUMNS: tuple[tuple[str, str, str], ...] = tuple(
    [(f.column, f.sql_decl, f.description) for f in _RUN_FIELDS[:2]]
    + [("path", "TEXT NOT NULL", "absolute path of the run directory when it was added")]
    + [(f.column, f.sql_decl, f.description) for f in _RUN_FIELDS[2:]])
PART_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_uid", "TEXT NOT NULL REFERENCES runs(run_uid) ON DELETE CASCADE", "the run"),
    ("part_id", "TEXT NOT NULL", "part id: iops, lat, wsat, tp-1024KiB, tp-128KiB, hir-precondition, "
                                 "hir-wait-states, xsr, cbw-precondition, cbw-demand-intensity, "
                                 "cbw-operating-points, dirth-..."),
    ("test", "TEXT NOT NULL", "wsat, iops, tp, lat, hir, xsr, cbw or dirth"),
    ("part", "TEXT", "part within the test ('', the TP block size, precondition, wait-states, ...)"),
    ("title", "TEXT", "title as in the report"),
    ("stop_reason", "TEXT", "steady-state, max-rounds, capacity-written, time-limit, complete (a fixed plan)"),
    ("steady_state_reached", "INTEGER", "1 reached, 0 NOT reached, NULL no criterion (WSAT, fixed plans)"),
    ("rounds_run", "INTEGER", "complete rounds (WSAT: samples)"),
    ("window_rounds", "TEXT", "JSON array: rounds of the measurement window"),
    ("purge_method", "TEXT", "purge method used before this part"),
    ("window_steps_recomputed", "INTEGER", "steps of the window (WSAT: samples) whose IOPS and bandwidth are fio's "
                                           "IO count over the block layer's span (docs/methodology.md)"),
    ("window_steps_marked", "INTEGER", "steps of the window (WSAT: samples) after a boundary over the PTS's limits"),
)
MEASUREMENT_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_uid", "TEXT NOT NULL REFERENCES runs(run_uid) ON DELETE CASCADE", "the run"),
    ("ord", "INTEGER NOT NULL", "position of the cell in the run's tables (stable export order)"),
    ("test", "TEXT NOT NULL", "wsat, iops, tp, lat, hir, xsr, cbw, dirth, quick (ssdpts quick) or replay (ssdpts trace replay)"),
    ("part", "TEXT NOT NULL", "part id (as parts.part_id); quick: the figure's key, e.g. seq1m-read-t1q64; replay: replay"),
    ("metric", "TEXT NOT NULL", "iops, read_mb_per_s, write_mb_per_s, lat_mean_us, lat_p99999_us, lat_max_us, "
                                "lat_max_in_window_us, final_window_iops; extended tests: burst_iops, baseline_iops, "
                                "mb_per_s, final_mb_per_s, peak_lat_mean_us, recovery_minutes, lat_p999_us, "
                                "lat_p9999_us, cpu_pct, prewrite_iops; ssdpts quick: mb_per_s, kiops (the median run's "
                                "value), rse (relative standard error, a fraction); ssdpts trace replay: completion_s, iops, "
                                "mb_per_s (the median run's value) and completion_s_rse, iops_rse, mb_per_s_rse"),
    ("block_size_bytes", "INTEGER", "block size, bytes (NULL for TP and the composite CBW pattern)"),
    ("mix", "TEXT", "R/W mix 'read/write' percent, e.g. 65/35; NULL for TP"),
    ("point", "TEXT", "extended tests: the cell's point (TC32/QD32, Max/Mid/Min, WS1/BL1, G1-G3, precondition); "
                      "NULL for the basic tests"),
    ("value", "REAL", "average over the measurement window (NULL: no value)"),
    ("unit", "TEXT NOT NULL", "IOPS, MB/s (10^6 B/s) or µs; ssdpts quick: MB/s, kIOPS, fraction; replay: s, IOPS, MB/s, fraction"),
    ("steady_state_reached", "INTEGER", "of the part: 1, 0 (NOT reached), NULL (WSAT)"),
)

DIGEST_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_uid", "TEXT PRIMARY KEY", "the run (not a reference to runs: the digests outlive a replaced entry)"),
    ("run_name", "TEXT NOT NULL", "its directory's name when it was first added"),
    ("added", "TEXT NOT NULL", "when it was first added (UTC)"),
    ("digests", "TEXT NOT NULL", "JSON object: name -> SHA-256 of everything the run directory recorded then (each "
                                 "field of manifest.json, steps.jsonl, summary.json, every file under fio/, device/, "
                                 "trace/)"),
)

# What an export row holds: the measurement and the run fields needed to use it alone.
EXPORT_RUN_FIELDS = ("run_uid", "run_name", "created", "device_vendor", "device_model", "device_serial",
                     "device_firmware", "device_transport", "capacity_bytes", "logical_block_size_bytes", "target_kind",
                     "target_path", "host_name", "host_kernel", "host_cpu_model", "ssdpts_version", "fio_version",
                     "executor", "pts_compliant", "profile", "threads", "iodepth", "active_range_pct", "step_seconds",
                     "pts_version", "ioengine", "data_pattern", "seed")
EXPORT_MEAS_FIELDS = ("test", "part", "metric", "block_size_bytes", "mix", "point", "value", "unit",
                      "steady_state_reached")
EXPORT_FIELDS = EXPORT_RUN_FIELDS + EXPORT_MEAS_FIELDS


def _ddl() -> list[str]:
    def table(name, cols, extra=""):
        body = ",\n  ".join(f"{n} {t}" for n, t, _ in cols)
        return f"CREATE TABLE {name} (\n  {body}{extra}\n)"

    return [
        table("runs", RUN_COLUMNS),
        table("parts", PART_COLUMNS, ",\n  PRIMARY KEY (run_uid, part_id)"),
        table("measurements", MEASUREMENT_COLUMNS, ",\n  PRIMARY KEY (run_uid, ord)"),
        "CREATE INDEX measurements_cell ON measurements (test, metric, block_size_bytes, mix, point)",
        "CREATE INDEX runs_model ON runs (device_model, device_firmware)",
        "CREATE INDEX runs_created ON runs (created)",
        *_digests_ddl(),
        HEADLINES_DDL,
    ]


def _digests_ddl() -> list[str]:
    body = ",\n  ".join(f"{n} {t}" for n, t, _ in DIGEST_COLUMNS)
    return [f"CREATE TABLE run_digests (\n  {body}\n)", "CREATE INDEX run_digests_name ON run_digests (run_name)"]


def default_path() -> Path:
    """$SSDPTS_DB, else $XDG_DATA_HOME/ssdpts/results.db, else ~/.local/share/ssdpts/results.db."""
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ssdpts" / "results.db"


# ---- values from a run --------------------------------------------------------------------------

def run_row(run: RunResults, path: Path) -> dict[str, Any]:
    return {"path": str(path.resolve()), **{f.column: f.stored(run) for f in _RUN_FIELDS}}


def part_rows(run: RunResults) -> list[dict[str, Any]]:
    out = []
    for pid in run.part_ids():
        p = run.summary.parts[pid]
        state = run.manifest.parts.get(pid)
        purge = state.purge if state is not None else None
        wsat_window = getattr(p.table, "final_window_minutes", ())
        out.append({
            "run_uid": run.uid, "part_id": pid, "test": p.test, "part": p.part, "title": p.title or None,
            "stop_reason": p.stop_reason, "steady_state_reached": None if p.reached is None else int(p.reached),
            "rounds_run": p.rounds_run if p.rounds_run is not None else p.samples,
            "window_rounds": json.dumps(list(p.window_rounds or wsat_window)),
            "purge_method": purge.method or None if purge is not None else None,
            "window_steps_recomputed": ((p.timing or {}).get("window") or {}).get("recomputed"),
            "window_steps_marked": ((p.timing or {}).get("window") or {}).get("marked"),
        })
    return out


def measurement_rows(run: RunResults) -> list[dict[str, Any]]:
    from ssdpts import kinds

    kind = kinds.of(run.path)
    if not kind.pts:  # ssdpts quick, trace replay: each figure's median and RSE, not PTS tables
        return kind.db_rows(run.path, run.uid)
    return [{"run_uid": run.uid, "ord": i, "test": c.test, "part": c.part, "metric": c.metric,
             "block_size_bytes": c.block_size_bytes, "mix": c.mix, "point": c.point, "value": c.value, "unit": c.unit,
             "steady_state_reached": None if c.steady_state_reached is None else int(c.steady_state_reached)}
            for i, c in enumerate(table_cells(run.summary))]


def load_complete(path: str | Path) -> tuple[RunResults, Result]:
    """A run that may go into the library, with what 'ssdpts verify' finds in it, or a UserError
    saying why not and what to do."""
    path = Path(path)
    run = read_run(path, need_summary="compare")
    if run.status != "complete":
        from ssdpts import kinds

        raise UserError(f"{path} is {run.status}, not complete: only complete runs go into the results library "
                        f"({kinds.of(path).resume_hint(path)}, then add it)")
    from ssdpts.results.verify.integrity import check

    res = check(path)
    return replace(run, damage=tuple(p.line() for p in res.problems)), res  # added, but marked damaged


# ---- the database -------------------------------------------------------------------------------

class ResultsDB:
    """An open results database. Use as a context manager, or call close()."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True):
        self.path = Path(path) if path is not None else default_path()
        if not self.path.exists():
            if not create:
                raise UserError(f"no results database at {self.path}: add runs with 'ssdpts db add RUN_DIR' "
                                f"or recreate it with 'ssdpts db rebuild DIR'")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(f"cannot create {self.path.parent} ({exc.strerror}): pass another --db PATH") from None
        try:
            # runs that end together (many drives at once) each add themselves: wait for the write lock
            self.con = sqlite3.connect(self.path, timeout=60)
            self.con.row_factory = sqlite3.Row
            self.con.execute("PRAGMA foreign_keys = ON")
            version = self.con.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                version = self._set_up()
        except sqlite3.DatabaseError as exc:
            if getattr(self, "con", None) is not None:
                self.con.close()
            if "locked" in str(exc):
                raise UserError(f"{self.path} stayed locked by another process for 60 s: run again when it is "
                                f"done, or pass another --db PATH") from None
            raise UserError(f"{self.path} is not an ssdpts results database ({exc}): pass another --db PATH, or "
                            f"recreate it with 'ssdpts db rebuild --db {self.path} DIR'") from None
        if version == -1:
            self.con.close()
            raise UserError(f"{self.path} is an SQLite database of something else (no ssdpts schema version): "
                            f"pass another --db PATH")
        if version > SCHEMA_VERSION:
            self.con.close()
            raise UserError(f"{self.path} has schema version {version}, newer than this ssdpts reads "
                            f"({SCHEMA_VERSION}): use a newer ssdpts, or rebuild it from the run directories "
                            f"with 'ssdpts db rebuild --db NEW_PATH DIR'")

    def _set_up(self) -> int:
        """Create the schema, or bring an older one up to this version in place (every version's
        change is additive), under SQLite's write lock: of two processes opening a new database at
        once, the second waits, then finds it made. The version found (-1: tables, but not ours)."""
        self.con.isolation_level = None  # the transaction is ours: DDL is not implicitly in one
        try:
            self.con.execute("BEGIN IMMEDIATE")
            version = self.con.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and self.con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]:
                version = -1
            elif version == 0:
                for stmt in _ddl():
                    self.con.execute(stmt)
                self.con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version < SCHEMA_VERSION:
                if version < 2:  # the point of the extended tests' cells
                    self.con.execute("ALTER TABLE measurements ADD COLUMN point TEXT")
                    self.con.execute("DROP INDEX IF EXISTS measurements_cell")
                    self.con.execute("CREATE INDEX measurements_cell ON measurements "
                                     "(test, metric, block_size_bytes, mix, point)")
                if version < 3:  # each run's digests (the runs already in it are recorded when added again)
                    for stmt in _digests_ddl():
                        self.con.execute(stmt)
                if version < 4:  # the parts' timing (NULL for the runs already in it until added again)
                    for col in ("window_steps_recomputed", "window_steps_marked"):
                        self.con.execute(f"ALTER TABLE parts ADD COLUMN {col} INTEGER")
                if version < 5:  # the preconditioning (NULL for the runs already in it until added again)
                    self.con.execute("ALTER TABLE runs ADD COLUMN precondition TEXT")
                if version < 6:  # the headline figures (none for the runs already in it until added again)
                    self.con.execute(HEADLINES_DDL)
                self.con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.con.execute("COMMIT")
            return -1 if version == -1 else max(version, SCHEMA_VERSION)
        except BaseException:
            if self.con.in_transaction:
                self.con.execute("ROLLBACK")
            raise
        finally:
            self.con.isolation_level = ""

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "ResultsDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing -------------------------------------------------------------------------------
    def _insert(self, table: str, rows: list[dict[str, Any]], cols: tuple) -> None:
        if not rows:
            return
        names = [c[0] for c in cols]
        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        self.con.executemany(sql, [tuple(r[n] for n in names) for r in rows])

    def _put(self, run: RunResults, path: Path, res: Result | None = None) -> tuple[RunResults, bool]:
        """Insert or replace one run (no commit): (the run, marked damaged where it differs from
        the digests the library recorded when it first added it; True when it replaced an entry).
        The digests first recorded are kept: adding an edited copy again does not launder it."""
        uid = run.uid
        if res is not None:
            now = res.digests()
            held = self.held(uid, run.name)
            if held is None:
                self.con.execute("INSERT INTO run_digests VALUES (?, ?, ?, ?)",
                                 (uid, run.name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                  json.dumps(now, sort_keys=True)))
            else:
                changed = held_changes(held, uid, now, self.path)
                run = replace(run, damage=run.damage + tuple(p.line() for p in changed))
        existed = self.con.execute("SELECT 1 FROM runs WHERE run_uid = ?", (uid,)).fetchone() is not None
        if existed:
            self.con.execute("DELETE FROM runs WHERE run_uid = ?", (uid,))  # cascades to parts, measurements
        self._insert("runs", [run_row(run, path)], RUN_COLUMNS)
        self._insert("parts", part_rows(run), PART_COLUMNS)
        self._insert("measurements", measurement_rows(run), MEASUREMENT_COLUMNS)
        self._insert("headlines", headline_rows(run), HEADLINE_COLUMNS)
        return run, existed

    def add(self, run_dirs: Iterable[str | Path]) -> list[tuple[RunResults, bool]]:
        """Add runs (all or nothing): every directory is checked first, so one incomplete run
        refuses the whole command with nothing written. Returns (run, replaced) per directory."""
        dirs = [Path(d) for d in run_dirs]
        loaded = [load_complete(d) for d in dirs]
        with self.con:
            return [self._put(run, d, res) for (run, res), d in zip(loaded, dirs)]

    def held(self, uid: str, name: str) -> dict[str, Any] | None:
        """The digests recorded when the run ``uid`` was first added, else those of a run of the same
        directory name (its identity fields were edited since); None when the library holds neither."""
        return _held(self.con, uid, name)

    # ---- reading -------------------------------------------------------------------------------
    @staticmethod
    def _where(model=None, firmware=None, serial=None, test=None, profile=None, since=None, until=None,
               alias: str = "runs") -> tuple[str, list]:
        cond, args = [], []
        for col, val in (("device_model", model), ("device_firmware", firmware), ("device_serial", serial)):
            if val:
                cond.append(f"{alias}.{col} LIKE ? ESCAPE '\\'")
                args.append("%" + val.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if profile:
            cond.append(f"{alias}.profile = ?")
            args.append(profile)
        if test:  # a PTS test (its parts), or a kind beside the PTS (its measurements: quick, replay)
            cond.append(f"(EXISTS (SELECT 1 FROM parts p WHERE p.run_uid = {alias}.run_uid AND p.test = ?) OR "
                        f"EXISTS (SELECT 1 FROM measurements m WHERE m.run_uid = {alias}.run_uid AND m.test = ?))")
            args += [test, test]
        if since:
            cond.append(f"{alias}.created >= ?")
            args.append(parse_date(since, "--since"))
        if until:
            cond.append(f"{alias}.created < ?")
            args.append(parse_date(until, "--until", end=True))
        return (" WHERE " + " AND ".join(cond)) if cond else "", args

    def list_runs(self, **filters) -> list[dict[str, Any]]:
        where, args = self._where(**filters)
        sql = f"SELECT * FROM runs{where} ORDER BY created, run_uid"
        return [dict(r) for r in self.con.execute(sql, args)]

    def headlines(self, first: bool = False) -> dict[str, list[dict[str, Any]]]:
        return stored_headlines(self.con, first)

    def parts(self, run_uid: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.con.execute("SELECT * FROM parts WHERE run_uid = ? ORDER BY rowid", (run_uid,))]

    def measurements(self, run_uid: str | None = None) -> list[dict[str, Any]]:
        if run_uid is None:
            cur = self.con.execute("SELECT * FROM measurements ORDER BY run_uid, ord")
        else:
            cur = self.con.execute("SELECT * FROM measurements WHERE run_uid = ? ORDER BY ord", (run_uid,))
        return [dict(r) for r in cur]

    def export_rows(self, *, metric: str | None = None, **filters) -> list[dict[str, Any]]:
        """One row per measurement with the run fields needed to use it alone (EXPORT_FIELDS)."""
        where, args = self._where(alias="r", **filters)
        if metric:
            where += (" AND " if where else " WHERE ") + "m.metric = ?"
            args.append(metric)
        cols = ", ".join([f"r.{c}" for c in EXPORT_RUN_FIELDS] + [f"m.{c}" for c in EXPORT_MEAS_FIELDS])
        where += (" AND " if where else " WHERE ") + "r.status = 'complete'"  # not damaged runs
        sql = (f"SELECT {cols} FROM measurements m JOIN runs r ON r.run_uid = m.run_uid{where} "
               f"ORDER BY r.created, r.run_uid, m.ord")
        return [dict(r) for r in self.con.execute(sql, args)]


def _held(con: sqlite3.Connection, uid: str, name: str) -> dict[str, Any] | None:
    for col, val in (("run_uid", uid), ("run_name", name)):
        row = con.execute(f"SELECT run_uid, run_name, added, digests FROM run_digests WHERE {col} = ? "
                          "ORDER BY added LIMIT 1", (val,)).fetchone()
        if row is not None:
            return {"run_uid": row[0], "run_name": row[1], "added": row[2], "digests": json.loads(row[3])}
    return None


def parse_date(text: str, option: str, *, end: bool = False) -> str:
    """'2026-01-31' or '2026-01-31T12:00[:00][Z]' -> the run-time format 'YYYY-MM-DDTHH:MM:SSZ'.
    A date alone with ``end`` means the end of that day (so --until includes it)."""
    t = text.strip().rstrip("Z").replace(" ", "T")
    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"):
        try:
            d = datetime.strptime(t, fmt)
        except ValueError:
            continue
        if fmt == "%Y-%m-%d" and end:
            d += timedelta(days=1)
        elif end:
            d += timedelta(seconds=1)
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")
    raise UserError(f"{option} {text!r} is not a date: write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)")


def record_run(run_dir: str | Path, db_path: str | Path | None = None) -> str:
    """Add a run that just finished to the library, for 'ssdpts run' / 'resume' to call at the end.
    Never raises: a results library problem must not fail a measured run. Returns one line to print."""
    try:
        with ResultsDB(db_path) as db:
            ((run, replaced),) = db.add([run_dir])
            if run.damage:
                return (f"added to the results library {db.path} as {run.uid}, marked DAMAGED: {run.damage[0]} "
                        f"(see 'ssdpts verify {run_dir}')")
            return f"added to the results library {db.path} as {run.uid}"
    except UserError as exc:
        return f"not added to the results library: {exc}"
    except (OSError, sqlite3.Error) as exc:
        return f"not added to the results library ({exc}): add it later with 'ssdpts db add {run_dir}'"


# ---- rebuild ---------------------------------------------------------------------------------------

def rebuild(db_path: str | Path | None, dirs: Iterable[str | Path]) -> tuple[list[RunResults], list[str]]:
    """Recreate the database from run directories: built in a new file, then renamed over the old
    one, so a failure leaves the old database untouched. Complete runs are added; everything else is
    skipped with the reason. Returns (runs added, skip messages)."""
    path = Path(db_path) if db_path is not None else default_path()
    found = find_run_dirs(dirs)
    tmp = path.with_name(f".{path.name}.rebuild-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {path.parent} ({exc.strerror}): pass another --db PATH") from None
    tmp.unlink(missing_ok=True)
    added: list[RunResults] = []
    skipped: list[str] = []
    db = ResultsDB(tmp)
    try:
        _keep_digests(path, db)
        seen: dict[str, Path] = {}
        with db.con:
            for d in found:
                try:
                    run, res = load_complete(d)
                except UserError as exc:
                    skipped.append(str(exc))
                    continue
                if run.uid in seen:
                    skipped.append(f"{d} is a copy of {seen[run.uid]} (same run): kept the first")
                    continue
                seen[run.uid] = d
                added.append(db._put(run, d, res)[0])
        db.close()
        os.replace(tmp, path)
    except BaseException:
        db.close()
        tmp.unlink(missing_ok=True)
        raise
    return added, skipped


def _keep_digests(old: Path, new: ResultsDB) -> None:
    """The digests the library at ``old`` recorded, into the one rebuilt beside it (a rebuild must
    not forget what the runs were when they were first added)."""
    if not old.is_file():
        return
    try:
        con = sqlite3.connect(f"file:{old}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT run_uid, run_name, added, digests FROM run_digests").fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return  # an older library, or not one: nothing recorded to keep
    with new.con:
        new.con.executemany("INSERT OR REPLACE INTO run_digests VALUES (?, ?, ?, ?)", rows)


def held_changes(held: dict[str, Any], uid: str, now: dict[str, str], db_path: Path) -> list[Problem]:
    """What differs between a run directory now (``uid``, ``now``: its digests) and what the library
    recorded of it when it first added it: one problem per entry (results/seal.py digest_changes)."""
    from ssdpts.results.verify.integrity import Problem
    from ssdpts.results.seal import digest_changes

    when = f"when the results library {db_path} added the run ({held['added']})"
    out = []
    if held["run_uid"] != uid:
        out.append(Problem("manifest.json", f"gives the run another identity (run_uid {uid}) than the results library "
                           f"{db_path} recorded for the run {held['run_name']} ({held['run_uid']})",
                           "its start time, host, target path or seed was edited"))
    for name, how in digest_changes(held["digests"], now):
        file, _, fld = name.partition(" ")
        what = {"differs": "differs from what it was", "is missing": "is missing, though it was there",
                "was added": "was not there"}[how]
        out.append(Problem(file, f"{fld + ' ' if fld else ''}{what} {when}",
                           "an edit made after the run was added: the library's entry is what the run was"))
    return out


def compare_with_library(res: Result, db_path: str | Path | None = None) -> tuple[list[Problem], str | None]:
    """A checked run directory (results/verify/integrity.py) against the digests the results library holds
    of it: (a problem naming each later edit, a note when the library cannot say). ``db_path`` None:
    the default library (docs/results-db.md "Where it lives"), consulted only when it exists."""
    path = Path(db_path) if db_path is not None else default_path()
    if not path.is_file():
        return [], (f"no results library at {path}: nothing recorded to compare with" if db_path is not None else None)
    try:
        uid = read_run(res.run_dir).uid
    except UserError:
        return [], None  # its own problems say why it cannot be read
    try:  # read only: verify changes nothing, not even an older library's schema
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
        try:
            held = _held(con, uid, res.run_dir.name)
        finally:
            con.close()
    except sqlite3.Error as exc:
        if "no such table" not in str(exc):
            raise UserError(f"{path} is not an ssdpts results library ({exc}): pass another --db PATH") from None
        held = None  # a library from before run_digests: it recorded nothing to compare with
    if held is None:
        return [], (f"the results library {path} does not hold this run: nothing recorded to compare with"
                    if db_path is not None else None)
    return held_changes(held, uid, res.digests(), path), None


# ---- export ------------------------------------------------------------------------------------------

_ARROW_TYPES = {"INTEGER": "int64", "REAL": "float64", "TEXT": "string"}


def _col_type(name: str) -> str:
    for cols in (RUN_COLUMNS, MEASUREMENT_COLUMNS):
        for n, t, _ in cols:
            if n == name:
                return _ARROW_TYPES[t.split()[0]]
    return "string"


def export(rows: list[dict[str, Any]], fmt: str, out: str | Path | None = None) -> Path | None:
    """Write export rows as csv, json (an array of objects) or parquet (needs pyarrow). ``out``
    None writes csv/json to standard output; parquet needs a file."""
    fmt = fmt.lower()
    if fmt not in EXPORT_FORMATS:
        raise UserError(f"unknown export format {fmt!r}: choose csv, json or parquet")
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError("parquet export needs pyarrow, which is not installed: pip install 'ssdpts[parquet]' "
                            "(or export --format csv or json, which need nothing more)") from None
        if out is None:
            raise UserError("parquet is binary: give a file with --out FILE.parquet")
        schema = pa.schema([(n, getattr(pa, _col_type(n))()) for n in EXPORT_FIELDS])
        table = pa.Table.from_pylist([{n: r.get(n) for n in EXPORT_FIELDS} for r in rows], schema=schema)
        out = Path(out)
        _write(out, None, lambda p: pq.write_table(table, p))
        return out
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(EXPORT_FIELDS), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else (repr(r[k]) if isinstance(r[k], float) else r[k]))
                        for k in EXPORT_FIELDS})
        text = buf.getvalue()
    else:
        text = json.dumps([{k: r.get(k) for k in EXPORT_FIELDS} for r in rows], indent=1, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return None
    out = Path(out)
    _write(out, text.encode("utf-8"), None)
    return out


def _write(path: Path, data: bytes | None, writer) -> None:
    try:
        write_atomic(path, writer if writer is not None else data, mkdir=True)
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror}): pick another --out") from None


def schema_sql() -> str:
    """The DDL of the current schema version (for docs and 'ssdpts db schema')."""
    return f"PRAGMA user_version = {SCHEMA_VERSION};\n" + ";\n".join(_ddl()) + ";\n"
