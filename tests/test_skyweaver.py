"""skyweaver-rp: Rank Points, tiers, floors, soft and hard resets, migration (the white paper)."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft.plugins.skyweaver import (
    SkyweaverParams,
    SkyweaverRp,
    hard_floor,
    migrate_from_elo,
    rp_after,
    tier_of,
)

P = SkyweaverParams(f_min=0.25, b_min=5.0, b_max=20.0, a=10.0)


def rank(points: int, streak: int = 0) -> SkyweaverRp:
    return SkyweaverRp(points, tier_of(points), hard_floor(points), streak)


def test_eq_4_terms_with_the_bias() -> None:
    # At RP 200: F = (1000/1750) * 0.25, B = b_max (the formula's b_max is at 200).
    new = rp_after(P, rank(200), 100.0, 1.0)
    assert new.points == round(200 + 100 * 1000 / 1750 * 0.25 + 20)
    # From RP 1200: F = 1000/1750, B = b_min.
    assert rp_after(P, rank(1300), 35.0, 1.0).points == 1300 + 20 + 5
    # A loss: no bias, no streak bonus.
    assert rp_after(P, rank(700), -70.0, 0.0).points == round(700 - 70 * 1000 / 1750 * 0.625)


def test_streak_bonus_only_on_a_third_win() -> None:
    assert rp_after(P, rank(200, streak=1), 0.0, 1.0).points == 220
    third = rp_after(P, rank(200, streak=2), 0.0, 1.0)
    assert third.points == 230 and third.streak == 3
    assert rp_after(P, rank(400, streak=5), -1.0, 0.0).streak == 0


def test_draw_moves_by_the_mmr_change_only() -> None:
    assert rp_after(P, rank(700), 17.5, 0.5).points == 700 + 6


def test_rounding_half_up() -> None:
    # 1000/1750 * 0.625 * 7 = 2.5 exactly -> 703 (half up), not 702
    assert rp_after(P, rank(700), 7.0, 0.5).points == 703


def test_hard_floor_holds_within_a_season() -> None:
    expert = rank(905)
    assert expert.floor == 900
    assert rp_after(P, expert, -300.0, 0.0).points == 900
    assert rp_after(P, rank(899), -1000.0, 0.0).points == 600


@pytest.mark.parametrize(
    ("points", "tier"),
    [
        (200, "Wanderer"),
        (299, "Wanderer"),
        (300, "Trainee I"),
        (650, "Apprentice I"),
        (1100, "Expert III"),
        (1500, "Master"),
    ],
)
def test_table_1_tiers(points: int, tier: str) -> None:
    assert tier_of(points) == tier


def _league(players: list[dict[str, Any]]) -> rankcraft.League:
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            'extends = "skyweaver"\nname = "sw"\nresets = []\n[rank.params]\ntop_n = 2\n'
            '[reset.params]\ntop_n = 2\nequal_mmr = "error"\n'
        )
    )
    league.import_state({"players": players})
    return league


def _player(
    pid: str,
    points: int,
    rating: float = 1500.0,
    deviation: float = 100.0,
    weekly: tuple[int, ...] = (),
) -> dict[str, Any]:
    return {
        "id": pid,
        "skill": {"rating": rating, "deviation": deviation},
        "rank": {
            "points": points,
            "tier": tier_of(points),
            "floor": hard_floor(points),
            "streak": 0,
            "weekly": list(weekly),
            "seasons": [],
        },
    }


def test_grandweaver_is_the_top_n_masters_ties_by_id() -> None:
    league = _league(
        [_player("m1", 1350), _player("m2", 1350), _player("m3", 1500), _player("x", 1100)]
    )
    standings = league.standings()
    assert standings == {
        "m3": "Grandweaver",
        "m1": "Grandweaver",
        "m2": "Master",
        "x": "Expert III",
    }


def test_weekly_soft_reset_caps() -> None:
    league = _league(
        [
            _player("gw", 1600),
            _player("gw2", 1350),
            _player("master", 1350),
            _player("ex", 1150, deviation=100.0),
        ]
    )
    assert league.reset("soft") == 4
    points = {p.id: p.rank.points for p in league.players()}
    assert points == {"gw": 1400, "gw2": 1350, "master": 1300, "ex": 1150}
    assert league.player("gw").rank.weekly == (1600,)
    # one rating period of RD growth, c = 20
    assert league.player("ex").skill.deviation == pytest.approx((100**2 + 20**2) ** 0.5)


def test_monthly_hard_reset_eq_5_and_floors() -> None:
    league = _league(
        [
            _player("gw", 1600, 2400.0, weekly=(1500, 1700)),
            _player("gw2", 1350, 2000.0),
            _player("master", 1250, 1800.0),
            _player("ex", 950, 1600.0),
            _player("low", 200, 1200.0),
        ]
    )
    league.reset("hard")
    p = {r.id: r for r in league.players()}
    assert p["low"].skill.rating == 1500.0 and p["gw"].skill.rating == 1500.0 + 750.0
    assert p["ex"].skill.rating == pytest.approx(1500 + (1600 - 1200) / 1200 * 750)
    assert {r.skill.deviation for r in p.values()} == {350.0}
    assert {k: r.rank.points for k, r in p.items()} == {
        "gw": 1000,
        "gw2": 1000,
        "master": 900,
        "ex": 600,
        "low": 200,
    }
    assert p["master"].rank.floor == 900 and p["master"].rank.tier == "Expert I"
    assert p["gw"].rank.seasons == (("Grandweaver", 1600.0),)  # mean of end-of-week RP
    assert p["ex"].rank.seasons == (("Expert I", 950.0),)
    assert p["gw"].rank.weekly == ()


def test_hard_reset_span_and_equal_mmr() -> None:
    league = _league([_player("a", 300, 1500.0), _player("b", 300, 1500.0)])
    with pytest.raises(rankcraft.InputError, match="same MMR"):
        league.reset("hard")
    prose = rankcraft.loads_ruleset(
        'extends = "skyweaver"\nname = "p"\n[reset.params]\nspan = 500.0\n'
    )
    league = rankcraft.League(prose)
    league.import_state({"players": [_player("a", 300, 1000.0), _player("b", 300, 3000.0)]})
    league.reset("hard")
    assert [r.skill.rating for r in league.players()] == [1500.0, 2000.0]


def test_unknown_reset_kind() -> None:
    with pytest.raises(rankcraft.InputError, match=r"runs \('soft', 'hard'\): 'weekly'"):
        _league([_player("a", 300)]).reset("weekly")


def test_migration_from_an_elo_export() -> None:
    elo = rankcraft.League("elo")
    elo.import_state(
        {
            "players": [
                {"id": "gm", "skill": {"rating": 2300.0, "peak": 2300.0}},
                {"id": "m", "skill": {"rating": 2100.0, "peak": 2100.0}},
                {"id": "new", "skill": {"rating": 1400.0, "peak": 1400.0}},
            ]
        }
    )
    document = migrate_from_elo(elo.export(), {"gm": "Grandmaster", "m": "Master"})
    league = rankcraft.League("skyweaver")
    league.import_state(document)
    gm, m, new = league.player("gm"), league.player("m"), league.player("new")
    assert (gm.skill.rating, gm.skill.deviation, gm.rank.points) == (2300.0, 350.0, 1200)
    assert gm.rank.tier == "Master"  # Table 2 says Grandweaver; that needs the leaderboard
    assert (m.rank.points, m.rank.tier) == (1100, "Expert III")  # Table 2 says Master
    assert new.rank.points == 200
    with pytest.raises(rankcraft.InputError, match="unknown old ranking 'Sage'"):
        migrate_from_elo(elo.export(), {"gm": "Sage"})


def test_rd_grows_once_per_week_with_the_schedule() -> None:
    league = rankcraft.League("skyweaver")
    league.record(
        {"id": "m1", "played_at": "2024-05-01T00:00:00Z", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    rd = league.player("a").skill.deviation
    report = league.record(
        {"id": "m2", "played_at": "2024-05-08T12:00:00Z", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    # one soft reset (2024-05-08T00:00) grew RD by one period of c = 20; the match did not
    assert report.change("a").skill_used.deviation == pytest.approx(math.sqrt(rd**2 + 20**2))


def test_a_rank_of_points_only_is_refused_and_the_class_derives_tier_and_floor() -> None:
    # issue 31: an import invents nothing, so a rank given as points only is refused,
    # naming what is missing (issue 15 had the import derive them)
    league = rankcraft.League("skyweaver")
    players: list[dict[str, Any]] = [
        {"id": "x", "skill": {"rating": 2500.0, "deviation": 350.0}, "rank": {"points": 905}},
        {"id": "y", "skill": {"rating": 1000.0, "deviation": 30.0}},
    ]
    with pytest.raises(
        rankcraft.StateError,
        match=r"players\[0\] 'x'.rank: 'tier', 'floor', 'streak', 'weekly', 'seasons' are missing",
    ):
        league.import_state({"players": players})
    assert len(league) == 0
    # the state class, in code, takes the tier and hard floor of the points
    players[0]["rank"] = attrs.asdict(SkyweaverRp(905))
    league.import_state({"players": players})
    imported = league.player("x").rank
    assert (imported.points, imported.tier, imported.floor) == (905, "Expert I", 900)
    # a heavy loss (MMR -701, F 0.445: RP 905 - 312 = 593) stops at the 900 floor
    report = league.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["x"], ["y"]], "scores": [0, 1]}
    )
    change = report.change("x")
    assert change.factors["mmr_change"] == pytest.approx(-701.34, abs=0.01)
    assert change.rank_after.points == 900
    assert change.factors["floor"] == 900.0
    assert league.player("x").rank == SkyweaverRp(900, "Expert I", 900, 0)
    # a given tier and floor are kept as given
    assert SkyweaverRp(905, "Expert I", 600).floor == 600
    assert SkyweaverRp(1250).tier == "Master" and SkyweaverRp(1250).floor == 1200


def test_the_rank_hook_takes_and_gives_tuples_as_rp_after_does() -> None:
    # contract 2: the rank hook gets the tuple forms and the skill layout, never instances
    from rankcraft import PlayerContext
    from rankcraft.forms import Form, layout
    from rankcraft.plugins.glicko1 import Glicko1Skill
    from rankcraft.plugins.skyweaver import RANKCRAFT_CONTRACT, rankcraft_rank

    assert RANKCRAFT_CONTRACT == 2
    form = Form(SkyweaverRp)
    context = PlayerContext(None, "ann", 0, 3, 0.5, 1.0, [])
    out = rankcraft_rank(
        P,
        form.to_tuple(rank(200, streak=2)),
        (1500.0, 200.0),
        (1600.0, 180.0),
        1.0,
        context,
        layout(Glicko1Skill),
    )
    assert type(out) is tuple
    assert form.to_object(out) == rp_after(P, rank(200, streak=2), 100.0, 1.0)
    assert out[:4] == (round(200 + 100 * 1000 / 1750 * 0.25 + 20 + 10), "Wanderer", 200, 3)
    assert context.factors == {
        "mmr_change": 100.0,
        "F": 1000 / 1750 * 0.25,
        "bias": 20.0,
        "streak_bonus": 10.0,
    }
