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

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from rankcraft import Match, Needs, hookimpl, state_field
from rankcraft.validators import RATING_LIMIT, limit, state_within, within

from ._gaussian import SQRT2, cdf
from ._matchup import side_probabilities
from ._wenglin_models import omega_delta

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
_SIGMA_LOW, _SIGMA_HIGH = SIGMA_RANGE

RANKCRAFT_CONTRACT = 2
"""States in the per-match hooks are tuples (docs/hooks.md)."""

State = tuple[Any, ...]
MU, SIGMA = range(2)
"""Positions of μ and σ in a :class:`WengLinSkill`'s tuple form."""


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

    # derived from the fields once, when the params are built, for the per-match hooks
    # (not fields of the table: never read from it nor written back)
    _plackett_luce: bool = attrs.field(init=False, eq=False, repr=False)
    """``model`` is ``"plackett-luce"`` (the team step's written-out two-sided cases)."""
    _tau2: float = attrs.field(init=False, eq=False, repr=False)
    """τ · τ."""
    _beta2: float = attrs.field(init=False, eq=False, repr=False)
    """β · β."""
    _two_beta2: float = attrs.field(init=False, eq=False, repr=False)
    """2 · β · β (the expectation's, in that order)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_plackett_luce", self.model == "plackett-luce")
        object.__setattr__(self, "_tau2", self.tau * self.tau)
        object.__setattr__(self, "_beta2", self.beta * self.beta)
        object.__setattr__(self, "_two_beta2", 2.0 * self.beta * self.beta)


@attrs.frozen(slots=True)
class WengLinSkill:
    """A Weng-Lin player: the belief N(μ, σ²) about their skill.

    Attributes:
        mu: the mean μ, skill units, |mu| ≤ 1e6 (role ``location``).
        sigma: the standard deviation σ, in [1e-6, 1e6] (role ``spread``).
    """

    mu: float = state_field(role="location", validator=state_within(-RATING_LIMIT, RATING_LIMIT))
    sigma: float = state_field(role="spread", validator=state_within(*SIGMA_RANGE))


class WengLinStep(NamedTuple):
    """A virtual opponent: what one match does to one player, from the team step (a
    pairing's opponent from ``rankcraft_team``; internal to the plugin, never stored).

    Attributes:
        mu: the change of μ, skill units.
        variance: the new σ² over the σ² before the match (τ not included), > 0.
    """

    mu: float
    variance: float


_new_step = tuple.__new__
"""``_new_step(WengLinStep, (mu, variance))``: a step without the named tuple's
``__new__`` (a Python function call per step)."""


Team = Sequence[tuple[float, float]]


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
    steps = omega_delta(params, mus, vars_, places)
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


def _step(mu0: float, sigma0: float, mu: float, sigma: float) -> WengLinStep:
    """The step from (μ0, σ0) (the state before the match, τ not included) to (μ, σ)."""
    return _new_step(WengLinStep, (mu - mu0, (sigma * sigma) / (sigma0 * sigma0)))


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
def rankcraft_aggregate(
    params: WengLinParams, members: Sequence[State], layout: Mapping[str, int]
) -> State:
    """One member: that member. More: Σμ and sqrt(Σσ²), at the skill state's positions of
    ``mu`` and ``sigma`` (its other fields the first member's); the sums may pass the
    range a stored player holds (a side is never stored)."""
    if len(members) == 1:
        return members[0]
    at_mu, at_sigma = layout["mu"], layout["sigma"]
    mu = math.fsum(m[at_mu] for m in members)
    sigma = math.sqrt(math.fsum(m[at_sigma] * m[at_sigma] for m in members))
    if (at_mu, at_sigma) == (MU, SIGMA) and len(members[0]) == 2:
        return (mu, sigma)
    out = list(members[0])
    out[at_mu], out[at_sigma] = mu, sigma
    return tuple(out)


@hookimpl
def rankcraft_team(
    params: WengLinParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
    layout: Mapping[str, int],
) -> Sequence[Sequence[Sequence[tuple[Any, float, float]]]]:
    at_mu, at_sigma = layout["mu"], layout["sigma"]
    if (
        len(sides) == 2
        and params._plackett_luce
        and len(sides[0]) == 1
        and len(sides[1]) == 1
        and (match is None or match.seconds_played is None)
    ):
        a, b = sides[0][0], sides[1][0]
        step_a, step_b = duel(
            params, a[at_mu], a[at_sigma], b[at_mu], b[at_sigma], places[0], places[1], weight
        )
        score = 1.0 if places[0] < places[1] else 0.5 if places[0] == places[1] else 0.0
        return (((step_a, score, weight),),), (((step_b, 1.0 - score, weight),),)
    weights = play_weights(match, sides, weight)
    teams = [[(s[at_mu], s[at_sigma]) for s in side] for side in sides]
    if len(sides) == 2 and params._plackett_luce:
        score = 1.0 if places[0] < places[1] else 0.5 if places[0] == places[1] else 0.0
        steps = two_teams(params, teams, places, weights)
        return [
            [[(step, score, weight)] for step in steps[0]],
            [[(step, 1.0 - score, weight)] for step in steps[1]],
        ]
    new = rate(params, teams, places, weights)
    out = []
    for i, side in enumerate(sides):
        score = side_score(places, i)
        out.append(
            [
                [(_step(state[at_mu], state[at_sigma], *new[i][j]), score, weight)]
                for j, state in enumerate(side)
            ]
        )
    return out


def _two_sums(
    params: WengLinParams, mu_a: float, var_a: float, mu_b: float, var_b: float, a_first: int
) -> tuple[float, float, float, float]:
    """Plackett-Luce's (Ω, Δ) of two teams from their sums μ_i and σ_i² (τ included):
    :func:`omega_delta` for two teams, written out; ``a_first`` is 1 when team a placed
    first, -1 when b did, 0 for a tie. The operations are its own, in its order (the sums
    of two terms, the second place's own term of 0)."""
    beta2 = params._beta2
    sqrt, exp = math.sqrt, math.exp
    c = sqrt((var_a + beta2) + (var_b + beta2))
    log_a, log_b = mu_a / c, mu_b / c
    top = log_a if log_a >= log_b else log_b
    log_sum = top + math.log(exp(log_a - top) + exp(log_b - top))
    r_a, r_b = exp(log_a - log_sum), exp(log_b - log_sum)
    if a_first == 0:
        omega_a = (1.0 - r_a) / 2 - r_a / 2
        omega_b = (1.0 - r_b) / 2 - r_b / 2
        half = r_a * (1.0 - r_a) / 2
        delta_a = half + half
        half = r_b * (1.0 - r_b) / 2
        delta_b = half + half
    elif a_first > 0:
        omega_a, delta_a = 1.0 - r_a, r_a * (1.0 - r_a)
        omega_b, delta_b = 0.0 - r_b, r_b * (1.0 - r_b)
    else:
        omega_a, delta_a = 0.0 - r_a, r_a * (1.0 - r_a)
        omega_b, delta_b = 1.0 - r_b, r_b * (1.0 - r_b)
    cc = c * c
    return (
        omega_a * var_a / c,
        delta_a * var_a / cc * (sqrt(var_a) / c),
        omega_b * var_b / c,
        delta_b * var_b / cc * (sqrt(var_b) / c),
    )


def duel(
    params: WengLinParams,
    mu_a: float,
    sigma_a: float,
    mu_b: float,
    sigma_b: float,
    place_a: int,
    place_b: int,
    weight: float,
) -> tuple[WengLinStep, WengLinStep]:
    """Plackett-Luce for two teams of one player (each at partial-play weight
    ``weight``): the steps of :func:`rate`, written out.

    Every floating-point operation is :func:`rate`'s for this shape, in its order (the
    sums of one term, the shares of 1), so the steps are its own, bit for bit
    (tests/test_wenglin.py compares them)."""
    tau2 = params._tau2
    kappa = params.kappa
    sqrt, exp = math.sqrt, math.exp
    grown_a = sqrt(sigma_a * sigma_a + tau2)
    grown_b = sqrt(sigma_b * sigma_b + tau2)
    # (_two_sums, written out: the same operations in the same order)
    var_a, var_b = grown_a * grown_a, grown_b * grown_b
    beta2 = params._beta2
    c = sqrt((var_a + beta2) + (var_b + beta2))
    log_a, log_b = mu_a / c, mu_b / c
    top = log_a if log_a >= log_b else log_b
    log_sum = top + math.log(exp(log_a - top) + exp(log_b - top))
    r_a, r_b = exp(log_a - log_sum), exp(log_b - log_sum)
    if place_a == place_b:
        omega_a = (1.0 - r_a) / 2 - r_a / 2
        omega_b = (1.0 - r_b) / 2 - r_b / 2
        half = r_a * (1.0 - r_a) / 2
        delta_a = half + half
        half = r_b * (1.0 - r_b) / 2
        delta_b = half + half
    elif place_a < place_b:
        omega_a, delta_a = 1.0 - r_a, r_a * (1.0 - r_a)
        omega_b, delta_b = 0.0 - r_b, r_b * (1.0 - r_b)
    else:
        omega_a, delta_a = 0.0 - r_a, r_a * (1.0 - r_a)
        omega_b, delta_b = 1.0 - r_b, r_b * (1.0 - r_b)
    cc = c * c
    omega_a, delta_a = omega_a * var_a / c, delta_a * var_a / cc * (sqrt(var_a) / c)
    omega_b, delta_b = omega_b * var_b / c, delta_b * var_b / cc * (sqrt(var_b) / c)
    shrink_a = 1.0 - delta_a * weight
    shrink_b = 1.0 - delta_b * weight
    new_a = grown_a * sqrt(kappa if kappa > shrink_a else shrink_a)
    new_b = grown_b * sqrt(kappa if kappa > shrink_b else shrink_b)
    if params.limit_sigma:
        new_a = min(new_a, sigma_a)
        new_b = min(new_b, sigma_b)
    return (
        _new_step(
            WengLinStep, ((mu_a + omega_a * weight) - mu_a, (new_a * new_a) / (sigma_a * sigma_a))
        ),
        _new_step(
            WengLinStep, ((mu_b + omega_b * weight) - mu_b, (new_b * new_b) / (sigma_b * sigma_b))
        ),
    )


def two_teams(
    params: WengLinParams,
    teams: Sequence[Team],
    places: Sequence[int],
    weights: Sequence[Sequence[float]],
) -> list[list[WengLinStep]]:
    """Plackett-Luce for two teams of any size: the steps of :func:`rate` (arguments as
    its own, ``weights`` given), written out for two teams, bit for bit its own."""
    tau2 = params._tau2
    kappa = params.kappa
    sqrt, fsum = math.sqrt, math.fsum
    grown = [[(mu, sqrt(sigma * sigma + tau2)) for mu, sigma in team] for team in teams]
    (team_a, team_b) = grown
    var_a, var_b = fsum(s * s for _, s in team_a), fsum(s * s for _, s in team_b)
    first = 0 if places[0] == places[1] else 1 if places[0] < places[1] else -1
    omega_a, delta_a, omega_b, delta_b = _two_sums(
        params, fsum(mu for mu, _ in team_a), var_a, fsum(mu for mu, _ in team_b), var_b, first
    )
    out = []
    for team, old, var, omega, delta, side_weights in (
        (team_a, teams[0], var_a, omega_a, delta_a, weights[0]),
        (team_b, teams[1], var_b, omega_b, delta_b, weights[1]),
    ):
        steps = []
        for (mu, sigma), (_, sigma0), w in zip(team, old, side_weights, strict=True):
            share = sigma * sigma / var
            shrink = 1.0 - share * delta * w
            new_sigma = sigma * sqrt(kappa if kappa > shrink else shrink)
            if params.limit_sigma:
                new_sigma = min(new_sigma, sigma0)
            steps.append(_step(mu, sigma0, mu + share * omega * w, new_sigma))
        out.append(steps)
    return out


@hookimpl
def rankcraft_expectation(params: WengLinParams, side_states: Sequence[State]) -> list[float]:
    two_beta2 = params._two_beta2
    if len(side_states) == 2:  # (side_probabilities' two-sided case and cdf, written out)
        a, b = side_states
        a_sigma, b_sigma = a[SIGMA], b[SIGMA]
        x = (a[MU] - b[MU]) / math.sqrt(two_beta2 + a_sigma * a_sigma + b_sigma * b_sigma)
        p = 0.5 * math.erfc(-x / SQRT2)
        return [p, 1.0 - p]

    def beats(a: State, b: State, edge: float) -> float:
        return cdf(
            (a[MU] - b[MU]) / math.sqrt(two_beta2 + a[SIGMA] * a[SIGMA] + b[SIGMA] * b[SIGMA])
        )

    return side_probabilities(side_states, beats, 0.0)


def _moved(
    params: WengLinParams, state: State, pairings: Sequence[Sequence[Any]]
) -> tuple[float, float]:
    """(μ, σ) after the pairings, before the limits."""
    mu = state[MU]
    ratio = 1.0
    for pairing in pairings:
        step = pairing[0]
        if type(step) is not WengLinStep:
            step = _pair_step(params, state, pairing)
        mu += step[0]
        ratio *= step[1]
    return mu, state[SIGMA] * math.sqrt(ratio)


@hookimpl
def rankcraft_update(
    params: WengLinParams, state: State, pairings: Sequence[Sequence[Any]]
) -> State:
    if len(pairings) == 1 and type(pairings[0][0]) is WengLinStep:
        step = pairings[0][0]
        mu = state[MU] + step[0]
        sigma = state[SIGMA] * math.sqrt(step[1])  # (the ratio 1.0 * step[1])
        if -RATING_LIMIT <= mu <= RATING_LIMIT and _SIGMA_LOW <= sigma <= _SIGMA_HIGH:
            return (mu, sigma)  # (bounded's common case, written out)
    else:
        mu, sigma = _moved(params, state, pairings)
    return bounded(mu, sigma)


def bounded(mu: float, sigma: float) -> State:
    """The state ``(mu, sigma)`` held within the rating limit and :data:`SIGMA_RANGE`
    (the Gaussian plugins' updates); a non-finite one is returned as it is, for the core
    to refuse, naming the plugin, the hook and the match (docs/plugins.md)."""
    if not (-RATING_LIMIT <= mu <= RATING_LIMIT and _SIGMA_LOW <= sigma <= _SIGMA_HIGH):
        if not math.isfinite(mu) or not math.isfinite(sigma):
            return (mu, sigma)
        return limit(mu, -RATING_LIMIT, RATING_LIMIT), limit(sigma, _SIGMA_LOW, _SIGMA_HIGH)
    return (mu, sigma)


def mu_change(
    state: State,
    after: State,
    pairings: Sequence[Any],
    moved: Callable[[Any, State, Sequence[Any]], tuple[float, float]],
    params: Any,
) -> dict[str, float] | None:
    """The Gaussian plugins' factors: ``mu_change``, the change of μ before the rating
    limit (``moved(params, state, pairings)[0]``: μ rated again, asked only when ``after``
    sits on the limit), for a match's one result; None for several results."""
    if len(pairings) != 1:
        return None
    mu = after[MU]
    if mu == RATING_LIMIT or mu == -RATING_LIMIT:  # (clamped: the change before it)
        mu = moved(params, state, pairings)[0]
    return {"mu_change": mu - state[MU]}


@hookimpl
def rankcraft_explain(
    params: WengLinParams, state: State, pairings: Sequence[Sequence[Any]], after: State
) -> dict[str, float] | None:
    """``mu_change`` (the change of μ, before the rating limit) for a match's one result."""
    return mu_change(state, after, pairings, _moved, params)


def _pair_step(params: WengLinParams, state: State, pairing: Sequence[Any]) -> WengLinStep:
    """A pairing from another team plugin (a real or virtual opponent state): a
    two-team match against it, weighted by the pairing's weight."""
    opponent, score, weight = pairing[0], pairing[1], pairing[2]
    places = [1, 1] if score == 0.5 else [1, 2] if score > 0.5 else [2, 1]
    ((mine,), _) = rate(
        params,
        [[(state[MU], state[SIGMA])], [(opponent[MU], opponent[SIGMA])]],
        places,
        [[weight], [1.0]],
    )
    return _step(state[MU], state[SIGMA], *mine)
