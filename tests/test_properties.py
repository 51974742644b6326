"""Invariants of every bundled ruleset over long random match sequences (hypothesis).

No NaN or infinity ever; every bound holds after every match; a single 1-v-1 win never
lowers a Glicko rating and a loss never raises it; predictions sum to 1 and swap when the
sides swap; the order of players inside a side changes nothing.
"""

from __future__ import annotations

import functools
import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.ruleset import bundled_names

from .conftest import bundled

EXTRA = {
    "glicko2-batch": 'name = "g2-batch"\n[period]\nmode = "batch"\nlength_days = 3.0\n'
    '[update]\nplugin = "glicko2"\n[update.params]\nbounded = true\n'
    '[team]\nplugin = "composite-opponent"\n',
    "glicko2-live": 'extends = "inversus"\nname = "inversus-live"\n[period]\nmode = "live"\n'
    "length_days = 3.0\n",
    "glicko1-individual": 'extends = "skyweaver"\nname = "s-ind"\n[team]\nplugin = "individual"\n',
}
RULESETS = [*bundled_names(), *EXTRA]


def sides_for(ruleset: rankcraft.Ruleset) -> int:
    """The wager system and the goals model rate two-sided matches only (with scores)."""
    return 2 if ruleset.update.plugin in ("wager", *RATES_GOALS) else 3


@functools.cache
def load(name: str) -> rankcraft.Ruleset:
    """The ruleset ``name``, loaded once per process (conftest's ``bundled``: a league per
    example must not build a plugin manager per example)."""
    return rankcraft.loads_ruleset(EXTRA[name]) if name in EXTRA else bundled(name)


def history(seed: int, n: int, max_sides: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(rng.randint(4, 12))]
    at = datetime(2024, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        at += timedelta(
            seconds=rng.choice([0, 60, 3600, 86400, 86400 * 9, 86400 * 200]) * rng.random()
        )
        sides = 3 if rng.random() < 0.1 and max_sides > 2 else 2
        size = rng.choice([1, 1, 1, 2, 3])
        chosen = rng.sample(players, min(len(players), sides * size))
        teams = [chosen[k::sides] for k in range(sides)]
        match: dict[str, Any] = {"id": f"m{i}", "played_at": at.isoformat(), "teams": teams}
        if sides == 2:
            match["scores"] = [rng.choice([0, 1, 2]), rng.choice([0, 1, 2])]
        else:
            match["ranks"] = [rng.randint(1, 3) for _ in range(sides)]
        if rng.random() < 0.05:
            match["quit"] = [chosen[0]]
        out.append(match)
    return out


def check_state(ruleset: rankcraft.Ruleset, state: Any) -> None:
    for field in attrs.fields(type(state)):
        value = getattr(state, field.name)
        if isinstance(value, float):
            assert math.isfinite(value), (field.name, value)
    params = ruleset.update.params
    if ruleset.update.plugin == "glicko2" and params.bounded:
        assert params.rating_bounds[0] <= state.mu <= params.rating_bounds[1]
        assert params.deviation_bounds[0] <= state.phi <= params.deviation_bounds[1]
        assert params.volatility_bounds[0] <= state.sigma <= params.volatility_bounds[1]
    if ruleset.update.plugin == "glicko1":
        assert params.min_deviation - 1e-9 <= state.deviation <= params.ceiling + 1e-9
    if ruleset.update.plugin == "wager":
        assert state.rank >= params.floor and round(state.rank, 2) == state.rank


def check_season_events(league: rankcraft.League) -> None:
    """Skyweaver's soft and hard resets keep their promises on any league."""
    params = league.ruleset.reset.params
    before = {p.id: p.rank.points for p in league.players()}
    top = {pid for pid, label in league.standings().items() if label == "Grandweaver"}
    league.reset("soft")
    for p in league.players():
        cap = params.grandweaver_cap if p.id in top else params.master_cap
        expected = min(before[p.id], cap) if before[p.id] >= 1200 else before[p.id]
        assert p.rank.points == expected and p.rank.weekly[-1] == before[p.id]
    ratings = [p.skill.rating for p in league.players()]
    league.reset("hard")
    after = league.players()
    if len(set(ratings)) > 1:
        assert min(p.skill.rating for p in after) == pytest.approx(params.reset_rating)
        assert max(p.skill.rating for p in after) == pytest.approx(
            params.reset_rating + params.span
        )
    for p in after:
        assert p.skill.deviation == params.reset_deviation
        assert p.rank.floor == max(f for f in (200, 300, 600, 900, 1200) if f <= p.rank.points)
        assert p.rank.weekly == () and p.rank.seasons


LOCATION = {
    "elo": "rating",
    "glicko1": "rating",
    "glicko2": "mu",
    "wager": "rank",
    "wenglin": "mu",
    "trueskill": "mu",
    "ttt": "mu",
    "goals": "rating",
    "goals_fit": "rating",
}
RATES_GOALS = ("goals", "goals_fit")
"""Update plugins whose rating follows the goals, not the result: a 1-0 win where a rout
was expected lowers it (docs/goals.md), so the win/loss direction is not checked."""


def check_rank(
    ruleset: rankcraft.Ruleset, change: rankcraft.PlayerChange, score: float | None, quit: bool
) -> None:
    """The rank layers' invariants for one player's change (score: 1-v-1 result or None)."""
    if ruleset.rank is None or change.rank_after is None:
        return
    before, after = change.rank_before, change.rank_after
    if ruleset.rank.plugin == "inversus-rp":
        assert 0.0 <= after.points <= ruleset.rank.params.max_points
        if score == 1.0 and not quit:
            assert after.points >= before.points
        elif score == 0.0:
            assert after.points <= before.points
    if ruleset.rank.plugin == "skyweaver-rp":
        assert isinstance(after.points, int) and after.points >= 0
        assert after.points >= after.floor >= before.floor  # never below a hard floor
        assert after.floor in (200, 300, 600, 900, 1200)
        if score == 1.0:
            assert after.points >= before.points


@pytest.mark.parametrize("name", RULESETS)
@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 120))
def test_invariants_over_random_histories(name: str, seed: int, n: int) -> None:
    ruleset = load(name)
    league = rankcraft.League(ruleset)
    location = LOCATION[ruleset.update.plugin]
    for data in history(seed, n, sides_for(ruleset)):
        report = league.record(data)
        assert all(0.0 <= p <= 1.0 for p in report.expected)
        assert math.fsum(report.expected) == pytest.approx(1.0)
        for change in report.changes:
            check_state(ruleset, change.skill_after)
            check_state(ruleset, change.skill_used)
            sides = data["teams"]
            score = None
            if len(sides) == 2 and data["scores"][0] != data["scores"][1]:
                mine = data["scores"][change.side]
                score = 1.0 if mine > data["scores"][1 - change.side] else 0.0
            check_rank(ruleset, change, score, change.player in data.get("quit", ()))
        one_v_one = len(data["teams"]) == 2 and all(len(s) == 1 for s in data["teams"])
        if (
            one_v_one
            and ruleset.period.mode != "batch"
            and not data.get("quit")
            and ruleset.update.plugin not in RATES_GOALS
        ):
            for change in report.changes:
                mine, theirs = data["scores"][change.side], data["scores"][1 - change.side]
                before = getattr(change.skill_used, location)
                after = getattr(change.skill_after, location)
                if ruleset.period.mode == "live":
                    continue  # the whole open period is re-rated: compare per period
                if mine > theirs:
                    assert after >= before - 1e-12
                elif mine < theirs:
                    assert after <= before + 1e-12
    league.close_period()
    if ruleset.reset is not None and ruleset.reset.plugin == "skyweaver-rp":
        check_season_events(league)
    ids = [p.id for p in league.players()]
    rng = random.Random(seed)
    for _ in range(5):
        a, b = rng.sample(ids, 2)
        p = league.predict([[a], [b]])
        q = league.predict([[b], [a]])
        assert math.fsum(p) == pytest.approx(1.0)
        assert p == pytest.approx(q[::-1])
    for record in league.players():
        check_state(ruleset, record.skill)


@pytest.mark.parametrize("name", RULESETS)
@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1))
def test_order_inside_a_side_changes_nothing(name: str, seed: int) -> None:
    games = history(seed, 60, sides_for(load(name)))
    shuffled = []
    rng = random.Random(seed + 1)
    for data in games:
        copy = dict(data)
        copy["teams"] = [rng.sample(side, len(side)) for side in data["teams"]]
        shuffled.append(copy)
    first, second = rankcraft.League(load(name)), rankcraft.League(load(name))
    first.record_many(games)
    second.record_many(shuffled)
    for a, b in zip(first.players(), second.players(), strict=True):
        assert a.id == b.id
        for field in attrs.fields(type(a.skill)):
            assert getattr(a.skill, field.name) == pytest.approx(
                getattr(b.skill, field.name), rel=1e-9, abs=1e-12
            )
