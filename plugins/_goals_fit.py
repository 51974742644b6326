"""The ``goals`` model fitted by time-weighted maximum likelihood (Dixon and Coles 1997,
section 4.5), refitted from the previous solution as matches arrive.

The model is the ``goals`` plugin's (docs/goals.md): team A meeting team B expects

    λ_A = exp(base + attack_A − defence_B + h_A),    λ_B = exp(base + attack_B − defence_A + h_B)

goals, ``h`` the home advantage of the match's context for the side at home (0 for the
other side and at a neutral venue), and the score ``x``–``y`` has the probability
τ(x, y) · Poisson(x; λ_A) · Poisson(y; λ_B) with Dixon and Coles' low-score correction τ.

**Objective.** :meth:`GoalsFit.fit` at time ``now`` (days) maximises

    F = Σ_i w_i φ(now − t_i) l_i  −  Σ_k [(attack_k − a0)² + (defence_k − d0)²] / (2 σ²)

    l_i = x_i η_A − λ_A + y_i η_B − λ_B + ln τ(x_i, y_i)      (η = ln λ)

over every team's attack and defence, ``base``, one home advantage per context and rho
(fitted unless ``fit_rho`` is False). l_i is the log-probability of match i's score
without its constant −ln x! − ln y!; φ(t) = exp(−ξ t) (Dixon and Coles' time weight,
``xi`` per day); ``w_i`` the match's own weight (1 by default); a0, d0 the plugin's
``initial_attack`` and ``initial_defence``; σ the ``prior_sd``. The first sum runs over
the *window*: the matches with φ ≥ ``cutoff`` (older ones are dropped for good); the
second over the teams with a match in the window (a team without one sits at a0, d0).
The prior keeps a team that never conceded finite and identifies the model: adding c to
every attack and every defence, or c to ``base`` and −c to every attack, leaves every λ
unchanged, and only the prior decides those two directions. No prior is put on ``base``,
the home advantages or rho. A context whose window has no match with a home side keeps its
home advantage as it was. Goals above ``goal_cap`` count as ``goal_cap``.

**Method.** Block coordinate Newton ascent. A sweep takes one Newton step on the global
block (``base``, the home advantages, rho: its small Hessian from one pass over the
window), then one 2-by-2 Newton step on each team's (attack, defence) given the rest,
which reads only that team's matches (multiplied by ``relax``: over-relaxation), then
moves exactly to the prior's optimum along the two directions the likelihood cannot see
(a closed form). Each Newton step uses the exact Hessian, is damped (Levenberg) when that
is not negative definite, and is halved until the block's objective does not fall; a
step no longer than ``_UNCHECKED`` is taken unchecked (near the optimum, where the
quadratic model holds; it saves a pass). rho is kept in the plugin's range [-1, 1] (at a
bound, the other globals step given it) and where a τ of the window is not positive (a
new 0–1 against a high rate) it is halved until all are. Sweeps stop when the largest
change of any parameter in a sweep is below ``tol`` (or after ``max_sweeps``). A refit
starts from the previous solution (a new team from a0, d0) and after one new match day
takes a few sweeps; matches leave the window as ``now`` advances, so a refit costs
O(window). Pure Python: a sweep costs about three passes over the window. Groups of
teams that meet each other far more than the rest (the non-FIFA sides) are the slow mode
of the sweeps; the stopping rule bounds the last sweep's change, not the distance to the
optimum (about ``tol`` times a few).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any

import attrs

from .goals import LOG_RATE_LIMIT, GoalsParams, GoalsRule, GoalsSkill, outcome_probabilities

__all__ = ["FitReport", "GoalsFit", "context_of", "match_terms", "rho_terms"]

_UNCHECKED = 0.02
"""A team's Newton step no longer than this (log-rate units) is taken without checking
that F rose (near the optimum the quadratic model holds; this saves a pass)."""


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


def _solve(hessian: list[list[float]], gradient: list[float]) -> list[float]:
    """The Newton step δ = −H⁻¹ g of a maximisation, by Cholesky of −H; where −H is not
    positive definite, of −H + μ I (μ grown until it is: Levenberg's damping)."""
    n = len(gradient)
    scale = max(1e-12, max(abs(hessian[i][i]) for i in range(n)))
    mu = 0.0
    while True:
        low = _cholesky(
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


def _cholesky(matrix: list[list[float]]) -> list[list[float]] | None:
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


@attrs.frozen(kw_only=True)
class FitReport:
    """What one :meth:`GoalsFit.fit` did.

    Attributes:
        sweeps: block-coordinate sweeps run (≥ 1).
        change: the largest parameter change in the last sweep (log-rate units).
        converged: whether ``change`` fell below the tolerance.
        matches: matches in the window; teams: teams with a match in it.
    """

    sweeps: int
    change: float
    converged: bool
    matches: int
    teams: int


def context_of(params: GoalsParams, text: str | None) -> int:
    """The home-advantage context of a match whose ``params.context_field`` value is
    ``text``: 0 for the plugin's ``home_advantage``, k ≥ 1 for ``context_rules[k − 1]``
    (the first rule whose ``contains`` is in the text and that sets its own home
    advantage; a rule that does not uses context 0, as the plugin does)."""
    if text is None:
        return 0
    for k, rule in enumerate(params.context_rules):
        if rule.contains in text:
            return 0 if rule.home_advantage is None else k + 1
    return 0


class GoalsFit:
    """Time-weighted Dixon-Coles maximum likelihood over a growing history (the module
    docstring gives the objective and the method).

    :param params: the ``goals`` params the fit starts from and maps back to: ``base``,
        ``home_advantage``, ``rho``, the context rules' home advantages (starting values),
        ``initial_attack`` and ``initial_defence`` (the prior's centres).
    :param xi: ξ, the time decay per day, ≥ 0 (Dixon and Coles: 0.0065 per half week).
    :param prior_sd: σ, the prior's standard deviation of attack and defence, > 0.
    :param cutoff: matches with φ below it leave the window, in [0, 1).
    :param fit_rho: fit rho (True) or keep ``params.rho``.
    :param tol: a fit stops when a sweep moves no parameter by more than this, > 0.
    :param max_sweeps: at most this many sweeps per fit.
    :param goal_cap: goals above it count as it (default: none).
    :param relax: each team's Newton step is multiplied by it, in (0, 2) (over-relaxation:
        above 1 it speeds the slow modes of weakly linked groups of teams; default 1).
    """

    def __init__(
        self,
        params: GoalsParams,
        *,
        xi: float,
        prior_sd: float,
        cutoff: float = 1e-3,
        fit_rho: bool = True,
        tol: float = 1e-8,
        max_sweeps: int = 500,
        relax: float = 1.0,
        goal_cap: float = math.inf,
    ) -> None:
        if not (xi >= 0.0 and math.isfinite(xi) and prior_sd > 0.0 and 0.0 <= cutoff < 1.0):
            raise ValueError(
                f"bad fit settings: xi {xi!r}, prior_sd {prior_sd!r}, cutoff {cutoff!r}"
            )
        if not (tol > 0.0 and max_sweeps >= 1 and goal_cap >= 1.0 and 0.0 < relax < 2.0):
            raise ValueError(
                f"bad fit settings: tol {tol!r}, max_sweeps {max_sweeps!r}, relax {relax!r}"
            )
        self.relax = relax
        self.params = params
        self.xi, self.precision, self.cutoff = xi, 1.0 / (prior_sd * prior_sd), cutoff
        self.fit_rho, self.tol, self.max_sweeps, self.goal_cap = fit_rho, tol, max_sweeps, goal_cap
        self.base, self.rho = params.base, params.rho
        self.home = [params.home_advantage] + [
            params.home_advantage if r.home_advantage is None else r.home_advantage
            for r in params.context_rules
        ]
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.attack: list[float] = []
        self.defence: list[float] = []
        # each match: (time in days, team a, team b, goals a, goals b, home side, context)
        self.matches: list[tuple[float, int, int, float, float, int, int]] = []
        self.own_weight: list[float] = []
        self.weights: list[float] = []  # w_i φ(now − t_i) of the window's matches
        self.start = 0  # the first match in the window
        self.of_team: list[deque[int]] = []
        self.now = -math.inf

    # -- the history ------------------------------------------------------------------

    def _team(self, name: str) -> int:
        k = self.index.get(name)
        if k is None:
            k = self.index[name] = len(self.names)
            self.names.append(name)
            self.attack.append(self.params.initial_attack)
            self.defence.append(self.params.initial_defence)
            self.of_team.append(deque())
        return k

    def add(
        self,
        days: float,
        team_a: str,
        team_b: str,
        goals_a: float,
        goals_b: float,
        home: int | None = None,
        context: int = 0,
        weight: float = 1.0,
    ) -> None:
        """Keep one match: its time ``days`` (any origin; never before the last match
        added), the two teams' names, their goals (whole numbers ≥ 0), the side at home
        (0, 1 or None: neutral) and its home-advantage ``context`` (:func:`context_of`),
        and its weight ``w_i`` (> 0; e.g. a context's ``learning_scale``)."""
        if (self.matches and days < self.matches[-1][0]) or days < self.now:
            raise ValueError(f"matches must be added in time order: {days!r}")
        if team_a == team_b or home not in (0, 1, None) or not 0 <= context < len(self.home):
            raise ValueError(f"bad match: {team_a!r}, {team_b!r}, home {home!r}, {context!r}")
        if not (goals_a >= 0 and goals_b >= 0 and goals_a % 1 == 0 == goals_b % 1 and weight > 0):
            raise ValueError(f"goals must be whole numbers >= 0: {goals_a!r}, {goals_b!r}")
        a, b = self._team(team_a), self._team(team_b)
        m = len(self.matches)
        x, y = min(float(goals_a), self.goal_cap), min(float(goals_b), self.goal_cap)
        self.matches.append((float(days), a, b, x, y, -1 if home is None else home, context))
        self.own_weight.append(weight)
        self.of_team[a].append(m)
        self.of_team[b].append(m)

    def _window(self, now: float) -> None:
        """Drop the matches whose φ fell below the cutoff; weigh the rest at ``now``."""
        if now < self.now or (self.matches and now < self.matches[-1][0]):
            raise ValueError(f"fit at {now!r}: before a match already kept or fitted")
        self.now = now
        oldest = (
            now + math.log(self.cutoff) / self.xi if self.cutoff > 0 and self.xi > 0 else -math.inf
        )
        while self.start < len(self.matches) and self.matches[self.start][0] < oldest:
            _, a, b, *_ = self.matches[self.start]
            for k in (a, b):
                self.of_team[k].popleft()
                if not self.of_team[k]:  # left the window: back at the prior's centre
                    self.attack[k] = self.params.initial_attack
                    self.defence[k] = self.params.initial_defence
            self.start += 1
        xi = self.xi
        self.weights = [
            w * math.exp(-xi * (now - m[0]))
            for m, w in zip(self.matches[self.start :], self.own_weight[self.start :], strict=True)
        ]

    # -- the fit ----------------------------------------------------------------------

    def fit(self, now: float) -> FitReport:
        """Maximise the objective at time ``now`` (days, not before the last match added),
        from the current solution; the window drops the matches too old to count."""
        self._window(now)
        teams = [k for k, ms in enumerate(self.of_team) if ms]
        sweeps, change = 0, math.inf
        while sweeps < self.max_sweeps and change >= self.tol:
            sweeps += 1
            change = self._global_step()
            for k in teams:
                change = max(change, self._team_step(k))
            change = max(change, self._ridge(teams))
        return FitReport(
            sweeps=sweeps,
            change=change,
            converged=change < self.tol,
            matches=len(self.weights),
            teams=len(teams),
        )

    def _team_terms(self, k: int) -> tuple[float, float, float, float, float, float]:
        """(F's part that team ``k`` enters, its gradient in (attack, defence), its
        Hessian (aa, ad, dd)) at the current parameters."""
        rho, start, weights, matches = self.rho, self.start, self.weights, self.matches
        base, attack, defence, homes = self.base, self.attack, self.defence, self.home
        p = self.precision
        da = attack[k] - self.params.initial_attack
        dd = defence[k] - self.params.initial_defence
        value = -0.5 * p * (da * da + dd * dd)
        g_att, g_def, h_aa, h_ad, h_dd = -p * da, -p * dd, -p, 0.0, -p
        for m in self.of_team[k]:
            _, a, b, x, y, home, ctx = matches[m]
            h = homes[ctx]
            eta_a = base + attack[a] - defence[b] + (h if home == 0 else 0.0)
            eta_b = base + attack[b] - defence[a] + (h if home == 1 else 0.0)
            ll, g1, g2, h11, h12, h22 = match_terms(x, y, eta_a, eta_b, rho)
            w = weights[m - start]
            value += w * ll
            if a != k:  # team k is side B: its attack is η_B's, its defence η_A's
                g1, g2, h11, h22 = g2, g1, h22, h11
            g_att += w * g1
            g_def -= w * g2
            h_aa += w * h11
            h_dd += w * h22
            h_ad -= w * h12
        return value, g_att, g_def, h_aa, h_ad, h_dd

    def _team_step(self, k: int) -> float:
        """One (over-relaxed) Newton step on team ``k``'s (attack, defence), halved while
        it lowers F; the change made."""
        attack0, defence0 = self.attack[k], self.defence[k]
        value, g_att, g_def, h_aa, h_ad, h_dd = self._team_terms(k)
        step = _solve([[h_aa, h_ad], [h_ad, h_dd]], [g_att, g_def])
        scale = self.relax
        while True:
            self.attack[k] = attack0 + scale * step[0]
            self.defence[k] = defence0 + scale * step[1]
            if scale * max(abs(step[0]), abs(step[1])) <= _UNCHECKED and math.isfinite(value):
                break  # (a short Newton step near the optimum: not worth a second pass)
            if self._team_terms(k)[0] >= value - 1e-12 * abs(value) or scale < 1e-6:
                break
            scale *= 0.5
        return max(abs(self.attack[k] - attack0), abs(self.defence[k] - defence0))

    def _ridge(self, teams: Sequence[int]) -> float:
        """Move to the prior's optimum along the two directions no λ sees (every attack
        and defence + s; base + t and every attack − t); the change made."""
        if not teams:
            return 0.0
        n = len(teams)
        s = -sum(self.defence[k] - self.params.initial_defence for k in teams) / n
        t = sum(self.attack[k] - self.params.initial_attack for k in teams) / n + s
        for k in teams:
            self.attack[k] += s - t
            self.defence[k] += s
        self.base += t
        return max(abs(s - t), abs(s), abs(t))

    def _global_step(self) -> float:
        """One Newton step on (base, the fitted contexts' h, rho); the change made."""
        contexts = sorted({m[6] for m in self.matches[self.start :] if m[5] >= 0})
        slot = [0] * len(self.home)  # a context's place in the step (0: not fitted)
        for i, c in enumerate(contexts):
            slot[c] = 1 + i
        n = 1 + len(contexts) + (1 if self.fit_rho else 0)
        r = n - 1 if self.fit_rho else -1
        value, grad, hess = _global_terms(self, slot, n, r)
        if not math.isfinite(value):  # a new match (or a short unchecked step) found a τ <= 0
            return self._feasible()
        step = _solve(hess, grad)
        if r > 0 and abs(self.rho + step[r]) > 1.0:  # rho to its bound, the rest given it
            fixed = _solve([row[:r] for row in hess[:r]], grad[:r])
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
            self.base = before[0] + scale * step[0]
            for i, c in enumerate(contexts):
                self.home[c] = before[1][c] + scale * step[1 + i]
            if self.fit_rho:  # (rho kept in the plugin's range)
                self.rho = min(max(before[2] + scale * step[-1], -1.0), 1.0)
            if scale * max(map(abs, step)) <= _UNCHECKED and math.isfinite(value):
                break
            if self._likelihood() >= value - 1e-12 * abs(value) or scale < 1e-6:
                break
            scale *= 0.5
        moved = [abs(self.base - before[0]), abs(self.rho - before[2])]
        moved += [abs(self.home[c] - before[1][c]) for c in contexts]
        return max(moved)

    def _likelihood(self) -> float:
        """Σ_i w_i φ_i l_i over the window."""
        return _window_likelihood(self)

    def objective(self) -> float:
        """F at the current parameters and the last fit's ``now``."""
        p0, q0 = self.params.initial_attack, self.params.initial_defence
        prior = math.fsum(
            (self.attack[k] - p0) ** 2 + (self.defence[k] - q0) ** 2
            for k, ms in enumerate(self.of_team)
            if ms
        )
        return self._likelihood() - 0.5 * self.precision * prior

    # -- what the fit says ------------------------------------------------------------

    def state(self, team: str) -> GoalsSkill:
        """A team's fitted attack and defence as the ``goals`` plugin's state (an unknown
        team, or one without a match in the window: the initial state)."""
        k = self.index.get(team)
        if k is None:
            return GoalsSkill(self.params.initial_attack, self.params.initial_defence)
        return GoalsSkill(self.attack[k], self.defence[k])

    def fitted_params(self) -> GoalsParams:
        """The ``goals`` params with the fitted ``base``, ``rho``, ``home_advantage`` and
        context rules' home advantages (raises ``ValueError`` when one is out of the
        plugin's range)."""
        rules: list[GoalsRule] = [
            rule
            if rule.home_advantage is None
            else attrs.evolve(rule, home_advantage=self.home[k + 1])
            for k, rule in enumerate(self.params.context_rules)
        ]
        fitted: dict[str, Any] = {"base": self.base, "rho": self.rho, "context_rules": rules}
        return attrs.evolve(self.params, home_advantage=self.home[0], **fitted)

    def outcomes(
        self, team_a: str, team_b: str, home: int | None = None, context: int = 0
    ) -> tuple[float, float, float]:
        """(P(A wins), P(draw), P(B wins)) of a match at the fitted parameters, summed
        from the ``goals`` plugin's score model (:func:`outcome_probabilities`; log-rates
        clamped to ±``LOG_RATE_LIMIT`` as the plugin does)."""
        a, b = self.state(team_a), self.state(team_b)
        h = self.home[context]
        eta_a = self.base + a.attack - b.defence + (h if home == 0 else 0.0)
        eta_b = self.base + b.attack - a.defence + (h if home == 1 else 0.0)
        lam_a = math.exp(min(max(eta_a, -LOG_RATE_LIMIT), LOG_RATE_LIMIT))
        lam_b = math.exp(min(max(eta_b, -LOG_RATE_LIMIT), LOG_RATE_LIMIT))
        return outcome_probabilities(lam_a, lam_b, self.rho, self.params.max_goals)


def _global_terms(
    fit: GoalsFit, slot: list[int], n: int, r: int
) -> tuple[float, list[float], list[list[float]]]:
    """(the window's likelihood, its gradient and Hessian in (base, the fitted contexts'
    h at ``slot[context]``, rho at ``r`` when ``r`` > 0)) at ``fit``'s parameters."""
    grad = [0.0] * n
    hess = [[0.0] * n for _ in range(n)]
    base, attack, defence, homes, rho = fit.base, fit.attack, fit.defence, fit.home, fit.rho
    value = 0.0
    for w, (_, a, b, x, y, home, ctx) in zip(fit.weights, fit.matches[fit.start :], strict=True):
        h = homes[ctx]
        eta_a = base + attack[a] - defence[b] + (h if home == 0 else 0.0)
        eta_b = base + attack[b] - defence[a] + (h if home == 1 else 0.0)
        ll, g1, g2, h11, h12, h22 = match_terms(x, y, eta_a, eta_b, rho)
        value += w * ll
        grad[0] += w * (g1 + g2)
        hess[0][0] += w * (h11 + 2.0 * h12 + h22)
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
    for i in range(n):
        for k in range(i):
            hess[i][k] = hess[k][i]
    return value, grad, hess


def _window_likelihood(fit: GoalsFit) -> float:
    """Σ_i w_i φ_i l_i over ``fit``'s window."""
    base, attack, defence, homes, rho = fit.base, fit.attack, fit.defence, fit.home, fit.rho
    total = []
    for w, (_, a, b, x, y, home, ctx) in zip(fit.weights, fit.matches[fit.start :], strict=True):
        h = homes[ctx]
        eta_a = base + attack[a] - defence[b] + (h if home == 0 else 0.0)
        eta_b = base + attack[b] - defence[a] + (h if home == 1 else 0.0)
        total.append(w * match_terms(x, y, eta_a, eta_b, rho)[0])
    return math.fsum(total)
