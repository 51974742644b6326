"""``inversus-rp`` rank plugin: INVERSUS Deluxe's Rank Points.

From "The Online Skill Ranking of INVERSUS Deluxe"; the readings taken where it is open
are in docs/decisions.md ("Readings of the published sources").

A player's *desired* RP is the lower end of their 99.7% skill interval, μ' − 3φ', mapped
linearly from the rating bounds [-6.045, 6.045] onto [0, 10000] and clamped. After a match
RP moves part of the way there (half, by default), but only up on a win and only down on a
loss, by at least 1 RP (unless that would pass the upper end of the interval, μ' + 3φ', or
10000) and at most 500 RP. A win against a stronger opponent adds an upset bonus of up to
250 RP (at a 12.09 gap between the pre-match centres), added after the 500 cap by default.
RP are real numbers (the write-up never makes them whole; rounding is for display).
Draws do not move RP (INVERSUS has none).

>>> params = InversusRpParams()
>>> round(params.to_points(0.0 - 3 * 2.015), 6), round(params.to_points(0.0), 1)
(0.0, 5000.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rankcraft import Needs, Pairing, PlayerContext, Scale, State, hookimpl, state_field
from rankcraft.validators import fraction, interval, pair, state_within, within

from .glicko2 import MU_LIMIT, PHI_RANGE, SCALE

RANKCRAFT_CONTRACT = 2
"""The hook contract: the rank state is a tuple ``(points, best_phi)`` in the rank hook,
the skill states ``before`` and ``after`` tuples read through ``layout``."""

POINTS, BEST_PHI = range(2)
"""Positions of :class:`InversusRp`'s fields in its tuple form."""

POINTS_LIMIT = 1e6
"""The largest RP (``max_points`` and every RP count up to it)."""
_points = within(0.0, POINTS_LIMIT)


def _mu_interval(
    instance: object, attribute: attrs.Attribute[Any], value: tuple[float, ...]
) -> None:
    interval(instance, attribute, value)
    if not all(-MU_LIMIT <= x <= MU_LIMIT for x in value):
        raise ValueError(
            f"{attribute.name!r} must lie within [-{MU_LIMIT!r}, {MU_LIMIT!r}]: {list(value)!r}"
        )


@attrs.frozen(kw_only=True)
class InversusRpParams:
    """Params of ``inversus-rp`` (rank slot). Skill values are on the Glicko-2 scale.

    Attributes:
        rating_range: [low, high] of μ mapped onto [0, ``max_points``] (default
            [-6.045, 6.045]).
        max_points: the top of the RP scale, in (0, 1e6] (default 10000).
        confidence: z of the skill interval, in (0, 100] (default 3.0: 99.7%).
        step_fraction: share of the way to the desired RP moved per match, (0, 1]
            (default 0.5).
        min_change: RP always gained on a win / lost on a loss, in [0, 1e6] (default 1).
        max_change: largest change from the step, in (0, 1e6] (default 500).
        upset_bonus: RP added for a win at the largest centre gap, in [0, 1e6] (default
            250).
        upset_gap: the centre gap (μ units) that earns the whole bonus, in [1e-6, 1e4]
            (default 12.09).
        bonus_after_cap: add the bonus after the ``max_change`` cap (default true,
            the write-up's "extra" boost: a win can move up to 750); false puts it
            inside the cap.
        deviation_speed: the write-up's untested idea: scale the step by certainty,
            ``step_fraction · (φ_max − φ') / (φ_max − φ_min)`` (default false).
        deviation_range: [φ_min, φ_max] for ``deviation_speed`` (default [0.175, 2.015]).
        tightest_deviation: the write-up's other untested idea: the desired RP uses the tightest φ
            the player has ever reached instead of the current φ' (default false).
    """

    rating_range: tuple[float, ...] = attrs.field(
        default=(-6.045, 6.045), converter=pair, validator=_mu_interval
    )
    max_points: float = attrs.field(default=10000.0, validator=within(1e-6, POINTS_LIMIT))
    confidence: float = attrs.field(default=3.0, validator=within(1e-6, 100.0))
    step_fraction: float = attrs.field(default=0.5, validator=fraction)
    min_change: float = attrs.field(default=1.0, validator=_points)
    max_change: float = attrs.field(default=500.0, validator=within(1e-6, POINTS_LIMIT))
    upset_bonus: float = attrs.field(default=250.0, validator=_points)
    upset_gap: float = attrs.field(default=12.09, validator=within(1e-6, 1e4))
    bonus_after_cap: bool = True
    deviation_speed: bool = False
    deviation_range: tuple[float, ...] = attrs.field(
        default=(0.175, 2.015), converter=pair, validator=_mu_interval
    )
    tightest_deviation: bool = False

    def to_points(self, value: float) -> float:
        """Map a μ-scale value onto RP, clamped to [0, max_points]."""
        low, high = self.rating_range
        points = (value - low) / (high - low) * self.max_points
        return min(max(points, 0.0), self.max_points)


@attrs.frozen(slots=True)
class InversusRp:
    """A player's Rank Points.

    Attributes:
        points: RP in [0, 10000] (``max_points``; at most 1e6), a real number (role
            ``location``).
        best_phi: the tightest φ reached so far (kept for ``tightest_deviation``), or None;
            a φ in glicko2's ``PHI_RANGE`` (shown as ``best_RD``, SCALE·φ).
    """

    points: float = state_field(role="location", validator=state_within(0.0, POINTS_LIMIT))
    best_phi: float | None = state_field(
        default=None, shown=Scale("best_RD", SCALE), validator=state_within(*PHI_RANGE)
    )


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return InversusRpParams if slot == "rank" else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(fields=("mu", "phi")) if slot == "rank" else None


@hookimpl
def rankcraft_initial(slot: str) -> InversusRp:
    return InversusRp(0.0)


def rp_change(
    params: InversusRpParams,
    points: float,
    won: bool,
    mu: float,
    phi: float,
    gap: float,
    factors: dict[str, float] | None = None,
) -> float:
    """New RP after a win (``won``) or a loss, from the post-match μ', φ' and the pre-match
    centre gap (opponent μ − own μ). Writes each part into ``factors`` when given (the
    report's factors: target, minimum, cap, step, bonus)."""
    if factors is None:
        factors = {}
    z = params.confidence
    target = params.to_points(mu - z * phi)
    fraction = params.step_fraction
    if params.deviation_speed:
        low, high = params.deviation_range
        fraction *= min(max((high - phi) / (high - low), 0.0), 1.0)
    step = (target - points) * fraction
    factors["target"] = target
    if won:
        ceiling = min(params.to_points(mu + z * phi), params.max_points)
        least = min(max(ceiling - points, 0.0), params.min_change)
        change = max(step, least)
        if least > 0 and least > step:
            factors["minimum"] = least
    else:
        least = min(max(points, 0.0), params.min_change)
        change = min(step, -least)
        if least > 0 and -least < step:
            factors["minimum"] = -least
    if abs(change) > params.max_change:
        change = math.copysign(params.max_change, change)
        factors["cap"] = change
    factors["step"] = step
    if won and gap > 0 and params.upset_bonus > 0:
        bonus = min(params.upset_bonus * gap / params.upset_gap, params.upset_bonus)
        if params.bonus_after_cap:
            change += bonus
        else:
            change = min(change + bonus, params.max_change)
        factors["bonus"] = bonus
    return min(max(points + change, 0.0), params.max_points)


@hookimpl
def rankcraft_rank(
    params: InversusRpParams,
    rank_state: State,
    before: State,
    after: State,
    pairings: Sequence[Pairing],
    score: float,
    context: PlayerContext,
    layout: Mapping[str, int],
) -> State:
    """RP after the match, from the skill's ``mu`` and ``phi`` (found by ``layout``); the
    parts of the change (:func:`rp_change`) are explained in the report (``context``)."""
    at_mu, at_phi = layout["mu"], layout["phi"]
    mu, phi = after[at_mu], after[at_phi]
    best = rank_state[BEST_PHI]
    best = phi if best is None else min(best, phi)
    if score not in (0.0, 1.0):
        return (rank_state[POINTS], best)  # draws do not move RP (INVERSUS has none)
    used_phi = best if params.tightest_deviation else phi
    opponents = [p[0][at_mu] for p in pairings] or [before[at_mu]]
    gap = math.fsum(opponents) / len(opponents) - before[at_mu]
    won = score == 1.0
    points = rp_change(params, rank_state[POINTS], won, mu, used_phi, gap, context.factors)
    return (points, best)
