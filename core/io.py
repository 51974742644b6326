"""Reading matches: JSON Lines and CSV files (plain or gzip), and the limits on what is
taken in; with the validation of one match (:mod:`rankcraft.matchparse`), whose names are
read from here too.

>>> m = parse_match({"id": "m1", "played_at": "2024-05-01", "teams": [["a"], ["b"]],
...                  "scores": [2, 1]})
>>> m.played_at.isoformat(), m.places
('2024-05-01T00:00:00+00:00', (1, 2))
>>> parse_match({"id": "m2", "played_at": "2024-05-01", "teams": [["a"], ["a"]],
...              "scores": [1, 0]})
Traceback (most recent call last):
rankcraft.errors.MatchError: match 'm2': player 'a' appears twice in 'teams'
"""

from __future__ import annotations

import gzip
import io
import itertools
import sys
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

from .csvmatches import FORMAT_HINT, csv_match_dicts, looks_like_csv
from .errors import InputError, MatchError
from .jsontext import JSONTextError, loads_strict
from .matchparse import MATCH, MATCH_KEYS, bad_text, build_match, parse_match, parse_time
from .model import Match, format_time

__all__ = [
    "MATCH",
    "MATCH_KEYS",
    "MAX_FUTURE",
    "MAX_PLAYERS",
    "MAX_SECONDS_AHEAD",
    "MAX_SIDES",
    "bad_text",
    "build_match",
    "over_limits",
    "parse_match",
    "parse_time",
    "past_the_clock",
    "read_match_dicts",
    "read_match_text",
    "read_matches",
]


BOM = "\ufeff"
"""The byte order mark some programs (Excel) write before UTF-8 text: skipped."""

MAX_FUTURE = 86_400.0
"""How many seconds past the clock a time may be, by default, where rankcraft takes
times it did not see happen: a match's ``played_at`` sent to the service and an imported
``last_played`` (``--max-future``). Beyond it a player would be locked out: every later
match of theirs would be refused as played before their last."""


MAX_SIDES = 64
"""The most sides a match may have, by default, in the service (``--max-sides``) and in
``rankcraft replay`` (the same option): a match's work grows with the square of its sides
(a 10,000-side line ran for minutes)."""
MAX_PLAYERS = 256
"""The most players a match may have, all sides together, by default (``--max-players``)."""


def over_limits(sides: Any, field: str, max_sides: int, max_players: int) -> str | None:
    """The refusal of a match's ``teams`` (named ``field``) with more sides or players
    than the limits, else None (also for what is not a list: the parser names that)."""
    if not isinstance(sides, list):
        return None
    if len(sides) > max_sides:
        return f"'{field}' has {len(sides)} sides, more than the limit of {max_sides} (--max-sides)"
    players = sum(len(side) for side in sides if isinstance(side, list | str))
    if players > max_players:
        return (
            f"'{field}' has {players} players, more than the limit of {max_players} (--max-players)"
        )
    return None


MAX_SECONDS_AHEAD = 1e9
"""The largest ``max_future`` taken (about 31 years): beyond, the bound means nothing."""


def past_the_clock(
    when: datetime, max_future: float, field: str, clock: str = "the server's clock"
) -> str | None:
    """The refusal of ``when`` (UTC) when it is more than ``max_future`` seconds after
    ``clock`` (this process's clock, named so), naming ``field`` and the value; None when
    it is not."""
    if not 0 <= max_future <= MAX_SECONDS_AHEAD:  # (NaN too)
        raise InputError(
            f"'max_future' must be a number of seconds in [0, {MAX_SECONDS_AHEAD:g}]: "
            f"{max_future!r}"
        )
    now = datetime.now(UTC)
    if when <= now + timedelta(seconds=max_future):
        return None
    return (
        f"'{field}' {format_time(when)} is later than {clock} "
        f"({format_time(now)}) plus {max_future:g} s (--max-future)"
    )


def _open_binary(path: str | Path) -> IO[bytes]:
    if str(path) == "-":
        return sys.stdin.buffer
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise InputError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    magic = handle.peek(2)[:2] if hasattr(handle, "peek") else b""
    if magic == b"\x1f\x8b":
        handle.close()
        return cast("IO[bytes]", gzip.open(path, "rb"))
    if str(path).endswith(".gz"):
        handle.close()
        raise InputError(f"{str(path)!r} is not a gzip file (it ends in .gz)")
    return handle


def read_match_dicts(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, parsed JSON)`` for each non-blank line of a JSON Lines file,
    or ``(line number, match dict)`` for each row of a CSV file with a header
    (:mod:`rankcraft.csvmatches`: a name ending in ``.csv``, or a first line that is a
    header of match keys).

    Reads ``.jsonl`` and ``.jsonl.gz`` (gzip is detected by its magic bytes), ``.csv``
    and ``.csv.gz``, and ``-`` for standard input, streaming: the file is never loaded
    whole. A UTF-8 byte order mark before the first line (as Excel writes CSV) is
    skipped. A JSON array, or a first line in neither format, is refused with a hint
    that names both formats and docs/matches.md. The lab reads an uploaded file's text
    the same way (:func:`read_match_text`).

    :raises MatchError: a line that is not JSON (with its line number).
    :raises InputError: an unreadable, corrupt or truncated gzip file.
    """
    handle = _open_binary(path)
    # Undecodable bytes are kept as lone surrogates (surrogateescape) and found line by
    # line below: a strict decoder fails while decoding a whole chunk read ahead, so the
    # line it could name was the last one handed out (859 for a bad byte on line 900).
    text = io.TextIOWrapper(cast(BinaryIO, handle), encoding="utf-8", errors="surrogateescape")
    read = [0]  # the last line read
    try:
        yield from _match_dicts(_lines(text, str(path), read), str(path))
    except EOFError:
        raise InputError(
            f"{str(path)!r}: truncated gzip file (it ends after line {read[0]})"
        ) from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(f"{str(path)!r}: corrupt gzip data after line {read[0]}: {exc}") from None
    finally:
        if str(path) != "-":
            text.close()


def read_match_text(text: str, name: str) -> Iterator[tuple[int, Any]]:
    """:func:`read_match_dicts` of a file's ``text`` (already decoded) named ``name``: the
    lab's uploaded history, read as the command line reads a file.

    >>> list(read_match_text('\\ufeff{"id": "m1"}\\n', "upload.jsonl"))  # (a BOM skipped)
    [(1, {'id': 'm1'})]
    """
    return _match_dicts(_lines(io.StringIO(text, newline=None), name, [0]), name)


def _match_dicts(lines: Iterator[tuple[int, str]], name: str) -> Iterator[tuple[int, Any]]:
    """The match dicts of a file's numbered non-blank ``lines``: CSV rows or JSON lines."""
    first = next(lines, None)
    if first is None:
        return
    if looks_like_csv(name, first[1], MATCH_KEYS):
        yield from csv_match_dicts(itertools.chain([first], lines), name, MATCH_KEYS)
        return
    if first[1].lstrip().startswith("["):
        raise MatchError(f"a JSON array, not JSON Lines: {FORMAT_HINT}", line=first[0])
    for number, line in itertools.chain([first], lines):
        try:  # (strict: no NaN, no duplicate keys, no runaway nesting or numbers)
            yield number, loads_strict(line, what="line")
        except JSONTextError as exc:
            reason = str(exc).split(": ", 1)[1].replace("(line 1, column", "(column")
            if not reason.startswith("not JSON"):
                reason = f"refused JSON: {reason}"
            elif number == first[0]:  # the file is not JSON Lines at all
                reason = f"{reason}; {FORMAT_HINT}"
            raise MatchError(reason, line=number, field=exc.field) from None


def _lines(text: IO[str], name: str, read: list[int]) -> Iterator[tuple[int, str]]:
    """The non-blank lines of ``text`` with their 1-based numbers, each checked to be UTF-8
    text; ``read[0]`` follows the last line read."""
    for number, line in enumerate(text, 1):
        read[0] = number
        if number == 1 and line.startswith(BOM):  # (Excel's CSV: a byte order mark first)
            line = line[1:]
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(f"{name!r}: line {number} is not UTF-8 text") from None
        if line.strip():
            yield number, line


def read_matches(path: str | Path) -> Iterator[Match]:
    """Yield validated matches from a JSON Lines file; errors name the line."""
    for number, data in read_match_dicts(path):
        yield parse_match(data, line=number)
