"""Issue 39, "nothing surprises a user" (items 1, 9-13), and issue 43 item 10: a ruleset
that checks clean runs (every name it gives checked at load, with "did you mean", its
scheduled events run once by `check`), names typed wrong get a suggestion, and the
command line's hints, progress and `tune` report say what is true."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import rankcraft
from rankcraft.errors import RulesetError
from rankcraft.ruleset import loads_ruleset

from .test_cli_talks_back import error_of, run

# -- item 1: everything a ruleset names is checked when it is loaded ----------------------

SKYWEAVER_BODY = """
[update]
plugin = "glicko1"

[rank]
plugin = "skyweaver-rp"

[reset]
plugin = "skyweaver-rp"
"""
SFOT = 'name = "sfot"\nextends = "skyweaver"\n\n[[resets]]\nkind = "sfot"\nevery_days = 7\n'


def test_a_reset_kind_the_plugin_does_not_run_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(RulesetError) as caught:
        loads_ruleset(SFOT)
    message = str(caught.value)
    assert "'kind' must be an event the reset plugin 'skyweaver-rp' runs ('soft', 'hard')" in (
        message
    )
    assert message.endswith("'sfot' (did you mean 'soft'?) @ ruleset.resets[0].kind")
    path = tmp_path / "sfot.toml"
    path.write_text(SFOT)
    error = error_of("check", str(path))
    assert (error["field"], error["value"], error["line"]) == ("resets[0].kind", "sfot", 5)
    # a league is never tied to it: replay refuses it before creating the database
    matches = tmp_path / "m.jsonl"
    matches.write_text(
        json.dumps(
            {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
        )
        + "\n"
    )
    db = tmp_path / "l.sqlite"
    code, _, err = run("replay", str(matches), "--ruleset", str(path), "--db", str(db))
    assert code == 2 and "did you mean 'soft'" in err and not db.exists()


def test_a_league_stored_before_the_check_still_opens_to_be_read() -> None:
    from rankcraft.ruleset import loads_stored_ruleset

    ruleset = loads_stored_ruleset(SFOT.replace('extends = "skyweaver"\n', "") + SKYWEAVER_BODY)
    assert [r.kind for r in ruleset.resets] == ["sfot"]


def test_a_reset_by_hand_of_a_kind_the_plugin_does_not_run_names_the_kind_meant() -> None:
    league = rankcraft.League("skyweaver")
    league.record({"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]})
    before = league.export()
    with pytest.raises(rankcraft.InputError) as caught:
        league.reset("sfot")
    assert str(caught.value) == (
        "'kind' must be an event the reset plugin 'skyweaver-rp' runs ('soft', 'hard'): "
        "'sfot' (did you mean 'soft'?)"
    )
    assert caught.value.field == "kind" and league.export() == before


def test_regress_runs_the_kinds_its_params_name() -> None:
    text = 'name = "r"\nextends = "elo-538"\n[reset.params]\nkinds = ["summer"]\n'
    with pytest.raises(RulesetError, match=r"\('summer'\): 'season' @ ruleset.resets\[0\].kind"):
        loads_ruleset(text)
    assert rankcraft.Plugins().reset_kinds(
        "regress", loads_ruleset('name = "r"\nextends = "elo-538"\n').reset.params
    ) == ("season",)


LADDER_NO_SOFT = """\
name = "lad"
extends = "ladder"

[rank.params]
soft_drop = 0
soft_map = []

[[resets]]
kind = "soft"
every_days = 7
"""


def test_check_runs_each_scheduled_event_once_on_a_scratch_league(tmp_path: Path) -> None:
    code, out, err = run("check", "skyweaver")
    assert code == 0, err
    assert out.endswith("; each scheduled event ran once on a scratch league: soft, hard\n")
    assert json.loads(run("check", "skyweaver", "--json")[1])["events_ran"] == ["soft", "hard"]
    # a soft reset the ladder cannot run (no soft_drop, no soft_map) loads, but never runs
    path = tmp_path / "lad.toml"
    path.write_text(LADDER_NO_SOFT)
    loads_ruleset(LADDER_NO_SOFT)
    error = error_of("check", str(path))
    assert error["message"] == (
        f"{path}: the scheduled event 'soft' fails when run on a scratch league: ladder: a "
        "'soft' reset needs 'soft_drop' or 'soft_map' in [rank.params] @ ruleset.resets[0] "
        "(line 8)"
    )
    assert (error["field"], error["line"]) == ("resets[0]", 8)


# -- item 9: did-you-mean wherever a name is typed ----------------------------------------

SCORE_KEY = {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "score": [1, 0]}


def test_a_misspelt_match_key_is_named_with_the_key_meant(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from rankcraft.serve import create_app
    from rankcraft.tokens import create_token

    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(SCORE_KEY) + "\n")
    error = error_of("replay", str(path), "--ruleset", "elo", "--db", str(tmp_path / "l.db"))
    assert error["message"].startswith(
        "line 1, match 'm': unknown key(s) 'score' (did you mean 'scores'?) (allowed: "
    )
    assert error["line"] == 1
    league = rankcraft.League("elo")
    _, token = create_token(league.store, scope="record")
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(league), headers=headers) as client:
        answer = client.post("/matches", json=SCORE_KEY)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"].startswith(
        "match 'm': unknown key(s) 'score' (did you mean 'scores'?) (allowed: "
    )


def test_a_misspelt_plugin_and_reset_table_are_named_with_the_name_meant(
    tmp_path: Path,
) -> None:
    path = tmp_path / "g.toml"
    path.write_text('name = "g"\n\n[update]\nplugin = "glicko"\n')
    error = error_of("check", str(path))
    assert "unknown plugin 'glicko' (did you mean 'glicko2' or 'glicko1'?)" in error["message"]
    assert (error["field"], error["value"], error["line"]) == ("update.plugin", "glicko", 4)
    path.write_text('name = "r"\nextends = "skyweaver"\n\n[[reset]]\nkind = "soft"\n')
    error = error_of("check", str(path))
    assert "[reset] must be a table (did you mean [[resets]]?" in error["message"]
    assert error["line"] == 4


def test_check_errors_carry_the_toml_line(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text('name = "k"\nextends = "elo"\n\n[update.params]\nk_factr = 3.0\n')
    code, _, err = run("check", str(path))
    assert code == 2
    assert err.rstrip().endswith(
        "unknown key(s) 'k_factr' (did you mean 'k_factor'?) @ ruleset.update.params (line 5)"
    )
    assert error_of("check", str(path))["line"] == 5


def test_an_argument_a_command_does_not_take_prints_that_commands_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["evaluate", "x.jsonl", "--ruleset", "elo", "--test-from", "2020-01-01"]
    assert run(*argv, "--score", "rps")[0] == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: rankcraft evaluate [-h]")
    assert err.endswith("rankcraft: error: unrecognized arguments: --score rps\n")
    assert run("--version-x")[0] == 2  # (no command given: the top level's usage)
    assert capsys.readouterr().err.startswith("usage: rankcraft [-h]")


# -- issue 43, item 10: a wrong-shaped nested table names its shape -----------------------


@pytest.mark.parametrize(
    ("base", "table", "message", "line"),
    [
        (
            "elo",
            "[update.params]\nk_by_games = [[0, 10.0]]",
            "expected a table such as { games_below = <whole number>, k = <number> }, got "
            "[0, 10.0] @ ruleset.update.params.k_by_games[0]",
            4,
        ),
        (
            "elo",
            "[update.params]\nk_by_games = { games_below = 30, k = 40.0 }",
            "expected an array of tables such as [{ games_below = <whole number>, k = "
            "<number> }], got {'games_below': 30, 'k': 40.0} @ ruleset.update.params.k_by_games",
            4,
        ),
        (
            "elo",
            "[update.params]\nmargin_form = [1, 2]",
            "expected a table such as { offset = 3.0, power = 0.8, base = 7.5, lead = 0.006 }, "
            "got [1, 2] @ ruleset.update.params.margin_form",
            4,
        ),
        (
            "skyweaver",
            "period = [1]",
            'expected a table such as { mode = "match", length_days = 1.0, granularity_days = '
            '0.0, origin = "2000-01-03" }, got [1] @ ruleset.period',
            3,
        ),
        (
            "skyweaver",
            'display = "wide"',
            "expected a table such as { conservative = 0.0 }, got 'wide' @ ruleset.display",
            3,
        ),
        (
            "skyweaver",
            'resets = { kind = "soft", every_days = 7 }',
            "expected an array of tables such as [{ kind = \"...\" }], got {'kind': 'soft', "
            "'every_days': 7} @ ruleset.resets",
            3,
        ),
    ],
    ids=["k_by_games-pairs", "k_by_games-table", "margin_form", "period", "display", "resets"],
)
def test_a_wrong_shaped_table_names_its_shape(
    tmp_path: Path, base: str, table: str, message: str, line: int
) -> None:
    path = tmp_path / "shape.toml"
    path.write_text(f'name = "shape"\nextends = "{base}"\n{table}\n')
    error = error_of("check", str(path))
    assert error["message"] == f"{path}: {message} (line {line})"
    assert "unknown error" not in error["message"] and "keys" not in error["message"]


# -- item 10: tune when nothing beats the start ---------------------------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sample")
    assert run("sample", str(folder))[0] == 0
    return folder


def test_tune_that_keeps_the_start_says_so_and_what_may_help(sample: Path) -> None:
    out_toml = sample / "t.toml"
    argv = ["tune", str(sample / "matches.jsonl.gz"), "--ruleset", "elo", "--test-from"]
    argv += ["2024-02-01", "--method", "random", "--jobs", "1", "--out", str(out_toml)]
    code, out, err = run(*argv, "--param", "update.params.k_factor=900:1000", "--trials", "2")
    assert code == 0, err
    assert out.startswith("no trial beat 'elo' by log-loss on matches before 2024-02-01")
    assert ": the start is kept:\n  update.params.k_factor = 32\n" in out
    assert "tuned" not in out.replace("'elo-tuned'", "")
    assert "what may help: more trials (--trials, 2 now), other ranges or other parameters " in out
    assert out.endswith(f"the start written to {out_toml} (as 'elo-tuned')\n")
    code, out, err = run(*argv, "--param", "update.params.k_factor=10:40", "--trials", "2")
    assert code == 0, err
    assert out.startswith("tuned 'elo' by log-loss") and "what may help" not in out


# -- item 11: install hints that work, and --plot checked first -----------------------------


class _Dist:
    def __init__(self, direct_url: str | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return self.direct_url if name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("direct_url", "hint"),
    [
        (None, "pip install 'rankcraft[serve]'"),  # from an index
        (
            '{"url": "file:///src/rank%20craft", "dir_info": {"editable": true}}',
            "pip install -e '/src/rank craft[serve]' (from the clone)",
        ),
        (
            '{"url": "file:///src/rankcraft", "dir_info": {}}',
            "pip install '/src/rankcraft[serve]' (from the clone)",
        ),
        (
            '{"url": "https://example.org/rankcraft-0.1.0.tar.gz", "archive_info": {}}',
            "pip install 'rankcraft[serve]'",
        ),
    ],
    ids=["index", "editable-clone", "clone", "archive"],
)
def test_install_hints_name_where_rankcraft_came_from(
    monkeypatch: pytest.MonkeyPatch, direct_url: str | None, hint: str
) -> None:
    from rankcraft import extras

    stale = _Dist(None)  # (a stale egg-info found first has no direct_url.json)
    monkeypatch.setattr(
        extras.metadata, "distributions", lambda name: iter([stale, _Dist(direct_url)])
    )
    assert extras.install_hint("serve") == hint
    error = extras.missing("the HTTP service needs", "Starlette and uvicorn", "serve")
    assert str(error) == f"the HTTP service needs Starlette and uvicorn: {hint}"


def test_evaluate_plot_without_matplotlib_fails_before_the_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path = tmp_path / "m.jsonl"
    good = {"id": "m1", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    path.write_text(json.dumps(good) + "\n{not json\n")  # (a replay would stop at line 2)
    argv = ["evaluate", str(path), "--ruleset", "elo", "--test-from", "2024-01-01"]
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # (import matplotlib: ImportError)
    error = error_of(*argv, "--plot", str(tmp_path / "c.png"))
    assert error["message"].startswith("plots need matplotlib: pip install ")
    assert error["message"].endswith("[plots]'") or "[plots]' (from the clone)" in error["message"]
    assert error_of(*argv)["line"] == 2  # (without --plot: the replay's error)


# -- item 12: the football history, CSV in --help, --test-from, progress --------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("what", ["replaying", "evaluating elo, glicko1, openskill in 2 processes"])
def test_the_progress_bar_fits_80_columns_with_its_figures_whole(
    monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    import re
    import time

    from rankcraft.terminal import Bar

    monkeypatch.setenv("COLUMNS", "80")
    stream = _Terminal()
    with Bar(stream, what, 49_520) as bar:
        bar(400)
        time.sleep(0.4)  # (a few refreshes drawn)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue()).replace("\r", "\n")
    lines = [line for line in text.splitlines() if "ETA" in line]
    assert lines, stream.getvalue()
    for line in lines:
        assert len(line) <= 80, line
        assert re.search(r" \d+/49520 +\d+% .* \d:\d\d:\d\d ETA [-:\d]+$", line), line
    assert any(" 400/49520   1% " in line for line in lines)  # (not "400/…", "0:0…")


def test_piped_progress_scales_with_the_work(tmp_path: Path, sample: Path) -> None:
    path = tmp_path / "m.jsonl"
    players = [f"p{i}" for i in range(40)]
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"m{i}",
                    "played_at": f"2024-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
                    "teams": [[players[i % 40]], [players[(i * 7 + 1) % 40]]],
                    "scores": [i % 2, 1 - i % 2],
                }
            )
            + "\n"
            for i in range(2500)
            if i % 40 != (i * 7 + 1) % 40
        )
    )
    lines = path.read_text().count("\n")
    code, _, err = run("replay", str(path), "--ruleset", "elo", "--db", str(tmp_path / "l.db"))
    assert code == 0, err
    shares = [line.split(":")[1].split()[0] for line in err.splitlines()]
    assert shares[-1] == "100%" and len(shares) == 3, err  # (a count each 1,000 matches)
    assert err.splitlines()[-1].startswith(f"replaying: 100% ({lines:,} of {lines:,}) ")
    # tune: a line per trial up to 20 trials; with more, one per tenth of them
    argv = ["tune", str(sample / "matches.jsonl.gz"), "--ruleset", "elo", "--test-from"]
    argv += ["2024-02-01", "--method", "random", "--jobs", "1", "--out", str(tmp_path / "t.toml")]
    argv += ["--param", "update.params.k_factor=10:40"]
    code, _, err = run(*argv, "--trials", "8")  # (8, then a finer round of 4)
    assert code == 0 and [line.split()[1] for line in err.splitlines()] == [
        f"{k}/12:" for k in range(1, 13)
    ], err
    code, _, err = run(*argv, "--trials", "40")  # (40 and 20: 60 trials, 10 lines)
    assert code == 0 and [line.split()[1] for line in err.splitlines()] == [
        f"{6 * k}/60:" for k in range(1, 11)
    ], err


def test_sample_football_writes_the_demos_history(tmp_path: Path) -> None:
    import gzip

    from rankcraft.data import demo_matches_path

    code, out, err = run("sample", str(tmp_path), "--football")
    assert code == 0, err
    written = tmp_path / "intl_football_1872_2026.jsonl.gz"
    assert written.read_bytes() == demo_matches_path().read_bytes()
    with gzip.open(written, "rt") as f:
        assert sum(1 for _ in f) == 49_520
    assert "rankcraft evaluate intl_football_1872_2026.jsonl.gz --ruleset elo" in out
    code, _, err = run("sample", str(tmp_path / "plain"))
    assert code == 0 and not (tmp_path / "plain" / written.name).exists()


@pytest.mark.parametrize("command", ["replay", "evaluate", "tune"])
def test_help_says_csv_is_read(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(command, "--help")[0] == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "JSON Lines (.jsonl) or CSV with a header row (.csv), either gzipped (.gz)" in text


def test_a_test_part_before_the_first_match_warns_that_nothing_warms_up(sample: Path) -> None:
    argv = ["evaluate", str(sample / "matches.jsonl.gz"), "--ruleset", "elo", "--test-from"]
    code, _, err = run(*argv, "2000-01-01")
    assert code == 0, err
    assert (
        f"rankcraft: warning: no match of {sample / 'matches.jsonl.gz'} is before --test-from "
        "2000-01-01: nothing warms up" in err
    )
    code, _, err = run(*argv, "2024-02-01")
    assert code == 0 and "warms up" not in err


# -- item 13: the README's shell commands run as written -----------------------------------


def test_the_readmes_shell_commands_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import shlex

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", readme, re.S) if "sample" in b)
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in block.splitlines():
        words = shlex.split(line)
        if words[:1] == ["cd"]:
            monkeypatch.chdir(words[1])
        elif words[:1] == ["rankcraft"]:
            code, _, err = run(*words[1:])
            assert code == 0, (line, err)
            ran += 1
        else:
            assert line.startswith(". .venv/bin/activate"), line
    assert ran == 7


@pytest.mark.parametrize(
    ("table", "field", "value", "meant"),
    [
        ('[period]\nmode = "mach"', "period.mode", "mach", "'match'"),
        ('[quits]\nquitter = "los"', "quits.quitter", "los", "'loss'"),
        (
            '[team]\nplugin = "mean"\n[team.params]\ndeviation = "meen"',
            "team.params.deviation",
            "meen",
            "'mean'",
        ),
        ('[update.params]\ndraw = "davidsn"', "update.params.draw", "davidsn", "'davidson'"),
    ],
    ids=["period-mode", "quitter", "team-deviation", "elo-draw"],
)
def test_a_misspelt_choice_is_named_with_the_choice_meant(
    tmp_path: Path, table: str, field: str, value: str, meant: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'name = "c"\nextends = "elo"\n{table}\n')
    error = error_of("check", str(path))
    assert f"(got '{value}') (did you mean {meant}" in error["message"]
    assert (error["field"], error["value"]) == (field, value)
