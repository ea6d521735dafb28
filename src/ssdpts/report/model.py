"""What a report says, built from a run directory alone (manifest.json, steps.jsonl, summary.json).

The HTML and the PDF writer render the same :class:`Report`: a SNIA header block (PTS.md §4), the
compliance / partial / steady-state banners, and one section per test made of blocks (paragraphs,
alerts, field lists, tables, plots). Every number in a table comes from summary.json; the per-round
curves and the response-time histograms come from steps.jsonl. Nothing here runs fio or touches a
device.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
import math
from pathlib import Path
import time
from typing import Any, Callable, Sequence

from ..pts.iops import IopsTable
from ..pts.registry import TESTS, title as test_title
from ..pts.lat import LatTable
from ..pts.steady_state import SteadyState
from ..pts.tp import TpTable
from ..pts.units import fmt_block_size
from ..pts.workload import Workload
from ..pts.wsat import WsatTable
from ..results.reader import RunResults, read_run
from ..results.records import NoWindow, PartResult, Series, StepRecord
from ..results.registry import fmt_value as _fmt_value
from . import plots

NA = "not available"
TEST_ORDER = tuple(TESTS)


# ---- formatting: one place ---------------------------------------------------------------------

def fmt_value(v: float | None, unit: str = "") -> str:
    """A measured value for a table cell, formatted as in comparisons (ssdpts.compare.fmt_value);
    no value (None or NaN): "—"."""
    return _fmt_value(None if isinstance(v, float) and math.isnan(v) else v, unit, missing="—")


def fmt_bytes10(n: float | None) -> str:
    """Capacities in base 10 (PTS.md §1), with the exact byte count."""
    if n is None:
        return NA
    for div, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB")):
        if n >= div:
            return f"{n / div:,.2f} {unit} ({int(n):,} bytes)"
    return f"{int(n):,} bytes"


def fmt_rounds(rounds: Sequence[int]) -> str:
    rounds = list(rounds)
    if not rounds:
        return "none"
    if rounds == list(range(rounds[0], rounds[-1] + 1)) and len(rounds) > 2:
        return f"{rounds[0]}–{rounds[-1]}"
    return ", ".join(str(r) for r in rounds)


def fmt_time(iso: str | None) -> str:
    if not iso:
        return NA
    return iso.replace("T", " ").replace("Z", " UTC")


def _na(v: Any) -> str:
    if v is None or v == "":
        return NA
    return str(v)


def _bs_label(bs: int) -> str:
    return fmt_block_size(bs)


# ---- report structure --------------------------------------------------------------------------

@dataclass
class Para:
    text: str
    kind: str = "para"


@dataclass
class Alert:
    level: str  # "bad" (red), "warn" (amber), "ok" (green), "info"
    title: str
    items: list[str] = field(default_factory=list)
    kind: str = "alert"


@dataclass
class Fields:
    title: str
    rows: list[tuple[str, str]]
    kind: str = "fields"


@dataclass
class Cell:
    text: str
    value: float | None = None  # the raw number (HTML data-value), None for text cells
    css: str = ""  # "ok" / "bad" for verdict cells


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]  # header of each column, the first being the row-label column
    rows: list[list[Cell]]
    note: str = ""
    numeric: bool = True  # right-align columns after the first
    kind: str = "table"

    def csv(self) -> str:
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow([c.text if c.value is None else repr(float(c.value)) for c in r])
        return buf.getvalue()


@dataclass
class Plot:
    id: str
    title: str
    caption: str
    draw: Callable[[Any], None]  # draws into a matplotlib Figure or SubFigure
    size: tuple[float, float] = (10.0, 4.6)  # inches, HTML
    pdf_height: float = 3.0  # inches of a PDF page body
    kind: str = "plot"


@dataclass
class Section:
    id: str
    title: str
    level: int  # 2: a test or a top-level section, 3: a subsection
    test: str | None  # whose set-up / test parameters head the PDF pages of this section
    blocks: list = field(default_factory=list)
    new_page: bool = False  # PDF (and HTML print): start on a new page


def sections_toc(sections: list) -> list[tuple[Any, list]]:
    """The table of contents: each top-level (level 2) section with the subsections that follow it."""
    out: list[tuple[Any, list]] = []
    for s in sections:
        if s.level <= 2 or not out:
            out.append((s, []))
        else:
            out[-1][1].append(s)
    return out


@dataclass
class TestHeader:
    test: str
    title: str
    setup: list[tuple[str, str]]
    params: list[tuple[str, str]]


@dataclass
class Report:
    run_dir: Path
    title: str
    subtitle: str
    status: str
    partial: Alert | None
    compliance: Alert | None
    notices: list[Alert]
    admin: list[tuple[str, str]]
    platform: list[tuple[str, str]]
    device: list[tuple[str, str]]
    tests: dict[str, TestHeader]
    overview: Table
    sections: list[Section]
    generated: str
    short_header: dict[str, str]  # a few fields for every PDF page: pts, device, run date...
    description: list[tuple[str, str]] = field(default_factory=list)  # --describe FILE, flattened

    @property
    def toc(self) -> list[tuple[Section, list[Section]]]:
        return sections_toc(self.sections)

    @property
    def steady_state_missed(self) -> list[str]:
        """One line per tracking variable without steady state: test, variable, and its rounds."""
        out = []
        for r in self.overview.rows:
            if r[3].css != "bad":
                continue
            what = r[0].text + (" — " + r[1].text if r[1].text else "")
            out.append(what + (" (not run)" if r[3].text == "not run" else f" (rounds {r[2].text})"))
        return out


# ---- loading -------------------------------------------------------------------------------------

def load(run_dir: Path) -> Report:
    """Read a run directory (results.read_run, steps included) and build the report's content."""
    from ..results.integrity import check

    run_dir = Path(run_dir)
    run = read_run(run_dir, steps=True)
    return Builder(run, damage=[p.line() for p in check(run_dir).problems]).build()


class Builder:
    def __init__(self, run: RunResults, damage: list[str] | None = None):
        self.run = run
        self.damage = damage or []  # 'ssdpts verify' problems
        self.run_dir = run.path
        self.man = run.manifest
        self.summary = run.summary
        self.notes = list(run.notes)
        self.spec = run.manifest.settings
        self.profile = self.spec.profile_params
        self.host = run.manifest.host
        self.parts = run.summary.parts
        self.records: dict[tuple[str, str], list[StepRecord]] = defaultdict(list)
        for s in run.steps or ():
            self.records[(s.test, s.part)].append(s)
        self.status = run.status
        self.partial = self.status != "complete"
        self.generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

    def _t(self, name: str):
        """A field of the recorded target (None when the manifest has no target)."""
        t = self.man.target
        return getattr(t, name) if t is not None else None

    # ---- top level -----------------------------------------------------------------------
    def tests_in_run(self) -> list[str]:
        present = list(self.summary.tests) or list(self.spec.tests)
        return [t for t in TEST_ORDER if t in present] + [t for t in present if t not in TEST_ORDER]

    def part_ids(self, test: str) -> list[str]:
        ids = self.summary.tests.get(test)
        if ids:
            return [i for i in ids if i in self.parts]
        return [pid for pid, p in self.parts.items() if p.test == test]

    def build(self) -> Report:
        tests = self.tests_in_run()
        headers = {t: self.test_header(t) for t in tests}
        sections: list[Section] = []
        for t in tests:
            sections.extend(self.test_sections(t, headers[t]))
        bounds = self.boundary_section(tests)
        if bounds:
            sections.append(bounds)
        temp = self.temperature_section()
        if temp:
            sections.append(temp)
        prof = str(self.profile.get("name") or self.spec.profile or "").capitalize()
        pts = self.spec.pts_version or "2.0.2"
        model = self._t("model") or self._t("name") or NA
        title = f"SNIA SSS PTS {pts} {prof} — test report".replace("  ", " ")
        subtitle = f"{model}" + (f" · serial {self._t('serial')}" if self._t("serial") else "")
        return Report(
            run_dir=self.run_dir, title=title, subtitle=subtitle, status=self.status,
            partial=self.partial_alert(), compliance=self.compliance_alert(), notices=self.notices(),
            admin=self.admin_fields(tests), platform=self.platform_fields(), device=self.device_fields(),
            tests=headers, overview=self.overview_table(tests), sections=sections, generated=self.generated,
            short_header={
                "pts": f"SNIA SSS PTS {pts} {prof}".strip(), "device": model,
                "serial": _na(self._t("serial")), "run_date": fmt_time(self.man.created),
                "report_date": self.generated, "run": self.run_dir.name,
                "software": f"ssdpts {self.man.ssdpts_version or '?'}, {self.man.fio_version or '?'}",
                "sponsor": self.sponsor(),
            },
            description=self.description_fields(),
        )

    def partial_alert(self) -> Alert | None:
        if not self.partial:
            return None
        items = [f"run status: {self.status}"]
        if self.man.error:
            items.append(f"error: {self.man.error}")
        if self.status == "running":
            items.append("the run directory says 'running': the run is still going, or its process died without "
                         "recording why")
        items.append("results cover only the rounds finished before the run stopped; tests not reached are "
                     "marked 'not run'")
        items.append(f"continue the run with: ssdpts resume {self.run_dir}")
        return Alert("bad", "PARTIAL REPORT — the run did not complete", items)

    def compliance_alert(self) -> Alert | None:
        devs = list(self.run.deviations)
        extra = []
        purges = {p.purge.disclosure for p in self.man.parts.values()
                  if p.purge is not None and p.purge.is_pts_purge is False}
        for d in sorted(x for x in purges if x):
            if not any(d in dev for dev in devs):  # runs from before purges were listed as deviations
                extra.append(f"purge: {d}")
        if not devs and not extra:
            return None
        title = ("time-compressed — not PTS compliant" if any(d.startswith("time-compressed") for d in devs)
                 else "not PTS compliant")
        return Alert("warn", title, devs + extra)

    def _description(self) -> dict:
        desc = self.man.description
        return desc if isinstance(desc, dict) else {}

    def description_fields(self) -> list[tuple[str, str]]:
        """Every field of the --describe file, nested tables as dotted names: what no tool could
        read from the device, as the operator supplied it."""
        out: list[tuple[str, str]] = []

        def walk(prefix: str, v: Any) -> None:
            if isinstance(v, dict):
                for k, x in v.items():
                    walk(f"{prefix}.{k}" if prefix else str(k), x)
            elif v is not None:
                out.append((prefix, ", ".join(map(str, v)) if isinstance(v, list) else str(v)))

        walk("", self._description())
        return out

    def notices(self) -> list[Alert]:
        out = []
        if self.damage:
            out.append(Alert("bad", "DAMAGED run directory: files differ from what the run recorded "
                                    "(ssdpts verify)", list(self.damage)))
        desc = self._description()
        if desc.get("simulated"):
            # A simulated drive cannot say so through the block device: the description file does.
            out.append(Alert("warn", "simulated device under test", [
                str(desc.get("notes") or "the description file says the device under test is simulated"),
                "its parameters, from the description file, are under 'Device description' in the report header"]))
        if self.man.executor == "fake":
            out.append(Alert("info", "synthetic data", [
                "the measurements come from ssdpts' FakeExecutor (a model of a drive), not from fio on a device"]))
        if self.notes:
            out.append(Alert("info", "note", list(self.notes)))
        return out

    # ---- header block (PTS.md §4) ------------------------------------------------------------
    def sponsor(self) -> str:
        desc = self.man.description or {}
        return _na(self.spec.extra.get("sponsor") or self.man.doc.get("sponsor") or desc.get("sponsor"))

    def admin_fields(self, tests: list[str]) -> list[tuple[str, str]]:
        pts = self.spec.pts_version or NA
        prof = self.profile.get("name") or self.spec.profile
        rev = f"SNIA SSS PTS {pts}" + (f", {str(prof).capitalize()} parameter set" if prof else "")
        if pts == "1.1":
            rev += " (PTS-E 1.1 IOPS tracking)"
        return [
            ("Test run date", fmt_time(self.man.created) + (f" – {fmt_time(self.man.ended)}" if self.man.ended else "")),
            ("Report date", self.generated),
            ("Tests", ", ".join(test_title(t) for t in tests) or NA),
            ("PTS revision", rev),
            ("Test sponsor", self.sponsor()),
            ("Vendor", _na(self._t("vendor"))),
            ("Model", _na(self._t("model"))),
            ("Run status", self.status),
            ("Run directory", self.run_dir.name),
            ("Command line", " ".join(self.man.command_line) or NA),
        ]

    def platform_fields(self) -> list[tuple[str, str]]:
        h = self.host
        cpu = _na(h.get("cpu_model"))
        if h.get("cpu_count"):
            cpu += f" ({h['cpu_count']} logical CPUs)"
        mem = h.get("memory_bytes")
        mem_s = fmt_bytes10(mem).split(" (")[0] if isinstance(mem, (int, float)) else _na(mem)
        os_s = _na(h.get("distribution"))
        kern = _na(h.get("kernel"))
        sw = f"ssdpts {self.man.ssdpts_version or NA}; {self.man.fio_version or NA}"
        if self.man.executor and self.man.executor != "fio":
            sw += f" (executor: {self.man.executor})"
        pcie = h.get("pcie")
        return [
            ("Motherboard", _na(h.get("board"))),
            ("CPU", cpu),
            ("Memory", mem_s),
            ("Operating system", os_s),
            ("Kernel", kern + (f" ({h['arch']})" if h.get("arch") else "")),
            ("Host name", _na(h.get("hostname"))),
            ("Test software", sw),
            ("I/O engine", _na(self.spec.ioengine)),
            ("HBA / PCIe", _na(pcie if not isinstance(pcie, dict) else ", ".join(f"{k} {v}" for k, v in pcie.items()))),
        ]

    def purge_methods(self, part_ids: list[str] | None = None) -> str:
        seen = []
        for pid, p in self.man.parts.items():
            if part_ids is not None and pid not in part_ids:
                continue
            if p.purge is not None:
                d = p.purge.disclosure or p.purge.method
                if d and d not in seen:
                    seen.append(str(d))
        if seen:
            return "; ".join(seen)
        return "none (--purge none)" if self.spec.purge == "none" else NA

    def device_fields(self) -> list[tuple[str, str]]:
        desc = self.man.description or {}
        wc_req = self.profile.get("write_cache")
        wc_state = self.man.write_cache
        wc = (f"{wc_state}" if wc_state else NA) + (f" (profile asks: {wc_req})" if wc_req else "")
        iface = self._t("transport") or self._t("kind") or None
        lbs = self._t("logical_block_size_bytes")
        described = lambda k: f"{desc[k]} (described)" if desc.get(k) else None  # noqa: E731
        return [
            ("Vendor", _na(self._t("vendor") or described("vendor"))),
            ("Model", _na(self._t("model") or described("model"))),
            ("Serial number", _na(self._t("serial"))),
            ("Firmware", _na(self._t("firmware"))),
            ("Capacity", fmt_bytes10(self._t("size_bytes"))),
            ("Interface", _na(iface)),
            ("NAND type", _na(desc.get("nand_type"))),
            ("Sector size", f"{lbs} B logical / {self._t('physical_block_size_bytes') or '?'} B physical" if lbs else NA),
            ("Device path", _na(self._t("path"))),
            ("Purge method", self.purge_methods()),
            ("Write cache", wc),
        ]

    def _first_workload(self, test: str) -> Workload | None:
        for pid in self.part_ids(test):
            for r in self.records.get((test, self.parts[pid].part), []):
                if r.phase == "round":
                    return r.workload
        return None

    def toio(self, test: str) -> str:
        w = self._first_workload(test)
        if w:
            tc, qd = w.threads, w.iodepth
        elif test == "lat":
            tc, qd = 1, 1
        elif test == "tp":
            tc, qd = self.profile.get("tp_threads"), self.profile.get("tp_iodepth")
        else:
            tc, qd = self.spec.resolved_threads, self.spec.resolved_iodepth
        if tc is None or qd is None:
            return NA
        return f"TC {tc} × QD {qd} = TOIO {tc * qd}"

    def test_header(self, test: str) -> TestHeader:
        pids = self.part_ids(test)
        ar_pct = self.spec.resolved_active_range_pct
        ar_bytes = self.man.active_range_bytes
        ar = (f"{ar_pct:g}%" if isinstance(ar_pct, (int, float)) else NA) + (
            f" ({fmt_bytes10(ar_bytes).split(' (')[0]})" if ar_bytes else "")
        seed = self.spec.seed
        pattern = "random (fio buffers)" + (f", RNG tausworthe64, base seed {seed}" if seed is not None else "")
        step_s = self.spec.step_seconds
        step = (f"{step_s:g} s" + ("" if step_s == 60 else " (PTS: 60 s — time-compressed)")) if step_s is not None else NA
        wipcs = [self.parts[p].wipc for p in pids if self.parts[p].wipc]
        mult = _or(self.spec.wipc_capacity_multiple, 2.0)
        if test == "wsat":
            pc1 = "none (WSAT starts from a purged device)"
        elif wipcs:
            pc1 = "; ".join(f"{w.workload}, TC 1 × QD 32, {mult:g}× AR = {w.io_bytes / 1e9:,.2f} GB "
                            f"in {w.duration_s:,.1f} s" for w in wipcs)
        else:
            pc1 = f"SEQ 128KiB writes, {mult:g}× AR (not reached: the run stopped first)"
        max_rounds = _or(self.spec.max_rounds, 25)
        toio = self.toio(test)
        pc2 = f"the test loop, {toio}, until steady state (at most {max_rounds} rounds)" if test != "wsat" else "none"
        setup = [
            ("Data pattern", pattern),
            ("Active range", ar),
            ("AR segments", _na(self.profile.get("segmentation"))),
            ("Preconditioning 1 (WIPC)", pc1),
            ("Preconditioning 2 (WDPC)", pc2),
            ("Purge", self.purge_methods(pids)),
            ("Write cache", _na(self.man.write_cache or self.profile.get("write_cache"))),
        ]
        stim = {
            "iops": "RND; R/W mix 100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100 (outer) × block size 1024, 128, 64, "
                    "32, 16, 8, 4, 0.5 KiB (inner)",
            "tp": "SEQ, per block size " + ", ".join(self.parts[p].part or p for p in pids) + ": 100/0 then 0/100",
            "lat": "RND; R/W mix 100/0, 65/35, 0/100 (outer) × block size 8, 4, 0.5 KiB (inner)",
            "wsat": "RND 4KiB 0/100, continuous, one sample per step",
        }.get(test, NA)
        params = [
            ("Stimulus", stim),
            ("Demand intensity", toio),
            ("Step length", step),
        ]
        if test == "wsat":
            hours, multiple = self.spec.wsat_hours, self.spec.wsat_capacity_multiple
            params.append(("Stop rule", f"{hours:g} h of steps or {multiple:g}× capacity written (TGBW)"
                           if hours is not None and multiple is not None else NA))
            for p in pids:
                part = self.parts[p]
                tab = part.table
                params.append(("Samples", f"{part.samples or 0} ({part.stop_reason or 'stopped early'})"))
                if isinstance(tab, WsatTable):
                    params.append(("Written (TGBW)", f"{tab.tgbw_gb:,.2f} GB = {_num(tab.drive_fills, 2)} drive fills"))
        else:
            tracking = []
            rounds = []
            for p in pids:
                part = self.parts[p]
                ss = part.steady_state
                tracking += [v.variable for v in ss.variables] if ss else []
                verdict = "reached" if part.reached else "NOT reached"
                prefix = f"{part.part}: " if part.part else ""
                rounds.append(f"{prefix}{verdict}, window rounds {fmt_rounds(part.window_rounds)} "
                              f"of {part.rounds_run or 0} run")
            params.append(("Tracking variable" + ("s" if len(tracking) > 1 else ""), "; ".join(tracking) or NA))
            params.append(("Steady state", "; ".join(rounds) or NA))
            params.append(("Max rounds", f"{max_rounds}" + ("" if max_rounds == 25 else " (PTS: 25)")))
        return TestHeader(test, test_title(test), setup, params)

    # ---- overview ----------------------------------------------------------------------------
    def overview_table(self, tests: list[str]) -> Table:
        rows = []
        for t in tests:
            for pid in self.part_ids(t):
                part = self.parts[pid]
                title = part.title or pid
                ss = part.steady_state
                if t == "wsat" or ss is None:
                    n = part.samples or 0
                    verdict = (Cell("n/a (WSAT: no steady-state rule)") if n else Cell("not run", css="bad"))
                    fw = part.table.final_window_iops if isinstance(part.table, WsatTable) else None
                    rows.append([Cell(title), Cell(""), Cell(f"{n} samples"), verdict,
                                 Cell(f"last 5 samples: {fmt_value(fw, 'IOPS')} IOPS" if n else "—")])
                    continue
                for v in ss.variables:
                    if not part.rounds_run:
                        verdict = Cell("not run", css="bad")
                    elif v.reached and ss.reached:
                        verdict = Cell("reached", css="ok")
                    elif v.reached:
                        verdict = Cell("passes alone; steady state NOT reached (all must pass in one window)", css="bad")
                    else:
                        verdict = Cell("steady state NOT reached", css="bad")
                    avg = v.average if isinstance(v, SteadyState) else None
                    rows.append([Cell(title), Cell(v.variable), Cell(fmt_rounds(v.rounds) if v.rounds else "—"), verdict,
                                 Cell(f"{fmt_value(avg, v.unit)} {v.unit}" if avg is not None else "—", avg)])
        return Table("overview", "Steady state per tracking variable",
                     ["Test", "Tracking variable", "Window rounds", "Steady state", "Window average"], rows,
                     numeric=False)

    # ---- per test ----------------------------------------------------------------------------
    def test_sections(self, test: str, header: TestHeader) -> list[Section]:
        sec = Section(test, header.title, 2, test, new_page=True)
        sec.blocks.append(Fields("Set-up parameters", header.setup))
        sec.blocks.append(Fields("Test parameters", header.params))
        pids = self.part_ids(test)
        if not pids:
            sec.blocks.append(Alert("bad", "not run", ["this test has no results in the run directory"]))
            return [sec]
        fn = {"iops": self.iops_sections, "tp": self.tp_sections, "lat": self.lat_sections,
              "wsat": self.wsat_sections}.get(test)
        if fn is None:
            sec.blocks.append(Para(f"ssdpts {self.man.ssdpts_version} has no report layout for test {test!r}."))
            return [sec]
        return [sec, *fn(pids)]

    def cells_by_round(self, part: PartResult) -> dict[int, dict[str, StepRecord]]:
        """Round -> cell key -> step, for the complete rounds summary.json lists."""
        rounds = {r for s in part.series.values() for r in s.rounds}
        out: dict[int, dict[str, StepRecord]] = {}
        for r in self.records.get((part.test, part.part), []):
            if r.phase == "round" and r.round in rounds:
                out.setdefault(r.round, {})[r.key] = r
        return dict(sorted(out.items()))

    def steady_state_blocks(self, part: PartResult, prefix: str) -> list:
        """The verdict alert, the verdict table and a window plot per tracking variable."""
        variables = part.steady_state.variables if part.steady_state else ()
        window = part.window_rounds
        blocks: list = []
        rounds_run = part.rounds_run or 0
        if rounds_run == 0:
            blocks.append(Alert("bad", "not run", ["no round of this test finished before the run stopped"]))
            return blocks
        resume = part.steady_state.resume if part.steady_state else None
        spans = resume.spans_resume if resume else None
        if spans:
            blocks.append(Alert("warn", f"the window {spans.get('text', 'spans a resume')}", [
                f"rounds {fmt_rounds(window)} include rounds from before and after a resumption of the run "
                "('ssdpts resume --keep-window'): the drive was idle in between, which the PTS's "
                "'no delay between rounds' excludes; the values below are disclosed, not PTS steady-state values"]))
        elif resume and resume.window_from_round:
            blocks.append(Alert("info", f"resumed: the window counts from round {resume.window_from_round}", [
                "the run was interrupted and resumed; the interrupted round was repeated and only rounds run after "
                "the resumption may form the steady-state window (PTS: no delay between rounds)"]))
        if part.reached:
            blocks.append(Alert("ok", f"steady state reached in rounds {fmt_rounds(window)}",
                                [f"{rounds_run} rounds run; every tracking variable passes in this window"]))
        else:
            why = {"max-rounds": f"gave up after the maximum of {rounds_run} rounds",
                   None: "the run stopped before steady state was reached"}.get(part.stop_reason,
                                                                               f"stop reason: {part.stop_reason}")
            items = [why, f"the values below are averages over the last {len(window)} rounds "
                          f"({fmt_rounds(window)}) and are NOT steady-state values"]
            for v in variables:
                if isinstance(v, NoWindow):
                    items.append(f"{v.variable}: {v.note}")
                elif not v.reached:
                    fails = []
                    if not v.range_ok:
                        fails.append(f"range {_pct(v.range, v.average)} of average > 20%")
                    if not v.excursion_ok:
                        fails.append(f"slope excursion {_pct(v.excursion, v.average)} of average > 10%")
                    items.append(f"{v.variable}: fails in rounds {fmt_rounds(v.rounds)}: " + "; ".join(fails))
            blocks.append(Alert("bad", "steady state NOT reached", items))
        rows = []
        for v in variables:
            unit = v.unit
            if isinstance(v, NoWindow):
                rows.append([Cell(v.variable), Cell("NOT reached", css="bad"), Cell("—"), Cell("—"),
                             Cell("—"), Cell("—"), Cell(v.note)])
                continue
            rows.append([
                Cell(v.variable),
                Cell("reached" if v.reached else "NOT reached", css="ok" if v.reached else "bad"),
                Cell(fmt_rounds(v.rounds)),
                Cell(f"{fmt_value(v.average, unit)} {unit}", v.average),
                Cell(f"{fmt_value(v.range, unit)} ≤ {fmt_value(v.range_limit, unit)}"
                     f" ({_pct(v.range, v.average)})", v.range, css="ok" if v.range_ok else "bad"),
                Cell(f"{fmt_value(v.excursion, unit)} ≤ {fmt_value(v.excursion_limit, unit)}"
                     f" ({_pct(v.excursion, v.average)})", v.excursion, css="ok" if v.excursion_ok else "bad"),
                Cell(plots.fit_text(v.slope, v.intercept)),
            ])
        blocks.append(Table(f"{prefix}-ss", "Steady-state verdict per tracking variable (PTS 2.0.2 §2.1.24)",
                            ["Tracking variable", "Verdict", "Window rounds", "Average",
                             "Range ≤ 20% of avg", "Slope excursion ≤ 10% of avg", "Best fit"], rows,
                            note="Range: max − min of the window values. Slope excursion: |b| × (last round − first "
                                 "round) of the least-squares line y = b·x + a through the window.",
                            numeric=False))
        for i, v in enumerate(variables):
            if isinstance(v, NoWindow) or not v.values:
                continue
            blocks.append(Plot(f"{prefix}-window-{i + 1}", f"Steady-state window: {v.variable}",
                               "Tracking values in the measurement window with their average, the ±10% and ±20% "
                               "bands around it and the least-squares best-fit line; the box compares the allowed "
                               "and measured range and slope excursion.",
                               partial(plots.ss_window, var=v.to_dict()), size=(10, 4.0), pdf_height=2.8))
        return blocks

    def not_reached_note(self, part: PartResult) -> str:
        if part.reached:
            return f"Averages over the steady-state window, rounds {fmt_rounds(part.window_rounds)}."
        return (f"Steady state NOT reached: averages over rounds {fmt_rounds(part.window_rounds)}, "
                f"which are not a steady-state window.")

    def _ss_suffix(self, part: PartResult) -> str:
        return "" if part.reached else " — steady state NOT reached"

    # IOPS ----------------------------------------------------------------------------------
    def iops_sections(self, pids: list[str]) -> list[Section]:
        out = []
        for pid in pids:
            part = self.parts[pid]
            sid = pid
            window = list(part.window_rounds)
            cells = self.cells_by_round(part)
            ssb = self.steady_state_blocks(part, sid)
            conv = Section(f"{sid}-convergence", "IOPS: steady-state convergence", 3, "iops")
            conv.blocks += ssb[:1]
            if cells:
                # every block size at R/W 0/100, per round; smallest block (highest IOPS) first, as the lines stack
                by_bs: dict[int, tuple[list[int], list[float]]] = {}
                for rno, rc in cells.items():
                    for c in rc.values():
                        if c.workload.read_pct == 0:
                            xs, ys = by_bs.setdefault(c.workload.block_size_bytes, ([], []))
                            xs.append(rno)
                            ys.append(c.measurement.iops)
                series = {_bs_label(bs): by_bs[bs] for bs in sorted(by_bs)}
                conv.blocks.append(Plot(f"{sid}-convergence-bs", "IOPS convergence: every block size at R/W 0/100",
                                        "IOPS of each block size, RND 100% write, per round; the shaded band is the "
                                        "measurement window.",
                                        partial(plots.rounds_lines, panels=[("RND 0/100 by block size", series, "IOPS", True)],
                                                window=window, reached=bool(part.reached)), size=(10, 4.8)))
                tvars = [(v.variable, v.unit, _series_dict(part.series.get(v.variable)))
                         for v in (part.steady_state.variables if part.steady_state else ())]
                conv.blocks.append(Plot(f"{sid}-convergence-tracking", "IOPS convergence: tracking variables",
                                        "Each tracking variable per round; all must pass in the same window (PTS 2.0.2).",
                                        partial(plots.tracking_convergence, variables=tvars, window=window,
                                                reached=bool(part.reached)),
                                        size=(10, 2.6 + 1.2 * max(1, len(tvars))), pdf_height=0.9 + 0.9 * max(1, len(tvars))))
            out.append(conv)
            win = Section(f"{sid}-steady-state", "IOPS: steady-state window", 3, "iops")
            win.blocks += ssb[1:]
            out.append(win)
            table = part.table
            res = Section(f"{sid}-results", "IOPS: measurement window results", 3, "iops")
            if not isinstance(table, IopsTable):
                res.blocks.append(Alert("bad", "no results", ["no round finished: there is no measurement window"]))
                out.append(res)
                continue
            mixes = list(table.mixes)
            rows_sorted = sorted(table.rows, key=lambda r: r.block_size_bytes)
            rows = [[Cell(_bs_label(r.block_size_bytes))] +
                    [Cell(fmt_value(r.values.get(m), "IOPS"), r.values.get(m)) for m in mixes]
                    for r in rows_sorted]
            res.blocks.append(Table(f"{sid}-table", "Average IOPS vs block size and R/W mix" + self._ss_suffix(part),
                                    ["Block size ↓ / R/W mix →", *mixes], rows, note=self.not_reached_note(part)))
            bss = [r.block_size_bytes for r in rows_sorted]
            z = [[r.values.get(m) for m in mixes] for r in rows_sorted]
            res.blocks.append(Plot(f"{sid}-2d", "IOPS vs block size, one line per R/W mix" + self._ss_suffix(part),
                                   self.not_reached_note(part),
                                   partial(plots.iops_vs_bs, bss=bss, mixes=mixes, z=z), size=(10, 5.2), pdf_height=3.4))
            res.blocks.append(Plot(f"{sid}-3d", "IOPS 3D plot: R/W mix × block size" + self._ss_suffix(part),
                                   self.not_reached_note(part),
                                   # largest block (fewest IOPS) in front, so that no bar hides another
                                   partial(plots.bars3d, xlabels=mixes, ylabels=[_bs_label(b) for b in bss][::-1],
                                           z=z[::-1], zlabel="IOPS", xname="R/W mix", yname="block size"),
                                   size=(10, 6.2), pdf_height=4.0))
            out.append(res)
        return out

    # TP ------------------------------------------------------------------------------------
    def tp_sections(self, pids: list[str]) -> list[Section]:
        out = []
        summary_rows: list[tuple[TpTable, PartResult]] = []
        for pid in pids:
            part = self.parts[pid]
            name = part.part or pid
            window = list(part.window_rounds)
            ssb = self.steady_state_blocks(part, pid)
            sec = Section(pid, f"Throughput {name}", 3, "tp")
            sec.blocks += ssb[:1]
            cells = self.cells_by_round(part)
            if cells:
                rs, ws = {}, {}
                for rno, rc in cells.items():
                    for c in rc.values():
                        if c.workload.read_pct == 100:
                            rs[rno] = c.measurement.read.bw_bytes_per_s / 1e6
                        elif c.workload.read_pct == 0:
                            ws[rno] = c.measurement.write.bw_bytes_per_s / 1e6
                series = {f"SEQ {name} read": (list(rs), list(rs.values())),
                          f"SEQ {name} write": (list(ws), list(ws.values()))}
                sec.blocks.append(Plot(f"{pid}-convergence", f"Throughput {name}: convergence, read and write",
                                       "MB/s (base 10) per round of the SEQ read and SEQ write steps; steady state is "
                                       "tracked on write. The shaded band is the measurement window.",
                                       partial(plots.rounds_lines, panels=[(f"SEQ {name}", series, "MB/s", False)],
                                               window=window, reached=bool(part.reached)), size=(10, 4.2),
                                       pdf_height=3.0))
            sec.blocks += ssb[1:]
            tab = part.table
            if isinstance(tab, TpTable):
                sec.blocks.append(Table(f"{pid}-table", f"Average MB/s, SEQ {name}" + self._ss_suffix(part),
                                        ["Block size", "Read MB/s", "Write MB/s"],
                                        [[Cell(_bs_label(tab.block_size_bytes)),
                                          Cell(fmt_value(tab.read_mb_per_s, "MB/s"), tab.read_mb_per_s),
                                          Cell(fmt_value(tab.write_mb_per_s, "MB/s"), tab.write_mb_per_s)]],
                                        note=self.not_reached_note(part) + " MB/s = 10⁶ bytes per second."))
                summary_rows.append((tab, part))
            out.append(sec)
        if summary_rows:
            summary_rows.sort(key=lambda tp: tp[0].block_size_bytes)
            sec = Section("tp-results", "Throughput: all block sizes", 3, "tp")
            rows = [[Cell(_bs_label(t.block_size_bytes) + self._ss_suffix(p)),
                     Cell(fmt_value(t.read_mb_per_s, "MB/s"), t.read_mb_per_s),
                     Cell(fmt_value(t.write_mb_per_s, "MB/s"), t.write_mb_per_s)]
                    for t, p in summary_rows]
            sec.blocks.append(Table("tp-table", "Average MB/s vs block size and R/W", ["Block size", "Read MB/s",
                                                                                      "Write MB/s"], rows,
                                    note="Each block size has its own purge, WIPC and steady-state window. "
                                         "MB/s = 10⁶ bytes per second."))
            missed = any(not p.reached for _, p in summary_rows)
            sec.blocks.append(Plot("tp-2d", "Throughput vs block size" + (" — steady state NOT reached" if missed else ""),
                                   "Average read and write MB/s of each block size over its measurement window.",
                                   partial(plots.tp_bars, labels=[_bs_label(t.block_size_bytes) for t, _ in summary_rows],
                                           read=[t.read_mb_per_s for t, _ in summary_rows],
                                           write=[t.write_mb_per_s for t, _ in summary_rows],
                                           flags=[not p.reached for _, p in summary_rows]),
                                   size=(10, 4.2), pdf_height=3.2))
            out.append(sec)
        return out

    # LAT -----------------------------------------------------------------------------------
    def lat_sections(self, pids: list[str]) -> list[Section]:
        out = []
        for pid in pids:
            part = self.parts[pid]
            window = list(part.window_rounds)
            cells = self.cells_by_round(part)
            ssb = self.steady_state_blocks(part, pid)
            conv = Section(f"{pid}-convergence", "Latency: steady-state convergence", 3, "lat")
            conv.blocks += ssb[:1]
            if cells:
                first = next(iter(cells.values()))
                keys = [c.key for c in sorted(first.values(), key=lambda c: c.index)]
                labels = {c.key: f"{_bs_label(c.workload.block_size_bytes)} {c.workload.mix}" for c in first.values()}
                mean, mx = {}, {}
                for k in keys:
                    xs = [r for r in cells if k in cells[r]]
                    mean[labels[k]] = (xs, [cells[r][k].measurement.lat_mean_ns / 1e3 for r in xs])
                    mx[labels[k]] = (xs, [cells[r][k].measurement.lat_max_ns / 1e3 for r in xs])
                conv.blocks.append(Plot(f"{pid}-convergence", "Latency convergence: mean and max response time",
                                        "Mean (top) and maximum (bottom) response time of every RND cell per round, "
                                        "TC 1 / QD 1; the shaded band is the measurement window.",
                                        partial(plots.rounds_lines, panels=[("mean response time", mean, "µs", True),
                                                                            ("max response time", mx, "µs", True)],
                                                window=window, reached=bool(part.reached)),
                                        size=(10, 7.4), pdf_height=5.6))
            out.append(conv)
            win = Section(f"{pid}-steady-state", "Latency: steady-state window", 3, "lat")
            win.blocks += ssb[1:]
            out.append(win)
            tab = part.table
            res = Section(f"{pid}-results", "Latency: measurement window results", 3, "lat")
            if not isinstance(tab, LatTable):
                res.blocks.append(Alert("bad", "no results", ["no round finished: there is no measurement window"]))
                out.append(res)
                continue
            bss = sorted({r.block_size_bytes for r in tab.rows})
            mixes = list(dict.fromkeys(r.mix for r in tab.rows))
            at = {(r.block_size_bytes, r.mix): r for r in tab.rows}

            def value(bs: int, mix: str, metric: str) -> float | None:
                row = at.get((bs, mix))
                return row.value(metric) if row else None

            note = self.not_reached_note(part)
            for field_, title in (("lat_mean_us", "Average response time (µs)"),
                                  ("lat_p99999_us", "99.999% (five nines) response time (µs)"),
                                  ("lat_max_us", "Maximum response time (µs), average of each step's maximum"),
                                  ("lat_max_in_window_us", "Maximum response time (µs), highest in the window"),
                                  ("iops", "IOPS")):
                unit = "IOPS" if field_ == "iops" else "µs"
                trows = [[Cell(_bs_label(bs))] + [Cell(fmt_value(value(bs, m, field_), unit), value(bs, m, field_))
                                                  for m in mixes]
                         for bs in bss]
                res.blocks.append(Table(f"{pid}-{field_.replace('_', '-')}", title + self._ss_suffix(part),
                                        ["Block size ↓ / R/W mix →", *mixes], trows, note=note))
            zmean = [[value(bs, m, "lat_mean_us") for m in mixes] for bs in bss]
            zmax = [[value(bs, m, "lat_max_us") for m in mixes] for bs in bss]
            ylabels = [_bs_label(b) for b in bss]
            res.blocks.append(Plot(f"{pid}-3d", "Latency 3D plots: mean and maximum response time" + self._ss_suffix(part),
                                   note, partial(plots.bars3d_pair, xlabels=mixes, ylabels=ylabels, za=zmean, zb=zmax,
                                                 titles=("mean response time (µs)", "max response time (µs)")),
                                   size=(11, 5.2), pdf_height=3.4))
            hist = self.histograms(cells, window)
            if hist:
                res.blocks.append(Plot(f"{pid}-histogram", "Response-time histograms with confidence curves"
                                       + self._ss_suffix(part),
                                       "Solid: IOs per response-time bin (fio json+ histogram over every step of the "
                                       "measurement window, reads and writes together), one outline per block size. "
                                       "Dashed, right axis: cumulative percentage of IOs completed within a time; the "
                                       "legend gives each block size's 99.999% (five nines) response time.",
                                       partial(plots.latency_histograms, panels=hist), size=(11, 4.6), pdf_height=3.2))
            out.append(res)
        return out

    def histograms(self, cells: dict[int, dict[str, StepRecord]], window: list[int]
                   ) -> list[tuple[str, list[tuple[str, dict[int, int]]]]]:
        """Per R/W mix (100/0 first), per block size (largest first): the json+ bins of every step
        of the window, read and write merged."""
        merged: dict[str, dict[int, int]] = {}
        wl: dict[str, Workload] = {}
        for rno in window:
            for k, c in (cells.get(rno) or {}).items():
                d = merged.setdefault(k, defaultdict(int))
                wl[k] = c.workload
                for direction in (c.measurement.read, c.measurement.write):
                    for b, n in direction.lat_bins_ns.items():
                        d[int(b)] += int(n)
        panels: dict[str, list[tuple[str, dict[int, int]]]] = {}
        for k in sorted(merged, key=lambda k: (-wl[k].read_pct, -wl[k].block_size_bytes)):
            if merged[k]:
                panels.setdefault(wl[k].mix, []).append((_bs_label(wl[k].block_size_bytes), dict(merged[k])))
        return list(panels.items())

    # WSAT ----------------------------------------------------------------------------------
    def wsat_sections(self, pids: list[str]) -> list[Section]:
        out = []
        step_s = _or(self.spec.step_seconds, 60)
        for pid in pids:
            part = self.parts[pid]
            tab = part.table if isinstance(part.table, WsatTable) else None
            series = tab.series if tab else ()
            sec = Section(f"{pid}-plots", "Write Saturation: IOPS, TGBW and response time", 3, "wsat")
            if not series:
                sec.blocks.append(Alert("bad", "not run", ["no WSAT sample finished before the run stopped"]))
                out.append(sec)
                continue
            why = {"capacity-written": f"stopped after {_or(self.spec.wsat_capacity_multiple, 4):g}× capacity written",
                   "time-limit": f"stopped at the time limit ({_or(self.spec.wsat_hours, 24):g} h of steps)",
                   None: "stopped early: the run did not finish this test"}.get(part.stop_reason, str(part.stop_reason))
            sec.blocks.append(Alert("info" if part.stop_reason else "bad", f"{len(series)} samples; {why}",
                                    [f"{tab.tgbw_gb:,.2f} GB written = {_num(tab.drive_fills, 2)} "
                                     f"drive fills; last 5 samples (minutes {fmt_rounds(tab.final_window_minutes)}) "
                                     f"average {fmt_value(tab.final_window_iops, 'IOPS')} IOPS"]))
            minutes = [s.minute for s in series]
            iops = [s.iops for s in series]
            xlabel = "time (PTS minutes; one sample = one step" + (f" of {step_s:g} s)" if step_s != 60 else ")")
            nfinal = len(tab.final_window_minutes)
            sec.blocks.append(Plot(f"{pid}-iops-time", "WSAT: IOPS vs time",
                                   "RND 4KiB write IOPS of every sample: fresh-out-of-box (FOB) level first, then the "
                                   "transition, then the steady region; the final 5 samples are shaded.",
                                   partial(plots.wsat_scatter, x=minutes, y=iops, xlabel=xlabel, ylabel="IOPS",
                                           final=nfinal), size=(10, 3.8), pdf_height=2.9))
            tg = [s.tgbw_gb for s in series]
            sec.blocks.append(Plot(f"{pid}-iops-tgbw", "WSAT: IOPS vs total GB written (TGBW)",
                                   "The same samples against the data written so far (GB, base 10).",
                                   partial(plots.wsat_scatter, x=tg, y=iops, xlabel="total GB written (TGBW)",
                                           ylabel="IOPS", final=nfinal), size=(10, 3.8), pdf_height=2.9))
            fills = [s.drive_fills for s in series]
            if all(f is not None for f in fills):
                sec.blocks.append(Plot(f"{pid}-iops-fills", "WSAT: IOPS vs drive fills",
                                       "The same samples against drive fills (bytes written ÷ user capacity).",
                                       partial(plots.wsat_scatter, x=fills, y=iops, xlabel="drive fills", ylabel="IOPS",
                                               final=nfinal), size=(10, 3.8), pdf_height=2.9))
            lat = [s.lat_mean_us for s in series]
            sec.blocks.append(Plot(f"{pid}-lat-time", "WSAT: mean response time vs time",
                                   "Mean response time of every sample (µs).",
                                   partial(plots.wsat_scatter, x=minutes, y=lat, xlabel=xlabel,
                                           ylabel="mean response time (µs)", final=nfinal), size=(10, 3.8),
                                   pdf_height=2.9))
            n = len(series)
            stride = max(1, math.ceil(n / 60))
            rows = [[Cell(str(s.minute), s.minute), Cell(fmt_value(s.iops, "IOPS"), s.iops),
                     Cell(fmt_value(s.tgbw_gb), s.tgbw_gb),
                     Cell(fmt_value(s.drive_fills), s.drive_fills),
                     Cell(fmt_value(s.lat_mean_us), s.lat_mean_us),
                     Cell(fmt_value(s.lat_p99999_us), s.lat_p99999_us),
                     Cell(fmt_value(s.lat_max_us), s.lat_max_us)]
                    for i, s in enumerate(series) if i % stride == 0 or i == n - 1]
            sec.blocks.append(Table(f"{pid}-table", "WSAT samples" + (f" (every {stride}th sample and the last)" if stride > 1 else ""),
                                    ["Minute", "IOPS", "TGBW (GB)", "Drive fills", "Mean (µs)", "99.999% (µs)", "Max (µs)"],
                                    rows, note="Every sample is in summary.json and steps.jsonl."))
            out.append(sec)
        return out

    # Step boundaries -------------------------------------------------------------------------
    def boundary_section(self, tests: list[str]) -> Section | None:
        """Per part and round: median and worst idle and overlap at the step boundaries (from each
        step's observed timeline), and the boundaries over the limits (docs/methodology.md)."""
        rows, flagged = [], []
        limit = None
        for t in tests:
            for pid in self.part_ids(t):
                part = self.parts[pid]
                b = part.boundaries or {}
                limit = b.get("idle_limit_ms", limit)
                for r in b.get("rounds") or []:
                    idle, over = r.get("idle_ms") or {}, r.get("overlap_ms") or {}
                    bad = r.get("over_limit", 0)
                    rows.append([Cell(f"{part.title} · round {r['round']}"),
                                 Cell(str(r.get("boundaries", 0)), r.get("boundaries")),
                                 Cell(_num(idle.get("median"), 2), idle.get("median")),
                                 Cell(_num(idle.get("worst"), 2), idle.get("worst")),
                                 Cell(_num(over.get("worst"), 2), over.get("worst")),
                                 Cell(str(bad), bad, css="bad" if bad else "ok")])
                for f in b.get("flagged") or []:
                    flagged.append(f"{part.title} round {f['round']} step {f['index']} "
                                   f"({f.get('label', '')}, after {f.get('after')}): {f.get('why')}")
        if not rows:
            return None
        sec = Section("boundaries", "Step boundaries", 2, None, new_page=True)
        if flagged:
            shown = flagged[:20] + ([f"… and {len(flagged) - 20} more (summary.json)"] if len(flagged) > 20 else [])
            sec.blocks.append(Alert("warn", f"{len(flagged)} step boundar{'y' if len(flagged) == 1 else 'ies'} "
                                            "over the limits", shown))
        else:
            sec.blocks.append(Alert("ok", "every step boundary within the limits",
                                    [f"idle at most {limit:g} ms; no overlap into or out of a TC1/QD1 step"]))
        sec.blocks.append(Table("boundaries-table", "Idle and overlap at step boundaries, per round (ms)",
                                ["Test · round", "Boundaries", "Idle median", "Idle worst", "Overlap worst",
                                 "Over limit"], rows,
                                note=f"A round's boundaries: the one from the previous round (or WIPC) and those between "
                                     f"its steps. Idle: no IO in flight (next step's start minus previous step's end, "
                                     f"from each step's observed timeline; resolution 1 ms). Limits: idle ≤ {limit:g} ms; "
                                     f"no overlap when either step is TC1/QD1, else at most the previous step's "
                                     f"maximum response time (its drain). Per boundary: steps.jsonl \"boundary\"."))
        return sec

    # Temperature ---------------------------------------------------------------------------
    def temperature_section(self) -> Section | None:
        pts: list[tuple[float, float, str]] = []
        for (test, _part), recs in self.records.items():
            for r in recs:
                c = temperature_c(r.telemetry)
                if c is not None and r.end_time is not None:
                    pts.append((float(r.end_time), c, test_title(str(test))))
        if not pts:
            return None
        pts.sort()
        t0 = pts[0][0]
        sec = Section("temperature", "Device temperature", 2, None, new_page=True)
        sec.blocks.append(Plot("temperature-plot", "Device temperature over the run",
                               "Composite temperature reported by the device (telemetry of each step), by test.",
                               partial(plots.temperature, t_min=[(p[0] - t0) / 60 for p in pts], temp_c=[p[1] for p in pts],
                                       tests=[p[2] for p in pts]), size=(10, 4.2), pdf_height=3.4))
        temps = [p[1] for p in pts]
        sec.blocks.append(Table("temperature-table", "Temperature summary",
                                ["Samples", "Min °C", "Mean °C", "Max °C"],
                                [[Cell(str(len(temps)), len(temps)), Cell(f"{min(temps):.1f}", min(temps)),
                                  Cell(f"{sum(temps) / len(temps):.1f}", sum(temps) / len(temps)),
                                  Cell(f"{max(temps):.1f}", max(temps))]]))
        return sec


def temperature_c(tel: Any) -> float | None:
    """A temperature in °C from a step's telemetry record, whatever its exact shape: a number under
    temperature_c / temperature_celsius / composite_temperature_c / temperature (kelvin when > 200,
    as nvme smart-log reports it), at the top level or under "after" / "smart" / "smart_log"."""
    if not isinstance(tel, dict):
        return None
    for sub in (tel, tel.get("after"), tel.get("smart"), tel.get("smart_log"), tel.get("end")):
        if not isinstance(sub, dict):
            continue
        for k in ("temperature_c", "temperature_celsius", "composite_temperature_c"):
            v = sub.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
        for k in ("temperature_k", "temperature"):
            v = sub.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v) - 273.15 if (k == "temperature_k" or v > 200) else float(v)
    return None


def _or(v, default):
    return default if v is None else v


def _series_dict(s: Series | None) -> dict:
    """A tracking variable's rounds and values, as the convergence plot takes them."""
    return {} if s is None else {"rounds": list(s.rounds), "values": list(s.values)}


def _pct(a: float | None, avg: float | None) -> str:
    if a is None or not avg:
        return "—"
    return f"{100 * a / avg:.1f}%"


def _num(v: float | None, digits: int) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"
