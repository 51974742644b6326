"""Writing to the SQL tables: a batch's players (upserted, with their sort key, tier and
time) and matches (numbered, with their participants rows), SQLite's batched multi-row
inserts (:class:`SQLiteWrites`), and the write transaction around them (begin, the
players' locks, commit, rollback).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

from ..errors import DuplicateMatchError
from ..model import PlayerRecord, format_time
from .base import Entry
from .sql_reads import SQLReads

_UPSERT_PLAYERS = (
    "INSERT INTO players "
    "(id, skill, rank, matches, last_played, open, sort_key, tier, last_epoch) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET skill = excluded.skill, rank = excluded.rank, "
    "matches = excluded.matches, last_played = excluded.last_played, "
    "open = excluded.open, sort_key = excluded.sort_key, tier = excluded.tier, "
    "last_epoch = excluded.last_epoch"
)
_INSERT_MATCH = "INSERT INTO matches (seq, id, played_at, match, report) VALUES (?, ?, ?, ?, ?)"
_INSERT_PARTICIPANT = "INSERT INTO participants (bucket, player, seq) VALUES (?, ?, ?)"


def epoch_of(record: PlayerRecord) -> float | None:
    """A record's last match time in seconds since 1970 (UTC), or None."""
    last = record.last_played
    return None if last is None else last.timestamp()


class SQLWrites(SQLReads):
    """A batch's rows written, in the transaction that holds the writer lock."""

    def _take_seqs(self, n: int) -> list[int]:
        """``n`` increasing commit-order numbers for new matches (inside a write)."""
        first = self._next_seq
        self._next_seq = first + n
        return list(range(first, first + n))

    def begin(self) -> None:
        self._begin_write()
        row = self._execute("SELECT max(seq) FROM matches").fetchone()
        self._next_seq = (row[0] or 0) + 1

    def begin_shared(self) -> None:
        """One match in SQLite: the writer lock alone, as :meth:`begin` (this class's:
        a store's league-wide settings, such as SQLite's batch page cache, stay out)."""
        SQLWrites.begin(self)

    def lock_players(
        self, players: list[str], match_id: str | None = None
    ) -> dict[str, PlayerRecord]:
        """The committed records of ``players`` (the writer lock holds them already)."""
        if match_id is not None and self.recorded((match_id,)):
            raise DuplicateMatchError(
                f"match id {match_id!r} is already recorded", match_id=match_id
            )
        return {p: r for p in players if (r := self.load_player(p)) is not None}

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        self._write_players(players)
        entries = matches if isinstance(matches, list) else list(matches)
        if entries:
            self._write_matches(entries)

    def _write_players(self, players: Iterable[PlayerRecord]) -> None:
        codec = self.codec
        texts, key, tier = codec.record_texts, codec.sort_key, codec.tier
        rows = []
        for record in players:
            skill, rank, last_played, open_ = texts(record)
            rows.append(
                (
                    record.id,
                    skill,
                    rank,
                    record.matches,
                    last_played,
                    open_,
                    key(record),
                    tier(record),
                    epoch_of(record),
                )
            )
        if rows:
            rows.sort()  # (in key order: each page of the table is visited once)
            self._executemany(_UPSERT_PLAYERS, rows)

    def _write_matches(self, entries: list[Entry]) -> None:
        """The rows of ``entries`` (their match and participants rows), numbered by
        :meth:`_take_seqs`."""
        match_rows = []
        part_rows = []
        entry_row = self.codec.entry_row
        size = self._bucket_size()
        for seq, entry in zip(self._take_seqs(len(entries)), entries, strict=True):
            match_text, report = entry_row(entry)
            match = entry.match
            match_rows.append((seq, match.id, format_time(match.played_at), match_text, report))
            bucket = seq // size
            part_rows += [(bucket, player, seq) for side in match.teams for player in side]
        self._insert_matches(match_rows)
        self._insert_participants(part_rows)

    def _insert_participants(self, rows: list[tuple[Any, ...]]) -> None:
        rows.sort()  # (in key order: each page of the tree is visited once)
        self._executemany(_INSERT_PARTICIPANT, rows)

    def _insert_matches(self, rows: list[tuple[Any, ...]]) -> None:
        self._executemany(_INSERT_MATCH, rows)

    def commit(self) -> None:
        self._execute("COMMIT")

    def rollback(self) -> None:
        if self._in_transaction():
            self._execute("ROLLBACK")


ROWS_PER_INSERT = 50
"""Rows a multi-row ``INSERT`` writes (a batch's matches, :meth:`SQLiteWrites._insert_rows`):
a statement's step per row (``executemany``) costs more than binding the row's values
(about 1.5 us against 0.5 a row on this project's machine), so rows are written this
many to a statement (10 and 200 cost more than 50)."""

_MATCH_VALUES = "INSERT INTO matches (seq, id, played_at, match, report) VALUES "
_MATCH_ROW = "(?, ?, ?, ?, ?)"
_OUTBOX_VALUES = "INSERT INTO outbox (n, id, event) VALUES "
_OUTBOX_ROW = "(?, ?, ?)"
_PARTICIPANTS_OF_IDS = (
    "INSERT INTO participants (bucket, player, seq) "
    "SELECT (?1 + key / ?2) / ?4, value, ?1 + key / ?2 FROM json_each(?3)"
)
"""The participants of matches with ``?2`` players each, numbered from ``?1``: their ids
in match order, as one JSON array ``?3``; ``?4``: the bucket size."""

_ids_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""A list of ids as JSON text (ids hold no lone surrogate, so the text is UTF-8)."""


@functools.lru_cache(maxsize=4 * ROWS_PER_INSERT)
def _statement(head: str, row: str, rows: int) -> str:
    """An ``INSERT`` of ``rows`` rows: ``head``, then ``rows`` times ``row``."""
    return head + ", ".join([row] * rows)


class SQLiteWrites(SQLWrites):
    """SQLite's writes of a batch's matches in fewer statements (the same rows)."""

    def _insert_rows(self, head: str, row: str, width: int, values: list[Any]) -> None:
        """Insert the rows whose ``width`` values follow each other in ``values``,
        :data:`ROWS_PER_INSERT` to a statement (:func:`_statement`)."""
        step = ROWS_PER_INSERT * width
        full = len(values) - len(values) % step
        execute = self._execute
        if full:
            statement = _statement(head, row, ROWS_PER_INSERT)
            for at in range(0, full, step):
                execute(statement, values[at : at + step])
        if full < len(values):
            execute(_statement(head, row, (len(values) - full) // width), values[full:])

    def _write_matches(self, entries: list[Entry]) -> None:
        """The general steps' rows (:meth:`SQLWrites._write_matches`) in fewer statements:
        the matches :data:`ROWS_PER_INSERT` to an ``INSERT``, and, when every match has
        the same number of players (the common case), all the participants in one
        ``INSERT`` from a JSON array of their ids (their seqs and buckets computed from
        the positions, SQLite numbering a batch's matches consecutively). Any other
        batch's participants are written row by row, as the general steps write them.
        The same rows either way (tests/test_sqlite.py compares the tables)."""
        entry_row = self.codec.entry_row
        seqs = self._take_seqs(len(entries))
        first = seqs[0]
        values: list[Any] = []
        players: list[str] = []
        ends = []
        for seq, entry in zip(seqs, entries, strict=True):
            text, report = entry_row(entry)
            match = entry.match
            values += (seq, match.id, format_time(match.played_at), text, report)
            for side in match.teams:
                players += side
            ends.append(len(players))
        self._insert_rows(_MATCH_VALUES, _MATCH_ROW, 5, values)
        width = ends[0]
        size = self._bucket_size()
        if ends == list(range(width, width * len(ends) + 1, width)):
            self._execute(_PARTICIPANTS_OF_IDS, (first, width, _ids_json(players), size))
            return
        rows, start = [], 0
        for seq, end in enumerate(ends, first):
            bucket = seq // size
            rows += [(bucket, player, seq) for player in players[start:end]]
            start = end
        self._insert_participants(rows)

    def _insert_outbox(self, rows: list[tuple[int, str, str]]) -> None:
        """:meth:`SQLHistory._insert_outbox`'s rows, :data:`ROWS_PER_INSERT` to a
        statement."""
        values = [value for row in rows for value in row]
        self._insert_rows(_OUTBOX_VALUES, _OUTBOX_ROW, 3, values)
