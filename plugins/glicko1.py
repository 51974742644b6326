"""``glicko1`` plugin: Glickman's Glicko system (rating and rating deviation).

A player is a rating r and a rating deviation RD (rating points). With
``q = ln 10 / 400`` and ``g(RD) = 1 / sqrt(1 + 3 q² RD² / π²)``, the expected score against
opponent j is ``E = 1 / (1 + 10^(-g(RD_j)(r - r_j)/400))``; over the results of one rating
period, ``1/d² = q² Σ g(RD_j)² E (1 - E)``, ``r' = r + q / (1/RD² + 1/d²) Σ g(RD_j)(s_j - E)``
and ``RD' = sqrt(1 / (1/RD² + 1/d²))``. Idle time grows the deviation:
``RD = min(sqrt(RD² + c² t), RD_max)`` for t rating periods.

Glickman's example (the player 1500/200 meets 1400/30, 1550/100 and 1700/300 and scores
1, 0, 0 in one period):

>>> new = rate(1500.0, 200.0, [(1400.0, 30.0, 1.0, 1.0), (1550.0, 100.0, 0.0, 1.0),
...                            (1700.0, 300.0, 0.0, 1.0)])
>>> round(new[0], 1), round(new[1], 1)
(1464.1, 151.4)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import attrs

from rankcraft import Match, Needs, Pairing, State, hookimpl, state_field
from rankcraft.matchmaking import gaussian_quality
from rankcraft.validators import RATING_LIMIT, limit, state_within, within

from ._matchup import (
    MARGIN_RULES,
    LastFactors,
    home_edge,
    logistic10,
    margin_multiplier,
    match_margin,
    side_probabilities,
)

RANKCRAFT_CONTRACT = 2
"""The hook contract: states are tuples ``(rating, deviation)`` in the per-match hooks."""

RATING, DEVIATION = range(2)
"""Positions of :class:`Glicko1Skill`'s fields in its tuple form."""

Q = math.log(10.0) / 400.0
"""Glickman's q = ln 10 / 400 = 0.0057564627… (per rating point)."""
_3Q2_PI2 = 3.0 * Q * Q / (math.pi * math.pi)
_Q2 = Q * Q  # (the value ``Q * Q`` gives wherever it is computed)

DEVIATION_RANGE = (0.001, 1e4)
"""The RD a state may hold and params may set, rating points: above 0 (1/RD² must stay
finite: an RD of 1e-320 made it infinite) and at most ten thousand."""
_rating = within(-RATING_LIMIT, RATING_LIMIT)
_deviation = within(*DEVIATION_RANGE)
_deviation_or_zero = within(0.0, DEVIATION_RANGE[1])


def g(deviation: float) -> float:
    """Glickman's g(RD): how much a result against an opponent with this RD counts, (0, 1]."""
    return 1.0 / math.sqrt(1.0 + _3Q2_PI2 * deviation * deviation)


def expected(rating: float, opponent: float, opponent_deviation: float) -> float:
    """Glickman's E: expected score of ``rating`` against an opponent (rating, RD)."""
    return logistic10(-g(opponent_deviation) * (rating - opponent) / 400.0)


def win_probability(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Probability that a (rating, RD) beats b, using both deviations (as ratingupdate.com)."""
    combined = math.sqrt(a[1] * a[1] + b[1] * b[1])
    x = -g(combined) * (a[0] - b[0]) / 400.0
    return 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0


def rate(
    rating: float, deviation: float, results: Iterable[tuple[float, float, float, float]]
) -> tuple[float, float]:
    """One rating period: (rating, RD) after ``results`` of (opponent rating, opponent RD,
    score, weight). A weight scales a result's information (1 = one whole game)."""
    inv_d2 = 0.0
    total = 0.0
    for opponent, opponent_deviation, score, weight in results:
        g_j = g(opponent_deviation)
        x = -g_j * (rating - opponent) / 400.0
        e = 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0
        inv_d2 += weight * g_j * g_j * e * (1.0 - e)
        total += weight * g_j * (score - e)
    inv_d2 *= _Q2
    precision = 1.0 / (deviation * deviation) + inv_d2
    return rating + Q / precision * total, math.sqrt(1.0 / precision)


def rate_one(
    rating: float, deviation: float, opponent: float, opponent_deviation: float, score: float
) -> tuple[float, float]:
    """:func:`rate` for one result of weight 1, the same arithmetic in the same order."""
    g_j = g(opponent_deviation)
    x = -g_j * (rating - opponent) / 400.0
    e = 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0
    inv_d2 = g_j * g_j * e * (1.0 - e) * (Q * Q)
    precision = 1.0 / (deviation * deviation) + inv_d2
    return rating + Q / precision * (g_j * (score - e)), math.sqrt(1.0 / precision)


def decay_constant(deviation: float, initial: float, periods: float) -> float:
    """The c for which RD grows from ``deviation`` back to ``initial`` in ``periods`` periods:
    ``c = sqrt((initial² - deviation²) / periods)``, since decay adds c² to RD² per period.

    >>> round(decay_constant(50.0, 350.0, 100), 1)   # Glickman's example
    34.6
    """
    if not 0 <= deviation < initial or periods <= 0:
        raise ValueError(
            f"need 0 <= deviation < initial and periods > 0: {deviation!r}, {initial!r}, "
            f"{periods!r}"
        )
    return math.sqrt((initial * initial - deviation * deviation) / periods)


@attrs.frozen(kw_only=True)
class DecayFrom:
    """Derive c from "RD goes from ``deviation`` back to the initial RD in ``periods``".

    Attributes:
        deviation: the typical RD of an active player, rating points, ≥ 0 and < initial.
        periods: rating periods of inactivity to get back to the initial RD, in
            [1e-6, 1e12].
    """

    deviation: float = attrs.field(validator=_deviation_or_zero)
    periods: float = attrs.field(validator=within(1e-6, 1e12))


@attrs.frozen(kw_only=True)
class Glicko1Params:
    """Params of the ``glicko1`` plugin (slots initial, decay, expectation, update).

    Attributes:
        initial_rating: a new player's rating, rating points, |x| ≤ 1e6 (default 1500).
        initial_deviation: a new player's RD, rating points, in [0.001, 1e4] (default
            350).
        min_deviation: RD never falls below this, in [0, 1e4] (default 0: no floor; RD
            never falls below 0.001 whatever this says).
        max_deviation: RD never grows above this, in [0.001, 1e4] (default:
            ``initial_deviation``).
        c: RD growth per rating period of inactivity, rating points, in [0, 1e4]
            (default 34.6: Glickman's 50 → 350 in 100 periods). Ignored when ``c_from``
            is given.
        c_from: derive c instead: ``{deviation = 50.0, periods = 100.0}``.
        whole_periods: count idle time in whole periods only, as ratingupdate.com does
            (default false: real-valued periods, as Glickman and the Skyweaver paper).
        home_advantage: rating points added to the home side in expectations and updates,
            when the match names one (``home``; default 0), |x| ≤ 1e6.
        margin: ``"none"`` (default) or ``"fivethirtyeight"``: the rating change is
            multiplied by FiveThirtyEight's margin-of-victory multiplier (two-sided
            matches with scores); RD moves as without it.

    Ratings stay within ±1e6 (``RATING_LIMIT``): an update that would pass it stops there.
    """

    initial_rating: float = attrs.field(default=1500.0, validator=_rating)
    initial_deviation: float = attrs.field(default=350.0, validator=_deviation)
    min_deviation: float = attrs.field(default=0.0, validator=_deviation_or_zero)
    max_deviation: float | None = attrs.field(default=None)
    c: float = attrs.field(default=34.6, validator=_deviation_or_zero)
    c_from: DecayFrom | None = None
    whole_periods: bool = False
    home_advantage: float = attrs.field(default=0.0, validator=_rating)
    margin: str = attrs.field(default="none", validator=attrs.validators.in_(MARGIN_RULES))

    # derived from the fields once, when the params are built, for the per-match hooks
    # (not fields of the table: never read from it nor written back)
    _floor: float = attrs.field(init=False, eq=False, repr=False)
    """:attr:`floor`."""
    _ceiling: float = attrs.field(init=False, eq=False, repr=False)
    """:attr:`ceiling`."""
    _c: float = attrs.field(init=False, eq=False, repr=False)
    """:attr:`decay_c`."""
    _margined: bool = attrs.field(init=False, eq=False, repr=False)
    """A margin rule multiplies the rating change (``margin`` is not ``"none"``)."""

    @max_deviation.validator
    def _check_max(self, attribute: attrs.Attribute[float | None], value: float | None) -> None:
        if value is not None:
            _deviation(self, attribute, value)
        if value is not None and value < self.min_deviation:
            raise ValueError(
                f"'max_deviation' must be >= 'min_deviation' ({self.min_deviation}): {value}"
            )

    def __attrs_post_init__(self) -> None:
        if self.c_from is not None and not self.c_from.deviation < self.initial_deviation:
            raise ValueError(
                f"'c_from.deviation' must be below 'initial_deviation' "
                f"({self.initial_deviation}): {self.c_from.deviation}"
            )
        if self.min_deviation > self.ceiling:
            raise ValueError(
                f"'min_deviation' must be <= the maximum deviation ({self.ceiling}): "
                f"{self.min_deviation}"
            )
        object.__setattr__(self, "_floor", self.floor)
        object.__setattr__(self, "_ceiling", self.ceiling)
        object.__setattr__(self, "_c", self.decay_c)
        object.__setattr__(self, "_margined", self.margin != "none")

    @property
    def floor(self) -> float:
        """The smallest RD: ``min_deviation``, and never below 0.001 (``DEVIATION_RANGE``)."""
        return max(self.min_deviation, DEVIATION_RANGE[0])

    @property
    def ceiling(self) -> float:
        """The largest RD: ``max_deviation``, or ``initial_deviation`` when unset."""
        return self.initial_deviation if self.max_deviation is None else self.max_deviation

    @property
    def decay_c(self) -> float:
        """The c in use (from ``c_from`` when given)."""
        if self.c_from is None:
            return self.c
        return decay_constant(self.c_from.deviation, self.initial_deviation, self.c_from.periods)


@attrs.frozen(slots=True)
class Glicko1Skill:
    """A Glicko player.

    Attributes:
        rating: rating points, |rating| ≤ 1e6 (role ``location``).
        deviation: rating deviation RD, rating points in [0.001, 1e4] (role ``spread``).
    """

    rating: float = state_field(
        role="location", validator=state_within(-RATING_LIMIT, RATING_LIMIT)
    )
    deviation: float = state_field(role="spread", validator=state_within(*DEVIATION_RANGE))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return Glicko1Params if slot in ("initial", "decay", "expectation", "update") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    # Glickman's step 1 grows every RD at the period's onset before anyone is rated: in
    # batch and live periods the opponents come at their onset RD (the update grows the
    # player's own RD, t = 1, itself)
    return Needs(opponents_at_onset=True) if slot == "update" else None


@hookimpl
def rankcraft_initial(slot: str, params: Glicko1Params) -> Glicko1Skill:
    if slot != "initial":
        raise ValueError(f"the glicko1 plugin has no {slot!r} state")
    deviation = min(max(params.initial_deviation, params.floor), params.ceiling)
    return Glicko1Skill(params.initial_rating, deviation)


def grow(params: Glicko1Params, deviation: float, periods: float) -> float:
    """RD after ``periods`` idle rating periods, clamped to the deviation bounds."""
    if params.whole_periods:
        periods = math.floor(periods + 1e-9)
    c = params._c
    grown = math.sqrt(deviation * deviation + c * c * periods)
    return min(max(grown, params._floor), params._ceiling)


@hookimpl
def rankcraft_decay(params: Glicko1Params, state: State, periods: float) -> State:
    if periods <= 0:
        return state
    return (state[RATING], grow(params, state[DEVIATION], periods))


@hookimpl
def rankcraft_expectation(
    params: Glicko1Params, side_states: Sequence[State], home: int | None
) -> list[float]:
    if len(side_states) == 2:
        # (side_probabilities' two-sided case, home_edge, win_probability and g, written
        # out: the same operations in the same order)
        advantage = params.home_advantage
        edge = 0.0 if home is None or advantage == 0.0 else advantage if home == 0 else -advantage
        a, b = side_states
        a_deviation, b_deviation = a[DEVIATION], b[DEVIATION]
        combined = math.sqrt(a_deviation * a_deviation + b_deviation * b_deviation)
        x = (
            -(1.0 / math.sqrt(1.0 + _3Q2_PI2 * combined * combined))
            * (a[RATING] + edge - b[RATING])
            / 400.0
        )
        p = 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0
        return [p, 1.0 - p]
    return side_probabilities(
        side_states,
        lambda a, b, edge: win_probability(
            (a[RATING] + edge, a[DEVIATION]), (b[RATING], b[DEVIATION])
        ),
        home_edge(params.home_advantage, home, 0),
    )


BETA = math.pi / (Q * math.sqrt(6.0))
"""The performance deviation, rating points (≈ 222.8), with which Gaussian performances
give Glicko's logistic win probability: 2β² = π²/(3q²), the normal approximation to the
logistic that Glickman's g(RD) rests on. Used by the match quality only."""


@hookimpl
def rankcraft_quality(
    params: Glicko1Params, side_states: Sequence[State], home: int | None
) -> float:
    """Herbrich et al.'s draw-probability quality (:func:`gaussian_quality`): each side a
    Gaussian of its rating and RD, the home side's rating raised by ``home_advantage``."""
    edge = params.home_advantage
    return gaussian_quality(
        [
            [(s[RATING] + (edge if i == home else 0.0), s[DEVIATION])]
            for i, s in enumerate(side_states)
        ],
        BETA,
    )


_explained = LastFactors()
"""The last update's new state and its factors (the margin multiplier), for
:func:`rankcraft_explain`."""


@hookimpl
def rankcraft_update(
    params: Glicko1Params,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    mode: str,
) -> State:
    deviation = state[DEVIATION]
    if mode != "match" and games > 0:
        # Glickman's step 1 counts the period being rated (t = 1 for a player who played
        # in the previous one); idle periods before it came through rankcraft_decay.
        deviation = grow(params, deviation, 1.0)
    edge = 0.0
    advantage = params.home_advantage
    if advantage != 0.0 and match is not None and len(match.teams) == 2:
        home = match.home  # (home_edge, written out)
        edge = 0.0 if home is None else advantage if home == side else -advantage
    mine = state[RATING] + edge
    # (rate and g, written out: the same operations in the same order)
    inv_d2 = 0.0
    total = 0.0
    for opponent_state, score, weight in pairings:
        opponent_deviation = opponent_state[DEVIATION]
        g_j = 1.0 / math.sqrt(1.0 + _3Q2_PI2 * opponent_deviation * opponent_deviation)
        x = -g_j * (mine - opponent_state[RATING]) / 400.0
        e = 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0
        inv_d2 += weight * g_j * g_j * e * (1.0 - e)
        total += weight * g_j * (score - e)
    inv_d2 *= _Q2
    precision = 1.0 / (deviation * deviation) + inv_d2
    rating = mine + Q / precision * total
    new_deviation = math.sqrt(1.0 / precision)
    rating -= edge
    margin = match_margin(match, side, len(pairings)) if params._margined else None
    if margin is not None:
        lead = state[RATING] + edge - pairings[0][0][RATING]
        multiplier = margin_multiplier(margin, lead)
        rating = state[RATING] + (rating - state[RATING]) * multiplier
    # (min(max(new_deviation, floor), ceiling), written out: the same comparisons)
    floor, ceiling = params._floor, params._ceiling
    if floor > new_deviation:
        new_deviation = floor
    if ceiling < new_deviation:
        new_deviation = ceiling
    if not -RATING_LIMIT <= rating <= RATING_LIMIT:
        rating = limit(rating, -RATING_LIMIT, RATING_LIMIT)
    out = (rating, new_deviation)
    if margin is not None:
        return _explained.keep(out, {"margin": multiplier})
    return out


@hookimpl
def rankcraft_explain(
    params: Glicko1Params,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    mode: str,
    after: State,
) -> dict[str, float] | None:
    """``margin`` (the margin-of-victory multiplier of the rating change) where it applied;
    None otherwise (Glicko's change has no other factor)."""
    if not params._margined:
        return None
    kept = _explained.of(after)
    if kept is not None:
        return kept
    if match_margin(match, side, len(pairings)) is None:
        return None
    return _explained.of(rankcraft_update(params, state, pairings, games, side, match, mode))
