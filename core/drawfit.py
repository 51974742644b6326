"""Draw parameters fitted, not guessed: the first step of a replay, an evaluation or a
tuning trial when the ruleset asks for it (docs/forecasts.md#draw-parameters-fitted-on-the-warm-up).

A ruleset asks with its expectation plugin's ``draw_fit`` param (the ``elo`` plugin:
``"overall"`` or ``"context"``). The warm-up matches (those before the scored part) are
replayed in a league of the ruleset, each two-sided match's three-way forecast taken
before it is recorded; the params' ``fit_draws`` method then chooses the draw model's
parameters that make those outcomes most likely. The ratings depend on the draw
parameters (the expected score is P(win) + ½ P(draw)), so when the first fit moved a
value by more than ``SETTLED`` (relative) the warm-up is replayed once more with the
fitted values and fitted again. The result is the ruleset with the fitted values, which
a replay then uses from its first match: the fit is a ruleset transformation, so the
fitted ruleset, written out (``tune --out``), replays the same.

>>> import rankcraft
>>> from rankcraft.drawfit import fit_draws
>>> ruleset = rankcraft.loads_ruleset(
...     'name = "d"\\n[update]\\nplugin = "elo"\\n[update.params]\\n'
...     'draw = "davidson"\\ndraw_kappa = 0.1\\ndraw_fit = "overall"\\n'
... )
>>> history = [{"id": f"m{i}", "played_at": f"2024-01-{1 + i // 3:02d}",
...             "teams": [[f"p{i % 7}"], [f"p{(i + 3) % 7}"]],
...             "scores": [1, 1] if i % 3 == 0 else [i % 2, 1 - i % 2]} for i in range(84)]
>>> fitted, report = fit_draws(ruleset, history, before="2024-02-01")
>>> report.matches, report.draws, round(report.values["draw_kappa"], 2)
(84, 28, 3.61)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import attrs

from .errors import MatchError
from .io import parse_match, parse_time
from .model import Match
from .ruleset import Ruleset
from .scores import DrawFit, outcome_of
from .scratch import scratch_league

SETTLED = 0.05
"""A fit whose values moved less than this (relative) from the ruleset's is not redone."""
ROUNDS = 2
"""The most replays of the warm-up a fit makes."""


def _slot(ruleset: Ruleset) -> str | None:
    """The slot whose params ask for a draw fit, or None."""
    name = "expectation" if ruleset.expectation is not None else "update"
    params = getattr(ruleset, name).params
    wanted = getattr(params, "draw_fit", "none") not in ("none", None, False)
    return name if wanted and callable(getattr(params, "fit_draws", None)) else None


def wants_fit(ruleset: Ruleset) -> bool:
    """Whether ``ruleset`` asks for its draw parameters to be fitted."""
    return _slot(ruleset) is not None


def fitted_names(ruleset: Ruleset) -> tuple[str, ...]:
    """The param names a draw fit of ``ruleset`` sets (the params' ``DRAW_FITTED``), or
    none when it asks for no fit: searching them (``tune --param``) would be undone."""
    slot = _slot(ruleset)
    if slot is None:
        return ()
    return tuple(getattr(getattr(ruleset, slot).params, "DRAW_FITTED", ()))


def fit_draws(
    ruleset: Ruleset,
    matches: Iterable[Match | Mapping[str, Any]],
    *,
    before: str | datetime,
) -> tuple[Ruleset, DrawFit | None]:
    """``ruleset`` with its draw parameters fitted on the ``matches`` played before
    ``before`` (an ISO-8601 time or a datetime), and the report; the ruleset unchanged
    and None when it asks for no fit or no two-sided warm-up match has a forecast.

    Reads ``matches`` only up to the first match at or after ``before``.
    """
    slot = _slot(ruleset)
    if slot is None:
        return ruleset, None
    cutoff = before if isinstance(before, datetime) else parse_time(before, field="before")
    warm = _warmup(matches, cutoff)
    current, report = ruleset, None
    for round_number in range(1, ROUNDS + 1):
        seen = _forecasts(current, warm)
        if not seen:
            return ruleset, None
        spec = getattr(current, slot)
        params, values = spec.params.fit_draws(seen)
        before_values = _values(spec.params, values)
        current = attrs.evolve(current, **{slot: attrs.evolve(spec, params=params)})
        report = DrawFit(
            slot=slot,
            values=values,
            matches=len(seen),
            draws=sum(1 for *_, o, _m in seen if o == 1),
            rounds=round_number,
            before=cutoff.isoformat(),
        )
        if all(
            abs(values[k] - old) <= SETTLED * max(abs(old), 1e-9)
            for k, old in before_values.items()
        ):
            break
    return current, report


def _warmup(matches: Iterable[Match | Mapping[str, Any]], cutoff: datetime) -> list[Match]:
    """The matches played before ``cutoff``, parsed (read up to the first one after)."""
    warm: list[Match] = []
    for position, item in enumerate(matches):
        try:
            match = item if isinstance(item, Match) else parse_match(item)
        except MatchError as exc:
            raise _at(exc, position) from None
        if match.played_at >= cutoff:
            break
        warm.append(match)
    return warm


def _forecasts(
    ruleset: Ruleset, warm: list[Match]
) -> list[tuple[float, float, float, int, Match | None]]:
    """The warm-up replayed in a league of ``ruleset``: each two-sided match's three-way
    forecast, taken before it is recorded, with its outcome."""
    league = scratch_league(ruleset)
    model = league.skill_model
    seen: list[tuple[float, float, float, int, Match | None]] = []

    def observe(match: Match, rows: Callable[[str], Any]) -> None:
        if len(match.teams) == 2:
            forecast = model.meeting(match, rows)
            if forecast.win is not None and forecast.draw is not None:
                w, d, l_ = forecast.win[0], forecast.draw, forecast.win[1]
                seen.append((w, d, l_, outcome_of(match), match))

    league.stream(warm, observe=observe)
    return seen


def _values(params: Any, values: Mapping[str, float]) -> dict[str, float]:
    """The values the params had at the fitted names (a context rule without its own:
    the params' shared value)."""
    out = {}
    for name in values:
        *path, key = name.split(".")
        target = params
        for step in path:
            target = target[int(step)] if step.isdigit() else getattr(target, step)
        value = getattr(target, key)
        out[name] = float(getattr(params, key) if value is None else value)
    return out


def _at(exc: MatchError, position: int) -> MatchError:
    """``exc`` with the 0-based position of its match among those read (``item``), as
    :meth:`rankcraft.League.record_many` gives it, so a caller reading a file can name
    the line."""
    if exc.item is None:
        exc.item = position
    return exc
