"""The leaderboard read from the SQL tables: its pages (along the ``players_by_key``
index, with a board's time, tier and search conditions), the places of given players on
it, and the order of its tiers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..model import PlayerRecord
from .sql_reads import PLAYER_COLUMNS, SQLReads


def _board_ranges(
    above: tuple[float, str] | None, below: tuple[float, str], ids: str
) -> list[tuple[list[str], list[Any]]]:
    """The players from ``above`` (a board position, (key, id): counted; None: the
    top) down to just before ``below``, as conditions that are each one range of the
    ``players_by_key`` index (key descending, then ``ids`` ascending), so that a count
    seeks within a key shared by many players instead of reading all of them."""
    key, pid = below
    if above is None:
        return [(["sort_key > ?"], [key]), (["sort_key = ?", f"{ids} < ?"], [key, pid])]
    top, first = above
    if top == key:
        return [(["sort_key = ?", f"{ids} >= ?", f"{ids} < ?"], [key, first, pid])]
    return [
        (["sort_key = ?", f"{ids} >= ?"], [top, first]),
        (["sort_key < ?", "sort_key > ?"], [top, key]),
        (["sort_key = ?", f"{ids} < ?"], [key, pid]),
    ]


class SQLBoards(SQLReads):
    """Leaderboard pages, places and tiers."""

    def _board(
        self,
        since: datetime | None,
        tier: str | None,
        holding: str | None = None,
        time: str = "last_epoch",
    ) -> tuple[list[str], list[Any]]:
        """The leaderboard's conditions (ANDed) and their parameters; ``time``: how the
        condition names the time column (``+last_epoch`` keeps SQLite off its index)."""
        where = self._keyed_only()  # (PostgreSQL: its placeholder rows left out)
        args: list[Any] = []
        if since is not None:
            where.append(f"{time} >= ?")
            args.append(since.timestamp())
        if tier is not None:
            where.append("tier = ?")
            args.append(tier)
        if holding:
            condition, pattern = self._holding(holding)
            where.append(condition)
            args.append(pattern)
        return where, args

    def leaderboard(
        self,
        limit: int | None,
        offset: int = 0,
        since: datetime | None = None,
        tier: str | None = None,
        holding: str | None = None,
    ) -> list[PlayerRecord]:
        """A page of the leaderboard, read along the ``players_by_key`` index: the page's
        ids first (the places skipped are read from the index alone; ``holding`` is
        checked on the index's ids), then their rows."""
        where, args = self._board(since, tier, holding)
        order = f"ORDER BY sort_key DESC, {self._id_order()}"
        condition = f"WHERE {' AND '.join(where)} " if where else ""
        if limit is None and not offset:
            sql = f"SELECT {PLAYER_COLUMNS} FROM players {condition}{order}"
        else:
            sql = (
                f"SELECT {PLAYER_COLUMNS} FROM players WHERE id IN (SELECT id FROM players "
                f"{condition}{order} LIMIT ? OFFSET ?) {order}"
            )
            args += [self._no_limit(limit), offset]
        decode = self._decode
        return [decode(row) for row in self._execute(sql, args)]

    def places(
        self,
        records: Sequence[PlayerRecord],
        since: datetime | None = None,
        tier: str | None = None,
    ) -> list[int]:
        """Each record's place - 1 on the board of ``since`` and ``tier``: the players
        ahead of it, ``records`` in board order. Counted along the ``players_by_key``
        index, each count starting where the last one ended (one pass down to the last
        record; with ``since``, reading each passed player's row for its time); or, with
        ``since`` when fewer players are active than would be passed, the active
        players' keys read once along the time index and counted here."""
        if not records:
            return []
        key, ids = self.codec.sort_key, self._id_order()
        along_time = since is not None and self._fewer_active(since, key(records[-1]))
        # (else the count walks the key index between two places and reads each row's
        # time there, instead of every active player's along the time index: '+' says so)
        where, args = self._board(since, tier, time="last_epoch" if along_time else "+last_epoch")
        if along_time:
            sql = f"SELECT sort_key, id FROM players WHERE {' AND '.join(where)} AND sort_key >= ?"
            board = sorted((-k, i) for k, i in self._execute(sql, [*args, key(records[-1])]))
            return [bisect_left(board, (-key(r), r.id)) for r in records]
        counted, above = 0, None
        places = []
        for record in records:
            here = (key(record), record.id)
            for between, bounds in _board_ranges(above, here, ids):
                sql = f"SELECT count(*) FROM players WHERE {' AND '.join(where + between)}"
                counted += int(self._execute(sql, [*args, *bounds]).fetchone()[0])
            places.append(counted)
            above = here
        return places

    def _fewer_active(self, since: datetime, lowest: float) -> bool:
        """Whether fewer players played since ``since`` than have a key of at least
        ``lowest`` (two counts, each along its own index without reading rows)."""
        active, passed = (
            self._execute(sql, (value,)).fetchone()[0]
            for sql, value in (
                ("SELECT count(*) FROM players WHERE last_epoch >= ?", since.timestamp()),
                ("SELECT count(*) FROM players WHERE sort_key >= ?", lowest),
            )
        )
        return int(active) < int(passed)

    def tiers(self) -> list[str]:
        """Each tier's best key in one grouped read of the tier column (a scan of the
        table); tiers whose best keys are equal are ordered by the first id, in board
        order, that holds that key in that tier."""
        sql = (
            "SELECT tier, max(sort_key) FROM players WHERE tier IS NOT NULL AND matches >= 0 "
            "GROUP BY tier"
        )
        best = {tier: float(key) for tier, key in self._execute(sql)}
        keys = list(best.values())
        first = f"SELECT min({self._id_order()}) FROM players WHERE tier = ? AND sort_key = ?"

        def first_id(tier: str) -> str:
            if keys.count(best[tier]) == 1:
                return ""
            return str(self._execute(first, (tier, best[tier])).fetchone()[0])

        return sorted(best, key=lambda t: (-best[t], first_id(t)))
