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

      −  [(base − b0)² + Σ_c (h_c − h0_c)² + (rho − r0)²] / (2 τ²)

over every team's attack and defence, ``base``, one home advantage per context and rho
(fitted unless ``fit_rho`` is False). l_i is the log-probability of match i's score
without its constant −ln x! − ln y!; φ(t) = exp(−ξ t) (Dixon and Coles' time weight,
``xi`` per day); ``w_i`` the match's own weight (1 by default); a0, d0 the plugin's
``initial_attack`` and ``initial_defence``; σ the ``prior_sd``; b0, h0_c, r0 the params'
``base``, home advantages and rho, τ the ``global_sd`` (no prior on them when it is
infinite, the default; the third sum runs over the contexts with a home side in the
window and leaves rho out when it is not fitted). The first sum runs over
the *window*: the matches with φ ≥ ``cutoff`` and not older than ``window`` days (older
ones are dropped for good); the second over the teams with a match in the window (a team
without one sits at a0, d0). With ``fit_globals`` False the globals stay the params'.
The prior keeps a team that never conceded finite and identifies the model: adding c to
every attack and every defence, or c to ``base`` and −c to every attack, leaves every λ
unchanged, and only the priors decide those two directions. Without the globals' prior, a
short history can send a global to infinity (a context whose home sides never scored: its
home advantage). A context whose window has no match with a home side keeps its
home advantage as it was. Goals above ``goal_cap`` count as ``goal_cap``.

**Method.** Block coordinate Newton ascent. A sweep takes one Newton step on the global
block (``base``, the home advantages, rho: its small Hessian from one pass over the
window), then one 2-by-2 Newton step on each team's (attack, defence) given the rest,
which reads only that team's matches (multiplied by ``relax``: over-relaxation), then
moves exactly to the prior's optimum along the two directions the likelihood cannot see
(a closed form). Each Newton step uses the exact Hessian, is damped (Levenberg) when that
is not negative definite, and is halved until the block's objective does not fall; a
step no longer than ``UNCHECKED`` is taken unchecked (near the optimum, where the
quadratic model holds; it saves a pass). rho is kept in the plugin's range [-1, 1] (at a
bound, the other globals step given it), ``base`` in [-5, 5] and each home advantage in
[-2, 2] (a step past a bound stops there: values a forecast's params can hold); where a
τ of the window is not positive (a new 0–1 against a high rate) rho is halved until all
are. Sweeps stop when the largest
change of any parameter in a sweep is below ``tol`` (or after ``max_sweeps``). A refit
starts from the previous solution (a new team from a0, d0); its first sweep steps every
team of the window, and the later ones only the teams that moved by ``tol`` or more in
the sweep before and their opponents in the window (every team when a global or the
prior's direction moves that much). After one match day most teams barely move, so a
refit costs about one pass over the window and a few over the day's neighbourhood.
(Stepping only the day's teams and their neighbours from the start, without the full
first sweep, was tried: small moves below ``tol`` then pile up over days in weakly linked
groups, and teams drifted 10 times the tolerance from the optimum.) Groups of teams that
meet each other far more than the rest (the non-FIFA sides) are the slow mode of the
sweeps; the stopping rule bounds the last sweep's change, not the distance to the optimum
(about ``tol`` or less, measured against exact fits of the football history).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import attrs

from ._goals_global import GlobalBlock, etas, homes_of
from ._goals_terms import UNCHECKED, Side, match_terms, members, side_of, solve
from .goals import LOG_RATE_LIMIT, GoalsParams, GoalsSkill, outcome_probabilities

__all__ = ["FitReport", "GoalsFit", "context_of"]


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


class GoalsFit(GlobalBlock):
    """Time-weighted Dixon-Coles maximum likelihood over a growing history (the module
    docstring gives the objective and the method).

    :param params: the ``goals`` params the fit starts from and maps back to: ``base``,
        ``home_advantage``, ``rho``, the context rules' home advantages (starting values),
        ``initial_attack`` and ``initial_defence`` (the prior's centres).
    :param xi: ξ, the time decay per day, ≥ 0 (Dixon and Coles: 0.0065 per half week).
    :param prior_sd: σ, the prior's standard deviation of attack and defence, > 0.
    :param cutoff: matches with φ below it leave the window, in [0, 1).
    :param fit_rho: fit rho (True) or keep ``params.rho``.
    :param fit_globals: fit ``base``, the home advantages and rho (True), or keep the
        params' (False: only the teams' attack and defence are fitted, ``fit_rho`` unread).
    :param global_sd: τ, the deviation of the Gaussian prior on ``base``, each home
        advantage and rho around the params' values, > 0 (default: infinite, no prior).
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
        fit_globals: bool = True,
        tol: float = 1e-8,
        max_sweeps: int = 500,
        relax: float = 1.0,
        goal_cap: float = math.inf,
        global_sd: float = math.inf,
    ) -> None:
        if not (xi >= 0.0 and math.isfinite(xi) and prior_sd > 0.0 and 0.0 <= cutoff < 1.0):
            raise ValueError(
                f"bad fit settings: xi {xi!r}, prior_sd {prior_sd!r}, cutoff {cutoff!r}"
            )
        if not (tol > 0.0 and max_sweeps >= 1 and goal_cap >= 1.0 and 0.0 < relax < 2.0):
            raise ValueError(
                f"bad fit settings: tol {tol!r}, max_sweeps {max_sweeps!r}, relax {relax!r}"
            )
        if not global_sd > 0.0:
            raise ValueError(f"bad fit settings: global_sd {global_sd!r}")
        self.global_precision = 1.0 / (global_sd * global_sd)  # (0.0 when infinite)
        self.relax = relax
        self.fit_globals = fit_globals
        self.window = math.inf
        """Matches older than this many days before the fit's ``now`` leave too."""
        self.params = params
        self.xi, self.precision, self.cutoff = xi, 1.0 / (prior_sd * prior_sd), cutoff
        self.fit_rho, self.tol, self.max_sweeps, self.goal_cap = fit_rho, tol, max_sweeps, goal_cap
        self.base, self.rho = params.base, params.rho
        self.home = homes_of(params)
        self.centre = (self.base, list(self.home), self.rho)
        """The globals' prior centres: the params' values."""
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.attack: list[float] = []
        self.defence: list[float] = []
        # each match: (time in days, team a, team b, goals a, goals b, home side, context)
        self.matches: list[tuple[float, Side, Side, float, float, int, int]] = []
        self.own_weight: list[float] = []
        self.weights: list[float] = []  # w_i φ(now − t_i) of the window's matches
        self.start = 0  # the first match in the window
        self.of_team: list[deque[int]] = []
        self.now = -math.inf
        self.dirty: set[int] = set()
        """The teams the next sweep steps."""

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
        team_a: str | Sequence[str],
        team_b: str | Sequence[str],
        goals_a: float,
        goals_b: float,
        home: int | None = None,
        context: int = 0,
        weight: float = 1.0,
    ) -> None:
        """Keep one match: its time ``days`` (any origin; never before the last match
        added), the two sides (a team's name, or the names of a line-up whose strength is
        its members' mean attack and mean defence), their goals (≥ 0; whole numbers for a
        Poisson likelihood, any for the quasi-likelihood), the side at home (0, 1 or None:
        neutral) and its home-advantage ``context`` (:func:`context_of`), and its weight
        ``w_i`` (> 0; e.g. a context's ``learning_scale``)."""
        if (self.matches and days < self.matches[-1][0]) or days < self.now:
            raise ValueError(f"matches must be added in time order: {days!r}")
        names = [[team] if isinstance(team, str) else list(team) for team in (team_a, team_b)]
        flat = names[0] + names[1]
        if not all(names) or len(set(flat)) < len(flat) or home not in (0, 1, None):
            raise ValueError(f"bad match: {team_a!r}, {team_b!r}, home {home!r}")
        if not 0 <= context < len(self.home):
            raise ValueError(f"bad match: context {context!r}")
        if not (0 <= goals_a < math.inf and 0 <= goals_b < math.inf and weight > 0):
            raise ValueError(f"goals must be numbers >= 0: {goals_a!r}, {goals_b!r}")
        a, b = (side_of([self._team(n) for n in side]) for side in names)
        m = len(self.matches)
        x, y = min(float(goals_a), self.goal_cap), min(float(goals_b), self.goal_cap)
        self.matches.append((float(days), a, b, x, y, -1 if home is None else home, context))
        self.own_weight.append(weight)
        for k in members(a) + members(b):
            self.of_team[k].append(m)

    def _window(self, now: float) -> None:
        """Drop the matches whose φ fell below the cutoff; weigh the rest at ``now``."""
        if now < self.now or (self.matches and now < self.matches[-1][0]):
            raise ValueError(f"fit at {now!r}: before a match already kept or fitted")
        self.now = now
        oldest = max(
            now + math.log(self.cutoff) / self.xi if self.cutoff > 0 and self.xi > 0 else -math.inf,
            now - self.window,
        )
        while self.start < len(self.matches) and self.matches[self.start][0] < oldest:
            _, a, b, *_ = self.matches[self.start]
            for k in members(a) + members(b):
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
        self.dirty.update(teams)  # (the first sweep: every team)
        sweeps, change = 0, math.inf
        while sweeps < self.max_sweeps and change >= self.tol:
            sweeps += 1
            change = self._global_step() if self.fit_globals else 0.0
            if change >= self.tol:  # (every λ moved)
                self.dirty.update(teams)
            # (in the order of the teams' names: the fit does not depend on the order in
            # which it met them, e.g. a line-up's members)
            active = sorted((k for k in self.dirty if self.of_team[k]), key=self.names.__getitem__)
            self.dirty = set()
            for k in active:
                moved = self._team_step(k)
                if moved >= self.tol:
                    self._mark(k)
                change = max(change, moved)
            ridge = self._ridge(teams)
            if ridge >= self.tol:
                self.dirty.update(teams)
            change = max(change, ridge)
        self.dirty.clear()
        return FitReport(
            sweeps=sweeps,
            change=change,
            converged=change < self.tol,
            matches=len(self.weights),
            teams=len(teams),
        )

    def _mark(self, k: int) -> None:
        """Team ``k`` moved: it and every opponent it met in the window step again."""
        matches, dirty = self.matches, self.dirty
        dirty.add(k)
        for m in self.of_team[k]:
            _, a, b, *_ = matches[m]
            dirty.update(members(a))
            dirty.update(members(b))

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
            if a.__class__ is int and b.__class__ is int:
                eta_a = base + attack[a] - defence[b] + (h if home == 0 else 0.0)
                eta_b = base + attack[b] - defence[a] + (h if home == 1 else 0.0)
                on_a, share = a == k, 1.0
            else:  # a line-up: its mean attack and defence; team k's share 1/size
                eta_a, eta_b = etas(self, a, b, home, h)
                on_a = k in members(a)
                share = 1.0 / len(members(a if on_a else b))
            ll, g1, g2, h11, h12, h22 = match_terms(x, y, eta_a, eta_b, rho)
            w = weights[m - start]
            value += w * ll
            if not on_a:  # team k is side B: its attack is η_B's, its defence η_A's
                g1, g2, h11, h22 = g2, g1, h22, h11
            w *= share
            g_att += w * g1
            g_def -= w * g2
            w *= share  # (the Hessian's: share²)
            h_aa += w * h11
            h_dd += w * h22
            h_ad -= w * h12
        return value, g_att, g_def, h_aa, h_ad, h_dd

    def _team_step(self, k: int) -> float:
        """One (over-relaxed) Newton step on team ``k``'s (attack, defence), halved while
        it lowers F; the change made."""
        attack0, defence0 = self.attack[k], self.defence[k]
        value, g_att, g_def, h_aa, h_ad, h_dd = self._team_terms(k)
        step = solve([[h_aa, h_ad], [h_ad, h_dd]], [g_att, g_def])
        scale = self.relax
        while True:
            self.attack[k] = attack0 + scale * step[0]
            self.defence[k] = defence0 + scale * step[1]
            if scale * max(abs(step[0]), abs(step[1])) <= UNCHECKED and math.isfinite(value):
                break  # (a short Newton step near the optimum: not worth a second pass)
            if self._team_terms(k)[0] >= value - 1e-12 * abs(value) or scale < 1e-6:
                break
            scale *= 0.5
        return max(abs(self.attack[k] - attack0), abs(self.defence[k] - defence0))

    def state(self, team: str) -> GoalsSkill:
        """A team's fitted attack and defence as the ``goals`` plugin's state (an unknown
        team, or one without a match in the window: the initial state)."""
        k = self.index.get(team)
        if k is None:
            return GoalsSkill(self.params.initial_attack, self.params.initial_defence)
        return GoalsSkill(self.attack[k], self.defence[k])

    def _mean_state(self, team: str | Sequence[str]) -> tuple[float, float]:
        states = [self.state(name) for name in ([team] if isinstance(team, str) else team)]
        n = len(states)
        return math.fsum(s.attack for s in states) / n, math.fsum(s.defence for s in states) / n

    def outcomes(
        self,
        team_a: str | Sequence[str],
        team_b: str | Sequence[str],
        home: int | None = None,
        context: int = 0,
    ) -> tuple[float, float, float]:
        """(P(A wins), P(draw), P(B wins)) of a match at the fitted parameters (a line-up
        at its members' mean attack and defence), summed from the ``goals`` plugin's score
        model (:func:`outcome_probabilities`; log-rates clamped to ±``LOG_RATE_LIMIT`` as
        the plugin does)."""
        a, b = (self._mean_state(team) for team in (team_a, team_b))
        h = self.home[context]
        eta_a = self.base + a[0] - b[1] + (h if home == 0 else 0.0)
        eta_b = self.base + b[0] - a[1] + (h if home == 1 else 0.0)
        lam_a = math.exp(min(max(eta_a, -LOG_RATE_LIMIT), LOG_RATE_LIMIT))
        lam_b = math.exp(min(max(eta_b, -LOG_RATE_LIMIT), LOG_RATE_LIMIT))
        return outcome_probabilities(lam_a, lam_b, self.rho, self.params.max_goals)
