"""Bundled data: the CC0 international football history used by ``rankcraft demo``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEMO_FILE = "intl_football_1872_2026.jsonl.gz"


def demo_matches_path() -> Path:
    """Return the path of the bundled demo history (49,520 matches, CC0 1.0)."""
    return Path(str(resources.files(__name__).joinpath(DEMO_FILE)))
