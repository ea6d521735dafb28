"""LAT on the reference SSD (make test-full): the response times ssdpts reports (mean, 99.999%,
maximum) against the service times the simulator modeled for the very same commands, which it
logs one by one. The difference is the cost of the path in between (fio, io_uring, the loop
device, FUSE, waking the simulator's completion thread and fio after each wait); it is measured
first, command by command, on a fresh drive of the same model at QD 1 (fio's per-IO latency log
against the simulator's per-command log), and the LAT figures must differ from the model by no
more than that. A drive whose modeled times are all zero (the first calibration) never sleeps
and so never pays the wake-ups: on this machine it put the path at 105 us where a drive that
waits pays 230-270 us, and the proof failed on a correct run.

Set REFSSD_FIGURES=FILE to collect the figures as JSON lines."""

from __future__ import annotations

import json
from pathlib import Path
import statistics
import subprocess
import time

import numpy as np

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run, steps_of
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "128M", "pages_per_block": 32}


def path_cost(ssd, seconds: float = 4.0) -> dict:
    """Per command, fio's response time less the time the simulator modeled for it, at QD 1 on a
    fresh drive (4 KiB random writes, each modeled at ~1 ms): what the path between fio and the
    model adds (io_uring, the loop device, FUSE, and waking the simulator's completion thread and
    fio after the drive's wait; the last is what a drive with no modeled time never pays)."""
    def fio(secs: float, log: Path | None = None) -> None:
        argv = ["fio", "--name=cal", f"--filename={ssd.device}", "--direct=1", "--ioengine=io_uring",
                "--rw=randwrite", "--bs=4k", "--iodepth=1", "--time_based", f"--runtime={secs}", "--norandommap"]
        if log:
            argv += [f"--write_lat_log={log}", "--log_avg_msec=0"]
        subprocess.run(argv, capture_output=True, text=True, check=True)

    fio(1)  # warm-up
    log = ssd.dir / "cal"
    t0 = time.time()
    fio(seconds, log)
    t1 = time.time()
    # The simulator writes its io log with its truth, every 100 ms (serve.rs, recorder): once the truth
    # covers a later interval, every command up to t1 is in the io log (read at once, the last ~30
    # commands were still in the simulator's memory: 3,571 fio IOs against 3,539 logged)
    ssd.wait_truth(t1 + 0.25)
    fio_us = np.loadtxt(f"{log}_lat.1.log", delimiter=",", usecols=(1,), ndmin=1) / 1e3
    model_us = np.array(refssd_host.read_io_log(ssd.io_log_path, t0, t1, "W", 4096)) / 1e3
    assert len(fio_us) == len(model_us), (len(fio_us), len(model_us))  # one command per fio IO, in order
    d = fio_us - model_us
    return {"ios": len(d), "model_mean_us": float(model_us.mean()), "mean_us": float(d.mean()),
            "median_us": float(np.median(d)), "p99_us": float(np.percentile(d, 99)), "min_us": float(d.min()),
            "max_us": float(d.max())}


@pytest.fixture(scope="module")
def overhead(tmp_path_factory):
    """The serving path's own cost, command by command, on a drive that really waits."""
    require_refssd()
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("cal"), io_log=True, **DRIVE) as ssd:
        return path_cost(ssd)


def test_lat_response_times_match_the_modeled_service_times(overhead, tmp_path_factory):
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp("refssd"), io_log=True, **DRIVE) as ssd:
        run = ssdpts_run(ssd, tmp_path_factory.mktemp("lat-runs"), "lat", "--step-seconds", "1",
                         "--max-rounds", "8")
        steps = steps_of(run, "lat")
        ssd.wait_truth(max(s["end_time"] for s in steps) + 0.25)  # the io log too (see path_cost)
    summary = json.loads((run / "summary.json").read_text())
    window = summary["parts"]["lat"]["steady_state"]["window_rounds"]
    tracked = [s for s in steps if s["phase"] == "round" and s["round"] in window
               and s["workload"]["block_size_bytes"] == 4096 and s["workload"]["read_pct"] == 0]
    assert len(tracked) == len(window) == 5
    rows = []
    for s in tracked:
        m = s["measurement"]
        # the neighbouring steps write 8 KiB and 0.5 KiB, the 65/35 step with 4 KiB writes is three
        # steps away: a margin of 0.2 s around fio's (millisecond) step times catches this step's
        # commands and no other's
        modeled = refssd_host.read_io_log(ssd.io_log_path, m["start_time"] - 0.2, m["end_time"] + 0.2, "W", 4096)
        assert abs(len(modeled) - m["write"]["ios"]) <= 2, (len(modeled), m["write"]["ios"])
        modeled_us = sorted(x / 1e3 for x in modeled)
        rows.append({
            "round": s["round"],
            "ssdpts_mean_us": m["lat_mean_ns"] / 1e3, "model_mean_us": statistics.fmean(modeled_us),
            "ssdpts_p99999_us": m["lat_p99999_ns"] / 1e3,
            "model_p99999_us": modeled_us[min(len(modeled_us) - 1, int(0.99999 * len(modeled_us)))],
            "ssdpts_max_us": m["lat_max_ns"] / 1e3, "model_max_us": modeled_us[-1],
        })
    record("lat", overhead=overhead, steps=rows)
    for r in rows:
        # every host response time is a modeled service time plus the path: never less
        assert r["ssdpts_mean_us"] >= r["model_mean_us"], r
        assert r["ssdpts_max_us"] >= r["model_max_us"], r
        # and the mean differs by the path's mean cost (with room for a busier machine: x3)
        assert r["ssdpts_mean_us"] - r["model_mean_us"] <= 3 * overhead["mean_us"] + 10, (r, overhead)
        # the tail: fio's 99.999% bin (~1.5% wide) and maximum exceed the model's by at most the
        # largest path cost seen in calibration, plus that width
        for k in ("p99999", "max"):
            assert r[f"ssdpts_{k}_us"] <= 1.02 * r[f"model_{k}_us"] + overhead["max_us"] + 100, (k, r, overhead)
