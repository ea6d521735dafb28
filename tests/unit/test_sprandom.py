"""Preconditioning by fio's sprandom (docs/methodology.md#preconditioning-by-sprandom): the option's
parsing and refusals, the plan (the fill in the WIPC's place, before HIR's and ocp-idle-gc's random
writes, nowhere in WSAT and XSR), fio's job section, the OP from an earlier WSAT's drive model in the
results library, and the marks a run carries (manifest, report, datasheet, library)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ssdpts.cli.common import parse_precondition
from ssdpts.device.target import open_target
from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fake import FakeExecutor
from ssdpts.engine.jobfile import render_job_file
from ssdpts.errors import UserError
from ssdpts.library import db as R
from ssdpts.library.spare import earlier_spare
from ssdpts.pts.parts import SPRANDOM_BLOCK
from ssdpts.pts.plan import build_parts
from ssdpts.pts.runspec import SPRANDOM_MARK, RunSpec, marks, not_compliant
from ssdpts.pts.workload import Sprandom, Step, Workload
from ssdpts.run.launch import with_spare
from ssdpts.run.session import start_run
from ssdpts.store import RunStore

MiB = 2**20
GiB = 2**30
SPR = dict(precondition="sprandom", spr_op=0.25, spr_op_source="given by --precondition")


# ---- the option ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    (None, ("pts", None)), ("pts", ("pts", None)), ("sprandom", ("sprandom", None)),
    ("sprandom:0.07", ("sprandom", 0.07)), ("sprandom:7%", ("sprandom", 0.07)), (" SPRandom:0.25 ", ("sprandom", 0.25)),
    ("sprandom:28.5%", ("sprandom", 0.285)),
])
def test_precondition_parses(text, want):
    method, op = parse_precondition(text)
    assert method == want[0] and (op is None if want[1] is None else math.isclose(op, want[1]))


@pytest.mark.parametrize("text", ["sprandom:0", "sprandom:1", "sprandom:1.5", "sprandom:-0.1", "sprandom:100%",
                                  "sprandom:0%", "sprandom:abc", "sprandom:", "pts:0.1", "random", "wipc"])
def test_bad_precondition_is_one_line(text):
    with pytest.raises(UserError) as exc:
        parse_precondition(text)
    msg = str(exc.value)
    assert "\n" not in msg and "sprandom:OP" in msg and "docs/methodology.md#preconditioning-by-sprandom" in msg


def test_runspec_refuses_what_the_option_cannot_say():
    for kw in (dict(precondition="sprandom", spr_op=1.0), dict(precondition="sprandom", spr_op=0.0),
               dict(precondition="pts", spr_op=0.1), dict(precondition="fill")):
        with pytest.raises(UserError):
            RunSpec(tests=("iops",), **kw)


def test_a_pts_run_records_what_it_always_did():
    d = RunSpec(tests=("iops",)).to_dict()
    assert not {"precondition", "spr_op", "spr_op_source"} & set(d)
    spec = RunSpec(tests=("iops",), **SPR)
    d = spec.to_dict()
    assert (d["precondition"], d["spr_op"], d["spr_op_source"]) == ("sprandom", 0.25, "given by --precondition")
    assert RunSpec.from_dict(d) == spec


# ---- the plan -----------------------------------------------------------------------------------

def test_the_fill_takes_the_wipcs_place_and_comes_before_random_write_preconditioning():
    spec = RunSpec(tests=("wsat", "iops", "tp", "lat", "hir", "xsr", "cbw", "dirth", "ocp-trim", "ocp-idle-gc"),
                   step_seconds=1, **SPR)
    pts = {p.id: p for p in build_parts(spec.with_(precondition="pts", spr_op=None, spr_op_source=""), 8 * GiB)}
    for p in build_parts(spec, 8 * GiB):
        w = p.wipc
        if p.test == "tp":  # its steady state is sequential: it keeps the PTS's WIPC
            assert w == pts[p.id].wipc and w.sprandom is None, p.id
        elif pts[p.id].wipc is not None or p.id in ("hir-precondition", "ocp-idle-gc-precondition"):
            assert w is not None and w.sprandom == Sprandom(0.25), p.id
            assert (w.phase, w.round, w.duration_s, w.workload) == ("wipc", 0, None, Workload("rand", 0, 4096, 1, 32))
            assert w.io_bytes == 8 * GiB + math.ceil(8 * GiB * 0.25)  # the physical capacity, once
            assert "sprandom" in w.label and "OP 0.25" in w.label
        else:  # WSAT and XSR measure from the purge; the parts after a test's first have none
            assert w is None, p.id
        # the rounds are the PTS's: the steady-state rule decides as it did
        assert [s.to_dict() for s in p.round_steps(1)] == [s.to_dict() for s in pts[p.id].round_steps(1)]
        assert (p.tracking, p.max_rounds, p.stop_rule) == (pts[p.id].tracking, pts[p.id].max_rounds,
                                                           pts[p.id].stop_rule)
    assert pts["hir-precondition"].wipc is None  # the PTS: no WIPC for HIR


def test_physical_bytes_round_up_to_the_block():
    assert Sprandom(0.07).physical_bytes(1000 * 4096, SPRANDOM_BLOCK) == 1070 * 4096
    assert Sprandom(0.07).physical_bytes(100 * 4096 + 512, SPRANDOM_BLOCK) == 108 * 4096


def test_a_run_without_a_part_to_fill_is_refused():
    with pytest.raises(UserError, match="WSAT and XSR start from the purge"):
        build_parts(RunSpec(tests=("wsat", "xsr"), **SPR), 8 * GiB)
    with pytest.raises(UserError, match="TP keeps its WIPC"):
        build_parts(RunSpec(tests=("tp",), **SPR), 8 * GiB)


def test_the_fill_needs_its_op():
    with pytest.raises(UserError, match="give it as sprandom:OP"):
        build_parts(RunSpec(tests=("iops",), precondition="sprandom"), 8 * GiB)


def test_a_sprandom_step_is_one_job_of_random_writes():
    w = Workload("rand", 0, 4096, 1, 32)
    Step("iops", "", "wipc", 0, 1, w, None, io_bytes=GiB, sprandom=Sprandom(0.1))
    for bad in (Workload("rand", 0, 4096, 2, 32), Workload("seq", 0, 4096, 1, 32), Workload("rand", 50, 4096, 1, 32),
                Workload("rand", 0, 3072, 1, 32)):
        with pytest.raises(ValueError):
            Step("iops", "", "wipc", 0, 1, bad, None, io_bytes=GiB, sprandom=Sprandom(0.1))
    with pytest.raises(ValueError):
        Step("iops", "", "wipc", 0, 1, w, 60.0, sprandom=Sprandom(0.1))
    s = Step("iops", "", "wipc", 0, 1, w, None, io_bytes=GiB, sprandom=Sprandom(0.1, 400))
    assert Step.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_the_job_section_asks_fio_for_sprandom():
    part = build_parts(RunSpec(tests=("iops",), step_seconds=1, **SPR), GiB)[0]
    text, _ = render_job_file(Batch(steps=[part.wipc], filename="/dev/loop7", area=Area(0, GiB, ()), seed=7,
                                    ioengine="io_uring"), [("pre", "post")])
    section = text.split("[s0001]", 1)[1]
    for line in ("rw=randwrite", "bs=4096", "numjobs=1", "iodepth=32", "random_generator=lfsr", "sprandom=1",
                 "spr_op=0.25", "spr_num_regions=100", "exec_prerun=pre"):
        assert f"\n{line}\n" in section + "\n", line
    assert "io_size=" not in section and "runtime=" not in section  # fio sizes it: the physical capacity
    assert "norandommap=1" in text  # sprandom's other requirement, in [global]


# ---- the OP from an earlier WSAT's drive model --------------------------------------------------

class _Target:
    path = "/dev/nvme0n1"

    def __init__(self, serial):
        self.serial = serial


def test_with_spare_takes_the_drive_model_or_refuses_in_one_line():
    spec = RunSpec(tests=("iops",), precondition="sprandom")
    got = with_spare(spec, _Target("S1"), lambda serial: (0.12, f"model of {serial}") if serial == "S1" else None)
    assert (got.spr_op, got.spr_op_source) == (0.12, "model of S1")
    for target, spare_of in ((_Target("S2"), lambda s: None), (_Target(None), lambda s: (0.1, "x")),
                             (_Target("S1"), None)):
        with pytest.raises(UserError) as exc:
            with_spare(spec, target, spare_of)
        assert "\n" not in str(exc.value) and "sprandom:OP" in str(exc.value)
    given = RunSpec(tests=("iops",), **SPR)
    assert with_spare(given, _Target("S1"), lambda s: (0.5, "no")) is given  # an OP given wins
    pts = RunSpec(tests=("iops",))
    assert with_spare(pts, _Target(None), None) is pts


class _Doc:
    """summary.json as the drive-model work writes it: parts.wsat.model.effective_spare."""

    def __init__(self, doc):
        self.doc = doc

    def to_document(self):
        return self.doc


def _wsat_run(root: Path, name: str, serial: str, created: str, spare: float | None) -> Path:
    t = open_target(str(root / f"{name}.img"), size_bytes=256 * MiB)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ssdpts.device.side.host.collect", lambda *a, **kw: {"hostname": "labhost", "kernel": "6.1"})
        store, _ = start_run(RunSpec(tests=("wsat",), step_seconds=1, wsat_hours=0.1), t, executor=FakeExecutor(),
                             out_dir=root / "runs", confirm=None, argv=["test"])
    store = RunStore(store.path)
    store.update_manifest(target={**store.manifest().doc["target"], "model": "ACME X1", "serial": serial},
                          created=created)
    if spare is not None:
        doc = store.summary_document()
        doc["parts"]["wsat"]["model"] = {"effective_spare": spare}
        store.write_summary(_Doc(doc))  # its digest with it: the run is not damaged
    return store.path


def test_earlier_spare_is_the_newest_wsat_model_of_that_drive(tmp_path):
    db = tmp_path / "results.db"
    assert earlier_spare("SN1", db) is None  # no library
    runs = [_wsat_run(tmp_path, "old", "SN1", "2026-01-01T00:00:00Z", 0.09),
            _wsat_run(tmp_path, "new", "SN1", "2026-02-01T00:00:00Z", 0.11),
            _wsat_run(tmp_path, "nomodel", "SN1", "2026-03-01T00:00:00Z", None),  # newest, but no model
            _wsat_run(tmp_path, "longer", "SN10", "2026-04-01T00:00:00Z", 0.2),  # its serial holds SN1
            _wsat_run(tmp_path, "other", "XYZ", "2026-04-01T00:00:00Z", 0.3)]
    with R.ResultsDB(db) as lib:
        lib.add(runs)
    op, source = earlier_spare("SN1", db)
    assert op == 0.11 and runs[1].name in source and "2026-02-01" in source
    assert earlier_spare("XYZ", db)[0] == 0.3
    assert earlier_spare("NOPE", db) is None and earlier_spare("", db) is None


def test_a_damaged_run_gives_no_op(tmp_path):
    db = tmp_path / "results.db"
    run = _wsat_run(tmp_path, "edited", "SN7", "2026-01-01T00:00:00Z", None)
    doc = json.loads((run / "summary.json").read_text())
    doc["parts"]["wsat"]["model"] = {"effective_spare": 0.5}
    (run / "summary.json").write_text(json.dumps(doc))  # by hand: its digest no longer matches
    with R.ResultsDB(db) as lib:
        lib.add([run])
    assert earlier_spare("SN7", db) is None


# ---- the marks ----------------------------------------------------------------------------------

def test_the_deviation_names_it_as_time_compression_is_named():
    devs = RunSpec(tests=("iops",), step_seconds=1, **SPR).deviations()
    line = next(d for d in devs if d.startswith(SPRANDOM_MARK))
    assert "OP 0.25, given by --precondition" in line and "docs/methodology.md#preconditioning-by-sprandom" in line
    assert marks(devs) == ["time-compressed", SPRANDOM_MARK]
    assert not_compliant(devs) == "time-compressed, preconditioning by sprandom — not PTS compliant"
    assert not_compliant([line]) == "preconditioning by sprandom — not PTS compliant"
    assert not_compliant(["no purge before the tests"]) == "not PTS compliant"


@pytest.fixture(scope="module")
def sprandom_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("spr")
    t = open_target(str(root / "t.img"), size_bytes=256 * MiB)
    ex = FakeExecutor()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ssdpts.device.side.host.collect", lambda *a, **kw: {"hostname": "labhost", "kernel": "6.1"})
        store, summary = start_run(RunSpec(tests=("iops", "tp"), step_seconds=1, max_rounds=5, precondition="sprandom",
                                           spr_op=0.2, spr_op_source="given by --precondition"), t, executor=ex,
                                   out_dir=root / "runs", confirm=None, argv=["test"])
    wipc = ex.batches[0].steps
    assert len(wipc) == 1 and wipc[0].sprandom == Sprandom(0.2)  # the runner ran the fill first
    assert summary["pts_compliant"] is False
    return store.path


def test_the_manifest_and_summary_mark_it(sprandom_run):
    man = json.loads((sprandom_run / "manifest.json").read_text())
    assert man["pts_compliant"] is False and any(d.startswith(SPRANDOM_MARK) for d in man["deviations"])
    assert (man["run_spec"]["precondition"], man["run_spec"]["spr_op"]) == ("sprandom", 0.2)
    summ = json.loads((sprandom_run / "summary.json").read_text())
    assert summ["pts_compliant"] is False and any(d.startswith(SPRANDOM_MARK) for d in summ["deviations"])
    assert "sprandom" in summ["parts"]["iops"]["wipc"]["workload"]


def test_the_report_and_datasheet_mark_it(sprandom_run):
    from ssdpts.report.assemble import load
    from ssdpts.report.datasheet import section

    rep = load(sprandom_run)
    assert rep.compliance.title == "time-compressed, preconditioning by sprandom — not PTS compliant"
    assert rep.plot_mark == "not PTS compliant: time-compressed, preconditioning by sprandom"
    setup = dict(rep.tests["iops"].setup)
    assert "one physical fill by fio's sprandom" in setup["Preconditioning 1 (sprandom)"]
    tp = dict(rep.tests["tp"].setup)  # TP keeps its WIPC, and its page says so
    assert "Preconditioning 1 (sprandom)" not in tp and tp["Preconditioning 1 (WIPC)"].startswith("SEQ ")
    from ssdpts.report.context import RunContext
    from ssdpts.results.reader import read_run

    sheet = section(RunContext(read_run(sprandom_run)))
    assert "NOT compliant (time-compressed; preconditioning by sprandom)" in json.dumps(sheet.__dict__, default=str)


def test_the_library_marks_it(sprandom_run, tmp_path):
    with R.ResultsDB(tmp_path / "lib.db") as lib:
        lib.add([sprandom_run])
        (row,) = lib.list_runs()
    assert row["pts_compliant"] == 0 and row["precondition"] == "sprandom:0.2"
    assert any(d.startswith(SPRANDOM_MARK) for d in json.loads(row["deviations"]))


# ---- both ways, side by side (docs/methodology.md#time-to-result) ---------------------------------

def test_the_plan_knows_both_preconditionings_bytes():
    from ssdpts.pts.plan import preconditioning_both

    spec = RunSpec(tests=("wsat", "iops", "tp", "hir"), step_seconds=1)
    both = preconditioning_both(spec, 8 * GiB, spr_op=0.25)
    assert "wsat" not in both and "hir-wait-states" not in both
    assert both["iops"] == {"pts": 16 * GiB, "sprandom": 10 * GiB}
    assert both["tp-1024KiB"] == {"pts": 16 * GiB, "sprandom": None}  # TP keeps its WIPC
    assert both["hir-precondition"] == {"pts": None, "sprandom": 10 * GiB}  # HIR's rounds are its preconditioning
    assert preconditioning_both(spec, 8 * GiB)["iops"] == {"pts": 16 * GiB, "sprandom": None}  # no OP known
    # a sprandom run's own OP, whatever else is asked
    assert preconditioning_both(spec.with_(**SPR), 8 * GiB, spr_op=0.5)["iops"]["sprandom"] == 10 * GiB


def test_plan_shows_both_with_their_time(tmp_path, capsys):
    from ssdpts.cli.main import main

    args = ["plan", "iops", "hir", "--target", str(tmp_path / "new.img"), "--size", "8G", "--step-seconds", "1"]
    assert main([*args, "--spr-op", "25%", "--write-rate", "2000,1000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    iops = next(p for p in doc["parts"] if p["test"] == "iops")
    assert (iops["precondition_pts_bytes"], iops["precondition_sprandom_bytes"]) == (16 * GiB, 10 * GiB)
    assert iops["precondition_pts_s"] == round(16 * GiB / 2e9, 1)
    assert iops["precondition_sprandom_s"] == round(10 * GiB / 1e9, 1)
    assert (doc["write_rate_seq_bytes_per_s"], doc["write_rate_rnd_bytes_per_s"], doc["spr_op_shown"]) == (2e9, 1e9, 0.25)
    assert main([*args, "--spr-op", "0.25", "--write-rate", "2000"]) == 0
    text = capsys.readouterr().out
    assert "preconditioning both ways" in text and "IOPS: WIPC 17.2 GB, 8.6s | sprandom 10.7 GB, 5.4s" in text
    assert "HIR: preconditioning: WIPC none | sprandom 10.7 GB" in text
    assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())  # the console wraps at its width
    assert "IOPS: WIPC 17.2 GB | sprandom —" in text and "--spr-op OP" in text and "--write-rate" in text
