"""Write Saturation test (PTS.md §3): purge, no preconditioning, continuous RND 4KiB 100% write at
the chosen TC/QD, one sample per step (the PTS minute). Stops at --wsat-hours or once
--wsat-capacity-multiple x user capacity has been written (TGBW), whichever comes first.

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
from .tables import Cell, average, num
from .units import KiB
from .workload import Step, Workload

NAME, TITLE = "wsat", "Write Saturation"


def parts(spec: RunSpec, capacity_bytes: int, ar_bytes: int, logical_block_size: int = 512) -> list[Part]:
    w = Workload("rand", 0, 4 * KiB, spec.tc, spec.qd)
    max_steps = max(1, round(spec.wsat_hours * 3600 / 60))  # one sample per PTS minute
    chunk = spec.wsat_chunk_steps
    max_chunks = math.ceil(max_steps / chunk)

    def chunk_steps(r: int) -> list[Step]:
        first = (r - 1) * chunk + 1
        last = min(r * chunk, max_steps)
        return [Step(test="wsat", part="", phase="round", round=r, index=i, workload=w, duration_s=spec.step_seconds)
                for i in range(first, last + 1)]

    return [
        Part(
            test="wsat", part="", title="Write Saturation",
            purge=True, wipc=None,
            tracking=(Tracking(name=f"{w.label} IOPS", key=w.key, metric="iops", unit="IOPS"),),
            max_rounds=max_chunks,
            stop_rule="wsat",
            round_builder=chunk_steps,
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
    final_window_minutes: tuple[int, ...]  # the last 5 samples (PTS.md §3: WSAT has no steady-state rule)
    final_window_iops: float | None
    unit: str = "IOPS"
    kind: ClassVar[str] = "wsat"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "series": [asdict(s) for s in self.series],
                "tgbw_gb": self.tgbw_gb, "drive_fills": self.drive_fills,
                "final_window_minutes": list(self.final_window_minutes), "final_window_iops": self.final_window_iops}

    @classmethod
    def from_dict(cls, d: dict) -> "WsatTable":
        return cls(tuple(WsatSample.from_dict(x) for x in d.get("series") or []), float(d.get("tgbw_gb") or 0.0),
                   num(d.get("drive_fills")), tuple(int(m) for m in d.get("final_window_minutes") or ()),
                   num(d.get("final_window_iops")), d.get("unit", "IOPS"))

    def cells(self) -> list[Cell]:
        return [Cell("final_window_iops", 4096, "0/100", self.final_window_iops)]


def build_table(samples: list[tuple[int, Measurement]], capacity_bytes: int) -> WsatTable:
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
    return WsatTable(tuple(series), written / 1e9, written / capacity_bytes if capacity_bytes else None,
                     tuple(s.minute for s in last), average([s.iops for s in last]))


COMPARED = ("final_window_iops",)
HEADLINES = (("final_window_iops", None, None),)


def cell_label(metric: str, bs: int | None, mix: str | None) -> str:
    return "RND 4KiB 0/100, final window"
