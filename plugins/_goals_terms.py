"""The arithmetic of the time-weighted Dixon-Coles fit (:mod:`rankcraft.plugins._goals_fit`):
one score's log-probability and its derivatives in the two log-rates and in rho, a small
Newton system's solution, and a match's sides as the fit keeps them (a team, or a
line-up at its members' mean)."""

from __future__ import annotations

import math

__all__ = [
    "UNCHECKED",
    "Side",
    "cholesky",
    "match_terms",
    "mean_of",
    "members",
    "rho_terms",
    "side_of",
    "solve",
]

UNCHECKED = 0.02
"""A Newton step no longer than this (log-rate units) is taken without checking that the
objective rose (near the optimum the quadratic model holds; this saves a pass)."""


def match_terms(
    x: float, y: float, eta_a: float, eta_b: float, rho: float
) -> tuple[float, float, float, float, float, float]:
    """(l, ∂l/∂η_A, ∂l/∂η_B, ∂²l/∂η_A², ∂²l/∂η_A∂η_B, ∂²l/∂η_B²) of one score ``x``–``y``
    (goals, ≥ 0) at log-rates ``eta_a``, ``eta_b``: l the Dixon-Coles log-probability
    without −ln x! − ln y!; l = −inf when τ ≤ 0 (the derivatives then unusable)."""
    lam_a = math.exp(eta_a)
    lam_b = math.exp(eta_b)
    ll = x * eta_a - lam_a + y * eta_b - lam_b
    g_a, g_b, h_aa, h_ab, h_bb = x - lam_a, y - lam_b, -lam_a, 0.0, -lam_b
    if x > 1.0 or y > 1.0 or rho == 0.0:
        return ll, g_a, g_b, h_aa, h_ab, h_bb
    if x == 0.0 and y == 0.0:  # τ = 1 − λ_A λ_B rho
        u = lam_a * lam_b * rho
        t = 1.0 - u
        if t <= 0.0:
            return -math.inf, g_a, g_b, h_aa, h_ab, h_bb
        c = -u / (t * t)
        return ll + math.log(t), g_a - u / t, g_b - u / t, h_aa + c, c, h_bb + c
    if x == 0.0:  # 0–1: τ = 1 + λ_A rho
        v = lam_a * rho
        t = 1.0 + v
        if t <= 0.0:
            return -math.inf, g_a, g_b, h_aa, h_ab, h_bb
        return ll + math.log(t), g_a + v / t, g_b, h_aa + v / (t * t), 0.0, h_bb
    if y == 0.0:  # 1–0: τ = 1 + λ_B rho
        v = lam_b * rho
        t = 1.0 + v
        if t <= 0.0:
            return -math.inf, g_a, g_b, h_aa, h_ab, h_bb
        return ll + math.log(t), g_a, g_b + v / t, h_aa, 0.0, h_bb + v / (t * t)
    t = 1.0 - rho  # 1–1
    if t <= 0.0:
        return -math.inf, g_a, g_b, h_aa, h_ab, h_bb
    return ll + math.log(t), g_a, g_b, h_aa, h_ab, h_bb


def rho_terms(
    x: float, y: float, eta_a: float, eta_b: float, rho: float
) -> tuple[float, float, float, float]:
    """(∂l/∂rho, ∂²l/∂rho², ∂²l/∂rho∂η_A, ∂²l/∂rho∂η_B) of one score (zero beyond the four low
    scores; zero too where τ ≤ 0)."""
    if x > 1.0 or y > 1.0:
        return 0.0, 0.0, 0.0, 0.0
    if x == 1.0 and y == 1.0:
        t = 1.0 - rho
        return (-1.0 / t, -1.0 / (t * t), 0.0, 0.0) if t > 0.0 else (0.0, 0.0, 0.0, 0.0)
    lam_a, lam_b = math.exp(eta_a), math.exp(eta_b)
    if x == 0.0 and y == 0.0:
        p = lam_a * lam_b
        t = 1.0 - p * rho
        if t <= 0.0:
            return 0.0, 0.0, 0.0, 0.0
        return -p / t, -(p * p) / (t * t), -p / (t * t), -p / (t * t)
    lam = lam_a if x == 0.0 else lam_b
    t = 1.0 + lam * rho
    if t <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    cross = lam / (t * t)
    return lam / t, -(lam * lam) / (t * t), (cross, 0.0)[x != 0.0], (0.0, cross)[x != 0.0]


def solve(hessian: list[list[float]], gradient: list[float]) -> list[float]:
    """The Newton step δ = −H⁻¹ g of a maximisation, by Cholesky of −H; where −H is not
    positive definite, of −H + μ I (μ grown until it is: Levenberg's damping)."""
    n = len(gradient)
    scale = max(1e-12, max(abs(hessian[i][i]) for i in range(n)))
    mu = 0.0
    while True:
        low = cholesky(
            [[-hessian[i][j] + (mu if i == j else 0.0) for j in range(n)] for i in range(n)]
        )
        if low is not None:
            break
        mu = max(mu * 10.0, 1e-9 * scale)
    z = [0.0] * n  # L z = g, then Lᵀ δ = z
    for i in range(n):
        z[i] = (gradient[i] - sum(low[i][k] * z[k] for k in range(i))) / low[i][i]
    step = [0.0] * n
    for i in reversed(range(n)):
        step[i] = (z[i] - sum(low[k][i] * step[k] for k in range(i + 1, n))) / low[i][i]
    return step


def cholesky(matrix: list[list[float]]) -> list[list[float]] | None:
    """The lower Cholesky factor of a symmetric matrix, or None when not positive definite."""
    n = len(matrix)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = matrix[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if not s > 0.0:
                    return None
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return low


Side = int | tuple[int, ...]
"""A match's side as the fit keeps it: a team's index, or a line-up's (two or more)."""


def side_of(indices: list[int]) -> Side:
    """A side as the fit keeps it: one team's index, or a line-up's tuple."""
    return indices[0] if len(indices) == 1 else tuple(indices)


def members(side: Side) -> tuple[int, ...]:
    """The team indices of a side."""
    return (side,) if side.__class__ is int else side  # type: ignore[return-value]


def mean_of(values: list[float], side: Side) -> float:
    """The mean of ``values`` over a side's members (exact: order does not matter)."""
    kept = members(side)
    return math.fsum(values[k] for k in kept) / len(kept)
