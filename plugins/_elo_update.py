"""The ``elo`` plugin's update on its rare path, step by step.

A margin of victory, a draw model, context rules, a drifting home advantage, context
ratings, newcomer priors, pool offsets or the timed options (rest, early-season K): the
plugin's ``rankcraft_update`` hands such params to :func:`rated`. The expectations read
the match's context (:func:`_surprise`), K is scaled by the context rule, the early
season and the margin (:func:`margin_factor`, which the per-match path shares), and the
state's fields past rating and peak are written by ``_elo_context.extended_state``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rankcraft import Match, Pairing
from rankcraft.validators import RATING_LIMIT, limit

from ._elo_context import (
    PEAK,
    RATING,
    State,
    blend_index,
    extended_state,
    games_this_season,
    pool_gap,
    pools_of,
    rating_in,
    rest_edge,
    start_state,
    venue,
)
from ._elo_draws import expected_of_gap
from ._matchup import home_edge, margin_rule_multiplier

if TYPE_CHECKING:
    from .elo import EloParams


def rated(
    params: EloParams,
    state: State,
    k: float,
    pairings: Sequence[Pairing],
    side: int,
    match: Match | None,
) -> tuple[State, dict[str, float]]:
    """The update with a margin, a draw model, context rules, a drifting home advantage,
    context ratings or pool offsets (two-sided matches read the match; a closed period has
    none): the new state and the factors that explain it. ``state``: the player's, at
    their newcomer prior (:func:`start_state`); ``k``: their K before the match's
    context scales it."""
    factors: dict[str, float] = {}
    advantage, k_scale, gap_scale = venue(params, match)
    index = blend_index(params, match)
    pools = pools_of(params, match)
    if pools is not None and side == 1:
        pools = (pools[1], pools[0])
    surprise, lead = _surprise(
        params, state, pairings, side, match, index, pools, advantage, gap_scale
    )
    k = k * k_scale
    season_games = 0
    if params.timed:
        season_games = games_this_season(params, state, match)
        if season_games < params.season_k_games and params.season_k_boost != 1.0:
            k *= params.season_k_boost
            factors["season_k_boost"] = params.season_k_boost
    factors["k"] = k
    if params.margin != "none":
        k *= margin_factor(params, pairings, match, side, lead, factors)
    new = limit(state[RATING] + k * surprise, -RATING_LIMIT, RATING_LIMIT)
    peak = state[PEAK] if state[PEAK] >= new else new
    if params.blend_field is None and params.pool_field is None and not params.timed:
        return (new, peak), factors
    after = extended_state(
        params, state, (new, peak), (index, k, surprise), pools, pairings, match, season_games
    )
    if pools is not None and pools[0] != pools[1]:
        factors["pool_k"] = params.pool_k
    return after, factors


def _surprise(
    params: EloParams,
    state: State,
    pairings: Sequence[Pairing],
    side: int,
    match: Match | None,
    index: int | None,
    pools: tuple[str, str] | None,
    advantage: float,
    gap_scale: float,
) -> tuple[float, float]:
    """(Σ w · (s − E) over the pairings, the last pairing's lead): :func:`rated`'s
    expectations, each from the gap the match's context makes (:func:`side_gap`'s terms
    for the player against each opponent, a 1-v-1 opponent at their prior)."""
    edge = 0.0
    if advantage and match is not None and len(match.teams) == 2:
        edge = home_edge(advantage, match.home, side)
    mine = rating_in(params, state, index)
    two_sided = match is not None and len(match.teams) == 2
    surprise = lead = 0.0
    for opponent, score, weight in pairings:
        if len(pairings) == 1 and two_sided:
            opponent = start_state(params, opponent, match, 1 - side)
        lead = (
            mine
            + edge
            + pool_gap(pools, state, opponent)
            + (rest_edge(params, match, state, opponent) if two_sided else 0.0)
            - rating_in(params, opponent, index)
        )
        surprise += weight * (score - expected_of_gap(params, lead * gap_scale, match))
    return surprise, lead


def margin_factor(
    params: EloParams,
    pairings: Sequence[Pairing],
    match: Match | None,
    side: int,
    lead: float,
    factors: dict[str, float],
) -> float:
    """K's margin-of-victory multiplier for a two-sided match with scores and one pairing
    (explained as ``margin``), else 1. ``lead``: the player's rating edge over the
    opponent, home advantage included, rating points."""
    if match is None or match.scores is None or len(match.scores) != 2 or len(pairings) != 1:
        return 1.0
    margin = match.scores[side] - match.scores[1 - side]
    multiplier = margin_rule_multiplier(params.margin, params.margin_form, margin, lead)
    factors["margin"] = multiplier
    return multiplier
