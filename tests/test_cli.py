"""The command line: every command, and every bad input of the foundation issue.

Bad input must give a message naming the field and value, exit status 2, and leave the
database byte-for-byte unchanged (a new database is not even created).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main

from .conftest import file_digest


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def line(mid: str, a: str = "a", b: str = "b", day: int = 1, **extra: Any) -> str:
    data: dict[str, Any] = {
        "id": mid,
        "played_at": f"2024-01-{day:02d}",
        "teams": [[a], [b]],
        "scores": [1, 0],
    }
    data.update(extra)
    return json.dumps({k: v for k, v in data.items() if v is not None})


def write(path: Path, lines: list[str], gz: bool = False) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture
def league_db(tmp_path: Path) -> Path:
    db = tmp_path / "league.sqlite"
    src = write(tmp_path / "first.jsonl", [line("m1", day=5), line("m2", "b", "c", day=6)])
    assert run("replay", str(src), "--ruleset", "elo", "--db", str(db))[0] == 0
    return db


ELO = 'name = "elo"\n[update]\nplugin = "elo"\n'
BAD_RULESETS = [
    ("malformed-toml", 'name = "x"\n[update\nplugin = "elo"\n', r"malformed TOML: .*\(at line 2"),
    (
        "unknown-plugin",
        'name = "x"\n[update]\nplugin = "elo9"\n',
        r"unknown plugin 'elo9' \(did you mean 'elo'\?\) @ ruleset.update.plugin "
        r"\(installed: composite-opponent, elo, glicko1, glicko2, goals, goals_fit, individual, "
        r"inversus-rp, ladder, mean",
    ),
    (
        "unknown-key",
        ELO + "[update.params]\nk_factr = 3.0\n",
        r"unknown key\(s\) 'k_factr' \(did you mean 'k_factor'\?\) @ ruleset.update.params",
    ),
    (
        "missing-key",
        'name = "x"\n[update]\n[update.params]\nk_factor = 3.0\n',
        r"'plugin' must name a plugin: None @ ruleset.update",
    ),
    (
        "out-of-range",
        ELO + "[update.params]\nk_factor = -4.0\n",
        r"'k_factor' must be a finite number in \[1e-06, 10000.0\]: -4.0 @ ruleset.update.params",
    ),
    (
        "non-finite",
        ELO + "[update.params]\ninitial_rating = nan\n",
        r"'initial_rating' must be a finite number in \[.*\]: nan @ ruleset.update.params",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [(t, m) for _, t, m in BAD_RULESETS], ids=[i for i, _, _ in BAD_RULESETS]
)
def test_bad_rulesets(tmp_path: Path, league_db: Path, text: str, message: str) -> None:
    ruleset = tmp_path / "bad.toml"
    ruleset.write_text(text)
    src = write(tmp_path / "more.jsonl", [line("m9", day=9)])
    digest = file_digest(league_db)
    code, out, err = run("check", str(ruleset))
    assert code == 2 and out == ""
    assert err.startswith("rankcraft check: error: ") and re.search(message, err), err
    for db in (league_db, tmp_path / "fresh.sqlite"):
        code, out, err = run("replay", str(src), "--ruleset", str(ruleset), "--db", str(db))
        assert code == 2, err
        assert re.search(message, err), err
    assert file_digest(league_db) == digest
    assert not (tmp_path / "fresh.sqlite").exists()


BAD_MATCHES = [
    (
        "one-side",
        [line("x1", day=7, teams=[["a"]], scores=[1])],
        r"line 1, match 'x1': 'teams' must be a list of at least 2 sides",
    ),
    (
        "empty-side",
        [line("x1", day=7, teams=[["a"], []], scores=[1, 0])],
        r"line 1, match 'x1': 'teams\[1\]' must be a non-empty list of player ids: \[\]",
    ),
    (
        "player-twice",
        [line("x1", "a", "a", day=7)],
        r"line 1, match 'x1': player 'a' appears twice in 'teams'",
    ),
    (
        "scores-and-ranks",
        [line("x1", day=7, ranks=[1, 2])],
        r"line 1, match 'x1': give exactly one of 'scores' and 'ranks'",
    ),
    (
        "neither",
        [line("x1", day=7, scores=None)],
        r"line 1, match 'x1': give exactly one of 'scores' and 'ranks'",
    ),
    (
        "nan-score",
        [
            line("ok", "c", "d", day=7),
            '{"id": "x1", "played_at": "2024-01-07", "teams": [["a"], ["b"]], "scores": [NaN, 0]}',
        ],
        r"line 2: refused JSON: NaN is not a JSON number \(column 77\)",
    ),
    (
        "back-in-time",
        [line("ok", "c", "d", day=7), line("x1", "b", "e", day=2)],
        r"line 2, match 'x1': 'played_at' 2024-01-02T00:00:00Z is earlier than the last match of "
        r"player 'b' at 2024-01-06T00:00:00Z",
    ),
    (
        "repeated-id",
        [line("ok", "c", "d", day=7), line("m2", "e", "f", day=8)],
        r"line 2, match 'm2': match id 'm2' is already recorded",
    ),
    (
        "repeated-in-file",
        [line("x1", "c", "d", day=7), line("x1", "e", "f", day=8)],
        r"line 2, match 'x1': match id 'x1' is already recorded",
    ),
    (
        "not-json",
        [line("ok", "c", "d", day=7), line("ok2", "c", "d", day=7), "{not json"],
        r"line 3: not JSON: ",
    ),
]


@pytest.mark.parametrize(
    ("lines", "message"), [(ls, m) for _, ls, m in BAD_MATCHES], ids=[i for i, _, _ in BAD_MATCHES]
)
def test_bad_matches(tmp_path: Path, league_db: Path, lines: list[str], message: str) -> None:
    src = write(tmp_path / "bad.jsonl", lines)
    digest = file_digest(league_db)
    code, out, err = run("replay", str(src), "--db", str(league_db))
    assert code == 2, err
    assert re.search(message, err), err
    assert out == ""
    assert file_digest(league_db) == digest


@pytest.mark.parametrize("commit_every", [0, 3000])
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (line("m7", "x", "y", day=20), r"line 9001, match 'm7': match id 'm7' is already recorded"),
        (line("zz", "x", "x", day=20), r"line 9001, match 'zz': player 'x' appears twice"),
        ("[1, 2]", r"line 9001: a match must be a JSON object, got list"),
    ],
    ids=["repeat", "same-player", "not-an-object"],
)
def test_errors_deep_in_a_file_name_their_line(
    tmp_path: Path, bad: str, message: str, commit_every: int
) -> None:
    """The league reads ahead in chunks and may have rated thousands of matches past
    the last one checked by the reader: its errors still name the file's line."""
    lines = [line(f"m{i}", f"p{i % 40}", f"q{i % 9}", day=10) for i in range(12_000)]
    lines[9000] = bad
    src = write(tmp_path / "deep.jsonl", lines)
    args = ["replay", str(src), "--db", str(tmp_path / "d.sqlite"), "--ruleset", "elo"]
    code, out, err = run(*args, "--commit-every", str(commit_every))
    assert code == 2 and out == ""
    assert re.search(message, err), err
    db = tmp_path / "d.sqlite"
    if not commit_every:  # one transaction: nothing kept, not even the new file
        assert not db.exists()
        return
    # the three chunks before the bad line are committed and kept; the rest goes on
    assert "kept the 9,000 matches this command committed before the error" in err
    with rankcraft.League.open(db) as league:
        assert league.match_count == 9000
    lines[9000] = line("m9000", "x", "y", day=20)
    write(src, lines)
    code, out, err = run(*args, "--skip-seen", "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"] == 9000 and json.loads(out)["matches"] == 12_000


def test_truncated_gzip(tmp_path: Path, league_db: Path) -> None:
    full = gzip.compress(
        ("\n".join(line(f"t{i}", f"p{i}", f"q{i}", day=9) for i in range(2000)) + "\n").encode()
    )
    src = tmp_path / "cut.jsonl.gz"
    src.write_bytes(full[: len(full) * 2 // 3])
    digest = file_digest(league_db)
    code, _, err = run("replay", str(src), "--db", str(league_db))
    assert code == 2
    assert "truncated gzip file" in err
    assert file_digest(league_db) == digest


def test_skip_seen(tmp_path: Path, league_db: Path) -> None:
    src = write(
        tmp_path / "again.jsonl",
        [line("m1", day=5), line("m2", "b", "c", day=6), line("m3", "a", "c", day=7)],
    )
    code, out, err = run("replay", str(src), "--db", str(league_db), "--skip-seen", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert (result["recorded"], result["skipped"], result["matches"]) == (1, 2, 3)


def test_replay_leaderboard_player_export_import(tmp_path: Path, league_db: Path) -> None:
    code, out, _ = run("leaderboard", "--db", str(league_db), "--json")
    board = json.loads(out)
    assert [(r["place"], r["id"]) for r in board] == [(1, "a"), (2, "b"), (3, "c")]
    assert board[0]["skill"]["rating"] == 1516.0
    code, out, _ = run("leaderboard", "--db", str(league_db), "--top", "2")
    assert code == 0 and out.splitlines()[0].split() == [
        "#",
        "player",
        "rating",
        "matches",
        "last",
        "played",
    ]
    assert len(out.splitlines()) == 3
    code, out, _ = run("player", "b", "--db", str(league_db))
    assert code == 0
    assert "b: 2 matches" in out
    assert "m2: won vs c; expected 0.477; rating 1484.0 -> 1500.7 (+16.7); why: k 32" in out
    assert "m1: lost vs a; expected 0.500; rating 1500 -> 1484 (-16); why: k 32" in out
    code, out, _ = run("player", "b", "--db", str(league_db), "--json")
    data = json.loads(out)
    assert [h["match"]["id"] for h in data["history"]] == ["m2", "m1"]
    assert data["history"][0]["report"]["changes"][0]["factors"] == {"k": 32.0}
    code, _, err = run("player", "zed", "--db", str(league_db))
    assert code == 2 and "unknown player 'zed'" in err

    exported = tmp_path / "state.json"
    assert run("export", "--db", str(league_db), "--out", str(exported))[0] == 0
    copy = tmp_path / "copy.sqlite"
    code, out, err = run("import", str(exported), "--db", str(copy))
    assert code == 0, err
    assert "imported 3 players" in out
    assert run("export", "--db", str(copy))[1] == run("export", "--db", str(league_db))[1]


def test_predict(tmp_path: Path, league_db: Path) -> None:
    code, out, _ = run("predict", "a", "b", "--db", str(league_db), "--json")
    p = json.loads(out)["probabilities"]
    assert p[0] == pytest.approx(1 / (1 + 10 ** ((1500.7 - 1516.0) / 400)), abs=1e-3)
    code, out, _ = run(
        "predict", "x,y", "z", "--ruleset", "elo", "--db", str(tmp_path / "none.sqlite")
    )
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["expected", "score", "side"]
    assert [line.split() for line in lines[1:3]] == [["0.5000", "x,y"], ["0.5000", "z"]]
    assert "no draw model" in lines[3]
    assert not (tmp_path / "none.sqlite").exists()
    code, _, err = run("predict", "a", "a", "--db", str(league_db))
    assert code == 2 and "twice" in err


def test_serve_refuses_before_listening_and_creates_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "new.sqlite")
    code, _, err = run("serve", "--db", db)
    assert code == 2 and "is a new database: give a ruleset" in err
    code, _, err = run("serve", "--db", db, "--ruleset", "no-such-ruleset")
    assert code == 2 and "no-such-ruleset" in err
    code, _, err = run("serve", "--db", db, "--ruleset", "elo", "--workers", "0")
    assert code == 2 and "'--workers' must be at least 1: 0" in err
    assert not (tmp_path / "new.sqlite").exists()


def test_read_commands_do_not_create_databases(tmp_path: Path) -> None:
    for command in ("leaderboard", "export", "player"):
        argv = [
            command,
            *(["someone"] if command == "player" else []),
            "--db",
            str(tmp_path / "nope.sqlite"),
        ]
        code, _, err = run(*argv)
        assert code == 2 and "no database at" in err
    assert not (tmp_path / "nope.sqlite").exists()


def test_rulesets_plugins_check(tmp_path: Path) -> None:
    code, out, _ = run("rulesets", "--json")
    names = {r["name"]: r for r in json.loads(out)}
    assert names["elo"]["plugins"] == {"update": "elo", "team": "mean"}
    code, out, _ = run("plugins", "--json")
    plugins = {p["name"]: p for p in json.loads(out)}
    assert plugins["elo"]["distribution"] == "rankcraft"
    assert plugins["elo"]["slots"] == ["initial", "expectation", "update"]
    code, out, _ = run("plugins")
    assert code == 0 and "elo" in out and "rankcraft " + rankcraft.__version__ in out
    code, out, _ = run("check", "elo")
    assert code == 0 and out == "ok: ruleset 'elo' (update=elo, team=mean)\n"
    code, out, _ = run("check", "elo", "--show")
    assert rankcraft.loads_ruleset(out) == rankcraft.load_ruleset("elo")


def test_different_ruleset_on_existing_db(league_db: Path, tmp_path: Path) -> None:
    src = write(tmp_path / "more.jsonl", [line("m9", day=9)])
    digest = file_digest(league_db)
    code, _, err = run("replay", str(src), "--ruleset", "elo-fide", "--db", str(league_db))
    assert code == 2
    assert "created with ruleset 'elo'; it cannot be used with ruleset 'elo-fide'" in err
    assert file_digest(league_db) == digest


@pytest.mark.slow(seconds=15)
def test_demo_twice(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    code, out, err = run("demo", "--db", str(db), "--top", "5")
    assert code == 0, err
    rows = out.splitlines()
    assert "49,520 international football matches" in rows[0]
    assert rows[2].split()[:2] == ["#", "player"]
    assert len(rows) == 3 + 5
    code, again, _ = run("demo", "--db", str(db), "--top", "5", "--json")
    data = json.loads(again)
    assert (data["recorded"], data["skipped"]) == (0, 49520)
    assert [r["id"] for r in data["leaderboard"]] == [r.split()[1] for r in rows[3:]]


def test_console_script_exit_codes(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("rankcraft")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = ")
    result = subprocess.run(
        [str(exe), "check", str(bad)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2 and "malformed TOML" in result.stderr
    result = subprocess.run([str(exe), "frobnicate"], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    result = subprocess.run([str(exe), "check", "elo"], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("ok:")


def test_progress_shows_only_on_a_terminal() -> None:
    from rankcraft.terminal import Bar

    piped = io.StringIO()
    with Bar(piped, "replaying", 10_000) as bar:
        bar(5000)
    assert piped.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    with Bar(terminal, "replaying", 10_000) as bar:
        for count in range(1000, 11000, 1000):
            bar(count)
    text = terminal.getvalue()
    # rich's bar: what, done of total, percent, rate, elapsed and ETA; cleared at the end
    assert "replaying" in text and "10000/10000" in text and "100%" in text
    assert "/s" in text and "ETA" in text
    assert text.endswith("\x1b[2K")
