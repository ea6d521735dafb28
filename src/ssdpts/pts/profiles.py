"""PTS 2.0.2 parameter sets (docs/pts-reference.md#versions): Enterprise and Client are parameter sets of one document."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .units import KiB


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    write_cache: str  # "disabled" (WCD) | "enabled" (WCE)
    active_range_pct: float  # test and preconditioning active range, % of user LBAs
    threads: int  # TC for IOPS and WSAT
    iodepth: int  # QD per thread for IOPS and WSAT
    tp_block_sizes: tuple[int, ...]  # TP test block sizes, in run order
    tp_threads: int
    tp_iodepth: int
    segmentation: str  # how client active-range segmentation is handled

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tp_block_sizes"] = list(self.tp_block_sizes)
        return d


PROFILES: dict[str, Profile] = {
    # PTS-E: WCD, AR 100%, TC4/QD32 recommended in 2.0.2; TP at 128KiB and 1024KiB [V], TC1/QD32 [I].
    "enterprise": Profile(
        name="enterprise", write_cache="disabled", active_range_pct=100.0, threads=4, iodepth=32,
        tp_block_sizes=(1024 * KiB, 128 * KiB), tp_threads=1, tp_iodepth=32, segmentation="n/a",
    ),
    # PTS-C: WCE, AR 75% [I], TC2/QD16; TP 1024KiB. Segmentation (2048 segments) has no native fio
    # option; it is disclosed as off rather than emulated badly.
    "client": Profile(
        name="client", write_cache="enabled", active_range_pct=75.0, threads=2, iodepth=16,
        tp_block_sizes=(1024 * KiB,), tp_threads=1, tp_iodepth=32, segmentation="off (not emulated; disclosed)",
    ),
}
