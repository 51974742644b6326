"""The PostgreSQL store behind the same interface as SQLite (the server of this machine).

Each test works in a schema of its own in ``postgresql://postgres@127.0.0.1/test``
(``RANKCRAFT_PG_URL`` overrides the server) and drops it afterwards (the ``pg_url``
fixture of conftest.py).
"""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main

from .conftest import PG_SERVER, committed, require_pg, snapshot


def game(mid: str, a: str, b: str, day: int = 1) -> dict[str, Any]:
    return {"id": mid, "played_at": f"2024-01-{day:02d}", "teams": [[a], [b]], "scores": [1, 0]}


def test_league_in_postgres_matches_sqlite(pg_url: str, tmp_path) -> None:
    matches = [
        game(f"m{i}", f"p{i % 7}", f"p{(i * 3 + 1) % 7}", 1 + i // 10)
        for i in range(60)
        if i % 7 != (i * 3 + 1) % 7
    ]
    with rankcraft.League.open(pg_url, "inversus") as pg:
        pg.record_many(matches[:30])
    with rankcraft.League.open(pg_url) as pg:  # the ruleset is remembered
        assert pg.ruleset.name == "inversus"
        pg.record_many(matches[30:])
        exported = pg.export()
        history = [row.match.id for row in pg.history("p1", limit=3)]
        report = pg.report(matches[5]["id"])
    with rankcraft.League.open(tmp_path / "l.sqlite", "inversus") as lite:
        lite.record_many(matches)
        assert lite.export() == exported
        assert [row.match.id for row in lite.history("p1", limit=3)] == history
        assert lite.report(matches[5]["id"]) == report


def test_refused_batch_leaves_postgres_unchanged(pg_url: str) -> None:
    with rankcraft.League.open(pg_url, "elo") as pg:
        pg.record(game("m0", "a", "b"))
    before = snapshot(pg_url)
    with rankcraft.League.open(pg_url) as pg, pytest.raises(rankcraft.DuplicateMatchError):
        pg.record_many([game("m1", "a", "c", 2), game("m0", "a", "b", 3)])
    assert snapshot(pg_url) == before
    with pytest.raises(rankcraft.LeagueMismatchError, match="created with ruleset 'elo'"):
        rankcraft.League.open(pg_url, "glicko1")


def test_cli_with_a_postgres_url(pg_url: str, tmp_path) -> None:
    source = tmp_path / "m.jsonl"
    source.write_text("".join(json.dumps(game(f"m{i}", "a", "b", i + 1)) + "\n" for i in range(3)))
    out, err = io.StringIO(), io.StringIO()
    assert (
        main(["replay", str(source), "--ruleset", "elo", "--db", pg_url], out=out, err=err) == 0
    ), err.getvalue()
    out = io.StringIO()
    assert main(["leaderboard", "--db", pg_url, "--json"], out=out, err=err) == 0
    assert [r["id"] for r in json.loads(out.getvalue())] == ["a", "b"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    other = pg_url.replace("?schema=", "?schema=new_")
    err = io.StringIO()
    assert (
        main(["replay", str(bad), "--ruleset", "elo", "--db", other], out=io.StringIO(), err=err)
        == 2
    )
    assert "'played_at' is missing" in err.getvalue()
    assert snapshot(other) == {}  # a failed command creates no league


def test_bad_urls_and_schemas() -> None:
    require_pg()
    with pytest.raises(rankcraft.InputError, match="plain SQL name"):
        rankcraft.League.open(f"{PG_SERVER}?schema=x;drop", "elo")
    with pytest.raises(rankcraft.InputError, match="cannot connect"):
        rankcraft.League.open("postgresql://nobody@127.0.0.1:1/none", "elo")
    with pytest.raises(rankcraft.InputError, match="no database at"):
        rankcraft.League.open(f"{PG_SERVER}?schema=t_{uuid.uuid4().hex[:12]}", create=False)


def test_disjoint_matches_commit_while_another_holds_its_players(pg_url: str) -> None:
    import threading

    rankcraft.League.open(pg_url, "elo").close()
    holder = rankcraft.League.open(pg_url)
    store: Any = holder.store
    store.begin_shared()
    store.lock_players(["a", "b"], "held")  # a one-match transaction on a and b, open
    with rankcraft.League.open(pg_url) as other:
        other.record(game("m1", "c", "d"))  # other players: commits at once
    result: dict[str, Any] = {}

    def shares_a_player() -> None:
        with rankcraft.League.open(pg_url) as third:
            result["report"] = third.record(game("m2", "a", "c", 2))

    waiting = threading.Thread(target=shares_a_player)
    waiting.start()
    waiting.join(1.5)
    assert waiting.is_alive()  # waits on a's row
    store.rollback()
    waiting.join(30)
    assert not waiting.is_alive()
    report = result["report"]
    assert report.change("a").skill_before.rating == 1500.0
    assert report.change("c").skill_before.rating == 1516.0  # m1, committed by another
    holder.close()


def test_a_late_match_is_refused_from_the_stored_record(pg_url: str) -> None:
    first = rankcraft.League.open(pg_url, "elo")
    second = rankcraft.League.open(pg_url)
    first.record(game("m1", "a", "b", 5))
    with pytest.raises(rankcraft.LateMatchError, match="earlier than the last match of player 'a'"):
        second.record(game("m2", "c", "a", 3))  # second never saw m1: the row says day 5
    assert second.record(game("m3", "c", "a", 6)).change("a").skill_before.rating == 1516.0
    with pytest.raises(rankcraft.DuplicateMatchError):
        second.record(game("m1", "a", "b", 7))
    first.close()
    second.close()
    assert [m["id"] for m in committed(pg_url)] == ["m1", "m3"]
