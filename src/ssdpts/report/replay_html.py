"""One-page report of a trace replay (ssdpts trace replay) and of a comparison of replays: the
quick report's Page (report/quick_html.py) with the response-time table and the trace's LBA heat
map (drawn by report/page_html.py)."""

from __future__ import annotations

import json
from pathlib import Path

from ssdpts.workloads.replay import PCTS, load
from .doc import Cell, Fields, Page, Table
from .files import FORMATS, output_paths, parse_formats
from .fmt import fmt_figure
from .page_html import write
from .quick_html import FIGURE_COLUMNS, build_comparison as quick_comparison, figure_cells, grouped, run_head

NOTE = ("Median: the value of the middle run; RSE = s / (x̄ · √N) over the N replays (docs/compare.md#repeated-runs). "
        "Completion time: fio's job_runtime, first IO to last completion. MB/s = 10⁶ bytes per second. Response "
        "times: fio's total latency (lat: submission to completion) from the json+ histogram of the median run "
        "(the run whose completion time is the median).")
HEAT_KEYS = {"bins", "reads", "writes", "extent_bytes"}


def _fig(v: float | None, unit: str) -> str:
    """Completion times to the millisecond (a replay often takes under a second); the rest as quick's."""
    return f"{v:,.3f}" if unit == "s" and v is not None else fmt_figure(v)


def _bs(b: int) -> str:
    return f"{b // 1024}KiB" if b % 1024 == 0 else f"{b}B"


def latency_table(doc: dict) -> Table:
    cols = ["IO type", "IOs", "mean"] + [f"p{p:g}" for p in PCTS] + ["max"]
    k = doc.get("median_run")
    if not k:
        return Table("latency", "Response time, µs: no replay measured", cols, [])
    run = doc["runs"][k - 1]
    rows = []
    for kind in ("read", "write"):
        t = run["types"].get(kind)
        if t:
            rows.append([Cell(kind, css="l"), Cell(f"{t['ios']:,}"), Cell(fmt_figure(t["lat_mean_us"]))]
                        + [Cell(fmt_figure(t[f"lat_p{p:g}_us"])) for p in PCTS] + [Cell(fmt_figure(t["lat_max_us"]))])
    return Table("latency", f"Response time, µs — median run r{k:02d} ({run['file']})", cols, rows)


def counts_table(doc: dict) -> Table:
    tr = doc["trace"]
    mrun = doc["runs"][doc["median_run"] - 1] if doc.get("median_run") else None
    rows = [[Cell(name, css="l"), Cell(f"{tr[t]:,}"), Cell(f"{mrun[m]:,}" if mrun else "—")]
            for name, t, m in (("IOs", "ios", "ios"), ("reads", "reads", "read_ios"), ("writes", "writes", "write_ios"))]
    return Table("counts", "IO count: trace vs replayed (fio, median run)", ["", "trace", "replayed"], rows)


def heat_map(run_dir: Path, tr: dict) -> dict | None:
    """The trace's LBA heat map from its summary (None when the summary has none)."""
    try:
        heat = json.loads((Path(run_dir) / tr["summary"]).read_text())["lba_heat_map"]
    except (OSError, ValueError, KeyError):
        return None
    return heat if isinstance(heat, dict) and HEAT_KEYS <= set(heat) else None


def build(run_dir: Path) -> Page:
    run = load(run_dir)
    man, spec, doc = run.manifest, run.spec, run.doc
    tr = doc["trace"]
    ident, kicker, head = run_head(man)
    timing = ("as fast as possible (replay_no_stall)" if spec["no_stall"] or not tr["timed"]
              else f"timed, {spec['time_scale_pct']}% of the recorded rate")
    return Page(
        title=f"Trace replay — {ident}", kicker=kicker,
        fields=Fields("Device, trace and settings", [
            *head,
            ("Trace", f"{man.doc.get('trace_file')} ({tr['source']}): {tr['ios']:,} IOs, {tr['reads']:,} reads, "
                      f"{tr['writes']:,} writes" + (f", {tr['duration_s']:.3f} s recorded" if tr["duration_s"] else "")),
            ("Block sizes", ", ".join(f"{_bs(b['size_bytes'])} {b['reads']:,}R/{b['writes']:,}W"
                                      for b in tr["block_sizes"][:12]) + (" …" if len(tr["block_sizes"]) > 12 else "")),
            ("Replay", f"{spec['runs']} runs, {timing}, iodepth {doc['iodepth']}, ioengine {spec['ioengine']}")]),
        table=grouped("replay", FIGURE_COLUMNS, list(run.figures), lambda f: figure_cells(f, lambda v: _fig(v, f.unit)),
                      lambda _f: "Replay"),
        tables=[latency_table(doc), counts_table(doc)],
        heat=heat_map(run_dir, tr),
        disclosures=list(man.deviations or ()),  # in today's words (records.Manifest)
        notes=[NOTE, "Raw fio json+ of every replay: fio/replay-rNN.json; trace/replay.iolog is what fio replayed; "
                     "replay.json holds every run's values (docs/results-format.md)."],
        footer=f"ssdpts trace replay · {Path(run_dir).name}")


def build_comparison(cmp: dict) -> Page:
    return quick_comparison(
        {**cmp, "rows": [{**r, "group": "Replay (median of the runs)"} for r in cmp["rows"]]},
        title="Trace replay — comparison", fmt=_fig, notes=(NOTE,), footer="ssdpts compare (trace replays)",
        disclosures=("Δ for completion time (a time, lower is better): time_B / time_A − 1 (docs/compare.md#delta)",
                     "Δ for IOPS and MB/s (speeds): A / B − 1 (docs/compare.md#delta); positive always means A is faster",
                     "* the figure is unreliable in that run (RSE above 5%): its delta is not evidence"))


def render(run_dir: Path | str, formats=FORMATS, out: Path | str | None = None) -> list[Path]:
    formats = parse_formats(formats) if isinstance(formats, str) else tuple(formats)
    return write(build(Path(run_dir)), output_paths(Path(run_dir), formats, out))


def render_comparison(cmp: dict, formats=("html", "pdf"), out: Path | str | None = None) -> list[Path]:
    return write(build_comparison(cmp), output_paths(".", tuple(formats), out, "ssdpts-compare"), cmp)
