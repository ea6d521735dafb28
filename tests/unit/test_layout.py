"""The layout rules of docs/architecture.md, checked on the source: module size, no test-code
names for product code, no import cycle, and which package may import which, read from the
"may import" column of the document's tables (the one statement of the layering)."""

from __future__ import annotations

import ast
import re
from pathlib import Path


SRC = Path(__file__).parents[2] / "src" / "ssdpts"
MAX_LINES = 600
TESTS_DIR = Path(__file__).parents[1]
ARCHITECTURE = SRC.parents[1] / "docs" / "architecture.md"


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


def _name(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")


def import_graph(extra: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Module -> the ssdpts modules it imports, at any depth of the file (function-level imports
    count: they run too). ``from pkg import sub`` is an edge to the submodule, as import-linter
    reads it; ``from pkg import name`` an edge to pkg (its __init__). ``extra``: made-up modules
    (name -> source) added to the tree's, for tests of the checks."""
    sources = {_name(p): (p.name == "__init__.py", p.read_text(encoding="utf-8")) for p in modules()}
    sources.update({name: (False, text) for name, text in (extra or {}).items()})

    def resolve(name: str) -> str:
        while name and name not in sources:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for me, (is_package, text) in sources.items():
        pkg = me if is_package else me.rpartition(".")[0]
        out = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom):
                parts = pkg.split(".")
                mod = (".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                       if node.level else node.module or "")
                if mod.split(".")[0] == "ssdpts":
                    out.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in sources else resolve(mod) for a in node.names)
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
    doc = re.sub(r"```.*?```", "", ARCHITECTURE.read_text(encoding="utf-8"), flags=re.S)
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(re.findall(r"`([^`]+)`", doc))))
    missing = [str(p.relative_to(SRC)) for p in modules() if p.stem != "__init__" and p.stem not in named]
    assert not missing, f"name these modules in docs/architecture.md: {missing}"


# --- the layering: docs/architecture.md's "may import" column, read as an allow-list -------------

EVERYTHING = "ssdpts"  # the allowance of `everything`: every module of the package
IMPLICIT = ("ssdpts.errors",)  # besides its own package and the version (the bare "ssdpts")


def _dotted(span: str) -> str:
    """`results/formats` -> ssdpts.results.formats; `kinds.py` -> ssdpts.kinds; `__init__.py` -> ssdpts."""
    path = span.strip().removesuffix("/").removesuffix(".py").removesuffix("__init__").strip("/")
    return ".".join(["ssdpts", *[p for p in path.split("/") if p]])


def _row(span: str) -> str:
    """A row's `where` as a rule's key: a package (`library/`, its modules too) as ssdpts.library.*,
    one module (`kinds.py`, `library/__init__.py`) as its dotted name."""
    return _dotted(span) + (".*" if span.strip().endswith("/") else "")


def _allowed(cell: str) -> set[str]:
    """The modules a "may import" cell names: its code spans outside parentheses (`everything`
    outside them: every module)."""
    spans: list[str] = []

    def keep(m: re.Match) -> str:
        spans.append(m.group(1))
        return f"\0{len(spans) - 1}\0"

    text = re.sub(r"`([^`]+)`", keep, cell)
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)
    out = {_dotted(spans[int(i)]) for i in re.findall(r"\0(\d+)\0", text)}
    if re.search(r"\beverything\b", text):
        out.add(EVERYTHING)
    return out


def layering_rules(doc: str | None = None) -> dict[str, set[str]]:
    """Where (a package or module, dotted) -> what it may import, from every table of the document
    whose header has a "where" and a "may import" column."""
    doc = ARCHITECTURE.read_text(encoding="utf-8") if doc is None else doc
    rules: dict[str, set[str]] = {}
    columns: list[str] | None = None
    for line in doc.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if columns is None:
            columns = [c.lower() for c in cells]
            continue
        if set(cells) <= {"---", ""} or "where" not in columns or "may import" not in columns:
            continue
        allowed = _allowed(cells[columns.index("may import")])
        for span in re.findall(r"`([^`]+)`", cells[columns.index("where")]):
            assert _row(span) not in rules, f"two rows for {span} in docs/architecture.md"
            rules[_row(span)] = allowed
    return rules


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def rule_of(module: str, rules: dict[str, set[str]]) -> str | None:
    """The most specific row that holds a module: its own, else its innermost package's (None: none)."""
    if module in rules:
        return module
    return max((w for w in rules if w.endswith(".*") and _under(module, w[:-2])), key=len, default=None)


def layering_faults(graph: dict[str, set[str]], rules: dict[str, set[str]]) -> list[str]:
    """Every import the rules do not allow, as "module imports module (under `where`)"."""
    bad = []
    for me, imports in sorted(graph.items()):
        where = rule_of(me, rules)
        if where is None:
            bad.append(f"{me} is under no row of docs/architecture.md")
            continue
        ok = (where.removesuffix(".*"), *IMPLICIT, *rules[where])
        bad += [f"{me} imports {imp} (under {where!r})" for imp in sorted(imports)
                if imp != "ssdpts" and not any(a == EVERYTHING or _under(imp, a) for a in ok)]
    return bad


# Imports against the table that the table is right to refuse, each with what should move; an
# entry leaves once the move is made (test_known_faults_are_still_there keeps the list honest).
KNOWN_FAULTS: dict[str, str] = {}  # an import the table forbids, with what should move; none now


def test_every_import_is_allowed_by_the_architecture_table():
    bad = [f for f in layering_faults(import_graph(), layering_rules()) if f not in KNOWN_FAULTS]
    assert not bad, "imports docs/architecture.md does not allow (move the code, or correct the " \
                    "table where the import is sound):\n" + "\n".join(bad)


def test_known_faults_are_still_there():
    fixed = set(KNOWN_FAULTS) - set(layering_faults(import_graph(), layering_rules()))
    assert not fixed, f"fixed: remove from KNOWN_FAULTS {sorted(fixed)}"


def test_the_table_is_read_as_the_document_states_it():
    rules = layering_rules()
    assert rules["ssdpts.cli.*"] == {EVERYTHING}
    assert rules["ssdpts.run.*"] == {f"ssdpts.{p}" for p in ("pts", "device", "engine", "store", "results")}
    assert rules["ssdpts.store"] == {"ssdpts.results.formats", "ssdpts.results.seal", "ssdpts.results.records",
                                     "ssdpts.atomic"}
    assert rules["ssdpts.measurement"] == rules["ssdpts.report.doc"] == rules["ssdpts"] == set()
    assert rule_of("ssdpts.library.site.data", rules) == "ssdpts.library.site.*"
    assert rule_of("ssdpts.library.db", rules) == "ssdpts.library.*"
    assert rule_of("ssdpts.library", rules) == "ssdpts.library"
    assert rule_of("ssdpts.pts.iops", rules) == "ssdpts.pts.*"
    assert rule_of("ssdpts", rules) == "ssdpts"


def test_the_layering_check_fails_on_a_disallowed_import():
    """Made-up modules that import against the table, at the top and inside a function, are found;
    the same imports where the table allows them are not."""
    extra = {
        "ssdpts.pts.madeup": "from ssdpts.measurement import Measurement\n"
                             "def f():\n    from ssdpts import store\n    return store\n",
        "ssdpts.engine.madeup": "import ssdpts.results.reader\n",
        "ssdpts.status_madeup": "from ssdpts.compare import compare_runs\n",
        "ssdpts.library.site.madeup": "from ssdpts.report import html\nfrom ssdpts.library import db\n",
        "ssdpts.report.doc_madeup": "from . import doc\n",
        "ssdpts.madeup": "",
    }
    rules = layering_rules()
    rules["ssdpts.status_madeup"] = rules["ssdpts.status"]
    faults = layering_faults(import_graph(extra), rules)
    assert "ssdpts.pts.madeup imports ssdpts.store (under 'ssdpts.pts.*')" in faults
    assert "ssdpts.engine.madeup imports ssdpts.results.reader (under 'ssdpts.engine.*')" in faults
    assert "ssdpts.status_madeup imports ssdpts.compare (under 'ssdpts.status_madeup')" in faults
    assert not [f for f in faults if f.startswith(("ssdpts.library.site.madeup ", "ssdpts.report.doc_madeup "))]
    assert not [f for f in faults if "ssdpts.measurement" in f]
    assert "ssdpts.madeup is under no row of docs/architecture.md" in faults
    # a row taken away from the table makes its modules' imports faults
    del rules["ssdpts.library.site.*"]
    assert any(f.startswith("ssdpts.library.site.madeup imports ssdpts.report.html") for f in
               layering_faults(import_graph(extra), rules))


def test_parentheses_explain_and_allow_nothing():
    doc = ("| where | what | may import |\n|---|---|---|\n"
           "| `a/` | x | `b` (never `c`, (really) `d`), `e/f.py` (why `g`) |\n"
           "| `h.py` | y | everything below |\n\n| where | other |\n|---|---|\n| `i/` | `j` |\n")
    assert layering_rules(doc) == {"ssdpts.a.*": {"ssdpts.b", "ssdpts.e.f"}, "ssdpts.h": {EVERYTHING}}


def test_cited_doc_anchors_exist():
    """A citation of a docs/ page by anchor (`docs/pts-reference.md#steady-state`, `#dirth` after
    it) in src/, tests/, docs/ or the README names a section that page has (`<a id="...">`)."""
    root = SRC.parents[1]
    missing = []
    for path in [*modules(), *TESTS_DIR.rglob("*.py"), *(root / "docs").glob("*.md"), root / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for page, anchors in re.findall(r"docs/([\w-]+\.md)((?:#[\w-]+)(?:, #[\w-]+)*)", text):
            ids = set(re.findall(r'<a id="([\w-]+)"', (root / "docs" / page).read_text(encoding="utf-8"))) \
                if (root / "docs" / page).exists() else set()
            missing += [f"{path.name}: docs/{page}#{a}" for a in re.findall(r"#([\w-]+)", anchors) if a not in ids]
    assert not missing, missing
