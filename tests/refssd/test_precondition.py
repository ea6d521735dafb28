"""Preconditioning by sprandom proven on the reference SSD (make test-full; docs/methodology.md#preconditioning-by-sprandom,
docs/reference-ssd.md "The proofs").

The IOPS test (PTS 2.0.2 §6), the test whose WIPC the fill replaces (WSAT and XSR have none: the
option refuses them), run three times on fresh 128 MiB drives of 32 pages per block, OP 25%
(effective spare 0.2344, refssd params): preconditioned as the PTS says (purge, WIPC of 2 x capacity
SEQ 128KiB, rounds), by the sprandom fill at the drive's effective spare, and by the fill at half
that spare (the mutation). tests/refssd/precondition_proof.py says what is checked and why each
tolerance has its size: the verdicts equal, the window values within 2%, the drive's own truth after
the fill (its physical space written, the WA of the next half capacity against the window's); the
fill at half the OP must fail the physical-space check.

TC 1 x QD 2 and 1-s steps as the IOPS proof (tests/refssd/test_iops.py: at TC 4 x QD 32 a 1 MiB step
keeps more in flight than a compressed step lasts). About 36 minutes on this 2-core machine. Its last
run (docs/reference-ssd.md "Preconditioning by sprandom, measured") failed on the window values
(-16 ... -29%: a loaded host issued late at QD 2, the drive's service times agreeing within 2%) and
held every check of the drive's truth; the mutation failed as it must.
Set REFSSD_FIGURES=FILE to collect the figures as JSON lines (the benchmark,
benchmarks/time_to_result.py, reads the manifests' time to result the same way)."""

from __future__ import annotations

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run
from .precondition_proof import precondition_proof, truth_after
from .proofs import Drive, Run
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

DRIVE = {"capacity": "128M", "pages_per_block": 32}
ARGS = ("iops", "--step-seconds", "1", "--max-rounds", "12", "--threads", "1", "--iodepth", "2")


def require_sprandom() -> None:
    from ssdpts.engine import fiobin

    from tests.conftest import unavailable

    fio = fiobin.choose()
    if not fiobin.knows(fio.path, "sprandom"):
        unavailable(f"{fio.path} ({fiobin.version(fio.path)}) has no sprandom: run 'make fio'")


def run(tmp_path_factory, name: str, precondition: str) -> tuple[Run, Drive]:
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp(f"refssd-{name}"), **DRIVE) as ssd:
        r = Run.read(ssdpts_run(ssd, tmp_path_factory.mktemp(f"runs-{name}"), *ARGS, "--precondition", precondition,
                                timeout=3600))
        return r, Drive.of(ssd, max(s["measurement"]["end_time"] for s in r.of("iops")))


def test_iops_preconditioned_by_sprandom_is_the_pts_result(tmp_path_factory):
    require_refssd()
    require_sprandom()
    op = refssd_host.params(**DRIVE)["effective_spare_factor"] - 1
    pts = run(tmp_path_factory, "pts", "pts")
    spr = run(tmp_path_factory, "sprandom", f"sprandom:{op:.4f}")
    wrong = run(tmp_path_factory, "sprandom-half-op", f"sprandom:{op / 2:.4f}")
    v = precondition_proof(pts, spr, "iops")
    m = precondition_proof(pts, wrong, "iops")
    pts_truth = truth_after(*pts, "iops")
    record("precondition-iops", op=op, checks=v.checks, failures=[str(f) for f in v.failures],
           mutation={"op": op / 2, "failures": [str(f) for f in m.failures], "truth": m.figures["truth"]["sprandom"],
                     "window": m.figures["window"], "rounds": m.figures["rounds"]},
           pts_truth_after_wipc=pts_truth, **v.figures)
    print(v, v.figures, "mutation (half the OP):", m, m.figures["truth"]["sprandom"])
    assert v.ok, v
    assert m.failed("physical space written by the fill"), m
