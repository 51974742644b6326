"""The command line's finish: the README's commands run as shown, --json errors, "did
you mean", predict's options, season resets in `player`, and the ruleset fixes (extends
without a name, wager's team params). (serve's readiness and access log: test_web.py.)"""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.errors import RulesetError

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def shell_commands(path: Path) -> list[list[str]]:
    """The ``rankcraft ...`` and ``cd DIR`` lines of a page's bash blocks, comments and
    ``[--opt]`` cut (``cd`` kept as ``["cd", DIR]``)."""
    text = path.read_text("utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            line = re.sub(r"\s*\[[^\]]*\]", "", line)
            if line.startswith("rankcraft "):
                commands.append(shlex.split(line)[1:])
            elif line.startswith("cd "):
                commands.append(shlex.split(line))
    return commands


def test_the_readme_and_quickstart_commands_run_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = shell_commands(ROOT / "README.md")
    quick = shell_commands(ROOT / "docs" / "quickstart.md")
    # the sample goes into a folder of its own, and the commands after it run there
    assert readme[:2] == [["sample"], ["cd", "rankcraft-sample"]]
    assert quick[2:4] == [["sample"], ["cd", "rankcraft-sample"]]
    assert ["check", "my-ruleset.toml"] in readme
    for page, commands in (("readme", readme), ("quickstart", quick)):
        (tmp_path / page).mkdir()
        monkeypatch.chdir(tmp_path / page)  # a fresh folder, as a new user has
        for argv in commands:
            if "demo" in argv or "rankcraft-demo.sqlite" in argv:
                continue  # the demo replays 49,520 matches: tests/test_cli.py runs it
            if argv[0] == "cd":
                monkeypatch.chdir(argv[1])
                continue
            code, out, err = run(*argv)
            assert code == 0, (argv, err)
            assert out
        assert Path.cwd() == tmp_path / page / "rankcraft-sample"
        assert sorted(p.name for p in (tmp_path / page).iterdir()) == ["rankcraft-sample"]
        code, out, _ = run("player", "alice", "--db", "league.sqlite")
        assert out.startswith("alice: 36 matches")


def test_the_readme_uses_the_venv_it_made() -> None:
    """After the first command, `rankcraft` is run with the venv active (it is not on the
    PATH otherwise) or as .venv/bin/rankcraft."""
    readme = (ROOT / "README.md").read_text("utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.DOTALL)
    activated = False
    for block in blocks[2:]:
        for line in block.splitlines():
            activated = activated or line.strip() == ". .venv/bin/activate"
            if line.startswith("rankcraft "):
                assert activated, line


def test_json_errors_name_the_field_the_value_and_the_line(tmp_path: Path) -> None:
    code, out, err = run(
        "leaderboard", "--db", str(tmp_path / "none.sqlite"), "--top", "0", "--json"
    )
    assert code == 2 and "'--top' must be" in err
    error = json.loads(out)["error"]
    assert (error["field"], error["value"], error["status"]) == ("--top", "0", 2)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "played_at": "2024-01-01", "teams": [["x"], ["y"]], "scores": [1, 0]}\n'
        '{"id": "b", "played_at": "2024-01-02", "teams": [["x"], ["y"]], "scores": [1]}\n'
    )
    code, out, _ = run(
        "replay", str(bad), "--ruleset", "elo", "--db", str(tmp_path / "l.sqlite"), "--json"
    )
    error = json.loads(out)["error"]
    assert code == 2 and error["line"] == 2 and error["field"] == "scores"
    code, out, _ = run("leaderboard", "--tpo", "3", "--json")  # (usage on sys.stderr)
    assert code == 2 and json.loads(out)["error"]["type"] == "UsageError"
    code, out, _ = run("check", "glicko", "--json")
    error = json.loads(out)["error"]
    assert error["value"] == "glicko" and "did you mean 'glicko2' or 'glicko1'" in error["message"]


def test_predict_needs_known_players_unless_new_ok_and_takes_home(tmp_path: Path) -> None:
    db = str(tmp_path / "l.sqlite")
    games = tmp_path / "g.jsonl"
    games.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"g{i}",
                    "played_at": f"2024-01-{i + 1:02d}",
                    "teams": [["alice"], ["bob"]],
                    "scores": [1, 0],
                }
            )
            + "\n"
            for i in range(3)
        )
    )
    assert run("replay", str(games), "--ruleset", "elo-538", "--db", db)[0] == 0
    code, _, err = run("predict", "--db", db, "alice", "bobb")
    assert code == 2 and "unknown player 'bobb' (did you mean 'bob'?)" in err
    assert "--new-ok" in err
    code, out, _ = run("predict", "--db", db, "alice", "newcomer", "--new-ok", "--json")
    assert code == 0 and json.loads(out)["probabilities"][0] > 0.5
    plain = json.loads(run("predict", "--db", db, "alice", "bob", "--json")[1])["probabilities"]
    home = json.loads(run("predict", "--db", db, "alice", "bob", "--home", "1", "--json")[1])
    assert home["probabilities"][1] > plain[1]  # elo-538's home advantage
    code, _, err = run("player", "alise", "--db", db)
    assert code == 2 and "did you mean 'alice'" in err


def test_predict_meta_forecasts_the_match_a_ruleset_reads(tmp_path: Path) -> None:
    """``--meta`` hands the forecast a match with that meta: ``tennis`` forecasts with the
    surface's rating as the match's report would; a bad ``--meta`` names the option."""
    import rankcraft

    db = str(tmp_path / "t.sqlite")
    games = tmp_path / "g.jsonl"
    rows = [
        {
            "id": f"g{i}",
            "played_at": f"2024-01-{i + 1:02d}",
            "teams": [["nadal"], ["isner"]] if i % 2 else [["isner"], ["nadal"]],
            "scores": [1, 0],
            "meta": {"surface": "Clay" if i % 2 else "Grass"},
        }
        for i in range(6)
    ]
    games.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run("replay", str(games), "--ruleset", "tennis", "--db", db)[0] == 0
    got = {}
    for surface in ("Clay", "Grass"):
        code, out, _ = run(
            "predict", "--db", db, "nadal", "isner", "--meta", json.dumps({"surface": surface}),
            "--json",
        )  # fmt: skip
        assert code == 0
        got[surface] = json.loads(out)["probabilities"][0]
    with rankcraft.League.open(db) as league:
        for surface in ("Clay", "Grass"):
            match = {**rows[0], "id": "x", "played_at": "2024-01-06", "meta": {"surface": surface}}
            match["teams"] = [["nadal"], ["isner"]]
            want = league.forecast([["nadal"], ["isner"]], match=rankcraft.parse_match(match))
            assert got[surface] == pytest.approx(want.expected_score[0], abs=1e-12)
    assert got["Clay"] > got["Grass"]
    code, out, _ = run("player", "nadal", "--db", db)  # (one rating per surface, all shown)
    contexts = next(part for part in out.split(", ") if part.startswith("contexts "))
    assert code == 0 and len(contexts.split("; ")) == 4 and "latest" not in contexts
    for bad, message in (("[1]", "must be a JSON object"), ("{", "'--meta' is not JSON")):
        code, _, err = run("predict", "--db", db, "nadal", "isner", "--meta", bad)
        assert code == 2 and message in err
    code, _, err = run("predict", "--db", db, "nadal", "isner", "--meta", "{}", "--season", "s2")
    assert code == 2 and "'--season' with '--meta'" in err
    code, _, err = run("predict", "--db", db, "nadal", "isner", "--meta", "{}", "--at", "soon")
    assert code == 2 and "'--at'" in err


def test_player_marks_season_resets_and_counts_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "s.sqlite")
    games = tmp_path / "g.jsonl"
    games.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"g{i}",
                    "played_at": f"2024-01-{1 + 4 * i:02d}",
                    "teams": [["ann"], ["bo"]],
                    "scores": [1, 0],
                }
            )
            + "\n"
            for i in range(5)
        )
        + json.dumps(
            {"id": "one", "played_at": "2024-01-30", "teams": [["cy"], ["bo"]], "scores": [1, 0]}
        )
        + "\n"
    )
    assert run("replay", str(games), "--ruleset", "skyweaver", "--db", db)[0] == 0
    _, out, _ = run("player", "ann", "--db", db)
    assert "(* after a season reset)" in out
    marked = [line for line in out.splitlines() if line.startswith("* ")]
    assert len(marked) >= 2  # weekly soft resets between games four days apart
    _, out, _ = run("player", "cy", "--db", db)
    assert out.startswith("cy: 1 match,") and "last 1 match:" in out
    drawn = []
    monkeypatch.setattr(  # (drawing needs matplotlib: tests/test_cli.py draws)
        "rankcraft.plots.plot_player", lambda league, p, path: drawn.append(p) or Path(path)
    )
    plot = tmp_path / "ann.png"
    code, _, err = run("player", "ann", "--db", db, "--plot", str(plot))
    assert code == 0 and drawn == ["ann"] and f"wrote the plot of 'ann' to {plot.resolve()}" in err


def test_extends_without_a_name_is_named_after_its_file_or_refused(tmp_path: Path) -> None:
    path = tmp_path / "house-elo.toml"
    path.write_text('extends = "elo"\n[update.params]\nk_factor = 20.0\n')
    assert rankcraft.load_ruleset(path).name == "house-elo"
    with pytest.raises(RulesetError, match=r"needs its own 'name'.*@ ruleset.name"):
        rankcraft.ruleset.loads_ruleset('extends = "elo"\n')


def test_wager_team_params_are_refused_not_ignored() -> None:
    with pytest.raises(RulesetError, match="takes no params in slot 'team'"):
        rankcraft.ruleset.loads_ruleset(
            'name = "w"\nextends = "team-wager"\n[team.params]\ndivisor = 5.0\n'
        )
    shown = rankcraft.ruleset.dumps(rankcraft.load_ruleset("team-wager"))
    assert "[team.params]" not in shown and "[update.params]" in shown


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, so that progress bars draw on it."""

    def isatty(self) -> bool:
        return True


def _untimed(text: str) -> str:
    """``text`` with its elapsed times ("in 0.1 s") blanked."""
    return re.sub(r"in [0-9.]+ s\b", "in _ s", text)


def test_replay_and_evaluate_draw_progress_bars_on_a_terminal_only(tmp_path: Path) -> None:
    assert main(["sample", str(tmp_path)], out=io.StringIO(), err=io.StringIO()) == 0
    matches = str(tmp_path / "matches.jsonl.gz")
    for argv, what in (
        (["replay", matches, "--ruleset", "elo", "--db", str(tmp_path / "a.sqlite")], "replaying"),
        (
            [
                "evaluate",
                matches,
                "--ruleset",
                "elo",
                "--ruleset",
                "glicko1",
                "--test-from",
                "2024-02-01",
                "--jobs",
                "1",  # (one process: a bar per ruleset; tests/test_parallel.py has the rest)
            ],
            "evaluating glicko1",
        ),
    ):
        out, err = io.StringIO(), _Terminal()
        assert main(argv, out=out, err=err) == 0
        assert what in err.getvalue() and "/120" in err.getvalue()  # the file has 120 lines
        plain_out, plain_err = io.StringIO(), io.StringIO()
        if argv[0] == "replay":
            argv = [*argv[:-1], str(tmp_path / "b.sqlite")]
        assert main(argv, out=plain_out, err=plain_err) == 0
        if argv[0] == "replay":  # piped: no bar; the writer's count comes each 1,000
            # matches, so a small file gets its last line only (issue 39: the lines
            # scale with the work)
            assert plain_err.getvalue().startswith(f"{what}: 100% (120 of 120) ")
            assert plain_err.getvalue().count("\n") == 1
        else:  # piped: a plain line per 10% instead of the bar (issue 33), and the same answer
            lines = plain_err.getvalue().splitlines()
            assert [line.split(":")[1].split()[0] for line in lines if what in line] == [
                f"{10 * k}%" for k in range(1, 11)
            ]
            assert f"{what}: 100% (120 of 120)" in plain_err.getvalue()
            assert "/120" not in plain_err.getvalue()
        # (the same answer but the time it took, which a loaded machine varies)
        assert _untimed(plain_out.getvalue()) == _untimed(
            out.getvalue().replace("a.sqlite", "b.sqlite")
        )


@pytest.mark.parametrize("threshold", [20_000, 2])
def test_an_unknown_player_is_answered_without_reading_every_player(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    """Past ``SUGGEST_FROM_ALL`` players the ids to suggest are those a search finds for
    parts of the id, never every player's record; below, every id."""
    db = str(tmp_path / "l.sqlite")
    with rankcraft.League.open(db, "elo") as league:
        for i, (a, b) in enumerate([("alice", "bob"), ("carol", "dave"), ("erin", "bobby")]):
            league.record(
                {
                    "id": f"g{i}",
                    "played_at": f"2024-01-0{i + 1}",
                    "teams": [[a], [b]],
                    "scores": [1, 0],
                }
            )
    monkeypatch.setattr(rankcraft.suggest, "SUGGEST_FROM_ALL", threshold)
    if threshold < 6:
        monkeypatch.setattr(
            rankcraft.store.sql.SQLStore, "load_players", lambda self: pytest.fail("read all")
        )
    for command in (("player", "bobb"), ("predict", "alice", "bobb")):
        code, _, err = run(command[0], "--db", db, *command[1:])
        assert code == 2 and "unknown player 'bobb' (did you mean 'bobby' or 'bob'?)" in err
    code, _, err = run("player", "--db", db, "xcarol")
    assert code == 2 and "(did you mean 'carol'?)" in err


def test_an_unknown_id_too_long_to_search_is_still_an_unknown_player(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "l.sqlite")
    long = "x" * 1500
    with rankcraft.League.open(db, "elo") as league:
        league.record(
            {"id": "g1", "played_at": "2024-01-01", "teams": [[long], ["b"]], "scores": [1, 0]}
        )
    monkeypatch.setattr(rankcraft.suggest, "SUGGEST_FROM_ALL", 1)
    code, _, err = run("player", "--db", db, "x" * 1499 + "y")
    assert code == 2 and "unknown player 'xxx" in err and "(did you mean 'xxx" in err
