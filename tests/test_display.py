"""The ruleset's [display] table: conservative values, intervals, active players, and the
one sort key shared by the library, the command line and the HTTP service."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import attrs
import pytest

import rankcraft
from rankcraft.cli import main

PLAYERS = [
    {"id": "veteran", "skill": {"rating": 1800.0, "deviation": 50.0}},
    {"id": "newcomer", "skill": {"rating": 1850.0, "deviation": 300.0}},
    {"id": "mid", "skill": {"rating": 1700.0, "deviation": 60.0}},
]


def _glicko(display: str = "") -> rankcraft.League:
    text = 'extends = "glicko1"\nname = "g"\n' + display
    league = rankcraft.League(rankcraft.loads_ruleset(text))
    league.import_state({"players": PLAYERS})
    return league


def test_conservative_orders_by_location_less_k_spreads() -> None:
    league = _glicko()  # the bundled glicko1: k = 2
    assert [r.id for r in league.leaderboard()] == ["veteran", "mid", "newcomer"]
    assert [league.shown(r).value for r in league.leaderboard()] == [1700.0, 1580.0, 1250.0]
    plain = _glicko("[display]\nconservative = 0.0\n")
    assert [r.id for r in plain.leaderboard()] == ["newcomer", "veteran", "mid"]
    assert plain.shown("newcomer").value == 1850.0


def test_interval_is_location_plus_minus_1_96_spreads() -> None:
    low, high = _glicko().shown("newcomer").interval or (0.0, 0.0)
    assert low == pytest.approx(1850.0 - 1.959964 * 300.0)
    assert high == pytest.approx(1850.0 + 1.959964 * 300.0)
    elo = rankcraft.League("elo")
    elo.import_state({"players": [{"id": "a", "skill": {"rating": 1600.0, "peak": 1600.0}}]})
    assert elo.shown("a") == rankcraft.Shown(value=1600.0, interval=None, skill={"rating": 1600.0})
    assert elo.shown("a").to_dict() == {
        "value": 1600.0,
        "interval": None,
        "skill": {"rating": 1600.0},
    }


def test_rank_layer_orders_by_rank_points() -> None:
    league = rankcraft.League("inversus")
    league.import_state(
        {
            "players": [
                {
                    "id": "a",
                    "skill": {"mu": 2.0, "phi": 0.2, "sigma": 0.06},
                    "rank": {"points": 10, "best_phi": None},
                },
                {
                    "id": "b",
                    "skill": {"mu": 0.0, "phi": 0.2, "sigma": 0.06},
                    "rank": {"points": 90, "best_phi": None},
                },
            ]
        }
    )
    assert [r.id for r in league.leaderboard()] == ["b", "a"]
    assert league.shown("b").value == 90.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'extends = "elo"\nname = "x"\n[display]\nconservative = 2.0\n',
            "'conservative' needs a skill with an uncertainty (a field of role 'spread'), "
            "but 'elo' keeps peak, rating: 2.0 @ ruleset.display.conservative",
        ),
        (
            'extends = "skyweaver"\nname = "x"\n[display]\nconservative = 1.0\n',
            "the [rank] slot's rank points order this ruleset's leaderboards: 1.0 @ "
            "ruleset.display.conservative",
        ),
        (
            'extends = "glicko1"\nname = "x"\n[display]\nconservative = 11.0\n',
            "'conservative' must be a finite number in [0.0, 10.0]: 11.0 @ ruleset.display",
        ),
        (
            'extends = "glicko1"\nname = "x"\n[display]\nactive_days = -1.0\n',
            "'active_days' must be a finite number in [1e-06, 1000000.0]: -1.0",
        ),
        (
            'extends = "glicko1"\nname = "x"\n[display]\nconservativ = 1.0\n',
            "unknown key(s) 'conservativ' (did you mean 'conservative'?) @ ruleset.display",
        ),
    ],
)
def test_bad_display_tables_are_refused(text: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError) as caught:
        rankcraft.loads_ruleset(text)
    assert message in str(caught.value)


def _race(league: rankcraft.League, mid: str, day: str, *drivers: str) -> None:
    league.record({"id": mid, "played_at": day, "teams": [[d] for d in drivers],
                   "ranks": list(range(1, len(drivers) + 1))})  # fmt: skip


def test_active_days_leaves_retired_players_out_of_the_table() -> None:
    text = 'extends = "elo"\nname = "x"\n[display]\nactive_days = 365.0\n'
    league = rankcraft.League(rankcraft.loads_ruleset(text))
    _race(league, "r1", "2020-03-01", "legend", "a", "b")
    _race(league, "r2", "2021-03-01", "a", "b")  # exactly 365 days later: still active
    assert [r.id for r in league.leaderboard()] == ["legend", "a", "b"]
    _race(league, "r3", "2021-03-02", "b", "a")
    assert [r.id for r in league.leaderboard()] == ["a", "b"]  # a year and a day later
    assert [r.id for r in league.leaderboard(everyone=True)] == ["legend", "a", "b"]
    assert league.player("legend").skill.rating == 1532.0


def test_a_display_change_keeps_the_database(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    with rankcraft.League.open(db, "glicko1") as league:
        league.import_state({"players": PLAYERS})
    text = 'extends = "glicko1"\nname = "glicko1"\n[display]\nconservative = 0.0\n'
    with rankcraft.League.open(db, rankcraft.loads_ruleset(text)) as league:
        assert [r.id for r in league.leaderboard()] == ["newcomer", "veteran", "mid"]
    other = 'extends = "glicko1"\nname = "glicko1"\n[update.params]\nc = 5.0\n'
    with pytest.raises(rankcraft.LeagueMismatchError):
        rankcraft.League.open(db, rankcraft.loads_ruleset(other))


def run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def test_command_line_shows_and_sorts_by_the_display_value(tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    with rankcraft.League.open(db, "glicko1") as league:
        league.import_state({"players": PLAYERS})
    code, text = run("leaderboard", "--db", db)
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split() == ["#", "player", "conservative", "rating", "deviation", "matches",
                                "last", "played"]  # fmt: skip
    # one format per column (issue 39, item 5): whole numbers stay whole, 50 beside 300
    assert lines[1].split()[:5] == ["1", "veteran", "1700", "1800", "50"]
    assert [line.split()[4] for line in lines[1:4]] == ["50", "60", "300"]
    code, text = run("leaderboard", "--db", db, "--json")
    board = json.loads(text)
    assert [(r["id"], r["display"]["value"]) for r in board] == [
        ("veteran", 1700.0),
        ("mid", 1580.0),
        ("newcomer", 1250.0),
    ]
    code, text = run("player", "newcomer", "--db", db)
    assert "  shown: 1250.0; skill's 95% interval 1262.0 to 2438.0" in text
    code, text = run("player", "newcomer", "--db", db, "--json")
    assert json.loads(text)["display"]["interval"] == pytest.approx([1262.01, 2437.99], abs=0.01)


# -- the scale players see (issue 39, item 4) ----------------------------------------------

GLICKO = 400.0 / math.log(10.0)
"""Glickman's conversion: rating = 1500 + GLICKO * mu, RD = GLICKO * phi."""

GLICKO2_PLAYERS = [
    {"id": "ann", "skill": {"mu": 1.206, "phi": 0.456, "sigma": 0.06}},
    {"id": "bo", "skill": {"mu": 0.37, "phi": 0.414, "sigma": 0.06}},
    {"id": "cy", "skill": {"mu": -0.2, "phi": 1.5, "sigma": 0.06}},
]


def _glicko2(db: Path | None = None) -> rankcraft.League:
    league = rankcraft.League("glicko2") if db is None else rankcraft.League.open(db, "glicko2")
    league.import_state({"players": GLICKO2_PLAYERS})
    return league


def test_glicko2_shows_rating_and_rd_not_mu_and_phi() -> None:
    # docs/rulesets.md: glicko2's "leaderboards by rating - 2 RD", on Glickman's scale
    league = _glicko2()
    shown = league.shown("ann")
    rating, rd = 1500.0 + GLICKO * 1.206, GLICKO * 0.456
    assert rating == pytest.approx(1709.5, abs=0.05) and rd == pytest.approx(79.2, abs=0.05)
    assert shown.value == pytest.approx(rating - 2 * rd)
    assert shown.skill == pytest.approx({"rating": rating, "RD": rd})
    assert shown.interval == pytest.approx((rating - 1.959964 * rd, rating + 1.959964 * rd))
    assert [r.id for r in league.leaderboard()] == ["ann", "bo", "cy"]
    # the export keeps the state as the plugin keeps it, named as it is
    exported = {p["id"]: p["skill"] for p in league.export()["players"]}
    assert exported["ann"] == {"mu": 1.206, "phi": 0.456, "sigma": 0.06}


def test_the_command_line_shows_glicko2_on_the_glicko_scale(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    _glicko2(db).close()
    code, text = run("leaderboard", "--db", str(db))
    lines = text.splitlines()
    assert code == 0
    assert lines[0].split()[:5] == ["#", "player", "conservative", "rating", "RD"]
    ann = lines[1].split()
    rating, rd = 1500.0 + GLICKO * 1.206, GLICKO * 0.456
    assert ann[:5] == ["1", "ann", f"{rating - 2 * rd:.1f}", f"{rating:.1f}", f"{rd:.1f}"]
    assert "mu" not in text and "phi" not in text
    code, text = run("player", "ann", "--db", str(db))
    assert code == 0
    assert f"  skill: rating {rating:.2f}, RD {rd:.2f}, sigma 0.06\n" in text
    assert f"  shown: {rating - 2 * rd:.1f}; skill's 95% interval " in text
    code, text = run("leaderboard", "--db", str(db), "--json")
    assert code == 0
    first = json.loads(text)[0]  # both, named: the state as kept, and as players see it
    assert first["skill"] == {"mu": 1.206, "phi": 0.456, "sigma": 0.06}
    assert first["display"]["skill"] == pytest.approx({"rating": rating, "RD": rd})


def test_a_database_sorted_on_the_internal_scale_is_sorted_again(tmp_path: Path) -> None:
    # a glicko2 database kept sort keys of mu - 2 phi: they are computed again on the
    # shown scale when it opens (the key's name is its formula)
    import sqlite3

    db = tmp_path / "league.sqlite"
    _glicko2(db).close()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE players SET sort_key = 0.0")
        con.execute("UPDATE meta SET value = 'skill.mu-2.0*phi' WHERE key = 'sort_key'")
    rankcraft.League.open(db, "glicko2").close()
    with sqlite3.connect(db) as con:
        keys = dict(con.execute("SELECT id, sort_key FROM players"))
        name = con.execute("SELECT value FROM meta WHERE key = 'sort_key'").fetchone()[0]
    assert keys["ann"] == pytest.approx(1500 + GLICKO * (1.206 - 2 * 0.456))
    assert name == f"skill.(1500.0+{GLICKO!r}*mu)-2.0*({GLICKO!r}*phi)"


@pytest.mark.parametrize("name", rankcraft.ruleset.bundled_names())
def test_every_bundled_ruleset_shows_its_documented_scale(name: str) -> None:
    league = rankcraft.League(name)
    league.record_many(
        [{"id": "m1", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [2, 1]}]
    )
    skill = league.player("a").skill
    location, spread = league.display.names
    shown = league.shown("a").skill
    if league.ruleset.slot("update").plugin == "glicko2":  # Glickman's rating and RD
        assert (location, spread) == ("rating", "RD")
        rating, rd = 1500 + GLICKO * skill.mu, GLICKO * skill.phi
        assert shown == pytest.approx({"rating": rating, "RD": rd})
    else:  # every other bundled skill plugin shows its state's own fields
        names = {f.name for f in attrs.fields(type(skill))}
        assert set(shown) <= names and location in names
        assert shown == {n: getattr(skill, n) for n in shown}
