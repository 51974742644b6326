"""ladder: points, promotions, demotions, series, grace, floors, placement, provisional,
pull, decay, soft and hard resets, the title; invariants over long random sequences; bad
params; replay and export/import through League."""

from __future__ import annotations

import doctest
import json
import random
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft import PlayerRecord, ResetContext
from rankcraft.forms import Form
from rankcraft.io import parse_match
from rankcraft.plugins import ladder
from rankcraft.plugins.ladder import (
    LadderParams,
    LadderRank,
    Placement,
    Tier,
    climb,
    decay,
    hard_reset,
    points_change,
    rank_at,
    soft_reset,
)

# Bronze II (0), Bronze I (1), Silver II (2, a floor), Silver I (3), Gold (4, best of 3)
TIERS = (
    Tier(name="Bronze", divisions=2),
    Tier(name="Silver", divisions=2, floor=True),
    Tier(name="Gold", series=3),
)
P = LadderParams(tiers=TIERS)

RULESET = """
name = "small"
[update]
plugin = "elo"
[rank]
plugin = "ladder"
[rank.params]
tiers = [
  {name = "Bronze", divisions = 2},
  {name = "Silver", divisions = 2, floor = true},
  {name = "Gold", series = 3},
]
"""


def small(extra: str = "", tail: str = "") -> rankcraft.Ruleset:
    """The small ladder with more ``[rank.params]`` keys, then more tables."""
    return rankcraft.loads_ruleset(RULESET + extra + '\n[reset]\nplugin = "ladder"\n' + tail)


def at(step: int, points: int, **kw: Any) -> LadderRank:
    return rank_at(P, step, points, **kw)


def game(i: int, a: str, b: str, score: float = 1.0, day: int = 1) -> dict[str, Any]:
    return {
        "id": f"g{i}",
        "played_at": f"2024-01-{day:02d}T12:00:00Z",
        "teams": [[a], [b]],
        "scores": [score, 1 - score],
    }


def test_the_module_examples_run() -> None:
    result = doctest.testmod(ladder)
    assert result.attempted > 0 and result.failed == 0


# -- points ---------------------------------------------------------------------------


def test_points_unscaled_and_draws() -> None:
    p = attrs.evolve(P, win_points=20.0, loss_points=15.0, draw_points=3.0)
    assert [points_change(p, s, 0.9) for s in (1.0, 0.5, 0.0)] == [20, 3, -15]
    # a three-sided match: second place (mean result 1/2 against the others) is a draw
    assert points_change(p, 2 / 3, None) == round(20 / 3)


def test_points_scaled_by_the_expectation() -> None:
    p = attrs.evolve(P, scale="expectation")
    # an upset (E = 0.25) wins 2 * 0.75 * 20, an expected win (E = 0.75) 2 * 0.25 * 20
    assert points_change(p, 1.0, 0.25) == 30
    assert points_change(p, 1.0, 0.75) == 10
    assert points_change(p, 0.0, 0.25) == -10
    assert points_change(p, 0.5, 0.25) == 10  # the weaker side's draw gains
    assert points_change(p, 1.0, None) == 20  # more than two sides: not scaled


def test_caps_and_rounding() -> None:
    p = attrs.evolve(P, scale="expectation", min_gain=5.0, max_gain=25.0, min_loss=4.0)
    assert points_change(p, 1.0, 0.95) == 5  # 2 would be below the least gain
    assert points_change(p, 1.0, 0.1) == 25  # 36 is capped
    assert points_change(p, 0.0, 0.02) == -4
    half = attrs.evolve(P, win_points=2.5, loss_points=2.5)
    assert (points_change(half, 1.0, 0.5), points_change(half, 0.0, 0.5)) == (3, -3)


def test_provisional_multiplier_and_weight_through_the_league() -> None:
    league = rankcraft.League(
        small("provisional_matches = 2\nprovisional_multiplier = 2.0\nwin_points = 10.0")
    )
    points = []
    for i in range(3):
        report = league.record(game(i, "ann", f"x{i}"))
        rank = report.change("ann").rank_after
        points.append((rank.points, rank.provisional))
    # matches 1 and 2 are provisional (x2), the flag clears after the second
    assert points == [(20, True), (40, False), (50, False)]
    short = game(9, "ann", "y") | {"weight": 0.5, "played_at": "2024-01-02T00:00:00Z"}
    assert league.record(short).change("ann").rank_after.points == 55


def test_pull_draws_the_rank_towards_the_skill() -> None:
    p = attrs.evolve(P, pull=5.0, pull_range=(1000.0, 2000.0))
    assert ladder.skill_step(p, 1500.0) == 2.0  # half-way up the 5 steps (0..4)
    assert ladder.skill_step(p, 3000.0) == 4.0
    assert points_change(p, 1.0, 0.5, gap=2.0) == 30
    assert points_change(p, 0.0, 0.5, gap=2.0) == -10
    assert points_change(p, 0.0, 0.5, gap=5.0) == 0  # a loss never gains
    assert points_change(p, 1.0, 0.5, gap=-5.0) == 0  # nor does a win cost


# -- promotions, demotions, grace, floors, series ---------------------------------------


def test_promotion_carries_the_extra_points_and_starts_grace() -> None:
    p = attrs.evolve(P, grace_games=2)
    factors: dict[str, float] = {}
    new = climb(p, rank_at(p, 0, 90), 1.0, 20, factors)
    assert (new.tier, new.division, new.points, new.step, new.grace) == ("Bronze", 1, 10, 1, 2)
    assert new.score == 1 * 101 + 10
    assert factors == {"change": 20.0, "promoted": 1.0}


def test_demotion_carries_the_deficit_or_sets_demotion_points() -> None:
    assert climb(P, at(1, 10), 0.0, -20) == at(0, 90, games=1)
    fixed = attrs.evolve(P, demotion_points=75)
    assert climb(fixed, rank_at(fixed, 1, 10), 0.0, -20).points == 75
    assert climb(P, at(0, 10), 0.0, -20) == at(0, 0, games=1)  # the ladder's bottom


def test_grace_games_stop_demotion_after_a_promotion() -> None:
    p = attrs.evolve(P, grace_games=2)
    rank = climb(p, rank_at(p, 0, 95), 1.0, 20)  # Bronze I, 15 points, 2 grace games
    rank = climb(p, rank, 0.0, -40)
    assert (rank.step, rank.points, rank.grace) == (1, 0, 1)
    rank = climb(p, rank, 0.0, -40)
    assert (rank.step, rank.points, rank.grace) == (1, 0, 0)
    rank = climb(p, rank, 0.0, -40)
    assert (rank.step, rank.points) == (0, 60)  # grace is spent


def test_a_floor_holds_at_its_tiers_first_step_only() -> None:
    factors: dict[str, float] = {}
    assert climb(P, at(2, 5), 0.0, -20, factors).points == 0  # Silver II: the floor
    assert factors["floor"] == 1.0
    assert (climb(P, at(3, 5), 0.0, -20).step, climb(P, at(3, 5), 0.0, -20).points) == (2, 85)


def test_series_into_gold_won() -> None:
    rank = climb(P, at(3, 90), 1.0, 20)  # Silver I reaches 100: the best of 3 starts
    assert (rank.points, rank.series_wins, rank.series_losses) == (100, 0, 0)
    assert P.in_series(rank.step, rank.points)
    rank = climb(P, rank, 1.0, 20)
    assert (rank.series_wins, rank.series_losses) == (1, 0)
    rank = climb(P, rank, 0.5, 0)  # a draw does not count
    rank = climb(P, rank, 0.0, -20)
    assert (rank.points, rank.series_wins, rank.series_losses) == (100, 1, 1)
    factors: dict[str, float] = {}
    rank = climb(P, rank, 1.0, 20, factors)
    assert (rank.tier, rank.step, rank.points, rank.series_wins) == ("Gold", 4, 0, 0)
    assert factors["promoted"] == 1.0 and rank.games == 5


def test_series_lost_sets_the_fail_points() -> None:
    p = attrs.evolve(P, series_fail_points=60)
    rank = rank_at(p, 3, 100)
    rank = climb(p, rank, 0.0, -20)
    rank = climb(p, rank, 0.0, -20)
    assert (rank.step, rank.points, rank.series_wins, rank.series_losses) == (3, 60, 0, 0)


def test_division_series_and_the_top_step_has_no_ceiling() -> None:
    p = LadderParams(tiers=[Tier(name="A", divisions=3, division_series=1), Tier(name="B")])
    rank = climb(p, rank_at(p, 0, 95), 1.0, 10)
    assert (rank.step, rank.points) == (0, 100)  # a best of 1 to reach A II
    assert climb(p, rank, 1.0, 10).step == 1
    assert climb(p, rank_at(p, 3, 990), 1.0, 20).points == 1010


def _tuple(rank: LadderRank) -> tuple[Any, ...]:
    return Form(LadderRank).to_tuple(rank)


def test_the_rank_hook_takes_and_gives_tuples() -> None:
    # contract 2: rank and skill states are tuples; the rating is read through ``layout``
    assert ladder.RANKCRAFT_CONTRACT == 2
    skill = {"rating": 0, "peak": 1, "location": 0}  # Elo's layout
    m = parse_match(game(0, "ann", "bo"))
    p = attrs.evolve(P, pull=4.0, pull_range=(1400.0, 1600.0), scale="expectation")
    context = rankcraft.PlayerContext(m, "ann", 0, 7, 0.25, 1.0, [])
    out = ladder.rankcraft_rank(
        p, _tuple(rank_at(p, 1, 90)), (1600.0, 1600.0), m, 0.25, 1.0, context, skill
    )
    assert type(out) is tuple
    # 2 (1 - 0.25) 20 = 30, plus pull 4 x (the top step 4 - step 1) = 12: 42, into Silver II
    assert out == _tuple(climb(p, rank_at(p, 1, 90), 1.0, 42))
    assert (out[ladder.STEP], out[ladder.POINTS]) == (2, 32)
    assert context.factors == {"gap": 3.0, "change": 42.0, "promoted": 1.0}
    placing = attrs.evolve(
        P, placement_matches=2, placement=[Placement(rating_at_least=1540.0, tier="Silver")]
    )
    context = rankcraft.PlayerContext(m, "ann", 0, 1, 0.5, 0.0, [])
    placed = ladder.rankcraft_rank(
        placing, _tuple(rank_at(placing, -1, 0, 1)), (1550.0, 1550.0), m, 0.5, 0.0, context, skill
    )
    assert placed == _tuple(rank_at(placing, 2, 0, 2))
    assert context.factors == {"placed": 2.0}


# -- placement -----------------------------------------------------------------------------


def test_placement_from_the_skill_rating() -> None:
    league = rankcraft.League(
        small(
            "placement_matches = 3\n"
            "placement = [{rating_at_least = 1540.0, tier = 'Silver', division = 1},"
            " {rating_at_least = 1510.0, tier = 'Bronze', division = 1}]"
        )
    )
    shown = []
    for i in range(3):
        report = league.record(game(i, "ann", f"new{i}"))
        change = report.change("ann")
        factors = {k: v for k, v in change.factors.items() if k != "k"}  # (Elo's K)
        shown.append((change.rank_after.tier, change.rank_after.score, factors))
    # Elo K 32: 1516, 1531.3, 1545.3 after three wins: placed in Silver I (step 3)
    assert shown[:2] == [("Unranked", -1, {"placement": 1.0}), ("Unranked", -1, {"placement": 2.0})]
    assert shown[2] == ("Silver", 303, {"placed": 3.0})
    losers = {league.player(f"new{i}").rank.tier for i in range(3)}
    assert losers == {"Unranked"}
    assert league.leaderboard()[0].id == "ann"


def test_below_every_placement_rule_is_the_bottom() -> None:
    league = rankcraft.League(
        small("placement_matches = 1\nplacement = [{rating_at_least = 1600.0, tier = 'Gold'}]")
    )
    league.record(game(0, "ann", "bo"))
    assert league.player("ann").rank.step == 0 and league.player("bo").rank.step == 0


# -- season events --------------------------------------------------------------------------


def _records(
    params: LadderParams, ranks: dict[str, LadderRank], last: str = "2024-01-01"
) -> list[PlayerRecord]:
    from rankcraft.io import parse_time

    return [
        PlayerRecord(id=pid, skill=None, rank=rank, matches=1, last_played=parse_time(last))
        for pid, rank in sorted(ranks.items())
    ]


def test_soft_reset_drops_or_maps_and_returns_changed_players_only() -> None:
    p = attrs.evolve(
        P,
        soft_drop=2,
        soft_points=10,
        soft_map=[ladder.SoftMap(tier="Gold", to="Silver", division=1)],
    )
    ranks = {
        "gold": rank_at(p, 4, 500),
        "silver1": rank_at(p, 3, 50),
        "bronze1": rank_at(p, 1, 70),
        "bottom": rank_at(p, 0, 40),
        "placing": rank_at(p, -1, 0, 2),
    }
    out = {r.id: r.rank for r in soft_reset(p, _records(p, ranks))}
    assert {k: (v.step, v.points) for k, v in out.items()} == {
        "gold": (3, 10),  # the map: Gold -> Silver I
        "silver1": (1, 10),  # two divisions down
        "bronze1": (0, 10),
    }  # the bottom step and the unranked player are unchanged, and not returned


def test_soft_reset_without_rules_is_refused() -> None:
    league = rankcraft.League(small())
    league.record(game(0, "a", "b"))
    with pytest.raises(rankcraft.InputError, match="'soft' reset needs 'soft_drop' or 'soft_map'"):
        league.reset("soft")
    with pytest.raises(
        rankcraft.InputError,
        match=r"'kind' must be an event the reset plugin "
        r"'ladder' runs \('soft', 'hard', 'decay'\): 'weekly'",
    ):
        league.reset("weekly")


def test_hard_reset_sends_everyone_back_to_placement() -> None:
    league = rankcraft.League(small("placement_matches = 2\nprovisional_matches = 3"))
    for i in range(3):
        league.record(game(i, "ann", "bo", day=i + 1))
    league.record(game(5, "cy", "dee", day=5))
    assert league.player("ann").rank.step == 0 and league.player("cy").rank.step == -1
    assert league.reset("hard") == 4
    ann = league.player("ann").rank
    assert (ann.tier, ann.step, ann.games, ann.provisional) == ("Unranked", -1, 0, True)
    assert league.reset("hard") == 0  # nobody left to change


def test_decay_on_a_schedule_after_the_grace_events() -> None:
    ruleset = small(
        "decay_from = 'Silver'\ndecay_points = 30\ndecay_grace = 1",
        "[[resets]]\nkind = 'decay'\nevery_days = 7.0\nstart = '2024-01-01'\n",
    )
    league = rankcraft.League(ruleset)
    params = ruleset.rank.params
    league.import_state(
        {
            "players": [
                {
                    "id": "top",
                    "skill": {"rating": 1500.0, "peak": 1500.0},
                    "rank": attrs.asdict(rank_at(params, 3, 20)),
                },
                {
                    "id": "low",
                    "skill": {"rating": 1500.0, "peak": 1500.0},
                    "rank": attrs.asdict(rank_at(params, 1, 20)),
                },
                {
                    "id": "busy",
                    "skill": {"rating": 1500.0, "peak": 1500.0},
                    "rank": attrs.asdict(rank_at(params, 4, 20)),
                },
            ]
        }
    )
    # events on Jan 8, 15, 22 run before this match (busy plays weekly: no decay for them)
    for day in (7, 14, 21):
        league.record(game(day, "busy", f"x{day}", day=day))
    league.record(game(29, "busy", "y", day=23))
    top = league.player("top").rank
    # Jan 8: idle 1 (grace); Jan 15: 20 - 30 -> Silver II 90; Jan 22: 60
    assert (top.tier, top.division, top.points, top.idle) == ("Silver", 2, 60, 1)
    assert league.player("low").rank.points == 20  # below Silver: never decays
    assert league.player("busy").rank.idle == 0


def test_decay_never_goes_below_the_decay_tier_and_ends_a_series() -> None:
    p = attrs.evolve(P, decay_from="Silver", decay_points=250)
    context = ResetContext(kind="decay", since=rankcraft.io.parse_time("2024-02-01"))
    out = decay(p, _records(p, {"s": rank_at(p, 3, 100, series=(1, 0))}), context)
    assert (out[0].rank.step, out[0].rank.points, out[0].rank.series_wins) == (2, 0, 0)
    again = decay(p, [attrs.evolve(out[0])], context)
    assert again == []  # at the floor of the decay: unchanged, so a catch-up can stop
    by_hand = ResetContext(kind="decay")  # knows no period: everyone counts as active
    assert decay(p, _records(p, {"s": rank_at(p, 3, 50)}), by_hand) == []


def test_reset_needs_the_ladder_in_the_rank_slot() -> None:
    ruleset = rankcraft.loads_ruleset(
        'name = "x"\n[update]\nplugin = "glicko1"\n[rank]\nplugin = "skyweaver-rp"\n'
        '[reset]\nplugin = "ladder"\n'
    )
    league = rankcraft.League(ruleset)
    with pytest.raises(rankcraft.InputError, match=r"\[rank\] slot must name the 'ladder'"):
        league.reset("hard")


# -- standings ---------------------------------------------------------------------------


def test_title_goes_to_the_top_n_from_its_tier_ties_by_id() -> None:
    p = attrs.evolve(P, title="Champion", title_top=2, title_from="Silver")
    ranks = {
        "a": rank_at(p, 4, 300),
        "b": rank_at(p, 2, 10),
        "c": rank_at(p, 2, 10),
        "d": rank_at(p, 1, 99),
        "e": rank_at(p, -1, 0, 1),
    }
    labels = ladder.rankcraft_standings(p, _records(p, ranks))
    assert labels == {
        "a": "Champion",
        "b": "Champion",
        "c": "Silver II",
        "d": "Bronze I",
        "e": "Unranked",
    }
    assert ladder.rankcraft_standings(P, _records(P, ranks))["a"] == "Gold"


# -- bad params ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("points_per_division = 0", "'points_per_division' must be >= 1: 0"),
        ("win_points = -1.0", "'win_points' must be a finite number in [0.0, 10000.0]: -1.0"),
        ("scale = 'elo'", "'scale' must be in ('none', 'expectation') (got 'elo')"),
        ("min_gain = 30.0\nmax_gain = 20.0", "'min_gain' must be <= 'max_gain' (20.0): 30.0"),
        (
            "demotion_points = 100",
            "'demotion_points' must be below 'points_per_division' (100): 100",
        ),
        ("series_fail_points = 100", "'series_fail_points' must be below"),
        ("placement_matches = 1001", "'placement_matches' must be <= 1000: 1001"),
        ("provisional_multiplier = nan", "'provisional_multiplier' must be a finite number"),
        ("pull_range = [2000.0, 1000.0]", "'pull_range' must be [low, high]"),
        ("unranked = 'Gold'", "'unranked' must not be a tier's name: 'Gold'"),
        (
            "decay_from = 'Iron'",
            "'decay_from' must name a tier of the ladder (Bronze, Silver, Gold): 'Iron'",
        ),
        (
            "title_from = 'Iron'",
            "'title_from' must name a tier of the ladder (Bronze, Silver, Gold): 'Iron'",
        ),
        ("placement = [{rating_at_least = 1.0, tier = 'Iron'}]", "'placement' must name a tier"),
        (
            "placement = [{rating_at_least = 1.0, tier = 'Bronze', division = 3}]",
            "tier 'Bronze' has 2 division(s), not 3",
        ),
        ("soft_map = [{tier = 'Bronze', to = 'Gold'}]", "would raise tier 'Bronze' to 'Gold'"),
        (
            "soft_map = [{tier = 'Gold', to = 'Bronze'}, {tier = 'Gold', to = 'Silver'}]",
            "'soft_map' maps tier 'Gold' twice",
        ),
        ("wins = 3", "unknown key(s) 'wins'"),
        ("grace_games = 1.5", "expected a whole number, got 1.5"),
    ],
)
def test_bad_params_are_refused_naming_the_field_and_value(table: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError) as info:
        rankcraft.loads_ruleset(RULESET + table + "\n")
    assert message in str(info.value) and "ruleset.rank.params" in str(info.value)


@pytest.mark.parametrize(
    ("tiers", "message"),
    [
        ("[]", "'tiers' must list at least one tier: []"),
        ("[{name = 'A'}, {name = 'A'}]", "'tiers' names each tier once: 'A' appears twice"),
        (
            "[{name = 'A', divisions = 0}]",
            "'divisions' must be >= 1: 0 @ ruleset.rank.params.tiers[0]",
        ),
        ("[{name = 'A', divisions = 21}]", "'divisions' must be <= 20: 21"),
        ("[{name = 'A', series = 2}]", "an odd best-of from 1 to 99: 2"),
        ("[{name = ''}]", "'name' must be a non-empty name of at most 100 characters: ''"),
        ("[{name = 'A'}, {name = 'B', points = 5}]", "unknown key(s) 'points'"),
    ],
)
def test_bad_tiers_are_refused(tiers: str, message: str) -> None:
    text = 'name = "x"\n[update]\nplugin = "elo"\n[rank]\nplugin = "ladder"\n[rank.params]\n'
    text += f"tiers = {tiers}\n"
    with pytest.raises(rankcraft.RulesetError) as info:
        rankcraft.loads_ruleset(text)
    assert message in str(info.value)


def test_the_reset_slot_takes_its_params_from_the_rank_slot() -> None:
    with pytest.raises(rankcraft.RulesetError, match="takes no params in slot 'reset'"):
        small(tail="[reset.params]\nsoft_drop = 1\n")


# -- invariants over long random sequences -----------------------------------------------------

LADDERS = [
    P,
    attrs.evolve(P, grace_games=2, demotion_points=75, series_fail_points=50, scale="expectation"),
    LadderParams(
        tiers=[
            Tier(name="A", divisions=3, division_series=3),
            Tier(name="B", divisions=2, series=5, floor=True),
            Tier(name="C", divisions=1, series=1, floor=True),
        ],
        points_per_division=50,
        win_points=35.0,
        loss_points=60.0,
        draw_points=-5.0,
        grace_games=1,
        soft_drop=2,
        decay_from="B",
        decay_points=70,
    ),
]


def check(params: LadderParams, rank: LadderRank) -> None:
    """The state invariants of a ranked player."""
    ppd = params.points_per_division
    assert 0 <= rank.step <= params.top and rank.points >= 0
    assert rank.score == rank.step * (ppd + 1) + rank.points
    assert params.label(rank.step).startswith(rank.tier)
    if rank.step < params.top:
        assert rank.points < ppd or (
            rank.points == ppd and params.in_series(rank.step, rank.points)
        )
    if params.in_series(rank.step, rank.points):
        best_of = params.series_at[rank.step + 1]
        need = best_of // 2 + 1
        assert rank.series_wins < need and rank.series_losses <= best_of - need
    else:
        assert rank.series_wins == rank.series_losses == 0


@settings(max_examples=15)
@given(
    st.sampled_from(LADDERS),
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.01, 0.99)),
        min_size=50,
        max_size=300,
    ),
    st.integers(0, 2**31),
)
def test_invariants_over_random_results(
    params: LadderParams, results: list[tuple[float, float]], seed: int
) -> None:
    rng = random.Random(seed)
    rank = rank_at(params, 0, 0)
    floor = 0
    for score, expected in results:
        before = rank
        change = points_change(params, score, expected, gap=rng.uniform(-3, 3))
        rank = climb(params, rank, score, change)
        check(params, rank)
        if score == 1.0:
            assert rank.score >= before.score
        elif score == 0.0:
            assert rank.score <= before.score
        assert rank.step >= floor  # a loss never passes a floor reached
        if params.floor_at[rank.step]:
            floor = max(floor, rank.step)
        if rng.random() < 0.05:  # a season event: never raises anyone
            records = _records(params, {"p": rank})
            since = rankcraft.io.parse_time("2024-06-01")  # p has not played since
            for event in (soft_reset, hard_reset):
                if event is soft_reset and not params.soft_drop:
                    continue
                for new in event(params, records):
                    assert new.rank.score <= rank.score
            for new in decay(params, records, ResetContext(kind="decay", since=since)):
                assert new.rank.score <= rank.score
                check(params, new.rank)
                rank = new.rank
                # decay may pass a floor: the one that holds now is the highest below
                floor = max(f for f in range(rank.step + 1) if f == 0 or params.floor_at[f])


# -- through the League ---------------------------------------------------------------------------


def history(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(8)]
    out = []
    for i in range(n):
        a, b = rng.sample(players, 2)
        strong = int(a[1:]) + rng.random() * 6 > int(b[1:]) + rng.random() * 6
        score = rng.choice([0.5, float(strong)]) if rng.random() < 0.1 else float(strong)
        day = 1 + i // 4
        out.append(
            {
                "id": f"m{i}",
                "played_at": f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T12:00:00Z",
                "teams": [[a], [b]],
                "scores": [score, 1 - score],
            }
        )
    return out


def test_replay_export_import_round_trip() -> None:
    matches = history(320)
    ruleset = small(
        "placement_matches = 3\nprovisional_matches = 6\ngrace_games = 1\nscale = 'expectation'\n"
        "decay_from = 'Silver'\ndecay_points = 20\nsoft_drop = 1\ntitle = 'Top'\ntitle_top = 2\n"
        "title_from = 'Bronze'\n"
        "placement = [{rating_at_least = 1520.0, tier = 'Silver'}]",
        "[[resets]]\nkind = 'decay'\nevery_days = 7.0\n"
        "[[resets]]\nkind = 'soft'\nevery_days = 30.0\n",
    )
    original = rankcraft.League(ruleset)
    original.record_many(matches[:200])
    document = json.loads(json.dumps(original.export()))
    assert document["players"][0]["rank"].keys() == {
        "tier", "division", "points", "step", "score", "games", "provisional",
        "series_wins", "series_losses", "grace", "idle",
    }  # fmt: skip
    copy = rankcraft.League(rankcraft.loads_ruleset(document["ruleset_toml"]))
    assert copy.ruleset == original.ruleset
    assert copy.import_state(document) == 8
    assert copy.export() == original.export()
    original.record_many(matches[200:])
    copy.record_many(matches[200:])
    assert copy.export() == original.export()
    assert copy.standings() == original.standings()
    params = ruleset.rank.params
    ranked = [p.rank for p in original.players() if p.rank.step >= 0]
    assert ranked and all(check(params, r) is None for r in ranked)
    board = [p.rank.score for p in original.leaderboard()]
    assert board == sorted(board, reverse=True)
    assert list(original.standings().values()).count("Top") == 2


def test_an_import_out_of_range_is_refused_and_changes_nothing() -> None:
    league = rankcraft.League(small())
    league.record(game(0, "a", "b"))
    before = league.export()
    bad = json.loads(json.dumps(before))
    bad["players"][0]["rank"]["points"] = -5
    with pytest.raises(rankcraft.StateError, match=r"'points' must be a finite number in .*: -5"):
        league.import_state(bad)
    assert league.export() == before


def test_the_bundled_ruleset_replays_and_orders_its_tiers() -> None:
    league = rankcraft.League("ladder")
    league.record_many(history(120))
    params = league.ruleset.rank.params
    assert [t.name for t in params.tiers] == [
        "Bronze",
        "Silver",
        "Gold",
        "Platinum",
        "Diamond",
        "Master",
    ]
    assert params.label(params.top) == "Master" and params.title == "Challenger"
    for p in league.players():
        if p.rank.step >= 0:
            check(params, p.rank)
        else:
            assert p.rank.games < params.placement_matches


def test_a_catch_up_decays_players_who_played_in_its_first_period() -> None:
    ruleset = small(
        "decay_from = 'Silver'\ndecay_points = 30",
        "[[resets]]\nkind = 'decay'\nevery_days = 7.0\nstart = '2024-01-01'\n",
    )
    league = rankcraft.League(ruleset)
    league.import_state(
        {
            "players": [
                {
                    "id": "ann",
                    "skill": {"rating": 1500.0, "peak": 1500.0},
                    "rank": attrs.asdict(rank_at(ruleset.rank.params, 3, 20)),
                }
            ]
        }
    )
    league.record(game(0, "ann", "x", day=3))  # ann plays in the week the first event closes
    league.record(game(1, "bo", "y", day=30))  # events of Jan 8 (ann active), 15, 22, 29
    # Jan 15: 40 -> 10, Jan 22: Silver II 80, Jan 29: 50
    assert (league.player("ann").rank.step, league.player("ann").rank.points) == (2, 50)
