"""``wenglin`` plugin: Weng and Lin's Bayesian approximation (the models of OpenSkill).

Ruby C. Weng and Chih-Jen Lin, "A Bayesian Approximation Method for Online Ranking"
(JMLR 12, 2011). A player is a Gaussian belief N(μ, σ²) about their skill; a team's
strength is the sum of its members' (μ_i = Σ μ, σ_i² = Σ σ²); a match of k teams updates
every team by Ω_i (a mean shift) and Δ_i (a variance shrink), shared among the members in
proportion to their variance:

    μ' = μ + (σ² / σ_i²) · Ω_i · w,    σ'² = σ² · max(1 - (σ² / σ_i²) · Δ_i · w, κ)

with w the player's partial-play weight. The models differ in Ω and Δ:

* ``plackett-luce`` (Algorithm 4): the ranking is a Plackett-Luce draw over
  exp(μ_i / c), ``c² = Σ (σ_i² + β²)``; ties share the places (A_q).
* ``bradley-terry-full`` / ``-part`` (Algorithms 1-2): every pair of teams (or only
  teams near each other in the ranking) is a logistic comparison, ``c_iq² = σ_i² + σ_q² +
  2β²``.
* ``thurstone-mosteller-full`` / ``-part`` (Algorithms 3): every pair (or near pairs)
  is a probit comparison with draw margin ε, through the V, W, Ṽ, W̃ functions.

Before a match, every σ grows by the dynamics τ: σ² + τ². The ``openskill`` Python package
(6.x) is the reference implementation it is tested against; where the package departs from
the paper, :class:`WengLinParams` says which reading rankcraft takes.

The joint computation is the team step: ``rankcraft_team`` (the ``[team]`` slot naming
this plugin) computes every player's new belief and hands it, as a
:class:`WengLinStep`, to ``rankcraft_update``.

>>> new = rate(WengLinParams(tau=0.0), [[(25.0, 25 / 3)], [(25.0, 25 / 3)]], [1, 2])
>>> [(round(mu, 6), round(sigma, 6)) for (mu, sigma), in new]
[(27.635231, 8.065506), (22.364769, 8.065506)]
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import attrs

from rankcraft import Match, Needs, Pairing, PlayerContext, State, hookimpl, state_field
from rankcraft.errors import PluginError
from rankcraft.validators import RATING_LIMIT, limit, state_within, within

from ._gaussian import cdf, v_draw, v_win, w_draw, w_win
from ._matchup import side_probabilities

MODELS: tuple[str, ...] = (
    "plackett-luce",
    "bradley-terry-full",
    "bradley-terry-part",
    "thurstone-mosteller-full",
    "thurstone-mosteller-part",
)
"""The five models of Weng and Lin's paper, as the ``model`` param names them."""

SIGMA_RANGE = (1e-6, 1e6)
"""The σ a state may hold and params may set (skill units): above 0, so σ² stays a
usable share of a team's variance, and at most a million."""

_mu = within(-RATING_LIMIT, RATING_LIMIT)
_sigma = within(*SIGMA_RANGE)


@attrs.frozen(kw_only=True)
class WengLinParams:
    """Params of the ``wenglin`` plugin (slots initial, expectation, update and team; a
    ``[team]`` slot naming ``wenglin`` without its own params table shares the update's).

    Attributes:
        model: one of :data:`MODELS` (default ``"plackett-luce"``).
        mu: a new player's μ, skill units, |x| ≤ 1e6 (default 25).
        sigma: a new player's σ, in [1e-6, 1e6] (default 25/3).
        beta: the performance noise β of one player, in [1e-6, 1e6] (default 25/6).
        kappa: κ, the smallest fraction of its variance a σ² keeps in one match, in
            [1e-12, 1] (default 0.0001).
        tau: the dynamics τ added to every σ (as σ² + τ²) before a match, in [0, 1e6]
            (default 25/300, as the openskill package).
        epsilon: the Thurstone-Mosteller draw margin ε, in [0, 1e6] (default 0.1).
        window: the ``-part`` models compare a team with the teams up to this many places
            before and after it in the ranking, in [1, 1000] (default 4, as openskill;
            the paper's partial pairing is window 1). openskill averages Ω and Δ over
            those comparisons, and its Thurstone-Mosteller ``-part`` uses twice the full
            model's c_iq; rankcraft does the same, to stay comparable.
        limit_sigma: never let a match raise σ above its value before the match (τ
            included) (default false).
    """

    model: str = attrs.field(default="plackett-luce", validator=attrs.validators.in_(MODELS))
    mu: float = attrs.field(default=25.0, validator=_mu)
    sigma: float = attrs.field(default=25.0 / 3.0, validator=_sigma)
    beta: float = attrs.field(default=25.0 / 6.0, validator=_sigma)
    kappa: float = attrs.field(default=0.0001, validator=within(1e-12, 1.0))
    tau: float = attrs.field(default=25.0 / 300.0, validator=within(0.0, 1e6))
    epsilon: float = attrs.field(default=0.1, validator=within(0.0, 1e6))
    window: int = attrs.field(default=4, validator=within(1, 1000))
    limit_sigma: bool = False


@attrs.frozen(slots=True)
class WengLinSkill:
    """A Weng-Lin player: the belief N(μ, σ²) about their skill.

    Attributes:
        mu: the mean μ, skill units, |mu| ≤ 1e6 (role ``location``).
        sigma: the standard deviation σ, in [1e-6, 1e6] (role ``spread``).
    """

    mu: float = state_field(role="location", validator=state_within(-RATING_LIMIT, RATING_LIMIT))
    sigma: float = state_field(role="spread", validator=state_within(*SIGMA_RANGE))


@attrs.frozen(slots=True)
class WengLinStep:
    """A virtual opponent: what one match does to one player, from the team step.

    Attributes:
        mu: the change of μ, skill units.
        variance: the new σ² over the σ² before the match (τ not included), > 0.
    """

    mu: float
    variance: float


Team = Sequence[tuple[float, float]]


def _logistic(x: float) -> float:
    """1 / (1 + e^(-x)), without overflow."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _omega_delta(
    params: WengLinParams, mus: Sequence[float], vars_: Sequence[float], places: Sequence[int]
) -> list[tuple[float, float]]:
    """(Ω_i, Δ_i) of every team, from team sums μ_i and σ_i² (gamma = σ_i / c, the paper's)."""
    k = len(mus)
    beta2 = params.beta * params.beta
    model = params.model
    out: list[tuple[float, float]] = []
    if model == "plackett-luce":
        c = math.sqrt(math.fsum(v + beta2 for v in vars_))
        # exp(μ_i / c) over the sums for each q, in logarithms (no overflow, no 0 / 0)
        log_e = [m / c for m in mus]
        log_sum_q = []
        for q in range(k):
            terms = [log_e[s] for s in range(k) if places[s] >= places[q]]
            top = max(terms)
            log_sum_q.append(top + math.log(math.fsum(math.exp(t - top) for t in terms)))
        a = [sum(1 for s in range(k) if places[s] == places[q]) for q in range(k)]
        for i in range(k):
            omega = delta = 0.0
            for q in range(k):
                if places[q] <= places[i]:
                    r = math.exp(log_e[i] - log_sum_q[q])
                    delta += r * (1.0 - r) / a[q]
                    omega += ((1.0 - r) if q == i else -r) / a[q]
            gamma = math.sqrt(vars_[i]) / c
            out.append((omega * vars_[i] / c, delta * vars_[i] / (c * c) * gamma))
        return out
    part = model.endswith("-part")
    order = sorted(range(k), key=lambda i: (places[i], i))
    position = {team: p for p, team in enumerate(order)}
    for i in range(k):
        if part:
            p = position[i]
            lo, hi = max(0, p - params.window), min(k, p + params.window + 1)
            others = [order[x] for x in range(lo, hi) if x != p]
        else:
            others = [q for q in range(k) if q != i]
        omega = delta = 0.0
        for q in others:
            c = math.sqrt(vars_[i] + vars_[q] + 2.0 * beta2)
            if model == "thurstone-mosteller-part":
                c *= 2.0  # (openskill's c_iq for this model)
            share = vars_[i] / c
            gamma = math.sqrt(vars_[i]) / c
            if model.startswith("bradley-terry"):
                p_iq = _logistic((mus[i] - mus[q]) / c)
                s = 1.0 if places[q] > places[i] else 0.5 if places[q] == places[i] else 0.0
                omega += share * (s - p_iq)
                delta += gamma * share / c * p_iq * (1.0 - p_iq)
            else:
                x = (mus[i] - mus[q]) / c
                t = params.epsilon / c
                if places[q] > places[i]:
                    omega += share * v_win(x, t)
                    delta += gamma * share / c * w_win(x, t)
                elif places[q] < places[i]:
                    omega -= share * v_win(-x, t)
                    delta += gamma * share / c * w_win(-x, t)
                else:
                    omega += share * v_draw(x, t)
                    delta += gamma * share / c * w_draw(x, t)
        if part and others:
            omega /= len(others)
            delta /= len(others)
        out.append((omega, delta))
    return out


def rate(
    params: WengLinParams,
    teams: Sequence[Team],
    places: Sequence[int],
    weights: Sequence[Sequence[float]] | None = None,
) -> list[list[tuple[float, float]]]:
    """Every player's new (μ, σ) after one match.

    :param teams: per team, per player, (μ, σ) before the match (τ not yet added).
    :param places: one place per team, 1 is best, equal places tie.
    :param weights: per team, per player, the partial-play weight in [0, 1] (default 1):
        it scales the player's share of the team's Ω and Δ.
    :returns: the new (μ, σ) per team, per player.
    """
    tau2 = params.tau * params.tau
    grown = [[(mu, math.sqrt(sigma * sigma + tau2)) for mu, sigma in team] for team in teams]
    mus = [math.fsum(mu for mu, _ in team) for team in grown]
    vars_ = [math.fsum(s * s for _, s in team) for team in grown]
    steps = _omega_delta(params, mus, vars_, places)
    kappa = params.kappa
    out: list[list[tuple[float, float]]] = []
    for i, team in enumerate(grown):
        omega, delta = steps[i]
        new = []
        for j, (mu, sigma) in enumerate(team):
            w = 1.0 if weights is None else weights[i][j]
            share = sigma * sigma / vars_[i]
            new_mu = mu + share * omega * w
            new_sigma = sigma * math.sqrt(max(1.0 - share * delta * w, kappa))
            if params.limit_sigma:
                new_sigma = min(new_sigma, teams[i][j][1])
            new.append((new_mu, new_sigma))
        out.append(new)
    return out


def play_weights(
    match: Match | None, shape: Sequence[Sequence[Any]], weight: float
) -> list[list[float]]:
    """Partial-play weights, shaped like ``shape``: the match's ``weight`` times each
    player's ``seconds_played`` over the longest time anyone played in the match (1
    without ``seconds_played``, or when nobody has any time)."""
    seconds = None if match is None else match.seconds_played
    if seconds is None:
        return [[weight] * len(side) for side in shape]
    longest = max(max(side) for side in seconds)
    if longest <= 0:
        return [[weight] * len(side) for side in shape]
    return [[weight * s / longest for s in side] for side in seconds]


def side_score(places: Sequence[int], side: int) -> float:
    """A side's mean pairwise score against the other sides (1 win, ½ tie, 0 loss)."""
    mine = places[side]
    n = len(places)
    total = sum(
        1.0 if mine < p else 0.5 if mine == p else 0.0 for j, p in enumerate(places) if j != side
    )
    return total / (n - 1)


def _unchecked(mu: float, sigma: float) -> WengLinSkill:
    """A state built without the range validators: a side's sums in predictions may pass
    the range a stored player holds (never stored)."""
    out = copy.copy(_TEMPLATE)
    object.__setattr__(out, "mu", mu)
    object.__setattr__(out, "sigma", sigma)
    return out


_TEMPLATE = WengLinSkill(0.0, 1.0)


def _step(state: WengLinSkill, mu: float, sigma: float) -> WengLinStep:
    return WengLinStep(mu - state.mu, (sigma * sigma) / (state.sigma * state.sigma))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return WengLinParams if slot in ("initial", "expectation", "update", "team") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    if slot == "team":  # (the pairings are a whole match's outcome: match mode only)
        return Needs(fields=("mu", "sigma"), whole_match=True)
    return Needs(fields=("mu", "sigma")) if slot in ("expectation", "update") else None


@hookimpl
def rankcraft_initial(slot: str, params: WengLinParams) -> WengLinSkill:
    if slot != "initial":
        raise ValueError(f"the wenglin plugin has no {slot!r} state")
    return WengLinSkill(params.mu, params.sigma)


@hookimpl
def rankcraft_aggregate(params: WengLinParams, members: Sequence[WengLinSkill]) -> WengLinSkill:
    if len(members) == 1:
        return members[0]
    return _unchecked(
        math.fsum(m.mu for m in members), math.sqrt(math.fsum(m.sigma * m.sigma for m in members))
    )


@hookimpl
def rankcraft_team(
    params: WengLinParams,
    sides: Sequence[Sequence[WengLinSkill]],
    places: Sequence[int],
    weight: float,
    match: Match,
) -> list[list[list[Pairing]]]:
    weights = play_weights(match, sides, weight)
    new = rate(params, [[(s.mu, s.sigma) for s in side] for side in sides], places, weights)
    out = []
    for i, side in enumerate(sides):
        score = side_score(places, i)
        out.append(
            [[Pairing(_step(state, *new[i][j]), score, weight)] for j, state in enumerate(side)]
        )
    return out


@hookimpl
def rankcraft_expectation(
    params: WengLinParams, side_states: Sequence[WengLinSkill]
) -> list[float]:
    two_beta2 = 2.0 * params.beta * params.beta

    def beats(a: WengLinSkill, b: WengLinSkill, edge: float) -> float:
        return cdf((a.mu - b.mu) / math.sqrt(two_beta2 + a.sigma * a.sigma + b.sigma * b.sigma))

    return side_probabilities(side_states, beats, 0.0)


@hookimpl
def rankcraft_update(
    params: WengLinParams,
    state: WengLinSkill,
    pairings: Sequence[Pairing],
    context: PlayerContext,
) -> WengLinSkill:
    mu = state.mu
    ratio = 1.0
    for pairing in pairings:
        step = pairing.opponent
        if not isinstance(step, WengLinStep):
            step = _pair_step(params, state, pairing)
        mu += step.mu
        ratio *= step.variance
    sigma = state.sigma * math.sqrt(ratio)
    if len(pairings) == 1:
        context.explain("mu_change", mu - state.mu)
    if not math.isfinite(mu) or not math.isfinite(sigma):
        raise PluginError(f"wenglin update gave a non-finite state: mu {mu!r}, sigma {sigma!r}")
    return WengLinSkill(
        limit(mu, -RATING_LIMIT, RATING_LIMIT), limit(sigma, SIGMA_RANGE[0], SIGMA_RANGE[1])
    )


def _pair_step(params: WengLinParams, state: WengLinSkill, pairing: Pairing) -> WengLinStep:
    """A pairing from another team plugin (a real or virtual opponent state): a
    two-team match against it, weighted by the pairing's weight."""
    opponent: State = pairing.opponent
    places = [1, 1] if pairing.score == 0.5 else [1, 2] if pairing.score > 0.5 else [2, 1]
    ((mine,), _) = rate(
        params,
        [[(state.mu, state.sigma)], [(opponent.mu, opponent.sigma)]],
        places,
        [[pairing.weight], [1.0]],
    )
    return _step(state, *mine)
