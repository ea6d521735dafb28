"""The fio job file of a batch (engine/jobfile.py render_job_file) and how FioExecutor reads fio's
answer (its _result, fed with recorded fio output, no fio process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdpts.engine.base import Area, Batch
from ssdpts.engine.fio import FioExecutor
from ssdpts.engine.jobfile import render_job_file
from ssdpts.errors import RunFailed
from ssdpts.pts.runspec import RunSpec
from ssdpts.pts.plan import build_parts
from ssdpts.pts.workload import Step, Workload

KiB = 1024
MiB = 1024 * KiB
FIO_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"


def parse_job_file(text: str) -> list[tuple[str, dict[str, str | None]]]:
    """[(section name, {key: value or None})] in file order; refuses a repeated key in a section."""
    sections: list[tuple[str, dict[str, str | None]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1], {}))
            continue
        key, sep, value = line.partition("=")
        opts = sections[-1][1]
        assert key not in opts, f"option {key} repeated in [{sections[-1][0]}]"
        opts[key] = value if sep else None
    return sections


def steps_of(workloads: list[Workload], durations: list[float], round_no: int = 1, part: str = "") -> list[Step]:
    return [Step(test="iops", part=part, phase="round", round=round_no, index=i, workload=w, duration_s=d)
            for i, (w, d) in enumerate(zip(workloads, durations), start=1)]


def batch(steps: list[Step], seed: int = 1234, area: Area = Area(4 * MiB, 200 * MiB)) -> Batch:
    return Batch(steps=steps, filename="/dev/loop9", area=area, seed=seed, ioengine="libaio")


WLS = [
    Workload("rand", 65, 4 * KiB, 2, 16),
    Workload("rand", 100, 64 * KiB, 4, 32),
    Workload("rand", 0, 512, 1, 1),
    Workload("seq", 100, 1024 * KiB, 1, 32),
]
DURS = [1.5, 2.0, 0.25, 60.0]


def test_one_section_per_step_with_schedule():
    text, starts = render_job_file(batch(steps_of(WLS, DURS)))
    secs = parse_job_file(text)
    assert [name for name, _ in secs] == ["global", "s0001", "s0002", "s0003", "s0004"]
    assert starts == [0.0, 1.5, 3.5, 3.75]
    jobs = [opts for _, opts in secs[1:]]
    for opts in jobs:
        assert "new_group" in opts and opts["new_group"] is None
        assert opts["time_based"] == "1"
        assert "io_size" not in opts
    assert "startdelay" not in jobs[0]
    assert [j.get("startdelay") for j in jobs[1:]] == ["1500ms", "3500ms", "3750ms"]
    assert [j["runtime"] for j in jobs] == ["1500ms", "2000ms", "250ms", "60000ms"]


def test_rw_mix_block_size_and_demand_per_step():
    text, _ = render_job_file(batch(steps_of(WLS, DURS)))
    jobs = [opts for _, opts in parse_job_file(text)[1:]]
    assert [j["rw"] for j in jobs] == ["randrw", "randread", "randwrite", "read"]
    assert jobs[0]["rwmixread"] == "65"
    assert all("rwmixread" not in j for j in jobs[1:])
    assert [j["bs"] for j in jobs] == ["4096", "65536", "512", "1048576"]
    assert [(j["numjobs"], j["iodepth"]) for j in jobs] == [("2", "16"), ("4", "32"), ("1", "1"), ("1", "32")]


def test_global_section_holds_target_area_and_pts_settings():
    text, _ = render_job_file(batch(steps_of(WLS, DURS)))
    g = parse_job_file(text)[0][1]
    assert g["filename"] == "/dev/loop9"
    assert g["offset"] == str(4 * MiB) and g["size"] == str(200 * MiB)
    assert g["direct"] == "1"
    assert g["ioengine"] == "libaio"
    assert g["random_generator"] == "tausworthe64"  # PTS: >= 48-bit RNG
    assert g["lat_percentiles"] == "1"
    assert "99.999" in g["percentile_list"].split(":")
    assert g["group_reporting"] == "1"


def test_sequential_mixed_step_uses_rw_and_multithread_slices():
    wl = [Workload("seq", 50, 128 * KiB, 4, 8)]
    text, _ = render_job_file(batch(steps_of(wl, [1.0]), area=Area(0, 100 * MiB)))
    (_, job), = parse_job_file(text)[1:]
    assert job["rw"] == "rw" and job["rwmixread"] == "50"
    # each of the 4 clones gets its own 25 MiB slice (a multiple of the block size)
    assert job["offset_increment"] == str(25 * MiB) and job["size"] == str(25 * MiB)


def test_wipc_batch_is_size_bound():
    spec = RunSpec(tests=("iops",))
    (part,) = build_parts(spec, 256 * MiB)
    b = batch([part.wipc], area=Area(0, 256 * MiB))
    text, starts = render_job_file(b)
    secs = parse_job_file(text)
    assert len(secs) == 2 and starts == [0.0]
    job = secs[1][1]
    assert job["io_size"] == str(512 * MiB)  # 2 x active range
    assert "time_based" not in job and "runtime" not in job and "startdelay" not in job
    assert job["rw"] == "write" and job["bs"] == str(128 * KiB)
    assert (job["numjobs"], job["iodepth"]) == ("1", "32")


def test_real_iops_round_renders_56_sections():
    spec = RunSpec(tests=("iops",), step_seconds=2)
    (part,) = build_parts(spec, 1024 * MiB)
    text, starts = render_job_file(batch(part.round_steps(1), area=Area(0, 1024 * MiB)))
    jobs = parse_job_file(text)[1:]
    assert len(jobs) == 56
    assert starts == [2.0 * i for i in range(56)]
    assert jobs[-1][1]["startdelay"] == "110000ms"


def test_gated_round_waits_at_barriers_and_creates_jobs_one_step_ahead():
    """The job file FioExecutor runs: no startdelay; each step's hooks; job n is created by
    wait_for when job n - 2 has exited, i.e. when step n - 1 starts (60-s PTS steps)."""
    spec = RunSpec(tests=("iops",))
    (part,) = build_parts(spec, 1024 * MiB)
    steps = part.round_steps(1)
    gate = [(f"pre {i}", f"post {i}") for i in range(len(steps))]
    text, starts = render_job_file(batch(steps, area=Area(0, 1024 * MiB)), gate)
    jobs = [opts for _, opts in parse_job_file(text)[1:]]
    assert len(jobs) == 56 and starts == [60.0 * i for i in range(56)]
    assert not any("startdelay" in j for j in jobs)
    assert [j.get("wait_for") for j in jobs[:3]] == [None, None, "s0001"]
    assert all(j["wait_for"] == f"s{n - 2:04d}" for n, j in enumerate(jobs, start=1) if n > 2)
    assert [(j["exec_prerun"], j["exec_postrun"]) for j in jobs] == gate
    assert all(j["runtime"] == "60000ms" and j["time_based"] == "1" for j in jobs)
    with pytest.raises(ValueError, match="one gate command pair per step"):
        render_job_file(batch(steps), gate[:3])


def test_short_steps_keep_a_second_of_jobs_ready():
    from ssdpts.engine.jobfile import steps_ahead

    assert [steps_ahead(d) for d in (None, 60.0, 2.0, 1.0, 0.5, 0.2, 0.1)] == [1, 1, 1, 2, 3, 6, 6]
    steps = steps_of([WLS[0]] * 8, [0.2] * 8)
    jobs = [opts for _, opts in parse_job_file(render_job_file(batch(steps), [("a", "b")] * 8)[0])[1:]]
    assert [j.get("wait_for") for j in jobs] == [None] * 7 + ["s0001"]


def test_gate_commands_survive_fio_job_file_syntax():
    """';' and '#' start comments in a fio job file: the gate's commands must not contain them; fio
    replaces ${VAR} and its keywords $pagesize, $mb_memory, $ncpus (a shell's $PPID and $1 pass)."""
    from ssdpts.engine.gate import Gate

    g = Gate()
    try:
        (e,) = g.add([1])
        for cmd in (g.prerun(e), g.postrun(e)):
            assert ";" not in cmd and "#" not in cmd and "${" not in cmd, cmd
            assert not any(k in cmd for k in ("$pagesize", "$mb_memory", "$ncpus")), cmd
            assert cmd.endswith("&& :")  # fio's appended '> JOB.txt 2>&1' lands on ':'
    finally:
        g.close()


def seeds(text: str) -> list[str]:
    return [opts["randseed"] for _, opts in parse_job_file(text)[1:]]


def test_seeds_differ_per_step_and_are_reproducible():
    spec = RunSpec(tests=("iops",))
    (part,) = build_parts(spec, 1024 * MiB)
    r1 = seeds(render_job_file(batch(part.round_steps(1)))[0])
    assert len(set(r1)) == 56
    assert seeds(render_job_file(batch(part.round_steps(1)))[0]) == r1  # same input, same seeds
    r2 = seeds(render_job_file(batch(part.round_steps(2)))[0])
    assert not set(r1) & set(r2)  # another round, other sequences
    other = seeds(render_job_file(batch(part.round_steps(1), seed=4321))[0])
    assert not set(r1) & set(other)  # the recorded base seed matters
    tp_parts = build_parts(RunSpec(tests=("tp",)), 1024 * MiB)
    a, b = (seeds(render_job_file(batch(p.round_steps(1)))[0]) for p in tp_parts)
    assert not set(a) & set(b)  # TP parts differ by part name
    assert all(0 <= int(s) < 2**63 for s in r1)


def test_mixing_timed_and_size_bound_steps_raises():
    spec = RunSpec(tests=("iops",))
    (part,) = build_parts(spec, 256 * MiB)
    timed = part.round_steps(1)[:2]
    with pytest.raises(ValueError, match="all timed"):
        render_job_file(batch([part.wipc, *timed]))
    with pytest.raises(ValueError, match="exactly one"):
        render_job_file(batch([part.wipc, part.wipc]))


# ---- FioExecutor._result with recorded output ------------------------------------------------------

JSONPLUS_STEPS = steps_of([Workload("rand", 65, 4 * KiB, 1, 8), Workload("rand", 100, 4 * KiB, 2, 4),
                           Workload("rand", 0, 4 * KiB, 1, 8)], [1.0, 1.0, 1.0])


def result(name: str, steps: list[Step], rc: int = 0, console: str = ""):
    b = batch(steps)
    b.output_path = FIO_FIXTURES / name
    text = (FIO_FIXTURES / name).read_text()
    return FioExecutor(binary="fio")._result(b, text, console, rc, 3.3, 1000.0)


def test_executor_reads_jsonplus_round():
    res = result("fio-3.33-jsonplus-3steps-loop.json", JSONPLUS_STEPS)
    assert res.tool_version == "fio-3.33"
    assert [m.jobname for m in res.measurements] == ["s0001", "s0002", "s0003"]
    assert res.measurements[1].read.iops == pytest.approx(44411.067194)
    # Without the gate's timestamps (recorded output), steps are placed back to back by fio's own
    # job_runtime (per clone: s0002 ran 2 clones, 2021 ms in all), ending at fio's end-of-run stamp.
    starts = [m.start_time for m in res.measurements]
    assert starts[1] - starts[0] == pytest.approx(1.005) and starts[2] - starts[1] == pytest.approx(1.0105)
    assert res.measurements[2].end_time == pytest.approx(1795345953.334)
    assert [t["fio_job_runtime_ms"] for t in res.timelines] == [1005, 1010.5, 1003]
    assert {t["source"] for t in res.timelines} == {"fio end of run"}
    assert res.warnings == []


def test_executor_turns_job_error_into_run_failed():
    step = JSONPLUS_STEPS[:1]
    with pytest.raises(RunFailed) as exc:
        result("fio-3.33-job-error22-stderr-preamble.out", step, rc=1)
    msg = str(exc.value)
    assert "err=22" in msg and "job 1m" in msg
    assert "\n" not in msg


def test_executor_refuses_a_result_count_mismatch():
    with pytest.raises(RunFailed, match="3 results for 2 steps"):
        result("fio-3.33-jsonplus-3steps-loop.json", JSONPLUS_STEPS[:2])


def test_executor_reports_fio_words_when_there_is_no_json(tmp_path):
    b = batch(JSONPLUS_STEPS)
    b.output_path = tmp_path / "round-001.json"
    with pytest.raises(RunFailed) as exc:
        FioExecutor(binary="fio")._result(b, "", "fio: failed to open /dev/loop9: Permission denied\n", 1,
                                          0.1, 1000.0)
    assert "fio: failed to open /dev/loop9: Permission denied" in str(exc.value)
    assert "exit 1" in str(exc.value)


def test_a_queue_depth_io_uring_would_round_up_runs_on_libaio():
    """fio 3.33's io_uring engine runs QD 6 at 8 (its ring's power of two, for the job's own depth):
    such a step's section takes libaio; a power of two keeps io_uring."""
    steps = [Step("dirth", "", "round", 1, i + 1, Workload("rand", 100, 4 * KiB, 4, qd), 1.0)
             for i, qd in enumerate((6, 8, 3, 1))]
    b = Batch(steps=steps, filename="/dev/loop9", area=Area(0, 200 * MiB), seed=1, ioengine="io_uring")
    text, _ = render_job_file(b)
    sections = text.split("\n[s")[1:]
    assert ["ioengine=libaio" in sec for sec in sections] == [True, False, True, False]
    assert "ioengine=libaio" not in render_job_file(batch(steps))[0].split("\n[s", 1)[1]  # libaio already
