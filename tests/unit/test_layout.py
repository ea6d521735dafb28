"""The layout rules of docs/architecture.md, checked on the source: module size, no test-code
names for product code, and which package may import which."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[2] / "src" / "ssdpts"
MAX_LINES = 600
TESTS_DIR = Path(__file__).parents[1]


def modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_over_600_lines():
    big = {str(p.relative_to(SRC)): n for p in modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
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
    ("ssdpts.report", ("ssdpts.store", "ssdpts.run", "ssdpts.engine", "ssdpts.device", "ssdpts.cli", "ssdpts.library",
                       "ssdpts.kinds")),
    ("ssdpts.library.status", ("ssdpts.report", "ssdpts.cli", "ssdpts.compare", "ssdpts.library.db", "ssdpts.run.runner",
                       "ssdpts.run.session", "ssdpts.engine", "ssdpts.device", "ssdpts.library.site")),
    ("ssdpts.library.site", ("ssdpts.cli", "ssdpts.run.runner", "ssdpts.run.session", "ssdpts.engine", "ssdpts.device")),
    # the run machinery sequences any kind's steps; it never knows what a kind renders or files
    ("ssdpts.run", ("ssdpts.report", "ssdpts.cli", "ssdpts.library", "ssdpts.kinds", "ssdpts.workloads", "ssdpts.compare")),
    # workloads beside the PTS: run through run/ and engine/, read through results/; the command
    # gives them their renderer (kinds.py), they never import one
    ("ssdpts.workloads", ("ssdpts.report", "ssdpts.cli", "ssdpts.library", "ssdpts.kinds")),
    ("ssdpts.store", ("ssdpts.report", "ssdpts.cli", "ssdpts.run", "ssdpts.engine", "ssdpts.device", "ssdpts.workloads",
                      "ssdpts.library", "ssdpts.compare", "ssdpts.kinds", "ssdpts.results.analysis")),
    # the registry of run kinds sits under the commands and the library, over what it registers
    ("ssdpts.kinds", ("ssdpts.cli", "ssdpts.library", "ssdpts.run")),
    ("ssdpts.compare", ("ssdpts.workloads", "ssdpts.kinds", "ssdpts.library", "ssdpts.engine", "ssdpts.device")),
]

# Leaf modules: what each may import of ssdpts (nothing else).
LEAVES = {
    "ssdpts.errors": set(),
    "ssdpts.stats": {"ssdpts.errors"},
    "ssdpts.atomic": set(),
    "ssdpts.report.doc": set(),  # the document types of every document: plain data
    "ssdpts.device.safety.held": set(),
    "ssdpts.library": set(),  # the package of the results library, its site and the runs' status
}

# Modules no row above covers, each with the reason.
UNRULED = {
    "ssdpts": "the package: its version",
    "ssdpts.measurement": "fio's numbers as ssdpts keeps them: imported by every layer, imports only pts/",
}


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


def _name(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")


def import_graph() -> dict[str, set[str]]:
    """Module -> the ssdpts modules it imports, at any depth of the file (function-level imports
    count: they run too). ``from pkg import sub`` is an edge to the submodule, as import-linter
    reads it; ``from pkg import name`` an edge to pkg (its __init__)."""
    mods = {_name(p): p for p in modules()}

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for me, path in mods.items():
        pkg = me if path.name == "__init__.py" else me.rpartition(".")[0]
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                parts = pkg.split(".")
                mod = (".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                       if node.level else node.module or "")
                if mod.split(".")[0] == "ssdpts":
                    out.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else resolve(mod) for a in node.names)
            elif isinstance(node, ast.Import):
                out.update(resolve(a.name) for a in node.names if a.name.split(".")[0] == "ssdpts")
        graph[me] = out - {me, ""}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph (a depth-first search's back edge), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    # the real graph with one edge added back the way the old cycles ran
    graph = import_graph()
    graph["ssdpts.workloads.quick"].add("ssdpts.report.quick_html")
    assert find_cycle(graph) is not None


def test_leaf_modules_import_only_what_they_may():
    graph = import_graph()
    bad = {m: sorted(graph[m] - allowed) for m, allowed in LEAVES.items() if graph[m] - allowed}
    assert not bad, bad


def test_every_module_is_under_a_layout_rule():
    """Each module is covered by a layering row, is a leaf, is a command (cli/: may import any
    layer), or is listed with its reason: a new package cannot arrive unruled."""
    ruled = [p for p, _ in NEVER] + list(LEAVES) + ["ssdpts.cli"]
    loose = [m for m in import_graph() if m not in UNRULED
             and not any(m == p or m.startswith(p + ".") for p in ruled)]
    assert not loose, f"add a row to NEVER (or LEAVES) for: {loose}"


def test_a_long_function_says_why_it_is_one_piece():
    """A function over ~80 lines is split, or its docstring says why it is one piece ("One piece: ...")."""
    long = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80 \
                    and "One piece" not in (ast.get_docstring(node) or ""):
                long.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert not long, long


def test_docs_architecture_names_every_module():
    """docs/architecture.md says where everything lives: every module of src/ssdpts is named there
    (in a `code` span of its tables or text)."""
    import re

    doc = re.sub(r"```.*?```", "", (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8"), flags=re.S)
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(re.findall(r"`([^`]+)`", doc))))
    missing = [str(p.relative_to(SRC)) for p in modules() if p.stem != "__init__" and p.stem not in named]
    assert not missing, f"name these modules in docs/architecture.md: {missing}"
