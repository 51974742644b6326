"""What the SQLite and PostgreSQL stores share: the tables, the statements, the codec.

Layout (schema version 8; :mod:`rankcraft.store.migrations` builds and migrates it)::

    meta(key, value)                      schema_version, ruleset_name, ruleset_toml, ...
    players(id, skill, rank, matches, last_played, open, tier, sort_key)
                                          skill/rank/open as JSON objects; sort_key: the
                                          leaderboard's key, indexed with id
    matches(seq, id, played_at, match, report)           match as a JSON object; report
                                          packed (rankcraft.rated.ReportPacker: doubles),
                                          or JSON text in rows older than version 6
    participants(bucket, player, seq)     index of who played which match; bucket:
                                          seq // PARTICIPANT_BUCKET (see migrations)
    schema_history(version, applied_at, rankcraft, summary)   one row per version applied
    api_tokens(name, key, digest, scope, created_at)     rankcraft.tokens: digests only
    edits(n, made_at, kind, match_id, reason, by_token, old, new, changes)
                                          the audit of corrections (rankcraft.corrections)

Statements are written with ``?`` placeholders; a dialect turns them into its driver's.
Each batch of matches is one transaction; the engine rolls a failed batch back whole.

A dialect whose writers run in parallel (``parallel_writers``: PostgreSQL) also offers
``begin_shared`` and ``lock_players``, for one-match transactions that lock only their
players; SQLite has one writer at a time.

The store is made of one part per concern, each a module: :mod:`~rankcraft.store.sql_writes`
(players and matches, SQLite's batched inserts, the write transaction),
:mod:`~rankcraft.store.sql_reads` (records, matches, histories),
:mod:`~rankcraft.store.sql_boards` (leaderboard, places, tiers),
:mod:`~rankcraft.store.sql_search`, :mod:`~rankcraft.store.sql_census` (counts), and
:mod:`~rankcraft.store.dialect` (what SQLite and PostgreSQL spell differently). This
module puts them together and keeps the league's own state: opening (the schema version,
a migration), the ruleset and the other ``meta`` values, the commit generation, read
transactions and the API tokens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import StateError, StoreError
from ..version import __version__
from .base import Codec
from .migrations import SCHEMA_VERSION, upgrade
from .sql_census import SQLCensus
from .sql_history import SQLHistory
from .sql_reads import PLAYER_COLUMNS
from .sql_search import SQLSearch
from .sql_writes import SQLWrites, epoch_of

_SORT_KEY_META = "sort_key"
"""meta key naming the function the kept ``players.sort_key`` values were computed by."""

_FILL_EVERY = 5000
"""Players whose sort key is computed again per statement when a league is opened."""


class SQLStore(SQLWrites, SQLSearch, SQLCensus, SQLHistory):
    """A store in SQL tables; subclasses give the connection and the dialect.

    :param label: how messages name the database (a path or a URL without password).
    """

    parallel_writers = False
    _read_begin: str
    """The statement that starts a read transaction (:meth:`reading`)."""
    shared = True

    def _check_version(self) -> None:
        """Refuse a database of an unknown or newer layout; migrate an older one."""
        found = self._version()
        if found == SCHEMA_VERSION:
            return
        self._begin_write()
        try:
            found = self._version()  # another process may have migrated it meanwhile
            if found < SCHEMA_VERSION:
                upgrade(self._execute, self.dialect, found, __version__)
            self._execute("COMMIT")
        except BaseException:
            self._undo()
            self.close()
            raise

    def _undo(self) -> None:
        """Roll back the transaction that failed, unless the database already did: SQLite
        rolls back by itself on a full disk or an I/O error, and a ROLLBACK then would
        fail ("no transaction is active") in place of the error that says what happened."""
        if self._in_transaction():
            self._execute("ROLLBACK")

    def _version(self) -> int:
        text = self._meta("schema_version")
        try:
            version = int(text or "")
        except ValueError:
            version = 0
        if version > SCHEMA_VERSION:
            self.close()
            raise StateError(
                f"{self.label!r} has rankcraft schema version {version}, written by a newer "
                f"rankcraft; this one reads versions up to {SCHEMA_VERSION}: upgrade rankcraft"
            )
        if version < 1:
            self.close()
            raise StateError(
                f"{self.label!r} has rankcraft schema version {text!r}, which no rankcraft "
                f"wrote; it is not read (versions 1 to {SCHEMA_VERSION} are)"
            )
        return version

    # -- shared ---------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self._execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        self._codec = codec
        if self._new:
            self._prepare_new()
            self._begin_write()
            if self._has_meta():  # (another process made the league since this one looked)
                self._execute("ROLLBACK")
                self._new = False
                self._check_version()
                return self.attach(ruleset_name, ruleset_toml, codec)
            try:
                upgrade(self._execute, self.dialect, None, __version__)
                self._executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("ruleset_name", ruleset_name),
                        ("ruleset_toml", ruleset_toml),
                        ("created_with", __version__),
                        (_SORT_KEY_META, codec.sort_key_name),
                    ],
                )
                self._execute("COMMIT")
            except BaseException:
                self._undo()
                raise
            self._new = False
            return None
        row = self._execute("SELECT max(seq) FROM matches").fetchone()
        self._next_seq = (row[0] or 0) + 1
        if self._meta(_SORT_KEY_META) != codec.sort_key_name:
            self._fill_sort_keys()
        return (self._meta("ruleset_name") or "", self._meta("ruleset_toml") or "")

    def _fill_sort_keys(self) -> None:
        """Compute every player's ``sort_key`` and ``tier`` again (a database migrated
        from before schema 5, or kept under another key function): once, under the
        writer lock. A store opened read-only leaves them and sorts in SQL by what is
        kept (the league then orders as when they were written)."""
        if getattr(self, "read_only", False):
            return
        codec = self.codec
        self._begin_write()
        try:
            if self._meta(_SORT_KEY_META) != codec.sort_key_name:  # (another process?)
                decode, key, tier = self._decode, codec.sort_key, codec.tier
                after = ""
                while rows := self._execute(
                    f"SELECT {PLAYER_COLUMNS} FROM players WHERE {self._id_order()} > ? "
                    f"AND matches >= 0 ORDER BY {self._id_order()} LIMIT {_FILL_EVERY}",
                    (after,),
                ).fetchall():
                    records = [decode(row) for row in rows]
                    self._update_keys([(key(r), tier(r), epoch_of(r), r.id) for r in records])
                    after = records[-1].id
                self.set_meta(_SORT_KEY_META, codec.sort_key_name)
            self._execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

    def _update_keys(self, rows: list[tuple[Any, ...]]) -> None:
        self._executemany(
            "UPDATE players SET sort_key = ?, tier = ?, last_epoch = ? WHERE id = ?", rows
        )

    def stored_ruleset(self) -> tuple[str, str] | None:
        """(name, toml) of the ruleset the database was created with, or None if new."""
        if self._new:
            return None
        return (self._meta("ruleset_name") or "", self._meta("ruleset_toml") or "")

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """The reads inside see one committed state of the league, whatever other
        processes commit meanwhile: a read transaction (SQLite: a snapshot of its WAL
        from the first read; PostgreSQL: ``REPEATABLE READ, READ ONLY``). Inside an
        open transaction, that transaction's own state."""
        if self._in_transaction():
            yield
            return
        self._execute(self._read_begin)
        try:
            yield
        finally:
            if self._in_transaction():
                self._execute("COMMIT")

    def generation(self) -> int:
        """How many batches were ever committed (read inside a transaction)."""
        value = self._meta("generation")
        return 0 if value is None else int(value)

    def bump_generation(self) -> int:
        """Count this batch (inside its transaction); returns the new generation."""
        new = self.generation() + 1
        self.set_meta("generation", str(new))
        return new

    def get_meta(self, key: str) -> str | None:
        return None if self._new else self._meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- API tokens (rankcraft.tokens): single statements, each its own transaction ------

    def add_token(self, name: str, key: str, digest: str, scope: str, created_at: str) -> bool:
        """Keep a token's digest; False when ``name`` is taken."""
        cursor = self._execute(
            "INSERT INTO api_tokens (name, key, digest, scope, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            (name, key, digest, scope, created_at),
        )
        return bool(cursor.rowcount == 1)

    def token_rows(self) -> list[tuple[str, str, str, str]]:
        """(name, key, scope, created_at) of every token, by name."""
        rows = self._execute(
            "SELECT name, key, scope, created_at FROM api_tokens ORDER BY name"
        ).fetchall()
        return [tuple(r) for r in rows]

    def token_by_key(self, key: str) -> tuple[str, str, str, str] | None:
        """(name, digest, scope, created_at) of the token with public ``key``, or None."""
        row = self._execute(
            "SELECT name, digest, scope, created_at FROM api_tokens WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else tuple(row)

    def remove_token(self, name: str) -> bool:
        """Forget the token ``name``; False when there is none."""
        return bool(self._execute("DELETE FROM api_tokens WHERE name = ?", (name,)).rowcount == 1)

    def close(self) -> None:
        """Close the connection; using the store afterwards raises :class:`StoreError`
        (closing again does nothing)."""
        self._db.close()
        self._db = _Closed(self.label)


class _Closed:
    """A closed store's connection: closing it again does nothing; anything else says
    the league is closed (rather than the driver's own message)."""

    def __init__(self, label: str) -> None:
        self._label = label

    def close(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        raise StoreError(
            f"{self._label!r} is closed (League.close, or the end of its 'with' block): "
            "open it again with League.open"
        )
