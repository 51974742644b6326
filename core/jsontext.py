"""One strict JSON decoder for everything rankcraft reads from outside.

:func:`loads_strict` is :func:`json.loads` with the holes closed that turn bad input into
crashes, hangs or values no store can keep. It refuses, each with an :class:`InputError`
(:class:`JSONTextError`) that names where:

- bytes that are not UTF-8 (the position of the first bad byte);
- nesting deeper than ``max_depth`` (64): Python's decoder would recurse until a
  ``RecursionError``;
- the literals ``NaN``, ``Infinity`` and ``-Infinity``, which JSON does not have;
- numbers a double cannot hold: ``1e400`` (which Python reads as infinity), integers of
  more than ``max_digits`` (4300, Python's own limit for turning text into an ``int``)
  digits, and integers beyond the range of a double (``10**400``);
- strings (values or keys) with a lone UTF-16 surrogate (``"\\ud800"``: no UTF-8 text can
  hold it) or a NUL character (``"\\u0000"``: PostgreSQL's ``text`` cannot);
- an object with the same key twice (which :func:`json.loads` silently resolves to the
  last value).

>>> loads_strict('{"id": "m1", "scores": [1, 0]}', what="match")
{'id': 'm1', 'scores': [1, 0]}
>>> loads_strict('{"scores": [NaN, 0]}', what="match")
Traceback (most recent call last):
...
rankcraft.jsontext.JSONTextError: match: NaN is not a JSON number (line 1, column 13)
>>> loads_strict('{"id": "a", "id": "b"}', what="match")
Traceback (most recent call last):
...
rankcraft.jsontext.JSONTextError: match: the key 'id' appears twice in one object
>>> try:
...     loads_strict('{"teams": [["a\\\\u0000"], ["b"]]}', what="match")
... except JSONTextError as exc:
...     print(exc.field, "|", exc)
teams[0][0] | match: 'teams[0][0]' holds a NUL character (\\u0000): 'a\\x00'
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from typing import Any, NoReturn

from .errors import InputError

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "JSONTextError", "loads_strict"]

MAX_DEPTH = 64
"""How deeply arrays and objects may nest."""

MAX_DIGITS = 4300
"""The most digits an integer may have (Python's ``sys.int_info.default_max_str_digits``)."""

_FLOAT_MAX = sys.float_info.max
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
# an escape that could decode to NUL or a surrogate (a cheap test before walking values)
_RISKY_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
# a number a double may not hold: an exponent of 3 digits or more, or 300 digits in a row
_BIG_NUMBER = re.compile(r"[eE][+-]?\d{3}|\d{300}")


class JSONTextError(InputError):
    """JSON text that :func:`loads_strict` refuses.

    Attributes:
        position: 0-based character offset in the text, when known.
    """

    def __init__(self, message: str, *, field: str | None = None, position: int | None = None):
        super().__init__(message)
        self._field = field
        self.position = position


def loads_strict(
    text: str | bytes | bytearray,
    *,
    what: str,
    max_depth: int = MAX_DEPTH,
    max_digits: int = MAX_DIGITS,
) -> Any:
    """Decode one JSON document, refusing what the module docstring lists.

    :param text: the document; bytes must be UTF-8.
    :param what: what the document is, for messages (``"match"``, ``"line 7"``, ...).
    :raises JSONTextError: (an :class:`InputError`) naming the position or the field.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = exc.object[exc.start : exc.start + 1]
            raise JSONTextError(
                f"{what}: byte {exc.start} ({bad!r}) is not UTF-8 text", position=exc.start
            ) from None
    _check_depth(text, what, max_depth)

    refused: JSONTextError | None = None
    # numbers are checked one by one only where one could be too large (a 3-digit
    # exponent, or a run of 300 digits): elsewhere the decoder's own C parsing is exact
    checked = _BIG_NUMBER.search(text) is not None or (
        max_digits < 300 and re.search(rf"\d{{{max_digits + 1}}}", text) is not None
    )
    try:
        value = json.loads(
            text,
            parse_constant=_parse_constant,
            parse_float=_parse_float if checked else None,
            parse_int=functools.partial(_parse_int, max_digits=max_digits) if checked else None,
            object_pairs_hook=_pairs,
        )
    except _Refused as exc:
        position = exc.position_in(text)
        where = _where(text, position) if exc.where else ""
        refused = JSONTextError(f"{what}: {exc.message}{where}", position=position)
    except json.JSONDecodeError as exc:
        refused = JSONTextError(
            f"{what}: not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            position=exc.pos,
        )
    except RecursionError:  # pragma: no cover - _check_depth stops it first
        refused = JSONTextError(f"{what}: nested deeper than {max_depth}")
    if refused is not None:
        raise refused
    if _RISKY_ESCAPE.search(text):
        _check_strings(value, what)
    return value


# -- the decoder's hooks: each refuses what the module docstring lists ---------------------


def _parse_constant(name: str) -> NoReturn:
    raise _Refused(f"{name} is not a JSON number", literal=name)


def _parse_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(f"the number {_short(literal)} is too large for a double", literal=literal)
    return value


def _parse_int(literal: str, *, max_digits: int) -> int:
    digits = len(literal) - literal.startswith("-")
    if digits > max_digits:
        raise _Refused(
            f"an integer of {digits} digits is longer than {max_digits}", literal=literal
        )
    value = int(literal)
    if abs(value) > _FLOAT_MAX:
        raise _Refused(f"the integer {_short(literal)} is too large for a double", literal=literal)
    return value


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(items)
    if len(out) != len(items):
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise _Refused(f"the key {key!r} appears twice in one object", where=False)
            seen.add(key)
    return out


class _Refused(ValueError):
    """Raised by a decoder hook, which does not know where it is: :meth:`position_in`
    finds the literal in the text."""

    def __init__(self, message: str, *, literal: str | None = None, where: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.literal = literal
        self.where = where

    def position_in(self, text: str) -> int | None:
        if self.literal is None:
            return None
        # the first occurrence outside a string (the decoder stops at the first)
        pattern = re.compile(r'"(?:[^"\\]|\\.)*"|' + re.escape(self.literal), re.DOTALL)
        for found in pattern.finditer(text):
            if not found.group().startswith('"'):
                return found.start()
        return None  # pragma: no cover - the decoder read it from this text


def _where(text: str, position: int | None) -> str:
    if position is None:
        return ""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f" (line {line}, column {column})"


def _short(literal: str) -> str:
    return literal if len(literal) <= 24 else f"{literal[:12]}...{literal[-6:]}"


def _check_depth(text: str, what: str, limit: int) -> None:
    if text.count("[") + text.count("{") <= limit:
        return
    depth = 0
    for found in _BRACKETS.finditer(text):
        char = found.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                raise JSONTextError(
                    f"{what}: arrays and objects nest deeper than {limit}"
                    f"{_where(text, found.start())}",
                    position=found.start(),
                )
        elif char in "]}":
            depth -= 1


def _check_strings(value: Any, what: str) -> None:
    """Refuse NUL characters and lone surrogates in any string or key (an explicit
    stack: bounded by the document, no recursion)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            _check_text(item, path, what)
        elif isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}.{key}" if path else key
                _check_text(key, name, what, key=True)
                stack.append((name, child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in enumerate(item))


def _check_text(text: str, path: str, what: str, *, key: bool = False) -> None:
    label = f"the key {text!r}" if key else f"{path!r}" if path else "the document"
    if "\x00" in text:
        raise JSONTextError(
            f"{what}: {label} holds a NUL character (\\u0000): {text[:40]!r}",
            field=path or None,
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JSONTextError(
            f"{what}: {label} holds a lone surrogate (\\u{ord(text[exc.start]):04x}), "
            f"which is not text",
            field=path or None,
        ) from None


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float, at any depth of dicts, lists and
    tuples, replaced by None: strict JSON (RFC 8259) has neither (an empty calibration
    bin, say). Tuples come back as lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
