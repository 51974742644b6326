"""Issue 31, "nothing invented, nothing internal": imports that refuse what they cannot
trust, and every fault of the user's a clear exit (status 2, naming the option or field
and the value), never an internal error."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.ruleset import ImportedRulesetWarning, dumps

from .conftest import committed, file_digest, snapshot


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def game(mid: str, a: str, b: str, day: int = 1) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": f"2024-05-{day:02d}T20:00:00Z",
        "teams": [[a], [b]],
        "scores": [1, 0],
    }


def elo_league(db: Path | str) -> dict[str, Any]:
    """An elo league of 5 players at ``db``; returns its export document."""
    src = Path(str(db) + ".jsonl")
    pairs = [("ann", "bo"), ("cy", "di"), ("ann", "cy"), ("eve", "bo"), ("ann", "eve")]
    src.write_text(
        "".join(json.dumps(game(f"m{i}", a, b, i + 1)) + "\n" for i, (a, b) in enumerate(pairs))
    )
    code, _, err = run("replay", str(src), "--ruleset", "elo", "--db", str(db))
    assert code == 0, err
    with rankcraft.League.open(db) as league:
        document: dict[str, Any] = league.export()
    return document


def import_cli(
    tmp_path: Path, db: Path | str, document: Any, *options: str
) -> tuple[int, str, str]:
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(document))
    return run("import", str(doc), "--db", str(db), *options)


# -- 1. an import invents no state ---------------------------------------------------------


def test_an_import_missing_a_state_field_is_refused_naming_player_and_field(
    tmp_path: Path,
) -> None:
    db = tmp_path / "l.sqlite"
    document = elo_league(db)
    assert document["players"][0]["id"] == "ann"
    del document["players"][0]["skill"]["peak"]
    before = snapshot(str(db))
    code, out, err = import_cli(tmp_path, db, document)
    assert (code, out) == (2, "")
    assert "players[0] 'ann'.skill: 'peak' is missing" in err
    assert snapshot(str(db)) == before
    # the library says the same, and a whole state still imports
    league = rankcraft.League("elo")
    with pytest.raises(rankcraft.StateError, match=r"players\[0\] 'ann'.skill: 'peak' is missing"):
        league.import_state(document)
    document["players"][0]["skill"]["peak"] = 1516.0
    assert league.import_state(document) == 5
    assert league.player("ann").skill.peak == 1516.0


@pytest.mark.parametrize(
    ("ruleset", "player", "where", "missing"),
    [
        ("elo", {"skill": {"rating": 1500.0}}, "skill", "'peak' is"),
        (
            "skyweaver",
            {"skill": {"rating": 1500.0, "deviation": 350.0}, "rank": {"points": 100}},
            "rank",
            "'tier', 'floor', 'streak', 'weekly', 'seasons' are",
        ),
    ],
)
def test_every_state_class_refuses_a_missing_field(
    ruleset: str, player: dict[str, Any], where: str, missing: str
) -> None:
    league = rankcraft.League(ruleset)
    with pytest.raises(rankcraft.StateError) as caught:
        league.import_state({"players": [{"id": "p", **player}]})
    assert f"players[0] 'p'.{where}: {missing}" in str(caught.value)
    assert len(league) == 0


def test_a_pending_opponent_missing_a_field_is_refused() -> None:
    batch = rankcraft.loads_ruleset('extends = "glicko1"\nname = "g"\n[period]\nmode = "batch"\n')
    league = rankcraft.League(batch)
    league.record(game("m1", "a", "b"))
    document = league.export()
    assert rankcraft.League(batch).import_state(document) == 2  # whole: taken
    opened = [p for p in document["players"] if p.get("open", {}).get("pending")]
    assert opened, "a batch period stays open"
    del opened[0]["open"]["pending"][0][0]["deviation"]
    # (a field without a default is cattrs' "required key is missing", with its path)
    with pytest.raises(rankcraft.StateError, match=r"missing @ .*pending\[0\]\[0\].deviation"):
        rankcraft.League(batch).import_state(document)
    document = league.export()
    opened = [p for p in document["players"] if p.get("open", {}).get("pending")]
    opened[0]["open"]["base"] = {"rating": 1500.0}
    with pytest.raises(
        rankcraft.StateError, match=r"missing @ players\[0\] 'a'.open.base.deviation"
    ):
        rankcraft.League(batch).import_state(document)


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        (lambda o: o.pop("base"), "open.base is null or missing while results are pending"),
        (lambda o: o.update(base=None), "open.base is null or missing while results are"),
        (lambda o: o.pop("pending"), "open: 'pending' is missing"),
        (lambda o: o.pop("period"), "open: 'period' is missing"),
        (lambda o: o.update(period=None), "open.period is null while results are pending"),
    ],
)
def test_an_imported_open_period_invents_nothing(change: Any, refused: str) -> None:
    """An open live period imported without its base was taken, and every later match of
    the player was an internal error (TypeError in the Glicko-2 update); one without its
    pending results or its period was taken as none (results lost, or rated in the
    wrong period)."""
    league = rankcraft.League("glicko2")  # (live mode)
    league.record_many([game("m1", "a", "b"), game("m2", "b", "a", 2)])
    document = league.export()
    assert rankcraft.League("glicko2").import_state(document) == 2  # whole: taken
    change(document["players"][0]["open"])
    copy = rankcraft.League("glicko2")
    with pytest.raises(rankcraft.StateError, match="players\\[0\\] 'a'." + refused):
        copy.import_state(document)
    assert len(copy) == 0
    # a batch period has no base to give; an empty one needs no period either
    batch = rankcraft.loads_ruleset('extends = "glicko1"\nname = "g"\n[period]\nmode = "batch"\n')
    open_ = {"period": None, "pending": []}
    player = {"id": "p", "skill": {"rating": 1500.0, "deviation": 100.0}, "open": open_}
    assert rankcraft.League(batch).import_state({"players": [player]}) == 1


# -- 2. an import takes no other ruleset ---------------------------------------------------


@pytest.mark.parametrize(("value", "accepted"), [("64.0", True), ("-1.0", False)])
def test_an_import_of_another_ruleset_is_refused(
    tmp_path: Path, value: str, accepted: bool
) -> None:
    db = tmp_path / "l.sqlite"
    document = elo_league(db)
    document["ruleset_toml"] = document["ruleset_toml"].replace(
        "k_factor = 32.0", f"k_factor = {value}"
    )
    before = snapshot(str(db))
    code, out, err = import_cli(tmp_path, db, document)
    assert (code, out) == (2, "")
    if accepted:  # a valid ruleset, but not the league's
        assert (
            "rates otherwise than the league's 'elo': update.params.k_factor: 64.0 there, "
            "32.0 here; --accept-ruleset" in err
        )
    else:  # validated as any ruleset is
        assert "'ruleset_toml' is not a valid ruleset" in err
        assert "'k_factor' must be a finite number in [1e-06, 10000.0]: -1.0" in err
    assert snapshot(str(db)) == before
    code, out, err = import_cli(tmp_path, db, document, "--accept-ruleset")
    if accepted:
        assert code == 0 and out.startswith("imported 5 players")
        assert "rankcraft import: warning: the document's ruleset ('ruleset_toml') rates " in err
        assert "update.params.k_factor: 64.0 there, 32.0 here; imported as asked" in err
        with rankcraft.League.open(db) as league:  # the league keeps its own ruleset
            assert league.ruleset.update.params.k_factor == 32.0
    else:
        assert code == 2 and "not a valid ruleset" in err
        assert snapshot(str(db)) == before


def test_the_library_refuses_another_ruleset_or_warns_when_asked() -> None:
    league = rankcraft.League("elo")
    league.record(game("m1", "a", "b"))
    document = league.export()
    document["ruleset_toml"] += "\n"  # the same ruleset written otherwise
    assert rankcraft.League("elo").import_state(document) == 2
    text = dumps(rankcraft.load_ruleset("elo"))  # (a ruleset named elo, rating otherwise)
    other = rankcraft.League(
        rankcraft.loads_ruleset(text.replace("scale = 400.0", "scale = 300.0"))
    )
    with pytest.raises(rankcraft.StateError, match=r"update.params.scale: 400.0 there, 300.0 here"):
        other.import_state(document)
    assert len(other) == 0
    with pytest.warns(ImportedRulesetWarning, match=r"scale: 400.0 there, 300.0 here"):
        assert other.import_state(document, accept_ruleset=True) == 2
    # a description or a [display] table does not change what a ruleset rates
    shown = rankcraft.League(
        rankcraft.loads_ruleset(
            text.replace('description = "', 'description = "ours: ')
            + "[display]\nactive_days = 9.0\n"
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert shown.import_state(document) == 2


# -- 3. an import locks no player out ------------------------------------------------------


def test_an_import_from_the_far_future_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    document = elo_league(db)
    document["players"][1]["last_played"] = "9999-12-31T23:59:59Z"
    before = snapshot(str(db))
    code, out, err = import_cli(tmp_path, db, document)
    assert (code, out) == (2, "")
    assert (
        "players[1] 'bo': 'last_played' 9999-12-31T23:59:59Z is later than this machine's "
        "clock (" in err
    )
    assert "plus 86400 s (--max-future)" in err
    assert snapshot(str(db)) == before
    code, _, err = import_cli(tmp_path, db, document, "--max-future", "1e12")
    assert code == 2 and "'--max-future' must be a number of seconds in [0, 1e+09]: 1e+12" in err
    # a day ahead is taken; --max-future 0 takes nothing later than now
    from datetime import UTC, datetime, timedelta

    soon = datetime.now(UTC) + timedelta(hours=1)
    document["players"][1]["last_played"] = soon.isoformat()
    code, _, err = import_cli(tmp_path, db, document, "--max-future", "0")
    assert code == 2 and "plus 0 s (--max-future)" in err
    assert import_cli(tmp_path, db, document)[0] == 0
    with pytest.raises(rankcraft.StateError, match=r"'last_played' .* plus 60 s"):
        rankcraft.League("elo").import_state(
            {**document, "players": [{**document["players"][1], "last_played": "2999-01-01"}]},
            max_future=60,
        )


# -- 4. a plugin that exits at import ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("import sys\nsys.exit(0)\n", "SystemExit: 0"),
        ("raise SystemExit('bye')\n", "SystemExit: bye"),
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
        ("raise GeneratorExit\n", "GeneratorExit"),
        ("class Stop(BaseException):\n    pass\nraise Stop('here')\n", "Stop: here"),
        ("raise BaseException\n", "BaseException"),
    ],
)
def test_a_plugin_that_exits_at_import_fails_to_load_and_the_command_goes_on(
    tmp_path: Path, text: str, shown: str
) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "quitter.py").write_text(text)
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    db = tmp_path / "x.sqlite"
    code, out, err = run(
        "--plugins-dir", str(folder), "replay", str(src), "--ruleset", "elo", "--db", str(db)
    )
    assert code == 0 and out.startswith("recorded 1 match "), err
    assert len(committed(str(db))) == 1
    code, out, _ = run("--plugins-dir", str(folder), "plugins", "--json")
    (row,) = [p for p in json.loads(out) if p["name"] == "quitter"]
    assert row["error"] == f"plugin 'quitter' from plugins-dir failed to load: {shown}"
    assert file_digest(db) is not None


# -- 5. internal errors where the user erred -----------------------------------------------


@pytest.mark.parametrize(
    ("start", "every"), [("9999-12-31", "1.0"), ("9999-12-31T23:00:00-05:00", "0.1")]
)
def test_a_schedule_past_the_year_9999_is_refused_by_check(
    tmp_path: Path, start: str, every: str
) -> None:
    ruleset = tmp_path / "late.toml"
    ruleset.write_text(
        f'extends = "elo-538"\nname = "late"\n[[resets]]\nkind = "season"\n'
        f'every_days = {every}\nstart = "{start}"\n'
    )
    code, _, err = run("check", str(ruleset))
    assert code == 2
    assert (
        f"'start' plus 'every_days' must fall within the years 1 to 9999: '{start}' plus "
        f"{float(every):g} days (kind 'season')" in err
    )
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    db = tmp_path / "l.sqlite"
    code, _, err = run("replay", str(src), "--ruleset", str(ruleset), "--db", str(db))
    assert code == 2 and "internal error" not in err and "'start' plus 'every_days'" in err
    assert not db.exists()


@pytest.mark.slow(seconds=8)
@pytest.mark.parametrize(
    ("storage", "reason"),
    [
        ("notaurl://x", "Can't load plugin: sqlalchemy.dialects:notaurl"),
        ("", "Could not parse SQLAlchemy URL"),
        ("sqlite:///{tmp}", "unable to open database file"),  # a folder
        ("postgresql://postgres:pw@127.0.0.1:1/test", "Connection refused"),
    ],
)
def test_tune_with_a_storage_it_cannot_use_names_the_option(
    tmp_path: Path, storage: str, reason: str
) -> None:
    pytest.importorskip("optuna")
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps(game(f"m{d}", "a", "b", d)) + "\n" for d in range(1, 20)))
    url = storage.replace("{tmp}", str(tmp_path))
    code, out, err = run(
        "tune", str(src), "--ruleset", "elo", "--test-from", "2024-05-15",
        "--param", "update.params.k_factor=10:40", "--out", str(tmp_path / "t.toml"),
        "--trials", "2", "--jobs", "1", "--storage", url,
    )  # fmt: skip
    assert (code, out) == (2, ""), err
    shown = url.replace(":pw@", ":***@")
    assert f"rankcraft tune: error: '--storage' {shown!r} cannot hold the study: " in err
    assert reason in err and "internal error" not in err and ":pw@" not in err
    assert not (tmp_path / "t.toml").exists()


@pytest.mark.parametrize("schema", ["pg_catalog", "information_schema", "PG_toast"])
def test_a_reserved_postgresql_schema_is_refused(tmp_path: Path, schema: str) -> None:
    from .conftest import PG_SERVER

    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    url = f"{PG_SERVER}?schema={schema}"
    code, out, err = run("replay", str(src), "--ruleset", "elo", "--db", url)
    assert (code, out) == (2, "")
    assert (
        f"'schema' must not be one of PostgreSQL's own (pg_..., information_schema): "
        f"{schema!r} in {url!r}" in err
    )


@pytest.mark.parametrize(
    ("tail", "shown"),
    [
        ("?foo=bar", "cannot connect to '{url}': invalid URI query parameter: \"foo\""),
        ("?schema=a&schema=b", "'schema' is given 2 times in '{url}'"),
    ],
)
def test_a_postgresql_url_it_cannot_use_is_refused(tmp_path: Path, tail: str, shown: str) -> None:
    """Faults of the --db URL itself are the user's (they were internal errors)."""
    from .conftest import PG_SERVER, require_pg

    require_pg()
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    url = PG_SERVER.split("?")[0] + tail
    for argv in (["replay", str(src), "--ruleset", "elo"], ["leaderboard"]):
        code, out, err = run(*argv, "--db", url)
        assert (code, out) == (2, ""), err
        assert f"rankcraft {argv[0]}: error: {shown.format(url=url)}" in err


def test_an_unparseable_postgresql_url_is_refused_without_its_password(tmp_path: Path) -> None:
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    url = "postgresql://ann:secret@[::1:5432/league"
    code, out, err = run("replay", str(src), "--ruleset", "elo", "--db", url)
    assert (code, out) == (2, "")
    assert "error: not a PostgreSQL URL: 'postgresql://***' (Invalid IPv6 URL)" in err
    assert "secret" not in err


# -- 6. a NUL in a path or query -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/players/x%00y", 404),
        ("/matches/x%00y", 404),
        ("/web/players/x%00y", 404),
        ("/leaderboard?tier=a%00b", 200),
        ("/leaderboard?holding=a%00b", 200),
        ("/predict?side=x%00y&side=q1", 200),
        ("/predict?side=x%00y,q2&side=q1", 200),
    ],
)
def test_a_nul_in_a_path_or_query_is_answered_as_on_sqlite(
    db_url: str, path: str, status: int
) -> None:
    from starlette.testclient import TestClient

    from rankcraft.serve import create_app

    with rankcraft.League.open(db_url, "skyweaver") as league:
        league.record(game("m1", "q1", "q2"))
        client = TestClient(create_app(league), raise_server_exceptions=False)
        answer = client.get(path)
        assert answer.status_code == status, answer.text
        if status == 404:
            assert "unknown" in answer.json()["error"]["message"]
        elif path.startswith("/predict"):
            assert sum(answer.json()["probabilities"]) == pytest.approx(1.0)
        else:
            assert answer.json() == []
        assert "x\x00y" not in league and league.store.match("x\x00y") is None
        assert [r.id for r in league.players()] == ["q1", "q2"]


# -- 7. a valid writer carries on where a failing one removed the new league ---------------


@pytest.mark.parametrize("second_fails", [False, True])
def test_a_league_removed_by_its_failing_creator_is_made_again_by_the_other_writer(
    tmp_path: Path, second_fails: bool
) -> None:
    from rankcraft.store import creating

    db = tmp_path / "new.sqlite"
    second_command = creating(db)
    # the first command: its first line is bad
    with pytest.raises(rankcraft.MatchError), creating(db) as first:
        assert first.new
        with rankcraft.League.open(first.target, "elo") as league:
            # meanwhile a second command opens the league the first one made
            second_creation = second_command.__enter__()
            assert not second_creation.new
            second = rankcraft.League.open(second_creation.target, "elo")
            league.record({"id": "bad"})
    assert not db.exists()  # the first command removed what it made, empty
    # the second one carries on: it makes the league again and records into it
    if second_fails:
        with pytest.raises(rankcraft.MatchError, match="'played_at' is missing"), second:
            second.record_many([game("m1", "a", "b"), {"id": "m2", "teams": []}])
        error = rankcraft.MatchError("x")
        assert not second_command.__exit__(type(error), error, None)  # (re-raised)
        assert not db.exists()  # made again by this command, which failed: removed
    else:
        with second:
            second.record_many([game("m1", "a", "b"), game("m2", "b", "c", 2)])
        second_command.__exit__(None, None, None)
        assert [m["id"] for m in committed(str(db))] == ["m1", "m2"]
        with rankcraft.League.open(db) as again:
            assert again.ruleset.name == "elo" and len(again) == 3


def test_a_postgresql_league_another_command_has_open_is_left_to_it(pg_url: str) -> None:
    """On PostgreSQL the failing creator leaves the league in place while another command
    has it open (its tables were dropped under that one: an internal error at its next
    read or write); that command records into it."""
    from rankcraft.store import creating

    second_command = creating(pg_url)
    with pytest.raises(rankcraft.MatchError), creating(pg_url) as first:
        assert first.new
        with rankcraft.League.open(first.target, "elo") as league:
            second_creation = second_command.__enter__()
            assert not second_creation.new
            second = rankcraft.League.open(second_creation.target, "elo")
            league.record({"id": "bad"})
    assert snapshot(pg_url) != {}  # kept: the second command has it open
    with second:
        second.record_many([game("m1", "a", "b"), game("m2", "b", "c", 2)])
    second_command.__exit__(None, None, None)
    assert [m["id"] for m in committed(pg_url)] == ["m1", "m2"]
    # once nobody has it open, a failing creator's empty league is removed as before
    from rankcraft.store.postgres import discard_league

    with rankcraft.League.open(pg_url) as league:
        assert not discard_league(pg_url)  # (open here; and it holds matches)


def test_two_commands_creating_one_postgresql_schema_at_once_both_go_on() -> None:
    """Two ``CREATE SCHEMA`` at the same moment: the second fails on the catalogue's
    unique index (not "schema exists"), which was exit 2 "cannot create schema"."""
    import threading

    from rankcraft.store.postgres import create_schema

    from .conftest import drop_schema, new_pg_url

    for _ in range(20):
        url = new_pg_url()
        barrier = threading.Barrier(2)
        made: list[bool | Exception] = []

        def create(
            url: str = url,
            barrier: threading.Barrier = barrier,
            made: list[bool | Exception] = made,
        ) -> None:
            barrier.wait()
            try:
                made.append(create_schema(url))
            except Exception as exc:
                made.append(exc)

        threads = [threading.Thread(target=create) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        drop_schema(url)
        assert sorted(made, key=str) == [False, True]  # one made it; the other found it


def test_two_replays_race_and_the_valid_one_wins(tmp_path: Path, db_url: str) -> None:
    """The issue's reproduction with two processes: the failing one removes the league
    it made while the valid one has it open; the valid one exits 0 with its matches."""
    import subprocess
    import sys

    bad = tmp_path / "bad_first.jsonl"
    good = tmp_path / "good.jsonl"
    bad.write_text('{"id": "x"}\n')
    good.write_text("".join(json.dumps(game(f"g{d}", "a", "b", d)) + "\n" for d in range(1, 29)))
    db = db_url
    # the bad replay makes the league, then waits (a slow first read of its file) until
    # the good one has it open; the good one then waits while the bad one fails
    slow = (
        "import pathlib, sys, time, rankcraft.cli as c, rankcraft.engine as e\n"
        "real = e.League.record_many\n"
        "mark = pathlib.Path(sys.argv[2])\n"
        "def late(self, *a, **k):\n"
        "    if sys.argv[1] == 'first':\n"
        "        end = time.monotonic() + 60\n"
        "        while not mark.exists() and time.monotonic() < end:\n"
        "            time.sleep(0.01)\n"
        "    else:\n"
        "        mark.touch(); time.sleep(1.0)\n"
        "    return real(self, *a, **k)\n"
        "e.League.record_many = late\n"
        "sys.exit(c.main(sys.argv[3:]))\n"
    )
    mark = str(tmp_path / "second-has-it-open")
    args = ["--ruleset", "elo", "--db", db]
    first = subprocess.Popen(
        [sys.executable, "-c", slow, "first", mark, "replay", str(bad), *args],
        stderr=subprocess.PIPE,
        text=True,
    )
    import time

    deadline = time.monotonic() + 30

    def made() -> bool:  # (sqlite3.connect would make the file the first one makes)
        return (db.startswith("postgresql://") or Path(db).exists()) and snapshot(db) != {}

    while not made() and time.monotonic() < deadline:
        time.sleep(0.01)
    second = subprocess.run(
        [sys.executable, "-c", slow, "second", mark, "replay", str(good), *args],
        capture_output=True,
        text=True,
    )
    _, first_err = first.communicate(timeout=60)
    assert first.returncode == 2 and "'played_at' is missing" in first_err
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("recorded 28 matches")
    assert len(committed(db)) == 28


# -- 8. bounded work on the command line ---------------------------------------------------


def test_replay_refuses_more_sides_or_players_than_the_service_does(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    wide = {
        "id": "wide",
        "played_at": "2024-05-02",
        "teams": [[f"p{i}"] for i in range(10_000)],
        "ranks": list(range(1, 10_001)),
    }
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n" + json.dumps(wide) + "\n")
    code, out, err = run("replay", str(src), "--ruleset", "elo", "--db", str(db))
    assert (code, out) == (2, "")
    assert (
        "line 2, match 'wide': 'teams' has 10000 sides, more than the limit of 64 (--max-sides)"
        in err
    )
    assert not db.exists()
    # 65 sides: refused by default, taken with --max-sides; players bound likewise
    wide["teams"], wide["ranks"] = wide["teams"][:65], wide["ranks"][:65]
    src.write_text(json.dumps(wide) + "\n")
    code, _, err = run("replay", str(src), "--ruleset", "elo", "--db", str(db))
    assert code == 2 and "'teams' has 65 sides, more than the limit of 64" in err
    code, out, err = run(
        "replay", str(src), "--ruleset", "elo", "--db", str(db), "--max-sides", "65",
        "--max-players", "64",
    )  # fmt: skip
    assert code == 2 and "'teams' has 65 players, more than the limit of 64 (--max-players)" in err
    code, out, err = run(
        "replay", str(src), "--ruleset", "elo", "--db", str(db), "--max-sides", "65"
    )
    assert code == 0 and out.startswith("recorded 1 match "), err
    code, _, err = run("replay", str(src), "--db", str(db), "--max-sides", "1")
    assert code == 2 and "'--max-sides' must be a whole number in [2, 1000000]: 1" in err


@pytest.mark.parametrize("command", ["evaluate", "tune"])
def test_evaluate_and_tune_refuse_more_sides_than_the_service_does(
    tmp_path: Path, command: str
) -> None:
    """evaluate and tune read a history too: a 10,000-side line ran for minutes in them."""
    wide = {
        "id": "wide",
        "played_at": "2024-05-20",
        "teams": [[f"p{i}"] for i in range(65)],
        "ranks": list(range(1, 66)),
    }
    rows = [game(f"m{d}-{k}", "a", "b", d) for d in range(1, 19) for k in range(4)] + [wide]
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in rows))
    argv = [command, str(src), "--ruleset", "elo", "--test-from", "2024-05-10"]
    if command == "tune":
        argv += ["--param", "update.params.k_factor=10:40", "--out", str(tmp_path / "t.toml")]
        argv += ["--trials", "2", "--jobs", "1", "--method", "random"]
    else:
        argv += ["--jobs", "1"]
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert (
        "line 73, match 'wide': 'teams' has 65 sides, more than the limit of 64 (--max-sides)"
        in err
    )
    code, out, err = run(*argv, "--max-players", "64", "--max-sides", "65")
    assert code == 2 and "'teams' has 65 players, more than the limit of 64 (--max-players)" in err
    code, out, err = run(*argv, "--max-sides", "65")
    assert code == 0, err
    code, _, err = run(*argv, "--max-sides", "1")
    assert code == 2 and "'--max-sides' must be a whole number in [2, 1000000]: 1" in err


@pytest.mark.parametrize("value", ["99999999999", "100001", "0", "-5"])
def test_evaluate_bootstrap_has_bounds(tmp_path: Path, value: str) -> None:
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    code, out, err = run(
        "evaluate", str(src), "--ruleset", "elo", "--ruleset", "glicko1", "--test-from",
        "2024-05-01", "--bootstrap", value,
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert f"'--bootstrap' must be a whole number in [1, 100000]: {value}" in err


# -- 9. a full disk with --commit-every says what failed and what was kept -----------------


def test_a_full_disk_with_commit_every_says_the_disk_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .conftest import fill_disk_after

    db = tmp_path / "l.sqlite"
    small = tmp_path / "small.jsonl"
    small.write_text(json.dumps(game("m0", "a", "b")) + "\n")
    assert run("replay", str(small), "--ruleset", "elo", "--db", str(db))[0] == 0
    fill_disk_after(monkeypatch, 40)
    big = tmp_path / "big.jsonl"
    rows = [game(f"x{i}", f"q{i}" * 40, f"r{i}" * 40, 20) for i in range(3000)]
    big.write_text("".join(json.dumps(m) + "\n" for m in rows))
    code, out, err = run("replay", str(big), "--db", str(db), "--commit-every", "50")
    monkeypatch.undo()
    assert (code, out) == (1, "")
    kept = len(committed(str(db))) - 1
    assert kept > 0 and kept % 50 == 0
    assert (
        f"kept the {kept:,} matches this command committed before the error; the database "
        "failed (StoreError, below), not the file: once it can be written again, rerun with "
        "--skip-seen to go on" in err
    )
    assert f"the disk holding '{db}' is full (SQLITE_FULL" in err and "fix the line" not in err
    # (the store's own words do not contradict what was kept: it said "nothing was kept")
    assert err.rstrip().endswith("the write under way was undone")


def test_a_disk_full_while_a_new_league_is_made_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a really full disk SQLite rolls the transaction back itself; the ROLLBACK that
    followed failed ("no transaction is active"), an internal error in place of the
    disk's. (Seen on a 300 kB tmpfs; here SQLite's own rollback is played by the test.)"""
    import sqlite3

    import rankcraft.store.sql as sql_module
    from rankcraft.store.sqlite import sqlite_error

    def full(execute: Any, *args: Any) -> None:
        execute("ROLLBACK")  # what SQLite does by itself on SQLITE_FULL
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorcode, exc.sqlite_errorname = 13, "SQLITE_FULL"
        raise sqlite_error(exc, str(db)) or exc

    db = tmp_path / "l.sqlite"
    monkeypatch.setattr(sql_module, "upgrade", full)
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(game("m1", "a", "b")) + "\n")
    code, out, err = run("replay", str(src), "--ruleset", "elo", "--db", str(db))
    assert (code, out) == (1, "")
    assert f"rankcraft replay: error: the disk holding '{db}' is full (SQLITE_FULL" in err
    assert "internal error" not in err and not db.exists()


# -- issue 43 item 8: derived fields agree with what they derive from ----------------------

BATCH_G2 = (
    'name = "g2b"\nextends = "glicko2"\n[period]\nmode = "batch"\nlength_days = 7.0\n'
    'origin = "2024-01-01"\n'
)


def _tampered(ruleset: str, change: Any) -> tuple[rankcraft.Ruleset, dict[str, Any]]:
    """A two-match league's export with the first player's entry changed by ``change``."""
    rules = rankcraft.loads_ruleset(ruleset) if "\n" in ruleset else rankcraft.load_ruleset(ruleset)
    league = rankcraft.League(rules)
    league.record_many([game("m1", "ann", "bo", 1), game("m2", "bo", "ann", 2)], close=False)
    document = league.export()
    entry = document["players"][0]
    assert entry["id"] == "ann"
    change(entry)
    return rules, document


def _set(*path: str, value: Any) -> Any:
    def change(entry: dict[str, Any]) -> None:
        where = entry
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("ruleset", "change", "said"),
    [
        (
            "football-goals",
            lambda e: e["skill"].update(attack=0.1, defence=0.1, rating=35.0),
            "players[0] 'ann'.skill: 'rating' must be attack + defence, 0.2: 35.0",
        ),
        (
            "skyweaver",
            _set("rank", value=None),
            "players[0] 'ann'.rank is null or missing for a player of 2 matches",
        ),
        (
            "skyweaver",
            _set("rank", "tier", value="Bogus"),
            "players[0] 'ann'.rank: 'tier' must be the tier of",
        ),
        (
            "skyweaver",
            lambda e: e["rank"].update(points=100, tier="Wanderer", floor=900),
            "players[0] 'ann'.rank: 'points' must be at least the 'floor' reached, 900: 100",
        ),
        (
            "skyweaver",
            _set("rank", "floor", value=123),
            "players[0] 'ann'.rank: 'floor' must be a hard floor (200, 300, 600, 900, 1200): 123",
        ),
        (
            BATCH_G2,
            _set("open", "period", value=-5),
            "players[0] 'ann'.open.period must be the rating period of 'last_played' (17): -5",
        ),
        (
            BATCH_G2,
            _set("open", "period", value=10**9),
            "players[0] 'ann'.open.period must be the rating period of 'last_played' (17): "
            "1000000000",
        ),
        (
            "elo",
            _set("matches", value=10**20),
            "players[0] 'ann'.matches must be a whole number in [0, 2147483647]: "
            "100000000000000000000",
        ),
    ],
    ids=[
        "goals-rating",
        "rank-null",
        "bogus-tier",
        "points-under-floor",
        "floor-of-no-tier",
        "period-minus-5",
        "period-1e9",
        "matches-1e20",
    ],
)
def test_a_tampered_import_is_refused_naming_the_field(
    db_url: str, ruleset: str, change: Any, said: str
) -> None:
    rules, document = _tampered(ruleset, change)
    with rankcraft.League.open(db_url, rules) as league:
        before = league.export()
        with pytest.raises(rankcraft.StateError) as caught:
            league.import_state(document)
        assert str(caught.value).startswith(said)
        assert league.export() == before


def test_an_untampered_export_of_every_kind_is_imported(tmp_path: Path) -> None:
    # the same leagues, not tampered with: every derived field agrees
    for ruleset in ("football-goals", "skyweaver", BATCH_G2, "elo"):
        rules, document = _tampered(ruleset, lambda entry: None)
        league = rankcraft.League(rules)
        league.import_state(document)
        assert league.export()["players"] == document["players"]
