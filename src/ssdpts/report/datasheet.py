"""Page 1 of a report: the datasheet — the figures a buyer compares, each with its steady-state and
compliance status, and, given a file of targets (``ssdpts report RUN --targets FILE``: the vendor's
datasheet values, or a target table in the style of the OCP Datacenter NVMe SSD specification's
performance targets), the difference to each target and pass/fail.

Targets file: CSV with a header line, ``#`` comments allowed::

    figure,limit,direction
    rnd4k_read_iops,900000,higher       # at least 900k IOPS
    qd1_4k_read_p99999_us,1500,lower    # 99.999% at most 1.5 ms

``direction``: ``higher`` (the figure must be at least the limit; also ``min``, ``>=``) or
``lower`` (at most; also ``max``, ``<=``). ``figure`` is one of :data:`FIGURES`, or a latency
outlier count ``<cell>_over_<T>ms`` (:data:`OUTLIER_CELLS`; any threshold T in ms): the IOs slower
than T in the cell's window, judged on the upper bound of fio's histogram (pts/qos.outliers)::

    qd1_4k_read_over_10ms,0,lower       # no QD1 4 KiB read slower than 10 ms

or a write amplification ``waf_<part>`` (a summary part id: ``waf_wsat``, ``waf_iops``, ...): the
media bytes the drive wrote per host byte over that part, where its telemetry reads them
(device/mediawrites.py); CacheBench-style fleet targets are of the order of 1.3-1.4::

    waf_wsat,1.4,lower                  # an example target, not a spec's
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import io
from pathlib import Path
import re
from typing import TYPE_CHECKING

from ..errors import UserError
from ..pts.qos import approx_max_note, outliers
from ..pts.tp import TpTable
from ..pts.wsat import WsatTable
from ..pts.workload import cell_key
from ..results import timing
from .doc import Cell, Para, Section, Table
from .fmt import fmt_rounds, fmt_value

if TYPE_CHECKING:
    from .context import RunContext


@dataclass(frozen=True)
class Figure:
    id: str
    label: str
    unit: str
    better: str  # "higher" or "lower"
    part: str  # summary part id
    key: str  # cell key ("" for WSAT figures)
    stat: str  # the statistic (Cell.ref)


FIGURES = (
    Figure("rnd4k_read_iops", "RND 4KiB read IOPS (100/0)", "IOPS", "higher", "iops", cell_key("rand", 4096, 100), "iops"),
    Figure("rnd4k_write_iops", "RND 4KiB write IOPS (0/100)", "IOPS", "higher", "iops", cell_key("rand", 4096, 0), "iops"),
    Figure("rnd4k_mixed_iops", "RND 4KiB mixed IOPS, 65/35 (the PTS mix nearest 70/30)", "IOPS", "higher", "iops",
           cell_key("rand", 4096, 65), "iops"),
    Figure("seq128k_read_mbps", "SEQ 128KiB read MB/s", "MB/s", "higher", "tp-128KiB", cell_key("seq", 131072, 100),
           "read_mb_per_s"),
    Figure("seq128k_write_mbps", "SEQ 128KiB write MB/s", "MB/s", "higher", "tp-128KiB", cell_key("seq", 131072, 0),
           "write_mb_per_s"),
    Figure("seq1024k_read_mbps", "SEQ 1024KiB read MB/s", "MB/s", "higher", "tp-1024KiB", cell_key("seq", 1048576, 100),
           "read_mb_per_s"),
    Figure("seq1024k_write_mbps", "SEQ 1024KiB write MB/s", "MB/s", "higher", "tp-1024KiB", cell_key("seq", 1048576, 0),
           "write_mb_per_s"),
    Figure("qd1_4k_read_mean_us", "QD1 RND 4KiB read: mean response time", "µs", "lower", "lat", cell_key("rand", 4096, 100),
           "lat_mean_us"),
    Figure("qd1_4k_read_p99999_us", "QD1 RND 4KiB read: 99.999% response time", "µs", "lower", "lat",
           cell_key("rand", 4096, 100), "p99.999_us"),
    Figure("qd1_4k_write_mean_us", "QD1 RND 4KiB write: mean response time", "µs", "lower", "lat", cell_key("rand", 4096, 0),
           "lat_mean_us"),
    Figure("qd1_4k_write_p99999_us", "QD1 RND 4KiB write: 99.999% response time", "µs", "lower", "lat",
           cell_key("rand", 4096, 0), "p99.999_us"),
    Figure("wsat_fob_iops", "WSAT RND 4KiB write IOPS, fresh out of box (first sample)", "IOPS", "higher", "wsat",
           "", "fob_iops"),
    Figure("wsat_steady_iops", "WSAT RND 4KiB write IOPS, steady level (last 5 samples)", "IOPS", "higher", "wsat",
           "", "final_iops"),
    Figure("wsat_drop_pct", "WSAT drop from FOB to the steady level", "%", "lower", "wsat", "", "drop_pct"),
)
BY_ID = {f.id: f for f in FIGURES}
# Latency outliers: the IOs slower than a threshold (ms) in a cell's window: (id prefix, label, part, cell key).
OUTLIER_CELLS = (
    ("qd1_4k_read", "QD1 RND 4KiB read", "lat", cell_key("rand", 4096, 100)),
    ("qd1_4k_write", "QD1 RND 4KiB write", "lat", cell_key("rand", 4096, 0)),
    ("rnd4k_read", "RND 4KiB read at the IOPS test's TC × QD", "iops", cell_key("rand", 4096, 100)),
    ("rnd4k_write", "RND 4KiB write at the IOPS test's TC × QD", "iops", cell_key("rand", 4096, 0)),
    ("ocp_trim_read", "OCP: QD1 reads beside deallocation", "ocp-trim", "trim"),
    ("ocp_idle_gc_read", "OCP: QD1 probe reads in the idle time after a write burst", "ocp-idle-gc-measure", "idle"),
)
OUTLIER_ID = re.compile(r"(?P<cell>[a-z0-9_]+?)_over_(?P<ms>[0-9]+(?:\.[0-9]+)?)ms")
WAF_ID = re.compile(r"waf_(?P<part>[A-Za-z0-9_.-]+)")


def waf_figure(part: str) -> Figure:
    """The write amplification of one part (summary part id) as a datasheet figure."""
    return Figure(f"waf_{part}", f"Write amplification, {part} (media ÷ host bytes written)", "", "lower", part, "",
                  "waf")


def outlier_figure(prefix: str, ms: float) -> Figure | None:
    """The datasheet figure of a cell's IOs above ``ms`` (None: no such cell)."""
    c = next((c for c in OUTLIER_CELLS if c[0] == prefix), None)
    if c is None:
        return None
    return Figure(f"{prefix}_over_{ms:g}ms", f"{c[1]}: IOs slower than {ms:g} ms (at most)", "IOs", "lower",
                  c[2], c[3], f"over_{ms:g}ms_most")


def figure(fid: str) -> Figure | None:
    """A datasheet figure by its id: one of FIGURES, or an outlier count <cell>_over_<T>ms."""
    if fid in BY_ID:
        return BY_ID[fid]
    w = WAF_ID.fullmatch(fid)
    if w:
        return waf_figure(w["part"])
    m = OUTLIER_ID.fullmatch(fid)
    f = outlier_figure(m["cell"], float(m["ms"])) if m else None
    return f if f is not None and f.id == fid else None


def figure_ids() -> str:
    return ", ".join(BY_ID) + ", " + ", ".join(f"{c[0]}_over_<T>ms" for c in OUTLIER_CELLS) + ", waf_<part>"
DIRECTIONS = {"higher": "higher", "min": "higher", ">=": "higher", "at-least": "higher",
              "lower": "lower", "max": "lower", "<=": "lower", "at-most": "lower"}


@dataclass(frozen=True)
class Target:
    figure: str
    limit: float
    better: str  # "higher": value ≥ limit passes; "lower": value ≤ limit passes


def read_targets(path: Path | str) -> dict[str, Target]:
    """The targets file, or one line saying what is wrong in it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read the targets file {path} ({exc.strerror}): give a CSV file "
                        "with the columns figure,limit,direction") from None
    return parse_targets(text, str(path))


def parse_targets(text: str, where: str = "targets") -> dict[str, Target]:
    lines = [(n, ln.split("#", 1)[0].strip()) for n, ln in enumerate(text.splitlines(), start=1)]
    lines = [(n, ln) for n, ln in lines if ln]
    if not lines:
        raise UserError(f"{where} is empty: give a CSV file with the header figure,limit,direction")
    head_n, head = lines[0]
    cols = [c.strip().lower() for c in next(csv.reader(io.StringIO(head)))]
    if not {"figure", "limit", "direction"} <= set(cols):
        raise UserError(f"{where} line {head_n}: the header must name the columns figure,limit,direction "
                        f"(got {head!r})")
    out: dict[str, Target] = {}
    for n, ln in lines[1:]:
        row = dict(zip(cols, (c.strip() for c in next(csv.reader(io.StringIO(ln))))))
        fid = row.get("figure", "")
        f = figure(fid)
        if f is None:
            raise UserError(f"{where} line {n}: unknown figure {fid!r}; the figures are: {figure_ids()} "
                            "(T: a threshold in ms, e.g. qd1_4k_read_over_10ms)")
        fid = f.id
        try:
            limit = float(row.get("limit", "").replace(",", "").replace("_", ""))
        except ValueError:
            raise UserError(f"{where} line {n}: limit {row.get('limit')!r} is not a number") from None
        d = DIRECTIONS.get(row.get("direction", "").lower())
        if d is None:
            raise UserError(f"{where} line {n}: direction {row.get('direction')!r} must be higher (min, >=) or "
                            "lower (max, <=)")
        if fid in out:
            raise UserError(f"{where} line {n}: figure {fid} is given twice")
        out[fid] = Target(fid, limit, d)
    return out


def value_of(b: RunContext, f: Figure) -> tuple[float | None, str, bool | None, str]:
    """(value, flag, steady state reached, window text) of a datasheet figure in a run."""
    part = b.parts.get(f.part)
    if part is None:
        return None, "", None, "not run"
    if f.stat == "waf":
        w = waf_of(b.records.get((part.test, part.part), []))
        return (None, "", None, "no media-write counter") if w is None else (w.value, w.note, None, w.span)
    if f.part == "wsat":
        tab = part.table if isinstance(part.table, WsatTable) else None
        if tab is None or not tab.series:
            return None, "", None, "not run"
        fob, final = tab.series[0].iops, tab.final_window_iops
        v = {"fob_iops": fob, "final_iops": final,
             "drop_pct": None if not fob or final is None else 100 * (1 - final / fob)}[f.stat]
        return v, "", None, f"{len(tab.series)} samples"
    window = f"rounds {fmt_rounds(part.window_rounds)}" if part.window_rounds else "no window"
    if f.stat.startswith("over_"):
        steps = b.cell_steps(part, f.key)
        o = outliers([s.measurement for s in steps], float(f.stat[5:-7]) * 1000)
        if o is None or not steps:
            return None, "", part.reached, window
        where = window if part.window_rounds else f"the {f.key} phase"
        return (float(o.at_most), "" if o.exact else f"at least {o.at_least:,}", part.reached,
                f"{where}, {sum(s.measurement.ios for s in steps):,} IOs")
    if f.stat == "iops" and f.part == "iops":
        tab = part.table
        bs, pct = int(f.key.split("-")[1]), f.key.split("-")[2]
        row = next((r for r in getattr(tab, "rows", ()) if r.block_size_bytes == bs), None)
        mix = f"{pct}/{100 - int(pct)}"
        return (row.values.get(mix) if row else None), "", part.reached, window
    if f.stat in ("read_mb_per_s", "write_mb_per_s"):
        tab = part.table if isinstance(part.table, TpTable) else None
        return (getattr(tab, f.stat) if tab else None), "", part.reached, window
    w = b.latency(part, f.key)
    if not w.steps:
        return None, "", part.reached, window
    if f.stat == "lat_mean_us":
        return w.mean_us, "", part.reached, window + f", {w.ios:,} IOs"
    v = w.percentile_us(99.999)
    return v, ("" if w.resolved(99.999) else approx_max_note(99.999)), part.reached, window + f", {w.ios:,} IOs"


def uses(b: RunContext, f: Figure):
    """Which of a part's steps a figure comes from (for its mark): WSAT's first sample, last five or
    both; else the window's rounds (a fixed plan: every round) of the figure's cell."""
    part = b.parts[f.part]
    if f.part == "wsat":
        tab = part.table if isinstance(part.table, WsatTable) else None
        first = {tab.series[0].minute} if tab and tab.series else set()
        final = set(tab.final_window_minutes) if tab else set()
        idx = {"fob_iops": first, "final_iops": final}.get(f.stat, first | final)
        return lambda m: m.get("index") in idx
    rounds = set(part.window_rounds) or None  # a fixed plan has no window: every round it ran
    return lambda m: (rounds is None or m.get("round") in rounds) and (not f.key or m.get("key") == f.key)


def figures(b: RunContext) -> list[Figure]:
    """The datasheet's figures: FIGURES, then each outlier cell at the run's thresholds and at any
    threshold the targets name."""
    out = list(FIGURES)
    named = [fid for fid in (b.targets or {}) if fid not in BY_ID]
    for c in OUTLIER_CELLS:
        run = [outlier_figure(c[0], ms) for ms in b.outlier_ms]
        more = [figure(fid) for fid in named if fid.startswith(c[0] + "_over_")]
        fs = {f.id: f for f in run + more if f is not None}
        out += sorted(fs.values(), key=lambda f: float(f.stat[5:-7]))
    for pid, p in b.parts.items():
        if f"waf_{pid}" in (b.targets or {}) or waf_of(b.records.get((p.test, p.part), [])) is not None:
            out.append(waf_figure(pid))
    out += [figure(fid) for fid in named if WAF_ID.fullmatch(fid) and fid[4:] not in b.parts]
    return out


def section(b: RunContext) -> Section:
    sec = Section("datasheet", "Datasheet", 2, None)
    compliant = not b.run.deviations
    comp_text = "compliant" if compliant else ("NOT compliant (time-compressed)"
                                               if any(d.startswith("time-compressed") for d in b.run.deviations)
                                               else "NOT compliant")
    cols = ["Figure", "Value", "Window", "Steady state", "PTS 2.0.2"]
    if b.targets:
        cols += ["Target", "Δ vs target", "Verdict"]
    rows = []
    for f in figures(b):
        v, flag, reached, window = value_of(b, f)
        if v is None and f.part not in b.parts and not (b.targets and f.id in b.targets):
            continue  # a test the run did not include
        mark = timing.flag(b.parts[f.part].timing, uses(b, f)) if v is not None and f.stat != "waf" else ""
        flag = f"{mark}; {flag}" if mark and flag else (mark or flag)
        ref = "" if v is None else (f"{f.part}:{f.key}:{f.stat}" if f.key else f"{f.part}:{f.stat}")
        detail = f"d-{f.part}-{f.key}" if f.key and f"d-{f.part}-{f.key}" in b.details else ""
        ss = Cell("n/a" if reached is None else ("reached" if reached else "NOT reached"),
                  css="" if reached is None else ("ok" if reached else "bad"))
        text = fmt_value(v, f.unit) if f.unit != "%" else ("—" if v is None else f"{v:.1f}")
        if f.unit == "IOs" and v is not None:
            text = f"{v:,.0f}"
        if f.stat == "waf":
            text = "—" if v is None else f"{v:.3f}"
        row = [Cell(f.label), Cell(text + ("" if v is None else f" {f.unit}"), v, ref=ref, detail=detail, flag=flag,
                                   css="approx" if flag else ""),
               Cell(window), ss, Cell(comp_text, css="ok" if compliant else "warn")]
        if b.targets:
            t = b.targets.get(f.id)
            if t is None:
                row += [Cell("—"), Cell("—"), Cell("")]
            else:
                # css "given": a number from the targets file, not a measurement
                limit = (f"{t.limit:,.0f}" if f.unit == "IOs" else f"{t.limit:g}" if f.stat == "waf"
                         else fmt_value(t.limit, f.unit))
                row.append(Cell(f"{'≥' if t.better == 'higher' else '≤'} {limit}", t.limit,
                                css="given"))
                if v is None:
                    row += [Cell("—"), Cell("no value", css="bad")]
                else:
                    delta = 100 * (v - t.limit) / t.limit if t.limit else None
                    ok = v >= t.limit if t.better == "higher" else v <= t.limit
                    row += [Cell("—" if delta is None else f"{delta:+.1f}%", delta, css="given",
                                 ref="" if delta is None else f"{f.id}:target_delta_pct"),
                            Cell("pass" if ok else "FAIL", css="ok" if ok else "bad")]
        rows.append(row)
    note = ("Values are averages over each test's measurement window (response-time percentiles: the pooled "
            "histogram of the window, docs/methodology.md). Each links to its rounds in the test pages.")
    if b.targets:
        note += " Δ vs target = (value − target) ÷ target."
    sec.blocks.append(Table("datasheet-table", "The figures a buyer compares", cols, rows, note=note, numeric=False))
    sec.blocks.append(write_amplification(b))
    return sec


@dataclass(frozen=True)
class Waf:
    """A part's write amplification: media ÷ host over the span from its first step's snapshot
    before to its last step's after (bytes, or ATA program pages where the drive counts pages)."""

    value: float
    media: str  # what the drive wrote to its media, for the table
    host: str
    span: str
    note: str  # the media counter's resolution where it is coarse against the difference


def waf_of(recs: list) -> Waf | None:
    """Write amplification over step records (None: no media-write counter, or no host writes)."""
    snaps = [(r.telemetry or {}) for r in recs if isinstance(r.telemetry, dict)]
    for media, host, unit in (("physical_media_written_bytes", "data_written_bytes", "bytes"),
                              ("nand_program_pages", "host_program_pages", "pages")):
        def has(s: dict | None, media=media, host=host) -> bool:
            return isinstance(s, dict) and isinstance(s.get(media), (int, float)) and isinstance(s.get(host), (int, float))
        first = next((t["before"] for t in snaps if has(t.get("before"))), None)
        last = next((t["after"] for t in reversed(snaps) if has(t.get("after"))), None)
        if first is None or last is None:
            continue
        d_media, d_host = last[media] - first[media], last[host] - first[host]
        if d_host <= 0 or d_media < 0:
            continue
        res = first.get("physical_media_unit_bytes") if unit == "bytes" else None
        note = (f"± {100 * res / d_media:.1f}% (the counter counts {res:,} bytes)"
                if res and d_media and res / d_media > 0.005 else "")
        span = f"{len(recs)} steps, {last['t_unix_s'] - first['t_unix_s']:,.0f} s"
        show = (lambda n: f"{n / 1e9:,.3f} GB") if unit == "bytes" else (lambda n: f"{n:,.0f} pages")
        return Waf(d_media / d_host, show(d_media), show(d_host), span, note)
    return None


def write_amplification(b: RunContext) -> Para | Table:
    """Write amplification of each test from the drive's media writes (the OCP SMART extended log's
    physical media units written, a SATA NAND-writes attribute, the reference SSD's flash pages)
    against the host's writes the drive counted, from the first step's snapshot to the last's."""
    rows = []
    for pid, p in b.parts.items():
        w = waf_of(b.records.get((p.test, p.part), []))
        if w is not None:
            rows.append([Cell(pid), Cell(f"{w.value:.3f}", w.value, ref=f"{pid}:waf", flag=w.note,
                                         css="approx" if w.note else ""),
                         Cell(w.media), Cell(w.host), Cell(w.span)])
    if not rows:
        return Para("Write amplification: not available: the drive's telemetry carries no media write counter "
                    "(the OCP SMART / Health Information Extended log C0h on NVMe, a NAND-writes attribute on SATA), "
                    "so the media writes per host write cannot be measured on this device.")
    return Table("datasheet-wa", "Write amplification per test (media ÷ host writes, as the drive counts both)",
                 ["Test", "Write amplification", "Media written", "Host written", "Span"], rows,
                 note="Both counters are the drive's own, read before the test's first step and after its last "
                      "(device/mediawrites.py); a coarse media counter (GiB units) is marked with its resolution.")
