"""``glicko2`` plugin: Glickman's Glicko-2, optionally bounded as in INVERSUS Deluxe.

State on the Glicko-2 scale: μ (``mu``), φ (``phi``) and volatility σ (``sigma``). The
Glicko scale is ``r = 1500 + SCALE·μ``, ``RD = SCALE·φ`` with ``SCALE = 400 / ln 10``
(173.7178; a comment of the INVERSUS write-up says 172.7178, a slip). One rating
period, after Glickman's
*Example of the Glicko-2 system*:

- ``g(φ) = 1/sqrt(1 + 3φ²/π²)``, ``E = 1/(1 + exp(-g(φ_j)(μ - μ_j)))``;
- ``v = 1 / Σ g(φ_j)² E (1 - E)``, ``Δ = v Σ g(φ_j)(s_j - E)``;
- the new volatility σ' is the root of
  ``f(x) = e^x(Δ² - φ² - v - e^x) / (2(φ² + v + e^x)²) - (x - ln σ²)/τ²``, found with the
  Illinois method exactly as Glickman publishes it: the bracket uses Δ² - φ² - v (the
  INVERSUS listing subtracts σ instead) and the update test is ``f(C)·f(B) ≤ 0`` (with
  the strict < of older printings an iterate exactly on the root stalls the loop);
- ``φ* = sqrt(φ² + σ'²)``, ``φ' = 1/sqrt(1/φ*² + 1/v)``, ``μ' = μ + φ'² Σ g(φ_j)(s_j - E)``.

Every result of the period is used (the INVERSUS listing's loop reads the first one
only; see docs/decisions.md, "Readings of the published sources").
Idle time grows φ in O(1) for any real number t of periods: ``φ' = sqrt(φ² + t σ²)``.
With ``bounded = true`` the results are clamped to the rating, deviation and volatility
bounds (INVERSUS: μ ∈ [-6.045, 6.045], φ ∈ [0.175, 2.015], σ ∈ [0.04, 0.08]).

Glickman's example (the player 1500/200 meets 1400/30, 1550/100, 1700/300 and scores
1, 0, 0; τ = 0.5):

>>> mu, phi, sigma = rate(0.0, 200 / SCALE, 0.06, 0.5, [
...     ((1400 - 1500) / SCALE, 30 / SCALE, 1.0, 1.0),
...     ((1550 - 1500) / SCALE, 100 / SCALE, 0.0, 1.0),
...     ((1700 - 1500) / SCALE, 300 / SCALE, 0.0, 1.0)])
>>> round(1500 + SCALE * mu, 2), round(SCALE * phi, 2), round(sigma, 6)
(1464.05, 151.52, 0.059996)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import attrs

from rankcraft import Match, Pairing, Scale, State, hookimpl, state_field
from rankcraft.matchmaking import gaussian_quality
from rankcraft.validators import RATING_LIMIT, interval, limit, pair, state_within, within

from ._matchup import (
    MARGIN_RULES,
    LastFactors,
    logistic,
    margin_multiplier,
    match_margin,
    side_probabilities,
)

RANKCRAFT_CONTRACT = 2
"""The hook contract: states are tuples ``(mu, phi, sigma)`` in the per-match hooks."""

MU, PHI, SIGMA = range(3)
"""Positions of :class:`Glicko2Skill`'s fields in its tuple form."""

SCALE = 400.0 / math.log(10.0)
"""Glicko-2 to Glicko scale: 400 / ln 10 = 173.7177927613…"""

_3_PI2 = 3.0 / (math.pi * math.pi)
_MAX_ITERATIONS = 200

MU_LIMIT = RATING_LIMIT / SCALE
"""The largest |μ| (5,756.5: a Glicko rating 1e6 points from 1500)."""
PHI_RANGE = (0.001 / SCALE, 1e4 / SCALE)
"""The φ a state may hold: an RD from 0.001 to 10,000 Glicko rating points."""
SIGMA_RANGE = (1e-6, 10.0)
"""The volatility σ a state may hold."""
_PHI_LOW, _PHI_HIGH = PHI_RANGE
_SIGMA_LOW, _SIGMA_HIGH = SIGMA_RANGE


def g(phi: float) -> float:
    """Glickman's g(φ) on the Glicko-2 scale, in (0, 1]."""
    return 1.0 / math.sqrt(1.0 + _3_PI2 * phi * phi)


def expected(mu: float, opponent_mu: float, opponent_phi: float) -> float:
    """Glickman's E(μ, μ_j, φ_j): the expected score against an opponent."""
    return logistic(-g(opponent_phi) * (mu - opponent_mu))


def volatility_objective(
    phi: float, sigma: float, tau: float, v: float, delta: float
) -> Callable[[float], float]:
    """Glickman's f(x), whose root x = ln σ'² gives the new volatility (step 5.1)."""
    a = math.log(sigma * sigma)
    delta2 = delta * delta
    phi2 = phi * phi
    tau2 = tau * tau

    def f(x: float) -> float:
        ex = math.exp(x)
        total = phi2 + v + ex
        return ex * (delta2 - phi2 - v - ex) / (2.0 * total * total) - (x - a) / tau2

    return f


def new_volatility(
    phi: float, sigma: float, tau: float, v: float, delta: float, epsilon: float = 1e-6
) -> float:
    """Glickman's step 5: σ' by the Illinois algorithm (bracket and ``≤`` test as published).

    f (:func:`volatility_objective`) is written out at each of its uses, the same
    operations in the same order (a call per evaluation cost as much as the evaluation)."""
    a = math.log(sigma * sigma)
    delta2 = delta * delta
    phi2 = phi * phi
    tau2 = tau * tau
    exp = math.exp
    # f(x) = ex (delta2 - phi2 - v - ex) / (2 (phi2 + v + ex)²) - (x - a) / tau2 with
    # ex = e^x, its terms left to right: (phi2 + v) and (delta2 - phi2 - v) come first
    spread = phi2 + v
    surplus = delta2 - phi2 - v

    big_a = a
    if delta2 > spread:
        big_b = math.log(surplus)
    else:
        k = 1
        while True:
            x = a - k * tau
            ex = exp(x)
            total = spread + ex
            if not ex * (surplus - ex) / (2.0 * total * total) - (x - a) / tau2 < 0.0:
                break
            k += 1
        big_b = a - k * tau
    ex = exp(big_a)
    total = spread + ex
    f_a = ex * (surplus - ex) / (2.0 * total * total) - (big_a - a) / tau2
    ex = exp(big_b)
    total = spread + ex
    f_b = ex * (surplus - ex) / (2.0 * total * total) - (big_b - a) / tau2
    for _ in range(_MAX_ITERATIONS):
        if abs(big_b - big_a) <= epsilon or f_b == f_a:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        ex = exp(big_c)
        total = spread + ex
        f_c = ex * (surplus - ex) / (2.0 * total * total) - (big_c - a) / tau2
        if f_c * f_b <= 0.0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def rate(
    mu: float,
    phi: float,
    sigma: float,
    tau: float,
    results: Iterable[tuple[float, float, float, float]],
    epsilon: float = 1e-6,
) -> tuple[float, float, float]:
    """One active rating period: (μ', φ', σ') after ``results`` of (opponent μ, opponent φ,
    score, weight), unbounded. A weight scales a result's information (1 = one game)."""
    inv_v = 0.0
    total = 0.0
    for opponent_mu, opponent_phi, score, weight in results:
        g_j = 1.0 / math.sqrt(1.0 + _3_PI2 * opponent_phi * opponent_phi)  # (g)
        x = -g_j * (mu - opponent_mu)
        e = 1.0 / (1.0 + math.exp(x)) if x < 709.0 else 0.0
        inv_v += weight * g_j * g_j * e * (1.0 - e)
        total += weight * g_j * (score - e)
    return _rated(mu, phi, sigma, tau, epsilon, inv_v, total)


def _rated(
    mu: float, phi: float, sigma: float, tau: float, epsilon: float, inv_v: float, total: float
) -> tuple[float, float, float]:
    """:func:`rate` from the period's sums ``inv_v`` = Σ w g² E (1 - E) and ``total`` =
    Σ w g (s - E)."""
    if inv_v <= 0.0:  # no information (every weight 0): only time passes
        return mu, math.sqrt(phi * phi + sigma * sigma), sigma
    v = 1.0 / inv_v
    sigma_new = new_volatility(phi, sigma, tau, v, v * total, epsilon)
    phi_star2 = phi * phi + sigma_new * sigma_new
    phi_new = 1.0 / math.sqrt(1.0 / phi_star2 + inv_v)
    return mu + phi_new * phi_new * total, phi_new, sigma_new


def _tau(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    # below ~1e-3, tau squared underflows the volatility iteration (found by fuzzing)
    if not (math.isfinite(value) and 0.001 <= value <= 100.0):
        raise ValueError(f"'tau' must be a number in [0.001, 100]: {value!r}")


@attrs.frozen(kw_only=True)
class Glicko2Params:
    """Params of the ``glicko2`` plugin (slots initial, decay, expectation, update).

    All values are on the Glicko-2 scale (divide Glicko ratings by ``SCALE`` = 173.7178).

    Attributes:
        initial_mu: a new player's μ, |μ| ≤ ``MU_LIMIT`` (default 0, i.e. 1500).
        initial_phi: a new player's φ, in ``PHI_RANGE`` (default 350 / SCALE = 2.01476).
        initial_sigma: a new player's volatility σ, in [1e-6, 10] (default 0.06).
        tau: the system constant τ, in [0.001, 100]: how fast volatility may change
            (default 0.5; Glickman suggests 0.3 to 1.2).
        epsilon: convergence tolerance of the volatility iteration, in [1e-15, 1]
            (default 1e-6).
        bounded: clamp μ, φ and σ to the bounds below after every step (default false:
            Glickman's unbounded system).
        home_advantage: μ added to the home side in expectations and updates, when the
            match names one (``home``; default 0), |x| ≤ ``MU_LIMIT``.
        margin: ``"none"`` (default) or ``"fivethirtyeight"``: the change of μ is multiplied
            by FiveThirtyEight's margin-of-victory multiplier (the lead in Glicko rating
            points); φ and σ move as without it.
        rating_bounds: [low, high] of μ (default [-6.045, 6.045], as INVERSUS).
        deviation_bounds: [low, high] of φ (default [0.175, 2.015], as INVERSUS).
        volatility_bounds: [low, high] of σ (default [0.04, 0.08], as INVERSUS).

    Bounded or not, every step keeps μ, φ and σ within ``MU_LIMIT``, ``PHI_RANGE`` and
    ``SIGMA_RANGE`` (physical limits no real league reaches): extreme results cannot
    carry a state to an infinite or zero deviation.
    """

    initial_mu: float = attrs.field(default=0.0, validator=within(-MU_LIMIT, MU_LIMIT))
    initial_phi: float = attrs.field(default=350.0 / SCALE, validator=within(*PHI_RANGE))
    initial_sigma: float = attrs.field(default=0.06, validator=within(*SIGMA_RANGE))
    tau: float = attrs.field(default=0.5, validator=_tau)
    epsilon: float = attrs.field(default=1e-6, validator=within(1e-15, 1.0))
    bounded: bool = False
    home_advantage: float = attrs.field(default=0.0, validator=within(-MU_LIMIT, MU_LIMIT))
    margin: str = attrs.field(default="none", validator=attrs.validators.in_(MARGIN_RULES))
    rating_bounds: tuple[float, ...] = attrs.field(
        default=(-6.045, 6.045), converter=pair, validator=interval
    )
    deviation_bounds: tuple[float, ...] = attrs.field(
        default=(0.175, 2.015), converter=pair, validator=interval
    )
    volatility_bounds: tuple[float, ...] = attrs.field(
        default=(0.04, 0.08), converter=pair, validator=interval
    )

    # derived from the fields once, when the params are built, for the per-match hooks
    # (not fields of the table: never read from it nor written back)
    _margined: bool = attrs.field(init=False, eq=False, repr=False)
    """A margin rule multiplies the change of μ (``margin`` is not ``"none"``)."""
    _bounds: tuple[float, float, float, float, float, float] | None = attrs.field(
        init=False, eq=False, repr=False
    )
    """(μ low, μ high, φ low, φ high, σ low, σ high) when ``bounded``, else None."""

    def __attrs_post_init__(self) -> None:
        if self.bounded and self.deviation_bounds[0] <= 0:
            raise ValueError(f"'deviation_bounds' must be above 0: {list(self.deviation_bounds)}")
        if self.bounded and self.volatility_bounds[0] <= 0:
            raise ValueError(f"'volatility_bounds' must be above 0: {list(self.volatility_bounds)}")
        object.__setattr__(self, "_margined", self.margin != "none")
        bounds = None
        if self.bounded:
            (mu_lo, mu_hi), (phi_lo, phi_hi), (sigma_lo, sigma_hi) = (
                self.rating_bounds,
                self.deviation_bounds,
                self.volatility_bounds,
            )
            bounds = (mu_lo, mu_hi, phi_lo, phi_hi, sigma_lo, sigma_hi)
        object.__setattr__(self, "_bounds", bounds)

    def clamp(self, mu: float, phi: float, sigma: float) -> Glicko2Skill:
        """The state, clamped to the bounds when ``bounded``."""
        return Glicko2Skill(*self.clamp_values(mu, phi, sigma))

    def clamp_values(self, mu: float, phi: float, sigma: float) -> tuple[float, float, float]:
        """(μ, φ, σ), clamped to the bounds when ``bounded``, and always to the physical
        limits ``MU_LIMIT``, ``PHI_RANGE``, ``SIGMA_RANGE``."""
        bounds = self._bounds
        if bounds is not None:
            mu_lo, mu_hi, phi_lo, phi_hi, sigma_lo, sigma_hi = bounds
            mu = mu_lo if mu < mu_lo else mu_hi if mu > mu_hi else mu
            phi = phi_lo if phi < phi_lo else phi_hi if phi > phi_hi else phi
            sigma = sigma_lo if sigma < sigma_lo else sigma_hi if sigma > sigma_hi else sigma
        if not -MU_LIMIT <= mu <= MU_LIMIT:
            mu = limit(mu, -MU_LIMIT, MU_LIMIT)
        if not _PHI_LOW <= phi <= _PHI_HIGH:
            phi = limit(phi, _PHI_LOW, _PHI_HIGH)
        if not _SIGMA_LOW <= sigma <= _SIGMA_HIGH:
            sigma = limit(sigma, _SIGMA_LOW, _SIGMA_HIGH)
        return mu, phi, sigma


@attrs.frozen(slots=True)
class Glicko2Skill:
    """A Glicko-2 player, kept on the Glicko-2 scale and shown to players on Glickman's
    Glicko scale (leaderboards, player views, the page and the lab: ``rating`` and
    ``RD``; exports keep μ and φ).

    Attributes:
        mu: rating μ, |μ| ≤ ``MU_LIMIT`` (role ``location``); shown as the Glicko
            ``rating`` = 1500 + SCALE·μ.
        phi: deviation φ in ``PHI_RANGE`` (role ``spread``); shown as the Glicko
            ``RD`` = SCALE·φ.
        sigma: volatility σ in ``SIGMA_RANGE`` (shown as it is, as Glickman prints it).
    """

    mu: float = state_field(
        role="location",
        shown=Scale("rating", SCALE, 1500.0),
        validator=state_within(-MU_LIMIT, MU_LIMIT),
    )
    phi: float = state_field(
        role="spread", shown=Scale("RD", SCALE), validator=state_within(*PHI_RANGE)
    )
    sigma: float = state_field(validator=state_within(*SIGMA_RANGE))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return Glicko2Params if slot in ("initial", "decay", "expectation", "update") else None


@hookimpl
def rankcraft_initial(slot: str, params: Glicko2Params) -> Glicko2Skill:
    if slot != "initial":
        raise ValueError(f"the glicko2 plugin has no {slot!r} state")
    return params.clamp(params.initial_mu, params.initial_phi, params.initial_sigma)


@hookimpl
def rankcraft_decay(params: Glicko2Params, state: State, periods: float) -> State:
    if periods <= 0:
        return state
    sigma = state[SIGMA]
    phi = math.sqrt(state[PHI] * state[PHI] + periods * sigma * sigma)
    return params.clamp_values(state[MU], phi, sigma)


def win_probability(a: State, b: State) -> float:
    """Probability that a beats b (states in tuple form, ``(mu, phi, sigma)``), using both
    deviations: ``g(sqrt(φ_a² + φ_b²))``."""
    combined = math.sqrt(a[PHI] * a[PHI] + b[PHI] * b[PHI])
    return logistic(-g(combined) * (a[MU] - b[MU]))


@hookimpl
def rankcraft_expectation(
    params: Glicko2Params, side_states: Sequence[State], home: int | None
) -> list[float]:
    advantage = params.home_advantage  # (home_edge, written out)
    edge = 0.0 if home is None or advantage == 0.0 else advantage if home == 0 else -advantage
    if len(side_states) == 2 and edge == 0.0:  # (the common case, without a shifted state)
        # (win_probability, g and logistic, written out: the same operations in order)
        a, b = side_states
        a_phi, b_phi = a[PHI], b[PHI]
        combined = math.sqrt(a_phi * a_phi + b_phi * b_phi)
        x = -(1.0 / math.sqrt(1.0 + _3_PI2 * combined * combined)) * (a[MU] - b[MU])
        p = 1.0 / (1.0 + math.exp(x)) if x < 709.0 else 0.0
        return [p, 1.0 - p]
    return side_probabilities(
        side_states,
        lambda a, b, e: logistic(
            -g(math.sqrt(a[PHI] * a[PHI] + b[PHI] * b[PHI])) * (a[MU] + e - b[MU])
        ),
        edge,
    )


BETA = math.pi / math.sqrt(6.0)
"""The performance deviation on the Glicko-2 scale (≈ 1.2825; 222.8 Glicko points) with
which Gaussian performances give the logistic win probability: 2β² = π²/3, the normal
approximation to the logistic behind g(φ). Used by the match quality only."""


@hookimpl
def rankcraft_quality(
    params: Glicko2Params, side_states: Sequence[State], home: int | None
) -> float:
    """Herbrich et al.'s draw-probability quality (:func:`gaussian_quality`): each side a
    Gaussian of its μ and φ, the home side's μ raised by ``home_advantage``."""
    edge = params.home_advantage
    return gaussian_quality(
        [[(s[MU] + (edge if i == home else 0.0), s[PHI])] for i, s in enumerate(side_states)], BETA
    )


_explained = LastFactors()
"""The last update's new state and its factors (the margin multiplier), for
:func:`rankcraft_explain`."""


@hookimpl
def rankcraft_update(
    params: Glicko2Params,
    state: State,
    pairings: Sequence[Pairing],
    side: int,
    match: Match | None,
) -> State:
    edge = 0.0
    advantage = params.home_advantage
    if advantage != 0.0 and match is not None and len(match.teams) == 2:
        home = match.home  # (home_edge, written out)
        edge = 0.0 if home is None else advantage if home == side else -advantage
    mine = state[MU] + edge
    # (rate's sums over the pairings, with g, written out: the same operations in order)
    inv_v = 0.0
    total = 0.0
    for opponent, score, weight in pairings:
        opponent_phi = opponent[PHI]
        g_j = 1.0 / math.sqrt(1.0 + _3_PI2 * opponent_phi * opponent_phi)
        x = -g_j * (mine - opponent[MU])
        e = 1.0 / (1.0 + math.exp(x)) if x < 709.0 else 0.0
        inv_v += weight * g_j * g_j * e * (1.0 - e)
        total += weight * g_j * (score - e)
    mu, phi, sigma = _rated(
        mine, state[PHI], state[SIGMA], params.tau, params.epsilon, inv_v, total
    )
    mu -= edge
    margin = match_margin(match, side, len(pairings)) if params._margined else None
    if margin is None:
        return params.clamp_values(mu, phi, sigma)
    lead = SCALE * (state[MU] + edge - pairings[0][0][MU])
    multiplier = margin_multiplier(margin, lead)
    mu = state[MU] + (mu - state[MU]) * multiplier
    out = params.clamp_values(mu, phi, sigma)
    return _explained.keep(out, {"margin": multiplier})


@hookimpl
def rankcraft_explain(
    params: Glicko2Params,
    state: State,
    pairings: Sequence[Pairing],
    side: int,
    match: Match | None,
    after: State,
) -> dict[str, float] | None:
    """``margin`` (the margin-of-victory multiplier of the change of μ) where it applied;
    None otherwise (Glicko-2's change has no other factor)."""
    if not params._margined:
        return None
    kept = _explained.of(after)
    if kept is not None:
        return kept
    if match_margin(match, side, len(pairings)) is None:
        return None
    return _explained.of(rankcraft_update(params, state, pairings, side, match))
