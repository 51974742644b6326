"""attrs validators for params classes: every number finite, ranges named in the message.

Plugin authors use them like rankcraft's own plugins do::

    @attrs.frozen(kw_only=True)
    class MyParams:
        step: float = attrs.field(default=8.0, validator=positive)

>>> import attrs
>>> @attrs.frozen
... class P:
...     k: float = attrs.field(validator=positive)
>>> P(-1.0)
Traceback (most recent call last):
ValueError: 'k' must be a finite number > 0: -1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = ["finite", "fraction", "interval", "non_negative", "pair", "positive", "unit"]


def finite(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    """Refuse NaN and infinity."""
    if not math.isfinite(value):
        raise ValueError(f"{attribute.name!r} must be a finite number: {value!r}")


def positive(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    """A finite number > 0."""
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name!r} must be a finite number > 0: {value!r}")


def non_negative(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    """A finite number ≥ 0."""
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{attribute.name!r} must be a finite number >= 0: {value!r}")


def unit(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    """A number in [0, 1]."""
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise ValueError(f"{attribute.name!r} must be in [0, 1]: {value!r}")


def fraction(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    """A number in (0, 1]."""
    if not (math.isfinite(value) and 0 < value <= 1):
        raise ValueError(f"{attribute.name!r} must be in (0, 1]: {value!r}")


def interval(instance: object, attribute: attrs.Attribute[Any], value: tuple[float, ...]) -> None:
    """``[low, high]`` with finite low < high."""
    if len(value) != 2 or not all(math.isfinite(x) for x in value) or value[0] >= value[1]:
        raise ValueError(
            f"{attribute.name!r} must be [low, high] with finite low < high: {list(value)!r}"
        )


def pair(value: Sequence[float]) -> tuple[float, ...]:
    """attrs converter: a TOML list to a tuple (validate it with ``interval``)."""
    return tuple(value)
