"""The glicko1 plugin: Glickman's example, ratingupdate.com's formulas and their slips, decay."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.io import parse_match
from rankcraft.plugins._matchup import margin_multiplier, match_margin
from rankcraft.plugins.glicko1 import (
    RANKCRAFT_CONTRACT,
    Glicko1Params,
    Q,
    decay_constant,
    expected,
    g,
    grow,
    rankcraft_decay,
    rankcraft_explain,
    rankcraft_update,
    rate,
)

# Glickman, "The Glicko system": the player 1500/200 against three opponents in one period.
PLAYERS = [
    {"id": "player", "skill": {"rating": 1500.0, "deviation": 200.0}},
    {"id": "o1400", "skill": {"rating": 1400.0, "deviation": 30.0}},
    {"id": "o1550", "skill": {"rating": 1550.0, "deviation": 100.0}},
    {"id": "o1700", "skill": {"rating": 1700.0, "deviation": 300.0}},
]
GAMES = [("o1400", 1.0), ("o1550", 0.0), ("o1700", 0.0)]


def _glickman_league(mode: str) -> rankcraft.League:
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            f'name = "g1"\n[period]\nmode = "{mode}"\n[update]\nplugin = "glicko1"\n'
        )
    )
    league.import_state({"players": PLAYERS})
    league.record_many(
        [
            {
                "id": f"game{i}",
                "played_at": "2024-03-01T12:00:00Z",
                "teams": [["player"], [opp]],
                "scores": [s, 1 - s],
            }
            for i, (opp, s) in enumerate(GAMES)
        ]
    )
    return league


@pytest.mark.parametrize("mode", ["batch", "live"])
def test_glickman_example_as_one_rating_period(mode: str) -> None:
    skill = _glickman_league(mode).player("player").skill
    assert round(skill.rating) == 1464 and round(skill.deviation, 1) == 151.4  # printed
    assert skill.rating == pytest.approx(1464.106, abs=5e-4)  # full precision
    assert skill.deviation == pytest.approx(151.399, abs=5e-4)


def test_the_update_hook_rates_tuples_with_named_arguments() -> None:
    # Contract 2: states are (rating, deviation) tuples, pairings (opponent, score, weight),
    # the facts named arguments (``games`` and ``mode`` tell Glickman's step 1).
    assert RANKCRAFT_CONTRACT == 2
    params = Glicko1Params(c=30.0)
    pairings = [
        ((1400.0, 30.0), 1.0, 1.0),
        ((1550.0, 100.0), 0.0, 1.0),
        ((1700.0, 300.0), 0.0, 1.0),
    ]
    after = rankcraft_update(params, (1500.0, 200.0), pairings, 0, 0, None, "batch")
    assert type(after) is tuple
    assert after[0] == pytest.approx(1464.106, abs=5e-4)  # Glickman's period
    assert after[1] == pytest.approx(151.399, abs=5e-4)
    assert rankcraft_explain(params, (1500.0, 200.0), pairings, 0, 0, None, "batch", after) is None
    # a player of the previous period: step 1 grows RD by one period (c = 30) first
    grown = rankcraft_update(params, (1500.0, 200.0), pairings, 5, 0, None, "batch")
    assert grown == rate(
        1500.0, math.sqrt(200.0**2 + 30.0**2), [(*o, s, w) for o, s, w in pairings]
    )
    assert rankcraft_update(params, (1500.0, 200.0), pairings, 5, 0, None, "match") == after


def test_margin_is_explained_by_the_explain_hook() -> None:
    params = Glicko1Params(margin="fivethirtyeight")
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            'name = "m"\n[update]\nplugin = "glicko1"\n'
            '[update.params]\nmargin = "fivethirtyeight"\n'
        )
    )
    game = {"id": "g", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [2, 9]}
    report = league.record(game)
    match = parse_match(game)
    state, opponent = (1500.0, 350.0), (1500.0, 350.0)
    after = rankcraft_update(params, state, [(opponent, 0.0, 1.0)], 0, 0, match, "match")
    factors = rankcraft_explain(params, state, [(opponent, 0.0, 1.0)], 0, 0, match, "match", after)
    assert factors == {"margin": margin_multiplier(-7, 0.0)} == report.change("a").factors
    assert after == (
        report.change("a").skill_after.rating,
        report.change("a").skill_after.deviation,
    )
    # asked about another state than the last update's, it rates that one again
    other = rankcraft_explain(
        params, state, [(opponent, 0.0, 1.0)], 0, 0, match, "match", (0.0, 1.0)
    )
    assert other == factors
    # no margin without scores, or with several pairings
    assert match_margin(match, 0, 1) == -7 and match_margin(match, 1, 1) == 7
    assert match_margin(match, 0, 2) is None and match_margin(None, 0, 1) is None


def test_one_game_at_a_time_differs() -> None:
    # ratingupdate.com's usage (every game its own period) is order dependent and gives
    # 1464.22 / 151.25 here, not Glickman's batch 1464.11 / 151.40.
    skill = _glickman_league("match").player("player").skill
    assert skill.rating == pytest.approx(1464.22, abs=5e-3)
    assert skill.deviation == pytest.approx(151.25, abs=5e-3)


def test_glickman_d_squared_at_full_precision() -> None:
    # Glickman prints d² = 53670.85 from rounded g and E; full precision 53685.74.
    inv = sum(
        g(rd) ** 2 * expected(1500, r, rd) * (1 - expected(1500, r, rd))
        for r, rd in ((1400, 30), (1550, 100), (1700, 300))
    )
    assert 1 / (Q * Q * inv) == pytest.approx(53685.74, abs=0.01)


def test_ratingupdate_rating_change_formula() -> None:
    # 1500/200 beats 1400/30. ratingupdate.com prints (Q / (1/RD²)) + (1/d²)) * g * (s - E):
    own, opp = (1500.0, 200.0), (1400.0, 30.0)
    gj = g(opp[1])
    e = expected(own[0], opp[0], opp[1])
    d2 = 1.0 / (Q * Q * gj * gj * e * (1 - e))
    printed = (Q / (1.0 / own[1] ** 2) + 1.0 / d2) * gj * (1.0 - e)
    assert printed == pytest.approx(82.64, abs=0.005)
    correct = Q / (1.0 / own[1] ** 2 + 1.0 / d2) * gj * (1.0 - e)
    assert correct == pytest.approx(63.43, abs=0.005)
    league = rankcraft.League(rankcraft.loads_ruleset('name = "g"\n[update]\nplugin = "glicko1"\n'))
    league.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": 1500.0, "deviation": 200.0}},
                {"id": "b", "skill": {"rating": 1400.0, "deviation": 30.0}},
            ]
        }
    )
    league.record({"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]})
    assert league.player("a").skill.rating - 1500.0 == pytest.approx(63.43, abs=0.005)


@pytest.mark.parametrize(
    ("deviation", "value"),
    [(350, 0.67), (300, 0.72), (250, 0.78), (200, 0.84), (150, 0.90), (100, 0.95), (50, 0.99)],
)
def test_g_table_of_ratingupdate(deviation: float, value: float) -> None:
    # ...and g falls as RD rises: a less certain opponent's result weighs less.
    assert round(g(deviation), 2) == value


def test_win_probability_uses_both_deviations() -> None:
    league = rankcraft.League("glicko1")
    league.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": 1700.0, "deviation": 50.0}},
                {"id": "b", "skill": {"rating": 1500.0, "deviation": 50.0}},
                {"id": "c", "skill": {"rating": 1700.0, "deviation": 300.0}},
            ]
        }
    )
    sure = league.predict([["a"], ["b"]])[0]
    unsure = league.predict([["c"], ["b"]])[0]
    combined = math.sqrt(50**2 + 50**2)
    assert sure == pytest.approx(1 / (1 + 10 ** (-g(combined) * 200 / 400)))
    assert 0.5 < unsure < sure


def test_decay_constant_adds_c_squared_per_period() -> None:
    # RD from 50 back to 350 in 100 periods: c = sqrt((350² - 50²)/100) = 34.64 (Glickman).
    c = decay_constant(50.0, 350.0, 100)
    assert c == pytest.approx(34.641, abs=1e-3)
    params = Glicko1Params(
        c=0.0, c_from=rankcraft.plugins.glicko1.DecayFrom(deviation=50.0, periods=100.0)
    )
    assert params.decay_c == pytest.approx(c)
    assert grow(params, 50.0, 100.0) == pytest.approx(350.0)
    assert grow(params, 50.0, 1000.0) == 350.0  # capped at the initial RD


def test_whole_periods() -> None:
    whole = Glicko1Params(c=10.0, whole_periods=True)
    real = Glicko1Params(c=10.0)
    assert grow(whole, 100.0, 2.9) == pytest.approx(math.sqrt(100**2 + 2 * 100))
    assert grow(real, 100.0, 2.9) == pytest.approx(math.sqrt(100**2 + 2.9 * 100))


def test_ratingupdate_constants_and_hourly_decay() -> None:
    ruleset = rankcraft.load_ruleset("glicko1")
    params = ruleset.update.params
    assert (params.initial_deviation, params.min_deviation, params.c) == (350.0, 25.0, 3.1)
    assert ruleset.period.length_days * 24 == pytest.approx(1.0)
    league = rankcraft.League(ruleset)
    league.import_state(
        {
            "players": [
                {
                    "id": "a",
                    "skill": {"rating": 1600.0, "deviation": 25.0},
                    "last_played": "2024-01-01T00:00:00Z",
                    "matches": 50,
                },
                {
                    "id": "b",
                    "skill": {"rating": 1600.0, "deviation": 25.0},
                    "last_played": "2024-01-01T00:00:00Z",
                    "matches": 50,
                },
            ]
        }
    )
    report = league.record(
        {"id": "m", "played_at": "2024-01-01T10:30:00Z", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    used = report.change("a").skill_used
    assert used.deviation == pytest.approx(math.sqrt(25**2 + 10 * 3.1**2))  # 10 whole hours


@given(st.floats(1.0, 350.0), st.floats(0.0, 50.0), st.floats(0.0, 50.0), st.floats(0.0, 60.0))
def test_decay_is_additive_before_clamping(
    deviation: float, t1: float, t2: float, c: float
) -> None:
    params = Glicko1Params(c=c, max_deviation=1e4)  # the largest allowed: no clamp here
    state = (1500.0, deviation)  # (the hook's tuple form: rating, deviation)
    twice = rankcraft_decay(params, rankcraft_decay(params, state, t1), t2)
    once = rankcraft_decay(params, state, t1 + t2)
    assert twice[1] == pytest.approx(once[1], rel=1e-12)
    assert twice[0] == once[0] == 1500.0


@given(st.floats(500, 2500), st.floats(30, 350), st.floats(500, 2500), st.floats(30, 350))
def test_a_win_never_lowers_and_a_loss_never_raises(
    r: float, rd: float, ro: float, rdo: float
) -> None:
    win = rate(r, rd, [(ro, rdo, 1.0, 1.0)])
    loss = rate(r, rd, [(ro, rdo, 0.0, 1.0)])
    assert win[0] >= r >= loss[0]
    assert win[1] == pytest.approx(loss[1]) and win[1] <= rd  # RD' does not depend on s
