"""What a report says, built from a run directory alone (manifest.json, steps.jsonl, summary.json).

The document model: a :class:`Report` is the SNIA header block (PTS.md §4), the compliance /
partial / steady-state banners, the front sections (datasheet, verdicts, report header) and one
section per test, each made of blocks (:class:`Para`, :class:`Alert`, :class:`Fields`,
:class:`Table`, :class:`Plot`). ``report/html.py`` renders it to one HTML document, which is
also the PDF (printed by Chromium, ``report/chromium.py``): page builders only make blocks.

Numbers: the IOPS and throughput tables are summary.json's; response-time statistics are
computed from the step records with ``pts/qos.py`` (the summary's LAT table uses the same
function); every numeric cell names the statistic it shows (``Cell.ref``), so that a test can
recompute each from fio's raw output. Nothing here runs fio or touches a device.
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
from ..pts.qos import QOS_PERCENTILES, WindowLatency, approx_max_note, ios_needed, pct_label, window_latency
from ..pts.registry import TESTS, title as test_title
from ..pts.lat import LatTable
from ..pts.steady_state import SteadyState
from ..pts.tp import TpTable
from ..pts.units import fmt_block_size
from ..pts.workload import Workload
from ..pts.wsat import WsatTable
from ..results.reader import RunResults, read_run_checked
from ..results.records import NoWindow, PartResult, Series, StepRecord
from ..results.registry import fmt_value as _fmt_value
from . import extended, plots

NA = "not available"
TEST_ORDER = tuple(TESTS)
# SNIA report page labels (seed 000, "SNIA report format"); a test without one gets "<title> Test – Report Page".
PAGE_LABELS = {
    "iops": "IOPS Test (REQUIRED) – Report Page",
    "tp": "Throughput Test (REQUIRED) – Report Page",
    "lat": "Latency Test (REQUIRED) – Report Page",
    "wsat": "Write Saturation Test (REQUIRED) – Report Page",
}


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
    css: str = ""  # "ok" / "bad" / "warn" for verdict cells
    # What the number is, "<part>:<cell key>:<statistic>" (docs/report.md "Numbers"): the HTML
    # carries it as data-ref and tests recompute every such value from fio's raw json+.
    ref: str = ""
    detail: str = ""  # HTML: the id of this cell's details (per-round values, histogram, fio job)
    flag: str = ""  # a qualifier shown with the value, e.g. "≈ max: fewer than 10⁵ IOs"


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
    draw: Callable[[Any], None]  # describes the plot into a chart.Figure (plots.py)
    size: tuple[float, float] = (10.0, 4.6)  # inches; the page scales it to its width
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
class PageHeader:
    """The running header of the printed pages of one test (or of the front pages): SNIA's
    administrative data, device and platform in a few lines, printed in full on every page."""

    label: str  # "IOPS Test (REQUIRED) – Report Page"
    lines: list[str]  # left block, under the label
    right: list[str]  # right block, under "Page x of y"
    footer: str = ""  # compliance / partial / steady-state status of these pages


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
    short_header: dict[str, str]  # a few fields for every page: pts, device, run date...
    description: list[tuple[str, str]] = field(default_factory=list)  # --describe FILE, flattened
    front: list[Section] = field(default_factory=list)  # datasheet, verdicts, report header
    page_headers: dict[str, PageHeader] = field(default_factory=dict)  # "" (front pages) and each test
    details: dict[str, dict] = field(default_factory=dict)  # HTML: per-cell details, by Cell.detail
    test_id: str = ""
    plot_mark: str | None = None  # printed inside every plot: "not PTS compliant"
    pdf_title: str = ""  # the document title (HTML <title>, PDF metadata)

    @property
    def toc(self) -> list[tuple[Section, list[Section]]]:
        return sections_toc(self.front + self.sections)

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

def load(run_dir: Path, targets: Path | str | None = None) -> Report:
    """Read a run directory (results.read_run_checked: steps included, read once) and build the report's content.
    ``targets``: a file of datasheet targets (report/datasheet.py) for the datasheet's target column.
    Files that differ from what the run recorded ('ssdpts verify') are reported as damage."""
    from .datasheet import read_targets

    run, damage = read_run_checked(run_dir)
    return Builder(run, read_targets(targets) if targets else None, damage=damage).build()


class Builder:
    def __init__(self, run: RunResults, targets=None, damage: list[str] | None = None):
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
        self.targets = targets
        self.records: dict[tuple[str, str], list[StepRecord]] = defaultdict(list)
        for s in run.steps or ():
            self.records[(s.test, s.part)].append(s)
        self.status = run.status
        self.partial = self.status != "complete"
        self.generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        self.test_id = run.uid
        self.details: dict[str, dict] = {}
        self._cells: dict[str, dict[int, dict[str, StepRecord]]] = {}
        self._lat: dict[tuple[str, str], WindowLatency] = {}

    def _t(self, name: str):
        """A field of the recorded target (None when the manifest has no target)."""
        t = self.man.target
        return getattr(t, name) if t is not None else None

    def _identity(self, name: str) -> str:
        """A device identity field (vendor, model, serial, firmware): what the device reported, else
        what the operator's --describe file says, marked as described (a loop device over a drive
        model, a disk behind a RAID controller), else "not available"."""
        v = self._t(name)
        if v:
            return str(v)
        d = self._description().get(name)
        return f"{d} (described)" if d else NA

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
        from . import datasheet, disclosure

        tests = self.tests_in_run()
        headers = {t: self.test_header(t) for t in tests}
        sections: list[Section] = []
        for t in tests:
            sections.extend(self.test_sections(t, headers[t]))
        bounds = self.boundary_section(tests)
        if bounds:
            sections.append(bounds)
        temp = self.temperature_section()
        if temp.new_page:
            sections.append(temp)
        prof = str(self.profile.get("name") or self.spec.profile or "").capitalize()
        pts = self.spec.pts_version or "2.0.2"
        model = self._t("model") or self._description().get("model") or self._t("name") or NA
        serial = self._identity("serial")
        title = f"SNIA SSS PTS {pts} {prof} — test report".replace("  ", " ")
        subtitle = f"{model}" + (f" · serial {serial}" if serial != NA else "")
        overview = self.overview_table(tests)
        front = [datasheet.section(self), self.verdicts_section(tests, overview),
                 self.header_section(tests, headers, disclosure)]
        if not temp.new_page:  # "not available: why", with the report header rather than on a page of its own
            front.append(temp)
        compliance = self.compliance_alert()
        pdf_title = ("DAMAGED " if self.damage else "") + ("PARTIAL " if self.partial else "") + f"{title}: {subtitle}"
        if compliance is not None:
            pdf_title += f" — {compliance.title}"
        short = {
            "pts": f"SNIA SSS PTS {pts} {prof}".strip(), "device": model,
            "serial": serial, "run_date": fmt_time(self.man.created),
            "report_date": self.generated, "run": self.run_dir.name,
            "software": f"ssdpts {self.man.ssdpts_version or '?'}, {self.man.fio_version or '?'}",
            "sponsor": self.sponsor(),
        }
        report = Report(
            run_dir=self.run_dir, title=title, subtitle=subtitle, status=self.status,
            partial=self.partial_alert(), compliance=compliance, notices=self.notices(),
            admin=self.admin_fields(tests), platform=self.platform_fields(), device=self.device_fields(),
            tests=headers, overview=overview, sections=sections, generated=self.generated,
            short_header=short, description=self.description_fields(), front=front,
            details=self.details, test_id=self.test_id, pdf_title=pdf_title,
            plot_mark=None if compliance is None else ("not PTS compliant: time-compressed"
                                                       if compliance.title.startswith("time-compressed")
                                                       else "not PTS compliant"))
        report.page_headers = self.page_headers(report, tests)
        return report

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
        b = self.run.summary.boundaries or {}
        if b.get("over_limit"):  # the PTS: no delay between steps; the device saw one
            by = "the device's view (block layer)" if "block layer" in str(b.get("source") or "") else "fio's timeline"
            extra.append(f"{b['over_limit']} step boundar{'y' if b['over_limit'] == 1 else 'ies'} over the limits by "
                         f"{by} (worst idle {b.get('worst_idle_ms', 0):.1f} ms, limit {b.get('idle_limit_ms', 10):g} ms): "
                         "see Step boundaries")
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
            ("Test ID", self.test_id),
            ("Test sponsor", self.sponsor()),
            ("Vendor", self._identity("vendor")),
            ("Model", self._identity("model")),
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
        return [
            ("Vendor", self._identity("vendor")),
            ("Model", self._identity("model")),
            ("Serial number", self._identity("serial")),
            ("Firmware", self._identity("firmware")),
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
        ext = extended.preconditioning(self, test)
        if ext:
            pc1 = ext[0]
        elif test == "wsat":
            pc1 = "none (WSAT starts from a purged device)"
        elif wipcs:
            pc1 = "; ".join(f"{w.workload}, TC 1 × QD 32, {mult:g}× AR = {w.io_bytes / 1e9:,.2f} GB "
                            f"in {w.duration_s:,.1f} s" for w in wipcs)
        else:
            pc1 = f"SEQ 128KiB writes, {mult:g}× AR (not reached: the run stopped first)"
        max_rounds = _or(self.spec.max_rounds, 25)
        toio = self.toio(test)
        pc2 = f"the test loop, {toio}, until steady state (at most {max_rounds} rounds)" if test != "wsat" else "none"
        if ext:
            pc2 = ext[1]
        elif test in ("cbw", "dirth"):
            pc2 = (f"the access pattern at 100% W, TC 32 × QD 32, rounds of 30 × 1 min until steady state (at most "
                   f"{max_rounds} rounds)")
        setup = [
            ("Data pattern", pattern),
            ("Active range", ar),
            ("AR segments", extended.segments_text(self) or _na(self.profile.get("segmentation"))),
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
        }.get(test) or extended.stimulus(self, test) or NA
        if test == "wsat" and self.spec.doc.get("wsat_pattern", "rnd4k-w") != "rnd4k-w":
            w = self._first_workload("wsat")
            stim = f"{w.label if w else self.spec.doc.get('wsat_pattern')}, continuous, one sample per step (PTS 2.0 option)"
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
                prefix = f"{part.part}: " if part.part else ""
                if ss is None:  # a fixed plan (HIR's wait states, XSR, operating points): no steady-state rule
                    rounds.append(f"{prefix}a fixed plan, {part.rounds_run or 0} rounds run "
                                  f"({part.stop_reason or 'stopped early'})")
                    continue
                verdict = "reached" if part.reached else "NOT reached"
                rounds.append(f"{prefix}{verdict}, window rounds {fmt_rounds(part.window_rounds)} "
                              f"of {part.rounds_run or 0} run")
            params.append(("Tracking variable" + ("s" if len(tracking) > 1 else ""), "; ".join(tracking) or NA))
            params.append(("Steady state", "; ".join(rounds) or NA))
            params.append(("Max rounds", f"{max_rounds}" + ("" if max_rounds == 25 else " (PTS: 25)")))
        for k, v in extended.params(self, test):  # the extended tests' own lines replace the generic ones
            i = next((n for n, (key, _) in enumerate(params) if key == k), None)
            if i is None:
                params.append((k, v))
            else:
                params[i] = (k, v)
        return TestHeader(test, test_title(test), setup, params)

    def page_headers(self, report: Report, tests: list[str]) -> dict[str, PageHeader]:
        """The running header of every printed page: SNIA's administrative data (page label, PTS
        revision, test ID, vendor, model, sponsor, dates), the device and the platform in one line
        each, and for a test its demand intensity, active range, purge and steady-state rounds."""
        h = self.host
        cap = self._t("size_bytes")
        device = " · ".join(x for x in (
            f"Vendor: {self._identity('vendor')}", f"SSD model: {self._identity('model')}",
            f"S/N {self._identity('serial')}", f"FW {self._identity('firmware')}",
            (f"{cap / 1e9:,.2f} GB" if cap else "capacity " + NA)) if x)
        platform = " · ".join(str(x) for x in (
            f"Platform: {_na(h.get('hostname'))}", _na(h.get("cpu_model")), _na(h.get("kernel")),
            _na(self.man.fio_version), f"ssdpts {_na(self.man.ssdpts_version)}") if x)
        admin = f"{report.short_header['pts']} · Test ID {self.test_id} · Test sponsor: {self.sponsor()}"
        right = [f"Test run: {fmt_time(self.man.created)}", f"Report: {self.generated}"]
        status = []
        if self.damage:  # on every printed page: the numbers can no longer be checked against fio's output
            status.append("DAMAGED run directory (ssdpts verify)")
        if report.partial:
            status.append(f"PARTIAL REPORT (run {self.status})")
        if report.compliance:
            status.append(report.compliance.title)
        out = {"": PageHeader("SNIA Solid State Storage PTS — Test Report", [admin, device, platform], right,
                              " · ".join(status))}
        for t in tests:
            th = report.tests[t]
            pids = self.part_ids(t)
            missed = [self.parts[p].title or p for p in pids
                      if self.parts[p].steady_state is not None and not self.parts[p].reached]
            params = dict(th.params)
            setup = dict(th.setup)
            ss = []
            for p in pids:
                part = self.parts[p]
                if part.steady_state is None:
                    continue
                verdict = "reached" if part.reached else "NOT reached"
                ss.append(f"{part.part + ' ' if part.part else ''}{verdict}, rounds {fmt_rounds(part.window_rounds)}")
            test_line = " · ".join(x for x in (
                params.get("Demand intensity", ""), f"AR {setup.get('Active range', NA)}",
                f"Purge: {setup.get('Purge', NA)}",
                f"Steady state: {'; '.join(ss)}" if ss else params.get("Samples", ""),
                f"step {params.get('Step length', NA)}") if x)
            foot = list(status) + ([f"steady state NOT reached: {', '.join(missed)}"] if missed else [])
            out[t] = PageHeader(PAGE_LABELS.get(t, f"{th.title} Test – Report Page"),
                                [admin, device, platform, test_line], right, " · ".join(foot))
        return out

    # ---- front pages ---------------------------------------------------------------------------
    def overview_table(self, tests: list[str]) -> Table:
        rows = []
        for t in tests:
            for pid in self.part_ids(t):
                part = self.parts[pid]
                title = part.title or pid
                ss = part.steady_state
                if t != "wsat" and ss is None:  # a fixed plan
                    n = part.rounds_run or 0
                    rows.append([Cell(title), Cell(""), Cell(f"{n} rounds"),
                                 Cell("n/a (a fixed plan)") if part.stop_reason == "complete" else
                                 Cell("not run" if not n else "stopped early", css="bad"), Cell("—")])
                    continue
                if t == "wsat" or ss is None:
                    n = part.samples or 0
                    verdict = (Cell("n/a (WSAT: no steady-state rule)") if n else Cell("not run", css="bad"))
                    fw = part.table.final_window_iops if isinstance(part.table, WsatTable) else None
                    rows.append([Cell(title), Cell(""), Cell(f"{n} samples"), verdict,
                                 Cell(f"last 5 samples: {fmt_value(fw, 'IOPS')} IOPS" if n else "—", fw,
                                      ref=f"{pid}:final_iops" if n else "")])
                    continue
                for i, v in enumerate(ss.variables):
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
                                 Cell(f"{fmt_value(avg, v.unit)} {v.unit}" if avg is not None else "—", avg,
                                      ref=f"{pid}:ss{i}:average" if avg is not None else "")])
        return Table("overview", "Steady state per tracking variable",
                     ["Test", "Tracking variable", "Window rounds", "Steady state", "Window average"], rows,
                     numeric=False)

    def verdicts_section(self, tests: list[str], overview: Table) -> Section:
        """The executive verdicts: per test one sentence, then the steady state of every tracking
        variable."""
        sec = Section("overview", "Verdicts", 2, None)
        items = []
        for t in tests:
            pids = self.part_ids(t)
            if not pids:
                items.append(f"{test_title(t)}: not run")
                continue
            for pid in pids:
                p = self.parts[pid]
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
        level = "bad" if self.partial or any(self.parts[p].reached is False for t in tests for p in self.part_ids(t)) \
            else ("warn" if self.run.deviations else "ok")
        sec.blocks.append(Alert(level, "test verdicts", items))
        sec.blocks.append(overview)
        return sec

    def header_section(self, tests: list[str], headers: dict[str, TestHeader], disclosure) -> Section:
        sec = Section("header", "Report header: test platform, device, parameters", 2, None, new_page=True)
        sec.blocks += [Fields("Administrative", self.admin_fields(tests)), Fields("Test platform", self.platform_fields()),
                       Fields("Device under test", self.device_fields())]
        if self.description_fields():
            sec.blocks.append(Fields("Device description (--describe file, supplied by the operator)",
                                     self.description_fields()))
        sec.blocks.append(Para("The set-up and test parameters of each test head its pages."))
        sec.blocks += disclosure.audit_blocks(self)
        sec.blocks += disclosure.fio_option_blocks(self)
        return sec

    # ---- per test ----------------------------------------------------------------------------
    def test_sections(self, test: str, header: TestHeader) -> list[Section]:
        sec = Section(test, header.title, 2, test, new_page=True)
        sec.blocks.append(Fields("Set-up parameters", header.setup))
        sec.blocks.append(Fields("Test parameters", header.params))
        pids = self.part_ids(test)
        if not pids:
            sec.blocks.append(Alert("bad", "not run", ["this test has no results in the run directory"]))
            return [sec]
        for pid in pids:
            for w in self.parts[pid].warnings:
                sec.blocks.append(Alert("warn", "warning", [w]))
        fn = {"iops": self.iops_sections, "tp": self.tp_sections, "lat": self.lat_sections,
              "wsat": self.wsat_sections, "hir": partial(extended.hir_sections, self),
              "xsr": partial(extended.xsr_sections, self), "cbw": partial(extended.demand_sections, self, "cbw"),
              "dirth": partial(extended.demand_sections, self, "dirth")}.get(test)
        if fn is None:
            sec.blocks.append(Para(f"ssdpts {self.man.ssdpts_version} has no report layout for test {test!r}."))
            return [sec]
        return [sec, *fn(pids)]

    def cells_by_round(self, part: PartResult) -> dict[int, dict[str, StepRecord]]:
        """Round -> cell key -> step, for the complete rounds summary.json lists."""
        if part.id in self._cells:
            return self._cells[part.id]
        rounds = {r for s in part.series.values() for r in s.rounds}
        out: dict[int, dict[str, StepRecord]] = {}
        for r in self.records.get((part.test, part.part), []):
            if r.phase == "round" and r.round in rounds:
                out.setdefault(r.round, {})[r.key] = r
        self._cells[part.id] = dict(sorted(out.items()))
        return self._cells[part.id]

    def window_steps(self, part: PartResult, key: str) -> list[StepRecord]:
        cells = self.cells_by_round(part)
        return [cells[r][key] for r in part.window_rounds if r in cells and key in cells[r]]

    def latency(self, part: PartResult, key: str) -> WindowLatency:
        """The response-time statistics of a cell over its window (pts/qos.py)."""
        k = (part.id, key)
        if k not in self._lat:
            self._lat[k] = window_latency([s.measurement for s in self.window_steps(part, key)])
        return self._lat[k]

    def steady_state_blocks(self, part: PartResult, prefix: str) -> list:
        """The verdict alert, the verdict table, the window values and a window plot per tracking
        variable."""
        variables = part.steady_state.variables if part.steady_state else ()
        window = part.window_rounds
        blocks: list = []
        rounds_run = part.rounds_run or 0
        pid = part.id
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
                else:
                    items.append(f"{v.variable}: passes alone in rounds {fmt_rounds(v.rounds)}, but every tracking "
                                 "variable must pass in the same window")
            blocks.append(Alert("bad", "steady state NOT reached", items))
        rows = []
        for i, v in enumerate(variables):
            unit = v.unit
            if isinstance(v, NoWindow):
                rows.append([Cell(v.variable), Cell("NOT reached", css="bad"), Cell("—"), Cell("—"),
                             Cell("—"), Cell("—"), Cell(v.note)])
                continue
            rows.append([
                Cell(v.variable),
                Cell("reached" if v.reached else "NOT reached", css="ok" if v.reached else "bad"),
                Cell(fmt_rounds(v.rounds)),
                Cell(f"{fmt_value(v.average, unit)} {unit}", v.average, ref=f"{pid}:ss{i}:average"),
                Cell(_limit_text(v.range, v.range_limit, v.range_ok, v.average, unit), v.range,
                     css="ok" if v.range_ok else "bad", ref=f"{pid}:ss{i}:range"),
                Cell(_limit_text(v.excursion, v.excursion_limit, v.excursion_ok, v.average, unit), v.excursion,
                     css="ok" if v.excursion_ok else "bad", ref=f"{pid}:ss{i}:excursion"),
                Cell(plots.fit_text(v.slope, v.intercept)),
            ])
        blocks.append(Table(f"{prefix}-ss", "Steady-state verdict per tracking variable (PTS 2.0.2 §2.1.24)",
                            ["Tracking variable", "Verdict", "Window rounds", "Average",
                             "Range (limit 20% of avg)", "Slope excursion (limit 10% of avg)", "Best fit"], rows,
                            note="Range: max − min of the window values. Slope excursion: |b| × (last round − first "
                                 "round) of the least-squares line y = b·x + a through the window. Each cell states "
                                 "the comparison that holds: ≤ the limit (pass) or > the limit (FAIL).",
                            numeric=False))
        # the window values as numbers, as TKperf lists them ("Values in stdy measurement window")
        measured = [(i, v) for i, v in enumerate(variables) if v.values]
        if measured:
            rounds = sorted({r for _, v in measured for r in v.rounds})
            vrows = []
            for i, v in measured:
                at = dict(zip(v.rounds, v.values))
                name = v.variable if v.variable.endswith(v.unit) else f"{v.variable} ({v.unit})"
                vrows.append([Cell(name)] +
                             [Cell(fmt_value(at.get(r), v.unit), at.get(r), ref=f"{pid}:ss{i}:r{r}" if r in at else "")
                              for r in rounds])
            blocks.append(Table(f"{prefix}-ss-values", "Tracking values in the steady-state window",
                                ["Tracking variable", *[f"round {r}" for r in rounds]], vrows))
        for i, v in enumerate(variables):
            if isinstance(v, NoWindow) or not v.values:
                continue
            blocks.append(Plot(f"{prefix}-window-{i + 1}", f"Steady-state window: {v.variable}",
                               "Tracking values in the measurement window with their average, the ±10% and ±20% "
                               "bands around it and the least-squares best-fit line; the box compares the allowed "
                               "and measured range and slope excursion.",
                               partial(plots.ss_window, var=v.to_dict(), part_reached=bool(part.reached)),
                               size=(10, 3.6)))
        return blocks

    def not_reached_note(self, part: PartResult) -> str:
        if part.reached:
            return f"Averages over the steady-state window, rounds {fmt_rounds(part.window_rounds)}."
        return (f"Steady state NOT reached: averages over rounds {fmt_rounds(part.window_rounds)}, "
                f"which are not a steady-state window.")

    def _ss_suffix(self, part: PartResult) -> str:
        return "" if part.reached else " — steady state NOT reached"

    # ---- shared pieces of the test pages ------------------------------------------------------
    def temperatures(self, test: str, part: str) -> tuple[tuple[list[int], list[float]] | None, Para | None]:
        """Per round the highest temperature the device reported in it (°C), as the (rounds, °C)
        overlay of plots.rounds_lines, or None with the note saying why there is none."""
        per: dict[int, float] = {}
        for r in self.records.get((test, part), []):
            c = temperature_c(r.telemetry)
            if c is not None and r.phase == "round":
                per[r.round] = max(per.get(r.round, c), c)
        if per:
            return (list(per), list(per.values())), None
        return None, self.temperature_note()

    def temperature_reason(self) -> str:
        """Why a run has no temperature: the telemetry's own reason, else that it recorded none."""
        tel = self.man.telemetry or {}
        for s in self.run.steps or ():
            t = s.telemetry or {}
            for snap in (t.get("after"), t.get("before")):
                if isinstance(snap, dict) and isinstance(snap.get("health"), str):
                    return str(snap["health"])
            if isinstance(t.get("reason"), str):
                return str(t["reason"])
            break
        if isinstance(tel.get("health"), str):
            return str(tel["health"])
        if isinstance(tel.get("reason"), str):
            return str(tel["reason"])
        if self.man.executor == "fake":
            return "not available: synthetic data (FakeExecutor) has no device telemetry"
        return "not available: the run directory records no device telemetry"

    def temperature_unavailable(self) -> str:
        """'not available: <why>', the run's reason for having no temperature."""
        reason = self.temperature_reason()
        return reason if reason.startswith("not available") else f"not available: {reason}"

    def temperature_note(self) -> Para:
        """The note under a plot that would overlay the temperature, when the run has none."""
        return Para(f"Temperature and throttling: {self.temperature_unavailable()}.")

    def cpu_table(self, part: PartResult, keys: list[tuple[str, str]], tid: str, title: str,
                  matrix: tuple[list[int], list[str]] | None = None) -> list:
        """fio's CPU use during the window (usr + sys, % of the job threads' run time): is the host
        the bottleneck? ``matrix``: lay the cells out as block size × mix (the IOPS test)."""
        per: dict[str, tuple[float, float, float]] = {}
        for key, _ in keys:
            ms = [s.measurement for s in self.window_steps(part, key)]
            ms = [m for m in ms if m.cpu_usr_pct is not None]
            if ms:
                usr = sum(m.cpu_usr_pct for m in ms) / len(ms)
                sy = sum(m.cpu_sys_pct or 0.0 for m in ms) / len(ms)
                per[key] = (usr, sy, usr + sy)
        if not per:
            return [Para("fio CPU utilisation: not available: the step records carry no fio usr/sys CPU "
                         "(runs recorded before ssdpts kept it)")]
        ncpu = self.host.get("cpu_count")

        def cell(key: str) -> Cell:
            if key not in per:
                return Cell("—")
            _, _, tot = per[key]  # usr and sys per round: the cell's details
            return Cell(f"{tot:.1f}%", tot, css="warn" if tot >= 80 else "", ref=f"{part.id}:{key}:cpu_pct")

        if matrix:
            bss, mixes = matrix
            rows = [[Cell(_bs_label(bs))] + [cell(f"rand-{bs}-{m.split('/')[0]}") for m in mixes] for bs in bss]
            cols = ["Block size ↓ / R/W mix →", *mixes]
        else:
            rows = [[Cell(label), cell(key)] for key, label in keys]
            cols = ["Cell", "fio CPU (usr + sys)"]
        note = ("fio's usr_cpu + sys_cpu: CPU time of the job's threads as % of their run time, averaged over the "
                "threads and over the window. Near 100%, a fio thread is busy all the time: the host, not the device, "
                "may limit the result (amber from 80%)." + (f" The host has {ncpu} logical CPUs." if ncpu else ""))
        return [Table(tid, title, cols, rows, note=note)]

    def cell_refs(self, part: PartResult, metric: str):
        """A table cell of a window statistic, linked to its details: (key, label, value) -> Cell."""
        def make(key: str, value: float | None, unit: str, *, stat: str = metric, flag: str = "") -> Cell:
            return Cell(fmt_value(value, unit), value, ref=f"{part.id}:{key}:{stat}" if value is not None else "",
                        detail=f"d-{part.id}-{key}" if f"d-{part.id}-{key}" in self.details else "", flag=flag)
        return make

    def qos_table(self, part: PartResult, keys: list[tuple[str, str]], tid: str, title: str) -> Table:
        """p50 … p99.9999 and max of each cell over its window, with the IO count; a percentile the
        sample cannot resolve is flagged "≈ max" (pts/qos.py)."""
        rows = []
        for key, label in keys:
            w = self.latency(part, key)
            row = [Cell(label), Cell(f"{w.ios:,}", w.ios, ref=f"{part.id}:{key}:ios")]
            for p in QOS_PERCENTILES:
                v = w.percentile_us(p)
                flag = approx_max_note(p) if v is not None and not w.resolved(p) else ""
                row.append(Cell(fmt_value(v, "µs"), v, ref=f"{part.id}:{key}:p{p:g}_us" if v is not None else "",
                                css="approx" if flag else "", flag=flag))
            row.append(Cell(fmt_value(w.max_us, "µs"), w.max_us, ref=f"{part.id}:{key}:lat_max_us"
                            if w.max_us is not None else ""))
            rows.append(row)
        return Table(tid, title + self._ss_suffix(part), ["Cell", "IOs", *[f"p{pct_label(p)[:-1]}" for p in QOS_PERCENTILES],
                                                          "max"], rows,
                     note="Response times in µs from the pooled fio json+ histogram of the window's steps (reads and "
                          "writes), never above the window's maximum. fio's bins are at most 1/64 of their value wide "
                          "and it reports each bin's midpoint: a percentile is known to ±0.8%. "
                          f"Grey '≈ max': fewer IOs than the percentile needs (10⁵ for 99.999%, "
                          f"{ios_needed(99.9999):,} for 99.9999%): the value is the slowest IOs, not the percentile.")

    # IOPS ----------------------------------------------------------------------------------
    def iops_sections(self, pids: list[str]) -> list[Section]:
        from . import details

        out = []
        for pid in pids:
            part = self.parts[pid]
            sid = pid
            window = list(part.window_rounds)
            cells = self.cells_by_round(part)
            details.add(self, part, "iops", "IOPS")
            ssb = self.steady_state_blocks(part, sid)
            conv = Section(f"{sid}-convergence", "IOPS: steady-state convergence", 3, "iops")
            conv.blocks += ssb[:1]
            if cells:
                # every block size at R/W 0/100, per round; smallest block (highest IOPS) first, as the lines stack
                by_bs: dict[int, tuple[list[int], list[float], list[str]]] = {}
                for rno, rc in cells.items():
                    for c in rc.values():
                        if c.workload.read_pct == 0:
                            xs, ys, ns = by_bs.setdefault(c.workload.block_size_bytes, ([], [], []))
                            xs.append(rno)
                            ys.append(c.measurement.iops)
                            ns.append(f"step {c.index} of round {rno} ({c.label})")
                series = {_bs_label(bs): by_bs[bs][:2] for bs in sorted(by_bs)}
                notes = {_bs_label(bs): by_bs[bs][2] for bs in sorted(by_bs)}
                temps, temps_note = self.temperatures("iops", part.part)
                conv.blocks.append(Plot(f"{sid}-convergence-bs", "IOPS convergence: every block size at R/W 0/100",
                                        "IOPS of each block size, RND 100% write, per round; the shaded band is the "
                                        "measurement window" + ("; dashed grey, right axis: the device's highest "
                                                                "temperature in each round." if temps else "."),
                                        partial(plots.rounds_lines, panels=[("RND 0/100 by block size", series, "IOPS", True)],
                                                window=window, reached=bool(part.reached), notes=notes,
                                                temperature=temps),
                                        size=(10, 4.4)))
                if temps_note:
                    conv.blocks.append(temps_note)
                tvars = [(v.variable, v.unit, _series_dict(part.series.get(v.variable)))
                         for v in (part.steady_state.variables if part.steady_state else ())]
                conv.blocks.append(Plot(f"{sid}-convergence-tracking", "IOPS convergence: tracking variables",
                                        "Each tracking variable per round; all must pass in the same window (PTS 2.0.2).",
                                        partial(plots.tracking_convergence, variables=tvars, window=window,
                                                reached=bool(part.reached)),
                                        size=(10, 1.3 + 1.25 * max(1, len(tvars)))))
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
            make = self.cell_refs(part, "iops")
            rows = [[Cell(_bs_label(r.block_size_bytes))] +
                    [make(f"rand-{r.block_size_bytes}-{m.split('/')[0]}", r.values.get(m), "IOPS") for m in mixes]
                    for r in rows_sorted]
            res.blocks.append(Table(f"{sid}-table", "Average IOPS vs block size and R/W mix" + self._ss_suffix(part),
                                    ["Block size ↓ / R/W mix →", *mixes], rows,
                                    note=self.not_reached_note(part) + " Each value links to its rounds, histogram "
                                                                       "and fio job (HTML)."))
            bss = [r.block_size_bytes for r in rows_sorted]
            z = [[r.values.get(m) for m in mixes] for r in rows_sorted]
            res.blocks.append(Plot(f"{sid}-2d", "IOPS vs block size, one line per R/W mix" + self._ss_suffix(part),
                                   self.not_reached_note(part),
                                   partial(plots.iops_vs_bs, bss=bss, mixes=mixes, z=z), size=(10, 4.6)))
            res.blocks.append(Plot(f"{sid}-3d", "IOPS 3D plot: R/W mix × block size" + self._ss_suffix(part),
                                   self.not_reached_note(part),
                                   # largest block (fewest IOPS) in front, so that no bar hides another
                                   partial(plots.bars3d, xlabels=mixes, ylabels=[_bs_label(b) for b in bss][::-1],
                                           z=z[::-1], zlabel="IOPS", xname="R/W mix", yname="block size"),
                                   size=(9, 5.6)))
            qos_keys = [(k, lab) for k, lab in (("rand-4096-100", "RND 4KiB 100/0"), ("rand-4096-65", "RND 4KiB 65/35"),
                                                ("rand-4096-0", "RND 4KiB 0/100")) if self.window_steps(part, k)]
            if qos_keys:
                res.blocks.append(self.qos_table(part, qos_keys, f"{sid}-qos",
                                                 f"Response-time QoS at {self.toio('iops')} (µs)"))
            res.blocks += self.cpu_table(part, [(f"rand-{bs}-{m.split('/')[0]}", "") for bs in bss for m in mixes],
                                         f"{sid}-cpu", "fio CPU utilisation per cell (usr + sys, %)" + self._ss_suffix(part),
                                         matrix=(bss, mixes))
            out.append(res)
        return out

    # TP ------------------------------------------------------------------------------------
    def tp_sections(self, pids: list[str]) -> list[Section]:
        from . import details

        out = []
        summary_rows: list[tuple[TpTable, PartResult]] = []
        for pid in pids:
            part = self.parts[pid]
            name = part.part or pid
            window = list(part.window_rounds)
            details.add(self, part, "tp", "MB/s")
            ssb = self.steady_state_blocks(part, pid)
            sec = Section(pid, f"Throughput {name}", 3, "tp")
            sec.blocks += ssb[:1]
            cells = self.cells_by_round(part)
            if cells:
                rs: dict[int, float] = {}
                ws: dict[int, float] = {}
                notes: dict[str, list[str]] = {f"SEQ {name} read": [], f"SEQ {name} write": []}
                for rno, rc in cells.items():
                    for c in rc.values():
                        if c.workload.read_pct == 100:
                            rs[rno] = c.measurement.read.bw_bytes_per_s / 1e6
                            notes[f"SEQ {name} read"].append(f"step {c.index} of round {rno}")
                        elif c.workload.read_pct == 0:
                            ws[rno] = c.measurement.write.bw_bytes_per_s / 1e6
                            notes[f"SEQ {name} write"].append(f"step {c.index} of round {rno}")
                series = {f"SEQ {name} read": (list(rs), list(rs.values())),
                          f"SEQ {name} write": (list(ws), list(ws.values()))}
                temps, temps_note = self.temperatures("tp", part.part)
                sec.blocks.append(Plot(f"{pid}-convergence", f"Throughput {name}: convergence, read and write",
                                       "MB/s (base 10) per round of the SEQ read and SEQ write steps; steady state is "
                                       "tracked on write. The shaded band is the measurement window.",
                                       partial(plots.rounds_lines, panels=[(f"SEQ {name}", series, "MB/s", False)],
                                               window=window, reached=bool(part.reached), notes=notes,
                                               temperature=temps),
                                       size=(10, 3.8)))
                if temps_note:
                    sec.blocks.append(temps_note)
            sec.blocks += ssb[1:]
            tab = part.table
            if isinstance(tab, TpTable):
                bs = tab.block_size_bytes
                make = self.cell_refs(part, "")
                sec.blocks.append(Table(f"{pid}-table", f"Average MB/s, SEQ {name}" + self._ss_suffix(part),
                                        ["Block size", "Read MB/s", "Write MB/s"],
                                        [[Cell(_bs_label(bs)),
                                          make(f"seq-{bs}-100", tab.read_mb_per_s, "MB/s", stat="read_mb_per_s"),
                                          make(f"seq-{bs}-0", tab.write_mb_per_s, "MB/s", stat="write_mb_per_s")]],
                                        note=self.not_reached_note(part) + " MB/s = 10⁶ bytes per second."))
                sec.blocks += self.cpu_table(part, [(f"seq-{bs}-100", f"SEQ {name} read"),
                                                    (f"seq-{bs}-0", f"SEQ {name} write")],
                                             f"{pid}-cpu", f"fio CPU utilisation, SEQ {name} (usr + sys, %)")
                summary_rows.append((tab, part))
            out.append(sec)
        if summary_rows:
            summary_rows.sort(key=lambda tp: tp[0].block_size_bytes)
            sec = Section("tp-results", "Throughput: all block sizes", 3, "tp")
            rows = []
            for t, p in summary_rows:
                make = self.cell_refs(p, "")
                bs = t.block_size_bytes
                rows.append([Cell(_bs_label(bs) + self._ss_suffix(p)),
                             make(f"seq-{bs}-100", t.read_mb_per_s, "MB/s", stat="read_mb_per_s"),
                             make(f"seq-{bs}-0", t.write_mb_per_s, "MB/s", stat="write_mb_per_s")])
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
                                   size=(10, 3.8)))
            out.append(sec)
        return out

    # LAT -----------------------------------------------------------------------------------
    def lat_sections(self, pids: list[str]) -> list[Section]:
        from . import details

        out = []
        for pid in pids:
            part = self.parts[pid]
            window = list(part.window_rounds)
            cells = self.cells_by_round(part)
            details.add(self, part, "lat_mean_us", "µs")
            ssb = self.steady_state_blocks(part, pid)
            conv = Section(f"{pid}-convergence", "Latency: steady-state convergence", 3, "lat")
            conv.blocks += ssb[:1]
            if cells:
                first = next(iter(cells.values()))
                keys = [c.key for c in sorted(first.values(), key=lambda c: c.index)]
                labels = {c.key: f"{_bs_label(c.workload.block_size_bytes)} {c.workload.mix}" for c in first.values()}
                mean, mx, notes = {}, {}, {}
                for k in keys:
                    xs = [r for r in cells if k in cells[r]]
                    mean[labels[k]] = (xs, [cells[r][k].measurement.lat_mean_ns / 1e3 for r in xs])
                    mx[labels[k]] = (xs, [cells[r][k].measurement.lat_max_ns / 1e3 for r in xs])
                    notes[labels[k]] = [f"step {cells[r][k].index} of round {r}" for r in xs]
                temps, temps_note = self.temperatures("lat", part.part)
                conv.blocks.append(Plot(f"{pid}-convergence", "Latency convergence: mean and max response time",
                                        "Mean (top) and maximum (bottom) response time of every RND cell per round, "
                                        "TC 1 / QD 1; the shaded band is the measurement window.",
                                        partial(plots.rounds_lines, panels=[("mean response time", mean, "µs", True),
                                                                            ("max response time", mx, "µs", True)],
                                                window=window, reached=bool(part.reached), notes=notes,
                                                temperature=temps),
                                        size=(10, 6.6)))
                if temps_note:
                    conv.blocks.append(temps_note)
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

            def key(bs: int, mix: str) -> str:
                return f"rand-{bs}-{mix.split('/')[0]}"

            def stats(bs: int, mix: str) -> WindowLatency | None:
                return self.latency(part, key(bs, mix)) if (bs, mix) in at else None

            note = self.not_reached_note(part)
            make = self.cell_refs(part, "")

            def lat_cell(bs: int, mix: str, what: str) -> Cell:
                w = stats(bs, mix)
                if w is None or not w.steps:
                    row = at.get((bs, mix))  # no step records: the summary's value
                    v = row.value({"mean": "lat_mean_us", "p5": "lat_p99999_us", "max": "lat_max_us",
                                   "iops": "iops"}[what]) if row else None
                    return Cell(fmt_value(v, "IOPS" if what == "iops" else "µs"), v)
                k = key(bs, mix)
                if what == "mean":
                    return make(k, w.mean_us, "µs", stat="lat_mean_us")
                if what == "max":
                    return make(k, w.max_us, "µs", stat="lat_max_us")
                if what == "iops":
                    return make(k, at[(bs, mix)].value("iops"), "IOPS", stat="iops")
                v = w.percentile_us(99.999)
                return make(k, v, "µs", stat="p99.999_us", flag=approx_max_note(99.999) if not w.resolved(99.999) else "")

            for what, tid, title in (("mean", "lat-mean-us", "Average response time (µs)"),
                                     ("p5", "lat-p99999-us", "99.999% (five nines) response time (µs), pooled over "
                                                             "the window"),
                                     ("max", "lat-max-us", "Maximum response time (µs): the largest in the window"),
                                     ("iops", "iops", "IOPS")):
                trows = [[Cell(_bs_label(bs))] + [lat_cell(bs, m, what) for m in mixes] for bs in bss]
                for row in trows:
                    for c in row:
                        if c.flag:
                            c.css = "approx"
                tnote = note
                if what == "p5":
                    w_all = [stats(bs, m) for bs in bss for m in mixes if stats(bs, m)]
                    n = min((w.ios for w in w_all if w.steps), default=0)
                    tnote += (f" The percentile of all IOs of the window's steps (pts/qos.py); the fewest IOs in a cell: "
                              f"{n:,}. With fewer than 10⁵ IOs the 99.999% is the slowest IO (grey, '≈ max').")
                res.blocks.append(Table(f"{pid}-{tid}", title + self._ss_suffix(part),
                                        ["Block size ↓ / R/W mix →", *mixes], trows, note=tnote))
            qkeys = [(key(bs, m), f"RND {_bs_label(bs)} {m}") for m in mixes for bs in sorted(bss, reverse=True)
                     if (bs, m) in at]
            res.blocks.append(self.qos_table(part, qkeys, f"{pid}-qos", "Response-time QoS, TC 1 / QD 1 (µs)"))
            zmean = [[(stats(bs, m).mean_us if stats(bs, m) and stats(bs, m).steps else None) for m in mixes] for bs in bss]
            zmax = [[(stats(bs, m).max_us if stats(bs, m) and stats(bs, m).steps else None) for m in mixes] for bs in bss]
            ylabels = [_bs_label(b) for b in bss]
            res.blocks.append(Plot(f"{pid}-3d", "Latency 3D plots: mean and maximum response time" + self._ss_suffix(part),
                                   note + " Maximum: the largest response time in the window.",
                                   partial(plots.bars3d_pair, xlabels=mixes, ylabels=ylabels, za=zmean, zb=zmax,
                                           titles=("mean response time (µs)", "max response time (µs)")),
                                   size=(10, 4.6)))
            hist = self.histograms(cells, window)
            if hist:
                res.blocks.append(Plot(f"{pid}-histogram", "Response-time histograms" + self._ss_suffix(part),
                                       "IOs per response-time bin (fio json+ histogram over every step of the "
                                       "measurement window, reads and writes together), one outline per block size; "
                                       "the legend gives each cell's IO count.",
                                       partial(plots.latency_histograms, panels=hist), size=(10, 4.0)))
                conf = []
                for mix, cells_ in hist:
                    for bs_label, bins in cells_:
                        bs = next(b for b in bss if _bs_label(b) == bs_label)
                        w = stats(bs, mix)
                        conf.append((f"{bs_label} {mix}", bins, w.max_us if w else None,
                                     w.percentile_us(99.999) if w else None))
                res.blocks.append(Plot(f"{pid}-confidence", "Confidence curves: share of IOs completed within a "
                                                            "response time" + self._ss_suffix(part),
                                       "One panel per cell. The vertical axis is log(1 − p): 90%, 99%, 99.9% … are "
                                       "equally spaced, so the tail shows. A curve ends at 1 − 1/N for N IOs (red "
                                       "triangle: the slowest IO); dashed amber: the 99.999% value.",
                                       partial(plots.confidence_curves, cells=conf),
                                       size=(10, 2.2 * math.ceil(len(conf) / 3) + 0.6)))
            res.blocks += self.cpu_table(part, [(key(bs, m), f"RND {_bs_label(bs)} {m}") for m in mixes
                                                for bs in sorted(bss, reverse=True) if (bs, m) in at],
                                         f"{pid}-cpu", "fio CPU utilisation per cell (usr + sys, %)")
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
            fob = series[0].iops
            final = tab.final_window_iops
            sec.blocks.append(Alert("info" if part.stop_reason else "bad", f"{len(series)} samples; {why}",
                                    [f"{tab.tgbw_gb:,.2f} GB written = {_num(tab.drive_fills, 2)} "
                                     f"drive fills; FOB (first sample) {fmt_value(fob, 'IOPS')} IOPS; last 5 samples "
                                     f"(minutes {fmt_rounds(tab.final_window_minutes)}) average "
                                     f"{fmt_value(final, 'IOPS')} IOPS"]))
            # the x axis in the run's real time: seconds, minutes or hours since the first sample
            t0 = series[0].start_time
            starts = [s.start_time for s in series]
            # the clock only where it runs forward (a clock set back, or the FakeExecutor's per-chunk
            # clock, would fold the samples onto each other): else the sample number × step length
            if None not in starts and all(b >= a for a, b in zip(starts, starts[1:])):
                secs = [float(s.start_time) - float(t0) for s in series]
            else:
                secs = [(s.minute - 1) * step_s for s in series]
            span = max(secs[-1], step_s)
            unit, div = ("s", 1.0) if span < 300 else (("min", 60.0) if span < 300 * 60 else ("h", 3600.0))
            tx = [v / div for v in secs]
            xlabel = f"time since the first sample ({unit})" + (
                " = PTS minutes" if unit == "min" and step_s == 60 else f"; one sample = one step of {step_s:g} s")
            notes = "sample "  # hover: "sample 7" (samples are numbered from 1, one per step)
            iops = [s.iops for s in series]
            nfinal = len(tab.final_window_minutes)
            recs = [r for r in self.records.get(("wsat", part.part), []) if r.phase == "round"]
            temps = [(float(r.start_time) - float(t0)) / div if (r.start_time is not None and t0 is not None) else None
                     for r in recs]
            tc = [temperature_c(r.telemetry) for r in recs]
            tpts = [(x, c) for x, c in zip(temps, tc) if x is not None and c is not None]
            temperature = ([x for x, _ in tpts], [c for _, c in tpts]) if tpts else None
            sec.blocks.append(Plot(f"{pid}-iops-time", "WSAT: IOPS vs time",
                                   "RND 4KiB write IOPS of every sample: fresh-out-of-box (FOB, star) level first, then "
                                   "the transition, then the steady region; the final 5 samples are shaded"
                                   + ("; dashed grey, right axis: device temperature." if temperature else "."),
                                   partial(plots.wsat_scatter, x=tx, y=iops, xlabel=xlabel, ylabel="IOPS",
                                           final=nfinal, notes=notes, unit="IOPS", temperature=temperature,
                                           xname=f"time ({unit})"), size=(10, 3.6)))
            if not temperature:
                sec.blocks.append(self.temperature_note())
            tg = [s.tgbw_gb for s in series]
            sec.blocks.append(Plot(f"{pid}-iops-tgbw", "WSAT: IOPS vs total GB written (TGBW)",
                                   "The same samples against the data written so far (GB, base 10).",
                                   partial(plots.wsat_scatter, x=tg, y=iops, xlabel="total GB written (TGBW)",
                                           ylabel="IOPS", final=nfinal, notes=notes, unit="IOPS", xname="TGBW (GB)"),
                                   size=(10, 3.6)))
            fills = [s.drive_fills for s in series]
            if all(f is not None for f in fills):
                sec.blocks.append(Plot(f"{pid}-iops-fills", "WSAT: IOPS vs drive fills",
                                       "The same samples against drive fills (bytes written ÷ user capacity).",
                                       partial(plots.wsat_scatter, x=fills, y=iops, xlabel="drive fills", ylabel="IOPS",
                                               final=nfinal, notes=notes, unit="IOPS", xname="drive fills"),
                                       size=(10, 3.6)))
            lat = {"mean": ([*tx], [s.lat_mean_us for s in series]),
                   "99.999%": ([*tx], [s.lat_p99999_us for s in series]),
                   "max": ([*tx], [s.lat_max_us for s in series])}
            sec.blocks.append(Plot(f"{pid}-lat-time", "WSAT: response time vs time (mean, 99.999%, max)",
                                   "Mean, 99.999% (dashed) and maximum response time of every sample (µs, log "
                                   "scale); a sample's percentile comes from its own json+ histogram, never above its "
                                   "max: with fewer than 10⁵ IOs in a sample, its 99.999% is its slowest IO and the "
                                   "dashed line lies on the max.",
                                   partial(plots.rounds_lines, panels=[("response time per sample", lat, "µs", True)],
                                           window=[], reached=True, notes={k: notes for k in lat}, xlabel=xlabel,
                                           dashed=("99.999%",)),
                                   size=(10, 3.6)))
            sec.blocks += extended.wsat_blocks(self, pid, tab)
            n = len(series)
            stride = max(1, math.ceil(n / 120))  # at most two printed pages
            ios = {r.index: r.measurement.ios for r in recs}
            rows = []
            for i, s in enumerate(series):
                if i % stride and i != n - 1:
                    continue
                r = f"{pid}:m{s.minute}"
                k = ios.get(s.minute)
                flag = approx_max_note(99.999) if k is not None and k < ios_needed(99.999) else ""
                rows.append([Cell(str(s.minute), s.minute), Cell(fmt_value(s.iops, "IOPS"), s.iops, ref=f"{r}:iops"),
                             Cell(fmt_value(s.tgbw_gb), s.tgbw_gb, ref=f"{r}:tgbw_gb"),
                             Cell(fmt_value(s.drive_fills), s.drive_fills, ref=f"{r}:drive_fills"),
                             Cell("—" if k is None else f"{k:,}", k, ref=f"{r}:ios" if k is not None else ""),
                             Cell(fmt_value(s.lat_mean_us), s.lat_mean_us, ref=f"{r}:lat_mean_us"),
                             Cell(fmt_value(s.lat_p99999_us), s.lat_p99999_us, ref=f"{r}:p99.999_us", flag=flag,
                                  css="approx" if flag else ""),
                             Cell(fmt_value(s.lat_max_us), s.lat_max_us, ref=f"{r}:lat_max_us")])
            sec.blocks.append(Table(f"{pid}-table", "WSAT samples" + (f" (one in {stride} and the last)" if stride > 1 else ""),
                                    ["Minute", "IOPS", "TGBW (GB)", "Drive fills", "IOs", "Mean (µs)", "99.999% (µs)",
                                     "Max (µs)"],
                                    rows, note="Every sample is in summary.json and steps.jsonl. 'Minute' numbers the "
                                               "samples (PTS: one sample per minute). A sample's 99.999% comes from "
                                               "its own json+ histogram; with fewer than 10⁵ IOs it is its slowest IO "
                                               "(grey, '≈ max')."))
            out.append(sec)
        return out

    # Step boundaries -------------------------------------------------------------------------
    def boundary_section(self, tests: list[str]) -> Section | None:
        """Per part and round: median and worst idle and overlap at the step boundaries as the device
        saw them (the block layer, engine/devtrace.py) or, without a trace, as fio's timeline shows
        them; beside the device's worst, the timeline's where they differ; every boundary over the
        limits, and the likely cause (docs/methodology.md)."""
        rows, flagged = [], []
        limit, sources, contention = None, set(), 0
        parts = [self.parts[pid] for t in tests for pid in self.part_ids(t)]
        differs = any((p.boundaries or {}).get("differs_from_recorded") for p in parts)
        for part in parts:
            b = part.boundaries or {}
            limit = b.get("idle_limit_ms", limit)
            sources.update(x for x in str(b.get("source") or "fio timeline").split(" and ") if x)
            for r in b.get("rounds") or []:
                idle, over, rec = r.get("idle_ms") or {}, r.get("overlap_ms") or {}, r.get("recorded_idle_ms") or {}
                bad = r.get("over_limit", 0)
                ref = f"{part.id}:b{r['round']}:"  # recomputed from the steps' times (tests/report_numbers.py)
                rows.append([Cell(f"{part.title} · round {r['round']}"),
                             Cell(str(r.get("boundaries", 0)), r.get("boundaries"), ref=ref + "boundaries"),
                             Cell(_num(idle.get("median"), 2), idle.get("median"), ref=ref + "idle_median"),
                             Cell(_num(idle.get("worst"), 2), idle.get("worst"), ref=ref + "idle_worst"),
                             *([Cell(_num(rec.get("worst"), 2), rec.get("worst"), ref=ref + "recorded_idle_worst",
                                     css="dim")] if differs else []),
                             Cell(_num(over.get("worst"), 2), over.get("worst"), ref=ref + "overlap_worst"),
                             Cell(str(bad), bad, css="bad" if bad else "ok", ref=ref + "over_limit")])
            for f in b.get("flagged") or []:
                # released on time by fio's timeline, late at the device: fio's thread ran late
                host = (f.get("source") == "block layer" and f["idle_ms"] > (limit or 10.0)
                        and f.get("recorded_gap_ms", 0.0) - float(f.get("planned_idle_ms") or 0.0) <= (limit or 10.0))
                contention += host
                flagged.append(f"{part.title} round {f['round']} step {f['index']} ({f.get('label', '')}, after "
                               f"{f.get('after')}): {f.get('why')}"
                               + (f" (fio's timeline: {max(f.get('recorded_gap_ms', 0.0), 0.0):.1f} ms)" if host else ""))
        if not rows:
            return None
        device = "block layer" in sources
        sec = Section("boundaries", "Step boundaries", 2, None, new_page=True)
        if flagged:
            shown = flagged[:20] + ([f"… and {len(flagged) - 20} more (summary.json)"] if len(flagged) > 20 else [])
            if contention:
                shown.append(f"{contention} of them were released on time and stalled before fio's first IO reached "
                             "the device: the host was slow to run fio (CPU contention). --realtime (SCHED_FIFO for "
                             "ssdpts's schedule and fio) or a quieter host holds the boundaries.")
            by = " by the device's view" if device else ""
            sec.blocks.append(Alert("warn", f"{len(flagged)} step boundar{'y' if len(flagged) == 1 else 'ies'} "
                                            f"over the limits{by}", shown))
        else:
            sec.blocks.append(Alert("ok", "every step boundary within the limits" + (" as the device saw it" if device else ""),
                                    [f"idle at most {limit:g} ms; no overlap into or out of a TC1/QD1 step"]))
        if not device:
            sec.blocks.append(Alert("warn", "boundaries from fio's timeline, not the device's", [
                "the kernel's block tracepoints were not available for this run ("
                + str(self.man.doc.get("boundary_source", {}).get("why") or "not recorded") + "): each boundary is "
                "the gate's release to fio's reported run time, which cannot see the time from a step's release to "
                "its first IO reaching the device, nor from its last completion to the gate hearing of it — a host "
                "stalling fio there is missed (run as root with tracefs to measure at the block layer)"]))
        sec.blocks.append(Table("boundaries-table", "Idle and overlap at step boundaries, per round (ms)",
                                ["Test · round", "Boundaries", "Idle median", "Idle worst",
                                 *(["fio timeline: idle worst"] if differs else []), "Overlap worst", "Over limit"], rows,
                                note=f"A round's boundaries: the one from the previous round (or WIPC) and those between "
                                     f"its steps. Idle: no IO in flight, "
                                     + ("as the device saw it: the previous step's last completion to the next step's "
                                        "first issue at the block layer (kernel tracepoints, 1 µs)" if device else
                                        "from each step's observed timeline (resolution 1 ms)")
                                     + (f"; beside it, fio's timeline where the two differ by more than its 1 ms "
                                        "resolution" if differs else "")
                                     + f"; beyond the planned idle after a step where the test plans one (HIR). "
                                     f"Limits: idle ≤ {limit:g} ms; no overlap, and no IO issued while another is in "
                                     f"flight, when either step is TC1/QD1, else overlap at most the previous step's "
                                     f"maximum response time (its drain). Per boundary: steps.jsonl \"boundary\" and "
                                     f"\"device\". Schedule: {self._priority()}."))
        return sec

    def _priority(self) -> str:
        if self.spec.doc.get("realtime"):
            return "ssdpts's step gate and fio at real-time priority (SCHED_FIFO 1, --realtime)"
        return ("ssdpts's step gate and fio at normal priority (a busy host can stretch boundaries; "
                "--realtime holds them)")

    # Temperature ---------------------------------------------------------------------------
    def temperature_section(self) -> Section:
        pts: list[tuple[float, float, str]] = []
        for (test, _part), recs in self.records.items():
            for r in recs:
                c = temperature_c(r.telemetry)
                if c is not None and r.end_time is not None:
                    pts.append((float(r.end_time), c, test_title(str(test))))
        sec = Section("temperature", "Device temperature", 2, None, new_page=bool(pts))
        if not pts:
            sec.blocks.append(Alert("info", "temperature " + self.temperature_unavailable()))
            return sec
        pts.sort()
        t0 = pts[0][0]
        sec.blocks.append(Plot("temperature-plot", "Device temperature over the run",
                               "Composite temperature reported by the device (telemetry of each step), by test.",
                               partial(plots.temperature, t_min=[(p[0] - t0) / 60 for p in pts], temp_c=[p[1] for p in pts],
                                       tests=[p[2] for p in pts]), size=(10, 3.8)))
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


def _limit_text(measured: float, limit: float, ok: bool, avg: float, unit: str) -> str:
    """'1,234 ≤ 2,935 (8.4%)' when it passes, '3,329 > 2,935 (22.7%)' when it fails: the printed
    inequality always holds."""
    return f"{fmt_value(measured, unit)} {'≤' if ok else '>'} {fmt_value(limit, unit)} ({_pct(measured, avg)})"


def _num(v: float | None, digits: int) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"
