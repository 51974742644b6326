"""Elo options that read when a player last played: the rest edge (``rest_per_day``,
``rest_cap_days``) and the early-season K (``season_k_boost``, ``season_k_games``,
``season_gap_days``)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

import rankcraft
from rankcraft.plugins.elo import EloTimedSkill


def _league(params: str) -> rankcraft.League:
    return rankcraft.League(
        rankcraft.loads_ruleset(f'name = "t"\n[update]\nplugin = "elo"\n[update.params]\n{params}')
    )


def _match(mid: str, day: str, a: str, b: str, scores: list[float]) -> dict[str, object]:
    return {"id": mid, "played_at": day, "teams": [[a], [b]], "scores": scores}


def _e(gap: float) -> float:
    return 1 / (1 + 10 ** (-gap / 400))


def _ordinal(day: str) -> float:
    return float(date.fromisoformat(day).toordinal())


def test_rest_edge_by_hand() -> None:
    league = _league("rest_per_day = 3.0\nrest_cap_days = 10.0\n")
    # newcomers count as fully rested (10 days each): no edge
    report = league.record(_match("m1", "2024-09-01", "a", "c", [1, 0]))
    assert report.expected[0] == 0.5
    a = league.player("a").skill
    assert isinstance(a, EloTimedSkill) and a.rating == 1516.0
    assert (a.last_day, a.season_games) == (_ordinal("2024-09-01"), 1)
    # b (new: 10 days) against c (rested 4 days): 3 · (10 − 4) = 18 points to b
    report = league.record(_match("m2", "2024-09-05", "b", "c", [0, 1]))
    assert report.expected[0] == pytest.approx(_e(1500.0 + 18.0 - 1484.0))
    b, c = league.player("b").skill.rating, league.player("c").skill.rating
    assert b == pytest.approx(1500.0 - 32 * report.expected[0])
    # a rested 7 days, b 3 days: 12 points to a, on top of the ratings
    report = league.record(_match("m3", "2024-09-08", "a", "b", [1, 0]))
    assert report.expected[0] == pytest.approx(_e(1516.0 + 12.0 - b))
    assert league.player("a").skill.rating == pytest.approx(1516.0 + 32 * (1 - report.expected[0]))
    # after an off-season both are capped at 10 days: even again
    report = league.record(_match("m4", "2025-09-01", "a", "c", [0, 1]))
    assert report.expected[0] == pytest.approx(_e(league_rating_before(report, "a") - c))
    # a forecast without a match has no rest edge
    assert league.predict([["a"], ["c"]])[0] == pytest.approx(
        _e(league.player("a").skill.rating - league.player("c").skill.rating)
    )


def league_rating_before(report: rankcraft.Report, player: str) -> float:
    return float(report.change(player).skill_before.rating)


def test_early_season_k_by_hand() -> None:
    league = _league("season_k_boost = 2.0\nseason_k_games = 2\nseason_gap_days = 30.0\n")
    days = ["2024-09-01", "2024-09-08", "2024-09-15", "2024-11-01", "2024-11-08"]
    expected_k = [64.0, 64.0, 32.0, 64.0, 64.0]  # a's first two; then after a 47-day gap
    for i, (day, k) in enumerate(zip(days, expected_k, strict=True)):
        before = league.player("a").skill.rating if i else 1500.0
        report = league.record(_match(f"m{i}", day, "a", f"x{i}", [1, 0]))
        factors = report.change("a").factors
        assert factors["k"] == k
        assert ("season_k_boost" in factors) == (k == 64.0)
        after = league.player("a").skill
        assert after.rating == pytest.approx(before + k * (1 - report.expected[0]))
    assert league.player("a").skill.season_games == 2
    # the boost only multiplies K: the expectation is the plain one
    assert report.expected[0] == pytest.approx(_e(before - 1500.0))


def test_bad_values_are_refused_naming_the_field() -> None:
    for text, field in (
        ("rest_per_day = 1e4", "rest_per_day"),
        ("rest_cap_days = 0.0", "rest_cap_days"),
        ("season_k_boost = 0.0", "season_k_boost"),
        ("season_k_games = 0", "season_k_games"),
        ("season_k_games = 2.5", "season_k_games"),
        ("season_gap_days = -1.0", "season_gap_days"),
    ):
        with pytest.raises(rankcraft.RulesetError, match=field):
            _league(text + "\n")
    bad = {"players": [{"id": "a", "skill": {"rating": 1500.0, "last_day": -1.0}}]}
    with pytest.raises(rankcraft.RankcraftError, match="last_day"):
        _league("rest_per_day = 2.0\n").import_state(bad)
    bad = {"players": [{"id": "a", "skill": {"rating": 1500.0, "season_games": 1.5}}]}
    with pytest.raises(rankcraft.RankcraftError, match="season_games"):
        _league("rest_per_day = 2.0\n").import_state(bad)


def test_stored_ruleset_and_states_round_trip(tmp_path: Path) -> None:
    params = (
        "rest_per_day = 2.5\nrest_cap_days = 12.0\nseason_k_boost = 1.25\n"
        "season_k_games = 3\nseason_gap_days = 60.0\n"
    )
    ruleset = rankcraft.loads_ruleset(
        f'name = "rested"\n[update]\nplugin = "elo"\n[update.params]\n{params}'
    )
    db = tmp_path / "r.sqlite"
    with rankcraft.League.open(db, ruleset) as league:
        league.record(_match("m1", "2024-09-01", "a", "b", [1, 0]))
        league.record(_match("m2", "2024-09-05", "b", "c", [1, 0]))
        skills = {p: league.player(p).skill for p in "abc"}
        exported = league.export()
    with rankcraft.League.open(db) as league:
        stored = league.ruleset.update.params
        assert (stored.rest_per_day, stored.rest_cap_days) == (2.5, 12.0)
        assert (stored.season_k_boost, stored.season_k_games, stored.season_gap_days) == (
            1.25,
            3,
            60.0,
        )
        assert {p: league.player(p).skill for p in "abc"} == skills
        report = league.record(_match("m3", "2024-09-08", "a", "b", [0, 1]))
    # a rested 7 days, b 3: 2.5 · 4 = 10 points to a; a is in its 2nd game (K 1.25 · 32)
    a, b = skills["a"], skills["b"]
    assert report.expected[0] == pytest.approx(_e(a.rating + 10.0 - b.rating))
    assert report.change("a").factors["k"] == 40.0
    again = rankcraft.League(ruleset)
    again.import_state(exported)
    assert again.player("b").skill == skills["b"]
    assert skills["b"].last_day == _ordinal("2024-09-05") and skills["b"].season_games == 2


def test_no_rest_edge_between_teams() -> None:
    """A side's rest is not defined by its members' averaged states: between teams the
    edge is 0, so the report's expectation is the one every member's update uses and
    the match stays zero-sum (a 2-v-2 where one side has a newcomer)."""
    league = _league("rest_per_day = 3.0\nrest_cap_days = 14.0\n")
    league.record(_match("m1", "2024-09-01", "a", "b", [1, 0]))
    league.record(_match("m2", "2024-09-08", "c", "e", [1, 0]))
    before = {p: league.player(p).skill.rating for p in "abce"}
    report = league.record(
        {"id": "m3", "played_at": "2024-09-10", "teams": [["a", "b"], ["c", "d"]], "scores": [1, 0]}
    )
    sides = [(before["a"] + before["b"]) / 2, (before["c"] + 1500.0) / 2]
    assert report.expected[0] == pytest.approx(_e(sides[0] - sides[1]))
    after = {c.player: c.skill_after.rating for c in report.changes}
    gain = 32 * (1 - report.expected[0])
    assert after["a"] == pytest.approx(before["a"] + gain)
    assert after["c"] == pytest.approx(before["c"] - gain)
    assert sum(after.values()) == pytest.approx(before["a"] + before["b"] + before["c"] + 1500.0)
