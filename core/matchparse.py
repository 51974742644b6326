"""Validation of one match: the match document's schema and :func:`parse_match`, the one
validator of matches (every way in, files, dicts and the HTTP service, comes through it),
with the parsing of times and the fast path of the commonest match (examples:
:mod:`rankcraft.io`, which these names are read from too).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from .errors import MatchError
from .fields import Body, Field
from .model import Match
from .suggest import did_you_mean

_PLAYER = Field("player", "string", min_length=1, description="a player id")
MATCH = Body(
    "a match",
    (
        Field(
            "id",
            "string",
            required=True,
            min_length=1,
            description="unique in a league (no NUL character, no lone surrogate)",
        ),
        Field(
            "played_at",
            "string",
            required=True,
            description="an ISO-8601 date or date-time; no zone means UTC; not earlier "
            "than the latest match of any of its players",
        ),
        Field(
            "teams",
            "array",
            required=True,
            min_items=2,
            items=Field("side", "array", min_items=1, items=_PLAYER),
            description="the sides, each a non-empty list of player ids; no player twice",
        ),
        Field(
            "scores",
            ("array", "null"),
            items=Field("score", "number"),
            description="one finite number per side, higher is better (give exactly one "
            "of scores and ranks)",
        ),
        Field(
            "ranks",
            ("array", "null"),
            items=Field("rank", "integer", minimum=1),
            description="one place per side, 1 is best (give exactly one of scores and ranks)",
        ),
        Field(
            "seconds_played",
            ("array", "null"),
            items=Field("side", "array", items=Field("seconds", "integer", minimum=0)),
            description="the seconds each player played, shaped exactly like teams",
        ),
        Field(
            "quit",
            ("array", "null"),
            unique=True,
            items=Field("player", "string"),
            description="players (each in teams) who left before the end",
        ),
        Field(
            "weight",
            "number",
            exclusive_minimum=0,
            maximum=1,
            default=1,
            description="how much the whole match counts",
        ),
        Field(
            "home",
            ("integer", "null"),
            minimum=0,
            description="the index of the side at home (below the number of sides); "
            "null: a neutral venue or unknown",
        ),
        Field(
            "meta",
            ("object", "null"),
            description="free data, kept with the match, never read by the math",
        ),
        Field(
            "forecast",
            ("object", "null"),
            description="an outside forecast, kept as meta.forecast, never read by the math",
        ),
    ),
    description="one match: the match document of docs/design.md",
    schema_extra={
        "anyOf": [
            {"required": [key], "properties": {key: {"type": "array"}}}
            for key in ("scores", "ranks")
        ]
    },
)
"""The match document's keys, their JSON types and the constraints of each value alone:
the source of the service's match schema (``/openapi.json``). :func:`parse_match` is the
one validator of matches (and also checks the rules across keys: one score or rank per
side, ``seconds_played`` shaped like ``teams``, ``quit`` players in ``teams``, ``home``
a side); tests/test_openapi.py probes that the two agree."""

MATCH_KEYS = MATCH.keys
"""Keys a match line may have. ``forecast`` (an outside forecast) is carried like ``meta``."""

_time_cache: dict[str, datetime] = {}


def parse_time(text: Any, *, field: str = "played_at", match_id: str | None = None) -> datetime:
    """Parse an ISO-8601 date or date-time; no zone means UTC. Returns an aware UTC time."""
    cached = _time_cache.get(text) if isinstance(text, str) else None
    if cached is not None:
        return cached
    if not isinstance(text, str):
        raise MatchError(
            f"{field!r} must be an ISO-8601 date or date-time string: {text!r}", match_id=match_id
        )
    try:
        moment = datetime.fromisoformat(text)
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except ValueError:
        raise MatchError(
            f"{field!r} is not an ISO-8601 date or date-time: {text!r}", match_id=match_id
        ) from None
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first representable UTC time
        raise MatchError(
            f"{field!r} is out of range in UTC (years 1 to 9999): {text!r}", match_id=match_id
        ) from None
    if len(_time_cache) > 50_000:
        _time_cache.clear()
    _time_cache[text] = moment
    return moment


_FLOAT_MAX = sys.float_info.max


def _number(value: Any) -> bool:
    """A finite number a float can hold (an ``int`` beyond 1.8e308 has no float)."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and -_FLOAT_MAX <= value <= _FLOAT_MAX


def bad_text(text: str) -> str | None:
    """Why an id cannot be stored (a NUL, or a lone surrogate no UTF-8 can hold), or None."""
    if "\x00" in text:
        return "holds a NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "holds a lone surrogate (not UTF-8 text)"
    return None


_new_match = object.__new__
_NO_META: Mapping[str, Any] = MappingProxyType({})


def build_match(
    match_id: str,
    played_at: datetime,
    teams: tuple[tuple[str, ...], ...],
    outcome: tuple[tuple[float, ...] | None, tuple[int, ...] | None, tuple[int, ...]],
    seconds: tuple[tuple[int, ...], ...] | None,
    extras: tuple[tuple[str, ...], int | None, float, Mapping[str, Any]],
) -> Match:
    """A :class:`Match` from validated fields, set one by one (equal to ``Match(...)``;
    attrs' frozen ``__init__`` costs twice as much, and the loop builds one per match).
    Each field is written by its slot's own descriptor, a third less than
    ``object.__setattr__`` by name."""
    match = _new_match(Match)
    _ID(match, match_id)
    _PLAYED_AT(match, played_at)
    _TEAMS(match, teams)
    _SCORES_(match, outcome[0])
    _RANKS(match, outcome[1])
    _PLACES(match, outcome[2])
    _SECONDS(match, seconds)
    _QUIT(match, extras[0])
    _HOME(match, extras[1])
    _WEIGHT(match, extras[2])
    _META(match, extras[3])
    return match


(_ID, _PLAYED_AT, _TEAMS, _SCORES_, _RANKS, _PLACES, _SECONDS, _QUIT, _HOME, _WEIGHT, _META) = (
    Match.__dict__[name].__set__
    for name in (
        "id",
        "played_at",
        "teams",
        "scores",
        "ranks",
        "places",
        "seconds_played",
        "quit",
        "home",
        "weight",
        "meta",
    )
)


_SIDES: dict[tuple[str, ...], tuple[str, ...]] = {}
_SCORES: dict[tuple[Any, ...], tuple[float, ...]] = {}
_RANK_PAIRS: dict[tuple[int, int], tuple[int, int]] = {}
"""Two-place ranks seen, each tuple shared by the matches that have it (:func:`_duel`)."""
_PLACES_OF_TWO = {1: (1, 2), 0: (1, 1), -1: (2, 1)}
_NO_EXTRAS: tuple[tuple[str, ...], None, float, Mapping[str, Any]] = ((), None, 1.0, _NO_META)


def _keep(cache: dict[Any, Any], key: Any, value: Any, most: int) -> Any:
    """Remember ``value`` (an immutable tuple) under ``key`` so that equal matches share
    one object: a history repeats its sides and scores, and a league in memory keeps
    every match. The cache is emptied when it holds ``most``."""
    if len(cache) >= most:
        cache.clear()
    cache[key] = value
    return value


class _Fail:
    """Builds a :class:`MatchError` for one match (its id and line)."""

    __slots__ = ("line", "match_id")

    def __init__(self, match_id: str, line: int | None) -> None:
        self.match_id = match_id
        self.line = line

    def __call__(self, message: str, field: str | None = None) -> MatchError:
        return MatchError(message, match_id=self.match_id, line=self.line, field=field)


def _teams(raw: Any, fail: _Fail) -> tuple[tuple[str, ...], ...]:
    if type(raw) is not list or len(raw) < 2:
        raise fail(f"'teams' must be a list of at least 2 sides: {raw!r}")
    teams = []
    count = 0
    for i, side in enumerate(raw):
        if type(side) is not list or not side:
            raise fail(f"'teams[{i}]' must be a non-empty list of player ids: {side!r}")
        for player in side:
            if type(player) is not str or not player:
                raise fail(
                    f"'teams[{i}]' has a player id that is not a non-empty string: {player!r}"
                )
            if not player.isascii() or "\x00" in player:
                bad = bad_text(player)
                if bad is not None:
                    raise fail(f"'teams[{i}]' has a player id that {bad}: {player!r}", "teams")
        count += len(side)
        key = tuple(side)
        teams.append(_SIDES.get(key) or _keep(_SIDES, key, key, 200_000))
    if (count > 2 and len({p for side in teams for p in side}) != count) or (
        count == 2 and teams[0][0] == teams[1][0]
    ):
        flat = [p for side in teams for p in side]
        twice = next(p for p in flat if flat.count(p) > 1)
        raise fail(f"player {twice!r} appears twice in 'teams'", "teams")
    return tuple(teams)


def _outcome(
    data: Mapping[str, Any], n: int, fail: _Fail
) -> tuple[tuple[float, ...] | None, tuple[int, ...] | None, tuple[int, ...]]:
    """(scores, ranks, places) of a match with ``n`` sides."""
    scores_raw = data.get("scores")
    ranks_raw = data.get("ranks")
    if (scores_raw is None) == (ranks_raw is None):
        raise fail(
            "give exactly one of 'scores' and 'ranks' "
            f"(scores: {scores_raw!r}, ranks: {ranks_raw!r})",
            "scores",
        )
    if scores_raw is not None:
        if type(scores_raw) is not list or len(scores_raw) != n:
            raise fail(f"'scores' must be a list of {n} numbers, one per side: {scores_raw!r}")
        for value in scores_raw:
            if not _number(value):
                raise fail(f"'scores' must hold finite numbers: {value!r} in {scores_raw!r}")
        if all(type(v) is int for v in scores_raw):  # (floats: -0.0 would equal 0.0)
            key = tuple(scores_raw)  # whole-number scores repeat: share their tuple
            scores = _SCORES.get(key) or _keep(_SCORES, key, tuple(map(float, key)), 10_000)
        else:
            scores = tuple(map(float, scores_raw))
        if n == 2:
            a, b = scores
            return scores, None, _PLACES_OF_TWO[(a > b) - (a < b)]
        return scores, None, tuple(1 + sum(1 for other in scores if other > s) for s in scores)
    if type(ranks_raw) is not list or len(ranks_raw) != n:
        raise fail(f"'ranks' must be a list of {n} places, one per side: {ranks_raw!r}")
    for value in ranks_raw:
        if type(value) is not int or value < 1:
            raise fail(f"'ranks' must hold whole numbers >= 1: {value!r} in {ranks_raw!r}")
    ranks = tuple(ranks_raw)
    return None, ranks, ranks


def _seconds(
    raw: Any, teams: tuple[tuple[str, ...], ...], fail: _Fail
) -> tuple[tuple[int, ...], ...]:
    if (
        type(raw) is not list
        or len(raw) != len(teams)
        or any(type(s) is not list or len(s) != len(t) for s, t in zip(raw, teams, strict=False))
    ):
        raise fail(f"'seconds_played' must be shaped like 'teams': {raw!r}")
    for side in raw:
        for value in side:
            if type(value) is not int or value < 0:
                raise fail(f"'seconds_played' must hold whole numbers >= 0: {value!r}")
    return tuple(tuple(side) for side in raw)


def _extras(
    data: Mapping[str, Any], teams: tuple[tuple[str, ...], ...], fail: _Fail, stored: bool
) -> tuple[tuple[str, ...], int | None, float, Mapping[str, Any]]:
    """The optional fields of a match: (quit, home, weight, meta with the forecast)."""
    n = len(teams)
    quit: tuple[str, ...] = ()
    quit_raw = data.get("quit")
    if quit_raw is not None:
        players = {p for side in teams for p in side}
        if type(quit_raw) is not list:
            raise fail(f"'quit' must be a list of player ids: {quit_raw!r}")
        for player in quit_raw:
            if type(player) is not str or player not in players:
                raise fail(f"'quit' names {player!r}, who is not in 'teams'")
        if len(set(quit_raw)) != len(quit_raw):
            raise fail(f"'quit' names a player twice: {quit_raw!r}")
        quit = tuple(quit_raw)
    home = data.get("home")
    if home is not None and (type(home) is not int or not 0 <= home < n):
        raise fail(f"'home' must be the index of the side at home (0 to {n - 1}) or null: {home!r}")
    weight = data.get("weight", 1.0)
    if not _number(weight) or not 0 < weight <= 1:
        raise fail(f"'weight' must be a number in (0, 1]: {weight!r}")
    meta: Mapping[str, Any] | None = data.get("meta")
    if meta is None:
        meta = _NO_META
    elif not isinstance(meta, Mapping):
        raise fail(f"'meta' must be an object: {meta!r}")
    elif meta and not stored:
        _check_json(meta, "meta", 0, fail)
    forecast = data.get("forecast")
    if forecast is not None:
        if not isinstance(forecast, Mapping):
            raise fail(f"'forecast' must be an object: {forecast!r}")
        if not stored:
            _check_json(forecast, "forecast", 0, fail)
        meta = {**meta, "forecast": forecast}
    return quit, home, float(weight), meta


def _check_json(value: Any, path: str, depth: int, fail: _Fail) -> None:
    """Refuse what no store can keep in free data (``meta``, ``forecast``): values that
    are not JSON (NaN, infinity, numbers beyond a float, other types), keys that are not
    strings, text that is not UTF-8 or holds NUL, nesting deeper than 64."""
    if depth > 64:
        raise fail(f"'{path}' nests deeper than 64", path)
    kind = type(value)
    if kind is str:
        bad = bad_text(value)
        if bad is not None:
            raise fail(f"'{path}' {bad}: {value[:40]!r}", path)
    elif kind is float or kind is int:
        if not _number(value):
            raise fail(f"'{path}' must be a finite number: {value!r}"[:300], path)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if type(key) is not str or bad_text(key) is not None:
                raise fail(f"'{path}' has a key that is not text: {key!r}"[:300], path)
            _check_json(item, f"{path}.{key}", depth + 1, fail)
    elif kind is list or kind is tuple:
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]", depth + 1, fail)
    elif value is not None and kind is not bool:
        raise fail(f"'{path}' must hold JSON values: {value!r}"[:300], path)


_SINGLES: dict[str, tuple[str]] = {}


def _duel(data: dict[str, Any]) -> Match | None:
    """:func:`parse_match` of the commonest match, written out: only ``id``,
    ``played_at``, ``teams`` of two one-player sides and ``scores`` as two whole numbers
    or ``ranks`` as two places, every check passing. Anything else (a failing check
    included) is None: the general steps then parse the match, or name its fault. Gives
    the same :class:`Match` as they do."""
    text = data.get("played_at")
    if type(text) is not str:
        return None
    played_at = _time_cache.get(text)
    if played_at is None:
        try:
            played_at = parse_time(text)
        except MatchError:
            return None
    match_id = data.get("id")
    teams = data.get("teams")
    if type(match_id) is not str or type(teams) is not list or len(teams) != 2:
        return None
    first, second = teams
    if type(first) is not list or type(second) is not list or len(first) != 1 or len(second) != 1:
        return None
    a, b = first[0], second[0]
    if (
        type(a) is not str
        or type(b) is not str
        or not a
        or not b
        or a == b
        or not match_id
        or not (match_id + a + b).isascii()
        or "\x00" in match_id
        or "\x00" in a
        or "\x00" in b
    ):
        return None
    outcome = _duel_outcome(data)
    if outcome is None:
        return None
    side_a = _SINGLES.get(a) or _keep(_SINGLES, a, (a,), 200_000)
    side_b = _SINGLES.get(b) or _keep(_SINGLES, b, (b,), 200_000)
    return build_match(match_id, played_at, (side_a, side_b), outcome, None, _NO_EXTRAS)


def _duel_outcome(
    data: dict[str, Any],
) -> tuple[tuple[float, ...] | None, tuple[int, ...] | None, tuple[int, ...]] | None:
    """(scores, ranks, places) of :func:`_duel`'s match: two whole-number scores, or two
    places (each a whole number >= 1); None for anything else."""
    scores = data.get("scores")
    if scores is None:
        ranks = data.get("ranks")
        if type(ranks) is not list or len(ranks) != 2:
            return None
        first, second = ranks
        if type(first) is not int or type(second) is not int or first < 1 or second < 1:
            return None
        key = (first, second)
        places = _RANK_PAIRS.get(key)
        if places is None:
            places = _keep(_RANK_PAIRS, key, key, 10_000)
        return None, places, places
    if type(scores) is not list or len(scores) != 2:
        return None
    won, lost = scores
    if type(won) is not int or type(lost) is not int:
        return None
    found = _SCORES.get((won, lost))
    if found is None:
        if not (-_FLOAT_MAX <= won <= _FLOAT_MAX and -_FLOAT_MAX <= lost <= _FLOAT_MAX):
            return None
        found = _keep(_SCORES, (won, lost), (float(won), float(lost)), 10_000)
    return found, None, _PLACES_OF_TWO[(won > lost) - (won < lost)]


def parse_match(data: Any, *, line: int | None = None, stored: bool = False) -> Match:
    """Validate one match (the match document of docs/design.md) and return it as a
    :class:`Match`. The one validator of matches: every way in (files, dicts, the HTTP
    service) comes through it.

    :param stored: the match is one a store wrote (validated when it was recorded): its
        ``meta`` and ``forecast`` are taken without walking them again.
    :raises MatchError: naming the field and the value (and ``line`` when given).
    """
    if type(data) is dict and len(data) == 4:  # (the common shape: checked first, cheaply)
        match = _duel(data)
        if match is not None:
            return match
    if type(data) is not dict and not isinstance(data, Mapping):
        raise MatchError(f"a match must be a JSON object, got {type(data).__name__}", line=line)
    match_id = data.get("id")
    if type(match_id) is not str or not match_id:
        raise MatchError(f"'id' must be a non-empty string: {match_id!r}", line=line)
    bad = bad_text(match_id)
    if bad is not None:
        raise MatchError(f"'id' {bad}: {match_id!r}", line=line, field="id")
    fail = _Fail(match_id, line)
    if not MATCH_KEYS.issuperset(data):
        extra = sorted(set(data) - MATCH_KEYS)
        raise fail(
            f"unknown key(s) {', '.join(map(repr, extra))}"
            f"{did_you_mean(str(extra[0]), MATCH_KEYS)} (allowed: "
            f"{', '.join(sorted(MATCH_KEYS))})"
        )
    text = data.get("played_at")
    played_at = _time_cache.get(text) if type(text) is str else None
    if played_at is None:
        if "played_at" not in data:
            raise fail("'played_at' is missing")
        try:
            played_at = parse_time(text, match_id=match_id)
        except MatchError as exc:
            raise fail(exc.reason) from None
    teams = _teams(data.get("teams"), fail)
    seconds = data.get("seconds_played")
    return build_match(
        match_id,
        played_at,
        teams,
        _outcome(data, len(teams), fail),
        None if seconds is None else _seconds(seconds, teams, fail),
        _extras(data, teams, fail, stored),
    )
