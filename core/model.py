"""Value types that cross the core/plugin boundary.

Everything here is an attrs class (or a ``NamedTuple`` where the per-match loop creates
many of them). Validation happens where values enter (:mod:`rankcraft.io` for matches,
:mod:`rankcraft.ruleset` for rulesets); inside the loop the values are trusted.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import attrs

from .census import Census as Census
from .census import Counted as Counted
from .census import CountFn as CountFn
from .census import records_counter as records_counter
from .statefields import Role as Role
from .statefields import Scale as Scale
from .statefields import field_of_role as field_of_role
from .statefields import item_names as item_names
from .statefields import scale_of as scale_of
from .statefields import shown_state as shown_state
from .statefields import state_field as state_field

State = Any
"""A plugin's state: an attrs instance whose fields are the plugin's documented state fields."""


PERIOD_MODES = ("match", "batch", "live")
"""The ``[period] mode`` values a ruleset may choose (docs/periods.md)."""


def _modes(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A non-empty tuple of known period modes."""
    if (
        type(value) is not tuple
        or not value
        or any(m not in PERIOD_MODES for m in value)  # (a str is in the tuple or not)
    ):
        raise ValueError(
            f"{attribute.name!r} must be a non-empty tuple of period modes "
            f"({', '.join(map(repr, PERIOD_MODES))}): {value!r}"
        )


@attrs.frozen(kw_only=True)
class Needs:
    """What a plugin reads from the skill states it is given.

    Attributes:
        fields: state field names that must exist (e.g. ``("mu", "phi")``).
        roles: field roles that must exist (``"location"``, ``"spread"``).
        opponents_at_onset: (the update slot, ``batch`` and ``live`` modes) hand the
            update the opponents as they stand at the rating period's onset: an opponent
            who competed before the period is grown by one period with the skill
            plugin's ``rankcraft_decay``, as Glickman's Glicko-1 grows every RD before it
            rates anyone (default false: opponents as they stood when the match began).
        whole_match: (the team slot) the pairings carry a whole match's outcome, computed
            at once by a joint model (Weng-Lin, TrueSkill): they cannot be kept for a
            later rating period nor rescored for a quitter, so the ruleset must rate match
            by match (``[period] mode = "match"``) and let results stand (``[quits]
            quitter = "result"``); any other ruleset is refused when loaded (default
            false).
        plain_singles: (the team slot) for two sides of one player each, the plugin's
            pairings are each player's plain result against the other (the other's state,
            the score from the places, the match's weight; partial play scales nothing
            there): the core then makes those pairings itself and never calls the team
            hooks for such a match, for any plugin that declares it (default false).
        modes: the ``[period]`` modes the plugin rates correctly in this slot; a ruleset
            with another mode is refused when loaded, naming the plugin, its modes and the
            ruleset's (default: all three, ``("match", "batch", "live")``, what a plugin
            that declares nothing was always given).
    """

    fields: tuple[str, ...] = ()
    roles: tuple[Role, ...] = ()
    opponents_at_onset: bool = False
    whole_match: bool = False
    plain_singles: bool = False
    modes: tuple[str, ...] = attrs.field(default=PERIOD_MODES, validator=_modes)


class Pairing(NamedTuple):
    """One result a player's update digests.

    Attributes:
        opponent: the (possibly virtual) opponent's skill state.
        score: the player's result against it: 1 win, 0.5 draw, 0 loss.
        weight: how much this result counts, in (0, 1] (the match's ``weight`` times
            any split the team plugin applies).
    """

    opponent: State
    score: float
    weight: float


@attrs.frozen(kw_only=True, eq=False)
class Match:
    """A validated match (docs/design.md, the match document), immutable (a deep copy is
    the match itself). Build one with :func:`rankcraft.io.parse_match`. Attributes:
        id: unique id within the league.
        played_at: when it was played, timezone-aware UTC.
        teams: player ids per side; at least two sides, none empty, no player twice.
        scores: one number per side, higher is better (or None when ``ranks`` is given).
        ranks: one place per side, 1 is best (or None when ``scores`` is given).
        places: the outcome as places per side, 1 is best, equal places tie.
        seconds_played: seconds each player was in the match, shaped like ``teams``.
        quit: players who left before the end.
        weight: whole-match weight in (0, 1].
        meta: free data carried into the report.
        home: index of the side playing at home, or None (a neutral venue, or unknown).
    """

    id: str
    played_at: datetime
    teams: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...] | None = None
    ranks: tuple[int, ...] | None = None
    places: tuple[int, ...]
    seconds_played: tuple[tuple[int, ...], ...] | None = None
    quit: tuple[str, ...] = ()
    weight: float = 1.0
    meta: Mapping[str, Any] = attrs.field(factory=dict)
    home: int | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> Match:
        return self

    def to_dict(self) -> dict[str, Any]:
        """The match in the JSON line format (docs/design.md, the match document)."""
        out: dict[str, Any] = {
            "id": self.id,
            "played_at": format_time(self.played_at),
            "teams": [list(side) for side in self.teams],
        }
        if self.scores is not None:
            out["scores"] = list(self.scores)
        if self.ranks is not None:
            out["ranks"] = list(self.ranks)
        if self.seconds_played is not None:
            out["seconds_played"] = [list(side) for side in self.seconds_played]
        if self.quit:
            out["quit"] = list(self.quit)
        if self.weight != 1.0:
            out["weight"] = self.weight
        if self.meta:
            out["meta"] = dict(self.meta)
        if self.home is not None:
            out["home"] = self.home
        return out


_formatted: dict[datetime, str] = {}


def format_time(moment: datetime) -> str:
    """ISO-8601 text of a UTC time with a ``Z`` suffix, e.g. ``2024-05-01T20:00:00Z``.

    (Remembers the last few thousand times it wrote: a replay writes each match's time
    three times, and histories repeat days.)"""
    # (only a UTC time is looked up: an equal time in another zone is another text)
    text = _formatted.get(moment) if moment.tzinfo is UTC else None
    if text is None:
        # (isoformat's first 19 characters are strftime's text, in half the time, from
        # the year 1000: strftime writes earlier years without leading zeros)
        whole = (
            moment.isoformat()[:19] if moment.year >= 1000 else moment.strftime("%Y-%m-%dT%H:%M:%S")
        )
        text = whole + (f".{moment.microsecond:06d}Z" if moment.microsecond else "Z")
        if moment.tzinfo is UTC:  # (equal times in other zones would share the text)
            if len(_formatted) >= 4096:
                _formatted.clear()
            _formatted[moment] = text
    return text


def pair_score(places: Sequence[int], side: int, other: int) -> float:
    """Result of ``side`` against ``other`` from places (1 best): 1, 0.5 or 0."""
    mine, theirs = places[side], places[other]
    return 1.0 if mine < theirs else 0.0 if mine > theirs else 0.5


@attrs.frozen(kw_only=True)
class PlayerRecord:
    """What a league keeps per player.

    Attributes:
        id: the player id.
        skill: the skill plugin's state.
        rank: the rank plugin's state, or None when the ruleset has no rank slot.
        matches: matches played (recorded), including any not yet rated.
        last_played: start of the player's latest match (UTC), or None.
        pending: results recorded but not yet rated: the open rating period's results in
            ``batch`` and ``live`` modes, or a deferred loss (INVERSUS quits) in ``match``
            mode, applied when the player's next match starts.
        period: ``batch``/``live`` modes: index of the rating period ``skill`` belongs to
            (None before the first).
        period_matches: matches recorded in the open period (their results are ``pending``).
        base: ``live`` mode: the skill at the start of the open period (``skill`` shows it
            re-rated with every pending result); None otherwise.
    """

    id: str
    skill: State
    rank: State | None = None
    matches: int = 0
    last_played: datetime | None = None
    pending: tuple[Pairing, ...] = ()
    period: int | None = None
    period_matches: int = 0
    base: State | None = None


class PlayerContext:
    """Per-player context handed to ``rankcraft_update`` and ``rankcraft_rank``.

    Attributes:
        match: the match being rated (None when a ``batch`` period is closed or a
            deferred result is applied: the results then come from several matches).
        player: the player's id.
        side: index of the player's side in ``match.teams``.
        matches: rated matches the player had before this one (before the open rating
            period in ``batch`` and ``live`` modes).
        mode: the ruleset's period mode: ``"match"``, ``"batch"`` or ``"live"``.
        expected: pre-match probability that the player's side wins, in [0, 1].
        score: the side's result: mean pairwise score against the other sides, in [0, 1].
        pairings: the pairings the player's update received.
        factors: numbers the plugins explain the change with (``explain`` adds them); they
            are kept in the match report.
    """

    __slots__ = (
        "expected",
        "factors",
        "match",
        "matches",
        "mode",
        "pairings",
        "player",
        "score",
        "side",
    )

    def __init__(
        self,
        match: Match | None,
        player: str,
        side: int,
        matches: int,
        expected: float,
        score: float,
        pairings: Sequence[Pairing],
        mode: str = "match",
    ) -> None:
        self.mode = mode
        self.match = match
        self.player = player
        self.side = side
        self.matches = matches
        self.expected = expected
        self.score = score
        self.pairings = pairings
        self.factors: dict[str, float] = {}

    def explain(self, name: str, value: float) -> None:
        """Record a factor used for this player's change (e.g. ``k``), kept in the report."""
        self.factors[name] = value


@attrs.frozen(kw_only=True)
class ResetContext:
    """Context of a season event handed to ``rankcraft_reset``.

    Attributes:
        kind: the event, e.g. ``"soft"`` or ``"hard"``; plugins refuse kinds they lack.
        at: when the event happens (UTC), or None for "now, outside time".
        skill_params: params of the ruleset's skill (update) slot.
        rank_params: params of the ruleset's rank slot, or None without one (a reset
            plugin that moves ranks reads the rank layer's own table, e.g. the ladder's
            tiers, instead of repeating it in ``[reset.params]``).
        decay: the skill plugin's decay, ``(state, periods) -> state``, or None when the
            skill does not decay (a reset may add rating periods of uncertainty).
        since: when the previous event of this schedule entry was due (a scheduled event:
            its moment less ``every_days``, or the schedule's start; an event triggered by
            the data: when the entry last ran, or the league's first match); None for an
            event run by hand, which knows no previous one. A player whose
            ``last_played`` is at or after ``since`` played in the period the event closes.
        ran: when each kind of event last ran over the league, scheduled or by hand (a
            kind absent has not run since the league began or since players were last
            imported). A reset plugin may read it to say which players an event can change
            (``rankcraft_reset_scope``): e.g. every player idle since the last ``"hard"``
            event went through it.
        every_days: a dated event's interval, in days (its ``since`` is always that long
            before ``at``); None for an event triggered by the data or run by hand.
    """

    kind: str
    at: datetime | None = None
    skill_params: Any = None
    rank_params: Any = None
    decay: Callable[[Any, float], Any] | None = None
    since: datetime | None = None
    ran: Mapping[str, datetime] = attrs.field(factory=dict)
    every_days: float | None = None

    def played(self, record: PlayerRecord) -> bool:
        """Whether ``record``'s player played in the period this event closes (always
        True without ``since``: an event run by hand counts every player)."""
        since = self.since
        if since is None:
            return True
        last = record.last_played
        return last is not None and last >= since


def window_start(latest: datetime, days: float) -> datetime:
    """The start of the window of ``days`` days (≥ 0) that ends at ``latest``:
    ``latest`` less that many days, or the earliest time a datetime holds when the
    window reaches back before the year 1 (every player is inside it).

    >>> window_start(datetime(2024, 3, 1, tzinfo=UTC), 1.5)
    datetime.datetime(2024, 2, 28, 12, 0, tzinfo=datetime.timezone.utc)
    >>> window_start(datetime(2024, 3, 1, tzinfo=UTC), 1e6).year
    1
    """
    try:
        return latest - timedelta(days=days)
    except OverflowError:
        return datetime.min.replace(tzinfo=latest.tzinfo)


_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold_ascii(text: str) -> str:
    """``text`` with its ASCII capitals A-Z made small; every other character as it is.

    The case rule of a player-id search (:meth:`rankcraft.League.search`, the
    leaderboard's ``holding``): the one every store answers alike, SQLite's ``LIKE``
    included, so that a search finds the same players in memory and on a database.

    >>> fold_ascii("Ann-ÉLISE")
    'ann-Élise'
    """
    return text.translate(_ASCII_FOLD)


def id_holds(player: str, text: str) -> bool:
    """Whether the id ``player`` holds ``text``, ASCII letters in either case.

    >>> id_holds("Ann", "aN"), id_holds("Ann", "x"), id_holds("Ann", "")
    (True, False, True)
    """
    return fold_ascii(text) in fold_ascii(player)


@attrs.frozen(kw_only=True)
class PlayerScope:
    """Which players a hook needs: those a season event can change
    (``rankcraft_reset_scope``), or those league-wide labels depend on
    (``rankcraft_standings_scope``), so that the league reads only those. A player is in
    the scope when any condition given holds; with no condition, nobody is.

    The conditions are those a store on disk answers along its indexed columns.

    Attributes:
        played_since: players whose latest match (``last_played``) is at or after it.
        sort_key_from: players whose leaderboard value (:meth:`rankcraft.Display.value`:
            rank points with a rank layer, else the skill's location less ``[display]
            conservative`` times its spread) is at least it; a finite number.
        tiers: players whose rank state's ``tier`` is one of these.
    """

    played_since: datetime | None = None
    sort_key_from: float | None = None
    tiers: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    @classmethod
    def played_within(cls, days: float, latest: datetime) -> PlayerScope:
        """The players whose latest match is at most ``days`` days (≥ 0) before
        ``latest`` (the league's latest match, say): ``played_since`` at
        :func:`window_start`."""
        return cls(played_since=window_start(latest, days))

    def __attrs_post_init__(self) -> None:
        key = self.sort_key_from
        if key is not None and (isinstance(key, bool) or not math.isfinite(key)):
            raise ValueError(f"'sort_key_from' must be a finite number: {key!r}")
        if not all(isinstance(t, str) for t in self.tiers):
            raise ValueError(f"'tiers' must be tier names: {self.tiers!r}")


def shifted(state: State, field: str, value: float) -> State:
    """``state`` with its field ``field`` (a location) set to ``value``, the state class's
    validators not run: a virtual opponent handed to an update, such as the team plugins'
    opponent shifted by the gap between a member and their side's mean, which may lie
    past the range a stored rating may hold (an evolve would refuse that match). It is
    stored only inside an open rating period's pending pairings, and read back so.

    >>> import attrs
    >>> @attrs.frozen
    ... class Skill:
    ...     rating: float = attrs.field(validator=attrs.validators.le(1e6))
    >>> shifted(Skill(1500.0), "rating", 2e6)
    Skill(rating=2000000.0)
    """
    cls = type(state)
    names = _field_names.get(cls, ())
    if names == ():
        names = _field_names[cls] = _plain_fields(cls)
    if names is None:
        out = copy.copy(state)
        if getattr(out, _HASH_CACHE, None) is not None:  # (the copy hashes its own value)
            object.__setattr__(out, _HASH_CACHE, None)
    else:
        out = object.__new__(cls)  # (field by field: copy.copy took 5 us, this 0.8)
        for name in names:
            object.__setattr__(out, name, getattr(state, name))
    object.__setattr__(out, field, value)
    return out


_field_names: dict[type, tuple[str, ...] | None] = {}
_HASH_CACHE = "_attrs_cached_hash"
"""Where an attrs class with ``cache_hash=True`` keeps its hash (attrs' own name)."""


def _plain_fields(cls: type) -> tuple[str, ...] | None:
    """The attrs fields of ``cls`` when they are all an instance holds (a slotted class
    with no other slot: no cached hash, no ``__dict__``), else None: copy it whole."""
    names = tuple(f.name for f in attrs.fields(cls))
    slots: set[str] = set()
    for klass in cls.__mro__[:-1]:  # (object has no slots)
        declared = klass.__dict__.get("__slots__")
        if declared is None:
            return None  # a class in the chain gives instances a __dict__
        slots.update([declared] if isinstance(declared, str) else declared)
    return names if slots - {"__weakref__"} <= set(names) else None


@attrs.frozen(kw_only=True)
class PlayerChange:
    """One participant's part of a :class:`Report`.

    Attributes:
        player: the id. side: index of their side.
        skill_before: stored skill before the match. skill_used: the state the match used
        (after decay; equal to ``skill_before`` without decay). skill_after: the new skill.
        rank_before, rank_after: rank states (None without a rank slot).
        factors: numbers the plugins explained the change with (e.g. ``k``).
    """

    player: str
    side: int
    skill_before: State
    skill_used: State
    skill_after: State
    rank_before: State | None = None
    rank_after: State | None = None
    factors: Mapping[str, float] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Report:
    """What happened in one rated match, kept with the match.

    Attributes:
        match_id: the match. played_at: its time (UTC).
        expected: pre-match expected score per side (the expectation hook's answer: a
            win probability where draws cannot happen), summing to 1.
        changes: one :class:`PlayerChange` per participant, in the order of ``teams``.
    """

    match_id: str
    played_at: datetime
    expected: tuple[float, ...]
    changes: tuple[PlayerChange, ...]

    def change(self, player: str) -> PlayerChange:
        """The change of ``player`` in this match (KeyError if they did not play)."""
        for change in self.changes:
            if change.player == player:
                return change
        raise KeyError(player)
