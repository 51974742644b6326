"""Glicko-2 rating periods for many players at once, with NumPy array arithmetic.

:func:`rate_period` rates every player of one rating period in a handful of array
operations: g, E, v and Δ for all results, summed per player with ``bincount``, and
Glickman's Illinois iteration for σ' run on all players together (each stops when its own
bracket is within ε). :func:`rate_period_reference` is the same thing one player at a time
with :func:`rankcraft.plugins.glicko2.rate`; the tests hold the two within 1e-9.

NumPy is an optional extra (``pip install 'rankcraft[numpy]'``); the ``glicko2`` plugin
offers this path to the engine's ``batch`` mode only when NumPy imports.

Glickman's example (one player, 1500/200 on the Glicko scale, three results):

>>> import numpy as np
>>> from rankcraft.plugins.glicko2 import SCALE
>>> mu, phi, sigma = rate_period(
...     np.array([0.0]), np.array([200 / SCALE]), np.array([0.06]),
...     owner=np.array([0, 0, 0]),
...     opponent_mu=np.array([-100, 50, 200]) / SCALE,
...     opponent_phi=np.array([30, 100, 300]) / SCALE,
...     score=np.array([1.0, 0.0, 0.0]), weight=np.ones(3), tau=0.5)
>>> [round(float(x), 2) for x in (1500 + SCALE * mu[0], SCALE * phi[0])], round(float(sigma[0]), 5)
([1464.05, 151.52], 0.06)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .glicko2 import _MAX_ITERATIONS, rate

__all__ = ["rate_period", "rate_period_reference"]

Array = Any  # numpy.ndarray of float64 (or int64 for ``owner``)


def _objective(x: Array, a: Array, delta2: Array, phi2: Array, v: Array, tau2: float) -> Array:
    ex = np.exp(x)
    total = phi2 + v + ex
    return ex * (delta2 - phi2 - v - ex) / (2.0 * total * total) - (x - a) / tau2


def rate_period(
    mu: Array,
    phi: Array,
    sigma: Array,
    *,
    owner: Array,
    opponent_mu: Array,
    opponent_phi: Array,
    score: Array,
    weight: Array,
    tau: float,
    epsilon: float = 1e-6,
) -> tuple[Array, Array, Array]:
    """One rating period for n players, unbounded (the caller clamps).

    :param mu, phi, sigma: the players' states at the start of the period (length n).
    :param owner: for each result, the index of the player it belongs to (0 to n-1).
    :param opponent_mu, opponent_phi: the opponent of each result, as the period started.
    :param score: each result's score in [0, 1]; ``weight`` its weight in (0, 1].
    :param tau: Glickman's τ. ``epsilon``: the iteration's tolerance.
    :returns: (μ', φ', σ'), each of length n. A player without results (or only
        zero-weight ones) keeps μ and σ and gets φ' = sqrt(φ² + σ²).
    """
    n = len(mu)
    with np.errstate(all="ignore"):
        g = 1.0 / np.sqrt(1.0 + 3.0 * opponent_phi * opponent_phi / (math.pi * math.pi))
        e = 1.0 / (1.0 + np.exp(-g * (mu[owner] - opponent_mu)))
        inv_v = np.bincount(owner, weights=weight * g * g * e * (1.0 - e), minlength=n)
        total = np.bincount(owner, weights=weight * g * (score - e), minlength=n)
        new_mu = mu.copy()
        new_phi = np.sqrt(phi * phi + sigma * sigma)
        new_sigma = sigma.copy()
        act = np.nonzero(inv_v > 0.0)[0]
        if len(act) == 0:
            return new_mu, new_phi, new_sigma
        inv = inv_v[act]
        v = 1.0 / inv
        tot = total[act]
        delta = v * tot
        p = phi[act]
        s = sigma[act]
        a = np.log(s * s)
        delta2 = delta * delta
        phi2 = p * p
        tau2 = tau * tau

        def f(x: Array, i: Array) -> Array:
            return _objective(x, a[i], delta2[i], phi2[i], v[i], tau2)

        big_a = a.copy()
        big_b = np.empty_like(a)
        above = delta2 > phi2 + v
        big_b[above] = np.log(delta2[above] - phi2[above] - v[above])
        rest = np.nonzero(~above)[0]
        k = np.ones(len(rest))
        while len(rest):
            low = f(a[rest] - k * tau, rest) < 0.0
            done = ~low
            big_b[rest[done]] = a[rest[done]] - k[done] * tau
            rest = rest[low]
            k = k[low] + 1.0
        all_i = np.arange(len(a))
        f_a = f(big_a, all_i)
        f_b = f(big_b, all_i)
        live = all_i
        for _ in range(_MAX_ITERATIONS):
            keep = (np.abs(big_b[live] - big_a[live]) > epsilon) & (f_b[live] != f_a[live])
            live = live[keep]
            if len(live) == 0:
                break
            fa, fb = f_a[live], f_b[live]
            ba, bb = big_a[live], big_b[live]
            big_c = ba + (ba - bb) * fa / (fb - fa)
            f_c = f(big_c, live)
            swap = f_c * fb <= 0.0
            big_a[live] = np.where(swap, bb, ba)
            f_a[live] = np.where(swap, fb, fa / 2.0)
            big_b[live] = big_c
            f_b[live] = f_c
        sig = np.exp(big_a / 2.0)
        phi_star2 = phi2 + sig * sig
        phi_new = 1.0 / np.sqrt(1.0 / phi_star2 + inv)
        new_mu[act] = mu[act] + phi_new * phi_new * tot
        new_phi[act] = phi_new
        new_sigma[act] = sig
    return new_mu, new_phi, new_sigma


def rate_period_reference(
    states: Sequence[tuple[float, float, float]],
    results: Sequence[Sequence[tuple[float, float, float, float]]],
    tau: float,
    epsilon: float = 1e-6,
) -> list[tuple[float, float, float]]:
    """The pure-Python reference: :func:`rankcraft.plugins.glicko2.rate` per player, with
    ``results[i]`` the (opponent μ, opponent φ, score, weight) of player ``i``."""
    return [
        rate(mu, phi, sigma, tau, list(res), epsilon)
        for (mu, phi, sigma), res in zip(states, results, strict=True)
    ]
