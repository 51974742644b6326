"""The ``wenglin`` plugin (Weng and Lin's models, as the openskill package): published
cases, agreement with the openskill package on random matches, invariants, params."""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.forms import layout
from rankcraft.plugins._gaussian import cdf
from rankcraft.plugins.wenglin import (
    MODELS,
    WengLinParams,
    WengLinSkill,
    WengLinStep,
    _step,
    duel,
    rankcraft_aggregate,
    rankcraft_expectation,
    rankcraft_explain,
    rankcraft_team,
    rankcraft_update,
    rate,
    two_teams,
)

LAYOUT = layout(WengLinSkill)

openskill_models = pytest.importorskip("openskill.models")
PEERS = {
    "plackett-luce": openskill_models.PlackettLuce,
    "bradley-terry-full": openskill_models.BradleyTerryFull,
    "bradley-terry-part": openskill_models.BradleyTerryPart,
    "thurstone-mosteller-full": openskill_models.ThurstoneMostellerFull,
    "thurstone-mosteller-part": openskill_models.ThurstoneMostellerPart,
}


def _flat(pairs: list[tuple[float, float]]) -> list[float]:
    return [x for pair in pairs for x in pair]


def _uniform(mu: float, sigma: float, *sizes: int) -> list[list[tuple[float, float]]]:
    return [[(mu, sigma)] * n for n in sizes]


# openskill's published test data (its tests/models/data/*.json): every player starts at
# the model's (mu, sigma); teams of 1 and 2 players ("normal": in order; "scores": the
# second team wins), of 1, 2 and 3 players ("limit_sigma": places 2, 1, 3 with
# limit_sigma; "ties": places 1, 2, 1). Expected: the new mu of each team's players.
PUBLISHED = {
    "plackett-luce": (
        31.321989232514305,
        11.379964801443018,
        {
            "normal": (36.48967347401391, 26.154304991014694),
            "scores": (30.19454401757094, 32.44943444745767),
            "limit_sigma": (35.008962716922355, 34.774820565754936, 24.182184414865624),
            "ties": (33.21874815457553, 30.27713112192334, 30.470088421044046),
        },
    ),
    "bradley-terry-full": (
        25.884970436778087,
        14.349296029339108,
        {
            "normal": (31.79936154740682, 19.970579326149352),
            "scores": (23.73811436341968, 28.031826510136494),
            "limit_sigma": (29.740773636128853, 32.377929340201874, 15.536208334003534),
            "ties": (34.28794350513957, 18.004925474111353, 25.362042331083334),
        },
    ),
    "bradley-terry-part": (
        8.954715133403496,
        5.848503823078021,
        {
            "normal": (10.946230734590799, 6.963199532216194),
            "scores": (8.02711934882737, 9.882310917979623),
            "limit_sigma": (9.53168513913054, 10.195020992403235, 7.137439268676715),
            "ties": (10.338265059251315, 7.543004512196137, 8.982875828763039),
        },
    ),
    "thurstone-mosteller-part": (
        35.11283849112418,
        7.2537356994909095,
        {
            "normal": (38.419958411489915, 31.805718570758444),
            "scores": (34.73205676858832, 35.49362021366004),
            "limit_sigma": (37.10034333265211, 36.478190399296686, 31.759981741423744),
            "ties": (38.650200007080755, 33.24407874650088, 33.44423671979091),
        },
    ),
}
PUBLISHED_SIGMAS = {  # the new sigmas of the Plackett-Luce cases
    "normal": (11.237778601372977, 11.17822477763209),
    "scores": (11.237778601372977, 11.17822477763209),
    "limit_sigma": (11.322612945836939, 11.291328826858104, 11.192736898569162),
    "ties": (11.354896725884002, 11.291328826858104, 11.249240904583088),
}
CASES = {
    "normal": ((1, 2), (1, 2), False),
    "scores": ((1, 2), (2, 1), False),
    "limit_sigma": ((1, 2, 3), (2, 1, 3), True),
    "ties": ((1, 2, 3), (1, 2, 1), False),
}


@pytest.mark.parametrize(("model", "case"), list(itertools.product(PUBLISHED, CASES)))
def test_openskill_published_cases(model: str, case: str) -> None:
    mu, sigma, expected = PUBLISHED[model]
    sizes, places, limit_sigma = CASES[case]
    params = WengLinParams(model=model, mu=mu, sigma=sigma, limit_sigma=limit_sigma)
    new = rate(params, _uniform(mu, sigma, *sizes), places)
    for team, want in zip(new, expected[case], strict=True):
        assert [m for m, _ in team] == pytest.approx([want] * len(team), abs=1e-9)
    if model == "plackett-luce":
        assert [t[0][1] for t in new] == pytest.approx(PUBLISHED_SIGMAS[case], abs=1e-9)


def test_a_1v1_between_newcomers() -> None:
    new = rate(WengLinParams(tau=0.0), _uniform(25.0, 25 / 3, 1, 1), [1, 2])
    # openskill's PlackettLuce(tau=0) gives the same pair
    assert new[0][0] == pytest.approx((27.63523138347365, 8.065506316323548), abs=1e-12)
    assert new[1][0] == pytest.approx((22.36476861652635, 8.065506316323548), abs=1e-12)


teams_strategy = st.lists(
    st.lists(st.tuples(st.floats(10.0, 40.0), st.floats(0.5, 12.0)), min_size=1, max_size=3),
    min_size=2,
    max_size=5,
)


def _peer_rate(model: str, teams, places, weights=None, **kw):  # type: ignore[no-untyped-def]
    peer = PEERS[model](**kw)
    rated = peer.rate(
        [[peer.rating(mu=m, sigma=s) for m, s in team] for team in teams],
        ranks=list(places),
        weights=weights,
    )
    return [[(p.mu, p.sigma) for p in team] for team in rated]


def _openskill_tail(model: str, teams, places, beta: float, epsilon: float) -> bool:  # type: ignore[no-untyped-def]
    """Whether a Thurstone-Mosteller comparison falls in a far tail, where openskill's
    normal distribution (from ``erf``) keeps few digits and its V, W, Ṽ, W̃ switch to
    approximations: an upset beyond 5 standard deviations, or a draw whose two-sided
    mass is below 1e-4 (rankcraft evaluates the exact expressions there)."""
    if not model.startswith("thurstone"):
        return False
    tau2 = (25 / 300) ** 2
    grown = [(sum(m for m, _ in t), sum(s * s + tau2 for _, s in t)) for t in teams]
    for (i, a), (j, b) in itertools.combinations(enumerate(grown), 2):
        c = math.sqrt(a[1] + b[1] + 2 * beta * beta) * (2 if model.endswith("part") else 1)
        x, t = abs(a[0] - b[0]) / c, epsilon / c
        if places[i] == places[j]:
            if cdf(t - x) - cdf(-t - x) < 1e-4:
                return True
        elif x + t > 5.0:
            return True
    return False


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(model=st.sampled_from(MODELS), teams=teams_strategy, data=st.data())
def test_agrees_with_the_openskill_package(model: str, teams, data) -> None:  # type: ignore[no-untyped-def]
    places = data.draw(
        st.lists(st.integers(1, len(teams)), min_size=len(teams), max_size=len(teams))
    )
    assume(not _openskill_tail(model, teams, places, 25 / 6, 0.1))
    mine = rate(WengLinParams(model=model), teams, places)
    theirs = _peer_rate(model, teams, places)
    for a, b in zip(mine, theirs, strict=True):
        for (m1, s1), (m2, s2) in zip(a, b, strict=True):
            # (1e-9 relative: in a far tail openskill's Φ, from erf, keeps fewer digits)
            assert m1 == pytest.approx(m2, rel=1e-9, abs=1e-9)
            assert s1 == pytest.approx(s2, rel=1e-9, abs=1e-9)


def test_partial_play_weights_scale_a_winners_share_as_openskill() -> None:
    # openskill multiplies a winning team's shares by the weights (and divides a losing
    # team's: rankcraft multiplies both, see docs/openskill.md); its weights are first
    # rescaled to weight_bounds per team, here (0.2, 1) with weights spanning exactly that
    teams = [[(25.0, 8.0), (27.0, 3.0)], [(30.0, 5.0)], [(20.0, 7.0), (22.0, 2.0)]]
    weights = [[0.2, 1.0], [1.0], [1.0, 0.2]]
    mine = rate(WengLinParams(), teams, [1, 2, 3], weights)
    theirs = _peer_rate("plackett-luce", teams, [1, 2, 3], weights, weight_bounds=(0.2, 1.0))
    assert _flat(mine[0]) == pytest.approx(_flat(theirs[0]), abs=1e-9)  # the winners
    assert _flat(mine[1]) == pytest.approx(_flat(theirs[1]), abs=1e-9)  # (gained too)
    assert mine[2][0] == pytest.approx(theirs[2][0], abs=1e-9)  # weight 1: the same
    assert mine[2][1][0] - 22.0 == pytest.approx((theirs[2][1][0] - 22.0) * 0.2 * 0.2)


@pytest.mark.parametrize("sides", [2, 3, 5])
def test_predictions_agree_with_openskill_predict_win(sides: int) -> None:
    teams = [
        [(25.0, 8.0), (27.0, 3.0)],
        [(30.0, 5.0)],
        [(20.0, 7.0), (22.0, 2.0), (21.0, 4.0)],
        [(24.0, 1.0)],
        [(40.0, 6.0)],
    ][:sides]
    params = WengLinParams()
    states = [rankcraft_aggregate(params, list(t), LAYOUT) for t in teams]
    mine = rankcraft_expectation(params, states)
    peer = PEERS["plackett-luce"]()
    theirs = peer.predict_win([[peer.rating(mu=m, sigma=s) for m, s in t] for t in teams])
    assert mine == pytest.approx(theirs, abs=1e-12)
    assert math.fsum(mine) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=15, deadline=None)
@given(model=st.sampled_from(MODELS), teams=teams_strategy, data=st.data())
def test_invariants(model: str, teams, data) -> None:  # type: ignore[no-untyped-def]
    places = data.draw(
        st.lists(st.integers(1, len(teams)), min_size=len(teams), max_size=len(teams))
    )
    params = WengLinParams(model=model, tau=0.0)
    new = rate(params, teams, places)
    for old_team, new_team in zip(teams, new, strict=True):
        for (_, s0), (m1, s1) in zip(old_team, new_team, strict=True):
            assert math.isfinite(m1) and math.isfinite(s1)
            assert s1 <= s0 * (1 + 1e-12)  # without tau, a match never adds uncertainty
    # players within a team: reordering them reorders their results, nothing else
    flipped = rate(params, [list(reversed(t)) for t in teams], places)
    for a, b in zip(new, flipped, strict=True):
        assert _flat(list(reversed(b))) == pytest.approx(_flat(a), abs=1e-9)
    states = [rankcraft_aggregate(params, list(t), LAYOUT) for t in teams]
    probabilities = rankcraft_expectation(params, states)
    assert math.fsum(probabilities) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= p <= 1.0 for p in probabilities)


@settings(max_examples=300, deadline=None)
@given(
    mus=st.tuples(*[st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0, 25.0]))] * 2),
    sigmas=st.tuples(*[st.floats(1e-6, 1e6)] * 2),
    places=st.sampled_from([(1, 2), (2, 1), (1, 1), (4, 9)]),
    weight=st.sampled_from([1.0, 0.5, 1e-4]),
    tau=st.sampled_from([0.0, 25 / 300, 3.0]),
    beta=st.sampled_from([25 / 6, 1e-6, 100.0]),
    kappa=st.sampled_from([1e-4, 0.5, 1.0]),
    limit_sigma=st.booleans(),
)
def test_the_written_out_duel_is_rate_bit_for_bit(  # type: ignore[no-untyped-def]
    mus, sigmas, places, weight, tau, beta, kappa, limit_sigma
) -> None:
    params = WengLinParams(tau=tau, beta=beta, kappa=kappa, limit_sigma=limit_sigma)
    (ma, mb), (sa, sb) = mus, sigmas
    ((a,), (b,)) = rate(params, [[(ma, sa)], [(mb, sb)]], places, [[weight], [weight]])
    general = (_step(ma, sa, *a), _step(mb, sb, *b))
    # (repr: the same floats, signs of zero included)
    assert repr(duel(params, ma, sa, mb, sb, places[0], places[1], weight)) == repr(general)


player = st.tuples(
    st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0])), st.floats(1e-6, 1e6)
)


@settings(max_examples=200, deadline=None)
@given(
    teams=st.lists(st.lists(player, min_size=1, max_size=4), min_size=2, max_size=2),
    places=st.sampled_from([(1, 2), (2, 1), (1, 1)]),
    data=st.data(),
    tau=st.sampled_from([0.0, 25 / 300]),
    kappa=st.sampled_from([1e-4, 0.5]),
    limit_sigma=st.booleans(),
)
def test_two_teams_written_out_are_rate_bit_for_bit(  # type: ignore[no-untyped-def]
    teams, places, data, tau, kappa, limit_sigma
) -> None:
    params = WengLinParams(tau=tau, kappa=kappa, limit_sigma=limit_sigma)
    weights = [[data.draw(st.floats(1e-4, 1.0)) for _ in team] for team in teams]
    new = rate(params, teams, places, weights)
    general = [
        [_step(*teams[i][j], *new[i][j]) for j in range(len(t))] for i, t in enumerate(teams)
    ]
    assert repr(two_teams(params, teams, places, weights)) == repr(general)


def test_the_hooks_take_and_give_tuples() -> None:
    params = WengLinParams(tau=0.0)
    newcomer = (25.0, 25 / 3)
    sides = [[newcomer], [newcomer]]
    pairings = rankcraft_team(params, sides, [1, 2], 1.0, None, LAYOUT)
    (((step, score, weight),),), (((other, lost, _),),) = pairings
    assert type(step) is type(other) is WengLinStep
    assert (score, lost, weight) == (1.0, 0.0, 1.0)
    after = rankcraft_update(params, newcomer, pairings[0][0])
    assert after == pytest.approx((27.63523138347365, 8.065506316323548), abs=1e-12)
    assert rankcraft_explain(params, newcomer, pairings[0][0], after) == {
        "mu_change": after[0] - 25.0
    }
    # a pairing from another team plugin (an opponent state): the two-team match
    assert rankcraft_update(params, newcomer, [(newcomer, 1.0, 1.0)]) == after
    # three sides (the general rate) and a team of two
    three = rankcraft_team(
        params, [[newcomer, newcomer], [newcomer], [newcomer]], [1, 2, 3], 1.0, None, LAYOUT
    )
    want = rate(params, [[newcomer] * 2, [newcomer], [newcomer]], [1, 2, 3])
    got = [[rankcraft_update(params, newcomer, p) for p in side] for side in three]
    assert got == [[pytest.approx(s, abs=1e-12) for s in side] for side in want]
    assert rankcraft_aggregate(params, [newcomer, (20.0, 2.0)], LAYOUT) == pytest.approx(
        (45.0, math.sqrt((25 / 3) ** 2 + 4.0))
    )


def test_a_league_rates_teams_jointly_with_partial_play() -> None:
    league = rankcraft.League("openskill")
    report = league.record(
        {
            "id": "g1",
            "played_at": "2024-03-03",
            "teams": [["a", "b"], ["c", "d"]],
            "scores": [3, 1],
            "seconds_played": [[5400, 2700], [5400, 5400]],
        }
    )
    params = league.ruleset.update.params
    assert league.ruleset.team.params is params  # the team step shares the update's params
    expected = rate(params, _uniform(25.0, 25 / 3, 2, 2), [1, 2], [[1.0, 0.5], [1.0, 1.0]])
    got = [
        [(c.skill_after.mu, c.skill_after.sigma) for c in report.changes[:2]],
        [(c.skill_after.mu, c.skill_after.sigma) for c in report.changes[2:]],
    ]
    assert _flat(got[0] + got[1]) == pytest.approx(_flat(expected[0] + expected[1]), abs=1e-12)
    assert report.changes[1].skill_after.mu - 25.0 == pytest.approx(
        (report.changes[0].skill_after.mu - 25.0) / 2
    )


def test_other_team_plugins_feed_the_update_pairwise() -> None:
    league = rankcraft.League(
        rankcraft.loads_ruleset('name = "x"\n[update]\nplugin = "wenglin"\n')  # team: mean
    )
    league.record({"id": "g", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]})
    joint = rate(WengLinParams(), _uniform(25.0, 25 / 3, 1, 1), [1, 2])
    assert (league.player("a").skill.mu, league.player("a").skill.sigma) == pytest.approx(
        joint[0][0], abs=1e-12
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("beta", "-1.0", "'beta' must be a finite number in [1e-06, 1000000.0]: -1.0"),
        ("kappa", "0.0", "'kappa' must be a finite number in [1e-12, 1.0]: 0.0"),
        ("tau", "nan", "'tau' must be a finite number in [0.0, 1000000.0]: nan"),
        ("model", '"elo"', "'model' must be in"),
        ("window", "0", "'window' must be a finite number in [1, 1000]: 0"),
    ],
)
def test_bad_params_are_refused_naming_field_and_value(key: str, value: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError) as error:
        rankcraft.loads_ruleset(
            f'name = "x"\n[update]\nplugin = "wenglin"\n[update.params]\n{key} = {value}\n'
        )
    assert message in str(error.value)


def test_a_stored_state_out_of_range_is_refused() -> None:
    with pytest.raises(rankcraft.StateError, match="'sigma' must be a finite number"):
        WengLinSkill(25.0, 0.0)


def test_f1_prefix_replays_without_nan(shared_data: Path) -> None:
    league = rankcraft.League("openskill")
    with gzip.open(shared_data / "f1_races_1950_2026.jsonl.gz", "rt") as lines:
        matches = [json.loads(line) for _, line in zip(range(60), lines, strict=False)]
    for m in matches:
        report = league.record(m)
        assert math.fsum(report.expected) == pytest.approx(1.0)
    players = league.players()
    assert len(players) > 100
    for record in players:
        assert math.isfinite(record.skill.mu) and 0 < record.skill.sigma <= 25 / 3 + 0.1


@pytest.mark.parametrize(
    ("table", "refused"),
    [
        ('[period]\nmode = "batch"\nlength_days = 7.0\n', "not 'batch' and 'result'"),
        ('[period]\nmode = "live"\nlength_days = 7.0\n', "not 'live' and 'result'"),
        ('[quits]\nquitter = "loss"\n', "not 'match' and 'loss'"),
    ],
)
@pytest.mark.parametrize("plugin", ["wenglin", "trueskill"])
def test_the_joint_team_step_needs_whole_matches(plugin: str, table: str, refused: str) -> None:
    text = f'name = "x"\n{table}[update]\nplugin = "{plugin}"\n[team]\nplugin = "{plugin}"\n'
    with pytest.raises(rankcraft.RulesetError, match="rates each match as a whole") as error:
        rankcraft.loads_ruleset(text)
    assert refused in str(error.value)
    # the update alone, with a pairwise team plugin, rates rating periods
    rankcraft.loads_ruleset(f'name = "x"\n{table}[update]\nplugin = "{plugin}"\n')


def test_the_shared_team_params_follow_the_update_through_a_round_trip() -> None:
    from rankcraft.tune import apply, parse_param

    ruleset = rankcraft.load_ruleset("openskill")
    assert rankcraft.loads_ruleset(rankcraft.dumps(ruleset)) == ruleset
    tuned = apply(ruleset, [parse_param("update.beta=1:10", ruleset)], [6.0])
    assert tuned.team.params is tuned.update.params and tuned.team.params.beta == 6.0
    # a team table of its own is kept as written
    own = rankcraft.loads_ruleset(
        'name = "x"\n[update]\nplugin = "wenglin"\n[team]\nplugin = "wenglin"\n'
        "[team.params]\nbeta = 2.0\n"
    )
    assert own.team.params.beta == 2.0 and own.update.params.beta == 25 / 6
