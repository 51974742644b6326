"""Counts from the SQL tables for a census of the league: the players and matches, the
latest match time, the players below given keys among those active since a time (along
the key index near the top, else one read with a ``FILTER`` per key), and the keys of
the players active in a window.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..io import parse_time
from .dialect import SQLDialect

WALKED_ROWS = 10_000
"""The most players :meth:`SQLStore.count_below` passes along the key index (reading
their rows: about 15 ms) to count the keys near the top without a read of them all."""
COUNTED_KEYS = 200
"""The most distinct keys :meth:`SQLStore.count_below` counts in SQL, one ``FILTER``
each, in one read; past that it reads the players' keys and counts them itself."""


class SQLCensus(SQLDialect):
    """Counts of players and matches, and the census's counts below keys."""

    def count_players(self) -> int:
        return int(self._execute("SELECT count(*) FROM players WHERE matches >= 0").fetchone()[0])

    def count_matches(self) -> int:
        return int(self._execute("SELECT count(*) FROM matches").fetchone()[0])

    def latest_played(self) -> datetime | None:
        """The latest ``last_played`` of any player (along the ``last_epoch`` index)."""
        row = self._execute(
            "SELECT last_played FROM players WHERE last_epoch = "
            "(SELECT max(last_epoch) FROM players) LIMIT 1"  # (placeholders have none)
        ).fetchone()
        return None if row is None or row[0] is None else parse_time(row[0], field="last_played")

    def count_below(
        self, keys: Sequence[float], since: datetime | None, matches_from: int
    ) -> tuple[int, list[int]]:
        """The players who played at or after ``since`` with at least ``matches_from``
        matches, and for each key those of them below it. The total is one read of
        those players' rows (with ``since``: along the time index when few are active,
        else a scan of the table, :meth:`_time_column`). Keys near the top (at most
        :data:`WALKED_ROWS` players at or above the lowest) are counted along
        ``players_by_key`` from the top, each count a slice between two keys reading the
        passed players' rows; others in the total's read (``count(*) FILTER``, one per
        distinct key; past :data:`COUNTED_KEYS` keys, the keys read and bisected here)."""
        where, args = self._counted(since, matches_from, self._time_column(since))
        players = f"FROM players WHERE {' AND '.join(where)}"
        distinct = sorted(set(keys))
        if len(distinct) > COUNTED_KEYS:
            board = sorted(k for (k,) in self._execute(f"SELECT sort_key {players}", args))
            return len(board), [bisect_left(board, k) for k in keys]
        if distinct and self._near_top(distinct[0]):
            total = int(self._execute(f"SELECT count(*) {players}", args).fetchone()[0])
            # (the walk reads each passed player's time from its row, off the time index)
            at_least = self._walk_down(distinct, *self._counted(since, matches_from, "+last_epoch"))
            return total, [total - at_least[k] for k in keys]
        counts = ["count(*)"] + ["count(*) FILTER (WHERE sort_key < ?)"] * len(distinct)
        sql = f"SELECT {', '.join(counts)} {players}"
        total, *below = self._execute(sql, distinct + args).fetchone()
        of_key = dict(zip(distinct, below, strict=True))
        return int(total), [int(of_key[k]) for k in keys]

    def _near_top(self, key: float) -> bool:
        """Whether at most :data:`WALKED_ROWS` players have a key of ``key`` or more (an
        index-only count that stops past that)."""
        sql = "SELECT count(*) FROM (SELECT 1 FROM players WHERE sort_key >= ? LIMIT ?) AS top"
        return int(self._execute(sql, (key, WALKED_ROWS + 1)).fetchone()[0]) <= WALKED_ROWS

    def _walk_down(self, keys: list[float], where: list[str], args: list[Any]) -> dict[float, int]:
        """For each of ``keys`` (ascending), the players of ``where`` with at least that
        key, counted along ``players_by_key`` from the highest key down."""
        at_least: dict[float, int] = {}
        counted, above = 0, None
        for key in reversed(keys):
            between, bounds = ["sort_key >= ?"], [key]
            if above is not None:
                between.append("sort_key < ?")
                bounds.append(above)
            sql = f"SELECT count(*) FROM players WHERE {' AND '.join(where + between)}"
            counted += int(self._execute(sql, args + bounds).fetchone()[0])
            at_least[key], above = counted, key
        return at_least

    def active_keys(self, since: datetime, until: datetime) -> list[tuple[str, float]]:
        """Ids and keys of the players whose last match is in [``since``, ``until``], read
        along the time index when they are few, else by a scan (:meth:`_time_column`)."""
        time = self._time_column(since)
        sql = f"SELECT id, sort_key FROM players WHERE {time} >= ? AND {time} <= ? AND matches >= 0"
        return [
            (pid, float(k)) for pid, k in self._execute(sql, (since.timestamp(), until.timestamp()))
        ]

    @staticmethod
    def _counted(
        since: datetime | None, matches_from: int, time: str
    ) -> tuple[list[str], list[Any]]:
        """The conditions of :meth:`count_below`'s players and their parameters; ``time``:
        how they name the time column."""
        where: list[str] = ["matches >= ?"]
        args: list[Any] = [matches_from]
        if since is not None:
            where.append(f"{time} >= ?")
            args.append(since.timestamp())
        return where, args
