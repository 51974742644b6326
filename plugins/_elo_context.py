"""What the ``elo`` plugin reads from a match beyond the two ratings, for its rare paths.

The venue (home advantage per context rule, drifting by year), context ratings
(``blend_field``), newcomer priors (``prior_field``), pool offsets (``pool_field``), rest
and the early season (the timed state): each option's reading of the match and of the
players' states, the two-sided forecast's gap built from them (:func:`side_gap`), and the
state fields past rating and peak that an update writes (:func:`extended_state`). Plain
params read none of it: the plugin's per-match hooks take their short path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rankcraft import Match, Pairing
from rankcraft.validators import RATING_LIMIT, limit

from ._matchup import ContextRule, first_rule, home_edge, side_rank, value_index

if TYPE_CHECKING:
    from .elo import EloParams

State = tuple[Any, ...]
RATING, PEAK, CONTEXTS, OFFSET, UPDATES, DAY, SEASON_GAMES = range(7)
"""Positions of the fields in an Elo state's tuple form: every state class of ``elo``
extends the one before it, so a field has one position in all of them."""


def _updates(state: State) -> int:
    """A state's pool updates (0 for a state without them)."""
    return int(state[UPDATES]) if len(state) > UPDATES else 0


def day_number(moment: datetime) -> float:
    """``moment`` as a day number: days since 0001-01-01 UTC with the time of day as a
    fraction (``EloTimedSkill.last_day``).

    >>> from datetime import UTC
    >>> noon = datetime(2024, 1, 2, 12, tzinfo=UTC)
    >>> day_number(noon) - day_number(datetime(2024, 1, 1, tzinfo=UTC)), day_number(noon)
    (1.5, 738887.5)
    """
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    seconds = utc.hour * 3600 + utc.minute * 60 + utc.second + utc.microsecond / 1e6
    return utc.toordinal() + seconds / 86400.0


def _rest(params: EloParams, state: Any, day: float) -> float:
    """Days of rest of a player before a match on ``day``, up to ``rest_cap_days`` (a
    player who never played: the cap)."""
    last = float(state[DAY]) if len(state) > DAY else 0.0
    if last <= 0.0:
        return params.rest_cap_days
    return min(max(day - last, 0.0), params.rest_cap_days)


def rest_edge(params: EloParams, match: Match | None, mine: Any, theirs: Any) -> float:
    """Rating points ``mine``'s side gains from resting longer than ``theirs`` before the
    match: 0 without ``rest_per_day``, without a match, or unless each side is one
    player (a side's rest is not defined by its members' averaged states, and the
    update, which reads each member's own, would then disagree with the expectation)."""
    if not params.rest_per_day or match is None or any(len(team) != 1 for team in match.teams):
        return 0.0
    day = day_number(match.played_at)
    return params.rest_per_day * (_rest(params, mine, day) - _rest(params, theirs, day))


def _year(match: Match) -> float:
    moment = match.played_at
    return moment.year + (moment.timetuple().tm_yday - 1) / 365.25


def context_rule(params: EloParams, match: Match | None) -> ContextRule | None:
    """The first context rule whose text the match's context field contains, or None."""
    return first_rule(match, params.context_field, params.context_rules)


def venue(params: EloParams, match: Match | None) -> tuple[float, float, float]:
    """(home advantage, K scale, gap scale) of a match under the params' context rules
    and drift."""
    advantage, k_scale, gap_scale = params.home_advantage, 1.0, 1.0
    if match is None:
        return advantage, k_scale, gap_scale
    rule = context_rule(params, match)
    if rule is not None:
        k_scale, gap_scale = rule.k_scale, rule.gap_scale
        if rule.home_advantage is not None:
            advantage = rule.home_advantage
    if params.home_drift:
        advantage += params.home_drift * (_year(match) - params.home_drift_year)
    return advantage, k_scale, gap_scale


def _prior(params: EloParams, match: Match | None, side: int) -> float | None:
    """The newcomer prior of ``side`` from ``meta[prior_field]``, or None."""
    rank = side_rank(match, params.prior_field, side)
    if rank is None:
        return None
    value = params.prior_at_one - params.prior_per_log * math.log(rank)
    return limit(value, -RATING_LIMIT, RATING_LIMIT)


def start_state(params: EloParams, state: Any, match: Match | None, side: int) -> Any:
    """``state``, or for a newcomer (rating still exactly the initial one) with a prior
    from the match, the state at the prior."""
    if params.prior_field is None or state[RATING] != params.initial_rating:
        return state
    prior = _prior(params, match, side)
    if prior is None:
        return state
    if len(state) > CONTEXTS:  # (the pool and timed states too)
        return (prior, prior, tuple(prior for _ in state[CONTEXTS]), *state[CONTEXTS + 1 :])
    return (prior, prior)


def pools_of(params: EloParams, match: Match | None) -> tuple[str, str] | None:
    """The two sides' pools from ``meta[pool_field]`` (a list, one name per side, or one
    name for both), or None when the field is not set or a side's pool is unknown."""
    if params.pool_field is None or match is None or len(match.teams) != 2:
        return None
    value = match.meta.get(params.pool_field)
    if isinstance(value, list | tuple):
        if len(value) != 2 or value[0] is None or value[1] is None:
            return None
        return str(value[0]), str(value[1])
    return None if value is None else (str(value), str(value))


def _offset(state: Any) -> float:
    """A state's pool offset (0 for a state without one, e.g. an imported plain one)."""
    return float(state[OFFSET]) if len(state) > OFFSET else 0.0


def pool_gap(pools: tuple[str, str] | None, mine: Any, theirs: Any) -> float:
    """Rating points the pool offsets add to ``mine``'s side against ``theirs``: the
    difference of the two offsets between different pools, else 0."""
    if pools is None or pools[0] == pools[1]:
        return 0.0
    return _offset(mine) - _offset(theirs)


def carried_gap(params: EloParams, mine: Any, theirs: Any) -> float:
    """The pool offsets' points for ``mine`` against ``theirs`` in a forecast without a
    match (no pool names): the difference of the offsets the two carry (members of one
    pool carry the same offset once they have met)."""
    return _offset(mine) - _offset(theirs) if params.pool_field is not None else 0.0


def pool_after(
    params: EloParams, pools: tuple[str, str] | None, state: Any, opponent: Any, surprise: float
) -> tuple[float, int]:
    """(pool offset, pool updates) of a player after a match: moved by ``pool_k``
    times the surprise against another pool; between two members of one pool, the one
    with more updates."""
    offset, updates = _offset(state), _updates(state)
    if pools is None:
        return offset, updates
    if pools[0] != pools[1]:
        moved = limit(offset + params.pool_k * surprise, -RATING_LIMIT, RATING_LIMIT)
        return moved, updates + 1
    theirs = _updates(opponent)
    if theirs > updates:
        return _offset(opponent), theirs
    return offset, updates


def blend_index(params: EloParams, match: Match | None) -> int | None:
    """The context rating a match uses (its index in ``blend_values``), or None."""
    return value_index(match, params.blend_field, params.blend_values)


def rating_in(params: EloParams, state: Any, index: int | None) -> float:
    """The rating a forecast uses: the overall one, blended with the context's."""
    if index is None:
        return float(state[RATING])
    contexts = state[CONTEXTS] if len(state) > CONTEXTS else ()
    if index >= len(contexts):
        return float(state[RATING])
    w = params.blend_weight
    return float((1.0 - w) * state[RATING] + w * contexts[index])


def side_gap(
    params: EloParams, side_states: Sequence[Any], home: int | None, match: Match | None
) -> float:
    """The rating gap of side 0 over side 1 that a two-sided forecast reads, rating
    points: the ratings (blended with the match's context rating, a newcomer at their
    prior), side 0's home edge (per competition and drifting), the pool offsets (the
    match's pools; without a match, the offsets the two carry) and the rest edge, all
    times the match's ``gap_scale``. The expectation (``expected_of_gap``) and the three
    outcomes (``outcome_probabilities``) are both read from it, so they agree."""
    advantage, _, gap_scale = venue(params, match)
    index = blend_index(params, match)
    first, second = (start_state(params, side_states[i], match, i) for i in (0, 1))
    gap = (
        rating_in(params, first, index)
        + home_edge(advantage, home, 0)
        + (
            carried_gap(params, first, second)
            if match is None
            else pool_gap(pools_of(params, match), first, second)
        )
        + rest_edge(params, match, first, second)
        - rating_in(params, second, index)
    )
    return gap * gap_scale


def games_this_season(params: EloParams, state: Any, match: Match | None) -> int:
    """The player's matches since their last break of ``season_gap_days`` before this
    one (0 when this match follows such a break, or is their first)."""
    last = float(state[DAY]) if len(state) > DAY else 0.0
    if last <= 0.0:
        return 0
    if match is not None and day_number(match.played_at) - last >= params.season_gap_days:
        return 0
    return int(state[SEASON_GAMES]) if len(state) > SEASON_GAMES else 0


def extended_state(
    params: EloParams,
    state: State,
    rated: tuple[float, float],
    moved: tuple[int | None, float, float],
    pools: tuple[str, str] | None,
    pairings: Sequence[Pairing],
    match: Match | None,
    season_games: int,
) -> State:
    """The state an update with context ratings, pool offsets or the timed options
    writes: ``rated`` (the new rating and peak), the contexts with the match's own moved
    ``blend_k`` times as far as the rating (``moved``: its index, K and the surprise), the
    pool offset after the match (:func:`pool_after`, against the first pairing's
    opponent), then the match's day and the season's games counting it."""
    new, peak = rated
    index, k, surprise = moved
    contexts = tuple(state[CONTEXTS]) if len(state) > CONTEXTS else ()
    if len(contexts) != len(params.blend_values):  # (an imported state without them)
        contexts = tuple(state[RATING] for _ in params.blend_values)
    if index is not None:
        context = contexts[index] + params.blend_k * k * surprise
        contexts = (
            *contexts[:index],
            limit(context, -RATING_LIMIT, RATING_LIMIT),
            *contexts[index + 1 :],
        )
    if params.pool_field is None and not params.timed:
        return (new, peak, contexts)
    offset, updates = pool_after(params, pools, state, pairings[0][0], surprise)
    if not params.timed:
        return (new, peak, contexts, offset, updates)
    day = (
        (float(state[DAY]) if len(state) > DAY else 0.0)
        if match is None
        else (day_number(match.played_at))
    )
    return (new, peak, contexts, offset, updates, day, season_games + 1)
