"""``ttt`` plugin: TrueSkill Through Time, a whole-history model (docs/ttt.md).

A player's skill is a Gaussian belief that drifts in time: between two appearances
``dt`` days apart its variance grows by γ² · dt, and a game's performances are the
skills plus N(0, β²) noise, compared as TrueSkill compares them (a draw within the margin
that ``p_draw`` sets). Where TrueSkill moves a match's players once, TrueSkill Through
Time (Dangauthier, Herbrich, Minka and Graepel, NIPS 2007) fits every belief at every
time from the whole history by expectation propagation, forward and backward in time, so
that later matches correct earlier estimates (of a player and, through them, of their
opponents).

The plugin fills the ``[fit]`` slot (:mod:`rankcraft.fithooks`): before each day's first
match the league hands it the previous day's matches, and it refits from where the last
fit stood (only the beliefs that move are visited, :mod:`rankcraft.plugins._ttt`). Within
a day it rates forward as TrueSkill does (its ``update`` and ``team`` slots are the
``trueskill`` plugin's factor graph with τ = 0), and its decay grows σ by γ² per idle day,
so that a forecast is the fit's belief at the player's latest day grown to the match's.

>>> params = TTTParams(gamma=0.1)
>>> rankcraft_decay(params, (1.0, 2.0), 16.0)
(1.0, 2.039607805437114)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import attrs

from rankcraft import FitLimits, InputError, Match, Needs, hookimpl, state_field
from rankcraft.validators import RATING_LIMIT, meta_key, state_within, within

from . import trueskill
from ._matchup import side_rank
from ._trueskill_graph import TrueSkillMessage
from ._ttt import Game, ThroughTime
from ._ttt_game import outcomes
from ._ttt_offsets import (
    OffsetMessage,
    aggregate,
    is_offset,
    messages,
    offset_id,
    offset_index,
    offsets,
    with_offset,
)
from .trueskill import TrueSkillParams, TrueSkillSkill
from .wenglin import SIGMA_RANGE, play_weights, side_score

RANKCRAFT_CONTRACT = 2

SLOTS = ("initial", "decay", "expectation", "update", "team", "fit")
"""The slots the plugin fills, each with :class:`TTTParams`."""

State = tuple[Any, ...]

__all__ = ["TTTOffsetSkill", "TTTParams", "day_of", "evidence", "game_of"]


@attrs.frozen(kw_only=True)
class TTTParams(TrueSkillParams):
    """Params of the ``ttt`` plugin (every slot it fills; ``[team]`` and ``[fit]`` naming
    ``ttt`` without their own params table share the update's). TrueSkill's fields
    (:class:`rankcraft.plugins.trueskill.TrueSkillParams`) with the defaults of the
    ``trueskillthroughtime`` package, and:

    Attributes:
        gamma: the skill drift, deviation per √day, in [0, 1e3] (default 0.03):
            between appearances ``dt`` days apart a belief's variance grows by
            gamma² · dt.
        tau: fixed at 0 (the drift is gamma's, per day, not per match); in [0, 0].
        evidence_field, evidence_at_one, evidence_per_log, evidence_sd: a ranking read
            as evidence of skill: where ``meta[evidence_field]`` lists a positive number
            per side (``atp_rank``; one player a side), the player's skill that day is
            also known to be N(evidence_at_one − evidence_per_log · ln(rank),
            evidence_sd²), skill units (|at_one|, |per_log| ≤ 1e6; sd in [1e-6, 1e6];
            defaults 0, 0 and 1). The fit multiplies it into the player's belief at that
            day, once a day; a newcomer (state still exactly the prior) is also forecast
            and rated from the prior times it. ``evidence_field`` is a key of ``meta``
            (default None: no evidence).
        offset_field, offset_values, offset_sigma, offset_gamma: a skill offset per
            value (a tennis surface): in a match whose ``meta[offset_field]`` is one of
            ``offset_values``, a player performs at their skill plus their offset for that
            value, an own belief with prior N(0, offset_sigma²) that drifts by
            ``offset_gamma`` per √day (sigma in [1e-6, 1e6], default 0.5; gamma in
            [0, 1e3], default 0.01). The state is then a :class:`TTTOffsetSkill`.
            ``offset_field`` is a key of ``meta`` (default None: no offsets) and needs
            ``offset_values`` (no value twice).
    """

    mu: float = attrs.field(default=0.0, validator=within(-1e6, 1e6))
    sigma: float = attrs.field(default=6.0, validator=within(1e-6, 1e6))
    beta: float = attrs.field(default=1.0, validator=within(1e-6, 1e6))
    tau: float = attrs.field(default=0.0, validator=within(0.0, 0.0))
    draw_probability: float = attrs.field(default=0.0, validator=within(0.0, 0.999999))
    gamma: float = attrs.field(default=0.03, validator=within(0.0, 1e3))
    evidence_field: str | None = attrs.field(default=None, validator=meta_key)
    evidence_at_one: float = attrs.field(default=0.0, validator=within(-1e6, 1e6))
    evidence_per_log: float = attrs.field(default=0.0, validator=within(-1e6, 1e6))
    evidence_sd: float = attrs.field(default=1.0, validator=within(1e-6, 1e6))
    offset_field: str | None = attrs.field(default=None, validator=meta_key)
    offset_values: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    offset_sigma: float = attrs.field(default=0.5, validator=within(1e-6, 1e6))
    offset_gamma: float = attrs.field(default=0.01, validator=within(0.0, 1e3))

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.offset_field is not None and not self.offset_values:
            raise ValueError(
                f"'offset_field' {self.offset_field!r} needs 'offset_values' (the values "
                "a player has an offset for)"
            )
        if len(set(self.offset_values)) != len(self.offset_values):
            raise ValueError(f"'offset_values' lists a value twice: {list(self.offset_values)!r}")


def _numbers(values: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in values)


def _means(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not all(math.isfinite(x) and abs(x) <= RATING_LIMIT for x in value):
        raise ValueError(f"{attribute.name!r} must hold numbers in [-1e6, 1e6]: {list(value)!r}")


def _deviations(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not all(math.isfinite(x) and 1e-6 <= x <= 1e6 for x in value):
        raise ValueError(f"{attribute.name!r} must hold numbers in [1e-6, 1e6]: {list(value)!r}")


@attrs.frozen(slots=True)
class TTTOffsetSkill:
    """A ``ttt`` player with skill offsets (``offset_field`` set).

    Attributes:
        mu, sigma: the belief about the skill, as :class:`TrueSkillSkill`.
        offset_mu, offset_sigma: the belief about each offset, one per ``offset_values``
            entry in that order, skill units (means within ±1e6, deviations in
            [1e-6, 1e6]); as of the player's latest day.
    """

    mu: float = state_field(role="location", validator=state_within(-RATING_LIMIT, RATING_LIMIT))
    sigma: float = state_field(role="spread", validator=state_within(*SIGMA_RANGE))
    offset_mu: tuple[float, ...] = state_field(default=(), converter=_numbers, validator=_means)
    offset_sigma: tuple[float, ...] = state_field(
        default=(), converter=_numbers, validator=_deviations
    )


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return (
        TTTParams if slot in ("initial", "decay", "expectation", "update", "team", "fit") else None
    )


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    if slot == "fit":
        return Needs(fields=("mu", "sigma"), modes=("match",))
    result: Needs | None = trueskill.rankcraft_needs(slot)
    return result


@hookimpl
def rankcraft_initial(slot: str, params: TTTParams) -> TrueSkillSkill | TTTOffsetSkill:
    result: TrueSkillSkill = trueskill.rankcraft_initial(slot, params)
    if params.offset_field is None:
        return result
    count = len(params.offset_values)
    return TTTOffsetSkill(params.mu, params.sigma, (0.0,) * count, (params.offset_sigma,) * count)


@hookimpl
def rankcraft_decay(params: TTTParams, state: State, periods: float) -> State:
    """σ grows by γ² per idle period (a day, with the ruleset's ``length_days = 1``), an
    offset's by ``offset_gamma``² (one never played on stays at its prior, as in the fit,
    where a belief drifts only after its first game)."""
    if periods <= 0.0:
        return state
    mu, sigma = state[0], state[1]
    grown = (mu, math.sqrt(sigma * sigma + params.gamma * params.gamma * periods))
    if params.offset_field is None:
        return grown
    means, sds = offsets(params, state)
    drift = params.offset_gamma * params.offset_gamma * periods
    prior = (0.0, params.offset_sigma)  # (an offset never played on: no drift yet, as the fit)
    pairs = zip(means, sds, strict=True)
    grown_sds = tuple(sd if (m, sd) == prior else math.sqrt(sd * sd + drift) for m, sd in pairs)
    return (*grown, tuple(means), grown_sds)


@hookimpl
def rankcraft_aggregate(
    params: TTTParams, members: Sequence[State], layout: Mapping[str, int]
) -> State:
    result: State = trueskill.rankcraft_aggregate(params, members, layout)
    if params.offset_field is None:
        return result
    return aggregate(params, members, result)


@hookimpl
def rankcraft_team(
    params: TTTParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
    layout: Mapping[str, int],
) -> Any:
    """TrueSkill's factor graph of the match; a draw needs ``draw_probability`` > 0 (the
    model gives a draw no chance without one)."""
    if params.draw_probability == 0.0 and len(set(places)) < len(places):
        raise InputError(
            f"'scores' or 'ranks' tie, and this ruleset's ttt has draw_probability 0 (a "
            f"draw has no chance): {list(places)!r}"
        )
    index = offset_index(params, match)
    use_evidence = params.evidence_field is not None and weight > 0.0
    if index is None and not use_evidence:
        return trueskill.rankcraft_team(params, sides, places, weight, match, layout)
    known = [
        _newcomer_evidence(params, side, match, i) if use_evidence else None
        for i, side in enumerate(sides)
    ]
    pairs = zip(sides, known, strict=True)
    sides_known = [side if e is None else [_times(side[0], e)] for side, e in pairs]
    if index is not None:
        bases = [[(state[0], state[1]) for state in side] for side in sides_known]
        found = messages(params, bases, sides, places, match, index)
        return [
            [[(_joined_offset(m, e, weight), side_score(places, i), weight)] for m in found[i]]
            for i, e in enumerate(known)
        ]
    rated = trueskill.rankcraft_team(params, sides_known, places, weight, match, layout)
    return [  # (the evidence joins the match's message: the update starts from the prior)
        members if e is None else [[(_joined(members[0][0][0], e, weight), *members[0][0][1:])]]
        for members, e in zip(rated, known, strict=True)
    ]


@hookimpl
def rankcraft_expectation(
    params: TTTParams, side_states: Sequence[State], match: Match | None
) -> list[float]:
    result: list[float] = trueskill.rankcraft_expectation(
        params, _forecast_sides(params, side_states, match)
    )
    return result


@hookimpl
def rankcraft_outcomes(
    params: TTTParams, side_states: Sequence[State], match: Match | None
) -> tuple[float, ...] | None:
    """Win, draw and loss of two sides: the performance difference against the draw
    margin of ``draw_probability`` (None without draws, for more sides, or for another
    plugin's params: a hook manager that broadcasts the hook asks every plugin)."""
    if not isinstance(params, TTTParams) or len(side_states) != 2:
        return None
    if params.draw_probability == 0.0:
        return None
    a, b = _forecast_sides(params, side_states, match)
    players = [s[2] if len(s) > 2 else 1 for s in (a, b)]
    sd = math.sqrt(a[1] ** 2 + b[1] ** 2 + (players[0] + players[1]) * params.beta**2)
    return outcomes(a[0] - b[0], sd, params.draw_margin(players[0] + players[1]))


@hookimpl
def rankcraft_update(params: TTTParams, state: State, pairings: Sequence[Sequence[Any]]) -> State:
    if params.offset_field is None:
        result: State = trueskill.rankcraft_update(params, state, pairings)
        return result
    bases, moved = [], dict[int, list[Any]]()
    for message, *rest in pairings:
        if isinstance(message, OffsetMessage):
            moved.setdefault(message.at, []).append((message.offset, *rest))
            message = message.base
        bases.append((message, *rest))
    means, sds = offsets(params, state)
    for k, told in moved.items():
        means[k], sds[k] = trueskill.rankcraft_update(params, (means[k], sds[k]), told)
    base = trueskill.rankcraft_update(params, (state[0], state[1]), bases)
    return (*base, tuple(means), tuple(sds))


@hookimpl
def rankcraft_fit_start(params: TTTParams) -> ThroughTime:
    return ThroughTime(params.mu, params.sigma, params.beta, params.gamma, params.draw_probability)


@hookimpl
def rankcraft_fit(
    params: TTTParams, fit: ThroughTime, matches: Sequence[Match], limits: FitLimits
) -> dict[str, State]:
    """Add the matches, one batch per day, and refit from where the fit stood."""
    days: dict[int, tuple[list[Game], dict[str | int, tuple[float, float]]]] = {}
    for match in matches:
        games, known = days.setdefault(day_of(match.played_at), ([], {}))
        games.append(_game(params, fit, match))
        for side, team in enumerate(match.teams):
            if len(team) == 1 and (e := evidence(params, match, side)) is not None:
                known.setdefault(team[0], e)
    for day, (games, known) in days.items():
        fit.add(float(day), games, known)
    fit.converge(limits.tolerance, limits.iterations)
    return {str(p): _fitted(params, fit, p) for p in fit.ids if not is_offset(p)}


def _game(params: TTTParams, fit: ThroughTime, match: Match) -> Game:
    """The match as the fit's game; with offsets, each player a team with their offset
    for the match's value (registered with the offsets' prior and drift)."""
    index = offset_index(params, match)
    game = game_of(match, params.min_delta)
    if index is None:
        return game
    value = params.offset_values[index]
    teams = []
    for team in match.teams:
        members = []
        for player in team:
            offset = offset_id(player, value)
            if offset not in fit.index:
                fit.priors[offset] = (0.0, params.offset_sigma)
                fit.drifts[offset] = params.offset_gamma
            members += [player, offset]
        teams.append(members)
    # (a player's share of play weighs their offset's performance too)
    weights = (
        None if game.weights is None else [[w for w in t for _ in range(2)] for t in game.weights]
    )
    return Game(teams, game.results, weights)


def _fitted(params: TTTParams, fit: ThroughTime, player: str | int) -> State:
    """``player``'s state: the fit's belief at their latest day (with offsets, each
    offset's belief grown to that day, the prior's for a value never played on)."""
    mu, sigma = fit.posterior(player)
    if params.offset_field is None:
        return (mu, sigma)
    day = fit.batches.times[fit.store.ap_batch[fit.last[fit.index[player]]]]
    ids = [offset_id(str(player), value) for value in params.offset_values]
    beliefs = [fit.belief(x, day) if x in fit.index else (0.0, params.offset_sigma) for x in ids]
    return (mu, sigma, tuple(m for m, _ in beliefs), tuple(sd for _, sd in beliefs))


@hookimpl
def rankcraft_fit_dump(fit: ThroughTime) -> dict[str, Any]:
    return fit.to_dict()


@hookimpl
def rankcraft_fit_load(data: dict[str, Any]) -> ThroughTime:
    return ThroughTime.from_dict(data)


@hookimpl
def rankcraft_fit_curve(fit: ThroughTime, player: str) -> list[tuple[datetime, State]]:
    if player not in fit.index:
        return []
    return [(_moment(day), (mu, sigma)) for day, mu, sigma in fit.curve(player)]


def evidence(params: TTTParams, match: Match | None, side: int) -> tuple[float, float] | None:
    """What ``side``'s ranking (``meta[evidence_field]``) says of its player's skill, a
    belief (μ, σ); None without one.

    >>> from rankcraft.io import parse_match
    >>> m = parse_match({"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]],
    ...                  "ranks": [1, 2], "meta": {"atp_rank": [1, None]}})
    >>> params = TTTParams(evidence_field="atp_rank", evidence_at_one=4.0, evidence_sd=1.5)
    >>> evidence(params, m, 0), evidence(params, m, 1)
    ((4.0, 1.5), None)
    """
    rank = side_rank(match, params.evidence_field, side)
    if rank is None:
        return None
    return params.evidence_at_one - params.evidence_per_log * math.log(rank), params.evidence_sd


def _newcomer_evidence(
    params: TTTParams, side: Sequence[State], match: Match | None, index: int
) -> tuple[float, float] | None:
    """The evidence about a one-player side whose player is a newcomer (state still
    exactly the prior), or None."""
    if len(side) != 1 or (side[0][0], side[0][1]) != (params.mu, params.sigma):
        return None
    return evidence(params, match, index)


def _forecast_sides(
    params: TTTParams, side_states: Sequence[State], match: Match | None
) -> Sequence[State]:
    """The sides' aggregated states (Σμ, σ, players, ...) as TrueSkill forecasts them: a
    newcomer's (a one-player side at the prior) times its evidence, and each side's offset
    for the match's value added."""
    if params.evidence_field is not None:
        side_states = [_known(params, s, match, i) for i, s in enumerate(side_states)]
    if params.offset_field is not None:
        index = offset_index(params, match)
        side_states = [with_offset(params, s, index) for s in side_states]
    return side_states


def _known(params: TTTParams, side: State, match: Match | None, index: int) -> State:
    """An aggregated side; a newcomer's (one player at the prior) times its evidence."""
    alone = (side[2] if len(side) > 2 else 1) == 1
    known = _newcomer_evidence(params, [side], match, index) if alone else None
    return side if known is None else _times(side, known)


def _times(state: State, known: tuple[float, float]) -> State:
    """``state``'s belief (μ, σ, ...) times the belief ``known``."""
    pi = state[1] ** -2 + known[1] ** -2
    return ((state[0] * state[1] ** -2 + known[0] * known[1] ** -2) / pi, pi**-0.5, *state[2:])


def _joined_offset(
    message: OffsetMessage, known: tuple[float, float] | None, weight: float
) -> OffsetMessage:
    """``message`` with the evidence ``known`` (None: none) joined to its skill's part."""
    if known is None:
        return message
    return message._replace(base=_joined(message.base, known, weight))


def _joined(message: Any, known: tuple[float, float], weight: float) -> TrueSkillMessage:
    """A match's message to a player with the evidence ``known`` joined in (both applied
    by the update, which weighs the message by ``weight`` > 0)."""
    return TrueSkillMessage(
        message.pi + known[1] ** -2 / weight, message.tau + known[0] * known[1] ** -2 / weight
    )


def day_of(moment: datetime) -> int:
    """The day number of a UTC time (days since 0001-01-01: the fit's time unit)."""
    return moment.date().toordinal()


def _moment(day: float) -> datetime:
    return datetime.combine(date.fromordinal(int(day)), datetime.min.time(), tzinfo=UTC)


def game_of(match: Match, floor: float = 0.0) -> Game:
    """A match as the fit's game: its teams, its places as results (higher better), and
    with ``seconds_played`` each player's share of play as their weight in the team's
    performance, at least ``floor`` (as the within-day step weighs it, its ``min_delta``
    the floor; the match's own ``weight`` is not read: docs/ttt.md). Weights all 1 are
    left out (the fit's fast path for two single players)."""
    results = [-float(place) for place in match.places]
    if match.seconds_played is None:
        return Game(match.teams, results)
    weights = [[max(w, floor) for w in side] for side in play_weights(match, match.teams, 1.0)]
    if all(w == 1.0 for side in weights for w in side):
        return Game(match.teams, results)
    return Game(match.teams, results, weights)
