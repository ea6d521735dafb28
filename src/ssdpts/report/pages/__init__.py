"""The pages of each test of a run's report, one module per test kind (iops, tp, lat, wsat, hir,
xsr, demand: CBW and DIRTH, ocp: the OCP checks), on the skeleton they share (common.py, extended.py),
and the run's own sections (boundaries, temperature, latmon). Each kind's module declares its report
side, ``KINDS = {name: kind.ReportKind(...)}``; :func:`of` finds it lazily by the module name
pts/registry gives, so that the report's consumers iterate kinds and call their hooks."""

from __future__ import annotations

import importlib

from ...pts.registry import pages_module
from .kind import ReportKind

_REGISTERED: dict[str, ReportKind] = {}


def register(test: str, kind: ReportKind) -> None:
    """A test kind's report side given directly (a kind whose module is not in pages/: tests)."""
    _REGISTERED[test] = kind


def unregister(test: str) -> None:
    _REGISTERED.pop(test, None)


def of(test: str) -> ReportKind | None:
    """The report side of a test kind; None for a test this ssdpts does not know."""
    if test in _REGISTERED:
        return _REGISTERED[test]
    name = pages_module(test)
    if name is None:
        return None
    module = importlib.import_module(f"{__name__}.{name}")
    return getattr(module, "KINDS", {}).get(test)
