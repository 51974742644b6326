"""What the SQLite and PostgreSQL stores share: the tables, the statements, the codec.

Layout (schema version 2)::

    meta(key, value)                      schema_version, ruleset_name, ruleset_toml, ...
    players(id, skill, rank, matches, last_played, open) skill/rank/open as JSON objects
    matches(seq, id, played_at, match, report)           match/report as JSON objects
    participants(player, seq)                            index of who played which match

Statements are written with ``?`` placeholders; a dialect turns them into its driver's.
Each batch of matches is one transaction; the engine rolls a failed batch back whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import StateError
from ..io import parse_match
from ..model import PlayerRecord, format_time
from .base import SCHEMA_VERSION, Codec, Entry, MatchRow

SCHEMA = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE players (id TEXT PRIMARY KEY, skill TEXT NOT NULL, rank TEXT, "
    "matches INTEGER NOT NULL, last_played TEXT, open TEXT)",
    "CREATE TABLE matches (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
    "played_at TEXT NOT NULL, match TEXT NOT NULL, report TEXT NOT NULL)",
    "CREATE TABLE participants (player TEXT NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY (player, seq))",
]

_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class SQLStore:
    """A store in SQL tables; subclasses give the connection and the dialect.

    :param label: how messages name the database (a path or a URL without password).
    """

    label: str
    _db: Any
    _new: bool
    _codec: Codec | None
    _next_seq: int

    # -- the dialect --------------------------------------------------------------------

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _begin_write(self) -> None:
        """Start a transaction that holds the league's writer lock."""
        raise NotImplementedError

    def _in_transaction(self) -> bool:
        raise NotImplementedError

    def _schema(self) -> list[str]:
        return SCHEMA

    def _prepare_new(self) -> None:
        """Dialect settings for a new database (before its schema is created)."""

    def _check_version(self) -> None:
        version = self._meta("schema_version")
        if version != str(SCHEMA_VERSION):
            self.close()
            raise StateError(
                f"{self.label!r} has rankcraft schema version {version}, this rankcraft "
                f"reads version {SCHEMA_VERSION}"
            )

    # -- shared ---------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self._execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def codec(self) -> Codec:
        assert self._codec is not None, "attach() first"
        return self._codec

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        self._codec = codec
        if self._new:
            self._prepare_new()
            from .. import __version__

            self._begin_write()
            try:
                for statement in self._schema():
                    self._execute(statement)
                self._executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("schema_version", str(SCHEMA_VERSION)),
                        ("ruleset_name", ruleset_name),
                        ("ruleset_toml", ruleset_toml),
                        ("created_with", __version__),
                    ],
                )
                self._execute("COMMIT")
            except BaseException:
                self._execute("ROLLBACK")
                raise
            self._new = False
            return None
        row = self._execute("SELECT max(seq) FROM matches").fetchone()
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
        for pid, skill, rank, matches, last, open_ in self._execute(
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
        return {r[0] for r in self._execute("SELECT id FROM matches")}

    def count_matches(self) -> int:
        return int(self._execute("SELECT count(*) FROM matches").fetchone()[0])

    def begin(self) -> None:
        self._begin_write()
        row = self._execute("SELECT max(seq) FROM matches").fetchone()
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

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        encode = self.codec.record_to_dict
        codec = self.codec
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
        self._executemany(
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
        for entry in matches:
            match_rows.append(
                (
                    seq,
                    entry.id,
                    format_time(entry.played_at),
                    _dumps(entry.match_dict()),
                    _dumps(entry.report_dict(codec)),
                )
            )
            for side in entry.teams:
                for player in side:
                    part_rows.append((player, seq))
            seq += 1
        self._next_seq = seq
        self._executemany(
            "INSERT INTO matches (seq, id, played_at, match, report) VALUES (?, ?, ?, ?, ?)",
            match_rows,
        )
        self._executemany("INSERT INTO participants (player, seq) VALUES (?, ?)", part_rows)

    def commit(self) -> None:
        self._execute("COMMIT")

    def rollback(self) -> None:
        if self._in_transaction():
            self._execute("ROLLBACK")

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
        return [self._row(*r) for r in self._execute(sql, args)]

    def match(self, match_id: str) -> MatchRow | None:
        row = self._execute(
            "SELECT seq, match, report FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
        return None if row is None else self._row(*row)

    def get_meta(self, key: str) -> str | None:
        return None if self._new else self._meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def close(self) -> None:
        self._db.close()
