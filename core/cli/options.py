"""The options the command groups share (``--db``, ``--json``, ``--max-sides``, ...), their
checks, and the league a command's ``--db`` names.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engine import League
from ..errors import InputError
from ..io import MAX_FUTURE, MAX_PLAYERS, MAX_SIDES, parse_time
from ..model import format_time
from ..ruleset import loads_stored_ruleset
from ..store import SQLiteStore, is_postgres_url

DEFAULT_DB = "rankcraft.sqlite"
DB_ENV = "RANKCRAFT_DB"


class Commands:
    """Adds subcommands to the parser (the helpers every command group shares)."""

    def __init__(self, sub: Any) -> None:
        self.sub = sub
        self.parsers: dict[str, argparse.ArgumentParser] = {}

    def add(self, name: str, func: Callable[..., int], help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = self.sub.add_parser(name, help=help_, description=help_)
        self.parsers[name] = p
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        return p

    @staticmethod
    def matches(p: argparse.ArgumentParser, *, stdin: bool = False) -> None:
        """The match file argument, saying every format it may be in."""
        p.add_argument(
            "matches",
            help="match file: JSON Lines (.jsonl) or CSV with a header row (.csv), either "
            f"gzipped (.gz){', or - for standard input' if stdin else ''} (docs/matches.md)",
        )

    @staticmethod
    def home_from(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--home-from",
            metavar="FIELD",
            help="take each match's home side from this field, e.g. meta.home_team_index",
        )

    @staticmethod
    def limits(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--max-sides",
            type=int,
            default=MAX_SIDES,
            metavar="N",
            help=f"most sides in a match ({MAX_SIDES})",
        )
        p.add_argument(
            "--max-players",
            type=int,
            default=MAX_PLAYERS,
            metavar="N",
            help=f"most players in a match, all sides ({MAX_PLAYERS})",
        )

    @staticmethod
    def max_future(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument(
            "--max-future",
            type=float,
            default=MAX_FUTURE,
            metavar="SECONDS",
            help=f"{what} ({MAX_FUTURE:g})",
        )

    @staticmethod
    def db(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db",
            help=f"SQLite database file or postgresql:// URL (default: ${DB_ENV} or {DEFAULT_DB})",
        )


# -- checks of options ------------------------------------------------------------------------


def checked_limits(args: argparse.Namespace) -> tuple[int, int]:
    """``--max-sides`` and ``--max-players``, checked as the service checks them."""
    for option, least in (("max_sides", 2), ("max_players", 1)):
        value = getattr(args, option)
        if not least <= value <= 1_000_000:
            raise InputError(
                f"'--{option.replace('_', '-')}' must be a whole number in "
                f"[{least}, 1000000]: {value}"
            )
    return args.max_sides, args.max_players


def check_top(top: int | None) -> None:
    """Refuse a ``--top`` that is not a count of players (-3 listed all but 3, 0 none)."""
    if top is not None:
        check_count("top", top)


def check_count(option: str, value: int) -> None:
    """Refuse a count option (``--top``, ``--trials``, ``--jobs``) below 1: such a value
    did nothing, or something else than asked, and exited 0."""
    if value < 1:
        raise InputError(f"'--{option}' must be a whole number >= 1: {value}")


def check_at(league: League, at: str | None, why: str) -> None:
    """Refuse an ``--at`` earlier than the league's last match, saying ``why``."""
    if at is None:
        return
    when = parse_time(at, field="--at")
    last = league.latest_played()
    if last is not None and when < last:
        raise InputError(
            f"'--at' is earlier than the league's last match, {format_time(last)} ({why}): {at}"
        )


# -- the league --db names ----------------------------------------------------------------


def db_path(args: argparse.Namespace) -> str:
    """The ``--db`` of the command, else ``$RANKCRAFT_DB``, else ``rankcraft.sqlite``."""
    return str(args.db or os.environ.get(DB_ENV) or DEFAULT_DB)


def database_exists(db: str) -> bool:
    """Whether a league is already kept at ``db`` (a file path or a PostgreSQL URL)."""
    if not is_postgres_url(db):
        return Path(db).exists()
    try:
        League.open(db, create=False).close()
    except InputError:
        return False
    return True


def open_existing(args: argparse.Namespace, *, read_only: bool = False) -> League:
    """The league at ``--db``; ``read_only`` for commands that only read: an SQLite file is
    then opened read-only (``mode=ro``), so they work on a file or folder they cannot write."""
    db = db_path(args)
    ruleset = getattr(args, "ruleset", None)
    if not read_only or is_postgres_url(db):
        return League.open(db, ruleset, create=False)
    # League.open with a read-only store (League.open itself takes no store)
    store = SQLiteStore(db, create=False, read_only=True)
    try:
        if ruleset is None:
            stored = store.stored_ruleset()
            if stored is None:
                raise InputError(f"no database at {db!r}")
            ruleset = loads_stored_ruleset(stored[1], source=f"the ruleset stored in {db!r}")
        return League(ruleset, store=store)
    except BaseException:
        store.close()
        raise
