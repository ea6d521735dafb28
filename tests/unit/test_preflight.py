"""preflight.py: the results disk is checked before anything is written (the real full disk:
tests/integration/test_wrong_device.py::test_full_results_disk_is_refused_before_the_purge)."""

from __future__ import annotations

import os

import pytest

from ssdpts.run import preflight
from ssdpts.errors import UserError
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import build_parts


def parts(**kw):
    return build_parts(RunSpec(tests=("iops", "lat", "wsat"), **kw), 1 << 30)


def test_max_steps_counts_every_allowed_round():
    ps = parts(max_rounds=25, wsat_hours=24)
    by = {p.id: p for p in ps}
    # IOPS 56 cells x 25 rounds, LAT 9 x 25, WSAT 24 h of minutes; one WIPC each (WSAT has none)
    expect = (56 * 25 + 1) + (9 * 25 + 1) + by["wsat"].wsat_max_steps + (1 if by["wsat"].wipc else 0)
    assert preflight.max_steps(ps) == expect
    assert by["wsat"].wsat_max_steps == 24 * 60


def test_refusals(tmp_path):
    with pytest.raises(UserError, match="--out is empty"):
        preflight.results_space("", parts())
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UserError, match="is not a directory"):
        preflight.results_space(f / "runs", parts())
    space = preflight.results_space(tmp_path / "new" / "runs", parts())  # may be created later
    assert space.directory == str(tmp_path) and space.free_bytes > 0


def test_too_little_space_and_the_whole_run_warning(tmp_path, monkeypatch):
    real = os.statvfs(tmp_path)

    class Vfs:
        f_flag, f_frsize = real.f_flag, 4096
        f_bavail = 5 * 2**20 // 4096  # 5 MiB

    monkeypatch.setattr(preflight.os, "statvfs", lambda p: Vfs)
    with pytest.raises(UserError, match="first round needs"):
        preflight.results_space(tmp_path, parts())
    Vfs.f_bavail = 20 * 2**20 // 4096  # room for a round, not for a whole 24 h WSAT
    space = preflight.results_space(tmp_path, parts(wsat_hours=24))
    assert space.warning and "stops cleanly" in space.warning
