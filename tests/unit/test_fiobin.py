"""Which fio runs (engine/fiobin.py, docs/methodology.md#fio): --fio PATH, else the one make fio built,
else the system's; what a fio can do, asked of it; the one-line refusal of sprandom with a fio too
old; doctor naming the fio a run uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ssdpts.engine import fiobin
from ssdpts.engine.fio import FioExecutor
from ssdpts.errors import UserError

# fio 3.33 answers --cmdhelp of an option it lacks with this line and status 0; 3.41 its own lines
OLD = """#!/bin/sh
case "$1" in
  --version) echo fio-3.33 ;;
  --cmdhelp=sprandom) echo "No such command: sprandom" ;;
  --cmdhelp=spr_cs) echo "No such command: spr_cs" ;;
  --cmdhelp=*) echo "  ${1#--cmdhelp=}: something" ;;
esac
"""
NEW = """#!/bin/sh
case "$1" in
  --version) echo fio-3.41 ;;
  --cmdhelp=spr_cs) printf ' - showing closest match\\n              spr_op: Over provisioning ratio\\n' ;;
  --cmdhelp=*) printf '            %s: an option\\n                type: boolean value\\n' "${1#--cmdhelp=}" ;;
esac
"""


def _fio(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def fios(tmp_path, monkeypatch):
    """A system fio 3.33 on PATH and the place make fio builds into (empty until a test puts one there)."""
    system = _fio(tmp_path / "bin" / "fio", OLD)
    monkeypatch.setenv("PATH", f"{system.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    built = tmp_path / "build" / "fio" / "bin" / "fio"
    monkeypatch.setattr(fiobin, "BUILT", built)
    return system, built


def test_the_system_fio_without_a_built_one(fios):
    system, _ = fios
    assert fiobin.choose() == fiobin.Fio(str(system), "system")


def test_the_built_fio_wins_over_the_system_one(fios):
    _, built = fios
    _fio(built, NEW)
    assert fiobin.choose() == fiobin.Fio(str(built), "built")
    ex = FioExecutor()
    assert ex.binary == str(built) and ex.chosen.source == "built" and ex.version() == "fio-3.41"


def test_fio_path_wins_over_both(fios, tmp_path):
    _, built = fios
    _fio(built, NEW)
    mine = _fio(tmp_path / "opt" / "fio", NEW)
    assert fiobin.choose(str(mine)) == fiobin.Fio(str(mine), "--fio")
    for bad in (str(tmp_path / "nothing"), str(tmp_path)):
        with pytest.raises(UserError, match="not an executable file"):
            fiobin.choose(bad)


def test_no_fio_at_all_is_one_line(fios, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UserError) as exc:
        fiobin.choose()
    assert "make fio" in str(exc.value) and "\n" not in str(exc.value)


def test_features_are_asked_of_fio(fios):
    system, built = fios
    _fio(built, NEW)
    assert fiobin.features(str(system)) == {"sprandom": False, "spr_cs": False, "job_start": True}
    # 3.41 has sprandom; its closest match to spr_cs (spr_op) does not count as spr_cs
    assert fiobin.features(str(built)) == {"sprandom": True, "spr_cs": False, "job_start": True}
    assert not fiobin.knows("/nonexistent/fio", "sprandom")


def test_sprandom_with_a_fio_too_old_is_refused_in_one_line(fios):
    system, built = fios
    with pytest.raises(UserError) as exc:
        fiobin.require_sprandom(fiobin.Fio(str(system), "system"))
    msg = str(exc.value)
    assert "\n" not in msg and "fio 3.41 or later" in msg and "make fio" in msg and "fio-3.33" in msg
    _fio(built, NEW)
    fiobin.require_sprandom(fiobin.choose())


def test_the_launcher_refuses_before_anything_is_made(fios):
    from ssdpts.run.launch import executor

    with pytest.raises(UserError, match="fio 3.41 or later"):
        executor(None, sprandom=True)
    assert executor(None).chosen.source == "system"  # the PTS's preconditioning: any fio


@pytest.mark.parametrize("text, wanted, ok", [("fio-3.41", "3.41", True), ("fio-3.33", "3.41", False),
                                              ("fio-3.41-12-gabcdef", "3.41", True), ("fio-4.0", "3.41", True),
                                              ("fio-3.9", "3.41", False), ("unknown", "3.41", None)])
def test_version_at_least(text, wanted, ok):
    assert fiobin.version_at_least(text, wanted) is ok


def test_doctor_names_the_fio_a_run_uses(fios):
    from ssdpts.cli.doctor import fio_checks
    from ssdpts.device.host import audit

    _, built = fios
    _fio(built, NEW)
    checks = fio_checks(audit.audit(fio_path=str(built)))
    names = [c.name for c in checks]
    fio, feats = checks[names.index("fio")], checks[names.index("fio features")]
    assert names.index("fio features") == names.index("fio") + 1
    assert fio.current == f"3.41 at {built} (built by make fio)"
    assert feats.current == "sprandom yes, spr_cs no, job_start yes" and feats.ok is True
