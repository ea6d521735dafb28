"""fio misbehaving: a wrapper named 'fio' first on PATH runs the real fio, then damages its result
on round 2's run (after WIPC and round 1 are saved). Each damage ends in one clear error, status
failed and every earlier step kept; harmless noise around the JSON is read through."""

from __future__ import annotations

import json
import os

import shutil
import stat
import subprocess

import pytest

from .test_run_devices import run_dir_of, steps_of

REAL_FIO = shutil.which("fio")

WRAPPER = r'''#!/usr/bin/env python3
import os, re, subprocess, sys
rc = subprocess.call([os.environ["REAL_FIO"], *sys.argv[1:]])
out = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--output=")), None)
if out is None:  # --version and other probes pass through
    sys.exit(rc)
mode = os.environ["FAKE_FIO_MODE"]
# round 2 is damaged, told by its output file: the next round's fio starts while the one before
# runs (it waits at the step gate): calls overlap, and their order of ending is not the rounds'
if os.path.basename(out) != "round-002.json":
    sys.exit(rc)
text = open(out).read()
if mode == "truncate":
    open(out, "w").write(text[: len(text) // 2])
elif mode == "garbage":
    open(out, "w").write("Segmentation fault (core dumped)\n")
elif mode == "exit1":
    sys.exit(1)
elif mode == "noise":
    open(out, "w").write("fio: some warning printed first\n" + text + "\ntrailing text\n")
elif mode == "ioerror":
    text = re.sub(r'"error" : 0', '"error" : 5', text, count=1)
    open(out, "w").write("fio: io_u error on file /dev/x: Input/output error: write offset=0, buflen=4096\n" + text)
elif mode == "empty":
    open(out, "w").write("")
sys.exit(rc)
'''

EXPECT = {
    "truncate": (1, "truncated or corrupt"),
    "garbage": (1, "Segmentation fault"),
    "exit1": (1, "exited with status 1"),
    "ioerror": (1, "I/O error"),
    "empty": (1, "no JSON"),
    "noise": (0, ""),
}


@pytest.mark.skipif(REAL_FIO is None, reason="fio is not installed")
@pytest.mark.parametrize("mode", list(EXPECT))
def test_damaged_fio_output(mode, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    w = bindir / "fio"
    w.write_text(WRAPPER)
    w.chmod(w.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "REAL_FIO": REAL_FIO,
           "FAKE_FIO_MODE": mode}
    out = tmp_path / "runs"
    # --fio: the wrapper, also where make fio built one (which ssdpts would run before any fio on PATH)
    r = subprocess.run(["ssdpts", "run", "lat", "--target", str(tmp_path / "t.bin"), "--size", "128M",
                        "--step-seconds", "0.1", "--max-rounds", "5", "--out", str(out), "--quiet", "--fio", str(w)],
                       capture_output=True, text=True, env=env, timeout=600)
    code, needle = EXPECT[mode]
    assert r.returncode == code, r.stderr
    run = run_dir_of(out)
    man = json.loads((run / "manifest.json").read_text())
    steps = steps_of(run)
    if code:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr, r.stderr
        assert man["status"] == "failed"
        # WIPC and round 1 finished before the damaged round and are kept
        assert [s["phase"] for s in steps].count("wipc") == 1
        assert len([s for s in steps if s["phase"] == "round" and s["round"] == 1]) == 9
        assert not [s for s in steps if s["phase"] == "round" and s["round"] == 2]
        assert (run / "report.html").exists(), "a partial report is rendered after a failure"
    else:
        assert man["status"] == "complete"
