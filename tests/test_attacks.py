"""Hostile inputs that once broke a league (issue 15), each refused or handled cleanly."""

from __future__ import annotations

import contextlib
import errno
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main
from rankcraft.plugins._matchup import MAX_MARGIN_MULTIPLIER, margin_multiplier
from rankcraft.plugins.glicko2 import MU_LIMIT, PHI_RANGE, SIGMA_RANGE


def run(*argv: str) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def one(mid: str, a: str, b: str, scores: list[float], day: int = 1) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": (datetime(2024, 1, 1, 12, tzinfo=UTC) + timedelta(days=day)).isoformat(),
        "teams": [[a], [b]],
        "scores": scores,
    }


# -- 3. accepted values that poisoned the league ------------------------------------------


@pytest.mark.parametrize(
    ("table", "field", "value"),
    [
        ('extends = "elo"\n[update.params]\nk_factor = 1e308\n', "k_factor", "1e+308"),
        (
            'extends = "glicko1"\n[update.params]\ninitial_deviation = 1e-320\n'
            "min_deviation = 0.0\n",
            "initial_deviation",
            "1e-320",
        ),
        ('extends = "elo"\n[update.params]\nhome_advantage = 1e308\n', "home_advantage", "1e+308"),
        ('extends = "team-wager"\n[update.params]\ndivisor = 1e-300\n', "divisor", "1e-300"),
        ('extends = "team-wager"\n[update.params]\nfloor = 1e-300\n', "floor", "1e-300"),
        ('extends = "elo"\n[period]\nlength_days = 1e-320\n', "length_days", "1e-320"),
        ('extends = "inversus"\n[rank.params]\nmax_points = 1e308\n', "max_points", "1e+308"),
        ('extends = "skyweaver"\n[rank.params]\nrp_span = 1e308\n', "rp_span", "1e+308"),
    ],
)
def test_params_that_overflow_are_refused_by_check(
    tmp_path: Path, table: str, field: str, value: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\n' + table)
    code, out, err = run("check", str(path))
    assert code == 2 and out == ""
    assert f"'{field}' must be a finite number in [" in err and f"]: {value}" in err


def test_k_factor_1e308_crashed_the_replay_and_is_now_refused() -> None:
    # before: `check` said ok, then the first match raised OverflowError
    with pytest.raises(rankcraft.RulesetError, match=r"'k_factor' .*: 1e\+308"):
        rankcraft.loads_ruleset('extends = "elo"\nname = "x"\n[update.params]\nk_factor = 1e308\n')
    at_limit = rankcraft.League(
        rankcraft.loads_ruleset('extends = "elo"\nname = "x"\n[update.params]\nk_factor = 1e4\n')
    )
    at_limit.record_many([one(f"m{i}", "a", "b", [1, 0], i + 1) for i in range(300)])
    ratings = {p.id: p.skill.rating for p in at_limit.players()}
    assert all(math.isfinite(r) and abs(r) <= 1e6 for r in ratings.values())
    assert ratings["a"] > ratings["b"]


def test_import_of_a_rating_1e308_is_refused_and_changes_nothing() -> None:
    league = rankcraft.League("elo")
    league.record(one("m0", "a", "b", [1, 0]))
    before = league.export()
    with pytest.raises(rankcraft.StateError, match=r"'rating' must be .*: 1e\+308 @ players\[0\]"):
        league.import_state({"players": [{"id": "a", "skill": {"rating": 1e308, "peak": 1e308}}]})
    assert league.export() == before
    league.record(one("m1", "a", "b", [0, 1], 2))  # a's matches still rate
    assert 1400 < league.player("a").skill.rating < 1600


@pytest.mark.parametrize(
    ("ruleset", "skill", "field"),
    [
        ("glicko1", {"rating": 1500.0, "deviation": 1e-320}, "deviation"),
        ("glicko1", {"rating": 1500.0, "deviation": 0.0}, "deviation"),
        ("glicko1", {"rating": 1500.0, "deviation": 1e6}, "deviation"),
        ("inversus", {"mu": 0.0, "phi": 2.0, "sigma": 1e300}, "sigma"),
        ("inversus", {"mu": 1e300, "phi": 2.0, "sigma": 0.06}, "mu"),
        ("team-wager", {"rank": 1e300}, "rank"),
        ("team-wager", {"rank": 0.0}, "rank"),
    ],
)
def test_imported_states_out_of_their_physical_range_are_refused(
    ruleset: str, skill: dict[str, float], field: str
) -> None:
    league = rankcraft.League(ruleset)
    with pytest.raises(rankcraft.StateError, match=rf"'{field}' must be a finite number in \["):
        league.import_state({"players": [{"id": "a", "skill": skill}]})
    assert len(league.players()) == 0


def test_an_imported_rank_out_of_range_is_refused() -> None:
    league = rankcraft.League("skyweaver")
    with pytest.raises(rankcraft.StateError, match=r"'points' must be .*: 10000000"):
        league.import_state(
            {
                "players": [
                    {
                        "id": "a",
                        "skill": {"rating": 1500.0, "deviation": 100.0},
                        "rank": {"points": 10_000_000},
                    }
                ]
            }
        )


def _538(players: dict[str, float]) -> rankcraft.League:
    league = rankcraft.League(
        rankcraft.loads_ruleset('extends = "elo-538"\nname = "x"\nresets = []\n')
    )
    league.import_state(
        {"players": [{"id": p, "skill": {"rating": r, "peak": r}} for p, r in players.items()]}
    )
    return league


def test_a_huge_margin_is_bounded() -> None:
    # scores [1e300, 0] moved a rating 6,907 points (K 20 x 0.5 x ln 1e300); the margin now
    # counts up to 1,000 points: 20 x 0.5 x ln 1001 = 69.09
    league = _538({"a": 1505.0, "b": 1505.0})
    change = league.record(one("m", "a", "b", [1e300, 0])).change("a")
    assert change.factors["margin"] == pytest.approx(math.log(1001))
    assert change.skill_after.rating - 1505.0 == pytest.approx(10 * math.log(1001))
    assert change.skill_after.rating - 1505.0 < 70


def test_a_winner_2200_points_behind_gains() -> None:
    # the multiplier's denominator 0.001 * winner's lead + 2.2 was 0 or below from a 2,200
    # deficit on: a 100 beating a 2,400 by 10 lost 1,055 points (multiplier -52.8)
    league = _538({"a": 100.0, "b": 2400.0})
    change = league.record(one("m", "a", "b", [10, 0])).change("a")
    assert change.factors["margin"] == pytest.approx(math.log(11) * 2.0)  # lead capped at -1100
    assert change.skill_after.rating > 100.0
    assert change.skill_after.rating == pytest.approx(100.0 + 20 * math.log(11) * 2.0, rel=1e-6)


@given(st.floats(-1e308, 1e308), st.floats(-1e6, 1e6))
def test_margin_multiplier_is_positive_and_bounded(margin: float, lead: float) -> None:
    value = margin_multiplier(margin, lead)
    assert 0 < value <= MAX_MARGIN_MULTIPLIER


# -- the property: extreme-but-accepted params and scores ----------------------------------

LIMIT = 1e6
EXTREMES: dict[str, tuple[str, dict[str, list[Any]]]] = {
    "elo": (
        "update",
        {
            "initial_rating": [-LIMIT, LIMIT, 0.0],
            "k_factor": [1e-6, 1e4],
            "scale": [1.0, 1e6],
            "home_advantage": [-LIMIT, LIMIT, 0.0],
            "margin": ["none", "fivethirtyeight"],
        },
    ),
    "glicko1": (
        "update",
        {
            "initial_rating": [-LIMIT, LIMIT],
            "initial_deviation": [0.001, 1e4],
            "min_deviation": [0.0, 0.001],
            "max_deviation": [1e4],
            "c": [0.0, 1e4],
            "home_advantage": [-LIMIT, LIMIT, 0.0],
            "margin": ["none", "fivethirtyeight"],
        },
    ),
    "inversus": (
        "update",
        {
            "initial_mu": [-MU_LIMIT, MU_LIMIT],
            "initial_phi": list(PHI_RANGE),
            "initial_sigma": list(SIGMA_RANGE),
            "tau": [0.001, 100.0],
            "epsilon": [1e-15, 1.0],
            "bounded": [True, False],
            "home_advantage": [-MU_LIMIT, MU_LIMIT, 0.0],
            "margin": ["none", "fivethirtyeight"],
        },
    ),
    "inversus-rp": (
        "rank",
        {
            "max_points": [1e-6, 1e6],
            "confidence": [1e-6, 100.0],
            "min_change": [0.0, 1e6],
            "max_change": [1e-6, 1e6],
            "upset_bonus": [0.0, 1e6],
            "upset_gap": [1e-6, 1e4],
            "deviation_speed": [True, False],
            "tightest_deviation": [True, False],
        },
    ),
    "skyweaver": (
        "rank",
        {
            "initial_points": [0, 1_000_000],
            "b_min": [-1e4, 1e4],
            "b_max": [1e4],
            "a": [-1e4, 1e4],
            "rp_span": [1e-3, 1e6],
            "mmr_span": [1e-3, 1e6],
            "ladder_start": [-1e6, 1e6],
            "ladder_width": [1.0, 1e6],
        },
    ),
    "team-wager": (
        "update",
        {
            "initial_rank": [0.01, 1e6],
            "floor": [0.01],
            "divisor": [1.0, 1e6],
            "team_time": ["total", "mean"],
        },
    ),
}
BASES = {"inversus-rp": "inversus"}
SCORES = [0, 1, 2.5, 1e300, -1e300, 1e-300, 5e-324, -3]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_all_finite(v) for v in value)
    return True


@settings(max_examples=40)
@given(data=st.data())
@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_extreme_accepted_params_and_scores_stay_finite(name: str, data: st.DataObject) -> None:
    slot, fields = EXTREMES[name]
    chosen = {
        field: data.draw(st.sampled_from(values), label=field) for field, values in fields.items()
    }
    text = f'extends = "{BASES.get(name, name)}"\nname = "x"\nresets = []\n[{slot}.params]\n'
    text += "".join(f"{k} = {_toml(v)}\n" for k, v in chosen.items())
    try:
        ruleset = rankcraft.loads_ruleset(text)
    except rankcraft.RulesetError:
        assume(False)  # a combination the params refuse (e.g. b_min > b_max)
        raise
    league = rankcraft.League(ruleset)
    players = ["a", "b", "c", "d"]
    at = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(data.draw(st.integers(1, 12), label="matches")):
        at += timedelta(days=data.draw(st.sampled_from([0, 1, 30, 40_000]), label="gap"))
        size = data.draw(st.sampled_from([1, 2]), label="size")
        order = data.draw(st.permutations(players), label="players")
        teams = [order[:size], order[size : 2 * size]]
        match: dict[str, Any] = {
            "id": f"m{i}",
            "played_at": at.isoformat(),
            "teams": teams,
            "scores": [data.draw(st.sampled_from(SCORES), label="score") for _ in range(2)],
        }
        if data.draw(st.booleans(), label="home"):
            match["home"] = 0
        if data.draw(st.booleans(), label="seconds"):
            match["seconds_played"] = [
                [data.draw(st.sampled_from([0, 1, 10**9]), label="secs") for _ in side]
                for side in teams
            ]
        try:
            league.record(match)
        except rankcraft.RankcraftError:
            continue  # refused cleanly (rankcraft's own error): nothing to check
        prediction = league.predict([teams[0], teams[1]])
        assert _all_finite(list(prediction)), (text, match, prediction)
    document = league.export()
    assert _all_finite(document["players"]), (text, document)
    # what was exported imports again: every state is inside its class's range
    again = rankcraft.League(ruleset)
    assert again.import_state(document, max_future=None) == len(document["players"])


# -- 4. extends reads any file -------------------------------------------------------------


@pytest.mark.parametrize(
    "parent", ["/etc/passwd", "../x.toml", "/etc/hostname.toml", "sub/../../x.toml"]
)
def test_extends_outside_the_ruleset_folder_is_refused(tmp_path: Path, parent: str) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    (tmp_path / "x.toml").write_text('extends = "elo"\nname = "outside"\n')
    path = folder / "mine.toml"
    path.write_text(f'extends = "{parent}"\nname = "mine"\n')
    with pytest.raises(rankcraft.RulesetError) as caught:
        rankcraft.load_ruleset(path)
    message = str(caught.value)
    assert "'extends' must name a bundled ruleset or a .toml file in the ruleset's own folder" in (
        message
    )
    assert repr(parent) in message and "@ ruleset.extends" in message
    code, out, err = run("check", str(path))
    assert code == 2 and out == "" and "'extends'" in err and repr(parent) in err


def test_extends_inside_the_folder_and_bundled_names_still_work(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.toml").write_text(
        'extends = "elo"\nname = "base"\n[update.params]\nk_factor = 16.0\n'
    )
    (tmp_path / "mine.toml").write_text('extends = "sub/base.toml"\nname = "mine"\n')
    assert rankcraft.load_ruleset(tmp_path / "mine.toml").update.params.k_factor == 16.0


@pytest.mark.parametrize("parent", ["/etc/passwd", "x.toml", "./elo.toml"])
def test_a_ruleset_from_text_extends_bundled_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parent: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.toml").write_text('extends = "elo"\nname = "x"\n')
    (tmp_path / "elo.toml").write_text('extends = "elo"\nname = "x"\n')
    with pytest.raises(rankcraft.RulesetError, match=r"'extends' must name a bundled ruleset"):
        rankcraft.loads_ruleset(f'extends = "{parent}"\nname = "mine"\n')


def test_a_stored_ruleset_cannot_extend_a_file(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "league.sqlite"
    rankcraft.League.open(db, ruleset="elo").close()
    con = sqlite3.connect(db)
    rows = con.execute("SELECT key, value FROM meta").fetchall()
    key = next(k for k, v in rows if isinstance(v, str) and 'name = "elo"' in v)
    con.execute(
        "UPDATE meta SET value = ? WHERE key = ?",
        ('extends = "/etc/passwd"\nname = "elo"\n', key),
    )
    con.commit()
    con.close()
    with pytest.raises(
        rankcraft.RulesetError, match=r"'extends' must name a bundled .*/etc/passwd"
    ):
        rankcraft.League.open(db)
    code, _, err = run("leaderboard", "--db", str(db))
    assert code == 2 and "'/etc/passwd'" in err and "root:" not in err


# -- 5. CLI: --top and reset ---------------------------------------------------------------


def _league_file(tmp_path: Path, ruleset: str = "elo") -> Path:
    from .conftest import file_digest

    db = tmp_path / "league.sqlite"
    src = tmp_path / "m.jsonl"
    lines = [one(f"m{i}", f"p{i % 5}", f"p{(i + 1) % 5}", [1, 0], i) for i in range(10)]
    src.write_text("".join(json.dumps(m) + "\n" for m in lines))
    assert run("replay", str(src), "--ruleset", ruleset, "--db", str(db))[0] == 0
    assert file_digest(db) is not None
    return db


@pytest.mark.parametrize("top", ["-3", "0"])
def test_leaderboard_top_must_be_positive(tmp_path: Path, top: str) -> None:
    db = _league_file(tmp_path)
    code, out, err = run("leaderboard", "--top", top, "--db", str(db))
    assert (code, out) == (2, "")
    assert f"'--top' must be a whole number >= 1: {top}" in err
    code, out, _ = run("leaderboard", "--top", "3", "--db", str(db), "--json")
    assert code == 0 and len(json.loads(out)) == 3


def test_reset_refuses_a_kind_the_plugin_does_not_offer(tmp_path: Path) -> None:
    from .conftest import file_digest

    ruleset = tmp_path / "r.toml"
    ruleset.write_text('extends = "elo-538"\nname = "r"\nresets = []\n')
    db = _league_file(tmp_path, str(ruleset))
    before = file_digest(db)
    code, out, err = run("reset", "seson", "--db", str(db))  # a typo of "season"
    assert (code, out) == (2, "")
    assert (
        "'kind' must be an event the reset plugin 'regress' runs ('season'): 'seson' "
        "(did you mean 'season'?)" in err
    )
    assert file_digest(db) == before  # nobody was pulled to the mean
    code, out, _ = run("reset", "season", "--db", str(db))
    assert code == 0 and "players changed" in out


def test_reset_at_before_the_last_match_is_refused(tmp_path: Path) -> None:
    from .conftest import file_digest

    ruleset = tmp_path / "r.toml"
    ruleset.write_text('extends = "elo-538"\nname = "r"\nresets = []\n')
    db = _league_file(tmp_path, str(ruleset))
    before = file_digest(db)
    code, out, err = run("reset", "season", "--at", "2024-01-03", "--db", str(db))
    assert (code, out) == (2, "")
    assert "'--at' is earlier than the league's last match, 2024-01-10T12:00:00Z (" in err
    assert err.rstrip().endswith(": 2024-01-03")
    assert file_digest(db) == before
    assert run("reset", "season", "--at", "2024-02-01", "--db", str(db))[0] == 0


# -- 6. passwords in PostgreSQL URLs -------------------------------------------------------


def test_mask_url() -> None:
    from rankcraft.store import mask_url

    assert mask_url("postgresql://ann:s3cret@db.example:5432/league?schema=x") == (
        "postgresql://ann:***@db.example:5432/league?schema=x"
    )
    assert mask_url("postgres://ann:p%40ss:word@h/db") == "postgres://ann:***@h/db"
    assert mask_url("postgresql://h/db?password=s3cret&schema=x") == (
        "postgresql://h/db?password=***&schema=x"
    )
    assert mask_url("postgresql://ann@h/db?schema=x") == "postgresql://ann@h/db?schema=x"
    assert mask_url("league.sqlite") == "league.sqlite"
    assert mask_url(Path("dir/league.sqlite")) == "dir/league.sqlite"
    assert mask_url("postgresql://ann:s3cret@[::1/db") == "postgresql://***"  # unparseable


def _with_password(url: str) -> str:
    # the local server trusts 127.0.0.1: a password in the URL is accepted and ignored
    return url.replace("postgresql://postgres@", "postgresql://postgres:s3cret-pw@")


def test_replay_and_import_print_no_password(tmp_path: Path, pg_url: str) -> None:
    url = _with_password(pg_url)
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(one("m0", "a", "b", [1, 0])) + "\n")
    code, out, err = run("replay", str(src), "--ruleset", "elo", "--db", url)
    assert code == 0, err
    assert "s3cret-pw" not in out + err and "postgres:***@127.0.0.1" in out
    code, out, err = run(
        "replay", str(src), "--ruleset", "elo", "--db", url, "--json", "--skip-seen"
    )
    assert code == 0 and json.loads(out)["db"] == url.replace("s3cret-pw", "***")
    doc = tmp_path / "doc.json"
    assert run("export", "--db", url, "--out", str(doc))[0] == 0
    code, out, err = run("import", str(doc), "--db", url)
    assert code == 0 and "s3cret-pw" not in out + err and "postgres:***@" in out


def test_error_messages_print_no_password(tmp_path: Path, pg_url: str) -> None:
    url = _with_password(pg_url)
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(one("m0", "a", "b", [1, 0])) + "\n")
    # no --ruleset for a new schema: League.open's "is a new database" quotes the URL
    code, out, err = run("replay", str(src), "--db", url)
    assert code == 2 and "is a new database" in err
    assert "s3cret-pw" not in out + err and "postgres:***@" in err
    code, out, err = run("leaderboard", "--db", url)  # no league there
    assert code == 2 and "s3cret-pw" not in out + err and "postgres:***@" in err
    bad = url.replace("127.0.0.1", "127.0.0.1:1")  # nothing listens on port 1
    code, out, err = run("leaderboard", "--db", bad)
    assert code == 2 and "cannot connect" in err and "s3cret-pw" not in out + err


# -- 7. export --out on a full disk --------------------------------------------------------


class _FullDisk:
    """A file opened for writing that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, raw: Any, room: int) -> None:
        self._raw, self._room = raw, room

    def write(self, data: Any) -> int:
        size = len(data)
        if size > self._room:
            self._raw.write(data[: self._room])
            self._raw.flush()
            self._room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._room -= size
        return int(self._raw.write(data))

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._raw.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _disk_fills_after(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """Every file opened for writing from now on (by path or descriptor: ``Path.write_text``
    and ``os.fdopen`` go through ``io.open``, matplotlib through ``open``) holds ``room``
    bytes at most."""
    import builtins
    import io

    real_open = io.open

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        return _FullDisk(handle, room) if ("w" in mode or "a" in mode) else handle

    monkeypatch.setattr(io, "open", open_)
    monkeypatch.setattr(builtins, "open", open_)


def test_export_out_keeps_the_old_backup_when_the_disk_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _league_file(tmp_path)
    backup = tmp_path / "backup.json"
    assert run("export", "--db", str(db), "--out", str(backup))[0] == 0
    good = backup.read_bytes()
    assert json.loads(good)["players"]
    backup.chmod(0o640)
    assert run("replay", str(tmp_path / "m.jsonl"), "--db", str(db), "--skip-seen")[0] == 0
    _disk_fills_after(monkeypatch, 100)
    code, out, err = run("export", "--db", str(db), "--out", str(backup))
    monkeypatch.undo()
    assert code == 1 and out == ""
    assert f"cannot write '{backup}': No space left on device" in err
    assert backup.read_bytes() == good  # the old backup, byte for byte
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".backup.json")]
    # and a write that succeeds replaces it whole, keeping its permissions
    assert run("export", "--db", str(db), "--out", str(backup))[0] == 0
    assert json.loads(backup.read_bytes()) == json.loads(good)
    assert backup.stat().st_mode & 0o777 == 0o640


def test_player_plot_keeps_the_old_picture_when_the_disk_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _league_file(tmp_path)
    picture = tmp_path / "p0.png"
    assert run("player", "p0", "--db", str(db), "--plot", str(picture))[0] == 0
    good = picture.read_bytes()
    assert good.startswith(b"\x89PNG")
    _disk_fills_after(monkeypatch, 1000)
    code, _, err = run("player", "p1", "--db", str(db), "--plot", str(picture))
    monkeypatch.undo()
    assert code == 1 and "No space left on device" in err
    assert picture.read_bytes() == good
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


# -- 8. what happened to the database ------------------------------------------------------
# The suite runs as root, for whom chmod does not block writes: a read-only file system is
# simulated with SQLite's own read-only open (a mode=ro URI), which SQLite enforces for
# root too; a lock is another connection's write transaction; a full disk is SQLite's
# max_page_count (SQLITE_FULL exactly as on a full disk).


def _connects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import sqlite3

    import rankcraft.store.sqlite as module

    seen: list[str] = []
    real = sqlite3.connect

    def connect(target: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(target))
        return real(target, *args, **kwargs)

    monkeypatch.setattr(module.sqlite3, "connect", connect)
    return seen


@pytest.mark.parametrize(
    "command", [["leaderboard"], ["player", "p0"], ["predict", "p0", "p1"], ["export"]]
)
def test_read_only_commands_open_sqlite_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from .conftest import file_digest

    db = _league_file(tmp_path)
    before = file_digest(db)
    seen = _connects(monkeypatch)
    code, out, err = run(*command, "--db", str(db))
    assert code == 0 and out, err
    assert seen and all(s.startswith("file:") and "mode=ro" in s for s in seen), seen
    assert file_digest(db) == before


def test_a_read_only_folder_is_read_as_an_immutable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    import rankcraft.store.sqlite as module

    db = _league_file(tmp_path)
    real = sqlite3.connect

    def connect(target: Any, *args: Any, **kwargs: Any) -> Any:
        if "mode=ro" in str(target) and "immutable=1" not in str(target):
            # what SQLite says when it cannot make the WAL index in a read-only folder
            raise _sqlite_error(sqlite3.OperationalError, 14, "unable to open database file")
        return real(target, *args, **kwargs)

    monkeypatch.setattr(module.sqlite3, "connect", connect)
    code, out, _ = run("leaderboard", "--db", str(db), "--json")
    assert code == 0 and len(json.loads(out)) == 5


def _sqlite_error(kind: type[Exception], code: int, text: str) -> Exception:
    exc = kind(text)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    exc.sqlite_errorname = {14: "SQLITE_CANTOPEN"}.get(code, "")  # type: ignore[attr-defined]
    return exc


def test_writing_a_read_only_file_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from rankcraft.store import SQLiteStore

    from .conftest import file_digest

    db = _league_file(tmp_path)
    before = file_digest(db)

    def read_only_file_system(self: SQLiteStore) -> sqlite3.Connection:
        uri = self.path.resolve().as_uri() + "?mode=ro"
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)

    monkeypatch.setattr(SQLiteStore, "_connect", read_only_file_system)
    doc = tmp_path / "doc.json"
    doc.write_text(
        json.dumps({"players": [{"id": "z", "skill": {"rating": 1500.0, "peak": 1500.0}}]})
    )
    code, out, err = run("import", str(doc), "--db", str(db))
    assert code == 1 and out == ""
    assert f"'{db}' is read-only: the file, its folder or its file system cannot be written" in err
    assert "SQLITE_READONLY" in err and "not a rankcraft database" not in err
    assert file_digest(db) == before


def test_a_locked_league_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from rankcraft.store import SQLiteStore

    from .conftest import file_digest

    db = _league_file(tmp_path)
    before = file_digest(db)
    monkeypatch.setattr(SQLiteStore, "busy_timeout", 0.05)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process in the middle of a write
    try:
        doc = tmp_path / "doc.json"
        doc.write_text(
            json.dumps({"players": [{"id": "z", "skill": {"rating": 1500.0, "peak": 1500.0}}]})
        )
        code, out, err = run("import", str(doc), "--db", str(db))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert code == 1 and out == ""
    assert f"'{db}' is locked by another process (waited 0.05 s; SQLITE_BUSY" in err
    assert file_digest(db) == before


def test_a_full_disk_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from .conftest import committed, fill_disk_after

    db = _league_file(tmp_path)
    fill_disk_after(monkeypatch, 2)
    big = tmp_path / "big.jsonl"
    rows = [one(f"x{i}", f"q{i}" * 40, f"r{i}" * 40, [1, 0], 20) for i in range(2000)]
    big.write_text("".join(json.dumps(m) + "\n" for m in rows))
    code, out, err = run("replay", str(big), "--db", str(db))
    monkeypatch.undo()
    assert code == 1 and out == ""
    assert f"the disk holding '{db}' is full (SQLITE_FULL" in err
    assert len(committed(str(db))) == 10  # the replay was one transaction: nothing kept


def test_not_a_database_and_cannot_open_say_so(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is a text file, not SQLite " * 100)
    code, _, err = run("leaderboard", "--db", str(junk))
    assert code == 2 and f"'{junk}' is not a rankcraft database (not an SQLite file)" in err
    folder = tmp_path / "folder.sqlite"
    folder.mkdir()
    code, _, err = run("leaderboard", "--db", str(folder))
    assert code == 2 and f"cannot open '{folder}': it is a folder" in err
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps(one("m0", "a", "b", [1, 0])) + "\n")
    missing = tmp_path / "no" / "such" / "folder.sqlite"
    code, _, err = run("replay", str(src), "--ruleset", "elo", "--db", str(missing))
    assert code == 2 and f"cannot create '{missing}': No such file or directory" in err


# -- 9. replay: the line of bad UTF-8, and what --commit-every kept -----------------------


def _bad_utf8_file(tmp_path: Path, bad_line: int = 900, total: int = 1000) -> Path:
    rows = []
    for i in range(1, total + 1):
        match = one(f"m{i}", "a", "b", [1, 0], 1)
        match["meta"] = {"note": "é" * 20}  # non-ASCII text on every line
        rows.append(json.dumps(match, ensure_ascii=False).encode())
    rows[bad_line - 1] = rows[bad_line - 1].replace("é".encode(), b"\xff", 1)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(rows) + b"\n")
    return path


def test_bad_utf8_names_its_own_line(tmp_path: Path) -> None:
    src = _bad_utf8_file(tmp_path)
    code, out, err = run("replay", str(src), "--ruleset", "elo", "--db", str(tmp_path / "l.db"))
    assert (code, out) == (2, "")
    assert f"'{src}': line 900 is not UTF-8 text" in err  # was line 859-865: a chunk ahead
    assert not (tmp_path / "l.db").exists()
    gz = tmp_path / "bad.jsonl.gz"
    import gzip

    gz.write_bytes(gzip.compress(src.read_bytes()))
    with pytest.raises(rankcraft.InputError, match=r"line 900 is not UTF-8 text"):
        list(rankcraft.read_matches(gz))


def test_commit_every_failure_says_what_was_kept(tmp_path: Path) -> None:
    from .conftest import committed

    src = _bad_utf8_file(tmp_path)
    db = tmp_path / "l.sqlite"
    args = ["replay", str(src), "--ruleset", "elo", "--db", str(db), "--commit-every", "100"]
    code, out, err = run(*args)
    assert (code, out) == (2, "")
    assert "kept the 800 matches this command committed before the error" in err
    assert "line 900 is not UTF-8 text" in err
    assert len(committed(str(db))) == 800


def test_kept_counts_only_this_replays_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankcraft.unit import UnitOfWork

    from .conftest import committed

    db = tmp_path / "l.sqlite"
    rows = [one(f"m{i}", "a", "b", [1, 0], 1) for i in range(250)]
    rows[220] = {"id": "broken"}  # no played_at: a bad match in the third chunk
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    real = UnitOfWork.transaction
    calls = []

    @contextlib.contextmanager
    def transaction(self: UnitOfWork, *args: Any, **kwargs: Any) -> Any:
        outer = not self.in_transaction
        with real(self, *args, **kwargs):
            yield
        # after the first chunk's commit, another process commits 7 matches
        if outer and not calls and db.exists() and len(committed(str(db))) == 100:
            calls.append(1)
            with rankcraft.League.open(db) as other:
                other.record_many([one(f"o{i}", "c", "d", [1, 0], 2) for i in range(7)])

    monkeypatch.setattr(UnitOfWork, "transaction", transaction)
    code, _, err = run(
        "replay", str(src), "--ruleset", "elo", "--db", str(db), "--commit-every", "100"
    )
    assert code == 2 and "line 221" in err
    assert "kept the 200 matches this command committed before the error" in err  # not 207
    assert len(committed(str(db))) == 207
