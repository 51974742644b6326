"""One game's messages for TrueSkill Through Time (the within-game part of the fit).

Dangauthier, Herbrich, Minka and Graepel, "TrueSkill Through Time: Revisiting the History
of Chess" (NIPS 2007); Landfried and Mocskos, "TrueSkill Through Time: reliable initial
skill estimates and historical comparability with Julia, Python and R" (JSS, 2025).

A player's skill s is a Gaussian belief. In a game each player performs p ~ N(s, β²); a
team performs t = Σ w·p (w: the player's weight, 1 by default); the teams, sorted by their
result (best first), are compared neighbour to neighbour: a win means
t_upper - t_lower > ε, a draw |t_upper - t_lower| ≤ ε, with the draw margin
ε = β · √(n_upper + n_lower) · Φ⁻¹((1 + p_draw) / 2) (weights do not enter the margin).

Everything here works on natural parameters, a Gaussian N(μ, σ²) being stored as its
precision π = 1/σ² and precision-mean τ = μ/σ²; π = 0 is the flat message (no
information). :func:`team_messages` returns the message each team's performance receives
from the comparisons; :func:`player_message` turns one of those into the message a
player's skill receives. Two teams have a closed form; three or more are solved by
expectation propagation along the chain of differences.

>>> v, w = win_moments(0.0)
>>> round(v, 12), round(w, 12)
(0.797884560803, 0.636619772368)

A win between two new players N(0, 6²) with β = 1 (the reference package's README: the
winner's belief becomes N(3.339, 4.985²)):

>>> pi, tau, _, _ = duel_message(0.0, 36.0, 0.0, 36.0, 2.0, 0.0, False)
>>> pi += 1 / 36
>>> round(tau / pi, 3), round(pi**-0.5, 3)
(3.339, 4.985)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

SQRT2 = math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
TAIL = -30.0
"""Below this standardized gap a win's correction comes from the Mills-ratio series (Φ
would underflow a little further down, and the quotient loses digits on the way)."""
INNER_TOLERANCE = 1e-6
"""How far a message of a ≥ 3-team game may still move when its chain stops (the
reference package's value)."""
INNER_PASSES = 10
"""At most this many forward-and-back sweeps of a ≥ 3-team chain (the package's)."""


def draw_margin(p_draw: float, beta: float, players: int) -> float:
    """The draw margin ε (skill units, ≥ 0) of a comparison between two teams of
    ``players`` players in all, each with performance deviation ``beta``, when a draw
    between equal known skills has probability ``p_draw`` in [0, 1)."""
    if p_draw <= 0.0:
        return 0.0
    return beta * math.sqrt(players) * NormalDist().inv_cdf(0.5 + 0.5 * p_draw)


def outcomes(gap: float, sd: float, margin: float) -> tuple[float, float, float]:
    """(first team wins, draw, second team wins) when the first's performance exceeds the
    second's by N(``gap``, ``sd``²) and a difference within ``margin`` is a draw; each in
    [0, 1], summing to 1."""
    win = 0.5 * math.erfc((margin - gap) / (sd * SQRT2))
    loss = 0.5 * math.erfc((margin + gap) / (sd * SQRT2))
    return win, max(1.0 - win - loss, 0.0), loss


def win_moments(x: float) -> tuple[float, float]:
    """The corrections (v, w) of a standard normal truncated to (−x, ∞) — i.e. of a
    difference whose mean exceeds the margin by ``x`` standard deviations — : the mean
    moves by v ≥ 0 and the variance is multiplied by 1 - w, w in [0, 1)."""
    if x < TAIL:
        # φ(x)/Φ(x) = 1/R(-x), R the Mills ratio: z R(z) = 1 - 1/z² + 3/z⁴ - 15/z⁶ ...
        z2 = x * x
        v = -x / (1.0 - 1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2))
    else:
        v = INV_SQRT_2PI * math.exp(-0.5 * x * x) / (0.5 * math.erfc(-x / SQRT2))
    w = v * (v + x)
    return v, (w if w < 1.0 else 1.0 - 1e-16)


def draw_moments(x: float, t: float) -> tuple[float, float]:
    """The corrections (v, w) of a standard normal shifted by ``x`` and truncated to
    [−t, t] (a draw: the difference stays within the margin, ``t`` > 0 in standard
    deviations): v is odd in x, w even, w in [0, 1)."""
    ax = -x if x > 0.0 else x  # work with ax ≤ 0: the interval [a, b] sits right of 0
    a, b = -t - ax, t - ax
    pa = INV_SQRT_2PI * math.exp(-0.5 * a * a)
    pb = INV_SQRT_2PI * math.exp(-0.5 * b * b)
    if a > 0.0:  # both ends in the upper tail: Φ(b) - Φ(a) = Φ(-a) - Φ(-b)
        mass = 0.5 * (math.erfc(a / SQRT2) - math.erfc(b / SQRT2))
    else:
        mass = 0.5 * (math.erfc(-b / SQRT2) - math.erfc(-a / SQRT2))
    if mass <= 0.0:
        return 0.0, 0.0
    v = (pa - pb) / mass
    w = v * v - (a * pa - b * pb) / mass
    w = min(max(w, 0.0), 1.0 - 1e-16)
    return (-v if x > 0.0 else v), w


def moments(mean: float, sd: float, margin: float, tie: bool) -> tuple[float, float]:
    """(v, w) for a performance difference N(mean, sd²) observed as a win of the upper
    team (beyond ``margin``) or, when ``tie``, a draw (within ±``margin``)."""
    if tie:
        return draw_moments(mean / sd, margin / sd)
    return win_moments((mean - margin) / sd)


def duel_message(
    mu_a: float,
    var_a: float,
    mu_b: float,
    var_b: float,
    beta2: float,
    margin: float,
    tie: bool,
) -> tuple[float, float, float, float]:
    """The messages (π_a, τ_a, π_b, τ_b) two single players with cavity beliefs
    N(mu_a, var_a), N(mu_b, var_b) receive when ``a`` beats ``b`` (or draws with it, if
    ``tie``); ``beta2`` is the sum of both performance variances, 2β²."""
    s2 = var_a + var_b + beta2
    s = math.sqrt(s2)
    v, w = moments(mu_a - mu_b, s, margin, tie)
    if w <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    den_a = s2 - w * var_a
    den_b = s2 - w * var_b
    return w / den_a, (w * mu_a + s * v) / den_a, w / den_b, (w * mu_b - s * v) / den_b


def _pair(
    upper: tuple[float, float], lower: tuple[float, float], margin: float, tie: bool
) -> tuple[float, float, float, float]:
    """The messages (π, τ) a comparison sends to its upper and lower team performances,
    given their beliefs (mean, variance) without this comparison's own messages."""
    mu_u, var_u = upper
    mu_l, var_l = lower
    return duel_message(mu_u, var_u, mu_l, var_l, 0.0, margin, tie)


def _without(mean: float, var: float, pi: float, tau: float) -> tuple[float, float]:
    """N(mean, var) times the message (pi, tau), as (mean, variance)."""
    p = 1.0 / var + pi
    return (mean / var + tau) / p, 1.0 / p


def team_messages(
    means: Sequence[float],
    variances: Sequence[float],
    margins: Sequence[float],
    ties: Sequence[bool],
) -> list[tuple[float, float]]:
    """The message (π, τ) each team performance receives, teams sorted best first, with
    performance priors N(means[i], variances[i]); ``margins[i]``/``ties[i]`` describe the
    comparison of team i with team i + 1."""
    n = len(means)
    if n == 2:
        pu, tu, pl, tl = _pair(
            (means[0], variances[0]), (means[1], variances[1]), margins[0], ties[0]
        )
        return [(pu, tu), (pl, tl)]
    down = [(0.0, 0.0)] * n  # message to team i from the comparison above it (i - 1)
    up = [(0.0, 0.0)] * n  # message to team i from the comparison below it (i + 1)

    def update(e: int) -> float:
        upper = _without(means[e], variances[e], *down[e])
        lower = _without(means[e + 1], variances[e + 1], *up[e + 1])
        pu, tu, pl, tl = _pair(upper, lower, margins[e], ties[e])
        moved = _moved(up[e], (pu, tu)) if e else 0.0
        moved = max(moved, _moved(down[e + 1], (pl, tl)) if e + 1 < n - 1 else 0.0)
        up[e], down[e + 1] = (pu, tu), (pl, tl)
        return moved

    for _ in range(INNER_PASSES):
        moved = max([update(e) for e in range(n - 1)] + [update(e) for e in range(n - 2, 0, -1)])
        if moved <= INNER_TOLERANCE:
            break
    return [(up[i][0] + down[i][0], up[i][1] + down[i][1]) for i in range(n)]


def _moved(old: tuple[float, float], new: tuple[float, float]) -> float:
    """How far a message moved, in mean and standard deviation (flat messages count as
    an infinite deviation, so a first message counts as a large move)."""
    if old[0] <= 0.0 or new[0] <= 0.0:
        return 0.0 if old[0] == new[0] else math.inf
    spread = abs(1.0 / math.sqrt(old[0]) - 1.0 / math.sqrt(new[0]))
    return max(abs(old[1] / old[0] - new[1] / new[0]), spread)


def player_message(
    team: tuple[float, float],
    team_mean: float,
    team_var: float,
    mu: float,
    var: float,
    weight: float,
) -> tuple[float, float]:
    """The message (π, τ) a player's skill receives from their team's performance.

    :param team: the message (π, τ) the team performance received from the comparisons.
    :param team_mean: the team performance's prior mean, Σ w·μ.
    :param team_var: its prior variance, Σ w²·(σ² + β²).
    :param mu: the player's cavity mean.
    :param var: the player's cavity variance.
    :param weight: the player's weight w ≥ 0 (0: the player learns nothing).
    """
    pi_t, tau_t = team
    rest = 1.0 + pi_t * (team_var - weight * weight * var)
    others = team_mean - weight * mu
    return weight * weight * pi_t / rest, weight * (tau_t - pi_t * others) / rest
