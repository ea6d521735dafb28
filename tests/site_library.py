"""Results libraries for the site's tests: run directories made by the real runner (FakeExecutor,
all four tests in a second or two each) with the identities a lab's drives have, added to a
library; and the site's page, read back (its index data, the JS comparison in Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

MiB = 1 << 20


def fake_run(root: Path, name: str, iops: float, *, model: str, firmware: str, serial: str, created: str,
             tests=("wsat", "iops", "tp", "lat"), target: str | None = None, noise: float = 0.02,
             max_rounds: int = 8) -> Path:
    """One run of ``tests`` on a 256 MiB file target, its drive identity written into the manifest
    (a file has no model or firmware); ``target``: the file's name (repeats of one device share it);
    ``noise`` 0.35 with ``max_rounds`` 5: a run whose tests do not reach steady state."""
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.pts.runspec import RunSpec
    from ssdpts.run.session import start_run
    from ssdpts.store import RunStore

    t = open_target(str(root / (target or f"{name}.img")), size_bytes=256 * MiB)

    def model_(step) -> float:  # reads a little faster than writes, large blocks in MB/s terms
        return iops * 4096 / max(step.workload.block_size_bytes, 4096) * (1 + 0.1 * step.workload.read_pct / 100)

    ex = FakeExecutor(noise=noise, seed=sum(map(ord, name)), model=model_)
    store, _ = start_run(RunSpec(tests=tuple(tests), step_seconds=1, max_rounds=max_rounds, wsat_hours=0.5), t, executor=ex,
                         out_dir=root / "runs", confirm=None, argv=["test"])
    path = store.path.rename(store.path.with_name(f"{store.path.name}-{name}"))
    store = RunStore(path)  # as a drive would have given them; through the store, which keeps the manifest's digests
    store.update_manifest(target={**store.manifest().doc["target"], "model": model, "firmware": firmware, "serial": serial},
                          created=created)
    return path


# name: (IOPS level, model, firmware, serial, created); a1..a3 repeat one drive (same serial, same file)
LIBRARY = {
    "a1": (100_000, "ACME X1", "1.0", "SN-A", "2026-01-10T08:00:00Z"),
    "a2": (104_000, "ACME X1", "1.0", "SN-A", "2026-01-11T08:00:00Z"),
    "a3": (97_000, "ACME X1", "1.0", "SN-A", "2026-01-12T08:00:00Z"),
    "b1": (120_000, "ACME X1", "2.0", "SN-B", "2026-02-20T08:00:00Z"),
    "c1": (80_000, "Bolt 7", "B7", "SN-C", "2026-03-01T08:00:00Z"),
    "c2": (85_000, "Bolt 7", "B8", "SN-C", "2026-04-01T08:00:00Z"),
}


def fake_library(root: Path) -> dict[str, Path]:
    """The runs of LIBRARY under root/runs, and root/results.db holding them."""
    from ssdpts.library.db import ResultsDB

    runs = {name: fake_run(root, name, lvl, model=m, firmware=fw, serial=sn, created=at,
                           target="a.img" if name.startswith("a") else None)
            for name, (lvl, m, fw, sn, at) in LIBRARY.items()}
    with ResultsDB(root / "results.db") as db:
        db.add(list(runs.values()))
    return runs


def index_data(site: Path) -> dict:
    """The library's index as the page has it (the JSON inside index.html)."""
    text = (site / "index.html").read_text(encoding="utf-8")
    start = text.index('<script type="application/json" id="ssdpts-site">') + len(
        '<script type="application/json" id="ssdpts-site">')
    return json.loads(text[start:text.index("</script>", start)])


def uid_of(run: Path) -> str:
    from ssdpts.results.reader import read_run

    return read_run(run).uid
