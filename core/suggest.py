""" "Did you mean" for names a user typed: player ids, ruleset names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from .search import SEARCH_TEXT_MAX


class Searchable(Protocol):
    """What :func:`player_candidates` asks of a league (:class:`rankcraft.League` is one;
    a protocol, so that this module, read by the match readers below the league, imports
    nothing above them)."""

    def __len__(self) -> int: ...

    def players(self) -> Sequence[Any]: ...

    def search(self, text: str, limit: int = 10) -> list[str]: ...


def close_to(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``choices`` most like ``word`` (difflib's ratio >= 0.6; a choice
    that differs only in case comes first)."""
    pool = list(choices)
    folded = [c for c in pool if c.casefold() == word.casefold() and c != word]
    rest = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    return (folded + [c for c in rest if c not in folded])[:n]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x' or 'y'?)`` for the choices close to ``word``, else ``""``.

    >>> did_you_mean("glicko", ["elo", "glicko1", "glicko2"])
    " (did you mean 'glicko2' or 'glicko1'?)"
    >>> did_you_mean("zed", ["alice"])
    ''
    """
    found = close_to(word, choices)
    if not found:
        return ""
    return f" (did you mean {' or '.join(repr(c) for c in found)}?)"


SUGGEST_FROM_ALL = 20_000
"""Up to this many players, an unknown id is compared with every id; beyond, with the ids
:meth:`League.search` finds for parts of it (a few reads of the id index, not every
player: on 864,605 players the whole list took 17 s and 529 MB)."""


def player_candidates(league: Searchable, player: str) -> Iterable[str]:
    """The player ids an unknown id ``player`` is compared with: every id in a league of
    up to :data:`SUGGEST_FROM_ALL` players, else those :meth:`League.search` finds for
    parts of it."""
    if len(league) <= SUGGEST_FROM_ALL:
        return [r.id for r in league.players()]
    half = max(1, len(player) // 2)
    parts = {p[:SEARCH_TEXT_MAX] for p in (player[:-1], player[:half], player[half:])}
    return {i for part in parts if part for i in league.search(part, 100)}
