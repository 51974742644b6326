"""Opening a league over a store: the store a path names with the ruleset it was created
with (:meth:`rankcraft.League.open`), and attaching a league to a store after refusing a
store created with another ruleset (:class:`~rankcraft.errors.LeagueMismatchError`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs

from .errors import InputError, LeagueMismatchError, RulesetError
from .manager import Plugins
from .ruleset import Ruleset, dumps, load_ruleset, loads_stored_ruleset
from .store import Store, mask_url, open_store
from .store.base import Codec


def open_league_store(
    path: str | Path,
    ruleset: Ruleset | str | Path | None,
    plugins: Plugins | None,
    create: bool,
) -> tuple[Store, Ruleset]:
    """The store at ``path`` (an SQLite file or a PostgreSQL URL) and the ruleset to run
    over it: ``ruleset`` loaded, or (None) the one the database was created with.

    :raises InputError: a new database without a ruleset (the store is closed).
    """
    if ruleset is not None and not isinstance(ruleset, Ruleset):
        ruleset = load_ruleset(ruleset, plugins=plugins)
    store = open_store(path, create=create)
    try:
        stored = store.stored_ruleset()
        if ruleset is None:
            if stored is None:
                raise InputError(
                    f"{mask_url(str(path))!r} is a new database: give a ruleset "
                    "(e.g. --ruleset elo)"
                )
            source = f"the ruleset stored in {mask_url(str(path))!r}"
            ruleset = loads_stored_ruleset(stored[1], source=source, plugins=plugins)
    except BaseException:
        store.close()
        raise
    return store, ruleset


def check_same_ruleset(mine: Ruleset, plugins: Plugins, stored: tuple[str, str]) -> None:
    """Refuse a store created with another ruleset than ``mine``: ``stored`` is its
    ruleset's name and TOML text.

    :raises LeagueMismatchError: the stored ruleset no longer loads, or rates otherwise.
    """
    name, text = stored
    try:
        # (params an older version accepted and nothing reads are dropped: the league
        # runs the given ruleset, which cannot have them)
        theirs = loads_stored_ruleset(text, source="stored ruleset", plugins=plugins, dropped=[])
    except RulesetError as exc:
        raise LeagueMismatchError(
            f"the store was created with ruleset {name!r}, which no longer loads: {exc}"
        ) from None
    # a description and the [display] table are for people: editing them does not
    # change the ruleset's meaning (the league shows players as the given ruleset says)
    if attrs.evolve(theirs, description=mine.description, display=mine.display) != mine:
        detail = "same name, different parameters" if name == mine.name else "a different ruleset"
        raise LeagueMismatchError(
            f"the store was created with ruleset {name!r}; it cannot be used with ruleset "
            f"{mine.name!r} ({detail}); omit the ruleset to use {name!r}"
        )


def attach(store: Store, ruleset: Ruleset, plugins: Plugins, codec: Codec) -> None:
    """Attach a league of ``ruleset`` to ``store`` (``Store.attach``), after refusing a
    store created with another ruleset (:func:`check_same_ruleset`).

    :raises LeagueMismatchError: the store was created with another ruleset.
    """
    # refuse another ruleset's store before attaching, which may recompute every
    # player's sort key with this ruleset's codec
    stored = store.stored_ruleset()
    if stored is not None:
        check_same_ruleset(ruleset, plugins, stored)
    store.attach(ruleset.name, dumps(ruleset), codec)


@contextmanager
def closed_on_error(store: Store) -> Iterator[None]:
    """Close ``store`` when the block fails (a league that could not be built over it)."""
    try:
        yield
    except BaseException:
        store.close()
        raise
