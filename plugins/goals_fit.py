"""``goals_fit`` plugin: the ``goals`` model fitted to the whole history by time-weighted
maximum likelihood (Dixon and Coles 1997, section 4.5), a history model (docs/goals.md).

Where ``goals`` moves a match's two teams by one gradient step and never looks at the
match again, this plugin's ``[fit]`` slot refits every team's attack and defence, and the
league-wide ``base``, home advantages and ``rho``, before each match day from all the
matches so far, each weighed by exp(−ξ · its age in days)
(:mod:`rankcraft.plugins._goals_fit`: the objective, the method and the check against
SciPy). The score model, the forecasts and the step within a day are the ``goals``
plugin's: every hook but the fit's delegates to it, with the params the states carry
(below).

A side of several players (a line-up) counts at its members' mean attack and mean
defence, as the default ``mean`` team slot makes it for the step; goals need not be whole
(a share of a match's goals counts by the Poisson quasi-likelihood).

With ``fit_globals`` (the default) the fit finds ``base``, the home advantages and ``rho``
too, and every team's state carries them (:class:`GoalsFitSkill`'s ``fitted``): the
forecasts and the step read the params with the fitted values in place of the ruleset's
(:func:`fitted_params`), so the ruleset's are only where the fit starts, its prior's
centres (``global_sd``) and what a league uses before its first refit (docs/decisions.md,
"The goals fit finds the home advantage too"). A team with no match in the fit's window
(φ below ``cutoff``, or older than ``[history] window_days``) is back at the initial
attack and defence.

>>> import math
>>> from datetime import UTC, datetime
>>> from rankcraft import FitLimits, parse_match
>>> params = GoalsFitParams(base=0.3, home_advantage=0.3, rho=-0.05, xi=0.0, fit_globals=False)
>>> fit = rankcraft_fit_start(params)
>>> games = [parse_match({"id": f"g{k}", "played_at": f"2024-05-0{k + 1}T18:00:00Z",
...     "teams": [["A"], ["B"]], "scores": [2, 0]}) for k in range(3)]
>>> states = rankcraft_fit(params, fit, games, datetime(2024, 5, 9, tzinfo=UTC), FitLimits())
>>> a, b = states["A"], states["B"]
>>> # three 2-0 wins: A expects about 2 goals, B's 0 held off zero by the prior only
>>> round(math.exp(params.base + a[0] - b[1]), 2), round(math.exp(params.base + b[0] - a[1]), 2)
(1.98, 0.11)
>>> a[FITTED]  # (the globals held: the ruleset's)
()
>>> fitting = attrs.evolve(params, fit_globals=True)
>>> states = rankcraft_fit(fitting, rankcraft_fit_start(fitting), games,
...     datetime(2024, 5, 9, tzinfo=UTC), FitLimits())
>>> # (base, rho, home advantage): no home side and no low score, so only the base moved
>>> [round(x, 3) for x in states["A"][FITTED]]
[0.283, -0.05, 0.3]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from rankcraft import FitLimits, Match, Needs, Pairing, hookimpl, state_field
from rankcraft.validators import within

from . import goals
from ._goals_fit import GoalsFit, context_of
from ._goals_global import BASE_RANGE, HOME_RANGE, homes_of, with_globals
from ._goals_io import dump, load
from ._matchup import LastFactors, context_text
from .goals import GoalsParams, GoalsSkill

RANKCRAFT_CONTRACT = 2

SLOTS = ("initial", "decay", "expectation", "update", "fit")
"""The slots the plugin fills, each with :class:`GoalsFitParams`."""

State = tuple[Any, ...]

FITTED = 3
"""The position of :class:`GoalsFitSkill`'s ``fitted`` in its tuple form."""

GLOBAL_RANGES = (BASE_RANGE, (-1.0, 1.0))
"""The ranges of ``base`` and ``rho`` (the params'); a home advantage's is HOME_RANGE."""

__all__ = ["FITTED", "GoalsFitParams", "GoalsFitSkill", "fitted_params"]


def _numbers(values: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in values)


def _globals(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not value:
        return
    ranges = (*GLOBAL_RANGES, *[HOME_RANGE] * (len(value) - 2))
    if len(value) < 3 or not all(
        math.isfinite(x) and low <= x <= high for x, (low, high) in zip(value, ranges, strict=True)
    ):
        raise ValueError(
            f"{attribute.name!r} must be empty or hold base in [-5, 5], rho in [-1, 1] and "
            f"one or more home advantages in [-2, 2]: {list(value)!r}"
        )


@attrs.frozen(slots=True)
class GoalsFitSkill(GoalsSkill):
    """A team's state in ``goals_fit``: the ``goals`` state and the league-wide values
    the fit that wrote it found.

    Attributes:
        attack, defence, rating: as :class:`rankcraft.plugins.goals.GoalsSkill`.
        fitted: (``base``, ``rho``, then the home advantage of each context:
            ``home_advantage``, then each of ``context_rules`` in order; a rule without a
            home advantage of its own repeats ``home_advantage``), as the latest refit
            found them: base in [-5, 5], rho in [-1, 1], home advantages in [-2, 2]
            (log-rates). Empty for a team the fit has not written yet, with
            ``fit_globals`` false, or in a record stored before the field existed: the
            ruleset's values then (a match where no side carries any, two teams new to
            the league, is forecast and stepped with the ruleset's; a line-up carries
            those of its members that carry any). A tuple whose length does not match
            the ruleset's context rules is read as empty. (An imported state document
            gives it, as it gives every field: ``[]`` for none.)
    """

    fitted: tuple[float, ...] = state_field(
        default=(), converter=_numbers, validator=_globals, items=("base", "rho", "home")
    )


def _carried(state: State | GoalsSkill) -> tuple[float, ...]:
    if isinstance(state, GoalsFitSkill):
        return state.fitted
    if isinstance(state, GoalsSkill):
        return ()
    return state[FITTED] if len(state) > FITTED else ()


def fitted_params(params: GoalsParams, states: Sequence[State | GoalsSkill]) -> GoalsParams:
    """The params the forecasts and the step use for a match of ``states`` (the hooks'
    tuples, or states as ``league.player(id).skill`` gives them):
    ``params`` with ``base``, ``rho`` and the home advantages the states carry
    (``fitted``; their mean where, unusually, the states carry different ones, so that
    the sides' order does not matter), or ``params`` itself when none carries any.

    >>> p = GoalsFitParams(base=0.3, home_advantage=0.3, rho=-0.05)
    >>> used = fitted_params(p, [(0.1, -0.9, -0.8, (0.25, -0.1, 0.4)), (0.0, -0.9, -0.9, ())])
    >>> used.base, used.rho, used.home_advantage, used.xi == p.xi
    (0.25, -0.1, 0.4, True)
    """
    size = 3 + len(params.context_rules)
    carried = (_carried(s) for s in states)
    found = [values for values in carried if len(values) == size]
    if not found:
        return params
    first = found[0]
    values = (
        first
        if all(f == first for f in found)
        else tuple(math.fsum(column) / len(found) for column in zip(*found, strict=True))
    )
    key = (id(params), values)
    kept = _made.get(key)
    if kept is not None and kept[0] is params:
        return kept[1]
    made: GoalsParams = with_globals(params, values[0], values[1], values[2:])
    if len(_made) >= 64:  # (a league's refits: one set of values a day)
        _made.clear()
    _made[key] = (params, made)
    return made


_made: dict[tuple[int, tuple[float, ...]], tuple[GoalsParams, GoalsParams]] = {}
""":func:`fitted_params`' answers, by the params' identity and the values."""


def _globals_of(params: GoalsParams) -> tuple[float, ...]:
    """``params``' globals as a state's ``fitted`` holds them."""
    return (params.base, params.rho, *homes_of(params))


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
        fit_globals: fit ``base``, the home advantages and ``rho`` too (default true: the
            params' values are where the fit starts and its prior's centres); false keeps
            the params' and fits attack and defence only.
        global_sd: the deviation of the Gaussian prior on ``base``, each home advantage
            and ``rho`` around the params' values, in [0.001, 100] (default 0.25: it
            keeps a short history's globals finite, e.g. a competition whose home sides
            never scored; it weighs on a home advantage about as much as a dozen matches
            with a home side).
    """

    xi: float = attrs.field(default=0.0005, validator=within(0.0, 1.0))
    prior_sd: float = attrs.field(default=2.0, validator=within(0.001, 100.0))
    cutoff: float = attrs.field(default=0.05, validator=within(0.0, 0.5))
    relax: float = attrs.field(default=1.3, validator=within(0.5, 1.9))
    fit_globals: bool = True
    global_sd: float = attrs.field(default=0.25, validator=within(0.001, 100.0))


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
def rankcraft_initial(slot: str, params: GoalsFitParams) -> GoalsFitSkill:
    if slot != "initial":
        raise ValueError(f"the goals_fit plugin has no {slot!r} state")
    return GoalsFitSkill(params.initial_attack, params.initial_defence)


@hookimpl
def rankcraft_decay(params: GoalsFitParams, state: State, periods: float) -> State:
    result: State = goals.rankcraft_decay(params, state, periods)
    return result if result is state else (*result[:FITTED], *state[FITTED:])


@hookimpl
def rankcraft_expectation(
    params: GoalsFitParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float]:
    used = fitted_params(params, side_states)
    result: list[float] = goals.rankcraft_expectation(used, side_states, home, match)
    return result


@hookimpl
def rankcraft_outcomes(
    params: GoalsFitParams, side_states: Sequence[State], home: int | None, match: Match | None
) -> list[float] | None:
    if not isinstance(params, GoalsFitParams):
        return None  # (another plugin's params: a manager that broadcasts asks every plugin)
    used = fitted_params(params, side_states)
    result: list[float] | None = goals.rankcraft_outcomes(used, side_states, home, match)
    return result


_explained = LastFactors()
"""The last update's new state and its factors, for :func:`rankcraft_explain`."""


def _step(
    params: GoalsFitParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> tuple[State, dict[str, float]]:
    """The ``goals`` step with the fitted globals of the state and its opponent; the new
    state carries the values the step used (``()``: the ruleset's)."""
    used = fitted_params(params, [state, pairings[0][0]]) if pairings else params
    after, factors = goals._step(used, state, pairings, games, side, match)
    carried = _globals_of(used) if used is not params else ()
    return (*after[:FITTED], carried), factors


@hookimpl
def rankcraft_update(
    params: GoalsFitParams,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
) -> State:
    return _explained.keep(*_step(params, state, pairings, games, side, match))


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
    """The ``goals`` plugin's factors (``expected_for``, ``expected_against``,
    ``learning_rate``), from the fitted globals."""
    kept = _explained.of(after)
    if kept is not None:
        return kept
    return _step(params, state, pairings, games, side, match)[1]


@hookimpl
def rankcraft_fit_start(params: GoalsFitParams) -> GoalsFit:
    return GoalsFit(
        params,
        xi=params.xi,
        prior_sd=params.prior_sd,
        cutoff=params.cutoff,
        fit_globals=params.fit_globals,
        relax=params.relax,
        goal_cap=params.goal_cap,
        global_sd=params.global_sd,
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
    stood, and return every team's fitted (attack, defence, rating, fitted globals)."""
    fit.tol, fit.max_sweeps = limits.tolerance, limits.iterations
    fit.window = limits.window_days or float("inf")
    field = params.context_field
    for match in matches:
        _, x, y = goals.goals_of(match, 0)
        context = context_of(params, context_text(match, field))  # (as the step reads it)
        a, b = (team[0] if len(team) == 1 else team for team in match.teams)
        fit.add(_day(match.played_at), a, b, x, y, match.home, context, match.weight)
    fit.fit(_day(now))
    # (fitted_params raises, naming the field, where a fitted value left the params' range)
    carried = _globals_of(fit.fitted_params()) if params.fit_globals else ()
    states: dict[str, State] = {}
    for name in fit.names:
        skill = fit.state(name)
        states[name] = (skill.attack, skill.defence, skill.attack + skill.defence, carried)
    return states


def _day(moment: datetime) -> float:
    """A UTC time's day number (days since 0001-01-01: the fit's time unit)."""
    return float(moment.date().toordinal())
