"""A comparison of two real runs: 'ssdpts run all' with fio on a loop device against the same on
a zram device (conftest.all_four_runs: made once for this file and test_run_devices.py, on
devices made and removed there, the only devices written to). zram has 4096-byte logical blocks,
so its IOPS and LAT tables lack the 0.5KiB cells: the comparison shows them as n/a.

Set SSDPTS_KEEP_COMPARE=DIR to keep the rendered comparison (HTML, PDF, JSON) for a look.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil

import pytest

from tests.report_browser import drawn

from .conftest import ssdpts

pytestmark = pytest.mark.root

TESTS = ["wsat", "iops", "tp", "tp", "lat"]  # the parts of 'ssdpts run all', in the comparison's order

def _run(all_four_runs, name: str) -> tuple[Path, str]:
    proc, out, dev = all_four_runs[name]
    assert proc.returncode == 0, proc.stderr
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    return run, dev


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


def test_compare_loop_and_zram(all_four_runs, tmp_path):
    run_loop, loop = _run(all_four_runs, "loop")
    run_zram, zram = _run(all_four_runs, "zram")
    assert loop.startswith("/dev/loop") and zram.startswith("/dev/zram")

    from ssdpts.compare import compare_runs

    cmp = compare_runs([run_loop, run_zram])  # the same settings: no --allow-different needed
    assert not cmp.invalidating
    assert [p.test for p in cmp.parts] == TESTS
    iops = next(p for p in cmp.parts if p.test == "iops")
    assert len(iops.rows) == 56
    half = [r for r in iops.rows if r.block_size_bytes == 512]
    assert len(half) == 7 and all(r.values[0] is not None and r.values[1] is None and r.deltas[1] is None for r in half)
    full = [r for r in iops.rows if r.block_size_bytes != 512]
    assert all(r.values[0] > 0 and r.values[1] > 0 and r.deltas[1] is not None for r in full)
    for r in full:  # the definition, on real numbers
        assert r.deltas[1] == pytest.approx(r.values[1] / r.values[0] - 1)
    lat = next(p for p in cmp.parts if p.test == "lat")
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
    assert "n/a" in html
    got = drawn(out / "ssdpts-compare.html")  # the plots, as the browser draws them
    assert got["problems"] == [] and got["plots"] >= 2, got
    iops_data = next(p for p in data["parts"] if p["test"] == "iops")
    assert iops_data["rows"][-1]["values"][1] is None  # 0.5KiB 0/100 on zram: n/a

    keep = os.environ.get("SSDPTS_KEEP_COMPARE")
    if keep:
        shutil.copytree(out, Path(keep), dirs_exist_ok=True)
        for run in (run_loop, run_zram):
            shutil.copytree(run, Path(keep) / "runs" / run.name, dirs_exist_ok=True)

    # the results library on the same two runs
    from ssdpts.library.db import ResultsDB, rebuild

    with ResultsDB(tmp_path / "r.db") as db:
        db.add([run_loop, run_zram])
        rows = db.export_rows()
        assert {r["target_path"] for r in rows} == {loop, zram}
        assert len([r for r in rows if r["target_path"] == zram]) < len([r for r in rows if r["target_path"] == loop])
    rebuild(tmp_path / "r2.db", [all_four_runs["loop"][1], all_four_runs["zram"][1]])
    with ResultsDB(tmp_path / "r2.db") as db:
        assert db.export_rows() == rows
