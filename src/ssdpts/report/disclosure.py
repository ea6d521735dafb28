"""What the report header discloses besides the SNIA fields: the host tuning audit (docs/design.md#host-settings,
"synthetic" settings, `ssdpts doctor`) and the fio options that shape the results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..results.fiofiles import job_file, sections
from .doc import Alert, Cell, Para, Table

if TYPE_CHECKING:
    from .context import RunContext

# fio options worth a word: why each matters to the numbers (fio HOWTO)
WHY = {
    "direct": "O_DIRECT: no page cache between fio and the device",
    "ioengine": "how IOs are submitted (io_uring, libaio, …)",
    "thread": "fio jobs as threads of one process",
    "group_reporting": "one result per step over its TC threads",
    "norandommap": "random offsets may repeat (no coverage map): what a drive sees in service",
    "random_generator": "tausworthe64: a 64-bit RNG for LBAs on large devices (PTS: ≥ 48 bit)",
    "randrepeat": "off: every step's LBAs and data come from its own recorded randseed, not from its place in the job file",
    "iodepth_batch_submit": "IOs submitted per system call: batching lowers CPU cost per IO",
    "iodepth_batch_complete_max": "completions reaped per call",
    "fixedbufs": "io_uring pre-registered buffers: less CPU per IO",
    "registerfiles": "io_uring registered file: less CPU per IO",
    "lat_percentiles": "percentiles of total latency (submission + completion), the PTS response time",
    "clat_percentiles": "completion-latency percentiles off: the total latency is reported",
    "percentile_list": "the percentiles fio reports (ssdpts computes its own from the json+ histogram)",
    "clocksource": "the clock fio times IOs with",
    "exitall_on_error": "one failing job stops the round",
    "time_based": "each step runs for its runtime, whatever it writes",
    "numjobs": "TC: threads per step",
    "iodepth": "QD: outstanding IOs per thread",
}
PER_STEP = {"rw", "bs", "randseed", "startdelay", "runtime", "new_group", "rwmixread", "name", "filename",
            "offset", "size", "io_size", "numjobs", "iodepth"}


def fio_option_blocks(b: RunContext) -> list:
    """One table: every fio option of the run's job files that is the same for all steps ([global]
    and the options every step repeats), with the parts it applies to and why it matters."""
    seen: dict[tuple[str, str], list[str]] = {}
    found = False
    for pid, part in b.parts.items():
        recs = [r for r in b.records.get((part.test, part.part), []) if r.phase == "round" and r.fio_json]
        path = job_file(b.run_dir, recs[0].fio_json) if recs else None
        secs = sections(path)
        if not secs:
            continue
        found = True
        steps = [opts for name, opts, _ in secs if name != "global"]
        common = set(steps[0]) if steps else set()
        for opts in steps[1:]:
            common &= set(opts)
        glob = [o for name, opts, _ in secs if name == "global" for o in opts]
        for k, v in glob + sorted(o for o in common if o[0] not in PER_STEP or o[0] in ("numjobs", "iodepth")):
            if k in ("filename", "offset", "size"):
                continue
            seen.setdefault((k, "" if v is None else v), []).append(pid)
    if not found:
        why = ("the FakeExecutor wrote no fio job files" if b.man.executor == "fake"
               else "the run directory has no fio job files (fio/<part>/round-NNN.fio)")
        return [Para(f"fio options: not available: {why}.")]
    all_parts = list(b.parts)
    rows = []
    for (k, v), pids in seen.items():
        rows.append([Cell(k), Cell(v or "(set)"), Cell("all tests" if pids == all_parts else ", ".join(pids)),
                     Cell(WHY.get(k, ""))])
    return [Table("fio-options", "fio options that shape the results (from the job files of the first round)",
                  ["Option", "Value", "Applies to", "Why it matters"], rows, numeric=False,
                  note="Per-step options (rw, bs, runtime, startdelay, randseed) are in each cell's job section "
                       "(HTML: click a table value) and in fio/<part>/round-NNN.fio.")]


def audit_blocks(b: RunContext) -> list:
    """The host tuning audit recorded at the start of the run (device/host/audit.py)."""
    audit = b.man.audit if isinstance(b.man.audit, dict) else None
    checks = (audit or {}).get("checks") or []
    if not checks:
        return [Para("Host tuning audit: not available: the run directory records none (runs before the audit "
                     "was recorded, or 'ssdpts run' without it).")]
    rows = []
    for c in checks:
        ok = c.get("ok")
        rows.append([Cell(str(c.get("name", ""))), Cell(str(c.get("current", ""))), Cell(str(c.get("recommended", ""))),
                     Cell({True: "ok", False: "DIFFERS", None: "n/a"}.get(ok, "n/a"),
                          css={True: "ok", False: "bad"}.get(ok, "")),
                     Cell(str(c.get("fix_command", "")) if ok is False else "")])
    blocks: list = []
    differs = [str(c.get("name")) for c in checks if c.get("ok") is False]
    if differs:
        blocks.append(Alert("warn", "host settings differ from the recommended ones",
                            [f"{', '.join(differs)}: results may carry host effects (docs/doctor.md); see the table"]))
    blocks.append(Table("host-audit", f"Host tuning audit at {audit.get('audited_at', '?')} (ssdpts doctor)",
                        ["Setting", "Current", "Recommended", "Verdict", "Command to set it"], rows, numeric=False))
    return blocks
