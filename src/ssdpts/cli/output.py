"""Printing results for people (rich tables); machines read summary.json."""

from __future__ import annotations

from ..pts.units import fmt_block_size


def _fmt(v, digits=0) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def print_summary(store, summary: dict) -> None:
    """The results of a run that just ended (``summary``: what the runner wrote to summary.json)."""
    from rich.console import Console
    from rich.table import Table

    from ..pts.iops import IopsTable
    from ..pts.lat import LatTable
    from ..pts.tp import TpTable
    from ..pts.wsat import WsatTable
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
        table = part.table
        if isinstance(table, IopsTable):
            t = Table(title="IOPS (window average)")
            t.add_column("block size")
            for mix in table.mixes:
                t.add_column(mix, justify="right")
            for row in table.rows:
                t.add_row(fmt_block_size(row.block_size_bytes), *[_fmt(row.values.get(m)) for m in table.mixes])
            c.print(t)
        elif isinstance(table, TpTable):
            c.print(f"  read {_fmt(table.read_mb_per_s, 1)} MB/s, write {_fmt(table.write_mb_per_s, 1)} MB/s")
        elif isinstance(table, LatTable):
            t = Table(title="Response time, µs (window average)")
            for h in ("block size", "R/W", "mean", "99.999%", "max", "IOPS"):
                t.add_column(h, justify="right")
            for r in table.rows:
                t.add_row(fmt_block_size(r.block_size_bytes), r.mix, _fmt(r.value("lat_mean_us"), 1),
                          _fmt(r.value("lat_p99999_us"), 1), _fmt(r.value("lat_max_us"), 1), _fmt(r.value("iops")))
            c.print(t)
        elif isinstance(table, WsatTable):
            c.print(f"[bold]{part.title}[/]: {len(table.series)} samples, {table.tgbw_gb:.2f} GB written "
                    f"({_fmt(table.drive_fills, 2)} drive fills), last 5 samples {_fmt(table.final_window_iops)} IOPS "
                    f"({part.stop_reason})")


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
