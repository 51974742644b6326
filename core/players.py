"""The players' records as a league holds them: one record, every record, the latest
match's time, the rows of a scope of players, the sort values and the active players
(what matchmaking reads), and reads of a database that see one committed state of it.

:class:`Players` reads through the unit of work (:mod:`rankcraft.unit`): in memory its rows
are every player's; over a database they are a cache and the store answers the rest. The
boards (:mod:`rankcraft.boards`), the standings (:mod:`rankcraft.standings`) and the
season events (:mod:`rankcraft.resets`) read players through it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from .boards import rank_tier, state_key
from .errors import InputError
from .io import parse_time
from .model import PlayerRecord, PlayerScope, window_start
from .ruleset import Display
from .steps import LAST, RANK, SKILL, Row, Steps
from .store import Store
from .store.memory import in_scope
from .unit import UnitOfWork


class Players:
    """The players of one league, read through its unit of work.

    :param store: the league's store. :param unit: its unit of work.
    :param steps: the ruleset's steps (rows to records). :param display: how the ruleset
        shows players (the sort key and tiers of a scope).
    """

    def __init__(self, store: Store, unit: UnitOfWork, steps: Steps, display: Display) -> None:
        self.store = store
        self.unit = unit
        self.steps = steps
        self.display = display

    def record(self, player: str) -> PlayerRecord | None:
        """A player's record, or None when the league has never seen ``player``."""
        row = self.unit.row(player)
        return None if row is None else self.steps.record_of(player, row)

    def every(self) -> list[PlayerRecord]:
        """Every player's record, ordered by id (on a database, reads every row)."""
        rows = self.unit.known()
        record_of = self.steps.record_of
        return [record_of(p, rows[p]) for p in sorted(rows)]

    def cached(self) -> list[PlayerRecord]:
        """Every player's record, from the rows a league in memory keeps."""
        record_of = self.steps.record_of
        return [record_of(p, row) for p, row in self.unit.rows.items() if row is not None]

    def latest_played(self) -> datetime | None:
        """When the league's latest match was played (the latest ``last_played``), or
        None before any match."""
        unit = self.unit
        if unit.lazy:
            unit.written()
            return self.store.latest_played()
        lasts = [row[LAST] for row in unit.rows.values() if row is not None and row[LAST]]
        return max(lasts, default=None)

    def reading(self) -> AbstractContextManager[None]:
        """Several reads of a database that see one committed state of it
        (``Store.reading``; a store without that method reads as it is)."""
        reading = getattr(self.store, "reading", None)
        return nullcontext() if reading is None else reading()

    def sort_value(
        self, record: PlayerRecord, ruleset: str, key: Callable[[PlayerRecord], float]
    ) -> float:
        """The value the leaderboard sorts a player by (``key`` of their record:
        :meth:`rankcraft.League.sort_value`): rank points with a rank layer, else the
        skill's location less ``[display] conservative`` times its spread.

        :raises InputError: the states of the ruleset (named ``ruleset``) have no
            location field.
        """
        self._check_orders(ruleset)
        return key(record)

    def _check_orders(self, ruleset: str) -> None:
        if not self.display.orders:
            raise InputError(f"ruleset {ruleset!r} has no sort value (no location field)")

    def active(
        self,
        days: Any,
        at: datetime | str | None,
        ruleset: str,
        key: Callable[[PlayerRecord], float],
    ) -> list[tuple[str, float]]:
        """The active players with their sort value (``key``), lowest value first (ties by
        id): those with a match no more than ``days`` before ``at`` (default: the league's
        latest match). The one read percentiles are counted from
        (:meth:`rankcraft.League.active_players`; its ``active_days`` default: the
        ruleset's standings plugin's ``active_days`` param, else 30,
        :func:`rankcraft.matchmaking.active_days_of`).

        :raises InputError: ``days`` is not a number of days >= 0, ``at`` not a time
            with a time zone, or the ruleset (named ``ruleset``) has no sort value.
        """
        if isinstance(days, bool) or not isinstance(days, int | float) or not days >= 0:
            raise InputError(f"'active_days' must be a number of days >= 0: {days!r}")
        self._check_orders(ruleset)
        when = parse_time(at, field="at") if isinstance(at, str) else at
        if when is not None and (not isinstance(when, datetime) or when.utcoffset() is None):
            raise InputError(f"'at' must be a time with a time zone: {at!r}")
        if when is None:
            when = self.latest_played()
        if when is None:
            return []
        since = window_start(when, float(days))
        out = self.active_keys(since, when, key)
        out.sort(key=lambda item: (item[1], item[0]))
        return out

    def active_keys(
        self, since: datetime, until: datetime, key: Callable[[PlayerRecord], float]
    ) -> list[tuple[str, float]]:
        """Id and sort value (``key``) of each player whose latest match is in [since,
        until]: on a database the store's two columns (``Store.active_keys``, after the
        open batch's rows are written), else from every record."""
        unit = self.unit
        if unit.lazy and hasattr(self.store, "active_keys"):
            unit.written()
            return self.store.active_keys(since, until)
        record_of = self.steps.record_of
        return [
            (p, key(record_of(p, r)))
            for p, r in unit.known().items()
            if r[LAST] is not None and since <= r[LAST] <= until
        ]

    def rows_in(self, scope: PlayerScope) -> dict[str, Row]:
        """The rows of the players in a scope (a season event's, or the standings'). In
        memory, the league's rows filtered; over a database, the store's answer along its
        indexed columns with the rows the open transaction changed and has not written
        yet (the newer: the other cached rows are what the store has)."""
        unit = self.unit
        rows = unit.rows
        chosen = self._in_scope(scope)
        if not unit.lazy:
            return {pid: row for pid, row in rows.items() if row is not None and chosen(row)}
        out = {}
        for pid, record in self.store.load_where(scope).items():
            if pid not in unit.dirty:
                row = rows.get(pid)
                if row is None:
                    rows[pid] = row = self.steps.row_of(record)
                out[pid] = row
        for pid in unit.dirty:
            row = rows.get(pid)
            if row is not None and chosen(row):
                out[pid] = row
        return out

    def _in_scope(self, scope: PlayerScope) -> Callable[[Row], bool]:
        """``row -> bool``: whether a row is in ``scope`` (its latest match, sort key and
        tier read from the row's states without building a record)."""
        key = state_key(self.display)[1]
        tier = rank_tier(self.steps)

        def last_of(row: Row) -> datetime | None:
            return row[LAST]  # type: ignore[no-any-return]

        skill = self.steps.skill_form.to_object_unchecked
        rank_form = self.steps.rank_form
        rank = rank_form.to_object_unchecked if rank_form is not None else (lambda r: r)

        def key_of(row: Row) -> float:
            return key(skill(row[SKILL]), rank(row[RANK]))

        def tier_of(row: Row) -> str | None:
            return tier(rank(row[RANK]))

        return in_scope(scope, last_of, key_of, tier_of)
