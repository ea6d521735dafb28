"""Printing results for people (rich tables, and text tables that fit the terminal); machines read summary.json."""

from __future__ import annotations

from dataclasses import dataclass

from ..pts.tables import Headline, TextTable, fmt_number


def print_summary(store, summary: dict) -> None:
    """The results of a run that just ended (``summary``: what the runner wrote to summary.json):
    every part's steady-state verdict and, for every kind of test, its kind's lines
    (pts/registry.summary: a table, a line of text, or its headline cells)."""
    from rich.console import Console

    from ..pts.registry import summary as kind_summary
    from ..results.records import Summary

    results = Summary.from_dict(summary)
    c = Console()
    c.print(f"[bold]run directory:[/] {store.path}")
    if results.deviations:
        c.print("[yellow]not PTS compliant:[/] " + "; ".join(results.deviations))
    for part in results.parts.values():
        ss = part.steady_state
        if ss is not None:
            verdict = ("[green]steady state reached[/]" if ss.reached else "[red bold]steady state NOT reached[/]")
            c.print(f"[bold]{part.title}[/]: {verdict} (window rounds {list(ss.window_rounds)}, "
                    f"{part.rounds_run or 0} rounds run)")
        if part.table is None:
            continue
        headlines = []
        for line in kind_summary(part):
            if isinstance(line, str):
                c.print(line)
            elif isinstance(line, TextTable):
                c.print(_rich_table(line))
            else:
                headlines.append(line)
        if headlines:
            c.print(f"[bold]{part.title}[/]: " + "; ".join(_headline(h) for h in headlines))


def _rich_table(t: TextTable):
    from rich.table import Table

    out = Table(title=t.title)
    for name, justify in t.columns:
        out.add_column(name, justify=justify)
    for row in t.rows:
        out.add_row(*row)
    return out


def _headline(h: Headline) -> str:
    """A headline cell as "label [statistic] value unit" (the unit, its digits and the statistic's short
    name from the results registry)."""
    from ..results.registry import METRICS, unit_of

    unit = unit_of(h.metric)
    short = METRICS[h.metric].short if h.metric in METRICS and unit == "µs" else ""
    return f"{h.label}{' ' + short if short else ''} {figure(h.value, unit)}"


def figure(value: float | None, unit: str) -> str:
    """A figure and its unit as the terminal writes them: IOPS and minutes whole, percentages signed
    with two decimals, fractions with three, the rest with one; thousands separated."""
    if value is None:
        return f"— {unit}"
    if unit == "%":
        return f"{value:+.2f} %"
    return f"{fmt_number(value, 0 if unit in ('IOPS', 'min') else 3 if unit == 'fraction' else 1)} {unit}"


# ---- a table that fits the terminal ----------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """A column of a fitted table: its key in the rows, its header (or its forms, as a cell's), the
    fewest characters its cells keep when shortened (0: never shortened), and where they are cut:
    "middle" (a name: its start and end kept around "…") or "end"."""

    key: str
    header: str | tuple[str, ...]
    least: int = 0
    cut: str = "middle"


def shorten(text: str, width: int, where: str = "middle") -> str:
    """``text`` in ``width`` terminal cells at most: cut in its middle (3/5 of what stays from its
    start) or at its end, "…" where it was cut."""
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    if width < 1:
        return ""
    room = width - 1
    if where == "end":
        return _start(text, room).rstrip() + "…"
    head = _start(text, (room * 3 + 4) // 5)
    return head.rstrip() + "…" + _start(text[::-1], room - cell_len(head))[::-1].lstrip()


def _start(text: str, width: int) -> str:
    """The longest start of ``text`` in ``width`` terminal cells."""
    from rich.cells import cell_len

    used = 0
    for i, ch in enumerate(text):
        used += cell_len(ch)
        if used > width:
            return text[:i]
    return text


def fit_table(columns: list[Column], rows: list[dict], width: int | None = None,
              narrowing: tuple = ()) -> tuple[list[str], list[str]]:
    """A text table's lines (header, rule, rows: each column as wide as its widest cell, two spaces
    between) of ``width`` terminal cells at most, and the headers of the columns it left out; ``width``
    None: every column whole. A cell is a text or its forms, fullest first. ``narrowing``: what the
    table gives up, in order, until it fits — (key, "drop"), (key, "form", i): its cells' i-th form,
    (key, n): its cells shortened to n cells; then every column that may be shortened is, down to
    its least, and room left over goes back to the shortened ones, the last shortened first. A row
    is never wrapped: the lines are cut at ``width`` if even that is not enough."""
    from rich.cells import cell_len

    by = {c.key: c for c in columns}
    shown, form, cap, order, left_out = [c.key for c in columns], {c.key: 0 for c in columns}, {}, [], []

    def text(v, k) -> str:
        return v[min(form[k], len(v) - 1)] if isinstance(v, tuple) else str(v)

    def natural(k: str) -> int:
        return max([cell_len(text(by[k].header, k))] + [cell_len(text(r[k], k)) for r in rows])

    def widths() -> dict[str, int]:
        return {k: min(natural(k), cap.get(k, natural(k))) for k in shown}

    def total(w: dict[str, int]) -> int:
        return sum(w.values()) + 2 * (len(w) - 1)

    w = widths()
    if width is not None:
        for step in narrowing:
            if total(w) <= width:
                break
            key = step[0]
            if key not in shown:
                continue
            if step[1] == "drop":
                shown.remove(key)
                left_out.append(text(by[key].header, key))
            elif step[1] == "form":
                form[key] = step[2]
            elif step[1] < w[key]:
                cap[key] = step[1]
                order.append(key)
            w = widths()
        for k in shown:  # the last resort: every column that may be shortened, down to its least
            over = total(w) - width
            if over > 0 and by[k].least and w[k] > by[k].least:
                w[k] -= min(over, w[k] - by[k].least)
                order.append(k)
        for k in reversed(order):  # room left over: back to the columns shortened, the last first
            if k in w:
                w[k] += max(0, min(width - total(w), natural(k) - w[k]))

    def cell(v, k: str) -> str:
        t = shorten(text(v, k), w[k], by[k].cut)
        return t + " " * (w[k] - cell_len(t))

    lines = []
    for n, r in enumerate([{k: by[k].header for k in shown}, *rows]):
        lines.append("  ".join(cell(r[k], k) for k in shown).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w[k] for k in shown))
    if width is not None:
        lines = [shorten(line, width, "end") for line in lines]
    return lines, left_out


def finish(run_dir, *, complete: bool) -> None:
    """After a run: the report (partial when the run did not complete) and, for a complete run,
    its entry in the results library. Neither may hide the run's own outcome or error, and neither
    may fail because the terminal is gone (SIGHUP): the report is written all the same."""
    if run_dir is None:
        return
    from rich.console import Console

    c = Console(highlight=False)

    def say(text: str) -> None:
        try:
            c.print(text)
        except OSError:
            pass

    try:
        from .. import kinds

        for path in kinds.of(run_dir).render(run_dir, ("html", "pdf")):
            say(f"[bold]report:[/] {path}" + ("" if complete else " (partial)"))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - the measurements are safe; say how to retry
        say(f"[yellow]report not rendered ({exc.__class__.__name__}: {exc}); retry with 'ssdpts report {run_dir}'[/]")
    if complete:
        from ssdpts.library.db import record_run

        say(record_run(run_dir))
