"""Printing results for people (rich tables); machines read summary.json."""

from __future__ import annotations

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
    digits = 0 if unit in ("IOPS", "min") else 2 if unit == "%" else 1
    value = fmt_number(h.value, digits) if unit != "%" or h.value is None else f"{h.value:+.2f}"
    return f"{h.label}{' ' + short if short else ''} {value} {unit}"


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
