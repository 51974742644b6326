""" "Did you mean" for names a user typed: player ids, ruleset names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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
