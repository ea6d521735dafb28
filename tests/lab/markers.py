"""Markers that judge a purge by its effect: run inside the lab guest (stdlib only).

``write DEV TAG`` writes a 4 KiB block at each sampled offset (first and last blocks, a spread
across the device and a few pseudo-random ones), each block unique to (TAG, offset); ``check DEV
TAG`` reads them back with O_DIRECT (never the page cache) and prints JSON: how many are intact,
zero, or something else. After a real purge no marker may be intact; after a refusal all must be.

    python markers.py write /dev/nvme0n1 run1
    python markers.py check /dev/nvme0n1 run1   # {"n": 24, "intact": 0, "zero": 24, "other": 0, ...}
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import random
import sys

BLOCK = 4096  # a multiple of every logical block size in the lab (512, 4096)
N_SPREAD = 16
N_RANDOM = 6


def size_of(dev: str) -> int:
    fd = os.open(dev, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def offsets(size: int, tag: str) -> list[int]:
    blocks = size // BLOCK
    spread = [i * (blocks - 1) // (N_SPREAD - 1) for i in range(N_SPREAD)]
    rnd = random.Random(tag).sample(range(blocks), N_RANDOM)
    return sorted({b * BLOCK for b in spread + rnd})


def pattern(tag: str, off: int) -> bytes:
    seed = hashlib.sha256(f"ssdpts-lab-marker {tag} {off}".encode()).digest()
    return (seed * (BLOCK // len(seed) + 1))[:BLOCK]


def _buf() -> mmap.mmap:
    return mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs


def write(dev: str, tag: str) -> dict:
    offs = offsets(size_of(dev), tag)
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT | os.O_SYNC)
    buf = _buf()
    try:
        for off in offs:
            buf.seek(0)
            buf.write(pattern(tag, off))
            if os.pwritev(fd, [buf], off) != BLOCK:
                raise SystemExit(f"short write at {off}")
        os.fsync(fd)
    finally:
        os.close(fd)
    return {"n": len(offs), "offsets": offs}


def check(dev: str, tag: str) -> dict:
    offs = offsets(size_of(dev), tag)
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = _buf()
    res = {"n": len(offs), "intact": 0, "zero": 0, "other": 0, "intact_offsets": [], "other_offsets": []}
    try:
        for off in offs:
            if os.preadv(fd, [buf], off) != BLOCK:
                raise SystemExit(f"short read at {off}")
            data = bytes(buf)
            if data == pattern(tag, off):
                res["intact"] += 1
                res["intact_offsets"].append(off)
            elif data == bytes(BLOCK):
                res["zero"] += 1
            else:
                res["other"] += 1
                res["other_offsets"].append(off)
    finally:
        os.close(fd)
    return res


def main(argv: list[str]) -> int:
    op, dev, tag = argv
    print(json.dumps({"write": write, "check": check}[op](dev, tag)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
