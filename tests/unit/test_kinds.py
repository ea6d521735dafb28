"""The test kinds as one registry (docs/architecture.md "A test kind"): every registered kind has
every hook, and every kind shows everywhere a run is shown — its report, the terminal's summary at
its end, the results library, the site's index, a comparison, a repeats analysis and the OCP Test &
Validation output; and a new kind, its two files alone (pts/ and report/pages/, here in
tests/fixtures/kinds), shows in all of them with no other file changed."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
import shutil
import sqlite3
import sys
from types import ModuleType, SimpleNamespace

import pytest

pytest.importorskip("jinja2")

from ssdpts.cli.output import print_summary  # noqa: E402
from ssdpts.compare import analyze_repeats, compare_runs  # noqa: E402
from ssdpts.device.target import open_target  # noqa: E402
from ssdpts.engine.fake import FakeExecutor  # noqa: E402
from ssdpts.library import db  # noqa: E402
from ssdpts.library.site import data as site  # noqa: E402
import ssdpts.pts  # noqa: E402
from ssdpts.pts import catalog, registry, tp  # noqa: E402
from ssdpts.pts.parts import Part, Tracking, cell_steps, wipc_step  # noqa: E402
from ssdpts.pts.runspec import RunSpec, expand_tests  # noqa: E402
from ssdpts.pts.units import fmt_block_size  # noqa: E402
from ssdpts.pts.workload import Workload  # noqa: E402
from ssdpts.report import compare_doc, ocptv, pages, render  # noqa: E402
from ssdpts.report.context import RunContext  # noqa: E402
from ssdpts.report.doc import Para, Section  # noqa: E402
from ssdpts.report.pages.kind import ReportKind  # noqa: E402
from ssdpts.results.reader import read_run  # noqa: E402
from ssdpts.run.session import start_run  # noqa: E402
from tests.words import unreadable_words  # noqa: E402

# the runs that hold every kind: a new kind joins one of them (or adds its own), or the test below fails
GROUPS = (("wsat", "iops", "tp", "lat"), ("hir", "xsr", "cbw", "dirth"), ("ocp-trim", "ocp-idle-gc"))
SMALL = {"step_seconds": 1, "max_rounds": 5, "wsat_hours": 0.2, "wsat_capacity_multiple": 1000, "wsat_chunk_steps": 12,
         "hir_bursts": 2, "xsr_minutes": (3, 3, 3)}
PTS_MODULE = ("NAME", "TITLE", "ORDER", "parts", "build_table", "COMPARED", "HEADLINES", "cell_label")


def demand_model(step) -> float:
    w = step.workload
    return min(200_000.0, 12_000.0 * (w.threads * w.iodepth) ** 0.8) * (0.6 if w.read_pct == 0 else 1.0)


def make_run(tmp: Path, name: str, tests: tuple[str, ...], seed: int = 1) -> Path:
    spec = RunSpec(tests=tests, **{k: v for k, v in SMALL.items()})
    target = open_target(str(tmp / f"{name}.bin"), size_bytes=256 * 2**20)
    out = tmp / "made" / name
    start_run(spec, target, executor=FakeExecutor(model=demand_model, noise=0.02, seed=seed), out_dir=out,
              confirm=None, argv=["ssdpts", "run", name])
    (run,) = out.iterdir()
    return run


def terminal(run: Path) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_summary(SimpleNamespace(path=Path(run.name)), json.loads((run / "summary.json").read_text()))
    return buf.getvalue()


def shown_everywhere(run: Path, tmp: Path, tests: tuple[str, ...]) -> None:
    """Every test of ``run`` in its report, terminal summary, library rows, site row, comparison,
    repeats analysis and OCPTV output."""
    res = read_run(run)
    pids = {t: res.summary.tests[t] for t in tests}
    html = render(run, ("html",), tmp / f"{run.name}.html")[0].read_text()
    text = terminal(run)
    assert not unreadable_words(html, user=True) and not unreadable_words(text, user=True), \
        unreadable_words(html + text, user=True)
    dbp = tmp / f"{run.name}.db"
    db.record_run(run, dbp)
    with sqlite3.connect(dbp) as con:
        in_db = {r[0] for r in con.execute("SELECT DISTINCT test FROM measurements")}
    data = site.run_data(res)
    heads = {c["test"] for c, _, _ in site.headline_cells(res)}
    copies = [run] + [shutil.copytree(run, tmp / f"{run.name}-copy{i}") for i in (1, 2)]
    cmp = compare_runs(copies[:2])
    doc = compare_doc.build_comparison(cmp)
    rep = compare_doc.build_repeats(analyze_repeats(copies, allow_different=True))
    arts = ocptv.artifacts(RunContext(res))
    steps = [a["testStepArtifact"]["testStepStart"]["name"] for a in arts
             if "testStepStart" in a.get("testStepArtifact", {})]
    for t in tests:
        kind = pages.of(t)
        title = registry.title(t)
        assert f'id="{t}"' in html and title in html, f"{t}: no pages in the report"
        for pid in pids[t]:
            part = res.part(pid)
            if part.table is not None:
                assert registry.summary(part), f"{pid}: no terminal summary line"
                assert (part.title or pid) in text, f"{pid}: not in the terminal summary"
        assert t in in_db, f"{t}: no rows in the results library"
        assert t in {p["test"] for p in data["parts"]}, f"{t}: not in the site's run data"
        assert t in heads, f"{t}: no headline cell on the site's index"
        sections = {f"part-{pid}" for pid in pids[t]}
        assert sections & {s.id for s in doc.sections}, f"{t}: not in the comparison"
        assert sections & {s.id for s in rep.sections}, f"{t}: not in the repeats analysis"
        assert any(s.startswith(f"{t}: ") for s in steps), f"{t}: no OCPTV test step"
        assert kind is not None


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, ...], Path]:
    tmp = tmp_path_factory.mktemp("kinds")
    return {g: make_run(tmp, "-".join(g), g) for g in GROUPS}


def test_every_registered_kind_has_every_hook():
    """Each kind: its pure module (pts/) and its report side (report/pages/) with every hook; one
    that has no terminal lines of its own has headline cells to show."""
    for name, m in registry.TESTS.items():
        missing = [a for a in PTS_MODULE if not hasattr(m, a)]
        assert not missing, f"{name}: its pts module lacks {missing}"
        kind = pages.of(name)
        assert isinstance(kind, ReportKind), f"{name}: no report side (KINDS in report/pages/{registry.pages_module(name)}.py)"
        for hook in ReportKind.__dataclass_fields__:
            assert hasattr(kind, hook), f"{name}: no hook {hook}"
        assert hasattr(m, "summary") or registry.headlines(name), f"{name}: nothing to show in the terminal"
    assert {t for g in GROUPS for t in g} == set(registry.TESTS), "a registered kind is in none of the runs below"


def test_every_kind_renders_everywhere(runs, tmp_path):
    for group, run in runs.items():
        shown_everywhere(run, tmp_path, group)


def test_the_terminal_shows_every_kind(runs):
    """The summary at a run's end prints a result for every kind: the extended tests' headline values,
    an OCP check's verdict with its change and interval."""
    ext = terminal(runs[GROUPS[1]])
    for words in ("HIR: wait states", "Cross Stimulus Recovery: G1", "CBW: operating points: Max", "DIRTH: demand"):
        assert words in ext
    ocp = terminal(runs[GROUPS[2]]).replace("\n", " ")
    for t in ("ocp-trim", "ocp-idle-gc"):
        assert registry.TESTS[t].TITLE.split(":")[0] in ocp
    assert "read latency:" in ocp and "95% interval" in ocp and "(limit ±5%)" in ocp


# ---- a new kind: its own files, and nothing else ---------------------------------------------------------

FIXTURE = Path(__file__).parents[1] / "fixtures" / "kinds"  # pts/probe.py and pages/probe.py


def probe_module() -> ModuleType:
    """The probe kind as a module that is no file (registry.register): SEQ 64KiB read then write
    rounds until steady state, with the TP test's table (its record and cells)."""
    m = ModuleType("probe")
    m.NAME, m.TITLE = "probe", "Probe"
    bs = 64 * 1024
    name = fmt_block_size(bs)

    def parts(spec, capacity_bytes, ar_bytes, logical_block_size=512):
        wl = [Workload("seq", 100, bs, 1, 4), Workload("seq", 0, bs, 1, 4)]
        return [Part(test="probe", part=name, title=f"Probe {name}", purge=True,
                     wipc=wipc_step("probe", name, spec, ar_bytes, bs),
                     tracking=(Tracking(name=f"{wl[1].label} MB/s", key=wl[1].key, metric="write_mb_per_s",
                                        unit="MB/s"),),
                     max_rounds=spec.max_rounds, stop_rule="steady-state",
                     round_builder=lambda r: cell_steps("probe", name, r, wl, spec.step_seconds))]

    m.parts, m.build_table = parts, tp.build_table
    m.COMPARED, m.HEADLINES, m.cell_label = tp.COMPARED, tp.HEADLINES, tp.cell_label
    m.KINDS = {"probe": ReportKind(lambda ctx, pids: [Section("probe-results", "Probe results", 3, "probe",
                                                              blocks=[Para("the probe's own page")])],
                                   stimulus=lambda *_: "SEQ 64KiB, 100/0 then 0/100")}
    return m


@pytest.fixture(params=["files", "registered"])
def probe(request, monkeypatch):
    """The probe kind, either as its two files on the packages' paths (found as any kind in pts/ and
    report/pages/ is: what adding a kind takes), or given to registry.register and pages.register."""
    if request.param == "files":
        monkeypatch.setattr(ssdpts.pts, "__path__", [*ssdpts.pts.__path__, str(FIXTURE / "pts")])
        monkeypatch.setattr(pages, "__path__", [*pages.__path__, str(FIXTURE / "pages")])
        assert registry.discover() == ["probe"]
    else:
        m = probe_module()
        registry.register(m)
        pages.register(m.NAME, m.KINDS[m.NAME])
    yield registry.TESTS["probe"]
    registry.unregister("probe")
    pages.unregister("probe")
    for name in ("ssdpts.pts.probe", "ssdpts.report.pages.probe"):
        sys.modules.pop(name, None)


def test_a_new_kind_is_its_own_files(probe, tmp_path):
    assert catalog.names()[-1] == "probe" and list(registry.TESTS)[-1] == "probe"
    assert expand_tests(["probe", "tp"]) == ("tp", "probe")
    run = make_run(tmp_path, "probe", ("tp", "probe"))
    shown_everywhere(run, tmp_path, ("probe",))
    html = (tmp_path / f"{run.name}.html").read_text()
    assert "the probe&#39;s own page" in html or "the probe's own page" in html
    assert "SEQ 64KiB, 100/0 then 0/100" in html
    assert "Probe 64KiB: SEQ 64KiB read " in terminal(run)


def test_the_kinds_are_found_in_run_order():
    """pts/catalog.py finds every kind in pts/ by its NAME and ORDER, without importing it; the
    registry holds them in that order, the PTS's run order."""
    order = ("wsat", "iops", "tp", "lat", "hir", "xsr", "cbw", "dirth", "ocp-trim", "ocp-idle-gc")
    assert catalog.names() == order == tuple(registry.TESTS) == tuple(catalog.scan())
    assert [registry.TESTS[t].ORDER for t in order] == sorted(registry.TESTS[t].ORDER for t in order)
    assert expand_tests(["ocp", "all", "extended"]) == order


def test_two_kinds_with_one_order_are_refused(tmp_path):
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(f'NAME = "{name}"\nORDER = 5\n')
    with pytest.raises(RuntimeError, match="order 5"):
        catalog.scan([str(tmp_path)])


@pytest.mark.parametrize("form", ["zip", "sourceless"])
def test_the_kinds_are_found_in_any_install(tmp_path, form):
    """catalog.py reads each kind's NAME and ORDER through the module's loader: from a zip archive
    and from an install of compiled files only, it finds the same kinds in the same order."""
    import compileall
    import subprocess
    import sys
    import zipfile

    src = Path(catalog.__file__).parents[1]  # the ssdpts package
    if form == "zip":
        where = tmp_path / "ssdpts.zip"
        with zipfile.ZipFile(where, "w") as z:
            for f in src.rglob("*"):
                if f.is_file() and "__pycache__" not in f.parts:
                    z.write(f, Path("ssdpts") / f.relative_to(src))
    else:
        where = tmp_path / "pkg"
        shutil.copytree(src, where / "ssdpts", ignore=shutil.ignore_patterns("__pycache__"))
        assert compileall.compile_dir(str(where), quiet=1, legacy=True)
        for f in where.rglob("*.py"):
            f.unlink()
    out = subprocess.run([sys.executable, "-c", "import ssdpts; from ssdpts.pts import catalog; "
                          "print(ssdpts.__file__); print(','.join(catalog.KINDS))"],
                         env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded, kinds = out.stdout.split()
    assert loaded.startswith(str(where)) and kinds == ",".join(catalog.KINDS)
