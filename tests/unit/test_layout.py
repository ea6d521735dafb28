"""The layout rules of docs/architecture.md, checked on the source: module size, no test-code
names for product code, and which package may import which."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[2] / "src" / "ssdpts"
MAX_LINES = 600  # outside report/, which a later rebuild splits
TESTS_DIR = Path(__file__).parents[1]


def modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_over_600_lines_outside_report():
    big = {str(p.relative_to(SRC)): n for p in modules() if "report" not in p.relative_to(SRC).parts
           and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not big, f"split these modules (at most {MAX_LINES} lines each): {big}"


def test_product_code_is_not_named_like_test_code():
    # "spec" and "tests" mean test code to readers and to tools, which then skip the folder.
    assert not [p for p in SRC.rglob("*") if p.is_dir() and p.name in ("spec", "specs", "tests", "test")]
    old = "ssdpts." + "spec"  # the package's old name, spelt so that a grep for it finds nothing here either
    for root in (SRC, TESTS_DIR):
        for p in root.rglob("*.py"):
            assert old not in p.read_text(encoding="utf-8"), p


def _imports(path: Path) -> set[str]:
    """Every ssdpts module a file imports (absolute or relative, at any depth of the file)."""
    rel = path.relative_to(SRC.parent).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" for a in node.names]
            out.update(n for n in [mod, *names] if n.startswith("ssdpts"))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ssdpts"))
    return out


# (package, packages it must not import): the arrows of docs/architecture.md read backwards.
NEVER = [
    ("ssdpts.pts", ("ssdpts.device", "ssdpts.engine", "ssdpts.store", "ssdpts.results", "ssdpts.report", "ssdpts.cli",
                    "ssdpts.run.runner", "ssdpts.run.session", "ssdpts.compare", "ssdpts.library.db", "ssdpts.results.analysis")),
    ("ssdpts.device", ("ssdpts.pts", "ssdpts.engine", "ssdpts.store", "ssdpts.results", "ssdpts.report", "ssdpts.cli",
                       "ssdpts.run.runner", "ssdpts.run.session", "ssdpts.compare", "ssdpts.library.db", "ssdpts.results.analysis")),
    ("ssdpts.engine", ("ssdpts.device", "ssdpts.store", "ssdpts.results", "ssdpts.report", "ssdpts.cli",
                       "ssdpts.run.runner", "ssdpts.run.session")),
    ("ssdpts.results", ("ssdpts.report", "ssdpts.cli", "ssdpts.compare", "ssdpts.library.db", "ssdpts.run.runner",
                        "ssdpts.run.session", "ssdpts.engine")),
    ("ssdpts.compare", ("ssdpts.report", "ssdpts.cli", "ssdpts.store", "ssdpts.run.runner", "ssdpts.run.session")),
    ("ssdpts.library.db", ("ssdpts.report", "ssdpts.cli", "ssdpts.compare", "ssdpts.store", "ssdpts.run.runner",
                          "ssdpts.run.session")),
    ("ssdpts.report", ("ssdpts.store", "ssdpts.run.runner", "ssdpts.run.session", "ssdpts.engine", "ssdpts.device")),
    ("ssdpts.library.status", ("ssdpts.report", "ssdpts.cli", "ssdpts.compare", "ssdpts.library.db", "ssdpts.run.runner",
                       "ssdpts.run.session", "ssdpts.engine", "ssdpts.device", "ssdpts.library.site")),
    ("ssdpts.library.site", ("ssdpts.cli", "ssdpts.run.runner", "ssdpts.run.session", "ssdpts.engine", "ssdpts.device")),
]


# (package, module it may import although the package above forbids its package): results/ proves
# each step record from fio's raw output with the same parser the executors use (a pure module).
EXCEPT = {("ssdpts.results", "ssdpts.engine.fioparse")}


@pytest.mark.parametrize("package, forbidden", NEVER, ids=[n for n, _ in NEVER])
def test_layering(package, forbidden):
    bad = []
    for path in modules():
        mod = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        if not (mod == package or mod.startswith(package + ".")):
            continue
        for imp in _imports(path):
            if any(imp == e or imp.startswith(e + ".") for p, e in EXCEPT if p == package):
                continue
            if any(imp == f or imp.startswith(f + ".") for f in forbidden):
                bad.append(f"{mod} imports {imp}")
    assert not bad, "; ".join(sorted(set(bad)))
