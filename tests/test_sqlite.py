"""The SQLite store: persistence, the remembered ruleset, schema versions, atomic batches."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import rankcraft
from rankcraft.store import SCHEMA_VERSION

from .conftest import file_digest


def test_state_survives_reopen(tmp_path: Path, match) -> None:
    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record_many([match(f"m{i}", "a", "b", scores=[1, 0], day=i + 1) for i in range(3)])
        exported = league.export()
        report = league.report("m2")
    with rankcraft.League.open(db) as league:
        assert league.ruleset.name == "elo"
        assert league.export() == exported
        assert league.report("m2") == report
        assert [r.match.id for r in league.history("a", limit=2)] == ["m2", "m1"]
        assert league.match_count == 3
        with pytest.raises(rankcraft.DuplicateMatchError):
            league.record(match("m1", "a", "b", day=9))
        league.record(match("m3", "a", "b", day=9))
    with rankcraft.League.open(db, "elo") as league:
        assert league.player("a").matches == 4


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


def test_another_ruleset_is_refused_naming_both(tmp_path: Path, match) -> None:
    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record(match("m1", "a", "b"))
    digest = file_digest(db)
    with pytest.raises(
        rankcraft.LeagueMismatchError,
        match="created with ruleset 'elo'; it cannot be used with ruleset 'elo-fide'",
    ):
        rankcraft.League.open(db, "elo-fide")
    k16 = tmp_path / "elo.toml"
    k16.write_text('name = "elo"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = 16.0\n')
    with pytest.raises(rankcraft.LeagueMismatchError, match="same name, different parameters"):
        rankcraft.League.open(db, k16)
    assert file_digest(db) == digest


def test_failed_batch_leaves_the_file_byte_for_byte(tmp_path: Path, match) -> None:
    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record(match("m0", "a", "b"))
    digest = file_digest(db)
    many = [match(f"m{i}", f"p{i % 50}", f"q{i % 70}", day=2) for i in range(1, 5000)]
    many.append(match("m0", "a", "b", day=3))
    with rankcraft.League.open(db) as league:
        with pytest.raises(rankcraft.DuplicateMatchError):
            league.record_many(many)
        assert league.match_count == 1
        assert len(league) == 2
    assert file_digest(db) == digest


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
