"""Page 1 of a report: the datasheet — the figures a buyer compares, each with its steady-state and
compliance status, and, given a file of targets (``ssdpts report RUN --targets FILE``: the vendor's
datasheet values, or a target table in the style of the OCP Datacenter NVMe SSD specification's
performance targets), the difference to each target and pass/fail.

Targets file: CSV with a header line, ``#`` comments allowed::

    figure,limit,direction
    rnd4k_read_iops,900000,higher       # at least 900k IOPS
    qd1_4k_read_p99999_us,1500,lower    # 99.999% at most 1.5 ms

``direction``: ``higher`` (the figure must be at least the limit; also ``min``, ``>=``) or
``lower`` (at most; also ``max``, ``<=``). ``figure`` is one of the test kinds' figures (:func:`all_figures`), or a latency
outlier count ``<cell>_over_<T>ms`` (:func:`outlier_cells`; any threshold T in ms): the IOs slower
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
from ..pts.qos import outliers
from ..pts.runspec import marks
from ..results import timing
from ..results.steprecord import telemetry_span
from .doc import Cell, Para, Section, Table
from .fmt import fmt_rounds, fmt_value
from .pages.kind import Figure
from ..pts.units import fmt_capacity

if TYPE_CHECKING:
    from .context import RunContext


OUTLIER_ID = re.compile(r"(?P<cell>[a-z0-9_]+?)_over_(?P<ms>[0-9]+(?:\.[0-9]+)?)ms")
WAF_ID = re.compile(r"waf_(?P<part>[A-Za-z0-9_.-]+)")


def all_figures() -> tuple[Figure, ...]:
    """Every test kind's datasheet figures (pages/kind.py ``figures``), in datasheet order."""
    return tuple(sorted((f for k in _kinds() for f in k.figures), key=lambda f: f.order))


def outlier_cells() -> tuple[tuple[str, str, str, str], ...]:
    """Every test kind's outlier cells, (id prefix, label, part, cell key), in datasheet order."""
    return tuple(c[1:] for c in sorted((c for k in _kinds() for c in k.outlier_cells), key=lambda c: c[0]))


def _kinds() -> list:
    from ..pts.registry import TESTS
    from .pages import of

    return [k for k in (of(t) for t in TESTS) if k is not None]


def waf_figure(part: str) -> Figure:
    """The write amplification of one part (summary part id) as a datasheet figure."""
    return Figure(f"waf_{part}", f"Write amplification, {part} (media ÷ host bytes written)", "", "lower", part, "",
                  "waf")


def outlier_figure(prefix: str, ms: float) -> Figure | None:
    """The datasheet figure of a cell's IOs above ``ms`` (None: no such cell)."""
    c = next((c for c in outlier_cells() if c[0] == prefix), None)
    if c is None:
        return None
    return Figure(f"{prefix}_over_{ms:g}ms", f"{c[1]}: IOs slower than {ms:g} ms (at most)", "IOs", "lower",
                  c[2], c[3], f"over_{ms:g}ms_most")


def figure(fid: str) -> Figure | None:
    """A datasheet figure by its id: one of FIGURES, or an outlier count <cell>_over_<T>ms."""
    by_id = {f.id: f for f in all_figures()}
    if fid in by_id:
        return by_id[fid]
    w = WAF_ID.fullmatch(fid)
    if w:
        return waf_figure(w["part"])
    m = OUTLIER_ID.fullmatch(fid)
    f = outlier_figure(m["cell"], float(m["ms"])) if m else None
    return f if f is not None and f.id == fid else None


def figure_ids() -> str:
    return (", ".join(f.id for f in all_figures()) + ", " + ", ".join(f"{c[0]}_over_<T>ms" for c in outlier_cells())
            + ", waf_<part>")
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


def _kind(test: str):
    from .pages import of

    return of(test)


def value_of(b: RunContext, f: Figure) -> tuple[float | None, str, bool | None, str]:
    """(value, flag, steady state reached, window text) of a datasheet figure in a run: a write
    amplification or an outlier count here, else its kind's (pages/kind.py ``figure_value``)."""
    part = b.parts.get(f.part)
    if part is None:
        return None, "", None, "not run"

    if f.stat == "waf":
        w = waf_of(b.records.get((part.test, part.part), []))
        return (None, "", None, "no media-write counter") if w is None else (w.value, w.note, None, w.span)
    window = f"rounds {fmt_rounds(part.window_rounds)}" if part.window_rounds else "no window"
    if f.stat.startswith("over_"):
        steps = b.cell_steps(part, f.key)
        o = outliers([s.measurement for s in steps], float(f.stat[5:-7]) * 1000)
        if o is None or not steps:
            return None, "", part.reached, window
        where = window if part.window_rounds else f"the {f.key} phase"
        return (float(o.at_most), "" if o.exact else f"at least {o.at_least:,}", part.reached,
                f"{where}, {sum(s.measurement.ios for s in steps):,} IOs")
    kind = _kind(part.test)
    own = kind.figure_value(b, part, f, window) if kind is not None else None
    return own if own is not None else (None, "", part.reached, window)


def uses(b: RunContext, f: Figure):
    """Which of a part's steps a figure comes from (for its mark): its kind's choice (WSAT's first
    sample, last five or both), else the window's rounds (a fixed plan: every round) of the figure's cell."""
    part = b.parts[f.part]
    kind = _kind(part.test)
    own = kind.figure_uses(b, part, f) if kind is not None else None
    if own is not None:
        return own
    rounds = set(part.window_rounds) or None  # a fixed plan has no window: every round it ran
    return lambda m: (rounds is None or m.get("round") in rounds) and (not f.key or m.get("key") == f.key)


def figures(b: RunContext) -> list[Figure]:
    """The datasheet's figures: every kind's, then each outlier cell at the run's thresholds and at any
    threshold the targets name."""
    out = list(all_figures())
    ids = {f.id for f in out}
    named = [fid for fid in (b.targets or {}) if fid not in ids]
    for c in outlier_cells():
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
    named = marks(b.run.deviations)
    comp_text = "compliant" if compliant else "NOT compliant" + (f" ({'; '.join(named)})" if named else "")
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
    for media, host, unit in (("physical_media_written_bytes", "data_written_bytes", "bytes"),
                              ("nand_program_pages", "host_program_pages", "pages")):
        span = telemetry_span(recs, media, host)
        if span is None:
            continue
        first, last = span
        d_media, d_host = last[media] - first[media], last[host] - first[host]
        if d_host <= 0 or d_media < 0:
            continue
        res = first.get("physical_media_unit_bytes") if unit == "bytes" else None
        note = (f"± {100 * res / d_media:.1f}% (the counter counts {res:,} bytes)"
                if res and d_media and res / d_media > 0.005 else "")
        span = f"{len(recs)} steps, {last['t_unix_s'] - first['t_unix_s']:,.0f} s"
        show = fmt_capacity if unit == "bytes" else (lambda n: f"{n:,.0f} pages")
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
