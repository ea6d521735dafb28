"""What words a reader of ssdpts may not meet (docs/design.md#words-cite): a source cited by a
label only the project's makers know, a work-item number, a design document that is not in the
repository. Text shown to a user cites the standard and its section, or a page of docs/."""

from __future__ import annotations

import re

FORBIDDEN = re.compile(
    r"(?i:\bseed[ -]?00\d\b)"  # the project's source documents by number
    r"|(?i:\bissue #?\d+\b)"  # work items
    r"|\bDESIGN\.md\b|\bPTS(?:-EXTENDED)?\.md\b"  # documents outside the repository
    r"|(?i:\bconvention \d+\b)")  # the design's rules by number


# What a user reads (help, messages, reports, the site) cites a page written for users, not the
# design documents the code's own comments cite (docs/design.md, docs/architecture.md)
FOR_USERS = re.compile(FORBIDDEN.pattern + r"|\bdocs/design\.md\b|\bdocs/architecture\.md\b")


def unreadable_words(text: str, *, user: bool = False) -> list[str]:
    """Each forbidden phrase in ``text`` with a little of what surrounds it; ``user``: text a user
    reads, held to cite the pages written for users too."""
    pattern = FOR_USERS if user else FORBIDDEN
    return [text[max(m.start() - 40, 0):m.end() + 40].replace("\n", " ") for m in pattern.finditer(text)]
