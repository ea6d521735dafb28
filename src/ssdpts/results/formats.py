"""Format versions of the run directory (docs/design.md#run-directory: ``"format": N`` in every JSON
document and every steps.jsonl line).

A reader upgrades a document of an older format, one version at a time, through MIGRATIONS
(format N -> N + 1) and refuses a newer one with a message saying which ssdpts to use. Writing
always uses FORMAT. Format 1 is the first format, so there is nothing to migrate yet: the first
change to a field's name, unit or shape raises FORMAT to 2 and adds the function that rewrites a
format-1 document (manifest, summary or step line, named by ``kind``) into format 2.
"""

from __future__ import annotations

import re

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..errors import UserError

FORMAT = 1
KINDS = ("manifest", "summary", "step")

Migration = Callable[[str, dict[str, Any]], dict[str, Any]]  # (kind, document of format N) -> format N + 1
MIGRATIONS: dict[int, Migration] = {}


def upgrade(doc: dict[str, Any], where: str, *, kind: str, migrations: dict[int, Migration] | None = None,
            current: int = FORMAT) -> dict[str, Any]:
    """``doc`` in the current format, or UserError (one line: which format, which ssdpts reads it).

    ``where`` names the document in messages (a path, or "<path> line N"). ``migrations`` and
    ``current`` are for tests of the mechanism; ssdpts itself uses MIGRATIONS and FORMAT."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    steps = MIGRATIONS if migrations is None else migrations
    fmt = doc.get("format")
    if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt < 1:
        raise UserError(f"{where} has format {fmt!r}; this ssdpts reads format {current}: it was not written by "
                        "ssdpts, or is damaged — use a matching ssdpts version or restore the file")
    if fmt > current:
        raise UserError(f"{where} has format {fmt!r}, newer than this ssdpts, which reads format {current} and "
                        f"older: use a matching ssdpts version (upgrade ssdpts) to read it")
    while fmt < current:
        step = steps.get(fmt)
        if step is None:
            raise UserError(f"{where} has format {fmt!r}; this ssdpts reads format {current} but cannot upgrade "
                            f"format {fmt}: use a matching ssdpts version")
        doc = {**step(kind, dict(doc)), "format": fmt + 1}
        fmt += 1
    return doc


# Words older ssdpts wrote into run files (the deviations, the host audit's recommendations) that cite
# the project's sources by labels a reader does not have: read, they cite the page of docs/ that now
# says the same (docs/design.md#words-cite). The files themselves are never changed.
_REWORDED = (
    (re.compile(r"\(seed 004 leaves it enabled\)"), "(left enabled)"),
    (re.compile(r"^seed 004: "), "docs/doctor.md: "),
    (re.compile(r"seed 004(?: §[\d.]+(?:[–-][\d.]+)?(?:, §[\d.]+)*)?"), "docs/compare.md#repeated-runs"),
    (re.compile(r"seed 002"), "docs/results-format.md"),
)


def reworded(text: str) -> str:
    """A recorded sentence with an old source label replaced by the docs page that says the same."""
    if "seed 00" not in text:
        return text
    for pattern, new in _REWORDED:
        text = pattern.sub(new, text)
    return text


class Document:
    """A record that is a document of the run directory (manifest.json, summary.json, a line of
    steps.jsonl): written as its ``to_dict`` under the current format, read by its ``from_dict``
    after formats.py has upgraded an older format (or refused a newer one)."""

    __slots__ = ()
    KIND: ClassVar[str]  # formats.KINDS: which migrations apply

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]):
        raise NotImplementedError

    def to_document(self) -> dict[str, Any]:
        """The document as the store writes it: the format first, then the record."""
        return {"format": FORMAT, **self.to_dict()}

    @classmethod
    def from_document(cls, doc: Mapping[str, Any], where: str):
        """The record of a document of any format this ssdpts reads (``where`` names it in messages)."""
        return cls.from_dict(upgrade(dict(doc), where, kind=cls.KIND))
