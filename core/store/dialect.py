"""What differs between SQLite and PostgreSQL in the SQL store, in one place, and what
every part of :class:`~rankcraft.store.sql.SQLStore` stands on.

:class:`SQLDialect` declares the connection's hooks each store gives (a statement, many
rows, the writer lock, whether a transaction is open) and writes the statements' pieces
that the two databases spell differently: a list of ids as one parameter (``= ANY`` or
``json_each``), id order (the ``"C"`` collation), a search of ids with ASCII letters in
either case, the leaderboard's guard on PostgreSQL's placeholder rows, "no limit", and
SQLite's choice between its time index and a scan. Each part of the store
(:mod:`~rankcraft.store.sql_reads`, :mod:`~rankcraft.store.sql_boards`,
:mod:`~rankcraft.store.sql_search`, :mod:`~rankcraft.store.sql_census`,
:mod:`~rankcraft.store.sql_writes`) is a subclass of it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from ..model import fold_ascii
from .base import Codec, compact_json
from .migrations import Dialect

CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""The ASCII capitals (ids are searched with ASCII letters in either case)."""
_TO_CAPITALS = str.maketrans(CAPITALS.lower(), CAPITALS)


def capitals(text: str) -> str:
    """``text`` with its ASCII small letters a-z made capitals, every other character kept."""
    return text.translate(_TO_CAPITALS)


class SQLDialect:
    """The connection's hooks (given by :class:`~rankcraft.store.sqlite.SQLiteStore` and
    :class:`~rankcraft.store.postgres.PostgresStore`) and the dialect's pieces of SQL."""

    label: str
    dialect: Dialect
    _db: Any
    _new: bool
    _codec: Codec | None
    _next_seq: int

    # -- the connection -------------------------------------------------------------------

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _begin_write(self) -> None:
        """Start a transaction that holds the league's writer lock."""
        raise NotImplementedError

    def _in_transaction(self) -> bool:
        raise NotImplementedError

    def _prepare_new(self) -> None:
        """Dialect settings for a new database (before its schema is created)."""

    def _has_meta(self) -> bool:
        """Whether the league's ``meta`` table exists (a league has been made here)."""
        raise NotImplementedError

    @property
    def codec(self) -> Codec:
        assert self._codec is not None, "attach() first"
        return self._codec

    # -- what the two databases spell differently ------------------------------------------

    def _in_list(self, column: str, ids: Collection[str | int]) -> tuple[str, Any]:
        """A condition ``column`` is one of ``ids``, with its one parameter."""
        if self.dialect == "postgres":
            return f"{column} = ANY(?)", list(ids)
        # one parameter whatever the number of ids: a JSON array
        return f"{column} IN (SELECT value FROM json_each(?))", compact_json(list(ids))

    def _id_order(self) -> str:
        # Python's str order is by code point: PostgreSQL's "C" collation, SQLite's BINARY
        return 'id COLLATE "C"' if self.dialect == "postgres" else "id"

    def _holding(self, text: str, prefix: bool = False) -> tuple[str, str]:
        """A condition: the id holds ``text`` (starts with it: ``prefix``), ASCII letters
        in either case (:func:`rankcraft.model.id_holds`); with its one parameter."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"{escaped}%" if prefix else f"%{escaped}%"
        if self.dialect == "postgres":  # (lower() and ILIKE fold more than ASCII)
            return f"translate(id, '{CAPITALS}', '{CAPITALS.lower()}') LIKE ? ESCAPE '\\'", (
                fold_ascii(pattern)
            )
        return "id LIKE ? ESCAPE '\\'", pattern  # (SQLite's LIKE folds ASCII alone)

    def _keyed_only(self) -> list[str]:
        """The leaderboard's first conditions: on PostgreSQL a one-match transaction's
        placeholder rows have no key, and a condition on the index's own column keeps
        the skipped places an index-only scan; none on SQLite."""
        return ["sort_key IS NOT NULL"] if self.dialect == "postgres" else []

    def _no_limit(self, limit: int | None) -> int | None:
        """``limit`` as a ``LIMIT`` parameter: None (no limit) is -1 on SQLite."""
        return -1 if limit is None and self.dialect == "sqlite" else limit

    def _time_column(self, since: datetime | None) -> str:
        """How a read of the players who played since ``since`` names the time column:
        SQLite reads them along its index when they are fewer than a twentieth of the
        players (a row found through an index cost about 20 rows of a scan: 1.5 us
        against 0.07 on 864,605 players), else scans the table (``+last_epoch``: off
        the index); PostgreSQL's planner, which keeps statistics, chooses for itself."""
        if self.dialect != "sqlite" or since is None:
            return "last_epoch"
        active, players = (
            int(self._execute(sql, args).fetchone()[0])
            for sql, args in (
                ("SELECT count(*) FROM players WHERE last_epoch >= ?", (since.timestamp(),)),
                ("SELECT count(*) FROM players", ()),
            )
        )
        return "last_epoch" if active * 20 < players else "+last_epoch"
