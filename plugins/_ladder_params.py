"""The ``ladder`` plugin's params: its tiers, placement and soft-reset rules, and the
steps the ladder is built of (``LadderParams``, which ``rankcraft.plugins.ladder``
exports with the rank state and the hooks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from rankcraft.suggest import did_you_mean
from rankcraft.validators import RATING_LIMIT, interval, pair, within

POINTS_LIMIT = 1_000_000
"""The most points a player holds on the top step (whole points)."""
SCORE_LIMIT = 1_000_000_000
"""The largest ladder position (``score``)."""
_ge0 = attrs.validators.ge(0)
_amount = within(0.0, 1e4)

_ROMAN = (
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)


def roman(number: int) -> str:
    """``number`` (1 to 20) in Roman numerals, as divisions are shown (``roman(4)`` is IV)."""
    out = ""
    for value, letters in _ROMAN:
        while number >= value:
            out += letters
            number -= value
    return out


def _name(instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value.strip() or len(value) > 100:
        raise ValueError(
            f"{attribute.name!r} must be a non-empty name of at most 100 characters: {value!r}"
        )


def _best_of(instance: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if not (value == 0 or (1 <= value <= 99 and value % 2 == 1)):
        raise ValueError(
            f"{attribute.name!r} must be 0 (no series) or an odd best-of from 1 to 99: {value!r}"
        )


@attrs.frozen(kw_only=True)
class Tier:
    """One tier of the ladder (a ``[[rank.params.tiers]]`` table), listed bottom first.

    Attributes:
        name: shown name, non-empty, unique in the ladder.
        divisions: divisions in the tier, 1 to 20 (default 1: no division shown); shown as
            Roman numerals from the lowest (IV of 4) to I.
        series: best-of-N promotion series to enter the tier, odd, 1 to 99, or 0 for none
            (default 0).
        division_series: best-of-N series between the tier's own divisions (default 0).
        floor: a floor at the tier's bottom: a player in the tier is never demoted out of
            it by a loss (default false; resets and decay still move them).
    """

    name: str = attrs.field(validator=_name)
    divisions: int = attrs.field(
        default=1, validator=[attrs.validators.ge(1), attrs.validators.le(20)]
    )
    series: int = attrs.field(default=0, validator=_best_of)
    division_series: int = attrs.field(default=0, validator=_best_of)
    floor: bool = False


@attrs.frozen(kw_only=True)
class Placement:
    """A ``[[rank.params.placement]]`` rule: players whose skill rating (the skill state's
    ``location`` field) is at least ``rating_at_least`` (|x| ≤ 1e6) are placed in ``tier``,
    division ``division`` (0, the default: the tier's lowest division)."""

    rating_at_least: float = attrs.field(validator=within(-RATING_LIMIT, RATING_LIMIT))
    tier: str = attrs.field(validator=_name)
    division: int = attrs.field(default=0, validator=[_ge0, attrs.validators.le(20)])


@attrs.frozen(kw_only=True)
class SoftMap:
    """A ``[[rank.params.soft_map]]`` rule of the soft reset: players in ``tier`` go to
    ``to``, division ``division`` (0, the default: the lowest), never higher than they
    were."""

    tier: str = attrs.field(validator=_name)
    to: str = attrs.field(validator=_name)
    division: int = attrs.field(default=0, validator=[_ge0, attrs.validators.le(20)])


DEFAULT_TIERS = (
    Tier(name="Bronze", divisions=4),
    Tier(name="Silver", divisions=4),
    Tier(name="Gold", divisions=4),
    Tier(name="Platinum", divisions=4),
    Tier(name="Diamond", divisions=4),
    Tier(name="Master"),
)


def _tiers(value: Sequence[Tier]) -> tuple[Tier, ...]:
    return tuple(value)


def _sorted_placement(value: Sequence[Placement]) -> tuple[Placement, ...]:
    return tuple(sorted(value, key=lambda p: -p.rating_at_least))


def _rules(value: Sequence[SoftMap]) -> tuple[SoftMap, ...]:
    return tuple(value)


def _optional_points(instance: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and not 0 <= value <= 100_000:
        raise ValueError(f"{attribute.name!r} must be whole points in [0, 100000]: {value!r}")


_points_param = [_ge0, attrs.validators.le(100_000)]


def _rating_interval(
    instance: object, attribute: attrs.Attribute[Any], value: tuple[float, ...]
) -> None:
    interval(instance, attribute, value)
    if not all(abs(x) <= RATING_LIMIT for x in value):
        raise ValueError(f"{attribute.name!r} must lie within +-{RATING_LIMIT!r}: {list(value)!r}")


@attrs.frozen(kw_only=True, slots=False)
class LadderParams:
    """Params of ``ladder`` (the rank slot; the reset slot reads the same table).

    Attributes:
        tiers: the tiers, bottom first, at least one (default Bronze, Silver, Gold,
            Platinum, Diamond of 4 divisions, then Master).
        points_per_division: points from a division's bottom to the next, 1 to 100000
            (default 100).
        win_points, loss_points: points won on a win, lost on a loss, at an even match
            (expectation ½) or unscaled, each in [0, 1e4] (default 20, 20).
        draw_points: points added on a draw, in [-1e4, 1e4] (default 0).
        scale: ``"none"`` (default) or ``"expectation"``: scale by 2(s − E) (an upset wins
            more, an expected win less).
        min_gain, max_gain: bounds of a win's gain, in [0, 1e4], min ≤ max (default 0, 1e4).
        min_loss, max_loss: bounds of a loss's cost, in [0, 1e4], min ≤ max (default 0, 1e4).
        pull: points added per division between the player's step and the step their
            skill rating points to, in [0, 1e3] (default 0: none); it draws the visible rank
            towards the skill (a player ranked below their skill gains more and loses less).
        pull_range: [low, high] skill ratings mapped linearly onto the ladder's bottom and
            top steps for ``pull`` (default [1000, 2000]; |x| ≤ 1e6).
        placement_matches: matches without a visible rank before placement, 0 to 1000
            (default 0: new players start on the bottom step).
        placement: the rules placing a player after the last placement match (the
            highest ``rating_at_least`` reached applies; no rule: the bottom step).
        provisional_matches: ``provisional`` is shown until this many matches, 0 to 1e6
            (default 0).
        provisional_multiplier: points changes are multiplied by this while provisional,
            in [0, 100] (default 1).
        grace_games: matches after a promotion in which a loss cannot demote, 0 to 1000
            (default 0).
        demotion_points: points after a demotion, in [0, points_per_division); left out
            (the default): the deficit is carried (80 points on a 20-point loss from 0).
        series_fail_points: points after a lost promotion series, in [0,
            points_per_division) (default 0).
        decay_from: the lowest tier that decays ("": no decay, the default).
        decay_points: points lost per idle ``"decay"`` event, 0 to 100000 (default 0).
        decay_grace: idle ``"decay"`` events before decay starts, 0 to 1000 (default 0).
        soft_drop: steps (divisions) a ``"soft"`` reset drops, 0 to 1000 (default 0).
        soft_map: per-tier targets of the soft reset (they take precedence over
            ``soft_drop``); a target above the tier's own top step is refused.
        soft_points: points after a soft reset that moved the player, in [0,
            points_per_division) (default 0).
        title, title_top, title_from: the standings title given to the best
            ``title_top`` (≥ 1, default 200) players in tier ``title_from`` (default the
            top tier) or above, by ladder position, ties by id; "" (default): no title.
        unranked: the tier shown during placement (default "Unranked"; not a tier name).
    """

    tiers: tuple[Tier, ...] = attrs.field(default=DEFAULT_TIERS, converter=_tiers)
    points_per_division: int = attrs.field(
        default=100, validator=[attrs.validators.ge(1), attrs.validators.le(100_000)]
    )
    win_points: float = attrs.field(default=20.0, validator=_amount)
    loss_points: float = attrs.field(default=20.0, validator=_amount)
    draw_points: float = attrs.field(default=0.0, validator=within(-1e4, 1e4))
    scale: str = attrs.field(
        default="none", validator=attrs.validators.in_(("none", "expectation"))
    )
    min_gain: float = attrs.field(default=0.0, validator=_amount)
    max_gain: float = attrs.field(default=1e4, validator=_amount)
    min_loss: float = attrs.field(default=0.0, validator=_amount)
    max_loss: float = attrs.field(default=1e4, validator=_amount)
    pull: float = attrs.field(default=0.0, validator=within(0.0, 1e3))
    pull_range: tuple[float, ...] = attrs.field(
        default=(1000.0, 2000.0), converter=pair, validator=_rating_interval
    )
    placement_matches: int = attrs.field(default=0, validator=[_ge0, attrs.validators.le(1000)])
    placement: tuple[Placement, ...] = attrs.field(default=(), converter=_sorted_placement)
    provisional_matches: int = attrs.field(
        default=0, validator=[_ge0, attrs.validators.le(1_000_000)]
    )
    provisional_multiplier: float = attrs.field(default=1.0, validator=within(0.0, 100.0))
    grace_games: int = attrs.field(default=0, validator=[_ge0, attrs.validators.le(1000)])
    demotion_points: int | None = attrs.field(default=None, validator=_optional_points)
    series_fail_points: int = attrs.field(default=0, validator=_points_param)
    decay_from: str = ""
    decay_points: int = attrs.field(default=0, validator=_points_param)
    decay_grace: int = attrs.field(default=0, validator=[_ge0, attrs.validators.le(1000)])
    soft_drop: int = attrs.field(default=0, validator=[_ge0, attrs.validators.le(1000)])
    soft_map: tuple[SoftMap, ...] = attrs.field(default=(), converter=_rules)
    soft_points: int = attrs.field(default=0, validator=_points_param)
    title: str = ""
    title_top: int = attrs.field(
        default=200, validator=[attrs.validators.ge(1), attrs.validators.le(1_000_000)]
    )
    title_from: str = ""
    unranked: str = attrs.field(default="Unranked", validator=_name)

    def __attrs_post_init__(self) -> None:
        self._check_fields()
        # the steps, bottom first: (tier index, division shown; 0 when the tier has one)
        steps: list[tuple[int, int]] = []
        first: list[int] = []
        for t, tier in enumerate(self.tiers):
            first.append(len(steps))
            for k in range(tier.divisions):
                steps.append((t, tier.divisions - k if tier.divisions > 1 else 0))
        top = len(steps) - 1
        ppd = self.points_per_division
        if (top + 1) * (ppd + 1) + POINTS_LIMIT > SCORE_LIMIT:
            raise ValueError(
                f"'points_per_division' times the ladder's {top + 1} steps must stay below "
                f"{SCORE_LIMIT - POINTS_LIMIT}: {ppd!r}"
            )
        # best-of-N to reach each step (0: none), and the floors
        series = [0] * len(steps)
        floors = [False] * len(steps)
        for s, (t, _) in enumerate(steps):
            tier = self.tiers[t]
            series[s] = tier.series if s == first[t] else tier.division_series
            floors[s] = tier.floor and s == first[t]
        series[0] = 0
        object.__setattr__(self, "steps", tuple(steps))
        object.__setattr__(self, "first", tuple(first))
        object.__setattr__(self, "top", top)
        object.__setattr__(self, "series_at", tuple(series))
        object.__setattr__(self, "floor_at", tuple(floors))
        self._set_rule_steps()

    def _check_fields(self) -> None:
        """The checks across fields: tier names, the bounds' order, points below a
        division's."""
        if not self.tiers:
            raise ValueError("'tiers' must list at least one tier: []")
        names = [t.name for t in self.tiers]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"'tiers' names each tier once: {name!r} appears twice")
        if self.unranked in names:
            raise ValueError(f"'unranked' must not be a tier's name: {self.unranked!r}")
        for low, high in (("min_gain", "max_gain"), ("min_loss", "max_loss")):
            if getattr(self, low) > getattr(self, high):
                raise ValueError(
                    f"{low!r} must be <= {high!r} ({getattr(self, high)!r}): {getattr(self, low)!r}"
                )
        ppd = self.points_per_division
        for field in ("demotion_points", "series_fail_points", "soft_points"):
            value = getattr(self, field)
            if value is not None and value >= ppd:
                raise ValueError(
                    f"{field!r} must be below 'points_per_division' ({ppd}): {value!r}"
                )

    def _step_of(self, field: str, tier: str, division: int) -> int:
        """The step of ``tier``'s ``division`` (0: the tier's lowest) that ``field``
        names (after ``steps`` and ``first`` are set)."""
        names = [t.name for t in self.tiers]
        if tier not in names:
            raise ValueError(
                f"{field!r} must name a tier of the ladder ({', '.join(names)}): {tier!r}"
                f"{did_you_mean(tier, names)}"
            )
        t = names.index(tier)
        count = self.tiers[t].divisions
        if division > count:
            raise ValueError(f"{field!r}: tier {tier!r} has {count} division(s), not {division!r}")
        return self.first[t] if division == 0 else self.first[t] + count - division

    def _set_rule_steps(self) -> None:
        """The steps the rules name: ``placement_steps``, ``soft_steps``, ``decay_step``
        and ``title_step``."""
        placement = tuple(
            (p.rating_at_least, self._step_of("placement", p.tier, p.division))
            for p in self.placement
        )
        soft: dict[int, int] = {}
        for rule in self.soft_map:
            target = self._step_of("soft_map", rule.to, rule.division)
            source = self._step_of("soft_map", rule.tier, 0)
            last = source + self.tiers[self.steps[source][0]].divisions - 1
            if target > last:
                raise ValueError(
                    f"'soft_map' would raise tier {rule.tier!r} to {rule.to!r}: a reset never "
                    "raises anyone"
                )
            if source in soft:
                raise ValueError(f"'soft_map' maps tier {rule.tier!r} twice")
            soft[source] = target
        decay_step = self._step_of("decay_from", self.decay_from, 0) if self.decay_from else -1
        title_step = (
            self._step_of("title_from", self.title_from, 0) if self.title_from else self.first[-1]
        )
        object.__setattr__(self, "placement_steps", placement)
        soft_steps = {}
        for source, target in soft.items():
            for s in range(source, source + self.tiers[self.steps[source][0]].divisions):
                soft_steps[s] = min(target, s)
        object.__setattr__(self, "soft_steps", soft_steps)
        object.__setattr__(self, "decay_step", decay_step)
        object.__setattr__(self, "title_step", title_step)

    # derived from the fields when the params are built (not fields: never written back)
    steps: tuple[tuple[int, int], ...] = attrs.field(init=False, eq=False, repr=False)
    first: tuple[int, ...] = attrs.field(init=False, eq=False, repr=False)
    top: int = attrs.field(init=False, eq=False, repr=False)
    series_at: tuple[int, ...] = attrs.field(init=False, eq=False, repr=False)
    floor_at: tuple[bool, ...] = attrs.field(init=False, eq=False, repr=False)
    placement_steps: tuple[tuple[float, int], ...] = attrs.field(init=False, eq=False, repr=False)
    soft_steps: dict[int, int] = attrs.field(init=False, eq=False, repr=False)
    decay_step: int = attrs.field(init=False, eq=False, repr=False)
    title_step: int = attrs.field(init=False, eq=False, repr=False)

    def label(self, step: int) -> str:
        """The shown name of a step ("Gold II", "Master"; ``unranked`` for -1)."""
        if step < 0:
            return self.unranked
        t, division = self.steps[step]
        name = self.tiers[t].name
        return f"{name} {roman(division)}" if division else name

    def in_series(self, step: int, points: int) -> bool:
        """Whether a player at ``step`` with ``points`` plays a promotion series."""
        return (
            0 <= step < self.top
            and points >= self.points_per_division
            and self.series_at[step + 1] > 0
        )
