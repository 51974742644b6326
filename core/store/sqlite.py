"""A store in one SQLite file (the default on disk).

The tables are those of :mod:`rankcraft.store.sql`. The file is in WAL mode and a writer
waits up to 60 s for another's transaction, so several processes can record into one
league; a transaction starts with ``BEGIN IMMEDIATE`` (the writer lock).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from .sql import SQLStore


class SQLiteStore(SQLStore):
    """Players, matches and reports in an SQLite database file.

    :param path: the database file.
    :param create: create the file when it does not exist (otherwise refuse).
    """

    dialect = "sqlite"

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self.label = str(self.path)
        if not create and not self.path.exists():
            raise InputError(f"no database at {self.label!r}")
        try:
            # Several processes may record into one file: a writer waits up to `timeout`
            # seconds for another's transaction to end (SQLite's busy handler retries).
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=60.0
            )
            self._db.execute("PRAGMA foreign_keys = ON")
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.label!r} is not a rankcraft database: {exc}") from None
        self._inode = os.stat(self.path).st_ino
        self._new = "meta" not in tables
        if self._new and tables:
            self._db.close()
            raise InputError(
                f"{self.label!r} is an SQLite database but not a rankcraft one "
                f"(tables: {', '.join(sorted(tables))})"
            )
        self._codec = None
        self._next_seq = 1
        if not self._new:
            self._check_version()

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._db.execute(sql, params)

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self._db.executemany(sql, rows)

    def _begin_write(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        try:  # a new league removed by the command that created it, which then failed
            same = os.stat(self.path).st_ino == self._inode
        except FileNotFoundError:
            same = False
        if not same:
            self._db.execute("ROLLBACK")
            raise InputError(
                f"{self.label!r} was removed or replaced by another process; nothing was written"
            )

    def _in_transaction(self) -> bool:
        return bool(self._db.in_transaction)

    def _prepare_new(self) -> None:
        # WAL: readers never block the one writer; several processes can record
        self._db.execute("PRAGMA journal_mode = WAL")
