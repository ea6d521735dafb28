"""Preconditioning by sprandom proven on the reference SSD (make test-full; docs/methodology.md#preconditioning-by-sprandom,
docs/reference-ssd.md "The proofs").

The IOPS test (PTS 2.0.2 §6), whose WIPC the fill replaces (WSAT and XSR have none, TP keeps its
own: docs/methodology.md), run three times on each of two geometries, each run on a fresh drive:
128 MiB of 32 pages per block at OP 25% (effective spare 0.2344, refssd params), and a client drive
of 64 pages per block at OP 22% with a 32 MiB dynamic SLC cache. Preconditioned as the PTS says
(purge, WIPC of 2 x capacity SEQ 128KiB, rounds), by the sprandom fill at the drive's effective
spare, and by the fill at half that spare (the mutation, which must fail a check of the drive's
truth: its physical space unwritten, or on the cache drive the WA after the fill short). HIR (PTS 2.0.2 §10), whose preconditioning
to steady state by rounds the fill shortens, both ways on the HIR proof's drive.
tests/refssd/precondition_proof.py says what is checked and why each tolerance has its size: the
verdicts equal, the window values within 2% (undecided, with the figures, where the drive's truth
shows the PTS run's window began before its WA settled), the fill's window holding the drive's WA,
the drive's own truth after the fill (its physical space written, the WA of the next half capacity
against the window's).

TC 1 x QD 2 and 1-s steps as the IOPS proof (tests/refssd/test_iops.py: at TC 4 x QD 32 a 1 MiB step
keeps more in flight than a compressed step lasts). About 20 minutes a geometry on a quiet 2-core
machine, HIR about 30; at TC 1 x QD 2 a loaded host issues late and moves the window values (a
run at load 3-77 failed them by 16-29%, the drive's service times agreeing within 2%). Set
REFSSD_FIGURES=FILE to collect the figures as JSON lines (the benchmark,
benchmarks/time_to_result.py, reads the manifests' time to result the same way)."""

from __future__ import annotations

import pytest

from .conftest import refssd_host, require_refssd, ssdpts_run
from .precondition_proof import precondition_proof, truth_after
from .proofs import Drive, Run, rel_diff
from .test_wsat_purge import record

pytestmark = [pytest.mark.root, pytest.mark.slow]

# Two geometries: the CI's 32 pages per block at OP 25%, and a client drive of 64 pages per block
# at OP 22% with a 32 MiB dynamic SLC cache (docs/reference-ssd.md): its fill writes the physical
# space at the normal density once the cache has filled, as the PTS's random writes do.
GEOMETRIES = {
    "n32": {"capacity": "128M", "pages_per_block": 32},
    "slc": {"capacity": "128M", "pages_per_block": 64, "op": 0.22, "slc_cache_bytes": 32 << 20, "t_prog_slc_us": 400},
}
ARGS = ("iops", "--step-seconds", "1", "--max-rounds", "12", "--threads", "1", "--iodepth", "2")
# HIR (PTS 2.0.2 section 10) as its own proof runs it (tests/refssd/test_hir.py), four bursts a wait
# state: its preconditioning to steady state is what the fill replaces.
HIR_DRIVE = {"capacity": "64M", "pages_per_block": 32, "bg_gc_idle_ms": 50}
HIR_ARGS = ("hir", "--step-seconds", "1", "--max-rounds", "12", "--threads", "1", "--iodepth", "16", "--hir-bursts", "4")


def require_sprandom() -> None:
    from ssdpts.engine import fiobin

    from tests.conftest import unavailable

    fio = fiobin.choose()
    if not fiobin.knows(fio.path, "sprandom"):
        unavailable(f"{fio.path} ({fiobin.version(fio.path)}) has no sprandom: run 'make fio'")


def run(tmp_path_factory, name: str, precondition: str, drive: dict, args: tuple = ARGS,
        test: str = "iops") -> tuple[Run, Drive]:
    with refssd_host.ReferenceSSD(tmp_path_factory.mktemp(f"refssd-{name}"), **drive) as ssd:
        r = Run.read(ssdpts_run(ssd, tmp_path_factory.mktemp(f"runs-{name}"), *args, "--precondition", precondition,
                                timeout=3600))
        return r, Drive.of(ssd, max(s["measurement"]["end_time"] for s in r.of(test, phase=None)))


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_iops_preconditioned_by_sprandom_is_the_pts_result(tmp_path_factory, geometry):
    require_refssd()
    require_sprandom()
    drive = GEOMETRIES[geometry]
    op = refssd_host.params(**drive)["effective_spare_factor"] - 1
    pts = run(tmp_path_factory, f"{geometry}-pts", "pts", drive)
    spr = run(tmp_path_factory, f"{geometry}-sprandom", f"sprandom:{op:.4f}", drive)
    wrong = run(tmp_path_factory, f"{geometry}-sprandom-half-op", f"sprandom:{op / 2:.4f}", drive)
    v = precondition_proof(pts, spr, "iops")
    m = precondition_proof(pts, wrong, "iops")
    pts_truth = truth_after(*pts, "iops")
    record("precondition-iops", geometry=drive, op=op, checks=v.checks, failures=[str(f) for f in v.failures],
           inconclusive=v.inconclusive,
           mutation={"op": op / 2, "failures": [str(f) for f in m.failures], "truth": m.figures["truth"]["sprandom"],
                     "window": m.figures["window"], "rounds": m.figures["rounds"]},
           pts_truth_after_wipc=pts_truth, **v.figures)
    print(v, v.figures, "mutation (half the OP):", m, m.figures["truth"]["sprandom"])
    assert v.ok, v
    # the fill at half the OP leaves the drive short of steady state, by the drive's own truth: part of
    # its physical space unwritten, or (a dynamic SLC cache, whose low-density writes use the free
    # blocks up first) the WA of the half capacity after it short of the window's
    assert m.failed("physical space written by the fill") or m.failed("WA of the next half capacity is the steady WA"), m


def test_hir_preconditioned_by_sprandom_is_the_pts_result(tmp_path_factory):
    """HIR's preconditioning (RND 4 KiB writes in rounds of 30 minutes to steady state, from the
    purge) both ways on fresh drives: the proof above on its part, and its wait states' segments
    (PTS 2.0.2 section 10: each wait state's bursts, each return to baseline) side by side."""
    require_refssd()
    require_sprandom()
    op = refssd_host.params(**HIR_DRIVE)["effective_spare_factor"] - 1
    pts = run(tmp_path_factory, "hir-pts", "pts", HIR_DRIVE, HIR_ARGS, "hir")
    spr = run(tmp_path_factory, "hir-sprandom", f"sprandom:{op:.4f}", HIR_DRIVE, HIR_ARGS, "hir")
    v = precondition_proof(pts, spr, "hir", "precondition")
    segs = {name: {sg["cell"]: sg.get("iops") for sg in r.summary["parts"]["hir-wait-states"]["table"]["segments"]}
            for name, (r, _d) in (("pts", pts), ("sprandom", spr))}
    rel = {k: rel_diff(segs["sprandom"][k], segs["pts"][k]) for k in segs["pts"] if segs["pts"][k]}
    record("precondition-hir", geometry=HIR_DRIVE, op=op, checks=v.checks, failures=[str(f) for f in v.failures],
           inconclusive=v.inconclusive, segments={**segs, "rel": rel}, **v.figures)
    print(v, v.figures, "segments:", segs, rel)
    assert v.ok, v
