"""Paths in fio's job file (engine/jobfile.py): each name ssdpts writes is the file fio opens, or the
path is refused (path_problem). Checked against the fio installed here: a job file rendered by
render_job_file, run with fio's create_only (the files are laid out, no job runs), must create
exactly the file named and nothing else; a replayed trace's job must read the iolog named and
write only the target named."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
import shutil
import subprocess

import pytest

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.jobfile import control_problem, fio_names, job_value, path_problem, render_job_file
from ssdpts.errors import RunFailed
from ssdpts.pts.workload import Iolog, Step, Workload

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed")

# Names fio's job file can hold (a colon escaped as '\:', everything else as it is), each in a
# directory of its own under the test's directory: "d/name" makes the directory d first.
HELD = {
    "colon in the file name": "bench:2.img",
    "colon in the file name (bench2)": "bench2:x.img",
    "colon in a directory name": "d:ir/t.img",
    "colon first in a name": ":x.img",
    "two colons": "a::b.img",
    "backslash": "a\\b.img",
    "backslash before a colon": "a\\:b.img",
    "backslash last in a directory name": "d\\/t.img",
    "equals sign": "a=b.img",
    "space": "a b.img",
    "leading space in the file name": " lead.img",
    "trailing space in a directory name": "dir /t.img",
    "dollar sign": "a$b.img",
    "${ without }": "a${b.img",
    "fio's filename_format keyword": "a$jobname.img",
    "comma": "a,b.img",
    "quotes": "a'b\"c.img",
    "non-ASCII": "\u00e9t\u00e9.img",
}

# Names fio's job file cannot hold: the reason names the character. ``misread``: fio 3.33 given the
# path as it is creates some other file or fails (the reason for refusing it, checked below); the
# others (a control character inside a name) fio would keep, but ssdpts's records and one-line
# messages could not, and a line break in one starts a new option.
REFUSED = {
    "newline in a directory name": ("nl\nfilename=ROOT/t.img", "\\n", True),  # ROOT: the test's directory
    "carriage return": ("a\rb.img", "\\r", False),
    "tab": ("a\tb.img", "\\t", False),
    "control character": ("a\x01b.img", "\\x01", False),
    "delete": ("a\x7fb.img", "\\x7f", False),
    "C1 control character": ("a\x85b.img", "\\x85", False),
    "line separator": ("a\u2028b.img", "\\u2028", False),
    "semicolon": ("a;b.img", "';'", True),
    "hash": ("a#b.img", "'#'", True),
    "environment variable": ("a${HOME}b.img", "'${HOME}'", True),
    "empty environment variable": ("a${}b.img", "'${}'", True),
    "fio keyword $ncpus": ("a$ncpus.img", "'$ncpus'", True),
    "fio keyword $pagesize": ("a$pagesize.img", "'$pagesize'", True),
    "fio keyword $mb_memory": ("a$mb_memory.img", "'$mb_memory'", True),
    "trailing space": ("trail.img ", "blank", True),
    "not UTF-8": ("a\udcffb.img", "UTF-8", False),
}


def _step(iolog: str | None = None) -> Step:
    if iolog is not None:
        return Step(test="replay", part="", phase="round", round=1, index=1, workload=Workload("rand", 50, 4096, 1, 1),
                    duration_s=None, iolog=Iolog(iolog, no_stall=True))
    return Step(test="lat", part="", phase="round", round=1, index=1, workload=Workload("rand", 0, 4096, 1, 1),
                duration_s=0.05)


def _job(filename: str, iolog: str | None = None, size: int = 64 * 1024) -> str:
    batch = Batch(steps=[_step(iolog)], filename=filename, area=Area(0, size), seed=1, ioengine="psync")
    text, _ = render_job_file(batch)
    return text


def _files(root: Path) -> set[str]:
    """Every file and directory under root, as paths relative to it."""
    out = set()
    for d, dirs, files in os.walk(root):
        out |= {os.path.relpath(os.path.join(d, n), root) for n in dirs + files}
    return out


def _fio(job_text: str, where: Path) -> subprocess.CompletedProcess:
    job = where / "job.fio"
    job.write_text(job_text, encoding="utf-8")
    # cwd: a directory of its own, as ssdpts runs fio in the gate's directory: a relative name lands there
    cwd = where / "cwd"
    cwd.mkdir(exist_ok=True)
    return subprocess.run([FIO, "--output-format=json+", f"--output={where / 'out.json'}", str(job)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def _create_only(path: str, where: Path) -> subprocess.CompletedProcess:
    return _fio(_job(path).replace("[global]\n", "[global]\ncreate_only=1\n", 1), where)


@needs_fio
@pytest.mark.parametrize("name", HELD.values(), ids=list(HELD))
def test_fio_creates_exactly_the_file_named(tmp_path, name):
    root = tmp_path / "root"
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    assert path_problem(str(target)) is None
    before = _files(root)
    r = _create_only(str(target), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _files(root) - before == {name}, sorted(_files(root) - before)
    assert target.stat().st_size == 64 * 1024
    assert not any((tmp_path / "cwd").iterdir())


@pytest.mark.parametrize("name,needle,misread", REFUSED.values(), ids=list(REFUSED))
def test_a_path_fio_cannot_hold_is_refused_naming_why(tmp_path, name, needle, misread):
    path = str(tmp_path / name.replace("ROOT", str(tmp_path)))
    why = path_problem(path)
    assert why is not None and needle in why, why
    with pytest.raises(RunFailed, match="fio's job file cannot name"):
        _job(path)
    with pytest.raises(RunFailed):
        job_value(path)
    # the rule for paths that reach no job file: control characters and bytes that are not UTF-8 only
    assert (control_problem(path) is None) == (needle.startswith("'") or needle == "blank")


@needs_fio
@pytest.mark.parametrize("name", [v[0] for v in REFUSED.values() if v[2]],
                         ids=[k for k, v in REFUSED.items() if v[2]])
def test_fio_misreads_what_is_refused(tmp_path, name):
    """Why each of these is refused rather than written as it is: fio, given the path unchecked (a
    job file rendered for another name, that name then replaced), does not create exactly that file."""
    root = tmp_path / "root"
    target = root / name.replace("ROOT", str(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    before = _files(root)
    text = _job(str(root / "placeholder.img")).replace(str(root / "placeholder.img"), str(target))
    r = _fio(text.replace("[global]\n", "[global]\ncreate_only=1\n", 1), tmp_path)
    made = _files(root) - before
    assert r.returncode != 0 or made != {os.path.relpath(target, root)}, (made, r.stderr)


def test_colons_are_escaped_and_nothing_else():
    assert fio_names("/a/b:c/d\\e:f") == "/a/b\\:c/d\\e\\:f"
    assert fio_names("/a\\:b") == "/a\\\\:b"  # fio drops the one backslash before each colon
    assert job_value("/a/b:c") == "/a/b:c"  # replay_redirect: one name, taken as it is
    text = _job("/t/x:y.img")
    assert "filename=/t/x\\:y.img\n" in text


@needs_fio
def test_a_replayed_trace_reads_the_iolog_named_and_writes_only_the_target(tmp_path):
    """read_iolog= is a ':' list like filename=; replay_redirect= is one name: a trace in a run
    directory with a colon, replayed onto a target with a colon and a blank, writes that target
    only (decoys at the names an unescaped colon would give: unchanged)."""
    root = tmp_path / "root"
    (root / "lo:g").mkdir(parents=True)
    iolog = root / "lo:g" / "replay.iolog"
    iolog.write_text("fio version 2 iolog\n/dev/ssdpts-trace add\n/dev/ssdpts-trace open\n"
                     "/dev/ssdpts-trace write 0 4096\n/dev/ssdpts-trace write 8192 4096\n"
                     "/dev/ssdpts-trace close\n")
    target = root / "ta:rget x.img"
    target.write_bytes(b"\0" * 65536)
    decoys = {p: os.urandom(65536) for p in (root / "lo", root / "ta")}
    for p, data in decoys.items():
        p.write_bytes(data)
    before = _files(root)
    r = _fio(_job(str(target), iolog=str(iolog)), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _files(root) == before
    assert all(p.read_bytes() == data for p, data in decoys.items())
    written = target.read_bytes()
    assert written[:4096] != b"\0" * 4096 and written[8192:12288] != b"\0" * 4096
    assert hashlib.sha256(written[4096:8192]).digest() == hashlib.sha256(b"\0" * 4096).digest()
