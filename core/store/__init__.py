"""Where a league keeps its players, matches and reports.

:class:`MemoryStore` keeps everything in the process (the default for ``League(...)``);
:class:`SQLiteStore` keeps it in one SQLite file (the default on disk) and
:class:`PostgresStore` in a PostgreSQL schema (a ``postgresql://`` URL). All implement
:class:`Store`; the engine writes each batch of matches in one transaction.
"""

from __future__ import annotations

from pathlib import Path

from .base import SCHEMA_VERSION, Codec, Entry, MatchRow, Store
from .creating import Creation, creating
from .memory import MemoryStore
from .postgres import PostgresStore, is_postgres_url, mask_url
from .sqlite import SQLiteStore


def open_store(path: str | Path, *, create: bool = True) -> SQLiteStore | PostgresStore:
    """The store at ``path``: a PostgreSQL schema for a ``postgresql://`` URL, else an
    SQLite file (created when missing unless ``create`` is false)."""
    if is_postgres_url(str(path)):
        return PostgresStore(str(path), create=create)
    return SQLiteStore(path, create=create)


__all__ = [
    "SCHEMA_VERSION",
    "Codec",
    "Creation",
    "Entry",
    "MatchRow",
    "MemoryStore",
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "creating",
    "is_postgres_url",
    "mask_url",
    "open_store",
]
