"""Measurement records: what one step measured (docs/design.md#frozen-records, #units-in-names: frozen, validated,
units in names).

Latency is the response time the PTS asks for: fio's total latency (submission + completion,
``lat_ns``) when fio reports it with percentiles, else completion latency (``clat_ns``, older
fio or captures without ``lat_percentiles``). ``lat_kind`` says which.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
import math

PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
               99.95, 99.99, 99.999, 99.9999)


def _check(name: str, value: float, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if value is None or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative number, not {value!r}")


def _opt(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True, slots=True)
class DirectionStats:
    """One direction (read or write) of one step."""

    ios: int
    io_bytes: int
    iops: float
    bw_bytes_per_s: float
    runtime_s: float
    lat_mean_ns: float
    lat_min_ns: float
    lat_max_ns: float
    lat_stddev_ns: float
    lat_percentiles_ns: dict[str, float] = field(default_factory=dict)  # "99.999" -> ns
    lat_bins_ns: dict[int, int] = field(default_factory=dict)  # fio json+ histogram: bin value (ns) -> count

    def __post_init__(self) -> None:
        for n in ("ios", "io_bytes", "iops", "bw_bytes_per_s", "runtime_s", "lat_mean_ns", "lat_min_ns",
                  "lat_max_ns", "lat_stddev_ns"):
            _check(n, getattr(self, n))

    @classmethod
    def empty(cls) -> "DirectionStats":
        return cls(0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["lat_bins_ns"] = {str(k): v for k, v in sorted(self.lat_bins_ns.items())}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "DirectionStats":
        kw = dict(d)
        kw["lat_bins_ns"] = {int(k): int(v) for k, v in d.get("lat_bins_ns", {}).items()}
        kw["lat_percentiles_ns"] = {str(k): float(v) for k, v in d.get("lat_percentiles_ns", {}).items()}
        return cls(**kw)


def percentile_from_bins(bins: dict[int, int], pct: float) -> float | None:
    """The pct-th percentile from a fio latency histogram, fio's own rule (stat.c calc_clat_percentiles):
    the first bin whose cumulative count reaches pct/100 of all samples."""
    total = sum(bins.values())
    if not total:
        return None
    need = pct / 100.0 * total
    cum = 0
    for value in sorted(bins):
        cum += bins[value]
        if cum >= need:
            return float(value)
    return float(max(bins))


@dataclass(frozen=True, slots=True)
class Measurement:
    """One step: read and write stats, when it ran, and what fio said about it."""

    read: DirectionStats
    write: DirectionStats
    duration_s: float  # the step's measured run time
    start_time: float  # Unix epoch seconds
    end_time: float
    lat_kind: str = "total"  # "total" (fio lat_ns) | "completion" (fio clat_ns)
    error: int = 0  # fio's job error code
    jobname: str = ""
    # fio's usr_cpu / sys_cpu: CPU time of the step's job threads as % of their run time, averaged over
    # the threads (stat.c: summed CPU time / summed run time); None where not recorded (older runs).
    cpu_usr_pct: float | None = None
    cpu_sys_pct: float | None = None
    # Deallocations (fio's "trim") of a job run beside the step (pts/workload.Beside, the OCP tests);
    # None where the step deallocated nothing. Never part of the step's IOPS, bytes or latencies.
    trim: DirectionStats | None = None

    def __post_init__(self) -> None:
        _check("duration_s", self.duration_s)
        if self.lat_kind not in ("total", "completion"):
            raise ValueError(f"lat_kind must be 'total' or 'completion', not {self.lat_kind!r}")
        if self.end_time < self.start_time:
            raise ValueError("end_time is before start_time")

    # A mixed step's IOPS is read IOPS + write IOPS (docs/pts-reference.md#units).
    @property
    def iops(self) -> float:
        return self.read.iops + self.write.iops

    @property
    def bw_bytes_per_s(self) -> float:
        return self.read.bw_bytes_per_s + self.write.bw_bytes_per_s

    @property
    def ios(self) -> int:
        return self.read.ios + self.write.ios

    @property
    def lat_mean_ns(self) -> float:
        """IO-weighted mean response time over both directions."""
        n = self.read.ios + self.write.ios
        if not n:
            return 0.0
        return (self.read.lat_mean_ns * self.read.ios + self.write.lat_mean_ns * self.write.ios) / n

    @property
    def lat_max_ns(self) -> float:
        return max(self.read.lat_max_ns, self.write.lat_max_ns)

    @property
    def lat_min_ns(self) -> float:
        mins = [d.lat_min_ns for d in (self.read, self.write) if d.ios]
        return min(mins) if mins else 0.0

    @property
    def lat_bins_ns(self) -> dict[int, int]:
        merged = dict(self.read.lat_bins_ns)
        for k, v in self.write.lat_bins_ns.items():
            merged[k] = merged.get(k, 0) + v
        return merged

    def lat_percentile_ns(self, pct: float) -> float | None:
        """Percentile over both directions from the json+ histogram (reads and writes merged), by
        fio's own rule (pts/qos.py: one definition for a step and for a window); fio's reported
        percentile where there is no histogram (a one-direction step of an older capture). fio
        reports a bin's midpoint, which can lie just above the exact maximum it also measured: the
        percentile is capped at that maximum, so that no table shows 99.999% > max."""
        active = [d for d in (self.read, self.write) if d.ios]
        value: float | None = None
        if self.lat_bins_ns:
            value = percentile_from_bins(self.lat_bins_ns, pct)
        elif len(active) == 1 and f"{pct:g}" in active[0].lat_percentiles_ns:
            value = active[0].lat_percentiles_ns[f"{pct:g}"]
        if value is None:
            return None
        return min(value, self.lat_max_ns) if self.lat_max_ns else value

    def metric(self, name: str) -> float:
        """A tracking metric by name (pts.parts.Tracking.metric)."""
        if name == "iops":
            return self.iops
        if name == "write_mb_per_s":
            return self.write.bw_bytes_per_s / 1e6
        if name == "read_mb_per_s":
            return self.read.bw_bytes_per_s / 1e6
        if name == "lat_mean_us":
            return self.lat_mean_ns / 1e3
        raise KeyError(f"unknown metric {name!r}")

    def to_dict(self) -> dict:
        return {
            "read": self.read.to_dict(),
            "write": self.write.to_dict(),
            "duration_s": self.duration_s,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "lat_kind": self.lat_kind,
            "error": self.error,
            "jobname": self.jobname,
            # Derived, for readers of steps.jsonl who do not want to recombine directions.
            "iops": self.iops,
            "bw_bytes_per_s": self.bw_bytes_per_s,
            "lat_mean_ns": self.lat_mean_ns,
            "lat_max_ns": self.lat_max_ns,
            "lat_p99999_ns": self.lat_percentile_ns(99.999),
        } | ({} if self.cpu_usr_pct is None else {"cpu_usr_pct": self.cpu_usr_pct, "cpu_sys_pct": self.cpu_sys_pct}) \
          | ({} if self.trim is None else {"trim": self.trim.to_dict()})

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        return cls(
            read=DirectionStats.from_dict(d["read"]), write=DirectionStats.from_dict(d["write"]),
            duration_s=d["duration_s"], start_time=d["start_time"], end_time=d["end_time"],
            lat_kind=d.get("lat_kind", "total"), error=d.get("error", 0), jobname=d.get("jobname", ""),
            cpu_usr_pct=_opt(d.get("cpu_usr_pct")), cpu_sys_pct=_opt(d.get("cpu_sys_pct")),
            trim=DirectionStats.from_dict(d["trim"]) if d.get("trim") else None,
        )
