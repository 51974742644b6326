"""A store in a PostgreSQL database (``pip install 'rankcraft[postgres]'``).

Selected by a URL: ``postgresql://user@host/dbname`` (``?schema=NAME`` puts the league's
tables in that schema, default ``rankcraft``; one schema holds one league). The tables
are those of :mod:`rankcraft.store.sql`.

Locking, so that many processes and machines can record at once:

- every write transaction takes the league's advisory lock, shared for one match
  (:meth:`PostgresStore.begin_shared`) and exclusive for a replay, a reset or a period
  close (:meth:`PostgresStore.begin`), so league-wide work never interleaves with matches;
- a one-match transaction then locks its players' rows, in sorted id order, one at a time
  (a new player's row is inserted first, so that it can be locked). Matches on disjoint
  players commit in parallel; matches sharing a player wait for each other, and a fixed
  order cannot deadlock;
- match order (``matches.seq``) and the commit generation come from sequences, so no
  writer waits on a shared counter row.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import DuplicateMatchError, InputError
from ..extras import missing
from ..model import PlayerRecord
from .base import Entry
from .sql import SQLStore
from .sql_reads import PLAYER_COLUMNS

URL_PREFIXES = ("postgresql://", "postgres://")
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def is_postgres_url(target: object) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a file."""
    return isinstance(target, str) and target.startswith(URL_PREFIXES)


def mask_url(url: str | Path) -> str:
    """``url`` with its password replaced by ``***``, for messages and printouts: the one in
    the user part (``postgresql://ann:secret@host/db``) and a ``password`` query parameter.
    Anything that is not a PostgreSQL URL (an SQLite path) comes back unchanged.

    >>> mask_url("postgresql://ann:s3cr%40t@db.example:5432/league?schema=x&password=p")
    'postgresql://ann:***@db.example:5432/league?schema=x&password=***'
    >>> mask_url("postgresql://ann@host/db"), mask_url("league.sqlite")
    ('postgresql://ann@host/db', 'league.sqlite')
    """
    text = str(url)
    if not is_postgres_url(text):
        return text
    try:
        parts = urlsplit(text)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:  # unparseable: show the scheme only, never the rest
        return text.split("://", 1)[0] + "://***"
    netloc = parts.netloc
    if "@" in netloc:
        user_info, host = netloc.rsplit("@", 1)
        if ":" in user_info:
            netloc = f"{user_info.split(':', 1)[0]}:***@{host}"
    masked_query = parts.query
    if any(key == "password" for key, _ in query):
        masked_query = "&".join(
            f"{key}=***" if key == "password" else urlencode([(key, value)]) for key, value in query
        )
    return urlunsplit(parts._replace(netloc=netloc, query=masked_query))


def _split(url: str) -> tuple[str, str, str]:
    """(connection URL without ``schema``, schema name, URL for messages)."""
    try:
        parts = urlsplit(url)  # (the port is left to libpq: a URL may name several hosts)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as exc:  # (an unclosed "[" of an IPv6 address)
        raise InputError(f"not a PostgreSQL URL: {mask_url(url)!r} ({exc})") from None
    schemas = [value for key, value in query if key == "schema"]
    if len(schemas) > 1:  # (which one would be meant?)
        raise InputError(f"'schema' is given {len(schemas)} times in {mask_url(url)!r}")
    schema = schemas[0] if schemas else "rankcraft"
    kept = [(key, value) for key, value in query if key != "schema"]
    if not _SCHEMA_NAME.match(schema):
        raise InputError(f"'schema' must be a plain SQL name (letters, digits, _): {schema!r}")
    if schema.lower().startswith("pg_") or schema.lower() == "information_schema":
        raise InputError(
            f"'schema' must not be one of PostgreSQL's own (pg_..., information_schema): "
            f"{schema!r} in {mask_url(url)!r}"
        )
    conninfo = urlunsplit(parts._replace(query=urlencode(kept)))
    return conninfo, schema, mask_url(url)


_OPEN_LOCK = "SELECT {}(hashtext(%s), 31)"
"""The advisory lock every open store of a schema holds shared, and :func:`discard_league`
tries exclusively (two keys: apart from the writers' one-key lock on ``hashtext``)."""


def _unstorable(value: Any) -> Any:
    """A read's parameter, with a text holding NUL as SQL NULL (or such items of a list
    left out): PostgreSQL's text cannot hold NUL, so no id, tier or key stored equals it
    (psycopg would refuse to send it). Such a lookup finds nothing, as it does on SQLite
    (``GET /players/x%00y`` is a 404, not a 500)."""
    if isinstance(value, str):
        return None if "\x00" in value else value
    if isinstance(value, list) and any(isinstance(v, str) and "\x00" in v for v in value):
        return [v for v in value if not (isinstance(v, str) and "\x00" in v)]
    return value


class PostgresStore(SQLStore):
    """Players, matches and reports in one schema of a PostgreSQL database.

    :param url: ``postgresql://user@host/dbname[?schema=NAME]``.
    :param create: create the schema and tables when missing (otherwise refuse).
    """

    dialect = "postgres"
    _read_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    parallel_writers = True

    def __init__(self, url: str, *, create: bool = True) -> None:
        try:
            import psycopg
            from psycopg import sql
        except ImportError:
            raise missing("a PostgreSQL database needs", "psycopg", "postgres") from None
        conninfo, self.schema, self.label = _split(url)
        try:
            self._db = psycopg.connect(conninfo, autocommit=True)
        except psycopg.Error as exc:
            raise InputError(f"cannot connect to {self.label!r}: {exc}") from None
        # held while this store is open (before it looks at the tables): a command that
        # made the league and failed leaves it in place rather than drop it under us
        self._db.execute(_OPEN_LOCK.replace("{}", "pg_advisory_lock_shared"), (self.schema,))
        self._idle = psycopg.pq.TransactionStatus.IDLE
        self._unique_violation = psycopg.errors.UniqueViolation
        self._shared = False
        self._pipeline: Any = None
        self._reserved: list[int] = []
        tables = {
            r[0]
            for r in self._db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (self.schema,),
            )
        }
        self._new = "meta" not in tables
        if self._new and not create:
            self._db.close()
            raise InputError(f"no database at {self.label!r} (schema {self.schema!r})")
        if self._new and tables:
            self._db.close()
            raise InputError(
                f"schema {self.schema!r} of {self.label!r} holds tables that are not a "
                f"rankcraft league ({', '.join(sorted(tables))})"
            )
        if self._new:
            # (IF NOT EXISTS still fails if another process creates it at the same moment)
            with contextlib.suppress(psycopg.errors.UniqueViolation):
                self._db.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
                )
        self._db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        self._codec = None
        self._next_seq = 1
        if not self._new:
            self._check_version()

    def _execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        if statement.startswith("SELECT"):
            params = [_unstorable(p) for p in params]
        return self._db.execute(statement.replace("?", "%s"), params)

    def _executemany(self, statement: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            with self._db.cursor() as cursor:
                cursor.executemany(statement.replace("?", "%s"), rows)

    def _begin_write(self) -> None:
        self._db.execute("BEGIN")
        # league-wide work excludes every other writer, across processes and machines
        self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.schema,))

    def begin(self) -> None:
        self._begin_write()

    # A one-match transaction costs four round trips: begin; lock, look up the id and
    # reserve the match's seq; the writes, the generation and COMMIT in one pipeline
    # that stays open from write() to commit().

    def begin_shared(self) -> None:
        """Start a one-match transaction: others like it run beside it."""
        with self._db.pipeline():
            self._db.execute("BEGIN")
            self._db.execute("SELECT pg_advisory_xact_lock_shared(hashtext(%s))", (self.schema,))
        self._shared = True

    def lock_players(
        self, players: list[str], match_id: str | None = None
    ) -> dict[str, PlayerRecord]:
        """Lock the rows of ``players`` (sorted ids) one at a time, in that order, and
        return their records. A new player's row is inserted first as a placeholder
        (``matches`` = -1) that the transaction overwrites with the rated record; it is
        left out of the result.

        :param match_id: the match about to be written: refused if already recorded, and
            its seq is drawn after the locks, so that matches sharing a player are
            numbered in the order they commit.
        :raises DuplicateMatchError: ``match_id`` is recorded.
        """
        cursors = []
        # the server runs these in order (so the locks are taken in id order); the
        # pipeline only saves the round trips between them
        with self._db.pipeline():
            for pid in players:
                self._db.execute(
                    "INSERT INTO players (id, skill, matches) VALUES (%s, 'null', -1) "
                    "ON CONFLICT (id) DO NOTHING",
                    (pid,),
                )
                cursors.append(
                    self._db.execute(
                        f"SELECT {PLAYER_COLUMNS} FROM players WHERE id = %s FOR UPDATE", (pid,)
                    )
                )
            if match_id is not None:
                seen = self._db.execute(
                    "SELECT 1 FROM matches WHERE id = %s UNION ALL "
                    "SELECT 1 FROM edits WHERE kind = 'void' AND match_id = %s",
                    (match_id, match_id),
                )
                seq = self._db.execute("SELECT nextval('match_seq')")
        found = {}
        for cursor in cursors:
            row = cursor.fetchone()
            if row[3] >= 0:
                found[row[0]] = self._decode(row)
        if match_id is not None:
            if seen.fetchone() is not None:
                raise DuplicateMatchError(
                    f"match id {match_id!r} is already recorded", match_id=match_id
                )
            self._reserved = [int(seq.fetchone()[0])]
        return found

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        if self._shared and self._pipeline is None:
            self._pipeline = self._db.pipeline()
            self._pipeline.__enter__()
        super().write(players, matches)

    def _take_seqs(self, n: int) -> list[int]:
        if n == 0:
            return []
        if len(self._reserved) == n:
            taken, self._reserved = self._reserved, []
            return taken
        rows = self._db.execute(
            "SELECT nextval('match_seq') FROM generate_series(1, %s)", (n,)
        ).fetchall()
        return sorted(r[0] for r in rows)

    def _duplicate(self, exc: Any) -> DuplicateMatchError:
        # another writer committed this id after the league looked for it
        detail = exc.diag.message_detail or ""
        found = re.search(r"\(id\)=\((.*)\) already exists", detail)
        match_id = found.group(1) if found else None
        return DuplicateMatchError(f"match id {match_id!r} is already recorded", match_id=match_id)

    def _insert_matches(self, rows: list[tuple[Any, ...]]) -> None:
        try:
            super()._insert_matches(rows)
        except self._unique_violation as exc:
            raise self._duplicate(exc) from None

    def generation(self) -> int:
        last, called = self._db.execute(
            "SELECT last_value, is_called FROM generation_seq"
        ).fetchone()
        return int(last if called else last - 1)

    def bump_generation(self) -> int:
        """Count this transaction. In a one-match transaction the new value is not read
        (returns 0): the statement just joins the open pipeline."""
        if self._shared:
            self._db.execute("SELECT nextval('generation_seq')")
            return 0
        return int(self._db.execute("SELECT nextval('generation_seq')").fetchone()[0])

    def commit(self) -> None:
        self._db.execute("COMMIT")
        self._end()

    def rollback(self) -> None:
        # (an error closing the pipeline is the one that made the engine roll back)
        with contextlib.suppress(Exception):
            self._end()
        super().rollback()

    def _end(self) -> None:
        """Close the one-match pipeline: its statements run now, and their errors show."""
        self._shared = False
        self._reserved = []
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            try:
                pipeline.__exit__(None, None, None)
            except self._unique_violation as exc:
                raise self._duplicate(exc) from None

    def _in_transaction(self) -> bool:
        return bool(self._db.info.transaction_status != self._idle)

    def _has_meta(self) -> bool:
        sql = (
            "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = 'meta'"
        )
        return self._execute(sql, (self.schema,)).fetchone() is not None


def create_schema(url: str) -> bool:
    """Create the schema of the league at ``url`` if it does not exist. Returns whether
    this call created it (``CREATE SCHEMA`` is atomic: of two processes, one does)."""
    import psycopg
    from psycopg import sql

    conninfo, schema, label = _split(url)
    try:
        with psycopg.connect(conninfo, autocommit=True) as connection:
            try:
                connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
            except (psycopg.errors.DuplicateSchema, psycopg.errors.UniqueViolation):
                return False  # (the second: another process created it at the same moment)
            except psycopg.Error as exc:  # (no privilege to create it, a reserved name)
                reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise InputError(
                    f"cannot create schema {schema!r} in {label!r}: {reason}"
                ) from None
    except psycopg.Error as exc:  # (no server, or a connection option it does not know)
        raise InputError(f"cannot connect to {label!r}: {exc}") from None
    return True


_OWN_TABLES: tuple[str, ...] = (
    "participants",
    "matches",
    "players",
    "api_tokens",
    "schema_history",
    "meta",
)
_OWN_TABLES += ("edits", "outbox")
_OWN_SEQUENCES = ("match_seq", "generation_seq")


def discard_league(url: str) -> bool:
    """Undo the creation of the league at ``url`` by a command that then failed: under the
    league's lock, and only while it holds no match and no player and no other process
    has it open, drop rankcraft's own tables and sequences, then the schema if nothing
    else is in it, in one transaction. Anything another process made (a match, a player,
    a function, a type, a table) stays, and so does a league another command opened: that
    command carries on in it (a store opened meanwhile waits for the drop, then finds no
    league and makes one).

    :returns: whether the league was removed.
    """
    import psycopg
    from psycopg import sql

    conninfo, schema, _ = _split(url)
    name = sql.Identifier(schema)
    with psycopg.connect(conninfo) as connection:  # one transaction, rolled back on error
        connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (schema,))
        (alone,) = connection.execute(
            _OPEN_LOCK.replace("{}", "pg_try_advisory_xact_lock"), (schema,)
        ).fetchone() or (False,)
        if not alone:
            return False  # another command has the league open: it is that one's now
        tables = {
            r[0]
            for r in connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            )
        }
        for table in ("matches", "players"):
            if table in tables:
                query = sql.SQL("SELECT 1 FROM {}.{} LIMIT 1").format(name, sql.Identifier(table))
                if connection.execute(query).fetchone() is not None:
                    return False
        for table in _OWN_TABLES:
            if table in tables:
                connection.execute(
                    sql.SQL("DROP TABLE {}.{} RESTRICT").format(name, sql.Identifier(table))
                )
        for sequence in _OWN_SEQUENCES:
            connection.execute(
                sql.SQL("DROP SEQUENCE IF EXISTS {}.{} RESTRICT").format(
                    name, sql.Identifier(sequence)
                )
            )
        try:
            with connection.transaction():  # (a savepoint)
                connection.execute(sql.SQL("DROP SCHEMA {} RESTRICT").format(name))
        except psycopg.errors.DependentObjectsStillExist:
            connection.commit()
            return False  # someone else's objects live there: the schema stays
        connection.commit()
    return True
