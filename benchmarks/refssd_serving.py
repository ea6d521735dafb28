#!/usr/bin/env python3
"""How fast can a user-space drive be served as a real block device here? The measurement behind
the reference SSD's stack (docs/reference-ssd.md, "Serving").

Each candidate serves a 256 MiB file; a loop device with direct I/O sits on it and fio runs
4 KiB random writes through it at QD32 (IOPS, mean latency) and at QD1 (latency = the stack's
own overhead when the server answers at once). Candidates, measured side by side, alternating:

  refssd-0      refssd (Rust, fuser) with every modeled time zero: the serving ceiling
  refssd        refssd as the reference SSD (modeled FOB 8000 IOPS at QD32; 1 ms writes at QD1):
                delivered against modeled, from refssd's own ground truth
  libfuse3-c    a RAM file in C on libfuse3 (memfuse.c beside this file)
  pyfuse3       a RAM file in Python on pyfuse3 (Debian python3-pyfuse3)
  nbdkit+nbdfuse  nbdkit's memory plugin (C) exposed by libnbd's nbdfuse

Needs root. Candidates whose tools are missing are listed and skipped (apt-get install nbdkit
libnbd-bin python3-pyfuse3 libfuse3-dev). Run: sudo python3 benchmarks/refssd_serving.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "refssd"))
import refssd_host  # noqa: E402

SIZE = "256M"


def fio(dev: str, qd: int, seconds: float) -> dict:
    out = subprocess.run(["fio", "--name=b", f"--filename={dev}", "--direct=1", "--ioengine=io_uring", "--rw=randwrite",
                          "--bs=4k", f"--iodepth={qd}", "--time_based", f"--runtime={seconds}", "--norandommap",
                          "--randrepeat=0", "--output-format=json"], capture_output=True, text=True, check=True).stdout
    w = json.loads(out)["jobs"][0]["write"]
    return {"iops": w["iops"], "lat_mean_us": w["lat_ns"]["mean"] / 1e3, "t0": time.time() - seconds, "t1": time.time()}


class Server:
    """A FUSE-served file under a loop device; start() -> /dev/loopN, stop() undoes both."""

    def __init__(self, name: str, argv: list[str], file: str, tmp: Path):
        self.name, self.argv, self.tmp = name, argv, tmp
        self.mnt = tmp / name
        self.file = self.mnt / file if file else self.mnt
        self.proc = None
        self.dev = None

    def start(self) -> str:
        self.mnt.mkdir(exist_ok=True)
        argv = [a.replace("{mnt}", str(self.mnt)) for a in self.argv]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.file.exists() and os.path.ismount(self.mnt):
                break
            time.sleep(0.05)
        self.dev = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", str(self.file)], capture_output=True,
                                  text=True, check=True).stdout.strip()
        return self.dev

    def stop(self) -> None:
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev], capture_output=True)
        subprocess.run(["fusermount3", "-u", str(self.mnt)], capture_output=True)
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def candidates(tmp: Path) -> tuple[list[Server], list[str]]:
    binary = str(refssd_host.build())
    out, skipped = [], []
    out.append(Server("refssd-0", [binary, "serve", "--mount", "{mnt}", "--capacity", SIZE, "--time-scale", "0"], "disk", tmp))
    out.append(Server("refssd", [binary, "serve", "--mount", "{mnt}", "--capacity", SIZE, "--truth",
                                 str(tmp / "truth.jsonl")], "disk", tmp))
    if shutil.which("gcc") and subprocess.run(["pkg-config", "--exists", "fuse3"]).returncode == 0:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True, text=True).stdout.split()
        subprocess.run(["gcc", "-O2", "-o", str(tmp / "memfuse"), str(HERE / "refssd" / "memfuse.c"), *flags], check=True)
        out.append(Server("libfuse3-c", [str(tmp / "memfuse"), "-f", "{mnt}"], "disk", tmp))
    else:
        skipped.append("libfuse3-c (needs gcc and libfuse3-dev)")
    if subprocess.run(["/usr/bin/python3", "-c", "import pyfuse3, trio"], capture_output=True).returncode == 0:
        out.append(Server("pyfuse3", ["/usr/bin/python3", str(HERE / "refssd" / "pyfuse3_mem.py"), "{mnt}"], "disk", tmp))
    else:
        skipped.append("pyfuse3 (needs python3-pyfuse3)")
    if shutil.which("nbdkit") and shutil.which("nbdfuse"):
        out.append(Server("nbdkit+nbdfuse", ["nbdfuse", "{mnt}/disk", "--command", "nbdkit", "-s", "--exit-with-parent",
                                             "memory", SIZE], "disk", tmp))
    else:
        skipped.append("nbdkit+nbdfuse (needs nbdkit and libnbd-bin)")
    return out, skipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="rounds over all candidates (default 3)")
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds per fio run (default 4)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (losetup)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="refssd-bench-"))
    servers, skipped = candidates(tmp)
    res: dict[str, list[dict]] = {s.name: [] for s in servers}
    try:
        for _ in range(args.repeat):
            for s in servers:
                dev = s.start()
                try:
                    r32 = fio(dev, 32, args.seconds)
                    r1 = fio(dev, 1, args.seconds / 2)
                    row = {"qd32_iops": r32["iops"], "qd32_lat_us": r32["lat_mean_us"], "qd1_lat_us": r1["lat_mean_us"]}
                    if s.name == "refssd":  # modeled, from the simulator's own record
                        time.sleep(0.3)
                        tr = refssd_host.Truth.load(tmp / "truth.jsonl")
                        row["qd32_model_iops"] = tr.rate("host_write_ios", r32["t0"] + 0.5, r32["t1"] - 0.5)
                        row["qd1_model_lat_us"] = tr.lat_mean_us("write", r1["t0"] + 0.2, r1["t1"] - 0.2)
                    res[s.name].append(row)
                finally:
                    s.stop()
                    if s.name == "refssd":
                        (tmp / "truth.jsonl").unlink(missing_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"4 KiB random write through loop (direct I/O) over a FUSE file, fio io_uring, {args.repeat} runs each "
          f"(median [min-max]); load average at the end: {os.getloadavg()[0]:.1f}")
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    for name, rows in res.items():
        def f(k, fmt="{:.0f}"):
            xs = [r[k] for r in rows if k in r]
            return f"{fmt.format(med(xs))} [{fmt.format(min(xs))}-{fmt.format(max(xs))}]" if xs else "-"
        line = f"  {name:16s} QD32 {f('qd32_iops')} IOPS, mean {f('qd32_lat_us')} us; QD1 mean {f('qd1_lat_us')} us"
        if name == "refssd":
            line += f"; simulator: QD32 {f('qd32_model_iops')} IOPS served, QD1 {f('qd1_model_lat_us')} us modeled"
        print(line)
    for s in skipped:
        print(f"  skipped: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
