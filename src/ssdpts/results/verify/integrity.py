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

What covers the records themselves (results/seal.py): in a run of the current format (manifest.json
has ``integrity``) every field of the manifest matches the digest the store wrote with it, a record
the run always writes is never missing, and a seal made with the lab's key matches when that key is
given. Whatever the format, a complete run's steps end where each part's stop rule ends it, with no
round missing between: rounds removed whole (raw files, step lines and record) are named too.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UserError
from ...store import MANIFEST, STEPS, SUMMARY, RunStore, file_digest, steps_digest
from .. import seal
from ..records import Manifest, Summary
from ..seal import FileDigest
from ..steprecord import StepRecord, read_steps
from . import proof

CONFIGURED = "configured"  # check(key=...): the key $SSDPTS_SEAL_KEY names, if any


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
    repaired: list[StepRecord] = field(default_factory=list)  # the steps, with fio's values where one was altered
    version: int | None = None  # integrity records version (results/seal.py); None: an older run directory
    seal_check: seal.SealCheck | None = None
    manifest: Manifest = field(default_factory=lambda: Manifest.from_dict({}))  # manifest.json as read
    hashes: dict[str, str] = field(default_factory=dict)  # SHA-256 of the files read, by relative path

    @property
    def intact(self) -> bool:
        return not self.problems

    def summary_line(self) -> str:
        if self.problems:
            n = len(self.problems)
            return f"{self.run_dir}: DAMAGED ({n} problem{'s' if n != 1 else ''})"
        line = (f"{self.run_dir}: intact ({self.status}): {self.files_checked} raw files of {self.rounds_checked} "
                f"rounds match their recorded size and SHA-256; {self.steps} steps, {self.steps_proven} of them "
                "recomputed from fio's output")
        if self.version is None:
            return line + "; made before integrity records (an older ssdpts): nothing covers manifest.json"
        sealed = self.seal_check.text if self.seal_check and self.seal_check.state != "unchecked" else \
            "sealed, the seal not checked (see the note)"
        return f"{line}; every field of manifest.json matches its digest; {sealed}"

    def digests(self) -> dict[str, str]:
        """Everything the run directory records, by name (results/seal.py directory_digests): what the
        results library keeps of a run when it is added, to name any later edit."""
        return seal.directory_digests(self.run_dir, self.manifest.doc, self.hashes)


def _step_counts(steps: list[StepRecord]) -> Counter:
    return Counter(s.fio_json for s in steps)


def _what_round(pid: str, name: str, n: int | None) -> str:
    which = "the WIPC" if name == "wipc" else f"round {int(name.rsplit('-', 1)[1])}" if name.startswith("round-") else name
    steps = f" ({n} step{'s' if n != 1 else ''})" if n is not None else ""
    return f"{which} of {pid}{steps}"


def check(run_dir: str | Path, records: list[StepRecord] | None = None, *, key: seal.Key | None | str = CONFIGURED) -> Result:
    """Check a run directory against its records (reads only). Raises UserError when it is not a
    readable run directory at all, or is of a newer integrity version. ``records``: steps.jsonl as
    steprecord.read_steps read it, when the caller has it already (a report reads the 10 MB of a long run
    once, not twice). ``key``: the seal key to check a seal with (default: $SSDPTS_SEAL_KEY's)."""
    run_dir = Path(run_dir)
    store = RunStore.open(run_dir)
    man = store.manifest()
    status = str(man.doc.get("status"))
    complete = status == "complete"
    version = seal.version_of(man.doc)
    if version is not None and version > seal.VERSION:
        raise UserError(f"{run_dir / MANIFEST} has integrity records version {version}, newer than this ssdpts "
                        f"checks ({seal.VERSION}): use a matching ssdpts version to verify it")
    res = Result(run_dir=run_dir, status=status, version=version, manifest=man)

    raw = (run_dir / STEPS).read_bytes() if (run_dir / STEPS).exists() else None
    if raw is None:
        res.problems.append(Problem(STEPS, "is missing", "every measurement of the run"))
        steps: list[StepRecord] = []
    else:
        try:
            steps = read_steps(store) if records is None else records
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

    recorded = _check_rounds(res, man, steps, counts)

    # Steps that point at raw files no round recorded (runs made before the records existed).
    unrecorded = sorted({f for f in counts if f and f not in recorded})
    if unrecorded and version is not None:
        res.problems.append(Problem(MANIFEST, f"records no round for {len(unrecorded)} raw files that steps.jsonl "
                                    f"names ({unrecorded[0]}{', ...' if len(unrecorded) > 1 else ''}), though a run "
                                    "of this format records every round", "the steps of those rounds: their records "
                                    "were removed, or the steps were added"))
    elif unrecorded:
        res.notes.append(f"{len(unrecorded)} raw files have no recorded checksum (made by an ssdpts without "
                         "integrity records): only their presence is checked")
    for rel in unrecorded:
        res.files_checked += 1
        if not (run_dir / rel).is_file():
            res.problems.append(Problem(rel, "is missing", f"{counts[rel]} steps cannot be recomputed from fio's output"))
    res.repaired = _prove_steps(res, run_dir, steps, {p.file for p in res.problems if p.file != STEPS})
    if man.kind is None:
        _prove_summary(res, run_dir, man, res.repaired, key)
    elif complete and not (run_dir / SUMMARY).is_file():
        res.problems.append(Problem(SUMMARY, "is missing", "the run's status and deviations"))
    if version is not None:
        _check_manifest(res, man, key)
    return res


# What each manifest field holds, for the problem that names an edit of it (docs/results-format.md).
_FIELD_AFFECTS = {
    "target": "which drive the run measured (model, serial, firmware, capacity)",
    "fingerprint": "the identity resume proves the drive by", "device": "what the drive reported about itself",
    "run_spec": "how the run was set up (profile, step length, rounds, ...)",
    "pts_compliant": "whether the run is PTS compliant", "deviations": "the departures from the PTS it discloses",
    "confirmation": "which device the user confirmed for destruction",
    "summary_file": "summary.json's checksum", "status": "whether the run completed",
}


def _affects(name: str) -> str:
    if name.startswith("parts."):
        return f"the records of {name[6:]}: its purge, its rounds' raw files and step lines, its stop"
    return _FIELD_AFFECTS.get(name, "what it records")


def _check_manifest(res: Result, man: Manifest, key) -> None:
    """Every field against its digest, and the seal (results/seal.py): of manifest.json as recorded."""
    for name, how in seal.manifest_changes(man.doc):
        res.problems.append(Problem(MANIFEST, f"{name} {how} after ssdpts wrote it (its SHA-256 is not the digest "
                                    "recorded with the manifest)", _affects(name)))
    res.seal_check = seal.check_seal(man.doc, seal.configured_key() if key == CONFIGURED else key)
    if res.seal_check.state == "broken":
        res.problems.append(Problem(MANIFEST, res.seal_check.text, "everything the run records: it was changed after "
                                    "ssdpts sealed it (when its digests were recomputed too, only the seal shows it)"))
    elif res.seal_check.state == "unchecked":
        res.notes.append(res.seal_check.text)


def _check_rounds(res: Result, man: Manifest, steps: list[StepRecord], counts: Counter) -> set[str]:
    """Each recorded round against steps.jsonl and its raw files; returns the raw files recorded."""
    complete, version = res.status == "complete", res.version
    recorded: set[str] = set()
    for pid, part in man.parts.items():
        rounds = part.rounds
        if rounds is None:
            continue
        last = list(rounds)[-1] if rounds else None  # the most recently recorded: the round in flight
        for name, rec in sorted(rounds.items(), key=lambda kv: (kv[0] != "wipc", kv[0])):
            want = rec.steps
            js = rec.fio_json
            got = counts.get(js, 0)
            what = _what_round(pid, name, want)
            recorded.update(rec.files)
            if got < want and not complete:
                if name == last or got == 0:
                    res.notes.append(f"{what}: {got} of {want} steps saved, the round in flight when the run "
                                     "stopped: resume measures it again")
                    continue
            if got != want:
                res.problems.append(Problem(STEPS, f"has {got} of the {want} step lines of {_what_round(pid, name, None)}",
                                            "it was cut or edited: the results of that round are incomplete"))
            elif rec.steps_sha256 and steps_digest(_round_lines(steps, js)) != rec.steps_sha256:
                res.problems.append(Problem(STEPS, f"has altered step lines of {_what_round(pid, name, None)} (their "
                                            "SHA-256 differs from the one recorded when they were written)",
                                            "the results of that round"))
            elif not rec.steps_sha256 and version is not None:
                res.problems.append(Problem(MANIFEST, f"has no checksum of the step lines of {_what_round(pid, name, None)}"
                                            ", which a run of this format records with every round (it was removed)",
                                            "the results of that round cannot be told from edited ones"))
            res.rounds_checked += 1
            for rel, entry in sorted(rec.files.items()):
                res.files_checked += 1
                p = _file_problem(res, rel, entry, what)
                if p:
                    res.problems.append(p)
    return recorded


def _round_lines(steps: list[StepRecord], js: str | None) -> list[StepRecord]:
    return [s for s in steps if s.fio_json == js]


def _prove_steps(res: Result, run_dir: Path, steps: list[StepRecord], skip: set[str]) -> list[StepRecord]:
    """Each step recomputed from its fio output (results/verify/proof.py): a value that differs is a
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
            repaired[sc.line - 1] = sc.record.with_fio_measurement(sc.recomputed)
    return repaired


def _prove_summary(res: Result, run_dir: Path, man: Manifest, steps: list[StepRecord], key) -> None:
    """summary.json against its recorded checksum and against what its steps give, and a complete
    run's parts against their stop rules. A summary altered after ssdpts wrote it, or whose record
    is missing or uncovered, must be what its steps give, or it is damage; one proven by the records
    may still differ from what this ssdpts's analysis makes of the steps (written by another
    version, or when the run stopped and before resume dropped the round in flight), and one made
    before checksums were recorded may come from an older analysis: those differences are notes
    (readers present what the steps give, results/verify/proof.py trusted_summary)."""
    from ...store import read_json

    present = (run_dir / SUMMARY).is_file()
    complete = man.status == "complete"
    if not present:
        if complete or man.summary_file is not None:
            res.problems.append(Problem(SUMMARY, "is missing", "the run's verdicts and tables ('ssdpts report' "
                                        "recomputes them)"))
        if not complete:
            return
    state = proof.summary_state(run_dir, man, seal.configured_key() if key == CONFIGURED else key)
    try:
        summary = read_json(run_dir / SUMMARY, "run summary") if present else {"status": "complete"}
        diffs, again = proof.summary_differences(man, summary, steps)
    except (UserError, KeyError, TypeError, ValueError) as exc:
        res.problems.append(Problem(SUMMARY, "cannot be recomputed from its steps", str(exc)))
        return
    if complete:
        _prove_finished(res, Summary.from_dict(again), steps)
    if not present:
        return
    shown = "; ".join(d.text("its steps") for d in diffs[:3]) + (f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else "")
    uses = "readers use the results recomputed from the steps"
    if state == proof.UNRECORDED:
        res.problems.append(Problem(SUMMARY, "has no recorded checksum (summary_file), which ssdpts records with "
                                    "every summary it writes in a run of this format: the record was removed"
                                    + (f", and its values differ from what its steps give ({shown})" if diffs else ""),
                                    f"the run's verdicts and tables: {uses}"))
    elif diffs and state == proof.ALTERED:
        res.problems.append(Problem(SUMMARY, f"was altered after ssdpts wrote it ({shown})", f"the run's verdicts and "
                                    f"tables: {uses}"))
    elif diffs and state == proof.UNCOVERED:
        res.problems.append(Problem(SUMMARY, f"differs from what its steps give ({shown}), and its checksum record in "
                                    "manifest.json was edited", f"the run's verdicts and tables: {uses}"))
    elif diffs and state == proof.OLDER:
        res.notes.append(f"{SUMMARY} has no recorded checksum (made by an older ssdpts) and {len(diffs)} of its "
                         f"values differ from what today's analysis makes of its steps ({shown}): it is read as written")
    elif diffs and complete:
        # as ssdpts wrote it (its checksum, in a manifest that matches its digests), from steps proven
        # by fio's output: an analysis other than today's wrote it (an ssdpts before or after this one)
        res.notes.append(f"{SUMMARY} is as ssdpts wrote it, and {len(diffs)} of its values differ from what this "
                         f"ssdpts's analysis makes of its steps ({shown}): it is read as written")
    elif diffs:
        res.notes.append(f"{SUMMARY} was written when the run stopped and its steps have changed since (resume drops "
                         f"the round in flight): 'ssdpts resume' writes it anew ({shown})")
    elif state == proof.ALTERED:
        res.notes.append(f"{SUMMARY} differs from the checksum recorded when it was written, but every value in it "
                         "is what its steps give")
    elif state == proof.OLDER:
        res.notes.append(f"{SUMMARY} has no recorded checksum (made by an older ssdpts): every value in it is what "
                         "its steps give")


def _prove_finished(res: Result, again: Summary, steps: list[StepRecord]) -> None:
    """A complete run's steps end where each part's stop rule ends it, with every round from the
    first to the last: otherwise rounds were removed (their raw files, step lines and records
    together, which no checksum of theirs can show)."""
    for pid, part in again.parts.items():
        mine = [s for s in steps if s.phase == "round" and _pid(s) == pid]
        ran = sorted({s.round for s in mine})
        missing = sorted(set(range(1, ran[-1] + 1)) - set(ran)) if ran else []
        if missing:
            res.problems.append(Problem(STEPS, f"has no round {', '.join(map(str, missing[:5]))} of {pid} between its "
                                        f"rounds 1 and {ran[-1]}", f"the results of {pid}: rounds were removed"))
        if part.stop_reason is None:
            last = f"ends at round {ran[-1]}" if ran else "has no round"
            if part.samples is not None:
                why = f"{part.samples} samples: neither its time limit nor its capacity written"
            elif part.steady_state is None:
                why = f"{len(ran)} rounds of a fixed plan of more"
            else:
                limit = part.round_limit
                why = "steady state not reached" + (f", {len(ran)} of at most {limit} rounds" if limit else "")
            res.problems.append(Problem(STEPS, f"{last} of {pid}, where its stop rule does not end it ({why}), yet the "
                                        "run is complete", f"the results of {pid}: its later rounds were removed"))


def _pid(step: StepRecord) -> str:
    return step.test + (f"-{step.part}" if step.part else "")


def _file_problem(res: Result, rel: str, entry: FileDigest, what: str) -> Problem | None:
    path = res.run_dir / rel
    kind = Path(rel).suffix
    role = {".json": "fio's output", ".fio": "the job file", ".log": "fio's console log"}.get(kind, "a raw file")
    affects = f"{role} of {what}" + (": its numbers cannot be recomputed" if kind == ".json" else "")
    if not path.is_file():
        return Problem(rel, "is missing", affects)
    now = file_digest(path)
    res.hashes[rel] = str(now.sha256)
    if (now.bytes or 0) < (entry.bytes or 0):
        return Problem(rel, f"is truncated ({now.bytes} of {entry.bytes} bytes)", affects)
    if now != entry:
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
                       "steps": res.steps, "steps_proven": res.steps_proven, "integrity_version": res.version,
                       "seal": res.seal_check.state if res.seal_check else None}, indent=1)
