"""A run's results as OCP Test & Validation (OCPTV) output, ``ssdpts report RUN --ocptv FILE``
(docs/report.md "OCPTV").

OCPTV output specification 2.0 (opencomputeproject/ocp-diag-core, json_spec/): one JSON object per
line (an "OutputArtifact", each with a ``sequenceNumber`` from 0 and a ``timestamp``), in order:

* ``schemaVersion`` 2.0;
* ``testRunStart``: ssdpts and its version, the command line, the run's settings as parameters, the
  device (``dutInfo``: its model, serial, vendor and firmware; fio and the host);
* per part of the run (a PTS test or one of its parts: "tp-128KiB", "ocp-idle-gc-measure"), one
  test step: ``testStepStart``; a ``measurement`` per value of the part's table (summary.json's
  cells, named by the test's cell label, the unit from results/registry.py), its steady-state
  verdict, and each datasheet figure of the part (report/datasheet.py, latency outliers included);
  a figure with a target (``--targets``) carries a ``validator`` (GREATER_THAN_OR_EQUAL or
  LESS_THAN_OR_EQUAL the limit) and is followed by a ``diagnosis`` with its outcome (PASS, FAIL, or
  UNKNOWN where the run has no value); the OCP tests' own limit (``--ocp-limit``, two-sided) on the
  change of each judged statistic over the pairs, its 95% interval in the measurement's metadata and
  the verdict as a diagnosis: PASS, FAIL, or UNKNOWN where it was inconclusive (pts/ocp.py);
  ``testStepEnd`` (COMPLETE; SKIP where no round finished, ERROR where the run stopped in it);
* a ``log`` (WARNING) per target whose test the run did not include;
* ``testRunEnd``: COMPLETE with FAIL where a diagnosis failed, NOT_APPLICABLE where an OCP verdict
  was inconclusive and none failed, else PASS; an interrupted or failed run ends ERROR /
  NOT_APPLICABLE (the specification's valid pairs).

Timestamps are the run's own (when each part's steps ran, as steps.jsonl recorded them), not when
this file was written, so the same run gives the same lines. Nothing here reads a JSON file: the
run comes through results/ as the report reads it (report/context.py).
"""

from __future__ import annotations

from datetime import datetime, timezone
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..pts.registry import cell_label
from ..results.reader import read_run_checked
from ..results.records import PartResult
from ..results.registry import unit_of
from .context import RunContext
from .datasheet import Figure, figure, figures, read_targets, value_of
from .files import write_atomic
from .pages import of as kind_of

SCHEMA_VERSION = {"major": 2, "minor": 0}
DUT = "dut"  # the hardwareInfoId of the device under test


def _time(t: float | str | None) -> str | None:
    """An OCPTV date-time (ISO 8601, UTC, microseconds, 'Z': one format, so that the strings sort
    as the times do) from Unix seconds or a recorded ISO string."""
    if isinstance(t, str):
        try:
            when = datetime.fromisoformat(t.replace("Z", "+00:00"))
        except ValueError:
            return None
        t = (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    """Without the fields that have no value (the schema types them as strings, not null)."""
    return {k: v for k, v in d.items() if v not in (None, "", [], {})}


def _value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


class _Out:
    """The artifacts in order, numbered; each stamped with the latest time seen so far (so that
    the timestamps never go back where a record lacks one)."""

    def __init__(self, start: str) -> None:
        self.lines: list[dict[str, Any]] = []
        self.now = start

    def emit(self, body: dict[str, Any], at: str | None = None) -> None:
        if at and at > self.now:
            self.now = at
        self.lines.append({"sequenceNumber": len(self.lines), "timestamp": self.now, **body})

    def step(self, sid: str, body: dict[str, Any], at: str | None = None) -> None:
        self.emit({"testStepArtifact": {"testStepId": sid, **body}}, at)


def dut_info(ctx: RunContext) -> dict[str, Any]:
    t = ctx.man.target
    ident = {k: ctx.target(k) for k in ("model", "serial", "vendor", "firmware")}
    hw = _clean({"hardwareInfoId": DUT, "name": ident["model"] or (t.name if t else None) or "device under test",
                 "serialNumber": ident["serial"], "manufacturer": ident["vendor"], "version": ident["firmware"],
                 "location": t.path if t else None, "partType": t.transport if t and t.transport else None})
    sw = [_clean({"softwareInfoId": "fio", "name": "fio", "version": ctx.man.fio_version,
                  "softwareType": "APPLICATION"})]
    if ident["firmware"]:
        sw.append({"softwareInfoId": "firmware", "name": "firmware", "version": str(ident["firmware"]),
                   "softwareType": "FIRMWARE"})
    host = ", ".join(str(ctx.host[k]) for k in ("hostname", "kernel", "cpu_model") if ctx.host.get(k))
    return _clean({"dutInfoId": str(ident["serial"] or (t.path if t else "") or ctx.test_id),
                   "name": hw["name"], "platformInfos": [{"info": host}] if host else [],
                   "softwareInfos": sw, "hardwareInfos": [hw]})


def _measurement(name: str, value: Any, unit: str = "", validators: list | None = None,
                 metadata: dict | None = None) -> dict[str, Any]:
    return {"measurement": _clean({"name": name, "value": value, "unit": unit, "hardwareInfoId": DUT,
                                   "validators": validators or [], "metadata": metadata or {}})}


def _diagnosis(verdict: str, kind: str, message: str) -> dict[str, Any]:
    return {"diagnosis": {"verdict": verdict, "type": kind, "message": message, "hardwareInfoId": DUT}}


def _checked(out: _Out, sid: str, name: str, value: float | None, unit: str, limit: float, higher: bool,
             what: str, at: str | None) -> str:
    """A measurement with its validator, then the diagnosis of its outcome; the outcome."""
    validator = {"name": f"{name} target", "type": "GREATER_THAN_OR_EQUAL" if higher else "LESS_THAN_OR_EQUAL",
                 "value": limit}
    if value is None:
        out.step(sid, _diagnosis(f"{name}-unknown", "UNKNOWN", f"{what}: no value in this run (target "
                                 f"{'≥' if higher else '≤'} {limit:g} {unit})".strip()), at)
        return "UNKNOWN"
    out.step(sid, _measurement(name, value, unit, [validator]), at)
    ok = value >= limit if higher else value <= limit
    kind = "PASS" if ok else "FAIL"
    out.step(sid, _diagnosis(f"{name}-{kind.lower()}", kind, f"{what}: {value:g} {unit}, target "
                             f"{'≥' if higher else '≤'} {limit:g} {unit}".replace("  ", " ")), at)
    return kind


def _part_step(out: _Out, ctx: RunContext, sid: str, part: PartResult, figs: list[Figure]) -> list[str]:
    """One part's test step; the outcomes of its validators."""
    recs = ctx.records.get((part.test, part.part), [])
    first = _time(min((r.measurement.start_time for r in recs), default=None))
    last = _time(max((r.measurement.end_time for r in recs), default=None))
    out.step(sid, {"testStepStart": {"name": f"{part.test}: {part.title or part.id}"}}, first)
    outcomes: list[str] = []
    tab = part.table
    for c in tab.cells() if tab is not None else ():
        v = _value(c.value)
        if v is None:
            continue
        out.step(sid, _measurement(f"{part.id}: {cell_label(part.test, c.metric, c.block_size_bytes, c.mix, c.point)} "
                                   f"[{c.metric}]", v, unit_of(c.metric),
                                   metadata=_clean({"part": part.id, "metric": c.metric, "mix": c.mix,
                                                    "block_size_bytes": c.block_size_bytes, "point": c.point})), last)
    if part.reached is not None:
        out.step(sid, _measurement(f"{part.id}: steady state reached", bool(part.reached),
                                   metadata={"window_rounds": list(part.window_rounds)}), last)
    kind = kind_of(part.test)
    if kind is not None:  # the kind's own validators and diagnoses (the OCP checks' verdicts)
        emit = SimpleNamespace(step=lambda artifact, at: out.step(sid, artifact, at), diagnosis=_diagnosis,
                               measurement=_measurement, clean=_clean)
        outcomes += kind.ocptv(emit, part, last)
    for f in figs:
        v, flag, _, window = value_of(ctx, f)
        t = (ctx.targets or {}).get(f.id)
        if t is not None:
            outcomes.append(_checked(out, sid, f.id, _value(v), f.unit, t.limit, t.better == "higher",
                                     f"{f.label} ({window}{'; ' + flag if flag else ''})", last))
        elif _value(v) is not None:
            out.step(sid, _measurement(f.id, v, f.unit, metadata=_clean({"label": f.label, "window": window,
                                                                         "note": flag})), last)
    status = "COMPLETE" if tab is not None else ("ERROR" if ctx.partial else "SKIP")
    out.step(sid, {"testStepEnd": {"status": status}}, last)
    return outcomes


def artifacts(ctx: RunContext) -> list[dict[str, Any]]:
    """The OCPTV output of a run, one dict per line."""
    out = _Out(_time(ctx.man.created) or _time(0.0) or "")
    out.emit({"schemaVersion": dict(SCHEMA_VERSION)})
    s = ctx.man.settings
    start = {"name": "ssdpts " + " ".join(s.tests), "version": ctx.man.ssdpts_version or "unknown",
             "commandLine": " ".join(ctx.man.command_line) or "ssdpts run " + " ".join(s.tests),
             "parameters": dict(s.doc), "dutInfo": dut_info(ctx),
             "metadata": _clean({"run_uid": ctx.test_id, "run_directory": ctx.run_dir.name,
                                 "pts_compliant": ctx.run.pts_compliant, "deviations": list(ctx.run.deviations),
                                 "executor": ctx.man.executor, "status": ctx.status})}
    out.emit({"testRunArtifact": {"testRunStart": start}})
    figs = figures(ctx)
    outcomes: list[str] = []
    for i, pid in enumerate(ctx.parts, start=1):
        outcomes += _part_step(out, ctx, str(i), ctx.parts[pid], [f for f in figs if f.part == pid])
    for fid, t in (ctx.targets or {}).items():
        f = figure(fid)
        if f is not None and f.part not in ctx.parts:
            out.emit({"testRunArtifact": {"log": {"severity": "WARNING", "message": (
                f"target {fid} ({'≥' if t.better == 'higher' else '≤'} {t.limit:g}): not measured, the run has no "
                f"part {f.part}")}}})
    if ctx.status != "complete":
        end = {"status": "ERROR", "result": "NOT_APPLICABLE"}
    else:
        # an OCP verdict that could not be decided is no pass (pts/ocp.py: inconclusive)
        result = "FAIL" if "FAIL" in outcomes else "NOT_APPLICABLE" if "INCONCLUSIVE" in outcomes else "PASS"
        end = {"status": "COMPLETE", "result": result}
    out.emit({"testRunArtifact": {"testRunEnd": end}}, _time(ctx.man.ended))
    return out.lines


def write(run_dir: Path | str, out: Path | str, targets: Path | str | None = None) -> Path:
    """Write the OCPTV JSON lines of a run directory to ``out``; the path written."""
    run, damage = read_run_checked(run_dir)
    ctx = RunContext(run, read_targets(targets) if targets else None, damage=damage)
    text = "".join(json.dumps(a, ensure_ascii=False, allow_nan=False) + "\n" for a in artifacts(ctx))
    path = Path(out)
    write_atomic(path, text.encode("utf-8"), "the OCPTV output")
    return path
