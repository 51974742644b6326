"""inversus-rp: INVERSUS Deluxe's Rank Points, with the readings of docs/decisions.md."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.forms import layout
from rankcraft.model import PlayerContext
from rankcraft.plugins.glicko2 import Glicko2Skill
from rankcraft.plugins.inversus import (
    RANKCRAFT_CONTRACT,
    InversusRpParams,
    rankcraft_rank,
    rp_change,
)

AVERAGE = {"mu": 0.0, "phi": 0.5, "sigma": 0.06}


def test_unrated_player_stays_at_zero_through_losses_then_gains_500() -> None:
    league = rankcraft.League("inversus")
    league.import_state({"players": [{"id": "avg", "skill": AVERAGE}]})
    for i in range(5):
        report = league.record(
            {
                "id": f"l{i}",
                "played_at": f"2024-01-0{i + 1}",
                "teams": [["new"], ["avg"]],
                "scores": [0, 1],
            }
        )
        assert report.change("new").rank_after.points == 0.0
    league2 = rankcraft.League("inversus")
    league2.import_state({"players": [{"id": "avg", "skill": AVERAGE}]})
    report = league2.record(
        {"id": "w", "played_at": "2024-01-01", "teams": [["new"], ["avg"]], "scores": [1, 0]}
    )
    change = report.change("new")
    assert change.rank_after.points == 500.0
    # The desired RP against an average opponent is about 2246; the step is capped.
    assert change.factors["target"] == pytest.approx(2246, abs=1)
    assert change.factors["cap"] == 500.0 and "bonus" not in change.factors


def test_minimum_one_point_and_ceiling() -> None:
    params = InversusRpParams()
    # desired RP below the current: a win still gives +1 ...
    assert rp_change(params, 5000.0, True, 0.0, 1.0, 0.0) == 5001.0
    # ... unless the upper end of the 99.7% interval is closer.
    top = params.to_points(0.0 + 3 * 0.2)
    assert rp_change(params, top - 0.25, True, 0.0, 0.2, 0.0) == pytest.approx(top)
    assert rp_change(params, top + 10, True, 0.0, 0.2, 0.0) == pytest.approx(top + 10)
    # a loss costs at least 1 RP, never below 0
    assert rp_change(params, 100.0, False, 6.0, 0.2, 0.0) == 99.0
    assert rp_change(params, 0.4, False, 6.0, 0.2, 0.0) == 0.0


def test_upset_bonus_after_the_cap() -> None:
    params = InversusRpParams()
    # a win over an opponent 12.09 higher: 500 (capped step) + 250 (whole bonus)
    assert rp_change(params, 0.0, True, 3.0, 0.5, 12.09) == 750.0
    assert rp_change(params, 0.0, True, 3.0, 0.5, 6.045) == 625.0
    inside = InversusRpParams(bonus_after_cap=False)
    assert rp_change(inside, 0.0, True, 3.0, 0.5, 12.09) == 500.0
    assert rp_change(params, 0.0, True, 3.0, 0.5, -2.0) == 500.0  # no bonus for the favourite


def test_target_never_reaches_the_top() -> None:
    params = InversusRpParams()
    assert params.to_points(6.045 - 3 * 0.175) == pytest.approx(9565.76, abs=0.01)


def test_untested_ideas_are_options() -> None:
    slow = InversusRpParams(deviation_speed=True)
    assert rp_change(slow, 0.0, True, 3.0, 2.015, 0.0) == 1.0  # no certainty: only the minimum
    assert rp_change(slow, 0.0, True, 3.0, 0.175, 0.0) == 500.0
    tight = rankcraft.loads_ruleset(
        'extends = "inversus"\nname = "tight"\n[rank.params]\ntightest_deviation = true\n'
    )
    assert tight.rank.params.tightest_deviation


def test_the_rank_hook_reads_tuples_through_the_layout() -> None:
    # Contract 2: the rank and skill states are tuples; mu and phi are found by ``layout``.
    assert RANKCRAFT_CONTRACT == 2
    params = InversusRpParams()
    where = layout(Glicko2Skill)
    before, after, opponent = (0.0, 0.5, 0.06), (0.3, 0.45, 0.06), (1.0, 0.5, 0.06)
    context = PlayerContext(None, "a", 0, 3, 0.4, 1.0, [(opponent, 1.0, 1.0)])
    new = rankcraft_rank(
        params, (100.0, None), before, after, [(opponent, 1.0, 1.0)], 1.0, context, where
    )
    factors: dict[str, float] = {}
    assert new == (rp_change(params, 100.0, True, 0.3, 0.45, 1.0, factors), 0.45)
    assert context.factors == factors and factors["bonus"] == pytest.approx(250 / 12.09)
    # the tightest phi is kept, and used with tightest_deviation; a draw keeps the points
    tight = InversusRpParams(tightest_deviation=True)
    context = PlayerContext(None, "a", 0, 3, 0.4, 0.0, [(opponent, 0.0, 1.0)])
    lost = rankcraft_rank(
        tight, (900.0, 0.2), before, after, [(opponent, 0.0, 1.0)], 0.0, context, where
    )
    assert lost == (rp_change(tight, 900.0, False, 0.3, 0.2, 1.0), 0.2)
    drawn = rankcraft_rank(
        params, (900.0, None), before, after, [(opponent, 0.5, 1.0)], 0.5, context, where
    )
    assert drawn == (900.0, 0.45)
    # another state layout: the fields are read where the layout says
    moved = {"sigma": 0, "mu": 1, "phi": 2}
    swapped = rankcraft_rank(
        params,
        (100.0, None),
        (0.06, 0.0, 0.5),
        (0.06, 0.3, 0.45),
        [((0.06, 1.0, 0.5), 1.0, 1.0)],
        1.0,
        PlayerContext(None, "a", 0, 3, 0.4, 1.0, []),
        moved,
    )
    assert swapped == new


def test_draw_does_not_move_rp() -> None:
    league = rankcraft.League("inversus")
    report = league.record(
        {"id": "d", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 1]}
    )
    assert report.change("a").rank_after.points == 0.0


@given(
    st.floats(0, 10000),
    st.booleans(),
    st.floats(-6.045, 6.045),
    st.floats(0.175, 2.015),
    st.floats(-12.09, 12.09),
)
def test_direction_and_range(points: float, won: bool, mu: float, phi: float, gap: float) -> None:
    params = InversusRpParams()
    new = rp_change(params, points, won, mu, phi, gap)
    assert 0.0 <= new <= 10000.0
    if won:
        assert new >= points and new - points <= 750.0 + 1e-9
    else:
        assert new <= points and points - new <= 500.0 + 1e-9
