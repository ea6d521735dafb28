"""The details behind each table cell of the HTML report: the cell's value in every round (with
its step, fio's CPU use and the raw files), the window's response-time histogram and QoS, and the
fio job section that ran it. The report's script shows them when a value is clicked; they are
data (JSON in the page), not markup, so that a 25-round run stays small."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..pts.qos import QOS_PERCENTILES, pooled_bins
from ..results.fiofiles import job_file, section
from ..results.records import PartResult
from .pages.kind import Details

if TYPE_CHECKING:
    from .context import RunContext

BINS_PER_DECADE = 20
COLUMNS = ["round", "value", "mean µs", "99.999% µs", "max µs", "IOs", "usr %", "sys %", "step", "fio json", "job"]


def _r(v: float | None, digits: int = 3) -> float | None:
    return None if v is None else round(float(v), digits)


def histogram(bins: dict[int, int]) -> list[list[float]]:
    """fio's bins (ns -> IOs) regrouped into BINS_PER_DECADE log-spaced bins: [[lower edge µs, IOs]]."""
    out: dict[int, int] = {}
    for ns, n in bins.items():
        if ns > 0 and n:
            k = math.floor(math.log10(ns / 1e3) * BINS_PER_DECADE)
            out[k] = out.get(k, 0) + n
    return [[round(10 ** (k / BINS_PER_DECADE), 4), n] for k, n in sorted(out.items())]


def add(b: RunContext, part: PartResult, kind: Details) -> None:
    """The details of every cell of a part, into ``b.details`` under "d-<part id>-<cell key>"."""
    cells = b.cells_by_round(part)
    window = set(part.window_rounds)
    keys: list[str] = []
    for rc in cells.values():
        keys += [k for k in rc if k not in keys]
    for key in keys:
        rows = []
        label = ""
        last = None
        for rno, rc in cells.items():
            s = rc.get(key)
            if s is None:
                continue
            m = s.measurement
            label = s.label
            p5 = m.lat_percentile_ns(99.999)
            rows.append([rno, kind.value(m, s.workload), _r(m.lat_mean_ns / 1e3), _r(None if p5 is None else p5 / 1e3),
                         _r(m.lat_max_ns / 1e3), m.ios, m.cpu_usr_pct, m.cpu_sys_pct, s.index, s.fio_json,
                         s.fio_job_index])
            if rno in window:
                last = s
        win_steps = b.window_steps(part, key)
        w = b.latency(part, key)
        values = [r[1] for r in rows if r[0] in window]
        job = None
        path = job_file(b.run_dir, last.fio_json) if last is not None else None
        if last is not None and path is not None:
            sec = section(path, last.measurement.jobname)
            if sec is not None:
                job = sec[1]
        b.details[f"d-{part.id}-{key}"] = {
            "title": f"{part.title or part.id}: {label} — {kind.what}",
            "unit": kind.unit, "cols": COLUMNS, "rows": rows, "window": sorted(window),
            "reached": part.reached, "avg": sum(values) / len(values) if values else None,
            "ios": w.ios, "mean": w.mean_us, "max": w.max_us,
            "qos": [[p, w.percentile_us(p), w.resolved(p)] for p in QOS_PERCENTILES if w.percentile_us(p) is not None],
            "hist": histogram(pooled_bins(s.measurement for s in win_steps)),
            "job": job, "jobfile": None if path is None else str(path.relative_to(b.run_dir)),
        }


def add_all(b: RunContext, tests: list[str]) -> None:
    """The details of every cell of the parts of the kinds that have them (pages/kind.py ``details``:
    IOPS, TP and LAT), in the run's test order: made before any page, since the test pages' and the
    datasheet's cells link to them."""
    from .pages import of

    for test in tests:
        k = of(test)
        if k is not None and k.details is not None:
            for pid in b.part_ids(test):
                add(b, b.parts[pid], k.details)
