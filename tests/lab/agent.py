"""The lab guest's command agent: runs inside the guest, started by tests/lab/init.sh.

It runs under the host's own python (the root filesystem is the host's, shared read-only over 9p),
so it may use only the standard library. It talks to the host test session over a virtio-serial
port named ``ssdpts.lab``, one JSON object per line each way:

    host  → {"id": 7, "argv": ["nvme", "id-ctrl", "/dev/nvme0"], "timeout": 60}
            {"id": 8, "sh": "ssdpts run ... & sleep 5; kill -INT $!; wait $!", "timeout": 600}
            {"id": 9, "op": "poweroff"}
    agent → {"id": 7, "rc": 0, "stdout": "...", "stderr": "...", "elapsed_s": 0.41, "timed_out": false}

Output is decoded with surrogateescape (lossless: the host re-encodes it); a command that outlives
its timeout is killed with its whole process group and reported with ``timed_out``.
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

PORT_NAME = "ssdpts.lab"


def find_port() -> str:
    for d in glob.glob("/sys/class/virtio-ports/vport*"):
        try:
            with open(os.path.join(d, "name"), encoding="utf-8") as f:
                if f.read().strip() == PORT_NAME:
                    return "/dev/" + os.path.basename(d)
        except OSError:
            continue
    raise SystemExit(f"agent: no virtio-serial port named {PORT_NAME}")


def decode(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def execute(req: dict) -> dict:
    t0 = time.monotonic()
    env = dict(os.environ)
    env.update(req.get("env") or {})
    argv = req["argv"] if "argv" in req else ["/bin/sh", "-c", req["sh"]]
    timeout = req.get("timeout") or 600
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if req.get("input") is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=req.get("cwd") or "/tmp",
                                start_new_session=True)
    except OSError as exc:
        return {"rc": 127, "stdout": "", "stderr": f"agent: cannot start {argv[0]}: {exc}", "elapsed_s": 0.0,
                "timed_out": False}
    timed_out = False
    try:
        out, err = proc.communicate(req["input"].encode() if req.get("input") is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    return {"rc": proc.returncode, "stdout": decode(out), "stderr": decode(err),
            "elapsed_s": round(time.monotonic() - t0, 3), "timed_out": timed_out}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", required=True)
    args = ap.parse_args()
    os.makedirs("/tmp/home", exist_ok=True)
    fd = os.open(find_port(), os.O_RDWR)

    def send(obj: dict) -> None:
        # A virtio port takes a large write in pieces: os.write may write less than it was given.
        data = memoryview(json.dumps(obj).encode() + b"\n")
        while data:
            data = data[os.write(fd, data):]

    with open("/proc/uptime", encoding="ascii") as f:
        uptime = float(f.read().split()[0])
    send({"ready": True, "uptime_s": uptime, "python": sys.version.split()[0], "uname": os.uname().release,
          "scratch": args.scratch})
    buf = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:  # host side not connected (yet, or any more): wait for it
            time.sleep(0.2)
            continue
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            req = json.loads(line)
            if req.get("op") == "poweroff":
                os.sync()
                send({"id": req.get("id"), "rc": 0, "stdout": "", "stderr": "", "elapsed_s": 0.0, "timed_out": False})
                with open("/proc/sysrq-trigger", "w", encoding="ascii") as f:
                    f.write("o")
                return 0
            res = execute(req)
            res["id"] = req.get("id")
            send(res)


if __name__ == "__main__":
    sys.exit(main())
