"""Reading players and matches from the SQL tables: one record, many, those of a scope
or all of them; a match by id, a player's history (newest first, along the participants
index), which match ids are recorded, and each player's rank document.

:data:`PLAYER_COLUMNS` are the columns a record is decoded from (:meth:`SQLReads._decode`),
which the other reads select too.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from ..io import parse_match
from ..model import PlayerRecord, PlayerScope
from .base import MatchRow
from .dialect import SQLDialect
from .migrations import PARTICIPANT_BUCKET

PLAYER_COLUMNS = "id, skill, rank, matches, last_played, open"
"""The columns of ``players`` a record is decoded from, in :meth:`SQLReads._decode`'s order."""


class SQLReads(SQLDialect):
    """Records and matches read back from the tables."""

    @staticmethod
    def _bucket_size() -> int:
        """:data:`PARTICIPANT_BUCKET` as this module reads it, for the reads and the writes
        alike (a test shrinks it here)."""
        return PARTICIPANT_BUCKET

    def _buckets_through(self, seq: int) -> tuple[str, Any]:
        """The condition "``bucket`` is one of the buckets up to ``seq``'s" and its
        parameter: the participants index is sought once per bucket."""
        return self._in_list("bucket", list(range(seq // self._bucket_size() + 1)))

    def _decode(self, row: Sequence[Any]) -> PlayerRecord:
        pid, skill, rank, matches, last, open_ = row
        data = {
            "id": pid,
            "skill": json.loads(skill),
            "rank": None if rank is None else json.loads(rank),
            "matches": matches,
            "last_played": last,
        }
        if open_ is not None:
            data["open"] = json.loads(open_)
        return self.codec.record_from_dict(data)

    def load_players(self) -> dict[str, PlayerRecord]:
        decode = self._decode
        return {
            row[0]: decode(row) for row in self._execute(f"SELECT {PLAYER_COLUMNS} FROM players")
        }

    def load_player(self, player: str) -> PlayerRecord | None:
        """One player's stored record, or None."""
        row = self._execute(
            f"SELECT {PLAYER_COLUMNS} FROM players WHERE id = ?", (player,)
        ).fetchone()
        return None if row is None else self._decode(row)

    def load_many(self, players: Collection[str]) -> dict[str, PlayerRecord]:
        """The stored records of those of ``players`` the database has, in one query."""
        if not players:
            return {}
        condition, arg = self._in_list("id", players)
        decode = self._decode
        return {
            row[0]: decode(row)
            for row in self._execute(
                f"SELECT {PLAYER_COLUMNS} FROM players WHERE {condition} AND matches >= 0",
                (arg,),
            )
        }

    def load_where(self, scope: PlayerScope) -> dict[str, PlayerRecord]:
        """The records of the players in ``scope``, in one query: each condition reads an
        indexed column (``last_epoch``, ``sort_key``) or ``tier``."""
        played_since, sort_key_from, tiers = scope.played_since, scope.sort_key_from, scope.tiers
        conditions: list[str] = []
        args: list[Any] = []
        if played_since is not None:
            conditions.append("last_epoch >= ?")
            args.append(played_since.timestamp())
        if sort_key_from is not None:
            conditions.append("sort_key >= ?")
            args.append(sort_key_from)
        if tiers:
            condition, arg = self._in_list("tier", tiers)
            conditions.append(condition)
            args.append(arg)
        if not conditions:
            return {}
        decode = self._decode
        return {
            row[0]: decode(row)
            for row in self._execute(
                f"SELECT {PLAYER_COLUMNS} FROM players WHERE ({' OR '.join(conditions)}) "
                "AND matches >= 0",
                args,
            )
        }

    def recorded(self, ids: Collection[str]) -> set[str]:
        if not ids:
            return set()
        condition, arg = self._in_list("id", ids)
        voided, in_voided = self._in_list("match_id", ids)
        sql = (
            f"SELECT id FROM matches WHERE {condition} UNION "
            f"SELECT match_id FROM edits WHERE kind = 'void' AND {voided}"
        )
        return {r[0] for r in self._execute(sql, (arg, in_voided))}

    def rank_documents(self) -> Iterator[tuple[str, Any]]:
        """Each player's rank column, parsed from its JSON and nothing more (about 3 us
        a row, where a record costs 11 or more)."""
        sql = "SELECT id, rank FROM players WHERE rank IS NOT NULL AND matches >= 0"
        for pid, rank in self._execute(sql):
            yield pid, json.loads(rank)

    def _row(self, seq: int, match_text: str, report: str | bytes) -> MatchRow:
        match = parse_match(json.loads(match_text))
        return MatchRow(seq=seq, match=match, report=self.codec.report_of(match, report))

    def player_matches(self, player: str, limit: int | None) -> list[MatchRow]:
        """The player's matches, newest first: one seek of the participants index per
        bucket (:data:`~rankcraft.store.migrations.PARTICIPANT_BUCKET`), the player's
        seqs sorted and cut to ``limit`` before any match row is read (a player with
        many matches costs a sort of their index entries, not a read of every match)."""
        last = self._execute("SELECT max(seq) FROM matches").fetchone()[0]
        if last is None:
            return []
        buckets, arg = self._buckets_through(last)
        newest = f"SELECT seq FROM participants WHERE {buckets} AND player = ? ORDER BY seq DESC"
        args: tuple[Any, ...] = (arg, player)
        if limit is not None:
            newest += " LIMIT ?"
            args = (*args, limit)
        sql = (
            f"SELECT m.seq, m.match, m.report FROM ({newest}) p JOIN matches m ON m.seq = p.seq "
            "ORDER BY p.seq DESC"
        )
        return [self._row(*r) for r in self._execute(sql, args)]

    def match(self, match_id: str) -> MatchRow | None:
        row = self._execute(
            "SELECT seq, match, report FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
        return None if row is None else self._row(*row)
