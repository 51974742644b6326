"""Match files as the commands read them: streamed match dicts, each held to ``--max-sides``
and ``--max-players`` before its work, with the lines they came from remembered.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

from ..errors import MatchError
from ..io import MAX_PLAYERS, MAX_SIDES, over_limits, read_match_dicts


class LineTracker:
    """The match dicts of a file, streamed, remembering the lines of the last ``window``
    handed out (the league reads a chunk ahead; its errors give the item's position).

    Dicts, not parsed matches: the league validates them itself, on its fused 1-v-1
    path when it can, and raises the same errors otherwise."""

    def __init__(
        self,
        path: str,
        home_from: str | None = None,
        window: int = 0,
        limits: tuple[int, int] = (MAX_SIDES, MAX_PLAYERS),
    ) -> None:
        self.path = path
        self.home_from = home_from
        self.limits = limits  # (most sides, most players) of a match
        self.count = 0  # items handed out
        self.homes = 0  # items naming a home side (for the home-advantage warning)
        self.lines: collections.deque[int] = collections.deque(maxlen=window + 10_000)

    def __iter__(self) -> Iterator[Any]:
        from ..evaluate import with_home

        for number, data in read_match_dicts(self.path):
            if self.home_from and type(data) is dict:
                (data,) = with_home([data], self.home_from)
            if type(data) is dict:
                within_limits(data, number, self.limits)
                if data.get("home") is not None:
                    self.homes += 1
            self.lines.append(number)
            self.count += 1
            yield data

    def line_of(self, item: int | None) -> int | None:
        """The line of the ``item``-th match handed out (0-based), if still remembered."""
        if item is None:
            return None
        index = item - (self.count - len(self.lines))
        return self.lines[index] if 0 <= index < len(self.lines) else None


def within_limits(data: dict[str, Any], line: int, limits: tuple[int, int]) -> None:
    """Refuse a match of more sides or players than ``limits`` (``--max-sides``,
    ``--max-players``) before its work, which grows as sides²; the error names the line."""
    beyond = over_limits(data.get("teams"), "teams", *limits)
    if beyond is not None:
        mid = data.get("id")
        raise MatchError(beyond, match_id=mid if isinstance(mid, str) else None, line=line)


def match_dicts(path: str, home_from: str | None, limits: tuple[int, int]) -> Any:
    """Match dicts of a file, with ``home`` taken from a field when asked, each held to
    ``limits`` (the most sides and players of a match)."""
    from ..evaluate import with_home

    def dicts() -> Iterator[Any]:
        for number, data in read_match_dicts(path):
            if type(data) is dict:
                within_limits(data, number, limits)
            yield data

    return with_home(dicts(), home_from) if home_from else dicts()
