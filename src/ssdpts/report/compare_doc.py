"""The documents of a comparison of PTS runs and of a repeats analysis (report/doc.py's Doc:
alerts, tables, plots), made from ssdpts.compare's Comparison and Repeats, which read only the run
directories; report/compare_html.py renders them.
Cell.css here: pos / neg / pos2 / neg2 / zero (deltas), bad / warn / ok, na, nss, median, base."""

from __future__ import annotations

import time
from typing import Any

from ..compare import (
    RSE_LIMIT, SETTINGS, SHORT, Comparison, Repeats, comparison_dict, fmt_delta, fmt_pct, fmt_value, headline_rows,
    repeats_dict, settings_of,
)
from .compare_parts import DELTA_NOTE, delta_css, mark, repeat_long
from .doc import Alert, Cell, Doc, Para, Plot, Section, Table
from .fmt import fmt_time
from .pages import of as kind_of
from ..pts.runspec import not_compliant
from ..pts.units import fmt_capacity



def _pts_kicker(runs) -> str:
    versions = sorted({str(r.manifest.settings.pts_version or "2.0.2") for r in runs})
    profiles = sorted({str(r.manifest.settings.profile or "").capitalize() for r in runs})
    return f"SNIA SSS PTS {' / '.join(versions)} {' / '.join(profiles)}".strip()


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def _cap(n: Any) -> str:
    try:
        return fmt_capacity(int(n))
    except (TypeError, ValueError):
        return "not available"


def _tf(run, name: str) -> Any:
    """A field of a run's recorded target (None without one)."""
    t = run.manifest.target
    return getattr(t, name) if t is not None else None


def _runs_table(runs, baseline: bool, ss_parts: list[tuple[str, list[bool | None]]]) -> Table:
    cols = [""] + [r.label + (" (baseline)" if baseline and i == 0 else "") for i, r in enumerate(runs)]

    def row(name, vals, css=None):
        return [Cell(name)] + [Cell(str(v) if v not in (None, "") else "not available",
                                    css=(css[i] if css else "") or ("na" if v in (None, "") else ""))
                               for i, v in enumerate(vals)]

    rows = [
        row("Run directory", [r.name for r in runs]),
        row("Test run date", [fmt_time(r.created) for r in runs]),
        row("Status", [r.status for r in runs], ["ok" if r.status == "complete" else "bad" for r in runs]),
        row("Device", [" ".join(x for x in (_tf(r, "vendor"), _tf(r, "model")) if x) or None for r in runs]),
        row("Target", [f"{_tf(r, 'path')} ({_tf(r, 'kind')})" for r in runs]),
        row("Serial number", [_tf(r, "serial") for r in runs]),
        row("Firmware", [_tf(r, "firmware") for r in runs]),
        row("Capacity", [_cap(_tf(r, "size_bytes")) for r in runs]),
        row("Logical block size", [f"{_tf(r, 'logical_block_size_bytes')} bytes" for r in runs]),
        row("Host", [r.manifest.host.get("hostname") for r in runs]),
        row("Kernel", [r.manifest.host.get("kernel") for r in runs]),
        row("Software", [f"ssdpts {r.manifest.ssdpts_version or '?'}, {r.manifest.fio_version or '?'}" for r in runs]),
    ]
    for title, flags in ss_parts:
        if all(f is None for f in flags):
            continue
        rows.append(row(f"{title}: steady state", ["reached" if f else ("NOT reached" if f is False else "—")
                                                   for f in flags],
                        ["ok" if f else ("bad" if f is False else "") for f in flags]))
    return Table("runs", "The runs", cols, rows, numeric=False)


def _settings_table(runs, baseline: bool) -> Table:
    vals = [settings_of(r) for r in runs]
    cols = ["setting"] + [r.label + (" (baseline)" if baseline and i == 0 else "") for i, r in enumerate(runs)]
    rows = []
    for s in SETTINGS:
        vs = [v[s.name] for v in vals]
        differs = len(set(vs)) > 1
        css = ("bad" if s.invalidates else "warn") if differs else ""
        rows.append([Cell(s.label + (" ≠" if differs else ""), css=css)] + [Cell(v, css=css) for v in vs])
    return Table("settings", "Settings", cols, rows, numeric=False,
                 note="Red: a setting that makes a comparison invalid differs (refused unless --allow-different). "
                      "Amber: differs, shown for the record. The seed is not a setting difference: a different "
                      "seed is another sample of the same experiment.")


def _deviation_alert(runs) -> Alert | None:
    """Deviations from the PTS, each once, with the runs it applies to ("all runs" when every one)."""
    by: dict[str, list[str]] = {}
    for r in runs:
        for d in r.deviations:
            by.setdefault(str(d), []).append(r.label)
    if not by:
        return None
    items = [d + ("" if len(runs) == 1 else (" (all runs)" if len(labs) == len(runs) else f" ({', '.join(labs)})"))
             for d, labs in by.items()]
    return Alert("warn", not_compliant(items), items)


def _ss_banner(labels: list[str], parts) -> tuple[str, str] | None:
    """One line for every PDF page: which run missed steady state in which test."""
    by: dict[str, list[str]] = {}
    for p in parts:
        for i, f in enumerate(p.ss_reached):
            if f is False:
                by.setdefault(labels[i], []).append(p.title)
    if not by:
        return None
    return ("bad", "steady state NOT reached: " + "; ".join(f"{lab} ({', '.join(ts)})" for lab, ts in by.items()))


# ---- comparison document -------------------------------------------------------------------------

def build_comparison(cmp: Comparison) -> Doc:
    runs = cmp.runs
    labels = cmp.labels
    alerts: list[Alert] = []
    banners: list[tuple[str, str]] = []
    if cmp.invalidating:
        items = [d.text(labels) for d in cmp.invalidating]
        alerts.append(Alert("bad", "settings differ — compared with --allow-different", items + [
            "these differences alone can move the results: the deltas below do not isolate the devices"]))
        banners.append(("bad", "SETTINGS DIFFER (--allow-different): " + "; ".join(items)))
    missed = [f"{p.title}: {', '.join(labels[i] for i in p.ss_missed)}" for p in cmp.parts if p.ss_missed]
    if missed:
        alerts.append(Alert("bad", "steady state NOT reached", missed + [
            "those values are averages of the last 5 rounds, not of a steady-state window; cells marked †"]))
        banners.append(_ss_banner(labels, cmp.parts))
    partial = [r for r in runs if r.status != "complete"]
    if partial:
        alerts.append(Alert("bad", "partial runs", [f"{r.label}: run status {r.status} — results cover only what "
                                                     f"finished" for r in partial]))
        banners.append(("bad", "PARTIAL: " + ", ".join(f"{r.label} {r.status}" for r in partial)))
    dev = _deviation_alert(runs)
    if dev:
        alerts.append(dev)
    info = [n for n in cmp.notes if "run status" not in n]
    if cmp.not_shared:
        info.append("not compared (not in every run): " + "; ".join(cmp.not_shared))
    if info:
        alerts.append(Alert("info", "notes", info))

    sections = [Section("summary", "Summary", blocks=[Para(DELTA_NOTE), _headline_table(cmp)])]
    sections.append(Section("runs", "Runs and settings", blocks=[
        _runs_table(runs, True, [(p.title, p.ss_reached) for p in cmp.parts]), _settings_table(runs, True)],
        new_page=True))
    for p in cmp.parts:
        sections.append(_part_section(cmp, p))
    title = (f"Comparison: {' vs '.join(labels)}" if len(labels) <= 3 else f"Comparison of {len(labels)} runs")
    return Doc(
        kind="comparison", kicker=_pts_kicker(runs) + " · ssdpts comparison", title=title,
        subtitle=f"baseline {labels[0]} · " + ", ".join(p.title for p in cmp.parts),
        meta=f"report {_now()} · {len(runs)} runs · Δ positive = better than the baseline",
        alerts=alerts, banners=banners, sections=sections, generated=_now(), data=comparison_dict(cmp))


def _headline_table(cmp: Comparison) -> Table:
    labels = cmp.labels
    cols = ["test: cell", "unit", labels[0] + " (baseline)"]
    for lab in labels[1:]:
        cols += [lab, f"Δ {lab}"]
    rows = []
    for p, row in headline_rows(cmp):
        name = f"{p.title}: {row.label}" + (f" {SHORT[row.metric]}" if row.metric in SHORT else "")
        cells = [Cell(name), Cell(row.unit)]
        for i, v in enumerate(row.values):
            cells.append(Cell(mark(fmt_value(v, row.unit), p.ss_reached[i]), v,
                              css="na" if v is None else ("nss" if p.ss_reached[i] is False else "")))
            if i:
                cells.append(Cell(fmt_delta(row.deltas[i]), row.deltas[i], css=delta_css(row.deltas[i])))
        rows.append(cells)
    return Table("headline", "Headline values (the PTS tracking cells and throughput)", cols, rows,
                 note="† steady state NOT reached in that run's test. Every cell of every test follows in the test "
                      "sections.")


def _ss_alert(cmp: Comparison, p) -> Alert | None:
    if not p.ss_missed:
        return None
    items = [f"{cmp.labels[i]}: stopped at {p.stop_reasons[i] or '?'}; its values are averages of the last 5 rounds"
             for i in p.ss_missed]
    return Alert("bad", f"{p.title}: steady state NOT reached", items)


# ---- repeats document ----------------------------------------------------------------------------

def _part_section(cmp: Comparison, p) -> Section:
    """A part's section of a comparison: the steady-state alert, then its kind's blocks (pages/kind.py)."""
    sec = Section(f"part-{p.part}", p.title, new_page=True)
    a = _ss_alert(cmp, p)
    if a:
        sec.blocks.append(a)
    kind = kind_of(p.test)
    if kind is not None:
        sec.blocks += kind.compare(cmp, p)
    return sec


# ---- repeats document ----------------------------------------------------------------------------

def build_repeats(rep: Repeats) -> Doc:
    runs = rep.runs
    labels = rep.labels
    alerts: list[Alert] = []
    banners: list[tuple[str, str]] = []
    if rep.invalidating:
        items = [d.text(labels) for d in rep.invalidating]
        alerts.append(Alert("bad", "settings differ — analysed with --allow-different", items))
        banners.append(("bad", "SETTINGS DIFFER (--allow-different): " + "; ".join(items)))
    flagged = rep.flagged
    total = len(rep.rows)
    if flagged:
        items = [f"{len(flagged)} of {total} metrics have a relative standard error above {RSE_LIMIT:.0%}"]
        items += [f"{r.part} {r.label}{' ' + SHORT[r.metric] if r.metric in SHORT else ''}: RSE {fmt_pct(r.stats.rse)}"
                  for r in flagged[:12]]
        if len(flagged) > 12:
            items.append(f"… and {len(flagged) - 12} more (red in the tables)")
        if rep.advice:
            items.append("advice: " + rep.advice)
        alerts.append(Alert("bad", f"too variable: RSE above {RSE_LIMIT:.0%}", items))
        banners.append(("bad", f"{len(flagged)} of {total} metrics with RSE above {RSE_LIMIT:.0%}"))
    else:
        alerts.append(Alert("ok", f"every metric's RSE is at most {RSE_LIMIT:.0%}", [
            f"N = {rep.n}: report the median run's values"]))
    if rep.warnings:
        alerts.append(Alert("warn", "warnings", list(rep.warnings)))
    if rep.n % 2 == 0:
        banners.append(("warn", f"N = {rep.n} is even: each median is the lower-middle run's value"))
    ssb = _ss_banner(labels, rep.parts)
    if ssb:
        banners.append(ssb)
    dev = _deviation_alert(runs[:1])
    if dev:
        alerts.append(dev)
    method = Para(f"Per metric, the median is the value of the median run — a measured value, not an average: with an "
                  f"odd N the middle run, with an even N the lower-middle run (warned). RSE = s / (x̄ · √N), s the "
                  f"sample standard deviation (N − 1). Above {RSE_LIMIT:.0%} a metric is too variable: add runs "
                  f"while N ≤ 7, beyond 7 runs discard or investigate (docs/compare.md#repeated-runs).")
    sections = [Section("summary", "Summary", blocks=[method, _rse_summary_table(rep)])]
    sections.append(Section("runs", "Runs and settings", blocks=[
        _runs_table(runs, False, [(p.title, p.ss_reached) for p in rep.parts]), _settings_table(runs, False)],
        new_page=True))
    for p in rep.parts:
        sections.append(_repeat_section(rep, p))
    dev_name = runs[0].device_name
    return Doc(
        kind="repeats", kicker=_pts_kicker(runs) + " · ssdpts repeated runs",
        title=f"Repeated runs: {dev_name}, N = {rep.n}",
        subtitle="median run value and relative standard error per metric · " + ", ".join(p.title for p in rep.parts),
        meta=f"report {_now()} · {rep.n} runs of one device",
        alerts=alerts, banners=banners, sections=sections, generated=_now(), data=repeats_dict(rep))


def _rse_summary_table(rep: Repeats) -> Table:
    rows = []
    for p in rep.parts:
        stats = [r.stats for r in p.rows if r.stats is not None and r.stats.rse is not None]
        worst = max(stats, key=lambda s: s.rse, default=None)
        worst_row = next((r for r in p.rows if r.stats is worst), None) if worst else None
        n_flag = sum(1 for r in p.rows if r.flagged)
        rows.append([
            Cell(p.title), Cell(str(len(p.rows))), Cell(str(n_flag), css="bad" if n_flag else "ok"),
            Cell(fmt_pct(worst.rse) if worst else "n/a", worst.rse if worst else None,
                 css="bad" if worst and worst.flagged else ""),
            Cell((worst_row.label + (" " + SHORT[worst_row.metric] if worst_row.metric in SHORT else "")) if worst_row else "—"),
        ])
    return Table("rse-summary", "Relative standard error per test", ["test", "metrics", f"RSE > {RSE_LIMIT:.0%}",
                                                                     "highest RSE", "at"], rows)


def _repeat_section(rep: Repeats, p) -> Section:
    """A part's section of a repeats analysis: the spread and RSE of its cells, then its kind's tables
    (pages/kind.py ``repeats``; by default every cell's runs, median and RSE)."""
    sec = Section(f"part-{p.part}", p.title, new_page=True)
    missed = [rep.labels[i] for i, f in enumerate(p.ss_reached) if f is False]
    if missed:
        sec.blocks.append(Alert("bad", f"{p.title}: steady state NOT reached", [
            f"{', '.join(missed)}: values are averages of the last 5 rounds, not of a steady-state window"]))
    labels = rep.labels
    rows = p.rows
    kind = kind_of(p.test)
    names = [r.label if kind is not None and kind.full_labels else
             r.label.replace("RND ", "") + (f" {SHORT[r.metric]}" if r.metric in SHORT else "") for r in rows]
    dev = [[None if (v is None or r.stats is None or not r.stats.median) else v / r.stats.median - 1
            for v in r.values] for r in rows]
    rses = [r.stats.rse if r.stats else None for r in rows]
    big = len(rows) > 20
    sec.blocks.append(Plot(f"{p.part}-spread", "Spread of the runs and relative standard error",
                           "Top: each run's value relative to the median run's (0 = the median). Bottom: RSE per "
                           f"metric; red above the {RSE_LIMIT:.0%} line.",
                           "spread_rse", {"labels": labels, "names": names, "dev": dev, "rses": rses},
                           size=(10.0, 5.6 if big else 4.8)))
    own = kind.repeats(rep, p) if kind is not None else None
    if own is None:
        unit = rows[0].unit if rows else ""
        own = [repeat_long(rep, p, rows, f"{p.part}-table", f"{p.title} ({unit})")]
    sec.blocks += own
    return sec
