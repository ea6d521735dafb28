"""The test kinds of this package, by name, in run order: found on disk, not imported.

A module of pts/ is a test kind when it declares at its top level, each on a line of its own,
``NAME = "<name>"`` and ``ORDER = <number>`` (its place in the run order, docs/pts-reference.md#tests:
WSAT first shows the fresh-out-of-box level). The declarations are read from the source rather
than imported because runspec, which every kind imports, validates test names; registry.py imports
the kinds in this order, and a kind it ``register``-s joins :data:`KINDS` after them
(docs/architecture.md "A test kind").
"""

from __future__ import annotations

import dis
import pkgutil
import re
import sys

_NAME = re.compile(r'^NAME = "([a-z0-9][a-z0-9-]*)"\s*(?:#.*)?$', re.M)
_ORDER = re.compile(r"^ORDER = (\d+)\s*(?:#.*)?$", re.M)


def scan(paths: list[str] | None = None) -> dict[str, str]:
    """name -> its module's name (in pts/), in run order, of every kind in ``paths`` (by default the
    package's folders: its ``__path__``). Two kinds with one name or one order are refused."""
    found: list[tuple[int, str, str]] = []
    for info in pkgutil.iter_modules(sys.modules[__package__].__path__ if paths is None else paths):
        if info.ispkg:
            continue
        got = _declared(info)
        if got is not None:
            found.append((got[1], got[0], info.name))
    found.sort()
    for what, i in (("name", 1), ("order", 0)):
        seen = [k[i] for k in found]
        twice = sorted({str(v) for v in seen if seen.count(v) > 1})
        if twice:
            raise RuntimeError(f"two test kinds in pts/ declare the {what} {', '.join(twice)}")
    return {name: module for _, name, module in found}


def _declared(info: pkgutil.ModuleInfo) -> tuple[str, int] | None:
    """A module's (NAME, ORDER), read through its loader without running it: from its source (a
    folder or a zip), else from its compiled code (an install without sources); None: not a kind."""
    spec = info.module_finder.find_spec(f"{__package__}.{info.name}")  # type: ignore[call-arg]
    loader = getattr(spec, "loader", None)
    if loader is None:
        return None
    try:
        text = loader.get_source(spec.name)
    except (ImportError, OSError):
        text = None
    if text is not None:
        name, order = _NAME.search(text), _ORDER.search(text)
        return (name.group(1), int(order.group(1))) if name and order else None
    try:
        code = loader.get_code(spec.name)
    except (ImportError, OSError):
        return None
    values: dict[str, object] = {}
    last = None
    for ins in dis.get_instructions(code):  # the module's top level: NAME = "...", ORDER = n
        if ins.opname == "LOAD_CONST":
            last = ins.argval
        elif ins.opname == "STORE_NAME" and ins.argval in ("NAME", "ORDER"):
            values[ins.argval] = last
    name, order = values.get("NAME"), values.get("ORDER")
    return (name, order) if isinstance(name, str) and isinstance(order, int) else None


KINDS: dict[str, str] = scan()  # every test kind ssdpts knows, in run order (registry.register adds)


def names() -> tuple[str, ...]:
    """Every test kind's name, in run order."""
    return tuple(KINDS)
