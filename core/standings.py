"""League-wide labels per player (a tier such as Grandweaver, a percentile): the standings
plugin's answer (:meth:`rankcraft.League.standings`) over the players it needs, and the
census of the league it counts from (:class:`rankcraft.model.Census`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from .model import Census, CountFn, PlayerRecord, PlayerScope, records_counter
from .players import Players
from .steps import Steps
from .store import Store
from .store.base import Codec
from .unit import UnitOfWork


class Standings:
    """The standings of one league.

    :param steps: the ruleset's steps (the standings hooks). :param store: the league's
        store (its counts). :param unit: its unit of work. :param players: its players'
        reads. :param codec: the store's codec (the sort key the census counts along).
    """

    def __init__(
        self, steps: Steps, store: Store, unit: UnitOfWork, players: Players, codec: Codec
    ) -> None:
        self.steps = steps
        self.store = store
        self.unit = unit
        self.players = players
        self.codec = codec

    def standings(self, players: Iterable[str] | None = None) -> dict[str, str]:
        """League-wide labels per player (a tier such as Grandweaver, a percentile), from
        the rank plugin (or the update plugin without a rank slot); empty when neither
        offers them.

        :param players: only these players' labels (unknown ids have none). When the
            plugin says which players its labels depend on (``rankcraft_standings_scope``),
            only those and these are read: a page of a large league on a database does
            not read every player. Default: every player's label.
        """
        steps = self.steps
        if steps.standings is None:
            return {}
        with self.players.reading():  # (the players read and the census's counts: one state)
            latest = self.players.latest_played()
            wanted = None if players is None else set(players)
            scope = None
            if wanted is not None and steps.standings_scope is not None:
                scope = steps.standings_scope(latest)
            if scope is None:
                everyone = self.players.every()
                labels = steps.standings(everyone, self.census(latest, everyone))
                if wanted is None:
                    return dict(labels)
            else:
                assert wanted is not None  # (a scope is asked for only with players)
                records = self._scoped(scope, wanted)
                labels = steps.standings(records, self.census(latest))
        return {p: label for p, label in labels.items() if p in wanted}

    def _scoped(self, scope: PlayerScope, wanted: set[str]) -> list[PlayerRecord]:
        """The records of the players in the plugin's ``scope`` and of those ``wanted``."""
        rows = self.players.rows_in(scope)
        unit = self.unit
        unit.fetch(wanted - rows.keys())
        for pid in wanted - rows.keys():
            row = unit.rows.get(pid)
            if row is not None:
                rows[pid] = row
        record_of = self.steps.record_of
        return [record_of(p, rows[p]) for p in sorted(rows)]

    def census(self, latest: datetime | None, everyone: list[PlayerRecord] | None = None) -> Census:
        """Counts of the league's players for ``rankcraft_standings``: a database's SQL
        counts (``Store.count_below``, after the open batch's rows are written), else
        those of every record (``everyone`` when already read; else read when first
        counted, so a plugin that never counts reads nothing more)."""
        key = self.codec.sort_key
        if everyone is not None:
            return Census.of(everyone, key, latest)
        count = getattr(self.store, "count_below", None)
        if self.unit.lazy and count is not None:
            self.unit.written()
            return Census(latest, count, key)
        counters: list[CountFn] = []

        def count_everyone(
            keys: Sequence[float], since: datetime | None, matches_from: int
        ) -> tuple[int, list[int]]:
            if not counters:
                counters.append(records_counter(self.players.every(), key))
            return counters[0](keys, since, matches_from)

        return Census(latest, count_everyone, key)
