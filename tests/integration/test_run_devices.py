"""Real fio on real block devices: all four tests on loop and zram, values recomputed from fio's
raw json+. Time-compressed (steps of a fraction of a second) to fit CI. Signals and resume:
test_signals.py; other faults: test_faults_run.py, test_fio_faults.py."""

from __future__ import annotations

import json
from pathlib import Path
import re
import subprocess
import time

import numpy as np
import pytest

from ..report_numbers import Recompute, device_timed, html_numbers, percentile, raw_from_fio
from .conftest import finished_lines, no_process_matching

pytestmark = pytest.mark.root


def run_dir_of(out: Path) -> Path:
    dirs = [d for d in out.iterdir() if d.is_dir() and d.name != "lost+found"]
    assert len(dirs) == 1, dirs
    return dirs[0]


def steps_of(run: Path) -> list[dict]:
    return [json.loads(ln) for ln in (run / "steps.jsonl").read_text().splitlines() if ln.strip()]


def raw_jobs(run: Path, rel: str) -> list[dict]:
    """fio's json+ as fio wrote it, decoded without ssdpts' parser (fio --client's: client_stats, the
    jobs in step order, then its "All clients" sum)."""
    text = (run / rel).read_text()
    doc = json.JSONDecoder().raw_decode(text[text.index("\n{") + 1 if not text.startswith("{") else 0:])[0]
    return doc["jobs"] if "jobs" in doc else doc["client_stats"]


def recompute_and_compare(run: Path) -> None:
    """Recompute every summary.json value from the raw fio json+ files and compare."""
    summary = json.loads((run / "summary.json").read_text())
    steps = steps_of(run)
    raw_cache: dict[str, list[dict]] = {}

    def job(rec: dict) -> dict:
        if rec["fio_json"] not in raw_cache:
            raw_cache[rec["fio_json"]] = raw_jobs(run, rec["fio_json"])
        return device_timed(rec, raw_cache[rec["fio_json"]][rec["fio_job_index"]])

    for pid, part in summary["parts"].items():
        recs = [s for s in steps if s["test"] == part["test"] and s["part"] == part["part"] and s["phase"] == "round"]
        table = part["table"]
        if part["test"] == "wsat":
            ios = [job(r)["read"]["iops"] + job(r)["write"]["iops"] for r in sorted(recs, key=lambda r: r["index"])]
            assert [s["iops"] for s in table["series"]] == pytest.approx(ios, rel=1e-12)
            written = np.cumsum([job(r)["write"]["io_bytes"] for r in sorted(recs, key=lambda r: r["index"])])
            assert [s["tgbw_gb"] for s in table["series"]] == pytest.approx(list(written / 1e9), rel=1e-12)
            continue
        window = part["steady_state"]["window_rounds"]
        assert window == sorted({r["round"] for r in recs})[-5:]
        win = [r for r in recs if r["round"] in window]

        def cell(key: str) -> list[dict]:
            return [job(r) for r in win if r["key"] == key]

        if part["test"] == "iops":
            for row in table["rows"]:
                for mix, value in row["values"].items():
                    key = f"rand-{row['block_size_bytes']}-{mix.split('/')[0]}"
                    expect = np.mean([j["read"]["iops"] + j["write"]["iops"] for j in cell(key)])
                    assert value == pytest.approx(expect, rel=1e-12), (pid, key)
            # tracking variables: values per round equal the raw IOPS of the tracked cell
            for var in part["steady_state"]["variables"]:
                key = {"RND 4KiB 0/100 IOPS": "rand-4096-0", "RND 64KiB 65/35 IOPS": "rand-65536-65",
                       "RND 1024KiB 100/0 IOPS": "rand-1048576-100"}[var["variable"]]
                raw = [j["read"]["iops"] + j["write"]["iops"] for j in cell(key)]
                assert var["values"] == pytest.approx(raw, rel=1e-12)
                assert var["average"] == pytest.approx(np.mean(raw), rel=1e-12)
                assert var["range"] == pytest.approx(max(raw) - min(raw), rel=1e-9, abs=1e-9)
                slope = np.polyfit(window, raw, 1)[0]
                assert var["excursion"] == pytest.approx(abs(slope) * (window[-1] - window[0]), rel=1e-6, abs=1e-6)
                assert var["reached"] == (var["range"] <= 0.2 * var["average"] * (1 + 1e-12)
                                          and var["excursion"] <= 0.1 * var["average"] * (1 + 1e-12))
        elif part["test"] == "tp":
            bs = table["block_size_bytes"]
            assert table["read_mb_per_s"] == pytest.approx(np.mean([j["read"]["bw_bytes"] / 1e6 for j in cell(f"seq-{bs}-100")]), rel=1e-12)
            assert table["write_mb_per_s"] == pytest.approx(np.mean([j["write"]["bw_bytes"] / 1e6 for j in cell(f"seq-{bs}-0")]), rel=1e-12)
        elif part["test"] == "lat":
            for row in table["rows"]:
                key = f"rand-{row['block_size_bytes']}-{row['mix'].split('/')[0]}"
                jobs = cell(key)
                means = []
                maxes = []
                bins: dict[int, int] = {}
                for j in jobs:
                    n_r, n_w = j["read"]["total_ios"], j["write"]["total_ios"]
                    means.append((j["read"]["lat_ns"]["mean"] * n_r + j["write"]["lat_ns"]["mean"] * n_w) / (n_r + n_w))
                    maxes.append(max(j["read"]["lat_ns"]["max"], j["write"]["lat_ns"]["max"]))
                    for d in ("read", "write"):
                        for k, v in (j[d]["lat_ns"].get("bins") or {}).items():
                            bins[int(k)] = bins.get(int(k), 0) + v
                # docs/methodology.md: the window's max, and its 99.999% from the pooled json+ bins, capped at that max
                assert row["lat_mean_us"] == pytest.approx(np.mean(means) / 1e3, rel=1e-9)
                assert row["lat_max_us"] == pytest.approx(max(maxes) / 1e3, rel=1e-12)
                assert row["lat_p99999_us"] == pytest.approx(min(percentile(bins, 99.999), max(maxes)) / 1e3, rel=1e-12)
                assert row["lat_p99999_us"] <= row["lat_max_us"]
                if row["mix"] in ("100/0", "0/100") and len(jobs) == 1:  # one step: fio's own percentile, capped
                    d = "read" if row["mix"] == "100/0" else "write"
                    fio_p = jobs[0][d]["lat_ns"]["percentile"]["99.999000"]
                    assert row["lat_p99999_us"] == pytest.approx(min(fio_p, maxes[0]) / 1e3, rel=1e-12)


def test_all_four_tests_on_a_loop_device(all_four_runs):
    r, out, _dev = all_four_runs["loop"]  # conftest.py: the run is shared with test_compare_real.py
    assert r.returncode == 0, r.stderr
    run = run_dir_of(out)
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "complete" and man["format"] == 1
    assert man["pts_compliant"] is False and any("time-compressed" in d for d in man["deviations"])
    for pid in ("iops", "tp-1024KiB", "tp-128KiB", "lat", "wsat"):
        assert man["parts"][pid]["purge"]["method"] == "discard"
        assert "not a PTS purge" in man["parts"][pid]["purge"]["disclosure"]
    summary = json.loads((run / "summary.json").read_text())
    assert set(summary["parts"]) == {"iops", "tp-1024KiB", "tp-128KiB", "lat", "wsat"}
    iops = summary["parts"]["iops"]
    assert len(iops["table"]["rows"]) == 8 and all(len(r["values"]) == 7 for r in iops["table"]["rows"])
    assert [v["variable"] for v in iops["steady_state"]["variables"]] == [
        "RND 4KiB 0/100 IOPS", "RND 64KiB 65/35 IOPS", "RND 1024KiB 100/0 IOPS"]
    for v in iops["steady_state"]["variables"]:
        assert {"rounds", "values", "average", "range", "slope", "excursion", "reached"} <= set(v)
    assert len(summary["parts"]["lat"]["table"]["rows"]) == 9
    assert summary["parts"]["wsat"]["table"]["series"]
    # every round's job file and json+ stay in the run directory
    assert (run / "fio" / "iops" / "round-001.fio").exists() and (run / "fio" / "iops" / "wipc.json").exists()
    recompute_and_compare(run)
    check_report_numbers(run)


def check_report_numbers(run: Path) -> None:
    """Every number of the report's tables, and every cell's per-round values, recomputed from
    fio's raw json+ (tests/report_numbers.py), and the fio job section of a cell is the job file's."""
    from ssdpts.report import render

    (html,) = render(run, formats=("html",))
    doc = html.read_text(encoding="utf-8")
    rc = Recompute(run, raw=raw_from_fio(run))
    checked = 0
    for table, value, ref, css in html_numbers(doc):
        if ref:
            assert value == pytest.approx(rc.value(ref), rel=1e-9, abs=1e-9), (table, ref)
            checked += 1
    assert checked > 350  # the 56 IOPS cells and their CPU, LAT 9 × (4 tables + QoS), TP, WSAT, datasheet
    m = re.search(r'<script type="application/json" id="ssdpts-data">(.*?)</script>', doc, re.S)
    details = json.loads(m.group(1))["details"]
    steps = {(s["test"], s["part"], s["round"], s["key"]): s for s in rc.steps if s["phase"] == "round"}
    for did, d in details.items():
        pid, key = re.fullmatch(r"d-(.+?)-((?:rand|seq)-\d+-\d+)", did).groups()
        part = rc.part(pid)
        stat = {"IOPS": "iops", "µs": "lat_mean_us"}.get(d["unit"]) or (
            "read_mb_per_s" if key.endswith("-100") else "write_mb_per_s")
        for row in d["rows"]:
            s = steps[(part["test"], part["part"], row[0], key)]
            assert row[1] == pytest.approx(rc.step_value(s, stat), rel=1e-9), (did, row[0])
            assert row[9] == s["fio_json"] and row[10] == s["fio_job_index"]
        if d["job"]:
            assert d["job"] in (run / d["jobfile"]).read_text()


def test_zram_device_runs_all_four_tests(all_four_runs):
    r, out, _dev = all_four_runs["zram"]
    assert r.returncode == 0, r.stderr
    run = run_dir_of(out)
    recompute_and_compare(run)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["parts"]["iops"]["table"]["rows"][6]["values"]["100/0"] > 0


def start_background_run(dev: str, out: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    """Start 'ssdpts run iops' on dev (0.05 s steps, at most 6 rounds: a round of ~3 s) and wait for its
    run directory."""
    proc = subprocess.Popen(["ssdpts", "run", "iops", "--target", dev, "--step-seconds", "0.05", "--max-rounds", "6",
                             "--destroy-data-on", dev, "--out", str(out), "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while not (out.exists() and any(out.iterdir())) and time.monotonic() - t0 < 60:
        if proc.poll() is not None:
            pytest.fail(f"ssdpts ended early ({proc.returncode}): {proc.stderr.read()}")
        time.sleep(0.02)
    return proc, run_dir_of(out)


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 300) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if len(finished_lines(path)) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"ssdpts ended early ({proc.returncode}): {proc.stderr.read()}")
        time.sleep(0.1)
    pytest.fail(f"{path} did not reach {n} lines")


def _fio_children_gone(run: Path, timeout: float = 10) -> bool:
    """No fio process of this run is left (other fio processes on the machine are not ours)."""
    return no_process_matching(f"fio .*{run}/fio/", timeout)


def _assert_unique_complete(run: Path) -> list[dict]:
    steps = steps_of(run)
    keys = [(s["test"], s["part"], s["phase"], s["round"], s["index"]) for s in steps]
    assert len(keys) == len(set(keys)), "a step is duplicated"
    rounds = {}
    for s in steps:
        if s["phase"] == "round":
            rounds.setdefault(s["round"], []).append(s["index"])
    for rno, idx in rounds.items():
        assert sorted(idx) == list(range(1, 57)), f"round {rno} incomplete"
    assert sorted(rounds) == list(range(1, len(rounds) + 1))
    return steps
