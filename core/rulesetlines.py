"""Where a ruleset error stands in the ruleset's TOML text: the field's dotted path (from
the ``@ ruleset.PATH`` the error names) and the text's line that sets it. The command
line's ``check`` and the lab's page read both from here.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import RulesetError

_PATH = re.compile(r"@ ruleset\.([A-Za-z0-9_.\[\]-]+)")
_KEYS = re.compile(r"unknown key\(s\) '([^']+)'")
_TOML_LINE = re.compile(r"at line (\d+)")
_NAMED = re.compile(r": '([A-Za-z_]\w*)' (?:must|is not)\b")


def ruleset_error(exc: RulesetError, text: str) -> dict[str, Any]:
    """A ruleset error as the page shows it: the message, the field's dotted path (such
    as ``update.params.k``) and the 1-based line of ``text`` that holds it (None when the
    error names no field or the line cannot be found).

    >>> from rankcraft.ruleset import loads_ruleset
    >>> text = 'name = "x"\\n[update]\\nplugin = "elo"\\n[update.params]\\nkk = 3\\n'
    >>> try:
    ...     loads_ruleset(text)
    ... except RulesetError as exc:
    ...     found = ruleset_error(exc, text)
    >>> found["field"], found["line"]
    ('update.params.kk', 5)
    """
    message = str(exc)
    field = exc.field
    line = exc.line
    path = _PATH.search(message)
    if path:
        field = path.group(1)
        keys = _KEYS.search(message)
        named = _NAMED.search(message)
        if keys:
            field = f"{field}.{keys.group(1).split(',')[0].strip(chr(39) + ' ')}"
        elif named and not field.endswith(named.group(1)):  # ('decay_from' must ... @ rank.params)
            field = f"{field}.{named.group(1)}"
        line = line or line_of(text, field)
    else:
        found = _TOML_LINE.search(message)
        if found:
            line = int(found.group(1))
            field = field or "toml"
    return {"message": message, "field": field, "line": line}


def line_of(text: str, field: str) -> int | None:
    """The line of ``text`` (TOML) that sets the dotted ``field``, else the line of its
    table, else None.

    >>> line_of('name = "x"\\n[[resets]]\\nkind = "sfot"\\n', "resets[0].kind")
    3
    """
    parts = [p for p in re.split(r"[.\[\]]", field) if p and not p.isdigit()]
    table: list[str] = []
    best: int | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        header = re.fullmatch(r"\[\[?\s*([^\]]+?)\s*\]\]?", line)
        if header:
            table = [t.strip().strip('"') for t in header.group(1).split(".")]
            if table == parts and best is None:
                best = number
            continue
        key = re.match(r"([A-Za-z0-9_\-\"]+(?:\s*\.\s*[A-Za-z0-9_\-\"]+)*)\s*=", line)
        if key:
            dotted = table + [k.strip().strip('"') for k in key.group(1).split(".")]
            if dotted == parts:
                return number
            if dotted == parts[: len(dotted)] and best is None and len(dotted) > len(table):
                best = number
    return best


def with_line(exc: RulesetError, text: str) -> RulesetError:
    """``exc`` naming the line of ``text`` its field stands on (``... (line 7)``, and
    ``line`` set), or ``exc`` itself when it names no line of ``text``."""
    if exc.line is not None or _TOML_LINE.search(str(exc)):
        return exc
    line = ruleset_error(exc, text)["line"]
    if line is None:
        return exc
    found = RulesetError(f"{exc} (line {line})")
    found.line = line
    return found
