"""The report side of a test kind (docs/architecture.md "A test kind"): what every consumer in
report/ asks of a kind, as hooks with a default each. A kind's module in pages/ declares
``KINDS = {name: ReportKind(...)}``; pages/__init__.py finds it by the name pts/registry gives
(``pages_module``), so that no consumer names a kind.

The hooks: ``sections`` (its pages), ``page_label`` (the printed pages' label), ``stimulus``,
``preconditioning`` and ``params`` (the lines its test header prints: docs/pts-reference.md#report-header, docs/pts-reference.md#extended),
``progress`` (the header's stop-rule lines where the generic steady-state ones do not apply: WSAT),
``toio`` (the demand intensity of a run that recorded none), ``details`` (the kind of value behind
each table cell, report/details.py), ``compare`` and ``repeats`` (its blocks of a comparison and a
repeats analysis, report/compare_doc.py; ``full_labels``) and ``ocptv`` (its validators and
diagnoses in the OCP Test & Validation output, report/ocptv.py), ``figures``, ``outlier_cells``,
``figure_value`` and ``figure_uses`` (its rows of the datasheet, report/datasheet.py) and ``verdict``
(its line of the steady-state overview, report/front.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

RunContext = Any  # report/context.RunContext (not imported: context.py asks a kind for its demand intensity)


def _none(*_: Any) -> None:
    return None


def _nothing(*_: Any) -> list:
    return []


@dataclass(frozen=True)
class Figure:
    """A figure of the datasheet (report/datasheet.py): what a buyer compares, from one part."""

    id: str
    label: str
    unit: str
    better: str  # "higher" or "lower"
    part: str  # summary part id
    key: str  # cell key ("" for WSAT figures)
    stat: str  # the statistic (Cell.ref)
    order: int = 0  # its place on the datasheet among every kind's figures


@dataclass(frozen=True)
class Details:
    """What the details behind each table cell show (report/details.py): a step's value
    (``value(measurement, workload)``), its unit and what it is."""

    value: Callable[[Any, Any], float]
    unit: str
    what: str


@dataclass(frozen=True)
class ReportKind:
    sections: Callable[[RunContext, list[str]], list]
    page_label: str | None = None  # None: "<title> Test – Report Page"
    stimulus: Callable[[RunContext, str, list[str]], str | None] = _none
    # (Preconditioning 1, Preconditioning 2) where the kind's differ from WIPC then the test loop (None: that one)
    preconditioning: Callable[[RunContext, str], tuple[str | None, str | None]] = lambda *_: (None, None)
    params: Callable[[RunContext, str], list[tuple[str, str]]] = _nothing
    progress: Callable[[RunContext, str, list[str]], list[tuple[str, str]] | None] = _none
    toio: Callable[[RunContext], tuple[Any, Any] | None] = _none  # None: the run's TC and QD
    details: Details | None = None  # what its cells' details show; None: its cells have none
    compare: Callable[[Any, Any], list] = _nothing  # (comparison, part) -> blocks
    repeats: Callable[[Any, Any], list | None] = _none  # (repeats, part) -> blocks; None: its cells' table
    full_labels: bool = False  # its cells' labels name the statistic (a repeats plot shows them whole)
    figures: tuple[Figure, ...] = ()  # its datasheet figures
    outlier_cells: tuple[tuple[int, str, str, str, str], ...] = ()  # (order, id prefix, label, part, cell key)
    # a figure's (value, flag, steady state reached, window text); None: no value here
    figure_value: Callable[[RunContext, Any, Figure, str], tuple | None] = _none
    figure_uses: Callable[[RunContext, Any, Figure], Callable | None] = _none  # which steps a figure comes from
    # a part's line of the steady-state overview where it has no steady-state rule: (rounds, verdict,
    # missed, window-average Cell); None: its steady state's or fixed plan's (report/front.py)
    verdict: Callable[[str, Any], tuple | None] = _none
    ocptv: Callable[[Any, str, Any, str | None], list[str]] = _nothing  # (emitter, step id, part, at) -> outcomes
