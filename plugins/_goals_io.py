"""The time-weighted Dixon-Coles fit (:class:`rankcraft.plugins._goals_fit.GoalsFit`) as
JSON-able data and back, exactly (the ``goals_fit`` plugin's ``rankcraft_fit_dump`` and
``rankcraft_fit_load``): what the fit holds between refits, its settings aside (those
come from the params it is made with)."""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from ._goals_fit import GoalsFit
from ._goals_terms import members

__all__ = ["FORMAT", "dump", "load"]

FORMAT = "rankcraft goals fit 1"


def dump(fit: GoalsFit) -> dict[str, Any]:
    """``fit``'s state: the globals, every team's attack and defence, the matches kept (a
    line-up as a list), their weights, the window's start and the fit's clocks."""
    return {
        "format": FORMAT,
        "globals": [fit.base, fit.rho, list(fit.home)],
        "teams": [list(fit.names), list(fit.attack), list(fit.defence)],
        "matches": [
            [t, _side(a), _side(b), x, y, home, c] for t, a, b, x, y, home, c in fit.matches
        ],
        "own_weight": list(fit.own_weight),
        "weights": list(fit.weights),
        "start": fit.start,
        "now": _finite(fit.now),
        "dirty": sorted(fit.dirty),
    }


def load(fit: GoalsFit, data: dict[str, Any]) -> GoalsFit:
    """``fit`` (new, made with the params the dumped one had) given the dumped state.
    :raises ValueError: data of another format or shape."""
    if data.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} snapshot: {data.get('format')!r}")
    fit.base, fit.rho, home = data["globals"]
    if len(home) != len(fit.home):
        raise ValueError(f"the snapshot has {len(home)} home advantages, the params another")
    fit.home = [float(h) for h in home]
    names, attack, defence = data["teams"]
    fit.names, fit.attack, fit.defence = list(names), list(attack), list(defence)
    fit.index = {name: k for k, name in enumerate(names)}
    fit.matches = [
        (t, a if isinstance(a, int) else tuple(a), b if isinstance(b, int) else tuple(b),
         x, y, home_side, context)
        for t, a, b, x, y, home_side, context in data["matches"]
    ]  # fmt: skip
    fit.own_weight, fit.weights = list(data["own_weight"]), list(data["weights"])
    fit.start = int(data["start"])
    fit.now = -math.inf if data["now"] is None else data["now"]
    fit.dirty = set(data["dirty"])
    fit.of_team = [deque() for _ in names]
    for m in range(fit.start, len(fit.matches)):  # (each team's window, in match order)
        _, a, b, *_ = fit.matches[m]
        for k in members(a) + members(b):
            fit.of_team[k].append(m)
    return fit


def _side(side: Any) -> Any:
    return side if side.__class__ is int else list(members(side))


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value
