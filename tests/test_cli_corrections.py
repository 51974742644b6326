"""The command line of corrections (issue 40): ``void``, ``correct``, ``edits``, ``replay
--late``, ``leaderboard --at`` / ``player --at`` and the corrections ``player`` lists.

Every bad input exits 2 with a message naming the thing, and leaves the league as it was.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from rankcraft import League
from rankcraft.cli import main

ELO_RERATE = 'name = "elo-rerate"\n[update]\nplugin = "elo"\n[history]\nlate = "rerate"\n'


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def match(mid: str, a: str, b: str, day: int, scores: tuple[int, int] = (1, 0)) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": f"2024-01-{day:02d}T00:00:00Z",
        "teams": [[a], [b]],
        "scores": list(scores),
    }


HISTORY = [
    match("m1", "a", "b", 1),
    match("m2", "a", "c", 2),
    match("m3", "b", "c", 3, (0, 1)),
    match("m4", "d", "e", 4, (2, 1)),
    match("m5", "a", "b", 5),
]


def write(path: Path, matches: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in matches))
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "league.sqlite"
    src = write(tmp_path / "m.jsonl", HISTORY)
    code, _, err = run("replay", str(src), "--ruleset", "elo", "--db", str(path))
    assert code == 0, err
    return path


def export(db: Path) -> dict[str, Any]:
    with League.open(db, create=False) as league:
        return league.export()


def edit_count(db: Path) -> int:
    with League.open(db, create=False) as league:
        return len(league.edits())


def reference(matches: list[dict[str, Any]]) -> League:
    """A league in memory that replayed ``matches`` from scratch."""
    league = League("elo")
    league.record_many(matches)
    return league


def rating(league: League, player: str) -> float:
    return float(league.player(player).skill.rating)


# -- void ---------------------------------------------------------------------------------------


def test_void_of_two_fresh_players_removes_both(db: Path) -> None:
    code, out, err = run("void", "m4", "--reason", "never played", "--db", str(db), "--json")
    assert code == 0, err
    edit = json.loads(out)
    assert edit["n"] == 1 and edit["kind"] == "void" and edit["match_id"] == "m4"
    assert edit["reason"] == "never played" and edit["by"] is None
    assert edit["old"]["id"] == "m4" and edit["old"]["teams"] == [["d"], ["e"]]
    assert edit["new"] is None
    assert edit["rerated"] == 0  # (m5, after it, touches neither d nor e)
    changes = {c["player"]: c for c in edit["changes"]}
    assert set(changes) == {"d", "e"}
    assert changes["d"]["after"] is None and changes["e"]["after"] is None
    assert changes["d"]["before"]["value"] == 1516.0 and changes["d"]["before"]["matches"] == 1
    assert changes["e"]["before"]["value"] == 1484.0
    with League.open(db, create=False) as league:
        assert "d" not in league and "e" not in league
        assert league.match_count == 4


def test_void_of_a_decisive_match_gives_the_replay_without_it(db: Path) -> None:
    code, out, err = run("void", "m1", "--reason", "wrong players", "--db", str(db))
    assert code == 0, err
    ref = reference([m for m in HISTORY if m["id"] != "m1"])
    with League.open(db, create=False) as league:
        for player in "abc":
            assert rating(league, player) == rating(ref, player)
        assert league.player("a").matches == 2
    assert out.startswith("voided m1 (wrong players): 3 matches re-rated, 3 players changed\n")
    before = reference(HISTORY)
    a_before, a_after = rating(before, "a"), rating(ref, "a")
    sign = "+" if a_after >= a_before else "-"
    assert (
        f"  a: value {a_before:.1f} -> {a_after:.1f} ({sign}{abs(a_after - a_before):.1f}); "
        "matches 3 -> 2\n" in out
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["m9", "--reason", "x"], "unknown match 'm9'"),
        (["m1", "--reason", ""], "an edit needs a reason: got ''"),
        (["m1", "--reason", "   "], "an edit needs a reason: got '   '"),
    ],
)
def test_void_refuses_bad_input_and_changes_nothing(db: Path, argv: list[str], said: str) -> None:
    before = export(db)
    code, out, err = run("void", *argv, "--db", str(db))
    assert code == 2 and out == ""
    assert said in err and err.startswith("rankcraft void: error: ")
    assert export(db) == before and edit_count(db) == 0


def test_void_twice_is_refused(db: Path) -> None:
    assert run("void", "m4", "--reason", "x", "--db", str(db))[0] == 0
    before = export(db)
    code, out, err = run("void", "m4", "--reason", "again", "--db", str(db), "--json")
    assert code == 2
    assert "match 'm4' is void already" in err
    assert json.loads(out)["error"]["status"] == 2
    assert export(db) == before and edit_count(db) == 1


def test_void_of_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "none.sqlite"
    code, _, err = run("void", "m1", "--reason", "x", "--db", str(path))
    assert code == 2 and not path.exists()
    assert "none.sqlite" in err


def test_void_needs_a_reason_option(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = export(db)
    code, _, _ = run("void", "m1", "--db", str(db))
    assert code == 2 and "the following arguments are required: --reason" in capsys.readouterr().err
    assert export(db) == before


# -- correct ------------------------------------------------------------------------------------


def test_correct_scores_rerates_as_a_replay_of_the_corrected_history(db: Path) -> None:
    code, out, err = run(
        "correct", "m2", "--scores", "0", "1", "--reason", "wrong score", "--db", str(db), "--json"
    )
    assert code == 0, err
    edit = json.loads(out)
    assert edit["kind"] == "correct" and edit["reason"] == "wrong score"
    assert edit["old"]["scores"] == [1.0, 0.0] and edit["new"]["scores"] == [0.0, 1.0]
    assert edit["new"]["id"] == "m2" and edit["rerated"] == 3  # m2, m3, m5 (not m4: d, e)
    fixed = [match("m2", "a", "c", 2, (0, 1)) if m["id"] == "m2" else m for m in HISTORY]
    ref = reference(fixed)
    with League.open(db, create=False) as league:
        for player in "abcde":
            assert rating(league, player) == rating(ref, player)
    moved = {c["player"] for c in edit["changes"]}
    assert moved == {"a", "b", "c"}  # (d and e played only each other)


def test_correct_played_at_moves_the_match(db: Path) -> None:
    code, out, err = run(
        "correct", "m5", "--played-at", "2023-12-31", "--reason", "wrong day", "--db", str(db)
    )
    assert code == 0, err
    assert out.startswith("corrected m5 (wrong day): 5 matches re-rated")
    moved = [{**HISTORY[4], "played_at": "2023-12-31T00:00:00Z"}, *HISTORY[:4]]
    ref = reference(moved)
    with League.open(db, create=False) as league:
        assert rating(league, "a") == rating(ref, "a")
        assert rating(league, "b") == rating(ref, "b")
        assert league.store.match("m5").match.played_at.year == 2023


def test_correct_teams_and_set(db: Path) -> None:
    code, out, err = run(
        "correct",
        "m4",
        "--teams",
        '[["d"],["f"]]',
        "--set",
        'meta={"venue": "x"}',
        "--set",
        "weight=0.5",
        "--reason",
        "wrong opponent",
        "--db",
        str(db),
        "--json",
    )
    assert code == 0, err
    edit = json.loads(out)
    assert edit["new"]["teams"] == [["d"], ["f"]] and edit["new"]["weight"] == 0.5
    assert edit["new"]["meta"] == {"venue": "x"}
    changes = {c["player"]: c for c in edit["changes"]}
    assert changes["e"]["after"] is None and changes["f"]["before"] is None
    assert changes["f"]["after"]["matches"] == 1
    with League.open(db, create=False) as league:
        assert "e" not in league and league.player("f").matches == 1


def test_correct_ranks(db: Path) -> None:
    code, out, err = run(
        "correct", "m1", "--ranks", "2", "1", "--set", "scores=null", "--reason", "r",
        "--db", str(db), "--json",
    )  # fmt: skip
    assert code == 0, err
    new = json.loads(out)["new"]
    assert new["ranks"] == [2, 1] and "scores" not in new
    flipped = [{**HISTORY[0], "scores": [0, 1]}, *HISTORY[1:]]  # (b first: as b winning)
    ref = reference(flipped)
    with League.open(db, create=False) as league:
        assert rating(league, "b") == rating(ref, "b")
        assert rating(league, "a") == rating(ref, "a")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "correct needs a field to change: --scores, --ranks, --played-at, --teams"),
        (["--set", "foo=1"], "a correction cannot change 'foo'"),
        (["--set", 'id="m9"'], "a correction keeps the match's id ('m2'), not 'm9'"),
        (["--set", "noequals"], "'--set' must be FIELD=JSON: noequals"),
        (["--scores", "x", "1"], "'--scores' must be numbers: x"),
        (["--ranks", "true", "1"], "'--ranks' must be numbers: true"),
        (["--teams", "[[a]]"], "'--teams' must be JSON: [[a]]"),
        (["--teams", '[["a"]]'], "'teams' must be a list of at least 2 sides"),
        (["--scores", "1", "0", "0"], "'scores' must be a list of 2 numbers, one per side"),
        (["--played-at", "yesterday"], "'played_at' is not an ISO-8601 date or date-time"),
        (["--scores", "1", "0", "--set", "scores=[0,1]"], "the field 'scores' is given twice"),
    ],
)
def test_correct_refuses_bad_input_and_changes_nothing(
    db: Path, argv: list[str], said: str
) -> None:
    before = export(db)
    code, out, err = run("correct", "m2", *argv, "--reason", "x", "--db", str(db))
    assert code == 2 and out == "", err
    assert said in err
    assert export(db) == before and edit_count(db) == 0


def test_correct_unknown_match(db: Path) -> None:
    before = export(db)
    code, out, err = run("correct", "m9", "--scores", "0", "1", "--reason", "x", "--db", str(db))
    assert code == 2 and out == "" and "unknown match 'm9'" in err
    assert export(db) == before


def test_correct_a_voided_match_is_refused(db: Path) -> None:
    assert run("void", "m2", "--reason", "x", "--db", str(db))[0] == 0
    before = export(db)
    code, out, err = run("correct", "m2", "--scores", "0", "1", "--reason", "y", "--db", str(db))
    assert code == 2 and out == "" and "match 'm2' is void already" in err
    assert export(db) == before and edit_count(db) == 1


# -- edits --------------------------------------------------------------------------------------


def test_edits_lists_the_audit(db: Path) -> None:
    assert run("void", "m4", "--reason", "fake", "--db", str(db))[0] == 0
    assert run("correct", "m2", "--scores", "0", "1", "--reason", "typo", "--db", str(db))[0] == 0
    code, out, err = run("edits", "--db", str(db), "--json")
    assert code == 0, err
    edits = json.loads(out)
    assert [(e["n"], e["kind"], e["match_id"], e["reason"]) for e in edits] == [
        (1, "void", "m4", "fake"),
        (2, "correct", "m2", "typo"),
    ]
    assert [e["rerated"] for e in edits] == [0, 3]
    code, out, _ = run("edits", "--db", str(db))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["n", "made", "at", "kind", "match", "reason", "by", "rerated"]
    assert lines[1].split()[2:] == ["void", "m4", "fake", "-", "0"]
    assert lines[2].split()[2:] == ["correct", "m2", "typo", "-", "3"]
    # one match, one player (a voided player stays in the audit)
    assert [
        e["n"] for e in json.loads(run("edits", "--match", "m2", "--db", str(db), "--json")[1])
    ] == [2]
    assert [
        e["n"] for e in json.loads(run("edits", "--player", "e", "--db", str(db), "--json")[1])
    ] == [1]
    assert [
        e["n"] for e in json.loads(run("edits", "--player", "c", "--db", str(db), "--json")[1])
    ] == [2]
    assert json.loads(run("edits", "--player", "b", "--db", str(db), "--json")[1]) == []


def test_edits_of_a_league_without_edits(db: Path) -> None:
    assert run("edits", "--db", str(db)) == (0, "no edits\n", "")
    assert run("edits", "--db", str(db), "--match", "m1", "--json")[1] == "[]\n"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--match", "m9"], "unknown match 'm9'"),
        (["--player", "zed"], "unknown player 'zed'"),
    ],
)
def test_edits_refuses_unknown_names(db: Path, argv: list[str], said: str) -> None:
    code, out, err = run("edits", *argv, "--db", str(db))
    assert code == 2 and out == "" and said in err


# -- player: its corrections ---------------------------------------------------------------------


def test_player_lists_its_corrections(db: Path) -> None:
    assert run("void", "m1", "--reason", "not played", "--db", str(db))[0] == 0
    assert run("correct", "m2", "--scores", "0", "1", "--reason", "typo", "--db", str(db))[0] == 0
    code, out, err = run("player", "a", "--db", str(db))
    assert code == 0, err
    assert "2 corrections of their matches, oldest first:\n" in out
    assert "  2024-01-01  m1: void: not played (edit 1, " in out
    assert "  2024-01-02  m2: corrected: typo (edit 2, " in out
    assert " m1: " not in out.split("corrections")[0]  # (not among its matches)
    code, out, _ = run("player", "a", "--db", str(db), "--json")
    document = json.loads(out)
    assert [(c["n"], c["kind"], c["reason"]) for c in document["corrections"]] == [
        (1, "void", "not played"),
        (2, "correct", "typo"),
    ]
    assert [h["match"]["id"] for h in document["history"]] == ["m5", "m2"]
    code, out, _ = run("player", "d", "--db", str(db), "--json")
    assert json.loads(out)["corrections"] == []


def test_player_removed_by_a_void_is_unknown_with_a_pointer_to_the_audit(db: Path) -> None:
    assert run("void", "m4", "--reason", "x", "--db", str(db))[0] == 0
    code, out, err = run("player", "d", "--db", str(db))
    assert (
        code == 2
        and out == ""
        and "unknown player 'd'" in err
        and "rankcraft edits --player d" in err
    )


# -- --at ----------------------------------------------------------------------------------------


def test_leaderboard_at_answers_as_the_league_stood(db: Path) -> None:
    code, out, err = run("leaderboard", "--at", "2024-01-02", "--db", str(db), "--json")
    assert code == 0, err
    board = json.loads(out)
    ref = reference(HISTORY[:2])
    assert [row["id"] for row in board] == ["a", "c", "b"]
    assert [row["place"] for row in board] == [1, 2, 3]
    assert board[0]["skill"]["rating"] == rating(ref, "a")
    assert board[0]["matches"] == 2
    code, out, _ = run("leaderboard", "--at", "2024-01-02", "--db", str(db))
    assert [line.split()[1] for line in out.splitlines()[1:]] == ["a", "c", "b"]


def test_leaderboard_at_follows_the_corrected_history(db: Path) -> None:
    assert run("void", "m1", "--reason", "x", "--db", str(db))[0] == 0
    code, out, _ = run("leaderboard", "--at", "2024-01-02", "--db", str(db), "--json")
    assert code == 0
    board = json.loads(out)
    assert [row["id"] for row in board] == ["a", "c"]
    assert board[0]["skill"]["rating"] == rating(reference(HISTORY[1:2]), "a")


def test_leaderboard_before_the_first_match_is_empty(db: Path) -> None:
    assert run("leaderboard", "--at", "2020-01-01", "--db", str(db), "--json")[:2] == (0, "[]\n")


def test_player_at(db: Path) -> None:
    code, out, err = run("player", "b", "--at", "2024-01-03T12:00:00Z", "--db", str(db), "--json")
    assert code == 0, err
    document = json.loads(out)
    ref = reference(HISTORY[:3])
    assert document["player"]["skill"]["rating"] == rating(ref, "b")
    assert document["player"]["matches"] == 2 and document["history"] == []
    code, out, _ = run("player", "b", "--at", "2024-01-03T12:00:00Z", "--db", str(db))
    assert code == 0 and out.startswith("b: 2 matches, last played 2024-01-03")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["player", "a", "--at", "2020-01-01"], "unknown player 'a' at '--at' 2020-01-01"),
        (["player", "d", "--at", "2024-01-02"], "unknown player 'd' at '--at' 2024-01-02"),
        (["player", "a", "--at", "soon"], "'--at' is not an ISO-8601 date or date-time: 'soon'"),
        (["leaderboard", "--at", "soon"], "'--at' is not an ISO-8601 date or date-time: 'soon'"),
        (["player", "a", "--at", "2024-01-02", "--plot", "x.png"], "'--plot'"),
    ],
)
def test_at_refusals(db: Path, argv: list[str], said: str) -> None:
    code, out, err = run(*argv, "--db", str(db))
    assert code == 2 and out == "" and said in err


# -- replay --late -------------------------------------------------------------------------------


def test_replay_late_rerate_under_a_rerate_ruleset(tmp_path: Path) -> None:
    ruleset = tmp_path / "r.toml"
    ruleset.write_text(ELO_RERATE)
    path = tmp_path / "l.sqlite"
    first = write(tmp_path / "a.jsonl", [HISTORY[0], HISTORY[2]])
    late = write(tmp_path / "b.jsonl", [HISTORY[1]])  # (m2: earlier than m3 of c)
    args = ["--ruleset", str(ruleset), "--db", str(path), "--late", "rerate"]
    assert run("replay", str(first), *args)[0] == 0
    code, out, err = run("replay", str(late), "--db", str(path), "--late", "rerate", "--json")
    assert code == 0, err
    assert json.loads(out)["recorded"] == 1
    ref = reference(HISTORY[:3])
    with League.open(path, create=False) as league:
        for player in "abc":
            assert rating(league, player) == rating(ref, player)
        assert [e.kind for e in league.edits()] == ["late"]
    code, out, _ = run("edits", "--db", str(path), "--json")
    assert json.loads(out)[0]["reason"] == "late" and json.loads(out)[0]["match_id"] == "m2"


def test_replay_late_rerate_is_refused_under_a_refusing_ruleset(db: Path, tmp_path: Path) -> None:
    before = export(db)
    late = write(tmp_path / "late.jsonl", [match("m0", "a", "b", 1)])
    code, _, err = run("replay", str(late), "--db", str(db), "--late", "rerate")
    assert code == 2
    assert "'--late' must be what the ruleset 'elo' says in its [history] table, " in err
    assert "late = 'refuse'" in err and err.rstrip().endswith(": rerate")
    assert "set late = 'rerate' in the ruleset's [history] table" in err
    code, out, _ = run("replay", str(late), "--db", str(db), "--late", "rerate", "--json")
    error = json.loads(out)["error"]
    assert (error["field"], error["value"], error["status"]) == ("--late", "rerate", 2)
    assert export(db) == before


def test_replay_late_rerate_on_a_new_league_is_refused_before_creating_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new.sqlite"
    src = write(tmp_path / "m.jsonl", HISTORY)
    code, _, err = run(
        "replay", str(src), "--ruleset", "elo", "--db", str(path), "--late", "rerate"
    )
    assert code == 2 and "[history]" in err and not path.exists()


def test_replay_late_refuse_asserts_the_ruleset(db: Path, tmp_path: Path) -> None:
    late = write(tmp_path / "late.jsonl", [match("m0", "a", "b", 1)])
    before = export(db)
    code, _, err = run("replay", str(late), "--db", str(db), "--late", "refuse")
    # (the ruleset refuses the late match, as asserted)
    assert code == 2 and "match 'm0': 'played_at' 2024-01-01T00:00:00Z is earlier" in err
    assert export(db) == before
    ruleset = tmp_path / "r.toml"
    ruleset.write_text(ELO_RERATE)
    path = tmp_path / "r.sqlite"
    src = write(tmp_path / "m.jsonl", HISTORY)
    code, _, err = run(
        "replay", str(src), "--ruleset", str(ruleset), "--db", str(path), "--late", "refuse"
    )
    assert code == 2 and "the ruleset 'elo-rerate' says in its [history] table" in err
    assert "late = 'rerate'" in err and err.rstrip().endswith(": refuse")
    assert not path.exists()


def test_replay_late_takes_only_its_two_values(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = export(db)
    src = write(tmp_path / "m.jsonl", [match("m9", "a", "b", 9)])
    code, _, _ = run("replay", str(src), "--db", str(db), "--late", "maybe")
    assert code == 2
    assert "argument --late: invalid choice: 'maybe'" in capsys.readouterr().err
    assert export(db) == before


def test_the_report_of_docs_cli(db: Path) -> None:
    """The example of docs/cli.md, as printed (a move under the column's decimals is
    written with three more)."""
    assert run("void", "m4", "--reason", "never played", "--db", str(db)) == (
        0,
        "voided m4 (never played): 0 matches re-rated, 2 players changed\n"
        "  d: removed (was 1516, 1 match)\n"
        "  e: removed (was 1484, 1 match)\n",
        "",
    )
    code, out, _ = run(
        "correct", "m2", "--scores", "0", "1", "--reason", "wrong score", "--db", str(db)
    )
    assert code == 0
    assert out == (
        "corrected m2 (wrong score): 3 matches re-rated, 3 players changed\n"
        "  a: value 1544.4 -> 1513.9 (-30.5)\n"
        "  b: value 1454.9140 -> 1454.8703 (-0.0437)\n"
        "  c: value 1500.7 -> 1531.2 (+30.5)\n"
    )


def test_the_report_says_a_tier_change(tmp_path: Path) -> None:
    """Under the ladder (5 placement matches), voiding the fifth of a player's wins takes
    the player back below placement: the report says the tier from and to."""
    wins = [
        {**match(f"w{i}", "a", f"x{i}", i), "played_at": f"2024-01-{i:02d}T00:00:00Z"}
        for i in range(1, 6)
    ]
    path = tmp_path / "ladder.sqlite"
    src = write(tmp_path / "w.jsonl", wins)
    assert run("replay", str(src), "--ruleset", "ladder", "--db", str(path))[0] == 0
    code, out, err = run("void", "w5", "--reason", "x", "--db", str(path), "--json")
    assert code == 0, err
    changes = {c["player"]: c for c in json.loads(out)["changes"]}
    assert changes["a"]["before"]["tier"] == "Platinum"
    assert changes["a"]["after"]["tier"] == "Unranked"
    assert (changes["a"]["before"]["matches"], changes["a"]["after"]["matches"]) == (5, 4)
    assert changes["x5"]["after"] is None
    assert (changes["a"]["before"]["value"], changes["a"]["after"]["value"]) == (1212, -1)
    again = tmp_path / "again.sqlite"
    assert run("replay", str(src), "--ruleset", "ladder", "--db", str(again))[0] == 0
    code, out, _ = run("void", "w5", "--reason", "x", "--db", str(again))
    assert code == 0
    assert "  a: value 1212 -> -1 (-1213); tier Platinum -> Unranked; matches 5 -> 4\n" in out
    assert "  x5: removed (was -1, 1 match)\n" in out
