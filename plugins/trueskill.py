"""``trueskill`` plugin: Herbrich, Minka and Graepel's TrueSkill.

Ralf Herbrich, Tom Minka and Thore Graepel, "TrueSkill™: A Bayesian Skill Rating System"
(NIPS 2006). TrueSkill is patented by Microsoft and the name is Microsoft's trademark
(the ``trueskill`` Python package says the same); commercial use may need Microsoft's
permission: see docs/trueskill.md.

A player is a Gaussian belief N(μ, σ²). In a match, each player performs p ~ N(s, β²)
around their skill s; a team performs t = Σ w·p (w: partial play); the teams, in the
order of the result, are compared neighbour to neighbour: a win means t_i - t_{i+1} > ε,
a draw |t_i - t_{i+1}| ≤ ε, where the draw margin ε comes from the draw probability:
``ε = Φ⁻¹((p_draw + 1) / 2) · sqrt(n₁ + n₂) · β``. The posterior is approximated by
expectation propagation on that factor graph: the chain of team differences is swept
forward and back until no message moves by more than ``min_delta`` (at most
``max_passes`` sweeps), with the schedule of the ``trueskill`` package, which it is
tested against. Before a match every σ² grows by τ².

The team step (``rankcraft_team``, the ``[team]`` slot naming this plugin) runs the graph
and hands each player, as a :class:`TrueSkillMessage`, the message the match sends up to
their skill; ``rankcraft_update`` multiplies it into the prior.

>>> (a,), (b,) = rate(TrueSkillParams(), [[(25.0, 25 / 3)], [(25.0, 25 / 3)]], [1, 2])
>>> [round(x, 6) for x in (*a, *b)]
[29.395832, 7.171476, 20.604168, 7.171476]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from rankcraft import Match, Needs, hookimpl, state_field
from rankcraft.validators import RATING_LIMIT, state_within, within

from ._gaussian import INV_SQRT_2PI, SQRT2, W_MAX, cdf, pdf, ppf, v_draw, v_win, w_draw, w_win
from .wenglin import SIGMA_RANGE, bounded, mu_change, play_weights, side_score

_mu = within(-RATING_LIMIT, RATING_LIMIT)
_sigma = within(*SIGMA_RANGE)
_INF = math.inf
_SIGMA_LOW, _SIGMA_HIGH = SIGMA_RANGE

RANKCRAFT_CONTRACT = 2
"""States in the per-match hooks are tuples (docs/hooks.md)."""

State = tuple[Any, ...]
MU, SIGMA, PLAYERS = range(3)
"""Positions in a state's tuple form: μ and σ (a :class:`TrueSkillSkill`), and a side's
number of players (a :class:`TrueSkillSide`, from ``rankcraft_aggregate``)."""


@attrs.frozen(kw_only=True)
class TrueSkillParams:
    """Params of the ``trueskill`` plugin (slots initial, expectation, update and team; a
    ``[team]`` slot naming ``trueskill`` without its own params table shares the
    update's).

    Attributes:
        mu: a new player's μ, skill units, |x| ≤ 1e6 (default 25).
        sigma: a new player's σ, in [1e-6, 1e6] (default 25/3).
        beta: the performance noise β of one player, in [1e-6, 1e6] (default 25/6).
        tau: the dynamics τ added to every σ (as σ² + τ²) before a match, in [0, 1e6]
            (default 25/300).
        draw_probability: the chance that two evenly matched teams draw, in [0, 1)
            (default 0.10); it sets the draw margin ε.
        min_delta: the sweeps stop when no message moves by more than this, in
            [1e-12, 1] (default 0.0001).
        max_passes: at most this many sweeps of the chain of team differences, in
            [1, 1000] (default 10).
        points_per_sd: predictions for 3+ sides integrate on a grid with this many points
            per standard deviation of the narrowest side's performance, in [2, 64]
            (default 8).
    """

    mu: float = attrs.field(default=25.0, validator=_mu)
    sigma: float = attrs.field(default=25.0 / 3.0, validator=_sigma)
    beta: float = attrs.field(default=25.0 / 6.0, validator=_sigma)
    tau: float = attrs.field(default=25.0 / 300.0, validator=within(0.0, 1e6))
    draw_probability: float = attrs.field(default=0.10, validator=within(0.0, 0.999999))
    min_delta: float = attrs.field(default=0.0001, validator=within(1e-12, 1.0))
    max_passes: int = attrs.field(default=10, validator=within(1, 1000))
    points_per_sd: int = attrs.field(default=8, validator=within(2, 64))

    # derived from the fields once, when the params are built, for the per-match hooks
    # (not fields of the table: never read from it nor written back)
    _beta2: float = attrs.field(init=False, eq=False, repr=False)
    """β · β."""
    _tau2: float = attrs.field(init=False, eq=False, repr=False)
    """τ · τ."""
    _duel_margin: float = attrs.field(init=False, eq=False, repr=False)
    """The draw margin of a 1-v-1, :meth:`draw_margin` (2)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_beta2", self.beta * self.beta)
        object.__setattr__(self, "_tau2", self.tau * self.tau)
        object.__setattr__(self, "_duel_margin", self.draw_margin(2))

    def draw_margin(self, players: int) -> float:
        """ε for a comparison of two teams with ``players`` players between them."""
        if self.draw_probability == 0.0:
            return 0.0
        return ppf((self.draw_probability + 1.0) / 2.0) * math.sqrt(players) * self.beta


@attrs.frozen(slots=True)
class TrueSkillSkill:
    """A TrueSkill player: the belief N(μ, σ²) about their skill.

    Attributes:
        mu: the mean μ, skill units, |mu| ≤ 1e6 (role ``location``).
        sigma: the standard deviation σ, in [1e-6, 1e6] (role ``spread``).
    """

    mu: float = state_field(role="location", validator=state_within(-RATING_LIMIT, RATING_LIMIT))
    sigma: float = state_field(role="spread", validator=state_within(*SIGMA_RANGE))


@attrs.frozen(slots=True)
class TrueSkillSide(TrueSkillSkill):
    """A side in predictions: the sums of its members' μ and σ², and how many they are
    (each adds β² of performance noise). Never stored: ``rankcraft_aggregate`` gives its
    tuple form ``(Σμ, sqrt(Σσ²), players)``, which this plugin's expectation reads (a
    state of two fields counts as one player).

    Attributes:
        players: the side's number of players, ≥ 1.
    """

    players: int = 1


class TrueSkillMessage(NamedTuple):
    """A virtual opponent: the Gaussian message one match sends up to a player's skill,
    in natural parameters (precision π = 1/σ², precision-adjusted mean τ = μ/σ²); a
    pairing's opponent from ``rankcraft_team`` (internal to the plugin, never stored).

    Attributes:
        pi: precision, ≥ 0. tau: precision times mean.
    """

    pi: float
    tau: float


_new_message = tuple.__new__
"""``_new_message(TrueSkillMessage, (pi, tau))``, without the named tuple's ``__new__``."""


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
    k = len(teams)
    order = sorted(range(k), key=lambda i: places[i])
    beta2 = params.beta * params.beta
    tau2 = params.tau * params.tau
    floor = params.min_delta
    ids = iter(range(1 << 30))  # factor ids
    skills: list[_Var] = []
    perfs: list[_Var] = []
    team_vars: list[_Var] = []
    team_terms: list[tuple[int, list[_Var], list[float]]] = []
    lik: list[int] = []
    for i in order:
        members: list[_Var] = []
        coeffs: list[float] = []
        for j, (mu, sigma) in enumerate(teams[i]):
            skill, perf = _Var(), _Var()
            variance = sigma * sigma + tau2
            skill.become(next(ids), 1.0 / variance, mu / variance)  # prior
            f = next(ids)
            lik.append(f)
            pi, tau = skill.cavity(f)
            a = 1.0 / (1.0 + beta2 * pi)
            perf.send(f, a * pi, a * tau)  # likelihood, down
            skills.append(skill)
            perfs.append(perf)
            members.append(perf)
            coeffs.append(max(floor, 1.0 if weights is None else weights[i][j]))
        team = _Var()
        f = next(ids)
        _sum(f, team, members, coeffs)  # team performance, down
        team_vars.append(team)
        team_terms.append((f, members, coeffs))
    diffs = [_Var() for _ in range(k - 1)]
    diff_f = [next(ids) for _ in range(k - 1)]
    trunc_f = [next(ids) for _ in range(k - 1)]
    margins = []
    draws = []
    for x in range(k - 1):
        a, b = order[x], order[x + 1]
        margins.append(params.draw_margin(len(teams[a]) + len(teams[b])))
        draws.append(places[a] == places[b])

    def diff_down(x: int) -> float:
        return _sum(diff_f[x], diffs[x], team_vars[x : x + 2], (1.0, -1.0))

    def diff_up(x: int, index: int) -> float:
        return _sum_up(diff_f[x], diffs[x], team_vars[x : x + 2], (1.0, -1.0), index)

    def trunc_up(x: int) -> float:
        var = diffs[x]
        pi, tau = var.cavity(trunc_f[x])
        sqrt_pi = math.sqrt(pi)
        z, t = tau / sqrt_pi, margins[x] * sqrt_pi
        if draws[x]:
            v, w = v_draw(z, t), w_draw(z, t)
        else:
            v, w = v_win(z, t), w_win(z, t)
        return var.become(trunc_f[x], pi / (1.0 - w), (tau + sqrt_pi * v) / (1.0 - w))

    last = k - 2
    for _ in range(params.max_passes):
        if last == 0:
            diff_down(0)
            delta = trunc_up(0)
        else:
            delta = 0.0
            for x in range(last):
                diff_down(x)
                delta = max(delta, trunc_up(x))
                diff_up(x, 1)
            for x in range(last, 0, -1):
                diff_down(x)
                delta = max(delta, trunc_up(x))
                diff_up(x, 0)
        if delta <= params.min_delta:
            break
    diff_up(0, 0)
    diff_up(last, 1)
    for x, (f, members, coeffs) in enumerate(team_terms):
        for index in range(len(members)):
            _sum_up(f, team_vars[x], members, coeffs, index)
    out_sorted: list[TrueSkillMessage] = []
    for perf, f in zip(perfs, lik, strict=True):
        pi, tau = perf.cavity(f)
        a = 1.0 / (1.0 + beta2 * pi)
        out_sorted.append(_new_message(TrueSkillMessage, (a * pi, a * tau)))  # likelihood, up
    out: list[list[TrueSkillMessage]] = [[] for _ in range(k)]
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


def _settle(
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


def duel_messages(
    params: TrueSkillParams,
    mu_a: float,
    sigma_a: float,
    mu_b: float,
    sigma_b: float,
    place_a: int,
    place_b: int,
) -> tuple[TrueSkillMessage, TrueSkillMessage]:
    """The messages of a match between two one-player teams (each of weight 1): the
    factor graph of :func:`rate_messages` for this shape, written out on plain floats.

    Each variable is a pair (value, its messages), each factor's message is computed by
    the same operations in the same order as ``_Var`` and ``_sum`` do them (a message
    replaced in place is subtracted and added back, as ``send`` does), so the messages are
    :func:`rate_messages`' own, bit for bit (tests/test_trueskill.py compares them)."""
    beta2 = params._beta2
    tau2 = params._tau2
    swap = place_a > place_b  # (the graph runs in the order of the result)
    mu1, s1, mu2, s2 = (mu_b, sigma_b, mu_a, sigma_a) if swap else (mu_a, sigma_a, mu_b, sigma_b)
    # prior and likelihood down, then the team sum (one member, coefficient 1)
    variance = s1 * s1 + tau2
    big_p, big_t = 1.0 / variance, mu1 / variance
    a = 1.0 / (1.0 + beta2 * big_p)
    lik_pi1, lik_tau1 = a * big_p, a * big_t
    perf_pi1, perf_tau1 = 0.0 + lik_pi1, 0.0 + lik_tau1
    # (_sum_one, written out here and below)
    mu = 0.0 + (perf_tau1 / perf_pi1 if perf_pi1 else 0.0)
    pi_inv = (0.0 + 1.0 / perf_pi1) if perf_pi1 else _INF
    down_pi1 = 1.0 / pi_inv if pi_inv else _INF
    down_tau1 = down_pi1 * mu
    team_pi1, team_tau1 = 0.0 + down_pi1, 0.0 + down_tau1
    variance = s2 * s2 + tau2
    big_p, big_t = 1.0 / variance, mu2 / variance
    a = 1.0 / (1.0 + beta2 * big_p)
    lik_pi2, lik_tau2 = a * big_p, a * big_t
    perf_pi2, perf_tau2 = 0.0 + lik_pi2, 0.0 + lik_tau2
    mu = 0.0 + (perf_tau2 / perf_pi2 if perf_pi2 else 0.0)
    pi_inv = (0.0 + 1.0 / perf_pi2) if perf_pi2 else _INF
    down_pi2 = 1.0 / pi_inv if pi_inv else _INF
    down_tau2 = down_pi2 * mu
    team_pi2, team_tau2 = 0.0 + down_pi2, 0.0 + down_tau2
    # the difference (team 1 - team 2) and its truncation, swept until it settles
    draw = place_a == place_b
    team_pi1, team_tau1, team_pi2, team_tau2 = _settle(
        params, params._duel_margin, draw, team_pi1, team_tau1, team_pi2, team_tau2
    )
    # the team sums up to the performances, and the likelihoods up to the skills
    c_pi, c_tau = team_pi1 - down_pi1, team_tau1 - down_tau1
    mu = 0.0 + (c_tau / c_pi if c_pi else 0.0)
    pi_inv = (0.0 + 1.0 / c_pi) if c_pi else _INF
    up_pi = 1.0 / pi_inv if pi_inv else _INF
    up_tau = up_pi * mu
    pi, tau = perf_pi1 - 0.0 + up_pi - lik_pi1, perf_tau1 - 0.0 + up_tau - lik_tau1
    a = 1.0 / (1.0 + beta2 * pi)
    first = _new_message(TrueSkillMessage, (a * pi, a * tau))
    c_pi, c_tau = team_pi2 - down_pi2, team_tau2 - down_tau2
    mu = 0.0 + (c_tau / c_pi if c_pi else 0.0)
    pi_inv = (0.0 + 1.0 / c_pi) if c_pi else _INF
    up_pi = 1.0 / pi_inv if pi_inv else _INF
    up_tau = up_pi * mu
    pi, tau = perf_pi2 - 0.0 + up_pi - lik_pi2, perf_tau2 - 0.0 + up_tau - lik_tau2
    a = 1.0 / (1.0 + beta2 * pi)
    second = _new_message(TrueSkillMessage, (a * pi, a * tau))
    return (second, first) if swap else (first, second)


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
    as :func:`duel_messages` is, bit for bit its own."""
    beta2 = params.beta * params.beta
    tau2 = params.tau * params.tau
    floor = params.min_delta
    swap = places[0] > places[1]
    order = (1, 0) if swap else (0, 1)
    # per team, in the order of the result: the likelihoods, the performances (value and
    # their message from the team sum), the coefficients, the team's value and down message
    liks: list[list[tuple[float, float]]] = []
    perfs: list[list[list[float]]] = []
    coeffs: list[list[float]] = []
    team_values: list[tuple[float, float]] = []
    downs: list[tuple[float, float]] = []
    for i in order:
        team_liks, team_perfs, team_coeffs = [], [], []
        for (mu, sigma), weight in zip(teams[i], weights[i], strict=True):
            variance = sigma * sigma + tau2
            big_p, big_t = 1.0 / variance, mu / variance
            a = 1.0 / (1.0 + beta2 * big_p)
            lik_pi, lik_tau = a * big_p, a * big_t
            team_liks.append((lik_pi, lik_tau))
            team_perfs.append([0.0 + lik_pi, 0.0 + lik_tau, 0.0, 0.0])
            team_coeffs.append(max(floor, weight))
        down = _sum_terms([(p[0], p[1], c) for p, c in zip(team_perfs, team_coeffs, strict=True)])
        liks.append(team_liks)
        perfs.append(team_perfs)
        coeffs.append(team_coeffs)
        downs.append(down)
        team_values.append((0.0 + down[0], 0.0 + down[1]))
    (team_pi1, team_tau1), (team_pi2, team_tau2) = team_values
    margin = params.draw_margin(len(teams[0]) + len(teams[1]))
    draw = places[0] == places[1]
    team_pi1, team_tau1, team_pi2, team_tau2 = _settle(
        params, margin, draw, team_pi1, team_tau1, team_pi2, team_tau2
    )
    sorted_out: list[list[TrueSkillMessage]] = []
    for x, (team_pi, team_tau) in enumerate(((team_pi1, team_tau1), (team_pi2, team_tau2))):
        down_pi, down_tau = downs[x]
        team_perfs, team_coeffs = perfs[x], coeffs[x]
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
        for perf, (lik_pi, lik_tau) in zip(team_perfs, liks[x], strict=True):
            pi, tau = perf[0] - lik_pi, perf[1] - lik_tau
            a = 1.0 / (1.0 + beta2 * pi)
            messages.append(_new_message(TrueSkillMessage, (a * pi, a * tau)))
        sorted_out.append(messages)
    return [sorted_out[1], sorted_out[0]] if swap else sorted_out


def posterior(
    params: TrueSkillParams,
    mu: float,
    sigma: float,
    messages: Sequence[tuple[TrueSkillMessage, float]],
) -> tuple[float, float]:
    """(μ, σ) of the prior N(μ, σ² + τ²) times the messages, each raised to its weight."""
    variance = sigma * sigma + params.tau * params.tau
    pi, tau = 1.0 / variance, mu / variance
    for message, weight in messages:
        pi += message.pi * weight
        tau += message.tau * weight
    return tau / pi, math.sqrt(1.0 / pi)


def rate(
    params: TrueSkillParams,
    teams: Sequence[Sequence[tuple[float, float]]],
    places: Sequence[int],
    weights: Sequence[Sequence[float]] | None = None,
) -> list[list[tuple[float, float]]]:
    """Every player's new (μ, σ) after one match (arguments as :func:`rate_messages`)."""
    messages = rate_messages(params, teams, places, weights)
    return [
        [
            posterior(params, mu, sigma, [(m, 1.0)])
            for (mu, sigma), m in zip(team, msgs, strict=True)
        ]
        for team, msgs in zip(teams, messages, strict=True)
    ]


def win_probabilities(
    params: TrueSkillParams, sides: Sequence[tuple[float, float, int]]
) -> list[float]:
    """The probability that each side performs best, from (Σμ, Σσ², players) per side.

    A side's performance is N(Σμ, Σσ² + players·β²). Two sides: ``Φ((μ₁ - μ₂) / sqrt(σ₁² +
    σ₂² + n·β²))``. More: ``∫ f_i(x) Π_{j≠i} F_j(x) dx`` by Simpson's rule, from where
    all but one side lie 9 standard deviations above to where every side lies 9 below,
    normalized to sum to 1. Draws are not a separate outcome.
    """
    beta2 = params.beta * params.beta
    means = [s[0] for s in sides]
    sds = [math.sqrt(s[1] + s[2] * beta2) for s in sides]
    if len(sides) == 2:
        p = cdf((means[0] - means[1]) / math.sqrt(sds[0] ** 2 + sds[1] ** 2))
        return [p, 1.0 - p]
    # below the second-highest of the sides' μ - 9σ, every product Π F_j has a factor
    # under Φ(-9) ≈ 1e-19: the grid starts there
    lo = sorted(m - 9.0 * s for m, s in zip(means, sds, strict=True))[-2]
    hi = max(m + 9.0 * s for m, s in zip(means, sds, strict=True))
    steps = math.ceil((hi - lo) / min(sds) * params.points_per_sd)
    steps = min(max(steps + steps % 2, 64), 20000)
    h = (hi - lo) / steps
    n = len(sides)
    totals = [0.0] * n
    for g in range(steps + 1):
        x = lo + g * h
        weight = 1.0 if g in (0, steps) else (4.0 if g % 2 else 2.0)
        cdfs = [cdf((x - m) / s) for m, s in zip(means, sds, strict=True)]
        prefix = [1.0] * (n + 1)
        for j in range(n):
            prefix[j + 1] = prefix[j] * cdfs[j]
        suffix = 1.0
        for i in range(n - 1, -1, -1):
            rest = prefix[i] * suffix
            if rest > 0.0:
                totals[i] += weight * pdf((x - means[i]) / sds[i]) / sds[i] * rest
            suffix *= cdfs[i]
    total = math.fsum(totals)
    return [t / total for t in totals]


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return TrueSkillParams if slot in ("initial", "expectation", "update", "team") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    if slot == "team":  # (the pairings are a whole match's outcome: match mode only)
        return Needs(fields=("mu", "sigma"), whole_match=True)
    return Needs(fields=("mu", "sigma")) if slot in ("expectation", "update") else None


@hookimpl
def rankcraft_initial(slot: str, params: TrueSkillParams) -> TrueSkillSkill:
    if slot != "initial":
        raise ValueError(f"the trueskill plugin has no {slot!r} state")
    return TrueSkillSkill(params.mu, params.sigma)


@hookimpl
def rankcraft_aggregate(
    params: TrueSkillParams, members: Sequence[State], layout: Mapping[str, int]
) -> State:
    """The side's :class:`TrueSkillSide` tuple: (Σμ, sqrt(Σσ²), players)."""
    at_mu, at_sigma = layout["mu"], layout["sigma"]
    if len(members) == 1:
        m = members[0]
        sigma = m[at_sigma]
        return (m[at_mu] + 0.0, math.sqrt(sigma * sigma), 1)  # (fsum of one term: + 0.0)
    return (
        math.fsum(m[at_mu] for m in members),
        math.sqrt(math.fsum(m[at_sigma] * m[at_sigma] for m in members)),
        len(members),
    )


@hookimpl
def rankcraft_team(
    params: TrueSkillParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
    layout: Mapping[str, int],
) -> Sequence[Sequence[Sequence[tuple[Any, float, float]]]]:
    at_mu, at_sigma = layout["mu"], layout["sigma"]
    if (
        len(sides) == 2
        and len(sides[0]) == 1
        and len(sides[1]) == 1
        and (match is None or match.seconds_played is None)
    ):
        a, b = sides[0][0], sides[1][0]
        m_a, m_b = duel_messages(
            params, a[at_mu], a[at_sigma], b[at_mu], b[at_sigma], places[0], places[1]
        )
        score = 1.0 if places[0] < places[1] else 0.5 if places[0] == places[1] else 0.0
        return (((m_a, score, weight),),), (((m_b, 1.0 - score, weight),),)
    shares = play_weights(match, sides, 1.0)
    teams = [[(s[at_mu], s[at_sigma]) for s in side] for side in sides]
    if len(sides) == 2:
        messages = two_team_messages(params, teams, places, shares)
    else:
        messages = rate_messages(params, teams, places, shares)
    return [[[(m, side_score(places, i), weight)] for m in messages[i]] for i in range(len(sides))]


@hookimpl
def rankcraft_expectation(params: TrueSkillParams, side_states: Sequence[State]) -> list[float]:
    if len(side_states) == 2:  # (win_probabilities' two-sided case and cdf, written out)
        a, b = side_states
        beta2 = params._beta2
        sd_a = math.sqrt(a[SIGMA] * a[SIGMA] + (a[PLAYERS] if len(a) > PLAYERS else 1) * beta2)
        sd_b = math.sqrt(b[SIGMA] * b[SIGMA] + (b[PLAYERS] if len(b) > PLAYERS else 1) * beta2)
        x = (a[MU] - b[MU]) / math.sqrt(sd_a**2 + sd_b**2)
        p = 0.5 * math.erfc(-x / SQRT2)
        return [p, 1.0 - p]
    return win_probabilities(
        params,
        [(s[MU], s[SIGMA] * s[SIGMA], s[PLAYERS] if len(s) > PLAYERS else 1) for s in side_states],
    )


def _moved(
    params: TrueSkillParams, state: State, pairings: Sequence[Sequence[Any]]
) -> tuple[float, float]:
    """(μ, σ) after the pairings, before the limits."""
    if len(pairings) == 1 and type(pairings[0][0]) is TrueSkillMessage:
        message, _, weight = pairings[0]
        variance = state[SIGMA] * state[SIGMA] + params._tau2
        pi = 1.0 / variance + message[0] * weight
        tau = state[MU] / variance + message[1] * weight
        return tau / pi, math.sqrt(1.0 / pi)
    messages = []
    for pairing in pairings:
        message = pairing[0]
        if type(message) is not TrueSkillMessage:
            message = _pair_message(params, state, message, pairing[1])
        messages.append((message, pairing[2]))
    return posterior(params, state[MU], state[SIGMA], messages)


@hookimpl
def rankcraft_update(
    params: TrueSkillParams, state: State, pairings: Sequence[Sequence[Any]]
) -> State:
    if len(pairings) == 1 and type(pairings[0][0]) is TrueSkillMessage:
        # (_moved's case of one message and bounded's common case, written out)
        message, _, weight = pairings[0]
        sigma = state[SIGMA]
        variance = sigma * sigma + params._tau2
        pi = 1.0 / variance + message[0] * weight
        tau = state[MU] / variance + message[1] * weight
        mu, sigma = tau / pi, math.sqrt(1.0 / pi)
        if -RATING_LIMIT <= mu <= RATING_LIMIT and _SIGMA_LOW <= sigma <= _SIGMA_HIGH:
            return (mu, sigma)
        return bounded("trueskill", mu, sigma)
    return bounded("trueskill", *_moved(params, state, pairings))


@hookimpl
def rankcraft_explain(
    params: TrueSkillParams, state: State, pairings: Sequence[Sequence[Any]], after: State
) -> dict[str, float] | None:
    """``mu_change`` (the change of μ, before the rating limit) for a match's one result."""
    return mu_change(state, after, pairings, _moved, params)


def _pair_message(
    params: TrueSkillParams, state: State, opponent: State, score: float
) -> TrueSkillMessage:
    """A pairing from another team plugin: a 1-v-1 against that (real or virtual)
    opponent state."""
    places = [1, 1] if score == 0.5 else [1, 2] if score > 0.5 else [2, 1]
    ((mine,), _) = rate_messages(
        params, [[(state[MU], state[SIGMA])], [(opponent[MU], opponent[SIGMA])]], places
    )
    return mine
