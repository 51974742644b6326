"""Where a league keeps its players, matches and reports.

:class:`MemoryStore` keeps everything in the process (the default for ``League(...)``);
:class:`SQLiteStore` keeps it in one SQLite file (the default on disk). Both implement
:class:`Store`; the engine writes each batch of matches in one transaction.
"""

from __future__ import annotations

from .base import SCHEMA_VERSION, Codec, MatchRow, Store
from .memory import MemoryStore
from .sqlite import SQLiteStore

__all__ = ["SCHEMA_VERSION", "Codec", "MatchRow", "MemoryStore", "SQLiteStore", "Store"]
