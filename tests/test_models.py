"""Elo's model options (issue 17): draw models and the rankcraft_outcomes hook, margin of
victory rules, match context (competition rules, drifting home advantage, blended context
ratings, a newcomer prior), and the home-advantage warning."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main
from rankcraft.plugins._matchup import MarginForm, davidson, ordered_logit
from rankcraft.plugins.elo import EloParams, rankcraft_outcomes
from rankcraft.ruleset import ImportedRulesetWarning


def _league(params: str) -> rankcraft.League:
    return rankcraft.League(
        rankcraft.loads_ruleset(f'name = "t"\n[update]\nplugin = "elo"\n[update.params]\n{params}')
    )


def _match(mid: str, scores: list[float], **extra: object) -> dict[str, object]:
    return {
        "id": mid,
        "played_at": "2024-01-01",
        "teams": [["a"], ["b"]],
        "scores": scores,
        **extra,
    }


# -- draw models --------------------------------------------------------------------------


def test_davidson_matches_its_closed_form() -> None:
    # π = 10^(r/400): a 200-point gap is π ratio √10 (x = 10^(1/4) on each side's root)
    kappa = 0.8
    pa, pb = 10 ** (1700 / 400), 10 ** (1500 / 400)
    tie = kappa * math.sqrt(pa * pb)
    win, draw, loss = davidson(200.0, 400.0, kappa)
    assert (win, draw, loss) == pytest.approx(
        (pa / (pa + pb + tie), tie / (pa + pb + tie), pb / (pa + pb + tie)), rel=1e-12
    )
    # κ = 0 is Elo's curve; P(draw) between equals is κ / (2 + κ)
    assert davidson(200.0, 400.0, 0.0)[0] == pytest.approx(1 / (1 + 10 ** (-0.5)))
    assert davidson(0.0, 400.0, kappa)[1] == pytest.approx(kappa / (2 + kappa))
    # the gap term makes draws fall faster with the gap
    assert davidson(300.0, 400.0, kappa, 1.0)[1] < davidson(300.0, 400.0, kappa)[1]


@settings(max_examples=40, deadline=None)
@given(
    gap=st.floats(-1e6, 1e6),
    kappa=st.floats(0, 1e3),
    rate=st.floats(0, 10),
    margin=st.floats(0, 1e6),
)
def test_three_outcomes_are_probabilities(
    gap: float, kappa: float, rate: float, margin: float
) -> None:
    for probs in (davidson(gap, 400.0, kappa, rate), ordered_logit(gap, 400.0, margin)):
        assert all(0.0 <= p <= 1.0 for p in probs)
        assert math.fsum(probs) == pytest.approx(1.0, abs=1e-12)
    # symmetric: the other side's view swaps win and loss
    w, d, lose = davidson(gap, 400.0, kappa, rate)
    assert davidson(-gap, 400.0, kappa, rate) == pytest.approx((lose, d, w), abs=1e-12)


def test_ordered_logit_closed_form() -> None:
    win, draw, loss = ordered_logit(100.0, 400.0, 70.0)
    assert win == pytest.approx(1 / (1 + 10 ** (-30 / 400)))
    assert loss == pytest.approx(1 / (1 + 10 ** (170 / 400)))
    assert draw == pytest.approx(1 - win - loss)


def test_outcomes_direct_and_through_the_hook_manager() -> None:
    params = EloParams(draw="davidson", draw_kappa=0.5, home_advantage=50.0)
    states = [(1550.0, 1550.0), (1500.0, 1500.0)]  # (rating, peak): states as hooks get them
    direct = rankcraft_outcomes(params, states, 1, None)  # away side 0: the edge cancels the gap
    assert direct == pytest.approx([0.4, 0.2, 0.4])
    pm = rankcraft.get_plugin_manager()
    (answer,) = [
        r
        for r in pm.hook.rankcraft_outcomes(
            params=params, side_states=states, home=None, match=None
        )
        if r is not None
    ]
    assert sum(answer) == pytest.approx(1.0) and answer[0] > answer[2]
    assert rankcraft.Plugins(pm).outcomes("elo", params) is not None
    assert rankcraft.Plugins(pm).outcomes("glicko1", None) is None
    # no draw model, or more sides: None
    assert rankcraft_outcomes(EloParams(), states, None, None) is None
    assert rankcraft_outcomes(params, [*states, states[0]], None, None) is None


def test_draw_model_forecast_and_update_are_consistent() -> None:
    league = _league('draw = "davidson"\ndraw_kappa = 0.5\nk_factor = 20.0\n')
    league.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": 1600.0, "peak": 1600.0}},
                {"id": "b", "skill": {"rating": 1500.0, "peak": 1500.0}},
            ]
        }
    )
    win, draw, _ = davidson(100.0, 400.0, 0.5)
    expected = win + draw / 2
    assert league.predict([["a"], ["b"]])[0] == pytest.approx(expected)
    report = league.record(_match("m", [1, 1]))
    assert report.expected[0] == pytest.approx(expected)
    assert league.player("a").skill.rating == pytest.approx(1600.0 + 20 * (0.5 - expected))
    assert league.player("b").skill.rating == pytest.approx(1500.0 - 20 * (0.5 - expected))


# -- margin of victory -----------------------------------------------------------------


def test_margin_rules_published_values() -> None:
    # FiveThirtyEight NBA: (MOV + 3)^0.8 / (7.5 + 0.006 · lead), lead 100 for a 10-point win
    assert MarginForm().multiplier(10, 100.0) == pytest.approx(13**0.8 / 8.1)
    league = _league('margin = "world-football"\n')
    league.record(_match("m", [4, 1]))  # three goals: (11 + 3) / 8
    assert league.report("m").change("a").factors == {"k": 32.0, "margin": 1.75}


@settings(max_examples=30, deadline=None)
@given(
    margin=st.floats(-1e300, 1e300),
    lead=st.floats(-1e6, 1e6),
    offset=st.floats(0, 1e3),
    power=st.floats(0, 3),
    base=st.floats(1e-3, 1e3),
    slope=st.floats(0, 1),
)
def test_no_margin_flips_a_change(
    margin: float, lead: float, offset: float, power: float, base: float, slope: float
) -> None:
    form = MarginForm(offset=offset, power=power, base=base, lead=slope)
    value = form.multiplier(margin, lead)
    assert math.isfinite(value) and value >= 0.0
    assert value <= (1000.0 + offset) ** power / (base / 2) * (1 + 1e-12)


# -- context ---------------------------------------------------------------------------


def test_context_rules_home_drift_and_blend() -> None:
    league = _league(
        'home_advantage = 100.0\ncontext_field = "tournament"\n'
        '[[update.params.context_rules]]\ncontains = "Friendly"\nk_scale = 0.5\n'
        "home_advantage = 40.0\n"
    )
    report = league.record(_match("f", [1, 0], home=0, meta={"tournament": "Friendly"}))
    assert report.expected[0] == pytest.approx(1 / (1 + 10 ** (-40 / 400)))
    assert report.change("a").factors == {"k": 16.0}
    cup = league.record(_match("c", [1, 0], home=0, meta={"tournament": "World Cup"}))
    assert cup.change("a").factors == {"k": 32.0}
    drift = _league("home_advantage = 60.0\nhome_drift = -2.0\nhome_drift_year = 2014.0\n")
    report = drift.record(_match("d", [1, 0], home=0))  # 2024: 60 - 2 · 10 = 40
    assert report.expected[0] == pytest.approx(1 / (1 + 10 ** (-40 / 400)))
    blend = _league(
        'blend_field = "surface"\nblend_values = ["Clay", "Grass"]\n'
        "blend_weight = 0.5\nblend_k = 2.0\n"
    )
    blend.record(_match("b", [1, 0], meta={"surface": "Clay"}))
    a = blend.player("a").skill
    assert (a.rating, a.contexts) == (1516.0, (1532.0, 1500.0))
    report = blend.record(_match("b2", [1, 0], meta={"surface": "Clay"}))
    gap = (0.5 * 1516 + 0.5 * 1532) - (0.5 * 1484 + 0.5 * 1468)
    assert report.expected[0] == pytest.approx(1 / (1 + 10 ** (-gap / 400)))
    # state documents keep the context ratings
    again = _league('blend_field = "surface"\nblend_values = ["Clay", "Grass"]\n')
    with pytest.warns(ImportedRulesetWarning, match=r"update.params.blend_k: 2.0 there, 1.0"):
        again.import_state(blend.export(), accept_ruleset=True)
    assert again.player("a").skill == blend.player("a").skill


def test_newcomer_prior_from_a_field() -> None:
    league = _league('prior_field = "atp_rank"\nprior_at_one = 1800.0\nprior_per_log = 60.0\n')
    report = league.record(_match("m", [1, 0], meta={"atp_rank": [1, math.e**5]}))
    assert report.expected[0] == pytest.approx(1 / (1 + 10 ** (-300 / 400)))
    assert league.player("a").skill.rating == pytest.approx(1800 + 32 * (1 - report.expected[0]))


def test_bad_params_are_refused() -> None:
    with pytest.raises(rankcraft.RulesetError, match="draw"):
        _league('draw = "poisson"\n')
    with pytest.raises(rankcraft.RulesetError, match="context_field"):
        _league('[[update.params.context_rules]]\ncontains = "x"\n')
    with pytest.raises(rankcraft.RulesetError, match="blend_values"):
        _league('blend_field = "surface"\n')


# -- the home-advantage warning --------------------------------------------------------


def test_warning_when_home_advantage_finds_no_home_side(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(
        "\n".join(json.dumps(_match(f"m{i}", [1, 0], meta={"h": 0})) for i in range(3)) + "\n"
    )
    for argv in (
        ["evaluate", str(path), "--ruleset", "elo-538", "--test-from", "2024-01-01"],
        ["replay", str(path), "--ruleset", "elo-538", "--db", str(tmp_path / "l.db")],
    ):
        err = io.StringIO()
        assert main(argv, out=io.StringIO(), err=err) == 0
        assert "warning: ruleset 'elo-538' has a home advantage" in err.getvalue()
        err = io.StringIO()
        argv = [*argv, "--home-from", "meta.h"]
        if argv[0] == "replay":
            argv[-3] = str(tmp_path / "l2.db")
        assert main(argv, out=io.StringIO(), err=err) == 0
        assert "home advantage" not in err.getvalue()  # (evaluate: nothing warms up, said)


# -- seasons ---------------------------------------------------------------------------


def test_predict_at_a_later_time_applies_the_resets_due() -> None:
    league = rankcraft.League("elo-538")
    for i, day in enumerate(("2020-12-01", "2020-12-08")):
        league.record(
            {
                "id": f"m{i}",
                "played_at": day,
                "teams": [["A"], ["B" if i else "C"]],
                "scores": [30, 0],
                "home": 0,
            }
        )
    stored = league.player("A").skill.rating
    before = league.predict([["A"], ["B"]], home=0)
    ahead = league.predict([["A"], ["B"]], at="2021-09-10", home=0)
    assert ahead[0] < before[0]  # June's regression to the mean is due by September
    assert league.player("A").skill.rating == stored  # predicting stores nothing
    assert league.predict([["A"], ["B"]], at="2021-05-01", home=0) == before  # none due yet
    report = league.record(
        {
            "id": "m2",
            "played_at": "2021-09-10",
            "teams": [["A"], ["B"]],
            "scores": [30, 0],
            "home": 0,
        }
    )
    assert list(report.expected) == pytest.approx(ahead, abs=1e-15)
    # (the projection is cached per time while nothing changes; the match changed A)
    assert league.predict([["A"], ["B"]], at="2021-09-10", home=0)[0] > ahead[0]
    assert league.predict([["A"], ["B"]], at="2021-09-11", home=0)[0] > ahead[0]


def test_off_season_found_from_a_long_gap() -> None:
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            'extends = "elo"\nname = "gap"\n[decay]\nplugin = "regress"\n'
            "[decay.params]\nfraction = 0.5\ntarget = 1500.0\nafter_periods = 90.0\n"
        )
    )
    league.import_state(
        {
            "players": [
                {
                    "id": "a",
                    "skill": {"rating": 1700.0, "peak": 1700.0},
                    "last_played": "2024-02-01",
                },
                {
                    "id": "b",
                    "skill": {"rating": 1500.0, "peak": 1500.0},
                    "last_played": "2024-02-01",
                },
            ]
        }
    )
    week = league.record(
        {"id": "w", "played_at": "2024-02-08", "teams": [["a"], ["b"]], "scores": [0, 1]}
    )  # a week: no regression
    assert week.change("a").skill_used.rating == 1700.0
    rating = league.player("a").skill.rating
    ahead = league.predict([["a"], ["b"]], at="2024-09-01")
    report = league.record(
        {"id": "s", "played_at": "2024-09-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    assert report.change("a").skill_used.rating == pytest.approx(1500 + (rating - 1500) / 2)
    assert list(report.expected) == pytest.approx(ahead)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: rankcraft.Scale("rating", 0.0), "'factor' must be a finite number > 0: 0.0"),
        (lambda: rankcraft.Scale("rating", -1.0), "'factor' must be a finite number > 0: -1.0"),
        (lambda: rankcraft.Scale("rating", 1.0, math.inf), "'offset' must be a finite number: inf"),
        (
            lambda: rankcraft.state_field(role="spread", shown=rankcraft.Scale("RD", 2.0, 5.0)),
            "a spread field's scale has no offset: 5.0",
        ),
    ],
)
def test_a_scale_that_would_reorder_or_shift_a_spread_is_refused(make: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        make()
    assert str(caught.value) == message
