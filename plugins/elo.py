"""``elo`` plugin: Elo's rating system with a constant or scheduled K-factor.

Expected score of A against B: ``E = 1 / (1 + 10 ** ((R_B - R_A) / scale))`` (scale 400:
a 400-point gap is 10-to-1 odds). After a match a player's rating moves by
``K · Σ w · (s - E)`` over the pairings the team plugin hands it (one per opponent in a
1-v-1), where s is 1 for a win, ½ for a draw and 0 for a loss.

K is ``k_factor`` unless a schedule applies: ``k_by_games`` (fewer rated games than
``games_below``) is checked first, then ``k_by_rating`` (the rule with the highest
``rating_at_least`` reached). With ``k_rating_uses_peak`` the rating rules look at the
highest rating the player has ever had (FIDE: K stays 10 once 2400 was reached).

Worked example (the "Ranking Systems" talk slides: Bob 1500 against Alice 1900, K = 32):

>>> round(expected_score(1500.0, 1900.0), 4)
0.0909
>>> [round(32 * (s - expected_score(1500.0, 1900.0)), 2) for s in (1.0, 0.5, 0.0)]
[29.09, 13.09, -2.91]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from rankcraft import Match, Pairing, StateError, hookimpl, state_field
from rankcraft.validators import RATING_LIMIT, limit, meta_key, state_within, whole, within

from ._elo_context import (
    CONTEXTS,
    DAY,
    OFFSET,
    PEAK,
    RATING,
    SEASON_GAMES,
    UPDATES,
    State,
    day_number,
    side_gap,
    start_state,
)
from ._elo_draws import FIT_MIN_MATCHES, expected_of_gap, fit_draws, outcome_probabilities
from ._elo_k import K_LIMIT, KByGames, KByRating, sorted_by_games, sorted_by_rating
from ._elo_update import margin_factor, rated
from ._matchup import (
    DRAW_FITS,
    DRAW_MODELS,
    MARGIN_RULES,
    ContextRule,
    LastFactors,
    MarginForm,
    davidson,
    home_edge,
    logistic10,
    margin_multiplier,
    ordered_logit,
    side_probabilities,
)

SCALE_LIMIT = 1e6
"""The largest ``scale`` (rating points for 10-to-1 odds)."""

_rating = within(-RATING_LIMIT, RATING_LIMIT)
_k = within(1e-6, K_LIMIT)

__all__ = [
    "CONTEXTS",
    "DAY",
    "FIT_MIN_MATCHES",
    "K_LIMIT",
    "OFFSET",
    "SEASON_GAMES",
    "UPDATES",
    "ContextRule",
    "EloPoolSkill",
    "EloTimedSkill",
    "KByGames",
    "KByRating",
    "MarginForm",
    "davidson",
    "day_number",
    "home_edge",
    "margin_multiplier",
    "ordered_logit",
]


def _scale(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    # a scale below 1 rating point overflows 10 ** (gap / scale)
    if not (math.isfinite(value) and 1.0 <= value <= SCALE_LIMIT):
        raise ValueError(f"'scale' must be a number in [1, {SCALE_LIMIT!r}]: {value!r}")


@attrs.frozen(kw_only=True)
class EloParams:
    """Params of the ``elo`` plugin (slots initial, expectation, update).

    Attributes:
        initial_rating: a new player's rating, rating points, |x| ≤ 1e6 (default 1500).
        k_factor: K when no schedule rule applies, in [1e-6, 1e4] (default 32).
        k_by_games: rules ``{games_below, k}``; the one with the smallest ``games_below``
            above the player's rated games applies first (default none).
        k_by_rating: rules ``{rating_at_least, k}``; the highest threshold reached applies
            (default none).
        k_rating_uses_peak: rating rules look at the highest rating ever reached, not the
            current one (default true, FIDE's "once 2400 has been reached").
        scale: rating points for 10-to-1 odds, in [1, 1e6] (default 400).
        home_advantage: rating points added to the home side in every expectation, when
            the match names one (``home``; default 0), |x| ≤ 1e6.
        margin: the margin-of-victory rule multiplying K, from the two sides' scores
            (two-sided matches rated 1-v-1 or as team means): ``"none"`` (default),
            ``"fivethirtyeight"`` (NFL: ``margin_multiplier``, bounded by 13.8),
            ``"fivethirtyeight-nba"`` ((MOV + 3)^0.8 / (7.5 + 0.006 · lead)),
            ``"world-football"`` (the World Football Elo goal-difference index) or
            ``"power"`` (``margin_form``'s constants, which ``tune`` can search).
        margin_form: the constants of ``margin = "power"`` (:class:`MarginForm`).
        draw: the draw model of two-sided matches: ``"none"`` (default: Elo's curve),
            ``"davidson"`` (:func:`davidson`, ``draw_kappa``, ``draw_gap``) or
            ``"ordered-logit"`` (:func:`ordered_logit`, ``draw_margin``). The expected
            score (the forecast reported, and what updates compare with) is then
            P(win) + P(draw) / 2, and ``rankcraft_outcomes`` gives the three outcomes.
        draw_kappa: Davidson's κ in [0, 1e3] (draws between equals: κ / (2 + κ); default 0.5).
        draw_gap: how much faster than Davidson's the draw rate falls with the gap, [0, 10]
            (default 0).
        draw_margin: the ordered logit's draw band, rating points in [0, 1e6] (default 70).
        draw_fit: ``"none"`` (default), ``"overall"`` or ``"context"``: the draw model's
            parameters are fitted by maximum likelihood on the warm-up before a replay
            (``rankcraft evaluate``, ``tune``, ``replay``; :meth:`fit_draws`): Davidson's
            κ and ``draw_gap``, or the ordered logit's ``draw_margin``; with
            ``"context"``, each context rule with at least ``FIT_MIN_MATCHES`` warm-up
            matches, draws among them, gets its own κ (or band) (:class:`ContextRule`).
        k_games_power, k_games_offset: K shrinks with experience,
            ``K = k_factor / (games + k_games_offset) ** k_games_power`` (FiveThirtyEight's
            tennis Elo: 250 / (games + 5)^0.4); power in [0, 5] (default 0: off), offset in
            [1e-9, 1e6] (default 5). Used when no ``k_by_*`` schedule is given.
        context_field: a ``meta`` key naming the match's competition or venue (e.g.
            ``"tournament"``); ``context_rules`` (:class:`ContextRule`) then scale K and
            set the home advantage per value (first matching rule; default none).
        home_drift, home_drift_year: the home advantage drifts by ``home_drift`` rating
            points per year from the start of ``home_drift_year`` (|drift| ≤ 1e3, year in
            [1, 9999]; default 0: constant).
        blend_field, blend_values, blend_weight, blend_k: context-specific ratings (e.g.
            tennis surfaces): a player keeps one extra rating per value of ``blend_values``
            found in ``meta[blend_field]``; a match on a listed value is forecast from
            ``(1 − blend_weight) · rating + blend_weight · context rating`` (weight in
            [0, 1], default 0.5), and the context rating moves ``blend_k`` times as far as
            the overall one ([0, 1e3], default 1). The state then has a ``contexts`` list.
        prior_field, prior_at_one, prior_per_log: a newcomer prior from a field: when
            ``meta[prior_field]`` lists a positive number per side (a ranking, e.g. the ATP
            ranking), a player whose rating is still exactly ``initial_rating`` is forecast
            and updated from ``prior_at_one − prior_per_log · ln(rank)`` instead
            (|values| ≤ 1e6; defaults 1800 and 60; a missing rank keeps the initial rating).
            ``prior_field`` is a key of ``meta`` (``atp_rank``, ``wta_rank``; default
            None: no prior), not a path (``meta.atp_rank`` is refused).
        pool_field, pool_k: rating offsets between pools whose players rarely meet (leagues
            of different strength meeting in cups, confederations in football):
            ``meta[pool_field]`` names each side's pool (a list, one name per side; one
            name means both sides' pool; a missing, null or other value: pools unknown,
            no offset). When the two pools differ, each side's pool
            offset is added to its rating in the expectation, and after the match each
            pool's offset moves by ``pool_k`` times its side's surprise, Σ w · (s − E):
            zero-sum between the two pools (``pool_k`` in [0, 1e4] rating points, default
            10). Within one pool offsets do not enter. Each player carries their pool's
            offset (state ``pool_offset``, ``pool_updates``: the cross-pool results it
            includes), and a match between two members of one pool hands both the offset
            with more updates. The state is then :class:`EloPoolSkill`.
        rest_per_day, rest_cap_days: rest advantage (an NFL bye week): a side gains
            ``rest_per_day`` rating points per day of rest more than its opponent, each
            side's rest being the days since its previous match counted up to
            ``rest_cap_days`` (so two sides back from an off-season are even; a side
            that never played counts as fully rested). ``rest_per_day`` in [-1e3, 1e3]
            (default 0: off), ``rest_cap_days`` in [1e-9, 1e4] days (default 14). Read
            from the match's time; a forecast without a match has none, and nor has a
            match whose sides are not one player each (a club rated as one player, as
            in the NFL history; a team's rest is not defined by its members' states).
        season_k_boost, season_k_games, season_gap_days: an early-season K: a player's
            first ``season_k_games`` matches after a break of at least
            ``season_gap_days`` days (an off-season; or their first matches ever) are
            rated with K times ``season_k_boost`` (in [1e-3, 1e3], default 1: off;
            games a whole number in [1, 1e6], default 4; gap in [1e-9, 1e5] days,
            default 90), so that ratings catch up with the changes of the off-season.
            Either option makes the state :class:`EloTimedSkill` (the day of the
            player's last match and their matches since the last break).

    The match context (``context_field``, ``home_drift``, ``blend_field``,
    ``pool_field``, ``prior_field``, the rest edge) is read from the match being rated or
    forecast (``League.forecast(sides, match=m)``, ``rankcraft evaluate``); a prediction
    made without a match (``League.predict``, ``League.forecast`` from sides) uses the
    plain ``home_advantage``, the overall rating and the difference of the pool offsets
    the two sides carry, and no rest edge.

    Ratings stay within ±1e6 (``RATING_LIMIT``): an update that would pass it stops there.
    """

    initial_rating: float = attrs.field(default=1500.0, validator=_rating)
    k_factor: float = attrs.field(default=32.0, validator=_k)
    k_by_games: tuple[KByGames, ...] = attrs.field(default=(), converter=sorted_by_games)
    k_by_rating: tuple[KByRating, ...] = attrs.field(default=(), converter=sorted_by_rating)
    k_rating_uses_peak: bool = True
    scale: float = attrs.field(default=400.0, validator=_scale)
    home_advantage: float = attrs.field(default=0.0, validator=_rating)
    margin: str = attrs.field(default="none", validator=attrs.validators.in_(MARGIN_RULES))
    margin_form: MarginForm = attrs.field(factory=MarginForm)
    draw: str = attrs.field(default="none", validator=attrs.validators.in_(DRAW_MODELS))
    draw_kappa: float = attrs.field(default=0.5, validator=within(0.0, 1e3))
    draw_gap: float = attrs.field(default=0.0, validator=within(0.0, 10.0))
    draw_margin: float = attrs.field(default=70.0, validator=within(0.0, RATING_LIMIT))
    draw_fit: str = attrs.field(default="none", validator=attrs.validators.in_(DRAW_FITS))
    k_games_power: float = attrs.field(default=0.0, validator=within(0.0, 5.0))
    k_games_offset: float = attrs.field(default=5.0, validator=within(1e-9, 1e6))
    context_field: str | None = None
    context_rules: tuple[ContextRule, ...] = attrs.field(default=(), converter=tuple)
    home_drift: float = attrs.field(default=0.0, validator=within(-1e3, 1e3))
    home_drift_year: float = attrs.field(default=2000.0, validator=within(1.0, 9999.0))
    blend_field: str | None = None
    blend_values: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    blend_weight: float = attrs.field(default=0.5, validator=within(0.0, 1.0))
    blend_k: float = attrs.field(default=1.0, validator=within(0.0, 1e3))
    prior_field: str | None = attrs.field(default=None, validator=meta_key)
    prior_at_one: float = attrs.field(default=1800.0, validator=_rating)
    prior_per_log: float = attrs.field(default=60.0, validator=_rating)
    pool_field: str | None = None
    pool_k: float = attrs.field(default=10.0, validator=within(0.0, K_LIMIT))
    rest_per_day: float = attrs.field(default=0.0, validator=within(-1e3, 1e3))
    rest_cap_days: float = attrs.field(default=14.0, validator=within(1e-9, 1e4))
    season_k_boost: float = attrs.field(default=1.0, validator=within(1e-3, 1e3))
    season_k_games: int = attrs.field(default=4, validator=whole(1, 1_000_000))
    season_gap_days: float = attrs.field(default=90.0, validator=within(1e-9, 1e5))

    # derived from the fields once, when the params are built, for the per-match hooks
    # (not fields of the table: never read from it nor written back)
    _plain: bool = attrs.field(init=False, eq=False, repr=False)
    """None of the draw, context, blend, prior, pool or timed options: the classic
    arithmetic, bit for bit (the update's and expectation's short path)."""
    _margined: bool = attrs.field(init=False, eq=False, repr=False)
    """A margin rule multiplies K (``margin`` is not ``"none"``)."""
    _k: float | None = attrs.field(init=False, eq=False, repr=False)
    """K when no schedule applies (``k_factor``), None with a ``k_by_*`` schedule or
    ``k_games_power``."""
    _k_factors: dict[str, float] | None = attrs.field(init=False, eq=False, repr=False)
    """``{"k": K}`` for plain params without a margin and with a constant K (what every
    update explains with), else None."""

    @property
    def timed(self) -> bool:
        """Whether the options that read the player's last match time are on (rest,
        early-season K): the state is then :class:`EloTimedSkill`."""
        return self.rest_per_day != 0.0 or self.season_k_boost != 1.0

    def __attrs_post_init__(self) -> None:
        if self.context_rules and not self.context_field:
            raise ValueError("'context_rules' need a 'context_field' (the meta key they read)")
        if self.blend_field is not None and not self.blend_values:
            raise ValueError(
                f"'blend_field' {self.blend_field!r} needs 'blend_values' (the contexts rated)"
            )
        if len(set(self.blend_values)) != len(self.blend_values):
            raise ValueError(f"'blend_values' lists a value twice: {list(self.blend_values)!r}")
        plain = (
            self.draw == "none"
            and self.context_field is None
            and not self.home_drift
            and self.blend_field is None
            and self.prior_field is None
            and self.pool_field is None
            and self.rest_per_day == 0.0
            and self.season_k_boost == 1.0
        )
        k = None if self.k_by_games or self.k_by_rating or self.k_games_power else self.k_factor
        object.__setattr__(self, "_plain", plain)
        object.__setattr__(self, "_margined", self.margin != "none")
        object.__setattr__(self, "_k", k)
        constant = plain and k is not None and self.margin == "none"
        object.__setattr__(self, "_k_factors", {"k": k} if constant else None)

    DRAW_FITTED: ClassVar[tuple[str, ...]] = ("draw_kappa", "draw_gap", "draw_margin")
    """The params (and context rules' params) ``draw_fit`` sets."""

    def fit_draws(
        self, observations: Sequence[tuple[float, float, float, int, Match | None]]
    ) -> tuple[EloParams, dict[str, float]]:
        """These params with the draw model's parameters fitted by maximum likelihood
        (``_drawfit``) to ``observations``: each a match's forecast (P(side 0 wins),
        P(draw), P(side 1 wins)) under these params, the outcome (0, 1 draw, 2) and the
        match. The gap each forecast was read from is recovered from it: Davidson's odds
        of a win against a loss are 10^(gap / scale) whatever κ, and the ordered logit's
        log-odds give it as well, so the fit needs no rating.

        :returns: (the fitted params, the fitted values by dotted name, e.g.
            ``draw_kappa``, ``context_rules.0.draw_kappa``). Without a draw model or a
            fit asked for, these params and no value.
        """
        return fit_draws(self, observations)

    def k_for(self, games: int, rating: float, peak: float) -> float:
        """The K-factor for a player with ``games`` rated games, ``rating`` and ``peak``."""
        for rule in self.k_by_games:
            if games < rule.games_below:
                return rule.k
        level = peak if self.k_rating_uses_peak else rating
        for by_rating in self.k_by_rating:
            if level >= by_rating.rating_at_least:
                return by_rating.k
        return self.k_factor


_state_rating = state_within(-RATING_LIMIT, RATING_LIMIT)

RANKCRAFT_CONTRACT = 2
"""States in the per-match hooks are tuples (docs/hooks.md)."""


@attrs.frozen(slots=True)
class EloSkill:
    """An Elo player's state.

    Attributes:
        rating: rating points, |rating| ≤ 1e6 (role ``location``).
        peak: the highest rating reached so far (K schedules by rating read it), |peak| ≤
            1e6; defaults to ``rating`` when a state document leaves it out.
    """

    rating: float = state_field(role="location", validator=_state_rating)
    peak: float = state_field(
        default=attrs.Factory(lambda self: self.rating, takes_self=True),
        validator=_state_rating,
    )


def _contexts_check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    for item in value:
        if not (
            isinstance(item, int | float) and math.isfinite(item) and abs(item) <= RATING_LIMIT
        ):
            raise ValueError(f"'contexts' must hold numbers in [-1e6, 1e6]: {list(value)!r}")


@attrs.frozen(slots=True)
class EloContextSkill:
    """An Elo player's state with context-specific ratings (``blend_field`` set).

    Attributes:
        rating: the overall rating, rating points (role ``location``). peak: as
            :class:`EloSkill`. contexts: one rating per ``blend_values`` entry, in that
            order, rating points within ±1e6.
    """

    rating: float = state_field(role="location", validator=_state_rating)
    peak: float = state_field(
        default=attrs.Factory(lambda self: self.rating, takes_self=True),
        validator=_state_rating,
    )
    contexts: tuple[float, ...] = state_field(
        default=(), converter=lambda v: tuple(float(x) for x in v), validator=_contexts_check
    )


def _updates_check(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"'pool_updates' must be a whole number ≥ 0: {value!r}")


@attrs.frozen(slots=True)
class EloPoolSkill(EloContextSkill):
    """An Elo player's state with a pool offset (``pool_field`` set).

    Attributes:
        rating, peak, contexts: as :class:`EloContextSkill` (``contexts`` empty without
            ``blend_field``).
        pool_offset: the offset of the player's pool as the player last saw it, rating
            points within ±1e6; the player's strength against another pool is
            ``rating + pool_offset``.
        pool_updates: how many cross-pool results that offset includes (whole, ≥ 0).
    """

    pool_offset: float = state_field(default=0.0, validator=_state_rating)
    pool_updates: int = state_field(default=0, validator=_updates_check)


def _day_check(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 4e6):
        raise StateError(f"'last_day' must be a day number in [0, 4e6]: {value!r}")


def _games_check(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StateError(f"'season_games' must be a whole number ≥ 0: {value!r}")


@attrs.frozen(slots=True)
class EloTimedSkill(EloPoolSkill):
    """An Elo player's state that remembers when they last played (``rest_per_day`` or
    ``season_k_boost`` set).

    Attributes:
        rating, peak, contexts, pool_offset, pool_updates: as :class:`EloPoolSkill`
            (contexts empty without ``blend_field``; the pool fields 0 without
            ``pool_field``).
        last_day: the time of the player's last match as a day number (days since
            0001-01-01 UTC, the proleptic Gregorian ordinal, with the time of day as a
            fraction), in [0, 4e6]; 0 before their first match.
        season_games: their matches since the last break of ``season_gap_days`` (whole,
            ≥ 0).
    """

    last_day: float = state_field(default=0.0, validator=_day_check)
    season_games: int = state_field(default=0, validator=_games_check)


def expected_score(rating: float, opponent: float, scale: float = 400.0) -> float:
    """Expected score (win probability, draws as ½) of ``rating`` against ``opponent``
    (0.0 or 1.0 past the gaps where ``10 ** (gap / scale)`` has no float)."""
    return logistic10((opponent - rating) / scale)


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return EloParams if slot in ("initial", "expectation", "update") else None


@hookimpl
def rankcraft_initial(
    slot: str, params: EloParams
) -> EloSkill | EloContextSkill | EloPoolSkill | EloTimedSkill:
    if slot != "initial":
        raise ValueError(f"the elo plugin has no {slot!r} state")
    if params.timed:
        r = params.initial_rating
        return EloTimedSkill(r, r, tuple(r for _ in params.blend_values))
    if params.pool_field is not None:
        r = params.initial_rating
        return EloPoolSkill(r, r, tuple(r for _ in params.blend_values))
    if params.blend_field is not None:
        r = params.initial_rating
        return EloContextSkill(r, r, tuple(r for _ in params.blend_values))
    return EloSkill(params.initial_rating, params.initial_rating)


@hookimpl
def rankcraft_expectation(
    params: EloParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float]:
    scale = params.scale
    if len(side_states) == 2:
        if not params._plain:
            p = expected_of_gap(params, side_gap(params, side_states, home, match), match)
            return [p, 1.0 - p]
        # (side_probabilities' two-sided case and home_edge, written out)
        advantage = params.home_advantage
        edge = 0.0 if home is None or advantage == 0.0 else advantage if home == 0 else -advantage
        x = (side_states[1][0] - (side_states[0][0] + edge)) / scale
        p = 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0  # (logistic10, written out)
        return [p, 1.0 - p]
    edge = home_edge(params.home_advantage, home, 0)
    return side_probabilities(
        side_states, lambda a, b, e: expected_score(a[0] + e, b[0], scale), edge
    )


@hookimpl
def rankcraft_outcomes(
    params: EloParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float] | None:
    """(P(side 0 wins), P(draw), P(side 1 wins)) for two sides under the draw model, or
    None without one (``draw = "none"``) or for more than two sides. The gap is the
    expectation's (:func:`side_gap`, the match's context included), so P(win) + ½
    P(draw) is the expected score."""
    if params.draw == "none" or len(side_states) != 2:
        return None
    gap = side_gap(params, side_states, home, match)
    win, draw, loss = outcome_probabilities(params, gap, match)
    return [win, draw, loss]


def _k_of(params: EloParams, state: State, games: int) -> float:
    if params._k is not None:
        return params._k
    if params.k_by_games or params.k_by_rating:
        return params.k_for(games, state[RATING], state[PEAK])
    if params.k_games_power:
        return float(params.k_factor / (games + params.k_games_offset) ** params.k_games_power)
    return params.k_factor


_explained = LastFactors()
"""The last update's new state and its factors, for :func:`rankcraft_explain`."""


@hookimpl
def rankcraft_update(
    params: EloParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> State:
    if not params._plain:
        return _explained.keep(*_rated(params, state, pairings, games, side, match))
    rating = state[0]
    scale = params.scale
    edge = 0.0
    advantage = params.home_advantage
    if advantage and match is not None and len(match.teams) == 2:
        home = match.home  # (home_edge, written out)
        edge = 0.0 if home is None else advantage if home == side else -advantage
    surprise = 0.0
    for opponent, score, weight in pairings:
        x = (opponent[0] - rating - edge) / scale
        surprise += weight * (score - (1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0))
    k = params._k
    if k is None:
        k = _k_of(params, state, games)
    if params._margined:
        factors = {"k": k}
        k *= margin_factor(
            params, pairings, match, side, rating + edge - pairings[0][0][0], factors
        )
        new = rating + k * surprise
        if not -RATING_LIMIT <= new <= RATING_LIMIT:
            new = limit(new, -RATING_LIMIT, RATING_LIMIT)
        peak = state[1]
        return _explained.keep((new, new if new > peak else peak), factors)
    new = rating + k * surprise
    if not -RATING_LIMIT <= new <= RATING_LIMIT:
        new = limit(new, -RATING_LIMIT, RATING_LIMIT)
    peak = state[1]
    return (new, new if new > peak else peak)


@hookimpl
def rankcraft_explain(
    params: EloParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    after: State,
) -> dict[str, float]:
    """``k`` (the K-factor used), with ``margin``, ``season_k_boost`` and ``pool_k`` where
    they applied."""
    known = params._k_factors  # (a constant K explains every change)
    if known is not None:
        return known
    if params._plain and not params._margined:
        # a plain update without a margin keeps no factors: K alone explains it
        k = _k_of(params, state, games)
        known = _k_explained.get(k)
        if known is None:
            if len(_k_explained) > 4096:  # (a schedule by rating: many values)
                _k_explained.clear()
            known = _k_explained[k] = {"k": k}
        return known
    kept = _explained.of(after)
    if kept is not None:
        return kept
    if params._plain:
        again = _explained.of(rankcraft_update(params, state, pairings, games, side, match))
        assert again is not None
        return again
    return _rated(params, state, pairings, games, side, match)[1]


_k_explained: dict[float, dict[str, float]] = {}
"""One factors mapping per K value (a constant K explains every change with one)."""


def _rated(
    params: EloParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> tuple[State, dict[str, float]]:
    """The update's rare path (``_elo_update``): the new state and the factors that
    explain it, K read from the player at their newcomer prior."""
    state = start_state(params, state, match, side)
    return rated(params, state, _k_of(params, state, games), pairings, side, match)
