"""Known errors, made in what ssdpts wrote: each returns a changed copy of a run (proofs.Run) as an
ssdpts with that error would have written it. The mutation checks in tests/refssd/ apply them and
expect the proof to fail. Errors in what ssdpts was asked to do (its inputs: run options, the job
files fio gets) are made in the tests themselves: a run without its purge, the Latency test at
QD 2 (a fio on the PATH that rewrites the job file), HIR idles cut by 20% (shorter PTS minutes)."""

from __future__ import annotations

import copy

from .proofs import Run


def _scale_keys(obj, key_part: str, k: float):
    """Every number (or list of numbers) under a key containing ``key_part``, times k."""
    if isinstance(obj, dict):
        for key, val in obj.items():
            if key_part in key and isinstance(val, (int, float)) and not isinstance(val, bool):
                obj[key] = val * k
            elif key_part in key and isinstance(val, list) and all(isinstance(x, (int, float)) for x in val):
                obj[key] = [x * k for x in val]
            else:
                _scale_keys(val, key_part, k)
    elif isinstance(obj, list):
        for x in obj:
            _scale_keys(x, key_part, k)


RATES = ("iops", "mb_per_s", "bw_bytes_per_s")


def scale_iops(run: Run, k: float = 0.97) -> Run:
    """Every rate ssdpts wrote (IOPS, MB/s, bandwidth; steps and summary), times k: a rate
    mis-measured by 1 - k."""
    r = copy.deepcopy(run)
    for key in RATES:
        for s in r.steps:
            _scale_keys(s["measurement"], key, k)
        _scale_keys(r.summary, key, k)
    for s in r.steps:  # a step whose rate is the device's (results/timing.py): its span 1/k as long
        dev = s.get("device") or {}
        if dev.get("first_issue_unix_s") is not None and dev.get("last_complete_unix_s") is not None:
            dev["last_complete_unix_s"] = dev["first_issue_unix_s"] + (dev["last_complete_unix_s"]
                                                                      - dev["first_issue_unix_s"]) / k
    return r


def misalign_samples(run: Run, test: str, part: str | None = None) -> Run:
    """Each step's measurement paired with the interval of the step before it (the first step's
    measurement dropped): ssdpts's samples misaligned by one step, its summary built from them."""
    r = copy.deepcopy(run)
    steps = r.of(test, part)
    for prev, cur in zip(steps, steps[1:]):
        cur["measurement_shifted"] = dict(prev["measurement"])
    for prev, cur in zip(steps, steps[1:]):
        times = {k: cur["measurement"][k] for k in ("start_time", "end_time")}
        cur["measurement"] = {**cur.pop("measurement_shifted"), **times}
    r.steps = [s for s in r.steps if s is not steps[0]]
    table = r.summary["parts"][test if not part else f"{test}-{part}"].get("table") or {}
    if isinstance(table.get("series"), list):  # a WSAT-like series: the same shift
        ser = table["series"]
        for prev, cur in zip(ser, ser[1:]):
            cur["shifted"] = {k: v for k, v in prev.items() if k != "minute"}
        for cur in ser[1:]:
            cur.update(cur.pop("shifted"))
        table["series"] = ser[1:]
        if "final_window_iops" in table:
            last = [x["iops"] for x in table["series"][-5:]]
            table["final_window_iops"] = sum(last) / len(last)
    return r


def shift_window(run: Run, part: str, rounds: int) -> Run:
    """The steady-state window ssdpts reports moved by ``rounds`` rounds (its values then those
    rounds' values): steady state declared a round early (-1) or late (+1)."""
    r = copy.deepcopy(run)
    ss = r.summary["parts"][part]["steady_state"]
    ss["window_rounds"] = [x + rounds for x in ss["window_rounds"]]
    for key in ("reached_round", "round"):
        if isinstance(ss.get(key), int):
            ss[key] += rounds
    return r
