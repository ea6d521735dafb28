"""ssdpts plan --json on a loop device and on a file target: its numbers are the plan's table text's
numbers and the run's own plan (pts/plan.build_parts on the target as the run opens it)."""

from __future__ import annotations

import json
import re

from ssdpts.cli.plan import fmt_duration
from ssdpts.device.target import open_target
from ssdpts.pts.plan import active_range_bytes, build_parts, part_seconds
from ssdpts.pts.runspec import RunSpec, expand_tests
from ssdpts.pts.units import fmt_capacity

from .conftest import ssdpts


def _both(*argv: str):
    text = ssdpts("plan", *argv)
    js = ssdpts("plan", *argv, "--json")
    assert js.returncode == text.returncode, (text.stderr, js.stderr)
    return text, json.loads(js.stdout)


def _check(text: str, doc: dict, spec: RunSpec, target_path: str) -> None:
    text = " ".join(text.split())  # the terminal's line breaks
    target = open_target(target_path) if doc["target_kind"] == "block" else None
    size, lbs = doc["target_size_bytes"], (target.logical_block_size_bytes if target else 512)
    parts = build_parts(spec, size, lbs)  # as session.start_run plans the run
    assert [p["title"] for p in doc["parts"]] == [p.title for p in parts]
    written = 0
    for pj, part in zip(doc["parts"], parts):
        lo, hi = part_seconds(part, spec)
        assert (pj["duration_min_s"], pj["duration_max_s"]) == (lo, hi)
        assert pj["round_steps"] == len(part.round_steps(1))
        assert sum(r["count"] for r in pj["steps"]) == (pj["steps_total"] or pj["round_steps"])
        if part.stop_rule not in ("wsat", "fixed"):
            assert f"round: {pj['round_steps']} steps, {fmt_duration(pj['round_s'])} per round" in text
            assert f"duration: {fmt_duration(lo)} (5 rounds) to {fmt_duration(hi)} ({part.max_rounds} rounds)" in text
        written += (part.wipc.io_bytes if part.wipc else 0) + (part.wsat_max_bytes if part.stop_rule == "wsat" else 0)
        if part.wipc is not None:
            assert pj["wipc_bytes"] == part.wipc.io_bytes
            assert f"{fmt_capacity(part.wipc.io_bytes)} (" in text
    assert doc["written_bytes_max"] == written
    assert doc["active_range_bytes"] == active_range_bytes(size, spec.ar_pct)
    total = re.search(r"WIPC and WSAT write up to ([0-9.,]+ [kMGT]?B).*estimated (\S+) to (\S+) of stimulus", text)
    assert total.group(1) == fmt_capacity(doc["written_bytes_max"])
    assert total.group(2) == fmt_duration(doc["duration_min_s"])
    assert total.group(3) == fmt_duration(doc["duration_max_s"])
    assert doc["duration_max_s"] == sum(part_seconds(p, spec)[1] for p in parts)
    for test, span in doc["tests"].items():
        assert span["duration_max_s"] == sum(part_seconds(p, spec)[1] for p in parts if p.test == test)
    assert f"({doc['target_kind']}, {fmt_capacity(size)}," in text
    assert ("safety " if doc["usable"] else "refused ") + " ".join(doc["verdict"].split()) in text


def test_plan_json_on_a_loop_device(make_loop):
    dev = make_loop(size="1G")
    text, doc = _both("all", "--target", dev, "--destroy-data-on", dev)
    assert text.returncode == 0 and doc["usable"] is True and doc["target_kind"] == "block"
    assert doc["target_path"] == dev and doc["purge"] in doc["purges_supported"]
    assert doc["deviations"] and not doc["pts_compliant"]  # discard is a fallback purge
    spec = RunSpec(tests=expand_tests(["all"]), ioengine=doc["ioengine"])
    _check(text.stdout, doc, spec, dev)


def test_plan_json_on_a_file_target_with_job_files(tmp_path):
    f = str(tmp_path / "t.bin")
    text, doc = _both("iops", "lat", "--target", f, "--size", "256M", "--step-seconds", "2", "--fio")
    assert text.returncode == 0 and doc["target_kind"] == "file" and doc["target_size_bytes"] == 256 * 2**20
    spec = RunSpec(tests=expand_tests(["iops", "lat"]), step_seconds=2, ioengine=doc["ioengine"])
    _check(text.stdout, doc, spec, f)
    for part in doc["parts"]:
        assert part["fio_job_file"] and part["fio_job_file"].splitlines()[0] in text.stdout


def test_plan_json_refusal_keeps_the_exit_status(make_loop):
    dev = make_loop(size="256M", read_only=True)
    text, doc = _both("iops", "--target", dev)
    assert text.returncode == 2 and doc["usable"] is False
    assert doc["verdict"] in " ".join(text.stdout.split())
