"""RunSpec: the validated options of a run. Everything that can move a result is here and recorded."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from ..errors import UserError
from .profiles import PROFILES, Profile

TEST_NAMES = ("wsat", "iops", "tp", "lat")  # "all" runs them in this order (PTS.md §3; WSAT first shows FOB)
PTS_VERSIONS = ("2.0.2", "1.1")
PTS_STEP_SECONDS = 60.0  # the PTS "1 minute" step


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
    extra: dict = field(default_factory=dict)

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
    def ar_pct(self) -> float:
        return self.active_range_pct if self.active_range_pct is not None else self.prof.active_range_pct

    def deviations(self) -> list[str]:
        """Every choice that makes the run deviate from PTS 2.0.2 (shown in summaries and reports)."""
        out = []
        if self.step_seconds != PTS_STEP_SECONDS:
            out.append(f"time-compressed: steps of {self.step_seconds:g} s instead of 60 s")
        if self.max_rounds != 25:
            out.append(f"at most {self.max_rounds} rounds instead of 25")
        if self.purge == "none":
            out.append("no purge before the tests")
        if "wsat" in self.tests and (self.wsat_hours != 24.0):
            out.append(f"WSAT limited to {self.wsat_hours:g} h (PTS: 24 h or 4x capacity)")
        if self.wipc_capacity_multiple != 2.0:
            out.append(f"WIPC writes {self.wipc_capacity_multiple:g}x capacity instead of 2x")
        if self.pts_version != "2.0.2":
            out.append(f"PTS-E {self.pts_version} IOPS tracking (RND 4KiB 0/100 only)")
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tests"] = list(self.tests)
        d["resolved"] = {"threads": self.tc, "iodepth": self.qd, "active_range_pct": self.ar_pct,
                         "profile": self.prof.to_dict()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RunSpec":
        keys = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in keys}
        kw["tests"] = tuple(kw["tests"])
        return cls(**kw)

    def with_(self, **kw) -> "RunSpec":
        return replace(self, **kw)


def expand_tests(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """'all' -> every test, in run order; unknown names refused; duplicates dropped."""
    out: list[str] = []
    for n in names:
        n = n.lower()
        if n == "all":
            out.extend(TEST_NAMES)
        elif n in TEST_NAMES:
            out.append(n)
        else:
            raise UserError(f"unknown test {n!r}: choose from {', '.join(TEST_NAMES)} or all")
    ordered = tuple(t for t in TEST_NAMES if t in out)
    if not ordered:
        raise UserError("no test given: name one or more of " + ", ".join(TEST_NAMES) + " or all")
    return ordered


def validate(s: RunSpec) -> None:
    if not s.tests:
        raise UserError("no test given: name one or more of " + ", ".join(TEST_NAMES) + " or all")
    for t in s.tests:
        if t not in TEST_NAMES:
            raise UserError(f"unknown test {t!r}: choose from {', '.join(TEST_NAMES)} or all")
    if s.profile not in PROFILES:
        raise UserError(f"unknown profile {s.profile!r}: choose enterprise or client")
    if s.threads is not None and not 1 <= s.threads <= 256:
        raise UserError(f"--threads {s.threads} is out of range: give 1..256 (PTS-E uses 4, PTS-C 2)")
    if s.iodepth is not None and not 1 <= s.iodepth <= 4096:
        raise UserError(f"--iodepth {s.iodepth} is out of range: give 1..4096 (PTS-E uses 32, PTS-C 16)")
    if s.active_range_pct is not None and not 0 < s.active_range_pct <= 100:
        raise UserError(f"--active-range {s.active_range_pct:g} is out of range: give a percentage in (0, 100]")
    if not 0.1 <= s.step_seconds <= 3600:
        raise UserError(f"--step-seconds {s.step_seconds:g} is out of range: give 0.1..3600 (the PTS uses 60)")
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
