"""wager: the team time-weighted rank wager, with the readings of docs/decisions.md."""

from __future__ import annotations

import json
import re
import sqlite3
import warnings
from pathlib import Path

import attrs
import pytest

import rankcraft
from rankcraft.plugins.wager import round_half_up, wager_loss, wager_win

TEAM_A = [21.84, 19.71, 19.94, 20.87, 18.43, 24.05]
TEAM_B = [22.87, 17.04, 23.39, 21.40, 20.11, 22.37]


def _example() -> rankcraft.Report:
    league = rankcraft.League("team-wager")
    players = [{"id": f"a{i}", "skill": {"rank": r}} for i, r in enumerate(TEAM_A)]
    players += [{"id": f"b{i}", "skill": {"rank": r}} for i, r in enumerate(TEAM_B)]
    league.import_state({"players": players})
    return league.record(
        {
            "id": "example",
            "played_at": "2024-01-01T20:00:00Z",
            "teams": [[f"a{i}" for i in range(6)], [f"b{i}" for i in range(6)]],
            "scores": [1, 0],
            "seconds_played": [[801] * 5 + [609], [801] * 6],  # a5 quit after 10:09 of 13:21
            "quit": ["a5"],
        }
    )


def test_the_papers_worked_example() -> None:
    report = _example()
    assert report.change("a0").skill_after.rank == 23.00  # the paper prints 23.10
    factors = report.change("a0").factors
    assert factors["average_factor"] == pytest.approx(21.20 / 20.81)
    assert factors["time_factor"] == pytest.approx(4806 / 4614)


def test_the_quitter_in_that_match() -> None:
    assert _example().change("a5").skill_after.rank == 22.85


def test_losers_in_that_match() -> None:
    report = _example()
    expected = wager_loss(22.87, 21.20, 20.81, 4806, 4614)
    assert report.change("b0").skill_after.rank == expected
    assert expected == round_half_up(22.87 - 22.87 / 20 * (21.20 / 20.81) * (4806 / 4614))


def test_floor_draws_and_all_opponents_quit() -> None:
    assert wager_loss(1.01, 10.0, 1.0, 1.0, 1.0) == 1.0
    league = rankcraft.League("team-wager")
    league.import_state(
        {"players": [{"id": "lo", "skill": {"rank": 10.0}}, {"id": "hi", "skill": {"rank": 20.0}}]}
    )
    report = league.record(
        {"id": "d", "played_at": "2024-01-01", "teams": [["lo"], ["hi"]], "scores": [1, 1]}
    )
    assert report.change("lo").skill_after.rank == wager_win(10.0, 10.0, 20.0, 1, 1)
    assert report.change("hi").skill_after.rank == 20.0
    report = league.record(
        {
            "id": "q",
            "played_at": "2024-01-02",
            "teams": [["lo"], ["hi"]],
            "scores": [0, 1],
            "quit": ["hi"],
        }
    )
    # lo (11.00 after the draw) gets the automatic win: R0 + R0/20
    assert report.change("lo").skill_after.rank == round_half_up(11.0 + 11.0 / 20)
    # the quitter takes the harsher of R0 - R0/20 and the standard loss (here the latter)
    standard = wager_loss(20.0, 20.0, 11.0, 1, 1)
    assert standard < 19.0
    assert report.change("hi").skill_after.rank == standard


def test_team_time_as_mean_per_player() -> None:
    total = wager_win(10.0, 10.0, 10.0, 2 * 100, 3 * 100)  # 2 vs 3 players, 100 s each
    mean = wager_win(10.0, 10.0, 10.0, 100, 100)
    assert total == 10.75 and mean == 10.5


def test_percentiles_with_placement() -> None:
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            'extends = "team-wager"\nname = "w"\n[update.params]\nplacement_matches = 2\n'
        )
    )
    for i in range(4):
        league.record(
            {
                "id": f"m{i}",
                "played_at": f"2024-01-0{i + 1}",
                "teams": [["a"], ["b"]],
                "scores": [1, 0],
            }
        )
    league.record({"id": "x", "played_at": "2024-01-06", "teams": [["c"], ["d"]], "scores": [1, 0]})
    standings = league.standings()
    assert standings["a"] == "percentile 51" and standings["b"] == "percentile 1"
    assert standings["c"] == "placement 1/2"


def test_more_than_two_sides_is_refused_cleanly() -> None:
    league = rankcraft.League("team-wager")
    with pytest.raises(rankcraft.InputError, match="two-sided matches"):
        league.record(
            {
                "id": "ffa",
                "played_at": "2024-01-01",
                "teams": [["a"], ["b"], ["c"]],
                "ranks": [1, 2, 3],
            }
        )
    assert len(league) == 0


def test_half_cents_round_up_in_decimal_not_binary_issue_15() -> None:
    # 2.30 - 2.30/20 is exactly 2.185; in binary floats it is 2.18499999…, which gave 2.18
    assert wager_loss(2.30, 2.30, 2.30, 1, 1) == 2.19
    assert wager_win(2.30, 2.30, 2.30, 1, 1) == 2.42  # 2.415 exactly
    assert round_half_up(2.185) == 2.19 and round_half_up(1.005) == 1.01
    league = rankcraft.League("team-wager")
    league.import_state(
        {"players": [{"id": "a", "skill": {"rank": 2.30}}, {"id": "b", "skill": {"rank": 2.30}}]}
    )
    report = league.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [0, 1]}
    )
    assert report.change("a").skill_after.rank == 2.19
    assert report.change("b").skill_after.rank == 2.42


def test_team_average_exactly_on_a_half_cent_rounds_up_issue_15() -> None:
    # B's average (2.26 + 1.85) / 2 is exactly 2.055 -> 2.06 (floats gave 2.05, a0 2.77);
    # A's is exactly 1.855 -> 1.86. a0: 2.63 + 2.63/20 * 2.06/1.86 = 2.7756… -> 2.78
    league = rankcraft.League("team-wager")
    ranks = {"a0": 2.63, "a1": 1.08, "b0": 2.26, "b1": 1.85}
    league.import_state({"players": [{"id": p, "skill": {"rank": r}} for p, r in ranks.items()]})
    report = league.record(
        {
            "id": "m",
            "played_at": "2024-01-01",
            "teams": [["a0", "a1"], ["b0", "b1"]],
            "scores": [1, 0],
            "seconds_played": [[600, 600], [600, 600]],
        }
    )
    assert report.change("a0").factors["average_factor"] == pytest.approx(2.06 / 1.86)
    assert report.change("a0").skill_after.rank == 2.78
    assert report.change("a1").skill_after.rank == 1.14  # 1.08 + 0.054 * 2.06/1.86 = 1.1398
    assert report.change("b0").skill_after.rank == 2.13  # 2.26 - 0.113 * 2.06/1.86 = 2.1348…
    assert report.change("b1").skill_after.rank == 1.75  # 1.85 - 0.0925 * 2.06/1.86 = 1.7475…


# -- leagues stored when [team.params] was printed and ignored -------------------------------

WAGER_FILE = 'name = "old-wager"\nextends = "team-wager"\n[expectation]\nplugin = "wager"\n'


def _played(i: int) -> dict[str, object]:
    return {
        "id": f"g{i}",
        "played_at": f"2024-01-0{i + 1}T20:00:00Z",
        "teams": [["a", "b"], ["c", "d"]],
        "scores": [1, 0] if i % 2 else [0, 1],
    }


def _old_text() -> str:
    """The ruleset as an older rankcraft stored it from ``WAGER_FILE`` with a
    ``[team.params]`` table: the team and expectation slots took WagerParams (written out
    whole, defaults too) and never read them."""
    import tomli_w

    table = rankcraft.ruleset.to_dict(rankcraft.loads_ruleset(WAGER_FILE))
    ignored = {"initial_rank": 1.0, "divisor": 10.0, "team_time": "mean"}
    table["team"]["params"] = ignored
    table["expectation"]["params"] = dict(ignored)
    return tomli_w.dumps(table)


MIGRATED = (
    r"dropped \[team.params\] \('divisor', 'initial_rank', 'team_time'\): plugin 'wager' "
    r"takes none in slot 'team'; \[expectation.params\] \('divisor', 'initial_rank', "
    r"'team_time'\): plugin 'wager' takes none in slot 'expectation'\. .*A ruleset file "
    r"with them is refused"
)


def test_a_stored_ruleset_with_ignored_params_is_migrated_a_file_is_refused(
    db_url: str, tmp_path: Path
) -> None:
    from rankcraft.ruleset import RulesetMigrationWarning

    from .conftest import snapshot, sql_run

    current = tmp_path / "old-wager.toml"
    current.write_text(WAGER_FILE)
    with rankcraft.League.open(db_url, current) as league:
        league.record(_played(0))
    old = _old_text().replace("'", "''")
    sql_run(db_url, f"UPDATE meta SET value = '{old}' WHERE key = 'ruleset_toml'")
    before = snapshot(db_url)

    with pytest.warns(RulesetMigrationWarning, match=MIGRATED):
        league = rankcraft.League.open(db_url)
    with league:
        assert league.ruleset == rankcraft.load_ruleset(current)
        assert league.ruleset.team.params is None and league.ruleset.expectation is not None
        assert snapshot(db_url) == before  # reading it changed nothing stored
        report = league.record(_played(1))
    # the dropped params were never read: the league rates as one of the current ruleset
    fresh = rankcraft.League(rankcraft.load_ruleset(current))
    fresh.record(_played(0))
    assert report == fresh.record(_played(1))

    with warnings.catch_warnings():
        warnings.simplefilter("error", RulesetMigrationWarning)
        rankcraft.League.open(db_url, current).close()  # the file as it is now: no warning
    refused = tmp_path / "with-params.toml"
    refused.write_text(WAGER_FILE + "[team.params]\ndivisor = 10.0\n")
    with pytest.raises(rankcraft.RulesetError, match=r"takes no params in slot 'team'.*divisor"):
        rankcraft.League.open(db_url, refused)
    with pytest.raises(rankcraft.RulesetError, match="takes no params in slot 'team'"):
        rankcraft.loads_ruleset(_old_text())


def test_the_cli_says_what_it_dropped_from_a_database_and_an_export(tmp_path: Path) -> None:
    from .test_cli import run

    db = tmp_path / "old.sqlite"
    current = tmp_path / "old-wager.toml"
    current.write_text(WAGER_FILE)
    with rankcraft.League.open(db, current) as league:
        league.record(_played(0))
        document = league.export()
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE meta SET value = ? WHERE key = 'ruleset_toml'", (_old_text(),))
    con.close()

    code, out, err = run("leaderboard", "--db", str(db))
    assert code == 0 and "a" in out
    assert err.startswith(f"rankcraft leaderboard: warning: the ruleset stored in '{db}': ")
    assert re.search(MIGRATED, err)

    # an export document carries the old text: imported into a new database, it is
    # migrated once, and the new database holds the ruleset without the dropped params
    exported = tmp_path / "old.json"
    exported.write_text(json.dumps({**document, "ruleset_toml": _old_text()}))
    new = tmp_path / "new.sqlite"
    code, out, err = run("import", str(exported), "--db", str(new))
    assert code == 0, err
    assert err.startswith(f"rankcraft import: warning: the ruleset in '{exported}': dropped")
    assert re.search(MIGRATED, err)
    code, out, err = run("leaderboard", "--db", str(new))
    assert (code, err) == (0, "")
    with rankcraft.League.open(new) as league:
        assert league.ruleset == rankcraft.load_ruleset(current)
        (exported_a,) = [p for p in document["players"] if p["id"] == "a"]
        assert league.codec.record_to_dict(league.player("a")) == exported_a


def test_a_team_wager_league_of_an_older_rankcraft_opens(tmp_path: Path) -> None:
    """Before [team] shared the update's params, ``team-wager`` stored its team slot's
    WagerParams whole, defaults and all: such a league opens, by its stored ruleset (with
    the warning) and by name (the given ruleset is the league's: nothing to say)."""
    import tomli_w

    from rankcraft.plugins.wager import WagerParams
    from rankcraft.ruleset import RulesetMigrationWarning, converter

    db = tmp_path / "old.sqlite"
    with rankcraft.League.open(db, "team-wager") as league:
        league.record(_played(0))
    table = rankcraft.ruleset.to_dict(rankcraft.load_ruleset("team-wager"))
    table["team"]["params"] = converter.unstructure(WagerParams())
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE meta SET value = ? WHERE key = 'ruleset_toml'", (tomli_w.dumps(table),))
    con.close()
    keys = "'active_days', 'divisor', 'floor', 'initial_rank', 'placement_matches', 'team_time'"
    with pytest.warns(RulesetMigrationWarning, match=re.escape(f"[team.params] ({keys})")):
        rankcraft.League.open(db).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RulesetMigrationWarning)
        with rankcraft.League.open(db, "team-wager") as league:
            assert league.record(_played(1)).changes


def test_the_hooks_take_and_give_tuples_and_explain_the_stake() -> None:
    # contract 2: states are tuples; the update names no context, its factors come from
    # rankcraft_explain (the paper's example: 21.84 on a side of 20.81 against 21.20)
    from rankcraft.io import parse_match
    from rankcraft.plugins import wager

    assert wager.RANKCRAFT_CONTRACT == 2
    params = wager.WagerParams()
    sides = [[(r,) for r in TEAM_A], [(r,) for r in TEAM_B]]
    assert wager.rankcraft_aggregate(sides[0]) == (20.81,)
    assert wager.rankcraft_expectation([(20.81,), (21.20,)]) == [
        20.81 / (20.81 + 21.20),
        21.20 / (20.81 + 21.20),
    ]
    pairings = wager.rankcraft_team(sides, [1, 2], 1.0)
    assert pairings[0][0] == [(wager.Matchup(0, 1, 20.81, 21.20), 1.0, 1.0)]
    match = parse_match(
        {
            "id": "example",
            "played_at": "2024-01-01T20:00:00Z",
            "teams": [[f"a{i}" for i in range(6)], [f"b{i}" for i in range(6)]],
            "scores": [1, 0],
            "seconds_played": [[801] * 5 + [609], [801] * 6],
        }
    )
    after = wager.rankcraft_update(params, (21.84,), pairings[0][0], match, "a0")
    assert after == (wager_win(21.84, 20.81, 21.20, 4614, 4806),) == (23.0,)
    factors = {"stake": 1.092, "average_factor": 21.20 / 20.81, "time_factor": 4806 / 4614}
    assert wager.rankcraft_explain(params, (21.84,), pairings[0][0], match, "a0", after) == factors
    # another state than the last update's answer is rated again
    lost = wager.rankcraft_update(params, (22.87,), pairings[1][0], match, "b0")
    assert lost == (wager_loss(22.87, 21.20, 20.81, 4806, 4614),)
    assert (
        wager.rankcraft_explain(params, (21.84,), pairings[0][0], match, "a0", (23.0,)) == factors
    )
    quit = attrs.evolve(match, quit=("a0",))
    assert wager.rankcraft_update(params, (21.84,), pairings[0][0], quit, "a0") == (20.75,)
    assert wager.rankcraft_explain(params, (21.84,), pairings[0][0], quit, "a0", (20.75,)) == {
        "stake": 1.092,
        "quit": 1.0,
    }
