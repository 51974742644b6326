"""TrueSkill's factor graph and its schedule, for the ``trueskill`` plugin.

:func:`rate_messages` builds the graph of a match of any number of teams (Herbrich, Minka
and Graepel's, with the ``trueskill`` package's schedule) in its parts: the priors,
likelihoods and team sums sent down (:func:`_down`), the chain of team differences and
their truncations swept until no message moves by more than ``min_delta``
(:class:`_Chain`), then the team sums and the likelihoods sent back up
(:func:`_likelihoods_up`). Each variable is a :class:`_Var`: its value (π, τ) and one
message per factor.

The two-team shapes are written out on plain floats: :func:`two_team_messages` here, and
the plugin's ``duel_messages`` (two teams of one, the per-match path). Each variable is
then a pair (value, its messages), each factor's message is computed by the same
operations in the same order as ``_Var`` and ``_sum`` do them (a message replaced in
place is subtracted and added back, as ``send`` does), so the messages are
:func:`rate_messages`' own, bit for bit (tests/test_trueskill.py compares them). The part
they share, the difference of the two teams swept until it settles, is :func:`settle`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ._gaussian import INV_SQRT_2PI, SQRT2, W_MAX, v_draw, v_win, w_draw, w_win

if TYPE_CHECKING:
    from .trueskill import TrueSkillParams

_INF = math.inf


class TrueSkillMessage(NamedTuple):
    """A virtual opponent: the Gaussian message one match sends up to a player's skill,
    in natural parameters (precision π = 1/σ², precision-adjusted mean τ = μ/σ²); a
    pairing's opponent from ``rankcraft_team`` (internal to the plugin, never stored).

    Attributes:
        pi: precision, ≥ 0. tau: precision times mean.
    """

    pi: float
    tau: float


new_message = tuple.__new__
"""``new_message(TrueSkillMessage, (pi, tau))``, without the named tuple's ``__new__``."""


class _Var:
    """A variable of the factor graph: its value (π, τ) and one message per factor."""

    __slots__ = ("msgs", "pi", "tau")

    def __init__(self) -> None:
        self.pi = 0.0
        self.tau = 0.0
        self.msgs: dict[int, tuple[float, float]] = {}

    def _set(self, pi: float, tau: float) -> float:
        d_pi = abs(self.pi - pi)
        delta = 0.0 if d_pi == _INF else max(abs(self.tau - tau), math.sqrt(d_pi))
        self.pi, self.tau = pi, tau
        return delta

    def send(self, factor: int, pi: float, tau: float) -> float:
        """Replace ``factor``'s message by (pi, tau); returns how far the value moved."""
        old_pi, old_tau = self.msgs.get(factor, (0.0, 0.0))
        self.msgs[factor] = (pi, tau)
        return self._set(self.pi - old_pi + pi, self.tau - old_tau + tau)

    def become(self, factor: int, pi: float, tau: float) -> float:
        """Set the value to (pi, tau), with the message of ``factor`` that makes it so."""
        old_pi, old_tau = self.msgs.get(factor, (0.0, 0.0))
        self.msgs[factor] = (pi + old_pi - self.pi, tau + old_tau - self.tau)
        return self._set(pi, tau)

    def cavity(self, factor: int) -> tuple[float, float]:
        """The value without ``factor``'s message."""
        pi, tau = self.msgs.get(factor, (0.0, 0.0))
        return self.pi - pi, self.tau - tau


def _mean(pi: float, tau: float) -> float:
    return tau / pi if pi else 0.0


def _sum(factor: int, target: _Var, terms: Sequence[_Var], coeffs: Sequence[float]) -> float:
    """A sum factor's message to ``target`` = Σ coeff · term (the terms' cavities)."""
    mu = 0.0
    pi_inv = 0.0
    for var, coeff in zip(terms, coeffs, strict=True):
        pi, tau = var.cavity(factor)
        mu += coeff * _mean(pi, tau)
        if pi_inv == _INF:
            continue
        pi_inv = pi_inv + coeff * coeff / pi if pi else _INF
    pi = 1.0 / pi_inv if pi_inv else _INF
    return target.send(factor, pi, pi * mu)


def _sum_up(
    factor: int, total: _Var, terms: Sequence[_Var], coeffs: Sequence[float], index: int
) -> float:
    """A sum factor ``total = Σ coeffs · terms`` solved for ``terms[index]``."""
    c = coeffs[index]
    solved = [(1.0 / c) if x == index else (-k / c) for x, k in enumerate(coeffs)]
    others = list(terms)
    others[index] = total
    return _sum(factor, terms[index], others, solved)


def rate_messages(
    params: TrueSkillParams,
    teams: Sequence[Sequence[tuple[float, float]]],
    places: Sequence[int],
    weights: Sequence[Sequence[float]] | None = None,
) -> list[list[TrueSkillMessage]]:
    """The message one match sends to each player's skill (per team, per player).

    :param teams: per team, per player, (μ, σ) before the match (τ not yet added).
    :param places: one place per team, 1 is best, equal places draw.
    :param weights: per team, per player, the partial-play weight (default 1); a weight
        below ``min_delta`` counts as ``min_delta`` (as the trueskill package).
    """
    order = sorted(range(len(teams)), key=lambda i: places[i])
    ids = iter(range(1 << 30))  # factor ids
    perfs, team_vars, team_terms = _down(params, teams, order, weights, ids)
    chain = _Chain(params, teams, places, order, team_vars, ids)
    chain.sweep(params)
    chain.up(0, 0)
    chain.up(len(order) - 2, 1)
    for x, (f, members, coeffs) in enumerate(team_terms):
        for index in range(len(members)):
            _sum_up(f, team_vars[x], members, coeffs, index)
    return _likelihoods_up(params, teams, order, perfs)


def _down(
    params: TrueSkillParams,
    teams: Sequence[Sequence[tuple[float, float]]],
    order: Sequence[int],
    weights: Sequence[Sequence[float]] | None,
    ids: Iterator[int],
) -> tuple[list[tuple[_Var, int]], list[_Var], list[tuple[int, list[_Var], list[float]]]]:
    """The graph down to the team performances, teams in the order of the result: each
    player's prior (σ² + τ²) and likelihood (performance noise β²), each team's sum.

    :returns: (per player: the performance and its likelihood factor; the teams'
        performances; per team: its sum factor, members and coefficients).
    """
    beta2 = params.beta * params.beta
    tau2 = params.tau * params.tau
    floor = params.min_delta
    perfs: list[tuple[_Var, int]] = []
    team_vars: list[_Var] = []
    team_terms: list[tuple[int, list[_Var], list[float]]] = []
    for i in order:
        members: list[_Var] = []
        coeffs: list[float] = []
        for j, (mu, sigma) in enumerate(teams[i]):
            skill, perf = _Var(), _Var()
            variance = sigma * sigma + tau2
            skill.become(next(ids), 1.0 / variance, mu / variance)  # prior
            f = next(ids)
            pi, tau = skill.cavity(f)
            a = 1.0 / (1.0 + beta2 * pi)
            perf.send(f, a * pi, a * tau)  # likelihood, down
            perfs.append((perf, f))
            members.append(perf)
            coeffs.append(max(floor, 1.0 if weights is None else weights[i][j]))
        team = _Var()
        f = next(ids)
        _sum(f, team, members, coeffs)  # team performance, down
        team_vars.append(team)
        team_terms.append((f, members, coeffs))
    return perfs, team_vars, team_terms


class _Chain:
    """The chain of differences between neighbouring teams (in the order of the result),
    each compared with the draw margin by a truncation factor: the part of the graph the
    schedule sweeps."""

    __slots__ = ("diff_f", "diffs", "draws", "margins", "team_vars", "trunc_f")

    def __init__(
        self,
        params: TrueSkillParams,
        teams: Sequence[Sequence[tuple[float, float]]],
        places: Sequence[int],
        order: Sequence[int],
        team_vars: Sequence[_Var],
        ids: Iterator[int],
    ) -> None:
        k = len(order)
        self.team_vars = team_vars
        self.diffs = [_Var() for _ in range(k - 1)]
        self.diff_f = [next(ids) for _ in range(k - 1)]
        self.trunc_f = [next(ids) for _ in range(k - 1)]
        self.margins: list[float] = []
        self.draws: list[bool] = []
        for x in range(k - 1):
            a, b = order[x], order[x + 1]
            self.margins.append(params.draw_margin(len(teams[a]) + len(teams[b])))
            self.draws.append(places[a] == places[b])

    def down(self, x: int) -> float:
        """The ``x``-th difference from its two teams."""
        return _sum(self.diff_f[x], self.diffs[x], self.team_vars[x : x + 2], (1.0, -1.0))

    def up(self, x: int, index: int) -> float:
        """The ``x``-th difference's message up to its team ``index`` (0 or 1)."""
        return _sum_up(self.diff_f[x], self.diffs[x], self.team_vars[x : x + 2], (1.0, -1.0), index)

    def truncate(self, x: int) -> float:
        """The ``x``-th difference's truncation: a win beyond the margin, or a draw
        within it."""
        var = self.diffs[x]
        pi, tau = var.cavity(self.trunc_f[x])
        sqrt_pi = math.sqrt(pi)
        z, t = tau / sqrt_pi, self.margins[x] * sqrt_pi
        if self.draws[x]:
            v, w = v_draw(z, t), w_draw(z, t)
        else:
            v, w = v_win(z, t), w_win(z, t)
        return var.become(self.trunc_f[x], pi / (1.0 - w), (tau + sqrt_pi * v) / (1.0 - w))

    def sweep(self, params: TrueSkillParams) -> None:
        """The schedule: the chain swept forward and back (one difference: that one)
        until no truncation moves by more than ``min_delta``, at most ``max_passes``
        times."""
        last = len(self.diffs) - 1
        for _ in range(params.max_passes):
            if last == 0:
                self.down(0)
                delta = self.truncate(0)
            else:
                delta = 0.0
                for x in range(last):
                    self.down(x)
                    delta = max(delta, self.truncate(x))
                    self.up(x, 1)
                for x in range(last, 0, -1):
                    self.down(x)
                    delta = max(delta, self.truncate(x))
                    self.up(x, 0)
            if delta <= params.min_delta:
                break


def _likelihoods_up(
    params: TrueSkillParams,
    teams: Sequence[Sequence[tuple[float, float]]],
    order: Sequence[int],
    perfs: Sequence[tuple[_Var, int]],
) -> list[list[TrueSkillMessage]]:
    """The likelihoods' messages up to the skills, per team in the teams' own order."""
    beta2 = params.beta * params.beta
    out_sorted: list[TrueSkillMessage] = []
    for perf, f in perfs:
        pi, tau = perf.cavity(f)
        a = 1.0 / (1.0 + beta2 * pi)
        out_sorted.append(new_message(TrueSkillMessage, (a * pi, a * tau)))  # likelihood, up
    out: list[list[TrueSkillMessage]] = [[] for _ in range(len(teams))]
    at = 0
    for i in order:
        out[i] = out_sorted[at : at + len(teams[i])]
        at += len(teams[i])
    return out


def _sum_one(pi: float, tau: float) -> tuple[float, float]:
    """:func:`_sum`'s message for one term of coefficient 1 with cavity (pi, tau)."""
    mu = 0.0 + (tau / pi if pi else 0.0)
    pi_inv = (0.0 + 1.0 / pi) if pi else _INF
    out = 1.0 / pi_inv if pi_inv else _INF
    return out, out * mu


def _sum_two(pi1: float, tau1: float, pi2: float, tau2: float, sign: float) -> tuple[float, float]:
    """:func:`_sum`'s message for the terms (pi1, tau1) with coefficient 1 and (pi2, tau2)
    with coefficient ``sign`` (±1)."""
    mu = 0.0 + (tau1 / pi1 if pi1 else 0.0)
    pi_inv = (0.0 + 1.0 / pi1) if pi1 else _INF
    mu += sign * (tau2 / pi2 if pi2 else 0.0)
    if pi_inv != _INF:
        pi_inv = pi_inv + 1.0 / pi2 if pi2 else _INF
    out = 1.0 / pi_inv if pi_inv else _INF
    return out, out * mu


def _moved_by(pi: float, tau: float, new_pi: float, new_tau: float) -> float:
    """How far a variable's value moved (:meth:`_Var._set`)."""
    d_pi = abs(pi - new_pi)
    return 0.0 if d_pi == _INF else max(abs(tau - new_tau), math.sqrt(d_pi))


def settle(
    params: TrueSkillParams,
    margin: float,
    draw: bool,
    team_pi1: float,
    team_tau1: float,
    team_pi2: float,
    team_tau2: float,
) -> tuple[float, float, float, float]:
    """The two teams' values (precision, precision-adjusted mean) after the difference
    (team 1 - team 2) and its truncation are swept until they settle and the difference
    is sent back up to the teams: the part of :func:`rate_messages`' graph that
    :func:`duel_messages` and :func:`two_team_messages` share, in its operations' order."""
    diff_pi, diff_tau = _sum_two(team_pi1, team_tau1, team_pi2, team_tau2, -1.0)
    d_pi = d_tau = 0.0  # the difference's value
    m_pi = m_tau = 0.0  # its message from the difference factor (none yet)
    t_pi = t_tau = 0.0  # its message from the truncation (none yet)
    sqrt, exp, erfc = math.sqrt, math.exp, math.erfc
    min_delta = params.min_delta
    for _ in range(params.max_passes):
        d_pi, d_tau = d_pi - m_pi + diff_pi, d_tau - m_tau + diff_tau
        m_pi, m_tau = diff_pi, diff_tau
        pi, tau = d_pi - t_pi, d_tau - t_tau
        sqrt_pi = sqrt(pi)
        z, t = tau / sqrt_pi, margin * sqrt_pi
        if draw:
            v, w = v_draw(z, t), w_draw(z, t)
        else:
            # (v_win, w_win, cdf and pdf, written out: w_win's own v_win(z, t) is v)
            d = z - t
            denominator = 0.5 * erfc(-d / SQRT2)
            v = -d if denominator < 1e-300 else INV_SQRT_2PI * exp(-0.5 * d * d) / denominator
            w = v * (v + z - t)
            if w < 0.0:  # (min(max(w, 0.0), W_MAX): the same comparisons)
                w = 0.0
            if w > W_MAX:
                w = W_MAX
        new_pi, new_tau = pi / (1.0 - w), (tau + sqrt_pi * v) / (1.0 - w)
        t_pi, t_tau = new_pi + t_pi - d_pi, new_tau + t_tau - d_tau
        # (_moved_by, written out)
        moved = abs(d_pi - new_pi)
        if moved == _INF:
            delta = 0.0
        else:
            delta = abs(d_tau - new_tau)
            moved = sqrt(moved)
            if moved > delta:
                delta = moved
        d_pi, d_tau = new_pi, new_tau
        if delta <= min_delta:
            break
    # the difference up to team 1 (team 1 = difference + team 2), then to team 2
    c_pi, c_tau = d_pi - m_pi, d_tau - m_tau
    up_pi, up_tau = _sum_two(c_pi, c_tau, team_pi2 - 0.0, team_tau2 - 0.0, 1.0)
    team_pi1, team_tau1 = team_pi1 - 0.0 + up_pi, team_tau1 - 0.0 + up_tau
    up_pi2, up_tau2 = _sum_two(team_pi1 - up_pi, team_tau1 - up_tau, c_pi, c_tau, -1.0)
    return team_pi1, team_tau1, team_pi2 - 0.0 + up_pi2, team_tau2 - 0.0 + up_tau2


def _sum_terms(terms: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """:func:`_sum`'s message from the terms' cavities and coefficients (pi, tau, coeff)."""
    mu = 0.0
    pi_inv = 0.0
    for pi, tau, coeff in terms:
        mu += coeff * (tau / pi if pi else 0.0)
        if pi_inv == _INF:
            continue
        pi_inv = pi_inv + coeff * coeff / pi if pi else _INF
    out = 1.0 / pi_inv if pi_inv else _INF
    return out, out * mu


def two_team_messages(
    params: TrueSkillParams,
    teams: Sequence[Sequence[tuple[float, float]]],
    places: Sequence[int],
    weights: Sequence[Sequence[float]],
) -> list[list[TrueSkillMessage]]:
    """The messages of a match between two teams of any size: :func:`rate_messages`
    (arguments as its own, ``weights`` given) for two teams, written out on plain floats
    as ``duel_messages`` is, bit for bit its own."""
    beta2 = params.beta * params.beta
    swap = places[0] > places[1]
    # per team, in the order of the result: down to the team's value, settled, then up
    downs = [_team_down(params, beta2, teams[i], weights[i]) for i in ((1, 0) if swap else (0, 1))]
    (pi1, tau1), (pi2, tau2) = downs[0][3], downs[1][3]
    margin = params.draw_margin(len(teams[0]) + len(teams[1]))
    draw = places[0] == places[1]
    team = settle(params, margin, draw, 0.0 + pi1, 0.0 + tau1, 0.0 + pi2, 0.0 + tau2)
    sorted_out = [
        _team_up(beta2, team[0], team[1], *downs[0]),
        _team_up(beta2, team[2], team[3], *downs[1]),
    ]
    return [sorted_out[1], sorted_out[0]] if swap else sorted_out


def _team_down(
    params: TrueSkillParams,
    beta2: float,
    team: Sequence[tuple[float, float]],
    weights: Sequence[float],
) -> tuple[list[tuple[float, float]], list[list[float]], list[float], tuple[float, float]]:
    """One team of :func:`two_team_messages` down: (its players' likelihoods, their
    performances as [value π, value τ, message π, message τ from the team sum], their
    coefficients, the team sum's message down)."""
    tau2 = params.tau * params.tau
    floor = params.min_delta
    team_liks, team_perfs, team_coeffs = [], [], []
    for (mu, sigma), weight in zip(team, weights, strict=True):
        variance = sigma * sigma + tau2
        big_p, big_t = 1.0 / variance, mu / variance
        a = 1.0 / (1.0 + beta2 * big_p)
        lik_pi, lik_tau = a * big_p, a * big_t
        team_liks.append((lik_pi, lik_tau))
        team_perfs.append([0.0 + lik_pi, 0.0 + lik_tau, 0.0, 0.0])
        team_coeffs.append(max(floor, weight))
    down = _sum_terms([(p[0], p[1], c) for p, c in zip(team_perfs, team_coeffs, strict=True)])
    return team_liks, team_perfs, team_coeffs, down


def _team_up(
    beta2: float,
    team_pi: float,
    team_tau: float,
    team_liks: Sequence[tuple[float, float]],
    team_perfs: Sequence[list[float]],
    team_coeffs: Sequence[float],
    down: tuple[float, float],
) -> list[TrueSkillMessage]:
    """One team of :func:`two_team_messages` up, from its settled value (``team_pi``,
    ``team_tau``): the team sum up to each performance, then each likelihood up."""
    down_pi, down_tau = down
    for index, perf in enumerate(team_perfs):
        c = team_coeffs[index]
        terms = []
        for y, other in enumerate(team_perfs):
            if y == index:
                terms.append((team_pi - down_pi, team_tau - down_tau, 1.0 / c))
            else:
                terms.append((other[0] - other[2], other[1] - other[3], -team_coeffs[y] / c))
        up_pi, up_tau = _sum_terms(terms)
        perf[0], perf[1] = perf[0] - 0.0 + up_pi, perf[1] - 0.0 + up_tau
        perf[2], perf[3] = up_pi, up_tau
    messages = []
    for perf, (lik_pi, lik_tau) in zip(team_perfs, team_liks, strict=True):
        pi, tau = perf[0] - lik_pi, perf[1] - lik_tau
        a = 1.0 / (1.0 + beta2 * pi)
        messages.append(new_message(TrueSkillMessage, (a * pi, a * tau)))
    return messages
