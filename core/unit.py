"""The unit of work: a league's players in memory, and the transactions that keep them.

:class:`UnitOfWork` holds player rows (see :mod:`rankcraft.steps`), the rows changed and
the matches rated in the open transaction, and (in memory) an undo log: a transaction
that fails puts every row back (over a database it empties the cache) and leaves the
store as it was. Matches are handed to the store every few
thousand, inside the transaction; changed players once, when it commits.

Over a store in memory the rows are every player's. Over a database (``store.shared``)
they are a cache: a player's row is read when first needed (:meth:`UnitOfWork.fetch`
reads a chunk's players in one query), so opening a league reads no player at all and a
read of one player reads one row. ``rows[id] is None`` there records that the store has
no such player.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from .collector import paused
from .io import bad_text
from .model import PlayerRecord
from .rated import Rated
from .steps import Row, Steps
from .store import Store

FLUSH_EVERY = 2000
"""Matches kept in memory before they are written into the open transaction."""
WRITE_SLICE = 10_000
"""Changed players handed to the store per call when a transaction writes them (each
player is written once per transaction; slices bound the memory the writing takes)."""


class Schedule(Protocol):
    """What the unit of work asks of the league's season schedule in a transaction."""

    def snapshot(self) -> Any: ...

    def restore(self, snapshot: Any) -> None: ...

    def save(self, store: Store) -> None: ...

    def load(self, store: Store) -> None: ...


class Schedules:
    """Several things kept with each transaction (the season schedule, a history model's
    fit), as one :class:`Schedule`."""

    def __init__(self, *parts: Schedule) -> None:
        self.parts = parts

    def snapshot(self) -> Any:
        return tuple(part.snapshot() for part in self.parts)

    def restore(self, snapshot: Any) -> None:
        for part, taken in zip(self.parts, snapshot, strict=True):
            part.restore(taken)

    def save(self, store: Store) -> None:
        for part in self.parts:
            part.save(store)

    def load(self, store: Store) -> None:
        for part in self.parts:
            part.load(store)


class UnitOfWork:
    """A league's players and the open transaction over its store.

    :param store: where the league is kept.
    :param schedule: the season schedule, saved and restored with each transaction.
    :param steps: the ruleset's steps (their forms turn records into rows and back).
    """

    def __init__(self, store: Store, schedule: Schedule, steps: Steps) -> None:
        self.store = store
        self.schedule = schedule
        self.row_of = steps.row_of
        self.record_of = steps.record_of
        self.rows: dict[str, Row | None] = {}
        # over a database, rows are read on demand; in memory, every row is here
        self.lazy = store.shared
        self.load()
        self.in_transaction = False
        self.undo: dict[str, Row | None] = {}
        self.dirty: set[str] = set()
        # rows the open transaction has taken (:meth:`take`): its own copies, which the
        # rating loop changes in place
        self.touched: dict[str, Row] = {}
        self.new_row = steps.new_row
        # rating loops run on these rows (the loop counts itself here: rows it changes in
        # place keep their identity, so a cache keyed on rows compares this count too)
        self.runs = 0
        self.pending: list[Rated] = []
        # where the entries kept are also put, while a caller collects them
        # (:meth:`rankcraft.League.collecting`); None: nobody does
        self.collect: list[Rated] | None = None
        # ids rated in the open transaction and not yet handed to the store, plus those of
        # the chunk being read that the store already has: the league never holds every
        # id (the store answers `recorded`), so memory does not grow with matches
        self.seen: set[str] = set()
        # a store whose writers run in parallel (PostgreSQL) locks single players
        self.row_locks = store.parallel_writers

    def load(self) -> None:
        """Start again from the store: the schedule and the generation (and, in memory,
        every player; over a database the cache of rows is emptied)."""
        self.complete = not self.lazy  # whether every stored player's row is cached
        self.touched = {}  # (the rows are read again)
        if self.lazy:
            self.rows = {}
        else:
            self.rows = {pid: self.row_of(r) for pid, r in self.store.load_players().items()}
        self.schedule.load(self.store)
        self.generation = self.store.generation()

    def fetch(self, players: Iterable[str]) -> None:
        """Read the rows of those of ``players`` not in the cache, in one query."""
        if self.complete:
            return
        rows = self.rows
        wanted = {p for p in players if p not in rows}
        for pid in [p for p in wanted if bad_text(p)]:  # (no store holds such an id)
            rows[pid] = None
            wanted.discard(pid)
        if not wanted:
            return
        found = self.store.load_many(wanted)
        for pid in wanted:
            record = found.get(pid)
            rows[pid] = None if record is None else self.row_of(record)

    def fetch_all(self) -> None:
        """Read every player's row (what a league-wide step needs: a season event, the
        close of a period, an export); the cache then holds every player until another
        process's commit empties it."""
        if self.complete:  # (once: until another process's commit empties the cache)
            return
        rows = self.rows
        for pid, record in self.store.load_players().items():
            if rows.get(pid) is None:
                rows[pid] = self.row_of(record)
        self.complete = True

    def row(self, player: str) -> Row | None:
        """A player's row (read from the store when not cached), or None if unknown."""
        if player not in self.rows:
            self.fetch((player,))
        return self.rows.get(player)

    def known(self) -> dict[str, Row]:
        """Every player's row (all of them read from the store first)."""
        self.fetch_all()
        return {pid: row for pid, row in self.rows.items() if row is not None}

    def count(self) -> int:
        """How many players the league has."""
        if not self.lazy:
            return len(self.rows)
        if self.in_transaction:
            self.flush()
        return self.store.count_players()

    def written(self) -> None:
        """Make the store show the open transaction's players (before a query on it)."""
        if self.in_transaction:
            self.flush()

    # -- players ----------------------------------------------------------------------

    def put(self, player: str, row: Row) -> None:
        """Replace a player's row in the open transaction (see :meth:`put_all`)."""
        self.put_all(((player, row),))

    def put_all(self, changes: Iterable[tuple[str, Row]]) -> None:
        """Replace each ``(player, row)``'s row in the open transaction: undo-logged in
        memory; over a database the store is the undo log."""
        rows, dirty, touched = self.rows, self.dirty, self.touched
        if self.lazy:
            for player, row in changes:
                rows[player] = row
                dirty.add(player)
                touched.pop(player, None)  # (the new row is not the transaction's copy)
            return
        undo = self.undo
        for player, row in changes:
            if player not in undo:
                undo[player] = rows.get(player)
            rows[player] = row
            dirty.add(player)
            touched.pop(player, None)

    def take(self, player: str) -> Row:
        """The player's row to change in place in the open transaction: on the first
        call of a transaction a copy of the committed row (a new player's row, for one
        the league has not seen) replaces it, undo-logged and marked changed; later calls
        give that copy (:attr:`touched`). Readers of :attr:`rows` see every change at
        once; a rollback puts the committed rows back. (The rating loop takes each player
        once per transaction, not once per match.)"""
        old = self.rows.get(player)
        row = self.touched[player] = self.new_row() if old is None else old.copy()
        if not self.lazy and player not in self.undo:
            self.undo[player] = old
        self.rows[player] = row
        self.dirty.add(player)
        return row

    def put_record(self, record: PlayerRecord) -> None:
        """Replace a player's record in the open transaction."""
        self.put(record.id, self.row_of(record))

    def add(self, entry: Rated) -> None:
        """Keep a rated match; the store gets it with the next flush (the caller says
        when: ``record_many`` every chunk, ``record`` every ``FLUSH_EVERY`` matches)."""
        self.seen.add(entry[0].id)  # (the match's id)
        self.pending.append(entry)
        if self.collect is not None:
            self.collect.append(entry)

    def flush(self) -> None:
        """Hand the changed players and the rated matches to the store (in the open
        transaction)."""
        rows = self.rows
        dirty = sorted(self.dirty)  # (slices in key order: each a run of the table)
        write = self.store.write
        for start in range(0, len(dirty), WRITE_SLICE):
            chosen = dirty[start : start + WRITE_SLICE]
            write([self.record_of(p, row) for p in chosen if (row := rows[p]) is not None], ())
        write((), self.pending)
        self.dirty = set()
        self.pending = []

    # -- transactions -----------------------------------------------------------------

    @contextmanager
    def transaction(
        self, lock: list[str] | None = None, match_id: str | None = None
    ) -> Iterator[None]:
        """One write transaction: everything in it is kept, or nothing.

        ``lock`` None: league-wide (the store's writer lock, starting from what other
        processes committed). ``lock``: a one-match transaction that locks just these
        players (sorted ids), reads their rows again and refuses ``match_id`` if another
        process recorded it. Nested uses join the open transaction.
        """
        if self.in_transaction:
            yield
            return
        # A long batch allocates many small acyclic objects; the cyclic collector's full
        # passes over them cost more than the rating itself. Pause it for the batch.
        with paused(keep=True):
            schedule_before = self.schedule.snapshot()
            self.in_transaction = True
            self.undo, self.dirty, self.pending, self.touched = {}, set(), [], {}
            self.seen.clear()
            try:
                schedule_before = self._begin(lock, match_id, schedule_before)
                yield
                self._commit(lock)
            except BaseException:
                self._roll_back(schedule_before)
                raise
            finally:
                self._end()

    def _begin(self, lock: list[str] | None, match_id: str | None, schedule_before: Any) -> Any:
        """Open the store's transaction (see :meth:`transaction`); returns the schedule
        as the transaction starts (read again when another process committed)."""
        store = self.store
        if lock is None:
            store.begin()
            if store.generation() != self.generation:
                self.load()  # another process committed since this league looked
                schedule_before = self.schedule.snapshot()
        else:
            store.begin_shared()
            self.adopt(store.lock_players(lock, match_id), lock)
        return schedule_before

    def _commit(self, lock: list[str] | None) -> None:
        """Hand what is left to the store, and commit."""
        store = self.store
        self.flush()
        generation = store.bump_generation()
        if lock is None:  # (after a one-match transaction other rows may be stale)
            self.generation = generation
        self.schedule.save(store)
        store.commit()

    def _roll_back(self, schedule_before: Any) -> None:
        """Roll the store back and put every row and the schedule back as they were."""
        self.store.rollback()
        self.schedule.restore(schedule_before)
        self.touched = {}
        if self.lazy:  # the store has what was committed: read it again when needed
            self.rows = {}
            self.complete = False
        rows = self.rows
        for pid, old in self.undo.items():
            if old is None:
                rows.pop(pid, None)
            else:
                rows[pid] = old

    def _end(self) -> None:
        """Close the transaction, kept or not."""
        self.in_transaction = False
        self.undo, self.dirty, self.pending, self.touched = {}, set(), [], {}
        self.seen.clear()  # committed (the store has them) or rolled back

    def adopt(self, stored: Mapping[str, PlayerRecord], players: Iterable[str]) -> None:
        """Take these players' records as the store has them (absent: not yet played)."""
        rows = self.rows
        lazy = self.lazy
        for pid in players:
            self.touched.pop(pid, None)
            record = stored.get(pid)
            if record is not None:
                rows[pid] = self.row_of(record)
            elif lazy:
                rows[pid] = None  # (known absent: not read again)
            else:
                rows.pop(pid, None)

    def forget(self) -> None:
        """Drop the cached rows of a league over a database (its store closed: every read
        goes to the store, which says so); in memory the rows are the league's own."""
        if self.lazy:
            self.rows, self.complete = {}, False

    def refresh(self, players: Iterable[str] | None = None) -> None:
        """Read again what other processes committed (see :meth:`League.refresh`)."""
        if self.in_transaction or not self.store.shared:  # in memory: nobody else writes
            return
        if players is not None:
            wanted = list(players)
            self.adopt(self.store.load_many(wanted), wanted)
        elif self.store.generation() != self.generation:
            self.load()
