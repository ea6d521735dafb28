"""Words a reader meets cite the standard or the project's docs (docs/design.md#words-cite): the help
of every command, the report and site templates, the code's messages and the docs (a rendered report
of every test kind is checked in test_kinds.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdpts.cli.main import COMMANDS, build_parser
from tests.words import unreadable_words

ROOT = Path(__file__).resolve().parents[2]


def _help_texts() -> dict[str, str]:
    parser = build_parser()
    out = {"ssdpts": parser.format_help()}
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")  # noqa: SLF001
    for name, p in sub.choices.items():
        out[f"ssdpts {name}"] = p.format_help()
        for action in p._actions:  # noqa: SLF001 - nested commands (db, trace, hosts)
            if action.__class__.__name__ == "_SubParsersAction":
                out.update({f"ssdpts {name} {n}": q.format_help() for n, q in action.choices.items()})
    return out


def test_every_commands_help_reads_without_internal_labels():
    texts = _help_texts()
    assert set(COMMANDS) <= {k.split()[1] for k in texts if k != "ssdpts"}
    bad = {k: unreadable_words(v, user=True) for k, v in texts.items() if unreadable_words(v, user=True)}
    assert not bad, bad


@pytest.mark.parametrize("folder", ["src/ssdpts", "docs", "README.md", "benchmarks", "Makefile"])
def test_code_templates_and_docs_cite_what_a_reader_has(folder):
    """The code (its messages, comments and the report and site templates), the docs and the README."""
    base = ROOT / folder
    files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file() and p.suffix in
                                           (".py", ".md", ".html", ".js", ".css", ".j2", ".txt", "")]
    # results/formats.py quotes the old labels it rewrites in runs recorded by an older ssdpts
    files = [p for p in files if p.name != "CHANGELOG.md" and "vendor" not in p.parts
             and p.relative_to(ROOT).as_posix() != "src/ssdpts/results/formats.py"]
    bad = {str(p.relative_to(ROOT)): hits for p in files
           if (hits := unreadable_words(p.read_text(errors="replace")))}
    assert not bad, bad


def test_the_check_finds_what_it_looks_for():
    assert unreadable_words("the median (seed 004 §4.1)") and unreadable_words("as issue 17 found")
    assert unreadable_words("see DESIGN.md convention 8") and unreadable_words("PTS-EXTENDED.md says")
    assert not unreadable_words("fio randseed 1592612313, seed 42; the PTS 2.0.2 §3.2; docs/design.md#repeated-runs")
    assert unreadable_words("see docs/design.md#repeated-runs", user=True)
    assert not unreadable_words("see docs/compare.md#repeated-runs and PTS 2.0.2 §2.1.24", user=True)


def test_words_recorded_by_an_older_ssdpts_read_as_today():
    """Run files keep what an older ssdpts wrote; read, its old source labels cite docs/ instead."""
    from ssdpts.results.records import Manifest, Summary

    old = {"deviations": ["each figure: median of 3 replays, with its RSE (seed 004 §4.1, §4.2)"],
           "audit": {"checks": [{"name": "swap", "recommended": "off", "why": "seed 004: no paging file"},
                                {"name": "SMT", "recommended": "recorded (seed 004 leaves it enabled)", "why": ""}]}}
    man = Manifest.from_dict(old)
    text = " ".join([*man.deviations, *(str(v) for c in man.audit["checks"] for v in c.values())])
    assert not unreadable_words(text, user=True), text
    assert "docs/compare.md#repeated-runs" in text and "docs/doctor.md: no paging file" in text
    assert "recorded (left enabled)" in text
    assert not unreadable_words(" ".join(Summary.from_dict(old).deviations), user=True)
