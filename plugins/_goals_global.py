"""The global block of the time-weighted Dixon-Coles fit (:mod:`rankcraft.plugins._goals_fit`):
one Newton step on ``base``, the home advantages and rho over the whole window, their
prior, the move along the two directions no λ sees, the window's likelihood, the
objective, and the fitted globals as params."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any

import attrs

from ._goals_terms import UNCHECKED, Side, match_terms, mean_of, rho_terms, solve
from .goals import GoalsParams, GoalsRule

__all__ = [
    "BASE_RANGE",
    "HOME_RANGE",
    "GlobalBlock",
    "etas",
    "global_terms",
    "homes_of",
    "window_etas",
    "window_likelihood",
    "with_globals",
]

BASE_RANGE = (-5.0, 5.0)
HOME_RANGE = (-2.0, 2.0)
"""The ranges the ``goals`` params allow ``base`` and a home advantage (rho's: [-1, 1]);
the fit keeps its values in them, so that they stay params a forecast can use."""


class GlobalBlock:
    """What :class:`rankcraft.plugins._goals_fit.GoalsFit` does with its globals (a mixin:
    the fit's own attributes, read and set here)."""

    base: float
    rho: float
    home: list[float]
    fit_rho: bool
    fit_globals: bool
    attack: list[float]
    defence: list[float]
    matches: list[tuple[float, Side, Side, float, float, int, int]]
    weights: list[float]
    start: int
    params: GoalsParams
    precision: float
    global_precision: float
    centre: tuple[float, list[float], float]
    of_team: list[deque[int]]

    def _global_step(self) -> float:
        """One Newton step on (base, the fitted contexts' h, rho); the change made."""
        contexts = self._home_contexts()
        slot = [0] * len(self.home)  # a context's place in the step (0: not fitted)
        for i, c in enumerate(contexts):
            slot[c] = 1 + i
        n = 1 + len(contexts) + (1 if self.fit_rho else 0)
        r = n - 1 if self.fit_rho else -1
        value, grad, hess = global_terms(self, slot, n, r)
        value += self._global_prior(contexts, grad, hess)
        if not math.isfinite(value):  # a new match (or a short unchecked step) found a τ <= 0
            return self._feasible()
        step = solve(hess, grad)
        if r > 0 and abs(self.rho + step[r]) > 1.0:  # rho to its bound, the rest given it
            fixed = solve([row[:r] for row in hess[:r]], grad[:r])
            step = [*fixed, math.copysign(1.0, step[r]) - self.rho]
        return self._global_search(contexts, step, value)

    def _feasible(self) -> float:
        """Halve rho until every τ of the window is positive (rho = 0 makes all 1); the change
        reported is infinite, so another sweep follows."""
        while not math.isfinite(self._likelihood()):
            self.rho = 0.0 if abs(self.rho) < 1e-9 else 0.5 * self.rho
        return math.inf

    def _global_search(self, contexts: list[int], step: list[float], value: float) -> float:
        """Take ``step`` on the globals, halved until the likelihood does not fall."""
        before = (self.base, list(self.home), self.rho)
        scale = 1.0
        while True:
            self.base = min(max(before[0] + scale * step[0], BASE_RANGE[0]), BASE_RANGE[1])
            for i, c in enumerate(contexts):
                home = before[1][c] + scale * step[1 + i]
                self.home[c] = min(max(home, HOME_RANGE[0]), HOME_RANGE[1])
            if self.fit_rho:  # (rho kept in the plugin's range)
                self.rho = min(max(before[2] + scale * step[-1], -1.0), 1.0)
            if scale * max(map(abs, step)) <= UNCHECKED and math.isfinite(value):
                break
            now = self._likelihood() + self._global_prior(contexts)
            if now >= value - 1e-12 * abs(value) or scale < 1e-6:
                break
            scale *= 0.5
        moved = [abs(self.base - before[0]), abs(self.rho - before[2])]
        moved += [abs(self.home[c] - before[1][c]) for c in contexts]
        return max(moved)

    def _ridge(self, teams: Sequence[int]) -> float:
        """Move to the priors' optimum along the two directions no λ sees (every attack
        and defence + s; base + t and every attack − t: only the first when ``base`` is
        kept); the change made. (With A, D the sums of the attacks' and defences' offsets
        from their centres over the n teams, B base's, p and q the teams' and the globals'
        prior precisions, the optimum is t = (p (A − D) / 2 − q B) / (p n / 2 + q),
        s = (t n − A − D) / (2 n).)"""
        if not teams:
            return 0.0
        # (exact sums: the result does not depend on the order the teams were met in)
        n, a0, d0 = len(teams), self.params.initial_attack, self.params.initial_defence
        off_a = math.fsum(self.attack[k] for k in teams) - n * a0
        off_d = math.fsum(self.defence[k] for k in teams) - n * d0
        if not self.fit_globals:
            s = -(off_a + off_d) / (2 * n)
            for k in teams:
                self.attack[k] += s
                self.defence[k] += s
            return abs(s)
        q = self.global_precision
        if q == 0.0:
            s = -off_d / n
            t = off_a / n + s
        else:
            p, off_b = self.precision, self.base - self.centre[0]
            t = (0.5 * p * (off_a - off_d) - q * off_b) / (0.5 * p * n + q)
            s = (t * n - off_a - off_d) / (2 * n)
        for k in teams:
            self.attack[k] += s - t
            self.defence[k] += s
        self.base += t
        return max(abs(s - t), abs(s), abs(t))

    def _home_contexts(self) -> list[int]:
        """The contexts of the window's matches with a home side (those whose home
        advantage is fitted), in order."""
        return sorted({m[6] for m in self.matches[self.start :] if m[5] >= 0})

    def _likelihood(self) -> float:
        """Σ_i w_i φ_i l_i over the window."""
        return window_likelihood(self)

    def _global_prior(
        self,
        contexts: list[int],
        grad: list[float] | None = None,
        hess: list[list[float]] | None = None,
    ) -> float:
        """The log-density (up to a constant) of the Gaussian prior on ``base``, the home
        advantages of ``contexts`` and rho (when fitted) around their centres; with
        ``grad`` and ``hess``, its derivatives added to theirs (the step's order: base,
        the contexts, rho)."""
        q = self.global_precision
        if q == 0.0:
            return 0.0
        base0, home0, rho0 = self.centre
        offsets = [self.base - base0] + [self.home[c] - home0[c] for c in contexts]
        if self.fit_rho:
            offsets.append(self.rho - rho0)
        if grad is not None and hess is not None:
            for j, offset in enumerate(offsets):
                grad[j] -= q * offset
                hess[j][j] -= q
        return -0.5 * q * math.fsum(d * d for d in offsets)

    def objective(self) -> float:
        """F at the current parameters and the last fit's ``now``."""
        p0, q0 = self.params.initial_attack, self.params.initial_defence
        prior = math.fsum(
            (self.attack[k] - p0) ** 2 + (self.defence[k] - q0) ** 2
            for k, ms in enumerate(self.of_team)
            if ms
        )
        contexts = self._home_contexts()
        return self._likelihood() - 0.5 * self.precision * prior + self._global_prior(contexts)

    # -- what the fit says ------------------------------------------------------------

    def fitted_params(self) -> GoalsParams:
        """The ``goals`` params with the fitted ``base``, ``rho``, ``home_advantage`` and
        context rules' home advantages (raises ``ValueError`` when one is out of the
        plugin's range)."""
        params: GoalsParams = with_globals(self.params, self.base, self.rho, self.home)
        return params


def homes_of(params: GoalsParams) -> list[float]:
    """``params``' home advantage of each context: ``home_advantage``, then each context
    rule's (a rule without one of its own: ``home_advantage``)."""
    return [params.home_advantage] + [
        params.home_advantage if rule.home_advantage is None else rule.home_advantage
        for rule in params.context_rules
    ]


def with_globals(params: GoalsParams, base: float, rho: float, homes: Sequence[float]) -> Any:
    """``params`` (a ``goals`` params class) with ``base``, ``rho`` and the home advantage
    of each context (:func:`homes_of`'s order; a rule without a home advantage of its own
    keeps none). :raises ValueError: a value out of the params' range."""
    rules: list[GoalsRule] = [
        rule if rule.home_advantage is None else attrs.evolve(rule, home_advantage=homes[k + 1])
        for k, rule in enumerate(params.context_rules)
    ]
    changed: dict[str, Any] = {"base": base, "rho": rho, "context_rules": rules}
    return attrs.evolve(params, home_advantage=homes[0], **changed)


def global_terms(
    fit: GlobalBlock, slot: list[int], n: int, r: int
) -> tuple[float, list[float], list[list[float]]]:
    """(the window's likelihood, its gradient and Hessian in (base, the fitted contexts'
    h at ``slot[context]``, rho at ``r`` when ``r`` > 0)) at ``fit``'s parameters."""
    grad = [0.0] * n
    hess = [[0.0] * n for _ in range(n)]
    rho = fit.rho
    value = g_base = h_base = 0.0  # (base's terms, the hot ones, kept in locals)
    window = zip(fit.weights, fit.matches[fit.start :], *window_etas(fit), strict=True)
    for w, (_, _, _, x, y, home, ctx), eta_a, eta_b in window:
        ll, g1, g2, h11, h12, h22 = match_terms(x, y, eta_a, eta_b, rho)
        value += w * ll
        g_base += w * (g1 + g2)
        h_base += w * (h11 + 2.0 * h12 + h22)
        j = slot[ctx] if home >= 0 else 0
        if j:
            g_h, h_hh, h_hb = (g1, h11, h11 + h12) if home == 0 else (g2, h22, h22 + h12)
            grad[j] += w * g_h
            hess[j][j] += w * h_hh
            hess[0][j] += w * h_hb
        if r > 0 and x <= 1.0 and y <= 1.0:
            dr, drr, dr1, dr2 = rho_terms(x, y, eta_a, eta_b, rho)
            grad[r] += w * dr
            hess[r][r] += w * drr
            hess[0][r] += w * (dr1 + dr2)
            if j:
                hess[j][r] += w * (dr1 if home == 0 else dr2)
    grad[0], hess[0][0] = g_base, h_base
    for i in range(n):
        for k in range(i):
            hess[i][k] = hess[k][i]
    return value, grad, hess


def etas(fit: GlobalBlock, a: Side, b: Side, home: int, h: float) -> tuple[float, float]:
    """(η_A, η_B) of a match with a line-up on either side (the members' means)."""
    attack, defence = fit.attack, fit.defence
    eta_a = fit.base + mean_of(attack, a) - mean_of(defence, b) + (h if home == 0 else 0.0)
    eta_b = fit.base + mean_of(attack, b) - mean_of(defence, a) + (h if home == 1 else 0.0)
    return eta_a, eta_b


def window_etas(fit: GlobalBlock) -> tuple[list[float], list[float]]:
    """(η_A of each match of ``fit``'s window, η_B of each) at the current parameters, in
    window order (two lists: the passes over the window are the fit's dearest)."""
    base, attack, defence, homes = fit.base, fit.attack, fit.defence, fit.home
    etas_a: list[float] = []
    etas_b: list[float] = []
    for _, a, b, _, _, home, ctx in fit.matches[fit.start :]:
        h = homes[ctx]
        if a.__class__ is int and b.__class__ is int:
            etas_a.append(base + attack[a] - defence[b] + (h if home == 0 else 0.0))
            etas_b.append(base + attack[b] - defence[a] + (h if home == 1 else 0.0))
        else:
            eta_a, eta_b = etas(fit, a, b, home, h)
            etas_a.append(eta_a)
            etas_b.append(eta_b)
    return etas_a, etas_b


def window_likelihood(fit: GlobalBlock) -> float:
    """Σ_i w_i φ_i l_i over ``fit``'s window."""
    rho = fit.rho
    window = zip(fit.weights, fit.matches[fit.start :], *window_etas(fit), strict=True)
    return math.fsum(
        w * match_terms(m[3], m[4], eta_a, eta_b, rho)[0] for w, m, eta_a, eta_b in window
    )
