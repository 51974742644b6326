"""wager: the team time-weighted rank wager, with the readings of docs/decisions.md."""

from __future__ import annotations

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
