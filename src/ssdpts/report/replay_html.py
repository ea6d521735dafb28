"""One-page report of a trace replay (ssdpts trace replay) and of a comparison of replays: the
quick report's page (report/quick_html.py) with the response-time table and the trace's LBA heat map."""

from __future__ import annotations

import json
from pathlib import Path

from markupsafe import escape

from . import FORMATS, output_paths, parse_formats
from .quick_html import (QuickDoc, _grouped, _num, _rse, _size, _write, build_comparison as quick_comparison,
                         run_head, verdict)
from ssdpts.workloads.replay import PCTS, load

NOTE = ("Median: the value of the middle run (seed 004 §4.1); RSE = s / (x̄ · √N) over the N replays (seed 004 §4.2). "
        "Completion time: fio's job_runtime, first IO to last completion. MB/s = 10⁶ bytes per second. Response "
        "times: fio's total latency (lat: submission to completion) from the json+ histogram of the median run "
        "(the run whose completion time is the median).")


def _fig(v: float | None, unit: str) -> str:
    """Completion times to the millisecond (a replay often takes under a second); the rest as quick's."""
    return f"{v:,.3f}" if unit == "s" and v is not None else _num(v)


def _bs(b: int) -> str:
    return f"{b // 1024}KiB" if b % 1024 == 0 else f"{b}B"


def heat_svg(heat: dict) -> str:
    """Reads and writes per 1/64 of the LBA range as two rows of cells, darker = more IOs."""
    n = heat["bins"]
    w, h, left = 10, 14, 52
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {left + n * w + 4} {2 * h + 26}" role="img" '
             f'aria-label="LBA heat map">']
    for row, (name, color) in enumerate((("reads", "31,111,235"), ("writes", "207,34,46"))):
        counts = heat[name]
        top = max(counts) or 1
        y = 4 + row * (h + 2)
        parts.append(f'<text x="0" y="{y + h - 3}" font-size="10" fill="#333">{name}</text>')
        for i, c in enumerate(counts):
            a = 0.0 if not c else 0.12 + 0.88 * c / top
            parts.append(f'<rect x="{left + i * w}" y="{y}" width="{w - 1}" height="{h}" fill="rgba({color},{a:.3f})" '
                         f'stroke="#d0d7de" stroke-width="0.3"><title>{name} {c}</title></rect>')
    ext = heat["extent_bytes"]
    y = 2 * h + 20
    parts.append(f'<text x="{left}" y="{y}" font-size="9" fill="#59636e">LBA 0</text>')
    parts.append(f'<text x="{left + n * w}" y="{y}" font-size="9" fill="#59636e" text-anchor="end">'
                 f'{escape(_size(ext))} — LBA heat map of the trace, IOs per 1/{n} of the range</text>')
    parts.append("</svg>")
    return "".join(parts)


def latency_rows(doc: dict) -> tuple[str, list[list[tuple[str, str]]]]:
    k = doc.get("median_run")
    if not k:
        return "Response time, µs: no replay measured", []
    run = doc["runs"][k - 1]
    rows = []
    for kind in ("read", "write"):
        t = run["types"].get(kind)
        if t:
            rows.append([(kind, "l"), (f"{t['ios']:,}", ""), (_num(t["lat_mean_us"]), "")]
                        + [(_num(t[f"lat_p{p:g}_us"]), "") for p in PCTS] + [(_num(t["lat_max_us"]), "")])
    return f"Response time, µs — median run r{k:02d} ({run['file']})", rows


def build(run_dir: Path) -> QuickDoc:
    man, doc = load(run_dir)
    spec = doc["spec"]
    tr = doc["trace"]

    def cells(f: dict) -> list[tuple[str, str]]:
        status, css = verdict(f["reliable"])
        return [(f["label"], "l"), (f["unit"], ""), (_fig(f["median"], f["unit"]), css or "med"),
                (_rse(f["rse"]), css), (str(f["n"]), ""),
                (" · ".join(_fig(v, f["unit"]) for v in f["values"]), "runs"), (status, css)]

    cap, lrows = latency_rows(doc)
    mrun = doc["runs"][doc["median_run"] - 1] if doc.get("median_run") else None
    counts = [[("IOs", "l"), (f"{tr['ios']:,}", ""), (f"{mrun['ios']:,}" if mrun else "—", "")],
              [("reads", "l"), (f"{tr['reads']:,}", ""), (f"{mrun['read_ios']:,}" if mrun else "—", "")],
              [("writes", "l"), (f"{tr['writes']:,}", ""), (f"{mrun['write_ios']:,}" if mrun else "—", "")]]
    try:
        heat = json.loads((Path(run_dir) / tr["summary"]).read_text())["lba_heat_map"]
        svg = heat_svg(heat)
    except (OSError, ValueError, KeyError):
        svg = ""
    ident, kicker, head = run_head(man)
    timing = ("as fast as possible (replay_no_stall)" if spec["no_stall"] or not tr["timed"]
              else f"timed, {spec['time_scale_pct']}% of the recorded rate")
    return QuickDoc(
        title=f"Trace replay — {ident}", kicker=kicker,
        fields_title="Device, trace and settings",
        fields=[*head,
                ("Trace", f"{man.get('trace_file')} ({tr['source']}): {tr['ios']:,} IOs, {tr['reads']:,} reads, "
                          f"{tr['writes']:,} writes" + (f", {tr['duration_s']:.3f} s recorded" if tr["duration_s"] else "")),
                ("Block sizes", ", ".join(f"{_bs(b['size_bytes'])} {b['reads']:,}R/{b['writes']:,}W"
                                          for b in tr["block_sizes"][:12]) + (" …" if len(tr["block_sizes"]) > 12 else "")),
                ("Replay", f"{spec['runs']} runs, {timing}, iodepth {doc['iodepth']}, ioengine {spec['ioengine']}")],
        columns=["Figure", "Unit", "Median", "RSE", "N", "Runs (in order)", "Status"],
        rows=_grouped([{**f, "group": "Replay"} for f in doc["figures"]], cells),
        tables=[{"caption": cap, "columns": ["IO type", "IOs", "mean"] + [f"p{p:g}" for p in PCTS] + ["max"],
                 "rows": lrows},
                {"caption": "IO count: trace vs replayed (fio, median run)", "columns": ["", "trace", "replayed"],
                 "rows": counts}],
        figure_svg=svg,
        disclosures=list(man.get("deviations") or []),
        notes=[NOTE, "Raw fio json+ of every replay: fio/replay-rNN.json; trace/replay.iolog is what fio replayed; "
                     "replay.json holds every run's values (docs/results-format.md)."],
        footer=f"ssdpts trace replay · {Path(run_dir).name}")


def build_comparison(cmp: dict) -> QuickDoc:
    return quick_comparison(
        {**cmp, "rows": [{**r, "group": "Replay (median of the runs)"} for r in cmp["rows"]]},
        title="Trace replay — comparison", fmt=_fig, notes=(NOTE,), footer="ssdpts compare (trace replays)",
        disclosures=("Δ for completion time (a time, lower is better): time_B / time_A − 1 (seed 004 §4.3)",
                     "Δ for IOPS and MB/s (speeds): A / B − 1 (seed 004 §4.3); positive always means A is faster",
                     "* the figure is unreliable in that run (RSE above 5%): its delta is not evidence"))


def render(run_dir: Path | str, formats=FORMATS, out: Path | str | None = None) -> list[Path]:
    formats = parse_formats(formats) if isinstance(formats, str) else tuple(formats)
    return _write(build(Path(run_dir)), output_paths(Path(run_dir), formats, out))


def render_comparison(cmp: dict, formats=("html", "pdf"), out: Path | str | None = None) -> list[Path]:
    return _write(build_comparison(cmp), output_paths(".", tuple(formats), out, "ssdpts-compare"), cmp)
