"""``regress`` reset plugin: pull every skill part of the way back to the mean.

Between seasons, FiveThirtyEight's NFL Elo moves every team a third of the way back to
the mean, so that last season counts less. This plugin does that for any skill plugin that
tags its ``location`` field: ``location' = target + (1 − fraction) · (location − target)``,
with ``target`` the league's mean location unless a value is given. It runs the reset
kinds its ``kinds`` param names (default ``["season"]``) and refuses any other before
changing anything, so that a typo (``rankcraft reset seson``) does not pull every player
to the mean; schedule it with ``[[resets]]``, e.g. every 365.2425 days from an
off-season date.

>>> import rankcraft
>>> league = rankcraft.League(rankcraft.loads_ruleset(
...     'extends = "elo"\\nname = "e"\\n[reset]\\nplugin = "regress"\\n'
...     '[reset.params]\\nfraction = 0.25\\ntarget = 1505.0\\n'))
>>> league.import_state({"players": [{"id": "a", "skill": {"rating": 1705.0, "peak": 1705.0}}]})
1
>>> league.reset("season"), league.player("a").skill.rating
(1, 1655.0)

In the ``decay`` slot it finds the off-season in the data instead of the calendar: a
player back after a long gap (at least ``after_periods`` rating periods; a period is a day
unless ``[period] length_days`` says otherwise) is pulled ``fraction`` of the way to
``target`` before the match, and a prediction made that far ahead sees the same. Whatever
the sport's calendar, a season's first match comes after the longest gap of the year.

>>> league = rankcraft.League(rankcraft.loads_ruleset(
...     'extends = "elo"\\nname = "e"\\n[decay]\\nplugin = "regress"\\n'
...     '[decay.params]\\nfraction = 0.5\\ntarget = 1500.0\\nafter_periods = 90.0\\n'))
>>> league.import_state({"players": [{"id": "a", "skill": {"rating": 1700.0, "peak": 1700.0},
...                                   "last_played": "2024-02-01"}]})
1
>>> [round(league.predict([["a"], ["b"]], at=day)[0], 3) for day in ("2024-03-01", "2024-09-01")]
[0.76, 0.64]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rankcraft import InputError, Needs, PlayerRecord, PlayerScope, State, field_of_role, hookimpl
from rankcraft.validators import RATING_LIMIT, unit, within

RANKCRAFT_CONTRACT = 2
"""The hook contract: the decay moves the ``location`` of a skill state in tuple form,
found by ``layout``; the season hooks get records (their states attrs instances)."""


@attrs.frozen(kw_only=True)
class RegressParams:
    """Params of ``regress`` (reset slot).

    Attributes:
        fraction: the share of the distance to the target removed, [0, 1] (default 1/3).
        target: the location to regress to, in the skill's units, |x| ≤ 1e6 (default: the
            league's mean location at the moment of the reset).
        kinds: the reset kinds this plugin runs, non-empty (default ``["season"]``).
    """

    fraction: float = attrs.field(default=1.0 / 3.0, validator=unit)
    target: float | None = attrs.field(default=None)
    kinds: tuple[str, ...] = attrs.field(default=("season",), converter=tuple)

    @kinds.validator
    def _check_kinds(self, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
        if not value or not all(isinstance(k, str) and k for k in value):
            raise ValueError(f"'kinds' must be a non-empty list of names: {list(value)!r}")

    @target.validator
    def _check_target(self, attribute: attrs.Attribute[float | None], value: float | None) -> None:
        if value is not None and not (math.isfinite(value) and abs(value) <= RATING_LIMIT):
            raise ValueError(
                f"'target' must be a finite number in [-{RATING_LIMIT!r}, {RATING_LIMIT!r}]: "
                f"{value!r}"
            )


@attrs.frozen(kw_only=True)
class IdleRegressParams:
    """Params of ``regress`` in the decay slot (the off-season found from the data).

    Attributes:
        fraction: the share of the distance to the target removed, [0, 1] (default 1/3).
        target: the location to regress to, in the skill's units, |x| ≤ 1e6 (default 1500).
        after_periods: the idle time, in rating periods, that counts as an off-season,
            [0, 1e6] (default 90: with one-day periods, three months without a match).
    """

    fraction: float = attrs.field(default=1.0 / 3.0, validator=unit)
    target: float = attrs.field(default=1500.0, validator=within(-RATING_LIMIT, RATING_LIMIT))
    after_periods: float = attrs.field(default=90.0, validator=within(0.0, 1e6))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    if slot == "decay":
        return IdleRegressParams
    return RegressParams if slot == "reset" else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(roles=("location",)) if slot in ("reset", "decay") else None


@hookimpl
def rankcraft_decay(
    params: IdleRegressParams, state: State, periods: float, layout: Mapping[str, int]
) -> State:
    if periods < params.after_periods or params.fraction == 0.0:
        return state
    at = layout["location"]
    moved = params.target + (1.0 - params.fraction) * (state[at] - params.target)
    return (*state[:at], moved, *state[at + 1 :])


@hookimpl
def rankcraft_reset_scope(params: RegressParams, kind: str) -> PlayerScope | None:
    """Regression moves every player not at the target (the target itself may be the
    league's mean): every player, unless ``fraction`` is 0 (then nobody moves)."""
    if kind in params.kinds and params.fraction == 0.0:
        return PlayerScope()
    return None


@hookimpl
def rankcraft_reset_kinds(params: RegressParams) -> tuple[str, ...]:
    return tuple(params.kinds)


@hookimpl
def rankcraft_reset(
    params: RegressParams, players: Sequence[PlayerRecord], kind: str
) -> list[PlayerRecord]:
    if kind not in params.kinds:
        raise InputError(
            f"regress has no {kind!r} reset (it runs "
            f"{', '.join(map(repr, params.kinds))}; set [reset.params] kinds)"
        )
    if not players:
        return []
    field = field_of_role(type(players[0].skill), "location")
    assert field is not None
    values = [getattr(p.skill, field) for p in players]
    target = params.target if params.target is not None else math.fsum(values) / len(values)
    keep = 1.0 - params.fraction
    return [
        attrs.evolve(p, skill=attrs.evolve(p.skill, **{field: target + keep * (v - target)}))
        for p, v in zip(players, values, strict=True)
    ]
