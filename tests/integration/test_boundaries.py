"""Step boundaries on real devices, checked against the kernel's block tracepoints (a private ftrace
instance, engine/blocktrace.py), independently of what ssdpts records.

A LAT run (TC1/QD1) must never put a second IO on the device: no boundary overlaps, no IO is
issued while another is in flight. Every boundary's recorded idle stays within the limit plus
the measurement's resolution. The host itself can stall fio (other work starving it of CPU or
of disk for the programs it starts): the trace shows the stalls as idle periods inside steps,
and a probe beside the run times how long the host takes to start a shell (what fio does at
every boundary). When the host stalled so long that no schedule can hold the limit, recorded idle
is held to the median boundary plus twice that stall instead, and the test says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
import subprocess
import threading
import time

import numpy as np
import pytest

from ssdpts.results import steprecord
from ssdpts.engine import blocktrace as bt

from .conftest import ssdpts
from .test_run_devices import raw_jobs, run_dir_of, steps_of

pytestmark = pytest.mark.root


class SpawnProbe(threading.Thread):
    """Starts a shell every 50 ms (as fio does for a hook) and keeps the slowest start-to-exit."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop, self.worst_ms = threading.Event(), 0.0

    def run(self) -> None:
        while not self.stop.wait(0.05):
            t0 = time.monotonic()
            pid = os.posix_spawn("/bin/sh", ["sh", "-c", ":"], os.environ)
            os.waitpid(pid, 0)
            self.worst_ms = max(self.worst_ms, (time.monotonic() - t0) * 1000)


def trace_run(dev: str, tmp_path: Path, *args: str) -> tuple[Path, bt.TracedIOs, float, float]:
    try:
        tracer = bt.BlockTrace(dev, tmp_path / "trace.txt")
    except bt.TraceUnavailable as exc:
        pytest.skip(str(exc))
    out = tmp_path / "runs"
    offset_s = min(time.time() - time.monotonic() for _ in range(5))
    probe = SpawnProbe()
    try:
        with tracer:
            probe.start()
            r = ssdpts("run", "lat", "--target", dev, "--destroy-data-on", dev, "--out", str(out), "--quiet", *args)
    except bt.TraceUnavailable as exc:
        pytest.skip(str(exc))
    finally:
        probe.stop.set()
    assert r.returncode == 0, r.stderr
    return run_dir_of(out), tracer.ios(), offset_s, probe.worst_ms


def ios_from(ios: bt.TracedIOs, first: int) -> bt.TracedIOs:
    """The traced IOs from index ``first`` on, every field (offsets included) cut alike."""
    return bt.TracedIOs(**{f.name: None if getattr(ios, f.name) is None else getattr(ios, f.name)[first:]
                           for f in dataclasses.fields(ios)})


def stall_inside_steps_ms(ios: bt.TracedIOs, owner: np.ndarray) -> float:
    """The longest time, inside any step, that fio did not issue its next IO after the last one
    completed (QD1): the host stopping fio, seen by the kernel's trace."""
    idle_inside = bt.idle_before(ios)
    same = np.r_[False, (owner[1:] == owner[:-1]) & (owner[1:] >= 0)]
    return float(idle_inside[same].max()) if same.any() else 0.0


def allowed_idle_ms(idles_ms: list[float], stall_ms: float) -> float:
    """What a recorded boundary is held to: the limit plus the resolution, or, when the host stalled
    fio (or a shell) by stall_ms during the run, the median boundary plus twice that stall (a
    boundary waits for a shell to start and for one to end) when that is more. Continuous in the
    stall: a host that stalled fio by 9.8 ms cannot be held to 10 ms when one at 10.2 ms is allowed
    30 ms. On a calm host (stalls of 1-4 ms here) the limit itself applies."""
    return max(steprecord.IDLE_LIMIT_MS, float(np.median(idles_ms)) + 2 * stall_ms) + steprecord.RESOLUTION_MS


@pytest.mark.parametrize("kind", ["loop", pytest.param("zram", marks=pytest.mark.slow)])  # zram: make test-full
def test_lat_boundaries_at_the_block_layer(kind, make_loop, make_zram, tmp_path):
    dev = make_loop("192M") if kind == "loop" else make_zram(192 * 2**20)
    gates_before = set(Path("/tmp").glob("ssdpts-gate-*"))  # a dead run of someone else's is not ours to judge
    run, ios, offset_s, spawn_ms = trace_run(dev, tmp_path, "--step-seconds", "0.25", "--max-rounds", "5")
    steps = [s for s in steps_of(run) if s["phase"] == "round"]
    steps.sort(key=lambda s: (s["round"], s["index"]))
    summary = json.loads((run / "summary.json").read_text())
    per_round = 9 if kind == "loop" else 6  # zram has 4 KiB logical blocks: no 0.5 KiB steps
    assert len(steps) == per_round * summary["parts"]["lat"]["rounds_run"] >= 5 * per_round

    # the trace alone: each IO to a step by its size and direction, from the WIPC's last write on
    # (before it, the purge and the kernel's own probes of the new device read 4 and 8 KiB blocks)
    wipc = np.flatnonzero(ios.write & (ios.size_bytes >= 128 * 1024))
    assert len(wipc), "the WIPC's 128 KiB writes are in the trace"
    ios = ios_from(ios, wipc[-1])
    owner = bt.attribute(ios, [bt.StepShape.of(s["workload"]) for s in steps])
    owner[0] = -1  # the WIPC's last write itself
    spans = bt.step_spans(ios, owner, len(steps))
    assert all(sp is not None for sp in spans), "every step did IO"
    bounds = bt.boundaries(ios, owner, spans)
    assert len(bounds) == len(steps) - 1
    overlapping = [(steps[b.next]["round"], steps[b.next]["index"], b.overlap_ms) for b in bounds if b.overlap_ms > 0]
    assert overlapping == [], "a LAT step started while the previous one still had an IO in flight"
    busy = bt.issued_while_busy(ios)
    in_rounds = owner >= 0
    assert int((busy & in_rounds).sum()) == 0, "LAT IOs were issued at QD > 1"
    # every step draws its own LBAs: the same step of two rounds (the same job of two fio processes)
    # does not repeat the other's offsets (fio 3.33 did, in order, while randrepeat was left on)
    for i in range(per_round):
        offs = [ios.offset_bytes[owner == r * per_round + i] for r in range(2)]
        n = min(map(len, offs))
        same = float(np.mean(offs[0][:n] == offs[1][:n]))
        shared = len(np.intersect1d(offs[0], offs[1])) / len(np.unique(offs[0]))
        # two independent uniform draws share about 1 - exp(-draws / blocks) of their blocks
        chance = 1 - np.exp(-len(offs[1]) * steps[i]["workload"]["block_size_bytes"] / (192 * 2**20))
        assert same < 0.05 and shared < chance + 0.1, (
            f"step {i + 1} of rounds 1 and 2 used the same LBAs: {same:.0%} in the same order, {shared:.0%} shared "
            f"(independent draws: {chance:.0%}); {steps[i]['workload']}")
    first = steps[0]  # WIPC (QD32) -> round 1 too: the first LAT IO waits for the WIPC's last completion
    # the WIPC's writes only: after the run ssdpts reads what the device holds (device/contents.py)
    wipc_io = ~in_rounds & ios.write
    wipc_done = ios.complete_ns[wipc_io].max() if wipc_io.any() else 0
    assert spans[0][0] >= wipc_done, first["boundary"]

    # recorded boundaries: never an overlap; idle within the limit plus the resolution at every
    # boundary when the host ran fio and its hook shells promptly. A host that stalled them (seen
    # inside steps, or starting a shell beside the run) so long that the median boundary plus twice
    # that stall exceeds the limit is held to that instead (a boundary waits for a shell to start
    # and one to end: allowed_idle_ms), and the medians within and between rounds to the limit.
    host_stall_ms = max(stall_inside_steps_ms(ios, owner), spawn_ms)
    limit, res = steprecord.IDLE_LIMIT_MS, steprecord.RESOLUTION_MS
    recorded = [(s["round"], s["index"], s["boundary"]["kind"], s["boundary"]["idle_ms"], s["boundary"]["overlap_ms"])
                for s in steps]
    allowed = allowed_idle_ms([r[3] for r in recorded], host_stall_ms)
    calm = allowed <= limit + res
    assert all(o == 0 for *_, o in recorded), recorded
    over = [r for r in recorded if r[3] > allowed]
    assert not over, (f"recorded idle over {allowed:.1f} ms (limit {limit:g} ms; the host stalled fio or a shell "
                      f"by {host_stall_ms:.1f} ms during the run): {over}")
    for kind in ("step", "round"):
        med = float(np.median([r[3] for r in recorded if r[2] == kind]))
        assert med <= limit, f"median idle of the boundaries of kind {kind}: {med:.2f} ms"
    if not calm:
        print(f"the host stalled fio or a shell by {host_stall_ms:.1f} ms: boundaries held to {allowed:.1f} ms")

    # what ssdpts recorded agrees with the trace: starts precede the first IO by ~0.5 ms (fio starts the
    # job's clock after the hook's shell exits) and a step's end is fio's own. Between the two, fio sets
    # up the job: a host that stalled fio or a shell by more than 2 ms (seen above) may stall that too.
    d_start = [(s["start_time"] - offset_s) * 1e3 - sp[0] / 1e6 for s, sp in zip(steps, spans)]
    assert float(np.median(d_start)) == pytest.approx(-0.5, abs=2.0 if calm else max(2.0, host_stall_ms)), (
        f"the host stalled fio or a shell by {host_stall_ms:.1f} ms")

    # the summary's boundary figures are recomputable from steps.jsonl and fio's raw json+ (job_runtime)
    raw_cache: dict[str, list[dict]] = {}
    for prev, s in zip(steps, steps[1:]):
        rel = prev["fio_json"]
        raw_cache.setdefault(rel, raw_jobs(run, rel))
        job = raw_cache[rel][prev["fio_job_index"]]
        clones = prev["workload"]["threads"]
        end = prev["timeline"]["last_start_unix_s"] + job["job_runtime"] / clones / 1000.0
        end = min(end, prev["timeline"]["end_signal_unix_s"])
        assert s["boundary"]["recorded_gap_ms"] == pytest.approx((s["start_time"] - end) * 1000, abs=0.002)
        dev = s.get("device") or {}
        if dev.get("gap_ms") is not None:  # the device's view (engine/devtrace.py): its own two stamps
            assert s["boundary"]["gap_ms"] == dev["gap_ms"] == pytest.approx(
                (dev["first_issue_unix_s"] - dev["prev_last_complete_unix_s"]) * 1000, abs=0.002)
        else:
            assert s["boundary"]["gap_ms"] == s["boundary"]["recorded_gap_ms"]
    b = summary["parts"]["lat"]["boundaries"]
    within = [s["boundary"]["idle_ms"] for s in steps if s["boundary"]["kind"] == "step"]
    assert b["within_rounds"]["idle_ms"]["worst"] == pytest.approx(max(within), abs=1e-3)
    assert b["within_rounds"]["idle_ms"]["median"] == pytest.approx(float(np.median(within)), abs=1e-3)

    # the round started ahead after the last one was stopped, removed, and no gate left behind
    rounds = summary["parts"]["lat"]["rounds_run"]
    assert not (run / "fio" / "lat" / f"round-{rounds + 1:03d}.fio").exists()
    assert not [p for p in Path("/tmp").glob("ssdpts-gate-*") if p not in gates_before and _owner_gone(p)]


def _owner_gone(p: Path) -> bool:
    """A gate directory whose ssdpts process no longer exists (gate dirs are named by pid)."""
    try:
        pid = int(p.name.split("-")[2])
    except (IndexError, ValueError):
        return False
    return not os.path.exists(f"/proc/{pid}")


class PolicyProbe(threading.Thread):
    """Reads the scheduling policy of every task (process and thread) of every fio running a job
    file under ``root`` (this test's run: a shared host runs other fio beside it), every 50 ms: what
    --realtime promises is visible from outside."""

    def __init__(self, root: Path):
        super().__init__(daemon=True)
        self.stop, self.seen, self.root = threading.Event(), {}, str(root).encode()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            for stat in Path("/proc").glob("[0-9]*/comm"):
                try:
                    if stat.read_text().strip() != "fio":
                        continue
                    argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
                    if not any(a.endswith(b".fio") and a.startswith(self.root) for a in argv):
                        continue  # not this test's fio ('fio --version' before the run, another run's)
                    for task in (stat.parent / "task").iterdir():
                        self.seen[int(task.name)] = os.sched_getscheduler(int(task.name))
                except (OSError, ValueError):
                    continue


# In make test-full: one run in five here had a boundary at 12-17 ms although fio ran at SCHED_FIFO
# (the kernel's own work; the benchmark's figures are in docs/methodology.md), too often for CI.
@pytest.mark.slow
def test_realtime_holds_every_lat_boundary_to_the_limit_under_cpu_load(make_loop, tmp_path):
    """--realtime on a loaded host: two busy loops at normal priority (one per CPU of this 2-CPU
    machine; without --realtime such load stretched boundaries to 10-80 ms, docs/methodology.md)
    run beside a LAT run; fio runs at SCHED_FIFO, and every boundary — within and between
    rounds — is recorded within the limit plus the resolution (unless the trace shows the kernel
    itself holding fio longer inside a step), the medians within it, and the trace sees no LAT IO
    at QD > 1."""
    dev = make_loop("192M")
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)]
    policies = PolicyProbe(tmp_path)
    policies.start()
    try:
        run, ios, _offset, _spawn = trace_run(dev, tmp_path, "--step-seconds", "0.25", "--max-rounds", "5",
                                              "--realtime")
    finally:
        policies.stop.set()
        for p in loops:
            p.kill()
            p.wait()
    assert policies.seen and set(policies.seen.values()) == {os.SCHED_FIFO}, policies.seen
    man = json.loads((run / "manifest.json").read_text())
    assert man["run_spec"]["realtime"] is True
    steps = sorted((s for s in steps_of(run) if s["phase"] == "round"), key=lambda s: (s["round"], s["index"]))
    assert {"step", "round"} <= {s["boundary"]["kind"] for s in steps}  # and the WIPC -> round 1 one
    wipc = np.flatnonzero(ios.write & (ios.size_bytes >= 128 * 1024))
    ios = ios_from(ios, wipc[-1] + 1)
    owner = bt.attribute(ios, [bt.StepShape.of(s["workload"]) for s in steps])
    # the steps' IOs (at the run's end it reads what the device holds, device/contents.py: large
    # reads the kernel splits, several in flight, that are no step's)
    assert int((bt.issued_while_busy(ios) & (owner >= 0)).sum()) == 0, "LAT IOs were issued at QD > 1"
    # Every boundary within the limit plus the resolution. Real-time priority keeps normal tasks
    # from delaying fio, not the kernel: when the trace shows the kernel holding fio longer than
    # the limit inside a step (seen once in several runs here: the kernel's own work, or its
    # scheduler running starved normal tasks for a moment), a boundary is held to the median
    # boundary plus twice that stall instead (allowed_idle_ms, as in the test above), and the
    # test says so.
    limit, res = steprecord.IDLE_LIMIT_MS, steprecord.RESOLUTION_MS
    stall_ms = stall_inside_steps_ms(ios, owner)
    allowed = allowed_idle_ms([s["boundary"]["idle_ms"] for s in steps], stall_ms)
    over = [(s["round"], s["index"], s["boundary"]["idle_ms"]) for s in steps
            if s["boundary"]["idle_ms"] > allowed or s["boundary"]["overlap_ms"] > 0]
    assert not over, (f"boundaries over {allowed:.1f} ms (or overlapping) at real-time priority, the longest "
                      f"stall inside a step being {stall_ms:.1f} ms: {over}")
    for kind in ("step", "round"):
        assert float(np.median([s["boundary"]["idle_ms"] for s in steps if s["boundary"]["kind"] == kind])) <= limit
    if allowed > limit + res:
        print(f"the kernel held fio for {stall_ms:.1f} ms inside a step: boundaries held to {allowed:.1f} ms")
