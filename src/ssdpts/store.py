"""RunStore: the only code that writes a run directory (docs/design.md#run-directory).

    manifest.json   format, versions, command line, RunSpec, target, host, purge records, status
    device/         raw collector output
    fio/<part>/     round-NNN.fio (job file), round-NNN.json (fio json+), round-NNN.log (console)
    steps.jsonl     one line per finished step, appended and fsync'd after every round
    summary.json    steady-state verdicts and measurement-window tables

Integrity: each round's raw files are recorded in the manifest with size and SHA-256, and its
step count, before its steps are appended (record_round); every manifest write carries the digest
of each of its fields, sealed with the lab's key when one is configured (results/seal.py);
results/verify/integrity.py checks them.

Durability: a round's step lines are written with one write() and fsync'd; JSON documents are
replaced atomically (temporary file, fsync, rename, directory fsync). Progress is derived from
steps.jsonl alone, so a crash between writing steps and updating the manifest cannot lose or
duplicate a step. A torn last line (SIGKILL or power loss mid-write) is dropped on reading.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
from pathlib import Path
import re
import shutil
import time
from collections.abc import Mapping
from typing import Any, Iterable, Iterator, Protocol

from . import atomic
from .errors import RunFailed, UserError
from .results import seal
from .results.formats import FORMAT, upgrade
from .results.records import Live, Manifest, Summary


class Record(Protocol):
    """What the store writes: a record that serialises itself (results/records.py: Summary,
    StepRecord), ``to_dict`` its fields and ``to_document`` the same under the current format."""

    def to_dict(self) -> dict[str, Any]: ...

    def to_document(self) -> dict[str, Any]: ...

MANIFEST = "manifest.json"
STEPS = "steps.jsonl"
SUMMARY = "summary.json"
LIVE = "live.json"  # the step in flight and its rate, about once a second while a run measures (docs/status.md)


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:40] or "x"


def disk_error(path: Path, exc: OSError, run_dir: Path | None = None) -> RunFailed:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return RunFailed(f"the results disk is full writing {path}: free space there, then run "
                         f"'ssdpts resume {run_dir or path.parent}' (everything saved so far is intact)")
    if exc.errno == errno.EROFS:
        return RunFailed(f"the results directory became read-only writing {path}: remount it read-write, then resume")
    return RunFailed(f"cannot write {path} ({exc.strerror}): check the results directory, then resume")


def write_json_atomic(path: Path, doc: Mapping[str, Any]) -> None:
    """A run file written whole and durably (atomic.py), a failure said as what to do about it. ``doc``:
    a document in its JSON form (a record's ``to_dict``), written as it is."""
    try:
        atomic.write_json_atomic(path, doc if isinstance(doc, dict) else dict(doc))
    except OSError as exc:
        raise disk_error(path, exc) from None


file_digest = seal.file_digest  # the size and SHA-256 of a file (seal.FileDigest)


def steps_digest(records: Iterable[Record]) -> str:
    """SHA-256 of step records in a canonical form (keys sorted, compact): the same for the lines a
    round appended and for the same lines read back or rewritten (resume's rewrite_steps)."""
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps(r.to_document(), sort_keys=True, separators=(",", ":"), default=str).encode())
        h.update(b"\n")
    return h.hexdigest()


def read_json(path: Path, what: str) -> Mapping[str, Any]:
    """A run directory's JSON document (manifest.json, summary.json, a kind's results) of the current
    format: the JSON edge. Readers make it a record (records.Manifest, records.Summary); the store
    changes the manifest's fields in it and writes it back (RunStore._manifest_document)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} does not exist: is {path.parent} an ssdpts run directory?") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is corrupt ({exc.__class__.__name__}): restore it from a backup or re-run") from None
    except OSError as exc:
        raise UserError(f"cannot read {path} ({exc.strerror})") from None
    if not isinstance(doc, dict):
        raise UserError(f"{path} is not a {what} (not a JSON object)")
    return upgrade(doc, str(path), kind="summary" if path.name == SUMMARY else "manifest")


def run_kind(run_dir: Path | str) -> str | None:
    """The manifest's ``kind`` ("quick", "replay"; None for a PTS run or no run directory)."""
    try:
        kind = json.loads((Path(run_dir) / MANIFEST).read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


def load_kind(run_dir: Path | str, kind: str, results: str, command: str) -> tuple[Manifest, Mapping[str, Any]]:
    """(manifest, results document) of a run directory of ``kind``; UserError when it is not one.
    The results document is the kind's own (workloads/: quick.json, replay.json), read by its reader
    (results/repeated.py)."""
    run_dir = Path(run_dir)
    man = Manifest.from_dict(read_json(run_dir / MANIFEST, "the run's manifest"))
    if man.kind != kind:
        raise UserError(f"{run_dir} is not a {kind} run (no kind '{kind}' in its manifest): give a directory "
                        f"made by '{command}'")
    return man, read_json(run_dir / results, f"the {kind} run's results")


class RunStore:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock_fd: int | None = None

    # ---- creation and opening -------------------------------------------------------------
    @classmethod
    def create(cls, out_dir: Path, label: str, manifest: Record) -> "RunStore":
        """A new run directory under ``out_dir``, locked, with its manifest (records.Manifest, as it
        writes itself, after the format, status and creation time; its digests last) and an empty
        steps.jsonl."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            base = out_dir / f"{stamp}-{_safe(label)}"
            path = base
            n = 1
            while True:
                try:
                    path.mkdir()
                    break
                except FileExistsError:
                    n += 1
                    path = Path(f"{base}-{n}")
            (path / "device").mkdir()
            (path / "fio").mkdir()
        except OSError as exc:
            raise UserError(f"cannot create the run directory under {out_dir} ({exc.strerror}): pick another --out") from None
        store = cls(path)
        store.lock()
        # a run of the current format: every field covered by its digest (results/seal.py)
        doc = {"format": FORMAT, "status": "running", "created": utc_now(), **manifest.to_dict(), seal.KEY: {}}
        store._write_manifest(doc)
        (path / STEPS).touch()
        return store

    @classmethod
    def open(cls, path: Path) -> "RunStore":
        path = Path(path)
        if not path.is_dir():
            raise UserError(f"{path} is not a directory: give a run directory made by 'ssdpts run'")
        store = cls(path)
        store._manifest_document()  # validates format
        return store

    def lock(self) -> None:
        """One ssdpts process per run directory (a second 'resume' must not run fio alongside)."""
        fd = os.open(self.path / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(f"{self.path} is in use by another ssdpts process: wait for it or stop it first") from None
        self._lock_fd = fd

    def unlock(self) -> None:
        """Release the lock (idempotent). flock belongs to the open file, so without this a process
        that ran a store could never lock the same run again (e.g. resume after an interrupt)."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.unlock()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # ---- manifest ---------------------------------------------------------------------------
    def manifest(self) -> Manifest:
        """manifest.json, read (records.Manifest; its ``doc`` the document as recorded)."""
        return Manifest.from_dict(self._manifest_document())

    def _manifest_document(self) -> dict[str, Any]:
        """manifest.json as its JSON document: what the store changes fields of, in place, and writes
        back with its digests (_write_manifest); every reader reads the record (``manifest``)."""
        return dict(read_json(self.path / MANIFEST, "run manifest"))

    def _write_manifest(self, doc: dict[str, Any]) -> None:
        """manifest.json, its integrity record (each field's digest, the seal) written with it."""
        key = seal.configured_key()
        seal.writable(doc, key, str(self.path / MANIFEST))
        seal.refresh(doc, key)
        write_json_atomic(self.path / MANIFEST, doc)

    def update_manifest(self, **changes: Any) -> None:
        """The manifest with the fields named changed (each value in its JSON form), and ``updated``."""
        doc = self._manifest_document()
        doc.update(changes)
        doc["updated"] = utc_now()
        self._write_manifest(doc)

    def set_part(self, part_id: str, **changes: Any) -> None:
        doc = self._manifest_document()
        parts = doc.setdefault("parts", {})
        parts.setdefault(part_id, {}).update(changes)
        doc["updated"] = utc_now()
        self._write_manifest(doc)

    # ---- integrity records (checked by results/verify/integrity.py) -----------------------------------
    def record_round(self, part_id: str, name: str, paths: list[Path], records: list[Record]) -> None:
        """Record round ``name`` ("wipc", "round-003") of ``part_id``: the raw files it wrote, with size
        and SHA-256, and the number and SHA-256 (steps_digest) of the step lines it is about to append.
        Called before append_steps, so steps.jsonl stays the commit point: a crash in between leaves
        a recorded round without steps, which resume measures again (forget_unbacked_rounds)."""
        files = {self.rel(p): file_digest(p).to_dict() for p in paths if p.exists()}
        doc = self._manifest_document()
        rounds = doc.setdefault("parts", {}).setdefault(part_id, {}).setdefault("rounds", {})
        rounds[name] = {"steps": len(records), "steps_sha256": steps_digest(records),
                        "files": files}
        doc["updated"] = utc_now()
        self._write_manifest(doc)

    def forget_unbacked_rounds(self) -> list[str]:
        """Drop the records of rounds with fewer step lines than they recorded (the round in flight
        when the run stopped, or rounds cut off steps.jsonl): resume measures them again."""
        counts: dict[str, int] = {}
        for _where, s in self.step_documents():
            counts[s.get("fio_json")] = counts.get(s.get("fio_json"), 0) + 1
        doc = self._manifest_document()
        dropped = []
        for pid, part in (doc.get("parts") or {}).items():
            rounds = part.get("rounds") if isinstance(part, dict) else None
            for name, rec in list((rounds or {}).items()):
                raw = next((f for f in rec.get("files") or {} if f.endswith(".json")), None)
                if counts.get(raw, 0) < int(rec.get("steps", 0)):
                    del rounds[name]
                    dropped.append(f"{pid} {name}")
        if dropped:
            doc["updated"] = utc_now()
            self._write_manifest(doc)
        return dropped

    # ---- steps --------------------------------------------------------------------------------
    def append_steps(self, records: list[Record]) -> None:
        """The round's step records, each as it writes itself (StepRecord.to_document), one line each."""
        if not records:
            return
        data = "".join(json.dumps(r.to_document(), separators=(",", ":"), default=str) + "\n" for r in records)
        path = self.path / STEPS
        try:
            self._repair_tail(path)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(data.encode())
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise disk_error(path, exc) from None

    @staticmethod
    def _repair_tail(path: Path) -> None:
        """A last line without its newline (SIGKILL or power loss mid-write) must not swallow the
        next record: terminate it when it is a whole record (step_documents reads it), else cut it off
        (step_documents ignores it). Otherwise the next append would make it a corrupt middle line."""
        try:
            with open(path, "rb+") as f:
                size = f.seek(0, os.SEEK_END)
                if size == 0:
                    return
                f.seek(size - 1)
                if f.read(1) == b"\n":
                    return
                f.seek(0)
                raw = f.read()
                cut = raw.rfind(b"\n") + 1
                try:
                    json.loads(raw[cut:])
                    f.write(b"\n")
                except (json.JSONDecodeError, UnicodeDecodeError):
                    f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())
        except FileNotFoundError:
            return

    def step_documents(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """steps.jsonl's lines as JSON documents of the current format, each with where it is ("<path>
        line N"): results/steprecord.read_steps makes them records (StepRecord.from_dict)."""
        path = self.path / STEPS
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return
        lines = raw.split(b"\n")
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if n == len(lines):  # torn last line: the write in flight when the process died
                    return
                raise UserError(f"{path} line {n} is corrupt: restore the file or remove that line, then retry") from None
            if not isinstance(rec, dict):
                raise UserError(f"{path} line {n} is not a format-{FORMAT} step record: use a matching ssdpts version")
            if rec.get("format") != FORMAT:
                rec = upgrade(rec, f"{path} line {n}, not a format-{FORMAT} step record,", kind="step")
            yield f"{path} line {n}", rec

    def count_steps(self) -> int:
        """How many step lines steps.jsonl holds."""
        return sum(1 for _ in self.step_documents())

    def rewrite_steps(self, records: list[Record]) -> None:
        """Replace steps.jsonl (used by resume to drop an incomplete round), atomically: each record
        as it writes itself (StepRecord.to_document)."""
        path = self.path / STEPS
        try:
            atomic.write_atomic(path, "".join(json.dumps(r.to_document(), separators=(",", ":"), default=str) + "\n"
                                              for r in records),
                                durable=True)
        except OSError as exc:
            raise disk_error(path, exc) from None

    # ---- fio files and summary ------------------------------------------------------------
    def fio_paths(self, part_id: str, name: str) -> tuple[Path, Path]:
        d = self.path / "fio" / _safe(part_id)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise disk_error(d, exc, self.path) from None
        return d / f"{name}.fio", d / f"{name}.json"

    def free_bytes(self) -> int:
        try:
            return shutil.disk_usage(self.path).free
        except OSError:
            return 0

    def ensure_space(self, needed_bytes: int) -> None:
        """Stop cleanly *before* the results disk fills: a round that cannot be saved would be
        measured for nothing, and a full disk could leave no room to record the stop itself."""
        free = self.free_bytes()
        if free < needed_bytes:
            raise RunFailed(f"the results disk has {free / 1e6:.1f} MB free and the next round needs about "
                            f"{needed_bytes / 1e6:.1f} MB: free space under {self.path.parent}, then run "
                            f"'ssdpts resume {self.path}' (everything saved so far is intact)")

    def rel(self, p: Path) -> str:
        return str(Path(p).relative_to(self.path))

    def write_summary(self, summary: Record) -> None:
        """summary.json (the record as it writes itself: Summary.to_document), then its size and
        SHA-256 in the manifest (``summary_file``): a reader trusts a summary whose checksum is the
        one recorded, and recomputes any other from its steps (results/verify/integrity.py)."""
        path = self.path / SUMMARY
        write_json_atomic(path, summary.to_document())
        try:
            self.update_manifest(summary_file=file_digest(path).to_dict())
        except OSError as exc:
            raise disk_error(path, exc, self.path) from None

    def summary(self) -> Summary:
        """summary.json, read (records.Summary)."""
        return Summary.from_dict(self.summary_document())

    def summary_document(self) -> Mapping[str, Any]:
        """summary.json as written: what verification compares with what its steps give
        (results/verify/proof.py trusted_summary); readers read the record (``summary``)."""
        return read_json(self.path / SUMMARY, "run summary")

    def write_live(self, live: Live) -> None:
        """live.json: what the step in flight measures now (records.Live), for 'ssdpts status' and its
        metrics. Not kept (no digest, not durable): a failure to write it never stops a measurement."""
        try:
            atomic.write_atomic(self.path / LIVE, json.dumps(live.to_dict(), separators=(",", ":")))
        except OSError:
            pass

    def clear_live(self) -> None:
        """The run no longer measures: nothing live to show."""
        try:
            (self.path / LIVE).unlink()
        except OSError:
            pass

    def write_device_file(self, name: str, text: str) -> Path:
        p = self.path / "device" / name
        try:
            p.write_text(text)
        except OSError as exc:
            raise disk_error(p, exc, self.path) from None
        return p
