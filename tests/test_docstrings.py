"""Docstring examples of the public modules run (by module name, never --doctest-modules)."""

from __future__ import annotations

import doctest
import importlib

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


@pytest.mark.parametrize("name", MODULES)
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
