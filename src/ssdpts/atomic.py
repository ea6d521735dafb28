"""Files written whole or not at all: the one atomic-write helper of ssdpts (a leaf module, so that
every layer — run files, the results library, the site, the reports, the device markers, the host
audit's state — writes the same way).

The content goes to a temporary file beside the destination (same directory: same filesystem, so
the rename is atomic), then replaces it. ``durable``: the file and its directory are fsync'ed
before returning (run files and markers, which must survive a power cut with the measurement; the
library and reports can be made again). The temporary file is named after the destination and the
process (``.NAME.PID.tmp``: two processes writing one file never share one) and removed on failure.
Errors are OSError: each caller says in its own words what to do about them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable


def write_atomic(path: Path | str, data: bytes | str | Callable[[str], None], *, durable: bool = False,
                 mkdir: bool = False) -> None:
    """Replace ``path`` by ``data`` (bytes, text in UTF-8, or a function that writes the file whose
    name it is given, e.g. a Parquet writer)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if mkdir:
            path.parent.mkdir(parents=True, exist_ok=True)
        if callable(data):
            data(str(tmp))
            if durable:
                _fsync_file(tmp)
        else:
            with open(tmp, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        _fsync_file(path.parent, os.O_RDONLY)


def write_json_atomic(path: Path | str, doc, *, durable: bool = True, **dump) -> None:
    """A JSON document as ssdpts keeps one (indent 1, a final newline; ``dump``: more json.dumps
    options), written by :func:`write_atomic`."""
    write_atomic(path, json.dumps(doc, **{"indent": 1, "default": str, **dump}) + "\n", durable=durable)


def _fsync_file(path: Path, flags: int = os.O_RDONLY) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
