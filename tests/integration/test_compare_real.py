"""A comparison of two real runs: fio on a loop device against fio on a zram device, both made
here (and removed after) — the only devices this test writes to. zram has 4096-byte logical
blocks, so its IOPS and LAT tables lack the 0.5KiB cells: the comparison shows them as n/a.

Set SSDPTS_KEEP_COMPARE=DIR to keep the rendered comparison (HTML, PDF, JSON) for a look.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil

import pytest

from .conftest import ssdpts

pytestmark = pytest.mark.root

FAST = ["--step-seconds", "0.1", "--max-rounds", "5", "--quiet"]


def _run(dev: str, out: Path) -> Path:
    proc = ssdpts("run", "iops", "lat", "--target", dev, *FAST, "--destroy-data-on", dev, "--out", str(out),
                  timeout=1800)
    assert proc.returncode == 0, proc.stderr
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    return run


def _compare(argv: list[str]) -> tuple[int, str]:
    """Through the installed command once 'compare' is registered, else the module's cmd()."""
    from ssdpts.cli.main import COMMANDS

    if "compare" in COMMANDS:
        proc = ssdpts("compare", *argv, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return proc.returncode, proc.stdout
    import argparse
    import contextlib
    import io

    from ssdpts.cli import compare as cli

    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    args = p.parse_args(["compare", *argv])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = args.func(args)
    return rc, buf.getvalue()


def test_compare_loop_and_zram(make_loop, make_zram, tmp_path):
    loop = make_loop("512M")
    zram = make_zram(512 * 2**20)
    assert loop.startswith("/dev/loop") and zram.startswith("/dev/zram")
    run_loop = _run(loop, tmp_path / "loop")
    run_zram = _run(zram, tmp_path / "zram")

    from ssdpts.compare import compare_runs

    cmp = compare_runs([run_loop, run_zram])  # the same settings: no --allow-different needed
    assert not cmp.invalidating
    assert [p.test for p in cmp.parts] == ["iops", "lat"]
    iops = cmp.parts[0]
    assert len(iops.rows) == 56
    half = [r for r in iops.rows if r.block_size_bytes == 512]
    assert len(half) == 7 and all(r.values[0] is not None and r.values[1] is None and r.deltas[1] is None for r in half)
    full = [r for r in iops.rows if r.block_size_bytes != 512]
    assert all(r.values[0] > 0 and r.values[1] > 0 and r.deltas[1] is not None for r in full)
    for r in full:  # the definition, on real numbers
        assert r.deltas[1] == pytest.approx(r.values[1] / r.values[0] - 1)
    lat = cmp.parts[1]
    for r in lat.rows:
        if r.values[1] is not None:
            assert r.deltas[1] == pytest.approx(r.values[0] / r.values[1] - 1)

    out = tmp_path / "cmp"
    rc, text = _compare([str(run_loop), str(run_zram), "--format", "html,pdf,json", "--out", f"{out}/"])
    assert rc == 0
    assert "baseline: loop" in text and "zram" in text
    html = (out / "ssdpts-compare.html").read_text()
    pdf = (out / "ssdpts-compare.pdf").read_bytes()
    data = json.loads((out / "ssdpts-compare.json").read_text())
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
    assert html.count("<svg") >= 2 and "n/a" in html
    assert data["parts"][0]["rows"][-1]["values"][1] is None  # 0.5KiB 0/100 on zram: n/a

    keep = os.environ.get("SSDPTS_KEEP_COMPARE")
    if keep:
        shutil.copytree(out, Path(keep), dirs_exist_ok=True)
        for run in (run_loop, run_zram):
            shutil.copytree(run, Path(keep) / "runs" / run.name, dirs_exist_ok=True)

    # the results library on the same two runs
    from ssdpts.resultsdb import ResultsDB, rebuild

    with ResultsDB(tmp_path / "r.db") as db:
        db.add([run_loop, run_zram])
        rows = db.export_rows()
        assert {r["target_path"] for r in rows} == {loop, zram}
        assert len([r for r in rows if r["target_path"] == zram]) < len([r for r in rows if r["target_path"] == loop])
    rebuild(tmp_path / "r2.db", [tmp_path / "loop", tmp_path / "zram"])
    with ResultsDB(tmp_path / "r2.db") as db:
        assert db.export_rows() == rows
