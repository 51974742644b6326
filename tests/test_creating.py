"""A failing command removes only a league it created and nobody used (issue: a failing
command deleted another process's new database, or dropped a schema holding other
objects)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.store import creating

from .conftest import drop_schema, new_pg_url


def game(mid: str, a: str = "a", b: str = "b") -> dict[str, Any]:
    return {"id": mid, "played_at": "2024-01-01", "teams": [[a], [b]], "scores": [1, 0]}


def test_a_failed_command_removes_the_league_it_created(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    with pytest.raises(rankcraft.MatchError), creating(db) as creation:
        assert creation.new and db.exists()
        with rankcraft.League.open(creation.target, "elo") as league:
            league.record_many([game("m1"), {"id": "bad"}])
    assert not db.exists()
    assert not list(tmp_path.iterdir())


def test_what_another_process_recorded_into_a_new_league_stays(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    with pytest.raises(RuntimeError, match="bad input"), creating(db) as creation:
        assert creation.new
        with rankcraft.League.open(db, "elo") as other:  # another process, meanwhile
            other.record(game("theirs"))
        raise RuntimeError("bad input")
    with rankcraft.League.open(db, create=False) as league:
        assert league.match_count == 1 and league.player("a").matches == 1


def test_a_league_created_by_someone_else_is_never_removed(tmp_path: Path) -> None:
    db = tmp_path / "theirs.sqlite"
    db.touch()  # another process has just created it, nothing in it yet
    with pytest.raises(RuntimeError), creating(db) as creation:
        assert not creation.new
        raise RuntimeError("bad input")
    assert db.exists()


def test_a_removed_new_league_is_made_again_by_a_late_writer(tmp_path: Path) -> None:
    # (issue 31: it was refused, "removed or replaced by another process")
    db = tmp_path / "new.sqlite"
    late = None
    with pytest.raises(RuntimeError), creating(db):
        late = rankcraft.League.open(db, "elo")  # opened, nothing written yet
        raise RuntimeError("bad input")
    assert late is not None and not db.exists()
    late.record(game("m1"))
    late.close()
    with rankcraft.League.open(db, create=False) as again:
        assert again.match_count == 1 and again.ruleset.name == "elo"


def test_a_bad_replay_beside_a_good_one_keeps_the_good_ones_league(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(
        "".join(json.dumps(game(f"m{i}", f"p{i % 50}", "q")) + "\n" for i in range(60_000))
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    db = tmp_path / "race.sqlite"
    exe = [sys.executable, "-m", "rankcraft.cli"]
    first = subprocess.Popen([*exe, "replay", str(good), "--ruleset", "elo", "--db", str(db)])
    for _ in range(200):  # until the first process has created the file
        if db.exists():
            break
        time.sleep(0.01)
    assert main(["replay", str(bad), "--ruleset", "elo", "--db", str(db)]) == 2
    assert first.wait(timeout=300) == 0
    with rankcraft.League.open(db, create=False) as league:
        assert league.match_count == 60_000


def test_a_failed_command_leaves_others_objects_in_a_new_schema() -> None:
    import psycopg

    url = new_pg_url()
    schema = url.rsplit("schema=", 1)[1]
    try:
        with pytest.raises(RuntimeError), creating(url) as creation:
            assert creation.new
            rankcraft.League.open(creation.target, "elo").close()
            with psycopg.connect(url.split("?")[0], autocommit=True) as db:
                db.execute(f"CREATE SEQUENCE {schema}.someone_elses")
            raise RuntimeError("bad input")
        with psycopg.connect(url.split("?")[0], autocommit=True) as db:
            left = {
                r[0]
                for r in db.execute(
                    "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = %s",
                    (schema,),
                )
            }
        assert left == {"someone_elses"}  # rankcraft's own tables went, theirs stayed
    finally:
        drop_schema(url)


def test_a_failed_command_drops_the_schema_it_created_alone() -> None:
    import psycopg

    url = new_pg_url()
    schema = url.rsplit("schema=", 1)[1]
    try:
        with (
            pytest.raises(rankcraft.MatchError),
            creating(url) as creation,
            rankcraft.League.open(creation.target, "elo") as league,
        ):
            league.record_many([game("m1"), {"id": "bad"}])
        with psycopg.connect(url.split("?")[0], autocommit=True) as db:
            found = db.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
            ).fetchone()
        assert found is None
        # a schema that existed before the command is not the command's to drop
        with psycopg.connect(url.split("?")[0], autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {schema}")
        with pytest.raises(RuntimeError), creating(url) as creation:
            assert not creation.new
            raise RuntimeError("bad input")
        with psycopg.connect(url.split("?")[0], autocommit=True) as db:
            assert db.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    finally:
        drop_schema(url)


def test_a_league_made_by_another_process_after_this_one_looked_is_opened(
    db_url: str,
) -> None:
    """Two processes make a league at once: the one that found no league, and takes the
    writer lock second, opens the league the other made instead of making it again
    (which failed: "table meta already exists")."""
    from rankcraft.store import open_store

    if db_url.startswith("postgresql://"):
        from rankcraft.store.postgres import create_schema

        create_schema(db_url)
    slow = open_store(db_url)  # looked first: no league yet
    with rankcraft.League.open(db_url, "elo") as other:
        other.record(game("m1"))
    with rankcraft.League(rankcraft.load_ruleset("elo"), store=slow) as league:
        assert league.match_count == 1 and "a" in league
        league.record(game("m2", "a", "c"))
    with rankcraft.League.open(db_url, create=False) as league:
        assert league.match_count == 2
