"""Matches in CSV with a header row: one column per key of the match format
(docs/matches.md#csv), read by :func:`rankcraft.io.read_match_dicts` beside JSON Lines.

The header names match keys (``id``, ``played_at``, ``teams``, ``scores`` ...); each row is
one match. ``id`` and ``played_at`` cells are text as written; every other cell is JSON
text (``[["alice"], ["bob"]]``, ``[1, 0]``, ``0.5``), which is how ``sqlite-utils`` and
most databases write a list column to CSV; an empty cell leaves the key out. The dicts
then go through :func:`rankcraft.parse_match` like any JSON line.

>>> rows = ['id,played_at,teams,scores\\n', 'm1,2024-05-01,"[[""a""], [""b""]]","[1, 0]"\\n']
>>> list(csv_match_dicts(enumerate(rows, 1), "x.csv", {"id", "played_at", "teams", "scores"}))
[(2, {'id': 'm1', 'played_at': '2024-05-01', 'teams': [['a'], ['b']], 'scores': [1, 0]})]
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from .errors import MatchError
from .jsontext import JSONTextError, loads_strict
from .suggest import did_you_mean

FORMAT_HINT = (
    "rankcraft reads JSON Lines (one match object per line, .jsonl or .jsonl.gz) or CSV "
    "with a header row of match keys (id, played_at, teams, scores ...); see docs/matches.md"
)
"""Said after an error on a file's first line that is not in either format."""

MAX_CELL = 128 * 1024
"""The most bytes (UTF-8) a CSV cell may hold: the csv module's own limit (131,072
characters), counted in bytes and named with its line and column."""

TEXT_COLUMNS = ("id", "played_at")
"""Columns whose cells are taken as written (every other cell is JSON text)."""


def looks_like_csv(name: str, first: str, keys: Iterable[str]) -> bool:
    """Whether a match file is CSV: its name ends in ``.csv`` (or ``.csv.gz``), or its first
    non-blank line (which in JSON Lines opens an object) is a header of match keys with
    ``id`` among them."""
    if name.lower().endswith((".csv", ".csv.gz")):
        return True
    if first.lstrip().startswith(("{", "[")):
        return False
    header = [c.strip() for c in next(csv.reader([first]), [])]
    return "id" in header and set(header) <= set(keys)


def _header(row: list[str], line: int, keys: Iterable[str]) -> list[str]:
    """The columns of a header row; an unknown or repeated one is refused."""
    columns = [c.strip() for c in row]
    known = sorted(keys)
    for column in columns:
        if column not in known:
            raise MatchError(
                f"the CSV header names an unknown column {column!r}"
                f"{did_you_mean(column, known)} (the columns are match keys: "
                f"{', '.join(known)}; docs/matches.md#csv)",
                line=line,
                field=column,
            )
        if columns.count(column) > 1:
            raise MatchError(f"the CSV header names {column!r} twice", line=line, field=column)
    if "id" not in columns:
        raise MatchError(
            "the CSV header has no 'id' column (docs/matches.md#csv)", line=line, field="id"
        )
    return columns


def _cell(column: str, text: str, line: int) -> Any:
    if len(text) * 4 > MAX_CELL and len(text.encode("utf-8", "surrogatepass")) > MAX_CELL:
        raise _too_long(column, line)
    if column in TEXT_COLUMNS:
        return text
    try:
        return loads_strict(text, what=f"column {column!r}")
    except JSONTextError as exc:
        raise MatchError(
            f'\'{column}\' must be JSON text in a CSV cell (e.g. [["alice"], ["bob"]] or '
            f"[1, 0]): {text!r} ({str(exc).split(': ', 1)[-1]})",
            line=line,
            field=column,
        ) from None


def csv_match_dicts(
    lines: Iterable[tuple[int, str]], name: str, keys: Iterable[str]
) -> Iterator[tuple[int, Any]]:
    """``(line number, match dict)`` for each row of CSV ``lines`` (``(number, text)``
    pairs, the header first), the number being the row's first line; ``keys``: the
    columns a header may name (the match keys).

    :raises MatchError: a bad header, a row of the wrong length, a cell that is not JSON.
    """
    taken: list[tuple[int, str]] = []  # the lines of the row being read

    def text() -> Iterator[str]:
        for number, line in lines:
            taken.append((number, line))
            yield line

    reader = csv.reader(text(), skipinitialspace=True)
    columns: list[str] = []  # (the header's, once read)
    for row in _rows(reader, taken, columns):
        line, taken[:] = (taken[0][0] if taken else 0), []
        if not any(cell.strip() for cell in row):
            continue
        if not columns:
            columns[:] = _header(row, line, keys)
            continue
        if len(row) != len(columns):
            raise MatchError(
                f"a CSV row has {len(row)} cells, the header {len(columns)} ({name})", line=line
            )
        yield (
            line,
            {c: _cell(c, cell, line) for c, cell in zip(columns, row, strict=True) if cell != ""},
        )


def _rows(
    reader: Iterator[list[str]],
    taken: list[tuple[int, str]],
    columns: list[str],
) -> Iterator[list[str]]:
    """The reader's rows; a row the csv module refuses (a cell past its size limit, a
    quote left open) is a :class:`MatchError` at its line (and a cell too long, at its
    column), not an internal error."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            line = taken[0][0] if taken else 0
            if "field larger than field limit" in str(exc):
                index = _long_cell("".join(text for _, text in taken))
                column = columns[index] if index < len(columns) else f"column {index + 1}"
                raise _too_long(column, line) from None
            raise MatchError(f"not readable as CSV: {exc}", line=line) from None
        yield row


def _too_long(column: str, line: int) -> MatchError:
    return MatchError(
        f"a CSV cell in column {column!r} holds more than {MAX_CELL // 1024} KiB",
        line=line,
        field=column,
    )


def _long_cell(text: str) -> int:
    """The index of the first cell of a row's ``text`` longer than :data:`MAX_CELL`
    (characters: the csv module's count), found where the csv module stopped at it."""
    index = size = position = 0
    quoted, fresh = False, True  # (in quotes; at a cell's start, spaces skipped)
    while position < len(text) and size <= MAX_CELL:
        char = text[position]
        position += 1
        if quoted:
            if char == '"' and text[position : position + 1] == '"':
                size, position = size + 1, position + 1
            elif char == '"':
                quoted = False
            else:
                size += 1
        elif char == '"' and fresh:
            quoted, fresh = True, False
        elif char == ",":
            index, size, fresh = index + 1, 0, True
        elif not (fresh and char == " "):
            size, fresh = size + 1, False
    return index
