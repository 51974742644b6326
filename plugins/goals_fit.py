"""``goals_fit`` plugin: the ``goals`` model fitted to the whole history by time-weighted
maximum likelihood (Dixon and Coles 1997, section 4.5), a history model (docs/goals.md).

Where ``goals`` moves a match's two teams by one gradient step and never looks at the
match again, this plugin's ``[fit]`` slot refits every team's attack and defence before
each match day from all the matches so far, each weighed by exp(−ξ · its age in days)
(:mod:`rankcraft.plugins._goals_fit`: the objective, the method and the check against
SciPy). The score model, the forecasts and the step within a day are the ``goals``
plugin's: every hook but the fit's delegates to it, with the same params.

A side of several players (a line-up) counts at its members' mean attack and mean
defence, as the default ``mean`` team slot makes it for the step; goals need not be whole
(a share of a match's goals counts by the Poisson quasi-likelihood).

``base``, the home advantages and ``rho`` are the ruleset's (the params every forecast
reads), not fitted: the league's hooks read one params object, so a fitted global could
not reach them (docs/decisions.md, "The goals fit keeps the ruleset's globals"). Tune them
with ``rankcraft tune`` instead. A team with no match in the fit's window (φ below
``cutoff``, or older than ``[history] window_days``) is back at the initial state.

>>> import math
>>> from datetime import UTC, datetime
>>> from rankcraft import FitLimits, parse_match
>>> params = GoalsFitParams(base=0.3, home_advantage=0.3, rho=-0.05, xi=0.0)
>>> fit = rankcraft_fit_start(params)
>>> games = [parse_match({"id": f"g{k}", "played_at": f"2024-05-0{k + 1}T18:00:00Z",
...     "teams": [["A"], ["B"]], "scores": [2, 0]}) for k in range(3)]
>>> states = rankcraft_fit(params, fit, games, datetime(2024, 5, 9, tzinfo=UTC), FitLimits())
>>> a, b = states["A"], states["B"]
>>> # three 2-0 wins: A expects about 2 goals, B's 0 held off zero by the prior only
>>> round(math.exp(params.base + a[0] - b[1]), 2), round(math.exp(params.base + b[0] - a[1]), 2)
(1.98, 0.11)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from rankcraft import FitLimits, Match, Needs, Pairing, hookimpl
from rankcraft.validators import within

from . import goals
from ._goals_fit import GoalsFit, context_of
from ._goals_io import dump, load
from ._matchup import context_text
from .goals import GoalsParams, GoalsSkill

RANKCRAFT_CONTRACT = 2

SLOTS = ("initial", "decay", "expectation", "update", "fit")
"""The slots the plugin fills, each with :class:`GoalsFitParams`."""

State = tuple[Any, ...]

__all__ = ["GoalsFitParams"]


@attrs.frozen(kw_only=True)
class GoalsFitParams(GoalsParams):
    """Params of the ``goals_fit`` plugin (every slot it fills; a ``[fit]`` naming
    ``goals_fit`` without a params table of its own shares the update's). The ``goals``
    plugin's fields (:class:`rankcraft.plugins.goals.GoalsParams`: ``goal_cap`` caps the
    goals the fit counts too, ``initial_attack`` and ``initial_defence`` are the prior's
    centres), and:

    Attributes:
        xi: Dixon and Coles' ξ, the weight's decay per day, in [0, 1] (default 0.0005: a
            match weighs half as much after 3.8 years).
        prior_sd: the deviation of the Gaussian prior on every attack and defence around
            the initial ones, in [0.001, 100] (default 2: keeps a team that never conceded
            finite and identifies the model).
        cutoff: a match whose time weight fell below this leaves the fit for good, in
            [0, 0.5] (default 0.05).
        relax: over-relaxation of each team's Newton step, in [0.5, 1.9] (default 1.3:
            speeds weakly linked groups of teams).
    """

    xi: float = attrs.field(default=0.0005, validator=within(0.0, 1.0))
    prior_sd: float = attrs.field(default=2.0, validator=within(0.001, 100.0))
    cutoff: float = attrs.field(default=0.05, validator=within(0.0, 0.5))
    relax: float = attrs.field(default=1.3, validator=within(0.5, 1.9))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return GoalsFitParams if slot in SLOTS else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    if slot == "fit":
        return Needs(modes=("match",))
    result: Needs | None = goals.rankcraft_needs(slot)
    return result


@hookimpl
def rankcraft_verify(state: GoalsSkill) -> str | None:
    result: str | None = goals.rankcraft_verify(state)
    return result


@hookimpl
def rankcraft_initial(slot: str, params: GoalsFitParams) -> GoalsSkill:
    result: GoalsSkill = goals.rankcraft_initial(slot, params)
    return result


@hookimpl
def rankcraft_decay(params: GoalsFitParams, state: State, periods: float) -> State:
    result: State = goals.rankcraft_decay(params, state, periods)
    return result


@hookimpl
def rankcraft_expectation(
    params: GoalsFitParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float]:
    result: list[float] = goals.rankcraft_expectation(params, side_states, home, match)
    return result


@hookimpl
def rankcraft_outcomes(
    params: GoalsFitParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float] | None:
    if not isinstance(params, GoalsFitParams):
        return None  # (another plugin's params: a manager that broadcasts asks every plugin)
    result: list[float] | None = goals.rankcraft_outcomes(params, side_states, home, match)
    return result


@hookimpl
def rankcraft_update(
    params: GoalsFitParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> State:
    result: State = goals.rankcraft_update(params, state, pairings, games, side, match)
    return result


@hookimpl
def rankcraft_explain(
    params: GoalsFitParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    after: State,
) -> dict[str, float]:
    result: dict[str, float] = goals.rankcraft_explain(
        params, state, pairings, games, side, match, after
    )
    return result


@hookimpl
def rankcraft_fit_start(params: GoalsFitParams) -> GoalsFit:
    return GoalsFit(
        params,
        xi=params.xi,
        prior_sd=params.prior_sd,
        cutoff=params.cutoff,
        fit_globals=False,
        relax=params.relax,
        goal_cap=params.goal_cap,
    )


@hookimpl
def rankcraft_fit_dump(fit: GoalsFit) -> dict[str, Any]:
    return dump(fit)


@hookimpl
def rankcraft_fit_load(params: GoalsFitParams, data: dict[str, Any]) -> GoalsFit:
    return load(rankcraft_fit_start(params), data)


@hookimpl
def rankcraft_fit(
    params: GoalsFitParams, fit: GoalsFit, matches: Sequence[Match], now: datetime,
    limits: FitLimits,
) -> Mapping[str, State]:  # fmt: skip
    """Add the matches (time in whole days), refit at ``now``'s day from where the fit
    stood, and return every team's fitted (attack, defence, rating)."""
    fit.tol, fit.max_sweeps = limits.tolerance, limits.iterations
    fit.window = limits.window_days or float("inf")
    field = params.context_field
    for match in matches:
        _, x, y = goals.goals_of(match, 0)
        context = context_of(params, context_text(match, field))  # (as the step reads it)
        a, b = (team[0] if len(team) == 1 else team for team in match.teams)
        fit.add(_day(match.played_at), a, b, x, y, match.home, context, match.weight)
    fit.fit(_day(now))
    states: dict[str, State] = {}
    for name in fit.names:
        skill = fit.state(name)
        states[name] = (skill.attack, skill.defence, skill.attack + skill.defence)
    return states


def _day(moment: datetime) -> float:
    """A UTC time's day number (days since 0001-01-01: the fit's time unit)."""
    return float(moment.date().toordinal())
