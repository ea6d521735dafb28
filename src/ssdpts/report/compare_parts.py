"""The tables of a comparison and of a repeats analysis that a test kind's blocks are built from
(report/compare_doc.py builds the documents; each kind's blocks are its ReportKind's ``compare`` and
``repeats``, report/pages/kind.py)."""

from __future__ import annotations

from ..compare import MIX_ORDER, RSE_LIMIT, SHORT, Comparison, Repeats, fmt_delta, fmt_pct, fmt_value
from ..pts.units import fmt_block_size
from .doc import Cell, Table

DELTA_NOTE = ("Δ = performance of the run against the baseline, positive = better: speed-type metrics (IOPS, MB/s) "
              "Δ = A/B − 1, time-type metrics (response times) Δ = time_B/time_A − 1, A the run, B the baseline "
              "(docs/compare.md#delta). Green: better, red: worse, grey: within ±1%. n/a: the cell is missing in a run "
              "(e.g. block sizes below a device's logical block size).")


def delta_css(d: float | None) -> str:
    if d is None:
        return "na"
    if abs(d) < 0.01:
        return "zero"
    if d > 0:
        return "pos2" if d >= 0.10 else "pos"
    return "neg2" if d <= -0.10 else "neg"


def mark(text: str, ss: bool | None) -> str:
    return text + " †" if ss is False else text


def long_table(cmp: Comparison, p, rows, tid: str, title: str) -> Table:
    labels = cmp.labels
    cols = ["cell", mark(labels[0], p.ss_reached[0]) + " (baseline)"]
    for i, lab in enumerate(labels[1:], start=1):
        cols += [mark(lab, p.ss_reached[i]), f"Δ {lab}"]
    out = []
    for row in rows:
        cells = [Cell(row.label)]
        for i, v in enumerate(row.values):
            cells.append(Cell(fmt_value(v, row.unit), v,
                              css="na" if v is None else ("nss" if p.ss_reached[i] is False else "")))
            if i:
                cells.append(Cell(fmt_delta(row.deltas[i]), row.deltas[i], css=delta_css(row.deltas[i])))
        out.append(cells)
    return Table(tid, title, cols, out)


def matrix(p, run_i: int | None, what: str, cmp: Comparison) -> Table:
    """IOPS matrix (block size × mix) of one run's values, or of its deltas against the baseline."""
    bss = sorted({r.block_size_bytes for r in p.rows}, reverse=True)
    mixes = [m for m in MIX_ORDER if any(r.mix == m for r in p.rows)]
    cells = {(r.block_size_bytes, r.mix): r for r in p.rows}
    lab = cmp.labels[run_i]
    ss = p.ss_reached[run_i]
    rows = []
    for bs in bss:
        line = [Cell(fmt_block_size(bs))]
        for m in mixes:
            r = cells.get((bs, m))
            if what == "values":
                v = r.values[run_i] if r else None
                line.append(Cell(fmt_value(v, "IOPS"), v, css="na" if v is None else ("nss" if ss is False else "")))
            else:
                d = r.deltas[run_i] if r else None
                line.append(Cell(fmt_delta(d), d, css=delta_css(d)))
        rows.append(line)
    suffix = " — steady state NOT reached" if ss is False else ""
    if what == "values":
        title = f"{lab}{' (baseline)' if run_i == 0 else ''}: IOPS{suffix}"
        tid = f"{p.part}-values-{run_i}"
    else:
        title = f"Δ {lab} vs {cmp.labels[0]}: IOPS{suffix}"
        tid = f"{p.part}-delta-{run_i}"
    return Table(tid, title, ["block size"] + [f"R/W {m}" for m in mixes], rows)


def repeat_long(rep: Repeats, p, rows, tid: str, title: str) -> Table:
    labels = rep.labels
    cols = ["cell"] + [mark(lab, p.ss_reached[i]) for i, lab in enumerate(labels)] + [
        "median", "median run", "mean", "s", "RSE"]
    out = []
    for row in rows:
        st = row.stats
        cells = [Cell(row.label + (f" {SHORT[row.metric]}" if row.metric in SHORT and tid.endswith("all") else ""))]
        for i, v in enumerate(row.values):
            css = "na" if v is None else ("median" if st and st.median_index == i else "")
            cells.append(Cell(fmt_value(v, row.unit), v, css=css))
        if st is None:
            cells += [Cell("n/a", css="na")] * 5
        else:
            cells += [Cell(fmt_value(st.median, row.unit), st.median, css="median"), Cell(labels[st.median_index]),
                      Cell(fmt_value(st.mean, row.unit), st.mean), Cell(fmt_value(st.stdev, row.unit), st.stdev),
                      Cell(fmt_pct(st.rse), st.rse, css="bad" if st.flagged else "")]
        out.append(cells)
    return Table(tid, title, cols, out, note="Bold: the median run's value. RSE red: above 5% (too variable).")


def repeat_matrix(rep: Repeats, p, what: str) -> Table:
    bss = sorted({r.block_size_bytes for r in p.rows}, reverse=True)
    mixes = [m for m in MIX_ORDER if any(r.mix == m for r in p.rows)]
    cells = {(r.block_size_bytes, r.mix): r for r in p.rows}
    rows = []
    for bs in bss:
        line = [Cell(fmt_block_size(bs))]
        for m in mixes:
            r = cells.get((bs, m))
            st = r.stats if r else None
            if st is None:
                line.append(Cell("n/a", css="na"))
            elif what == "median":
                line.append(Cell(f"{fmt_value(st.median, 'IOPS')} ({rep.labels[st.median_index].replace('run ', '#')})",
                                 st.median))
            else:
                line.append(Cell(fmt_pct(st.rse), st.rse, css="bad" if st.flagged else ""))
        rows.append(line)
    title = "Median run's IOPS (which run)" if what == "median" else f"RSE of IOPS (red: above {RSE_LIMIT:.0%})"
    return Table(f"{p.part}-{what}", title, ["block size"] + [f"R/W {m}" for m in mixes], rows)
