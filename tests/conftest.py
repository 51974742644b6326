"""Shared fixtures: plugin managers, leagues, match builders, file hashing."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import rankcraft
from rankcraft.manager import PluginManager

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

SHARED_DATA = Path(
    os.environ.get("RANKCRAFT_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)


@pytest.fixture
def pm() -> PluginManager:
    """A plugin manager with the hookspecs and no entry points loaded."""
    return rankcraft.get_plugin_manager(entry_points=False)


@pytest.fixture(scope="session")
def installed() -> rankcraft.Plugins:
    """The facade over every installed plugin (entry points)."""
    return rankcraft.Plugins()


@pytest.fixture
def installed_pm() -> PluginManager:
    """A fresh manager with every installed plugin, for tests that register more."""
    return rankcraft.get_plugin_manager()


MatchFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def match() -> MatchFactory:
    """Build match dicts: ``match("m1", "a", "b", scores=[1, 0], day=1)``."""

    def build(
        mid: str,
        *sides: Any,
        scores: list[float] | None = None,
        ranks: list[int] | None = None,
        day: int = 1,
        **extra: Any,
    ) -> dict[str, Any]:
        teams = [[s] if isinstance(s, str) else list(s) for s in sides]
        out: dict[str, Any] = {
            "id": mid,
            "played_at": f"2024-01-{day:02d}T12:00:00Z",
            "teams": teams,
        }
        if ranks is not None:
            out["ranks"] = ranks
        else:
            out["scores"] = scores if scores is not None else [1, 0]
        out.update(extra)
        return out

    return build


def file_digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it does not exist."""
    if not path.exists():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def shared_data() -> Path:
    """../shared/data (the real match histories); tests needing it fail loudly if absent."""
    assert SHARED_DATA.is_dir(), f"expected the shared data beside the repository: {SHARED_DATA}"
    return SHARED_DATA
