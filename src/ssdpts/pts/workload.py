"""Workloads and steps: what one PTS step asks of the device (docs/pts-reference.md#tests)."""

from __future__ import annotations

from dataclasses import dataclass
import math

from .units import fmt_block_size

Split = tuple[tuple[int, int], ...]


def cell_key(pattern: str, size: int | str, read_pct: int | str) -> str:
    """The stable identifier of a cell (:attr:`Workload.key`): 'rand-4096-0' for RND 4KiB 0/100;
    ``size`` is the block size in bytes, or a composite's name in lower case ('rand-cbw-40')."""
    return f"{pattern}-{size}-{read_pct}"


@dataclass(frozen=True, slots=True)
class Workload:
    """One stimulus: access pattern, R/W mix, block size and demand intensity (TC x QD).

    A composite stimulus (CBW, docs/pts-reference.md#cbw) also has a block-size split and a zoned LBA
    distribution, and a ``name`` that stands for its block size in labels and keys;
    ``block_size_bytes`` is then its largest block size (what the active range must hold)."""

    pattern: str  # "rand" | "seq"
    read_pct: int  # percent of IOs that are reads, 0..100
    block_size_bytes: int
    threads: int  # TC: fio numjobs
    iodepth: int  # QD: outstanding IOs per thread
    bssplit: Split = ()  # (block size bytes, % of IOs), summing to 100
    zones: Split = ()  # (% of IOs, % of the active range), in LBA order, each summing to 100
    name: str = ""  # e.g. "CBW": the composite's name in labels and keys

    def __post_init__(self) -> None:
        if self.pattern not in ("rand", "seq"):
            raise ValueError(f"pattern must be 'rand' or 'seq', not {self.pattern!r}")
        if not 0 <= self.read_pct <= 100:
            raise ValueError(f"read_pct must be 0..100, not {self.read_pct}")
        if self.block_size_bytes < 512 or self.block_size_bytes % 512:
            raise ValueError(f"block_size_bytes must be a positive multiple of 512, not {self.block_size_bytes}")
        if self.threads < 1 or self.iodepth < 1:
            raise ValueError(f"threads and iodepth must be >= 1, not {self.threads}/{self.iodepth}")
        if self.bssplit:
            if sum(p for _, p in self.bssplit) != 100 or any(b < 512 or b % 512 or p <= 0 for b, p in self.bssplit):
                raise ValueError(f"bssplit must be multiples of 512 bytes with positive percentages summing to 100, "
                                 f"not {self.bssplit}")
            if self.block_size_bytes != max(b for b, _ in self.bssplit) or not self.name:
                raise ValueError("a composite workload names itself and has its largest block size as block_size_bytes")
        if self.zones and (sum(a for a, _ in self.zones) != 100 or sum(r for _, r in self.zones) != 100
                           or any(a < 0 or r <= 0 for a, r in self.zones)):
            raise ValueError(f"zones must be (% of IOs, % of the range) pairs, each column summing to 100, not {self.zones}")

    @property
    def mix(self) -> str:
        """R/W mix as the PTS writes it: '65/35' (read/write percent)."""
        return f"{self.read_pct}/{100 - self.read_pct}"

    @property
    def size_label(self) -> str:
        """'4KiB', or the composite's name."""
        return self.name or fmt_block_size(self.block_size_bytes)

    @property
    def label(self) -> str:
        kind = "RND" if self.pattern == "rand" else "SEQ"
        return f"{kind} {self.size_label} {self.mix}"

    @property
    def key(self) -> str:
        """Stable identifier of the cell, e.g. 'rand-4096-0' (used as table key and tracking id);
        a composite's name stands for its block size: 'rand-cbw-40'."""
        return cell_key(self.pattern, self.name.lower() if self.name else self.block_size_bytes, self.read_pct)

    @property
    def toio(self) -> int:
        """Total outstanding IO (demand intensity), TC x QD (docs/pts-reference.md#demand-intensity)."""
        return self.threads * self.iodepth

    def with_demand(self, threads: int, iodepth: int, read_pct: int | None = None) -> "Workload":
        """The same access pattern at another TC x QD (and R/W mix)."""
        return Workload(self.pattern, self.read_pct if read_pct is None else read_pct, self.block_size_bytes,
                        threads, iodepth, self.bssplit, self.zones, self.name)

    def to_dict(self) -> dict:
        d = {"pattern": self.pattern, "read_pct": self.read_pct, "block_size_bytes": self.block_size_bytes,
             "threads": self.threads, "iodepth": self.iodepth}
        if self.name:  # a plain workload keeps the five fields of format 1
            d.update(bssplit=[list(x) for x in self.bssplit], zones=[list(x) for x in self.zones], name=self.name)
        elif self.zones:  # a plain workload over part of the range (the OCP tests' reads)
            d["zones"] = [list(x) for x in self.zones]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        return cls(*(d[k] for k in ("pattern", "read_pct", "block_size_bytes", "threads", "iodepth")),
                   bssplit=tuple((int(b), int(p)) for b, p in d.get("bssplit") or ()),
                   zones=tuple((int(a), int(r)) for a, r in d.get("zones") or ()), name=str(d.get("name") or ""))


@dataclass(frozen=True, slots=True)
class Iolog:
    """A recorded stimulus (ssdpts trace replay): fio replays the IOs of ``path`` (read_iolog, an
    iolog v2/v3 file; every IO sent to the step's target) instead of generating a workload's."""

    path: str
    no_stall: bool = False  # replay_no_stall: as fast as possible, order kept
    time_scale_pct: int = 100  # replay_time_scale: 200 = twice the recorded IO rate


@dataclass(frozen=True, slots=True)
class Beside:
    """A second job run beside a step's workload for the whole step, in the same reporting group
    (the OCP tests' deallocation job, pts/ocp_trim.py): fio ``rw`` of ``trim`` (sequential ranges)
    or ``randtrim``, each range ``block_size_bytes``, at most ``rate_iops`` ranges a second (0: as
    fast as the device takes them), over the part of the step's area from ``start_pct`` to
    ``start_pct + size_pct`` percent. Its IOs are counted apart (Measurement.trim), never in the
    step's read or write figures."""

    rw: str  # "trim" | "randtrim"
    block_size_bytes: int
    rate_iops: float
    start_pct: float = 0  # a fraction of a percent where the OCP pairs split the range
    size_pct: float = 100
    threads: int = 1
    iodepth: int = 1

    def __post_init__(self) -> None:
        if self.rw not in ("trim", "randtrim"):
            raise ValueError(f"a job beside a step deallocates: rw must be 'trim' or 'randtrim', not {self.rw!r}")
        if self.block_size_bytes < 512 or self.block_size_bytes % 512 or self.rate_iops < 0:
            raise ValueError(f"beside: block size {self.block_size_bytes} / rate {self.rate_iops} out of range")
        if not (0 <= self.start_pct < 100 and 0 < self.size_pct <= 100 - self.start_pct + 1e-9):
            raise ValueError(f"beside: the area's {self.start_pct}%..+{self.size_pct}% is not inside it")

    def to_dict(self) -> dict:
        return {"rw": self.rw, "block_size_bytes": self.block_size_bytes, "rate_iops": self.rate_iops,
                "start_pct": self.start_pct, "size_pct": self.size_pct, "threads": self.threads,
                "iodepth": self.iodepth}

    @classmethod
    def from_dict(cls, d: dict) -> "Beside":
        return cls(str(d["rw"]), int(d["block_size_bytes"]), float(d.get("rate_iops") or 0.0),
                   float(d.get("start_pct") or 0), float(d.get("size_pct") or 100), int(d.get("threads") or 1),
                   int(d.get("iodepth") or 1))


@dataclass(frozen=True, slots=True)
class Sprandom:
    """A size-bound step written by fio's sprandom (fio 3.41; docs/methodology.md#preconditioning-by-sprandom):
    random writes that fill the area's physical capacity once, ``op`` its over-provisioning ratio
    (spare / user capacity, fio's ``spr_op``), in ``regions`` regions whose shares of invalid blocks
    are those of a drive in random-write steady state (fio's ``spr_num_regions``)."""

    op: float
    regions: int = 100  # fio's default

    def __post_init__(self) -> None:
        if not 0 < self.op < 1 or self.regions < 1:
            raise ValueError(f"sprandom: OP must be in (0, 1) and regions >= 1, not {self.op}/{self.regions}")

    def physical_bytes(self, logical_bytes: int, block_size_bytes: int) -> int:
        """What fio's sprandom writes of an area of ``logical_bytes``: its physical size, the
        logical size plus OP of it, rounded up to the block size (fio sprandom.c,
        sprandom_physical_size)."""
        size = logical_bytes + math.ceil(logical_bytes * self.op)
        return (size + block_size_bytes - 1) // block_size_bytes * block_size_bytes

    def to_dict(self) -> dict:
        return {"op": self.op, "regions": self.regions}

    @classmethod
    def from_dict(cls, d: dict) -> "Sprandom":
        return cls(float(d["op"]), int(d.get("regions") or 100))


@dataclass(frozen=True, slots=True)
class Step:
    """One timed (or, for preconditioning, sized) application of a workload.

    ``round`` is 1-based for WDPC/test rounds and 0 for workload-independent preconditioning.
    ``io_bytes`` is set for size-bound steps (WIPC writes 2x the active range, docs/pts-reference.md#wipc); then
    ``duration_s`` is None. ``idle_after_s`` is a planned time with no IO at all after the step
    (HIR's wait states); the executor starts the next step that much later. ``cell`` names the
    step's table cell where its workload does not (the TC x QD cells of a demand-intensity sweep,
    the segments of HIR and XSR); ``key`` is what tables and tracking variables use. ``iolog``: the
    step replays a recorded trace (neither timed nor sized: it ends with the trace); its workload
    then only describes it (mix, queue depth) for labels.
    """

    test: str
    part: str
    phase: str  # "wipc" | "round"
    round: int
    index: int  # 1-based position in the round
    workload: Workload
    duration_s: float | None
    io_bytes: int | None = None
    idle_after_s: float = 0.0
    cell: str = ""
    cell_label: str = ""  # how tables and plots name the cell ("" = the workload's label)
    iolog: Iolog | None = None
    beside: Beside | None = None  # a job run beside the workload for the whole step (OCP's deallocation)
    # Probe reads (ocp-idle-gc): after each IO completes, no IO for this long before the next (fio
    # thinktime); 0: back to back.
    gap_ms: float = 0.0
    # fio's per-interval IOPS log within the step, one average every this many ms (0: none): the
    # WSAT curve at a finer grain than its samples (results/wsatmodel.py, docs/methodology.md#drive-model)
    interval_ms: int = 0
    sprandom: Sprandom | None = None  # the size-bound preconditioning written by fio's sprandom

    def __post_init__(self) -> None:
        if self.idle_after_s < 0 or (self.idle_after_s and self.duration_s is None):
            raise ValueError(f"idle_after_s must be >= 0 and only follow a timed step, not {self.idle_after_s}")
        if self.iolog is not None and (self.duration_s is not None or self.io_bytes is not None):
            raise ValueError("a replayed trace ends with the trace: no duration or size of its own")
        if self.gap_ms < 0 or (self.gap_ms and (self.duration_s is None or self.workload.toio != 1)):
            raise ValueError(f"a gap between IOs ({self.gap_ms} ms) is for a timed step at TC 1 x QD 1")
        w = self.workload
        if self.sprandom is not None and (self.duration_s is not None or self.io_bytes is None or w.pattern != "rand"
                                          or w.read_pct or w.threads != 1 or w.block_size_bytes & (w.block_size_bytes - 1)):
            raise ValueError("sprandom is a size-bound step of random writes by one fio job, in blocks of a power of two")

    @property
    def key(self) -> str:
        return self.cell or self.workload.key

    @property
    def label(self) -> str:
        return self.cell_label or self.workload.label

    @property
    def clones(self) -> int:
        """fio threads of the step: its workload's and those of the job beside it."""
        return self.workload.threads + (self.beside.threads if self.beside else 0)

    @property
    def planned_s(self) -> float:
        """The time the step takes in the plan: its run time and the idle planned after it (a
        size-bound step counts 0: its time is not known in advance)."""
        return (self.duration_s or 0.0) + self.idle_after_s

    def to_dict(self) -> dict:
        d = {
            "test": self.test,
            "part": self.part,
            "phase": self.phase,
            "round": self.round,
            "index": self.index,
            "workload": self.workload.to_dict(),
            "duration_s": self.duration_s,
            "io_bytes": self.io_bytes,
        }
        if self.idle_after_s:
            d["idle_after_s"] = self.idle_after_s
        if self.cell:
            d.update(cell=self.cell, cell_label=self.cell_label)
        if self.beside:
            d["beside"] = self.beside.to_dict()
        if self.gap_ms:
            d["gap_ms"] = self.gap_ms
        if self.sprandom:
            d["sprandom"] = self.sprandom.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Step":
        return cls(
            test=d["test"], part=d["part"], phase=d["phase"], round=d["round"], index=d["index"],
            workload=Workload.from_dict(d["workload"]), duration_s=d["duration_s"], io_bytes=d.get("io_bytes"),
            idle_after_s=float(d.get("idle_after_s") or 0.0), cell=str(d.get("cell") or ""),
            cell_label=str(d.get("cell_label") or ""),
            beside=Beside.from_dict(d["beside"]) if d.get("beside") else None,
            gap_ms=float(d.get("gap_ms") or 0.0),
            sprandom=Sprandom.from_dict(d["sprandom"]) if d.get("sprandom") else None,
        )
