"""The run directory's format does not change with the code's layout: a fresh demo-style run (all
four tests, time-compressed, on a loop device) writes manifest.json, summary.json and steps.jsonl
with exactly the fields of a run directory that the ssdpts before the layout change wrote
(tests/fixtures/runs/demo-loop-format1, see tests/fixtures/SOURCES.md), plus the optional fields
added to format 1 since, listed in ADDED.

Fields are compared as key paths: every object's keys, recursively, with the keys that are data
rather than names (part ids, tracking variables, histogram bins, R/W mixes, tool names) folded
into one ``*``, and without descending into values that describe the machine rather than the
format (device field values, host facts, block-layer counters)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from .conftest import ssdpts

pytestmark = pytest.mark.root

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runs" / "demo-loop-format1"
DATA_KEYED = {"parts", "tests", "series", "lat_bins_ns", "lat_percentiles_ns", "values", "collectors", "tools",
              "firmware_slot_revisions", "raw_errors", "extra", "block", "description", "rounds", "files", "manifest",
              "signatures"}

# Fields added to format 1 after the fixture was written, on purpose (issue 10) and documented in
# docs/results-format.md: optional and additive — a format-1 reader ignores them, no field changed
# name, unit or shape — so the format stays 1 (results/formats.py). A new field is listed here, or
# this test fails.
_FINGERPRINT = ("boot_id", "class", "devnum", "diskseq", "eui", "firmware", "format", "kind", "logical_block_size_bytes",
                "loop", "model", "nguid", "partition", "path", "physical_block_size_bytes", "read_only", "real_path",
                "serial", "size_bytes", "uuid", "wwid", "zram")
_LOOP = ("autoclear", "backing_dev", "backing_file", "backing_inode", "direct_io", "offset_bytes", "sizelimit_bytes")
ADDED = {
    "manifest": {".claim", ".claim.kernel_exclusive", ".claim.locks", ".fingerprint",
                 *(f".fingerprint.{k}" for k in _FINGERPRINT), *(f".fingerprint.loop.{k}" for k in _LOOP),
                 ".parts.*.rounds", ".parts.*.rounds.*", ".parts.*.rounds.*.steps", ".parts.*.rounds.*.files",
                 ".parts.*.rounds.*.files.*", ".parts.*.rounds.*.files.*.bytes", ".parts.*.rounds.*.files.*.sha256",
                 ".results_space", ".results_space.directory", ".results_space.first_round_bytes",
                 ".results_space.free_bytes", ".results_space.run_max_bytes_estimate"},
    "summary": set(),
    "steps": {".measurement.cpu_usr_pct", ".measurement.cpu_sys_pct"},  # fio's usr_cpu / sys_cpu (report: CPU per step)
}
# Issue 13 (docs/results-format.md, docs/methodology.md "Step boundaries"): each step's observed
# timeline and boundary, the session that ran it, telemetry matched by time; per part and run the
# boundaries, the resumptions and the window's relation to them; when a purge returned.
_BOUNDARY = ("after", "allowed_overlap_ms", "chained", "gap_ms", "idle_ms", "kind", "late_ms", "over_limit", "overlap_ms",
             "resolution_ms", "why")
_STAT = ("", ".median", ".worst")
_GROUP = ("", ".boundaries", ".over_limit", *(f".{m}{x}" for m in ("idle_ms", "overlap_ms") for x in _STAT))
ADDED["manifest"] |= {".parts.*.purge.ended_unix_s"}
# each part's time to result (docs/results-format.md, docs/methodology.md#time-to-result)
ADDED["manifest"] |= {".parts.*.time_to_result", *(f".parts.*.time_to_result.{k}" for k in (
    "before_window", "before_window.rounds", "before_window.s", "before_window.written_bytes", "preconditioning",
    "preconditioning.method", "preconditioning.s", "preconditioning.written_bytes", "purge", "purge.method", "purge.s",
    "rounds", "rounds.*", "rounds_to_steady_state", "total_s", "window_rounds", "written_bytes"))}
ADDED["manifest"] |= {".fio_server"}  # issue 17: the fio server a run's fio ran on (null: local), docs/hosts.md
ADDED["manifest"] |= {".latency_monitor"}  # issue 32: the OCP latency monitor, one line where the drive has none
# every other way to the storage held (.claim.held) and what a block device held when the run stopped
# (.contents_seal: device/contents.py), docs/results-format.md
_SEAL = ("edges", "edges.bytes", "edges.first", "edges.last", "format", "offsets", "sample_bytes", "sealed_at",
         "sha256_16", "signatures", "size_bytes", "state")
ADDED["manifest"] |= {".claim.held", ".contents_seal", *(f".contents_seal.{k}" for k in _SEAL)}
ADDED["steps"] |= {".session", ".boundary", *(f".boundary.{k}" for k in _BOUNDARY), ".telemetry.after.offset_ms",
                   ".telemetry.before.offset_ms", ".timeline",
                   *(f".timeline.{k}" for k in ("chained", "end_unix_s", "late_ms", "source", "start_unix_s"))}
ADDED["summary"] |= {
    ".boundaries", *(f".boundaries.{k}" for k in ("boundaries", "idle_limit_ms", "over_limit", "worst_idle_ms",
                                                  "worst_overlap_ms")),
    ".parts.*.resumptions", ".parts.*.round_limit", ".parts.*.steady_state.spans_resume",
    ".parts.*.steady_state.window_from_round", ".parts.*.boundaries",
    *(f".parts.*.boundaries.{k}" for k in ("flagged", "idle_limit_ms", "resolution_ms", "purge_to_wipc", "rounds",
                                           "planned_idle")),
    *(f".parts.*.boundaries.purge_to_wipc.{k}" for k in _BOUNDARY),
    *(f".parts.*.boundaries.{g}{x}" for g in ("within_rounds", "between_rounds") for x in _GROUP),
    *(f".parts.*.boundaries.rounds[]{x}" for x in _GROUP[1:]), ".parts.*.boundaries.rounds[].round",
}

# Issue 26 (docs/results-format.md): each round's step lines and summary.json proven by their
# checksums in the manifest.
ADDED["manifest"] |= {".parts.*.rounds.*.steps_sha256", ".summary_file", ".summary_file.bytes", ".summary_file.sha256"}
# Issue 28 (docs/methodology.md "Step boundaries"): each boundary says where its figure comes from
# (the block layer or fio's timeline) and keeps fio's timeline beside the device's; per part and run
# the source, and per round the timeline's idle beside the device's.
_BOUNDARY = (*_BOUNDARY, "source", "recorded_gap_ms")
ADDED["steps"] |= {".boundary.source", ".boundary.recorded_gap_ms"}
ADDED["summary"] |= {".boundaries.source", ".boundaries.device_boundaries",
                     *(f".parts.*.boundaries.{k}" for k in ("source", "device_boundaries", "differs_from_recorded")),
                     ".parts.*.boundaries.purge_to_wipc.source", ".parts.*.boundaries.purge_to_wipc.recorded_gap_ms",
                     *(f".parts.*.boundaries.rounds[].recorded_idle_ms{x}" for x in _STAT)}

# WSAT's drive model (docs/methodology.md#drive-model): fio's per-interval log in each WSAT step, the
# model in summary.json; and which fio ran (docs/methodology.md#fio)
_MODEL_FIGURES = ("fob_iops", "slc_cache_bytes", "gc_onset_capacity_multiple", "effective_spare", "steady_iops",
                  "steady_wa")
ADDED["summary"] |= {".parts.*.model", *(f".parts.*.model.{k}" for k in (
    "method", "cliffs", "segments", "segments[].from", "segments[].kind", "segments[].level", "checks",
    "checks[].name", "checks[].ok", "checks[].detail", "consistent", "resolution", "resolution.points",
    "resolution.point_capacity", "resolution.source", "written_capacity_multiple", "steady_slope_per_capacity",
    *(f"{f}{x}" for f in _MODEL_FIGURES for x in ("", "_uncertainty", "_source", "_reason"))))}

# Written only by some runs: the gate's own times in a timeline (fio runs, not the model of a
# drive), the round stopped when the stop rule held (a run that reached steady state on fio).
OPTIONAL = {
    "manifest": {".parts.*.discarded_after_stop", *(f".parts.*.discarded_after_stop.{k}" for k in ("round", "ran_s", "note"))},
    # a boundary over the limits (a busy host can push a real run's idle over 10 ms)
    "summary": {f".parts.*.boundaries.flagged[].{k}" for k in (*_BOUNDARY, "index", "label", "round", "planned_idle_ms")},
    # ... and a boundary after a planned idle (HIR bursts; the merge of issues 13 and 14)
    "steps": {f".timeline.{k}" for k in ("released_unix_s", "ready_unix_s", "started_unix_s", "end_signal_unix_s",
                                          "fio_job_runtime_ms", "fio_job_start_unix_ms", "last_start_unix_s")}
    | {".boundary.planned_idle_ms"},
}
# ... and a run on fio with the kernel's block tracepoints (issue 28): the device's view of each step,
# and where the run's boundaries came from with what the trace cost; a loop device over a block device
# (issue 26) has its backing device in the fingerprint.
OPTIONAL["steps"] |= {".device", *(f".device.{k}" for k in ("source", "device", "first_issue_unix_s",
                                                            "last_complete_unix_s", "prev_last_complete_unix_s",
                                                            "gap_ms", "ios_seen", "busy_issues"))}
# fio's per-interval log of a WSAT step, and which fio ran: written by a run on fio (not by the model of a drive)
OPTIONAL["steps"] |= {".intervals", ".intervals.period_ms", ".intervals.ios", ".intervals.covered_ios"}
OPTIONAL["manifest"] |= {".fio_binary", ".fio_binary.path", ".fio_binary.source"}
# the drive model's figures a run has only when the curve gives them (a cliff; GC onset and what follows)
OPTIONAL["summary"] |= {*(f".parts.*.model.cliffs[].{k}" for k in ("capacity_multiple", "bytes", "level_before_iops",
                                                                  "level_after_iops", "uncertainty")),
                        *(f".parts.*.model.{k}" for k in ("steady_wa_greedy", "steady_wa_greedy_uncertainty",
                                                          "steady_wa_greedy_assumes", "steady_wa_media", "iops_ratio"))}
OPTIONAL["manifest"] |= {".boundary_source", *(f".boundary_source.{k}" for k in (
    "source", "device", "why", "overrun", "events", "windows", "cpu_s", "max_rss_kb", "max_lag_ms")),
    ".fingerprint.loop.backing_rdev"}
OPTIONAL["summary"] |= {f".parts.*.boundaries.flagged[].{k}" for k in ("source", "recorded_gap_ms")}
OPTIONAL["manifest"] |= {".contents_seal.signatures.*", ".contents_seal.signature_error"}  # what blkid found, if anything
# The manifest's integrity records (docs/results-format.md "Integrity records"): each field's digest,
# written with it; the seal only where a seal key is configured (SSDPTS_SEAL_KEY).
ADDED["manifest"] |= {".integrity", ".integrity.version", ".integrity.manifest", ".integrity.manifest.*"}
OPTIONAL["manifest"] |= {".integrity.seal", *(f".integrity.seal.{k}" for k in ("alg", "key_id", "mac"))}


def key_paths(doc, path: str = "") -> set[str]:
    out: set[str] = set()
    name = path.rsplit(".", 1)[-1]
    if path.startswith(".device.") and path.count(".") >= 3 or path.startswith(".host."):
        return out  # a device field's value, a host fact: machine, not format
    if isinstance(doc, dict):
        for k, v in doc.items():
            sub = f"{path}.*" if name in DATA_KEYED else f"{path}.{k}"
            out.add(sub)
            out |= key_paths(v, sub)
    elif isinstance(doc, list):
        for v in doc:
            out |= key_paths(v, f"{path}[]")
    return out


def shapes(run: Path, steps_text: str) -> dict[str, set[str]]:
    return {
        "manifest": key_paths(json.loads((run / "manifest.json").read_text())),
        "summary": key_paths(json.loads((run / "summary.json").read_text())),
        "steps": set().union(*(key_paths(json.loads(ln)) for ln in steps_text.splitlines() if ln.strip())),
    }


def expected() -> dict[str, set[str]]:
    return shapes(FIXTURE, gzip.decompress((FIXTURE / "steps.jsonl.gz").read_bytes()).decode())


def assert_same_format(run: Path) -> None:
    got, want = shapes(run, (run / "steps.jsonl").read_text()), expected()
    for name in ("manifest", "summary", "steps"):
        want_now = want[name] | ADDED[name]
        new, missing = got[name] - want_now - OPTIONAL[name], want_now - got[name]
        assert not new and not missing, f"{name}: new fields {sorted(new)}, missing fields {sorted(missing)}"


def test_key_paths_fold_data_keys():
    doc = {"parts": {"iops": {"table": {"rows": [{"values": {"0/100": 1.0}}]}}, "lat": {"title": "x"}},
           "device": {"nvme": {"sanicap": {"value": 3, "unit": ""}}}, "host": {"cpu_model": "y"}}
    assert key_paths(doc) == {".parts", ".parts.*", ".parts.*.table", ".parts.*.table.rows", ".parts.*.table.rows[].values",
                              ".parts.*.table.rows[].values.*", ".parts.*.title", ".device", ".device.nvme",
                              ".device.nvme.sanicap", ".host", ".host.cpu_model"}


def test_a_fresh_run_writes_the_fields_of_format_1(make_loop, tmp_path):
    """The runner, the summary and the step records, as ssdpts demo drives them, with the model of
    a drive in place of fio (seconds instead of a minute); the real demo is the slow test below."""
    from ssdpts.cli.demo import DEMO
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.pts.runspec import BASIC_TESTS, RunSpec
    from ssdpts.run.session import start_run

    dev = make_loop("128M")
    spec = RunSpec(tests=BASIC_TESTS,  # the fixture's tests (the extended ones write fields of their own) step_seconds=0.1, max_rounds=5, wsat_hours=DEMO["wsat_hours"],
                   wsat_capacity_multiple=DEMO["wsat_capacity_multiple"], wsat_chunk_steps=10)
    store, summary = start_run(spec, open_target(dev), executor=FakeExecutor(), out_dir=tmp_path / "runs", confirm=dev,
                               argv=["ssdpts", "demo"])
    assert summary["status"] == "complete"
    assert_same_format(store.path)


@pytest.mark.slow
def test_ssdpts_demo_writes_the_fields_of_format_1(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the demo's loop device needs root")
    out = tmp_path / "runs"
    r = ssdpts("demo", "--size", "128M", "--step-seconds", "0.1", "--max-rounds", "5", "--out", str(out), "--quiet",
               env={**os.environ, "SSDPTS_DB": str(tmp_path / "results.db")})
    assert r.returncode == 0, r.stderr
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    assert_same_format(run)
# Rates as the device did them (results/timing.py, docs/results-format.md): per part and run.
_TIMING = ("tolerance_pct", "tolerance_ms", "steps", "checked", "recomputed", "marked", "unchecked", "unchecked_why",
           "worst_differs_pct", "window", "window.steps", "window.recomputed", "window.marked", "window.unchecked",
           "recomputed_steps", "marked_steps")
ADDED["summary"] |= {".parts.*.timing", *(f".parts.*.timing.{k}" for k in _TIMING),
                     ".timing", *(f".timing.{k}" for k in ("steps", "recomputed", "marked", "unchecked", "unchecked_why",
                                                          "worst_differs_pct", "tolerance_pct", "tolerance_ms"))}
_WHERE = ("step", "label", "phase", "round", "index", "key")
OPTIONAL["summary"] |= {f".parts.*.timing.recomputed_steps[].{k}" for k in (*_WHERE, "runtime_s", "device_span_s",
                                                                            "differs_pct")} \
    | {f".parts.*.timing.marked_steps[].{k}" for k in (*_WHERE, "why")} | {".parts.*.timing.unchecked_why[]"}

