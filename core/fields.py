"""Field specs: one declaration of a JSON object's fields from which both its validator
and its JSON Schema come, so that the two cannot drift apart.

The HTTP service checks its request bodies with :meth:`Body.check` and describes them
with :meth:`Body.schema` (``/openapi.json``); the match document's keys are declared here
too (:data:`rankcraft.io.MATCH_FIELDS`), though :func:`rankcraft.io.parse_match` stays
their one validator. :func:`state_schema` describes a plugin's state class from its
attrs fields and their types.

>>> age = Field("age", "integer", minimum=0, must="a whole number >= 0")
>>> age.schema()
{'type': 'integer', 'minimum': 0}
>>> age.check(-1, "age")
Traceback (most recent call last):
rankcraft.errors.InputError: 'age' must be a whole number >= 0: -1
>>> person = Body("a person", (Field("name", "string", required=True), age))
>>> person.check({"name": "Ann", "age": 7})
{'name': 'Ann', 'age': 7}
>>> person.check({"name": "Ann", "size": 7})
Traceback (most recent call last):
rankcraft.fields.FieldError: 'size' is not a field of a person
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from .errors import InputError

__all__ = ["Body", "Field", "FieldError", "state_schema"]

_PYTHON = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict, Mapping),
    "null": (type(None),),
}
_WORDS = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def _is(value: Any, kind: str) -> bool:
    """Whether ``value`` (decoded JSON) is of the JSON type ``kind`` (booleans are not
    numbers)."""
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, _PYTHON[kind])


def _types(value: str | Sequence[str]) -> tuple[str, ...]:
    kinds = (value,) if isinstance(value, str) else tuple(value)
    unknown = [k for k in kinds if k not in _PYTHON]
    if unknown or not kinds:
        raise ValueError(f"not JSON types: {unknown or kinds}")
    return kinds


class FieldError(InputError):
    """A key that is not a field of the object (``field`` names it)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self._field = field


@attrs.frozen
class Field:
    """One field of a JSON object: its JSON type(s) and constraints.

    Attributes:
        name: the key.
        type: the JSON types allowed (``"null"`` among them: null is as good as absent).
        required: the key must be there (and not null).
        must: what the value must be, for error messages (``'name' must be ...``).
        description: for the schema.
        items: the spec of each item of an array.
        enum: the values allowed.
        default: the value taken when the key is absent (schema only).
        minimum, maximum, exclusive_minimum, min_length, max_length, min_items, max_items,
        unique:
            the JSON Schema constraints of the same names (``unique``: ``uniqueItems``).
        limit: a check of the service's limits, run on a value of the right type before
            the constraints; it raises its own error (not part of the schema: say it in
            the description and in ``max_items``).
    """

    name: str
    type: tuple[str, ...] = attrs.field(converter=_types)
    required: bool = attrs.field(default=False, kw_only=True)
    must: str = attrs.field(default="", kw_only=True)
    description: str = attrs.field(default="", kw_only=True)
    items: Field | None = attrs.field(default=None, kw_only=True)
    enum: tuple[Any, ...] | None = attrs.field(default=None, kw_only=True)
    default: Any = attrs.field(default=None, kw_only=True)
    minimum: float | None = attrs.field(default=None, kw_only=True)
    maximum: float | None = attrs.field(default=None, kw_only=True)
    exclusive_minimum: float | None = attrs.field(default=None, kw_only=True)
    min_length: int | None = attrs.field(default=None, kw_only=True)
    max_length: int | None = attrs.field(default=None, kw_only=True)
    min_items: int | None = attrs.field(default=None, kw_only=True)
    max_items: int | None = attrs.field(default=None, kw_only=True)
    unique: bool = attrs.field(default=False, kw_only=True)
    limit: Callable[[Any, str], None] | None = attrs.field(default=None, kw_only=True, eq=False)

    @property
    def wanted(self) -> str:
        """What the value must be, in words."""
        return self.must or " or ".join(_WORDS[k] for k in self.type)

    def schema(self) -> dict[str, Any]:
        """The JSON Schema (2020-12, as OpenAPI 3.1 has it) of the field's value."""
        out: dict[str, Any] = {"type": self.type[0] if len(self.type) == 1 else list(self.type)}
        if self.description:
            out["description"] = self.description
        for key, value in (
            ("enum", None if self.enum is None else list(self.enum)),
            ("default", self.default),
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("exclusiveMinimum", self.exclusive_minimum),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("minItems", self.min_items),
            ("maxItems", self.max_items),
            ("uniqueItems", self.unique or None),
        ):
            if value is not None:
                out[key] = value
        if self.items is not None:
            out["items"] = self.items.schema()
        return out

    def check(self, value: Any, path: str) -> None:
        """Refuse a value that does not fit, naming ``path`` (``'sides[1][0]' must be a
        player id ...``).

        :raises InputError: or what ``limit`` raises.
        """
        if value is None and "null" in self.type:
            return
        if not any(_is(value, kind) for kind in self.type):
            raise self._refuse(value, path)
        if self.limit is not None:
            self.limit(value, path)
        if self.enum is not None and value not in self.enum:
            raise self._refuse(value, path)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if (
                (self.minimum is not None and value < self.minimum)
                or (self.maximum is not None and value > self.maximum)
                or (self.exclusive_minimum is not None and value <= self.exclusive_minimum)
            ):
                raise self._refuse(value, path)
        elif isinstance(value, str):
            if (self.min_length is not None and len(value) < self.min_length) or (
                self.max_length is not None and len(value) > self.max_length
            ):
                raise self._refuse(value, path)
        elif isinstance(value, list):
            self._check_list(value, path)

    def _check_list(self, value: list[Any], path: str) -> None:
        if (
            (self.min_items is not None and len(value) < self.min_items)
            or (self.max_items is not None and len(value) > self.max_items)
            or (self.unique and len({repr(v) for v in value}) != len(value))
        ):
            raise self._refuse(value, path)
        if self.items is not None:
            for i, item in enumerate(value):
                self.items.check(item, f"{path}[{i}]")

    def _refuse(self, value: Any, path: str) -> InputError:
        return InputError(f"'{path}' must be {self.wanted}: {value!r}"[:300])


def _field_tuple(fields: Iterable[Field]) -> tuple[Field, ...]:
    return tuple(fields)


@attrs.frozen
class Body:
    """A JSON object of named fields: a request body, or the match document.

    Attributes:
        what: the object in words (``"a prediction"``), for error messages.
        fields: its fields, checked in this order.
        closed: any other key is refused, with ``unknown_error`` (a class taking the
            message and ``field=``; :class:`FieldError` unless given).
        description: for the schema.
        schema_extra: further JSON Schema keywords of the whole object (a rule across
            fields, such as "one of scores and ranks").
    """

    what: str
    fields: tuple[Field, ...] = attrs.field(converter=_field_tuple)
    closed: bool = attrs.field(default=True, kw_only=True)
    description: str = attrs.field(default="", kw_only=True)
    schema_extra: Mapping[str, Any] = attrs.field(factory=dict, kw_only=True)
    unknown_error: Callable[..., InputError] = attrs.field(
        default=FieldError, kw_only=True, eq=False
    )

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the object."""
        out: dict[str, Any] = {"type": "object"}
        if self.description:
            out["description"] = self.description
        out["required"] = [f.name for f in self.fields if f.required]
        out["properties"] = {f.name: f.schema() for f in self.fields}
        if self.closed:
            out["additionalProperties"] = False
        return {**out, **self.schema_extra}

    def check(self, body: Any) -> dict[str, Any]:
        """``body`` if it fits, field by field; the first misfit is raised.

        :raises InputError: a body that is not an object, or a field that does not fit.
        :raises FieldError: an unknown key (when ``closed``; or ``unknown_error``).
        """
        if not isinstance(body, dict):
            raise InputError(f"{self.what} must be a JSON object, got {type(body).__name__}")
        if self.closed:
            unknown = sorted(set(body) - self.keys)
            if unknown:
                key = unknown[0][:40]
                raise self.unknown_error(f"{key!r} is not a field of {self.what}", field=key)
        for field in self.fields:
            value = body.get(field.name)
            if value is None and field.required:
                raise field._refuse(value, field.name)
            field.check(value, field.name)
        return body


_ATTRIBUTE = re.compile(r"^(\s+)(\w+(?:,\s*\w+)*):\s+(.*)$")


def _attribute_texts(cls: type) -> dict[str, str]:
    """The descriptions of a class's attributes, from its docstring's ``Attributes:``
    section (an entry's lines up to the next entry or the section's end)."""
    doc = inspect.getdoc(cls) or ""
    _, found, section = doc.partition("Attributes:")
    texts: dict[str, str] = {}
    names: list[str] = []
    indent = None
    for line in section.splitlines()[1:] if found else ():
        if not line.strip() or not line.startswith(" "):
            break  # the section ends at a blank or unindented line
        match = _ATTRIBUTE.match(line)
        if match and (indent is None or len(match.group(1)) == indent):
            indent = len(match.group(1))
            names = re.split(r",\s*", match.group(2))
            for name in names:
                texts[name] = match.group(3).strip()
        else:
            for name in names:
                texts[name] += " " + line.strip()
    return texts


def _type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of the values a Python type hint allows, as JSON writes them
    (tuples are arrays); ``{}`` (anything) for what it does not know."""
    simple = {float: "number", int: "integer", str: "string", bool: "boolean"}
    if hint is None or hint is type(None):
        return {"type": "null"}
    if hint in simple:
        return {"type": simple[hint]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        parts = [_type_schema(a) for a in args]
        if all(set(p) == {"type"} for p in parts):
            kinds = list(dict.fromkeys(p["type"] for p in parts))
            if "number" in kinds and "integer" in kinds:
                kinds.remove("integer")
            return {"type": kinds[0] if len(kinds) == 1 else kinds}
        return {"anyOf": parts}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (tuple, list, Sequence) and (len(args) == 2 and args[1] is Ellipsis):
        return {"type": "array", "items": _type_schema(args[0])}
    if origin in (list, Sequence) and len(args) == 1:
        return {"type": "array", "items": _type_schema(args[0])}
    if origin is tuple and args:
        n = len(args)
        items = [_type_schema(a) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": n, "maxItems": n}
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return {"type": "object"}
    return {}


def state_schema(cls: type, description: str = "") -> dict[str, Any]:
    """The JSON Schema of a plugin's state class (attrs) as the state document writes it:
    an object of every field, typed by the field's annotation, described by the class's
    docstring (``Attributes:``)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation its module cannot resolve: the fields, untyped
        hints = {}
    texts = _attribute_texts(cls)
    properties = {}
    for field in attrs.fields(cls):
        schema = _type_schema(hints.get(field.name, Any))
        if field.name in texts:
            schema["description"] = texts[field.name]
        properties[field.name] = schema
    out: dict[str, Any] = {"type": "object"}
    if description or cls.__doc__:
        out["description"] = description or (cls.__doc__ or "").strip().splitlines()[0]
    out["required"] = list(properties)
    out["properties"] = properties
    out["additionalProperties"] = False
    out["x-state-class"] = f"{cls.__module__}.{cls.__qualname__}"
    return out
