"""The SQLite store: persistence, the remembered ruleset, schema versions, atomic batches."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import rankcraft
from rankcraft.store import SCHEMA_VERSION


def test_tables_are_plain_sql(tmp_path: Path, match) -> None:
    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record(match("m1", "a", "b"))
    con = sqlite3.connect(db)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert meta["ruleset_name"] == "elo"
    assert rankcraft.loads_ruleset(meta["ruleset_toml"]) == rankcraft.load_ruleset("elo")
    rows = con.execute(
        "SELECT id, json_extract(skill, '$.rating'), matches FROM players ORDER BY id"
    ).fetchall()
    assert rows == [("a", 1516.0, 1), ("b", 1484.0, 1)]
    assert con.execute("SELECT player, seq FROM participants ORDER BY player").fetchall() == [
        ("a", 1),
        ("b", 1),
    ]
    con.close()


def test_new_database_needs_a_ruleset(tmp_path: Path) -> None:
    with pytest.raises(rankcraft.InputError, match="new database: give a ruleset"):
        rankcraft.League.open(tmp_path / "x.sqlite")
    with pytest.raises(rankcraft.InputError, match="no database at"):
        rankcraft.League.open(tmp_path / "y.sqlite", create=False)
    assert not (tmp_path / "y.sqlite").exists()


def test_other_files_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, this is not a database at all" * 100)
    with pytest.raises(rankcraft.InputError, match="not a rankcraft database"):
        rankcraft.League.open(text, "elo")
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(rankcraft.InputError, match="not a rankcraft one \\(tables: t\\)"):
        rankcraft.League.open(other, "elo")


def test_a_batch_sizes_the_page_cache_for_its_players_and_gives_it_back(
    tmp_path: Path, match, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A league-wide batch raises the connection's page cache to ``batch_cache_per_player``
    bytes per player (capped by ``batch_cache_max``; never lowered), and restores the
    connection's own size when the batch commits or fails."""
    from rankcraft.store.sqlite import SQLiteStore

    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record_many([match("m1", "a", "b"), match("m2", "c", "d")])  # 4 players
    monkeypatch.setattr(SQLiteStore, "batch_cache_per_player", 2**20)  # 1 MiB each
    with rankcraft.League.open(db) as league:
        connection = league.store._db  # type: ignore[attr-defined]

        def cache_size() -> int:
            return int(connection.execute("PRAGMA cache_size").fetchone()[0])

        own = cache_size()
        assert own == -2000  # SQLite's default: 2,048,000 bytes
        with league.batch():
            assert cache_size() == -4 * 1024  # 4 players x 1 MiB, in KiB
            league.record(match("m3", "a", "c"))
        assert cache_size() == own
        with pytest.raises(rankcraft.MatchError), league.batch():
            assert cache_size() == -4 * 1024
            league.record(match("m3", "a", "c"))  # a repeated id: the batch fails
        assert cache_size() == own
        monkeypatch.setattr(SQLiteStore, "batch_cache_max", 3 * 2**20)
        with league.batch():
            assert cache_size() == -3 * 1024  # capped
        monkeypatch.setattr(SQLiteStore, "batch_cache_per_player", 1024)
        with league.batch():
            assert cache_size() == own  # 4 KiB wanted: the default is larger, and kept
        # League.record outside a batch is a transaction of its own (SQLite has one
        # writer): the cache is raised for it too, and given back at its commit
        monkeypatch.setattr(SQLiteStore, "batch_cache_per_player", 2**20)
        statements: list[str] = []
        connection.set_trace_callback(statements.append)
        league.record(match("m4", "b", "d"))
        connection.set_trace_callback(None)
        assert "PRAGMA cache_size = -3072" in statements and cache_size() == own  # (capped)
        stored = league.export()
    reference = rankcraft.League("elo")
    reference.record_many(
        [match("m1", "a", "b"), match("m2", "c", "d"), match("m3", "a", "c"), match("m4", "b", "d")]
    )
    assert stored == reference.export()
