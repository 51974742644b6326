"""``goals`` plugin: attack and defence ratings for sports scored in goals, a Poisson
model with the Dixon-Coles low-score correction, updated match by match.

Each team has an ``attack`` and a ``defence`` rating, natural-log rates. Team A facing
team B expects

    λ_A = exp(base + attack_A − defence_B + h_A),    λ_B = exp(base + attack_B − defence_A + h_B)

goals, where ``h`` is the home advantage for the side at home (0 away or at a neutral
venue). The probability of the score ``x``–``y`` is Dixon and Coles' ("Modelling
association football scores and inefficiencies in the football betting market",
Applied Statistics 46 (1997) 265–280, eq. 4.2)

    P(x, y) = τ(x, y) · Poisson(x; λ_A) · Poisson(y; λ_B),

    τ(0,0) = 1 − λ_A λ_B rho,  τ(0,1) = 1 + λ_A rho,  τ(1,0) = 1 + λ_B rho,  τ(1,1) = 1 − rho,

and τ = 1 elsewhere (the four corrections sum to zero, so the matrix still sums to 1).
A team's overall ``rating`` is ``attack + defence`` (role ``location``, what
leaderboards sort by): ``ln λ_A − ln λ_B = rating_A − rating_B`` on neutral ground.

**Update.** After a match the two teams take one stochastic-gradient step on the
Dixon-Coles log-likelihood of the observed score ``x``–``y`` (the online form of Maher's
1982 and Dixon and Coles' maximum-likelihood fit; Dixon and Coles' time weighting
φ(t) = exp(−ξ t) becomes the constant step: each match's influence on a rating decays
geometrically with the team's later matches, the exponential forgetting of a recursive
estimator). For team A, with ``lr`` the learning rate:

    attack_A  += lr · w · (x − λ_A + λ_A ∂ln τ/∂λ_A)
    defence_A += lr · w · (λ_B − y − λ_B ∂ln τ/∂λ_B)

``w`` is the match's weight (the team slot's pairing weight). The τ terms are non-zero
only for the scores 0–0 (−λ_A λ_B rho / τ for both), 0–1 (λ_A rho / τ for the attack) and
1–0 (λ_B rho / τ for the defence). Goals above ``goal_cap`` count as ``goal_cap`` in the
step (a 31–0 rout moves ratings as a 10–0 does). Both teams step from the ratings
before the match.

Worked check (two average teams, ``base`` = ln 1.35, rho = −0.1): the 0–0 draw is more
likely than independent Poisson scores make it (τ = 1 + 1.35² · 0.1 = 1.18225):

>>> grid = score_matrix(1.35, 1.35, -0.1, 10)
>>> round(grid[0][0], 5), round(math.exp(-2.7) * 1.18225, 5)
(0.07945, 0.07945)
>>> win, draw, loss = outcome_probabilities(1.35, 1.35, -0.1)
>>> round(win, 4), round(draw, 4), round(loss, 4)
(0.3587, 0.2827, 0.3587)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from rankcraft import Match, MatchError, Needs, Pairing, State, hookimpl, state_field
from rankcraft.validators import limit, state_within, whole, within

from ._matchup import LastFactors, first_rule

RANKCRAFT_CONTRACT = 2
"""States in the per-match hooks are tuples ``(attack, defence, rating)``."""

ATTACK, DEFENCE, RATING = range(3)
"""Positions of :class:`GoalsSkill`'s fields in its tuple form."""

STATE_LIMIT = 20.0
"""The largest |attack|, |defence| (log-rates; e^20 is about 5·10^8) a state holds; an
update stops there. ``rating`` may reach twice it."""
LOG_RATE_LIMIT = 4.0
"""Expected goals are computed from a log-rate clamped to ±4: at most e^4 ≈ 54.6 goals."""
TAIL_SDS = 10.0
"""Outcome sums run to ``max(max_goals, λ + 10 √λ + 10)`` goals per side, where the
Poisson tail beyond is below 1e-12; the last cell holds that count *or more*."""

__all__ = [
    "GoalsParams",
    "GoalsRule",
    "GoalsSkill",
    "expected_goals",
    "goals_of",
    "margin_probabilities",
    "outcome_probabilities",
    "score_forecast",
    "score_matrix",
    "tau",
]


@attrs.frozen(slots=True)
class GoalsSkill:
    """A team's state.

    Attributes:
        attack: log-rate of goals scored above the base, |x| ≤ 20.
        defence: log-rate of goals prevented (higher is better), |x| ≤ 20.
        rating: ``attack + defence`` (role ``location``: leaderboards sort by it), |x| ≤
            40; defaults to that sum when a state document leaves it out.
    """

    attack: float = state_field(validator=state_within(-STATE_LIMIT, STATE_LIMIT))
    defence: float = state_field(validator=state_within(-STATE_LIMIT, STATE_LIMIT))
    rating: float = state_field(
        role="location",
        default=attrs.Factory(lambda self: self.attack + self.defence, takes_self=True),
        validator=state_within(-2 * STATE_LIMIT, 2 * STATE_LIMIT),
    )


def _contains(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"'contains' must be a non-empty string: {value!r}")


def _optional_home(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not (
        isinstance(value, int | float) and math.isfinite(value) and -2.0 <= value <= 2.0
    ):
        raise ValueError(f"'home_advantage' must be a finite number in [-2.0, 2.0]: {value!r}")


@attrs.frozen(kw_only=True)
class GoalsRule:
    """A rule for the matches whose ``context_field`` value contains ``contains`` (the
    first matching rule applies).

    Attributes:
        contains: text looked for in the field's value (case-sensitive), non-empty.
        home_advantage: the home side's log-rate edge in these matches, in [-2, 2]
            (default: the plugin's).
        learning_scale: the learning rate is multiplied by this in these matches, in
            [0, 100] (friendlies count less; default 1).
    """

    contains: str = attrs.field(validator=_contains)
    home_advantage: float | None = attrs.field(default=None, validator=_optional_home)
    learning_scale: float = attrs.field(default=1.0, validator=within(0.0, 100.0))


@attrs.frozen(kw_only=True)
class GoalsParams:
    """Params of the ``goals`` plugin (slots initial, expectation, update).

    Attributes:
        base: log of the goals an average team scores against another on neutral
            ground, in [-5, 5] (default ln 1.35 = 0.3001).
        home_advantage: added to the home side's log-rate, in [-2, 2] (default 0.25: a
            home side scores e^0.25 ≈ 1.28 times as many goals); needs the match's home
            side (``--home-from``).
        rho: Dixon and Coles' rho, in [-1, 1] (default -0.1; their league fit: -0.13); 0
            is independent Poisson scores. A τ that the rates push below 0 counts as 0.
        learning_rate: the gradient step of attack and defence, in [0, 1] (default 0.05).
        newcomer_games, newcomer_boost: a team's first ``newcomer_games`` matches use
            ``learning_rate * newcomer_boost`` (games a whole number in [0, 1e6], default
            0: off; boost in [0, 100], default 1).
        goal_cap: goals above this count as this many in the update, in [1, 1000]
            (default 10).
        initial_attack, initial_defence: a new team's ratings, in [-20, 20] (default 0,
            an average team).
        max_goals: the size of :func:`score_matrix` and of the outcome sums, a whole
            number in [1, 200] (default 10); the outcome sums reach further when the
            expected goals ask for it (``TAIL_SDS``), and the last cell holds that count
            or more, so the probabilities sum to 1.
        idle_keep: the share of a team's attack and defence (as distances from the
            initial ones) kept per rating period without a match, in (0, 1] (default
            1: kept whole): calendar-time weighting, old results fading while a team
            does not play, as Dixon and Coles' exp(−ξ t) weights fade them by age
            (ξ = −ln(idle_keep) per ``[period] length_days``).
        context_field: a ``meta`` key naming the competition (e.g. ``"tournament"``);
            ``context_rules`` (:class:`GoalsRule`) then set the home advantage and scale
            the learning rate per value (first matching rule; default none).
    """

    base: float = attrs.field(default=0.3001, validator=within(-5.0, 5.0))
    home_advantage: float = attrs.field(default=0.25, validator=within(-2.0, 2.0))
    rho: float = attrs.field(default=-0.1, validator=within(-1.0, 1.0))
    learning_rate: float = attrs.field(default=0.05, validator=within(0.0, 1.0))
    newcomer_games: int = attrs.field(default=0, validator=whole(0, 1_000_000))
    newcomer_boost: float = attrs.field(default=1.0, validator=within(0.0, 100.0))
    goal_cap: float = attrs.field(default=10.0, validator=within(1.0, 1000.0))
    initial_attack: float = attrs.field(default=0.0, validator=within(-20.0, 20.0))
    initial_defence: float = attrs.field(default=0.0, validator=within(-20.0, 20.0))
    max_goals: int = attrs.field(default=10, validator=whole(1, 200))
    idle_keep: float = attrs.field(default=1.0, validator=within(1e-6, 1.0))
    context_field: str | None = None
    context_rules: tuple[GoalsRule, ...] = attrs.field(default=(), converter=tuple)

    def __attrs_post_init__(self) -> None:
        if self.context_rules and not self.context_field:
            raise ValueError("'context_rules' need a 'context_field' (the meta key they read)")


# ---------------------------------------------------------------------------------------
# The score model (public functions)
# ---------------------------------------------------------------------------------------


def tau(x: int, y: int, lambda_a: float, lambda_b: float, rho: float) -> float:
    """Dixon and Coles' τ for the score ``x``–``y`` (1 beyond the four low scores),
    never below 0."""
    if x > 1 or y > 1:
        return 1.0
    if x == 0 and y == 0:
        t = 1.0 - lambda_a * lambda_b * rho
    elif x == 0:
        t = 1.0 + lambda_a * rho
    elif y == 0:
        t = 1.0 + lambda_b * rho
    else:
        t = 1.0 - rho
    return t if t > 0.0 else 0.0


def _pmf(lam: float, top: int) -> list[float]:
    """Poisson probabilities of 0 … top − 1 goals and, last, of ``top`` or more."""
    p = math.exp(-lam)
    out = [p]
    total = p
    for k in range(1, top):
        p = p * lam / k
        out.append(p)
        total += p
    out.append(max(0.0, 1.0 - total))
    return out


LOW_SCORES = ((0, 0), (0, 1), (1, 0), (1, 1))
"""The scores τ corrects, in the order of :func:`_corrections`."""


def _corrections(
    p: Sequence[float], q: Sequence[float], lambda_a: float, lambda_b: float, rho: float
) -> tuple[float, float, float, float]:
    """What τ adds to the independent Poisson probability of each of ``LOW_SCORES``:
    P(x; λ_A) · P(y; λ_B) · (τ(x, y) − 1), with ``p`` and ``q`` the probabilities of
    exactly 0 and exactly 1 goal of each side (zero in sum before τ is cut at 0). Added to
    a matrix cell that holds "1 or more" goals, it corrects the exact score within it and
    nothing else."""
    return (
        p[0] * q[0] * (tau(0, 0, lambda_a, lambda_b, rho) - 1.0),
        p[0] * q[1] * (tau(0, 1, lambda_a, lambda_b, rho) - 1.0),
        p[1] * q[0] * (tau(1, 0, lambda_a, lambda_b, rho) - 1.0),
        p[1] * q[1] * (tau(1, 1, lambda_a, lambda_b, rho) - 1.0),
    )


def _top(max_goals: int, lam: float) -> int:
    return max(max_goals, math.ceil(lam + TAIL_SDS * math.sqrt(lam) + TAIL_SDS))


def score_matrix(
    lambda_a: float, lambda_b: float, rho: float, max_goals: int = 10
) -> list[list[float]]:
    """P(side A scores ``i``, side B scores ``j``) for i, j in 0 … ``max_goals``: the
    Poisson probabilities times τ, the last row and column holding ``max_goals`` *or
    more* goals, normalised to sum to 1 (they do before normalising unless a τ was cut
    at 0). τ corrects the exact low scores only: with ``max_goals`` 1, the cell "1 or
    more to 0" is P(1–0) · τ(1, 0) plus the uncorrected P(2–0), P(3–0), …

    >>> m = score_matrix(1.0, 1.0, 0.0, 3)
    >>> round(m[1][2], 6) == round(math.exp(-2) / 2, 6), round(sum(map(sum, m)), 12)
    (True, 1.0)
    """
    if not (lambda_a > 0.0 and lambda_b > 0.0) or max_goals < 1:
        raise ValueError(
            f"score_matrix needs positive rates and max_goals >= 1: "
            f"{lambda_a!r}, {lambda_b!r}, {max_goals!r}"
        )
    p, q = _pmf(lambda_a, max_goals), _pmf(lambda_b, max_goals)
    grid = [[pi * qj for qj in q] for pi in p]
    exact_a = (math.exp(-lambda_a), lambda_a * math.exp(-lambda_a))  # P(0), P(1) exactly
    exact_b = (math.exp(-lambda_b), lambda_b * math.exp(-lambda_b))
    changes = _corrections(exact_a, exact_b, lambda_a, lambda_b, rho)
    for (x, y), change in zip(LOW_SCORES, changes, strict=True):
        grid[x][y] += change  # (with max_goals 1, to the "1 or more" cells holding x, y)
    total = math.fsum(math.fsum(row) for row in grid)
    return [[v / total for v in row] for row in grid]


def margin_probabilities(
    lambda_a: float, lambda_b: float, rho: float, max_goals: int = 10
) -> dict[int, float]:
    """P(goals of A − goals of B = m) for every margin m the :func:`score_matrix` of
    ``max_goals`` holds (scores of ``max_goals`` or more count as ``max_goals``).

    >>> d = margin_probabilities(1.35, 1.35, -0.1)
    >>> round(d[0], 4), round(d[1], 4) == round(d[-1], 4)
    (0.2827, True)
    """
    out: dict[int, float] = {}
    for i, row in enumerate(score_matrix(lambda_a, lambda_b, rho, max_goals)):
        for j, v in enumerate(row):
            out[i - j] = out.get(i - j, 0.0) + v
    return dict(sorted(out.items()))


def outcome_probabilities(
    lambda_a: float, lambda_b: float, rho: float, max_goals: int = 10
) -> tuple[float, float, float]:
    """(P(A wins), P(draw), P(B wins)) under the Dixon-Coles model, summed in O(n) over
    ``n = max(max_goals, λ + 10 √λ + 10)`` goals per side, normalised to sum to 1."""
    top = max(_top(max_goals, lambda_a), _top(max_goals, lambda_b))
    p, q = _pmf(lambda_a, top), _pmf(lambda_b, top)
    draw = win = 0.0
    below = 0.0  # P(B scores fewer than i)
    for i in range(top + 1):
        draw += p[i] * q[i]
        win += p[i] * below
        below += q[i]
    loss = 1.0 - win - draw
    # τ's corrections (p[0], p[1] are exact here: top >= 10 > 1)
    d00, d01, d10, d11 = _corrections(p, q, lambda_a, lambda_b, rho)
    win += d10
    draw += d00 + d11
    loss += d01
    total = win + draw + loss
    win, draw = limit(win / total, 0.0, 1.0), limit(draw / total, 0.0, 1.0)
    return win, draw, limit(1.0 - win - draw, 0.0, 1.0)


def _rule(params: GoalsParams, match: Match | None) -> GoalsRule | None:
    return first_rule(match, params.context_field, params.context_rules)


def _home(params: GoalsParams, match: Match | None) -> float:
    rule = _rule(params, match)
    if rule is None or rule.home_advantage is None:
        return params.home_advantage
    return rule.home_advantage


def _rate(log_rate: float) -> float:
    return math.exp(limit(log_rate, -LOG_RATE_LIMIT, LOG_RATE_LIMIT))


def expected_goals(
    params: GoalsParams, a: State, b: State, home: int | None, match: Match | None = None
) -> tuple[float, float]:
    """(λ_A, λ_B): the goals side A (state ``a``, side 0) and side B expect, with the
    home advantage of the match's competition for the side ``home`` (0, 1 or None)."""
    edge = _home(params, match) if home is not None else 0.0
    base = params.base
    return (
        _rate(base + a[ATTACK] - b[DEFENCE] + (edge if home == 0 else 0.0)),
        _rate(base + b[ATTACK] - a[DEFENCE] + (edge if home == 1 else 0.0)),
    )


def score_forecast(
    params: GoalsParams,
    a: GoalsSkill,
    b: GoalsSkill,
    home: int | None = None,
    match: Match | None = None,
) -> dict[str, Any]:
    """What the model says of a match between two teams (their states as a league shows
    them, ``league.player(id).skill``): the expected goals of each (``expected_goals``),
    the matrix of score-line probabilities (``scores[i][j]``: P(A scores i, B scores j),
    ``params.max_goals`` a side, the last row and column "that many or more"), P(A wins),
    P(draw), P(B wins) (``outcomes``) and the margins (``margins[d]``: P(A's goals − B's
    = d), from the score matrix, d from −``max_goals`` to ``max_goals``).

    :param home: the side at home (0 or 1), or None for a neutral venue.
    :param match: a match whose ``meta`` names the competition, for its home advantage.
    """
    states = (a.attack, a.defence, a.rating), (b.attack, b.defence, b.rating)
    lam_a, lam_b = expected_goals(params, states[0], states[1], home, match)
    top = params.max_goals
    return {
        "expected_goals": (lam_a, lam_b),
        "scores": score_matrix(lam_a, lam_b, params.rho, top),
        "outcomes": outcome_probabilities(lam_a, lam_b, params.rho, top),
        "margins": margin_probabilities(lam_a, lam_b, params.rho, top),
    }


# ---------------------------------------------------------------------------------------
# Hooks
# ---------------------------------------------------------------------------------------


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return GoalsParams if slot in ("initial", "decay", "expectation", "update") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    # each match is rated on its own score from the state the match meets: a batch period
    # keeps no scores, and a live period rates every match from the period's start, so a
    # team's earlier matches of that period would be lost
    return Needs(modes=("match",)) if slot == "update" else None


@hookimpl
def rankcraft_verify(state: GoalsSkill) -> str | None:
    # ``rating`` is derived: the sum the update writes (a state document's own, exactly)
    total = state.attack + state.defence
    if abs(state.rating - total) > 1e-9 * max(1.0, abs(total)):
        return f"'rating' must be attack + defence, {total!r}: {state.rating!r}"
    return None


@hookimpl
def rankcraft_initial(slot: str, params: GoalsParams) -> GoalsSkill:
    if slot != "initial":
        raise ValueError(f"the goals plugin has no {slot!r} state")
    return GoalsSkill(params.initial_attack, params.initial_defence)


@hookimpl
def rankcraft_decay(params: GoalsParams, state: State, periods: float) -> State:
    """Attack and defence drawn towards the initial ones by ``idle_keep`` per idle
    period (the state itself when ``idle_keep`` is 1)."""
    if params.idle_keep == 1.0 or periods <= 0.0:
        return state
    keep = params.idle_keep**periods
    attack = params.initial_attack + (state[ATTACK] - params.initial_attack) * keep
    defence = params.initial_defence + (state[DEFENCE] - params.initial_defence) * keep
    return (attack, defence, attack + defence)


def _outcomes(
    params: GoalsParams, a: State, b: State, home: int | None, match: Match | None
) -> tuple[float, float, float]:
    lam_a, lam_b = expected_goals(params, a, b, home, match)
    return outcome_probabilities(lam_a, lam_b, params.rho, params.max_goals)


@hookimpl
def rankcraft_expectation(
    params: GoalsParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float]:
    """Expected score P(win) + P(draw) / 2; for more than two sides each side's share of
    the round robin of every pair (neutral venue)."""
    n = len(side_states)
    if n == 2:
        win, draw, _ = _outcomes(params, side_states[0], side_states[1], home, match)
        p = min(max(win + 0.5 * draw, 0.0), 1.0)  # (a sum of cells may pass 1 by an ulp)
        return [p, 1.0 - p]
    games = n * (n - 1) / 2
    out = []
    for i, a in enumerate(side_states):
        total = 0.0
        for j, b in enumerate(side_states):
            if j != i:
                win, draw, _ = _outcomes(params, a, b, None, match)
                total += win + 0.5 * draw
        out.append(min(max(total / games, 0.0), 1.0))
    return out


@hookimpl
def rankcraft_outcomes(
    params: GoalsParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float] | None:
    """(P(side 0 wins), P(draw), P(side 1 wins)) from the Dixon-Coles score matrix;
    None for more than two sides, or for another plugin's params (a hook manager that
    broadcasts the hook asks every installed plugin)."""
    if len(side_states) != 2 or not isinstance(params, GoalsParams):
        return None
    return list(_outcomes(params, side_states[0], side_states[1], home, match))


def goals_of(match: Match | None, side: int) -> tuple[Match, float, float]:
    """The match and (goals for, goals against) of ``side``; refuses what the model
    cannot rate."""
    if match is None:
        raise MatchError(
            "the goals plugin rates each match on its own score: use period mode 'match' "
            "(no batch or live periods, no deferred results)"
        )
    if len(match.teams) != 2:
        raise MatchError(
            f"the goals plugin rates two sides, not {len(match.teams)}", match_id=match.id
        )
    if match.scores is None:
        raise MatchError(
            "the goals plugin needs the match's 'scores' (goals per side), not ranks only",
            match_id=match.id,
            field="scores",
        )
    mine, theirs = match.scores[side], match.scores[1 - side]
    if not (mine >= 0.0 and theirs >= 0.0):
        raise MatchError(
            f"the goals plugin needs goals (scores >= 0): {list(match.scores)!r}",
            match_id=match.id,
            field="scores",
        )
    return match, mine, theirs


_explained = LastFactors()
"""The last update's new state and its factors, for :func:`rankcraft_explain`."""


def _step(
    params: GoalsParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> tuple[State, dict[str, float]]:
    match, scored, conceded = goals_of(match, side)
    opponent, _, weight = pairings[0]
    home = match.home
    mine_home = None if home is None else (0 if home == side else 1)
    lam, mu = expected_goals(params, state, opponent, mine_home, match)
    x, y = min(scored, params.goal_cap), min(conceded, params.goal_cap)
    rho = params.rho
    g_attack = x - lam
    g_defence = mu - y
    if rho != 0.0 and scored in (0.0, 1.0) and conceded in (0.0, 1.0):
        t = tau(int(scored), int(conceded), lam, mu, rho)
        if t > 0.0:
            if scored == 0 and conceded == 0:
                g_attack -= lam * mu * rho / t
                g_defence += lam * mu * rho / t
            elif scored == 0 and conceded == 1:
                g_attack += lam * rho / t
            elif scored == 1 and conceded == 0:
                g_defence -= mu * rho / t
    rate = params.learning_rate
    if games < params.newcomer_games:
        rate *= params.newcomer_boost
    rule = _rule(params, match)
    if rule is not None:
        rate *= rule.learning_scale
    step = rate * weight
    attack = limit(state[ATTACK] + step * g_attack, -STATE_LIMIT, STATE_LIMIT)
    defence = limit(state[DEFENCE] + step * g_defence, -STATE_LIMIT, STATE_LIMIT)
    factors = {"expected_for": lam, "expected_against": mu, "learning_rate": step}
    return (attack, defence, attack + defence), factors


@hookimpl
def rankcraft_update(
    params: GoalsParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> State:
    return _explained.keep(*_step(params, state, pairings, games, side, match))


@hookimpl
def rankcraft_explain(
    params: GoalsParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    after: State,
) -> dict[str, float]:
    """``expected_for`` and ``expected_against`` (the goals the update compared the
    score with) and ``learning_rate`` (the step used, match weight included)."""
    kept = _explained.of(after)
    if kept is not None:
        return kept
    return _step(params, state, pairings, games, side, match)[1]
