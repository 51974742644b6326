"""The league: the public facade over the rating steps, the unit of work and the seasons.

A :class:`League` rates matches with the hooks of the plugins its ruleset names
(:mod:`rankcraft.steps`), keeps its players and the open transaction in a unit of work
(:mod:`rankcraft.unit`) over a store, runs scheduled season events
(:mod:`rankcraft.seasons`), and reads and writes the state documents
(:mod:`rankcraft.documents`). Every match takes the same path, whatever its shape and
whoever wrote the plugins.

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

import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .documents import imported_ruleset, make_codec, parse_export
from .errors import (
    DuplicateMatchError,
    InputError,
    LeagueMismatchError,
    MatchError,
    PluginError,
    RankcraftError,
    RulesetError,
    StateError,
)
from .forecast import Forecast, forecast_states
from .io import MAX_FUTURE, bad_text, parse_match, parse_time
from .manager import Plugins
from .model import (
    Census,
    CountFn,
    Match,
    PlayerRecord,
    PlayerScope,
    Report,
    ResetContext,
    records_counter,
    window_start,
)
from .rated import Rated, ReportWriter
from .ruleset import (
    Display,
    ImportedRulesetWarning,
    Ruleset,
    dumps,
    load_ruleset,
    loads_stored_ruleset,
)
from .seasons import Seasons, due_before
from .steps import LAST, PENDING, RANK, SKILL, Row, Steps
from .store import MatchRow, MemoryStore, Store, mask_url, open_store
from .store.memory import board_tiers, in_scope, leaderboard_page, placed_page, search_ids
from .unit import FLUSH_EVERY, UnitOfWork

if TYPE_CHECKING:  # (rankcraft.matchmaking is imported when it is first used)
    from .matchmaking import Balanced, Opponents, RankFilter

CHUNK = 2000
"""record_many reads this many matches ahead, to ask the store which it has already and
to read their players' rows in one query."""


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
    name = f"skill.{display.location}"
    if display.k:
        name += f"-{display.k!r}*{display.spread}"
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


SEARCH_TEXT_MAX = 1000
"""The longest text a player search takes (characters): longer is refused."""


def _check_search_text(text: Any, field: str) -> None:
    """Refuse a search's text that is not a text of at most :data:`SEARCH_TEXT_MAX`
    characters, naming ``field``."""
    if not isinstance(text, str) or len(text) > SEARCH_TEXT_MAX:
        raise InputError(
            f"'{field}' must be a text of at most {SEARCH_TEXT_MAX} characters: {text!r}"[:300]
        )


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
        interval: the skill's 95% interval, location ± 1.96 * spread (skill units), or
            None when the skill has no spread.
    """

    value: float | None
    interval: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        """``{"value": ..., "interval": [low, high] or null}``."""
        return {
            "value": self.value,
            "interval": None if self.interval is None else list(self.interval),
        }


@attrs.frozen(kw_only=True)
class RecordSummary:
    """What :meth:`League.record_many` did.

    Attributes:
        recorded: matches rated and stored. skipped: repeated ids passed over
        (``skip_seen``). last: the report of the last match recorded, or None.
    """

    recorded: int
    skipped: int
    last: Report | None = None


def _id_of(item: Any) -> str | None:
    """The id of a match or match dict handed to record_many, when it has a valid one."""
    mid = item.get("id") if type(item) is dict else getattr(item, "id", None)
    return mid if type(mid) is str else None


class League:
    """A set of players rated by one ruleset, with a store that keeps them.

    :param ruleset: a :class:`Ruleset`, a bundled ruleset name or a ruleset file path.
    :param store: where to keep the league (default: in memory).
    :param plugins: the plugin facade (default: the one the ruleset was loaded with).
    :raises LeagueMismatchError: the store was created with another ruleset.

    Attributes:
        ruleset: the league's ruleset. plugins: the plugin facade. store: its store.
        skill_class, rank_class: the plugins' state classes (``rank_class`` None without
        a rank slot). codec: turns records and reports into dicts and back.
    """

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
        self.store: Store = store if store is not None else MemoryStore()
        self._steps = steps = Steps(ruleset, self.plugins)
        self._display = Display(ruleset.display, steps.skill_class, steps.rank_class)
        self.skill_class: type = steps.skill_class
        self.rank_class: type | None = steps.rank_class
        self.codec = make_codec(
            ReportWriter(steps.skill_names, steps.rank_names),
            steps.skill_class,
            steps.rank_class,
            steps.initial_rank,
            sort_key=leaderboard_key(self._display),
            tier=tier_function(steps),
            mode=ruleset.period.mode,
        )
        self._sort_key = self.codec.sort_key
        # refuse another ruleset's store before attaching, which may recompute every
        # player's sort key with this ruleset's codec
        stored = self.store.stored_ruleset()
        if stored is not None:
            self._check_same_ruleset(stored)
        self.store.attach(ruleset.name, dumps(ruleset), self.codec)
        self._seasons = Seasons(ruleset)
        self._unit = UnitOfWork(self.store, self._seasons, steps)

    @classmethod
    def open(
        cls,
        path: str | Path,
        ruleset: Ruleset | str | Path | None = None,
        *,
        plugins: Plugins | None = None,
        create: bool = True,
    ) -> League:
        """Open (or create) a league kept in an SQLite file or a PostgreSQL database.

        :param path: the database file, or ``postgresql://user@host/dbname[?schema=NAME]``.
        :param ruleset: required for a new database; for an existing one it must be the
            ruleset the database was created with (None: use that one).
        :param create: create the file when missing (False: refuse).
        """
        if ruleset is not None and not isinstance(ruleset, Ruleset):
            ruleset = load_ruleset(ruleset, plugins=plugins)
        store = open_store(path, create=create)
        try:
            stored = store.stored_ruleset()
            if ruleset is None:
                if stored is None:
                    raise InputError(
                        f"{mask_url(str(path))!r} is a new database: give a ruleset "
                        "(e.g. --ruleset elo)"
                    )
                source = f"the ruleset stored in {mask_url(str(path))!r}"
                ruleset = loads_stored_ruleset(stored[1], source=source, plugins=plugins)
            return cls(ruleset, store=store, plugins=plugins)
        except BaseException:
            store.close()
            raise

    def _check_same_ruleset(self, stored: tuple[str, str]) -> None:
        name, text = stored
        try:
            # (params an older version accepted and nothing reads are dropped: the league
            # runs the given ruleset, which cannot have them)
            theirs = loads_stored_ruleset(
                text, source="stored ruleset", plugins=self.plugins, dropped=[]
            )
        except RulesetError as exc:
            raise LeagueMismatchError(
                f"the store was created with ruleset {name!r}, which no longer loads: {exc}"
            ) from None
        # a description and the [display] table are for people: editing them does not
        # change the ruleset's meaning (the league shows players as the given ruleset says)
        mine = self.ruleset
        if attrs.evolve(theirs, description=mine.description, display=mine.display) != mine:
            detail = (
                "same name, different parameters"
                if name == self.ruleset.name
                else "a different ruleset"
            )
            raise LeagueMismatchError(
                f"the store was created with ruleset {name!r}; it cannot be used with ruleset "
                f"{self.ruleset.name!r} ({detail}); omit the ruleset to use {name!r}"
            )

    # -- recording ------------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group recordings into one transaction: all of them are kept, or none.

        Nested uses join the outer batch. On a database the batch holds the league's
        writer lock alone (other writers wait), and starts from what they committed.
        """
        with self._unit.transaction():
            yield

    def record(self, match: Match | Mapping[str, Any]) -> Report:
        """Rate one match and store it with its report (one transaction).

        In PostgreSQL the transaction locks only this match's players and reads their
        records as other processes left them, so that matches on other players commit in
        parallel and no process rates from a stale record. (A match whose season event
        is due, and any match in SQLite, takes the league-wide writer lock instead.)

        :param match: a :class:`Match` or a dict in the match format (docs/design.md).
        :returns: the match's :class:`Report`.
        :raises MatchError: the match is malformed, repeats an id, or goes back in time;
            nothing is changed.
        """
        m = match if isinstance(match, Match) else parse_match(match)
        unit = self._unit
        one_match = (
            unit.row_locks and not unit.in_transaction and not self._seasons.due_in(self.store, m)
        )
        players = sorted({p for side in m.teams for p in side})
        with unit.transaction(players, m.id) if one_match else unit.transaction():
            # (inside the transaction: another process may have recorded it; the one-match
            # path's lock_players has checked already)
            if m.id in unit.seen or (not one_match and self.store.recorded((m.id,))):
                raise DuplicateMatchError(f"match id {m.id!r} is already recorded", match_id=m.id)
            unit.fetch(players)
            entry = self._rate(m)
            if len(unit.pending) >= FLUSH_EVERY:  # (many records in one batch)
                unit.flush()
        return entry.report

    def _rate(self, match: Match) -> Rated:
        """Rate one match in the open transaction (see :meth:`_rate_all`)."""
        entry = self._rate_all((match,))[0]
        assert entry is not None
        return entry

    def _rate_all(
        self,
        matches: Iterable[Match],
        seen: set[str] | None = None,
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        position: int | None = None,
    ) -> tuple[Rated | None, int, int]:
        """Run due season events, rate each match and keep the result in the open
        transaction: what ``record`` and ``record_many`` do for every match.

        A match whose id is in ``seen`` is passed over with ``skip_seen``, else refused
        (:class:`DuplicateMatchError`). ``progress`` is called with ``position`` plus the
        matches handled, at each multiple of 1000; ``position`` (the first match's place
        in the caller's sequence) also goes into a :class:`MatchError`'s ``item``.
        Returns the last entry, and how many matches were rated and passed over."""
        seasons = self._seasons
        unit = self._unit
        rate, stored = self._steps.rate, unit.rows.get
        put_all, add = unit.put_all, unit.add
        rated = skipped = 0
        match = entry = None
        try:
            for match in matches:
                if seen is not None and match.id in seen:
                    if not skip_seen:
                        raise DuplicateMatchError(
                            f"match id {match.id!r} is already recorded", match_id=match.id
                        )
                    skipped += 1
                else:
                    if seasons.events:
                        seasons.run_due(match, self._run_reset)
                    changes, entry = rate(match, stored)
                    put_all(changes)
                    add(entry)
                    rated += 1
                if progress is not None and ((position or 0) + rated + skipped) % 1000 == 0:
                    progress((position or 0) + rated + skipped)
        except PluginError as exc:  # (a plugin broke its contract: say on which match)
            if match is None:
                raise
            raise PluginError(f"{exc} (rating match {match.id!r})") from exc
        except MatchError as exc:
            if position is not None and exc.item is None:
                exc.item = position + rated + skipped
            raise
        return entry, rated, skipped

    def record_many(
        self,
        matches: Iterable[Match | Mapping[str, Any]],
        *,
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        close: bool = True,
        commit_every: int = 0,
    ) -> RecordSummary:
        """Rate matches in order: in one transaction (nothing is kept on any error), or
        in one transaction per ``commit_every`` matches.

        :param matches: :class:`Match` objects or match dicts, in time order.
        :param skip_seen: pass over ids already recorded instead of refusing them.
        :param progress: called with the count of matches handled, every 1000 matches.
        :param close: in ``batch`` mode, close the open rating period at the end (a replay
            does; a caller feeding one history in several calls closes only the last).
        :param commit_every: > 0: commit every that many matches; an error then keeps the
            matches committed before it (its ``committed`` attribute counts them).
        :raises MatchError: the first bad match (its 0-based position in ``matches`` as
            ``item``; with its line when read from a file).

        Matches are read in chunks of a few thousand: before each chunk the matches rated
        so far are handed to the store, which then says which of the chunk's ids it has
        already. Memory therefore holds one chunk, not every id of the history.
        """
        if commit_every <= 0:
            with self.batch():
                summary = self._record_all(iter(matches), skip_seen, progress, 0)
                if close and self.ruleset.period.mode == "batch":
                    self.close_period()
            return summary
        iterator = iter(matches)
        recorded = skipped = 0
        last = None
        try:
            while chunk := list(itertools.islice(iterator, commit_every)):
                with self.batch():
                    done = self._record_all(iter(chunk), skip_seen, None, recorded + skipped)
                recorded += done.recorded
                skipped += done.skipped
                last = done.last or last
                if progress is not None:
                    progress(recorded + skipped)
            if close and self.ruleset.period.mode == "batch":
                self.close_period()
        except RankcraftError as exc:  # (a bad match, or the input failing to be read)
            exc.committed = recorded
            raise
        return RecordSummary(recorded=recorded, skipped=skipped, last=last)

    def _record_all(
        self,
        iterator: Iterator[Match | Mapping[str, Any]],
        skip_seen: bool,
        progress: Callable[[int], None] | None,
        base: int,
    ) -> RecordSummary:
        """The loop of :meth:`record_many` inside its transaction; ``base``: the position
        of the first item in the caller's sequence."""
        unit = self._unit
        store = self.store
        seen = unit.seen
        lazy = unit.lazy
        recorded = skipped = 0
        position = base
        last: Rated | None = None
        try:
            while chunk := list(itertools.islice(iterator, CHUNK)):
                if unit.pending:  # hand the matches over: the store answers for their ids
                    last = unit.pending[-1]
                    store.write((), unit.pending)  # (players: once, at the commit)
                    unit.pending = []
                seen.clear()
                seen.update(store.recorded([i for i in map(_id_of, chunk) if i is not None]))
                parsed: list[Match] = []
                failure: MatchError | None = None
                for item in chunk:
                    try:
                        parsed.append(item if isinstance(item, Match) else parse_match(item))
                    except MatchError as exc:  # raised in its turn, after those before it
                        failure = exc
                        break
                if lazy:  # the chunk's players, in one query
                    unit.fetch({p for m in parsed for side in m.teams for p in side})
                _, done, passed = self._rate_all(parsed, seen, skip_seen, progress, position)
                recorded += done
                skipped += passed
                position += done + passed
                if failure is not None:
                    raise failure
        except MatchError as exc:
            if exc.item is None:
                exc.item = position
            raise
        if unit.pending:
            last = unit.pending[-1]
        return RecordSummary(
            recorded=recorded, skipped=skipped, last=None if last is None else last.report
        )

    def close_period(self) -> int:
        """Rate every pending result now: closes the open ``batch`` period (a replay does
        this at its end), and commits ``live`` periods. Deferred losses (``match`` mode)
        stay pending until the player's next match.

        :returns: the number of players whose pending results were rated.
        """
        if self.ruleset.period.mode == "match":
            return 0
        unit = self._unit
        with self.batch():
            known = unit.known()
            waiting = [pid for pid, row in known.items() if row[PENDING]]
            for pid in waiting:
                unit.put(pid, self._steps.commit_pending(pid, known[pid]))
        return len(waiting)

    # -- reading --------------------------------------------------------------------------

    def __contains__(self, player: object) -> bool:
        return isinstance(player, str) and self._unit.row(player) is not None

    def __len__(self) -> int:
        return self._unit.count()

    def player(self, player: str) -> PlayerRecord:
        """A player's record.

        :raises UnknownPlayerError: the league has never seen ``player``.
        """
        row = self._unit.row(player)
        if row is None:
            raise UnknownPlayerError(f"unknown player {player!r}")
        return self._steps.record_of(player, row)

    def players(self) -> list[PlayerRecord]:
        """Every player's record, ordered by id (on a database, reads every row)."""
        rows = self._unit.known()
        return [self._steps.record_of(p, rows[p]) for p in sorted(rows)]

    def history(self, player: str, limit: int | None = 10) -> list[MatchRow]:
        """A player's latest matches with their reports, newest first."""
        self.player(player)
        return self.store.player_matches(player, limit)

    def report(self, match_id: str) -> Report:
        """The report kept with a recorded match.

        :raises InputError: no such match.
        """
        row = self.store.match(match_id)
        if row is None:
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
        """Players ordered best first by their display value (:meth:`shown`, the one key
        of :func:`leaderboard_key`): rank points when the ruleset has a rank layer, else
        the skill's location (e.g. Elo ``rating``) less ``[display] conservative`` times
        its spread; ties by id. A page of them.

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
        if self._unit.lazy:
            return self._store_page(top, offset, since, tier, holding)
        return leaderboard_page(self._records(), self.codec, top, offset, since, tier, holding)

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
        """:meth:`leaderboard`'s page (the same arguments), each player with their place
        on the board (1 first). The board is that of ``active_days`` and ``tier``;
        ``holding`` searches it without changing it, so a player found keeps their
        place (counted along the index on a database: the cost grows with the place of
        the page's last player). Without ``holding`` the places are ``offset + 1`` on.

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
        if not self._unit.lazy:
            return placed_page(self._records(), self.codec, top, offset, since, tier, holding)
        if not holding:
            return list(enumerate(self._store_page(top, offset, since, tier, holding), offset + 1))
        with self._snapshot():  # (the page and its places, of one state of the league)
            page = self._store_page(top, offset, since, tier, holding)
            ahead = self.store.places(page, since, tier)
        return [(i + 1, record) for i, record in zip(ahead, page, strict=True)]

    def _snapshot(self) -> AbstractContextManager[None]:
        """Several reads of a database that see one committed state of it
        (``Store.reading``; a store without that method reads as it is)."""
        reading = getattr(self.store, "reading", None)
        return nullcontext() if reading is None else reading()

    def _board(
        self,
        top: int | None,
        offset: int,
        active_days: float | None,
        everyone: bool,
        holding: str | None,
    ) -> tuple[datetime | None, str | None] | None:
        """:meth:`leaderboard`'s arguments checked; the board's ``since`` and the search's
        text (None: no search), or None when nobody can be on the page (no match yet
        with an active window, or a text no id can hold)."""
        if top is not None and (type(top) is not int or top < 0):
            raise InputError(f"'top' must be a whole number >= 0: {top!r}")
        if type(offset) is not int or offset < 0:
            raise InputError(f"'offset' must be a whole number >= 0: {offset!r}")
        if holding is not None:
            _check_search_text(holding, "holding")
            if bad_text(holding):  # (a NUL, a lone surrogate: no id holds one)
                return None
        if active_days is None and not everyone:
            active_days = self._display.spec.active_days
        since = None
        if active_days is not None:
            if not isinstance(active_days, int | float) or not active_days >= 0:
                raise InputError(f"'active_days' must be a number of days >= 0: {active_days!r}")
            latest = self.latest_played()
            if latest is None:
                return None
            since = window_start(latest, active_days)
        return since, holding or None

    def rank_values(self, field: str) -> Iterator[tuple[str, Any]]:
        """Each player's value of the rank state's field ``field``, players without a
        rank state left out, in no order: for a display over every player that needs one
        field (the web page's season archive). On a database the value as the store
        keeps it (JSON: a tuple is a list), read without building records (about 3 us
        a player against 11 or more for a record); in memory the state's own value.

        :raises InputError: the ruleset's rank state has no such field.
        """
        rank_class = self.rank_class
        if rank_class is None or field not in attrs.fields_dict(rank_class):
            raise InputError(f"the ruleset's rank state has no field {field!r}")
        unit = self._unit
        if unit.lazy and hasattr(self.store, "rank_documents"):
            unit.written()
            for pid, document in self.store.rank_documents():
                yield pid, document.get(field)
            return
        for record in self.players():
            if record.rank is not None:
                yield record.id, getattr(record.rank, field)

    def tiers(self) -> list[str]:
        """The tiers the players hold (the rank state's ``tier`` field, what
        :meth:`leaderboard`'s ``tier`` filters by), best first: in the order of each
        tier's best player on the leaderboard. Empty without a rank layer that keeps
        tiers. On a database, one grouped read of the indexed columns' table, not a read
        of every player.

        >>> league = League("skyweaver")
        >>> league.tiers()
        []
        """
        if self.rank_class is None:
            return []
        unit = self._unit
        if unit.lazy and hasattr(self.store, "tiers"):
            unit.written()
            return self.store.tiers()
        return board_tiers(self.players(), self.codec)

    def _store_page(
        self,
        top: int | None,
        offset: int,
        since: datetime | None,
        tier: str | None,
        holding: str | None,
    ) -> list[PlayerRecord]:
        """A page read from the store, after the open batch's rows are written."""
        self._unit.written()
        search = [holding] if holding else []  # (a store written before ``holding``)
        return self.store.leaderboard(top, offset, since, tier, *search)

    def _records(self) -> list[PlayerRecord]:
        """Every player's record, from the rows a league in memory keeps."""
        return [
            self._steps.record_of(p, row) for p, row in self._unit.rows.items() if row is not None
        ]

    def search(self, text: str, limit: int = 10) -> list[str]:
        """Up to ``limit`` player ids that start with ``text``, then those that hold it,
        each in id order; ASCII letters match in either case, other characters exactly
        (:func:`rankcraft.model.id_holds`). On a database, read along an index of the
        ids and stopping at ``limit`` (without reading the players' states):
        suggestions for a search box. A text no id can hold (a
        NUL) finds nobody; a text longer than :data:`SEARCH_TEXT_MAX` is refused.

        >>> league = League("elo")
        >>> _ = league.record({"id": "m1", "played_at": "2024-05-01",
        ...                    "teams": [["Ann"], ["joanna"]], "scores": [1, 0]})
        >>> league.search("an"), league.search("AN", limit=1), league.search("")
        (['Ann', 'joanna'], ['Ann'], [])
        """
        _check_search_text(text, "text")
        if type(limit) is not int or limit < 0:
            raise InputError(f"'limit' must be a whole number >= 0: {limit!r}")
        if not text or bad_text(text) or not limit:
            return []
        limit = min(limit, 2**62)  # (SQL's LIMIT takes 64 bits at most)
        unit = self._unit
        if not unit.lazy:
            ids: Iterable[str] = (p for p, row in unit.rows.items() if row is not None)
        elif hasattr(self.store, "search"):
            unit.written()
            return self.store.search(text, limit)
        else:  # (a store written before Store.search: every player read)
            ids = (r.id for r in self.players())
        return search_ids(ids, text, limit)

    def latest_played(self) -> datetime | None:
        """When the league's latest match was played (the latest ``last_played``), or
        None before any match."""
        unit = self._unit
        if unit.lazy:
            unit.written()
            return self.store.latest_played()
        lasts = [row[LAST] for row in unit.rows.values() if row is not None and row[LAST]]
        return max(lasts, default=None)

    def shown(self, player: str | PlayerRecord) -> Shown:
        """How a player is shown: their display value (what leaderboards sort by) and
        their skill's 95% interval (see :class:`Shown` and the ruleset's ``[display]``).

        :raises UnknownPlayerError: the league has never seen ``player``.
        """
        record = self.player(player) if isinstance(player, str) else player
        display = self._display
        return Shown(
            value=display.value(record.skill, record.rank),
            interval=display.interval(record.skill),
        )

    def predict(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
        *,
        season: str | int | None = None,
    ) -> list[float]:
        """One probability per side, summing to 1, if they met now (or at time ``at``).

        For two sides, each side's **expected score** (P(win) + ½ P(draw)): the win
        probability where draws cannot happen (the expectation the match report keeps).
        For more than two sides, each side's probability of **finishing first**, the
        Plackett-Luce reading of the pairwise expectations (:meth:`forecast` has the
        places and, for two sides with a draw model, P(win), P(draw) and P(loss)).

        Unknown players count as new players. With ``at``, each player's skill is
        decayed for the time since their last match, and the season events a match at
        ``at`` would meet are applied first (to copies): the dated ones due by then, a
        ``gap_days`` one after a long gap, and, when ``season`` (the match's value of a
        ``season_field``) is given, a ``season_field`` one whose season it changes;
        ``home`` is the index of the side at home (for rulesets with a home advantage).

        :param sides: player ids per side, at least two sides, none empty, no player twice.
        :returns: one probability per side, summing to 1.
        """
        states = self._side_states(sides, at, home, season)
        steps = self._steps
        if len(states) == 2:
            return [float(p) for p in steps.predict(states, home)]
        return list(forecast_states(states, home, steps.predict, places=False).probabilities)

    def forecast(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
        *,
        season: str | int | None = None,
        match: Match | None = None,
    ) -> Forecast:
        """The model's forecast of a match between ``sides`` (docs/forecasts.md): each
        side's expected score; for two sides with a draw model (the expectation plugin's
        ``rankcraft_outcomes``), P(win), P(draw) and P(loss); for more than two sides, the
        probability of finishing first and of every place, and the most likely order.

        Arguments as for :meth:`predict`, or ``match``: the forecast of that match before
        it is recorded. Its sides (``sides`` must be its ``teams``), time, home side and
        season (the value of the ruleset's ``season_field``, if any) are used, and for
        two sides the match itself is handed to the expectation and outcomes hooks, whose
        plugins may read its context (competition, surface, pools: elo's ``meta``
        options), as when it is rated: the expected score is then the one the match's
        report will keep.

        :raises InputError: ``match`` with other ``sides``, or with ``at``, ``home`` or
            ``season`` as well.
        """
        if match is not None:
            if [list(side) for side in sides] != [list(side) for side in match.teams]:
                raise InputError(
                    f"'sides' must be the match's teams with 'match' {match.id!r}: {sides!r}"[:300]
                )
            if at is not None or home is not None or season is not None:
                raise InputError(
                    f"'at', 'home' and 'season' come from 'match' {match.id!r}: leave them out"
                )
            at, home, season = match.played_at, match.home, self._season_of(match)
        states = self._side_states(sides, at, home, season)
        steps = self._steps
        given = match if len(states) == 2 else None
        outcomes = steps.outcomes
        return forecast_states(
            states,
            home,
            lambda s, h: steps.expect(s, h, given),
            None if outcomes is None else (lambda s, h: outcomes(s, h, given)),
        )

    def _season_of(self, match: Match) -> str | int | None:
        """The match's season for the ruleset's first ``season_field`` entry, or None."""
        for event in self.ruleset.resets:
            if event.season_field is not None:
                try:
                    return event.season_of(match.meta)
                except ValueError as exc:
                    raise InputError(f"match {match.id!r}: {exc}") from None
        return None

    @property
    def has_draw_model(self) -> bool:
        """Whether the ruleset has a draw model: the expectation plugin implements
        ``rankcraft_outcomes`` (P(win), P(draw), P(loss) for two sides: :meth:`forecast`)
        and answers it for two new players (elo without ``draw`` answers None)."""
        return self._steps.outcomes is not None

    def _side_states(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None,
        home: int | None,
        season: str | int | None = None,
    ) -> list[Any]:
        """The state standing for each side at ``at`` (checked sides; new players at the
        initial state, idle players decayed)."""
        if isinstance(sides, str) or len(sides) < 2:
            raise InputError(f"predict needs at least 2 sides: {sides!r}")
        flat = [p for side in sides for p in side]
        if any(not side or isinstance(side, str) for side in sides):
            raise InputError(f"every side must be a non-empty list of player ids: {sides!r}")
        if len(set(flat)) != len(flat):
            raise InputError(f"a player appears twice in {sides!r}")
        if home is not None and not 0 <= home < len(sides):
            raise InputError(f"'home' must be a side index (0 to {len(sides) - 1}): {home!r}")
        when = parse_time(at, field="at") if isinstance(at, str) else at
        if season is not None and (
            when is None or isinstance(season, bool) or not isinstance(season, str | int)
        ):
            raise InputError(
                "'season' must be a string or an integer, with 'at' (the season of a match "
                f"at that time): {season!r}"[:300]
            )
        steps = self._steps
        self._unit.fetch(flat)
        rows = self._after_resets(when, season) if when is not None else self._unit.rows
        states = []
        for side in sides:
            members = []
            for pid in side:
                row = rows.get(pid) or steps.new_row()
                members.append(row[SKILL] if when is None else steps.decayed(row, when))
            states.append(steps.aggregate(members))
        return states

    # -- matchmaking (rankcraft.matchmaking; docs/matchmaking.md) ----------------------------

    def sort_value(self, player: str) -> float:
        """The value the leaderboard sorts ``player`` by (:meth:`shown`'s value: rank
        points with a rank layer, else the skill's location less ``[display]
        conservative`` times its spread).

        :raises UnknownPlayerError: the league has never seen ``player``.
        :raises InputError: the ruleset's states have no location field.
        """
        record = self.player(player)
        if not self._display.orders:
            raise InputError(f"ruleset {self.ruleset.name!r} has no sort value (no location field)")
        return self._sort_key(record)

    def active_players(
        self, active_days: float | None = None, at: datetime | str | None = None
    ) -> list[tuple[str, float]]:
        """The active players with their sort value (:meth:`sort_value`), lowest value
        first (ties by id): those with a match no more than ``active_days`` before ``at``
        (default: the league's latest match). The one read percentiles are counted from.

        :param active_days: default: the ruleset's standings plugin's ``active_days``
            param, else 30 (:func:`rankcraft.matchmaking.active_days_of`).
        """
        from .matchmaking import active_days_of

        days = active_days_of(self) if active_days is None else active_days
        if isinstance(days, bool) or not isinstance(days, int | float) or not days >= 0:
            raise InputError(f"'active_days' must be a number of days >= 0: {days!r}")
        if not self._display.orders:
            raise InputError(f"ruleset {self.ruleset.name!r} has no sort value (no location field)")
        when = parse_time(at, field="at") if isinstance(at, str) else at
        if when is not None and (not isinstance(when, datetime) or when.utcoffset() is None):
            raise InputError(f"'at' must be a time with a time zone: {at!r}")
        if when is None:
            when = self.latest_played()
        if when is None:
            return []
        since = window_start(when, float(days))
        out = self._active_keys(since, when)
        out.sort(key=lambda item: (item[1], item[0]))
        return out

    def _active_keys(self, since: datetime, until: datetime) -> list[tuple[str, float]]:
        """Id and sort value of each player whose latest match is in [since, until]: on a
        database the store's two columns (``Store.active_keys``, after the open batch's
        rows are written), else from every record."""
        unit = self._unit
        if unit.lazy and hasattr(self.store, "active_keys"):
            unit.written()
            return self.store.active_keys(since, until)
        key = self._sort_key
        return [
            (p, key(self._steps.record_of(p, r)))
            for p, r in unit.known().items()
            if r[LAST] is not None and since <= r[LAST] <= until
        ]

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
        """The active players a rank filter lets in with ``players`` (a player or a
        party), ``needed`` of them after ``waited`` seconds: see
        :func:`rankcraft.matchmaking.find_opponents`."""
        from . import matchmaking

        return matchmaking.find_opponents(
            self,
            players,
            rank_filter,
            needed=needed,
            waited=waited,
            limit=limit,
            active_days=active_days,
        )

    def quality(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
    ) -> float:
        """How good a match ``sides`` would make, in [0, 1]: the expectation plugin's
        ``rankcraft_quality``, else the closeness of the win probabilities
        (:func:`rankcraft.matchmaking.quality`)."""
        from . import matchmaking

        return matchmaking.quality(self, sides, at=at, home=home)[0]

    def balance(
        self, players: Sequence[str], teams: int = 2, at: datetime | str | None = None
    ) -> Balanced:
        """``players`` split into ``teams`` fair teams (:func:`rankcraft.matchmaking.balance`)."""
        from . import matchmaking

        return matchmaking.balance(self, players, teams, at=at)

    def _reset_context(
        self,
        kind: str,
        when: datetime | None,
        since: datetime | None,
        every_days: float | None = None,
    ) -> ResetContext:
        """The context a season event ``kind`` at ``when`` hands the reset plugin."""
        steps = self._steps
        return ResetContext(
            kind=kind,
            at=when,
            skill_params=steps.skill_params,
            rank_params=None if self.ruleset.rank is None else self.ruleset.rank.params,
            decay=steps.object_decay(),
            since=since,
            ran=dict(self._seasons.ran),
            every_days=every_days,
        )

    def _after_resets(self, when: datetime, season: str | int | None = None) -> Mapping[str, Any]:
        """The players' rows as a match at ``when`` would meet them: the season events due
        by then applied to copies (``record`` runs them before rating the match); the
        league's rows themselves when none is due."""
        rows = self._unit.rows
        steps = self._steps
        seasons = self._seasons
        if steps.reset is None or not seasons.events or not seasons.due_by(when, season):
            return rows
        # (a free-for-all's evaluation predicts every pair at one time: project once while
        # no row and no schedule moment has changed)
        cached = getattr(self, "_projection", None)
        key = (when, season, tuple(seasons.moments), seasons.latest, len(rows))
        if (
            cached is not None
            and cached[0] == key
            and all(rows.get(p) is r for p, r in cached[1].items())
        ):
            return cached[2]  # type: ignore[no-any-return]
        source = {pid: row for pid, row in rows.items() if row is not None}
        reset = steps.reset
        current = {pid: self._steps.record_of(pid, row) for pid, row in source.items()}
        before = dict(current)

        def run(kind: str, moment: datetime, since: datetime | None, every: float | None) -> int:
            context = self._reset_context(kind, moment, since, every)
            changed = 0
            for record in reset([current[p] for p in sorted(current)], kind, context):
                if record.id in current and record != current[record.id]:
                    current[record.id] = record
                    changed += 1
            return changed

        due_before(seasons, when, run, season)
        projected: dict[str, Any] = dict(rows)
        to_tuple = steps.skill_form.to_tuple
        for pid, record in current.items():
            if record is not before[pid] and record.skill != before[pid].skill:
                row = list(source[pid])
                row[SKILL] = to_tuple(record.skill)
                projected[pid] = row
        self._projection = (key, source, projected)
        return projected

    # -- state documents -------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """The state document (docs/design.md): every player's state, ordered by id, with
        the ruleset's TOML and the season schedule, so that importing it into a new
        database needs nothing else and continues as this league would."""
        from . import __version__

        to_dict = self.codec.record_to_dict
        document: dict[str, Any] = {
            "ruleset": self.ruleset.name,
            "rankcraft": __version__,
            "ruleset_toml": dumps(self.ruleset),
        }
        if self._seasons.events:
            document["schedule"] = self._seasons.to_texts()
        document["players"] = [to_dict(r) for r in self.players()]
        return document

    def import_state(
        self,
        document: Mapping[str, Any],
        *,
        accept_ruleset: bool = False,
        max_future: float | None = MAX_FUTURE,
    ) -> int:
        """Load players from an export document (all of them, or none on any error).

        Players in the document replace records of the same id; its ``schedule`` (when
        each season event runs next) replaces the league's. Every state must be whole
        (no field is invented), and the document's ``ruleset_toml``, when given, must be
        a valid ruleset that rates as the league's does.

        :param accept_ruleset: import from a document whose ``ruleset_toml`` rates
            otherwise (``rankcraft import --accept-ruleset``), with an
            :class:`~rankcraft.ruleset.ImportedRulesetWarning` naming the differences.
        :param max_future: the most seconds a ``last_played`` may lie past this
            machine's clock (default 86400, as the service's ``--max-future``; None: no
            bound, for a history of made-up dates).
        :returns: the number of players imported.
        :raises StateError: the document does not fit this league's ruleset.
        """
        records = parse_export(document, self.ruleset.name, self.codec, max_future=max_future)
        differ = imported_ruleset(document, self.ruleset, self.plugins)
        if differ:
            shown = "; ".join(differ[:4]) + (f"; and {len(differ) - 4} more" if differ[4:] else "")
            text = (
                f"the document's ruleset ('ruleset_toml') rates otherwise than the league's "
                f"{self.ruleset.name!r}: {shown}"
            )
            if not accept_ruleset:
                raise StateError(
                    f"{text}; --accept-ruleset (accept_ruleset=True) imports its players anyway"
                )
            warnings.warn(ImportedRulesetWarning(f"{text}; imported as asked"), stacklevel=2)
        with self.batch():
            if self._seasons.events:
                lasts = [r.last_played for r in records if r.last_played is not None]
                self._seasons.imported(max(lasts, default=None))
            if document.get("schedule") is not None:
                self._seasons.adopt(document["schedule"])
            for record in records:
                self._unit.put_record(record)
        return len(records)

    # -- season events ---------------------------------------------------------------------

    def reset(self, kind: str, at: datetime | str | None = None) -> int:
        """Run a season event (e.g. ``"soft"``, ``"hard"``) through the reset plugin.

        All changed records are committed in one transaction.

        :returns: the number of players whose record changed.
        :raises InputError: the ruleset has no reset slot, or the plugin refuses ``kind``.
        """
        if self._steps.reset is None:
            raise InputError(
                f"ruleset {self.ruleset.name!r} has no [reset] slot: "
                f"no season events to run ({kind!r})"
            )
        when = parse_time(at, field="at") if isinstance(at, str) else at
        with self.batch():
            changed = self._run_reset(kind, when)
            if self._seasons.events:  # (every player went through it, up to now)
                self._unit.written()
                self._seasons.note_ran(kind, when, self.store.latest_played())
            return changed

    @property
    def catch_up_progress(self) -> Callable[[int, int], None] | None:
        """Called while a match dated after many due season events runs them (a
        catch-up of more than one ``[[resets]]`` event), with the events handled so far
        and the events due; None (the default) reports nothing. ``rankcraft`` draws it as
        a progress bar on a terminal."""
        return self._seasons.progress

    @catch_up_progress.setter
    def catch_up_progress(self, report: Callable[[int, int], None] | None) -> None:
        self._seasons.progress = report

    def _run_reset(
        self,
        kind: str,
        when: datetime | None,
        since: datetime | None = None,
        every_days: float | None = None,
    ) -> int:
        """Run one season event; returns the number of records it changed.

        The plugin returns only the records it changes (or any superset); a returned
        record that is the one it was given, or equal to it, is not written."""
        steps = self._steps
        assert steps.reset is not None
        context = self._reset_context(kind, when, since, every_days)
        scope = steps.reset_scope(kind, context) if steps.reset_scope is not None else None
        rows = self._unit.known() if scope is None else self._rows_in(scope)
        players = [self._steps.record_of(p, rows[p]) for p in sorted(rows)]
        returned = steps.reset(players, kind, context)
        if not returned:
            return 0
        given = {r.id: r for r in players}
        changed = 0
        for record in returned:
            old = given.get(record.id)
            if old is None:
                raise PluginError(f"reset plugin returned unknown player {record.id!r}")
            if record is not old and record != old:
                self._unit.put_record(record)
                changed += 1
        return changed

    def _rows_in(self, scope: PlayerScope) -> dict[str, Row]:
        """The rows of the players in a scope (a season event's, or the standings'). In
        memory, the league's rows filtered; over a database, the store's answer along its
        indexed columns with the rows the open transaction changed and has not written
        yet (the newer: the other cached rows are what the store has)."""
        unit = self._unit
        rows = unit.rows
        key = state_key(self._display)[1]
        tier = rank_tier(self._steps)

        def last_of(row: Row) -> datetime | None:
            return row[LAST]  # type: ignore[no-any-return]

        skill = self._steps.skill_form.to_object_unchecked
        rank_form = self._steps.rank_form
        rank = rank_form.to_object_unchecked if rank_form is not None else (lambda r: r)

        def key_of(row: Row) -> float:
            return key(skill(row[SKILL]), rank(row[RANK]))

        def tier_of(row: Row) -> str | None:
            return tier(rank(row[RANK]))

        chosen = in_scope(scope, last_of, key_of, tier_of)
        if not unit.lazy:
            return {pid: row for pid, row in rows.items() if row is not None and chosen(row)}
        out = {}
        for pid, record in self.store.load_where(scope).items():
            if pid not in unit.dirty:
                row = rows.get(pid)
                if row is None:
                    rows[pid] = row = self._steps.row_of(record)
                out[pid] = row
        for pid in unit.dirty:
            row = rows.get(pid)
            if row is not None and chosen(row):
                out[pid] = row
        return out

    def refresh(self, players: Iterable[str] | None = None) -> None:
        """Read again what other processes committed to the league's database.

        :param players: just these players' records (cheap: one row each); None: every
            record, when anything changed since this league last looked.

        A league in one process never needs this; a service with several workers over
        one database calls it before answering a read.
        """
        self._unit.refresh(players)

    @property
    def has_standings(self) -> bool:
        """Whether the ruleset gives league-wide labels (:meth:`standings`)."""
        return self._steps.standings is not None

    def standings(self, players: Iterable[str] | None = None) -> dict[str, str]:
        """League-wide labels per player (a tier such as Grandweaver, a percentile), from
        the rank plugin (or the update plugin without a rank slot); empty when neither
        offers them.

        :param players: only these players' labels (unknown ids have none). When the
            plugin says which players its labels depend on (``rankcraft_standings_scope``),
            only those and these are read: a page of a large league on a database does
            not read every player. Default: every player's label.
        """
        steps = self._steps
        if steps.standings is None:
            return {}
        with self._snapshot():  # (the players read and the census's counts: one state)
            latest = self.latest_played()
            wanted = None if players is None else set(players)
            scope = None
            if wanted is not None and steps.standings_scope is not None:
                scope = steps.standings_scope(latest)
            if scope is None:
                everyone = self.players()
                labels = steps.standings(everyone, self._census(latest, everyone))
                if wanted is None:
                    return dict(labels)
            else:
                assert wanted is not None  # (a scope is asked for only with players)
                rows = self._rows_in(scope)
                self._unit.fetch(wanted - rows.keys())
                for pid in wanted - rows.keys():
                    row = self._unit.rows.get(pid)
                    if row is not None:
                        rows[pid] = row
                records = [self._steps.record_of(p, rows[p]) for p in sorted(rows)]
                labels = steps.standings(records, self._census(latest))
        return {p: label for p, label in labels.items() if p in wanted}

    def _census(
        self, latest: datetime | None, everyone: list[PlayerRecord] | None = None
    ) -> Census:
        """Counts of the league's players for ``rankcraft_standings``: a database's SQL
        counts (``Store.count_below``, after the open batch's rows are written), else
        those of every record (``everyone`` when already read; else read when first
        counted, so a plugin that never counts reads nothing more)."""
        key = self.codec.sort_key
        if everyone is not None:
            return Census.of(everyone, key, latest)
        count = getattr(self.store, "count_below", None)
        if self._unit.lazy and count is not None:
            self._unit.written()
            return Census(latest, count, key)
        counters: list[CountFn] = []

        def count_everyone(
            keys: Sequence[float], since: datetime | None, matches_from: int
        ) -> tuple[int, list[int]]:
            if not counters:
                counters.append(records_counter(self.players(), key))
            return counters[0](keys, since, matches_from)

        return Census(latest, count_everyone, key)

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> League:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
