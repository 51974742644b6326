"""The mean team plugin: a side plays as the mean of its members."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.plugins._team import combine_spread
from rankcraft.plugins.elo import expected_score


def _league(ratings: dict[str, float], ruleset: str = "elo") -> rankcraft.League:
    league = rankcraft.League(ruleset)
    league.import_state(
        {"players": [{"id": p, "skill": {"rating": r, "peak": r}} for p, r in ratings.items()]}
    )
    return league


def test_each_member_gets_the_sides_change(match) -> None:
    league = _league({"a1": 1600.0, "a2": 1400.0, "b1": 1700.0, "b2": 1500.0})
    report = league.record(match("t", ["a1", "a2"], ["b1", "b2"], scores=[1, 0]))
    side_change = 32 * (1 - expected_score(1500.0, 1600.0))
    assert report.expected[0] == pytest.approx(expected_score(1500.0, 1600.0))
    for pid, start in (("a1", 1600.0), ("a2", 1400.0)):
        assert league.player(pid).skill.rating == pytest.approx(start + side_change)
    for pid, start in (("b1", 1700.0), ("b2", 1500.0)):
        assert league.player(pid).skill.rating == pytest.approx(start - side_change)


def test_unequal_team_sizes(match) -> None:
    league = _league({"a": 1800.0, "b1": 1500.0, "b2": 1500.0, "b3": 1600.0})
    report = league.record(match("t", ["a"], ["b1", "b2", "b3"], scores=[0, 1]))
    p = expected_score(1800.0, (1500 + 1500 + 1600) / 3)
    assert report.expected[0] == pytest.approx(p)
    assert league.player("a").skill.rating == pytest.approx(1800 - 32 * p)
    for pid in ("b1", "b2", "b3"):
        assert report.change(pid).skill_after.rating - report.change(pid).skill_before.rating == (
            pytest.approx(32 * p)
        )


def test_split_weight_over_opposing_sides(match) -> None:
    text = rankcraft.dumps_ruleset(rankcraft.load_ruleset("elo")).replace(
        'opponent_weight = "full"', 'opponent_weight = "split"'
    )
    league = rankcraft.League(rankcraft.loads_ruleset(text))
    report = league.record(match("r", "a", "b", "c", ranks=[1, 2, 3]))
    assert report.change("a").skill_after.rating == pytest.approx(1516.0)
    assert report.change("b").skill_after.rating == pytest.approx(1500.0)


@pytest.mark.parametrize(
    ("mode", "value"), [("mean", 200.0), ("rms", (50_000) ** 0.5), ("max", 300.0)]
)
def test_spread_modes(mode: str, value: float) -> None:
    assert combine_spread([100.0, 300.0], mode) == pytest.approx(value)


@given(st.lists(st.floats(0.0, 1000.0), min_size=1, max_size=20))
def test_spread_modes_are_ordered(values: list[float]) -> None:
    mean, rms, top = (combine_spread(values, m) for m in ("mean", "rms", "max"))
    assert mean <= rms * (1 + 1e-12) + 1e-12
    assert rms <= top * (1 + 1e-12) + 1e-12


def test_a_shifted_state_is_a_copy_whatever_its_class() -> None:
    """``shifted`` copies a slotted attrs state field by field, and any other (a class
    with a ``__dict__``, a cached hash, a subclass adding fields) whole: the copy equals
    the state but for its location, and the state is left alone."""
    import attrs

    from rankcraft.model import shifted
    from rankcraft.plugins.elo import EloSkill

    @attrs.frozen(slots=False)
    class WithDict:
        mu: float
        note: str = "x"

    @attrs.frozen(cache_hash=True)
    class Hashed:
        mu: float
        sigma: float = 2.0

    @attrs.frozen(slots=False, cache_hash=True)
    class HashedDict:
        mu: float

    @attrs.frozen
    class Extra(EloSkill):
        streak: float = 3.0

    for state, location in (
        (EloSkill(rating=1500.0, peak=1600.0), "rating"),
        (WithDict(1.0), "mu"),
        (Hashed(1.0), "mu"),
        (HashedDict(1.0), "mu"),
        (Extra(rating=1500.0, peak=1500.0), "rating"),
    ):
        hash(state)  # (a cached hash, if the class keeps one, is the state's own)
        before = attrs.asdict(state)
        out = shifted(state, location, 7.0)
        assert type(out) is type(state) and out is not state
        assert attrs.asdict(out) == {**before, location: 7.0}
        assert attrs.asdict(state) == before
        assert out == attrs.evolve(state, **{location: 7.0})
        assert hash(out) == hash(attrs.evolve(state, **{location: 7.0}))


def test_a_shifted_opponent_past_the_rating_range_is_read_back(tmp_path: Path) -> None:
    """In a batch rating period the team's shifted opponents wait in the pending
    pairings; one past the range a stored rating may hold (a member far from their
    side's mean) is read back from a database and an export, while any other fault of a
    pending opponent is still refused naming it."""
    text = rankcraft.dumps_ruleset(rankcraft.load_ruleset("glicko1"))
    ruleset = rankcraft.loads_ruleset(text.replace('mode = "match"', 'mode = "batch"'))
    ratings = {"a": 999_000.0, "b": -999_000.0, "c": 999_000.0, "d": 999_000.0}
    document = {
        "players": [
            {
                "id": p,
                "skill": {"rating": r, "deviation": 350.0},
                "matches": 1,
                "last_played": "2024-01-01T00:00:00Z",
            }
            for p, r in ratings.items()
        ]
    }
    game = {
        "id": "m1",
        "played_at": "2024-01-02",
        "teams": [["a", "b"], ["c", "d"]],
        "scores": [1, 0],
    }
    path = tmp_path / "l.sqlite"
    with rankcraft.League.open(path, ruleset) as league:
        league.import_state(document)
        league.record(game)
    with rankcraft.League.open(path) as league:
        (pending,) = league.player("a").pending
        assert pending.opponent.rating == 1_998_000.0  # (c at a's rating plus c - mean)
        exported = league.export()
    again = rankcraft.League(ruleset)
    again.import_state(exported)
    assert again.player("a").pending == (pending,)
    a = next(p for p in exported["players"] if p["id"] == "a")
    for bad, message in (
        ({"rating": 1_998_000.0, "deviation": -1.0}, r"deviation"),
        ({"rating": float("nan"), "deviation": 350.0}, r"rating"),
        ({"rating": "high", "deviation": 350.0}, r"rating"),
    ):
        a["open"]["pending"][0][0] = bad
        with pytest.raises(rankcraft.StateError, match=message):
            rankcraft.League(ruleset).import_state(exported)
