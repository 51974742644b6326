"""Weng and Lin's five models for any number of teams: every team's (Ω_i, Δ_i).

The general path of the ``wenglin`` plugin (:func:`rankcraft.plugins.wenglin.rate`): the
Plackett-Luce model over all teams, and the pairwise models (Bradley-Terry and
Thurstone-Mosteller, ``-full`` or ``-part``) comparing each team with the others. The
plugin's written-out two-team Plackett-Luce cases (``duel``, ``two_teams``) do the same
operations for that shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._gaussian import v_draw, v_win, w_draw, w_win

if TYPE_CHECKING:
    from .wenglin import WengLinParams


def omega_delta(
    params: WengLinParams, mus: Sequence[float], vars_: Sequence[float], places: Sequence[int]
) -> list[tuple[float, float]]:
    """(Ω_i, Δ_i) of every team, from team sums μ_i and σ_i² (gamma = σ_i / c, the paper's)."""
    beta2 = params.beta * params.beta
    if params.model == "plackett-luce":
        return _plackett_luce(beta2, mus, vars_, places)
    return _pairwise(params, beta2, mus, vars_, places)


def _logistic(x: float) -> float:
    """1 / (1 + e^(-x)), without overflow."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _plackett_luce(
    beta2: float, mus: Sequence[float], vars_: Sequence[float], places: Sequence[int]
) -> list[tuple[float, float]]:
    """Plackett-Luce's (Ω_i, Δ_i) (Algorithm 4; ties share the places, A_q)."""
    k = len(mus)
    out: list[tuple[float, float]] = []
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


def _opponents(params: WengLinParams, places: Sequence[int]) -> list[list[int]]:
    """The teams each team is compared with: every other team (``-full``), or those up to
    ``window`` places before and after it in the ranking (``-part``)."""
    k = len(places)
    if not params.model.endswith("-part"):
        return [[q for q in range(k) if q != i] for i in range(k)]
    order = sorted(range(k), key=lambda i: (places[i], i))
    position = {team: p for p, team in enumerate(order)}
    out = []
    for i in range(k):
        p = position[i]
        lo, hi = max(0, p - params.window), min(k, p + params.window + 1)
        out.append([order[x] for x in range(lo, hi) if x != p])
    return out


def _pairwise(
    params: WengLinParams,
    beta2: float,
    mus: Sequence[float],
    vars_: Sequence[float],
    places: Sequence[int],
) -> list[tuple[float, float]]:
    """The pairwise models' (Ω_i, Δ_i): logistic (Bradley-Terry) or probit
    (Thurstone-Mosteller, draw margin ε) comparisons, averaged in the ``-part`` models."""
    model = params.model
    part = model.endswith("-part")
    out: list[tuple[float, float]] = []
    for i, others in enumerate(_opponents(params, places)):
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
