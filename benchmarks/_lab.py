"""A lab's worth of run directories for the status and site benchmarks, from a few real runs.

Real runs (fio on file targets, time-compressed) are made once; a lab of N run directories is then
N copies of them in a tree (rack/host/run), each copy's files hard links to the original's except
its manifest, which is its own so that each copy can be another drive (model, firmware, serial,
start time): the same bytes a reader reads in a real lab of that size, made in seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import random
import shutil
import subprocess

from ssdpts.results import seal

MODELS = [("ACME", "X1-3840"), ("ACME", "X2-7680"), ("Bolt", "B7 1.92T"), ("Bolt", "B8 3.84T"), ("Corvid", "CV900"),
          ("Delta", "DS-4"), ("Ember", "E5 PRO"), ("Flux", "FX2"), ("Gale", "G-960"), ("Halo", "H3")]
FIRMWARE = ["1.0.0", "1.0.3", "1.1.0", "2.0.1", "2.1.4"]


def real_run(out: Path, tests: str, target: Path, *, rounds: int = 5, step: float = 0.1, env: dict | None = None,
             interrupt_after_s: float | None = None, extra: tuple[str, ...] = (), size: str = "128M") -> Path:
    """One real run of ``tests`` on a file target (or a stopped one: SIGINT after some seconds)."""
    argv = ["ssdpts", "run", *tests.split(","), "--target", str(target), "--size", size, "--step-seconds", str(step),
            "--max-rounds", str(rounds), "--out", str(out), "--quiet", *extra]
    env = {**os.environ, **(env or {})}
    if interrupt_after_s is None:
        subprocess.run(argv, check=True, capture_output=True, env=env)
    else:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            p.wait(timeout=interrupt_after_s)
        except subprocess.TimeoutExpired:
            p.send_signal(2)
            p.wait(timeout=120)
    return max(out.iterdir(), key=lambda p: p.stat().st_mtime)


def clone(src: Path, dest: Path, i: int, rng: random.Random, **manifest) -> Path:
    """A copy of a run directory as another drive's run: hard links, and a manifest of its own."""
    shutil.copytree(src, dest, copy_function=os.link, ignore=shutil.ignore_patterns("manifest.json", "report.*"))
    m = json.loads((src / "manifest.json").read_text())
    vendor, model = MODELS[i % len(MODELS)]
    m["target"].update(vendor=vendor, model=model, serial=f"S{i:07d}", firmware=rng.choice(FIRMWARE))
    m["created"] = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
    m.update(manifest)
    seal.refresh(m, None)  # each field's digest, as the store writes them: a clone, not an edited run
    (dest / "manifest.json").write_text(json.dumps(m))
    return dest


def lab(root: Path, bases: list[Path], n: int, seed: int = 1) -> list[Path]:
    """n run directories under root/rackR/hostH/, copies of ``bases`` in turn."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        src = bases[i % len(bases)]
        out.append(clone(src, root / f"rack{i % 8}" / f"host{i % 40:02d}" / f"{src.name}-{i:04d}", i, rng))
    return out


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
