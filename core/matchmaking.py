"""Matchmaking: rank filters over active players, match quality and team balancing.

Three questions a matchmaker asks a league (docs/matchmaking.md), each one function here
with a thin :class:`~rankcraft.League` method over it:

- :func:`find_opponents`: the active players within ``width`` percentiles of a player or
  a party (a *strict* filter), or, for a *loose* filter, within a wider band after each
  wait of its schedule while too few are found ("Ranking in Team-Based Competitive
  Games", rank filters);
- :func:`quality`: how good a match proposed sides would make, in [0, 1]: the expectation
  plugin's ``rankcraft_quality`` hook when it has one (a Gaussian model's draw
  probability, :func:`gaussian_quality`), else the closeness of the win probabilities
  (:func:`closeness`);
- :func:`balance`: ``players`` split into ``k`` teams of sizes differing by at most one,
  with the best quality: every split for small groups, a greedy start and pairwise swaps
  beyond.

A player's *percentile* is 100 x (active players with a strictly lower sort value) / N,
in [0, 100), over the N active players: those with a match within ``active_days`` of
the league's latest match. The sort value is the leaderboard's (the rank state's
location, else the skill's), read once per call through :meth:`League.active_players`.
A league offers what :class:`Matchable` names; the measures are in :mod:`rankcraft.quality`.

>>> RankFilter().widths(waited=45.0), split_count(4, 2)
([2.0, 5.0], 3)
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs

from .errors import InputError, PluginError
from .io import parse_time
from .manager import Plugins
from .model import State, field_of_role
from .quality import closeness, gaussian_quality
from .ruleset import Ruleset

__all__ = [
    "DEFAULT_ACTIVE_DAYS",
    "DEFAULT_WIDEN",
    "EXACT_LIMIT",
    "Balanced",
    "Candidate",
    "Matchable",
    "Opponents",
    "RankFilter",
    "SkillModel",
    "balance",
    "closeness",
    "find_opponents",
    "gaussian_quality",
    "quality",
    "split_count",
]

DEFAULT_ACTIVE_DAYS = 30.0
"""Who counts as active when the ruleset does not say (its standings plugin's
``active_days`` param, as the wager has): players whose latest match is at most this many
days before the league's latest match."""

DEFAULT_WIDEN: tuple[tuple[float, float], ...] = ((30.0, 5.0), (60.0, 10.0))
"""A loose filter's schedule when none is given: (seconds waited, width in percentiles):
2 percentiles at first (the default width), 5 after 30 s, 10 after a minute."""

EXACT_LIMIT = 20_000
""":func:`balance` tries every split when there are at most this many (every group of up
to 10 players, 12 players in 2, 3, 4 or 6 teams, 16 in 2); beyond, greedy and swaps."""

SWAP_PASSES = 50
"""The most rounds of pairwise swaps the heuristic makes (each takes the best swap)."""

_EPS = 1e-12


class SkillModel(Protocol):
    """What :func:`quality` and :func:`balance` judge sides with (a league's
    :attr:`~rankcraft.League.skill_model`): the plugins' state ``forms``, the team
    ``aggregate`` of players' states, the ``expectation`` of side states (``(states, home)
    -> probabilities``), and ``skill(player, at)``: a known player's skill state (tuple
    form), decayed to ``at`` when given."""

    forms: Any
    aggregate: Callable[[Sequence[State]], State]
    expectation: Callable[[Sequence[State], int | None], Sequence[float]]

    def skill(self, player: str, at: datetime | None) -> State: ...


class Matchable(Protocol):
    """What matchmaking asks of a league (:class:`rankcraft.League` offers it): its ruleset,
    plugins, skill class, a player's record (refusing unknown players) and sort value, the
    active players, and the skill model sides are judged with."""

    ruleset: Ruleset
    plugins: Plugins
    skill_class: type

    def player(self, player: str) -> Any: ...
    def sort_value(self, player: str) -> float: ...
    def active_players(
        self, active_days: float | None = None, at: datetime | str | None = None
    ) -> list[tuple[str, float]]: ...

    @property
    def skill_model(self) -> SkillModel: ...


def _number(value: Any, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InputError(f"'{name}' must be a number in [{low:g}, {high:g}]: {value!r}")
    return float(value)


def _schedule(value: Any) -> tuple[tuple[float, float], ...]:
    steps = tuple(tuple(step) for step in value)
    for i, step in enumerate(steps):
        if len(step) != 2:
            raise InputError(f"'widen[{i}]' must be a pair (seconds, width): {step!r}")
        _number(step[0], f"widen[{i}][0]", 0.0, 1e9)
        _number(step[1], f"widen[{i}][1]", 0.0, 100.0)
    for i in range(1, len(steps)):
        if not (steps[i][0] > steps[i - 1][0] and steps[i][1] > steps[i - 1][1]):
            raise InputError(
                f"'widen' must grow: later waits and wider widths, got {steps[i - 1]!r} "
                f"then {steps[i]!r}"
            )
    return tuple((float(a), float(b)) for a, b in steps)


@attrs.frozen(kw_only=True)
class RankFilter:
    """Which players a matchmaker may put with a player (or a party).

    Attributes:
        width: percentiles either side of the party's span, in [0, 100] (default 2).
        strict: True: only ``width``; False (default): a *loose* filter that widens by
            ``widen`` while fewer than ``needed`` players are found.
        widen: (seconds waited, width) steps of a loose filter, waits and widths growing;
            a step applies once the party has waited that long (default
            :data:`DEFAULT_WIDEN`). Steps no wider than ``width`` are passed over.
    """

    width: float = attrs.field(default=2.0, converter=float)
    strict: bool = False
    widen: tuple[tuple[float, float], ...] = attrs.field(default=DEFAULT_WIDEN, converter=_schedule)

    def __attrs_post_init__(self) -> None:
        _number(self.width, "width", 0.0, 100.0)
        if not isinstance(self.strict, bool):
            raise InputError(f"'strict' must be true or false: {self.strict!r}")

    def widths(self, waited: float) -> list[float]:
        """The widths to try in order after ``waited`` seconds: ``width``, then each wider
        step whose wait has passed (a strict filter: ``width`` alone)."""
        out = [self.width]
        if not self.strict:
            out += [w for after, w in self.widen if waited >= after and w > out[-1]]
        return out


@attrs.frozen(kw_only=True)
class Candidate:
    """A player a filter lets in.

    Attributes:
        id: the player. value: their sort value (rank points, rating...).
        percentile: 100 x (active players strictly lower) / N, in [0, 100).
    """

    id: str
    value: float
    percentile: float


@attrs.frozen(kw_only=True)
class Opponents:
    """What :func:`find_opponents` found.

    Attributes:
        party: the players asking, as given. percentiles: theirs, in the same order.
        width: the width used (the last tried when not ``enough``).
        low, high: the band of percentiles let in (inclusive), within [0, 100].
        candidates: the active players in the band, the party left out, nearest the
            band's middle first (then by id); at most ``limit``.
        found: how many players the band holds (before ``limit``).
        enough: whether ``found`` reached ``needed``.
        active: N, the active players the percentiles are counted over.
    """

    party: tuple[str, ...]
    percentiles: tuple[float, ...]
    width: float
    low: float
    high: float
    candidates: tuple[Candidate, ...]
    found: int
    enough: bool
    active: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``rankcraft match opponents --json``, the HTTP answer)."""
        return attrs.asdict(self)


def active_days_of(league: Matchable) -> float:
    """The ruleset's idea of an active player, in days: its standings plugin's
    ``active_days`` param (rank slot, else update slot), else :data:`DEFAULT_ACTIVE_DAYS`."""
    for spec in (league.ruleset.rank, league.ruleset.slot("update")):
        days = getattr(spec.params, "active_days", None) if spec is not None else None
        if isinstance(days, int | float) and not isinstance(days, bool):
            return float(days)
    return DEFAULT_ACTIVE_DAYS


def _party(players: str | Sequence[str], what: str = "players") -> tuple[str, ...]:
    party = (players,) if isinstance(players, str) else tuple(players)
    if not party or any(not isinstance(p, str) or not p for p in party):
        raise InputError(f"'{what}' must be one or more player ids: {players!r}"[:300])
    if len(set(party)) != len(party):
        raise InputError(f"'{what}' names a player twice: {players!r}"[:300])
    return party


def find_opponents(
    league: Matchable,
    players: str | Sequence[str],
    rank_filter: RankFilter | None = None,
    *,
    needed: int = 1,
    waited: float = 0.0,
    limit: int | None = None,
    active_days: float | None = None,
) -> Opponents:
    """The active players a rank filter lets in with ``players`` (one, or a party).

    The band is [lowest member's percentile - width, highest member's + width]: a party's
    filter reaches from its lowest to its highest player. A strict filter tries its width
    alone; a loose one, while the band holds fewer than ``needed`` players, each wider
    step of its schedule that ``waited`` seconds have reached.

    :param players: a player id or the party's ids (known to the league).
    :param rank_filter: the filter (default: ``RankFilter()``, loose, 2 percentiles).
    :param needed: how many other players make enough, ≥ 1.
    :param waited: seconds the party has waited, ≥ 0.
    :param limit: at most this many candidates in the answer (None: all).
    :param active_days: who is active (default: :func:`active_days_of` the ruleset).
    :raises UnknownPlayerError: a player the league has never seen.
    :raises InputError: a bad argument, or a ruleset without a sort value.
    """
    party = _party(players)
    rank_filter = rank_filter or RankFilter()
    if isinstance(needed, bool) or not isinstance(needed, int) or needed < 1:
        raise InputError(f"'needed' must be a whole number >= 1: {needed!r}")
    waited = _number(waited, "waited", 0.0, 1e9)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InputError(f"'limit' must be a whole number >= 0: {limit!r}")
    values = [league.sort_value(p) for p in party]  # (refuses unknown players first)
    active = league.active_players(active_days)
    sorted_values = [v for _, v in active]
    percentiles = _percentiles(values, sorted_values)
    ranked = _ranked(sorted_values)
    bottom, top = min(percentiles), max(percentiles)
    width, low, high, inside = _band(
        active, ranked, set(party), bottom, top, rank_filter.widths(waited), needed
    )
    middle = (bottom + top) / 2.0
    inside.sort(key=lambda i: (abs(ranked[i] - middle), active[i][0]))
    shown = inside if limit is None else inside[:limit]
    return Opponents(
        party=party,
        percentiles=tuple(percentiles),
        width=width,
        low=low,
        high=high,
        candidates=tuple(
            Candidate(id=active[i][0], value=active[i][1], percentile=ranked[i]) for i in shown
        ),
        found=len(inside),
        enough=len(inside) >= needed,
        active=len(active),
    )


def _percentiles(values: Sequence[float], sorted_values: Sequence[float]) -> list[float]:
    """The percentile of each of ``values`` among the active players' ``sorted_values``:
    100 x (players strictly lower) / N (0 for every value when nobody is active)."""
    n = len(sorted_values)
    if n == 0:
        return [0.0] * len(values)
    return [100.0 * bisect.bisect_left(sorted_values, v) / n for v in values]


def _ranked(sorted_values: Sequence[float]) -> list[float]:
    """Every active player's percentile, in sorted order (one pass: a value equal to the
    previous one shares its count of lower players): nondecreasing, so a band is a slice."""
    n = len(sorted_values)
    ranked: list[float] = []
    lower = 0
    for i, v in enumerate(sorted_values):
        if i and v != sorted_values[i - 1]:
            lower = i
        ranked.append(100.0 * lower / n)
    return ranked


def _band(
    active: Sequence[tuple[str, float]],
    ranked: Sequence[float],
    members: set[str],
    bottom: float,
    top: float,
    widths: Sequence[float],
    needed: int,
) -> tuple[float, float, float, list[int]]:
    """The first of ``widths`` whose band [bottom - width, top + width] holds ``needed``
    players besides ``members`` (else the last): the width, the band's bounds, and the
    indexes in ``active`` of the players in it."""
    for width in widths:
        low, high = max(0.0, bottom - width), min(100.0, top + width)
        start = bisect.bisect_left(ranked, low - 1e-9)
        stop = bisect.bisect_right(ranked, high + 1e-9)
        inside = [i for i in range(start, stop) if active[i][0] not in members]
        if len(inside) >= needed:
            break
    return width, low, high, inside


def _check_sides(sides: Any, what: str = "sides") -> list[list[str]]:
    if isinstance(sides, str) or not isinstance(sides, Sequence) or len(sides) < 2:
        raise InputError(f"'{what}' must be at least 2 sides: {sides!r}"[:300])
    out = []
    for side in sides:
        if isinstance(side, str) or not isinstance(side, Sequence) or not side:
            raise InputError(f"every side must be a non-empty list of player ids: {sides!r}"[:300])
        out.append(list(_party(side, what)))
    flat = [p for side in out for p in side]
    if len(set(flat)) != len(flat):
        raise InputError(f"a player appears twice in {sides!r}"[:300])
    return out


class _Judge:
    """The quality of splits of one league's players: the quality hook of the expectation
    slot's plugin, else the closeness of the expectation."""

    def __init__(self, league: Matchable, at: datetime | None) -> None:
        model = league.skill_model
        self.aggregate = model.aggregate
        self.expect = model.expectation
        spec = league.ruleset.slot("expectation")
        assert spec is not None
        plugins = league.plugins
        self.hook: Callable[..., float] | None = None
        self.method = "closeness"
        if plugins.implements(spec.plugin, "rankcraft_quality"):
            self.hook = plugins.quality(spec.plugin, spec.params, model.forms)
            self.method = spec.plugin
        self.league = league
        self.model = model
        self.at = at

    def states(self, players: Sequence[str]) -> list[State]:
        """Each player's skill (decayed to ``at``); unknown players are refused."""
        out = []
        for pid in players:
            self.league.player(pid)  # (UnknownPlayerError)
            out.append(self.model.skill(pid, self.at))
        return out

    def __call__(
        self, sides: Sequence[Sequence[State]], home: int | None = None, joined: Any = None
    ) -> float:
        side_states = joined if joined is not None else [self.aggregate(s) for s in sides]
        if self.hook is None:
            return closeness(self.expect(side_states, home))
        value = self.hook(sides, side_states, home)
        if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise PluginError(f"quality plugin {self.method!r} returned {value!r}, not in [0, 1]")
        return float(value)


def _when(at: datetime | str | None) -> datetime | None:
    return parse_time(at, field="at") if isinstance(at, str) else at


def quality(
    league: Matchable,
    sides: Sequence[Sequence[str]],
    *,
    at: datetime | str | None = None,
    home: int | None = None,
) -> tuple[float, str]:
    """The quality of the match ``sides`` would make, in [0, 1], and how it was judged
    (the plugin's name, or ``"closeness"``).

    :param sides: player ids per side (known to the league), two or more, none empty.
    :param at: judge as of this time (idle players decay); default: as they stand.
    :param home: the index of the side at home, or None.
    """
    checked = _check_sides(sides)
    if home is not None and (
        isinstance(home, bool) or not isinstance(home, int) or not 0 <= home < len(checked)
    ):
        raise InputError(f"'home' must be a side index (0 to {len(checked) - 1}): {home!r}")
    judge = _Judge(league, _when(at))
    return judge([judge.states(s) for s in checked], home), judge.method


@attrs.frozen(kw_only=True)
class Balanced:
    """The teams :func:`balance` chose.

    Attributes:
        teams: k teams of player ids, sizes differing by at most one; the players of each
            in the order given, the teams by their first player's place in that order.
        quality: their quality in [0, 1]. method: ``"exact"`` (every split tried) or
            ``"swaps"`` (greedy start, pairwise swaps). judged_by: the plugin whose
            quality hook judged, or ``"closeness"``. splits: the splits evaluated.
    """

    teams: tuple[tuple[str, ...], ...]
    quality: float
    method: str
    judged_by: str
    splits: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``rankcraft match balance --json``, the HTTP answer)."""
        return attrs.asdict(self)


def split_count(n: int, k: int) -> int:
    """How many ways there are to split n players into k unlabelled teams whose sizes
    differ by at most one: n! / (Π sizes! x r! x (k - r)!) with r = n mod k."""
    q, r = divmod(n, k)
    den = math.factorial(q + 1) ** r * math.factorial(q) ** (k - r)
    den *= math.factorial(r) * math.factorial(k - r)
    return int(math.factorial(n) // den)


def _splits(n: int, k: int) -> Any:
    """Every split of 0..n-1 into k teams of sizes q or q + 1 (r of q + 1), each once:
    player i joins a team already opened or opens the next one (a restricted growth
    string), so teams are ordered by their first player."""
    q, r = divmod(n, k)
    teams: list[list[int]] = []
    big = 0  # teams at size q + 1

    def room(team: list[int]) -> bool:
        return len(team) < q or (len(team) == q and big < r)

    def go(i: int) -> Any:
        nonlocal big
        if i == n:
            if len(teams) == k:
                yield [tuple(t) for t in teams]
            return
        missing = sum(max(0, q - len(t)) for t in teams) + (k - len(teams)) * q
        if n - i < missing:
            return
        for team in teams:
            if room(team):
                grows = len(team) == q
                team.append(i)
                big += grows
                yield from go(i + 1)
                big -= grows
                team.pop()
        if len(teams) < k:
            teams.append([i])  # (a team of one is never above q: q >= 1 as n >= k)
            yield from go(i + 1)
            teams.pop()

    return go(0)


def _strength(league: Matchable, state: State) -> float:
    field = field_of_role(league.skill_class, "location")
    value = getattr(state, field, 0.0) if field else 0.0
    return float(value) if isinstance(value, int | float) else 0.0


def _check_balance(players: Any, k: Any) -> tuple[str, ...]:
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise InputError(f"'teams' must be a whole number >= 2: {k!r}")
    party = _party(players, "players")
    if len(party) < k:
        raise InputError(
            f"'players' has {len(party)} players, fewer than the {k} teams to fill: "
            f"{list(party)!r}"[:300]
        )
    return party


def balance(
    league: Matchable,
    players: Sequence[str],
    teams: int = 2,
    *,
    at: datetime | str | None = None,
    exact_limit: int = EXACT_LIMIT,
) -> Balanced:
    """Split ``players`` into ``teams`` teams of sizes differing by at most one, with the
    best quality (:func:`quality`, at a neutral venue).

    Every split is tried when there are at most ``exact_limit`` (:func:`split_count`),
    and the first best kept; beyond, players are dealt strongest first to the team of
    lowest total strength (the skill's location) with room, and then the best swap of two
    players of different teams is made while one improves the quality (at most
    :data:`SWAP_PASSES` rounds). The answer depends only on the players and the league,
    not on the order the players are given in (it is worked out in sorted order).

    :raises InputError: ``teams`` < 2, fewer players than teams, a player twice.
    :raises UnknownPlayerError: a player the league has never seen.
    """
    party = _check_balance(players, teams)
    order = sorted(party)
    judge = _Judge(league, _when(at))
    states = judge.states(order)
    n, k = len(order), teams
    cache: dict[tuple[int, ...], State] = {}

    def joined(team: tuple[int, ...]) -> State:
        state = cache.get(team)
        if state is None:
            if len(cache) > 200_000:
                cache.clear()
            state = cache[team] = judge.aggregate([states[i] for i in team])
        return state

    def score(split: Sequence[tuple[int, ...]]) -> float:
        sides = [[states[i] for i in t] for t in split]
        return judge(sides, None, [joined(t) for t in split])

    count = split_count(n, k)
    if count <= exact_limit:
        best, best_q = None, -1.0
        for split in _splits(n, k):
            value = score(split)
            if value > best_q + _EPS:
                best, best_q = split, value
        assert best is not None
        method = "exact"
    else:
        best, best_q, count = _swaps(league, states, k, score)
        method = "swaps"
    chosen = sorted((tuple(sorted(t)) for t in best), key=lambda t: t[0])
    position = {p: i for i, p in enumerate(party)}
    named = [tuple(sorted((order[i] for i in t), key=position.__getitem__)) for t in chosen]
    named.sort(key=lambda t: position[t[0]])
    return Balanced(
        teams=tuple(named), quality=best_q, method=method, judged_by=judge.method, splits=count
    )


def _swaps(
    league: Matchable,
    states: Sequence[State],
    k: int,
    score: Callable[[Sequence[tuple[int, ...]]], float],
) -> tuple[list[tuple[int, ...]], float, int]:
    """Greedy deal, then best-improving swaps: (split, quality, splits evaluated)."""
    n = len(states)
    q, r = divmod(n, k)
    capacity = [q + 1 if t < r else q for t in range(k)]
    strength = [_strength(league, s) for s in states]
    teams: list[list[int]] = [[] for _ in range(k)]
    totals = [0.0] * k
    for i in sorted(range(n), key=lambda i: (-strength[i], i)):
        t = min((t for t in range(k) if len(teams[t]) < capacity[t]), key=lambda t: (totals[t], t))
        teams[t].append(i)
        totals[t] += strength[i]
    split = [tuple(sorted(t)) for t in teams]
    current = score(split)
    count = 1
    for _ in range(SWAP_PASSES):
        best_move = None
        best_value = current
        for a, b in itertools.combinations(range(k), 2):
            for x in split[a]:
                for y in split[b]:
                    trial = list(split)
                    trial[a] = tuple(sorted(y if i == x else i for i in split[a]))
                    trial[b] = tuple(sorted(x if i == y else i for i in split[b]))
                    value = score(trial)
                    count += 1
                    if value > best_value + _EPS:
                        best_move, best_value = trial, value
        if best_move is None:
            break
        split, current = best_move, best_value
    return split, current, count
