"""Rating offsets between pools (the elo plugin's ``pool_field`` and ``pool_k``)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.plugins._matchup import davidson


def _league(params: str = 'pool_field = "pools"\npool_k = 10.0\n') -> rankcraft.League:
    return rankcraft.League(
        rankcraft.loads_ruleset(f'name = "t"\n[update]\nplugin = "elo"\n[update.params]\n{params}')
    )


def _match(mid: str, a: str, b: str, scores: list[float], pools: object) -> dict[str, object]:
    return {
        "id": mid,
        "played_at": "2024-01-01",
        "teams": [[a], [b]],
        "scores": scores,
        "meta": {"pools": pools},
    }


def _e(gap: float) -> float:
    return 1 / (1 + 10 ** (-gap / 400))


def test_offsets_by_hand() -> None:
    league = _league()
    # a (pool A) beats x (pool X), all at 1500 and offsets 0: E = 0.5, K 32, pool_k 10
    report = league.record(_match("m1", "a", "x", [1, 0], ["A", "X"]))
    assert report.expected[0] == 0.5
    a, x = league.player("a").skill, league.player("x").skill
    assert (a.rating, a.pool_offset, a.pool_updates) == (1516.0, 5.0, 1)
    assert (x.rating, x.pool_offset, x.pool_updates) == (1484.0, -5.0, 1)
    assert report.change("a").factors == {"k": 32.0, "pool_k": 10.0}
    # b, a newcomer of pool A, loses to a: one pool, so no offset in the gap (16 points),
    # and b takes a's offset (one update against none)
    report = league.record(_match("m2", "b", "a", [0, 1], ["A", "A"]))
    assert report.expected[0] == pytest.approx(_e(-16.0))
    b = league.player("b").skill
    assert b.rating == pytest.approx(1500 - 32 * _e(-16.0))
    assert (b.pool_offset, b.pool_updates) == (5.0, 1)
    # b (1484.74 + 5) against x (1484 - 5): the offsets add 10 points to b's side
    before = b.rating
    report = league.record(_match("m3", "b", "x", [0, 1], ["A", "X"]))
    e = _e(before + 5.0 - (1484.0 - 5.0))
    assert report.expected[0] == pytest.approx(e)
    assert round(e, 4) == 0.5154
    b, x = league.player("b").skill, league.player("x").skill
    assert b.rating == pytest.approx(before - 32 * e)
    assert b.pool_offset == pytest.approx(5.0 - 10 * e)
    assert x.pool_offset == pytest.approx(-5.0 + 10 * e)
    assert (b.pool_updates, x.pool_updates) == (2, 2)
    # a still carries its pool's older offset until it meets b, and then takes b's
    league.record(_match("m4", "a", "b", [0.5, 0.5], ["A", "A"]))
    assert league.player("a").skill.pool_offset == pytest.approx(5.0 - 10 * e)


def test_one_name_means_one_pool_and_a_missing_pool_means_none() -> None:
    league = _league()
    league.record(_match("m1", "a", "x", [1, 0], "A"))
    league.record(_match("m2", "b", "y", [1, 0], ["A", None]))
    league.record(_match("m3", "c", "z", [1, 0], None))
    league.record(_match("m4", "d", "w", [1, 0], ["A", "X", "Y"]))  # (not one per side)
    for player in "abcdxyzw":
        skill = league.player(player).skill
        assert (skill.pool_offset, skill.pool_updates) == (0.0, 0)
        assert abs(skill.rating - 1500.0) == 16.0


def test_state_documents_keep_the_offsets_and_bad_ones_are_refused() -> None:
    league = _league()
    league.record(_match("m1", "a", "x", [1, 0], ["A", "X"]))
    again = _league()
    again.import_state(league.export())
    assert again.player("a").skill == league.player("a").skill
    bad = {"players": [{"id": "a", "skill": {"rating": 1500.0, "pool_updates": -1}}]}
    with pytest.raises(rankcraft.RankcraftError, match="pool_updates"):
        _league().import_state(bad)
    with pytest.raises(rankcraft.RulesetError, match="pool_k"):
        _league('pool_field = "pools"\npool_k = -1.0\n')


_rating = st.floats(1000.0, 2000.0)
_offset = st.floats(-300.0, 300.0)
_score = st.sampled_from([[1, 0], [0, 1], [2, 2], [3, 1]])


def _pooled(rating: float, offset: float) -> dict[str, object]:
    """A whole pooled Elo state (an import takes no field left out)."""
    return {
        "rating": rating,
        "peak": rating,
        "contexts": [],
        "pool_offset": offset,
        "pool_updates": 3,
    }


def _pair(ra: float, oa: float, rb: float, ob: float) -> dict[str, object]:
    return {
        "players": [
            {"id": "a", "skill": _pooled(ra, oa)},
            {"id": "b", "skill": _pooled(rb, ob)},
        ]
    }


@settings(max_examples=60, deadline=None)
@given(_rating, _offset, _rating, _offset, _score, st.floats(0.0, 50.0))
def test_offset_updates_are_zero_sum(
    ra: float, oa: float, rb: float, ob: float, scores: list[float], pool_k: float
) -> None:
    league = _league(f'pool_field = "pools"\npool_k = {pool_k!r}\n')
    league.import_state(_pair(ra, oa, rb, ob))
    report = league.record(_match("m", "a", "b", scores, ["A", "B"]))
    assert report.expected[0] == pytest.approx(_e(ra + oa - rb - ob))
    a, b = league.player("a").skill, league.player("b").skill
    assert (a.pool_offset - oa) + (b.pool_offset - ob) == pytest.approx(0.0, abs=1e-9)
    s = 1.0 if scores[0] > scores[1] else 0.5 if scores[0] == scores[1] else 0.0
    assert a.pool_offset - oa == pytest.approx(pool_k * (s - report.expected[0]), abs=1e-9)
    assert math.isclose(a.rating - ra, 32 * (s - report.expected[0]), abs_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(_rating, _offset, _rating, _offset, _score)
def test_no_effect_within_one_pool(
    ra: float, oa: float, rb: float, ob: float, scores: list[float]
) -> None:
    pooled = _league()
    pooled.import_state(_pair(ra, oa, rb, ob))
    plain = rankcraft.League("elo")
    plain.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": ra, "peak": ra}},
                {"id": "b", "skill": {"rating": rb, "peak": rb}},
            ]
        }
    )
    match = _match("m", "a", "b", scores, ["A", "A"])
    assert pooled.record(match).expected == pytest.approx(plain.record(match).expected)
    for player, offset in (("a", oa), ("b", ob)):
        assert pooled.player(player).skill.rating == pytest.approx(
            plain.player(player).skill.rating
        )
        assert pooled.player(player).skill.pool_offset == offset  # (equal update counts)


def test_forecasts_without_a_match_add_the_carried_offsets() -> None:
    league = _league('pool_field = "pools"\npool_k = 10.0\ndraw = "davidson"\n')
    league.import_state(_pair(1500.0, 40.0, 1500.0, -20.0))
    win, draw, _ = davidson(60.0, 400.0, 0.5)  # a 40 + 20 point edge from the offsets
    p = win + draw / 2
    assert league.predict([["a"], ["b"]]) == pytest.approx([p, 1 - p])
    forecast = league.forecast([["a"], ["b"]])
    assert forecast.win is not None and forecast.draw is not None
    assert (forecast.win[0], forecast.draw) == pytest.approx((win, draw))
