"""A state's two forms: the plain tuple the rating loop passes to hooks, and the attrs
instance readers see.

A plugin declares its state as an attrs class (fields, roles, validators): that class is
the state's *public form* (``PlayerRecord.skill``, reports, exports). Inside the rating
loop a state is a plain tuple of the class's field values, in field order (its *tuple
form*): building a tuple costs a few hundredths of a microsecond, an attrs instance with
validators one or two microseconds, and the loop builds one per participant per match.
:class:`Form` turns one into the other for one class; :func:`layout` gives a plugin that
reads another plugin's states the positions of their fields.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import attrs

from .errors import PluginError, StateError
from .model import Role, field_of_role

__all__ = ["Form", "StateTuple", "layout", "tuple_form"]

StateTuple = tuple[Any, ...]
"""A state in the rating loop: the field values of the plugin's state class, in order."""


class Form:
    """The tuple form and the public form of one state class.

    :param cls: the plugin's attrs state class; every field must be an ``__init__``
        argument, in field order (the default for attrs classes without ``init=False``
        or ``kw_only`` fields).

    Attributes:
        cls: the state class. names: its field names, in order.
    """

    def __init__(self, cls: type) -> None:
        self.cls = cls
        fields = attrs.fields(cls)
        self.names: tuple[str, ...] = tuple(f.name for f in fields)
        for f in fields:
            if not f.init or f.kw_only:
                raise StateError(
                    f"{cls.__name__}.{f.name}: a state class's fields must all be positional "
                    "__init__ arguments (no init=False, no kw_only)"
                )
        self._tuple = tuple_form(self.names)

    def to_tuple(self, state: Any) -> StateTuple:
        """The tuple form of ``state`` (a tuple is returned as it is)."""
        return state if state is None else self._tuple(state)  # type: ignore[return-value]

    def to_object(self, values: Any) -> Any:
        """The public form of ``values`` (the class's validators run: a plugin that returned
        a state out of its own range is caught here); an instance is returned as it is.

        :raises PluginError: the values are not a valid state of the class."""
        if type(values) is not tuple:
            return values
        try:
            return self.cls(*values)
        except (TypeError, ValueError) as exc:
            raise PluginError(
                f"a plugin returned {values!r}, not a valid {self.cls.__name__}: {exc}"
            ) from None

    def to_object_unchecked(self, values: Any) -> Any:
        """The public form without the validators (a virtual opponent shifted past the
        range a stored rating may hold, as the team plugins make): for handing states to
        a plugin written for the object contract, never for storing."""
        if type(values) is not tuple:
            return values
        out: Any = object.__new__(self.cls)
        for name, value in zip(self.names, values, strict=True):
            object.__setattr__(out, name, value)
        return out

    def index(self, role: Role) -> int | None:
        """The position of the field with ``role`` in the tuple form, or None."""
        name = field_of_role(self.cls, role)
        return None if name is None else self.names.index(name)


def tuple_form(names: tuple[str, ...]) -> Callable[[Any], StateTuple]:
    """A function giving the tuple form of a state of the class whose fields are
    ``names``, from its public form or its tuple form (returned as it is)."""
    get = _getter(names)
    return lambda state: state if type(state) is tuple else get(state)


def _getter(names: tuple[str, ...]) -> Callable[[Any], StateTuple]:
    if len(names) > 1:
        return operator.attrgetter(*names)
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda state: (get(state),)
    return lambda state: ()


def layout(state_class: type) -> dict[str, int]:
    """The positions of ``state_class``'s fields in its tuple form, by name, with the
    roles too (``"location"``, ``"spread"``) where the class tags them: what a team or
    rank plugin that reads another plugin's states indexes them with.

    >>> import attrs
    >>> from rankcraft import state_field
    >>> @attrs.frozen
    ... class S:
    ...     mu: float = state_field(role="location")
    ...     sigma: float = state_field(role="spread")
    >>> layout(S)
    {'mu': 0, 'sigma': 1, 'location': 0, 'spread': 1}
    """
    form = Form(state_class)
    out: dict[str, int] = {name: i for i, name in enumerate(form.names)}
    roles: tuple[Role, ...] = ("location", "spread")
    for role in roles:
        at = form.index(role)
        if at is not None:
            out[role] = at
    return out
