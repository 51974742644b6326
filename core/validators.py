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
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .errors import StateError

__all__ = [
    "RATING_LIMIT",
    "finite",
    "fraction",
    "interval",
    "limit",
    "meta_key",
    "non_negative",
    "pair",
    "positive",
    "state_within",
    "unit",
    "within",
]

RATING_LIMIT = 1e6
"""The largest magnitude of a rating (or anything measured in rating points) that a
bundled plugin accepts in params or state, and that its updates keep ratings within: a
million points is far beyond any real league, and keeps every sum, square and gap of the
formulas finite."""

Validator = Callable[[object, "attrs.Attribute[Any]", Any], None]


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


def _in_range(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and low <= value <= high


def within(low: float, high: float) -> Validator:
    """A params validator: a finite number in ``[low, high]``.

    >>> @attrs.frozen
    ... class P:
    ...     k: float = attrs.field(validator=within(0.001, 1e4))
    >>> P(1e308)
    Traceback (most recent call last):
    ValueError: 'k' must be a finite number in [0.001, 10000.0]: 1e+308
    """

    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not _in_range(value, low, high):
            raise ValueError(
                f"{attribute.name!r} must be a finite number in [{low!r}, {high!r}]: {value!r}"
            )

    return check


def whole(low: int, high: int) -> Validator:
    """A params validator: a whole number (an ``int``, not a ``bool``) in ``[low, high]``.

    >>> @attrs.frozen
    ... class P:
    ...     games: int = attrs.field(validator=whole(0, 100))
    >>> P(1.5)
    Traceback (most recent call last):
    ValueError: 'games' must be a whole number in [0, 100]: 1.5
    """

    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(
                f"{attribute.name!r} must be a whole number in [{low}, {high}]: {value!r}"
            )

    return check


def meta_key(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """A params validator: None (off), or the name of a key of a match's ``meta`` (e.g.
    ``atp_rank``): not empty, without spaces around it, and not a path from the top of the
    match (``meta.atp_rank``), which no key of ``meta`` is called, so it would never be read.

    >>> @attrs.frozen
    ... class P:
    ...     rank: str | None = attrs.field(default=None, validator=meta_key)
    >>> P("meta.rank")
    Traceback (most recent call last):
    ValueError: 'rank' names a key of the match's meta, not a path: 'meta.rank' (write 'rank')
    """
    if value is None:
        return
    if not isinstance(value, str) or not value or value != value.strip():
        raise ValueError(
            f"{attribute.name!r} must name a key of the match's meta (a string, not empty, "
            f"without spaces around it): {value!r}"
        )
    if value.startswith("meta."):
        raise ValueError(
            f"{attribute.name!r} names a key of the match's meta, not a path: {value!r} "
            f"(write {value.removeprefix('meta.')!r})"
        )


def state_within(low: float, high: float) -> Validator:
    """A state-field validator: a finite number in ``[low, high]``, else
    :class:`~rankcraft.StateError` (so an import, or a stored state, out of the physical
    range is refused with the field and the value; None passes, for optional fields).

    >>> @attrs.frozen
    ... class S:
    ...     rating: float = attrs.field(validator=state_within(-RATING_LIMIT, RATING_LIMIT))
    >>> S(1e308)
    Traceback (most recent call last):
    rankcraft.errors.StateError: 'rating' must be a finite number in [-1000000.0, 1000000.0]: 1e+308
    """

    bounded = math.isfinite(low) and math.isfinite(high)

    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        # (the common case first: a float between finite bounds is finite)
        if value is None or (bounded and type(value) is float and low <= value <= high):
            return
        if not _in_range(value, low, high):
            raise StateError(
                f"{attribute.name!r} must be a finite number in [{low!r}, {high!r}]: {value!r}"
            )

    return check


def limit(value: float, low: float, high: float) -> float:
    """``value`` clamped to ``[low, high]`` (``value`` itself when inside; NaN stays NaN,
    for the core to refuse as the plugin's error, naming the plugin, hook and match:
    clamped, a NaN from a bad pairing became the lower bound and was stored). Plugins
    keep their updated states inside the range their state class accepts with it.

    >>> limit(2.0, 0.0, 1.0), limit(-1.0, 0.0, 1.0), limit(float("nan"), 0.0, 1.0)
    (1.0, 0.0, nan)
    """
    if low <= value <= high:
        return value
    return high if value > high else low if value < low else value
