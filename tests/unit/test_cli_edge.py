"""The command line's edge (docs/architecture.md, cli/request.py): the parsed options become one
typed request there and nothing below cli/ sees them; no command changes the parsed options; no
command reads a run directory's files itself (results/ readers, run/request.recorded)."""

from __future__ import annotations

from pathlib import Path
import re

SRC = Path(__file__).resolve().parents[2] / "src" / "ssdpts"


def _sources(under: Path):
    return [(p, p.read_text(encoding="utf-8")) for p in sorted(under.rglob("*.py"))]


def test_nothing_below_the_command_line_sees_argparse():
    found = [str(p.relative_to(SRC)) for p, text in _sources(SRC)
             if "cli" not in p.relative_to(SRC).parts and re.search(r"\bargparse\b|\bNamespace\b", text)]
    assert not found


def test_no_command_changes_its_parsed_options():
    found = [f"{p.name}: {m.group(0).strip()}" for p, text in _sources(SRC / "cli")
             for m in re.finditer(r"(?m)^\s*args\.\w+(\s*,[^=\n]*)?\s*=[^=]|setattr\(args", text)]
    assert not found


def test_no_command_opens_a_run_file():
    found = [f"{p.name}: {m.group(0)}" for p, text in _sources(SRC / "cli")
             for m in re.finditer(r"\bread_json\b|/ \"(manifest\.json|steps\.jsonl|summary\.json)\"", text)]
    assert not found
