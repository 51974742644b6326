"""Searching players by id: ``League.search`` (the page's suggestions) and the
leaderboard's ``holding`` (the page's search box), in SQL on a database, with each player
found at their place on the board; the same answers in memory, on SQLite and on
PostgreSQL, without reading every player."""

from __future__ import annotations

import itertools
import json
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main
from rankcraft.model import id_holds, window_start

from .conftest import bundled

IDS = ["Ann", "anna", "JOANNA", "bo", "b%o", "b_o", "b\\o", "Éva", "éva", "Dan", "xander"]


def games(ids: list[str]) -> list[dict[str, Any]]:
    """Each id beats the ids after it once (the first id best), on days 1, 2, ...: an
    id's place is its index, and later ids last played later."""
    out = []
    for i, winner in enumerate(ids):
        for loser in ids[i + 1 :]:
            out.append(
                {
                    "id": f"{winner}>{loser}",
                    "played_at": f"2024-01-{1 + len(out) // 40:02d}T00:{len(out) % 40:02d}:00Z",
                    "teams": [[winner], [loser]],
                    "scores": [1, 0],
                }
            )
    return out


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def league(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[rankcraft.League]:
    pg_url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    url = {"memory": None, "sqlite": str(tmp_path / "l.sqlite"), "postgres": pg_url}[request.param]
    league = rankcraft.League("elo") if url is None else rankcraft.League.open(url, "elo")
    league.record_many(games(IDS))
    if url is not None:  # (a database answers without reading every player)
        league.close()
        league = rankcraft.League.open(url, create=False)
        monkeypatch.setattr(league.store, "load_players", lambda: pytest.fail("read all"))
    yield league
    league.close()


def test_search_finds_ids_that_start_with_the_text_then_those_that_hold_it(
    league: rankcraft.League,
) -> None:
    assert league.search("an") == ["Ann", "anna", "Dan", "JOANNA", "xander"]
    assert league.search("AN", limit=2) == ["Ann", "anna"]
    assert league.search("nna") == ["JOANNA", "anna"]  # (in code-point order)
    # LIKE's wildcards and its escape are plain characters
    assert league.search("%") == ["b%o"] and league.search("_") == ["b_o"]
    assert league.search("\\") == ["b\\o"] and league.search("b") == sorted(
        ["bo", "b%o", "b_o", "b\\o"]
    )
    # only ASCII letters fold: É is not é
    assert league.search("év") == ["éva"] and league.search("ÉV") == ["Éva"]
    assert league.search("zz") == [] and league.search("") == []
    assert league.search("a", limit=0) == []


def test_a_search_of_the_board_keeps_each_players_place(league: rankcraft.League) -> None:
    board = [r.id for r in league.leaderboard()]
    assert board == IDS  # (each id beat every later one)
    found = league.placed(holding="AN")
    assert [(place, r.id) for place, r in found] == [
        (1, "Ann"),
        (2, "anna"),
        (3, "JOANNA"),
        (10, "Dan"),
        (11, "xander"),
    ]
    # offset and top page the players found; their places stay the board's
    page = league.placed(2, offset=1, holding="an")
    assert [(place, r.id) for place, r in page] == [(2, "anna"), (3, "JOANNA")]
    assert [r.id for r in league.leaderboard(2, offset=1, holding="an")] == ["anna", "JOANNA"]
    # no search: places from offset + 1
    assert [p for p, _ in league.placed(3, offset=4)] == [5, 6, 7]
    assert league.placed(holding="%") == [(5, league.player("b%o"))]


@pytest.mark.parametrize("days", [0.5, 1e4])
def test_places_are_the_active_boards(league: rankcraft.League, days: float) -> None:
    """With ``active_days`` the board holds the players active in the window, and a
    player found has their place on that board (a database counts a few active players
    along the time index, many along the key index: both windows are tried)."""
    active = [r.id for r in league.leaderboard(active_days=days)]
    assert active == [i for i in IDS if i in active]
    assert (active == IDS) == (days > 1)
    found = league.placed(active_days=days, holding="a")
    assert [r.id for _, r in found] == [i for i in active if "a" in i.lower()]
    assert [place for place, _ in found] == [active.index(r.id) + 1 for _, r in found]
    if hasattr(league.store, "_fewer_active"):  # (which way the database counted)
        since = window_start(league.latest_played(), days)
        lowest = league.codec.sort_key(found[-1][1])
        assert league.store._fewer_active(since, lowest) is (days < 1)


def test_a_text_no_id_can_hold_finds_nobody(league: rankcraft.League) -> None:
    """Ids never hold a NUL or a lone surrogate (recording one is refused): such a search
    finds nobody on every store (SQLite's LIKE would stop reading the pattern at a NUL,
    and PostgreSQL refuses the NUL); a limit beyond any league is the whole league."""
    for text in ("\x00", "x\x00zzz", "a\ud800"):
        assert league.search(text) == [] and league.placed(holding=text) == []
    assert league.search("a" * 1000) == [] and league.leaderboard(holding="a" * 1000) == []
    assert league.search("a", limit=2**70) == league.search("a", limit=len(IDS))


def test_a_store_without_search_is_searched_by_reading_its_players(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with rankcraft.League.open(tmp_path / "l.sqlite", "elo") as league:
        league.record_many(games(IDS))
        monkeypatch.delattr(rankcraft.store.sql_search.SQLSearch, "search")
        assert league.search("an") == ["Ann", "anna", "Dan", "JOANNA", "xander"]
        assert [r.id for r in league.leaderboard()] == IDS  # (and the board as before)


def test_a_bad_search_is_refused_naming_it(league: rankcraft.League) -> None:
    with pytest.raises(rankcraft.InputError, match=r"'holding' must be a text of at .*: 3$"):
        league.leaderboard(holding=3)  # type: ignore[arg-type]
    with pytest.raises(rankcraft.InputError, match=r"'text' must be a text of at .*: None$"):
        league.search(None)  # type: ignore[arg-type]
    with pytest.raises(rankcraft.InputError, match="'holding' must be a text of at most 1000"):
        league.placed(holding="a" * 1001)
    with pytest.raises(rankcraft.InputError, match="'text' must be a text of at most 1000"):
        league.search("a" * 1001)
    with pytest.raises(rankcraft.InputError, match="'limit' must be a whole number >= 0: -1"):
        league.search("a", limit=-1)


ID_CHARS = st.sampled_from(list("aAbB%_\\Éé-"))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ids=st.lists(st.text(ID_CHARS, min_size=1, max_size=4), min_size=2, max_size=9, unique=True),
    text=st.text(ID_CHARS, min_size=1, max_size=2),
)
def test_sqlite_answers_a_search_as_memory_does(tmp_path: Path, ids: list[str], text: str) -> None:
    history = games(ids)
    elo = bundled("elo")  # (loaded once: three leagues an example built three plugin managers)
    memory = rankcraft.League(elo)
    memory.record_many(history)
    # a new file each example: hypothesis may run the same example twice (a replayed or
    # shrunk case), and a name made from the example would find the first run's league
    db = Path(tempfile.mkdtemp(dir=tmp_path)) / "league.sqlite"
    with rankcraft.League.open(db, elo) as disk:
        disk.record_many(history)
    with rankcraft.League.open(db, create=False, plugins=elo.plugins) as disk:
        assert disk.search(text) == memory.search(text)
        board = [r.id for r in memory.leaderboard()]
        assert [r.id for r in disk.leaderboard()] == board
        wanted = [(i + 1, p) for i, p in enumerate(board) if id_holds(p, text)]
        for league in (memory, disk):
            assert [(place, r.id) for place, r in league.placed(holding=text)] == wanted


def test_the_cli_searches_the_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "l.sqlite")
    with rankcraft.League.open(db, "elo") as league:
        league.record_many(games(IDS))
    assert main(["leaderboard", "--holding", "AN", "--top", "2", "--offset", "1", "--json",
                 "--db", db]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)
    assert [(r["place"], r["id"]) for r in rows] == [(2, "anna"), (3, "JOANNA")]
    assert main(["leaderboard", "--holding", "xand", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].split()[:2] == ["11", "xander"]


def test_the_service_searches_the_board() -> None:
    from starlette.testclient import TestClient

    from rankcraft.serve import create_app

    league = rankcraft.League("elo")
    league.record_many(games(IDS))
    client = TestClient(create_app(league))
    found = client.get("/leaderboard", params={"holding": "an", "top": 2, "offset": 3}).json()
    assert [(r["place"], r["id"]) for r in found] == [(10, "Dan"), (11, "xander")]
    refused = client.get("/leaderboard", params={"holding": "a" * 101})
    assert refused.status_code == 400 and "'holding' must be" in refused.text
    assert client.get("/web/search", params={"q": "AN"}).json() == league.search("an")


def test_postgres_searches_along_an_index_of_ids_in_code_point_order(pg_url: str) -> None:
    """Schema 7's ``players_by_id`` answers a search in its order (code points), so the
    scan can stop at the limit instead of sorting every id."""
    import psycopg

    from rankcraft.store.postgres import _split

    with rankcraft.League.open(pg_url, "elo") as league:
        league.record_many(games(IDS))
        assert league.search("a", limit=3) == ["Ann", "anna", "Dan"]
        store = league.store
        players, _ = store._board(None, None)
        condition, pattern = store._holding("a")
        sql = (
            f"SELECT id FROM players WHERE {' AND '.join([*players, condition])} "
            f"ORDER BY {store._id_order()} LIMIT 3"
        ).replace("?", "%s")
    conninfo, schema, _ = _split(pg_url)
    with psycopg.connect(conninfo) as con:
        con.execute(f'SET search_path TO "{schema}"')
        con.execute("SET enable_seqscan = off")  # (a table this small is read whole)
        plan = "\n".join(r[0] for r in con.execute(f"EXPLAIN {sql}", (pattern,)))
    assert "players_by_id" in plan and "Sort" not in plan, plan


def test_a_page_and_its_places_are_read_from_one_state(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process commits between the page's read and the count of its places:
    the places are those of the state the page was read from (``Store.reading``)."""
    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(games(IDS))
    league = rankcraft.League.open(db_url, create=False)
    count = league.store.places
    moved: list[tuple[int, str]] = []

    def others_commit_first(records: Any, *args: Any) -> list[int]:
        with rankcraft.League.open(db_url, create=False) as other:  # xander wins a lot
            other.record_many(
                {
                    "id": f"late{i}",
                    "played_at": "2024-02-01T00:00:00Z",
                    "teams": [["xander"], [winner]],
                    "scores": [1, 0],
                }
                for i, winner in enumerate(IDS[:3] * 4)
            )
            moved.extend((place, r.id) for place, r in other.placed(holding="AN"))
        return count(records, *args)

    monkeypatch.setattr(league.store, "places", others_commit_first)
    found = [(place, r.id) for place, r in league.placed(holding="AN")]
    before = [(1, "Ann"), (2, "anna"), (3, "JOANNA"), (10, "Dan"), (11, "xander")]
    assert found == before
    assert moved and moved != before  # (the state committed meanwhile places them otherwise)
    monkeypatch.undo()
    assert [(place, r.id) for place, r in league.placed(holding="AN")] == moved
    league.close()


@pytest.mark.parametrize("text", ["a\U0010ffff", "X\ud7ff", "\U0010ffff"])
def test_a_text_ending_at_the_last_code_points_finds_each_id_once(db_url: str, text: str) -> None:
    """The ids that start with the text are read as index ranges; a range's end past a
    last character of U+D7FF or U+10FFFF carries over (review of the ranges)."""
    ids = ["A\U0010ffff", "a\U0010ffff", "a\U0010ffffz", "x\ud7ff", "x\ud7ffy", "X\ue000", "b"]
    ids += ["\U0010ffff", "\U0010ffff\U0010ffff"]
    history = [
        {"id": f"m{i}", "played_at": "2024-01-01", "teams": [[a], [b]], "scores": [1, 0]}
        for i, (a, b) in enumerate(itertools.pairwise(ids))
    ]
    memory = rankcraft.League("elo")
    memory.record_many(history)
    with rankcraft.League.open(db_url, "elo") as disk:
        disk.record_many(history)
        for limit in (1, 2, 10):
            found = disk.search(text, limit=limit)
            assert found == memory.search(text, limit=limit) and len(set(found)) == len(found)
    starting = [i for i in sorted(ids) if id_holds(i[: len(text)], text) and len(i) >= len(text)]
    assert memory.search(text)[: len(starting)] == starting


def test_places_among_many_tied_players_are_the_memory_boards(db_url: str) -> None:
    """Players who share a key are ordered by id, and a place is counted in ranges of
    the key index (a key shared by many players is sought into, not read whole): the
    places of a search equal a league in memory's, with and without an active window,
    on ids whose order differs by case and beyond ASCII."""
    rng = random.Random(7)
    names = sorted({"".join(rng.choices("aAbBé1", k=rng.randint(1, 5))) for _ in range(400)})
    document = {
        "players": [
            {
                "id": name,
                "skill": {"rating": float(rng.choice([1400, 1500, 1500, 1500, 1600])), "peak": 0.0},
                "matches": 1,
                "last_played": f"2024-05-{rng.randint(1, 28):02d}T00:00:00Z",
            }
            for name in names
        ]
    }
    memory = rankcraft.League("elo")
    memory.import_state(document)
    with rankcraft.League.open(db_url, "elo") as league:
        league.import_state(document)
    with rankcraft.League.open(db_url) as disk:

        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
        @given(
            text=st.text(st.sampled_from("aAbé1"), min_size=1, max_size=2),
            days=st.none() | st.sampled_from([0.0, 3.0, 10.0, 30.0]),
            offset=st.integers(0, 30),
            top=st.none() | st.integers(1, 40),
        )
        def check(text: str, days: float | None, offset: int, top: int | None) -> None:
            asked = {"holding": text, "active_days": days, "offset": offset}
            wanted = [(p, r.id) for p, r in memory.placed(top, **asked)]
            assert [(p, r.id) for p, r in disk.placed(top, **asked)] == wanted

        check()
        assert len(names) > 150 and len(memory.placed(holding="a")) > 40
