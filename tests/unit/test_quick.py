"""ssdpts quick on the FakeExecutor: the seed-004 rule (median of N odd runs, two more runs while the
RSE is above 5%, unreliable after 7) with scripted values whose median and RSE are computed by hand
here, the run directory, the results library, compare with seed 004's delta, and bad input."""

from __future__ import annotations

from collections import defaultdict
import json
import time
import math
from pathlib import Path
import shutil
import statistics

import pytest

from ssdpts.workloads import quick as Q
from ssdpts.cli import main as M
from ssdpts.device.target import open_target
from ssdpts.engine.fake import FakeExecutor
from ssdpts.errors import UserError

# per figure: the IOPS of its runs in order (the last value repeats); others run at a flat 50,000
SCRIPT = {
    "seq1m-read-t1q64": [3000.0],  # identical runs: RSE 0, N = 3
    "rnd4k-read-t4q64": [100e3, 120e3, 100e3, 100e3, 100e3],  # RSE 6.2% at 3, 3.8% at 5: reliable at N = 5
    "rnd4k-write-t4q64": [100e3, 200e3],  # alternating: RSE 14% at 7: unreliable
}


def scripted(cold: bool = False):
    """``cold``: each figure's first run is its cold run, at 1 IOPS: a value no statistic may contain."""
    count: dict[str, int] = defaultdict(int)

    def model(step):
        key = step.part
        i = count[key] - cold
        count[key] += 1
        if i < 0:
            return 1.0
        if key == "rnd4k-write-t4q64":
            return SCRIPT[key][i % 2]
        seq = SCRIPT.get(key, [50e3])
        return seq[min(i, len(seq) - 1)]
    return model


def page_cells(doc) -> dict[str, list[tuple[str, str]]]:
    """The figures' rows of a one-page document (report/doc.py Page) by label: each cell's (text, css)."""
    return {r[0].text: [(c.text, c.css) for c in r] for r in doc.table.rows}


def hand_rse(values):
    return statistics.stdev(values) / (statistics.mean(values) * math.sqrt(len(values)))


def quick_run(tmp_path: Path, name: str = "a", **kw):
    spec = Q.QuickSpec(runs=kw.pop("runs", 3), seconds=1.0, **kw)
    target = open_target(str(tmp_path / f"{name}.img"), size_bytes=64 * 2**20)
    return Q.start_quick(spec, target, executor=FakeExecutor(model=scripted(spec.cold_run)), out_dir=tmp_path / "runs",
                         confirm=None, argv=["ssdpts", "quick"])


def test_rse_rule_adds_runs_up_to_seven_and_marks_unreliable(tmp_path):
    store, doc = quick_run(tmp_path, cold_run=True)
    figs = {f["key"]: f for f in doc["figures"]}
    assert [f["key"] for f in doc["figures"]] == [f.key for f in Q.SEED_FIGURES]

    stable = figs["seq1m-read-t1q64"]
    assert stable["n"] == 3 and stable["rse"] == pytest.approx(0, abs=1e-12) and stable["reliable"]
    assert stable["median"] == pytest.approx(3000 * 2**20 / 1e6)  # MB/s = 10^6 bytes/s of 1MiB IOs

    settles = figs["rnd4k-read-t4q64"]
    assert settles["n"] == 5 and settles["reliable"]
    assert settles["values"] == pytest.approx([100, 120, 100, 100, 100])  # kIOPS
    assert hand_rse([100, 120, 100]) > 0.05  # why the two runs were added
    assert settles["rse"] == pytest.approx(hand_rse([100, 120, 100, 100, 100])) and settles["rse"] < 0.05
    assert settles["median"] == 100

    noisy = figs["rnd4k-write-t4q64"]
    assert noisy["n"] == 7 and not noisy["reliable"]
    values = [100, 200, 100, 200, 100, 200, 100]
    assert noisy["values"] == pytest.approx(values)
    assert noisy["rse"] == pytest.approx(hand_rse(values)) and noisy["rse"] > 0.05
    assert noisy["median"] == statistics.median(values) == 100
    assert noisy["files"] == [f"fio/rnd4k-write-t4q64-r{i:02d}.json" for i in range(1, 8)]
    assert noisy["cold_files"] == ["fio/rnd4k-write-t4q64-cold.json"]

    man = json.loads((store.path / "manifest.json").read_text())
    assert man["kind"] == "quick" and man["status"] == "complete"
    assert "one unmeasured cold run before each figure" in man["deviations"]
    assert json.loads((store.path / "quick.json").read_text())["figures"] == doc["figures"]
    for f in doc["figures"]:
        for rel in f["files"] + f["cold_files"]:
            assert (store.path / rel).is_file()


def test_runs_needed_keeps_n_odd():
    assert Q.runs_needed([1.0], 3) == 3
    assert Q.runs_needed([1.0, 1.0, 1.0], 3) == 3
    assert Q.runs_needed([1.0, 2.0, 1.0], 3) == 5
    assert Q.runs_needed([1.0, 2.0, 1.0, 2.0, 1.0], 3) == 7
    assert Q.runs_needed([1.0, 2.0] * 3 + [1.0], 3) == 7  # 7 reached: no more
    assert Q.runs_needed([1.0, 2.0] * 4 + [1.0], 9) == 9  # N >= 7 planned: nothing added


def test_precondition_and_cdm_profiles(tmp_path):
    store, doc = quick_run(tmp_path, precondition="wipc", cdm=("default", "nvme"))
    assert doc["precondition"]["io_bytes"] == 2 * 64 * 2**20  # PTS WIPC: twice the capacity
    keys = [f["key"] for f in doc["figures"]]
    assert len(keys) == 10 + 12 + 8 and len(set(keys)) == len(keys)
    nvme = {f["key"]: f["workload"] for f in doc["figures"] if f["key"].startswith("cdm-nvme")}
    assert nvme["cdm-nvme-rnd4k-read-t16q32"] == {"pattern": "rand", "read_pct": 100, "block_size_bytes": 4096,
                                                  "threads": 16, "iodepth": 32}
    assert "cdm-default-seq1m-70-t1q8" in keys  # Default [+ Mix]: R70/W30
    man = json.loads((store.path / "manifest.json").read_text())
    assert any("PTS WIPC" in d for d in man["deviations"])


def test_library_and_compare_with_the_performance_delta(tmp_path, capsys):
    a, _ = quick_run(tmp_path, "a")
    b, _ = quick_run(tmp_path, "b")
    # drive B: every figure 25% slower than A's, so A's delta over B is 1/0.75 - 1 = +33.3%
    qb = json.loads((b.path / "quick.json").read_text())
    for f in qb["figures"]:
        f["median"] *= 0.75
    (b.path / "quick.json").write_text(json.dumps(qb))
    cmp = Q.compare([a.path, b.path], baseline=b.path)
    for row in cmp["rows"]:
        assert row["deltas"][0] == 0 and row["deltas"][1] == pytest.approx(1 / 0.75 - 1)
    assert M.main(["compare", str(a.path), "--baseline", str(b.path), "--format", "json", "--out",
                   str(tmp_path / "cmp.json")]) == 0
    out = json.loads((tmp_path / "cmp.json").read_text())
    assert out["rows"][0]["deltas"][1] == pytest.approx(1 / 0.75 - 1)
    assert "+33.3%" in capsys.readouterr().out

    db = str(tmp_path / "r.db")
    assert M.main(["db", "add", str(a.path), "--db", db]) == 0
    from ssdpts.library.db import ResultsDB

    with ResultsDB(db) as con:
        rows = con.measurements()
    med = {r["part"]: r["value"] for r in rows if r["metric"] in ("mb_per_s", "kiops")}
    assert med["rnd4k-read-t4q64"] == 100 and len(med) == 10
    assert {r["unit"] for r in rows} == {"MB/s", "kIOPS", "fraction"}
    # the library lists it as what it is, and filters by it
    capsys.readouterr()
    assert M.main(["db", "list", "--db", db, "--test", "quick", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["tests"] == "quick" and listed["run_name"] == a.path.name
    assert M.main(["db", "list", "--db", db, "--test", "iops"]) == 0
    assert "no runs match" in capsys.readouterr().out
    # its headline in the list: its first figure's median, as the site's index shows it first
    first = Q.load(a.path).figures[0]
    assert M.main(["db", "list", "--db", db, "--width", "250"]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert f"QUICK: {first.label}" in row and f"{first.median:,.1f} {first.unit}" in row, row


def test_compare_refuses_other_settings_and_pts_runs(tmp_path, capsys):
    a, _ = quick_run(tmp_path, "a")
    c, _ = quick_run(tmp_path, "c", runs=5)
    shutil.copytree(a.path, tmp_path / "other")
    doc = json.loads((tmp_path / "other" / "quick.json").read_text())
    doc["spec"]["seconds"] = 60
    (tmp_path / "other" / "quick.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="seconds"):
        Q.compare([a.path, tmp_path / "other"])
    Q.compare([a.path, c.path])  # N is not a setting: each median stands for its runs
    fake_pts = tmp_path / "pts"
    fake_pts.mkdir()
    (fake_pts / "manifest.json").write_text(json.dumps({"format": 1, "status": "complete"}))
    assert M.main(["compare", str(a.path), str(fake_pts), "--out", str(tmp_path / "x")]) == 2
    assert "compare with quick runs only" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("argv, word", [
    (["--runs", "4"], "odd number"),
    (["--runs", "1"], "odd number"),
    (["--runs", "101"], "3 to 99"),
    (["--seconds", "0"], "--seconds"),
    (["--seconds", "0.0004"], "0.001 to 3600"),  # fio's runtime=0ms would mean no limit at all
    (["--precondition", "full"], "invalid choice"),
    (["--cdm", "peak"], "invalid choice"),
    (["--out", " "], "--out is empty"),
])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, capsys, argv, word):
    target = tmp_path / "t.img"
    out = tmp_path / "runs"
    rc = M.main(["quick", str(target), "--size", "64M", "--out", str(out), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and word in err and len(err.strip().splitlines()) == 1
    assert not target.exists() and not out.exists()


def test_verify_checks_every_raw_file(tmp_path, capsys):
    store, doc = quick_run(tmp_path, precondition="seq-fill")
    assert M.main(["verify", str(store.path)]) == 0
    n_files = 2 * (1 + sum(f["n"] for f in doc["figures"]))  # job file and json+ of every run
    assert f"{n_files} raw files" in capsys.readouterr().out
    raw = store.path / doc["figures"][2]["files"][1]
    raw.write_text(raw.read_text() + " ")
    assert M.main(["verify", str(store.path)]) == 1
    assert raw.name in capsys.readouterr().out


def test_interruption_keeps_every_run_and_names_the_run_directory(tmp_path):
    """Ctrl-C in the 5th run: the four measured runs stay in quick.json, the run is marked interrupted,
    report.html shows them, and the one line the user reads names the run directory."""
    from ssdpts.errors import Interrupted

    calls = {"n": 0}
    model = scripted()

    def stopping(step):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return model(step)

    from ssdpts.kinds import KINDS

    spec = Q.QuickSpec(runs=3, seconds=1.0)
    target = open_target(str(tmp_path / "a.img"), size_bytes=64 * 2**20)
    with pytest.raises(Interrupted) as info:
        Q.start_quick(spec, target, executor=FakeExecutor(model=stopping), out_dir=tmp_path / "runs", confirm=None,
                      argv=["ssdpts", "quick"], render_partial=KINDS["quick"].render_partial)  # as 'ssdpts quick'
    run_dir = next((tmp_path / "runs").iterdir())
    assert str(run_dir) in str(info.value)
    run = Q.load(run_dir)
    assert run.manifest.status == "interrupted"
    # where it stopped, as 'ssdpts status' shows a running one: figure 2 of 10, its run 2 of 3, and the
    # time left at 1 s a run: 8 figures and 2 runs at 3 runs a figure, up to 7 runs a figure
    at = Q.progress(run_dir)
    assert (at["parts_done"], at["parts_total"], at["step"], at["steps"]) == (1, 10, 2, 3), at
    assert at["left_s"] == (9 * 3 - 1, 9 * 7 - 1)
    assert Q.QuickSpec.from_dict(spec.to_dict()) == spec  # the spec quick.json records reads back as it ran
    assert [f.n for f in run.figures] == [3, 1]
    # the interrupted figure was never judged: neither reliable nor unreliable
    assert run.figures[0].reliable is not None and run.figures[1].reliable is None
    assert run.figures[0].values == (3000 * 2**20 / 1e6,) * 3  # 3000 IOPS of 1 MiB, in MB/s
    assert (run_dir / "report.html").exists()


def test_the_run_directory_is_unlocked_at_every_end(tmp_path):
    """start_quick hands back a run directory the next command can lock (report, verify, the results
    library), after a complete run, an interruption and a failed fio alike; the returned store and
    the exception (with its frames) are kept alive here, as a caller keeps them."""
    from ssdpts.errors import Interrupted, RunFailed
    from ssdpts.store import RunStore

    def can_lock(run_dir: Path) -> None:
        other = RunStore.open(run_dir)
        other.lock()  # UserError "in use by another ssdpts process" while the run's lock is held
        other.unlock()

    store, _doc = quick_run(tmp_path, only=("seq1m-read-t1q64",))
    can_lock(store.path)
    for n, (fault, stop) in enumerate(((dict(interrupt_on_batch=2), Interrupted), (dict(fail_on_batch=2), RunFailed))):
        spec = Q.QuickSpec(runs=3, seconds=1.0, only=("seq1m-read-t1q64",))
        target = open_target(str(tmp_path / f"s{n}.img"), size_bytes=64 * 2**20)
        out = tmp_path / f"stopped{n}"
        with pytest.raises(stop) as info:
            Q.start_quick(spec, target, executor=FakeExecutor(**fault), out_dir=out, confirm=None, argv=["ssdpts"])
        (run_dir,) = list(out.iterdir())
        assert str(run_dir) in str(info.value)
        can_lock(run_dir)


def test_a_figure_not_measured_is_na_not_unreliable(tmp_path):
    """Compared with a run of fewer figures (--only), the missing ones read n/a, without the star that
    says "unreliable" (which would claim a measurement that was never made)."""
    from ssdpts.report.quick_html import build_comparison

    full, _ = quick_run(tmp_path, "a")
    some, _ = quick_run(tmp_path, "b", only=("seq1m-read-t1q64",))
    cmp = Q.compare([full.path, some.path], baseline=full.path)
    row = next(r for r in cmp["rows"] if r["key"] == "seq1m-write-t1q64")
    assert row["values"][1] is None and row["reliable"][1] is None
    noisy = next(r for r in cmp["rows"] if r["key"] == "rnd4k-write-t4q64")
    assert noisy["reliable"] == [False, None]
    text = Q.comparison_text(cmp)
    assert "n/a*" not in text and "n/a" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("RND 4KiB write T4 QD64"))
    assert "*" in line.split("Δ")[0]  # A's own unreliable figure keeps its star
    doc = build_comparison(cmp)
    by_label = page_cells(doc)
    assert by_label["SEQ 1MiB write T1 QD64"][3] == ("n/a", "")  # A's column: not measured, not starred
    assert by_label["RND 4KiB write T4 QD64"][2][0].endswith(" *")  # B's unreliable figure is starred


def test_resume_of_a_quick_run_says_what_it_is(tmp_path, capsys):
    """'ssdpts resume' on an interrupted quick run: refused in one line saying it is a quick run (not
    "lacks 'run_spec'"), exit 2, nothing run."""
    from ssdpts.store import RunStore

    store, _ = quick_run(tmp_path)
    store.unlock()  # this process ran it: its lock would refuse the resume first
    RunStore.open(store.path).update_manifest(status="interrupted")
    before = sorted(p.name for p in (store.path / "fio").iterdir())
    assert M.main(["resume", str(store.path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is one of the quick runs" in err and "start a new 'ssdpts quick'" in err
    assert sorted(p.name for p in (store.path / "fio").iterdir()) == before
    # every place that tells what to do with it says the same: the library and status
    assert M.main(["db", "add", str(store.path), "--db", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err
    assert "a quick table is not resumed" in err and "ssdpts resume" not in err
    from ssdpts.status import read_status

    RunStore.open(store.path).update_manifest(status="running")  # its process gone: status says interrupted
    st = read_status(store.path, {})
    assert st.state == "interrupted" and "a quick table is not resumed" in st.note and "ssdpts resume" not in st.note


def test_a_figure_stopped_while_runs_were_added_is_incomplete_not_unreliable(tmp_path):
    """rnd4k-read-t4q64's RSE is 6.2% at 3 runs, so two runs are added; Ctrl-C in the first of them:
    the report says "incomplete" (seed 004 judges a set unreliable only at 7 runs), not UNRELIABLE."""
    from ssdpts.errors import Interrupted
    from ssdpts.report.quick_html import build

    calls = {"n": 0}
    model = scripted()

    def stopping(step):
        calls["n"] += 1
        if calls["n"] == 10:  # 3 + 3 runs of the first two figures, then rnd4k-read-t4q64's r01-r03, r04
            raise KeyboardInterrupt
        return model(step)

    target = open_target(str(tmp_path / "a.img"), size_bytes=64 * 2**20)
    with pytest.raises(Interrupted):
        Q.start_quick(Q.QuickSpec(runs=3, seconds=1.0), target, executor=FakeExecutor(model=stopping),
                      out_dir=tmp_path / "runs", confirm=None, argv=["ssdpts", "quick"])
    run_dir = next((tmp_path / "runs").iterdir())
    fig = Q.load(run_dir).figures[2]
    assert fig.key == "rnd4k-read-t4q64" and fig.n == 3 and fig.rse > 0.05
    status = {k: v[-1][0] for k, v in page_cells(build(run_dir)).items()}
    assert status["RND 4KiB read T4 QD64"] == "incomplete"
    assert status["SEQ 1MiB read T1 QD64"] == "ok"
    # not judged is a warning, not the unreliable figure's style (reliable null in quick.json)
    cells = page_cells(build(run_dir))
    median, rse, status_cell = (cells["RND 4KiB read T4 QD64"][i] for i in (2, 3, -1))
    assert fig.reliable is None and (median[1], rse[1], status_cell[1]) == ("warn", "warn", "warn")


def test_a_whole_figure_that_moved_no_data_is_unreliable_not_incomplete(tmp_path):
    """Every run done, none moved data (mean 0, no RSE): judged, not reliable; the report says
    UNRELIABLE (it said "incomplete", from the number of runs alone)."""
    from ssdpts.report.quick_html import build

    spec = Q.QuickSpec(runs=3, seconds=1.0, only=("seq1m-read-t1q64", "rnd4k-read-t1q1"))
    target = open_target(str(tmp_path / "a.img"), size_bytes=64 * 2**20)
    store, doc = Q.start_quick(spec, target, executor=FakeExecutor(model=lambda s: 0.0 if s.part == "seq1m-read-t1q64"
                                                                   else 50e3),
                               out_dir=tmp_path / "runs", confirm=None, argv=["ssdpts", "quick"])
    zero = doc["figures"][0]
    assert zero["n"] == 3 and zero["values"] == [0.0] * 3 and zero["rse"] is None and zero["reliable"] is False
    cells = page_cells(build(store.path))
    assert cells["SEQ 1MiB read T1 QD64"][-1] == ("UNRELIABLE", "bad")
    assert cells["RND 4KiB read T1 QD1"][-1] == ("ok", "")


def test_every_run_of_a_figure_has_its_own_random_sequence(tmp_path):
    """Repeated runs are samples: each warm run and the cold run get their own fio randseed (the same
    seed for all would replay one LBA sequence N times, and the cold run would pre-read the warm runs'
    exact offsets)."""
    from ssdpts.engine.jobfile import _step_seed

    seeds: dict[str, list[int]] = defaultdict(list)
    model = scripted(cold=True)

    def recording(step):
        seeds[step.part].append(_step_seed(1, step))
        return model(step)

    spec = Q.QuickSpec(runs=3, seconds=1.0, cold_run=True, only=("rnd4k-read-t1q1", "rnd4k-write-t4q64"))
    target = open_target(str(tmp_path / "a.img"), size_bytes=64 * 2**20)
    Q.start_quick(spec, target, executor=FakeExecutor(model=recording), out_dir=tmp_path / "runs", confirm=None,
                  argv=["ssdpts", "quick"])
    assert len(seeds["rnd4k-read-t1q1"]) == 4 and len(seeds["rnd4k-write-t4q64"]) == 8  # cold + 3, cold + 7
    for key, s in seeds.items():
        assert len(set(s)) == len(s), (key, s)


def test_a_figure_of_zero_is_not_reliable():
    """Three runs that moved no data have no RSE (mean 0): the figure is not 'ok'."""
    fig = Q.SEED_FIGURES[0]
    r = Q.figure_result(fig, [0.0, 0.0, 0.0], ["a", "b", "c"], [])
    assert r["rse"] is None and r["reliable"] is False
    assert Q.figure_result(fig, [10.0, 10.0, 10.0], ["a", "b", "c"], [])["reliable"] is True


def test_a_figure_only_a_measured_is_a_row_too(tmp_path):
    """Baseline B measured one figure (--only), A all of them: A's other figures are rows with B's
    value n/a and no delta, not left out of the comparison."""
    full, _ = quick_run(tmp_path, "a")
    some, _ = quick_run(tmp_path, "b", only=("seq1m-read-t1q64",))
    cmp = Q.compare([full.path, some.path], baseline=some.path)
    keys = [r["key"] for r in cmp["rows"]]
    assert keys[0] == "seq1m-read-t1q64" and len(keys) == len(Q.load(full.path).figures)
    row = next(r for r in cmp["rows"] if r["key"] == "seq1m-write-t1q64")
    assert row["values"][0] is None and row["values"][1] is not None and row["deltas"] == [None, None]
    assert row["reliable"][0] is None
    text = Q.comparison_text(cmp)
    assert "SEQ 1MiB write T1 QD64" in text
    from ssdpts.report.quick_html import build_comparison

    cells = page_cells(build_comparison(cmp))["SEQ 1MiB write T1 QD64"]
    assert cells[2] == ("n/a", "")  # the baseline's column: not measured, not starred


def test_a_finished_quick_run_has_an_end_status_counts_to(tmp_path):
    """A quick run records when it ended, as a PTS run does: status's elapsed stops there (it kept
    growing when only a PTS run recorded its end)."""
    import json as _json

    from ssdpts.status import read_status

    store, _ = quick_run(tmp_path)
    man = _json.loads((store.path / "manifest.json").read_text())
    assert man["status"] == "complete" and man["ended"] >= man["created"]
    st = read_status(store.path, {}, now=time.time() + 3600)
    assert st.ended == man["ended"] and st.elapsed_s is not None and st.elapsed_s < 600


def test_the_sites_index_shows_a_quick_runs_figures(tmp_path):
    """A quick run's row on the results site carries its figures' medians, each a column of the
    QUICK group, exactly as quick.json has them."""
    from ssdpts.library.site import data
    from ssdpts.results.reader import read_run

    store, _ = quick_run(tmp_path)
    cells = data.figure_cells(read_run(store.path))
    doc = json.loads((store.path / "quick.json").read_text())
    assert [c["test"] for c, _, _ in cells] == ["quick"] * len(doc["figures"])
    assert [v for _, v, _ in cells] == [f["median"] for f in doc["figures"]]
    assert all(c["short"].startswith("QUICK: ") and c["unit"] in ("MB/s", "kIOPS") for c, _, _ in cells)
