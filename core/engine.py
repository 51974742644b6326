"""The league: the public facade over the modules that do its work.

A :class:`League` rates matches with the hooks of the plugins its ruleset names
(:mod:`rankcraft.steps`) and keeps its players and the open transaction in a unit of work
(:mod:`rankcraft.unit`) over a store. Each of its methods hands the work to one module:

- recording matches and closing periods: :mod:`rankcraft.writing`;
- players' records: :mod:`rankcraft.players`; leaderboards, places, tiers and the player
  search: :mod:`rankcraft.boards`;
- predictions and forecasts: :mod:`rankcraft.predictions`; league-wide labels:
  :mod:`rankcraft.standings`; matchmaking: :mod:`rankcraft.matchmaking`;
- season events: the schedule in :mod:`rankcraft.seasons`, their runs in
  :mod:`rankcraft.resets`;
- the state documents (export and import): :mod:`rankcraft.documents`.

Every match takes the same path, whatever its shape and whoever wrote the plugins.

>>> import rankcraft
>>> league = rankcraft.League("elo")
>>> report = league.record({"id": "m1", "played_at": "2024-05-01T20:00:00Z",
...                         "teams": [["alice"], ["bob"]], "scores": [1, 0]})
>>> report.expected
(0.5, 0.5)
>>> league.player("alice").skill.rating, league.player("bob").skill.rating
(1516.0, 1484.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from . import matchmaking
from .boards import Boards, leaderboard_key, state_key, tier_function
from .corrections import Corrected, Corrections
from .documents import Documents, league_codec
from .errors import InputError
from .forecast import Forecast
from .io import MAX_FUTURE
from .manager import Plugins
from .matchmaking import Balanced, Opponents, RankFilter
from .model import Match, PlayerRecord, Report
from .opening import attach, closed_on_error, open_league_store
from .players import Players
from .predictions import Predictions
from .refits import Fitted, make_refits
from .resets import Resets
from .ruleset import Display, Ruleset, load_ruleset
from .search import SEARCH_TEXT_MAX
from .seasons import Seasons
from .standings import Standings
from .steps import Steps
from .store import MatchRow, MemoryStore, Store
from .unit import Schedules, UnitOfWork
from .version import __version__
from .writing import CHUNK, RecordSummary, Writer

if TYPE_CHECKING:
    from .rated import Rated

__all__ = [
    "CHUNK",
    "SEARCH_TEXT_MAX",
    "League",
    "RecordSummary",
    "Shown",
    "UnknownPlayerError",
    "collecting",
    "leaderboard_key",
    "state_key",
    "tier_function",
]


class UnknownPlayerError(InputError, KeyError):
    """A player id the league has never seen."""

    def __str__(self) -> str:
        return str(self.args[0])


@attrs.frozen(kw_only=True)
class Shown:
    """How a player is shown (:meth:`League.shown`; the ruleset's ``[display]`` table).

    Attributes:
        value: the number leaderboards sort by: rank points with a rank layer, else the
            skill's location − k * spread (``conservative`` k, 0 by default), in the
            skill's units; None when the states have no location field.
        interval: the skill's 95% interval, location ± 1.96 * spread, or None when the
            skill has no spread.
        skill: the skill's location and spread by the names players see them as
            (:meth:`Display.skill`: Glicko-2's ``rating`` and ``RD``, not its μ and φ).

    All three are on the scale players see (the fields' :class:`rankcraft.Scale`).
    """

    value: float | None
    interval: tuple[float, float] | None
    skill: dict[str, float] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"value": ..., "interval": [low, high] or null, "skill": {name: value}}``."""
        return {
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
            "skill": dict(self.skill),
        }


Sides = Sequence[Sequence[str]]
"""Player ids per side (:meth:`League.predict`, :meth:`League.forecast`...)."""
When = datetime | str | None
"""A time, as a datetime or its text; None: now."""
Season = str | int | None
"""A match's value of a ruleset's ``season_field``, or None."""


class League(Corrected, Fitted):
    """A set of players rated by one ruleset, with a store that keeps them.

    :param ruleset: a :class:`Ruleset`, a bundled ruleset name or a ruleset file path.
    :param store: where to keep the league (default: in memory).
    :param plugins: the plugin facade (default: the one the ruleset was loaded with).
    :raises LeagueMismatchError: the store was created with another ruleset.

    Attributes:
        ruleset: the league's ruleset. plugins: the plugin facade. store: its store.
        skill_class, rank_class: the plugins' state classes (``rank_class`` None without
        a rank slot). codec: turns records and reports into dicts and back. display:
        what leaderboards sort by and how players see the skill (:class:`Display`). Each
        method hands its work to one collaborator, whose docstring says the details."""

    def __init__(
        self,
        ruleset: Ruleset | str | Path = "elo",
        *,
        store: Store | None = None,
        plugins: Plugins | None = None,
    ) -> None:
        if not isinstance(ruleset, Ruleset):
            ruleset = load_ruleset(ruleset, plugins=plugins)
        self.ruleset = ruleset
        self.plugins = plugins if plugins is not None else ruleset.plugins
        self.store: Store = (store := store if store is not None else MemoryStore())
        self._steps = steps = Steps(ruleset, self.plugins)
        self.display = display = Display(ruleset.display, steps.skill_class, steps.rank_class)
        self.skill_class: type = steps.skill_class
        self.rank_class: type | None = steps.rank_class
        self.codec = codec = league_codec(steps, display, ruleset.period.mode)
        attach(store, ruleset, self.plugins, codec)
        self._seasons = seasons = Seasons(ruleset)
        self._unit = unit = UnitOfWork(store, kept := Schedules(seasons), steps)
        self._refits = refits = make_refits(ruleset, self.plugins, steps, store, unit, kept)
        self._players = players = Players(store, unit, steps, display)
        self._boards = Boards(store, unit, players, codec, display)
        self._resets = resets = Resets(ruleset, steps, store, unit, seasons, players, codec)
        self._writer = Writer(ruleset, store, unit, steps, seasons, resets.run, refits)
        self._predictions = Predictions(ruleset, steps, unit, resets.projected)
        self._standings = Standings(steps, store, unit, players, codec)
        self._documents = Documents(ruleset, self.plugins, codec, seasons, unit, refits)
        self._corrections = Corrections(
            ruleset, store, unit, seasons, codec, display, lambda seeds: _scratch(self, seeds)
        )
        rerate = ruleset.history.late == "rerate"
        self._writer.late = self._corrections.record_late if rerate else None
        self._resets.noted = self._corrections.note_reset

    @classmethod
    def open(
        cls,
        path: str | Path,
        ruleset: Ruleset | str | Path | None = None,
        *,
        plugins: Plugins | None = None,
        create: bool = True,
    ) -> League:
        """Open (or create, unless ``create`` is False) a league kept in an SQLite file
        ``path`` or a PostgreSQL database (``postgresql://user@host/db[?schema=NAME]``);
        ``ruleset``: needed for a new one, else the one it has (None: that one)."""
        store, ruleset = open_league_store(path, ruleset, plugins, create)
        with closed_on_error(store):
            return cls(ruleset, store=store, plugins=plugins)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction (all kept or none; nested ones join): the writer lock held."""
        with self._unit.transaction():
            yield

    def record(self, match: Match | Mapping[str, Any], *, by: str | None = None) -> Report:
        """Rate one match and store it with its report (:meth:`.writing.Writer.record`)."""
        return self._writer.record(match, by)

    def record_many(
        self,
        matches: Iterable[Match | Mapping[str, Any]],
        *,
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        close: bool = True,
        commit_every: int = 0,
    ) -> RecordSummary:
        """Rate matches in order (:meth:`.writing.Writer.record_many`)."""
        return self._writer.record_many(matches, skip_seen, progress, close, commit_every)

    def stream(self, matches: Iterable[Match | Mapping[str, Any]], **how: Any) -> int:
        """Rate matches keeping no history (:meth:`.writing.Writer.stream`)."""
        return self._writer.stream(matches, **how)

    def close_period(self) -> int:
        """Rate every pending result now (:meth:`.writing.Writer.close_period`)."""
        return self._writer.close_period()

    def __contains__(self, player: object) -> bool:
        return isinstance(player, str) and self._unit.row(player) is not None

    def __len__(self) -> int:
        return self._unit.count()

    def player(self, player: str) -> PlayerRecord:
        """A player's record (:class:`UnknownPlayerError`: the league has never seen them)."""
        record = self._players.record(player)
        if record is None:
            raise UnknownPlayerError(f"unknown player {player!r}")
        return record

    def players(self) -> list[PlayerRecord]:
        """Every player's record, ordered by id (on a database, reads every row)."""
        return self._players.every()

    def history(self, player: str, limit: int | None = 10) -> list[MatchRow]:
        """A player's latest matches with their reports, newest first."""
        self.player(player)
        return self.store.player_matches(player, limit)

    def report(self, match_id: str) -> Report:
        """A recorded match's report, of the open batch too (InputError: no such match)."""
        self._unit.written()
        if (row := self.store.match(match_id)) is None:
            raise InputError(f"unknown match {match_id!r}")
        return row.report

    @property
    def match_count(self) -> int:
        """How many matches the league has recorded."""
        return self.store.count_matches()

    def leaderboard(
        self,
        top: int | None = None,
        *,
        offset: int = 0,
        active_days: float | None = None,
        tier: str | None = None,
        everyone: bool = False,
        holding: str | None = None,
    ) -> list[PlayerRecord]:
        """A page of the players, best first (:meth:`.boards.Boards.leaderboard`)."""
        return self._boards.leaderboard(top, offset, active_days, tier, everyone, holding)

    def placed(
        self,
        top: int | None = None,
        *,
        offset: int = 0,
        active_days: float | None = None,
        tier: str | None = None,
        everyone: bool = False,
        holding: str | None = None,
    ) -> list[tuple[int, PlayerRecord]]:
        """:meth:`leaderboard`'s page with places (:meth:`.boards.Boards.placed`)."""
        return self._boards.placed(top, offset, active_days, tier, everyone, holding)

    def rank_values(self, field: str) -> Iterator[tuple[str, Any]]:
        """Each player's value of a rank field (:meth:`.boards.Boards.rank_values`)."""
        yield from self._boards.rank_values(self.rank_class, field)

    def tiers(self) -> list[str]:
        """The tiers the players hold, best first (:meth:`.boards.Boards.tiers`)."""
        return self._boards.tiers(self.rank_class)

    def search(self, text: str, limit: int = 10) -> list[str]:
        """Up to ``limit`` player ids holding ``text`` (:meth:`.boards.Boards.search`)."""
        return self._boards.search(text, limit)

    def latest_played(self) -> datetime | None:
        """When the league's latest match was played, or None before any match."""
        return self._players.latest_played()

    def shown(self, player: str | PlayerRecord) -> Shown:
        """How a player is shown (:class:`Shown`; :class:`UnknownPlayerError`)."""
        record = self.player(player) if isinstance(player, str) else player
        skill, shown = record.skill, self.display
        value = shown.value(skill, record.rank)
        return Shown(value=value, interval=shown.interval(skill), skill=shown.skill(skill))

    def predict(
        self, sides: Sides, at: When = None, home: int | None = None, *, season: Season = None
    ) -> list[float]:
        """One probability per side (:meth:`.predictions.Predictions.predict`)."""
        return self._predictions.predict(sides, at, home, season)

    def forecast(
        self,
        sides: Sides,
        at: When = None,
        home: int | None = None,
        *,
        season: Season = None,
        match: Match | None = None,
    ) -> Forecast:
        """The model's forecast of a match (:meth:`.predictions.Predictions.forecast`)."""
        return self._predictions.forecast(sides, at, home, season, match)

    @property
    def has_draw_model(self) -> bool:
        """Whether the ruleset has a draw model (:class:`.predictions.Predictions`)."""
        return self._predictions.has_draw_model

    def sort_value(self, player: str) -> float:
        """The value the leaderboard sorts ``player`` by (:meth:`shown`'s value)."""
        record = self.player(player)
        return self._players.sort_value(record, self.ruleset.name, self.codec.sort_key)

    def active_players(
        self, active_days: float | None = None, at: When = None
    ) -> list[tuple[str, float]]:
        """The active players with their sort value (:meth:`.players.Players.active`)."""
        days = matchmaking.active_days_of(self) if active_days is None else active_days
        return self._players.active(days, at, self.ruleset.name, self.codec.sort_key)

    def find_opponents(
        self,
        players: str | Sequence[str],
        rank_filter: RankFilter | None = None,
        *,
        needed: int = 1,
        waited: float = 0.0,
        limit: int | None = None,
        active_days: float | None = None,
    ) -> Opponents:
        """Who a rank filter lets in with ``players`` (:func:`.matchmaking.find_opponents`)."""
        find = matchmaking.find_opponents
        return find(
            self,
            players,
            rank_filter,
            needed=needed,
            waited=waited,
            limit=limit,
            active_days=active_days,
        )

    def quality(self, sides: Sides, at: When = None, home: int | None = None) -> float:
        """How good a match ``sides`` would make, in [0, 1] (:func:`.matchmaking.quality`)."""
        return matchmaking.quality(self, sides, at=at, home=home)[0]

    def balance(self, players: Sequence[str], teams: int = 2, at: When = None) -> Balanced:
        """``players`` split into ``teams`` fair teams (:func:`.matchmaking.balance`)."""
        return matchmaking.balance(self, players, teams, at=at)

    @property
    def skill_model(self) -> Predictions:
        """What matchmaking judges sides with (:class:`.matchmaking.SkillModel`)."""
        return self._predictions

    def export(self) -> dict[str, Any]:
        """The state document (docs/design.md; :meth:`.documents.Documents.export`)."""
        return self._documents.export(__version__, self.players())

    def import_state(
        self,
        document: Mapping[str, Any],
        *,
        accept_ruleset: bool = False,
        max_future: float | None = MAX_FUTURE,
    ) -> int:
        """Load players from an export document (:meth:`.documents.Documents.import_state`)."""
        return self._documents.import_state(document, accept_ruleset, max_future)

    def reset(self, kind: str, at: When = None) -> int:
        """Run a season event through the reset plugin (:meth:`.resets.Resets.reset`)."""
        return self._resets.reset(kind, at)

    @property
    def catch_up_progress(self) -> Callable[[int, int], None] | None:
        """Called during a catch-up of season events (:attr:`.seasons.Seasons.progress`)."""
        return self._seasons.progress

    @catch_up_progress.setter
    def catch_up_progress(self, report: Callable[[int, int], None] | None) -> None:
        self._seasons.progress = report

    def refresh(self, players: Iterable[str] | None = None) -> None:
        """Read again what other processes committed (:meth:`.unit.UnitOfWork.refresh`)."""
        self._unit.refresh(players)

    @property
    def has_standings(self) -> bool:
        """Whether the ruleset gives league-wide labels (:meth:`standings`)."""
        return self._steps.standings is not None

    def standings(self, players: Iterable[str] | None = None) -> dict[str, str]:
        """League-wide labels per player (:meth:`.standings.Standings.standings`)."""
        return self._standings.standings(players)


@contextmanager
def collecting(league: League) -> Iterator[list[Rated]]:
    """The entries of the matches ``league`` rates in the block, in order, as it keeps
    them (each a :class:`rankcraft.rated.Rated`: the match, its probabilities, each
    player's states before and after): a caller's own events written without reading
    reports back (``rankcraft consume``). Not those a late match's re-rate makes; not
    nested."""
    kept: list[Rated] = []
    league._unit.collect = kept
    try:
        yield kept
    finally:
        league._unit.collect = None


def _scratch(league: League, seeds: Iterable[PlayerRecord]) -> tuple[League, Seasons]:
    """A league in memory with ``league``'s ruleset and plugins, holding the records
    ``seeds`` and no match (an edit's scratch league), with its schedule."""
    store = MemoryStore(pack_after=None)
    store.write(list(seeds), ())
    store.commit()
    # (late matches refused; a whole-history model's refit limits kept: the edit must
    # re-rate as a replay under the league's own ruleset does)
    refusing = attrs.evolve(
        league.ruleset, history=attrs.evolve(league.ruleset.history, late="refuse")
    )
    scratch = League(refusing, store=store, plugins=league.plugins)
    return scratch, scratch._seasons
