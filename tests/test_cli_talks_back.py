"""The command line talks back (issue 30, items 8-16): figures never cut, field and value
in --json errors, "did you mean" for ruleset keys, tune parameters and tiers, opponents in
a small league, `player` in words, `predict --at` in the past, a league's folder plugin."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from rankcraft.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str, out: io.StringIO | None = None) -> tuple[int, str, str]:
    out = out if out is not None else io.StringIO()
    err = io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def error_of(*argv: str) -> dict[str, Any]:
    code, out, err = run(*argv, "--json")
    assert code == 2, err
    error: dict[str, Any] = json.loads(out)["error"]
    assert error["message"] in err
    return error


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sample")
    assert run("sample", str(folder))[0] == 0
    return folder


@pytest.fixture(scope="module")
def sky(sample: Path) -> str:
    db = str(sample / "sky.sqlite")
    matches = str(sample / "matches.jsonl.gz")
    assert run("replay", matches, "--ruleset", "skyweaver", "--db", db)[0] == 0
    return db


def test_evaluate_never_cuts_a_figure_on_a_narrow_terminal(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    argv = ["evaluate", str(sample / "matches.jsonl.gz"), "--test-from", "2024-02-01"]
    for name in ("elo", "elo-538", "trueskill"):
        argv += ["--ruleset", name]
    code, drawn, _ = run(*argv, out=_Terminal())
    assert code == 0
    assert "…" not in drawn
    _, plain, _ = run(*argv, "--json")
    results = json.loads(plain)["results"]
    for name, result in results.items():  # every figure whole, in its row
        row = next(line for line in drawn.splitlines() if line.strip().startswith(name + " "))
        assert f"{result['log_loss']:.4f}" in row and f"{result['accuracy']:.4f}" in row
    assert max(len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in drawn.splitlines()) > 60


def test_ruleset_errors_name_the_field_and_value_and_suggest_keys(tmp_path: Path) -> None:
    cases = {
        'k_factor = "24"': ("update.params.k_factor", "24", None),
        "k_factor = -4.0": ("update.params.k_factor", "-4.0", None),
        "k_factr = 24.0": ("update.params.k_factr", None, "did you mean 'k_factor'?"),
    }
    for body, (field, value, hint) in cases.items():
        path = tmp_path / "r.toml"
        path.write_text(f'name = "x"\n[update]\nplugin = "elo"\n[update.params]\n{body}\n')
        error = error_of("check", str(path))
        assert (error["field"], error["value"]) == (field, value), error
        assert hint is None or hint in error["message"]
    path.write_text('name = "x"\n[updte]\nplugin = "elo"\n')
    error = error_of("check", str(path))
    assert error["field"] == "updte" and "did you mean 'update'?" in error["message"]
    path.write_text('name = "x"\n[update]\nplugin = "elo9"\n')
    assert error_of("check", str(path))["field"] == "update.plugin"


@pytest.mark.parametrize(
    ("param", "meant"),
    [
        ("update.kfactor", "update.k_factor"),
        ("k_factor", "update.k_factor"),
        ("kfactr", "update.k_factor"),
    ],
)
def test_tune_suggests_the_parameter_meant(sample: Path, param: str, meant: str) -> None:
    error = error_of(
        "tune",
        str(sample / "matches.jsonl.gz"),
        "--ruleset",
        "elo",
        "--test-from",
        "2024-02-01",
        "--param",
        f"{param}=10:40",
        "--out",
        str(sample / "never.toml"),
    )
    assert (error["field"], error["value"]) == ("--param", param)
    assert f"(did you mean '{meant}'" in error["message"]
    assert not (sample / "never.toml").exists()


def test_an_unknown_tier_is_refused_with_the_tiers_held(sky: str, sample: Path) -> None:
    error = error_of("leaderboard", "--db", sky, "--tier", "trainee")
    assert (error["field"], error["value"]) == ("tier", "trainee")
    assert "unknown tier 'trainee'" in error["message"]
    assert "did you mean 'Trainee I' or 'Trainee II'?" in error["message"]
    assert "tiers held, best first: Trainee II, Trainee I" in error["message"]
    code, out, _ = run("leaderboard", "--db", sky, "--tier", "Trainee II", "--json")
    assert code == 0 and {r["standing"] for r in json.loads(out)} == {"Trainee II"}
    code, out, _ = run("leaderboard", "--db", sky, "--tier", "Trainee II", "--offset", "50")
    assert code == 0  # a tier held, past its last player: an empty page, not an error
    elo = str(sample / "elo.sqlite")
    assert run("replay", str(sample / "matches.jsonl.gz"), "--ruleset", "elo", "--db", elo)[0] == 0
    error = error_of("leaderboard", "--db", elo, "--tier", "Gold")
    assert "the ruleset 'elo' gives no player a tier" in error["message"]


def _league_of(tmp_path: Path, players: int) -> str:
    """An elo league of ``players`` active players rated 1000, 1010, ... (p00 lowest)."""
    document = {
        "ruleset": "elo",
        "players": [
            {
                "id": f"p{i:02d}",
                "skill": {"rating": 1000.0 + 10 * i, "peak": 1000.0 + 10 * i},
                "matches": 1,
                "last_played": "2024-01-01T00:00:00Z",
            }
            for i in range(players)
        ],
    }
    path = tmp_path / f"state-{players}.json"
    path.write_text(json.dumps(document))
    db = str(tmp_path / f"league-{players}.sqlite")
    assert run("import", str(path), "--db", db)[0] == 0
    return db


def test_match_opponents_finds_players_in_a_small_league(tmp_path: Path) -> None:
    db = _league_of(tmp_path, 48)
    code, out, _ = run("match", "opponents", "p00", "--db", db, "--json")
    found = json.loads(out)
    assert code == 0 and found["active"] == 48
    assert found["width"] == pytest.approx(100 / 48) and found["found"] >= 1
    assert 0.0 <= found["low"] <= found["high"] <= 100.0
    _, text, _ = run("match", "opponents", "p01", "--db", db)
    first = text.splitlines()[0]
    assert re.fullmatch(r"\d+ of 48 active players within 2\.08 percentiles: \[.*\]", first)
    low, high = map(float, re.search(r"\[(.*), (.*)\]", first).groups())  # type: ignore[union-attr]
    assert low >= 0.0 and high <= 100.0 and "fewer than" not in first
    # a width given is the width used; the band never passes 0 or 100
    code, out, _ = run("match", "opponents", "p01", "--db", db, "--width", "2", "--json")
    given = json.loads(out)
    assert given["width"] == 2.0 and given["found"] == 0
    assert given["high"] <= 100.0 and given["low"] >= 0.0
    big = _league_of(tmp_path, 60)
    found = json.loads(run("match", "opponents", "p00", "--db", big, "--json")[1])
    assert found["width"] == 2.0  # 50 players or more: 2 percentiles hold a place already


def test_player_speaks_in_words_with_teammates(sky: str, sample: Path) -> None:
    code, out, _ = run("player", "alice", "--db", sky, "--last", "40")
    assert code == 0
    assert "(" not in out.splitlines()[2].replace("(* after", "")  # the rank line
    assert not re.search(r"\(\)|\('|,\)", out)  # no Python tuple text
    assert re.search(r"seasons Trainee I+ \d+; Trainee I+ \d+", out)
    record = json.loads(run("player", "alice", "--db", sky, "--json", "--last", "40")[1])
    teamed = [
        h["match"]
        for h in record["history"]
        if any(len(side) > 1 and "alice" in side for side in h["match"]["teams"])
    ]
    assert teamed
    for match in teamed:
        mine = next(side for side in match["teams"] if "alice" in side)
        other = next(side for side in match["teams"] if "alice" not in side)
        mates = ",".join(p for p in mine if p != "alice")
        assert f"{match['id']}: " in out
        row = next(line for line in out.splitlines() if f"{match['id']}: " in line)
        assert f" with {mates} vs {','.join(other)};" in row


def test_export_out_says_what_it_wrote(sky: str, sample: Path) -> None:
    target = sample / "state.json"
    code, out, _ = run("export", "--db", sky, "--out", str(target))
    assert code == 0 and out == f"wrote 8 players to {target}\n"
    assert len(json.loads(target.read_text())["players"]) == 8
    code, out, _ = run("export", "--db", sky, "--out", str(target), "--json")
    assert json.loads(out) == {"out": str(target), "players": 8}


def test_predict_at_before_the_last_match_is_refused(sky: str) -> None:
    error = error_of("predict", "--db", sky, "alice", "bob", "--at", "2024-01-15")
    assert (
        "'--at' is earlier than the league's last match, 2024-02-29T20:00:00Z" in (error["message"])
    )
    assert (error["field"], error["value"]) == ("--at", "2024-01-15")
    code, out, _ = run("predict", "--db", sky, "alice", "bob", "--at", "2024-06-01", "--json")
    assert code == 0 and len(json.loads(out)["probabilities"]) == 2


def test_a_league_of_a_folder_plugin_says_how_to_load_it(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RANKCRAFT_PLUGINS_DIR", raising=False)
    folder = str(ROOT / "docs" / "examples" / "plugins")
    ruleset = sample / "streaky.toml"
    ruleset.write_text('name = "streaky"\n[update]\nplugin = "streak"\n')
    db = str(sample / "streak.sqlite")
    matches = str(sample / "matches.jsonl.gz")
    argv = ("replay", matches, "--ruleset", str(ruleset), "--db", db)
    assert run("--plugins-dir", folder, *argv)[0] == 0
    code, _, err = run("leaderboard", "--db", db)
    assert code == 2 and "unknown plugin 'streak'" in err
    assert "--plugins-dir DIR leaderboard" in err and "$RANKCRAFT_PLUGINS_DIR" in err
    assert run("--plugins-dir", folder, "leaderboard", "--db", db)[0] == 0
    monkeypatch.setenv("RANKCRAFT_PLUGINS_DIR", folder)
    assert run("leaderboard", "--db", db)[0] == 0


def _csv_cell(value: Any) -> str:
    text = json.dumps(value)
    return '"' + text.replace('"', '""') + '"'


def test_a_csv_with_a_header_replays_like_the_same_json_lines(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    jsonl = gzip.decompress((sample / "matches.jsonl.gz").read_bytes()).decode()
    matches = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    rows = ["id,played_at,teams,scores,weight"]
    for i, m in enumerate(matches):
        weight = "" if i % 2 else "1"  # an empty cell leaves the key out
        rows.append(
            f"{m['id']},{m['played_at']},{_csv_cell(m['teams'])},{_csv_cell(m['scores'])},{weight}"
        )
        if i == 3:
            rows.append("")  # a blank line is passed over
    text = "\n".join(rows) + "\n"
    (tmp_path / "m.csv").write_text(text)
    (tmp_path / "m.csv.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "m.txt").write_text(text)  # a header of match keys: CSV whatever the name
    boards = []
    for name in ("m.csv", "m.csv.gz", "m.txt"):
        db = str(tmp_path / f"{name}.sqlite")
        code, out, err = run("replay", str(tmp_path / name), "--ruleset", "elo", "--db", db)
        assert code == 0 and out.startswith("recorded 120 matches"), err
        boards.append(run("leaderboard", "--db", db, "--json")[1])
    db = str(tmp_path / "jsonl.sqlite")
    assert run("replay", str(sample / "matches.jsonl.gz"), "--ruleset", "elo", "--db", db)[0] == 0
    assert boards == [run("leaderboard", "--db", db, "--json")[1]] * 3
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    db = str(tmp_path / "stdin.sqlite")
    assert run("replay", "-", "--ruleset", "elo", "--db", db)[0] == 0
    assert run("leaderboard", "--db", db, "--json")[1] == boards[0]
    code, out, _ = run(
        "evaluate", str(tmp_path / "m.csv"), "--ruleset", "elo", "--test-from", "2024-02-01"
    )
    assert code == 0 and "58" in out


@pytest.mark.parametrize(
    ("name", "text", "line", "field", "message"),
    [
        (
            "m.csv",
            "id,played_at,teams,score\n",
            1,
            "score",
            "unknown column 'score' (did you mean 'scores'?)",
        ),
        ("m.csv", "played_at,teams\n", 1, "id", "the CSV header has no 'id' column"),
        (
            "m.csv",
            'id,played_at,teams,scores\nm1,2024-01-01,alice bob,"[1, 0]"\n',
            2,
            "teams",
            "'teams' must be JSON text in a CSV cell",
        ),
        ("m.csv", "id,played_at\nm1,2024-01-01,extra\n", 2, None, "has 3 cells, the header 2"),
        (
            "m.csv",
            'id,played_at,teams,scores\nm1,2024-01-01,"[[""a""], [""b""]]","[1]"\n',
            2,
            "scores",
            "'scores' must be a list of 2 numbers",
        ),
        ("m.jsonl", '[{"id": "m1"}]\n', 1, None, "a JSON array, not JSON Lines"),
        ("m.jsonl", "[\n  {\n", 1, None, "a JSON array, not JSON Lines"),
        ("m.jsonl", "a,b\n1,2\n", 1, None, "not JSON"),
    ],
)
def test_input_in_neither_format_is_refused_with_a_hint(
    tmp_path: Path, name: str, text: str, line: int, field: str | None, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    db = tmp_path / "never.sqlite"
    error = error_of("replay", str(path), "--ruleset", "elo", "--db", str(db))
    assert error["line"] == line and message in error["message"], error
    assert field is None or error["field"] == field
    assert "docs/matches.md" in error["message"] or line > 1
    assert not db.exists()


def test_the_glicko2_ruleset_gives_glickmans_example(tmp_path: Path) -> None:
    """Glickman, "Example of the Glicko-2 system": 1500/200 (σ 0.06) beats 1400/30, loses
    to 1550/100 and 1700/300 in one rating period: r' 1464.06, RD' 151.52, σ' 0.05999
    (printed; full precision 1464.0507, 151.5165, 0.0599960, as docs/glicko2.md says)."""
    scale = 173.7177927613007  # 400 / ln 10
    out = run("rulesets", "--json")[1]
    listed = {r["name"]: r for r in json.loads(out)}
    assert listed["glicko2"]["plugins"]["update"] == "glicko2"
    out = run("check", "glicko2", "--json")[1]
    params = json.loads(out)["ruleset"]["update"]["params"]
    assert (params["initial_mu"], params["initial_sigma"], params["tau"]) == (0.0, 0.06, 0.5)
    assert params["initial_phi"] * scale == pytest.approx(350.0, abs=1e-9)
    assert params["bounded"] is False

    def skill(rating: float, deviation: float) -> dict[str, float]:
        return {"mu": (rating - 1500) / scale, "phi": deviation / scale, "sigma": 0.06}

    players = [("p", 1500, 200), ("a", 1400, 30), ("b", 1550, 100), ("c", 1700, 300)]
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps({"players": [{"id": i, "skill": skill(r, d)} for i, r, d in players]})
    )
    db = str(tmp_path / "g2.sqlite")
    assert run("import", str(state), "--ruleset", "glicko2", "--db", db)[0] == 0
    games = tmp_path / "g.jsonl"
    games.write_text(
        "".join(
            json.dumps(
                {"id": o, "played_at": f"2024-01-0{d}", "teams": [["p"], [o]], "scores": [s, 1 - s]}
            )
            + "\n"
            for d, (o, s) in enumerate((("a", 1), ("b", 0), ("c", 0)), 1)
        )
    )
    assert run("replay", str(games), "--db", db)[0] == 0
    p = json.loads(run("player", "p", "--db", db, "--json")[1])["player"]["skill"]
    assert 1500 + scale * p["mu"] == pytest.approx(1464.0507, abs=5e-5)
    assert scale * p["phi"] == pytest.approx(151.5165, abs=5e-5)
    assert p["sigma"] == pytest.approx(0.059996, abs=5e-7)
    assert (round(1500 + scale * p["mu"], 2), round(scale * p["phi"], 2)) == (1464.05, 151.52)
