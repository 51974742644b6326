"""What a player search takes: the longest text, and the check of a search's text.

The search itself is a read of the league's boards (:meth:`rankcraft.boards.Boards.search`,
:meth:`rankcraft.League.search`); this module imports nothing of rankcraft but its errors,
so that the id suggestions of :mod:`rankcraft.suggest` share the limit without an import
circle.
"""

from __future__ import annotations

from typing import Any

from .errors import InputError

SEARCH_TEXT_MAX = 1000
"""The longest text a player search takes (characters): longer is refused."""


def check_search_text(text: Any, field: str) -> None:
    """Refuse a search's text that is not a text of at most :data:`SEARCH_TEXT_MAX`
    characters, naming ``field``."""
    if not isinstance(text, str) or len(text) > SEARCH_TEXT_MAX:
        raise InputError(
            f"'{field}' must be a text of at most {SEARCH_TEXT_MAX} characters: {text!r}"[:300]
        )
