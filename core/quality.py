"""The measures of match quality, in [0, 1]: the closeness of the sides' win
probabilities (:func:`closeness`), and the draw-probability quality of teams of Gaussian
skills (:func:`gaussian_quality`, what the Gaussian plugins' ``rankcraft_quality`` hooks
give). :func:`rankcraft.matchmaking.quality` judges a league's sides with them; both are
also importable from :mod:`rankcraft.matchmaking`.

>>> closeness([0.5, 0.5]), closeness([0.75, 0.25]), round(closeness([0.5, 0.25, 0.25]), 4)
(1.0, 0.5, 0.9464)
>>> round(gaussian_quality([[(25.0, 25 / 3)], [(25.0, 25 / 3)]], beta=25 / 6), 4)
0.4472
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .errors import InputError

__all__ = ["closeness", "gaussian_quality"]


def closeness(probabilities: Sequence[float]) -> float:
    """How open a match is from its win probabilities, in [0, 1]: 1 - |p0 - p1| for two
    sides; for n > 2 the entropy of the probabilities over its largest value, ln n. Both
    are 1 for equal sides and 0 for a certain result."""
    n = len(probabilities)
    if n == 2:
        return min(1.0, max(0.0, 1.0 - abs(probabilities[0] - probabilities[1])))
    entropy = -math.fsum(p * math.log(p) for p in probabilities if p > 0.0)
    return min(1.0, max(0.0, entropy / math.log(n)))


def _cholesky(matrix: list[list[float]]) -> list[list[float]]:
    """The lower triangular L with L Lᵀ = ``matrix`` (symmetric positive definite)."""
    m = len(matrix)
    low = [[0.0] * m for _ in range(m)]
    for i in range(m):
        for j in range(i + 1):
            s = matrix[i][j] - math.fsum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    raise InputError("the quality matrix is not positive definite")
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return low


def gaussian_quality(teams: Sequence[Sequence[tuple[float, float]]], beta: float) -> float:
    """The match quality of Herbrich, Minka and Graepel ("TrueSkill: A Bayesian Skill
    Rating System", 2006) for teams of Gaussian skills: the probability of a draw relative
    to that of a draw between equal, certain teams, in (0, 1].

    With each player's skill N(mu, sigma²), performance its skill plus N(0, beta²), a
    team's performance the sum of its players', and A the matrix of the differences of
    consecutive teams, quality = sqrt(det(beta² AᵀA) / det(beta² AᵀA + AᵀΣA)) x
    exp(-½ μᵀA (beta² AᵀA + AᵀΣA)⁻¹ Aᵀμ). For two teams:
    sqrt(c0 / c) exp(-(Σμ₁ - Σμ₂)² / 2c) with c0 = (n₁ + n₂) beta², c = c0 + Σσ².

    :param teams: per team, per player, (mu, sigma), sigma ≥ 0; two teams or more.
    :param beta: the performance deviation, > 0, in the units of mu.
    """
    if len(teams) < 2 or any(not t for t in teams):
        raise InputError(f"quality needs two or more non-empty teams: {teams!r}"[:300])
    if not beta > 0.0:
        raise InputError(f"'beta' must be > 0: {beta!r}")
    b2 = beta * beta
    sizes = [len(t) for t in teams]
    means = [math.fsum(mu for mu, _ in t) for t in teams]
    spreads = [math.fsum(s * s for _, s in t) for t in teams]
    m = len(teams) - 1
    base = [[0.0] * m for _ in range(m)]
    full = [[0.0] * m for _ in range(m)]
    for j in range(m):
        base[j][j] = b2 * (sizes[j] + sizes[j + 1])
        full[j][j] = base[j][j] + spreads[j] + spreads[j + 1]
        if j + 1 < m:
            base[j][j + 1] = base[j + 1][j] = -b2 * sizes[j + 1]
            full[j][j + 1] = full[j + 1][j] = base[j][j + 1] - spreads[j + 1]
    diff = [means[j] - means[j + 1] for j in range(m)]
    lb, lf = _cholesky(base), _cholesky(full)
    # log det ratio from the Cholesky diagonals; the quadratic form by forward substitution
    log_ratio = 2.0 * math.fsum(math.log(lb[i][i]) - math.log(lf[i][i]) for i in range(m))
    y: list[float] = []
    for i in range(m):
        y.append((diff[i] - math.fsum(lf[i][k] * y[k] for k in range(i))) / lf[i][i])
    exponent = -0.5 * math.fsum(v * v for v in y)
    return min(1.0, math.exp(0.5 * log_ratio + exponent))
