"""The house a newcomer can read: no import circles among the core's modules, and no
function in core/ longer than about 80 lines (data literals aside)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
pytestmark = pytest.mark.source_tree

LONGEST = 85
DATA_LITERALS: set[tuple[str, str]] = set()
"""Functions that are one data literal, exempt from the length (none since the OpenAPI
document is generated: rankcraft.openapi)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(CORE).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(("rankcraft", *parts))


def imports(path: Path) -> set[str]:
    """The rankcraft modules ``path`` imports when it is imported (not inside functions,
    nor under ``TYPE_CHECKING``)."""
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    found = set()
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if node.module is None:  # from . import hookspecs: the submodules
                found.update(f"{target}.{alias.name}" for alias in node.names)
            else:
                found.add(target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("rankcraft"))
    return found


def test_no_import_circles() -> None:
    modules = {module_name(p): p for p in CORE.rglob("*.py")}
    graph = {
        name: {t for t in imports(path) if t in modules and t != name}
        for name, path in modules.items()
    }
    # the package __init__ files re-export their modules: an edge to a package is an edge
    # to its __init__, which may import its submodules; a circle through it is still one
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circle = [*stack[stack.index(nxt) :], nxt]
                if not all(m == "rankcraft" or m.endswith(".__init__") for m in circle[1:-1]):
                    raise AssertionError("import circle: " + " -> ".join(circle))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state and name != "rankcraft":
            visit(name)


def test_no_long_functions_in_the_core() -> None:
    long = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONGEST and (path.name, node.name) not in DATA_LITERALS:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length}")
    assert not long, "functions longer than the house allows:\n" + "\n".join(long)
