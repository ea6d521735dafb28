"""RunSpec: the validated options of a run. Everything that can move a result is here and recorded."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from ..errors import UserError
from . import catalog
from .profiles import PROFILES, Profile

# Every test is selectable by its name (catalog.py: the test kinds in run order, docs/pts-reference.md#tests;
# WSAT first shows FOB). "all" is the four basic tests, as it always was; "extended" the four of
# docs/pts-reference.md#extended (ECW: PTS-E 1.1's name of CBW).
BASIC_TESTS = ("wsat", "iops", "tp", "lat")
EXTENDED_TESTS = ("hir", "xsr", "cbw", "dirth")
# Beyond the PTS, datacenter qualification (OCP Datacenter NVMe SSD spec TRIM-6/7, docs/ocp.md):
# not in "every", which stays the PTS.
OCP_TESTS = ("ocp-trim", "ocp-idle-gc")
GROUPS = {"all": BASIC_TESTS, "extended": EXTENDED_TESTS, "every": BASIC_TESTS + EXTENDED_TESTS, "ocp": OCP_TESTS}
ALIASES = {"ecw": "cbw"}
PTS_VERSIONS = ("2.0.2", "1.1")
PTS_STEP_SECONDS = 60.0  # the PTS "1 minute" step
WSAT_PATTERNS = ("rnd4k-w", "rnd8k-65", "seq128k-90", "seq0.5k-50", "cbw")  # PTS 2.0 WSAT options
OP_MID_RULES = ("iops-midpoint", "toio-midpoint")
XSR_RECOVERY_RULES = ("g1-mean", "g1-final")
XSR_RECOVERY_TOLERANCE_PCT = 2.0
XSR_MINUTES = (480, 360, 480)  # 8 h SEQ 1024KiB W, 6 h RND 8KiB W, 8 h SEQ 1024KiB W
HIR_BURSTS = 360
# TRIM-6/TRIM-7 (OCP Datacenter NVMe SSD Specification 2.0, section 4.10): read latency "shall not
# change more than 5% from baseline" -- in either direction (docs/ocp.md).
OCP_LIMIT_PCT = 5.0
OCP_PAIRS = 3  # baseline / interference pairs, alternating: the change's uncertainty comes from them
# The deallocation load of ocp-trim by default: A.2.1's "TRIM BW per TB" of HE_Flash_Short_wTRIM's
# 4K_L2R6DWPD_wTRIM workload (117 MiB/s per TB; 4K_L2R9DWPD_wTRIM has 156), scaled to the capacity:
# ranges a second = MiB/s per TB x capacity / 10^12 bytes x 2^20 / the range size (docs/ocp.md).
OCP_TRIM_MIB_S_PER_TB = 117.0
OCP_PROBE_GAP_MS = 1000.0  # ocp-idle-gc: no IO for this long between two probe reads (no source: docs/ocp.md)
# The OCP tests' statistics (pts/ocp.py) and those held to the limit by default: mean and p99 (no
# source confirms which the spec judges; p99.9 and max are a few IOs, docs/ocp.md).
OCP_STATS = ("mean", "p99", "p999", "max")
OCP_JUDGED = ("mean", "p99")
# Latency outliers (pts/qos.outliers): the IOs slower than each threshold, ms. 10 and 15 ms: the
# IO.go benchmark targets of the OCP Datacenter NVMe SSD Specification 2.0 (Appendix A.4: latency
# outliers > 10 ms counted, "no single latency outlier above 15ms"; docs/ocp.md).
OUTLIER_MS = (10.0, 15.0)
# The OCP latency monitor's thresholds A < B < C < D, ms (device/latmon.py; 5-ms steps, 5..1280): 10
# and 15 ms as OUTLIER_MS, 30 and 100 ms nvme-cli's set-latency-monitor-feature defaults for A and B;
# no spec text names these as qualification limits (docs/ocp.md). Empty: the monitor is not used.
LATMON_MS = (10, 15, 30, 100)
# How the tests are preconditioned (docs/methodology.md#preconditioning-by-sprandom): "pts", the
# PTS's WIPC; "sprandom", one physical fill by fio's sprandom in its place, which needs fio 3.41.
PRECONDITIONS = ("pts", "sprandom")
SPRANDOM_MARK = "preconditioning by sprandom"  # how every deviation list, report and datasheet names it
# The deviations that head every "not PTS compliant" mark by name (report, datasheet, plots,
# comparisons, the results site), each the start of its deviation's text.
MARKS = ("time-compressed", SPRANDOM_MARK)


def marks(deviations) -> list[str]:
    """Which of MARKS a run's deviations hold, in MARKS' order."""
    return [m for m in MARKS if any(str(d).startswith(m) for d in deviations)]


def not_compliant(deviations) -> str:
    """The title of a run's deviations: 'time-compressed, preconditioning by sprandom — not PTS compliant'."""
    named = marks(deviations)
    return (", ".join(named) + " — not PTS compliant") if named else "not PTS compliant"
# Options of one test that are recorded (manifest run_spec) only when that test is in the run,
# and options recorded only when set: a run of the basic tests keeps the fields of format 1.
TEST_OPTIONS = {"hir_bursts": ("hir",), "xsr_minutes": ("xsr",), "xsr_recovery": ("xsr",),
                "xsr_recovery_tolerance_pct": ("xsr",),
                "op_ceiling_ms": ("cbw", "dirth"), "op_mid": ("cbw", "dirth"), "dirth_block_size": ("dirth",),
                "dirth_read_pct": ("dirth",), "ocp_limit_pct": OCP_TESTS, "ocp_read_s": OCP_TESTS,
                "ocp_judge": OCP_TESTS,
                "ocp_trim_size": ("ocp-trim",), "ocp_trim_rate": ("ocp-trim",), "ocp_burst_s": ("ocp-idle-gc",),
                "ocp_settle_s": OCP_TESTS, "ocp_pairs": OCP_TESTS, "ocp_trim_mib_s_per_tb": ("ocp-trim",),
                "ocp_probe_gap_ms": ("ocp-idle-gc",)}
WHEN_SET = {"precondition": "pts", "spr_op": None, "spr_op_source": "", "wsat_pattern": "rnd4k-w", "ar_segments": 0, "ar_amount_bytes": 0, "cpus": "", "realtime": False,
            "outlier_ms": OUTLIER_MS, "latmon_ms": LATMON_MS}


@dataclass(frozen=True, slots=True)
class RunSpec:
    tests: tuple[str, ...]
    profile: str = "enterprise"
    threads: int | None = None  # None: profile default
    iodepth: int | None = None
    active_range_pct: float | None = None
    step_seconds: float = PTS_STEP_SECONDS
    max_rounds: int = 25
    wsat_hours: float = 24.0
    wsat_capacity_multiple: float = 4.0
    wsat_chunk_steps: int = 30  # one fio process (and one fsync'd save) per this many WSAT minutes
    ioengine: str = "io_uring"
    purge: str = "auto"
    pts_version: str = "2.0.2"
    seed: int = 0x5EED_55D9
    wipc_capacity_multiple: float = 2.0  # PTS: 2 x user capacity of SEQ writes
    # "sprandom": fio's sprandom fills the active range once, physically, in place of the WIPC (and
    # before the random-write preconditioning of HIR and ocp-idle-gc); spr_op is its over-
    # provisioning ratio (spare / user capacity, fio's spr_op), None until the run resolves it from
    # the drive model of an earlier WSAT; spr_op_source says where it came from.
    precondition: str = "pts"
    spr_op: float | None = None
    spr_op_source: str = ""
    extra: dict = field(default_factory=dict)
    # HIR: write bursts per wait state, and 5-s samples per return to baseline (PTS: 360 each).
    hir_bursts: int = HIR_BURSTS
    # XSR: PTS minutes of its three access groups.
    xsr_minutes: tuple[int, int, int] = XSR_MINUTES
    xsr_recovery: str = "g1-mean"  # [?] group 3 has recovered at its first minute at G1's mean MB/s
    xsr_recovery_tolerance_pct: float = XSR_RECOVERY_TOLERANCE_PCT  # [?] ... within this much of it
    # CBW / DIRTH operating points [?]: Max = highest IOPS whose mean response time is below the
    # ceiling; Mid = the combination nearest the middle of Max and Min.
    op_ceiling_ms: float = 5.0
    op_mid: str = "iops-midpoint"
    # DIRTH's access pattern [?]: RND, this block size and read percentage.
    dirth_block_size: int = 8192
    dirth_read_pct: int = 65
    # The OCP tests (pts/ocp.py, docs/ocp.md; every default's source there): the largest change of
    # read latency against the baseline that passes, and the lengths of their phases in seconds
    # before time compression (scaled like every PTS time constant).
    ocp_limit_pct: float = OCP_LIMIT_PCT
    ocp_judge: tuple[str, ...] = OCP_JUDGED  # the statistics held to the limit
    ocp_read_s: float = 60.0
    ocp_trim_size: int = 1 << 20
    ocp_trim_rate: float | None = None  # deallocations (of ocp_trim_size each) a second; None: from A.2.1
    ocp_burst_s: float = 60.0
    ocp_settle_s: float = 60.0
    ocp_pairs: int = OCP_PAIRS
    ocp_trim_mib_s_per_tb: float = OCP_TRIM_MIB_S_PER_TB
    ocp_probe_gap_ms: float = OCP_PROBE_GAP_MS
    wsat_pattern: str = "rnd4k-w"  # PTS 2.0 WSAT access pattern
    # Latency outlier thresholds, ms (every test's QoS tables, the datasheet, --targets).
    outlier_ms: tuple[float, ...] = OUTLIER_MS
    # The OCP latency monitor's thresholds, ms, set before each test where the drive has it (() = off).
    latmon_ms: tuple[int, ...] = LATMON_MS
    # Client test active range: this many equal segments placed at random (0: none) holding
    # ar_amount_bytes (0: the whole active range) -- see pts/segments.py for fio's limits.
    ar_segments: int = 0
    ar_amount_bytes: int = 0
    # fio's cpus_allowed ("" = not pinned): the CPUs this run's fio may use (--cpus, --cpus-per-device).
    # Host configuration, not a PTS parameter: it changes no result's meaning, so it is no deviation.
    cpus: str = ""
    # ssdpts, its step gate and fio at real-time priority while the tests run (--realtime,
    # engine/rtsched.py): boundaries within the PTS's no-delay limit on a busy host. Host
    # configuration too, recorded with the run and kept by resume.
    realtime: bool = False

    def __post_init__(self) -> None:
        validate(self)

    # Resolved settings (profile defaults applied) -- one place knows them.
    @property
    def prof(self) -> Profile:
        return PROFILES[self.profile]

    @property
    def tc(self) -> int:
        return self.threads if self.threads is not None else self.prof.threads

    @property
    def qd(self) -> int:
        return self.iodepth if self.iodepth is not None else self.prof.iodepth

    @property
    def time_scale(self) -> float:
        """Time compression: every PTS time constant is multiplied by this (1 = the PTS)."""
        return self.step_seconds / PTS_STEP_SECONDS

    @property
    def ar_pct(self) -> float:
        return self.active_range_pct if self.active_range_pct is not None else self.prof.active_range_pct

    def deviations(self) -> list[str]:
        """Every choice that makes the run deviate from PTS 2.0.2 (shown in summaries and reports)."""
        out = []
        if self.step_seconds != PTS_STEP_SECONDS:
            text = f"time-compressed: steps of {self.step_seconds:g} s instead of 60 s"
            ext = [t.upper() for t in EXTENDED_TESTS if t in self.tests]
            if ext:
                c = self.time_scale
                text += (f"; every time constant of {', '.join(ext)} scaled by {c:.4g} (HIR's 5-s bursts last "
                         f"{5 * c:.3g} s and its idles {5 * c:.3g}-{50 * c:.3g} s, an 8-h XSR group "
                         f"{8 * 3600 * c:.4g} s, a 60-min CBW/DIRTH pre-write {3600 * c:.4g} s)")
            out.append(text)
        if self.max_rounds != 25:
            out.append(f"at most {self.max_rounds} rounds instead of 25")
        if self.purge == "none":
            out.append("no purge before the tests")
        if "wsat" in self.tests and (self.wsat_hours != 24.0):
            out.append(f"WSAT limited to {self.wsat_hours:g} h (PTS: 24 h or 4x capacity)")
        if self.precondition == "sprandom":
            op = "OP from the drive model of an earlier WSAT" if self.spr_op is None else (
                f"OP {self.spr_op:.4g}" + (f", {self.spr_op_source}" if self.spr_op_source else ""))
            out.append(f"{SPRANDOM_MARK}: one physical fill of the active range by fio's sprandom ({op}) in place of "
                       "the PTS WIPC (TP keeps its WIPC: its steady state is sequential); the steady-state rule "
                       "still decides every round "
                       "(docs/methodology.md#preconditioning-by-sprandom)")
        if self.wipc_capacity_multiple != 2.0:
            out.append(f"WIPC writes {self.wipc_capacity_multiple:g}x capacity instead of 2x")
        if self.pts_version != "2.0.2":
            out.append(f"PTS-E {self.pts_version} IOPS tracking (RND 4KiB 0/100 only)")
        if "hir" in self.tests and self.hir_bursts != HIR_BURSTS:
            out.append(f"HIR: {self.hir_bursts} bursts per wait state and {self.hir_bursts} 5-s samples per return "
                       f"to baseline instead of {HIR_BURSTS}")
        if "xsr" in self.tests and tuple(self.xsr_minutes) != XSR_MINUTES:
            out.append("XSR: access groups of " + "/".join(map(str, self.xsr_minutes)) + " minutes instead of "
                       + "/".join(map(str, XSR_MINUTES)))
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tests"] = list(self.tests)
        d["xsr_minutes"] = list(self.xsr_minutes)
        for name, tests in TEST_OPTIONS.items():
            if not set(tests) & set(self.tests):
                del d[name]
        for name, default in WHEN_SET.items():
            if d[name] == default:
                del d[name]
        d["resolved"] = {"threads": self.tc, "iodepth": self.qd, "active_range_pct": self.ar_pct,
                         "profile": self.prof.to_dict()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RunSpec":
        keys = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in keys}
        kw["tests"] = tuple(kw["tests"])
        for name in ("xsr_minutes", "outlier_ms", "latmon_ms", "ocp_judge"):
            if name in kw:
                kw[name] = tuple(kw[name])
        if "xsr" in kw["tests"] and "xsr_recovery_tolerance_pct" not in kw:
            kw["xsr_recovery_tolerance_pct"] = 0.0  # a run recorded before the tolerance: G1's level exactly
        return cls(**kw)

    def with_(self, **kw) -> "RunSpec":
        return replace(self, **kw)


CHOICES = (", ".join(catalog.names()) + " (ecw = cbw), all (the four basic tests), extended (HIR, XSR, CBW, DIRTH), every "
           "(the eight PTS tests) or ocp (ocp-trim and ocp-idle-gc)")


def expand_tests(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """'all' -> the four basic tests, 'extended' -> HIR, XSR, CBW, DIRTH, 'every' -> all eight, in
    run order; 'ecw' is CBW; unknown names refused; duplicates dropped."""
    out: list[str] = []
    for n in names:
        n = ALIASES.get(n.lower(), n.lower())
        if n in GROUPS:
            out.extend(GROUPS[n])
        elif n in catalog.KINDS:
            out.append(n)
        else:
            raise UserError(f"unknown test {n!r}: choose from {CHOICES}")
    ordered = tuple(t for t in catalog.KINDS if t in out)
    if not ordered:
        raise UserError(f"no test given: name one or more of {CHOICES}")
    return ordered


def validate(s: RunSpec) -> None:
    if not s.tests:
        raise UserError(f"no test given: name one or more of {CHOICES}")
    for t in s.tests:
        if t not in catalog.KINDS:
            raise UserError(f"unknown test {t!r}: choose from {CHOICES}")
    if s.profile not in PROFILES:
        raise UserError(f"unknown profile {s.profile!r}: choose enterprise or client")
    if s.threads is not None and not 1 <= s.threads <= 256:
        raise UserError(f"--threads {s.threads} is out of range: give 1..256 (PTS-E uses 4, PTS-C 2)")
    if s.iodepth is not None and not 1 <= s.iodepth <= 4096:
        raise UserError(f"--iodepth {s.iodepth} is out of range: give 1..4096 (PTS-E uses 32, PTS-C 16)")
    if s.active_range_pct is not None and not 0 < s.active_range_pct <= 100:
        raise UserError(f"--active-range {s.active_range_pct:g} is out of range: give a percentage in (0, 100]")
    if not 0.02 <= s.step_seconds <= 3600:
        # Below ~0.2 s fio's ~100 ms job-start poll makes steps overlap: such runs test ssdpts, not a drive.
        raise UserError(f"--step-seconds {s.step_seconds:g} is out of range: give 0.02..3600 (the PTS uses 60)")
    if not 5 <= s.max_rounds <= 1000:
        raise UserError(f"--max-rounds {s.max_rounds} is out of range: give 5..1000 (steady state needs 5 rounds; PTS max 25)")
    if not 0 < s.wsat_hours <= 24 * 30:
        raise UserError(f"--wsat-hours {s.wsat_hours:g} is out of range: give a positive number of hours up to 720")
    if not 0 < s.wsat_capacity_multiple <= 1000:
        raise UserError(f"--wsat-capacity-multiple {s.wsat_capacity_multiple:g} is out of range: give a positive number (PTS: 4)")
    if not 1 <= s.wsat_chunk_steps <= 10000:
        raise UserError(f"wsat_chunk_steps {s.wsat_chunk_steps} is out of range: give 1..10000")
    if s.pts_version not in PTS_VERSIONS:
        raise UserError(f"--pts-version {s.pts_version!r} is not supported: choose {' or '.join(PTS_VERSIONS)}")
    if s.ioengine not in ("io_uring", "libaio", "psync", "sync", "pvsync2"):
        raise UserError(f"--ioengine {s.ioengine!r} is not supported: choose io_uring, libaio or psync")
    if not 0 < s.wipc_capacity_multiple <= 100:
        raise UserError(f"WIPC capacity multiple {s.wipc_capacity_multiple:g} is out of range")
    _validate_precondition(s)
    _validate_extended(s)


def _validate_precondition(s: RunSpec) -> None:
    if s.precondition not in PRECONDITIONS:
        raise UserError(f"--precondition {s.precondition!r} is not known: choose pts or sprandom[:OP] "
                        "(docs/methodology.md#preconditioning-by-sprandom)")
    if s.spr_op is not None and (s.precondition != "sprandom" or not 0 < s.spr_op < 1):
        raise UserError(f"over-provisioning {s.spr_op:g} is out of range: give sprandom:OP with OP a fraction in "
                        "(0, 1), e.g. sprandom:0.07, or a percentage, sprandom:7%")


def _validate_extended(s: RunSpec) -> None:
    if not 1 <= s.hir_bursts <= 100_000:
        raise UserError(f"--hir-bursts {s.hir_bursts} is out of range: give 1..100000 (the PTS uses 360)")
    if len(s.xsr_minutes) != 3 or any(not isinstance(m, int) or not 1 <= m <= 100_000 for m in s.xsr_minutes):
        raise UserError(f"--xsr-minutes {s.xsr_minutes} is not three whole numbers of minutes in 1..100000: "
                        "give e.g. 480,360,480 (the PTS)")
    if not 0 <= s.xsr_recovery_tolerance_pct < 50:
        raise UserError(f"--xsr-recovery-tolerance {s.xsr_recovery_tolerance_pct:g} is out of range: give a percentage "
                        f"in 0..50 (default {XSR_RECOVERY_TOLERANCE_PCT:g})")
    if s.xsr_recovery not in XSR_RECOVERY_RULES:
        raise UserError(f"--xsr-recovery {s.xsr_recovery!r} is not known: choose {' or '.join(XSR_RECOVERY_RULES)}")
    if not 0 < s.op_ceiling_ms <= 100_000:
        raise UserError(f"--op-ceiling-ms {s.op_ceiling_ms:g} is out of range: give a positive number of ms (default 5)")
    if s.op_mid not in OP_MID_RULES:
        raise UserError(f"--op-mid {s.op_mid!r} is not known: choose {' or '.join(OP_MID_RULES)}")
    if not 512 <= s.dirth_block_size <= 65536 or s.dirth_block_size % 512:
        raise UserError(f"--dirth-block-size {s.dirth_block_size} is out of range: give a multiple of 512 bytes "
                        "from 512 to 65536 (0.5-64 KiB; default 8192)")
    if not 0 <= s.dirth_read_pct <= 100:
        raise UserError(f"--dirth-read-pct {s.dirth_read_pct} is out of range: give 0..100 (default 65)")
    if s.wsat_pattern not in WSAT_PATTERNS:
        raise UserError(f"--wsat-pattern {s.wsat_pattern!r} is not known: choose {', '.join(WSAT_PATTERNS)}")
    if s.ar_segments < 0 or s.ar_segments > 1_000_000 or s.ar_amount_bytes < 0:
        raise UserError(f"--ar-segments {s.ar_segments} / --ar-amount {s.ar_amount_bytes} out of range: give a "
                        "segment count >= 0 (PTS-C: 2048) and a positive amount")
    if not 0 < s.ocp_limit_pct <= 1000:
        raise UserError(f"--ocp-limit {s.ocp_limit_pct:g} is out of range: give a percentage in (0, 1000] (default 5)")
    if not s.ocp_judge or any(n not in OCP_STATS for n in s.ocp_judge) or len(set(s.ocp_judge)) != len(s.ocp_judge):
        raise UserError(f"--ocp-judge {','.join(s.ocp_judge)} is not a list of statistics: give one or more of "
                        f"{', '.join(OCP_STATS)} (default {','.join(OCP_JUDGED)})")
    for name, v in (("--ocp-read-s", s.ocp_read_s), ("--ocp-burst-s", s.ocp_burst_s)):
        if not 1 <= v <= 86400:
            raise UserError(f"{name} {v:g} is out of range: give 1..86400 seconds (before time compression)")
    if not 0 <= s.ocp_settle_s <= 86400:
        raise UserError(f"--ocp-settle-s {s.ocp_settle_s:g} is out of range: give 0..86400 seconds")
    if not 4096 <= s.ocp_trim_size <= 1 << 30 or s.ocp_trim_size % 4096:
        raise UserError(f"--ocp-trim-size {s.ocp_trim_size} is out of range: give a multiple of 4 KiB up to 1 GiB")
    if s.ocp_trim_rate is not None and not 0 <= s.ocp_trim_rate <= 1_000_000:
        raise UserError(f"--ocp-trim-rate {s.ocp_trim_rate:g} is out of range: give 0 (unlimited)..1000000 a second")
    if not 2 <= s.ocp_pairs <= 50:
        raise UserError(f"--ocp-pairs {s.ocp_pairs} is out of range: give 2..50 baseline / interference pairs "
                        f"(default {OCP_PAIRS}; the change's uncertainty needs at least two)")
    if not 0 < s.ocp_trim_mib_s_per_tb <= 100_000:
        raise UserError(f"--ocp-trim-mib-s-per-tb {s.ocp_trim_mib_s_per_tb:g} is out of range: give (0, 100000] "
                        f"MiB/s per TB (default {OCP_TRIM_MIB_S_PER_TB:g}, OCP 2.0 A.2.1)")
    if not 0 <= s.ocp_probe_gap_ms <= 600_000:
        raise UserError(f"--ocp-probe-gap-ms {s.ocp_probe_gap_ms:g} is out of range: give 0..600000 ms")
    if not 1 <= len(s.outlier_ms) <= 4 or any(not isinstance(t, (int, float)) or not 0.001 <= t <= 100_000
                                              for t in s.outlier_ms) or list(s.outlier_ms) != sorted(set(s.outlier_ms)):
        raise UserError(f"--outlier-ms {','.join(f'{t:g}' for t in s.outlier_ms)} is not 1 to 4 rising thresholds in "
                        "0.001..100000 ms: give e.g. 10,15 (the default)")
    if s.latmon_ms and (len(s.latmon_ms) != 4 or list(s.latmon_ms) != sorted(set(s.latmon_ms))
                        or any(not isinstance(t, int) or t % 5 or not 5 <= t <= 1280 for t in s.latmon_ms)):
        raise UserError(f"--latmon-ms {','.join(map(str, s.latmon_ms))} is not four rising thresholds in 5-ms steps "
                        "from 5 to 1280 ms (the OCP latency monitor's A, B, C, D): give e.g. 10,15,30,100 (the default), "
                        "or off")
    if s.ar_amount_bytes and not s.ar_segments:
        raise UserError("--ar-amount needs --ar-segments: the amount is spread over segments (PTS-C: 2048)")
