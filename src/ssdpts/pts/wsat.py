"""Write Saturation test (docs/pts-reference.md#wsat): purge, no preconditioning, continuous RND 4KiB 100% write at
the chosen TC/QD, one sample per step (the PTS minute). Stops at --wsat-hours or once
--wsat-capacity-multiple x user capacity has been written (TGBW), whichever comes first.

PTS 2.0 options (docs/pts-reference.md#wsat-options): other access patterns (--wsat-pattern: RND 8KiB
65/35, SEQ 128KiB 90/10, SEQ 0.5KiB 50/50, CBW) and response-time series (mean, 5 nines, max)
against time and drive fills with a final response-time histogram, which every sample records.

The samples are run in chunks of ``wsat_chunk_steps`` steps per fio process; a chunk is the unit
that is saved (fsync'd) and the granularity of the TGBW check. Index numbers count minutes from
the start of the test across chunks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
import math
from typing import Any, ClassVar

from ..measurement import Measurement
from .parts import Part, Tracking
from .runspec import RunSpec
from .steady_state import WINDOW_ROUNDS
from .tables import Cell, average, fmt_number, num
from .units import KiB, fmt_block_size
from .workload import Step, Workload

OPTIONS = {"wsat_pattern": "rnd4k-w"}  # the PTS 2.0 access pattern a run recorded without it used

NAME = "wsat"
TITLE = "Write Saturation"
ORDER = 10  # its place in the run order (pts/catalog.py)
USES_TC_QD = True  # its stimulus runs at the run's TC and QD (--threads, --iodepth, or the profile's)


def workload(spec: RunSpec, logical_block_size: int = 512) -> Workload:
    """The access pattern of --wsat-pattern at the chosen TC/QD (PTS 2.0)."""
    from . import cbw

    tc, qd = spec.tc, spec.qd
    return {
        "rnd4k-w": lambda: Workload("rand", 0, 4 * KiB, tc, qd),
        "rnd8k-65": lambda: Workload("rand", 65, 8 * KiB, tc, qd),
        "seq128k-90": lambda: Workload("seq", 90, 128 * KiB, tc, qd),
        "seq0.5k-50": lambda: Workload("seq", 50, max(512, logical_block_size), tc, qd),
        "cbw": lambda: cbw.workload(tc, qd, cbw.READ_PCT, logical_block_size),
    }[spec.wsat_pattern]()


INTERVALS_PER_STEP = 100  # fio's IOPS log within a sample: the curve's grain for its model (results/wsatmodel.py)


def interval_ms(step_s: float) -> int:
    """The per-interval IOPS log's period: a hundredth of a step, 10 ms to 1 s (a PTS minute: 600 ms)."""
    return int(min(1000, max(10, round(step_s * 1000 / INTERVALS_PER_STEP))))


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    w = workload(spec, logical_block_size)
    max_steps = max(1, round(spec.wsat_hours * 3600 / 60))  # one sample per PTS minute
    chunk = spec.wsat_chunk_steps
    max_chunks = math.ceil(max_steps / chunk)

    def chunk_steps(r: int) -> list[Step]:
        first = (r - 1) * chunk + 1
        last = min(r * chunk, max_steps)
        return [Step(test="wsat", part="", phase="round", round=r, index=i, workload=w, duration_s=spec.step_seconds,
                     interval_ms=interval_ms(spec.step_seconds))
                for i in range(first, last + 1)]

    return [
        Part(
            test="wsat", part="", title="Write Saturation",
            purge=True, wipc=None,
            tracking=(Tracking(name=f"{w.label} IOPS", key=w.key, metric="iops", unit="IOPS"),),
            max_rounds=max_chunks,
            stop_rule="wsat",
            round_builder=chunk_steps,
            table_args={"pattern": spec.wsat_pattern, "workload": w},
            wsat_max_steps=max_steps,
            wsat_max_bytes=int(spec.wsat_capacity_multiple * capacity_bytes),
        )
    ]


# ---- the table: every sample against time, data written and drive fills -------------------------------

@dataclass(frozen=True, slots=True)
class WsatSample:
    minute: int  # the sample's PTS minute (step index)
    iops: float
    tgbw_gb: float  # total GB written so far (base 10)
    drive_fills: float | None  # bytes written / user capacity
    lat_mean_us: float
    lat_max_us: float
    lat_p99999_us: float | None
    start_time: float  # Unix s

    @classmethod
    def from_dict(cls, d: dict) -> "WsatSample":
        return cls(int(d["minute"]), float(d["iops"]), float(d["tgbw_gb"]), num(d.get("drive_fills")),
                   float(d["lat_mean_us"]), float(d["lat_max_us"]), num(d.get("lat_p99999_us")),
                   float(d.get("start_time") or 0.0))


@dataclass(frozen=True, slots=True)
class WsatTable:
    series: tuple[WsatSample, ...]
    tgbw_gb: float
    drive_fills: float | None
    final_window_minutes: tuple[int, ...]  # the last 5 samples (docs/pts-reference.md#wsat: WSAT has no steady-state rule)
    final_window_iops: float | None
    unit: str = "IOPS"
    block_size_bytes: int | None = 4096  # the access pattern's (None: CBW); absent in older files
    mix: str = "0/100"
    pattern: str = "rnd4k-w"
    kind: ClassVar[str] = "wsat"

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "unit": self.unit, "series": [asdict(s) for s in self.series],
             "tgbw_gb": self.tgbw_gb, "drive_fills": self.drive_fills,
             "final_window_minutes": list(self.final_window_minutes), "final_window_iops": self.final_window_iops}
        if self.pattern != "rnd4k-w":  # the PTS default keeps the fields of format 1
            d.update(pattern=self.pattern, block_size_bytes=self.block_size_bytes, mix=self.mix)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "WsatTable":
        bs = d.get("block_size_bytes", 4096)
        return cls(tuple(WsatSample.from_dict(x) for x in d.get("series") or []), float(d.get("tgbw_gb") or 0.0),
                   num(d.get("drive_fills")), tuple(int(m) for m in d.get("final_window_minutes") or ()),
                   num(d.get("final_window_iops")), d.get("unit", "IOPS"), None if bs is None else int(bs),
                   str(d.get("mix") or "0/100"), str(d.get("pattern") or "rnd4k-w"))

    def cells(self) -> list[Cell]:
        return [Cell("final_window_iops", self.block_size_bytes, self.mix, self.final_window_iops)]


def build_table(samples: list[tuple[int, Measurement]], capacity_bytes: int, pattern: str = "rnd4k-w",
                workload: Workload | None = None) -> WsatTable:
    """``samples``: (minute, measurement) of every WSAT step, in minute order."""
    series = []
    written = 0
    for minute, m in samples:
        written += m.write.io_bytes
        p5 = m.lat_percentile_ns(99.999)
        series.append(WsatSample(
            minute=minute, iops=m.iops, tgbw_gb=written / 1e9,
            drive_fills=written / capacity_bytes if capacity_bytes else None,
            lat_mean_us=m.lat_mean_ns / 1e3, lat_max_us=m.lat_max_ns / 1e3,
            lat_p99999_us=p5 / 1e3 if p5 is not None else None, start_time=m.start_time))
    last = series[-WINDOW_ROUNDS:]
    w = workload or Workload("rand", 0, 4 * KiB, 1, 1)
    return WsatTable(tuple(series), written / 1e9, written / capacity_bytes if capacity_bytes else None,
                     tuple(s.minute for s in last), average([s.iops for s in last]),
                     block_size_bytes=None if w.name else w.block_size_bytes, mix=w.mix, pattern=pattern)


TABLES = (WsatTable,)  # the table records its build_table makes (registry.table_from_dict)
# the steady level, and the drive model's figures (results/wsatmodel.py cells)
COMPARED = ("final_window_iops", "model_effective_spare_pct", "model_gc_onset", "model_steady_wa", "model_slc_cache_mib")
HEADLINES = (("final_window_iops", None, None), ("model_effective_spare_pct", None, None), ("model_steady_wa", None, None))
MODEL_LABELS = {"model_effective_spare_pct": "drive model: effective spare", "model_gc_onset": "drive model: GC onset",
                "model_steady_wa": "drive model: steady WA", "model_slc_cache_mib": "drive model: SLC cache"}


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    if metric in MODEL_LABELS:
        return MODEL_LABELS[metric]
    if bs == 4096 and mix == "0/100":
        return "RND 4KiB 0/100, final window"
    return f"{'composite' if bs is None else fmt_block_size(bs)} {mix}, final window"


def summary(part) -> list:
    """The terminal's line of a finished WSAT part (``part``: a results PartResult)."""
    t = part.table
    return [f"[bold]{part.title}[/]: {len(t.series)} samples, {t.tgbw_gb:.2f} GB written "
            f"({fmt_number(t.drive_fills, 2)} drive fills), last 5 samples {fmt_number(t.final_window_iops)} IOPS "
            f"({part.stop_reason})"]


# how the results site draws a comparison of it (library/site/templates/site.js: DRAW, partSection)
SITE_VIEW = {"plot": {"draw": "samples", "title": "Write saturation: IOPS per sample, every run",
                      "caption": "RND 4KiB writes; one line per run; dashed: the steady level (average of the final "
                                 "window) the table compares.",
                      "size": [10.0, 3.8], "unit": "IOPS", "x": "sample (one PTS step each)", "series_x": "sample"},
             "tables": [{"title": "WSAT steady level (IOPS)"}]}


def site(part) -> dict:
    """Its data on the results site beyond its cells (library/site/data.py): how a comparison draws
    it, and the samples and the level."""
    t = part.table
    if not isinstance(t, WsatTable):
        return {"view": SITE_VIEW}
    return {"view": SITE_VIEW, "samples": {"x": [s.minute for s in t.series], "y": [s.iops for s in t.series],
                                           "win": list(t.final_window_minutes), "level": t.final_window_iops}}


def run_limits(settings) -> str | None:
    """The run's WSAT stop limits as the library and comparisons show them (a recorded run's
    settings, results/records.Settings); None for a run without WSAT."""
    if NAME not in settings.tests:
        return None
    h = "—" if settings.wsat_hours is None else f"{settings.wsat_hours:g}"
    m = "—" if settings.wsat_capacity_multiple is None else f"{settings.wsat_capacity_multiple:g}"
    return f"{h} h or {m}× capacity"
