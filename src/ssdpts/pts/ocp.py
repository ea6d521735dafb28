"""What the two OCP tests share (docs/ocp.md): read latency at QD 1 against a baseline, beyond the PTS.

The OCP Datacenter NVMe SSD Specification (2.0, section 4.10; the version whose text was read, a public
transcription) asks: "Read latency shall not change more than 5% from baseline when the host is issuing
De-Allocate/TRIM commands" (TRIM-6) and "... when the device is performing Idle GC" (TRIM-7); TRIM-5:
"The device shall support Garbage Collection during periods of no I/O (Idle GC)". Both tests measure
RND 4KiB 100/0 at TC 1 × QD 1 alone (the baseline) and under the interference (ocp_trim.py: a
deallocation job beside the reads; ocp_idle_gc.py: sparse probe reads in the idle time after a write
burst), alternating, ``--ocp-pairs`` times, so that the host's own drift and stalls show as the
pairs' spread instead of deciding the verdict unseen.

Per phase: its IOs, its window (when its IO ran), mean, p99, p99.9 and max, and where the drive
reports them the media and host writes it counted over the phase (telemetry; idle GC's evidence). Per
pair: each statistic's change against that pair's baseline. Per statistic: the mean of the pairs'
changes and its 95% interval (Student's t over the pairs). The verdict (``--ocp-judge``, default mean
and p99, held to ``--ocp-limit``, default 5%): "change" is two-sided in the text, so a statistic passes
when its whole interval lies within ±limit, fails when the whole interval lies outside it, and is
inconclusive when the interval straddles a limit (the host's noise is too large to decide at the
limit). The test is inconclusive too where its interference did not happen: no deallocation
completed beside the reads, or the drive's media-write counter shows no idle GC in the idle phases.

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
import math
import statistics
from typing import Any, ClassVar, Mapping

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
CONFIDENCE = 0.95  # the change's interval over the pairs
VERDICTS = ("pass", "fail", "inconclusive")
# The options a report reads, each with its value in a run recorded without it.
OPTIONS = {"ocp_read_s": 60, "ocp_settle_s": 60, "ocp_pairs": 1, "ocp_judge": JUDGED, "ocp_limit_pct": 5.0}


def reads(spec: RunSpec) -> Workload:
    """QD 1 4 KiB random reads: TC 1 × QD 1 (the OCP latency tests; the PTS LAT test's demand)."""
    return Workload("rand", 100, 4 * KiB, 1, 1, zones=READS_ZONES)


def settle_step(test: str, part: str, spec: RunSpec, index: int) -> Step:
    """A short read step, then ``--ocp-settle-s`` with no IO at all: the drive may finish what the
    preconditioning left it (idle GC) before the first baseline is measured."""
    return Step(test=test, part=part, phase="round", round=1, index=index, workload=reads(spec),
                duration_s=scaled(SETTLE_READ_S, spec), idle_after_s=scaled(spec.ocp_settle_s, spec), cell="settle",
                cell_label=f"settle: {SETTLE_READ_S:g} s of reads, then {spec.ocp_settle_s:g} s idle")


def read_step(test: str, part: str, spec: RunSpec, index: int, cell: str, label: str, **kw: Any) -> Step:
    return Step(test=test, part=part, phase="round", round=1, index=index, workload=reads(spec),
                duration_s=scaled(spec.ocp_read_s, spec), cell=cell, cell_label=label, **kw)


def pair_of(cell: str) -> int:
    """The pair a phase's cell belongs to ("trim-2": 2); 1 for a run recorded before pairs."""
    tail = cell.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 1


def is_baseline(cell: str) -> bool:
    return cell.split("-")[0] == "baseline"


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """Student's t two-sided quantile (95%: exact to 3 decimals for df ≤ 10, Cornish-Fisher beyond)."""
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
    if confidence == 0.95 and df in table:
        return table[df]
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A statistic's change over the pairs: each pair's change, their mean and its 95% interval."""

    changes: tuple[float, ...]
    change_pct: float | None
    lo_pct: float | None  # None: fewer than two pairs, no estimate of the noise
    hi_pct: float | None

    @classmethod
    def of(cls, changes: list[float]) -> "Estimate":
        if not changes:
            return cls((), None, None, None)
        m = statistics.fmean(changes)
        if len(changes) < 2:
            return cls(tuple(changes), m, None, None)
        half = t_quantile(len(changes) - 1) * statistics.stdev(changes) / math.sqrt(len(changes))
        return cls(tuple(changes), m, m - half, m + half)

    def verdict(self, limit: float) -> str | None:
        """Two-sided: pass when the interval lies within ±limit, fail when it lies wholly beyond one
        side, inconclusive when it straddles a limit (or there is no interval)."""
        if self.change_pct is None:
            return None
        if self.lo_pct is None or self.hi_pct is None:
            return "inconclusive"
        if -limit <= self.lo_pct and self.hi_pct <= limit:
            return "pass"
        if self.lo_pct > limit or self.hi_pct < -limit:
            return "fail"
        return "inconclusive"

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": list(self.changes), "change_pct": self.change_pct, "lo_pct": self.lo_pct,
                "hi_pct": self.hi_pct}


# ---- the table --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class OcpPhase:
    """One measured phase: a baseline or the reads under interference ("baseline-2", "trim-2", "idle-2")."""

    cell: str
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
    # what the drive counted over the phase (telemetry before and after it; None: not reported)
    media_written_bytes: int | None = None
    host_written_bytes: int | None = None
    media_unit_bytes: int | None = None  # the media counter's resolution

    @property
    def pair(self) -> int:
        return pair_of(self.cell)

    @property
    def baseline(self) -> bool:
        return is_baseline(self.cell)

    @property
    def duration_s(self) -> float | None:
        if self.start_unix_s is None or self.end_unix_s is None:
            return None
        return self.end_unix_s - self.start_unix_s

    @property
    def duty_pct(self) -> float | None:
        """The share of the phase's time a read was in flight (probe reads: what the drive saw of the host)."""
        d = self.duration_s
        if not d or self.mean_us is None:
            return None
        return min(100.0, 100.0 * self.ios * self.mean_us / 1e6 / d)

    @property
    def gc_written_bytes(self) -> int | None:
        """Media writes beyond the host's over the phase: the drive's own (GC) programs."""
        if self.media_written_bytes is None or self.host_written_bytes is None:
            return None
        return self.media_written_bytes - self.host_written_bytes

    def stat(self, name: str) -> float | None:
        return getattr(self, f"{name}_us")

    def to_dict(self) -> dict[str, Any]:
        d = {"cell": self.cell, "label": self.label, "ios": self.ios, "start_unix_s": self.start_unix_s,
             "end_unix_s": self.end_unix_s, "mean_us": self.mean_us, "p99_us": self.p99_us,
             "p999_us": self.p999_us, "max_us": self.max_us, "trim_ios": self.trim_ios,
             "trim_bytes": self.trim_bytes, "pair": self.pair, "duty_pct": self.duty_pct}
        if self.media_written_bytes is not None:
            d.update(media_written_bytes=self.media_written_bytes, host_written_bytes=self.host_written_bytes,
                     media_unit_bytes=self.media_unit_bytes)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "OcpPhase":
        def opt(k: str) -> int | None:
            return None if d.get(k) is None else int(d[k])
        return cls(str(d["cell"]), str(d.get("label") or d["cell"]), int(d.get("ios") or 0),
                   num(d.get("start_unix_s")), num(d.get("end_unix_s")), num(d.get("mean_us")), num(d.get("p99_us")),
                   num(d.get("p999_us")), num(d.get("max_us")), int(d.get("trim_ios") or 0),
                   int(d.get("trim_bytes") or 0), opt("media_written_bytes"), opt("host_written_bytes"),
                   opt("media_unit_bytes"))


def change_pct(base: float | None, under: float | None) -> float | None:
    if base is None or under is None or base <= 0:
        return None
    return 100.0 * (under - base) / base


@dataclass(frozen=True, slots=True)
class OcpTable:
    """Baseline and interference phases in pairs, each statistic's change per pair and over the
    pairs with its interval, the interference's evidence, and the verdict."""

    test: str
    phases: tuple[OcpPhase, ...]
    limit_pct: float
    unit: str = "µs"
    judged: tuple[str, ...] = JUDGED
    probe_gap_ms: float = 0.0  # ocp-idle-gc: the probes' spacing (no IO between them)
    trim_rate: float | None = None  # ocp-trim: the planned deallocations a second (0: unlimited)
    trim_target_mib_s: float | None = None  # ocp-trim: A.2.1's rate for this capacity (the default's basis)
    kind: ClassVar[str] = "ocp"

    @property
    def baseline(self) -> OcpPhase | None:
        return next((p for p in self.phases if p.baseline), None)

    @property
    def under(self) -> OcpPhase | None:
        return next((p for p in self.phases if not p.baseline), None)

    def pairs(self) -> list[tuple[int, OcpPhase | None, OcpPhase | None]]:
        """(pair, baseline, under) in pair order."""
        nums = sorted({p.pair for p in self.phases})
        return [(n, next((p for p in self.phases if p.pair == n and p.baseline), None),
                 next((p for p in self.phases if p.pair == n and not p.baseline), None)) for n in nums]

    def estimate(self, name: str) -> Estimate:
        ch = [change_pct(b.stat(name) if b else None, u.stat(name) if u else None) for _, b, u in self.pairs()]
        return Estimate.of([c for c in ch if c is not None])

    def changes(self) -> dict[str, float | None]:
        """Each statistic's change against the baseline over the pairs, % (None where no pair ran)."""
        return {name: self.estimate(name).change_pct for name, _ in STATS}

    def gc(self) -> str | None:
        """ocp-idle-gc's evidence that the drive collected garbage in the idle phases: "observed"
        (media writes beyond the host's in an idle phase), "not observed" (counted, none), "not
        reported" (no media-write counter); None for ocp-trim."""
        if self.test != "ocp-idle-gc":
            return None
        idle = [p.gc_written_bytes for p in self.phases if not p.baseline]
        if not idle or any(v is None for v in idle):
            return "not reported"
        unit = max((p.media_unit_bytes or 1) for p in self.phases)
        return "observed" if any(v is not None and v >= unit for v in idle) else "not observed"

    def reasons(self) -> list[str]:
        """Why the verdict is inconclusive beyond the intervals: the interference did not happen."""
        out = []
        if self.test == "ocp-trim" and any(u is not None and not u.trim_ios for _, _, u in self.pairs()):
            out.append("no deallocation completed beside the reads of some pair: TRIM-6's condition did not hold")
        if self.gc() == "not observed":
            out.append("no idle GC observed: the drive's media writes did not rise beyond the host's in any idle "
                       "phase, so TRIM-7's condition (the device performing idle GC) did not hold")
        return out

    @property
    def verdict(self) -> str | None:
        """"fail" when a judged statistic's interval lies beyond ±limit; else "inconclusive" when one
        straddles a limit, has no interval, or the interference did not happen; "pass" when every
        judged statistic's interval lies within ±limit; None when no pair ran both phases."""
        vs = [self.estimate(n).verdict(self.limit_pct) for n in self.judged]
        if any(v is None for v in vs):
            return None
        if "fail" in vs:
            return "fail"
        if "inconclusive" in vs or self.reasons():
            return "inconclusive"
        return "pass"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "test": self.test, "limit_pct": self.limit_pct,
                "judged": list(self.judged), "phases": [p.to_dict() for p in self.phases],
                "change_pct": self.changes(), "confidence": CONFIDENCE,
                "estimates": {n: {**self.estimate(n).to_dict(), "verdict": self.estimate(n).verdict(self.limit_pct)}
                              for n, _ in STATS},
                "probe_gap_ms": self.probe_gap_ms, "trim_rate": self.trim_rate,
                "trim_target_mib_s": self.trim_target_mib_s, "idle_gc": self.gc(), "reasons": self.reasons(),
                "verdict": self.verdict}

    @classmethod
    def from_dict(cls, d: dict) -> "OcpTable":
        return cls(str(d.get("test") or ""), tuple(OcpPhase.from_dict(p) for p in d.get("phases") or ()),
                   float(d.get("limit_pct") or 5.0), d.get("unit", "µs"), tuple(d.get("judged") or JUDGED),
                   float(d.get("probe_gap_ms") or 0.0), num(d.get("trim_rate")), num(d.get("trim_target_mib_s")))

    def pooled(self, name: str, baseline: bool) -> float | None:
        """A statistic's mean over the baseline (or the interference) phases."""
        vs = [v for p in self.phases if p.baseline == baseline and (v := p.stat(name)) is not None]
        return statistics.fmean(vs) if vs else None

    def cells(self) -> list[Cell]:
        out = []
        for p in self.phases:
            point = p.cell.upper()
            out += [Cell(f"lat_{n}_us", 4096, "100/0", p.stat(n), point) for n in ("mean", "p99", "p999", "max")]
        under = (self.under.cell.split("-")[0] if self.under else "under").upper()
        for point, base in (("BASELINE", True), (under, False)):
            out += [Cell(f"lat_{n}_us", 4096, "100/0", self.pooled(n, base), point) for n, _ in STATS]
        for n, _ in STATS:
            e = self.estimate(n)
            out += [Cell("lat_change_pct", 4096, "100/0", e.change_pct, n.upper()),
                    Cell("lat_change_pct", 4096, "100/0", e.lo_pct, f"{n.upper()}-LO"),
                    Cell("lat_change_pct", 4096, "100/0", e.hi_pct, f"{n.upper()}-HI")]
        return out


def _delta(tel: Mapping[str, Any] | None, key: str) -> int | None:
    """A counter's rise over a step from its telemetry (the snapshots before and after it)."""
    if not isinstance(tel, Mapping) or not tel.get("available"):
        return None
    b, a = tel.get("before"), tel.get("after")
    if not isinstance(b, Mapping) or not isinstance(a, Mapping):
        return None
    vb, va = b.get(key), a.get(key)
    if not isinstance(vb, (int, float)) or not isinstance(va, (int, float)):
        return None
    return int(va - vb)


def phase(cell: str, label: str, ms: list[Measurement], tel: list[Any] | None = None) -> OcpPhase:
    """A phase from its step's measurement and telemetry (the last, where a resumed round ran it twice)."""
    if not ms:
        return OcpPhase(cell, label, 0, None, None, None, None, None, None)
    m = ms[-1]
    r = m.read
    t = tel[-1] if tel else None
    media, host = _delta(t, "physical_media_written_bytes"), _delta(t, "data_written_bytes")
    unit = (t.get("before") or {}).get("physical_media_unit_bytes") if isinstance(t, Mapping) and media is not None else None

    def us(v: float | None) -> float | None:
        return None if v is None else v / 1e3
    return OcpPhase(cell, label, r.ios, m.start_time, m.end_time, us(r.lat_mean_ns) if r.ios else None,
                    us(m.lat_percentile_ns(99.0)), us(m.lat_percentile_ns(99.9)), us(r.lat_max_ns) if r.ios else None,
                    m.trim.ios if m.trim else 0, m.trim.io_bytes if m.trim else 0,
                    media if host is not None else None, host if media is not None else None,
                    int(unit) if isinstance(unit, (int, float)) else None)


def build(test: str, steps: list[Step], cells: dict[str, list[Measurement]], under: str, limit_pct: float,
          judged: tuple[str, ...] = JUDGED, telemetry: Mapping[str, list[Any]] | None = None, **extra: Any) -> OcpTable:
    """The table of the planned phases: every step whose cell is "baseline-N" or "<under>-N", in plan order."""
    phases = [s for s in steps if is_baseline(s.key) or s.key.split("-")[0] == under]
    tel = telemetry or {}
    return OcpTable(test, tuple(phase(s.key, s.label, cells.get(s.key, []), tel.get(s.key)) for s in phases),
                    limit_pct, judged=tuple(judged), **extra)


COMPARED = ("lat_mean_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "lat_change_pct")
HEADLINES = (("lat_mean_us", 4096, "100/0", "BASELINE"), ("lat_change_pct", 4096, "100/0", "MEAN"),
             ("lat_change_pct", 4096, "100/0", "P99"))


def cell_label(metric: str, bs: int | None, mix: str | None, point: str | None = None) -> str:
    pt = str(point)
    if metric == "lat_change_pct":
        name, _, end = pt.lower().partition("-")
        what = f"change of the {dict(STATS).get(name, name)} against the baseline (mean over the pairs)"
        return {"lo": f"{what}: 95% interval, low end", "hi": f"{what}: 95% interval, high end"}.get(end, what)
    base, _, n = pt.partition("-")
    name = {"BASELINE": "baseline reads", "TRIM": "reads beside deallocation", "IDLE": "probe reads after a write burst",
            "AFTER-BURST": "reads after a write burst"}.get(pt if pt == "AFTER-BURST" else base, base)
    return f"{name}, pair {n}" if n.isdigit() else name


def summary(part) -> list | None:
    """The terminal's lines of a finished OCP check (``part``: a results PartResult): the verdict,
    each judged statistic's change over the pairs with its 95% interval, and why it is inconclusive
    beyond them; None for its preconditioning (the headline cells then)."""
    t = part.table
    if not isinstance(t, OcpTable):
        return None
    lim = t.limit_pct
    out = [f"[bold]{part.title}[/]: {t.verdict or 'not judged (no pair ran both phases)'} (limit ±{lim:g}%)"]
    for n in t.judged:
        e = t.estimate(n)
        if e.change_pct is None:
            out.append(f"  {dict(STATS)[n]} read latency: no change measured")
            continue
        ival = "no interval (one pair)" if e.lo_pct is None else f"95% interval {e.lo_pct:+.2f} … {e.hi_pct:+.2f}%"
        out.append(f"  {dict(STATS)[n]} read latency: {e.change_pct:+.2f}% against the baseline over "
                   f"{len(e.changes)} pairs ({ival}): {e.verdict(lim)}")
    out += [f"  inconclusive: {why}" for why in t.reasons()]
    return out
