"""Partial play: ``seconds_played`` scales each player's pairings by their share of play in
every bundled team plugin (mean, individual, composite-opponent); the wager keeps the
paper's team-time factor."""

from __future__ import annotations

import gzip
import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.plugins._team import MIN_SHARE, play_shares

from .conftest import SHARED_DATA, SHARED_DATA_MISSING


def _league(team: str, skill: str = "elo") -> rankcraft.League:
    text = f'extends = "{skill}"\nname = "x"\n[team]\nplugin = "{team}"\n'
    return rankcraft.League(rankcraft.loads_ruleset(text))


def _match(seconds: list[list[int]] | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "m1",
        "played_at": "2024-01-01",
        "teams": [["a1", "a2", "a3"], ["b1", "b2"]],
        "scores": [2, 1],
        **extra,
    }
    if seconds is not None:
        out["seconds_played"] = seconds
    return out


def _moves(report: rankcraft.Report, field: str = "rating") -> dict[str, float]:
    return {
        c.player: getattr(c.skill_after, field) - getattr(c.skill_before, field)
        for c in report.changes
    }


def test_shares_are_seconds_over_the_longest() -> None:
    assert play_shares([[7200, 1080], [7200, 0]]) == [[1.0, 0.15], [1.0, MIN_SHARE]]
    assert play_shares(None) is None
    assert play_shares([[600, 600], [600, 600]]) is None  # everyone played it all
    assert play_shares([[0], [0]]) is None  # nobody played: nothing to share


@pytest.mark.parametrize("team", ["mean", "individual"])
def test_elo_substitute_moves_by_their_share(team: str) -> None:
    """Elo with a constant K: a change is K times a sum of weights, so a substitute's
    change is exactly their share of a starter's."""
    league = _league(team)
    report = league.record(_match([[7200, 7200, 1080], [7200, 3600]]))
    moves = _moves(report)
    assert moves["a1"] == pytest.approx(16.0)
    assert moves["a3"] == pytest.approx(moves["a1"] * 1080 / 7200)
    assert moves["a3"] == pytest.approx(2.4)
    assert moves["b2"] == pytest.approx(moves["b1"] * 0.5)
    assert moves["b1"] == pytest.approx(-16.0)


def test_without_times_or_turned_off_everyone_moves_alike() -> None:
    plain = _moves(_league("mean").record(_match(None)))
    assert plain["a3"] == plain["a1"] == pytest.approx(16.0)
    off = rankcraft.League(
        rankcraft.loads_ruleset(
            'extends = "elo"\nname = "x"\n[team.params]\npartial_play = false\n'
        )
    )
    moves = _moves(off.record(_match([[7200, 7200, 1080], [7200, 3600]])))
    assert moves == plain


def test_composite_opponent_and_glicko_scale_the_information() -> None:
    """Glicko: a share scales the result's information, so the substitute's rating moves
    less and their deviation shrinks less."""
    league = _league("composite-opponent", "glicko1")
    report = league.record(_match([[5400, 5400, 1080], [5400, 5400]]))
    rating, deviation = _moves(report), _moves(report, "deviation")
    assert 0 < rating["a3"] < rating["a1"]
    assert deviation["a1"] < deviation["a3"] < 0
    # Glickman's one-result update with the result's information scaled by the share,
    # against the virtual opponent (1500, RD 350) at E = 1/2
    q = math.log(10) / 400
    g = 1 / math.sqrt(1 + 3 * q * q * 350**2 / math.pi**2)
    for player, share in (("a1", 1.0), ("a3", 0.2)):
        precision = 1 / 350**2 + share * q * q * g * g * 0.25
        assert rating[player] == pytest.approx(q / precision * share * g * 0.5)
    assert round(rating["a1"], 2) == 162.21


def test_zero_seconds_is_the_floor_share() -> None:
    report = _league("mean").record(_match([[5400, 5400, 0], [5400, 5400]]))
    moves = _moves(report)
    assert moves["a3"] == pytest.approx(moves["a1"] * MIN_SHARE)


def test_one_on_one_uses_shares_too() -> None:
    league = _league("mean")
    report = league.record(
        {
            "id": "t",
            "played_at": "2024-01-01",
            "teams": [["a"], ["b"]],
            "scores": [1, 0],
            "seconds_played": [[3000], [1500]],
        }
    )
    assert _moves(report) == {"a": 16.0, "b": -8.0}


@settings(max_examples=25)
@given(
    seconds=st.lists(st.integers(0, 7200), min_size=5, max_size=5),
    team=st.sampled_from(["mean", "individual", "composite-opponent"]),
)
def test_no_one_moves_more_than_with_full_play(seconds: list[int], team: str) -> None:
    skill = "glicko1" if team == "composite-opponent" else "elo"
    timed = _moves(_league(team, skill).record(_match([seconds[:3], seconds[3:]])))
    full = _moves(_league(team, skill).record(_match(None)))
    for player, move in timed.items():
        assert abs(move) <= abs(full[player]) + 1e-9


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=SHARED_DATA_MISSING)
def test_world_cup_substitutes_move_in_proportion() -> None:
    """The first 40 World Cup matches with Elo: in every decisive match each substitute's
    change is the starters' change times their share of the longest time played."""
    path = SHARED_DATA / "worldcup_lineups_1970_2022.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        matches = [json.loads(line) for line in itertools.islice(f, 40)]
    league = rankcraft.League("elo")
    checked = 0
    for data in matches:
        report = league.record(data)
        longest = max(max(side) for side in data["seconds_played"])
        for side, times in zip(data["teams"], data["seconds_played"], strict=True):
            starter = next(p for p, t in zip(side, times, strict=True) if t == longest)
            full = _moves(report)[starter]
            for player, t in zip(side, times, strict=True):
                share = max(t / longest, MIN_SHARE)
                assert _moves(report)[player] == pytest.approx(full * share, abs=1e-9)
                checked += share < 1
    assert checked > 100  # substitutes were compared
