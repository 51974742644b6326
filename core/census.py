"""Counts of a league's players by their leaderboard value: the :class:`Census` handed to
``rankcraft_standings`` (a percentile compares a player with the others without reading
every player), and the counter over records in memory (a database store counts in SQL).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

PlayerRecord = Any
"""A player's record (:class:`rankcraft.PlayerRecord`; named loosely here: the model
imports this module, which imports nothing of the core)."""

CountFn = Callable[[Sequence[float], datetime | None, int], tuple[int, list[int]]]
"""``(keys, played_since, matches_from) -> (total, below)``: how a :class:`Census` counts
(``Store.count_below``'s signature)."""


@attrs.frozen(kw_only=True)
class Counted:
    """What :meth:`Census.count` counted.

    Attributes:
        total: the players who pass the filter (≥ 0).
        below: for each record asked about, by id, how many of those players have a
            strictly lower leaderboard value than the record's (in [0, total]; equal
            values are not below, so ties share a count).
    """

    total: int
    below: Mapping[str, int]


class Census:
    """Counts of a league's players, handed to ``rankcraft_standings`` for labels that
    compare a player with the others (a percentile) without reading every player.

    On a database the counts are SQL counts along the store's indexed columns
    (``Store.count_below``); in memory, sorted once per filter and bisected. Players are
    compared by their leaderboard value (:meth:`rankcraft.Display.value`: rank points
    with a rank layer, else the skill's location less ``[display] conservative`` times
    its spread), the order of :meth:`rankcraft.League.leaderboard`.

    Attributes:
        latest: when the league's latest match was played (the latest ``last_played``
            of any player), or None before any match.

    >>> from rankcraft import League
    >>> league = League("elo")
    >>> for i, (a, b) in enumerate([("ann", "bo"), ("ann", "cy"), ("bo", "cy")]):
    ...     _ = league.record({"id": f"m{i}", "played_at": f"2024-05-0{i + 1}",
    ...                        "teams": [[a], [b]], "scores": [1, 0]})
    >>> census = Census.of(league.players(), key=lambda r: r.skill.rating)
    >>> census.latest.day, census.count(league.players()).below
    (3, {'ann': 2, 'bo': 1, 'cy': 0})
    >>> from datetime import UTC
    >>> census.count(played_since=datetime(2024, 5, 2, tzinfo=UTC)).total
    3
    """

    def __init__(
        self, latest: datetime | None, counter: CountFn, key: Callable[[PlayerRecord], float]
    ) -> None:
        self.latest = latest
        self._counter = counter
        self._key = key

    @classmethod
    def of(
        cls,
        records: Sequence[PlayerRecord],
        key: Callable[[PlayerRecord], float],
        latest: datetime | None = None,
    ) -> Census:
        """A census of ``records`` (every player of a league in memory), comparing them by
        ``key``; ``latest`` defaults to the latest ``last_played`` among them."""
        if latest is None:
            latest = max((r.last_played for r in records if r.last_played), default=None)
        return cls(latest, records_counter(records, key), key)

    def count(
        self,
        records: Sequence[PlayerRecord] = (),
        *,
        played_since: datetime | None = None,
        matches_from: int = 0,
    ) -> Counted:
        """Count the players who played at or after ``played_since`` (any time when
        None) and have at least ``matches_from`` rated matches (a whole number ≥ 0), and
        for each of ``records`` those of them with a strictly lower leaderboard value
        than its own; in one read of the league."""
        if type(matches_from) is not int or matches_from < 0:
            raise ValueError(f"'matches_from' must be a whole number >= 0: {matches_from!r}")
        if played_since is not None and (
            not isinstance(played_since, datetime) or played_since.utcoffset() is None
        ):
            raise ValueError(
                f"'played_since' must be a datetime with a time zone, or None: {played_since!r}"
            )
        key = self._key
        total, below = self._counter([key(r) for r in records], played_since, matches_from)
        return Counted(total=total, below={r.id: n for r, n in zip(records, below, strict=True)})


def records_counter(
    records: Sequence[PlayerRecord], key: Callable[[PlayerRecord], float]
) -> CountFn:
    """Counts over ``records``: each filter's keys sorted once, then bisected."""
    sorted_keys: dict[tuple[datetime | None, int], list[float]] = {}

    def count(
        keys: Sequence[float], played_since: datetime | None, matches_from: int
    ) -> tuple[int, list[int]]:
        found = sorted_keys.get((played_since, matches_from))
        if found is None:
            found = sorted_keys[played_since, matches_from] = sorted(
                key(r)
                for r in records
                if r.matches >= matches_from
                and (
                    played_since is None
                    or (r.last_played is not None and r.last_played >= played_since)
                )
            )
        return len(found), [bisect.bisect_left(found, k) for k in keys]

    return count
