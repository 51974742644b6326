"""Creating a league's database so that a command that fails leaves nothing behind, and
never removes what another process made.

"This command created the database" is decided atomically, never from a check made when
the command started:

- an SQLite file is created with ``O_CREAT | O_EXCL`` (of two processes, one does); on
  failure it is removed only under SQLite's exclusive lock and only while it holds no
  match and no player, so what another process recorded into it stays;
- a PostgreSQL schema is created by ``CREATE SCHEMA`` (which fails if it exists), and on
  failure only rankcraft's own tables and sequences are dropped, under the league's lock,
  and only while they hold no match and no other process has the league open; the schema
  goes only if nothing else is in it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError
from .postgres import is_postgres_url
from .sqlite import MADE_AGAIN

_SUFFIXES = ("", "-journal", "-wal", "-shm")


class Creation:
    """Where a command opens its league, and what it keeps if it fails.

    Attributes:
        target: the path or URL to open.
        new: whether this command is creating the league.
        keep_on_failure: set true when the command committed matches that must stay
            although it fails (``replay --commit-every``).
    """

    def __init__(self, target: str, new: bool) -> None:
        self.target = target
        self.new = new
        self.keep_on_failure = False


@contextmanager
def creating(db: str | Path) -> Iterator[Creation]:
    """Open ``db`` through the returned :class:`Creation`'s ``target``; a new league is
    put in place when the block ends without error (or with ``keep_on_failure``), and
    removed otherwise. The league must be closed inside the block.

    :raises InputError: another process created the same SQLite league meanwhile.
    """
    text = str(db)
    if is_postgres_url(text):
        with _creating_schema(text) as creation:
            yield creation
        return
    path = Path(text)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        try:
            yield Creation(text, new=False)
        except BaseException:
            # the league was removed by the process that made it, and this one made it
            # again (SQLiteStore._make_again): it is this command's to remove
            if str(path.resolve()) in MADE_AGAIN:
                MADE_AGAIN.discard(str(path.resolve()))
                _remove_if_unused(path)
            raise
        MADE_AGAIN.discard(str(path.resolve()))
        return
    except OSError as exc:
        raise InputError(f"cannot create {text!r}: {exc.strerror}") from None
    creation = Creation(text, new=True)
    try:
        yield creation
    except BaseException:
        if not creation.keep_on_failure:
            _remove_if_unused(path)
        raise


def _remove_if_unused(path: Path) -> bool:
    """Remove a new SQLite league that holds no match and no player, under the file's
    exclusive lock (a process recording into it meanwhile keeps it). Returns whether it
    was removed."""
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=60.0)
    except sqlite3.Error:
        return False
    try:
        db.execute("BEGIN EXCLUSIVE")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        for table in ("matches", "players"):
            if table in tables and db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
                db.execute("ROLLBACK")
                return False
        for suffix in _SUFFIXES:  # (while the lock is held: nobody can start writing)
            Path(str(path) + suffix).unlink(missing_ok=True)
        db.execute("ROLLBACK")
        return True
    except sqlite3.Error:
        return False
    finally:
        db.close()


@contextmanager
def _creating_schema(url: str) -> Iterator[Creation]:
    from .postgres import create_schema, discard_league

    created = create_schema(url)
    creation = Creation(url, new=created)
    try:
        yield creation
    except BaseException:
        if created and not creation.keep_on_failure:
            discard_league(url)
        raise
