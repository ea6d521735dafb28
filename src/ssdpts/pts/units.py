"""Units, one place (docs/pts-reference.md#units): block sizes in KiB (base 2), capacities and rates base 10."""

from __future__ import annotations

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


def fmt_block_size(block_size_bytes: int) -> str:
    """512 -> '0.5KiB', 4096 -> '4KiB', 1048576 -> '1024KiB' (the PTS names block sizes in KiB)."""
    kib = block_size_bytes / KiB
    return f"{kib:g}KiB"


def mb_per_s(bw_bytes_per_s: float) -> float:
    """Transfer rates are reported in MB/s, base 10 (docs/pts-reference.md#units; TKperf's KiB/s÷1024 is not copied)."""
    return bw_bytes_per_s / 1e6


def gb(n_bytes: float) -> float:
    return n_bytes / 1e9


def fmt_capacity(n_bytes: float) -> str:
    """Every capacity and amount written a user reads, one way (docs/pts-reference.md#units): base 10,
    three significant figures: 537 MB, 1.07 GB, 12.9 GB, 3.84 TB (bytes below 1 kB)."""
    n = float(f"{float(n_bytes):.3g}")  # three significant figures first: 999.96 GB is 1.00 TB
    units = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))
    for div, unit in units:
        if abs(n) >= div:
            v = n / div
            return f"{v:,.0f} {unit}" if abs(v) >= 100 else f"{v:.1f} {unit}" if abs(v) >= 10 else f"{v:.2f} {unit}"
    return f"{int(n_bytes):,} bytes"


def parse_size(text: str) -> int:
    """'1G', '512M', '4096', '1GiB', '1.5GB' -> bytes. K/M/G/T alone are base 2 (as fio and losetup read them)."""
    s = text.strip().replace(" ", "")
    units = {
        "": 1, "b": 1,
        "k": KiB, "kib": KiB, "kb": 1000,
        "m": MiB, "mib": MiB, "mb": 1000**2,
        "g": GiB, "gib": GiB, "gb": 1000**3,
        "t": 1024 * GiB, "tib": 1024 * GiB, "tb": 1000**4,
    }
    num = s.rstrip("bBkKmMgGtTiI")
    unit = s[len(num):].lower()
    if unit not in units or not num:
        raise ValueError(f"cannot read size {text!r}: write it like 1G, 512MiB or 4000000000")
    value = float(num)
    if value <= 0:
        raise ValueError(f"size {text!r} must be positive")
    return int(value * units[unit])
