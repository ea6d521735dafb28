"""Every kind of test ssdpts runs, in run order (docs/pts-reference.md#tests; WSAT first shows the fresh-out-of-box
level): the registry every consumer iterates instead of naming a test (docs/architecture.md "A test
kind").

A test kind is its module here, pure (docs/architecture.md), found by catalog.py (no list of them
here): NAME, TITLE and ORDER (its place in the run order); ``parts(spec, capacity_bytes, ar_bytes,
logical_block_size)`` (its steps, tracking variables and stop rule); its table records (TABLES,
each read back by the table's ``kind``) and ``build_table``; COMPARED (the metrics a comparison
shows), HEADLINES (the rows of a comparison's summary) and ``cell_label``; optionally OPTIONS (the
options its report reads, with their value in a run recorded without them; NULLABLE: those whose
recorded null means something), ``summary(part)`` (the terminal's lines at a run's end; by default
its headline cells), ``site(part)`` (its data on the results site beyond its cells: how a
comparison draws it, ``view``), CELL_ORDER ("bs-mix": a matrix by block size, then mix) and PAGES
(the name of its pages' module in report/pages/, by default its own name). Its report side is that
module's ``KINDS`` (report/pages/__init__.py finds it lazily). A new test is a new module here and
its pages' module; tests may :func:`register` one that is no file.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from . import catalog
from .tables import Headline, LevelTable, Table
from .units import fmt_block_size


def _kind(name: str, module: str) -> ModuleType:
    m = importlib.import_module(f"{__package__}.{module}")
    assert m.NAME == name, f"pts/{module}.py: catalog.py read NAME {name!r}, the module says {m.NAME!r}"
    return m


TESTS: dict[str, ModuleType] = {name: _kind(name, module) for name, module in catalog.KINDS.items()}

# summary.json's table records by their kind: each kind's, and the steady level a preconditioning part reaches
TABLES: dict[str, Any] = {cls.kind: cls for cls in (LevelTable, *(c for m in TESTS.values() for c in getattr(m, "TABLES", ())))}


# The PTS outer loop: every R/W mix a test declares (MIXES, read percent), reads first as the PTS orders them
MIX_ORDER = tuple(f"{r}/{100 - r}" for r in sorted({r for m in TESTS.values() for r in getattr(m, "MIXES", ())},
                                                     reverse=True))


def register(module: ModuleType, *tables: Any) -> None:
    """Add a test kind that is no module in pts/ (tests): after the others, with its table records
    (its TABLES, and ``tables``)."""
    TESTS[module.NAME] = module
    catalog.KINDS[module.NAME] = module.__name__
    TABLES.update({cls.kind: cls for cls in (*getattr(module, "TABLES", ()), *tables)})


def unregister(name: str) -> None:
    TESTS.pop(name, None)
    catalog.KINDS.pop(name, None)


def discover() -> list[str]:
    """Find kinds added to pts/ (or to its ``__path__``) since ssdpts started, and register them in
    their run order; returns their names."""
    new = {name: module for name, module in catalog.scan().items() if name not in TESTS}
    for name, module in new.items():
        register(_kind(name, module))
    order = sorted(TESTS, key=lambda n: getattr(TESTS[n], "ORDER", float("inf")))
    for name in order:  # run order again: the ones found by ORDER, any register()-ed after them
        TESTS[name] = TESTS.pop(name)
        catalog.KINDS[name] = catalog.KINDS.pop(name)
    return list(new)


def options() -> dict[str, Any]:
    """Every option a test kind's report reads, with its value in a run recorded without it."""
    out: dict[str, Any] = {}
    for m in TESTS.values():
        out.update(getattr(m, "OPTIONS", {}))
    return out


def option(doc, name: str) -> Any:
    """An option of a recorded run (its run_spec ``doc``): the recorded value, or the value of a run
    recorded without it (a null or empty one reads as not recorded, unless the kind says a null
    means something: NULLABLE)."""
    defaults = options()
    if name not in defaults:
        raise KeyError(f"no test kind declares the option {name!r}")
    v = doc.get(name, defaults[name])
    nullable = {n for m in TESTS.values() for n in getattr(m, "NULLABLE", ())}
    if v is None and name in nullable:
        return None
    return defaults[name] if v is None or v == [] or v == () else v


def summary(part) -> list:
    """The terminal's lines of a finished part (``part``: a results PartResult with a table): its
    kind's ``summary``, else its headline cells (:class:`Headline`; a preconditioning part without
    one: the level it reached)."""
    m = TESTS.get(part.test)
    own = getattr(m, "summary", None)
    lines = own(part) if own is not None and part.table is not None else None
    if lines is not None:
        return lines
    cells = part.table.cells() if part.table is not None else []
    shown = [c for c in cells if any(c.metric == m_ and bs in (None, c.block_size_bytes) and mix in (None, c.mix)
                                     and point in (None, c.point) for m_, bs, mix, point in headlines(part.test))]
    if not shown and isinstance(part.table, LevelTable):  # a preconditioning part: the level it reached
        shown = cells
    return [Headline(cell_label(part.test, c.metric, c.block_size_bytes, c.mix, c.point), c.metric, c.value)
            for c in shown]


def site(part) -> dict:
    """A part's data on the results site beyond its cells (its kind's ``site``; none by default)."""
    own = getattr(TESTS.get(part.test), "site", None)
    return own(part) if own is not None else {}


def cell_order(test: str, metric_rank: int, bs: int | None, mix: str | None) -> tuple:
    """A table cell's place in the PTS order (results/cells.py; the extended tests' cells, which name a
    point, keep their table's order): by mix then block size, largest first (the LAT table), or a
    kind's matrix by block size then mix (CELL_ORDER "bs-mix": the IOPS test)."""
    mi = MIX_ORDER.index(mix) if mix in MIX_ORDER else 99
    b = -(bs or 0)
    by_bs = getattr(TESTS.get(test), "CELL_ORDER", "mix-bs") == "bs-mix"
    return (metric_rank, b, mi) if by_bs else (metric_rank, mi, b)


def pages_module(test: str) -> str | None:
    """The name of the module in report/pages/ that holds a test kind's report side."""
    m = TESTS.get(test)
    return None if m is None else getattr(m, "PAGES", m.__name__.rsplit(".", 1)[-1])


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
    m = TESTS.get(test)
    if m is not None:
        return m.cell_label(metric, bs, mix, point)
    return f"RND {fmt_block_size(bs)} {mix}" if bs else str(mix)  # a test this ssdpts does not know


def headlines(test: str) -> tuple[tuple[str, int | None, str | None, str | None], ...]:
    """A test's headline cells (metric, block size, mix, point), None matching any."""
    m = TESTS.get(test)
    return tuple((*h, None) if len(h) == 3 else h for h in getattr(m, "HEADLINES", ()))
