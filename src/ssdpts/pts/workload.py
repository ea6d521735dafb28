"""Workloads and steps: what one PTS step asks of the device (PTS.md §3)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .units import fmt_block_size


@dataclass(frozen=True, slots=True)
class Workload:
    """One stimulus: access pattern, R/W mix, block size and demand intensity (TC x QD)."""

    pattern: str  # "rand" | "seq"
    read_pct: int  # percent of IOs that are reads, 0..100
    block_size_bytes: int
    threads: int  # TC: fio numjobs
    iodepth: int  # QD: outstanding IOs per thread

    def __post_init__(self) -> None:
        if self.pattern not in ("rand", "seq"):
            raise ValueError(f"pattern must be 'rand' or 'seq', not {self.pattern!r}")
        if not 0 <= self.read_pct <= 100:
            raise ValueError(f"read_pct must be 0..100, not {self.read_pct}")
        if self.block_size_bytes < 512 or self.block_size_bytes % 512:
            raise ValueError(f"block_size_bytes must be a positive multiple of 512, not {self.block_size_bytes}")
        if self.threads < 1 or self.iodepth < 1:
            raise ValueError(f"threads and iodepth must be >= 1, not {self.threads}/{self.iodepth}")

    @property
    def mix(self) -> str:
        """R/W mix as the PTS writes it: '65/35' (read/write percent)."""
        return f"{self.read_pct}/{100 - self.read_pct}"

    @property
    def label(self) -> str:
        kind = "RND" if self.pattern == "rand" else "SEQ"
        return f"{kind} {fmt_block_size(self.block_size_bytes)} {self.mix}"

    @property
    def key(self) -> str:
        """Stable identifier of the cell, e.g. 'rand-4096-0' (used as table key and tracking id)."""
        return f"{self.pattern}-{self.block_size_bytes}-{self.read_pct}"

    @property
    def toio(self) -> int:
        """Total outstanding IO (demand intensity), TC x QD (PTS.md §1)."""
        return self.threads * self.iodepth

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        return cls(**{k: d[k] for k in ("pattern", "read_pct", "block_size_bytes", "threads", "iodepth")})


@dataclass(frozen=True, slots=True)
class Step:
    """One timed (or, for preconditioning, sized) application of a workload.

    ``round`` is 1-based for WDPC/test rounds and 0 for workload-independent preconditioning.
    ``io_bytes`` is set for size-bound steps (WIPC writes 2x the active range, PTS.md §1); then
    ``duration_s`` is None.
    """

    test: str
    part: str
    phase: str  # "wipc" | "round"
    round: int
    index: int  # 1-based position in the round
    workload: Workload
    duration_s: float | None
    io_bytes: int | None = None

    def to_dict(self) -> dict:
        return {
            "test": self.test,
            "part": self.part,
            "phase": self.phase,
            "round": self.round,
            "index": self.index,
            "workload": self.workload.to_dict(),
            "duration_s": self.duration_s,
            "io_bytes": self.io_bytes,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Step":
        return cls(
            test=d["test"], part=d["part"], phase=d["phase"], round=d["round"], index=d["index"],
            workload=Workload.from_dict(d["workload"]), duration_s=d["duration_s"], io_bytes=d.get("io_bytes"),
        )
