"""``trueskill`` plugin: Herbrich, Minka and Graepel's TrueSkill.

Ralf Herbrich, Tom Minka and Thore Graepel, "TrueSkill™: A Bayesian Skill Rating System"
(NIPS 2006). TrueSkill is patented by Microsoft and the name is Microsoft's trademark
(the ``trueskill`` Python package says the same); commercial use may need Microsoft's
permission: see docs/trueskill.md.

A player is a Gaussian belief N(μ, σ²). In a match, each player performs p ~ N(s, β²)
around their skill s; a team performs t = Σ w·p (w: partial play); the teams, in the
order of the result, are compared neighbour to neighbour: a win means t_i - t_{i+1} > ε,
a draw |t_i - t_{i+1}| ≤ ε, where the draw margin ε comes from the draw probability:
``ε = Φ⁻¹((p_draw + 1) / 2) · sqrt(n₁ + n₂) · β``. The posterior is approximated by
expectation propagation on that factor graph: the chain of team differences is swept
forward and back until no message moves by more than ``min_delta`` (at most
``max_passes`` sweeps), with the schedule of the ``trueskill`` package, which it is
tested against. Before a match every σ² grows by τ².

The team step (``rankcraft_team``, the ``[team]`` slot naming this plugin) runs the graph
and hands each player, as a :class:`TrueSkillMessage`, the message the match sends up to
their skill; ``rankcraft_update`` multiplies it into the prior.

>>> (a,), (b,) = rate(TrueSkillParams(), [[(25.0, 25 / 3)], [(25.0, 25 / 3)]], [1, 2])
>>> [round(x, 6) for x in (*a, *b)]
[29.395832, 7.171476, 20.604168, 7.171476]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rankcraft import Match, Needs, hookimpl, state_field
from rankcraft.validators import RATING_LIMIT, state_within, within

from ._gaussian import SQRT2, cdf, pdf, ppf
from ._trueskill_graph import (
    TrueSkillMessage,
    new_message,
    rate_messages,
    settle,
    two_team_messages,
)
from .wenglin import SIGMA_RANGE, bounded, mu_change, play_weights, side_score

_mu = within(-RATING_LIMIT, RATING_LIMIT)
_sigma = within(*SIGMA_RANGE)
_INF = math.inf
_SIGMA_LOW, _SIGMA_HIGH = SIGMA_RANGE

RANKCRAFT_CONTRACT = 2
"""States in the per-match hooks are tuples (docs/hooks.md)."""

State = tuple[Any, ...]
MU, SIGMA, PLAYERS = range(3)
"""Positions in a state's tuple form: μ and σ (a :class:`TrueSkillSkill`), and a side's
number of players (a :class:`TrueSkillSide`, from ``rankcraft_aggregate``)."""


@attrs.frozen(kw_only=True)
class TrueSkillParams:
    """Params of the ``trueskill`` plugin (slots initial, expectation, update and team; a
    ``[team]`` slot naming ``trueskill`` without its own params table shares the
    update's).

    Attributes:
        mu: a new player's μ, skill units, |x| ≤ 1e6 (default 25).
        sigma: a new player's σ, in [1e-6, 1e6] (default 25/3).
        beta: the performance noise β of one player, in [1e-6, 1e6] (default 25/6).
        tau: the dynamics τ added to every σ (as σ² + τ²) before a match, in [0, 1e6]
            (default 25/300).
        draw_probability: the chance that two evenly matched teams draw, in [0, 1)
            (default 0.10); it sets the draw margin ε.
        min_delta: the sweeps stop when no message moves by more than this, in
            [1e-12, 1] (default 0.0001).
        max_passes: at most this many sweeps of the chain of team differences, in
            [1, 1000] (default 10).
        points_per_sd: predictions for 3+ sides integrate on a grid with this many points
            per standard deviation of the narrowest side's performance, in [2, 64]
            (default 8).
    """

    mu: float = attrs.field(default=25.0, validator=_mu)
    sigma: float = attrs.field(default=25.0 / 3.0, validator=_sigma)
    beta: float = attrs.field(default=25.0 / 6.0, validator=_sigma)
    tau: float = attrs.field(default=25.0 / 300.0, validator=within(0.0, 1e6))
    draw_probability: float = attrs.field(default=0.10, validator=within(0.0, 0.999999))
    min_delta: float = attrs.field(default=0.0001, validator=within(1e-12, 1.0))
    max_passes: int = attrs.field(default=10, validator=within(1, 1000))
    points_per_sd: int = attrs.field(default=8, validator=within(2, 64))

    # derived from the fields once, when the params are built, for the per-match hooks
    # (not fields of the table: never read from it nor written back)
    _beta2: float = attrs.field(init=False, eq=False, repr=False)
    """β · β."""
    _tau2: float = attrs.field(init=False, eq=False, repr=False)
    """τ · τ."""
    _duel_margin: float = attrs.field(init=False, eq=False, repr=False)
    """The draw margin of a 1-v-1, :meth:`draw_margin` (2)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_beta2", self.beta * self.beta)
        object.__setattr__(self, "_tau2", self.tau * self.tau)
        object.__setattr__(self, "_duel_margin", self.draw_margin(2))

    def draw_margin(self, players: int) -> float:
        """ε for a comparison of two teams with ``players`` players between them."""
        if self.draw_probability == 0.0:
            return 0.0
        return ppf((self.draw_probability + 1.0) / 2.0) * math.sqrt(players) * self.beta


@attrs.frozen(slots=True)
class TrueSkillSkill:
    """A TrueSkill player: the belief N(μ, σ²) about their skill.

    Attributes:
        mu: the mean μ, skill units, |mu| ≤ 1e6 (role ``location``).
        sigma: the standard deviation σ, in [1e-6, 1e6] (role ``spread``).
    """

    mu: float = state_field(role="location", validator=state_within(-RATING_LIMIT, RATING_LIMIT))
    sigma: float = state_field(role="spread", validator=state_within(*SIGMA_RANGE))


@attrs.frozen(slots=True)
class TrueSkillSide(TrueSkillSkill):
    """A side in predictions: the sums of its members' μ and σ², and how many they are
    (each adds β² of performance noise). Never stored: ``rankcraft_aggregate`` gives its
    tuple form ``(Σμ, sqrt(Σσ²), players)``, which this plugin's expectation reads (a
    state of two fields counts as one player).

    Attributes:
        players: the side's number of players, ≥ 1.
    """

    players: int = 1


def duel_messages(
    params: TrueSkillParams,
    mu_a: float,
    sigma_a: float,
    mu_b: float,
    sigma_b: float,
    place_a: int,
    place_b: int,
) -> tuple[TrueSkillMessage, TrueSkillMessage]:
    """The messages of a match between two one-player teams (each of weight 1): the
    graph of :func:`rate_messages` for this shape written out on plain floats, bit for
    bit its messages (``_trueskill_graph`` says how)."""
    beta2 = params._beta2
    tau2 = params._tau2
    swap = place_a > place_b  # (the graph runs in the order of the result)
    mu1, s1, mu2, s2 = (mu_b, sigma_b, mu_a, sigma_a) if swap else (mu_a, sigma_a, mu_b, sigma_b)
    # prior and likelihood down, then the team sum (one member, coefficient 1)
    variance = s1 * s1 + tau2
    big_p, big_t = 1.0 / variance, mu1 / variance
    a = 1.0 / (1.0 + beta2 * big_p)
    lik_pi1, lik_tau1 = a * big_p, a * big_t
    perf_pi1, perf_tau1 = 0.0 + lik_pi1, 0.0 + lik_tau1
    # (_sum_one, written out here and below)
    mu = 0.0 + (perf_tau1 / perf_pi1 if perf_pi1 else 0.0)
    pi_inv = (0.0 + 1.0 / perf_pi1) if perf_pi1 else _INF
    down_pi1 = 1.0 / pi_inv if pi_inv else _INF
    down_tau1 = down_pi1 * mu
    team_pi1, team_tau1 = 0.0 + down_pi1, 0.0 + down_tau1
    variance = s2 * s2 + tau2
    big_p, big_t = 1.0 / variance, mu2 / variance
    a = 1.0 / (1.0 + beta2 * big_p)
    lik_pi2, lik_tau2 = a * big_p, a * big_t
    perf_pi2, perf_tau2 = 0.0 + lik_pi2, 0.0 + lik_tau2
    mu = 0.0 + (perf_tau2 / perf_pi2 if perf_pi2 else 0.0)
    pi_inv = (0.0 + 1.0 / perf_pi2) if perf_pi2 else _INF
    down_pi2 = 1.0 / pi_inv if pi_inv else _INF
    down_tau2 = down_pi2 * mu
    team_pi2, team_tau2 = 0.0 + down_pi2, 0.0 + down_tau2
    # the difference (team 1 - team 2) and its truncation, swept until it settles
    team_pi1, team_tau1, team_pi2, team_tau2 = settle(
        params, params._duel_margin, place_a == place_b, team_pi1, team_tau1, team_pi2, team_tau2
    )
    # the team sums up to the performances, and the likelihoods up to the skills
    c_pi, c_tau = team_pi1 - down_pi1, team_tau1 - down_tau1
    mu = 0.0 + (c_tau / c_pi if c_pi else 0.0)
    pi_inv = (0.0 + 1.0 / c_pi) if c_pi else _INF
    up_pi = 1.0 / pi_inv if pi_inv else _INF
    up_tau = up_pi * mu
    pi, tau = perf_pi1 - 0.0 + up_pi - lik_pi1, perf_tau1 - 0.0 + up_tau - lik_tau1
    a = 1.0 / (1.0 + beta2 * pi)
    first = new_message(TrueSkillMessage, (a * pi, a * tau))
    c_pi, c_tau = team_pi2 - down_pi2, team_tau2 - down_tau2
    mu = 0.0 + (c_tau / c_pi if c_pi else 0.0)
    pi_inv = (0.0 + 1.0 / c_pi) if c_pi else _INF
    up_pi = 1.0 / pi_inv if pi_inv else _INF
    up_tau = up_pi * mu
    pi, tau = perf_pi2 - 0.0 + up_pi - lik_pi2, perf_tau2 - 0.0 + up_tau - lik_tau2
    a = 1.0 / (1.0 + beta2 * pi)
    second = new_message(TrueSkillMessage, (a * pi, a * tau))
    return (second, first) if swap else (first, second)


def posterior(
    params: TrueSkillParams,
    mu: float,
    sigma: float,
    messages: Sequence[tuple[TrueSkillMessage, float]],
) -> tuple[float, float]:
    """(μ, σ) of the prior N(μ, σ² + τ²) times the messages, each raised to its weight."""
    variance = sigma * sigma + params.tau * params.tau
    pi, tau = 1.0 / variance, mu / variance
    for message, weight in messages:
        pi += message.pi * weight
        tau += message.tau * weight
    return tau / pi, math.sqrt(1.0 / pi)


def rate(
    params: TrueSkillParams,
    teams: Sequence[Sequence[tuple[float, float]]],
    places: Sequence[int],
    weights: Sequence[Sequence[float]] | None = None,
) -> list[list[tuple[float, float]]]:
    """Every player's new (μ, σ) after one match (arguments as :func:`rate_messages`)."""
    messages = rate_messages(params, teams, places, weights)
    return [
        [
            posterior(params, mu, sigma, [(m, 1.0)])
            for (mu, sigma), m in zip(team, msgs, strict=True)
        ]
        for team, msgs in zip(teams, messages, strict=True)
    ]


def win_probabilities(
    params: TrueSkillParams, sides: Sequence[tuple[float, float, int]]
) -> list[float]:
    """The probability that each side performs best, from (Σμ, Σσ², players) per side.

    A side's performance is N(Σμ, Σσ² + players·β²). Two sides: ``Φ((μ₁ - μ₂) / sqrt(σ₁² +
    σ₂² + n·β²))``. More: ``∫ f_i(x) Π_{j≠i} F_j(x) dx`` by Simpson's rule, from where
    all but one side lie 9 standard deviations above to where every side lies 9 below,
    normalized to sum to 1. Draws are not a separate outcome.
    """
    beta2 = params.beta * params.beta
    means = [s[0] for s in sides]
    sds = [math.sqrt(s[1] + s[2] * beta2) for s in sides]
    if len(sides) == 2:
        p = cdf((means[0] - means[1]) / math.sqrt(sds[0] ** 2 + sds[1] ** 2))
        return [p, 1.0 - p]
    # below the second-highest of the sides' μ - 9σ, every product Π F_j has a factor
    # under Φ(-9) ≈ 1e-19: the grid starts there
    lo = sorted(m - 9.0 * s for m, s in zip(means, sds, strict=True))[-2]
    hi = max(m + 9.0 * s for m, s in zip(means, sds, strict=True))
    steps = math.ceil((hi - lo) / min(sds) * params.points_per_sd)
    steps = min(max(steps + steps % 2, 64), 20000)
    h = (hi - lo) / steps
    n = len(sides)
    totals = [0.0] * n
    for g in range(steps + 1):
        x = lo + g * h
        weight = 1.0 if g in (0, steps) else (4.0 if g % 2 else 2.0)
        cdfs = [cdf((x - m) / s) for m, s in zip(means, sds, strict=True)]
        prefix = [1.0] * (n + 1)
        for j in range(n):
            prefix[j + 1] = prefix[j] * cdfs[j]
        suffix = 1.0
        for i in range(n - 1, -1, -1):
            rest = prefix[i] * suffix
            if rest > 0.0:
                totals[i] += weight * pdf((x - means[i]) / sds[i]) / sds[i] * rest
            suffix *= cdfs[i]
    total = math.fsum(totals)
    return [t / total for t in totals]


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return TrueSkillParams if slot in ("initial", "expectation", "update", "team") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    if slot == "team":  # (the pairings are a whole match's outcome: match mode only)
        return Needs(fields=("mu", "sigma"), whole_match=True)
    return Needs(fields=("mu", "sigma")) if slot in ("expectation", "update") else None


@hookimpl
def rankcraft_initial(slot: str, params: TrueSkillParams) -> TrueSkillSkill:
    if slot != "initial":
        raise ValueError(f"the trueskill plugin has no {slot!r} state")
    return TrueSkillSkill(params.mu, params.sigma)


@hookimpl
def rankcraft_aggregate(
    params: TrueSkillParams, members: Sequence[State], layout: Mapping[str, int]
) -> State:
    """The side's :class:`TrueSkillSide` tuple: (Σμ, sqrt(Σσ²), players)."""
    at_mu, at_sigma = layout["mu"], layout["sigma"]
    if len(members) == 1:
        m = members[0]
        sigma = m[at_sigma]
        return (m[at_mu] + 0.0, math.sqrt(sigma * sigma), 1)  # (fsum of one term: + 0.0)
    return (
        math.fsum(m[at_mu] for m in members),
        math.sqrt(math.fsum(m[at_sigma] * m[at_sigma] for m in members)),
        len(members),
    )


@hookimpl
def rankcraft_team(
    params: TrueSkillParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
    layout: Mapping[str, int],
) -> Sequence[Sequence[Sequence[tuple[Any, float, float]]]]:
    at_mu, at_sigma = layout["mu"], layout["sigma"]
    if (
        len(sides) == 2
        and len(sides[0]) == 1
        and len(sides[1]) == 1
        and (match is None or match.seconds_played is None)
    ):
        a, b = sides[0][0], sides[1][0]
        m_a, m_b = duel_messages(
            params, a[at_mu], a[at_sigma], b[at_mu], b[at_sigma], places[0], places[1]
        )
        score = 1.0 if places[0] < places[1] else 0.5 if places[0] == places[1] else 0.0
        return (((m_a, score, weight),),), (((m_b, 1.0 - score, weight),),)
    shares = play_weights(match, sides, 1.0)
    teams = [[(s[at_mu], s[at_sigma]) for s in side] for side in sides]
    if len(sides) == 2:
        messages = two_team_messages(params, teams, places, shares)
    else:
        messages = rate_messages(params, teams, places, shares)
    return [[[(m, side_score(places, i), weight)] for m in messages[i]] for i in range(len(sides))]


@hookimpl
def rankcraft_expectation(params: TrueSkillParams, side_states: Sequence[State]) -> list[float]:
    if len(side_states) == 2:  # (win_probabilities' two-sided case and cdf, written out)
        a, b = side_states
        beta2 = params._beta2
        sd_a = math.sqrt(a[SIGMA] * a[SIGMA] + (a[PLAYERS] if len(a) > PLAYERS else 1) * beta2)
        sd_b = math.sqrt(b[SIGMA] * b[SIGMA] + (b[PLAYERS] if len(b) > PLAYERS else 1) * beta2)
        x = (a[MU] - b[MU]) / math.sqrt(sd_a**2 + sd_b**2)
        p = 0.5 * math.erfc(-x / SQRT2)
        return [p, 1.0 - p]
    return win_probabilities(
        params,
        [(s[MU], s[SIGMA] * s[SIGMA], s[PLAYERS] if len(s) > PLAYERS else 1) for s in side_states],
    )


def _moved(
    params: TrueSkillParams, state: State, pairings: Sequence[Sequence[Any]]
) -> tuple[float, float]:
    """(μ, σ) after the pairings, before the limits."""
    if len(pairings) == 1 and type(pairings[0][0]) is TrueSkillMessage:
        message, _, weight = pairings[0]
        variance = state[SIGMA] * state[SIGMA] + params._tau2
        pi = 1.0 / variance + message[0] * weight
        tau = state[MU] / variance + message[1] * weight
        return tau / pi, math.sqrt(1.0 / pi)
    messages = []
    for pairing in pairings:
        message = pairing[0]
        if type(message) is not TrueSkillMessage:
            message = _pair_message(params, state, message, pairing[1])
        messages.append((message, pairing[2]))
    return posterior(params, state[MU], state[SIGMA], messages)


@hookimpl
def rankcraft_update(
    params: TrueSkillParams, state: State, pairings: Sequence[Sequence[Any]]
) -> State:
    if len(pairings) == 1 and type(pairings[0][0]) is TrueSkillMessage:
        # (_moved's case of one message and bounded's common case, written out)
        message, _, weight = pairings[0]
        sigma = state[SIGMA]
        variance = sigma * sigma + params._tau2
        pi = 1.0 / variance + message[0] * weight
        tau = state[MU] / variance + message[1] * weight
        mu, sigma = tau / pi, math.sqrt(1.0 / pi)
        if -RATING_LIMIT <= mu <= RATING_LIMIT and _SIGMA_LOW <= sigma <= _SIGMA_HIGH:
            return (mu, sigma)
        return bounded(mu, sigma)
    return bounded(*_moved(params, state, pairings))


@hookimpl
def rankcraft_explain(
    params: TrueSkillParams, state: State, pairings: Sequence[Sequence[Any]], after: State
) -> dict[str, float] | None:
    """``mu_change`` (the change of μ, before the rating limit) for a match's one result."""
    return mu_change(state, after, pairings, _moved, params)


def _pair_message(
    params: TrueSkillParams, state: State, opponent: State, score: float
) -> TrueSkillMessage:
    """A pairing from another team plugin: a 1-v-1 against that (real or virtual)
    opponent state."""
    places = [1, 1] if score == 0.5 else [1, 2] if score > 0.5 else [2, 1]
    ((mine,), _) = rate_messages(
        params, [[(state[MU], state[SIGMA])], [(opponent[MU], opponent[SIGMA])]], places
    )
    return mine
