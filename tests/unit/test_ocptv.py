"""`ssdpts report RUN --ocptv FILE` (issue 32, item 6; report/ocptv.py): every line validates against
the OCPTV 2.0 JSON schema vendored from opencomputeproject/ocp-diag-core (tests/fixtures/ocptv,
SOURCES.md), and the lines say what the run measured: a step per part, a validator and a diagnosis
per target, the run's result from the diagnoses."""

from __future__ import annotations

from datetime import datetime
import json
from pathlib import Path
import subprocess
import sys

import pytest

jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("jinja2")
from referencing import Registry, Resource  # noqa: E402  (installed with jsonschema)

from ssdpts.device.target import open_target  # noqa: E402
from ssdpts.engine.fake import FakeExecutor  # noqa: E402
from ssdpts.pts.runspec import RunSpec  # noqa: E402
from ssdpts.report import ocptv  # noqa: E402
from ssdpts.report.datasheet import figure  # noqa: E402
from ssdpts.run.session import start_run  # noqa: E402

from ..report_numbers import Recompute  # noqa: E402

SCHEMAS = Path(__file__).parent.parent / "fixtures" / "ocptv"


def validator() -> "jsonschema.protocols.Validator":
    """root.json (the OutputArtifact), its $refs resolved to the vendored files by their $id."""
    docs = [json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.json"))]
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs)
    root = next(d for d in docs if d["$id"].endswith("/output"))
    cls = jsonschema.validators.validator_for(root)
    cls.check_schema(root)
    return cls(root, registry=registry, format_checker=cls.FORMAT_CHECKER)


def check(lines: list[dict]) -> None:
    """Each line valid, numbered from 0, timestamps ISO 8601 and never going back; schemaVersion
    first, testRunStart next, testRunEnd last; every step started and ended once, in order."""
    v = validator()
    for i, a in enumerate(lines):
        errors = sorted(v.iter_errors(a), key=str)
        assert not errors, (i, a, [e.message for e in errors])
        assert a["sequenceNumber"] == i
        datetime.fromisoformat(a["timestamp"].replace("Z", "+00:00"))
    times = [datetime.fromisoformat(a["timestamp"].replace("Z", "+00:00")) for a in lines]
    assert times == sorted(times)
    assert lines[0]["schemaVersion"] == {"major": 2, "minor": 0}
    assert "testRunStart" in lines[1]["testRunArtifact"] and "testRunEnd" in lines[-1]["testRunArtifact"]
    steps = [a["testStepArtifact"] for a in lines if "testStepArtifact" in a]
    ids = list(dict.fromkeys(s["testStepId"] for s in steps))
    for sid in ids:
        mine = [s for s in steps if s["testStepId"] == sid]
        assert "testStepStart" in mine[0] and "testStepEnd" in mine[-1]
        assert sum("testStepStart" in s or "testStepEnd" in s for s in mine) == 2


def make_run(tmp: Path, tests: tuple[str, ...]) -> Path:
    spec = RunSpec(tests=tests, step_seconds=1, max_rounds=5)
    store, _ = start_run(spec, open_target(str(tmp / "t.bin"), size_bytes=128 * 2**20),
                         executor=FakeExecutor(noise=0.02), out_dir=tmp / "runs", confirm=None)
    return store.path


def read(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines()]


TARGETS = {"qd1_4k_read_mean_us": (1e6, "lower"), "qd1_4k_read_over_10ms": (0, "lower"),
           "qd1_4k_write_mean_us": (0.001, "lower"), "ocp_trim_read_over_15ms": (0, "lower"),
           "rnd4k_read_iops": (1, "higher")}


def test_a_run_with_targets_validates_and_says_what_it_measured(tmp_path):
    run = make_run(tmp_path, ("lat", "ocp-trim"))
    (tmp_path / "t.csv").write_text("figure,limit,direction\n" + "".join(
        f"{k},{lim},{d}\n" for k, (lim, d) in TARGETS.items()))
    out = ocptv.write(run, tmp_path / "o.jsonl", targets=tmp_path / "t.csv")
    lines = read(out)
    check(lines)
    start = lines[1]["testRunArtifact"]["testRunStart"]
    assert start["parameters"]["tests"] == ["lat", "ocp-trim"] and start["dutInfo"]["hardwareInfos"][0]["name"]
    steps = {s["testStepId"]: s["testStepStart"]["name"] for a in lines if "testStepArtifact" in a
             for s in [a["testStepArtifact"]] if "testStepStart" in s}
    assert list(steps.values()) == ["lat: Latency", "ocp-trim: OCP: read latency under deallocation (TRIM-6)"]
    meas = {a["testStepArtifact"]["measurement"]["name"]: a["testStepArtifact"] for a in lines
            if "measurement" in a.get("testStepArtifact", {})}
    diag = {a["testStepArtifact"]["diagnosis"]["verdict"].rsplit("-", 1)[0]: a["testStepArtifact"]["diagnosis"]["type"]
            for a in lines if "diagnosis" in a.get("testStepArtifact", {})}
    rc = Recompute(run)
    for fid, (limit, direction) in TARGETS.items():
        if fid == "rnd4k_read_iops":  # no IOPS test in the run: a warning, no diagnosis
            continue
        m = meas[fid]["measurement"]
        f = figure(fid)
        assert m["value"] == pytest.approx(rc.value(f"{f.part}:{f.key}:{f.stat}"), rel=1e-9)
        assert m["validators"] == [{"name": f"{fid} target", "type": "LESS_THAN_OR_EQUAL", "value": float(limit)}]
        assert diag[fid] == ("PASS" if m["value"] <= limit else "FAIL")
        assert meas[fid]["testStepId"] == {"lat": "1", "ocp-trim": "2"}[f.part]
    assert diag["qd1_4k_write_mean_us"] == "FAIL" and diag["qd1_4k_read_mean_us"] == "PASS"
    assert {"ocp-trim_mean_change_pct", "ocp-trim_p99_change_pct"} <= set(diag)  # --ocp-limit's verdict
    ocp_mean = meas["ocp-trim_mean_change_pct"]["measurement"]  # over the pairs, with its 95% interval
    assert len(ocp_mean["metadata"]["pairs_pct"]) == 3 and [v["value"] for v in ocp_mean["validators"]] == [-5.0, 5.0]
    assert diag["ocp-trim_mean_change_pct"] in ("PASS", "FAIL", "UNKNOWN")
    logs = [a["testRunArtifact"]["log"] for a in lines if "log" in a.get("testRunArtifact", {})]
    assert len(logs) == 1 and "rnd4k_read_iops" in logs[0]["message"] and logs[0]["severity"] == "WARNING"
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "COMPLETE", "result": "FAIL"}
    # the same run gives the same lines: timestamps are the run's, not the time of writing
    assert read(ocptv.write(run, tmp_path / "again.jsonl", targets=tmp_path / "t.csv")) == lines


def test_the_command_and_a_run_that_stopped(tmp_path):
    run = make_run(tmp_path, ("ocp-trim",))
    proc = subprocess.run([sys.executable, "-m", "ssdpts.cli.main", "report", str(run), "--ocptv",
                           str(tmp_path / "o.jsonl")], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "o.jsonl") and not (run / "report.html").exists()
    lines = read(tmp_path / "o.jsonl")
    check(lines)
    assert lines[-1]["testRunArtifact"]["testRunEnd"]["status"] == "COMPLETE"
    # an interrupted run: ERROR / NOT_APPLICABLE, the specification's pair for a run that did not finish
    man = json.loads((run / "manifest.json").read_text())
    man["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(man))
    lines = read(ocptv.write(run, tmp_path / "p.jsonl"))
    check(lines)
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "ERROR", "result": "NOT_APPLICABLE"}


def test_the_schema_refuses_what_it_should():
    """The vendored schema is in force: a wrong enum, a missing field or an unknown one is refused."""
    v = validator()
    ok = {"sequenceNumber": 3, "timestamp": "2026-01-01T00:00:00Z",
          "testStepArtifact": {"testStepId": "1", "diagnosis": {"verdict": "x-pass", "type": "PASS"}}}
    assert v.is_valid(ok)
    assert not v.is_valid({**ok, "testStepArtifact": {"testStepId": "1", "diagnosis": {"verdict": "x", "type": "OK"}}})
    assert not v.is_valid({**ok, "testStepArtifact": {"diagnosis": {"verdict": "x", "type": "PASS"}}})
    assert not v.is_valid({**ok, "extra": 1})
    assert not v.is_valid({"sequenceNumber": 0, "timestamp": "t", "schemaVersion": {"major": 1, "minor": 0}})
