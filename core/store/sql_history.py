"""A league's history as a whole, for corrections (:mod:`rankcraft.corrections`): the
recorded matches read in order from a place on, the matches from a place on removed (a
re-rate writes them again), players removed, and the ``edits`` table, the audit of
every correction (schema version 8)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ..io import parse_match
from ..model import Match
from .sql_reads import SQLReads

EDIT_COLUMNS = ("n", "made_at", "kind", "match_id", "reason", "by_token", "old", "new", "changes")
"""The columns of ``edits``, in the order :meth:`SQLHistory.edit_rows` gives them."""


class SQLHistory(SQLReads):
    """The history reads and writes a correction needs."""

    def history(self, start: int = 1) -> Iterator[tuple[int, Match]]:
        """The recorded matches from seq ``start`` on, in order, with their seqs."""
        sql = "SELECT seq, match FROM matches WHERE seq >= ? ORDER BY seq"
        for seq, text in self._execute(sql, (start,)).fetchall():
            yield seq, parse_match(json.loads(text))

    def drop_history(self, start: int) -> None:
        """Remove the matches from seq ``start`` on, in the open write transaction."""
        bucket = start // self._bucket_size()
        self._execute("DELETE FROM participants WHERE bucket >= ? AND seq >= ?", (bucket, start))
        self._execute("DELETE FROM matches WHERE seq >= ?", (start,))

    def drop_players(self, players: Collection[str]) -> None:
        """Remove these players' records, in the open write transaction."""
        if players:
            condition, arg = self._in_list("id", list(players))
            self._execute(f"DELETE FROM players WHERE {condition}", (arg,))

    def add_edit(self, edit: Mapping[str, Any]) -> int:
        """Keep one correction's audit row (:data:`EDIT_COLUMNS` but ``n``, which is
        given here: one more than the last); returns its ``n``."""
        last = self._execute("SELECT max(n) FROM edits").fetchone()[0]
        n = (last or 0) + 1
        names = ", ".join(EDIT_COLUMNS)
        marks = ", ".join("?" * len(EDIT_COLUMNS))
        values = (n, *(edit.get(c) for c in EDIT_COLUMNS[1:]))
        self._execute(f"INSERT INTO edits ({names}) VALUES ({marks})", values)
        return n

    def edit_rows(self) -> list[dict[str, Any]]:
        """Every correction's audit row, oldest first."""
        sql = f"SELECT {', '.join(EDIT_COLUMNS)} FROM edits ORDER BY n"
        return [dict(zip(EDIT_COLUMNS, row, strict=True)) for row in self._execute(sql)]
