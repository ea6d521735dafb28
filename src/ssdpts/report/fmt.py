"""Numbers and texts in documents, formatted in one place (report, comparisons, one-page documents)."""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..results.registry import fmt_value as _fmt_value
from ..pts.units import fmt_capacity

NA = "not available"


def fmt_value(v: float | None, unit: str = "") -> str:
    """A measured value for a table cell, formatted as in comparisons (ssdpts.compare.fmt_value);
    no value (None or NaN): "—"."""
    return _fmt_value(None if isinstance(v, float) and math.isnan(v) else v, unit, missing="—")


def fmt_fixed(v: float | None, digits: int) -> str:
    """A number with ``digits`` decimals and thousands separators; "—" without one."""
    return "—" if v is None else f"{v:,.{digits}f}"


def fmt_figure(v: float | None) -> str:
    """A one-page document's figure: 12,345 / 123.4 / 1.23; "n/a" without one."""
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"


def fmt_bytes10(n: float | None) -> str:
    """Capacities in base 10 (docs/pts-reference.md#units), with the exact byte count."""
    if n is None:
        return NA
    return f"{fmt_capacity(n)} ({int(n):,} bytes)" if n >= 1e6 else f"{int(n):,} bytes"


def fmt_rounds(rounds: Sequence[int]) -> str:
    rounds = list(rounds)
    if not rounds:
        return "none"
    if rounds == list(range(rounds[0], rounds[-1] + 1)) and len(rounds) > 2:
        return f"{rounds[0]}–{rounds[-1]}"
    return ", ".join(str(r) for r in rounds)


def fmt_time(iso: str | None) -> str:
    if not iso:
        return NA
    return iso.replace("T", " ").replace("Z", " UTC")


def na(v: Any) -> str:
    """A field's text, "not available" when it has none."""
    if v is None or v == "":
        return NA
    return str(v)


def or_default(v, default):
    return default if v is None else v


def pct_of(a: float | None, avg: float | None) -> str:
    """``a`` as a percentage of ``avg``: "8.4%"."""
    if a is None or not avg:
        return "—"
    return f"{100 * a / avg:.1f}%"


def limit_text(measured: float, limit: float, ok: bool, avg: float, unit: str) -> str:
    """'1,234 ≤ 2,935 (8.4%)' when it passes, '3,329 > 2,935 (22.7%)' when it fails: the printed
    inequality always holds."""
    return f"{fmt_value(measured, unit)} {'≤' if ok else '>'} {fmt_value(limit, unit)} ({pct_of(measured, avg)})"
