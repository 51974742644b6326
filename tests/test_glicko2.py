"""The glicko2 plugin: Glickman's Glicko-2 example, the Illinois step, INVERSUS's bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.io import parse_match
from rankcraft.plugins._matchup import margin_multiplier
from rankcraft.plugins.glicko2 import (
    RANKCRAFT_CONTRACT,
    SCALE,
    Glicko2Params,
    Glicko2Skill,
    g,
    new_volatility,
    rankcraft_decay,
    rankcraft_expectation,
    rankcraft_explain,
    rankcraft_update,
    rate,
    volatility_objective,
)

OPPONENTS = [(1400.0, 30.0, 1.0), (1550.0, 100.0, 0.0), (1700.0, 300.0, 0.0)]


def _state(rating: float, deviation: float, sigma: float = 0.06) -> dict[str, float]:
    return {"mu": (rating - 1500.0) / SCALE, "phi": deviation / SCALE, "sigma": sigma}


def _example(mode: str) -> Glicko2Skill:
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            f'name = "g2"\n[period]\nmode = "{mode}"\n[update]\nplugin = "glicko2"\n'
            "[update.params]\ntau = 0.5\n"
        )
    )
    league.import_state(
        {
            "players": [{"id": "p", "skill": _state(1500.0, 200.0)}]
            + [{"id": f"o{i}", "skill": _state(r, rd)} for i, (r, rd, _) in enumerate(OPPONENTS)]
        }
    )
    league.record_many(
        [
            {
                "id": f"g{i}",
                "played_at": "2024-01-01",
                "teams": [["p"], [f"o{i}"]],
                "scores": [s, 1 - s],
            }
            for i, (_, _, s) in enumerate(OPPONENTS)
        ]
    )
    return league.player("p").skill


@pytest.mark.parametrize("mode", ["batch", "live"])
def test_glickman_glicko2_example(mode: str) -> None:
    skill = _example(mode)
    # Printed (Glickman 2022): mu' -0.2069, phi' 0.8722, sigma' 0.05999 -> 1464.06 / 151.52;
    # the printed r', RD' are SCALE x the 4-decimal mu', phi' (docs/decisions.md).
    assert round(skill.mu, 4) == -0.2069 and round(skill.phi, 4) == 0.8722
    assert round(1500 + 173.7178 * round(skill.mu, 4), 2) == 1464.06
    assert round(173.7178 * round(skill.phi, 4), 2) == 151.52
    assert math.floor(skill.sigma * 1e5) / 1e5 == 0.05999  # printed truncated
    # Full precision: 1464.0507 / 151.5165 / 0.0599960.
    assert 1500 + SCALE * skill.mu == pytest.approx(1464.0507, abs=5e-5)
    assert SCALE * skill.phi == pytest.approx(151.5165, abs=5e-5)
    assert skill.sigma == pytest.approx(0.0599960, abs=5e-8)
    assert skill.mu == pytest.approx(-0.206941, abs=5e-7)
    assert skill.phi == pytest.approx(0.872199, abs=5e-7)


def test_the_hooks_take_tuples_and_named_arguments() -> None:
    # Contract 2: states are (mu, phi, sigma) tuples, pairings (opponent, score, weight).
    assert RANKCRAFT_CONTRACT == 2
    params = Glicko2Params()
    me = ((1500.0 - 1500.0) / SCALE, 200.0 / SCALE, 0.06)
    pairings = [(tuple(_state(r, rd).values()), s, 1.0) for r, rd, s in OPPONENTS]
    after = rankcraft_update(params, me, pairings, 0, None)
    assert type(after) is tuple
    assert after == pytest.approx((-0.206941, 0.872199, 0.0599960), abs=5e-7)  # Glickman
    assert rankcraft_explain(params, me, pairings, 0, None, after) is None
    p, q = rankcraft_expectation(params, [me, pairings[0][0]], None)
    assert p + q == 1.0 and p == pytest.approx(
        1 / (1 + math.exp(-g(math.hypot(me[1], 30 / SCALE)) * (me[0] - pairings[0][0][0])))
    )
    # the margin multiplier scales the change of mu, and the explain hook reports it
    margin = Glicko2Params(margin="fivethirtyeight")
    game = {"id": "g", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [5, 2]}
    match = parse_match(game)
    one = [pairings[0]]
    plain = rankcraft_update(params, me, one, 0, match)
    moved = rankcraft_update(margin, me, one, 0, match)
    lead = SCALE * (me[0] - one[0][0][0])
    assert moved[0] == me[0] + (plain[0] - me[0]) * margin_multiplier(3, lead)
    assert moved[1:] == plain[1:]
    factors = rankcraft_explain(margin, me, one, 0, match, moved)
    assert factors == {"margin": margin_multiplier(3, lead)}
    assert rankcraft_explain(margin, me, one, 0, match, plain) == factors  # rated again
    assert rankcraft_explain(margin, me, pairings, 0, match, after) is None  # three pairings


def test_glickman_intermediate_values() -> None:
    mu = 0.0
    inv_v = total = 0.0
    for r, rd, s in OPPONENTS:
        gj = g(rd / SCALE)
        e = 1 / (1 + math.exp(-gj * (mu - (r - 1500) / SCALE)))
        inv_v += gj * gj * e * (1 - e)
        total += gj * (s - e)
    v = 1 / inv_v
    assert v == pytest.approx(1.77898, abs=5e-6)
    assert v * total == pytest.approx(-0.48393, abs=5e-6)
    # The iteration table from the paper's rounded v, delta, phi: A = ln(sigma^2), and as
    # delta^2 <= phi^2 + v the bracket steps down by tau: B = A - tau.
    f = volatility_objective(1.1513, 0.06, 0.5, 1.7785, -0.4834)
    a = math.log(0.06**2)
    assert round(a, 5) == -5.62682
    assert f(a) == pytest.approx(-0.00053567, abs=5e-9)
    assert f(a - 0.5) == pytest.approx(1.999675, abs=5e-7)
    sigma = new_volatility(1.1513, 0.06, 0.5, 1.7785, -0.4834)
    assert math.floor(sigma * 1e5) / 1e5 == 0.05999  # printed truncated
    assert sigma == pytest.approx(0.0599960, abs=5e-7)


def test_inversus_listing_loop_reads_one_result() -> None:
    # Reading only the first result three times (the INVERSUS listing's loop) gives
    # mu' = +0.7489.
    wrong = rate(0.0, 200 / SCALE, 0.06, 0.5, [((1400 - 1500) / SCALE, 30 / SCALE, 1.0, 1.0)] * 3)
    assert wrong[0] == pytest.approx(0.7489, abs=5e-5)
    right = rate(
        0.0,
        200 / SCALE,
        0.06,
        0.5,
        [((r - 1500) / SCALE, rd / SCALE, s, 1.0) for r, rd, s in OPPONENTS],
    )
    assert right[0] == pytest.approx(-0.2069, abs=5e-5)


def test_scale_is_400_over_ln_10() -> None:
    assert pytest.approx(173.7178, abs=5e-5) == SCALE
    assert pytest.approx(2.01476, abs=5e-6) == 350 / SCALE  # INVERSUS's unrated 2.015


def test_inversus_bounds_and_initial_state() -> None:
    params = rankcraft.load_ruleset("inversus").update.params
    assert params.bounded
    league = rankcraft.League("inversus")
    league.record({"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]})
    state = league.player("a").skill
    assert -6.045 <= state.mu <= 6.045 and 0.175 <= state.phi <= 2.015
    assert 0.04 <= state.sigma <= 0.08
    assert params.clamp(9.0, 0.01, 1.0) == Glicko2Skill(6.045, 0.175, 0.08)
    assert params.clamp(-9.0, 9.0, 0.0001) == Glicko2Skill(-6.045, 2.015, 0.04)


def test_minimum_deviation_cannot_bind_one_game_at_a_time() -> None:
    params = rankcraft.load_ruleset("inversus").update.params
    mu, phi, sigma = rate(0.0, 0.175, 0.04, 0.5, [(0.0, 0.175, 1.0, 1.0)])
    assert phi == pytest.approx(0.1788, abs=5e-5)
    state = params.clamp(0.0, 0.175, 0.04)
    for _ in range(400):
        mu, phi, sigma = rate(
            state.mu, state.phi, state.sigma, 0.5, [(state.mu, state.phi, 0.5, 1.0)]
        )
        state = params.clamp(mu, phi, sigma)
    assert state.phi == pytest.approx(0.282, abs=2e-3)


def test_bounds_can_be_switched_off() -> None:
    plain = Glicko2Params()
    assert plain.clamp(9.0, 0.01, 1.0) == Glicko2Skill(9.0, 0.01, 1.0)


@given(st.floats(0.05, 3.0), st.floats(0.01, 0.2), st.floats(0.0, 40.0), st.floats(0.0, 40.0))
def test_decay_is_additive_before_clamping(phi: float, sigma: float, t1: float, t2: float) -> None:
    params = Glicko2Params()
    state = (0.3, phi, sigma)  # (the hook's tuple form: mu, phi, sigma)
    twice = rankcraft_decay(params, rankcraft_decay(params, state, t1), t2)
    once = rankcraft_decay(params, state, t1 + t2)
    assert twice[1] == pytest.approx(once[1], rel=1e-12)
    assert (twice[0], twice[2]) == (once[0], once[2]) == (0.3, sigma)


@given(
    st.floats(-4, 4),
    st.floats(0.05, 2.5),
    st.floats(0.03, 0.1),
    st.floats(-4, 4),
    st.floats(0.05, 2.5),
    st.floats(0.2, 1.2),
)
def test_a_win_never_lowers_and_a_loss_never_raises(
    mu: float, phi: float, sigma: float, mo: float, po: float, tau: float
) -> None:
    win = rate(mu, phi, sigma, tau, [(mo, po, 1.0, 1.0)])
    loss = rate(mu, phi, sigma, tau, [(mo, po, 0.0, 1.0)])
    assert win[0] >= mu >= loss[0]
    for value in (*win, *loss):
        assert math.isfinite(value)


def test_illinois_uses_less_or_equal() -> None:
    # A case where an iterate can land on the root: the result must be finite and be a root.
    for delta in (0.0, 1e-9, 3.0, -7.5):
        sigma = new_volatility(1.0, 0.06, 0.5, 2.0, delta)
        f = volatility_objective(1.0, 0.06, 0.5, 2.0, delta)
        assert math.isfinite(sigma)
        assert abs(f(math.log(sigma * sigma))) < 1e-4
