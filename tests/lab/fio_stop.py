"""A ``fio`` put first on PATH in the guest to stop a run right after its purge (stdlib only).

Probes (``fio --version``, ``--enghelp``...) go to the real fio; the first job (WIPC, which would
overwrite the purge markers) does not run:

* ``LAB_FIO_MODE=fail``: exits 3 at once, so the run fails: the purge's effect and the restore
  after a failed run can be checked.
* ``LAB_FIO_MODE=block``: writes ``$LAB_FIO_LOG.started`` and sleeps until killed, so the test can
  send SIGINT to ssdpts at a known point (purge done, write cache set, fio "running").

Each job run is logged (its argv) to ``$LAB_FIO_LOG``.
"""

from __future__ import annotations

import os
import shutil
import sys
import time


def real_fio() -> str:
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    path = os.environ.get("PATH", "").split(os.pathsep)
    return shutil.which("fio", path=os.pathsep.join(p for p in path if os.path.abspath(p) != here)) or "/usr/bin/fio"


def main() -> int:
    args = sys.argv[1:]
    if not any(a.startswith("--output=") for a in args):
        os.execv(real_fio(), ["fio", *args])
    log = os.environ.get("LAB_FIO_LOG", "/tmp/fio-stop.log")
    with open(log, "a", encoding="utf-8") as f:
        f.write(" ".join(args) + "\n")
    if os.environ.get("LAB_FIO_MODE", "fail") == "block":
        open(log + ".started", "w").close()
        while True:
            time.sleep(1)
    print("lab: fio stopped by the test right after the purge", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
