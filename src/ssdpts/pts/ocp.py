"""What the two OCP tests share (docs/ocp.md): read latency at QD 1 against a baseline, beyond the PTS.

The OCP Datacenter NVMe SSD specification (2.7) asks that deallocation processing (TRIM-6) and the
drive's idle garbage collection (TRIM-7) change read latency by at most 5% from its baseline
(as issue 32 quotes the spec; the spec's text was not available to check, docs/ocp.md). Both tests
measure RND 4KiB 100/0 at TC 1 × QD 1 alone (the baseline) and then under the interference
(ocp_trim.py: a deallocation job beside the reads; ocp_idle_gc.py: right after a write burst), in
steps of their own, and report per phase its IOs, its window (when its IO ran), mean, p99, p99.9 and
max, and the change of each against the baseline; the judged statistics (``--ocp-judge``, default
mean and p99) are held to the limit (``--ocp-limit``, default 5%): all within it passes. p99.9 and
max are reported, not judged by default: a few IOs decide them, and the host's own stalls as much
as the drive.

Latencies are fio's total latency (submission + completion, as every PTS test); the percentiles
are fio's json+ histogram's, by fio's rule (measurement.percentile_from_bins): a bin is at most
1/64 of its value wide (fio's 64 bins per power of two), so a percentile's change below ~1.6% is
within one bin.

Reads cover the first half of the active range, so that they never read what the deallocation job
(over the second half) has deallocated: a read of a deallocated LBA is served without the media on
most drives, and would make the reads faster, not slower.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..measurement import Measurement
from .parts import scaled
from .runspec import OCP_JUDGED, RunSpec
from .tables import Cell, num
from .units import KiB
from .workload import Step, Workload

READS_ZONES = ((100, 50), (0, 50))  # every read in the first half of the active range
JUDGED = OCP_JUDGED  # the statistics held to the limit by default (--ocp-judge)
STATS = (("mean", "mean"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))
SETTLE_READ_S = 5.0  # the short read step the settling idle follows (PTS seconds)


def reads(spec: RunSpec) -> Workload:
    """QD 1 4 KiB random reads: TC 1 × QD 1 (the OCP latency tests; the PTS LAT test's demand)."""
    return Workload("rand", 100, 4 * KiB, 1, 1, zones=READS_ZONES)


def settle_step(test: str, part: str, spec: RunSpec, index: int) -> Step:
    """A short read step, then ``--ocp-settle-s`` with no IO at all: the drive may finish what the
    preconditioning left it (idle GC) before the baseline is measured."""
    return Step(test=test, part=part, phase="round", round=1, index=index, workload=reads(spec),
                duration_s=scaled(SETTLE_READ_S, spec), idle_after_s=scaled(spec.ocp_settle_s, spec), cell="settle",
                cell_label=f"settle: {SETTLE_READ_S:g} s of reads, then {spec.ocp_settle_s:g} s idle")


def read_step(test: str, part: str, spec: RunSpec, index: int, cell: str, label: str, **kw: Any) -> Step:
    return Step(test=test, part=part, phase="round", round=1, index=index, workload=reads(spec),
                duration_s=scaled(spec.ocp_read_s, spec), cell=cell, cell_label=label, **kw)


# ---- the table --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class OcpPhase:
    """One measured phase: the baseline or the reads under interference."""

    cell: str  # "baseline", "trim" or "after-burst"
    label: str
    ios: int  # reads completed
    start_unix_s: float | None  # the phase's window: when its IO ran
    end_unix_s: float | None
    mean_us: float | None
    p99_us: float | None
    p999_us: float | None
    max_us: float | None
    trim_ios: int = 0  # deallocations completed beside the reads (ocp-trim)
    trim_bytes: int = 0

    @property
    def duration_s(self) -> float | None:
        if self.start_unix_s is None or self.end_unix_s is None:
            return None
        return self.end_unix_s - self.start_unix_s

    def stat(self, name: str) -> float | None:
        return getattr(self, f"{name}_us")

    def to_dict(self) -> dict[str, Any]:
        return {"cell": self.cell, "label": self.label, "ios": self.ios, "start_unix_s": self.start_unix_s,
                "end_unix_s": self.end_unix_s, "mean_us": self.mean_us, "p99_us": self.p99_us,
                "p999_us": self.p999_us, "max_us": self.max_us, "trim_ios": self.trim_ios,
                "trim_bytes": self.trim_bytes}

    @classmethod
    def from_dict(cls, d: dict) -> "OcpPhase":
        return cls(str(d["cell"]), str(d.get("label") or d["cell"]), int(d.get("ios") or 0),
                   num(d.get("start_unix_s")), num(d.get("end_unix_s")), num(d.get("mean_us")), num(d.get("p99_us")),
                   num(d.get("p999_us")), num(d.get("max_us")), int(d.get("trim_ios") or 0),
                   int(d.get("trim_bytes") or 0))


def change_pct(base: float | None, under: float | None) -> float | None:
    if base is None or under is None or base <= 0:
        return None
    return 100.0 * (under - base) / base


@dataclass(frozen=True, slots=True)
class OcpTable:
    """Baseline and interference phases, the change of each statistic, and the verdict."""

    test: str
    phases: tuple[OcpPhase, ...]
    limit_pct: float
    unit: str = "µs"
    judged: tuple[str, ...] = JUDGED
    kind: ClassVar[str] = "ocp"

    @property
    def baseline(self) -> OcpPhase | None:
        return next((p for p in self.phases if p.cell == "baseline"), None)

    @property
    def under(self) -> OcpPhase | None:
        return next((p for p in self.phases if p.cell != "baseline"), None)

    def changes(self) -> dict[str, float | None]:
        """Each statistic's change against the baseline, % (None where a phase is missing)."""
        b, u = self.baseline, self.under
        return {name: change_pct(b.stat(name) if b else None, u.stat(name) if u else None) for name, _ in STATS}

    @property
    def verdict(self) -> str | None:
        """"pass" when every judged statistic changed by at most the limit, "fail" when one changed
        by more, None when the phases did not both run."""
        ch = self.changes()
        judged = [ch[n] for n in self.judged]
        if any(v is None for v in judged):
            return None
        return "pass" if all(v <= self.limit_pct for v in judged if v is not None) else "fail"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "test": self.test, "limit_pct": self.limit_pct,
                "judged": list(self.judged), "phases": [p.to_dict() for p in self.phases],
                "change_pct": self.changes(), "verdict": self.verdict}

    @classmethod
    def from_dict(cls, d: dict) -> "OcpTable":
        return cls(str(d.get("test") or ""), tuple(OcpPhase.from_dict(p) for p in d.get("phases") or ()),
                   float(d.get("limit_pct") or 5.0), d.get("unit", "µs"), tuple(d.get("judged") or JUDGED))

    def cells(self) -> list[Cell]:
        out = []
        for p in self.phases:
            point = p.cell.upper()
            out += [Cell(f"lat_{n}_us", 4096, "100/0", p.stat(n), point) for n in ("mean", "p99", "p999", "max")]
        out += [Cell("lat_change_pct", 4096, "100/0", v, n.upper()) for n, v in self.changes().items()]
        return out


def phase(cell: str, label: str, ms: list[Measurement]) -> OcpPhase:
    """A phase from its step's measurement (the last, where a resumed round ran it twice)."""
    if not ms:
        return OcpPhase(cell, label, 0, None, None, None, None, None, None)
    m = ms[-1]
    r = m.read

    def us(v: float | None) -> float | None:
        return None if v is None else v / 1e3
    return OcpPhase(cell, label, r.ios, m.start_time, m.end_time, us(r.lat_mean_ns) if r.ios else None,
                    us(m.lat_percentile_ns(99.0)), us(m.lat_percentile_ns(99.9)), us(r.lat_max_ns) if r.ios else None,
                    m.trim.ios if m.trim else 0, m.trim.io_bytes if m.trim else 0)


def build(test: str, steps: list[Step], cells: dict[str, list[Measurement]], under: str,
          limit_pct: float, judged: tuple[str, ...] = JUDGED) -> OcpTable:
    labels = {s.key: s.label for s in steps}
    return OcpTable(test, tuple(phase(c, labels.get(c, c), cells.get(c, [])) for c in ("baseline", under)), limit_pct,
                    judged=tuple(judged))


COMPARED = ("lat_mean_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "lat_change_pct")
HEADLINES = (("lat_mean_us", 4096, "100/0", "BASELINE"), ("lat_change_pct", 4096, "100/0", "MEAN"),
             ("lat_change_pct", 4096, "100/0", "P99"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    if metric == "lat_change_pct":
        return f"change of the {dict(STATS).get(str(point).lower(), point)} against the baseline"
    return {"BASELINE": "baseline reads", "TRIM": "reads beside deallocation",
            "AFTER-BURST": "reads after a write burst"}.get(str(point), str(point))
