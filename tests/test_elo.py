"""The elo plugin: published examples, K schedules, free-for-all, invariants."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.plugins.elo import EloParams, KByGames, KByRating, expected_score

from .conftest import bundled

# The "Ranking Systems" slides' table (ratingupdate.com's prints 96 and 98 for the last two,
# a slip): rating gap -> expected score, in %.
ELO_TABLE = [(0, 50), (100, 64), (200, 76), (300, 85), (400, 91), (500, 95), (600, 97)]


@pytest.mark.parametrize(("gap", "percent"), ELO_TABLE, ids=[f"gap{g}" for g, _ in ELO_TABLE])
def test_expected_score_table(gap: int, percent: int) -> None:
    assert round(100 * expected_score(1500.0 + gap, 1500.0)) == percent


def test_bob_and_alice_from_the_ranking_systems_slides(match) -> None:
    # Bob 1500 vs Alice 1900, K 32: the slides print +29, +13, -3 (E rounded to 0.09);
    # the exact E = 1/11 gives these.
    for score, change in ((1.0, 29.09), (0.5, 13.09), (0.0, -2.91)):
        league = rankcraft.League("elo")
        league.import_state(
            {
                "players": [
                    {"id": "bob", "skill": {"rating": 1500.0, "peak": 1500.0}},
                    {"id": "alice", "skill": {"rating": 1900.0, "peak": 1900.0}},
                ]
            }
        )
        report = league.record(match("g", "bob", "alice", scores=[score, 1 - score]))
        assert report.expected[0] == pytest.approx(1 / 11)
        bob = report.change("bob")
        assert bob.skill_after.rating - 1500.0 == pytest.approx(change, abs=0.005)
        assert bob.factors == {"k": 32.0}
        # Zero sum with one K for both.
        alice = report.change("alice")
        assert alice.skill_after.rating - 1900.0 == pytest.approx(-(bob.skill_after.rating - 1500))


def test_draw_counts_one_half(match) -> None:
    league = rankcraft.League("elo")
    league.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": 1600.0, "peak": 1600.0}},
                {"id": "b", "skill": {"rating": 1400.0, "peak": 1400.0}},
            ]
        }
    )
    league.record(match("d", "a", "b", scores=[2, 2]))
    e = expected_score(1600.0, 1400.0)
    assert league.player("a").skill.rating == pytest.approx(1600 + 32 * (0.5 - e))


def test_fide_schedule() -> None:
    params = rankcraft.load_ruleset("elo-fide").update.params
    assert params.k_for(games=0, rating=1500, peak=1500) == 40.0
    assert params.k_for(games=29, rating=2500, peak=2500) == 40.0
    assert params.k_for(games=30, rating=2399.9, peak=2399.9) == 20.0
    assert params.k_for(games=30, rating=2400.0, peak=2400.0) == 10.0
    # Once 2400 was reached, K stays 10 even below it (FIDE).
    assert params.k_for(games=100, rating=2350.0, peak=2410.0) == 10.0
    current = EloParams(
        k_factor=20.0,
        k_by_rating=(KByRating(rating_at_least=2400.0, k=10.0),),
        k_rating_uses_peak=False,
    )
    assert current.k_for(games=100, rating=2350.0, peak=2410.0) == 20.0


def test_schedule_rules_are_ordered() -> None:
    params = EloParams(
        k_factor=10.0,
        k_by_games=(KByGames(games_below=50, k=20.0), KByGames(games_below=10, k=40.0)),
        k_by_rating=(
            KByRating(rating_at_least=2000.0, k=15.0),
            KByRating(rating_at_least=2500.0, k=5.0),
        ),
    )
    assert [params.k_for(g, 1500.0, 1500.0) for g in (0, 9, 10, 49, 50)] == [40, 40, 20, 20, 10]
    assert [params.k_for(60, r, r) for r in (1999.0, 2000.0, 2499.0, 2500.0)] == [10, 15, 15, 5]


def test_schedule_applies_in_a_league(match) -> None:
    league = rankcraft.League("elo-fide")
    reports = [league.record(match(f"m{i}", "new", "old", day=1 + i // 3)) for i in range(31)]
    assert [r.change("new").factors["k"] for r in reports[:30]] == [40.0] * 30
    assert reports[30].change("new").factors["k"] == 20.0
    assert league.player("new").skill.peak == max(
        r.change("new").skill_after.rating for r in reports
    )


def test_free_for_all_expectation_is_round_robin_share() -> None:
    league = rankcraft.League("elo")
    league.import_state(
        {
            "players": [
                {"id": p, "skill": {"rating": r, "peak": r}}
                for p, r in (("a", 1700.0), ("b", 1500.0), ("c", 1300.0))
            ]
        }
    )
    # the expectation hook (kept in match reports); League.predict gives P(finishing first)
    tuple_form = league._steps.skill_form.to_tuple  # (hooks take states as tuples)
    p = league._steps.predict([tuple_form(league.player(x).skill) for x in "abc"], None)
    e = expected_score
    assert p[0] == pytest.approx((e(1700, 1500) + e(1700, 1300)) / 3)
    assert p[2] == pytest.approx((e(1300, 1700) + e(1300, 1500)) / 3)
    assert sum(p) == pytest.approx(1.0)
    assert p[0] > p[1] > p[2]


def test_free_for_all_ranks_update_every_pair(match) -> None:
    league = rankcraft.League("elo")
    report = league.record(match("race", "a", "b", "c", "d", ranks=[2, 1, 3, 3]))
    ratings = {c.player: c.skill_after.rating for c in report.changes}
    # All start at 1500: each pair is worth 16 to the winner; a tie is worth nothing.
    assert ratings == pytest.approx({"b": 1548.0, "a": 1516.0, "c": 1468.0, "d": 1468.0})


def _plain_elo(matches: list[tuple[int, int, float]], k: float = 32.0) -> dict[int, float]:
    ratings: dict[int, float] = {}
    for a, b, s in matches:
        ra, rb = ratings.get(a, 1500.0), ratings.get(b, 1500.0)
        d = k * (s - 1 / (1 + 10 ** ((rb - ra) / 400)))
        ratings[a], ratings[b] = ra + d, rb - d
    return ratings


@given(st.integers(0, 2**32 - 1), st.integers(2, 12), st.integers(50, 400))
def test_long_random_sequences(seed: int, n_players: int, n_matches: int) -> None:
    rng = random.Random(seed)
    league = rankcraft.League(bundled("elo"))  # (the ruleset loaded once: conftest)
    plain = []
    for i in range(n_matches):
        a, b = rng.sample(range(n_players), 2)
        s = rng.choice([0.0, 0.5, 1.0])
        plain.append((a, b, s))
        report = league.record(
            {
                "id": str(i),
                "played_at": "2024-01-01",
                "teams": [[str(a)], [str(b)]],
                "scores": [s, 1 - s],
            }
        )
        assert all(0.0 <= p <= 1.0 for p in report.expected)
        assert math.fsum(report.expected) == pytest.approx(1.0)
    expected = _plain_elo(plain)
    total = 0.0
    for pid, rating in expected.items():
        got = league.player(str(pid)).skill.rating
        assert math.isfinite(got)
        assert got == pytest.approx(rating, abs=1e-9)
        total += got
    # Constant K in 1-v-1 is zero-sum.
    assert total == pytest.approx(1500.0 * len(expected), abs=1e-6)


@given(st.floats(-5000, 5000), st.floats(-5000, 5000))
def test_expected_scores_are_complementary(a: float, b: float) -> None:
    p = expected_score(a, b)
    assert 0.0 <= p <= 1.0
    assert p + expected_score(b, a) == pytest.approx(1.0)
