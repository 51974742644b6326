"""The house a newcomer can read (docs/design.md, "The map"): in core/ and plugins/, no
module over 600 lines, no class over 300, no function over 60 (data literals aside), no
import circle among rankcraft's modules (imports inside functions count, those under
``if TYPE_CHECKING:`` do not), and no module reading another module's ``_private``
names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"core": "rankcraft", "plugins": "rankcraft.plugins"}
pytestmark = pytest.mark.source_tree

MODULE_LINES, CLASS_LINES, FUNCTION_LINES = 600, 300, 60
DATA_LITERALS: set[tuple[str, str]] = set()
"""``(file name, function)`` of functions that are one data literal, exempt from the length
(none today)."""
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}
"""Underscored names that are public API (namedtuple's), not another module's privates."""


def sources() -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [package, *path.relative_to(ROOT / folder).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = sources()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path) -> set[str]:
    """The rankcraft modules ``name`` imports, wherever the import is (a function body
    included; in the core, ``if TYPE_CHECKING:`` too: an import for a type alone closes
    a circle as well, and keeps a module from being read, or moved, without the other;
    a plugin's private helpers may name its params class for a type)."""
    typed = not name.startswith("rankcraft.plugins")
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if not typed and isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return {m for m in found if m in MODULES and m != name}


def test_no_import_circles() -> None:
    graph = {name: imports(name, path) for name, path in MODULES.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*stack[stack.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert not circles, "import circles:\n" + "\n".join(circles)


BOTTOM = ("rankcraft.loop", "rankcraft.bound", "rankcraft.rows", "rankcraft.store")
"""The bottom of the core: the one rating loop, what it calls through, the rows it changes
and the stores (docs/design.md, "The map")."""
ABOVE = (
    "rankcraft.engine",
    "rankcraft.writing",
    "rankcraft.steps",
    "rankcraft.unit",
    "rankcraft.manager",
    "rankcraft.ruleset",
    "rankcraft.evaluate",
    "rankcraft.rater",
)
"""What the league builds on them; the bottom may not import these, even for a type."""


def reached(start: str, graph: dict[str, set[str]]) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_loop_and_the_stores_import_nothing_above_them() -> None:
    graph = {name: imports(name, path) for name, path in MODULES.items()}
    bottom = [m for m in MODULES if m.startswith(BOTTOM)]
    assert "rankcraft.loop" in bottom and "rankcraft.store.sqlite" in bottom
    wrong = {m: sorted(reached(m, graph) & set(ABOVE)) for m in bottom}
    assert not {m: above for m, above in wrong.items() if above}


def too_long(path: Path, root: Path = ROOT) -> list[str]:
    """The module, classes and functions of ``path`` longer than the house allows."""
    text = path.read_text("utf-8")
    where = path.relative_to(root)
    found = []
    if len(text.splitlines()) > MODULE_LINES:
        found.append(f"{where}: {len(text.splitlines())} lines")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            most = CLASS_LINES if isinstance(node, ast.ClassDef) else FUNCTION_LINES
            if length > most and (path.name, node.name) not in DATA_LITERALS:
                found.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_long_modules_classes_or_functions() -> None:
    long = [line for path in MODULES.values() for line in too_long(path)]
    assert not long, "longer than the house allows:\n" + "\n".join(long)


def own_names(tree: ast.AST) -> set[str]:
    """The underscored names a module defines (functions, classes, assignments, attributes
    it sets, parameters, keywords): reading those is reading its own."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.attr if isinstance(node, ast.Attribute) else node.id)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            own.add(node.arg)
    return {name for name in own if name.startswith("_")}


def private_reads(path: Path, root: Path = ROOT) -> list[str]:
    """Where ``path`` imports another module's ``_name`` or reads ``thing._name`` that it
    does not define itself (``self`` and ``cls`` aside)."""
    tree = ast.parse(path.read_text("utf-8"))
    own = own_names(tree)
    where = path.relative_to(root)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{where}:{node.lineno} imports {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            and node.attr not in own | NAMEDTUPLE_API
        ):
            found.append(f"{where}:{node.lineno} reads {ast.unparse(node.value)}.{node.attr}")
    return found


def test_no_module_reads_another_modules_private_names() -> None:
    reads = [line for path in MODULES.values() for line in private_reads(path)]
    assert not reads, "private names read across modules:\n" + "\n".join(reads)


def test_the_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """The checks above find a long function, a private read and a deferred circle."""
    sample = tmp_path / "sample.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    sample.write_text(f"import os\n\ndef long():\n{body}\n\nos._exit\n", "utf-8")
    assert [line.split(" ", 1)[1] for line in too_long(sample, tmp_path)] == [
        f"long: {FUNCTION_LINES + 1} lines"
    ]
    assert [line.split(" ", 1)[1] for line in private_reads(sample, tmp_path)] == ["reads os._exit"]
    typed = tmp_path / "typed.py"  # (an import for a type alone counts)
    typed.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .engine import League\n",
        "utf-8",
    )
    assert imports("rankcraft.typed", typed) == {"rankcraft.engine"}
    assert "rankcraft.engine" in reached(
        "rankcraft.typed", {"rankcraft.typed": {"rankcraft.engine"}, "rankcraft.engine": set()}
    )
