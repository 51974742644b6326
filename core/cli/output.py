"""What the commands write: tables and their figures, ``--json`` documents, warnings, and
errors (on standard error, and as JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from ..contract1 import FirstContractWarning
from ..engine import League
from ..errors import DuplicateMatchError, InputError, RulesetError
from ..jsontext import finite
from ..manager import PLUGINS_DIR_ENV
from ..model import PlayerRecord
from ..ruleset import ImportedRulesetWarning, RulesetMigrationWarning
from ..store import is_postgres_url, mask_url
from .options import DB_ENV

# -- tables --------------------------------------------------------------------------------


def skill_columns(league: League) -> list[str]:
    """The skill state's columns of a table: its location and spread, by the names
    players see them as (:meth:`rankcraft.Display.skill`)."""
    return [name for name in league.display.names if name]


def rank_columns(league: League) -> list[str]:
    """The rank state's column of a table (its location field), if the ruleset ranks."""
    from ..model import field_of_role

    if league.rank_class is None:
        return []
    name = field_of_role(league.rank_class, "location")
    return [name] if name else []


def record_json(league: League, record: PlayerRecord) -> dict[str, Any]:
    """A player's record as its ``--json`` document."""
    return league.codec.record_to_dict(record)


def leaderboard_rows(
    league: League, placed: Sequence[tuple[int, PlayerRecord]]
) -> tuple[list[str], list[list[str]]]:
    """The headers and rows of a leaderboard's table of ``placed`` (place, record) pairs;
    each column's numbers written alike (:func:`column`)."""
    skill_cols = skill_columns(league)
    rank_cols = rank_columns(league)
    standings = league.standings(r.id for _, r in placed)
    extra = ["standing"] if league.has_standings else []
    # [display] conservative: the value the table is sorted by, beside the skill
    conservative = ["conservative"] if league.ruleset.display.conservative else []
    records = [r for _, r in placed]
    shown = [league.shown(r) for r in records]
    numbers = [
        *(column(getattr(r.rank, c) for r in records) for c in rank_cols),
        *([column(s.value or 0.0 for s in shown)] if conservative else []),
        *(column(s.skill[c] for s in shown) for c in skill_cols),
    ]
    headers = ["#", "player", *extra, *rank_cols, *conservative, *skill_cols]
    rows = []
    for i, (place, r) in enumerate(placed):
        rows.append(
            [
                str(place),
                r.id,
                *([standings.get(r.id, "-")] if extra else []),
                *(cells[i] for cells in numbers),
                str(r.matches),
                r.last_played.date().isoformat() if r.last_played else "-",
            ]
        )
    return [*headers, "matches", "last played"], rows


def digits_for(values: Iterable[float]) -> int:
    """The decimals one column of numbers is written with: none when every value is a
    whole number (rank points, counts), 1 when the column's largest value reaches 100
    (rating points), else 3 (small scales). The page's ``columnFormat`` is the same rule."""
    finite = [v for v in values if math.isfinite(v)]
    if all(float(v).is_integer() for v in finite):
        return 0
    return 1 if max(abs(v) for v in finite) >= 100 else 3


def column(values: Iterable[float]) -> list[str]:
    """A column of numbers, each written with the column's decimals (:func:`digits_for`):
    ``2250.0`` beside ``2207.7``, never ``2250``.

    >>> column([2250.0, 2207.74, 98.25]), column([463, 405.0])
    (['2250.0', '2207.7', '98.2'], ['463', '405'])
    """
    seen = list(values)
    digits = digits_for(seen)
    return [f"{v:.{digits}f}" for v in seen]


def figure(value: float | None, digits: int = 4) -> str:
    """A figure for a table: ``-`` where it has no value."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


# -- --json, warnings ----------------------------------------------------------------------


def emit_json(data: Any, out: TextIO) -> None:
    """Strict JSON (RFC 8259): a NaN or infinity is written as null."""
    out.write(json.dumps(finite(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def warn_home(ruleset: Any, matches: int, homes: int, path: str, err: TextIO) -> None:
    """Warn when the ruleset has a home advantage and no match named a home side."""
    from ..advice import HomeSeen, home_warning

    seen = HomeSeen(())
    seen.matches, seen.with_home = matches, homes
    warning = home_warning(ruleset, seen, path)
    if warning is not None:
        err.write(f"rankcraft: warning: {warning}\n")


# -- errors --------------------------------------------------------------------------------


def error_json(exc: BaseException, command: str | None, status: int) -> dict[str, Any]:
    """The ``--json`` form of an error: its type, message, the field and value it names
    (when it does) and the line of the input file (when known), and the exit status.

    A ruleset's error names its place after ``@`` (``... @ ruleset.update.params``): the
    field is then that path within the ruleset, with the key the message names
    (``update.params.k_factor``), and the value is the one the message quotes."""
    message = str(exc)
    field = getattr(exc, "field", None)
    line = getattr(exc, "line", None)
    value = None
    where = _WHERE.search(message)
    text = message[: where.start()] + message[where.end() :] if where else message
    found = _VALUE.search(text)
    if found:
        field = field or found.group(1)
        value = found.group(2)
    unknown = _UNKNOWN.search(text)
    if unknown and value is None:
        field, value = field or unknown.group(1), unknown.group(2)
    if where:
        field, value = _ruleset_field(text, where.group(1), field, value)
    if line is None and (at := _AT_LINE.search(message)):
        line = int(at.group(1))
    return {
        "error": {
            "type": type(exc).__name__,
            "command": command,
            "message": message,
            "field": field,
            "value": _unquoted(value),
            "line": line,
            "status": status,
        }
    }


def _ruleset_field(
    text: str, path: str, field: str | None, value: str | None
) -> tuple[str | None, str | None]:
    """The field and value of a ruleset's error at ``path`` (``update.params``)."""
    keys = _UNKNOWN_KEYS.search(text)
    if keys:  # the (first) key the table may not have
        return ".".join(p for p in (path, keys.group(1)) if p), None
    got = _GOT.search(text)
    if got:  # "expected a number, got '24' @ ruleset.update.params.k_factor"
        named = _OPENS.search(text)  # ("'mode' must be in (...) (got 'x') @ ruleset.period")
        if named and path and not path.endswith(named.group(1)):
            return f"{path}.{named.group(1)}", got.group(1)
        return path or field, got.group(1)
    if field and field != path and not path.endswith(f".{field}"):
        return ".".join(p for p in (path, field) if p), value
    return path or field, value


def _unquoted(value: str | None) -> str | None:
    """A value the message quotes as a Python string (``'24'``) without the quotes."""
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


_WHERE = re.compile(r" @ ruleset\.?([\w.\[\]]*)")
_UNKNOWN_KEYS = re.compile(r"unknown key\(s\) '([^']*)'")
_GOT = re.compile(r"\bgot (.+?)\)?(?: \(|;|$)")  # (attrs' in_: "(got 'x')")
_OPENS = re.compile(r"'(\w+)' must\b")
_UNKNOWN = re.compile(r"unknown (\w+) '([^']*)'")
_VALUE = re.compile(
    r"'([^']+)' (?:must|is not|is later|is earlier)(?:[^:]|:(?! ))*: (.+?)(?: \(|$)"
)  # (a colon without a space after it, as in a time, is not the value's colon)
_AT_LINE = re.compile(r"\bline (\d+)")


def without_password(text: str, args: argparse.Namespace) -> str:
    """``text`` with the command's database URL masked (``mask_url``): messages raised
    elsewhere (League.open) may quote the URL as given, password included."""
    db = getattr(args, "db", None) or os.environ.get(DB_ENV)
    if db and is_postgres_url(db):
        return text.replace(db, mask_url(db))
    return text


def show_warning(command: str, err: TextIO, others: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` for a command: a migrated stored ruleset is said as
    ``rankcraft COMMAND: warning: ...`` on ``err``; other warnings as Python shows them."""

    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(
            category, RulesetMigrationWarning | ImportedRulesetWarning | FirstContractWarning
        ):
            err.write(f"rankcraft {command}: warning: {message}\n")
        else:
            others(message, category, *rest, **kw)

    return show


def error_hint(exc: InputError, args: argparse.Namespace) -> str:
    """What to do about an error, said after its message on standard error."""
    if isinstance(exc, DuplicateMatchError) and getattr(args, "skip_seen", None) is False:
        return " (--skip-seen passes over matches already recorded)"
    if isinstance(exc, RulesetError) and "unknown plugin '" in str(exc):
        # a league made with --plugins-dir needs the folder on every later command
        return (
            "; a plugin loaded from a folder needs that folder on every command: "
            f"rankcraft --plugins-dir DIR {args.command} ..., or set ${PLUGINS_DIR_ENV}"
        )
    return ""


def json_error(args: argparse.Namespace, exc: BaseException, out: TextIO, status: int) -> None:
    """With ``--json``, the error as JSON on standard output too (its text stays on
    standard error)."""
    if getattr(args, "json", False):
        document = error_json(exc, args.command, status)
        document["error"]["message"] = without_password(document["error"]["message"], args)
        with contextlib.suppress(BrokenPipeError, ValueError):
            emit_json(document, out)
