"""One ``ssdpts run`` in the lab guest, stopped at a known point (stdlib only; runs in the guest).

The run gets tests/lab/fio_stop.py as its fio (unless ``--real-fio``), so it goes through the
safety guard, identify, the write-cache change and the purge, and then:

* ``--stop fail``: fio fails at once (the run fails; ssdpts restores and writes its partial report);
* ``--stop sigint`` / ``--stop sigkill``: fio blocks; once it has started, ``--probe`` commands run
  (e.g. read the write cache back while the run is "in fio"), then ssdpts gets SIGINT, or SIGKILL
  for its whole process group (fastest: no restore, no report).

Prints one JSON object: exit code, stdout, stderr, whether fio was reached, the probes' output,
the run directory and its manifest (as left on disk).

    python scenario.py --stop sigkill --out DIR -- lat --target /dev/nvme0n1 --destroy-data-on SERIAL
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stop", choices=("fail", "sigint", "sigkill", "none"), default="fail")
    ap.add_argument("--out", required=True, help="--out of the run (a fresh directory)")
    ap.add_argument("--fio-stop-dir", default="", help="directory holding the stopping fio")
    ap.add_argument("--probe", action="append", default=[], help="shell command to run once fio has started")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("run_args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    run_args = a.run_args[1:] if a.run_args[:1] == ["--"] else a.run_args
    os.makedirs(a.out, exist_ok=True)
    log = os.path.join(a.out, "fio-stop.log")
    env = dict(os.environ, COLUMNS="200")
    if a.stop != "none":
        env.update(PATH=f"{a.fio_stop_dir}:{env['PATH']}", LAB_FIO_LOG=log,
                   LAB_FIO_MODE="fail" if a.stop == "fail" else "block")
    argv = ["ssdpts", "run", *run_args, "--out", a.out, "--quiet"]
    if a.stop != "none":  # the stopping fio, also where make fio built one (ssdpts runs that before PATH's)
        argv += ["--fio", os.path.join(a.fio_stop_dir, "fio")]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            errors="replace", start_new_session=True)
    started = False
    probes: list[dict] = []
    if a.stop in ("sigint", "sigkill"):
        while proc.poll() is None and time.monotonic() - t0 < a.timeout:
            if os.path.exists(log + ".started"):
                started = True
                break
            time.sleep(0.2)
        if started:
            for cmd in a.probe:
                p = subprocess.run(cmd, shell=True, capture_output=True, text=True, errors="replace")
                probes.append({"cmd": cmd, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr})
            if a.stop == "sigint":
                proc.send_signal(signal.SIGINT)
            else:
                os.killpg(proc.pid, signal.SIGKILL)
    try:
        out, err = proc.communicate(timeout=max(60.0, a.timeout - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += "\nscenario: ssdpts did not finish in time and was killed"
    if a.stop == "sigint":  # a stopping fio that outlived ssdpts would hold the device
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    started = started or os.path.exists(log)
    dirs = sorted(d for d in glob.glob(os.path.join(a.out, "*")) if os.path.isdir(d))
    manifest = None
    if dirs:
        try:
            with open(os.path.join(dirs[-1], "manifest.json"), encoding="utf-8") as f:
                manifest = json.load(f)
        except (OSError, ValueError):
            manifest = None
    print(json.dumps({"rc": proc.returncode, "stdout": out, "stderr": err, "fio_reached": started,
                      "probes": probes, "run_dir": dirs[-1] if dirs else None, "manifest": manifest,
                      "seconds": round(time.monotonic() - t0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
