"""LAT on the reference SSD (make test-full): the response times ssdpts reports against the service
times the simulator modeled for the very same commands, which it logs one by one. The proof
(tests/refssd/proofs.py lat_proof): every command of the run reached the drive after the one
before it had completed (QD 1, from the drive's own log), each RND 4 KiB write step of the window
ran the simulator's commands, its mean, median and maximum are never below the modeled ones, and
its median exceeds the model's by no more than the path between fio and the model allows. The
path (fio, io_uring, the loop device, FUSE, waking the simulator's completion thread and fio after
each wait) is calibrated on the same drive just before and just after the run, command by command
(fio's per-IO latency log against the simulator's per-command log, QD 1), and the bound is the
spread it showed there (its 90th percentile, lat_proof: LAT_PATH_QUANTILE, LAT_STALLED_SHARE),
not a multiple of its mean. The mean is not bounded above: it follows host stalls, which come and
go with the load between the calibrations and the steps (docs/reference-ssd.md). A drive whose
modeled times are all zero never sleeps and so never pays the wake-ups (on this machine it put
the path at 105 us where a drive that waits pays 230-270 us): the calibration runs on the drive
under test.

The table summary.json reports (every cell: mean, 99.999th percentile, maximum, IOPS) is held to
the drive's own record of the same window steps (tests/refssd/reported.py lat_table): at QD 1 the
time from one command's arrival at the drive to the next one's is that command's response time
plus fio's own time between the two, so the mean response time is the mean of those cycles within
1.5% below and 1% above, each mean scaled by 1.03 and by 0.97 failing; the 99.999th percentile and
the maximum lie between the longest modeled service time and the longest any response could have
lasted (from the completion of the command before it to the arrival of the one after it: a host
stall can fall in fio's own time between two responses): bounded both ways, not tied closely
enough to catch every 3% error (the recorded mutations say which were caught).

The proof is shown to fail on the known error: the Latency test run at QD 2 (a fio on the PATH
that turns the job file's iodepth=1 into 2, so that ssdpts believes it ran QD 1).
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from . import reported
from .conftest import only_run_dir, refssd_host, require_refssd, ssdpts_run
from .proofs import Drive, Run, lat_proof
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "128M", "pages_per_block": 32}
ROUNDS = ("--step-seconds", "1", "--max-rounds", "8")


def path_cost(ssd, seconds: float = 4.0) -> np.ndarray:
    """Per command, fio's response time less the time the simulator modeled for it (us), at QD 1
    (4 KiB random writes): what the path between fio and the model adds."""
    log = ssd.dir / f"cal-{time.monotonic_ns()}"
    t0 = time.time()
    subprocess.run(["fio", "--name=cal", f"--filename={ssd.device}", "--direct=1", "--ioengine=io_uring",
                    "--rw=randwrite", "--bs=4k", "--iodepth=1", "--time_based", f"--runtime={seconds}",
                    "--norandommap", f"--write_lat_log={log}", "--log_avg_msec=0"],
                   capture_output=True, text=True, check=True)
    t1 = time.time()
    # the io log is written with the truth, every interval: wait until it covers t1
    ssd.wait_truth(t1 + 0.25)
    fio_us = np.loadtxt(f"{log}_lat.1.log", delimiter=",", usecols=(1,), ndmin=1) / 1e3
    model_us = np.array(refssd_host.read_io_log(ssd.io_log_path, t0, t1, "W", 4096)) / 1e3
    assert len(fio_us) == len(model_us), (len(fio_us), len(model_us))  # one command per fio IO, in order
    return fio_us - model_us


def fio_at_qd2(directory: Path) -> dict:
    """An environment whose fio rewrites the job file it is given, iodepth=1 -> 2, and runs the
    real fio on the copy: ssdpts's job files (and records) still say QD 1."""
    real = shutil.which("fio")
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "fio"
    wrapper.write_text(f"""#!{sys.executable}
import os, re, sys
args = sys.argv[1:]
if args and args[-1].endswith(".fio") and os.path.isfile(args[-1]):
    copy = os.path.join({str(directory)!r}, os.path.basename(args[-1]))
    with open(args[-1]) as f, open(copy, "w") as g:
        g.write(re.sub(r"(?m)^iodepth=1$", "iodepth=2", f.read()))
    args[-1] = copy
os.execv({real!r}, [{real!r}] + args)
""")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{directory}{os.pathsep}{os.environ['PATH']}"}


def test_lat_response_times_match_the_modeled_service_times(tmp_path_factory):
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), io_log=True, **DRIVE) as ssd:
        subprocess.run(["fio", "--name=warm", f"--filename={ssd.device}", "--direct=1", "--ioengine=io_uring",
                        "--rw=randwrite", "--bs=4k", "--iodepth=1", "--time_based", "--runtime=1"],
                       capture_output=True, check=True)
        before = path_cost(ssd)
        run = Run.read(ssdpts_run(ssd, tmp_path_factory.mktemp("lat-runs"), "lat", *ROUNDS))
        after = path_cost(ssd)
        # the known error: the same test at QD 2, ssdpts unaware
        out = tmp_path_factory.mktemp("lat-qd2")
        desc = ssd.describe_file(out.parent / "qd2-describe.json")
        subprocess.run(["ssdpts", "run", "lat", *ROUNDS, "--max-rounds", "5", "--target", ssd.device,
                        "--destroy-data-on", ssd.device, "--describe", str(desc), "--out", str(out), "--quiet",
                        "--fio", str(out.parent / "fio-qd2" / "fio")],
                       capture_output=True, text=True, timeout=1800, env=fio_at_qd2(out.parent / "fio-qd2"))
        qd2 = Run.read(only_run_dir(out))
        drive = Drive.of(ssd, max(s["measurement"]["end_time"] for s in qd2.steps))
    v = lat_proof(run, drive, [before, after])
    wrong = lat_proof(qd2, drive, [before, after])
    table = reported.lat_table(run, drive)
    scaled = reported.mutation_check(lambda r: reported.lat_table(r, drive), run, table)
    record("lat", checks=v.checks, failures=[str(f) for f in v.failures], mutations={"qd 2": str(wrong)}, **v.figures)
    shown = reported.report_agrees(table, run)
    record("lat-table", mutations=scaled, report=shown, **reported.summary_figures(table))
    assert v.ok, v
    reported.assert_proved(table, scaled)
    assert wrong.failed("QD 1"), wrong
