"""A league on a database reads only what it needs: opening reads no player, a read of
one player reads that row, a match reads its players in one query, and the leaderboard
is a page read along an index, equal to the in-memory sort.

Each store test runs on an SQLite file and a PostgreSQL schema (``db_url``).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main as cli_main
from rankcraft.model import window_start
from rankcraft.store import SQLiteStore


def games(n: int, ids: int, start_day: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "id": f"g{start_day}-{i}",
            "played_at": (datetime(2024, 3, start_day, tzinfo=UTC) + timedelta(hours=i)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "teams": [[f"p{(i * 7) % ids}"], [f"p{(i * 7 + 1 + i % 3) % ids}"]],
            "scores": [i % 3, 1],
        }
        for i in range(n)
    ]


@contextmanager
def statements(league: rankcraft.League) -> Iterator[list[str]]:
    """The SQL statements an SQLite league runs inside the block."""
    store = league.store
    assert isinstance(store, SQLiteStore)
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._db.set_trace_callback(None)


def player_reads(seen: list[str]) -> list[str]:
    """The statements that read players' rows (a batch's count of them, the largest
    rowid, reads the table's last page alone)."""
    return [s for s in seen if "FROM players" in s and "max(rowid)" not in s]


def test_opening_reads_no_player_and_a_read_reads_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record_many(games(60, ids=20))
    loads: list[str] = []
    original = SQLiteStore.load_players

    def counted(self: SQLiteStore) -> dict[str, rankcraft.PlayerRecord]:
        loads.append("all")
        return original(self)

    SQLiteStore.load_players = counted  # type: ignore[method-assign]
    try:
        with rankcraft.League.open(db) as league:
            assert loads == []  # opening reads no player
            with statements(league) as seen:
                record = league.player("p3")
            assert record.matches > 0
            assert len(player_reads(seen)) == 1
            with statements(league) as seen:
                league.player("p3")  # (cached)
                probabilities = league.predict([["p1"], ["p5"]])
            assert len(player_reads(seen)) == 1 and sum(probabilities) == pytest.approx(1)
            with statements(league) as seen:
                league.record(
                    {
                        "id": "x",
                        "played_at": "2024-04-01T00:00:00Z",
                        "teams": [["p7"], ["newcomer"]],
                        "scores": [1, 0],
                    }
                )
            reads = [s for s in player_reads(seen) if s.startswith("SELECT")]
            assert len(reads) == 1 and "json_each" in reads[0]  # both players, one query
            assert "newcomer" in league and "nobody" not in league
            assert len(league) == 21
            with statements(league) as seen:
                top = league.leaderboard(3)
            assert [s for s in player_reads(seen) if "ORDER BY sort_key DESC" in s]
            assert loads == []  # nothing above read every player
            everyone = league.players()
            assert loads == ["all"] and len(everyone) == 21
            assert top == sorted(everyone, key=lambda r: (-r.skill.rating, r.id))[:3]
    finally:
        SQLiteStore.load_players = original  # type: ignore[method-assign]


def test_a_replay_writes_each_player_once(tmp_path: Path) -> None:
    with rankcraft.League.open(tmp_path / "l.sqlite", "elo") as league:
        with statements(league) as seen:
            league.record_many(games(4500, ids=40))  # 3 chunks of matches
        inserts = [s for s in seen if s.startswith("INSERT INTO players")]
        assert len(inserts) == 40  # one row per player, at the commit
        assert len(league) == 40


@given(
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 7), st.sampled_from([0, 1, 2])),
        min_size=1,
        max_size=25,
    ),
    st.integers(1, 6),
    st.integers(0, 5),
    st.sampled_from([None, 0, 1, 3]),
)
@settings(max_examples=12, deadline=None)
def test_the_sql_leaderboard_is_the_in_memory_sort(
    pairs: list[tuple[int, int, int]], top: int, offset: int, active: int | None
) -> None:
    history = [
        {
            "id": f"m{i}",
            "played_at": f"2024-03-{1 + i // 3:02d}T{i % 3:02d}:00:00Z",
            "teams": [[f"p{a}"], [f"p{b if b != a else (a + 1) % 8}"]],
            "scores": [s, 1],
        }
        for i, (a, b, s) in enumerate(pairs)
    ]
    memory = rankcraft.League("skyweaver")
    memory.record_many(history)
    with (
        tempfile.TemporaryDirectory() as folder,
        rankcraft.League.open(Path(folder) / "l.sqlite", "skyweaver") as league,
    ):
        league.record_many(history)
        for kwargs in (
            {"offset": offset, "active_days": active},
            {"tier": "Bronze"},
            {"offset": offset, "tier": "Silver"},
        ):
            got = league.leaderboard(top, **kwargs)  # type: ignore[arg-type]
            assert got == memory.leaderboard(top, **kwargs)  # type: ignore[arg-type]
        everyone = league.leaderboard()
        assert (
            everyone
            == sorted(memory.players(), key=lambda r: (-r.rank.points, r.id))
            == memory.leaderboard()
        )
        if active is not None:
            latest = max(r.last_played for r in everyone)
            assert [r.id for r in league.leaderboard(None, active_days=active)] == [
                r.id for r in everyone if (latest - r.last_played).total_seconds() <= active * 86400
            ]


def test_pages_and_filters_on_each_store(db_url: str) -> None:
    history = games(120, ids=30) + games(10, ids=6, start_day=20)
    memory = rankcraft.League("skyweaver")
    memory.record_many(history)
    with rankcraft.League.open(db_url, "skyweaver") as league:
        league.record_many(history)
        full = league.leaderboard()
        assert full == memory.leaderboard() and len(full) == 30
        assert league.leaderboard(5, offset=10) == full[10:15]
        assert league.leaderboard(None, offset=28) == full[28:]
        assert league.leaderboard(5, offset=40) == []
        recent = league.leaderboard(None, active_days=1)
        assert {r.id for r in recent} == {f"p{i}" for i in range(6)}
        assert recent == [r for r in full if r.id in {f"p{i}" for i in range(6)}]
        tiers = {r.rank.tier for r in full}
        for tier in tiers:
            assert league.leaderboard(None, tier=tier) == [r for r in full if r.rank.tier == tier]
        assert league.leaderboard(3, tier="Nonesuch") == []
        assert league.store.places(full[::7]) == list(range(0, 30, 7))
        assert memory.store.places(full[::7]) == list(range(0, 30, 7))
        for tier in tiers:  # (on a tier's board, places count that tier's players)
            board = [r for r in full if r.rank.tier == tier]
            assert league.store.places(board[1::2], tier=tier) == list(range(1, len(board), 2))
            assert memory.store.places(board[1::2], tier=tier) == list(range(1, len(board), 2))
        since = window_start(league.latest_played(), 1)  # (the board of active_days=1)
        assert league.store.places(recent, since) == list(range(len(recent)))
        assert league.latest_played() == max(r.last_played for r in full)
        with league.batch():  # inside a batch the page shows the batch's matches
            league.record_many(games(4, ids=6, start_day=25))
            assert league.leaderboard() == sorted(
                league.players(), key=lambda r: (-r.rank.points, r.id)
            )
        for bad in ({"offset": -1}, {"active_days": -2.0}):
            with pytest.raises(rankcraft.InputError, match=next(iter(bad))):
                league.leaderboard(3, **bad)  # type: ignore[arg-type]


def test_a_database_league_reads_what_another_process_committed(db_url: str) -> None:
    with rankcraft.League.open(db_url, "elo") as first, rankcraft.League.open(db_url) as second:
        first.record_many(games(20, ids=5))
        assert second.player("p1") == first.player("p1")
        first.record_many(games(20, ids=5, start_day=5))
        second.refresh()  # the cache is emptied: rows are read again when needed
        assert second.player("p1") == first.player("p1")
        assert second.leaderboard() == first.leaderboard()
        second.record_many(games(5, ids=5, start_day=9))  # rates from what first committed
        reference = rankcraft.League("elo")
        reference.record_many(games(20, ids=5) + games(20, ids=5, start_day=5))
        reference.record_many(games(5, ids=5, start_day=9))
        assert second.export()["players"] == reference.export()["players"]


def test_cli_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "l.sqlite")
    with rankcraft.League.open(db, "elo") as league:
        league.record_many(games(50, ids=12))
        ids = [r.id for r in league.leaderboard()]
    assert cli_main(["leaderboard", "--db", db, "--top", "2", "--offset", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[1:]] == [["4", ids[3]], ["5", ids[4]]]
    assert cli_main(["leaderboard", "--db", db, "--offset", "-1"]) == 2
    assert "'--offset' must be a whole number >= 0: -1" in capsys.readouterr().err


def test_a_sort_key_stays_in_the_file_after_a_crash_of_the_fill(tmp_path: Path) -> None:
    """A read-only open of a league whose keys are missing leaves the file unchanged."""
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, "elo") as league:
        league.record_many(games(10, ids=4))
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM meta WHERE key = 'sort_key'")
    store = SQLiteStore(db, create=False, read_only=True)
    with rankcraft.League("elo", store=store) as league:
        assert len(league.leaderboard()) == 4
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'sort_key'").fetchall() == []
    with rankcraft.League.open(db) as league:  # a writable open fills them again
        assert [r.id for r in league.leaderboard()] == [
            r.id for r in sorted(league.players(), key=lambda r: (-r.skill.rating, r.id))
        ]
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'sort_key'").fetchall() == [
            ("skill.rating",)
        ]


def test_the_tiers_are_read_in_board_order_on_every_store(db_url: str) -> None:
    """``League.tiers``: each tier's best player in board order (a tier is the one its
    points give: an import must agree with the plugin, issue 43); a database reads it
    grouped, not player by player."""
    from rankcraft.plugins.skyweaver import hard_floor, tier_of

    points = {"a": 900, "b": 900, "c": 1500, "d": 700, "e": 950, "f": 650, "zed": 1100}
    document = {
        "players": [
            {
                "id": pid,
                "skill": {"rating": 1500.0, "deviation": 100.0},
                "rank": {
                    "points": rp,
                    "tier": tier_of(rp),
                    "floor": hard_floor(rp),
                    "streak": 0,
                    "weekly": [],
                    "seasons": [],
                },
                "matches": 3,
                "last_played": "2024-05-01T00:00:00Z",
            }
            for pid, rp in points.items()
        ]
    }
    memory = rankcraft.League("skyweaver")
    memory.import_state(document)
    expected = ["Master", "Expert III", "Expert I", "Apprentice II", "Apprentice I"]
    assert memory.tiers() == expected
    with rankcraft.League.open(db_url, "skyweaver") as league:
        league.import_state(document)
    with rankcraft.League.open(db_url) as league:
        league.store.load_players = lambda: pytest.fail("read every player")  # type: ignore[method-assign]
        assert league.tiers() == expected


def test_an_id_no_store_can_hold_is_an_unknown_player(db_url: str) -> None:
    """A NUL or a lone surrogate is never asked of the store (PostgreSQL refuses a NUL in
    a text); such an id is simply not in the league."""
    with rankcraft.League.open(db_url, "elo") as league:
        league.record(
            {"id": "g1", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
        )
    with rankcraft.League.open(db_url) as league:
        for bad in ("a\x00b", "\ud800"):
            assert bad not in league
            with pytest.raises(rankcraft.UnknownPlayerError):
                league.player(bad)
        assert "a" in league
