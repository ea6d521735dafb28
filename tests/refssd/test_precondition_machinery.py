"""The sprandom proof's own machinery (tests/refssd/precondition_proof.py), without a drive (CI, a few
seconds): two runs made by the FakeExecutor, one preconditioned by the WIPC and one by the fill, and
a drive's truth written for them. The proof passes where the truth is a steady state after the fill,
and names the check that fails where the fill left erased blocks, where the WA after it is not the
window's, where the window values differ by 3%, where the drive served the window 3% slower, and where the
verdicts differ."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.pts.runspec import RunSpec
from ssdpts.run.session import start_run

from .conftest import refssd_host
from .precondition_proof import precondition_proof
from .proofs import Drive, Run

PARAMS = {"logical_pages": 32768, "pages_per_block": 32, "dies": 8, "gc_free_blocks": 1, "reference_wa": 2.6258}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Run, Run]:
    out = []
    for n, kw in enumerate(({}, dict(precondition="sprandom", spr_op=0.2344, spr_op_source="given by --precondition"))):
        root = tmp_path_factory.mktemp(f"run{n}")
        t = open_target(str(root / "t.img"), size_bytes=128 << 20)
        store, _ = start_run(RunSpec(tests=("iops",), step_seconds=1, max_rounds=8, **kw), t, executor=FakeExecutor(),
                             out_dir=root / "runs", confirm=None, argv=["test"])
        out.append(Run.read(Path(store.path)))
    return out[0], out[1]


def drive(run: Run, *, free_after: int = 12, wa_after: float = 2.6, service_us: float = 2900.0) -> Drive:
    """A truth of 100-ms intervals over the run: WA 2.6 and 9 free blocks in steady state; after the
    preconditioning ``free_after`` free blocks, and ``wa_after`` over the next 6 s (the half capacity: 55 intervals)."""
    t0 = min(s["measurement"]["start_time"] for s in run.steps) - 1
    t1 = max(s["measurement"]["end_time"] for s in run.steps) + 1
    end = max(s["measurement"]["end_time"] for s in run.of("iops", phase="wipc"))
    ivs, t = [], t0
    while t < t1:
        near = end <= t < end + 6
        ivs.append({"type": "interval", "t0": t, "t1": t + 0.1, "host_write_pages": 300,
                    "flash_prog_pages": 300 * (wa_after if near else 2.6), "gc_copy_pages": 480,
                    "free_blocks": free_after if t <= end < t + 0.1 else 9, "valid_pages": 32768,
                    "host_write_ios": 300, "host_read_ios": 100, "write_lat_mean_us": service_us,
                    "read_lat_mean_us": service_us / 2})
        t += 0.1
    return Drive(refssd_host.Truth([{"type": "config", "interval_s": 0.1}, *ivs]), None, PARAMS)


def test_a_steady_fill_passes(runs):
    pts, spr = runs
    v = precondition_proof((pts, drive(pts)), (spr, drive(spr)), "iops")
    assert v.ok, v


@pytest.mark.parametrize("what, check", [
    ("fill left 130 blocks", "physical space written by the fill"),
    ("WA after the fill 2.0", "WA of the next half capacity is the steady WA"),
    ("window values x 0.97", "window values within 2%"),
    ("service times x 1.03", "the drive's service times in the window within 2%"),
    ("verdict not reached", "verdicts equal"),
])
def test_each_check_fails_on_its_error(runs, what, check):
    pts, spr = runs
    kw: dict = {}
    if what.startswith("fill"):
        kw["free_after"] = 138
    elif what.startswith("WA"):
        kw["wa_after"] = 2.0
    elif what.startswith("service"):
        kw["service_us"] = 2900.0 * 1.03
    else:
        spr = copy.deepcopy(spr)
        ss = spr.summary["parts"]["iops"]["steady_state"]
        if what.startswith("window"):
            for var in ss["variables"]:
                var["average"] *= 0.97
        else:
            ss["reached"] = False
    v = precondition_proof((pts, drive(pts)), (spr, drive(spr, **kw)), "iops")
    assert v.failed(check) and len(v.failures) == 1, v
