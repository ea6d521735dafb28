"""Scratch block devices for the benchmarks (root only): a loop device over a sparse file, or zram."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
import subprocess
import tempfile


@contextlib.contextmanager
def loop_device(size_bytes: int = 1024**3):
    d = tempfile.mkdtemp(prefix="ssdpts-bench-", dir="/var/tmp")
    img = Path(d) / "loop.img"
    with open(img, "wb") as f:
        f.truncate(size_bytes)
    dev = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", str(img)], capture_output=True, text=True,
                         check=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        img.unlink(missing_ok=True)
        os.rmdir(d)


@contextlib.contextmanager
def zram_device(size_bytes: int = 1024**3):
    n = Path("/sys/class/zram-control/hot_add").read_text().strip()
    try:
        Path(f"/sys/block/zram{n}/disksize").write_text(str(size_bytes))
        yield f"/dev/zram{n}"
    finally:
        remove_zram(n)


def remove_zram(n: str, tries: int = 50) -> None:
    """Reset and remove zram<n>. Right after fio exits the device can still be busy for a moment
    (EBUSY), so retry for a few seconds instead of leaving it behind."""
    import time

    for _ in range(tries):
        try:
            Path(f"/sys/block/zram{n}/reset").write_text("1")
            Path("/sys/class/zram-control/hot_remove").write_text(n)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
