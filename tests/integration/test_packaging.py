"""`pip install .` into a clean virtual environment (no system site packages), then `ssdpts report
RUN`: the report needs nothing its package does not declare or carry (the templates, d3 in
templates/vendor), and both formats come out with every plot drawn; the results library's site
(`ssdpts db site`: its templates) works from the same install, and Parquet export, an extra, says in
one line how to get it. Needs the package index (pip fetches jinja2, numpy, rich) and Chromium for
the PDF."""

from __future__ import annotations

from pathlib import Path
import shutil
import subprocess
import sys

from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.session import start_run
from tests.report_browser import drawn

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_in_a_clean_venv_then_report(tmp_path):
    src = tmp_path / "src-copy"  # a copy: an in-tree build would leave build/ in the checkout
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(src)], capture_output=True, text=True,
                         timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    # nothing heavy came along: no plotting library, the plots are drawn by the page
    mods = subprocess.run([str(venv / "bin" / "python"), "-c", "import importlib.util as u; "
                           "print(u.find_spec('matplotlib') is None, u.find_spec('jinja2') is not None)"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert mods == ["True", "True"]

    target = open_target(str(tmp_path / "t.bin"), size_bytes=256 * 2**20)
    spec = RunSpec(tests=("iops",), step_seconds=1, max_rounds=5)
    store, _ = start_run(spec, target, executor=FakeExecutor(noise=0.02), out_dir=tmp_path / "runs", confirm=None)
    out = tmp_path / "out"
    rep = subprocess.run([str(venv / "bin" / "ssdpts"), "report", str(store.path), "--out", f"{out}/"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert (out / "report.pdf").read_bytes()[:5] == b"%PDF-"
    got = drawn(out / "report.html")
    assert got["problems"] == [] and got["plots"] >= 5, got

    def ssdpts(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(venv / "bin" / "ssdpts"), *argv], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)

    lib = str(tmp_path / "lib.db")
    assert ssdpts("db", "add", str(store.path), "--db", lib).returncode == 0
    site = ssdpts("db", "site", str(tmp_path / "site"), "--db", lib)
    assert site.returncode == 0, site.stderr
    got = drawn(tmp_path / "site" / "index.html")
    assert got["problems"] == [] and got["plots"] == 1, got  # the trend plot, drawn by the reports' chart.js
    pq = ssdpts("db", "export", "--db", lib, "--format", "parquet", "--out", str(tmp_path / "lib.parquet"))
    assert pq.returncode == 2 and len(pq.stderr.strip().splitlines()) == 1, pq.stderr
    assert "pip install 'ssdpts[parquet]'" in pq.stderr
