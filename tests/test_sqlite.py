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


def test_the_written_out_match_rows_are_the_general_steps_rows(tmp_path: Path) -> None:
    """SQLite writes a batch's matches many to an ``INSERT`` and, when every match has
    the same number of players, the participants from one JSON array of ids; the
    tables hold exactly the rows of the general steps (:meth:`SQLStore._write_matches`)
    on random batches: 1-v-1, teams, mixed shapes, ids of any text, buckets crossed."""
    import functools
    import random

    from rankcraft.rated import Rated
    from rankcraft.store.migrations import PARTICIPANT_BUCKET
    from rankcraft.store.sql import SQLStore
    from rankcraft.store.sql_writes import ROWS_PER_INSERT

    rng = random.Random(29)
    names = ["a", "Zoë", 'q"uote', "back\\slash", "日本", "emoji \U0001f600", "bell\x07", "é", "b"]
    names += [f"p{i}" for i in range(30)]
    shapes = [(1, 1), (2, 2), (1, 1, 1), (3, 1)]
    matches: list[dict[str, object]] = []
    batches: list[list[dict[str, object]]] = []
    for batch in range(12):
        batches.append([])
        shape = [rng.choice(shapes)] if batch % 3 else shapes
        size = rng.choice([1, 2, ROWS_PER_INSERT - 1, ROWS_PER_INSERT, 3 * ROWS_PER_INSERT + 7])
        for _ in range(size):
            sides = rng.choice(shape)
            players = rng.sample(names, sum(sides))
            teams = [players[sum(sides[:k]) : sum(sides[: k + 1])] for k in range(len(sides))]
            matches.append(
                {
                    "id": f"{rng.choice(names)}#{len(matches)}",
                    "played_at": f"2024-01-{1 + len(matches) // 100:02d}T12:00:00Z",
                    "teams": teams,
                    "scores": [rng.choice([0, 1, 2.5]) for _ in teams],
                }
            )
            batches[-1].append(matches[-1])
    source = rankcraft.League("elo")
    for batch in batches:
        source.record_many(batch)

    def entries(batch: list[dict[str, object]]) -> list[Rated]:
        rows = [source.store.match(str(m["id"])) for m in batch]
        return [Rated((r.match, r.report.expected, Rated.changes_of(r.report))) for r in rows if r]

    tables = []
    for way in ("written out", "general"):
        league = rankcraft.League.open(tmp_path / f"{way}.sqlite", "elo")
        store = league.store
        if way == "general":
            store._write_matches = functools.partial(SQLStore._write_matches, store)  # type: ignore[attr-defined,method-assign]
        for k, batch in enumerate(batches):
            store.begin()
            if k == 6:  # (the next batch's seqs cross into the next participants bucket)
                store._next_seq = PARTICIPANT_BUCKET - 40  # type: ignore[attr-defined]
            store.write((), entries(batch))
            store.commit()
        db = store._db  # type: ignore[attr-defined]
        tables.append(
            (
                db.execute("SELECT * FROM matches ORDER BY seq").fetchall(),
                db.execute("SELECT * FROM participants ORDER BY bucket, player, seq").fetchall(),
            )
        )
        league.close()
    written, general = tables
    assert len(written[0]) == len(matches) and len(written[1]) > 2 * len(matches)
    assert {bucket for bucket, _, _ in written[1]} == {0, 1}
    assert written == general


def test_the_written_out_outbox_rows_are_the_general_steps_rows(tmp_path: Path) -> None:
    """SQLite keeps a batch's events many to an ``INSERT``: the same rows, numbered on
    from the last, as the general steps (:meth:`SQLStore._insert_outbox`) keep."""
    import functools

    from rankcraft.store.sql import SQLStore
    from rankcraft.store.sql_writes import ROWS_PER_INSERT

    sizes = [0, 1, ROWS_PER_INSERT - 1, ROWS_PER_INSERT, 3 * ROWS_PER_INSERT + 7, 2]
    events = [(f"s:m{i}:p 'é\"{i}", f'{{"n":{i},"t":"x\\n"}}') for i in range(sum(sizes))]
    tables = []
    for way in ("written out", "general"):
        league = rankcraft.League.open(tmp_path / f"{way}.sqlite", "elo")
        store = league.store
        if way == "general":
            store._insert_outbox = functools.partial(SQLStore._insert_outbox, store)  # type: ignore[attr-defined]
        lasts, start = [], 0
        for k, size in enumerate(sizes):
            with league.batch():
                if k == 4:
                    store.drop_outbox(3)
                lasts.append(store.add_outbox(events[start : start + size]))
            start += size
        tables.append((lasts, store.outbox(10_000)))
        league.close()
    assert tables[0] == tables[1]
    assert tables[0][0][:3] == [0, 1, ROWS_PER_INSERT]
    assert len(tables[0][1]) == len(events) - 3 and tables[0][1][0][0] == 4
