"""Every PTS test ssdpts runs, in run order (PTS.md §3; WSAT first shows the fresh-out-of-box level).

A test is a module with: NAME and TITLE; ``parts(spec, capacity_bytes, ar_bytes, logical_block_size)``
(its steps, tracking variables and stop rule); its table record (``from_dict`` by the table's
``kind``) and ``build_table``; COMPARED (the metrics a comparison shows), HEADLINES (the rows of a
comparison's summary) and ``cell_label``. A new test is a new module listed here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from . import cbw, demand, dirth, hir, iops, lat, ocp, ocp_idle_gc, ocp_trim, tp, wsat, xsr
from .runspec import TEST_NAMES
from .tables import LevelTable, Table

TESTS: dict[str, ModuleType] = {m.NAME: m for m in (wsat, iops, tp, lat, hir, xsr, cbw, dirth, ocp_trim, ocp_idle_gc)}
assert tuple(TESTS) == TEST_NAMES, "the registry and RunSpec list the tests in the same order"

TABLES: dict[str, Any] = {cls.kind: cls for cls in (iops.IopsTable, tp.TpTable, lat.LatTable, wsat.WsatTable,
                                                    LevelTable, hir.HirTable, xsr.XsrTable, demand.DemandTable,
                                                    demand.PointsTable, ocp.OcpTable)}


def title(test: str) -> str:
    m = TESTS.get(test)
    return m.TITLE if m else test


def table_from_dict(d: dict | None) -> Table | None:
    """A summary.json table as its test's record; None for no table or a kind this ssdpts does not know."""
    if not d:
        return None
    cls = TABLES.get(d.get("kind"))
    return cls.from_dict(d) if cls else None


def compared(test: str) -> tuple[str, ...]:
    m = TESTS.get(test)
    return m.COMPARED if m else ()


def cell_label(test: str, metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    return TESTS.get(test, iops).cell_label(metric, bs, mix, point)


def headlines(test: str) -> tuple[tuple[str, int | None, str | None, str | None], ...]:
    """A test's headline cells (metric, block size, mix, point), None matching any."""
    m = TESTS.get(test)
    return tuple((*h, None) if len(h) == 3 else h for h in getattr(m, "HEADLINES", ()))
