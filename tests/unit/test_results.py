"""The typed results model (src/ssdpts/results): a format-1 run directory written by an earlier
ssdpts read whole into records and written back unchanged; format versions upgraded or refused;
the registry of run fields; the report, comparison and library views of the same run."""

from __future__ import annotations

from dataclasses import replace
import gzip
import json
from pathlib import Path
import shutil

import pytest

from ssdpts.errors import UserError
from ssdpts.pts.iops import IopsTable
from ssdpts.pts.lat import LatTable
from ssdpts.pts.steady_state import SteadyState
from ssdpts.pts.tp import TpTable
from ssdpts.pts.wsat import WsatTable
from ssdpts.results.cells import table_cells
from ssdpts.results.formats import FORMAT, upgrade
from ssdpts.results.reader import read_run
from ssdpts.results.records import Manifest, StepRecord, Summary, WindowResume
from ssdpts.results.registry import COMPARED_SETTINGS, RUN_FIELDS

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runs" / "demo-loop-format1"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """The committed run directory, with steps.jsonl unpacked as the run wrote it."""
    d = tmp_path_factory.mktemp("fixture") / FIXTURE.name
    shutil.copytree(FIXTURE, d, ignore=shutil.ignore_patterns("steps.jsonl.gz"))
    (d / "steps.jsonl").write_bytes(gzip.decompress((FIXTURE / "steps.jsonl.gz").read_bytes()))
    return d


def doc(run_dir: Path, name: str) -> dict:
    return json.loads((run_dir / name).read_text())


def test_the_summary_records_write_back_what_they_read(run_dir):
    raw = doc(run_dir, "summary.json")
    back = Summary.from_dict(raw).to_dict()
    assert back == {k: v for k, v in raw.items() if k != "format"}
    # key order too: the summary the runner writes today has the same layout
    assert json.dumps(back) == json.dumps({k: v for k, v in raw.items() if k != "format"})


def test_a_run_directory_read_whole(run_dir):
    run = read_run(run_dir, steps=True)
    assert run.status == "complete" and run.notes == ()
    lines = (run_dir / "steps.jsonl").read_text().splitlines()
    assert len(run.steps) == len(lines) == 379
    assert all(isinstance(s, StepRecord) for s in run.steps)
    first = json.loads(lines[0])
    assert run.steps[0].measurement.iops == first["measurement"]["iops"]  # derived again, the same value
    parts = run.summary.parts
    assert list(parts) == ["wsat", "iops", "tp-1024KiB", "tp-128KiB", "lat"]
    assert isinstance(parts["iops"].table, IopsTable) and isinstance(parts["lat"].table, LatTable)
    assert isinstance(parts["tp-128KiB"].table, TpTable) and isinstance(parts["wsat"].table, WsatTable)
    assert all(isinstance(v, SteadyState) for v in parts["iops"].steady_state.variables)
    m = run.manifest
    assert m.target.kind == "block" and m.target.logical_block_size_bytes == 512
    assert m.settings.tests == ("wsat", "iops", "tp", "lat") and m.settings.resolved_threads == 4
    assert m.purge_methods == ("discard",) and m.executor == "fio"
    assert m.settings.run_spec().step_seconds == 0.1


def test_a_run_directory_made_before_integrity_records_reads_as_older(run_dir):
    """Its missing records are what an older ssdpts wrote, not damage: nothing but the raw fio files
    the fixture left out is a problem, and its summary is read as written (results/seal.py)."""
    from ssdpts.results.verify import integrity

    res = integrity.check(run_dir)
    assert res.version is None and {p.what for p in res.problems} == {"is missing"}
    assert all(p.file.startswith("fio/") and p.file.endswith(".json") for p in res.problems)
    assert any(n.startswith("summary.json has no recorded checksum (made by an older ssdpts) and 18 of its values "
                            "differ") and n.endswith("it is read as written") for n in res.notes), res.notes
    assert read_run(run_dir).notes == ()


def test_cells_are_the_tables_values(run_dir):
    run = read_run(run_dir)
    cells = table_cells(run.summary)
    raw = doc(run_dir, "summary.json")["parts"]
    iops = {(c.block_size_bytes, c.mix): c.value for c in cells if c.part == "iops"}
    assert iops == {(r["block_size_bytes"], m): v for r in raw["iops"]["table"]["rows"] for m, v in r["values"].items()}
    lat = [c for c in cells if c.part == "lat"]
    assert len(lat) == 9 * 5 and {c.unit for c in lat if c.metric != "iops"} == {"µs"}
    (wsat,) = [c for c in cells if c.part == "wsat"]
    assert wsat.value == raw["wsat"]["table"]["final_window_iops"] and wsat.steady_state_reached is None


def test_a_missing_summary_is_rebuilt_equal(run_dir, tmp_path):
    d = tmp_path / "run"
    shutil.copytree(run_dir, d)
    (d / "summary.json").unlink()
    rebuilt = read_run(d)
    assert rebuilt.notes and "recomputed from steps.jsonl" in rebuilt.notes[0]
    saved = Summary.from_dict(doc(run_dir, "summary.json"))
    for pid, part in saved.parts.items():
        if pid != "lat":
            assert rebuilt.summary.parts[pid].table == part.table, pid
        ss = rebuilt.summary.parts[pid].steady_state
        if ss is not None:  # the fixture predates the window's resume fields; the run was never resumed
            assert ss.resume == WindowResume(None, None), pid
            ss = replace(ss, resume=None)
        assert _close(ss, part.steady_state), pid
    # LAT: this run was written before the response-time statistics had one definition (pts/qos.py):
    # its max was the window average of step maxima and its 99.999% the average of step percentiles.
    # Rebuilt, max is the window's largest IO (format 1's lat_max_in_window_us) and the 99.999% comes
    # from the window's pooled histogram, never above that max.
    for old, new in zip(saved.parts["lat"].table.rows, rebuilt.summary.parts["lat"].table.rows):
        o, n = old.values, new.values
        assert (n["lat_mean_us"], n["iops"]) == pytest.approx((o["lat_mean_us"], o["iops"]), rel=1e-12)
        assert n["lat_max_us"] == n["lat_max_in_window_us"] == pytest.approx(o["lat_max_in_window_us"], rel=1e-12)
        assert n["lat_p99999_us"] <= n["lat_max_us"]
    with pytest.raises(UserError, match=r"has no summary.json yet .*then compare"):
        read_run(d, need_summary="compare")


def _close(a, b) -> bool:
    """Equal, floats to 12 significant digits: a least-squares fit's last bits depend on the numpy
    build and the CPU's vector unit (seen: slope -151.63618650000018 rebuilt as ...012)."""
    if hasattr(a, "__dataclass_fields__") and type(a) is type(b):
        return all(_close(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-9)
    return a == b


def test_run_fields_know_their_views(run_dir):
    run = read_run(run_dir)
    for name in COMPARED_SETTINGS:
        assert RUN_FIELDS[name].label, name  # every compared setting has a label
    assert RUN_FIELDS["threads"].text(run) == "4" and RUN_FIELDS["threads"].stored(run) == 4
    assert RUN_FIELDS["active_range_pct"].text(run) == "100" and RUN_FIELDS["step_seconds"].stored(run) == 0.1
    assert RUN_FIELDS["purge"].text(run) == "discard" and RUN_FIELDS["capacity"].column == "capacity_bytes"
    assert RUN_FIELDS["wsat_limits"].text(run) == "0.5 h or 4× capacity" and not RUN_FIELDS["wsat_limits"].column


# ---- format versions ---------------------------------------------------------------------------------

def test_newer_format_is_refused_in_one_line():
    with pytest.raises(UserError) as exc:
        upgrade({"format": FORMAT + 1, "status": "complete"}, "x/manifest.json", kind="manifest")
    msg = str(exc.value)
    assert f"format {FORMAT + 1}" in msg and "newer" in msg and "ssdpts version" in msg and "\n" not in msg
    for bad in (None, "1", 0, True):
        with pytest.raises(UserError, match="not written by ssdpts, or is damaged"):
            upgrade({"format": bad}, "x/summary.json", kind="summary")


def test_older_formats_are_upgraded_one_version_at_a_time():
    seen = []

    def one_to_two(kind, d):
        seen.append((kind, d["format"]))
        return {**d, "lat_unit": "ns"}  # e.g. a field added in format 2

    def two_to_three(kind, d):
        seen.append((kind, d["format"]))
        d["latency_ns"] = d.pop("latency")  # e.g. a field renamed in format 3
        return d

    chain = {1: one_to_two, 2: two_to_three}
    out = upgrade({"format": 1, "latency": 5}, "x", kind="step", migrations=chain, current=3)
    assert out == {"format": 3, "lat_unit": "ns", "latency_ns": 5} and seen == [("step", 1), ("step", 2)]
    assert upgrade({"format": 3, "a": 1}, "x", kind="step", migrations=chain, current=3) == {"format": 3, "a": 1}
    with pytest.raises(UserError, match="cannot upgrade format 1"):
        upgrade({"format": 1}, "x", kind="manifest", migrations={2: two_to_three}, current=3)


def test_manifest_of_an_old_run_without_recent_fields():
    """A manifest that lacks fields later versions added still reads: they are None or empty."""
    m = Manifest.from_dict({"format": 1, "status": "complete", "run_spec": {"tests": ["iops"]},
                            "target": {"path": "/dev/x", "size_bytes": 1 << 30}})
    assert m.deviations is None and m.parts == {} and m.target.wwid is None and m.settings.resolved_threads is None
    assert m.settings.data_pattern == "random (fio buffers, tausworthe64)"
