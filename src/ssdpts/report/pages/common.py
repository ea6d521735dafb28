"""The skeleton every test's pages share: the steady-state verdict and window of a part (PTS 2.0.2
§2.1.24), its convergence / window / results sections, and the tables of window statistics (QoS,
fio's CPU use) whose cells link to their details."""

from __future__ import annotations

from ...measurement import Measurement
from ...pts.qos import QOS_PERCENTILES, Outliers, approx_max_note, ios_needed, outliers, pct_label
from ...pts.units import fmt_block_size
from ...pts.workload import cell_key
from ...results.records import NoWindow, PartResult, Series
from .. import plots
from ..context import RunContext
from ..doc import Alert, Cell, Para, Plot, Section, Table
from ..fmt import fmt_rounds, fmt_value, limit_text, pct_of


def series_dict(s: Series | None) -> dict:
    """A tracking variable's rounds and values, as the convergence plot takes them."""
    return {} if s is None else {"rounds": list(s.rounds), "values": list(s.values)}


def tracking(part: PartResult) -> list[tuple[str, str, dict]]:
    """Each tracking variable of a part with its values per round (plots.tracking_convergence)."""
    return [(v.variable, v.unit, series_dict(part.series.get(v.variable)))
            for v in (part.steady_state.variables if part.steady_state else ())]


def three_sections(part: PartResult, test: str, name: str, convergence: list, results: list | None) -> list[Section]:
    """A part's convergence (the verdict, then ``convergence``), steady-state window and results
    sections ("no results" when ``results`` is None: no round finished) — the IOPS and LAT pages."""
    ssb = steady_state_blocks(part, part.id)
    conv = Section(f"{part.id}-convergence", f"{name}: steady-state convergence", 3, test)
    conv.blocks += ssb[:1] + convergence
    win = Section(f"{part.id}-steady-state", f"{name}: steady-state window", 3, test)
    win.blocks += ssb[1:]
    res = Section(f"{part.id}-results", f"{name}: measurement window results", 3, test)
    res.blocks += results if results is not None else [
        Alert("bad", "no results", ["no round finished: there is no measurement window"])]
    return [conv, win, res]


def one_section(part: PartResult, sid: str, title: str, test: str, convergence: list) -> Section:
    """A part's pages as one section: the verdict, ``convergence``, then the steady-state window
    (TP's block sizes, the extended tests' steady-state parts)."""
    ssb = steady_state_blocks(part, part.id)
    sec = Section(sid, title, 3, test)
    sec.blocks += ssb[:1] + convergence + ssb[1:]
    return sec


def steady_state_blocks(part: PartResult, prefix: str) -> list:
    """The verdict alert, the verdict table, the window values and a window plot per tracking
    variable."""
    variables = part.steady_state.variables if part.steady_state else ()
    window = part.window_rounds
    rounds_run = part.rounds_run or 0
    if rounds_run == 0:
        return [Alert("bad", "not run", ["no round of this test finished before the run stopped"])]
    blocks: list = resume_alerts(part)
    if part.reached:
        blocks.append(Alert("ok", f"steady state reached in rounds {fmt_rounds(window)}",
                            [f"{rounds_run} rounds run; every tracking variable passes in this window"]))
    else:
        why = {"max-rounds": f"gave up after the maximum of {rounds_run} rounds",
               None: "the run stopped before steady state was reached"}.get(part.stop_reason,
                                                                           f"stop reason: {part.stop_reason}")
        items = [why, f"the values below are averages over the last {len(window)} rounds "
                      f"({fmt_rounds(window)}) and are NOT steady-state values"]
        for v in variables:
            if isinstance(v, NoWindow):
                items.append(f"{v.variable}: {v.note}")
            elif not v.reached:
                fails = []
                if not v.range_ok:
                    fails.append(f"range {pct_of(v.range, v.average)} of average > 20%")
                if not v.excursion_ok:
                    fails.append(f"slope excursion {pct_of(v.excursion, v.average)} of average > 10%")
                items.append(f"{v.variable}: fails in rounds {fmt_rounds(v.rounds)}: " + "; ".join(fails))
            else:
                items.append(f"{v.variable}: passes alone in rounds {fmt_rounds(v.rounds)}, but every tracking "
                             "variable must pass in the same window")
        blocks.append(Alert("bad", "steady state NOT reached", items))
    blocks.append(verdict_table(part, prefix))
    blocks += window_values(part, prefix)
    for i, v in enumerate(variables):
        if isinstance(v, NoWindow) or not v.values:
            continue
        blocks.append(Plot(f"{prefix}-window-{i + 1}", f"Steady-state window: {v.variable}",
                           "Tracking values in the measurement window with their average, the ±10% and ±20% "
                           "bands around it and the least-squares best-fit line; the box compares the allowed "
                           "and measured range and slope excursion.",
                           "ss_window", {"var": v.to_dict(), "part_reached": bool(part.reached)}, size=(10, 3.6)))
    return blocks


def resume_alerts(part: PartResult) -> list:
    """A window that spans a resumption of the run, or that counts from it."""
    resume = part.steady_state.resume if part.steady_state else None
    spans = resume.spans_resume if resume else None
    if spans:
        return [Alert("warn", f"the window {spans.get('text', 'spans a resume')}", [
            f"rounds {fmt_rounds(part.window_rounds)} include rounds from before and after a resumption of the run "
            "('ssdpts resume --keep-window'): the drive was idle in between, which the PTS's "
            "'no delay between rounds' excludes; the values below are disclosed, not PTS steady-state values"])]
    if resume and resume.window_from_round:
        return [Alert("info", f"resumed: the window counts from round {resume.window_from_round}", [
            "the run was interrupted and resumed; the interrupted round was repeated and only rounds run after "
            "the resumption may form the steady-state window (PTS: no delay between rounds)"])]
    return []


def verdict_table(part: PartResult, prefix: str) -> Table:
    rows = []
    pid = part.id
    for i, v in enumerate(part.steady_state.variables if part.steady_state else ()):
        unit = v.unit
        if isinstance(v, NoWindow):
            rows.append([Cell(v.variable), Cell("NOT reached", css="bad"), Cell("—"), Cell("—"),
                         Cell("—"), Cell("—"), Cell(v.note)])
            continue
        rows.append([
            Cell(v.variable),
            Cell("reached" if v.reached else "NOT reached", css="ok" if v.reached else "bad"),
            Cell(fmt_rounds(v.rounds)),
            Cell(f"{fmt_value(v.average, unit)} {unit}", v.average, ref=f"{pid}:ss{i}:average"),
            Cell(limit_text(v.range, v.range_limit, v.range_ok, v.average, unit), v.range,
                 css="ok" if v.range_ok else "bad", ref=f"{pid}:ss{i}:range"),
            Cell(limit_text(v.excursion, v.excursion_limit, v.excursion_ok, v.average, unit), v.excursion,
                 css="ok" if v.excursion_ok else "bad", ref=f"{pid}:ss{i}:excursion"),
            Cell(plots.fit_text(v.slope, v.intercept)),
        ])
    return Table(f"{prefix}-ss", "Steady-state verdict per tracking variable (PTS 2.0.2 §2.1.24)",
                 ["Tracking variable", "Verdict", "Window rounds", "Average",
                  "Range (limit 20% of avg)", "Slope excursion (limit 10% of avg)", "Best fit"], rows,
                 note="Range: max − min of the window values. Slope excursion: |b| × (last round − first "
                      "round) of the least-squares line y = b·x + a through the window. Each cell states "
                      "the comparison that holds: ≤ the limit (pass) or > the limit (FAIL).",
                 numeric=False)


def window_values(part: PartResult, prefix: str) -> list:
    """The window values as numbers, as TKperf lists them ("Values in stdy measurement window")."""
    variables = part.steady_state.variables if part.steady_state else ()
    measured = [(i, v) for i, v in enumerate(variables) if v.values]
    if not measured:
        return []
    rounds = sorted({r for _, v in measured for r in v.rounds})
    vrows = []
    for i, v in measured:
        at = dict(zip(v.rounds, v.values))
        name = v.variable if v.variable.endswith(v.unit) else f"{v.variable} ({v.unit})"
        vrows.append([Cell(name)] +
                     [Cell(fmt_value(at.get(r), v.unit), at.get(r), ref=f"{part.id}:ss{i}:r{r}" if r in at else "")
                      for r in rounds])
    return [Table(f"{prefix}-ss-values", "Tracking values in the steady-state window",
                  ["Tracking variable", *[f"round {r}" for r in rounds]], vrows)]


def cell_refs(ctx: RunContext, part: PartResult, metric: str):
    """A table cell of a window statistic, linked to its details: (key, value, unit) -> Cell."""
    def make(key: str, value: float | None, unit: str, *, stat: str = metric, flag: str = "") -> Cell:
        return Cell(fmt_value(value, unit), value, ref=f"{part.id}:{key}:{stat}" if value is not None else "",
                    detail=f"d-{part.id}-{key}" if f"d-{part.id}-{key}" in ctx.details else "", flag=flag)
    return make


def qos_table(ctx: RunContext, part: PartResult, keys: list[tuple[str, str]], tid: str, title: str) -> Table:
    """p50 … p99.9999 and max of each cell over its window, with the IO count; a percentile the
    sample cannot resolve is flagged "≈ max" (pts/qos.py)."""
    rows = []
    for key, label in keys:
        w = ctx.latency(part, key)
        row = [Cell(label), Cell(f"{w.ios:,}", w.ios, ref=f"{part.id}:{key}:ios")]
        for p in QOS_PERCENTILES:
            v = w.percentile_us(p)
            flag = approx_max_note(p) if v is not None and not w.resolved(p) else ""
            row.append(Cell(fmt_value(v, "µs"), v, ref=f"{part.id}:{key}:p{p:g}_us" if v is not None else "",
                            css="approx" if flag else "", flag=flag))
        row.append(Cell(fmt_value(w.max_us, "µs"), w.max_us, ref=f"{part.id}:{key}:lat_max_us"
                        if w.max_us is not None else ""))
        rows.append(row)
    return Table(tid, title + ctx.ss_suffix(part), ["Cell", "IOs", *[f"p{pct_label(p)[:-1]}" for p in QOS_PERCENTILES],
                                                    "max"], rows,
                 note="Response times in µs from the pooled fio json+ histogram of the window's steps (reads and "
                      "writes), never above the window's maximum. fio's bins are at most 1/64 of their value wide "
                      "and it reports each bin's midpoint: a percentile is known to ±0.8%. "
                      f"Grey '≈ max': fewer IOs than the percentile needs (10⁵ for 99.999%, "
                      f"{ios_needed(99.9999):,} for 99.9999%): the value is the slowest IOs, not the percentile.")


OUTLIER_NOTE = ("IOs slower than each threshold (--outlier-ms; default 10 and 15 ms: the IO.go targets of the "
                "OCP Datacenter NVMe SSD Specification 2.0, Appendix A.4, outliers > 10 ms and none above 15 ms), reads and writes, counted step by step from fio's "
                "json+ histogram and added. fio's bins are log-linear (64 per power of two, each at most 1/64 of its "
                "value wide), so a threshold falls inside a bin: 'at least' counts the IOs from that bin's upper edge "
                "up (certainly slower), 'at most' from its lower edge up (possibly slower); the step's exact maximum "
                "tightens both (none above when the maximum is below the threshold, one when it is above). A limit "
                "is judged on 'at most' (the datasheet, --targets): a pass is then certain.")


def outlier_table(ctx: RunContext, tid: str, title: str, rows: list[tuple[str, str, list[Measurement]]]) -> Table | None:
    """Per row (label, reference prefix "part:cell", its steps' measurements) the IOs above each of
    the run's outlier thresholds (pts/qos.outliers): at least and at most, the bin edges in the header."""
    counts: list[tuple[str, str, int, list[Outliers | None]]] = []
    for label, ref, ms in rows:
        counts.append((label, ref, sum(m.ios for m in ms), [outliers(ms, t * 1000) for t in ctx.outlier_ms]))
    if not counts:
        return None
    cols, edges = ["Cell", "IOs"], []
    for t in ctx.outlier_ms:
        o = outliers([], t * 1000)
        high = "open" if o.edge_high_us is None else f"{o.edge_high_us / 1e3:.4g} ms"
        cols += [f"> {t:g} ms: at least", "at most"]
        edges.append(f"{t:g} ms: IOs from {high} up (at least), from {o.edge_low_us / 1e3:.4g} ms up (at most)"
                     if o.edge_high_us != o.edge_low_us else f"{t:g} ms: a bin edge, counted exactly")
    out = []
    for label, ref, ios, per in counts:
        row = [Cell(label), Cell(f"{ios:,}", float(ios), ref=f"{ref}:ios")]
        for t, o in zip(ctx.outlier_ms, per):
            if o is None:
                row += [Cell("n/a"), Cell("n/a")]
                continue
            row += [Cell(f"{o.at_least:,}", float(o.at_least), ref=f"{ref}:over_{t:g}ms_least"),
                    Cell(f"{o.at_most:,}", float(o.at_most), ref=f"{ref}:over_{t:g}ms_most",
                         css="bad" if o.at_most else "ok")]
        out.append(row)
    return Table(tid, title, cols, out, note=OUTLIER_NOTE + " Here: " + "; ".join(edges) + ".")


def window_outliers(ctx: RunContext, part: PartResult, keys: list[tuple[str, str]], tid: str, title: str) -> list:
    """The outlier table of a part's cells over its measurement window."""
    t = outlier_table(ctx, tid, title + ctx.ss_suffix(part),
                      [(label, f"{part.id}:{key}", [s.measurement for s in ctx.window_steps(part, key)])
                       for key, label in keys])
    return [t] if t else []


def cpu_table(ctx: RunContext, part: PartResult, keys: list[tuple[str, str]], tid: str, title: str,
              matrix: tuple[list[int], list[str]] | None = None) -> list:
    """fio's CPU use during the window (usr + sys, % of the job threads' run time): is the host
    the bottleneck? ``matrix``: lay the cells out as block size × mix (the IOPS test)."""
    per: dict[str, float] = {}
    for key, _ in keys:
        ms = [s.measurement for s in ctx.window_steps(part, key)]
        ms = [m for m in ms if m.cpu_usr_pct is not None]
        if ms:
            per[key] = sum(m.cpu_usr_pct for m in ms) / len(ms) + sum(m.cpu_sys_pct or 0.0 for m in ms) / len(ms)
    if not per:
        return [Para("fio CPU utilisation: not available: the step records carry no fio usr/sys CPU "
                     "(runs recorded before ssdpts kept it)")]
    ncpu = ctx.host.get("cpu_count")

    def cell(key: str) -> Cell:
        if key not in per:
            return Cell("—")
        tot = per[key]  # usr and sys per round: the cell's details
        return Cell(f"{tot:.1f}%", tot, css="warn" if tot >= 80 else "", ref=f"{part.id}:{key}:cpu_pct")

    if matrix:
        bss, mixes = matrix
        rows = [[Cell(fmt_block_size(bs))] + [cell(cell_key("rand", bs, m.split("/")[0])) for m in mixes] for bs in bss]
        cols = ["Block size ↓ / R/W mix →", *mixes]
    else:
        rows = [[Cell(label), cell(key)] for key, label in keys]
        cols = ["Cell", "fio CPU (usr + sys)"]
    note = ("fio's usr_cpu + sys_cpu: CPU time of the job's threads as % of their run time, averaged over the "
            "threads and over the window. Near 100%, a fio thread is busy all the time: the host, not the device, "
            "may limit the result (amber from 80%)." + (f" The host has {ncpu} logical CPUs." if ncpu else ""))
    return [Table(tid, title, cols, rows, note=note)]
