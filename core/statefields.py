"""State fields: the role a plugin's state field plays (``location``, ``spread``), the
scale players see it on, and the names of a tuple field's items (:func:`state_field`),
read back by team and rank plugins, leaderboards and displays."""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs

Role = Literal["location", "spread"]
_ROLE_KEY = "rankcraft.role"


_SHOWN_KEY = "rankcraft.shown"
_ITEMS_KEY = "rankcraft.items"


def _positive_factor(instance: Scale, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"'factor' must be a finite number > 0: {value!r}")


def _finite_offset(instance: Scale, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value)):
        raise ValueError(f"'offset' must be a finite number: {value!r}")


@attrs.frozen
class Scale:
    """The scale players see a state field on (``state_field(shown=...)``), when the
    plugin keeps it on an internal one: Glicko-2 keeps μ and φ and shows Glickman's
    rating ``1500 + 173.7178 μ`` and RD ``173.7178 φ``. Leaderboards, player views, the
    page and the lab show the field as ``name``, ``offset + factor * value``; exports
    and the per-match hooks keep the state as it is.

    Attributes:
        name: what players see the field as (``"rating"``).
        factor: the shown units per state unit, a finite number > 0 (default 1).
        offset: added after the factor, a finite number (default 0); 0 for a ``spread``
            field (a spread scales, it does not shift).

    >>> Scale("rating", 400.0, 1500.0)(0.5)
    1700.0
    """

    name: str
    factor: float = attrs.field(default=1.0, validator=_positive_factor)
    offset: float = attrs.field(default=0.0, validator=_finite_offset)

    def __call__(self, value: float) -> float:
        return self.offset + self.factor * value

    @property
    def plain(self) -> bool:
        """Whether the value is shown as it is kept (factor 1, offset 0)."""
        return (self.factor, self.offset) == (1.0, 0.0)

    def of(self, field: str) -> str:
        """How the value is computed from ``field`` (``field`` itself on its own scale)."""
        if self.plain:
            return field
        term = f"{self.factor!r}*{field}"
        return f"({self.offset!r}+{term})" if self.offset else f"({term})"


def state_field(
    *,
    role: Role | None = None,
    shown: Scale | None = None,
    items: tuple[str, ...] = (),
    default: Any = attrs.NOTHING,
    **kwargs: Any,
) -> Any:
    """An ``attrs.field`` for a plugin state class, tagged with its role and, for a
    field kept on an internal scale, the :class:`Scale` players see it on. A tuple field's
    ``items`` name its first items where a player reads them (:func:`item_names`; the
    items past them go unnamed).

    Team and rank plugins work with states they do not know by reading roles: the
    ``location`` field is the skill estimate (Elo ``rating``, Glicko-2 ``mu``), the
    ``spread`` field its uncertainty (``deviation``, ``phi``). A state class has at most
    one field of each role.

    >>> import attrs
    >>> @attrs.frozen
    ... class S:
    ...     rating: float = state_field(role="location")
    ...     mu: float = state_field(shown=Scale("points", 100.0), default=0.25)
    >>> field_of_role(S, "location"), shown_state(S(1500.0))
    ('rating', [('rating', 1500.0), ('points', 25.0)])
    """
    metadata = dict(kwargs.pop("metadata", {}) or {})
    if role is not None:
        metadata[_ROLE_KEY] = role
    if shown is not None:
        if role == "spread" and shown.offset != 0.0:
            raise ValueError(f"a spread field's scale has no offset: {shown.offset!r}")
        metadata[_SHOWN_KEY] = shown
    if items:
        metadata[_ITEMS_KEY] = tuple(items)
    return attrs.field(default=default, metadata=metadata, **kwargs)


def item_names(state_class: type, field: str) -> tuple[str, ...]:
    """The names ``state_field(items=...)`` gave the first items of ``state_class``'s
    tuple field ``field`` (empty when it gave none, or for another field)."""
    for f in attrs.fields(state_class):
        if f.name == field:
            return tuple(f.metadata.get(_ITEMS_KEY, ()))
    return ()


def scale_of(state_class: type, field: str) -> Scale:
    """The :class:`Scale` players see ``field`` of ``state_class`` on: the one its
    ``state_field`` declares, else the field as it is, under its own name."""
    for f in attrs.fields(state_class):
        if f.name == field:
            shown = f.metadata.get(_SHOWN_KEY)
            return shown if isinstance(shown, Scale) else Scale(field)
    raise ValueError(f"{state_class.__name__} has no field {field!r}")


def shown_state(state: Any) -> list[tuple[str, Any]]:
    """A state's fields as players see them: (shown name, value on the shown scale);
    values that are not numbers as they are."""
    out = []
    for f in attrs.fields(type(state)):
        value = getattr(state, f.name)
        scale = scale_of(type(state), f.name)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        out.append((scale.name, scale(value) if number and not scale.plain else value))
    return out


def field_of_role(state_class: type, role: Role) -> str | None:
    """Name of the field of ``state_class`` tagged with ``role``, or None."""
    for field in attrs.fields(state_class):
        if field.metadata.get(_ROLE_KEY) == role:
            return str(field.name)
    return None
