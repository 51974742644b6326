"""The league's boards: the one order of a leaderboard, its pages and their places, the
tiers players hold, a rank field's values, and the player search.

:func:`leaderboard_key` is the one function that orders a leaderboard; :class:`Boards`
reads pages of it (:meth:`rankcraft.League.leaderboard`, :meth:`rankcraft.League.placed`),
from the league's rows in memory or along a database's indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

import attrs

from .errors import InputError
from .io import bad_text
from .model import PlayerRecord, window_start
from .ruleset import Display
from .search import check_search_text
from .steps import Steps
from .store import Store
from .store.base import Codec
from .store.memory import board_tiers, leaderboard_page, placed_page, search_ids
from .unit import UnitOfWork


class Players(Protocol):
    """What the boards read of a league's players (:class:`rankcraft.players.Players`;
    a protocol: that module builds on this one)."""

    def every(self) -> list[PlayerRecord]: ...

    def cached(self) -> list[PlayerRecord]: ...

    def latest_played(self) -> datetime | None: ...

    def reading(self) -> AbstractContextManager[None]: ...


def leaderboard_key(display: Display) -> tuple[str, Callable[[PlayerRecord], float]]:
    """The one function that orders a leaderboard: (its name, ``record -> key``), best
    first by descending key, ties by id. The key is :meth:`Display.value`: the rank
    state's location field when the ruleset has a rank layer with one, else the skill
    state's (e.g. Elo ``rating``) less ``[display] conservative`` times its spread; 0 for
    every player when neither has one (then the order is by id alone).

    Any per-record float fits: a store on disk keeps it in an indexed column and
    computes it again, once, when the name changes (the name says the field and k)."""
    name, key = state_key(display)
    return name, lambda record: key(record.skill, record.rank)


def state_key(display: Display) -> tuple[str, Callable[[Any, Any], float]]:
    """:func:`leaderboard_key` as ``(skill, rank) -> key`` (read from the engine's rows
    without building records)."""
    if not display.orders:
        return "id", lambda skill, rank: 0.0
    value = display.value
    if display.rank_location is not None:
        name = f"rank.{display.rank_location}"

        def rank_key(skill: Any, rank: Any) -> float:
            if rank is None:
                return float("-inf")
            return value(skill, rank)  # type: ignore[return-value]

        return name, rank_key
    name = f"skill.{display.location_scale.of(str(display.location))}"  # (the key's formula)
    if display.k:
        name += f"-{display.k!r}*{display.spread_scale.of(str(display.spread))}"
    return name, lambda skill, rank: value(skill, None)  # type: ignore[return-value]


def tier_function(steps: Steps) -> Callable[[PlayerRecord], str | None]:
    """A record's tier: the rank state's ``tier`` field when it has one, else None."""
    tier = rank_tier(steps)
    return lambda record: tier(record.rank)


def rank_tier(steps: Steps) -> Callable[[Any], str | None]:
    """:func:`tier_function` as ``rank state -> tier``."""
    if "tier" not in steps.rank_names:
        return lambda rank: None

    def tier(rank: Any) -> str | None:
        value = getattr(rank, "tier", None)
        return None if value is None else str(value)

    return tier


Board = tuple[datetime | None, str | None]
"""A board's ``since`` (None: every player) and a search's text (None: no search)."""


class Boards:
    """Pages of one league's leaderboard, its tiers and its player search.

    :param store: the league's store. :param unit: its unit of work (rows in memory, the
        cache over a database). :param players: its players' reads. :param codec: the
        store's codec (the sort key and tiers). :param display: the ruleset's display.
    """

    def __init__(
        self, store: Store, unit: UnitOfWork, players: Players, codec: Codec, display: Display
    ) -> None:
        self.store = store
        self.unit = unit
        self.players = players
        self.codec = codec
        self.display = display

    def leaderboard(
        self,
        top: int | None = None,
        offset: int = 0,
        active_days: float | None = None,
        tier: str | None = None,
        everyone: bool = False,
        holding: str | None = None,
    ) -> list[PlayerRecord]:
        """Players ordered best first by their display value (:meth:`League.shown`, the
        one key of :func:`leaderboard_key`): rank points when the ruleset has a rank
        layer, else the skill's location (e.g. Elo ``rating``) less ``[display]
        conservative`` times its spread; ties by id. A page of them
        (:meth:`rankcraft.League.leaderboard`).

        :param top: at most this many players (None: all).
        :param offset: skip the first ``offset`` places (0-based; the page's first
            place is ``offset + 1``).
        :param active_days: only players whose last match is at most this many days
            before the league's latest match (>= 0); default: the ruleset's
            ``[display] active_days`` (no limit without it).
        :param tier: only players of this tier (the rank state's ``tier`` field, e.g.
            Skyweaver's ``Master``).
        :param everyone: ignore the ruleset's ``[display] active_days`` (an explicit
            ``active_days`` still applies).
        :param holding: only players whose id holds this text, ASCII letters in either
            case (a search: ``offset`` and ``top`` then page the players found;
            :meth:`placed` gives their places on the board).

        On a database the page is read along an index: its cost does not grow with the
        number of players (with ``holding``, with the places passed over to find it).
        """
        board = self._board(top, offset, active_days, everyone, holding)
        if board is None:
            return []
        since, holding = board
        if self.unit.lazy:
            return self._store_page(top, offset, since, tier, holding)
        return leaderboard_page(
            self.players.cached(), self.codec, top, offset, since, tier, holding
        )

    def placed(
        self,
        top: int | None = None,
        offset: int = 0,
        active_days: float | None = None,
        tier: str | None = None,
        everyone: bool = False,
        holding: str | None = None,
    ) -> list[tuple[int, PlayerRecord]]:
        """:meth:`leaderboard`'s page (the same arguments), each player with their place
        on the board (1 first; :meth:`rankcraft.League.placed`). The board is that of
        ``active_days`` and ``tier``; ``holding`` searches it without changing it, so a
        player found keeps their place (counted along the index on a database: the cost
        grows with the place of the page's last player). Without ``holding`` the places
        are ``offset + 1`` on.

        >>> from rankcraft import League
        >>> league = League("elo")
        >>> for i, (a, b) in enumerate([("ann", "bo"), ("cy", "bo"), ("ann", "cy")]):
        ...     _ = league.record({"id": f"m{i}", "played_at": f"2024-05-0{i + 1}",
        ...                        "teams": [[a], [b]], "scores": [1, 0]})
        >>> [(place, r.id) for place, r in league.placed(holding="Y")]
        [(2, 'cy')]
        """
        board = self._board(top, offset, active_days, everyone, holding)
        if board is None:
            return []
        since, holding = board
        if not self.unit.lazy:
            return placed_page(self.players.cached(), self.codec, top, offset, since, tier, holding)
        if not holding:
            return list(enumerate(self._store_page(top, offset, since, tier, holding), offset + 1))
        with self.players.reading():  # (the page and its places, of one state of the league)
            page = self._store_page(top, offset, since, tier, holding)
            ahead = self.store.places(page, since, tier)
        return [(i + 1, record) for i, record in zip(ahead, page, strict=True)]

    def _board(
        self,
        top: int | None,
        offset: int,
        active_days: float | None,
        everyone: bool,
        holding: str | None,
    ) -> Board | None:
        """:meth:`leaderboard`'s arguments checked; the board's ``since``
        and the search's text (None: no search), or None when nobody can be on the page
        (no match yet with an active window, or a text no id can hold)."""
        if top is not None and (type(top) is not int or top < 0):
            raise InputError(f"'top' must be a whole number >= 0: {top!r}")
        if type(offset) is not int or offset < 0:
            raise InputError(f"'offset' must be a whole number >= 0: {offset!r}")
        if holding is not None:
            check_search_text(holding, "holding")
            if bad_text(holding):  # (a NUL, a lone surrogate: no id holds one)
                return None
        if active_days is None and not everyone:
            active_days = self.display.spec.active_days
        since = None
        if active_days is not None:
            if not isinstance(active_days, int | float) or not active_days >= 0:
                raise InputError(f"'active_days' must be a number of days >= 0: {active_days!r}")
            latest = self.players.latest_played()
            if latest is None:
                return None
            since = window_start(latest, active_days)
        return since, holding or None

    def _store_page(
        self,
        top: int | None,
        offset: int,
        since: datetime | None,
        tier: str | None,
        holding: str | None,
    ) -> list[PlayerRecord]:
        """A page read from the store, after the open batch's rows are written."""
        self.unit.written()
        search = [holding] if holding else []  # (a store written before ``holding``)
        return self.store.leaderboard(top, offset, since, tier, *search)

    def rank_values(self, rank_class: type | None, field: str) -> Iterator[tuple[str, Any]]:
        """Each player's value of the rank state's field ``field`` (``rank_class``'s),
        players without a rank state left out, in no order: for a display over every
        player that needs one field (the web page's season archive). On a database the
        value as the store keeps it (JSON: a tuple is a list), read without building
        records (about 3 us a player against 11 or more for a record); in memory the
        state's own value (:meth:`rankcraft.League.rank_values`).

        :raises InputError: the ruleset's rank state has no such field.
        """
        if rank_class is None or field not in attrs.fields_dict(rank_class):
            raise InputError(f"the ruleset's rank state has no field {field!r}")
        unit = self.unit
        if unit.lazy and hasattr(self.store, "rank_documents"):
            unit.written()
            for pid, document in self.store.rank_documents():
                yield pid, document.get(field)
            return
        for record in self.players.every():
            if record.rank is not None:
                yield record.id, getattr(record.rank, field)

    def tiers(self, rank_class: type | None) -> list[str]:
        """The tiers the players hold (the rank state's ``tier`` field, what
        :meth:`leaderboard`'s ``tier`` filters by), best first: in the order of each
        tier's best player on the leaderboard. Empty without a rank layer
        (``rank_class`` None) that keeps tiers. On a database, one grouped read of the
        indexed columns' table, not a read of every player
        (:meth:`rankcraft.League.tiers`).

        >>> from rankcraft import League
        >>> league = League("skyweaver")
        >>> league.tiers()
        []
        """
        if rank_class is None:
            return []
        unit = self.unit
        if unit.lazy and hasattr(self.store, "tiers"):
            unit.written()
            return self.store.tiers()
        return board_tiers(self.players.every(), self.codec)

    def search(self, text: str, limit: int = 10) -> list[str]:
        """Up to ``limit`` player ids that start with ``text``, then those that hold it,
        each in id order; ASCII letters match in either case, other characters exactly
        (:func:`rankcraft.model.id_holds`). On a database, read along an index of the
        ids and stopping at ``limit`` (without reading the players' states):
        suggestions for a search box. A text no id can hold (a NUL) finds nobody; a
        text longer than :data:`rankcraft.search.SEARCH_TEXT_MAX` is refused
        (:meth:`rankcraft.League.search`).

        >>> from rankcraft import League
        >>> league = League("elo")
        >>> _ = league.record({"id": "m1", "played_at": "2024-05-01",
        ...                    "teams": [["Ann"], ["joanna"]], "scores": [1, 0]})
        >>> league.search("an"), league.search("AN", limit=1), league.search("")
        (['Ann', 'joanna'], ['Ann'], [])
        """
        check_search_text(text, "text")
        if type(limit) is not int or limit < 0:
            raise InputError(f"'limit' must be a whole number >= 0: {limit!r}")
        if not text or bad_text(text) or not limit:
            return []
        limit = min(limit, 2**62)  # (SQL's LIMIT takes 64 bits at most)
        unit = self.unit
        if not unit.lazy:
            ids: Iterable[str] = (p for p, row in unit.rows.items() if row is not None)
        elif hasattr(self.store, "search"):
            unit.written()
            return self.store.search(text, limit)
        else:  # (a store written before Store.search: every player read)
            ids = (r.id for r in self.players.every())
        return search_ids(ids, text, limit)
