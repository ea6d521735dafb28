"""Real run directories against schemas/*.schema.json: runs made as the report corpus makes them
(benchmarks/report_corpus.py: the FakeExecutor's PTS runs — complete, interrupted, not steady,
extended, OCP —, a quick run, and a trace replay on real fio), the format-1 fixture written before
the layout change, and a mutated copy of each file that the schemas must refuse (a required key
taken away, a key of the wrong type). The real fio run on a loop device is checked by
test_trace_real.py's replay test."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from ..run_schemas import assert_run_matches_schemas, run_documents, schema_errors, validators

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runs" / "demo-loop-format1"
TRACE = Path(__file__).parents[1] / "fixtures" / "trace" / "fio-3.33-write_iolog-v3-randrw.log"


def _pts(tmp: Path, name: str, tests, executor, **kw) -> Path:
    from ssdpts.device.target import open_target
    from ssdpts.errors import Interrupted
    from ssdpts.pts.runspec import RunSpec
    from ssdpts.run.session import start_run

    spec = RunSpec(tests=tests, step_seconds=1, **{"max_rounds": 5, "wsat_hours": 0.5, "wsat_capacity_multiple": 1000,
                                                   "wsat_chunk_steps": 12, **kw})
    out = tmp / name
    try:
        start_run(spec, open_target(str(tmp / f"{name}.bin"), size_bytes=256 * 2**20), executor=executor, out_dir=out,
                  confirm=None, argv=["ssdpts", "run", name])
    except Interrupted:
        pass
    (run,) = out.iterdir()
    return run


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory) -> dict[str, Path]:
    """The report corpus's kinds of run, made here (seconds: the FakeExecutor, one replay on fio)."""
    from ssdpts.device.target import open_target
    from ssdpts.engine.fake import FakeExecutor
    from ssdpts.workloads import quick as Q

    tmp = tmp_path_factory.mktemp("schema-runs")
    runs = {
        "pts-complete": _pts(tmp, "pts-complete", ("wsat", "iops", "tp", "lat"), FakeExecutor(noise=0.02)),
        "pts-interrupted": _pts(tmp, "pts-interrupted", ("iops", "lat"), FakeExecutor(noise=0.02, interrupt_on_batch=3)),
        "pts-not-steady": _pts(tmp, "pts-not-steady", ("lat",),
                               FakeExecutor(model=lambda step: 1000 * (1 + 0.5 * (step.round % 3)))),
        "pts-extended": _pts(tmp, "pts-extended", ("hir", "xsr", "cbw", "dirth"), FakeExecutor(noise=0.02),
                             hir_bursts=2, xsr_minutes=(3, 3, 3)),
        "pts-ocp": _pts(tmp, "pts-ocp", ("ocp-trim", "ocp-idle-gc"), FakeExecutor(noise=0.02)),
    }
    store, _ = Q.start_quick(Q.QuickSpec(runs=3, seconds=1.0), open_target(str(tmp / "quick.img"), size_bytes=64 * 2**20),
                             executor=FakeExecutor(noise=0.1), out_dir=tmp / "quick", confirm=None, argv=["ssdpts", "quick"])
    runs["quick"] = store.path
    if shutil.which("fio"):
        from ssdpts.engine.fio import FioExecutor
        from ssdpts.workloads import replay as RP

        store, _ = RP.start_replay(RP.ReplaySpec(runs=3), TRACE, open_target(str(tmp / "replay.img"), size_bytes=64 * 2**20),
                                   executor=FioExecutor(), out_dir=tmp / "replay", confirm=None,
                                   argv=["ssdpts", "trace", "replay"])
        runs["replay"] = store.path
    return runs


@pytest.mark.parametrize("name", ["pts-complete", "pts-interrupted", "pts-not-steady", "pts-extended", "pts-ocp",
                                  "quick", "replay"])
def test_corpus_style_runs_match_the_schemas(corpus_runs, name):
    if name not in corpus_runs:
        pytest.skip("fio is not installed: no replay run")
    assert_run_matches_schemas(corpus_runs[name])


def test_the_format_1_fixture_matches_the_schemas():
    """A run written before the layout change still reads: format 1's fields added since are optional."""
    assert_run_matches_schemas(FIXTURE)


def _mutations(doc: dict):
    """(what, mutated copy) pairs: each required key of the document's top level taken away, and one
    key of each type given a value of another."""
    for key in list(doc):
        gone = copy.deepcopy(doc)
        del gone[key]
        yield f"without {key}", gone
    for key, value in doc.items():
        wrong = copy.deepcopy(doc)
        wrong[key] = [value] if not isinstance(value, list) else {"list": value}
        yield f"{key} of the wrong type", wrong


def test_a_run_file_that_lacks_a_required_key_or_has_a_wrong_type_fails(corpus_runs):
    """Each schema refuses every mutation of a real run file that takes a required key away or gives
    any top-level key (and the step's measurement fields) a wrong type; the unmutated file passes."""
    checks = validators()
    runs = [corpus_runs["pts-complete"], corpus_runs["quick"], *([corpus_runs["replay"]] if "replay" in corpus_runs else [])]
    seen = set()
    for run in runs:
        for schema, where, doc in run_documents(run)[:4]:  # the files and the first step line
            if schema in seen:
                continue
            seen.add(schema)
            assert not schema_errors([(schema, where, doc)], checks), where
            required = set(checks[schema].schema.get("required", ()))
            for what, bad in _mutations(doc):
                if what.startswith("without ") and what.removeprefix("without ") not in required:
                    continue
                assert schema_errors([(schema, where, bad)], checks), f"{where} {what} passed its schema"
    assert seen == {"manifest", "summary", "step", "quick", *(["replay"] if "replay" in corpus_runs else [])}
    # deeper: a step whose measurement lost its IOPS, or says it in words
    (_, where, step), = [d for d in run_documents(corpus_runs["pts-complete"]) if d[0] == "step"][:1]
    for bad in ({k: v for k, v in step["measurement"].items() if k != "iops"}, {**step["measurement"], "iops": "fast"}):
        assert schema_errors([("step", where, {**step, "measurement": bad})], checks)
