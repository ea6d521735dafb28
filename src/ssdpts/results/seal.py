"""What covers manifest.json, and the keyed seal over a run's records (docs/results-format.md
"Integrity records").

The round records (store.record_round) and summary.json's checksum (store.write_summary) prove that
a raw file, a round's step lines or the summary is the one ssdpts wrote, but they live in
manifest.json, which nothing covered: deleting a record, or editing the drive's identity or the
run's settings, passed. From integrity version 1 on, manifest.json carries ``integrity``:

* ``version``: the version of these records. A run directory that has it is of the current
  format: a record it lacks was removed, which is damage. One without it was made before (an older
  ssdpts), and its missing records are notes.
* ``manifest``: the SHA-256 of every top-level field of the manifest (each part of ``parts`` on its
  own: ``parts.<id>``), in the canonical JSON of :func:`canonical`. The store writes them in the same
  atomic write as the fields (store.RunStore._write_manifest), so every field is covered, also the
  ones a run changes as it goes (status, parts and their round records, resumptions): only the store
  changes them, and it writes their digests with them. A field edited, removed or added afterwards
  is named by 'ssdpts verify'.
* ``seal`` (when a seal key is configured: ``SSDPTS_SEAL_KEY`` names its file): an HMAC-SHA256,
  with the lab's key, of ``version`` and ``manifest``. Those digests cover every record, and the
  records cover the raw files, the step lines and summary.json: whoever edits a run and recomputes
  every digest still cannot make a seal without the key.

The results library keeps a run's :func:`directory_digests` when it is added (library/db.py), so
that a lab can tell its runs from edited copies even without a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import functools
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

from ..errors import UserError

VERSION = 1
KEY = "integrity"
ENV_KEY = "SSDPTS_SEAL_KEY"
ALG = "HMAC-SHA256"
MIN_KEY_BYTES = 16
# files of a run directory that are not the run's records: what 'ssdpts report' writes again at will
REWRITTEN = frozenset({"report.html", "report.pdf"})
# the run's own files at the top of a run directory (the manifest is digested field by field)
RESULT_FILES = frozenset({"steps.jsonl", "summary.json", "quick.json", "replay.json"})


def canonical(value: Any) -> bytes:
    """The one serialisation digests are taken of: JSON, keys sorted, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def _sha(value: Any) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def manifest_digests(doc: Mapping[str, Any]) -> dict[str, str]:
    """Field name -> SHA-256 of every top-level field but ``integrity``; each part of ``parts`` by itself."""
    out: dict[str, str] = {}
    for k, v in doc.items():
        if k == KEY:
            continue
        if k == "parts" and isinstance(v, Mapping):
            out.update({f"parts.{pid}": _sha(part) for pid, part in v.items()})
        else:
            out[k] = _sha(v)
    return out


def version_of(doc: Mapping[str, Any]) -> int | None:
    """The integrity version a manifest claims (None: made before integrity records)."""
    rec = doc.get(KEY)
    if rec is None:
        return None
    v = rec.get("version") if isinstance(rec, Mapping) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else 0  # 0: the record itself is damaged


# ---- the key ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    secret: bytes
    path: str

    @property
    def key_id(self) -> str:
        """Names the key without revealing it: the first 16 hex digits of a SHA-256 of it."""
        return hashlib.sha256(b"ssdpts seal key id\0" + self.secret).hexdigest()[:16]


def load_key(path: str | os.PathLike, where: str) -> Key:
    """The seal key in ``path`` (its bytes, surrounding white space dropped), or one line saying why not."""
    try:
        secret = Path(path).read_bytes().strip()
    except OSError as exc:
        raise UserError(f"{where} names {path}, which cannot be read ({exc.strerror}): give the file holding "
                        "this lab's seal key (docs/results-format.md \"Integrity records\")") from None
    if len(secret) < MIN_KEY_BYTES:
        raise UserError(f"{where} names {path}, which holds {len(secret)} bytes: a seal key needs at least "
                        f"{MIN_KEY_BYTES} (make one with 'head -c 32 /dev/urandom | base64 > {path}')")
    return Key(secret, str(path))


def configured_key() -> Key | None:
    """The key ``$SSDPTS_SEAL_KEY`` names, or None when it is not set (read once per process and
    file: a run keeps the key it started with)."""
    path = os.environ.get(ENV_KEY)
    return _key_at(path) if path else None


@functools.lru_cache(maxsize=4)
def _key_at(path: str) -> Key:
    return load_key(path, ENV_KEY)


def _mac(key: Key, version: int, digests: Mapping[str, str]) -> str:
    return hmac.new(key.secret, canonical({"version": version, "manifest": digests}), hashlib.sha256).hexdigest()


def writable(doc: Mapping[str, Any], key: Key | None, where: str) -> None:
    """Refuse (one line) to write a manifest whose records this ssdpts cannot keep: integrity records
    of a newer version, or a seal of a key that is not the one configured (the seal would break)."""
    version = version_of(doc)
    if version is not None and version > VERSION:
        raise UserError(f"{where} has integrity records version {version}, newer than this ssdpts writes "
                        f"({VERSION}): use a matching ssdpts version")
    seal = (doc.get(KEY) or {}).get("seal") if isinstance(doc.get(KEY), Mapping) else None
    if isinstance(seal, Mapping):
        if key is None:
            raise UserError(f"{where} is sealed with the seal key {seal.get('key_id')}: set {ENV_KEY} to that key's "
                            "file (writing it without the key would break its seal)")
        if key.key_id != seal.get("key_id"):
            raise UserError(f"{where} is sealed with the seal key {seal.get('key_id')}, and {ENV_KEY} names another "
                            f"({key.key_id}): set it to the key the run was sealed with")


def refresh(doc: dict[str, Any], key: Key | None) -> None:
    """Set ``doc["integrity"]`` for the manifest about to be written (a run made before integrity
    records keeps none). The digests are those of the document as it will read back."""
    if doc.get(KEY) is None:
        return
    plain = json.loads(json.dumps(doc, default=str))
    digests = manifest_digests(plain)
    rec: dict[str, Any] = {"version": VERSION, "manifest": digests}
    if key is not None:
        rec["seal"] = {"alg": ALG, "key_id": key.key_id, "mac": _mac(key, VERSION, digests)}
    doc[KEY] = rec


# ---- checking ----------------------------------------------------------------------------------------


def manifest_changes(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, how) for each field of a current-format manifest that differs from its recorded
    digest: "was changed", "was removed", "was added" (or the integrity record itself is unusable)."""
    rec = doc.get(KEY)
    recorded = rec.get("manifest") if isinstance(rec, Mapping) else None
    if not isinstance(recorded, Mapping):
        return [(KEY, "has no field digests (they were removed or damaged)")]
    now = manifest_digests(doc)
    out = [(k, "was removed") if k not in now else (k, "was changed") for k, v in recorded.items() if now.get(k) != v]
    out += [(k, "was added") for k in now if k not in recorded]
    return out


@dataclass(frozen=True)
class SealCheck:
    state: str  # "sealed" (checked and matching), "broken", "unchecked" (no key, or another key), "unsealed"
    text: str


def check_seal(doc: Mapping[str, Any], key: Key | None) -> SealCheck:
    rec = doc.get(KEY) if isinstance(doc.get(KEY), Mapping) else {}
    seal = rec.get("seal")
    if not isinstance(seal, Mapping):
        return SealCheck("unsealed", "not sealed")
    kid = str(seal.get("key_id"))
    if key is None:
        return SealCheck("unchecked", f"sealed with key {kid}: the seal cannot be checked without that key "
                                      f"({ENV_KEY} or --seal-key names its file)")
    if key.key_id != kid:
        return SealCheck("unchecked", f"sealed with key {kid}, not with the key given ({key.key_id}): the seal "
                                      "cannot be checked with it")
    # over the fields as they are now: an edit breaks it whether or not the digests were recomputed
    if seal.get("alg") == ALG and hmac.compare_digest(str(seal.get("mac")),
                                                      _mac(key, rec.get("version"), manifest_digests(doc))):
        return SealCheck("sealed", f"sealed with key {kid}: the seal matches")
    return SealCheck("broken", f"does not match its seal (key {kid})")


# ---- a whole run directory, for the results library ------------------------------------------------


def directory_digests(run_dir: Path, doc: Mapping[str, Any], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """Name -> SHA-256 of everything a run directory records: each field of manifest.json (its
    integrity record too) as ``manifest.json FIELD``, the result files at its top, and every file
    under its folders (fio/, device/, trace/). Reports and hidden files are left out: 'ssdpts report'
    writes them again. ``known``: digests already taken of files (relative path -> SHA-256)."""
    out = {f"manifest.json {k}": v for k, v in manifest_digests(doc).items()}
    if doc.get(KEY) is not None:
        out[f"manifest.json {KEY}"] = _sha(doc[KEY])
    known = known or {}
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir)
        if not path.is_file() or any(p.startswith(".") for p in rel.parts) or str(rel) in REWRITTEN:
            continue
        if len(rel.parts) == 1 and rel.name not in RESULT_FILES:
            continue
        out[str(rel)] = known.get(str(rel)) or str(file_digest(path).sha256)
    return out


@dataclass(frozen=True, slots=True)
class FileDigest:
    """A file's size and SHA-256 (file_digest), or as a manifest records it (None: not recorded)."""

    bytes: int | None
    sha256: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, d: Any) -> "FileDigest":
        return cls(d.get("bytes"), d.get("sha256")) if isinstance(d, Mapping) else cls(None, None)


def file_digest(path: Path) -> FileDigest:
    """The size and SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return FileDigest(size, h.hexdigest())


def digest_changes(held: Mapping[str, str], now: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, how) for each entry that differs between digests taken before and now: "differs",
    "was added" (in the run directory's order), then "is missing"."""
    out = [(k, "was added" if k not in held else "differs") for k, v in now.items() if held.get(k) != v]
    return out + [(k, "is missing") for k in held if k not in now]
