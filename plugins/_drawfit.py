"""Maximum-likelihood fits of the draw models of ``_matchup`` (pure functions).

A fit reads items ``(u, outcome, group)``: ``u`` the rating gap of side 0 over side 1 in
units of the scale (gap / scale, home edge included), ``outcome`` 0 (side 0 won), 1 (a
draw) or 2 (side 1 won), and ``group`` the index of the parameter set the item belongs
to (0 when there is one; a competition's own draw rate otherwise). The gaps are held
fixed: the ratings come from a replay, and the fit chooses the draw parameters that make
the outcomes of those matches most likely.

**Davidson** (:func:`rankcraft.plugins._matchup.davidson`). With ``s = |u| ln 10``,
``a = e^(−s/2)`` and ``η = ln κ_g − r·s`` (``r`` the ``gap_rate``, shared by the groups),
the probabilities of the stronger side winning, a draw and the weaker side winning are
``1 : e^η a : a²`` over their sum, so the log-likelihood is ``Σ [draw]·η − ln(1 + a² +
e^η a)`` plus terms free of the parameters: a logistic-type model in the linear
predictor η, concave in (ln κ_g, r). Its gradient is ``Σ (y − q)`` for ln κ_g and
``−Σ s (y − q)`` for r (y: 1 for a draw, q the model's P(draw)), its Hessian
``−Σ w``, ``Σ s w``, ``−Σ s² w`` with w = q (1 − q): Newton's method converges in a
few steps, and at the optimum each group's expected draws equal its observed draws.

>>> items = [(0.0, 1, 0)] * 20 + [(0.0, 0, 0)] * 40 + [(0.0, 2, 0)] * 40
>>> kappas, rate = fit_davidson(items, groups=1, fit_rate=False)
>>> round(kappas[0], 6)  # 20% draws between equals: κ / (2 + κ) = 0.2
0.5

**Ordered logit** (:func:`rankcraft.plugins._matchup.ordered_logit`): a win when the
performance difference passes ``+m``, so ``P(win) = 1 / (1 + 10^(m' − u))`` with
``m' = m / scale`` per group, fitted by a golden-section search of the (unimodal)
log-likelihood on [0, 4] scale units.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

LN10 = math.log(10.0)
KAPPA_RANGE = (1e-6, 1e3)
"""The κ a fit can return (the plugin's ``draw_kappa`` accepts [0, 1e3])."""
RATE_RANGE = (0.0, 10.0)
"""The gap rate a fit can return (the plugin's ``draw_gap``)."""
MARGIN_RANGE = (0.0, 4.0)
"""The ordered logit's draw band a fit can return, in units of the scale."""
_THETA_RANGE = (math.log(KAPPA_RANGE[0]), math.log(KAPPA_RANGE[1]))
"""``KAPPA_RANGE`` as ln κ, the variable Davidson's fit moves."""


def davidson_log_likelihood(
    items: Sequence[tuple[float, int, int]], kappas: Sequence[float], rate: float
) -> float:
    """The mean log-likelihood (natural log) of ``items`` under Davidson's model with
    ``kappas[group]`` and the gap rate ``rate`` (what :func:`fit_davidson` maximises)."""
    total = 0.0
    for u, outcome, group in items:
        s = abs(u) * LN10
        a = math.exp(-0.5 * s)
        k = kappas[group] * math.exp(-rate * s)
        denominator = 1.0 + a * a + k * a
        strong_won = (outcome == 0) == (u >= 0.0)
        top = k * a if outcome == 1 else 1.0 if strong_won else a * a
        total += math.log(max(top / denominator, 1e-300))
    return total / len(items) if items else math.nan


def fit_davidson(
    items: Sequence[tuple[float, int, int]],
    *,
    groups: int,
    fit_rate: bool = True,
    kappas: Sequence[float] | None = None,
    rate: float = 0.0,
    steps: int = 50,
) -> tuple[tuple[float, ...], float]:
    """The maximum-likelihood (κ per group, gap rate) of Davidson's draw model.

    :param items: ``(u, outcome, group)`` as the module says; group in [0, groups).
    :param fit_rate: fit the shared gap rate (else keep ``rate``).
    :param kappas, rate: the starting point (default κ 0.5, rate 0).
    :returns: (κ per group, rate), κ in ``KAPPA_RANGE``, rate in ``RATE_RANGE``. A group
        without items keeps its starting κ; one without draws gets the smallest κ.
    """
    prepared = [(abs(u) * LN10, 1.0 if outcome == 1 else 0.0, group) for u, outcome, group in items]
    theta = _start_theta(prepared, groups, kappas)
    current = davidson_log_likelihood(items, [math.exp(t) for t in theta], rate)
    for _ in range(steps):
        g_theta, h_theta, h_cross, g_rate, h_rate = _derivatives(prepared, groups, theta, rate)
        d_theta, d_rate = _newton_step(fit_rate, rate, g_theta, h_theta, h_cross, g_rate, h_rate)
        gain = g_rate * d_rate + sum(
            g * d for g, d in zip(g_theta, d_theta, strict=True) if d > -1e3
        )
        if gain < 1e-12 * len(items):  # (Newton's predicted gain, twice over: converged)
            break
        found = _line_search(items, theta, rate, d_theta, d_rate, current)
        if found is None:
            break
        new_theta, new_rate, value = found
        moved = max(
            [abs(a - b) for a, b in zip(new_theta, theta, strict=True)] + [abs(new_rate - rate)]
        )
        theta, rate, current = new_theta, new_rate, value
        if moved < 1e-10:
            break
    return tuple(math.exp(t) for t in theta), rate


def _start_theta(
    prepared: Sequence[tuple[float, float, int]], groups: int, kappas: Sequence[float] | None
) -> list[float]:
    """The starting ln κ per group: the group's draw share where it has both draws and
    other results (κ / (2 + κ) between equals), else ``kappas``' (default 0.5)."""
    theta = [
        math.log(min(max(k, KAPPA_RANGE[0]), KAPPA_RANGE[1])) for k in (kappas or [0.5] * groups)
    ]
    low, high = _THETA_RANGE
    for group in range(groups):
        mine = [y for _, y, g in prepared if g == group]
        share = sum(mine) / len(mine) if mine else 0.0
        if 0.0 < share < 1.0:
            theta[group] = min(max(math.log(2.0 * share / (1.0 - share)), low), high)
    return theta


def _derivatives(
    prepared: Sequence[tuple[float, float, int]], groups: int, theta: Sequence[float], rate: float
) -> tuple[list[float], list[float], list[float], float, float]:
    """The log-likelihood's gradient and (minus) Hessian at (``theta``, ``rate``): per
    group the gradient and Hessian of ln κ and the cross term with the rate, then the
    rate's gradient and Hessian (the module's formulas)."""
    g_theta = [0.0] * groups
    h_theta = [0.0] * groups
    h_cross = [0.0] * groups
    g_rate = h_rate = 0.0
    for s, y, group in prepared:
        a = math.exp(-0.5 * s)
        k = math.exp(theta[group] - rate * s) * a
        q = k / (1.0 + a * a + k)
        w = q * (1.0 - q)
        g_theta[group] += y - q
        h_theta[group] += w
        h_cross[group] += s * w
        g_rate -= s * (y - q)
        h_rate += s * s * w
    return g_theta, h_theta, h_cross, g_rate, h_rate


def _newton_step(
    fit_rate: bool,
    rate: float,
    g_theta: Sequence[float],
    h_theta: Sequence[float],
    h_cross: Sequence[float],
    g_rate: float,
    h_rate: float,
) -> tuple[list[float], float]:
    """Newton's direction (ln κ per group, rate) on the concave log-likelihood: H d = -g
    solved by the Schur complement of H's arrow shape (diagonal in ln κ, a full row and
    column for the rate)."""
    d_rate = 0.0
    if fit_rate:
        schur = h_rate - sum(c * c / h for c, h in zip(h_cross, h_theta, strict=True) if h > 0)
        rhs = g_rate + sum(
            c * g / h for c, g, h in zip(h_cross, g_theta, h_theta, strict=True) if h > 0
        )
        d_rate = rhs / schur if schur > 1e-12 else 0.0
        # at a bound with the step pointing out of the range, the rate stays there:
        # the step of ln κ is then the one with the rate held (else the κ step carries
        # the rate's correction, points the wrong way and the line search fails)
        if (rate <= RATE_RANGE[0] and d_rate < 0.0) or (rate >= RATE_RANGE[1] and d_rate > 0.0):
            d_rate = 0.0
    d_theta = [
        (g + c * d_rate) / h if h > 0.0 else (-1e3 if g < 0.0 else 0.0)
        for g, c, h in zip(g_theta, h_cross, h_theta, strict=True)
    ]
    return d_theta, d_rate


def _line_search(
    items: Sequence[tuple[float, int, int]],
    theta: Sequence[float],
    rate: float,
    d_theta: Sequence[float],
    d_rate: float,
    current: float,
) -> tuple[list[float], float, float] | None:
    """The Newton step, halved until the likelihood grows (no overshoot far out): (ln κ
    per group, rate, log-likelihood) there, or None when 40 halvings did not find one."""
    low, high = _THETA_RANGE
    length = 1.0
    for _ in range(40):
        new_theta = [
            min(max(t + length * d, low), high) for t, d in zip(theta, d_theta, strict=True)
        ]
        new_rate = min(max(rate + length * d_rate, RATE_RANGE[0]), RATE_RANGE[1])
        value = davidson_log_likelihood(items, [math.exp(t) for t in new_theta], new_rate)
        if value >= current:
            return new_theta, new_rate, value
        length *= 0.5
    return None


def ordered_logit_log_likelihood(
    items: Sequence[tuple[float, int, int]], margins: Sequence[float]
) -> float:
    """The mean log-likelihood of ``items`` under the ordered logit with the draw band
    ``margins[group]`` (units of the scale)."""
    total = 0.0
    for u, outcome, group in items:
        total += math.log(max(_ordered(u, margins[group])[outcome], 1e-300))
    return total / len(items) if items else math.nan


def _ordered(u: float, m: float) -> tuple[float, float, float]:
    win = 1.0 / (1.0 + 10.0 ** min(m - u, 300.0))
    loss = 1.0 / (1.0 + 10.0 ** min(m + u, 300.0))
    return win, max(1.0 - win - loss, 0.0), loss


def fit_ordered_logit(
    items: Sequence[tuple[float, int, int]], *, groups: int, margins: Sequence[float] | None = None
) -> tuple[float, ...]:
    """The maximum-likelihood draw band per group of the ordered logit, in units of the
    scale (``MARGIN_RANGE``), by a golden-section search of each group's log-likelihood;
    a group without items keeps its starting band (default 0.175, 70 points at 400)."""
    start = list(margins or [0.175] * groups)
    out = []
    for group in range(groups):
        mine = [(u, outcome, 0) for u, outcome, g in items if g == group]
        if not mine:
            out.append(start[group])
            continue

        def loss(m: float, mine: list[tuple[float, int, int]] = mine) -> float:
            return -ordered_logit_log_likelihood(mine, [m])

        out.append(_golden(loss, *MARGIN_RANGE))
    return tuple(out)


def _golden(f: Callable[[float], float], low: float, high: float, tolerance: float = 1e-5) -> float:
    """The minimum of a unimodal function on [low, high] by golden-section search."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = high - ratio * (high - low), low + ratio * (high - low)
    fc, fd = f(c), f(d)
    while high - low > tolerance:
        if fc < fd:
            high, d, fd = d, c, fc
            c = high - ratio * (high - low)
            fc = f(c)
        else:
            low, c, fc = c, d, fd
            d = low + ratio * (high - low)
            fd = f(d)
    return (low + high) / 2.0
