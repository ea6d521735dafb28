"""The write saturation test's pages (docs/pts-reference.md#wsat, #wsat-options): IOPS against time, data written
and drive fills, response times per sample, the final window's histogram, and the samples."""

from __future__ import annotations

from collections import defaultdict
import math

from ...pts.qos import approx_max_note, ios_needed
from ...pts.wsat import WsatTable
from ...pts.units import fmt_capacity
from ...results import wsatmodel
from ...results.records import PartResult
from ..compare_parts import long_table
from ..context import RunContext, temperature_c
from ..datasheet import waf_of
from ..doc import Alert, Cell, Plot, Section, Table
from ..fmt import NA, fmt_fixed, fmt_rounds, fmt_value, or_default
from .kind import Figure, ReportKind


def sections(ctx: RunContext, pids: list[str]) -> list:
    out = []
    for pid in pids:
        part = ctx.parts[pid]
        tab = part.table if isinstance(part.table, WsatTable) else None
        sec = Section(f"{pid}-plots", "Write Saturation: IOPS, TGBW and response time", 3, "wsat")
        if not (tab.series if tab else ()):
            sec.blocks.append(Alert("bad", "not run", ["no WSAT sample finished before the run stopped"]))
        else:
            sec.blocks += blocks(ctx, part, tab)
        out.append(sec)
    return out


def time_axis(ctx: RunContext, tab: WsatTable) -> tuple[list[float], str, float, str]:
    """The x axis in the run's real time: (x per sample, unit, seconds per unit, axis label)."""
    series = tab.series
    step_s = or_default(ctx.spec.step_seconds, 60)
    t0 = series[0].start_time
    starts = [s.start_time for s in series]
    # the clock only where it runs forward (a clock set back, or the FakeExecutor's per-chunk
    # clock, would fold the samples onto each other): else the sample number × step length
    if None not in starts and all(b >= a for a, b in zip(starts, starts[1:])):
        secs = [float(s.start_time) - float(t0) for s in series]
    else:
        secs = [(s.minute - 1) * step_s for s in series]
    span = max(secs[-1], step_s)
    unit, div = ("s", 1.0) if span < 300 else (("min", 60.0) if span < 300 * 60 else ("h", 3600.0))
    xlabel = f"time since the first sample ({unit})" + (
        " = PTS minutes" if unit == "min" and step_s == 60 else f"; one sample = one step of {step_s:g} s")
    return [v / div for v in secs], unit, div, xlabel


def blocks(ctx: RunContext, part: PartResult, tab: WsatTable) -> list:
    """Why it stopped, the plots against time, data written and drive fills, the PTS 2.0 response
    times, and the samples: the plots share one time axis and one hover text, hence one piece."""
    pid = part.id
    series = tab.series
    why = {"capacity-written": f"stopped after {or_default(ctx.spec.wsat_capacity_multiple, 4):g}× capacity written",
           "time-limit": f"stopped at the time limit ({or_default(ctx.spec.wsat_hours, 24):g} h of steps)",
           None: "stopped early: the run did not finish this test"}.get(part.stop_reason, str(part.stop_reason))
    out: list = [Alert("info" if part.stop_reason else "bad", f"{len(series)} samples; {why}",
                       [f"{tab.tgbw_gb:,.2f} GB written = {fmt_fixed(tab.drive_fills, 2)} "
                        f"drive fills; FOB (first sample) {fmt_value(series[0].iops, 'IOPS')} IOPS; last 5 samples "
                        f"(minutes {fmt_rounds(tab.final_window_minutes)}) average "
                        f"{fmt_value(tab.final_window_iops, 'IOPS')} IOPS"])]
    final = set(tab.final_window_minutes)
    steady = waf_of([r for r in ctx.round_records(part) if r.index in final])
    ref = reference_table(pid, ctx.description().get("reference"), tab, None if steady is None else steady.value,
                          part.model.value("gc_onset_capacity_multiple") if part.model is not None else None)
    if ref is not None:
        out.append(ref)
    out += model_blocks(ctx, part, tab)
    tx, unit, div, xlabel = time_axis(ctx, tab)
    notes = "sample "  # hover: "sample 7" (samples are numbered from 1, one per step)
    iops = [s.iops for s in series]
    nfinal = len(tab.final_window_minutes)
    recs = ctx.round_records(part)
    t0 = series[0].start_time
    temps = [(float(r.start_time) - float(t0)) / div if (r.start_time is not None and t0 is not None) else None
             for r in recs]
    tc = [temperature_c(r.telemetry) for r in recs]
    tpts = [(x, c) for x, c in zip(temps, tc) if x is not None and c is not None]
    temperature = ([x for x, _ in tpts], [c for _, c in tpts]) if tpts else None
    scatter = {"y": iops, "ylabel": "IOPS", "final": nfinal, "notes": notes, "unit": "IOPS"}
    out.append(Plot(f"{pid}-iops-time", "WSAT: IOPS vs time",
                    "RND 4KiB write IOPS of every sample: fresh-out-of-box (FOB, star) level first, then "
                    "the transition, then the steady region; the final 5 samples are shaded"
                    + ("; dashed grey, right axis: device temperature." if temperature else "."),
                    "wsat_scatter", {"x": tx, "xlabel": xlabel, **scatter, "temperature": temperature,
                                     "xname": f"time ({unit})"}, size=(10, 3.6)))
    if not temperature:
        out.append(ctx.temperature_note())
    out.append(Plot(f"{pid}-iops-tgbw", "WSAT: IOPS vs total GB written (TGBW)",
                    "The same samples against the data written so far (GB, base 10).",
                    "wsat_scatter", {"x": [s.tgbw_gb for s in series], "xlabel": "total GB written (TGBW)", **scatter,
                                     "xname": "TGBW (GB)"}, size=(10, 3.6)))
    fills = [s.drive_fills for s in series]
    if all(f is not None for f in fills):
        out.append(Plot(f"{pid}-iops-fills", "WSAT: IOPS vs drive fills",
                        "The same samples against drive fills (bytes written ÷ user capacity).",
                        "wsat_scatter", {"x": fills, "xlabel": "drive fills", **scatter, "xname": "drive fills"},
                        size=(10, 3.6)))
    lat = {"mean": ([*tx], [s.lat_mean_us for s in series]),
           "99.999%": ([*tx], [s.lat_p99999_us for s in series]),
           "max": ([*tx], [s.lat_max_us for s in series])}
    out.append(Plot(f"{pid}-lat-time", "WSAT: response time vs time (mean, 99.999%, max)",
                    "Mean, 99.999% (dashed) and maximum response time of every sample (µs, log "
                    "scale); a sample's percentile comes from its own json+ histogram, never above its "
                    "max: with fewer than 10⁵ IOs in a sample, its 99.999% is its slowest IO and the "
                    "dashed line lies on the max.",
                    "rounds_lines", {"panels": [("response time per sample", lat, "µs", True)], "window": [],
                                     "reached": True, "notes": {k: notes for k in lat}, "xlabel": xlabel,
                                     "dashed": ("99.999%",)}, size=(10, 3.6)))
    out += pts2_blocks(ctx, part, tab)
    out.append(samples_table(pid, tab, {r.index: r.measurement.ios for r in recs}))
    return out


REFERENCE_NOTE = ("Reference: what the drive's own geometry and timings imply (the --describe file's reference, "
                  "e.g. refssd params for the reference SSD, docs/reference-ssd.md). No pass/fail: the reference's "
                  "rates assume every die busy, which the host's queue depth may not keep; GC onset as the drive model "
                  "finds it (docs/methodology.md#drive-model), else the capacity written before the first sample "
                  "below 98% of the first; write amplification over the last 5 "
                  "samples from the drive's own media and host writes where its telemetry reads them (the datasheet's "
                  "write amplification table), else not measured.")


def reference_table(pid: str, ref, tab: WsatTable, steady_wa: float | None = None,
                    model_onset: float | None = None) -> Table | None:
    """The figures the device description's reference predicts beside the ones measured: FOB and
    steady 4 KiB write IOPS, GC onset (capacity written), steady write amplification (``steady_wa``:
    the drive's media ÷ host writes over the last 5 samples, where telemetry has them)."""
    if not isinstance(ref, dict):
        return None
    series = tab.series
    onset = next((i for i, s in enumerate(series) if s.iops < 0.98 * series[0].iops), None)
    fills = [s.drive_fills for s in series]
    measured = {
        "fob_4k_write_iops": ("FOB 4 KiB write IOPS (first sample)", series[0].iops, "IOPS"),
        "steady_4k_write_iops": ("steady 4 KiB write IOPS (last 5 samples)", tab.final_window_iops, "IOPS"),
        "gc_starts_after_capacity_written": (
            "GC onset, capacity written (× user capacity)",
            model_onset if model_onset is not None else
            None if onset is None or None in fills else (fills[onset - 1] if onset else 0.0), ""),
        "steady_wa_greedy_mean_field": ("steady write amplification", steady_wa, ""),
    }
    rows = []
    for key, (label, value, unit) in measured.items():
        r = ref.get(key)
        if not isinstance(r, (int, float)):
            continue
        delta = f"{value / r - 1:+.1%}" if value is not None and r else "—"
        rows.append([Cell(label), Cell(fmt_value(float(r), unit), float(r)),
                     Cell("not measured" if value is None else fmt_value(value, unit), value), Cell(delta)])
    if not rows:
        return None
    return Table(f"{pid}-reference", "WSAT against the device's reference", ["Figure", "Reference", "Measured", "Δ"],
                 rows, note=REFERENCE_NOTE)


MODEL_ROWS = (("fob_iops", "Fresh-out-of-box level", "IOPS"), ("slc_cache_bytes", "SLC cache (capacity written at the cliff)", "bytes"),
              ("gc_onset_capacity_multiple", "GC onset (capacity written, × user capacity)", "×"),
              ("effective_spare", "Effective spare (× user capacity)", "×"), ("steady_iops", "Steady level", "IOPS"),
              ("steady_wa", "Steady write amplification", ""))


def _model_value(v, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "bytes":
        return fmt_capacity(v)
    if unit == "IOPS":
        return fmt_value(v, "IOPS")
    return f"{v:.3f}" if unit == "×" else f"{v:.2f}"


def model_blocks(ctx: RunContext, part: PartResult, tab: WsatTable) -> list:
    """The drive model (docs/methodology.md#drive-model): the curve at its finest grain with the fitted
    levels and events drawn on it, and the figures with their uncertainty and where each comes from."""
    m = part.model
    if m is None or not tab.drive_fills:
        return []
    pid = part.id
    capacity = tab.tgbw_gb * 1e9 / tab.drive_fills
    c = wsatmodel.curve(ctx.round_records(part), round(capacity))
    x, y = wsatmodel.thin(c, 2000)
    end = m.value("written_capacity_multiple") or (x[-1] if x else 0.0)
    events = [(cl.capacity_multiple, f"cliff at {cl.capacity_multiple:.3f}×") for cl in m.cliffs]
    onset = m.value("gc_onset_capacity_multiple")
    if onset is not None:
        events.append((onset, f"GC onset at {onset:.3f}×"))
    lines = []
    starts = [0.0] + [e for e, _ in events]
    levels = [m.value("fob_iops")] + [cl.level_after_iops for cl in m.cliffs]
    names = ["FOB level"] + [f"after cliff {i}" for i in range(1, len(levels))]
    for i, (lv, nm) in enumerate(zip(levels, names)):
        if lv is not None:
            lines.append((starts[i], starts[i + 1] if i + 1 < len(starts) else end, lv, f"{nm} {fmt_value(lv, 'IOPS')}"))
    steady = next((sg for sg in m.segments if sg.get("kind") == "steady"), None)
    if steady is not None:
        lines.append((float(steady["from"]), end, float(steady["level"]), f"steady {fmt_value(steady['level'], 'IOPS')}"))
    out: list = [Plot(f"{pid}-model", "WSAT: the drive model over the curve",
                      "IOPS per interval of fio's per-interval log against drive fills, with the levels and events "
                      "the model found (docs/methodology.md#drive-model).",
                      "wsat_model", {"x": x, "y": y, "lines": lines, "marks": events}, size=(10, 3.6))]
    rows = []
    for key, label, unit in MODEL_ROWS:
        f = m.figure(key)
        v, u = f.value, f.uncertainty
        # the figures that follow from the samples by arithmetic carry their statistic (docs/report.md
        # "Numbers"); the others are the model's reading of the curve, checked by its proof
        checked = key in ("steady_iops", "effective_spare") or (key == "steady_wa" and str(
            f.source or "").startswith("the drive's media"))
        rows.append([Cell(label), Cell(_model_value(v, unit), v, ref=f"{pid}:model:{key}") if v is not None and checked
                     else Cell(_model_value(v, unit), css="num"),
                     Cell("—" if v is None or u is None else "± " + _model_value(u, unit), css="num"),
                     Cell((f.source or "") if v is not None else (f.reason or ""), css="" if v is not None else "approx")])
    for ch in m.checks:
        rows.append([Cell("Check: " + ch.name), Cell("consistent" if ch.ok else "NOT consistent",
                                                     css="ok" if ch.ok else "bad"), Cell(""), Cell(ch.detail)])
    out.append(Table(f"{pid}-model-table", "Drive model from the WSAT curve", ["Figure", "Value", "Uncertainty", "From"],
                     rows, numeric=False, note="What the curve implies under the model's assumptions (greedy GC, uniform random "
                                "writes, no compression or dynamic over-provisioning): docs/methodology.md#drive-model "
                                "says what a real drive may do that the model does not."))
    return out


def pts2_blocks(ctx: RunContext, part: PartResult, tab: WsatTable) -> list:
    """Response-time series (mean, 99.999%, max) vs drive fills, and the final window's response-time
    histogram (PTS 2.0); the same series vs time is the WSAT section's own plot."""
    pid = part.id
    series = tab.series
    out: list = []
    if all(s.drive_fills is not None for s in series):
        fills = [float(s.drive_fills or 0.0) for s in series]
        lat = {"mean": (fills, [s.lat_mean_us for s in series]),
               "99.999%": (fills, [s.lat_p99999_us for s in series]),
               "max": (fills, [s.lat_max_us for s in series])}
        out.append(Plot(f"{pid}-rt-fills", "WSAT: response times vs drive fills (PTS 2.0)",
                        "The same response times against drive fills (bytes written ÷ user capacity; µs, log "
                        "scale).",
                        "rounds_lines", {"panels": [("response time per sample", lat, "µs", True)], "window": [],
                                         "reached": True, "xlabel": "drive fills", "dashed": ("99.999%",)},
                        size=(10, 3.6)))
    final = set(tab.final_window_minutes)
    merged: dict[int, int] = defaultdict(int)
    label = ""
    for r in ctx.round_records(part):
        if r.index in final:
            label = f"{r.workload.size_label} {r.workload.mix}"
            for k, v in r.measurement.lat_bins_ns.items():
                merged[int(k)] += int(v)
    if merged:
        out.append(Plot(f"{pid}-histogram", "WSAT: response-time histogram of the final window (PTS 2.0)",
                        "IOs per response-time bin of the last 5 samples (fio json+, reads and writes together) and "
                        "the cumulative % of IOs completed within a time.",
                        "latency_histograms", {"panels": [("final 5 samples", [(label, dict(merged))])]},
                        size=(8, 4.4)))
    return out


def samples_table(pid: str, tab: WsatTable, ios: dict[int, int]) -> Table:
    series = tab.series
    n = len(series)
    stride = max(1, math.ceil(n / 120))  # at most two printed pages
    rows = []
    for i, s in enumerate(series):
        if i % stride and i != n - 1:
            continue
        r = f"{pid}:m{s.minute}"
        k = ios.get(s.minute)
        flag = approx_max_note(99.999) if k is not None and k < ios_needed(99.999) else ""
        rows.append([Cell(str(s.minute), s.minute), Cell(fmt_value(s.iops, "IOPS"), s.iops, ref=f"{r}:iops"),
                     Cell(fmt_value(s.tgbw_gb), s.tgbw_gb, ref=f"{r}:tgbw_gb"),
                     Cell(fmt_value(s.drive_fills), s.drive_fills, ref=f"{r}:drive_fills"),
                     Cell("—" if k is None else f"{k:,}", k, ref=f"{r}:ios" if k is not None else ""),
                     Cell(fmt_value(s.lat_mean_us), s.lat_mean_us, ref=f"{r}:lat_mean_us"),
                     Cell(fmt_value(s.lat_p99999_us), s.lat_p99999_us, ref=f"{r}:p99.999_us", flag=flag,
                          css="approx" if flag else ""),
                     Cell(fmt_value(s.lat_max_us), s.lat_max_us, ref=f"{r}:lat_max_us")])
    return Table(f"{pid}-table", "WSAT samples" + (f" (one in {stride} and the last)" if stride > 1 else ""),
                 ["Minute", "IOPS", "TGBW (GB)", "Drive fills", "IOs", "Mean (µs)", "99.999% (µs)", "Max (µs)"],
                 rows, note="Every sample is in summary.json and steps.jsonl. 'Minute' numbers the "
                            "samples (PTS: one sample per minute). A sample's 99.999% comes from "
                            "its own json+ histogram; with fewer than 10⁵ IOs it is its slowest IO "
                            "(grey, '≈ max').")


# ---- WSAT as a kind (pages/kind.py) -----------------------------------------------------------------

def stimulus(ctx: RunContext, test: str, _pids: list[str]) -> str:
    if ctx.option("wsat_pattern") != "rnd4k-w":
        w = ctx.first_workload(test)
        return (f"{w.label if w else ctx.option('wsat_pattern')}, continuous, one sample per step "
                "(PTS 2.0 option)")
    return "RND 4KiB 0/100, continuous, one sample per step"


def progress(ctx: RunContext, _test: str, pids: list[str]) -> list[tuple[str, str]]:
    """Its stop rule and samples (no steady-state rule: docs/pts-reference.md#tests)."""
    hours, multiple = ctx.spec.wsat_hours, ctx.spec.wsat_capacity_multiple
    out = [("Stop rule", f"{hours:g} h of steps or {multiple:g}× capacity written (TGBW)"
            if hours is not None and multiple is not None else NA)]
    for p in pids:
        part = ctx.parts[p]
        tab = part.table
        out.append(("Samples", f"{part.samples or 0} ({part.stop_reason or 'stopped early'})"))
        if isinstance(tab, WsatTable):
            out.append(("Written (TGBW)", f"{tab.tgbw_gb:,.2f} GB = {fmt_fixed(tab.drive_fills, 2)} drive fills"))
    return out


def compare_blocks(cmp, p) -> list:
    """Its comparison: every run's samples with the steady level the table compares."""
    series = []
    for r in cmp.runs:
        t = r.part(p.part).table
        s = t.series if isinstance(t, WsatTable) else ()
        series.append(([x.minute for x in s], [x.iops for x in s],
                       list(t.final_window_minutes) if isinstance(t, WsatTable) else [],
                       t.final_window_iops if isinstance(t, WsatTable) else None))
    return [Plot(f"{p.part}-overlay", "Write saturation: IOPS per sample, every run",
                 "RND 4KiB writes; one line per run; dashed: the steady level (average of the final "
                 "window) the table compares.",
                 "wsat_overlay", {"labels": cmp.labels, "series": series}, size=(10.0, 3.8)),
            long_table(cmp, p, p.rows, f"{p.part}-table", "WSAT steady level (IOPS)")]


FIGURES = (
    Figure("wsat_fob_iops", "WSAT RND 4KiB write IOPS, fresh out of box (first sample)", "IOPS", "higher", "wsat",
           "", "fob_iops", 40),
    Figure("wsat_steady_iops", "WSAT RND 4KiB write IOPS, steady level (last 5 samples)", "IOPS", "higher", "wsat",
           "", "final_iops", 41),
    Figure("wsat_drop_pct", "WSAT drop from FOB to the steady level", "%", "lower", "wsat", "", "drop_pct", 42),
    Figure("wsat_effective_spare_pct", "WSAT drive model: effective spare (GC onset − 1), % of user capacity", "%",
           "higher", "wsat", "", "effective_spare_pct", 43),
)


def figure_value(_ctx: RunContext, part: PartResult, f: Figure, _window: str) -> tuple | None:
    """A figure of the samples: the first (fresh out of box), the last five's level, or the drop between them."""
    tab = part.table if isinstance(part.table, WsatTable) else None
    if tab is None or not tab.series:
        return None, "", None, "not run"
    if f.stat == "effective_spare_pct":
        spare = part.model.figure("effective_spare") if part.model is not None else None
        if spare is None or spare.value is None:
            return None, "", None, (spare.reason if spare is not None else None) or "no drive model"
        return (100 * spare.value, "", None, f"GC onset at {part.model.value('gc_onset_capacity_multiple'):.3f}× "
                                             "capacity written (docs/methodology.md#drive-model)")
    fob, final = tab.series[0].iops, tab.final_window_iops
    v = {"fob_iops": fob, "final_iops": final,
         "drop_pct": None if not fob or final is None else 100 * (1 - final / fob)}[f.stat]
    return v, "", None, f"{len(tab.series)} samples"


def figure_uses(_ctx: RunContext, part: PartResult, f: Figure):
    """The samples a figure comes from: the first, the last five, or both."""
    tab = part.table if isinstance(part.table, WsatTable) else None
    first = {tab.series[0].minute} if tab and tab.series else set()
    final = set(tab.final_window_minutes) if tab else set()
    every = {s.minute for s in tab.series} if tab else set()
    idx = {"fob_iops": first, "final_iops": final, "effective_spare_pct": every}.get(f.stat, first | final)
    return lambda m: m.get("index") in idx


def verdict(pid: str, part: PartResult) -> tuple:
    """Its line of the steady-state overview: its samples and their level (no steady-state rule)."""
    n = part.samples or 0
    fw = part.table.final_window_iops if isinstance(part.table, WsatTable) else None
    return (f"{n} samples", "n/a (WSAT: no steady-state rule)" if n else "not run", not n,
            Cell(f"last 5 samples: {fmt_value(fw, 'IOPS')} IOPS" if n else "—", fw, ref=f"{pid}:final_iops" if n else ""))


KINDS = {"wsat": ReportKind(sections, "Write Saturation Test (REQUIRED) – Report Page", stimulus,
                            preconditioning=lambda *_: ("none (WSAT starts from a purged device)", "none"),
                            progress=progress, compare=compare_blocks, figures=FIGURES, figure_value=figure_value,
                            figure_uses=figure_uses, verdict=verdict)}
