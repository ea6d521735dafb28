"""`ssdpts trace record` takes the blktrace path where the kernel allows it: in the guest (Debian's
kernel, CONFIG_BLK_DEV_IO_TRACE) on the emulated NVMe drive, while a known fio job runs. The trace
is what fio did. (This CI's own kernel refuses blktrace; there the tracepoint path is tested,
tests/integration/test_trace_real.py.)"""

from __future__ import annotations

import json

import pytest


JOB = ("fio --name=known --filename={dev} --direct=1 --ioengine=libaio --iodepth=4 --rw=randrw --rwmixread=60 "
       "--bssplit=4k/70:64k/30 --size=64M --number_ios=2000 --randseed=7 --norandommap --output-format=json")


@pytest.mark.slow  # about 40 s under TCG: make test-lab / test-full; the reader itself is in the CI set
def test_record_uses_blktrace_in_the_guest(lab):
    dev = lab.dev["nvme"]
    # blktrace's per-CPU files are mmap()ed: a tmpfs, not the 9p scratch share
    out = "/run/ssdpts-trace-test"
    lab.sh(f"mkdir -p {out} && (mountpoint -q {out} || mount -t tmpfs none {out})", check=True)
    try:
        res = lab.sh(f"ssdpts trace record --device {dev} --seconds 15 --out {out}/t.iolog > {out}/rec.log 2>&1 & "
                     f"until grep -q recording {out}/rec.log; do sleep 0.2; done; "  # python starts slowly under TCG
                     f"{JOB.format(dev=dev)} > {out}/fio.json; wait; cat {out}/rec.log", timeout=180)
        assert res.rc == 0, res.stdout + res.stderr
        assert "with blktrace" in res.stdout, res.stdout
        job = json.loads(lab.sh(f"cat {out}/fio.json", check=True).stdout)["jobs"][0]
        summary = json.loads(lab.sh(f"cat {out}/t.iolog.summary.json", check=True).stdout)
        assert summary["source"] == "blktrace"
        # the job's IOs, and whatever else the guest read from the drive while it was traced
        assert summary["reads"] >= job["read"]["total_ios"] and summary["writes"] == job["write"]["total_ios"]
        shown = json.loads(lab.ssdpts("trace", "show", f"{out}/t.iolog", "--json").stdout)
        assert shown["writes"] == job["write"]["total_ios"]
    finally:
        lab.sh(f"umount {out}; rmdir {out}")
