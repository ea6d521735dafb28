"""``ssdpts plan`` on the 4096-byte-LBA namespace states every deviation the run records.

The reference is the manifest of a real run with the same options on the same namespace (the
purge scenario of test_purge, stopped in fio): each of its deviations must appear in the plan,
which touches nothing.
"""

from __future__ import annotations

import pytest

from .test_purge import stopped_purge


@pytest.mark.slow  # D8: the 0.5 KiB block sizes left out were recorded by the run, not stated by plan
def test_plan_states_every_deviation_the_run_records(lab):
    man = stopped_purge(lab, "nvme4k")["outcome"]["manifest"]
    deviations = man["deviations"]
    assert any("4096-byte logical block" in d for d in deviations), deviations  # the lab's premise
    res = lab.ssdpts("plan", "lat", "--target", lab.dev["nvme4k"], "--step-seconds", "1")
    assert res.rc == 0, res.stderr
    text = " ".join(res.stdout.split())
    missing = [d for d in deviations if " ".join(d.split()) not in text]
    assert not missing, f"plan does not state {missing}:\n{res.stdout}"


def test_plan_of_the_4k_namespace_leaves_out_what_cannot_be_issued(lab):
    res = lab.ssdpts("plan", "lat", "--target", lab.dev["nvme4k"], "--step-seconds", "1")
    assert res.rc == 0, res.stderr
    steps = res.stdout[res.stdout.index("\nLatency"):]  # the parts, after the deviations that name 0.5KiB
    assert "0.5KiB" not in steps and "4KiB" in steps, res.stdout
    assert "nvme-format" in res.stdout, res.stdout
