"""Shared arithmetic for the team plugins: averaging states by field role."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import attrs

from rankcraft import Pairing, State, field_of_role, pair_score

SPREAD_MODES: tuple[str, ...] = ("mean", "rms", "max")


_layouts: dict[type, tuple[str, str | None, tuple[str, ...]]] = {}


def layout(state_class: type) -> tuple[str, str | None, tuple[str, ...]]:
    """(location field, spread field or None, other float fields) of a state class."""
    known = _layouts.get(state_class)
    if known is not None:
        return known
    location = field_of_role(state_class, "location")
    if location is None:
        raise TypeError(f"{state_class.__name__} has no field with role 'location'")
    spread = field_of_role(state_class, "spread")
    others = tuple(
        f.name
        for f in attrs.fields(state_class)
        if f.name not in (location, spread) and f.type in (float, "float")
    )
    _layouts[state_class] = (location, spread, others)
    return _layouts[state_class]


def combine_spread(values: Sequence[float], mode: str) -> float:
    """A side's spread from its members': arithmetic mean, root-mean-square, or max."""
    if mode == "mean":
        return math.fsum(values) / len(values)
    if mode == "rms":
        return math.sqrt(math.fsum(v * v for v in values) / len(values))
    return max(values)


def mean_state(members: Sequence[State], spread_mode: str) -> State:
    """One state for a side: mean location, combined spread, mean of other float fields.

    A one-member side is that member, unchanged.
    """
    if len(members) == 1:
        return members[0]
    location, spread, others = layout(type(members[0]))
    n = len(members)
    changes: dict[str, Any] = {location: math.fsum(getattr(m, location) for m in members) / n}
    if spread is not None:
        changes[spread] = combine_spread([getattr(m, spread) for m in members], spread_mode)
    for name in others:
        changes[name] = math.fsum(getattr(m, name) for m in members) / n
    return attrs.evolve(members[0], **changes)


def shifted(state: State, location: str, value: float) -> State:
    """``state`` with its location field set to ``value``.

    The result is a virtual opponent handed to an update, never stored, so the state
    class's range validators are not run on it: a member far from their side's mean may
    meet an opponent shifted past the range a stored rating may hold (an evolve would
    refuse that match).
    """
    out = copy.copy(state)
    object.__setattr__(out, location, value)
    return out


def one_on_one(
    sides: Sequence[Sequence[State]], places: Sequence[int], weight: float
) -> list[list[list[Pairing]]] | None:
    """The pairings of two one-player sides (each player against the other, at the
    match's weight), which every team plugin gives a 1-v-1 alike; None for any other
    shape. The team plugins answer a 1-v-1 with it before their general case."""
    if len(sides) != 2:
        return None
    side_a, side_b = sides
    if len(side_a) != 1 or len(side_b) != 1:
        return None
    score = pair_score(places, 0, 1)
    return [[[Pairing(side_b[0], score, weight)]], [[Pairing(side_a[0], 1.0 - score, weight)]]]
