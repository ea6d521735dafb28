"""The machinery of the reported-figure proofs (tests/refssd/reported.py), without a drive: a
figure within its tolerance passes with its margin recorded, one beyond it fails, one whose steps
summary.json's timing marks is inconclusive (never passed), and the 3% mutations of a figure are
caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import reported
from .proofs import Run, Verdict


def _run(marked: list[dict] | None = None) -> Run:
    table = {"rows": [{"block_size_bytes": 4096, "values": {"0/100": 1000.0}}]}
    part = {"table": table, "steady_state": {"window_rounds": [1]}}
    if marked is not None:
        part["timing"] = {"window": {"steps": 1, "marked": len(marked)}, "marked_steps": marked}
    step = {"test": "iops", "part": "", "phase": "round", "round": 1, "index": 3}
    return Run(Path("."), [step], {"parts": {"iops": part}}, {})


def _proof(truth: float):
    def proof(run: Run) -> Verdict:
        v = Verdict("toy")
        reported.judge(v, run, [reported.Cell("IOPS 4KiB 0/100", "iops", ("rows", 0, "values", "0/100"),
                                              run.summary["parts"]["iops"]["table"]["rows"][0]["values"]["0/100"],
                                              truth, 0.015, 0.015, run.steps, "IOPS")])
        return v
    return proof


def test_a_figure_within_its_tolerance_passes_with_its_margin():
    v = _proof(1005.0)(_run())
    assert v.outcome == "passed"
    m = v.margins[0]
    assert m["difference"] == pytest.approx(1000 / 1005 - 1)
    assert m["margin"] == pytest.approx(0.015 - abs(1000 / 1005 - 1))
    reported.assert_proved(v)


def test_a_figure_beyond_it_fails():
    v = _proof(1040.0)(_run())
    assert v.outcome == "failed" and v.failed("IOPS 4KiB 0/100")
    with pytest.raises(AssertionError):
        reported.assert_proved(v)


def test_a_figure_from_marked_steps_is_inconclusive_not_passed():
    run = _run([{"step": "round 1 step 3", "why": "the boundary took 40 ms"}])
    v = _proof(1040.0)(run)  # beyond the tolerance, but its step is marked: not judged
    assert v.outcome == "inconclusive" and not v.failures
    assert "round 1 step 3" in v.inconclusive[0] and "40 ms" in v.inconclusive[0]
    assert v.margins[0]["outcome"] == "inconclusive" and "margin" not in v.margins[0]
    reported.assert_proved(v)  # an inconclusive proof is recorded, not a failure ...
    assert "inconclusive" in str(v)  # ... and never reads as passed


def test_the_3_percent_mutations_are_caught_both_ways():
    proof = _proof(1005.0)
    run = _run()
    m = reported.mutation_check(proof, run, proof(run))
    assert m["judged"] == 1 and m["caught"] == {"1.03": 1, "0.97": 1} and not m["missed"]
    assert run.summary["parts"]["iops"]["table"]["rows"][0]["values"]["0/100"] == 1000.0  # a copy was scaled
