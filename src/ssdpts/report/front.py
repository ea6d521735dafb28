"""The front matter of a run's report: the banners (partial run, PTS compliance, notices), the
SNIA header block's fields (docs/pts-reference.md#report-header: administrative, platform, device), the verdicts with the
steady state of every tracking variable, and the report header section."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..pts.registry import title as test_title
from ..pts.runspec import not_compliant
from ..pts.steady_state import SteadyState
from . import disclosure
from .context import RunContext
from .doc import Alert, Cell, Fields, Para, Section, Table
from .fmt import NA, fmt_bytes10, fmt_rounds, fmt_time, fmt_value, na
from .pages import of


def partial_alert(ctx: RunContext) -> Alert | None:
    if not ctx.partial:
        return None
    items = [f"run status: {ctx.status}"]
    if ctx.man.error:
        items.append(f"error: {ctx.man.error}")
    if ctx.status == "running":
        items.append("the run directory says 'running': the run is still going, or its process died without "
                     "recording why")
    items.append("results cover only the rounds finished before the run stopped; tests not reached are "
                 "marked 'not run'")
    items.append(f"continue the run with: ssdpts resume {ctx.run_dir}")
    return Alert("bad", "PARTIAL REPORT — the run did not complete", items)


def compliance_alert(ctx: RunContext) -> Alert | None:
    devs = list(ctx.run.deviations)
    extra = []
    purges = {p.purge.disclosure for p in ctx.man.parts.values()
              if p.purge is not None and p.purge.is_pts_purge is False}
    for d in sorted(x for x in purges if x):
        if not any(d in dev for dev in devs):  # runs from before purges were listed as deviations
            extra.append(f"purge: {d}")
    b = ctx.run.summary.boundaries or {}
    if b.get("over_limit"):  # the PTS: no delay between steps; the device saw one
        by = "the device's view (block layer)" if "block layer" in str(b.get("source") or "") else "fio's timeline"
        extra.append(f"{b['over_limit']} step boundar{'y' if b['over_limit'] == 1 else 'ies'} over the limits by "
                     f"{by} (worst idle {b.get('worst_idle_ms', 0):.1f} ms, limit {b.get('idle_limit_ms', 10):g} ms): "
                     "see Step boundaries")
    if not devs and not extra:
        return None
    return Alert("warn", not_compliant(devs), devs + extra)


def description_fields(ctx: RunContext) -> list[tuple[str, str]]:
    """Every field of the --describe file, nested tables as dotted names: what no tool could
    read from the device, as the operator supplied it."""
    out: list[tuple[str, str]] = []

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else str(k), x)
        elif v is not None:
            out.append((prefix, ", ".join(map(str, v)) if isinstance(v, list) else str(v)))

    walk("", ctx.description())
    return out


def notices(ctx: RunContext) -> list[Alert]:
    out = []
    if ctx.damage:
        out.append(Alert("bad", "DAMAGED run directory: files differ from what the run recorded "
                                "(ssdpts verify)", list(ctx.damage)))
    desc = ctx.description()
    if desc.get("simulated"):
        # A simulated drive cannot say so through the block device: the description file does.
        out.append(Alert("warn", "simulated device under test", [
            str(desc.get("notes") or "the description file says the device under test is simulated"),
            "its parameters, from the description file, are under 'Device description' in the report header"]))
    if ctx.man.executor == "fake":
        out.append(Alert("info", "synthetic data", [
            "the measurements come from ssdpts' FakeExecutor (a model of a drive), not from fio on a device"]))
    if ctx.notes:
        out.append(Alert("info", "note", list(ctx.notes)))
    rates = timing_alert(ctx)
    if rates is not None:
        out.append(rates)
    return out


def timing_alert(ctx: RunContext) -> Alert | None:
    """Each step's rate against the block layer's span of its IO (docs/methodology.md "Rates as the
    device did them"): what was recomputed, marked or could not be checked, said once."""
    t = ctx.run.summary.timing
    if not t or ctx.man.executor == "fake" or not t.get("steps"):
        return None
    items = []
    if t.get("recomputed"):
        items.append(f"{t['recomputed']} of {t['steps']} steps ran over a span at the block layer more than "
                     f"{t['tolerance_pct']:g}% from fio's run time (at most {t.get('worst_differs_pct') or 0:.1f}%, "
                     "a busy host): their IOPS and bandwidth are fio's IO count and bytes over the device's span")
    if t.get("marked"):
        items.append(f"{t['marked']} steps are marked: the boundary into them was over the PTS's no-delay limits "
                     "(see Step boundaries); the figures they enter carry the mark")
    if t.get("unchecked"):
        items.append(f"{t['unchecked']} of {t['steps']} steps' rates are fio's, not checked against the block "
                     f"layer: {'; '.join(t.get('unchecked_why') or ['not recorded'])}")
    if not items:
        return Alert("ok", "rates as the device did them", [
            f"every step's run time agrees with the block layer's span of its IO within {t['tolerance_pct']:g}% "
            f"(at most {t.get('worst_differs_pct') or 0:.2f}%)"])
    return Alert("warn", "rates as the device did them", items)


# ---- header block (docs/pts-reference.md#report-header) ------------------------------------------------------------------------

def admin_fields(ctx: RunContext, tests: list[str]) -> list[tuple[str, str]]:
    pts = ctx.spec.pts_version or NA
    prof = ctx.profile.get("name") or ctx.spec.profile
    rev = f"SNIA SSS PTS {pts}" + (f", {str(prof).capitalize()} parameter set" if prof else "")
    if pts == "1.1":
        rev += " (PTS-E 1.1 IOPS tracking)"
    man = ctx.man
    return [
        ("Test run date", fmt_time(man.created) + (f" – {fmt_time(man.ended)}" if man.ended else "")),
        ("Report date", ctx.generated),
        ("Tests", ", ".join(test_title(t) for t in tests) or NA),
        ("PTS revision", rev),
        ("Test ID", ctx.test_id),
        ("Test sponsor", ctx.sponsor()),
        ("Vendor", ctx.identity("vendor")),
        ("Model", ctx.identity("model")),
        ("Run status", ctx.status),
        ("Run directory", ctx.run_dir.name),
        ("Command line", " ".join(man.command_line) or NA),
    ]


def platform_fields(ctx: RunContext) -> list[tuple[str, str]]:
    h = ctx.host
    cpu = na(h.get("cpu_model"))
    if h.get("cpu_count"):
        cpu += f" ({h['cpu_count']} logical CPUs)"
    mem = h.get("memory_bytes")
    mem_s = fmt_bytes10(mem).split(" (")[0] if isinstance(mem, (int, float)) else na(mem)
    sw = f"ssdpts {ctx.man.ssdpts_version or NA}; {ctx.man.fio_version or NA}"
    if ctx.man.executor and ctx.man.executor != "fio":
        sw += f" (executor: {ctx.man.executor})"
    pcie = h.get("pcie")
    return [
        ("Motherboard", na(h.get("board"))),
        ("CPU", cpu),
        ("Memory", mem_s),
        ("Operating system", na(h.get("distribution"))),
        ("Kernel", na(h.get("kernel")) + (f" ({h['arch']})" if h.get("arch") else "")),
        ("Host name", na(h.get("hostname"))),
        ("Test software", sw),
        ("I/O engine", na(ctx.spec.ioengine)),
        ("HBA / PCIe", na(pcie if not isinstance(pcie, dict) else ", ".join(f"{k} {v}" for k, v in pcie.items()))),
    ]


def device_fields(ctx: RunContext) -> list[tuple[str, str]]:
    desc = ctx.man.description or {}
    wc_req = ctx.profile.get("write_cache")
    wc_state = ctx.man.write_cache
    wc = (f"{wc_state}" if wc_state else NA) + (f" (profile asks: {wc_req})" if wc_req else "")
    iface = ctx.target("transport") or ctx.target("kind") or None
    lbs = ctx.target("logical_block_size_bytes")
    return [
        ("Vendor", ctx.identity("vendor")),
        ("Model", ctx.identity("model")),
        ("Serial number", ctx.identity("serial")),
        ("Firmware", ctx.identity("firmware")),
        ("Capacity", fmt_bytes10(ctx.target("size_bytes"))),
        ("Interface", na(iface)),
        ("NAND type", na(desc.get("nand_type"))),
        ("Sector size", f"{lbs} B logical / {ctx.target('physical_block_size_bytes') or '?'} B physical" if lbs else NA),
        ("Device path", na(ctx.target("path"))),
        ("Purge method", ctx.purge_methods()),
        ("Write cache", wc),
    ]


# ---- the steady state of every tracking variable ----------------------------------------------------------

@dataclass
class Verdict:
    """One line of the overview: a tracking variable of a part (or a part without one), its window
    or rounds, its verdict, and the value it averages over the window."""

    title: str
    variable: str
    rounds: str
    verdict: str
    missed: bool  # no steady state: a red verdict, and a line of Report.steady_state_missed
    average: Cell

    @property
    def missed_line(self) -> str:
        what = self.title + (" — " + self.variable if self.variable else "")
        return what + (" (not run)" if self.verdict == "not run" else f" (rounds {self.rounds})")


def verdicts(ctx: RunContext, tests: list[str]) -> list[Verdict]:
    out = []
    for t in tests:
        for pid in ctx.part_ids(t):
            part = ctx.parts[pid]
            title = part.title or pid
            ss = part.steady_state
            kind = of(t)
            own = kind.verdict(pid, part) if kind is not None else None
            if own is not None:  # a kind without a steady-state rule (WSAT: its samples)
                rounds, verdict, missed, cell = own
                out.append(Verdict(title, "", rounds, verdict, missed, cell))
                continue
            if ss is None:  # a fixed plan
                n = part.rounds_run or 0
                done = part.stop_reason == "complete"
                out.append(Verdict(title, "", f"{n} rounds", "n/a (a fixed plan)" if done else
                                   ("not run" if not n else "stopped early"), not done, Cell("—")))
                continue
            for i, v in enumerate(ss.variables):
                if not part.rounds_run:
                    verdict = "not run"
                elif v.reached and ss.reached:
                    verdict = "reached"
                elif v.reached:
                    verdict = "passes alone; steady state NOT reached (all must pass in one window)"
                else:
                    verdict = "steady state NOT reached"
                avg = v.average if isinstance(v, SteadyState) else None
                out.append(Verdict(title, v.variable, fmt_rounds(v.rounds) if v.rounds else "—", verdict,
                                   verdict != "reached",
                                   Cell(f"{fmt_value(avg, v.unit)} {v.unit}" if avg is not None else "—", avg,
                                        ref=f"{pid}:ss{i}:average" if avg is not None else "")))
    return out


def overview_table(rows: list[Verdict]) -> Table:
    def verdict(v: Verdict) -> Cell:
        return Cell(v.verdict, css="bad" if v.missed else ("ok" if v.verdict == "reached" else ""))

    return Table("overview", "Steady state per tracking variable",
                 ["Test", "Tracking variable", "Window rounds", "Steady state", "Window average"],
                 [[Cell(v.title), Cell(v.variable), Cell(v.rounds), verdict(v), v.average] for v in rows], numeric=False)


def verdicts_section(ctx: RunContext, tests: list[str], overview: Table) -> Section:
    """The executive verdicts: per test one sentence, then the steady state of every tracking
    variable."""
    sec = Section("overview", "Verdicts", 2, None)
    items = []
    for t in tests:
        pids = ctx.part_ids(t)
        if not pids:
            items.append(f"{test_title(t)}: not run")
            continue
        for pid in pids:
            p = ctx.parts[pid]
            name = p.title or pid
            if p.steady_state is None and p.samples is None and p.rounds_run:  # a fixed plan (HIR, XSR, ...)
                items.append(f"{name}: {p.rounds_run} rounds of a fixed plan, {p.stop_reason or 'stopped early'}")
            elif p.steady_state is None:
                items.append(f"{name}: {p.samples or 0} samples, {p.stop_reason or 'stopped early'}")
            elif not p.rounds_run:
                items.append(f"{name}: not run")
            elif p.reached:
                items.append(f"{name}: steady state reached in rounds {fmt_rounds(p.window_rounds)} "
                             f"({p.rounds_run} rounds run)")
            else:
                items.append(f"{name}: steady state NOT reached — values are averages of rounds "
                             f"{fmt_rounds(p.window_rounds)} ({p.rounds_run} rounds run, "
                             f"{p.stop_reason or 'stopped early'})")
            for w in p.warnings:
                items.append(f"{name}: {w}")
    level = "bad" if ctx.partial or any(ctx.parts[p].reached is False for t in tests for p in ctx.part_ids(t)) \
        else ("warn" if ctx.run.deviations else "ok")
    sec.blocks.append(Alert(level, "test verdicts", items))
    sec.blocks.append(overview)
    return sec


def header_section(ctx: RunContext, tests: list[str]) -> Section:
    sec = Section("header", "Report header: test platform, device, parameters", 2, None, new_page=True)
    sec.blocks += [Fields("Administrative", admin_fields(ctx, tests)), Fields("Test platform", platform_fields(ctx)),
                   Fields("Device under test", device_fields(ctx))]
    if description_fields(ctx):
        sec.blocks.append(Fields("Device description (--describe file, supplied by the operator)",
                                 description_fields(ctx)))
    sec.blocks.append(Para("The set-up and test parameters of each test head its pages."))
    sec.blocks += disclosure.audit_blocks(ctx)
    sec.blocks += disclosure.fio_option_blocks(ctx)
    return sec

