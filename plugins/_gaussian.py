"""Standard-normal arithmetic shared by the Bayesian plugins (``wenglin``, ``trueskill``).

The truncated-Gaussian corrections of Herbrich, Minka and Graepel ("TrueSkill: A Bayesian
Skill Rating System", NIPS 2006), which Weng and Lin ("A Bayesian Approximation Method
for Online Ranking", JMLR 2011) call V, W, Ṽ and W̃. For a performance difference whose
standardized mean is ``x`` and a standardized draw margin ``t``:

* a win (difference above the margin): ``v_win(x, t) = φ(x - t) / Φ(x - t)`` and
  ``w_win(x, t) = v_win · (v_win + x - t)``, in (0, 1);
* a draw (difference within ±t): ``v_draw`` and ``w_draw``, the same moments for the
  two-sided truncation.

>>> round(v_win(0.0, 0.0), 12), round(w_win(0.0, 0.0), 12)
(0.797884560803, 0.636619772368)
>>> v_draw(0.0, 0.5), round(w_draw(0.0, 0.5), 12)
(0.0, 0.919410845399)
"""

from __future__ import annotations

import math
from statistics import NormalDist

SQRT2 = math.sqrt(2.0)
"""√2 (Φ from ``erfc``; the plugins' written-out hot paths read it too)."""
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
"""1 / √(2π) (φ's constant)."""
_NORMAL = NormalDist()
W_MAX = 1.0 - 1e-12
"""W stays below 1: a variance factor 1 - W of exactly 0 would make a precision infinite
(an upset far in the tail, where the quotient loses every digit)."""


def pdf(x: float) -> float:
    """The standard normal density φ(x)."""
    return INV_SQRT_2PI * math.exp(-0.5 * x * x)


def cdf(x: float) -> float:
    """The standard normal distribution function Φ(x), accurate in the lower tail."""
    return 0.5 * math.erfc(-x / SQRT2)


def ppf(p: float) -> float:
    """The inverse of :func:`cdf`, for p in (0, 1)."""
    return _NORMAL.inv_cdf(p)


def v_win(x: float, t: float) -> float:
    """Mean correction of a win: φ(x - t) / Φ(x - t) (≥ 0).

    Φ is taken from ``erfc``, exact in the lower tail down to about x - t = -37; below,
    where Φ underflows, the asymptote -(x - t) is used.
    """
    d = x - t
    denominator = cdf(d)
    if denominator < 1e-300:
        return -d
    return pdf(d) / denominator


def w_win(x: float, t: float) -> float:
    """Variance correction of a win: v · (v + x - t), in [0, 1)."""
    v = v_win(x, t)
    w = v * (v + x - t)
    return min(max(w, 0.0), W_MAX)


def v_draw(x: float, t: float) -> float:
    """Mean correction of a draw (difference within ±t): odd in x."""
    ax = abs(x)
    a, b = t - ax, -t - ax
    denominator = cdf(a) - cdf(b)
    value = a if denominator < 1e-300 else (pdf(b) - pdf(a)) / denominator
    return -value if x < 0 else value


def w_draw(x: float, t: float) -> float:
    """Variance correction of a draw, in [0, 1)."""
    ax = abs(x)
    a, b = t - ax, -t - ax
    denominator = cdf(a) - cdf(b)
    if denominator < 1e-300:
        return W_MAX
    v = v_draw(ax, t)
    w = v * v + (a * pdf(a) - b * pdf(b)) / denominator
    return min(max(w, 0.0), W_MAX)
