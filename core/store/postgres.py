"""A store in a PostgreSQL database (``pip install 'rankcraft[postgres]'``).

Selected by a URL: ``postgresql://user@host/dbname`` (``?schema=NAME`` puts the league's
tables in that schema, default ``rankcraft``; one schema holds one league). The tables
are those of :mod:`rankcraft.store.sql`. A write transaction takes the league's advisory
lock, so writers from many processes or machines serialise; a league that sees another's
commit reloads before rating (as with SQLite).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import InputError
from .sql import SQLStore

URL_PREFIXES = ("postgresql://", "postgres://")
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def is_postgres_url(target: object) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a file."""
    return isinstance(target, str) and target.startswith(URL_PREFIXES)


def _split(url: str) -> tuple[str, str, str]:
    """(connection URL without ``schema``, schema name, URL for messages)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = "rankcraft"
    kept = []
    for key, value in query:
        if key == "schema":
            schema = value
        else:
            kept.append((key, value))
    if not _SCHEMA_NAME.match(schema):
        raise InputError(f"'schema' must be a plain SQL name (letters, digits, _): {schema!r}")
    conninfo = urlunsplit(parts._replace(query=urlencode(kept)))
    netloc = parts.netloc
    if "@" in netloc and ":" in netloc.split("@", 1)[0]:
        user = netloc.split("@", 1)[0].split(":", 1)[0]
        netloc = f"{user}:***@{netloc.split('@', 1)[1]}"
    label = urlunsplit(parts._replace(netloc=netloc))
    return conninfo, schema, label


class PostgresStore(SQLStore):
    """Players, matches and reports in one schema of a PostgreSQL database.

    :param url: ``postgresql://user@host/dbname[?schema=NAME]``.
    :param create: create the schema and tables when missing (otherwise refuse).
    """

    def __init__(self, url: str, *, create: bool = True) -> None:
        try:
            import psycopg
            from psycopg import sql
        except ImportError:
            raise InputError(
                "a PostgreSQL database needs psycopg: pip install 'rankcraft[postgres]'"
            ) from None
        conninfo, self.schema, self.label = _split(url)
        try:
            self._db = psycopg.connect(conninfo, autocommit=True)
        except psycopg.Error as exc:
            raise InputError(f"cannot connect to {self.label!r}: {exc}") from None
        self._idle = psycopg.pq.TransactionStatus.IDLE
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
            self._db.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
        self._db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        self._codec = None
        self._next_seq = 1
        if not self._new:
            self._check_version()

    def _execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        return self._db.execute(statement.replace("?", "%s"), params)

    def _executemany(self, statement: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            with self._db.cursor() as cursor:
                cursor.executemany(statement.replace("?", "%s"), rows)

    def _begin_write(self) -> None:
        self._db.execute("BEGIN")
        # one writer per league at a time, across processes and machines
        self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.schema,))

    def _in_transaction(self) -> bool:
        return bool(self._db.info.transaction_status != self._idle)


def drop_league(url: str) -> None:
    """Remove the league kept at ``url`` (its whole schema). Used to undo the creation of a
    league by a command that then failed on bad input."""
    import psycopg
    from psycopg import sql

    conninfo, schema, _ = _split(url)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )
