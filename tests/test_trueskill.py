"""The ``trueskill`` plugin: agreement with the trueskill package (its exact-normal
``mpmath`` backend) on random matches, published figures, invariants, params."""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.forms import layout
from rankcraft.plugins._gaussian import cdf
from rankcraft.plugins.trueskill import (
    TrueSkillMessage,
    TrueSkillParams,
    TrueSkillSkill,
    duel_messages,
    rankcraft_aggregate,
    rankcraft_expectation,
    rankcraft_explain,
    rankcraft_team,
    rankcraft_update,
    rate,
    rate_messages,
    two_team_messages,
    win_probabilities,
)

trueskill = pytest.importorskip("trueskill")
pytest.importorskip("mpmath")
PEER = trueskill.TrueSkill(backend="mpmath")
LAYOUT = layout(TrueSkillSkill)


def _flat(teams: list[list[tuple[float, float]]]) -> list[float]:
    return [x for team in teams for pair in team for x in pair]


def _peer(teams, places, weights=None, env=PEER):  # type: ignore[no-untyped-def]
    rated = env.rate(
        [[env.create_rating(m, s) for m, s in team] for team in teams],
        ranks=list(places),
        weights=weights,
    )
    return [[(float(r.mu), float(r.sigma)) for r in team] for team in rated]


def test_the_trueskill_documentation_1v1() -> None:
    # the trueskill package's documentation: two newcomers, 1P wins:
    # 1P 29.396 ± 7.171, 2P 20.604 ± 7.171; a draw leaves both at 25.000 ± 6.458
    (winner,), (loser,) = rate(TrueSkillParams(), [[(25.0, 25 / 3)], [(25.0, 25 / 3)]], [1, 2])
    assert winner == pytest.approx((29.396, 7.171), abs=5e-4)
    assert loser == pytest.approx((20.604, 7.171), abs=5e-4)
    (a,), (b,) = rate(TrueSkillParams(), [[(25.0, 25 / 3)], [(25.0, 25 / 3)]], [1, 1])
    assert a == pytest.approx((25.000, 6.458), abs=5e-4) and b == pytest.approx(a)


teams_strategy = st.lists(
    st.lists(st.tuples(st.floats(15.0, 35.0), st.floats(1.0, 8.0)), min_size=1, max_size=3),
    min_size=2,
    max_size=5,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(teams=teams_strategy, data=st.data())
def test_agrees_with_the_trueskill_package(teams, data) -> None:  # type: ignore[no-untyped-def]
    k = len(teams)
    places = data.draw(st.lists(st.integers(1, k), min_size=k, max_size=k))
    weights = data.draw(
        st.one_of(
            st.none(),
            # (below 0.05 a win is so far in the tail that the package's answer is an
            # artefact: two players of weight 0 move 190 points; rankcraft's stay put)
            st.just([[data.draw(st.floats(0.05, 1.0)) for _ in team] for team in teams]),
        )
    )
    try:
        theirs = _peer(teams, places, weights)
    except FloatingPointError:  # (the package refuses extreme upsets)
        return
    mine = rate(TrueSkillParams(), teams, places, weights)
    assert _flat(mine) == pytest.approx(_flat(theirs), abs=1e-9)


def test_players_who_did_not_play_keep_their_mu() -> None:
    both = rate(TrueSkillParams(), [[(25.0, 8.3)], [(30.0, 8.3)]], [1, 2], [[0.0], [0.0]])
    assert [both[0][0][0], both[1][0][0]] == pytest.approx([25.0, 30.0], abs=1e-9)
    bench = rate(
        TrueSkillParams(), [[(25.0, 8.3), (25.0, 8.3)], [(25.0, 8.3)]], [1, 2], [[1.0, 0.0], [1.0]]
    )
    assert bench[0][1][0] == pytest.approx(25.0, abs=1e-3)  # the package: 25.000


def test_agrees_with_other_constants() -> None:
    env = trueskill.TrueSkill(
        mu=1500.0, sigma=300.0, beta=150.0, tau=5.0, draw_probability=0.3, backend="mpmath"
    )
    params = TrueSkillParams(mu=1500.0, sigma=300.0, beta=150.0, tau=5.0, draw_probability=0.3)
    teams = [
        [(1500.0, 300.0), (1600.0, 120.0)],
        [(1450.0, 200.0)],
        [(1700.0, 80.0)] * 2,
        [(1400.0, 250.0)],
    ]
    for places in ([1, 2, 3, 4], [2, 1, 1, 3], [4, 3, 2, 1], [1, 1, 1, 1]):
        assert _flat(rate(params, teams, places)) == pytest.approx(
            _flat(_peer(teams, places, env=env)), abs=1e-8
        )


@settings(max_examples=15, deadline=None)
@given(teams=teams_strategy, data=st.data())
def test_invariants(teams, data) -> None:  # type: ignore[no-untyped-def]
    k = len(teams)
    places = data.draw(st.lists(st.integers(1, k), min_size=k, max_size=k))
    params = TrueSkillParams(tau=0.0)
    new = rate(params, teams, places)
    for old_team, new_team in zip(teams, new, strict=True):
        for (_, s0), (m1, s1) in zip(old_team, new_team, strict=True):
            assert math.isfinite(m1) and math.isfinite(s1)
            assert s1 <= s0 * (1 + 1e-12)  # without tau, a match never adds uncertainty
    flipped = rate(params, [list(reversed(t)) for t in teams], places)
    for a, b in zip(new, flipped, strict=True):
        assert _flat([list(reversed(b))]) == pytest.approx(_flat([a]), abs=1e-9)
    sides = [rankcraft_aggregate(params, list(t), LAYOUT) for t in teams]
    probabilities = rankcraft_expectation(params, sides)
    assert math.fsum(probabilities) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= p <= 1.0 for p in probabilities)


def test_two_sides_win_probability_is_the_documented_formula() -> None:
    params = TrueSkillParams()
    a = [(30.0, 4.0), (20.0, 6.0)]
    b = [(28.0, 2.0)]
    p = rankcraft_expectation(
        params, [rankcraft_aggregate(params, a, LAYOUT), rankcraft_aggregate(params, b, LAYOUT)]
    )
    denominator = math.sqrt(3 * params.beta**2 + 16.0 + 36.0 + 4.0)
    assert p[0] == pytest.approx(cdf((50.0 - 28.0) / denominator), abs=1e-15)


def test_three_sides_are_the_chance_of_the_best_performance() -> None:
    params = TrueSkillParams()
    sides = [(25.0, 9.0, 1), (27.0, 4.0, 1), (22.0, 30.0, 2)]
    got = win_probabilities(params, sides)
    # a plain Riemann sum on a much finer grid
    beta2 = params.beta**2
    means = [m for m, _, _ in sides]
    sds = [math.sqrt(v + n * beta2) for _, v, n in sides]
    h = 0.01
    want = [0.0, 0.0, 0.0]
    for g in range(int(140 / h)):
        x = -35.0 + g * h
        for i in range(3):
            density = math.exp(-0.5 * ((x - means[i]) / sds[i]) ** 2) / (
                sds[i] * math.sqrt(2 * math.pi)
            )
            others = math.prod(cdf((x - means[j]) / sds[j]) for j in range(3) if j != i)
            want[i] += density * others * h
    assert got == pytest.approx(want, abs=1e-6)
    # equal sides share the win equally
    assert win_probabilities(params, [(25.0, 9.0, 1)] * 4) == pytest.approx([0.25] * 4, abs=1e-9)
    # two sides through the integral are the closed form
    pair = [(25.0, 9.0, 1), (29.0, 16.0, 2)]
    closed = cdf((25.0 - 29.0) / math.sqrt(25.0 + 3 * beta2))
    assert win_probabilities(params, pair)[0] == pytest.approx(closed, abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(
    mus=st.tuples(*[st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0, 25.0]))] * 2),
    sigmas=st.tuples(*[st.floats(1e-6, 1e6)] * 2),
    places=st.sampled_from([(1, 2), (2, 1), (1, 1), (4, 9)]),
    tau=st.sampled_from([0.0, 25 / 300, 3.0]),
    beta=st.sampled_from([25 / 6, 1e-6, 100.0]),
    draw_probability=st.sampled_from([0.0, 0.1, 0.9]),
    min_delta=st.sampled_from([1e-4, 1e-12, 1.0]),
    max_passes=st.sampled_from([1, 2, 10]),
)
def test_the_written_out_1v1_is_the_factor_graph_bit_for_bit(  # type: ignore[no-untyped-def]
    mus, sigmas, places, tau, beta, draw_probability, min_delta, max_passes
) -> None:
    params = TrueSkillParams(
        tau=tau,
        beta=beta,
        draw_probability=draw_probability,
        min_delta=min_delta,
        max_passes=max_passes,
    )
    (ma, mb), (sa, sb) = mus, sigmas
    ((a,), (b,)) = rate_messages(params, [[(ma, sa)], [(mb, sb)]], places, [[1.0], [1.0]])
    # (repr: the same floats, signs of zero included)
    assert repr(duel_messages(params, ma, sa, mb, sb, *places)) == repr((a, b))


player = st.tuples(
    st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0])), st.floats(1e-6, 1e6)
)


@settings(max_examples=200, deadline=None)
@given(
    teams=st.lists(st.lists(player, min_size=1, max_size=4), min_size=2, max_size=2),
    places=st.sampled_from([(1, 2), (2, 1), (1, 1)]),
    data=st.data(),
    draw_probability=st.sampled_from([0.0, 0.1]),
    min_delta=st.sampled_from([1e-4, 1e-12]),
)
def test_two_teams_written_out_are_the_factor_graph_bit_for_bit(  # type: ignore[no-untyped-def]
    teams, places, data, draw_probability, min_delta
) -> None:
    params = TrueSkillParams(draw_probability=draw_probability, min_delta=min_delta)
    weights = [[data.draw(st.sampled_from([1.0, 0.5, 0.0, 1e-5])) for _ in t] for t in teams]
    general = rate_messages(params, teams, places, weights)
    assert repr(two_team_messages(params, teams, places, weights)) == repr(general)


def test_the_hooks_take_and_give_tuples() -> None:
    params = TrueSkillParams()
    newcomer = (25.0, 25 / 3)
    pairings = rankcraft_team(params, [[newcomer], [newcomer]], [1, 2], 1.0, None, LAYOUT)
    (((message, score, weight),),), (((other, lost, _),),) = pairings
    assert type(message) is type(other) is TrueSkillMessage
    assert (score, lost, weight) == (1.0, 0.0, 1.0)
    after = rankcraft_update(params, newcomer, pairings[0][0])
    (want,), _ = rate(params, [[newcomer], [newcomer]], [1, 2])
    assert after == want
    assert after == pytest.approx((29.395832, 7.171476), abs=1e-6)
    assert rankcraft_explain(params, newcomer, pairings[0][0], after) == {
        "mu_change": after[0] - 25.0
    }
    # a pairing from another team plugin (an opponent state): the 1-v-1 against it
    assert rankcraft_update(params, newcomer, [(newcomer, 1.0, 1.0)]) == after
    # three sides and a team of two: the general factor graph
    sides = [[newcomer, (30.0, 2.0)], [newcomer], [(20.0, 5.0)]]
    three = rankcraft_team(params, sides, [2, 1, 3], 1.0, None, LAYOUT)
    want_all = rate(params, sides, [2, 1, 3])
    got = [
        [rankcraft_update(params, s, p) for s, p in zip(side, ps, strict=True)]
        for side, ps in zip(sides, three, strict=True)
    ]
    assert got == want_all
    # a side's tuple: (sum of mu, sqrt of the sum of sigma squared, players)
    assert rankcraft_aggregate(params, sides[0], LAYOUT) == pytest.approx(
        (55.0, math.sqrt((25 / 3) ** 2 + 4.0), 2)
    )


def test_a_league_rates_teams_with_partial_play() -> None:
    league = rankcraft.League("trueskill")
    report = league.record(
        {
            "id": "g1",
            "played_at": "2024-03-03",
            "teams": [["a", "b"], ["c", "d"]],
            "scores": [3, 1],
            "seconds_played": [[5400, 2700], [5400, 5400]],
        }
    )
    assert league.ruleset.team.params is league.ruleset.update.params
    got = [(c.skill_after.mu, c.skill_after.sigma) for c in report.changes]
    theirs = _peer([[(25.0, 25 / 3)] * 2] * 2, [1, 2], [[1.0, 0.5], [1.0, 1.0]])
    assert _flat([got]) == pytest.approx(_flat(theirs), abs=1e-9)
    # a 1-v-1 through another team plugin is the same as the joint step
    solo = rankcraft.League(rankcraft.loads_ruleset('name = "x"\n[update]\nplugin = "trueskill"\n'))
    solo.record({"id": "g", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]})
    (want,), _ = _peer([[(25.0, 25 / 3)], [(25.0, 25 / 3)]], [1, 2])
    assert (solo.player("a").skill.mu, solo.player("a").skill.sigma) == pytest.approx(
        want, abs=1e-9
    )


def test_match_weight_tempers_the_message() -> None:
    whole = rankcraft.League("trueskill")
    half = rankcraft.League("trueskill")
    match = {"id": "g", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    whole.record(match)
    half.record({**match, "weight": 0.5})
    tau2 = (25 / 300) ** 2
    prior = 1.0 / ((25 / 3) ** 2 + tau2)
    gained = 1.0 / whole.player("a").skill.sigma ** 2 - prior
    assert 1.0 / half.player("a").skill.sigma ** 2 - prior == pytest.approx(gained / 2)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "draw_probability",
            "1.0",
            "'draw_probability' must be a finite number in [0.0, 0.999999]: 1.0",
        ),
        ("beta", "0.0", "'beta' must be a finite number in [1e-06, 1000000.0]: 0.0"),
        ("min_delta", "0.0", "'min_delta' must be a finite number in [1e-12, 1.0]: 0.0"),
        ("sigma", "inf", "'sigma' must be a finite number in [1e-06, 1000000.0]: inf"),
    ],
)
def test_bad_params_are_refused_naming_field_and_value(key: str, value: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError) as error:
        rankcraft.loads_ruleset(
            f'name = "x"\n[update]\nplugin = "trueskill"\n[update.params]\n{key} = {value}\n'
        )
    assert message in str(error.value)


def test_world_cup_prefix_replays_without_nan(shared_data: Path) -> None:
    league = rankcraft.League("trueskill")
    with gzip.open(shared_data / "worldcup_lineups_1970_2022.jsonl.gz", "rt") as lines:
        matches = [json.loads(line) for line in itertools.islice(lines, 40)]
    for m in matches:
        m.pop("meta", None)
        report = league.record(m)
        assert math.fsum(report.expected) == pytest.approx(1.0)
    players = league.players()
    assert len(players) > 300
    for record in players:
        assert math.isfinite(record.skill.mu) and 0 < record.skill.sigma <= 25 / 3 + 0.1
