"""The drive's OCP latency monitor on the report (device/latmon.py, docs/ocp.md "Latency monitor"): per
test, the commands the drive counted in each bucket between its thresholds and the worst latency of
each command kind, as the drive measured them; on a drive without the monitor, one line saying why."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping

from ..context import RunContext
from ..doc import Alert, Cell, Section, Table

KINDS = (("read", "Reads"), ("write", "Writes"), ("deallocate", "Deallocations"))


def _record(ctx: RunContext, pid: str) -> Mapping[str, Any] | None:
    parts = ctx.man.doc.get("parts") or {}
    rec = (parts.get(pid) or {}).get("latency_monitor") if isinstance(parts, Mapping) else None
    return rec if isinstance(rec, Mapping) else None


def front_line(ctx: RunContext) -> Alert | None:
    """The one line of a run whose drive has no latency monitor (or that did not use it); None otherwise."""
    got = ctx.man.doc.get("latency_monitor")
    if isinstance(got, str):
        return Alert("info", f"latency monitor: {got}")
    return None


def stamp_text(st: Mapping[str, Any] | None) -> str:
    """A latency stamp: UTC when the host set the drive's clock (NVMe Timestamp origin 1), else the
    drive's own time (since its power-on or reset)."""
    if not st:
        return "—"
    ms = int(st.get("ms") or 0)
    if st.get("origin") == 1:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    return f"drive time {ms / 1000:,.3f} s (not set by the host)"


def _ranges(th: list) -> list[str]:
    return [f"{th[0]}–{th[1]} ms", f"{th[1]}–{th[2]} ms", f"{th[2]}–{th[3]} ms", f"above {th[3]} ms"]


def table(pid: str, title: str, rec: Mapping[str, Any]) -> Table | Alert:
    """The buckets of one test, or why there are none."""
    if rec.get("error"):
        return Alert("warn", f"latency monitor: {title}", [str(rec["error"])])
    counts = rec.get("counts")
    th = rec.get("thresholds_ms")
    if not isinstance(counts, Mapping) or not isinstance(th, list) or len(th) != 4:
        return Alert("warn", f"latency monitor: {title}", ["armed, not read: the test did not finish"])
    rows = []
    for b, rng in enumerate(_ranges(th)):
        row = [Cell(f"bucket {b}: {rng}")]
        for k, _ in KINDS:
            v = (counts.get(k) or [0, 0, 0, 0])[b]
            row.append(Cell(f"{v:,}", float(v), css="bad" if v else ""))
        rows.append(row)
    mode = rec.get("latency_mode") or "largest"
    worst = rec.get("worst") or {}
    row = [Cell(f"{'worst' if mode == 'largest' else 'first'} latency, ms")]
    when = []
    for k, label in KINDS:
        w = worst.get(k)
        row.append(Cell("—") if not w else Cell(f"{w['ms']:,}", float(w["ms"])))
        if w:
            when.append(f"{label.lower()}: {w['ms']} ms in bucket {w['bucket']} at {stamp_text(w.get('stamp'))}")
    rows.append(row)
    note = (f"The drive's own count (OCP Latency Monitor, log page C3h) of the commands slower than {th[0]} ms, armed "
            f"after the test's purge ({_utc(rec.get('armed_unix_s'))}) and read after its last round "
            f"({_utc(rec.get('read_unix_s'))}): its preconditioning and every round, with the drive's latency, not "
            f"fio's. Latency mode '{mode}': each bucket keeps its "
            f"{'largest' if mode == 'largest' else 'first'} latency. " + "; ".join(when))
    if rec.get("static_counts"):
        note += (f". {rec['static_counts']:,} of the commands were in the static buckets (the active window reached "
                 "its timer threshold during the test): counted here")
    if rec.get("session"):
        note += f". Armed again when session {rec['session']} (a resume) took the test up: counts from then on"
    return Table(f"{pid}-latmon", f"Latency monitor: {title}", ["Bucket", *[lab for _, lab in KINDS]], rows,
                 note=note + ".")


def _utc(t: Any) -> str:
    if not isinstance(t, (int, float)):
        return "—"
    return datetime.fromtimestamp(float(t), timezone.utc).strftime("%H:%M:%S UTC")


def sections(ctx: RunContext, pids: list[str]) -> list[Section]:
    """A subsection of the test with a table per part that recorded the monitor; none otherwise."""
    blocks: list = []
    for pid in pids:
        rec = _record(ctx, pid)
        if rec is not None:
            blocks.append(table(pid, ctx.parts[pid].title, rec))
    if not blocks:
        return []
    test = ctx.parts[pids[0]].test
    return [Section(f"{test}-latmon", "Drive latency monitor (OCP)", 3, test, blocks=blocks)]
