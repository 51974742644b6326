"""Corrections to a league's history (issue 40): ``void`` (a recorded match counts for
nothing), ``correct`` (a recorded match's fields change, its id stays) and ``edits`` (the
audit). Each edit re-rates every later match exactly and prints what it moved.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, TextIO

from ..corrections import FIELDS, Edit, Moved
from ..engine import League
from ..errors import InputError
from ..model import format_time
from ..terminal import plural, print_table
from .options import Commands, open_existing
from .output import column, emit_json

# -- the change report ------------------------------------------------------------------------


def _value(shown: dict[str, Any]) -> float | None:
    value = shown.get("value")
    return value if isinstance(value, int | float) else None


def _change_line(change: Moved, digits: int) -> str:
    """One moved player: ``a: value 1516.0 -> 1500.0 (-16.0); tier Gold -> Silver``,
    ``c: removed (was 1484.0, 1 match)`` or ``d: added (1500.0, 1 match)``."""
    before, after = change.before, change.after

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.{digits}f}"

    if before is None and after is not None:
        now = f"{num(_value(after))}, {plural(after['matches'], 'match')}"
        return f"  {change.player}: added ({now})"
    if after is None and before is not None:
        was = f"{num(_value(before))}, {plural(before['matches'], 'match')}"
        return f"  {change.player}: removed (was {was})"
    assert before is not None and after is not None
    old, new = _value(before), _value(after)
    parts = []
    if old is not None and new is not None:
        if num(old) == num(new):  # (a move under the column's decimals: shown with more)
            digits += 3
        sign = "+" if new >= old else "-"
        parts.append(f"value {num(old)} -> {num(new)} ({sign}{num(abs(new - old))})")
    if before.get("tier") != after.get("tier"):
        parts.append(f"tier {before.get('tier') or '-'} -> {after.get('tier') or '-'}")
    if before.get("matches") != after.get("matches"):
        parts.append(f"matches {before.get('matches')} -> {after.get('matches')}")
    return f"  {change.player}: " + ("; ".join(parts) or "skill moved")


def write_report(edit: Edit, out: TextIO) -> None:
    """What an edit did, as ``void`` and ``correct`` print it."""
    did = {"void": "voided", "correct": "corrected", "late": "placed late"}[edit.kind]
    out.write(
        f"{did} {edit.match_id} ({edit.reason}): {plural(edit.rerated, 'match')} re-rated, "
        f"{plural(len(edit.changes), 'player')} changed\n"
    )
    values = [
        v
        for c in edit.changes
        for shown in (c.before, c.after)
        if shown is not None and (v := _value(shown)) is not None
    ]
    digits = len(column(values)[0].partition(".")[2]) if values else 1
    for change in edit.changes:
        out.write(_change_line(change, digits) + "\n")


def _emit(edit: Edit, args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        emit_json(edit.to_dict(), out)
    else:
        write_report(edit, out)
    return 0


# -- void, correct ----------------------------------------------------------------------------


def cmd_void(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with open_existing(args) as league:
        edit = league.void(args.match_id, args.reason)
    return _emit(edit, args, out)


def cmd_correct(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    fields = corrected_fields(args)
    with open_existing(args) as league:
        edit = league.correct(args.match_id, fields, args.reason)
    return _emit(edit, args, out)


def _json_option(option: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise InputError(f"'{option}' must be JSON: {text}") from None


def _numbers(option: str, words: Sequence[str]) -> list[Any]:
    """``--scores 2 1``: each word a number (a whole number stays whole)."""
    found = []
    for word in words:
        try:
            value = json.loads(word)
        except ValueError:
            value = None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"'{option}' must be numbers: {word}")
        found.append(value)
    return found


def corrected_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The fields ``correct`` changes, from its options; one field given twice, or none
    at all, is refused (the core refuses an unknown field and names it)."""
    given: list[tuple[str, str, Any]] = []  # (option, field, value)
    if args.scores is not None:
        given.append(("--scores", "scores", _numbers("--scores", args.scores)))
    if args.ranks is not None:
        given.append(("--ranks", "ranks", _numbers("--ranks", args.ranks)))
    if args.played_at is not None:
        given.append(("--played-at", "played_at", args.played_at))
    if args.teams is not None:
        given.append(("--teams", "teams", _json_option("--teams", args.teams)))
    for item in args.set:
        name, eq, text = item.partition("=")
        if not eq or not name.strip():
            raise InputError(f"'--set' must be FIELD=JSON: {item}")
        try:  # (text that is not JSON is taken as text: --set played_at=2024-01-03)
            value = json.loads(text)
        except ValueError:
            value = text
        given.append((f"--set {name.strip()}", name.strip(), value))
    if not given:
        raise InputError(
            "correct needs a field to change: --scores, --ranks, --played-at, --teams or "
            f"--set FIELD=JSON (fields: {', '.join(FIELDS)})"
        )
    fields: dict[str, Any] = {}
    for option, field, value in given:
        if field in fields:
            raise InputError(f"the field {field!r} is given twice (again by '{option}')")
        fields[field] = value
    return fields


# -- edits ------------------------------------------------------------------------------------


def _check_named(league: League, args: argparse.Namespace, found: list[Edit]) -> None:
    """Refuse a ``--match`` or ``--player`` the league and its audit never knew."""
    if found:
        return
    match = args.match
    if match is not None and league.store.match(match) is None and not league.edits(match):
        raise InputError(f"unknown match {args.match!r}: not recorded and never edited")
    player = args.player
    if player is not None and player not in league and not league.edits(player=player):
        raise InputError(f"unknown player {player!r}: not in the league nor its edits")


def cmd_edits(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with open_existing(args, read_only=True) as league:
        found = league.edits(args.match, player=args.player)
        _check_named(league, args, found)
    if args.json:
        emit_json([e.to_dict() for e in found], out)
        return 0
    if not found:
        out.write("no edits\n")
        return 0
    rows = [
        [
            str(e.n),
            format_time(e.made_at),
            e.kind,
            e.match_id,
            e.reason,
            e.by or "-",
            str(e.rerated),
        ]
        for e in found
    ]
    print_table(rows, ["n", "made at", "kind", "match", "reason", "by", "rerated"], out)
    return 0


def correction_line(edit: Edit) -> str:
    """One of a player's corrections as ``player`` lists it: ``m2: void: a typo``."""
    said = {"void": "void", "correct": "corrected", "late": "late"}[edit.kind]
    match = edit.new or edit.old
    day = match.played_at.date().isoformat() if match is not None else "-"
    made = format_time(edit.made_at)
    return f"  {day}  {edit.match_id}: {said}: {edit.reason} (edit {edit.n}, {made})\n"


# -- the parsers ------------------------------------------------------------------------------


def add_correction_commands(c: Commands) -> None:
    """void, correct and edits."""
    p = c.add("void", cmd_void, "void a recorded match and re-rate every later match")
    p.add_argument("match_id", metavar="MATCH_ID", help="the recorded match's id")
    p.add_argument("--reason", required=True, help="why (kept in the audit; not empty)")
    c.db(p)

    p = c.add("correct", cmd_correct, "correct a recorded match and re-rate every later match")
    p.add_argument("match_id", metavar="MATCH_ID", help="the recorded match's id")
    p.add_argument("--reason", required=True, help="why (kept in the audit; not empty)")
    p.add_argument("--scores", nargs="+", metavar="S", help="the new scores, one per side")
    p.add_argument("--ranks", nargs="+", metavar="R", help="the new ranks, one per side")
    p.add_argument("--played-at", metavar="TIME", help="the new time (ISO-8601)")
    p.add_argument("--teams", metavar="JSON", help='the new teams, e.g. \'[["a"],["b"]]\'')
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=JSON",
        help=f"any field to change, its value as JSON (repeatable; {', '.join(FIELDS)})",
    )
    c.db(p)

    p = c.add("edits", cmd_edits, "the audit of the league's corrections, oldest first")
    p.add_argument("--match", metavar="ID", help="only the edits of this match")
    p.add_argument("--player", metavar="ID", help="only the edits of matches this player played")
    c.db(p)
