"""A league's history as a whole, for corrections (:mod:`rankcraft.corrections`): the
recorded matches read in order from a place on, the matches from a place on removed (a
re-rate writes them again), players removed, and the ``edits`` table, the audit of
every correction (schema version 8)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..io import parse_match, parse_time
from ..model import Match, Report, format_time
from .memory_history import Played, placed_from
from .sql_reads import SQLReads

EDIT_COLUMNS = ("n", "made_at", "kind", "match_id", "reason", "by_token", "old", "new", "changes")
"""The columns of ``edits``, in the order :meth:`SQLHistory.edit_rows` gives them."""


_REWRITE = "UPDATE matches SET match = ?, played_at = ?, report = ? WHERE seq = ?"
_REWRITE_REPORT = "UPDATE matches SET report = ? WHERE seq = ?"
_UNLINK = "DELETE FROM participants WHERE bucket = ? AND seq = ?"
_LINK = "INSERT INTO participants (bucket, player, seq) VALUES (?, ?, ?)"


class SQLHistory(SQLReads):
    """The history reads and writes a correction needs."""

    def history(self, start: int = 1) -> Iterator[tuple[int, Match]]:
        """The recorded matches from seq ``start`` on, in order, with their seqs."""
        sql = "SELECT seq, match FROM matches WHERE seq >= ? ORDER BY seq"
        for seq, text in self._execute(sql, (start,)).fetchall():
            yield seq, parse_match(json.loads(text), stored=True)

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

    def add_outbox(self, events: Sequence[tuple[str, str]]) -> int:
        """Keep events to publish (numbered on from the last), in the open transaction;
        the number of the last one."""
        last = self._execute("SELECT max(n) FROM outbox").fetchone()[0] or 0
        rows = [(last + i, eid, text) for i, (eid, text) in enumerate(events, 1)]
        if rows:
            self._insert_outbox(rows)
        return int(last) + len(rows) if rows else 0

    def _insert_outbox(self, rows: list[tuple[int, str, str]]) -> None:
        self._executemany("INSERT INTO outbox (n, id, event) VALUES (?, ?, ?)", rows)

    def outbox(self, limit: int) -> list[tuple[int, str, str]]:
        """The first ``limit`` events to publish: (n, id, JSON text)."""
        sql = "SELECT n, id, event FROM outbox ORDER BY n LIMIT ?"
        return [tuple(row) for row in self._execute(sql, (limit,)).fetchall()]

    def drop_outbox(self, upto: int) -> None:
        """Remove the published events up to ``upto``, in the open transaction."""
        self._execute("DELETE FROM outbox WHERE n <= ?", (upto,))

    def reports(self, seqs: Collection[int]) -> dict[int, Report]:
        """The reports of the matches of these seqs."""
        if not seqs:
            return {}
        condition, arg = self._in_list("seq", list(seqs))
        sql = f"SELECT seq, match, report FROM matches WHERE {condition}"
        return {r[0]: self._row(*r).report for r in self._execute(sql, (arg,)).fetchall()}

    def last_before(self, players: Collection[str], seq: int) -> dict[str, datetime]:
        """Each of ``players``' latest match time among the matches before ``seq``."""
        if not players:
            return {}
        buckets, in_buckets = self._buckets_through(seq)
        named, in_players = self._in_list("player", list(players))
        sql = (
            f"SELECT p.player, m.played_at FROM (SELECT player, max(seq) AS seq FROM "
            f"participants WHERE {buckets} AND {named} AND seq < ? GROUP BY player) p "
            "JOIN matches m ON m.seq = p.seq"
        )
        rows = self._execute(sql, (in_buckets, in_players, seq)).fetchall()
        return {pid: parse_time(at, field="played_at") for pid, at in rows}

    def placement(
        self, items: Sequence[tuple[datetime, Collection[str]]], skip: str | None = None
    ) -> int | None:
        """Where the first of ``items`` (a time, the players) goes (:func:`placed_from`):
        the players' matches read along the participants index."""
        players = list({p for _, named in items for p in named})
        if not players:
            return None
        last = self._execute("SELECT max(seq) FROM matches").fetchone()[0] or 0
        buckets, in_buckets = self._buckets_through(last)
        named, in_players = self._in_list("p.player", players)
        sql = (
            "SELECT p.player, p.seq, m.id, m.played_at FROM participants p JOIN matches m "
            f"ON m.seq = p.seq WHERE {buckets} AND {named} ORDER BY p.seq DESC"
        )
        played: Played = {}
        for pid, seq, mid, when in self._execute(sql, (in_buckets, in_players)).fetchall():
            played.setdefault(pid, []).append((seq, mid, parse_time(when, field="played_at")))
        return placed_from(played, items, skip)

    def drop_matches(self, seqs: Collection[int]) -> None:
        """Remove the matches of these seqs, in the open write transaction."""
        size = self._bucket_size()
        rows = [(seq // size, seq) for seq in seqs]
        self._executemany(_UNLINK, rows)
        self._executemany("DELETE FROM matches WHERE seq = ?", [(seq,) for _, seq in rows])

    def rewrite_matches(self, items: Sequence[tuple[int, Any]], relink: Collection[str]) -> None:
        """Write each ``(seq, entry)`` over the match of that seq, in the open write
        transaction: its report; for the ids in ``relink`` (a corrected version: its
        time and players may differ) its text, time and participants too."""
        codec, size = self.codec, self._bucket_size()
        rows, reports, again = [], [], []
        for seq, entry in items:
            match = entry.match
            if match.id in relink:
                text, report = codec.entry_row(entry)
                rows.append((text, format_time(match.played_at), report, seq))
                again.append((seq, match))
            else:
                reports.append((codec.report_row(entry), seq))
        self._executemany(_REWRITE, rows)
        self._executemany(_REWRITE_REPORT, reports)
        for seq, match in again:
            self._execute(_UNLINK, (seq // size, seq))
            self._executemany(_LINK, [(seq // size, p, seq) for side in match.teams for p in side])
