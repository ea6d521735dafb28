"""A run's report assembled from its run directory alone (manifest.json, steps.jsonl, summary.json):
the front matter (front.py, datasheet.py), each test's pages (its kind's, pages/: one module per kind) and the
run's own sections, in this order of making:

1. every table cell's details (details.py): the test pages and the datasheet link to them;
2. each test's header (headers.py) and pages, in the run's test order, then the step boundaries
   and the device temperature;
3. the front sections: the datasheet, the verdicts, the report header;
4. the running headers of the printed pages, which read the test headers and the banners.

Numbers: the IOPS and throughput tables are summary.json's; response-time statistics are computed
from the step records with ``pts/qos.py`` (the summary's LAT table uses the same function); every
numeric cell names the statistic it shows (``Cell.ref``), so that a test can recompute each from
fio's raw output. Nothing here runs fio or touches a device.
"""

from __future__ import annotations

from pathlib import Path

from ..pts.runspec import marks
from ..results.reader import read_run_checked
from . import datasheet, details, front
from .context import RunContext
from .doc import Alert, Fields, Para, Report, Section, TestHeader
from .fmt import NA, fmt_time
from .headers import page_headers, test_header
from .pages import boundaries, latmon, temperature
from .pages import of as kind_of

def load(run_dir: Path, targets: Path | str | None = None) -> Report:
    """Read a run directory (results.read_run_checked: steps included, read once) and build the report's content.
    ``targets``: a file of datasheet targets (report/datasheet.py) for the datasheet's target column.
    Files that differ from what the run recorded ('ssdpts verify') are reported as damage."""
    run, damage = read_run_checked(run_dir)
    return build(RunContext(run, datasheet.read_targets(targets) if targets else None, damage=damage))


def test_sections(ctx: RunContext, test: str, header: TestHeader) -> list[Section]:
    """A test's pages: its set-up and test parameters and warnings, then its own pages (pages/)."""
    sec = Section(test, header.title, 2, test, new_page=True)
    sec.blocks.append(Fields("Set-up parameters", header.setup))
    sec.blocks.append(Fields("Test parameters", header.params))
    pids = ctx.part_ids(test)
    if not pids:
        sec.blocks.append(Alert("bad", "not run", ["this test has no results in the run directory"]))
        return [sec]
    for pid in pids:
        for w in ctx.parts[pid].warnings:
            sec.blocks.append(Alert("warn", "warning", [w]))
    kind = kind_of(test)
    if kind is None:
        sec.blocks.append(Para(f"ssdpts {ctx.man.ssdpts_version} has no report layout for test {test!r}."))
        return [sec]
    return [sec, *kind.sections(ctx, pids), *latmon.sections(ctx, pids)]


def plot_mark(deviations) -> str:
    """What every plot of a run that is not PTS compliant says in its corner: 'not PTS compliant:
    time-compressed, preconditioning by sprandom'."""
    named = marks(deviations)
    return "not PTS compliant" + (f": {', '.join(named)}" if named else "")


def build(ctx: RunContext) -> Report:
    tests = ctx.tests_in_run()
    details.add_all(ctx, tests)
    headers = {t: test_header(ctx, t) for t in tests}
    sections = [s for t in tests for s in test_sections(ctx, t, headers[t])]
    bounds = boundaries.section(ctx, tests)
    if bounds:
        sections.append(bounds)
    temp = temperature.section(ctx)
    if temp.new_page:
        sections.append(temp)
    prof = str(ctx.profile.get("name") or ctx.spec.profile or "").capitalize()
    pts = ctx.spec.pts_version or "2.0.2"
    model = ctx.target("model") or ctx.description().get("model") or ctx.target("name") or NA
    serial = ctx.identity("serial")
    title = f"SNIA SSS PTS {pts} {prof} — test report".replace("  ", " ")
    subtitle = f"{model}" + (f" · serial {serial}" if serial != NA else "")
    verdicts = front.verdicts(ctx, tests)
    overview = front.overview_table(verdicts)
    front_sections = [datasheet.section(ctx), front.verdicts_section(ctx, tests, overview),
                      front.header_section(ctx, tests)]
    header = front_sections[2]
    if not temp.new_page:  # "not available: why", with the report header rather than on a page of its own
        front_sections.append(temp)
    latmon_line = latmon.front_line(ctx)  # a drive without the OCP latency monitor: one line
    if latmon_line is not None:
        header.blocks.append(latmon_line)
    compliance = front.compliance_alert(ctx)
    pdf_title = ("DAMAGED " if ctx.damage else "") + ("PARTIAL " if ctx.partial else "") + f"{title}: {subtitle}"
    if compliance is not None:
        pdf_title += f" — {compliance.title}"
    short = {
        "pts": f"SNIA SSS PTS {pts} {prof}".strip(), "device": model,
        "serial": serial, "run_date": fmt_time(ctx.man.created),
        "report_date": ctx.generated, "run": ctx.run_dir.name,
        "software": f"ssdpts {ctx.man.ssdpts_version or '?'}, {ctx.man.fio_version or '?'}",
        "sponsor": ctx.sponsor(),
    }
    report = Report(
        run_dir=ctx.run_dir, title=title, subtitle=subtitle, status=ctx.status,
        partial=front.partial_alert(ctx), compliance=compliance, notices=front.notices(ctx),
        admin=front.admin_fields(ctx, tests), platform=front.platform_fields(ctx), device=front.device_fields(ctx),
        tests=headers, overview=overview, sections=sections, generated=ctx.generated,
        short_header=short, description=front.description_fields(ctx), front=front_sections,
        details=ctx.details, test_id=ctx.test_id, pdf_title=pdf_title,
        plot_mark=None if compliance is None else plot_mark(ctx.run.deviations),
        steady_state_missed=[v.missed_line for v in verdicts if v.missed])
    report.page_headers = page_headers(ctx, report, tests)
    return report
