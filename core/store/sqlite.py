"""A store in one SQLite file (the default on disk).

Layout (schema version 2)::

    meta(key, value)                      schema_version, ruleset_name, ruleset_toml, ...
    players(id, skill, rank, matches, last_played, open) skill/rank/open as JSON objects
    matches(seq, id, played_at, match, report)           match/report as JSON objects
    participants(player, seq)                            index of who played which match

Each batch of matches is one transaction; the engine rolls a failed batch back whole.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InputError, StateError
from ..io import parse_match
from ..model import Match, PlayerRecord, Report, format_time
from .base import SCHEMA_VERSION, Codec, MatchRow

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE players (
    id TEXT PRIMARY KEY,
    skill TEXT NOT NULL,
    rank TEXT,
    matches INTEGER NOT NULL,
    last_played TEXT,
    open TEXT
);
CREATE TABLE matches (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    played_at TEXT NOT NULL,
    match TEXT NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE participants (
    player TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (player, seq)
) WITHOUT ROWID;
"""

_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class SQLiteStore:
    """Players, matches and reports in an SQLite database file.

    :param path: the database file.
    :param create: create the file when it does not exist (otherwise refuse).
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise InputError(f"no database at {str(self.path)!r}")
        try:
            # Several processes may record into one file: a writer waits up to `timeout`
            # seconds for another's transaction to end (SQLite's busy handler retries).
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=60.0
            )
            self._db.execute("PRAGMA foreign_keys = ON")
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{str(self.path)!r} is not a rankcraft database: {exc}") from None
        self._new = "meta" not in tables
        if self._new and tables:
            self._db.close()
            raise InputError(
                f"{str(self.path)!r} is an SQLite database but not a rankcraft one "
                f"(tables: {', '.join(sorted(tables))})"
            )
        if not self._new:
            version = self._meta("schema_version")
            if version != str(SCHEMA_VERSION):
                self._db.close()
                raise StateError(
                    f"{str(self.path)!r} has rankcraft schema version {version}, this rankcraft "
                    f"reads version {SCHEMA_VERSION}"
                )
        self._codec: Codec | None = None
        self._next_seq = 1

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def codec(self) -> Codec:
        assert self._codec is not None, "attach() first"
        return self._codec

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        self._codec = codec
        if self._new:
            # WAL: readers never block the one writer; several processes can record
            self._db.execute("PRAGMA journal_mode = WAL")
            from .. import __version__

            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("schema_version", str(SCHEMA_VERSION)),
                        ("ruleset_name", ruleset_name),
                        ("ruleset_toml", ruleset_toml),
                        ("created_with", __version__),
                    ],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._new = False
            return None
        row = self._db.execute("SELECT max(seq) FROM matches").fetchone()
        self._next_seq = (row[0] or 0) + 1
        return (self._meta("ruleset_name") or "", self._meta("ruleset_toml") or "")

    def stored_ruleset(self) -> tuple[str, str] | None:
        """(name, toml) of the ruleset the database was created with, or None if new."""
        if self._new:
            return None
        return (self._meta("ruleset_name") or "", self._meta("ruleset_toml") or "")

    def load_players(self) -> dict[str, PlayerRecord]:
        decode = self.codec.record_from_dict
        out = {}
        for pid, skill, rank, matches, last, open_ in self._db.execute(
            "SELECT id, skill, rank, matches, last_played, open FROM players"
        ):
            data = {
                "id": pid,
                "skill": json.loads(skill),
                "rank": None if rank is None else json.loads(rank),
                "matches": matches,
                "last_played": last,
            }
            if open_ is not None:
                data["open"] = json.loads(open_)
            out[pid] = decode(data)
        return out

    def match_ids(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT id FROM matches")}

    def count_matches(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM matches").fetchone()[0])

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        row = self._db.execute("SELECT max(seq) FROM matches").fetchone()
        self._next_seq = (row[0] or 0) + 1

    def generation(self) -> int:
        """How many batches were ever committed (read inside a transaction)."""
        value = self._meta("generation")
        return 0 if value is None else int(value)

    def bump_generation(self) -> int:
        """Count this batch (inside its transaction); returns the new generation."""
        new = self.generation() + 1
        self.set_meta("generation", str(new))
        return new

    def write(
        self, players: Iterable[PlayerRecord], matches: Iterable[tuple[Match, Report]]
    ) -> None:
        encode = self.codec.record_to_dict
        report_dict = self.codec.report_to_dict
        rows = []
        for record in players:
            data = encode(record)
            rank = data["rank"]
            open_ = data.get("open")
            rows.append(
                (
                    record.id,
                    _dumps(data["skill"]),
                    None if rank is None else _dumps(rank),
                    record.matches,
                    data["last_played"],
                    None if open_ is None else _dumps(open_),
                )
            )
        self._db.executemany(
            "INSERT INTO players (id, skill, rank, matches, last_played, open) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET skill = excluded.skill, rank = excluded.rank, "
            "matches = excluded.matches, last_played = excluded.last_played, "
            "open = excluded.open",
            rows,
        )
        match_rows = []
        part_rows = []
        seq = self._next_seq
        for match, report in matches:
            match_rows.append(
                (
                    seq,
                    match.id,
                    format_time(match.played_at),
                    _dumps(match.to_dict()),
                    _dumps(report_dict(report)),
                )
            )
            for side in match.teams:
                for player in side:
                    part_rows.append((player, seq))
            seq += 1
        self._next_seq = seq
        self._db.executemany(
            "INSERT INTO matches (seq, id, played_at, match, report) VALUES (?, ?, ?, ?, ?)",
            match_rows,
        )
        self._db.executemany("INSERT INTO participants (player, seq) VALUES (?, ?)", part_rows)

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _row(self, seq: int, match: str, report: str) -> MatchRow:
        return MatchRow(
            seq=seq,
            match=parse_match(json.loads(match)),
            report=self.codec.report_from_dict(json.loads(report)),
        )

    def player_matches(self, player: str, limit: int | None) -> list[MatchRow]:
        sql = (
            "SELECT m.seq, m.match, m.report FROM participants p JOIN matches m ON m.seq = p.seq "
            "WHERE p.player = ? ORDER BY p.seq DESC"
        )
        args: tuple[Any, ...] = (player,)
        if limit is not None:
            sql += " LIMIT ?"
            args = (player, limit)
        return [self._row(*r) for r in self._db.execute(sql, args)]

    def match(self, match_id: str) -> MatchRow | None:
        row = self._db.execute(
            "SELECT seq, match, report FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
        return None if row is None else self._row(*row)

    def get_meta(self, key: str) -> str | None:
        return None if self._new else self._meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def close(self) -> None:
        self._db.close()
