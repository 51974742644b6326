"""A store in one SQLite file (the default on disk).

The tables are those of :mod:`rankcraft.store.sql`. The file is in WAL mode and a writer
waits up to 60 s for another's transaction, so several processes can record into one
league; a transaction starts with ``BEGIN IMMEDIATE`` (the writer lock).
A batch's matches are written many rows to a statement
(:class:`~rankcraft.store.sql_writes.SQLiteWrites`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, RankcraftError, StoreError
from .sql import SQLStore
from .sql_writes import SQLiteWrites

# SQLite's primary result codes (https://sqlite.org/rescode.html)
_CORRUPT, _FULL, _CANTOPEN, _NOTADB = 11, 13, 14, 26
_READONLY, _BUSY, _LOCKED, _IOERR = 8, 5, 6, 10


def sqlite_error(exc: sqlite3.Error, label: str) -> RankcraftError | None:
    """What happened to the database ``label``, from SQLite's error code: read-only, locked,
    full disk, cannot open, not a database, damaged, an I/O error; None for other codes
    (a programming error, left to surface as it is)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    name = getattr(exc, "sqlite_errorname", None) or "SQLite error"
    if primary == _NOTADB:
        return InputError(f"{label!r} is not a rankcraft database (not an SQLite file)")
    if primary == _CANTOPEN:
        return InputError(
            f"cannot open {label!r}: it is missing, a folder, or in a folder that cannot be "
            f"read ({name}: {exc})"
        )
    if primary == _READONLY:
        return StoreError(
            f"{label!r} is read-only: the file, its folder or its file system cannot be "
            f"written ({name}: {exc})"
        )
    if primary in (_BUSY, _LOCKED):
        return StoreError(
            f"{label!r} is locked by another process (waited {SQLiteStore.busy_timeout:g} s; "
            f"{name}: {exc})"
        )
    if primary == _FULL:
        return StoreError(
            f"the disk holding {label!r} is full ({name}: {exc}); the write under way was undone"
        )
    if primary == _CORRUPT:
        return StoreError(f"{label!r} is damaged ({name}: {exc})")
    if primary == _IOERR:
        return StoreError(f"{label!r} could not be read or written ({name}: {exc})")
    return None


MADE_AGAIN: set[str] = set()
"""The SQLite leagues (resolved paths) this process made again after another process
removed them (:meth:`SQLiteStore._make_again`)."""


class SQLiteStore(SQLiteWrites, SQLStore):
    """Players, matches and reports in an SQLite database file.

    :param path: the database file.
    :param create: create the file when it does not exist (otherwise refuse).
    """

    dialect = "sqlite"
    _read_begin = "BEGIN"  # (deferred: the snapshot is taken at the first read)

    busy_timeout = 60.0
    """Seconds a writer waits for another process's transaction before giving up."""

    batch_cache_per_player = 128
    """Bytes of page cache per player while a write transaction (a replay's batch, an
    import, a reset; a single ``League.record`` too, SQLite having one writer) holds the
    writer lock: the batch writes its touched players at random places
    of the players' table and indexes, and a cache of about their size reads and writes
    each of those pages once instead of evicting and reading it again. Capped by
    :attr:`batch_cache_max`; never below SQLite's default (2 MB); the connection's own
    size is restored when the batch ends."""

    batch_cache_max = 128 * 2**20
    """The most page cache (bytes) a batch takes (reached from 1,048,576 players)."""

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        self.path = Path(path)
        self.label = str(self.path)
        self.read_only = read_only
        if (not create or read_only) and not self.path.exists():
            raise InputError(f"no database at {self.label!r}")
        if self.path.is_dir():
            raise InputError(f"cannot open {self.label!r}: it is a folder, not a database file")
        try:
            self._db = self._connect()
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.Error as exc:
            with contextlib.suppress(AttributeError):
                self._db.close()
            raise sqlite_error(exc, self.label) or InputError(
                f"{self.label!r} is not a rankcraft database: {exc}"
            ) from None
        self._inode = os.stat(self.path).st_ino
        self._attached: tuple[str, str, Any] | None = None
        self._new = "meta" not in tables
        if self._new and read_only:
            self._db.close()
            raise InputError(f"no database at {self.label!r} (an empty SQLite file)")
        if self._new and tables:
            self._db.close()
            raise InputError(
                f"{self.label!r} is an SQLite database but not a rankcraft one "
                f"(tables: {', '.join(sorted(tables))})"
            )
        self._codec = None
        self._next_seq = 1
        self._cache_size: int | None = None  # the connection's own, while a batch's is set
        if not self._new:
            self._check_version()

    def _connect(self) -> sqlite3.Connection:
        # Several processes may record into one file: a writer waits up to `timeout`
        # seconds for another's transaction to end (SQLite's busy handler retries).
        timeout = self.busy_timeout
        if not self.read_only:
            db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=timeout
            )
            db.execute("PRAGMA foreign_keys = ON")
            return db
        # a command that only reads opens the file read-only, so that it works on a file
        # or folder it cannot write; in a read-only folder SQLite cannot make the WAL
        # index beside the file, and then reads it as an unchanging file (immutable=1)
        uri = self.path.resolve().as_uri()
        try:
            db = sqlite3.connect(
                f"{uri}?mode=ro",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                timeout=timeout,
            )
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in (_CANTOPEN, _READONLY):
                raise
        return sqlite3.connect(
            f"{uri}?mode=ro&immutable=1",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=timeout,
        )

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        try:
            return self._db.execute(sql, params)
        except sqlite3.OperationalError as exc:
            raise sqlite_error(exc, self.label) or exc from None

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        try:
            self._db.executemany(sql, rows)
        except sqlite3.OperationalError as exc:
            raise sqlite_error(exc, self.label) or exc from None

    def _begin_write(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.label!r} was opened read-only: nothing can be written")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            # the file (and its WAL index) removed under an open connection: SQLite
            # answers an I/O error (SQLITE_IOERR_FSTAT) rather than a clean refusal
            if not self.path.exists() and exc.sqlite_errorcode & 0xFF == _IOERR:
                self._make_again()
                self._begin_write()
                return
            raise sqlite_error(exc, self.label) or exc from None
        try:  # a new league removed by the command that created it, which then failed
            same = os.stat(self.path).st_ino == self._inode
        except FileNotFoundError:
            self._db.execute("ROLLBACK")
            self._make_again()
            self._begin_write()
            return
        if not same:
            self._db.execute("ROLLBACK")
            raise InputError(
                f"{self.label!r} was removed or replaced by another process; nothing was written"
            )

    def _make_again(self) -> None:
        """Make the league again where another process removed it: the command that
        created it failed and removed it, empty (it removes only a league without a match
        or a player), while this one had it open. This one carries on in a new file of
        its own (or in the one a third process made meanwhile, of the same ruleset), and
        :func:`rankcraft.store.creating` removes it again if this command fails too."""
        if self._attached is None:
            raise InputError(f"{self.label!r} was removed by another process; nothing was written")
        name, toml, codec = self._attached
        self._db.close()
        try:
            os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            MADE_AGAIN.add(str(self.path.resolve()))
        except FileExistsError:
            pass  # (a third process made it first: its league, if of this ruleset)
        except OSError as exc:
            raise InputError(f"cannot create {self.label!r} again: {exc.strerror}") from None
        self._db = self._connect()
        self._inode = os.stat(self.path).st_ino
        self._new = not self._has_meta()
        stored = self.attach(name, toml, codec)
        if stored is not None and stored != (name, toml):
            raise InputError(
                f"{self.label!r} was removed by another process and made again with ruleset "
                f"{stored[0]!r}; nothing was written"
            )

    def _in_transaction(self) -> bool:
        return bool(self._db.in_transaction)

    def begin(self) -> None:
        """Start a league-wide batch under the writer lock, with a page cache sized for
        the league's players (:attr:`batch_cache_per_player`) until it ends."""
        super().begin()
        # players are never removed, so the largest rowid counts them (read in O(log n))
        players = self._execute("SELECT max(rowid) FROM players").fetchone()[0] or 0
        wanted = min(self.batch_cache_max, self.batch_cache_per_player * players)
        own = int(self._execute("PRAGMA cache_size").fetchone()[0])
        # (a negative cache_size is in KiB, a positive one in pages)
        page = int(self._execute("PRAGMA page_size").fetchone()[0])
        if wanted > (-own * 1024 if own < 0 else own * page):
            self._cache_size = own
            self._execute(f"PRAGMA cache_size = {-(wanted // 1024)}")

    def _restore_cache(self) -> None:
        """Give the connection its own page cache size back (SQLite frees the rest)."""
        own, self._cache_size = self._cache_size, None
        if own is not None:
            self._execute(f"PRAGMA cache_size = {own}")

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._restore_cache()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._restore_cache()

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Any) -> tuple[str, str] | None:
        self._attached = (ruleset_name, ruleset_toml, codec)
        return super().attach(ruleset_name, ruleset_toml, codec)

    def _has_meta(self) -> bool:
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        return self._execute(sql).fetchone() is not None

    def _prepare_new(self) -> None:
        # WAL: readers never block the one writer; several processes can record
        self._db.execute("PRAGMA journal_mode = WAL")
