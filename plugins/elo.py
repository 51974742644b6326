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

import attrs

from rankcraft import Pairing, PlayerContext, hookimpl, state_field
from rankcraft.validators import RATING_LIMIT, limit, state_within, within

from ._matchup import MARGIN_RULES, home_edge, logistic10, margin_multiplier, side_probabilities

K_LIMIT = 1e4
"""The largest K-factor: ten thousand rating points per unit of surprise."""
SCALE_LIMIT = 1e6
"""The largest ``scale`` (rating points for 10-to-1 odds)."""

_rating = within(-RATING_LIMIT, RATING_LIMIT)
_k = within(1e-6, K_LIMIT)

__all__ = ["home_edge", "margin_multiplier"]


@attrs.frozen(kw_only=True)
class KByGames:
    """Attributes:
    games_below: the rule applies while a player has fewer rated games than this, ≥ 1.
    k: the K-factor then, rating points per unit of surprise, in [1e-6, 1e4].
    """

    games_below: int = attrs.field(validator=attrs.validators.ge(1))
    k: float = attrs.field(validator=_k)


@attrs.frozen(kw_only=True)
class KByRating:
    """Attributes:
    rating_at_least: the rule applies from this rating (rating points) up, |x| ≤ 1e6.
    k: the K-factor then, in [1e-6, 1e4].
    """

    rating_at_least: float = attrs.field(validator=_rating)
    k: float = attrs.field(validator=_k)


def _sorted_games(rules: Sequence[KByGames]) -> tuple[KByGames, ...]:
    return tuple(sorted(rules, key=lambda r: r.games_below))


def _sorted_ratings(rules: Sequence[KByRating]) -> tuple[KByRating, ...]:
    return tuple(sorted(rules, key=lambda r: -r.rating_at_least))


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
        margin: ``"none"`` (default) or ``"fivethirtyeight"``: K is multiplied by
            FiveThirtyEight's margin-of-victory multiplier (``margin_multiplier``, bounded
            by 13.8), from the two sides' scores (two-sided matches rated 1-v-1 or as team
            means).

    Ratings stay within ±1e6 (``RATING_LIMIT``): an update that would pass it stops there.
    """

    initial_rating: float = attrs.field(default=1500.0, validator=_rating)
    k_factor: float = attrs.field(default=32.0, validator=_k)
    k_by_games: tuple[KByGames, ...] = attrs.field(default=(), converter=_sorted_games)
    k_by_rating: tuple[KByRating, ...] = attrs.field(default=(), converter=_sorted_ratings)
    k_rating_uses_peak: bool = True
    scale: float = attrs.field(default=400.0, validator=_scale)
    home_advantage: float = attrs.field(default=0.0, validator=_rating)
    margin: str = attrs.field(default="none", validator=attrs.validators.in_(MARGIN_RULES))

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


def expected_score(rating: float, opponent: float, scale: float = 400.0) -> float:
    """Expected score (win probability, draws as ½) of ``rating`` against ``opponent``
    (0.0 or 1.0 past the gaps where ``10 ** (gap / scale)`` has no float)."""
    return logistic10((opponent - rating) / scale)


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return EloParams if slot in ("initial", "expectation", "update") else None


@hookimpl
def rankcraft_initial(slot: str, params: EloParams) -> EloSkill:
    if slot != "initial":
        raise ValueError(f"the elo plugin has no {slot!r} state")
    return EloSkill(params.initial_rating, params.initial_rating)


@hookimpl
def rankcraft_expectation(
    params: EloParams, side_states: Sequence[EloSkill], home: int | None
) -> list[float]:
    scale = params.scale
    edge = home_edge(params.home_advantage, home, 0)
    if len(side_states) == 2:  # (side_probabilities' two-sided case, written out)
        p = expected_score(side_states[0].rating + edge, side_states[1].rating, scale)
        return [p, 1.0 - p]
    return side_probabilities(
        side_states, lambda a, b, e: expected_score(a.rating + e, b.rating, scale), edge
    )


@hookimpl
def rankcraft_update(
    params: EloParams, state: EloSkill, pairings: Sequence[Pairing], context: PlayerContext
) -> EloSkill:
    rating = state.rating
    scale = params.scale
    match = context.match
    edge = 0.0
    if params.home_advantage and match is not None and len(match.teams) == 2:
        edge = home_edge(params.home_advantage, match.home, context.side)
    surprise = 0.0
    for opponent, score, weight in pairings:
        gap = opponent.rating - rating - edge
        surprise += weight * (score - logistic10(gap / scale))
    if params.k_by_games or params.k_by_rating:
        k = params.k_for(context.matches, rating, state.peak)
    else:
        k = params.k_factor
    context.factors["k"] = k
    if (
        params.margin == "fivethirtyeight"
        and match is not None
        and match.scores is not None
        and len(match.scores) == 2
        and len(pairings) == 1
    ):
        mine, theirs = match.scores[context.side], match.scores[1 - context.side]
        lead = rating + edge - pairings[0].opponent.rating  # my rating edge over the opponent
        multiplier = margin_multiplier(mine - theirs, lead)
        context.factors["margin"] = multiplier
        k *= multiplier
    new = rating + k * surprise
    if not -RATING_LIMIT <= new <= RATING_LIMIT:
        new = limit(new, -RATING_LIMIT, RATING_LIMIT)
    peak = state.peak
    return EloSkill(new, new if new > peak else peak)
