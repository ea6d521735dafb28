"""Printing results for people (rich tables); machines read summary.json."""

from __future__ import annotations

from ..pts.units import fmt_block_size


def _fmt(v, digits=0) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def print_summary(store, summary: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    c = Console()
    c.print(f"[bold]run directory:[/] {store.path}")
    if summary.get("deviations"):
        c.print("[yellow]not PTS compliant:[/] " + "; ".join(summary["deviations"]))
    for part in summary.get("parts", {}).values():
        ss = part.get("steady_state")
        if ss is not None:
            verdict = ("[green]steady state reached[/]" if ss["reached"] else "[red bold]steady state NOT reached[/]")
            c.print(f"[bold]{part['title']}[/]: {verdict} (window rounds {ss['window_rounds']}, "
                    f"{part.get('rounds_run', 0)} rounds run)")
        table = part.get("table")
        if not table:
            continue
        if table["kind"] == "iops-matrix":
            t = Table(title="IOPS (window average)")
            t.add_column("block size")
            for mix in table["mixes"]:
                t.add_column(mix, justify="right")
            for row in table["rows"]:
                t.add_row(fmt_block_size(row["block_size_bytes"]), *[_fmt(row["values"].get(m)) for m in table["mixes"]])
            c.print(t)
        elif table["kind"] == "throughput":
            c.print(f"  read {_fmt(table['read_mb_per_s'], 1)} MB/s, write {_fmt(table['write_mb_per_s'], 1)} MB/s")
        elif table["kind"] == "latency":
            t = Table(title="Response time, µs (window average)")
            for h in ("block size", "R/W", "mean", "99.999%", "max", "IOPS"):
                t.add_column(h, justify="right")
            for r in table["rows"]:
                t.add_row(fmt_block_size(r["block_size_bytes"]), r["mix"], _fmt(r["lat_mean_us"], 1),
                          _fmt(r["lat_p99999_us"], 1), _fmt(r["lat_max_us"], 1), _fmt(r["iops"]))
            c.print(t)
        elif table["kind"] == "wsat":
            c.print(f"[bold]{part['title']}[/]: {len(table['series'])} samples, {table['tgbw_gb']:.2f} GB written "
                    f"({_fmt(table['drive_fills'], 2)} drive fills), last 5 samples {_fmt(table['final_window_iops'])} IOPS "
                    f"({part['stop_reason']})")


def finish(run_dir, *, complete: bool) -> None:
    """After a run: the report (partial when the run did not complete) and, for a complete run,
    its entry in the results library. Neither may hide the run's own outcome or error."""
    if run_dir is None:
        return
    from rich.console import Console

    c = Console(highlight=False)
    try:
        from ..report import render

        for path in render(run_dir):
            c.print(f"[bold]report:[/] {path}" + ("" if complete else " (partial)"))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - the measurements are safe; say how to retry
        c.print(f"[yellow]report not rendered ({exc.__class__.__name__}: {exc}); retry with 'ssdpts report {run_dir}'[/]")
    if complete:
        from ..resultsdb import record_run

        c.print(record_run(run_dir))
