"""The league a scored replay runs in (an evaluation, a draw fit, a tuning trial): in
memory, never read back; read from :mod:`rankcraft.evaluate` too.
"""

from __future__ import annotations

from typing import Any

from .engine import League
from .store import MemoryStore


def scratch_league(ruleset: Any) -> League:
    """A league in memory for a replay that is scored and never read back (``evaluate``
    and ``tune`` trials): it keeps its matches as objects, never packed, which is the
    fastest (see :class:`rankcraft.store.MemoryStore`). ``ruleset``: as ``League`` takes it."""
    return League(ruleset, store=MemoryStore(pack_after=None))
