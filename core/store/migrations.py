"""The database layout and every change to it, for both SQL stores, in one place.

A new database is made by the same path an old one is migrated by: the version-1 tables,
then each :data:`STEPS` entry in order. So a migrated database and a new one have the same
tables by construction (tests/test_migrations.py compares them).

A step lists the statements both dialects run, then those only SQLite or only PostgreSQL
runs. Statements use ``?`` placeholders (none take parameters today). Steps run in one
transaction under the league's writer lock, after which ``meta.schema_version`` names the
new version and ``schema_history`` has one row per version applied. A database of a newer
version than :data:`SCHEMA_VERSION` is refused, never read.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

import attrs

Dialect = Literal["sqlite", "postgres"]

BASE: tuple[str, ...] = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE players (id TEXT PRIMARY KEY, skill TEXT NOT NULL, rank TEXT, "
    "matches INTEGER NOT NULL, last_played TEXT)",
    "CREATE TABLE matches (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
    "played_at TEXT NOT NULL, match TEXT NOT NULL, report TEXT NOT NULL)",
    "CREATE TABLE participants (player TEXT NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY (player, seq))",
)
"""Schema version 1 (SQLite makes ``participants`` a WITHOUT ROWID table)."""


PARTICIPANT_BUCKET = 65536
"""Matches (by commit order, ``seq``) per bucket of the ``participants`` index (schema 7).

The index is keyed by (bucket, player, seq): a batch's rows all fall in the newest bucket,
whose pages are few and written densely, where keyed by (player, seq) they landed at
each player's place in a tree as large as the history (on a large league, nearly every
page of it). A player's matches are read with one seek per bucket: 16 for a million
matches."""


@attrs.frozen
class Step:
    """One schema change: from ``version - 1`` to ``version``."""

    version: int
    summary: str
    both: tuple[str, ...] = ()
    sqlite: tuple[str, ...] = ()
    postgres: tuple[str, ...] = ()

    def statements(self, dialect: Dialect) -> tuple[str, ...]:
        """What ``dialect`` runs for this step, in order."""
        return (*self.both, *(self.sqlite if dialect == "sqlite" else self.postgres))


def _bucketed_participants(
    seq_type: str, without_rowid: str, rename: tuple[str, ...]
) -> tuple[str, ...]:
    """Schema 7's statements: ``participants`` rebuilt keyed by (bucket, player, seq)."""
    return (
        f"CREATE TABLE participants_7 (bucket INTEGER NOT NULL, player TEXT NOT NULL, "
        f"seq {seq_type} NOT NULL, PRIMARY KEY (bucket, player, seq)){without_rowid}",
        f"INSERT INTO participants_7 (bucket, player, seq) "
        f"SELECT seq / {PARTICIPANT_BUCKET}, player, seq FROM participants ORDER BY 1, 2, 3",
        "DROP TABLE participants",
        "ALTER TABLE participants_7 RENAME TO participants",
        *rename,
    )


STEPS: tuple[Step, ...] = (
    Step(
        2,
        "players.open keeps a player's open rating period",
        both=("ALTER TABLE players ADD COLUMN open TEXT",),
    ),
    Step(
        3,
        "schema_history; PostgreSQL takes match order and commit generations from "
        "sequences, so writers on disjoint players never wait on a shared row",
        both=(
            "CREATE TABLE schema_history (version INTEGER PRIMARY KEY, "
            "applied_at TEXT NOT NULL, rankcraft TEXT NOT NULL, summary TEXT NOT NULL)",
        ),
        postgres=(
            "ALTER TABLE matches ALTER COLUMN seq TYPE BIGINT",
            "ALTER TABLE participants ALTER COLUMN seq TYPE BIGINT",
            "CREATE SEQUENCE match_seq",
            "SELECT setval('match_seq', (SELECT coalesce(max(seq), 0) + 1 FROM matches), false)",
            "CREATE SEQUENCE generation_seq",
            "SELECT setval('generation_seq', coalesce((SELECT CAST(value AS BIGINT) FROM meta "
            "WHERE key = 'generation'), 0) + 1, false)",
            "DELETE FROM meta WHERE key = 'generation'",
        ),
    ),
    Step(
        4,
        "api_tokens: the HTTP service's API tokens, kept as SHA-256 digests",
        both=(
            "CREATE TABLE api_tokens (name TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
            "digest TEXT NOT NULL, scope TEXT NOT NULL, created_at TEXT NOT NULL)",
        ),
    ),
    Step(
        5,
        "players.sort_key, players.tier, players.last_epoch: each player's leaderboard "
        "key, tier and last match time (epoch seconds) in indexed columns, so that a "
        "leaderboard page is read from an index; filled in when the league is next opened",
        both=(
            "ALTER TABLE players ADD COLUMN tier TEXT",
            "DELETE FROM meta WHERE key = 'sort_key'",  # (the keys are computed on open)
        ),
        sqlite=(
            "ALTER TABLE players ADD COLUMN sort_key REAL",
            "ALTER TABLE players ADD COLUMN last_epoch REAL",
            "CREATE INDEX players_by_key ON players (sort_key DESC, id)",
            "CREATE INDEX players_by_last_epoch ON players (last_epoch)",
        ),
        postgres=(
            "ALTER TABLE players ADD COLUMN sort_key DOUBLE PRECISION",
            "ALTER TABLE players ADD COLUMN last_epoch DOUBLE PRECISION",
            'CREATE INDEX players_by_key ON players (sort_key DESC, id COLLATE "C")',
            "CREATE INDEX players_by_last_epoch ON players (last_epoch)",
        ),
    ),
    Step(
        6,
        "matches.report is written packed (numbers as doubles, see rankcraft.rated."
        "ReportPacker) instead of JSON text; reports written before stay readable as they are",
        postgres=(
            "ALTER TABLE matches ALTER COLUMN report TYPE BYTEA USING convert_to(report, 'UTF8')",
        ),
    ),
    Step(
        7,
        f"participants keyed by (bucket, player, seq), the bucket being seq // "
        f"{PARTICIPANT_BUCKET}: a batch adds its rows to the newest bucket's few pages "
        "instead of each player's place in the whole tree; PostgreSQL: players_by_id, the "
        "ids in code-point order, which a search reads in its order",
        sqlite=_bucketed_participants("INTEGER", " WITHOUT ROWID", ()),
        postgres=_bucketed_participants(
            "BIGINT",
            "",
            (
                "ALTER INDEX participants_7_pkey RENAME TO participants_pkey",
                # (the primary key's index has the database's collation; placeholder
                # rows of one-match transactions, without a key, are never searched)
                'CREATE INDEX players_by_id ON players (id COLLATE "C") WHERE sort_key IS NOT NULL',
            ),
        ),
    ),
    Step(
        8,
        "edits: the audit of corrections (a match voided, corrected or placed late), "
        "each with its reason, its token and the change it made",
        both=(
            "CREATE TABLE edits (n INTEGER PRIMARY KEY, made_at TEXT NOT NULL, "
            "kind TEXT NOT NULL, match_id TEXT NOT NULL, reason TEXT NOT NULL, "
            "by_token TEXT, old TEXT, new TEXT, changes TEXT NOT NULL)",
        ),
    ),
    Step(
        9,
        "outbox: the rating-change events of a batch, written in the batch's transaction "
        "and removed once `rankcraft consume` has published them",
        both=(
            "CREATE TABLE outbox (n INTEGER PRIMARY KEY, id TEXT NOT NULL, event TEXT NOT NULL)",
        ),
    ),
)


SCHEMA_VERSION = STEPS[-1].version
"""The layout this rankcraft reads and writes."""


def base_schema(dialect: Dialect) -> list[str]:
    """The version-1 tables in ``dialect``."""
    if dialect == "sqlite":  # the participants index needs no rowid of its own
        return [*BASE[:-1], BASE[-1] + " WITHOUT ROWID"]
    return list(BASE)


def upgrade(
    execute: Callable[..., Any], dialect: Dialect, found: int | None, rankcraft: str
) -> list[int]:
    """Bring a database from version ``found`` (None: empty) to :data:`SCHEMA_VERSION`.

    Runs inside the caller's write transaction. :returns: the versions applied.
    """
    applied = []
    if found is None:
        for statement in base_schema(dialect):
            execute(statement)
        applied.append(1)
        found = 1
    for step in STEPS:
        if step.version > found:
            for statement in step.statements(dialect):
                execute(statement)
            applied.append(step.version)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    summaries = {1: "created", **{s.version: s.summary for s in STEPS}}
    for version in applied:
        execute(
            "INSERT INTO schema_history (version, applied_at, rankcraft, summary) "
            "VALUES (?, ?, ?, ?)",
            (version, now, rankcraft, summaries[version]),
        )
    execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(SCHEMA_VERSION),),
    )
    return applied
