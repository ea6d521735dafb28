"""Paths that cannot become fio options as they are (engine/jobfile.py path_problem, cli/common.py
check_paths): every special character in a target or results path either runs on exactly the file
named — a real run, the SHA-256 of the decoy files a misread name would hit unchanged, no stray
file — or is refused at input in one line, exit 2, with no run directory, no file target and
nothing else written."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
import subprocess

import pytest

from .conftest import ssdpts

pytestmark = pytest.mark.root

# The shortest real LAT run the suite makes: 9 steps x 0.02 s, 5 rounds, on a 64 MiB file.
SHORT = ["--size", "64M", "--step-seconds", "0.02", "--max-rounds", "5", "--quiet"]


def tree(root: Path) -> dict[str, str | None]:
    """Every entry under root, relative to it: a file's SHA-256, None for a directory."""
    out: dict[str, str | None] = {}
    for d, dirs, files in os.walk(root):
        for n in dirs:
            out[os.path.relpath(os.path.join(d, n), root)] = None
        for n in files:
            with open(os.path.join(d, n), "rb") as f:
                out[os.path.relpath(os.path.join(d, n), root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def decoys(root: Path, *names: str) -> None:
    """Files of the user's where a misread name would land (1 MiB of random data each)."""
    for n in names:
        (root / n).parent.mkdir(parents=True, exist_ok=True)
        (root / n).write_bytes(os.urandom(1 << 20))


def refused(r: subprocess.CompletedProcess, *needles: str) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# ---- names fio's job file holds: a real run on exactly that file ----------------------------------

RUNS = {
    # as the tester found them: fio laid out and wrote DIR/bench (32 MiB of it) and a file 2.img
    "colon in the file name": ("bench:2.img", ["bench"]),
    # ... and created DIR/bench2
    "colon in the file name, nothing at its first half": ("bench2:x.img", []),
    # a colon in a directory name, and in the same path every character fio takes as it is: a blank
    # inside and at the start of a name, '=', '$', a backslash alone and one before a colon, ','
    # and quotes
    "colon in a directory name, and what passes as it is": ("d:ir/ lead sp=eq$dol\\back\\:slash,c'q\".img", ["d"]),
}


@pytest.mark.parametrize("name,user_files", RUNS.values(), ids=list(RUNS))
def test_a_run_writes_exactly_the_file_named(tmp_path, name, user_files):
    root = tmp_path / "DIR"
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    decoys(root, *user_files)
    before = tree(root)
    out = tmp_path / "out"
    r = ssdpts("run", "lat", "--target", str(target), *SHORT, "--out", str(out), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    after = tree(root)
    assert {k: after.get(k) for k in before if after.get(k) is not None} == \
        {k: v for k, v in before.items() if v is not None}, "a file of the user's changed"
    assert set(after) - set(before) == {name, name + ".ssdpts-target"}, sorted(set(after) - set(before))
    assert target.stat().st_size == 64 << 20 and target.stat().st_blocks > 0  # written, to its size
    (run,) = out.iterdir()
    jobs = sorted((run / "fio").rglob("*.fio"))
    assert jobs and all(f"filename={str(target).replace(':', chr(92) + ':')}\n" in j.read_text() for j in jobs)


# ---- names fio's job file cannot hold: refused at input ------------------------------------------

REFUSED = {
    # as the tester found it: a second filename= line, and fio overwrote DIR/precious.db
    "newline in a directory name": ("nl\nfilename=DIR/precious.db", ["precious.db"], "control character \\n"),
    "carriage return": ("c\rr.img", ["c"], "control character \\r"),
    "tab": ("t\tab.img", [], "control character \\t"),
    "other control character": ("esc\x1b[0m.img", [], "control character \\x1b"),
    "semicolon": ("a;b.img", ["a"], "';'"),
    "hash": ("a#b.img", ["a"], "'#'"),
    "environment variable": ("a${HOME}b.img", [], "'${HOME}'"),
    "fio keyword": ("n$ncpus.img", [], "'$ncpus'"),
    "trailing space": ("trail.img ", ["trail.img"], "blank"),
}


@pytest.mark.parametrize("name,user_files,needle", REFUSED.values(), ids=list(REFUSED))
def test_a_target_fio_would_misread_is_refused_at_input(tmp_path, name, user_files, needle):
    root = tmp_path / "DIR"
    target = root / name.replace("DIR", str(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    decoys(root, *user_files)
    before = tree(root)
    out = tmp_path / "out"
    refused(ssdpts("run", "lat", "--target", str(target), *SHORT, "--out", str(out), timeout=300), "--target", needle)
    assert tree(root) == before and not out.exists()


def test_a_link_to_a_path_fio_would_misread_is_refused(tmp_path):
    """What fio would be given is the target as opened, its symbolic links followed."""
    root = tmp_path / "DIR"
    (root / "a;b").mkdir(parents=True)
    (root / "clean").symlink_to(root / "a;b")
    decoys(root, "a")
    before = tree(root)
    r = ssdpts("run", "lat", "--target", str(root / "clean" / "t.img"), *SHORT, "--out", str(tmp_path / "out"))
    refused(r, "(that is ", "a;b/t.img", "';'")
    assert tree(root) == before and not (tmp_path / "out").exists()


def test_results_paths_fio_would_misread_are_refused_at_input(tmp_path, make_loop):
    """--out (as given, and as the absolute path the current directory makes it), --describe,
    --targets-from, trace replay's --trace and --out, quick's TARGET, trace record's --out: each
    refused before anything is made."""
    root = tmp_path / "DIR"
    root.mkdir()
    ok = str(root / "ok.img")
    (root / "desc\n.toml").write_text('notes = "x"\n')
    (root / "t\n.iolog").write_text("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 4096\n/dev/x close\n")
    (root / "list").write_text(f"{root}/a;b.img\n")
    (root / "c;wd").mkdir()
    before = tree(root)
    cases = [
        (["run", "lat", "--target", ok, *SHORT, "--out", str(root / "o\nut")], "--out", "\\n"),
        (["run", "lat", "--target", ok, *SHORT, "--out", str(root / "o#ut")], "--out", "'#'"),
        (["run", "lat", "--target", ok, *SHORT, "--describe", str(root / "desc\n.toml"), "--out", str(root / "o")],
         "--describe", "\\n"),
        (["run", "lat", "--targets-from", str(root / "list"), *SHORT, "--out", str(root / "o")], "a;b.img", "';'"),
        (["trace", "replay", "--trace", str(root / "t\n.iolog"), "--target", ok, "--size", "64M",
          "--out", str(root / "o")], "--trace", "\\n"),
        (["trace", "replay", "--trace", str(root / "list"), "--target", ok, "--size", "64M",
          "--out", str(root / "o;ut")], "--out", "';'"),
        (["quick", str(root / "q;k.img"), "--size", "64M", "--out", str(root / "o")], "TARGET", "';'"),
    ]
    for argv, *needles in cases:
        refused(ssdpts(*argv, timeout=300), *needles)
    # the default --out, ./ssdpts-runs, under a current directory fio would misread
    refused(ssdpts("run", "lat", "--target", ok, *SHORT, cwd=root / "c;wd"), "--out ssdpts-runs (that is ", "';'")
    dev = make_loop("64M")
    refused(ssdpts("trace", "record", "--device", dev, "--seconds", "0.2", "--out", str(root / "rec\n.iolog")),
            "--out", "\\n")
    assert tree(root) == before


def test_a_tmpdir_the_step_gate_cannot_name_is_refused(tmp_path):
    """The step gate's hooks in the job file name its directory under TMPDIR, unquoted to sh: a
    blank there would have 'echo ... 1<>/tmp/a b/ev' write into /tmp/a."""
    root = tmp_path / "DIR"
    (root / "t b").mkdir(parents=True)
    decoys(root, "t")
    before = tree(root)
    r = ssdpts("run", "lat", "--target", str(root / "ok.img"), *SHORT, "--out", str(tmp_path / "out"),
               env={**os.environ, "TMPDIR": str(root / "t b")})
    refused(r, "TMPDIR")
    assert tree(root) == before and not (tmp_path / "out").exists()


def test_plan_prints_the_job_file_fio_reads_as_named(tmp_path):
    target = tmp_path / "bench:2.img"
    r = ssdpts("plan", "lat", "--target", str(target), "--size", "64M", "--fio")
    assert r.returncode == 0, r.stderr
    assert f"filename={tmp_path}/bench\\:2.img\n" in r.stdout
    assert not target.exists()
