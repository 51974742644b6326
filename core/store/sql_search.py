"""The search of player ids in the SQL tables: those that start with a text, then those
that hold it, ASCII letters in either case, each read along an index of the ids in id
order and stopping at the limit.
"""

from __future__ import annotations

from typing import Any

from ..model import fold_ascii
from .dialect import capitals
from .sql_boards import SQLBoards


def _after(prefix: str) -> str | None:
    """The least text after every text that starts with ``prefix`` (code-point order,
    never a surrogate), or None when there is none (``prefix`` is all U+10FFFF)."""
    while prefix:
        last = ord(prefix[-1])
        if last != 0x10FFFF:
            return prefix[:-1] + chr(0xE000 if last == 0xD7FF else last + 1)
        prefix = prefix[:-1]
    return None


class SQLSearch(SQLBoards):
    """Ids that start with a text or hold it."""

    def search(self, text: str, limit: int) -> list[str]:
        """Up to ``limit`` ids that start with ``text``, then those that hold it, each
        in id order (ASCII letters in either case), read along an index of the ids in
        that order and stopping at ``limit``: SQLite's primary key; on PostgreSQL, whose
        primary key has the database's collation, ``players_by_id`` (schema 7)."""
        players, _ = self._board(None, None)
        starts, first = self._holding(text, prefix=True)
        holds, anywhere = self._holding(text)
        holding = ([holds, f"NOT {starts}"], [anywhere, first])
        found: list[str] = []
        for where, args in [*self._prefix_ranges(text, starts, first), holding]:
            if len(found) < limit:
                sql = (
                    f"SELECT id FROM players WHERE {' AND '.join(players + where)} "
                    f"ORDER BY {self._id_order()} LIMIT ?"
                )
                found += [row[0] for row in self._execute(sql, [*args, limit - len(found)])]
        return found

    def _prefix_ranges(
        self, text: str, starts: str, first: str
    ) -> list[tuple[list[str], list[Any]]]:
        """The conditions (and parameters) of the ids that start with ``text``, as index
        ranges in id order: one per case of its first character (capitals sort first),
        each from the smallest case of the rest to the code point after its largest."""
        ids = self._id_order()
        head, rest = text[0], text[1:]
        ranges = []
        for case in dict.fromkeys((capitals(head), fold_ascii(head))):
            low, high = case + capitals(rest), case + fold_ascii(rest)
            where, args = [starts, f"{ids} >= ?"], [first, low]
            if (after := _after(high)) is not None:
                where.append(f"{ids} < ?")
                args.append(after)
            ranges.append((where, args))
        return ranges
