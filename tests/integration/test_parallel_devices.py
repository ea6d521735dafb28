"""Many devices on one host (issue 17): 'ssdpts run --target A --target B ...' on zram devices with
real fio, time-compressed (0.05-s steps, TC 1 / QD 4, five rounds) to fit CI. Each device's run must
be the run a solo 'ssdpts run' makes; a fio killed on one device must leave the others complete; a
signal stops all, and 'resume' of the parent directory continues all; one unsafe target refuses
every target with nothing written."""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import time

import pytest

from ssdpts.results.verify import integrity

from .conftest import checksum, finished_steps, ssdpts, system_disk
from .test_run_devices import recompute_and_compare, steps_of

pytestmark = pytest.mark.root

FAST = ["--step-seconds", "0.05", "--threads", "1", "--iodepth", "4", "--max-rounds", "5"]
STEPS_PER_ROUND = 49  # IOPS: 7 R/W mixes x 7 block sizes


@pytest.fixture(autouse=True)
def _html_only(monkeypatch):
    # The PDF (one Chromium per device) would double these tests' time; the HTML report is drawn,
    # and a solo run under the same setting makes the same files.
    monkeypatch.setenv("SSDPTS_CHROMIUM", "ssdpts-test-no-chromium")


def _targets(devs: list[str]) -> list[str]:
    out = []
    for d in devs:
        out += ["--target", d, "--destroy-data-on", d]
    return out


def _run_dirs(out: Path) -> dict[str, Path]:
    """Run directories by the zram device they ran on."""
    return {json.loads((d / "manifest.json").read_text())["target"]["path"]: d
            for d in out.iterdir() if (d / "manifest.json").exists()}


def _wait(cond, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return
        if proc.poll() is not None:
            pytest.fail(f"ssdpts ended ({proc.returncode}) before {what}: {proc.stderr.read()}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def _rounds_done(run: Path) -> int:
    """Rounds recorded so far (read while the run appends; the manifest is written before
    steps.jsonl exists)."""
    return len({s["round"] for s in finished_steps(run / "steps.jsonl") if s["phase"] == "round"})


def assert_solo_shape(run: Path, dev: str) -> None:
    """What a solo run of IOPS makes: purge, WIPC, rounds 1..N each of every step once, the stop
    rule's verdicts, every value recomputable from fio's raw output, a report, and a manifest whose
    command line is the solo command of this device."""
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "complete"
    cmd = man["command_line"]
    assert cmd[:3] == ["ssdpts", "run", "iops"] and cmd.count("--target") == 1
    assert cmd[cmd.index("--target") + 1] == dev and "--events-fd" not in " ".join(cmd)
    assert man["parts"]["iops"]["purge"] and man["parts"]["iops"]["stop_reason"]
    steps = steps_of(run)
    assert [s["phase"] for s in steps].count("wipc") == 1
    rounds: dict[int, list[int]] = {}
    for s in steps:
        if s["phase"] == "round":
            rounds.setdefault(s["round"], []).append(s["index"])
    assert sorted(rounds) == list(range(1, len(rounds) + 1)) and len(rounds) >= 5
    assert all(sorted(ix) == list(range(1, STEPS_PER_ROUND + 1)) for ix in rounds.values())
    summary = json.loads((run / "summary.json").read_text())
    ss = summary["parts"]["iops"]["steady_state"]
    assert len(ss["variables"]) == 3 and all(isinstance(v["reached"], bool) for v in ss["variables"])
    recompute_and_compare(run)
    names = {p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()}
    assert {"manifest.json", "steps.jsonl", "summary.json", "report.html", "fio/iops/wipc.fio",
            "fio/iops/wipc.json", *(f"fio/iops/round-{r:03d}.json" for r in rounds)} <= names
    assert not integrity.check(run).problems


def test_four_zram_devices_in_parallel_one_fio_killed(make_zram, tmp_path):
    devs = [make_zram(64 * 2**20) for _ in range(4)]
    out = tmp_path / "runs"
    proc = subprocess.Popen(["ssdpts", "run", "iops", *_targets(devs), *FAST, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = devs[3]

    def victim_round_done() -> bool:
        runs = _run_dirs(out) if out.exists() else {}
        return victim in runs and _rounds_done(runs[victim]) >= 1

    _wait(victim_round_done, proc, f"a round on {victim}")
    vrun = _run_dirs(out)[victim]
    # a fio found may have ended before the kill (its step done, the next fio starting): look again
    # until one is killed
    killed = 0
    deadline = time.monotonic() + 30
    while not killed and time.monotonic() < deadline:
        for pid in subprocess.run(["pgrep", "-f", f"fio .*{vrun}/fio/"], capture_output=True, text=True).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        if not killed:
            time.sleep(0.05)
    assert killed, "no fio of the victim's run"
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stderr
    runs = _run_dirs(out)
    assert sorted(runs) == sorted(devs)
    for dev in devs[:3]:
        assert_solo_shape(runs[dev], dev)
        assert f"{os.path.basename(dev)}: complete, {runs[dev]}" in stdout
    man = json.loads((vrun / "manifest.json").read_text())
    assert man["status"] == "failed" and "fio" in man["error"]
    assert _rounds_done(vrun) >= 1 and not integrity.check(vrun).problems  # finished rounds kept
    assert f"continue with: ssdpts resume {vrun}" in stdout  # (resume of a parent directory: the next test)


def test_sigint_stops_every_device_and_resume_continues_all(make_zram, tmp_path):
    devs = [make_zram(64 * 2**20) for _ in range(2)]
    out = tmp_path / "runs"
    # LAT: 9 steps a round, the quickest test with rounds (the run path is the same as IOPS')
    pin = len(os.sched_getaffinity(0)) >= 2  # each device's fio on a CPU of its own
    # steps of 0.3 s: a round of the first device must not let it complete (5 rounds) before the
    # other's WIPC ends and its first round is saved (a loaded host, or both pinned to busy CPUs)
    slow = ["--step-seconds", "0.3", *FAST[2:]]
    proc = subprocess.Popen(["ssdpts", "run", "lat", *_targets(devs), *slow, "--out", str(out),
                             *(["--cpus-per-device", "1"] if pin else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def each_has_a_round() -> bool:
        runs = _run_dirs(out) if out.exists() else {}
        return len(runs) == 2 and all(_rounds_done(r) >= 1 for r in runs.values())

    _wait(each_has_a_round, proc, "a round on each device")
    proc.send_signal(signal.SIGINT)  # the supervisor only: it passes the signal on to each run
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    runs = _run_dirs(out)
    kept = {}
    for dev in devs:
        man = json.loads((runs[dev] / "manifest.json").read_text())
        assert man["status"] == "interrupted" and man["interruption"]["signal"] == "SIGINT"
        kept[dev] = _rounds_done(runs[dev])
        assert kept[dev] >= 1 and not integrity.check(runs[dev]).problems
    if pin:
        cpu = sorted(os.sched_getaffinity(0))
        for i, dev in enumerate(devs):
            man = json.loads((runs[dev] / "manifest.json").read_text())
            assert man["run_spec"]["cpus"] == str(cpu[i])
            assert f"cpus_allowed={cpu[i]}" in (runs[dev] / "fio" / "lat" / "round-001.fio").read_text().splitlines()
    r = ssdpts("resume", str(out), *[a for d in devs for a in ("--destroy-data-on", d)], "--keep-window",
               timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    for dev in devs:
        assert f"{os.path.basename(dev)}: complete, {runs[dev]}" in r.stdout
        man = json.loads((runs[dev] / "manifest.json").read_text())
        assert man["status"] == "complete" and len(man["resumptions"]) == 1
        assert _rounds_done(runs[dev]) >= kept[dev]


def test_one_unsafe_target_refuses_all_with_nothing_written(make_zram, tmp_path):
    devs = [make_zram(64 * 2**20) for _ in range(2)]
    for d in devs:  # recognisable content: any write would change the checksum
        with open(d, "r+b") as f:
            f.write(os.urandom(1 << 20))
    sums = {d: checksum(d) for d in devs}
    out = tmp_path / "runs"
    disk = system_disk()
    r = ssdpts("run", "iops", *_targets(devs), "--target", disk, "--destroy-data-on", disk, *FAST,
               "--out", str(out), timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and disk in lines[0], r.stderr
    assert not out.exists()
    assert {d: checksum(d) for d in devs} == sums
    # unconfirmed second device: refused by name, nothing written to the confirmed first one
    r = ssdpts("run", "iops", "--target", devs[0], "--destroy-data-on", devs[0], "--target", devs[1], *FAST,
               "--out", str(out), timeout=120)
    assert r.returncode == 2 and devs[1] in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists() and {d: checksum(d) for d in devs} == sums
    # more CPUs asked for than there are: refused in one line before anything starts
    many = str(len(os.sched_getaffinity(0)))
    r = ssdpts("run", "iops", *_targets(devs), "--cpus-per-device", many, *FAST, "--out", str(out), timeout=120)
    assert r.returncode == 2 and f"--cpus-per-device {many} needs" in r.stderr, r.stderr
    assert not out.exists() and {d: checksum(d) for d in devs} == sums
