"""Bundled data: the CC0 international football history used by ``rankcraft demo``, and
the made-up sample history that ``rankcraft sample`` writes out for the README's examples."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEMO_FILE = "intl_football_1872_2026.jsonl.gz"


def demo_matches_path() -> Path:
    """Return the path of the bundled demo history (49,520 matches, CC0 1.0)."""
    return Path(str(resources.files(__name__).joinpath(DEMO_FILE)))


SAMPLE_FILE = "sample-matches.jsonl.gz"

SAMPLE_RULESET = """\
# An example ruleset: Elo with a smaller K than the bundled 'elo'.
name = "my-ruleset"
description = "Elo, start 1500, K = 24"
extends = "elo"

[update.params]
k_factor = 24.0
"""
"""The ruleset ``rankcraft sample`` writes as ``my-ruleset.toml``."""


def sample_matches_path() -> Path:
    """Return the path of the made-up sample history (120 games of 8 players, CC0 1.0)."""
    return Path(str(resources.files(__name__).joinpath(SAMPLE_FILE)))
