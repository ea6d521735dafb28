"""Shared fixtures for the unit tests (tests/integration has its own conftest for real devices)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def unavailable(reason: str) -> None:
    """A proof's machinery (the device lab, the reference SSD) cannot be had here: skipped at a
    desk, but a failure under CI (``CI`` set: .ci/run sets it), so that a machine without a package
    or a kernel feature never passes by running none of the proofs."""
    import os

    if os.environ.get("CI"):
        pytest.fail(f"CI: {reason} (under CI the device lab and the reference SSD never skip)", pytrace=False)
    pytest.skip(reason)
FIO_FIXTURES = FIXTURES / "fio"
MiB = 1024 * 1024


@pytest.fixture
def fio_fixture() -> Callable[[str], str]:
    """Text of a recorded fio output in tests/fixtures/fio (see tests/fixtures/SOURCES.md)."""

    def read(name: str) -> str:
        path = FIO_FIXTURES / name
        if not path.is_file():
            pytest.fail(f"missing fixture {path}: see tests/fixtures/SOURCES.md")
        return path.read_text(encoding="utf-8")

    return read


@pytest.fixture
def file_target(tmp_path: Path):
    """A fresh (not yet created) file target of ``size_bytes`` in tmp_path, 256 MiB by default."""
    from ssdpts.device.target import open_target

    def make(size_bytes: int = 256 * MiB, name: str = "target.img"):
        return open_target(str(tmp_path / name), size_bytes=size_bytes)

    return make


class _OsProxy:
    """``os`` as one module sees it, with some functions replaced (e.g. write -> ENOSPC)."""

    def __init__(self, real, overrides: dict):
        self._real = real
        self.__dict__.update(overrides)

    def __getattr__(self, name: str):
        return getattr(self._real, name)


@pytest.fixture
def patch_store_os(monkeypatch):
    """Replace os functions for ssdpts.store and the atomic writes it makes (ssdpts.atomic) only (not
    for pytest or the rest of the process): ``patch_store_os(write=fake_write)``."""
    import os

    from ssdpts import atomic, store as store_mod

    def install(**overrides):
        monkeypatch.setattr(store_mod, "os", _OsProxy(os, overrides))
        monkeypatch.setattr(atomic, "os", _OsProxy(os, overrides))

    return install


@pytest.fixture(autouse=True, scope="session")
def _isolated_results_library(tmp_path_factory):
    """Runs made by the tests go to a throw-away results library, not the user's, and take their
    device locks in a throw-away directory, not /run/ssdpts (a run killed by a test leaves its
    unlocked lock file behind)."""
    import os

    os.environ["SSDPTS_DB"] = str(tmp_path_factory.mktemp("resultsdb") / "results.db")
    os.environ["SSDPTS_LOCK_DIR"] = str(tmp_path_factory.mktemp("locks"))
    yield
