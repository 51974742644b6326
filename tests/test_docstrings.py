"""Docstring examples of the public modules run (by module name, never --doctest-modules)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

MODULES = [
    "rankcraft",
    "rankcraft.engine",
    "rankcraft.boards",
    "rankcraft.quality",
    "rankcraft.fields",
    "rankcraft.io",
    "rankcraft.jsontext",
    "rankcraft.matchmaking",
    "rankcraft.model",
    "rankcraft.census",
    "rankcraft.ruleset",
    "rankcraft.rulesetschema",
    "rankcraft.rulesets",
    "rankcraft.validators",
    "rankcraft.store.postgres",
    "rankcraft.plugins.elo",
    "rankcraft.plugins._elo_context",
    "rankcraft.plugins.glicko1",
    "rankcraft.plugins.glicko2",
    "rankcraft.plugins.inversus",
    "rankcraft.plugins.skyweaver",
    "rankcraft.plugins.wager",
    "rankcraft.plugins.regress",
    "rankcraft.evaluate",
    "rankcraft.drawfit",
    "rankcraft.scores",
    "rankcraft.serve",
    "rankcraft.tokens",
    "rankcraft.web",
    "rankcraft.jobs",
    "rankcraft.lab",
    "rankcraft.suggest",
    "rankcraft.terminal",
]
"""The public modules, each of which must have docstring examples."""


def with_examples() -> list[str]:
    """Every module of the package whose docstrings hold an example (found by walking the
    package, so that an example in a new or moved module runs without being listed)."""
    import rankcraft

    found = []
    for info in pkgutil.walk_packages(rankcraft.__path__, "rankcraft."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # (an optional extra not installed: its tests say so)
            continue
        if any(test.examples for test in doctest.DocTestFinder().find(module)):
            found.append(info.name)
    return found


@pytest.mark.parametrize("name", sorted(set(MODULES) | set(with_examples())))
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no docstring examples"
    assert result.failed == 0


def test_public_api_is_listed_and_typed() -> None:
    import rankcraft

    for name in rankcraft.__all__:
        assert hasattr(rankcraft, name), name
    assert importlib.resources.files("rankcraft").joinpath("py.typed").is_file()
