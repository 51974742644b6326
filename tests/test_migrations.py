"""Schema versions: new databases, old ones migrated, newer or unknown ones refused.

Each test runs on an SQLite file and on a PostgreSQL schema (the ``db_url`` fixture).
"""

from __future__ import annotations

from typing import Any

import pytest

import rankcraft
from rankcraft.store import SCHEMA_VERSION, sql_reads
from rankcraft.store.migrations import STEPS

from .conftest import age_to_version_5, age_to_version_6, snapshot, sql_rows, sql_run


def games(n: int, day: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "id": f"g{day}-{i}",
            "played_at": f"2024-03-{day:02d}T{i // 2:02d}:00:00Z",
            "teams": [[f"p{i % 5}"], [f"p{(i + 1) % 5}"]],
            "scores": [i % 3, 1],
        }
        for i in range(n)
    ]


def layout(url: str) -> dict[str, Any]:
    """Tables with their columns (name, type, nullability), indexes, and sequences (on
    PostgreSQL) or the tables' WITHOUT ROWID (on SQLite)."""
    if url.startswith("postgresql://"):
        from rankcraft.store.postgres import _split

        schema = _split(url)[1]
        columns = sql_rows(
            url,
            "SELECT table_name, column_name, data_type, is_nullable "
            f"FROM information_schema.columns WHERE table_schema = '{schema}'",
        )
        sequences = sql_rows(
            url,
            "SELECT sequence_name FROM information_schema.sequences "
            f"WHERE sequence_schema = '{schema}'",
        )
        indexes = sql_rows(  # (each definition names its schema: left out to compare)
            url,
            f"SELECT indexname, replace(indexdef, '{schema}.', '') FROM pg_indexes "
            f"WHERE schemaname = '{schema}'",
        )
        return {
            "columns": sorted(columns),
            "sequences": sorted(sequences),
            "indexes": sorted(indexes),
        }
    tables = sql_rows(url, "SELECT name, sql FROM sqlite_master WHERE type = 'table'")
    found: dict[str, Any] = {
        name: (
            [r[1:4] for r in sql_rows(url, f"PRAGMA table_info({name})")],
            "WITHOUT ROWID" in text,
        )
        for name, text in sorted(tables)
    }
    indexes = sql_rows(url, "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index'")
    found["indexes"] = sorted(indexes)
    return found


TO_VERSION_4 = [
    "DROP INDEX players_by_key",
    "DROP INDEX players_by_last_epoch",
    "ALTER TABLE players DROP COLUMN sort_key",
    "ALTER TABLE players DROP COLUMN tier",
    "ALTER TABLE players DROP COLUMN last_epoch",
]


def age_to_version_4(url: str, league: rankcraft.League) -> None:
    """Turn a current database into what rankcraft wrote at schema version 4."""
    age_to_version_5(url, league)
    sql_run(
        url,
        *TO_VERSION_4,
        "DELETE FROM schema_history WHERE version = 5",
        "UPDATE meta SET value = '4' WHERE key = 'schema_version'",
    )


def age_to_version_1(url: str, league: rankcraft.League) -> None:
    """Turn a current database into what rankcraft wrote at schema version 1."""
    age_to_version_5(url, league)
    statements = [
        *TO_VERSION_4,
        "DROP TABLE schema_history",
        "DROP TABLE api_tokens",
        "ALTER TABLE players DROP COLUMN open",
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
    ]
    if url.startswith("postgresql://"):
        generation = sql_rows(url, "SELECT last_value FROM generation_seq")[0][0]
        statements += [
            "DROP SEQUENCE match_seq",
            "DROP SEQUENCE generation_seq",
            "ALTER TABLE matches ALTER COLUMN seq TYPE INTEGER",
            "ALTER TABLE participants ALTER COLUMN seq TYPE INTEGER",
            f"INSERT INTO meta (key, value) VALUES ('generation', '{generation}')",
        ]
    sql_run(url, *statements)


def test_a_new_database_has_the_current_version_and_its_history(db_url: str) -> None:
    rankcraft.League.open(db_url, "elo").close()
    meta = dict(sql_rows(db_url, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION) == "9"
    assert meta["sort_key"] == "skill.rating"
    history = sql_rows(db_url, "SELECT version, summary FROM schema_history ORDER BY version")
    assert [v for v, _ in history] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert history[0][1] == "created"
    assert [s for _, s in history[1:]] == [step.summary for step in STEPS]


def test_a_version_1_database_is_migrated_and_reads_the_same(db_url: str, tmp_path) -> None:
    with rankcraft.League.open(db_url, "glicko1") as league:
        league.record_many(games(30))
        before = league.export()
    fresh = layout(db_url)
    reference = rankcraft.League("glicko1")
    reference.record_many(games(30))
    age_to_version_1(db_url, reference)
    assert layout(db_url) != fresh
    with rankcraft.League.open(db_url) as league:  # migrated on open
        assert league.export() == before
        assert (
            league.leaderboard(3)
            == sorted(league.players(), key=lambda r: (-r.skill.rating, r.id))[:3]
        )
        league.record_many(games(10, day=2))  # and it keeps recording, in order
        after = league.export()
        history = [row.match.id for row in league.history("p1", limit=2)]
    assert layout(db_url) == fresh
    rows = sql_rows(db_url, "SELECT version FROM schema_history ORDER BY version")
    assert rows == [(2,), (3,), (4,), (5,), (6,), (7,), (8,), (9,)]
    seqs = [r[0] for r in sql_rows(db_url, "SELECT seq FROM matches ORDER BY seq")]
    assert seqs == sorted(set(seqs)) and len(seqs) == 40 and seqs[:30] == list(range(1, 31))
    reference.record_many(games(10, day=2))
    assert after == reference.export()
    assert history == ["g2-6", "g2-5"]  # p1 plays g2-0, g2-1, g2-5, g2-6


def test_a_newer_database_is_refused_and_left_alone(db_url: str) -> None:
    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(games(3))
    newer = SCHEMA_VERSION + 1
    sql_run(db_url, f"UPDATE meta SET value = '{newer}' WHERE key = 'schema_version'")
    before = snapshot(db_url)
    with pytest.raises(rankcraft.StateError, match=f"schema version {newer}, written by a newer"):
        rankcraft.League.open(db_url)
    assert snapshot(db_url) == before


@pytest.mark.parametrize("value", ["0", "three", "-1"])
def test_an_unknown_version_is_refused(db_url: str, value: str) -> None:
    rankcraft.League.open(db_url, "elo").close()
    sql_run(db_url, f"UPDATE meta SET value = '{value}' WHERE key = 'schema_version'")
    with pytest.raises(rankcraft.StateError, match=f"schema version '{value}', which no"):
        rankcraft.League.open(db_url)


def test_a_version_4_database_gets_its_sort_keys_on_open(db_url: str) -> None:
    """Schema 5 adds the leaderboard's indexed columns; opening a version-4 league fills
    them once, and the leaderboard read from the index is the in-memory one."""
    with rankcraft.League.open(db_url, "skyweaver") as league:
        league.record_many(games(40))
        before = league.export()
    reference = rankcraft.League("skyweaver")
    reference.record_many(games(40))
    age_to_version_4(db_url, reference)
    with rankcraft.League.open(db_url) as league:
        assert league.export() == before
        page = [(r.id, r.rank.points) for r in league.leaderboard(3, offset=1)]
    assert page == [(r.id, r.rank.points) for r in reference.leaderboard()[1:4]]
    keys = sql_rows(db_url, "SELECT id, sort_key, tier FROM players ORDER BY id")
    assert keys == [(r.id, float(r.rank.points), r.rank.tier) for r in reference.players()]
    meta = dict(sql_rows(db_url, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == "9" and meta["sort_key"] == "rank.points"


def test_version_5_json_reports_are_read_and_new_ones_packed(db_url: str) -> None:
    """Schema 6 packs reports (numbers as doubles); a version-5 database keeps its JSON
    text reports, reads them as before, and packs the reports of matches it records next."""
    reference = rankcraft.League("skyweaver")
    reference.record_many(games(30))
    with rankcraft.League.open(db_url, "skyweaver") as league:
        league.record_many(games(30))
        before = league.export()
    age_to_version_5(db_url, reference)
    kinds = {type(r[0]) for r in sql_rows(db_url, "SELECT report FROM matches")}
    assert kinds == {str}
    with rankcraft.League.open(db_url) as league:  # migrated on open
        assert league.export() == before
        assert [league.report(f"g1-{i}") for i in range(30)] == [
            reference.report(f"g1-{i}") for i in range(30)
        ]
        league.record_many(games(10, day=2))
        history = [row.report for row in league.history("p1")]
    reference.record_many(games(10, day=2))
    assert history == [row.report for row in reference.history("p1")]
    rows = sql_rows(db_url, "SELECT id, report FROM matches ORDER BY seq")
    starts = [r[1][:1] if isinstance(r[1], str) else bytes(r[1][:1]) for r in rows]
    # (PostgreSQL's migration turned the old texts into bytes; SQLite keeps them text)
    assert starts == [b"{" if db_url.startswith("postgresql://") else "{"] * 30 + [b"\x01"] * 10
    meta = dict(sql_rows(db_url, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == "9"


def history_of(league: rankcraft.League, player: str, limit: int | None = 10) -> list[Any]:
    """A player's history as (match id, match document, report)."""
    return [
        (row.match.id, row.match.to_dict(), row.report)
        for row in league.history(player, limit=limit)
    ]


def test_a_version_6_database_gets_bucketed_participants(db_url: str) -> None:
    """Schema 7 keys the participants by (bucket, player, seq); a version-6 league's rows
    are moved over on open and every history reads as before."""
    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(games(30))
        before = {p: history_of(league, p) for p in ("p0", "p1", "p4")}
    age_to_version_6(db_url)
    assert sql_rows(db_url, "SELECT count(*) FROM participants") == [(60,)]
    with rankcraft.League.open(db_url) as league:  # migrated on open
        assert {p: history_of(league, p) for p in before} == before
        assert [len(r) for r in before.values()] == [10, 10, 10]
    rows = sql_rows(db_url, "SELECT bucket, player, seq FROM participants ORDER BY seq, player")
    assert len(rows) == 60 and {bucket for bucket, _, _ in rows} == {0}
    assert sql_rows(db_url, "SELECT count(*) FROM participants WHERE player = 'p1'") == [(12,)]
    meta = dict(sql_rows(db_url, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == "9"


def test_a_history_spread_over_buckets_reads_newest_first(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A player's matches are read with a seek per bucket; with buckets of 4 matches,
    30 matches fill 8 buckets and each history (whole or limited) is the in-memory one."""
    monkeypatch.setattr(sql_reads, "PARTICIPANT_BUCKET", 4)
    reference = rankcraft.League("elo")
    reference.record_many(games(30))
    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(games(30))
        for player in ("p0", "p1", "p2", "p3", "p4"):
            for limit in (None, 1, 3, 100):
                got, want = (history_of(source, player, limit) for source in (league, reference))
                assert got == want and len(got) == min(12, limit or 12), (player, limit)
    rows = sql_rows(db_url, "SELECT bucket, seq FROM participants")
    assert {bucket for bucket, _ in rows} == set(range(8))
    assert all(bucket == seq // 4 for bucket, seq in rows)


def test_a_version_7_database_gets_the_edits_table(db_url: str) -> None:
    from .conftest import age_to_version_7

    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(games(6))
    age_to_version_7(db_url)
    with rankcraft.League.open(db_url) as league:
        league.void(games(6)[2]["id"], "migrated")
        assert [e.kind for e in league.edits()] == ["void"] and league.match_count == 5
    meta = dict(sql_rows(db_url, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == "9"
    assert sql_rows(db_url, "SELECT kind, reason FROM edits") == [("void", "migrated")]


def test_a_version_8_database_gets_the_outbox_table(db_url: str) -> None:
    from .conftest import age_to_version_8

    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(games(6))
    age_to_version_8(db_url)
    with rankcraft.League.open(db_url) as league:
        with league.batch():
            league.store.add_outbox([("e1", '{"a": 1}'), ("e2", "{}")])
        assert league.store.outbox(10) == [(1, "e1", '{"a": 1}'), (2, "e2", "{}")]
        with league.batch():
            league.store.drop_outbox(1)
        assert league.store.outbox(10) == [(2, "e2", "{}")] and league.match_count == 6
    meta = dict(sql_rows(db_url, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == "9"
