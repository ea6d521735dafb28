"""Integrity of a run directory: what each round wrote, recorded as it was written, checked later.

After every round (and every WIPC) the runner records in the manifest, under
``parts.<part>.rounds.<round>``, the raw files fio wrote (job file, json+, console log) with their
size and SHA-256, and the number of steps the round added to steps.jsonl (store.record_round). It
is recorded *before* the steps are appended: steps.jsonl stays the commit point, so a crash in
between leaves a recorded round without steps, which resume measures again
(store.forget_unbacked_rounds).

:func:`check` compares the directory with those records: a missing, truncated or altered raw file,
a round with fewer step lines than it wrote, a steps.jsonl cut off mid-line, a missing summary.
Each problem names the file and what it affects. ``ssdpts verify`` prints them; ``report``,
``compare`` and ``db add`` run the same check (a damaged complete run goes into the results library
marked ``damaged``, not as a valid run), and ``resume`` refuses to build on a damaged round.

For a run that is not complete, a round whose steps are missing or short is the round that was in
flight when the run stopped: resume measures it again, so that is noted, not a problem.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..store import STEPS, SUMMARY, RunStore, file_digest, steps_digest
from . import proof


@dataclass(frozen=True, slots=True)
class Problem:
    file: str  # relative to the run directory
    what: str  # "is missing", "was altered (SHA-256 differs)", ...
    affects: str  # "round 3 of lat (9 steps): ..."

    def line(self) -> str:
        return f"{self.file} {self.what}: {self.affects}"


@dataclass
class Result:
    run_dir: Path
    status: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files_checked: int = 0
    rounds_checked: int = 0
    steps: int = 0
    steps_proven: int = 0  # recomputed from fio's output and found equal
    repaired: list[dict] = field(default_factory=list)  # the steps, with fio's values where one was altered

    @property
    def intact(self) -> bool:
        return not self.problems

    def summary_line(self) -> str:
        if self.problems:
            n = len(self.problems)
            return f"{self.run_dir}: DAMAGED ({n} problem{'s' if n != 1 else ''})"
        return (f"{self.run_dir}: intact ({self.status}): {self.files_checked} raw files of {self.rounds_checked} "
                f"rounds match their recorded size and SHA-256; {self.steps} steps, {self.steps_proven} of them "
                "recomputed from fio's output")


def _json_of(rec: dict) -> str | None:
    return next((f for f in (rec.get("files") or {}) if f.endswith(".json")), None)


def _step_counts(steps: list[dict]) -> Counter:
    return Counter(s.get("fio_json") for s in steps)


def _what_round(pid: str, name: str, n: int | None) -> str:
    which = "the WIPC" if name == "wipc" else f"round {int(name.rsplit('-', 1)[1])}" if name.startswith("round-") else name
    steps = f" ({n} step{'s' if n != 1 else ''})" if n is not None else ""
    return f"{which} of {pid}{steps}"


def check(run_dir: str | Path, records: list[dict] | None = None) -> Result:
    """Check a run directory against its records (reads only). Raises UserError when it is not a
    readable run directory at all. ``records``: steps.jsonl as RunStore.steps() read it, when the
    caller has it already (a report reads the 10 MB of a long run once, not twice)."""
    run_dir = Path(run_dir)
    store = RunStore.open(run_dir)
    man = store.manifest()
    status = str(man.get("status"))
    complete = status == "complete"
    res = Result(run_dir=run_dir, status=status)

    raw = (run_dir / STEPS).read_bytes() if (run_dir / STEPS).exists() else None
    if raw is None:
        res.problems.append(Problem(STEPS, "is missing", "every measurement of the run"))
        steps: list[dict] = []
    else:
        try:
            steps = store.steps() if records is None else records
        except UserError as exc:
            res.problems.append(Problem(STEPS, "is corrupt", str(exc)))
            steps = []
        if raw and not raw.endswith(b"\n"):
            if complete:
                res.problems.append(Problem(STEPS, "ends in a cut-off line", "the steps after it are lost"))
            else:
                res.notes.append(f"{STEPS} ends in a cut-off line (the write in flight when the run stopped): "
                                 "resume drops it")
    res.steps = len(steps)
    counts = _step_counts(steps)

    recorded: set[str] = set()
    for pid, part in (man.get("parts") or {}).items():
        rounds = part.get("rounds") if isinstance(part, dict) else None
        if not isinstance(rounds, dict):
            continue
        last = list(rounds)[-1] if rounds else None  # the most recently recorded: the round in flight
        for name, rec in sorted(rounds.items(), key=lambda kv: (kv[0] != "wipc", kv[0])):
            if not isinstance(rec, dict):
                continue
            want = int(rec.get("steps", 0))
            js = _json_of(rec)
            got = counts.get(js, 0)
            what = _what_round(pid, name, want)
            recorded.update(rec.get("files") or {})
            if got < want and not complete:
                if name == last or got == 0:
                    res.notes.append(f"{what}: {got} of {want} steps saved, the round in flight when the run "
                                     "stopped: resume measures it again")
                    continue
            if got != want:
                res.problems.append(Problem(STEPS, f"has {got} of the {want} step lines of {_what_round(pid, name, None)}",
                                            "it was cut or edited: the results of that round are incomplete"))
            elif rec.get("steps_sha256") and steps_digest(_round_lines(steps, js)) != rec["steps_sha256"]:
                res.problems.append(Problem(STEPS, f"has altered step lines of {_what_round(pid, name, None)} (their "
                                            "SHA-256 differs from the one recorded when they were written)",
                                            "the results of that round"))
            res.rounds_checked += 1
            for rel, entry in sorted((rec.get("files") or {}).items()):
                res.files_checked += 1
                p = _file_problem(run_dir, rel, entry, what)
                if p:
                    res.problems.append(p)

    # Steps that point at raw files no round recorded (runs made before the records existed).
    unrecorded = sorted({f for f in counts if f and f not in recorded})
    if unrecorded:
        res.notes.append(f"{len(unrecorded)} raw files have no recorded checksum (made by an ssdpts without "
                         "integrity records): only their presence is checked")
        for rel in unrecorded:
            res.files_checked += 1
            if not (run_dir / rel).is_file():
                res.problems.append(Problem(rel, "is missing", f"{counts[rel]} steps cannot be recomputed from fio's output"))
    res.repaired = _prove_steps(res, run_dir, steps, {p.file for p in res.problems if p.file != STEPS})
    if (run_dir / SUMMARY).is_file() and man.get("kind") is None:
        _prove_summary(res, run_dir, man, res.repaired)
    elif complete and not (run_dir / SUMMARY).is_file():
        res.problems.append(Problem(SUMMARY, "is missing", "the run's verdicts and tables ('ssdpts report' recomputes them)"))
    return res


def _round_lines(steps: list[dict], js: str | None) -> list[dict]:
    return [s for s in steps if s.get("fio_json") == js]


def _prove_steps(res: Result, run_dir: Path, steps: list[dict], skip: set[str]) -> list[dict]:
    """Each step recomputed from its fio output (results/proof.py): a value that differs is a
    problem naming it. Returns the steps with fio's values in place of altered ones."""
    bad, res.steps_proven, fake = proof.check_steps(run_dir, steps, skip)
    if fake:
        res.notes.append(f"{fake} steps come from a model of a drive (engine/fake.py), not fio: nothing to recompute "
                         "them from")
    repaired = list(steps)
    for sc in bad:
        shown = "; ".join(d.text("fio's output") for d in sc.diffs[:3]) + (
            f" (and {len(sc.diffs) - 3} more)" if len(sc.diffs) > 3 else "")
        res.problems.append(Problem(f"{STEPS} line {sc.line}", f"does not match fio's output ({shown})",
                                    f"{proof.describe_step(sc.record)}, and every table, plot and verdict that uses it "
                                    "(reports show the values fio's output gives)"))
        if sc.recomputed is not None:
            repaired[sc.line - 1] = {**sc.record, "measurement": sc.recomputed}
    return repaired


def _prove_summary(res: Result, run_dir: Path, man: dict, steps: list[dict]) -> None:
    """summary.json against its recorded checksum and against what its steps give. A summary altered
    after ssdpts wrote it (its checksum differs) must be what its steps give, or it is damage; one
    as ssdpts wrote it may still differ from what this ssdpts's analysis makes of the steps (written
    by another version, or when the run stopped and before resume dropped the round in flight),
    and one made before checksums were recorded may come from an older analysis: those differences
    are notes."""
    from ..store import read_json

    altered = proof.summary_altered(run_dir, man)
    try:
        diffs, _again = proof.summary_differences(man, read_json(run_dir / SUMMARY, "run summary"), steps)
    except (UserError, KeyError, TypeError, ValueError) as exc:
        res.problems.append(Problem(SUMMARY, "cannot be recomputed from its steps", str(exc)))
        return
    shown = "; ".join(d.text("its steps") for d in diffs[:3]) + (f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else "")
    if diffs and altered:
        res.problems.append(Problem(SUMMARY, f"was altered after ssdpts wrote it ({shown})",
                                    "the run's verdicts and tables: readers use the results recomputed from the steps"))
    elif diffs and altered is None:
        res.notes.append(f"{SUMMARY} has no recorded checksum (made by an older ssdpts) and {len(diffs)} of its "
                         f"values differ from what today's analysis makes of its steps ({shown}): it is read as written")
    elif diffs and man.get("status") == "complete":
        # as ssdpts wrote it (its checksum), from steps proven by fio's output: an analysis other than
        # today's wrote it (an ssdpts before or after this one), not an edit
        res.notes.append(f"{SUMMARY} is as ssdpts wrote it, and {len(diffs)} of its values differ from what this "
                         f"ssdpts's analysis makes of its steps ({shown}): it is read as written")
    elif diffs:
        res.notes.append(f"{SUMMARY} was written when the run stopped and its steps have changed since (resume drops "
                         f"the round in flight): 'ssdpts resume' writes it anew ({shown})")
    elif altered:
        res.notes.append(f"{SUMMARY} differs from the checksum recorded when it was written, but every value in it "
                         "is what its steps give")
    elif altered is None:
        res.notes.append(f"{SUMMARY} has no recorded checksum (made by an older ssdpts): every value in it is what "
                         "its steps give")


def _file_problem(run_dir: Path, rel: str, entry: dict, what: str) -> Problem | None:
    path = run_dir / rel
    kind = Path(rel).suffix
    role = {".json": "fio's output", ".fio": "the job file", ".log": "fio's console log"}.get(kind, "a raw file")
    affects = f"{role} of {what}" + (": its numbers cannot be recomputed" if kind == ".json" else "")
    if not path.is_file():
        return Problem(rel, "is missing", affects)
    now = file_digest(path)
    if now["bytes"] < entry.get("bytes", 0):
        return Problem(rel, f"is truncated ({now['bytes']} of {entry['bytes']} bytes)", affects)
    if now != {"bytes": entry.get("bytes"), "sha256": entry.get("sha256")}:
        return Problem(rel, "was altered (its SHA-256 differs from the one recorded)", affects)
    return None


def describe(problems: list[Problem], run_dir: Path, limit: int = 1) -> str:
    """One line for a refusal: the first problem(s) and where to see all."""
    head = "; ".join(p.line() for p in problems[:limit])
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return f"{head}{more}: see 'ssdpts verify {run_dir}'"


def to_json(res: Result) -> str:
    return json.dumps({"run_dir": str(res.run_dir), "status": res.status, "intact": res.intact,
                       "problems": [{"file": p.file, "what": p.what, "affects": p.affects} for p in res.problems],
                       "notes": res.notes, "files_checked": res.files_checked, "rounds_checked": res.rounds_checked,
                       "steps": res.steps, "steps_proven": res.steps_proven}, indent=1)
