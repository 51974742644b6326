"""The ``goals`` plugin (attack and defence ratings, Dixon-Coles scores) and the
``football-goals`` ruleset, checked against computations written here with SciPy: the
score matrix from ``scipy.stats.poisson`` and Dixon and Coles' τ, and a maximum-likelihood
fit (``scipy.optimize``) of a synthetic league whose teams' strengths are known."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.plugins import goals

np = pytest.importorskip("numpy")
stats = pytest.importorskip("scipy.stats")
optimize = pytest.importorskip("scipy.optimize")


def dc_tau(x: int, y: int, lam: float, mu: float, rho: float) -> float:
    """Dixon and Coles (1997), eq. 4.2, written out again."""
    if (x, y) == (0, 0):
        return 1 - lam * mu * rho
    if (x, y) == (0, 1):
        return 1 + lam * rho
    if (x, y) == (1, 0):
        return 1 + mu * rho
    if (x, y) == (1, 1):
        return 1 - rho
    return 1.0


def scipy_matrix(lam: float, mu: float, rho: float, n: int) -> Any:
    """The score matrix up to ``n`` goals with the last row and column holding ``n`` or
    more, from scipy's Poisson pmf and survival function."""
    p = np.append(stats.poisson.pmf(np.arange(n), lam), stats.poisson.sf(n - 1, lam))
    q = np.append(stats.poisson.pmf(np.arange(n), mu), stats.poisson.sf(n - 1, mu))
    grid = np.outer(p, q)
    for x, y in ((0, 0), (0, 1), (1, 0), (1, 1)):
        grid[x, y] *= dc_tau(x, y, lam, mu, rho)
    return grid


@pytest.mark.parametrize(
    ("lam", "mu", "rho"),
    [(1.35, 1.35, -0.1), (2.6, 0.4, -0.13), (0.7, 1.9, 0.05), (5.0, 0.2, 0.0), (1.1, 1.0, -0.3)],
)
def test_the_score_matrix_is_the_dixon_coles_one(lam: float, mu: float, rho: float) -> None:
    ours = np.array(goals.score_matrix(lam, mu, rho, 12))
    theirs = scipy_matrix(lam, mu, rho, 12)
    assert theirs.sum() == pytest.approx(1.0, abs=1e-12)  # τ's corrections sum to zero
    assert ours == pytest.approx(theirs, abs=1e-13)
    for x in range(3):
        for y in range(3):
            assert goals.tau(x, y, lam, mu, rho) == pytest.approx(dc_tau(x, y, lam, mu, rho))


@pytest.mark.parametrize(
    ("lam", "mu", "rho"), [(1.35, 1.35, -0.1), (2.6, 0.4, -0.13), (0.7, 1.9, 0.05), (9.0, 0.3, 0)]
)
def test_outcomes_and_margins_are_the_matrix_sums(lam: float, mu: float, rho: float) -> None:
    grid = scipy_matrix(lam, mu, rho, 60)
    win, draw, loss = np.tril(grid, -1).sum(), np.trace(grid), np.triu(grid, 1).sum()
    ours = goals.outcome_probabilities(lam, mu, rho)
    assert ours == pytest.approx((win, draw, loss), abs=1e-12)
    assert math.fsum(ours) == pytest.approx(1.0, abs=1e-15)
    # the model is symmetric: swapping the sides swaps win and loss
    assert goals.outcome_probabilities(mu, lam, rho) == pytest.approx(ours[::-1], abs=1e-14)
    margins = goals.margin_probabilities(lam, mu, rho, 60)
    assert math.fsum(margins.values()) == pytest.approx(1.0, abs=1e-12)
    assert margins[0] == pytest.approx(draw, abs=1e-12)
    assert margins[2] == pytest.approx(sum(grid[i + 2, i] for i in range(59)), abs=1e-12)
    assert math.fsum(v for m, v in margins.items() if m > 0) == pytest.approx(win, abs=1e-12)


def collapsed(grid: Any, k: int) -> Any:
    """The exact-score matrix ``grid`` summed to ``k`` goals a side, the last row and
    column holding ``k`` or more."""
    rows = np.vstack([grid[:k], grid[k:].sum(axis=0)])
    return np.hstack([rows[:, :k], rows[:, k:].sum(axis=1, keepdims=True)])


@pytest.mark.parametrize("max_goals", [1, 2, 3])
@pytest.mark.parametrize(
    ("lam", "mu", "rho"),
    [(1.35, 1.35, -0.1), (2.6, 0.4, -0.13), (0.7, 1.9, 0.3), (0.3, 0.2, -0.9), (2.0, 2.0, 0.9)],
)
def test_a_small_max_goals_collapses_the_exact_scores(
    lam: float, mu: float, rho: float, max_goals: int
) -> None:
    # issue 39, item 2: the cell "1 or more" is the sum of the exact scores it holds, τ
    # applied to each exact low score (Dixon and Coles' τ is for exact scores only)
    exact = np.clip(scipy_matrix(lam, mu, rho, 60), 0.0, None)  # a τ below 0 counts as 0
    exact = exact / exact.sum()  # (and the rest is renormalised)
    ours = np.array(goals.score_matrix(lam, mu, rho, max_goals))
    assert ours == pytest.approx(collapsed(exact, max_goals), abs=1e-12)
    draws = goals.margin_probabilities(lam, mu, rho, max_goals)[0]
    assert draws == pytest.approx(np.trace(collapsed(exact, max_goals)), abs=1e-12)


def test_the_draw_margin_of_max_goals_1_is_the_models() -> None:
    # the case: 0.673 before (τ(1, 1) applied to the whole "1 or more" cell)
    p0, p1 = math.exp(-1.35), 1.35 * math.exp(-1.35)
    both_score = (1 - p0) ** 2 + p1 * p1 * 0.1  # τ(1, 1) − 1 = -rho on the exact 1–1 only
    model = p0 * p0 * (1 + 1.35 * 1.35 * 0.1) + both_score
    assert model == pytest.approx(0.640, abs=5e-4)
    assert goals.margin_probabilities(1.35, 1.35, -0.1, 1)[0] == pytest.approx(model, abs=1e-12)


def test_a_cut_tau_still_gives_probabilities_that_sum_to_one() -> None:
    # rho = 0.9 with λμ = 4: τ(0,0) = 1 - 3.6 < 0 counts as 0 and the rest is renormalised
    grid = goals.score_matrix(2.0, 2.0, 0.9, 10)
    assert grid[0][0] == 0.0
    assert math.fsum(map(math.fsum, grid)) == pytest.approx(1.0, abs=1e-12)
    win, draw, loss = goals.outcome_probabilities(2.0, 2.0, 0.9)
    assert min(win, draw, loss) >= 0.0 and win + draw + loss == pytest.approx(1.0)
    assert win == pytest.approx(loss)


GOALS = 'name = "g"\n[update]\nplugin = "goals"\n[update.params]\n'


def league(extra: str = "") -> rankcraft.League:
    return rankcraft.League(rankcraft.loads_ruleset(GOALS + extra))


def test_the_hooks_read_the_expected_goals_and_the_home_side() -> None:
    params = goals.GoalsParams(base=0.2, home_advantage=0.3, rho=-0.1)
    a, b = (0.4, 0.1, 0.5), (-0.2, 0.3, 0.1)
    lam, mu = math.exp(0.2 + 0.4 - 0.3 + 0.3), math.exp(0.2 - 0.2 - 0.1)
    assert goals.expected_goals(params, a, b, 0) == pytest.approx((lam, mu))
    win, draw, loss = goals.rankcraft_outcomes(params, [a, b], 0, None)  # type: ignore[misc]
    assert (win, draw, loss) == pytest.approx(goals.outcome_probabilities(lam, mu, -0.1))
    expected = goals.rankcraft_expectation(params, [a, b], 0, None)
    assert expected == pytest.approx([win + draw / 2, loss + draw / 2])
    assert goals.rankcraft_expectation(params, [b, a], 1, None) == pytest.approx(expected[::-1])
    # more than two sides: the round robin at a neutral venue, summing to 1
    three = goals.rankcraft_expectation(params, [a, b, (0.0, 0.0, 0.0)], None, None)
    assert math.fsum(three) == pytest.approx(1.0) and three[0] > three[1] > three[2]
    assert goals.rankcraft_outcomes(params, [a, b, a], None, None) is None
    # a broadcast of the hook with another plugin's params gets no answer from this one
    from rankcraft.plugins.elo import EloParams

    assert goals.rankcraft_outcomes(EloParams(), [a, b], None, None) is None


def test_one_update_is_the_documented_gradient_step() -> None:
    lg = league("learning_rate = 0.1\nrho = -0.1\nhome_advantage = 0.25\nbase = 0.3\n")
    report = lg.record(
        {"id": "m1", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [0, 0]}
    )
    lam = mu = math.exp(0.3)  # no home side given
    t = 1 - lam * mu * -0.1
    step_attack = 0.1 * (0 - lam - lam * mu * -0.1 / t)
    step_defence = 0.1 * (mu - 0 + lam * mu * -0.1 / t)
    for change in report.changes:
        assert change.skill_after.attack == pytest.approx(step_attack)
        assert change.skill_after.defence == pytest.approx(step_defence)
        assert change.skill_after.rating == pytest.approx(step_attack + step_defence)
        assert change.factors["expected_for"] == pytest.approx(lam)
    report = lg.record(
        {
            "id": "m2",
            "played_at": "2024-01-02",
            "teams": [["a"], ["c"]],
            "scores": [3, 1],
            "meta": {},
        }
    )
    a, c = report.changes
    lam_a = math.exp(0.3 + step_attack - 0.0)
    lam_c = math.exp(0.3 + 0.0 - step_defence)
    assert a.skill_after.attack == pytest.approx(step_attack + 0.1 * (3 - lam_a))
    assert a.skill_after.defence == pytest.approx(step_defence + 0.1 * (lam_c - 1))
    assert c.skill_after.attack == pytest.approx(0.1 * (1 - lam_c))
    assert c.skill_after.defence == pytest.approx(0.1 * (lam_a - 3))


def test_home_advantage_per_competition() -> None:
    text = (
        "home_advantage = 0.3\ncontext_field = 'tournament'\n"
        "[[update.params.context_rules]]\ncontains = 'Friendly'\nhome_advantage = 0.1\n"
        "learning_scale = 0.5\n"
    )
    params = rankcraft.loads_ruleset(GOALS + text).update.params
    friendly = rankcraft.parse_match(
        {
            "id": "f",
            "played_at": "2024-01-01",
            "teams": [["a"], ["b"]],
            "scores": [1, 0],
            "meta": {"tournament": "Friendly"},
            "home": 0,
        }
    )
    cup = attrs_evolve_meta(friendly, {"tournament": "World Cup"})
    zero = (0.0, 0.0, 0.0)
    assert goals.expected_goals(params, zero, zero, 0, friendly)[0] == pytest.approx(
        math.exp(params.base + 0.1)
    )
    assert goals.expected_goals(params, zero, zero, 0, cup)[0] == pytest.approx(
        math.exp(params.base + 0.3)
    )
    f = goals.rankcraft_update(params, zero, [(zero, 1.0, 1.0)], 0, 0, friendly)
    c = goals.rankcraft_update(params, zero, [(zero, 1.0, 1.0)], 0, 0, cup)
    lam_f, lam_c = math.exp(params.base + 0.1), math.exp(params.base + 0.3)
    assert f[0] == pytest.approx(0.5 * params.learning_rate * (1 - lam_f))
    assert c[0] == pytest.approx(params.learning_rate * (1 - lam_c))


def attrs_evolve_meta(match: rankcraft.Match, meta: dict[str, Any]) -> rankcraft.Match:
    import attrs

    return attrs.evolve(match, meta=meta)


def test_bad_params_are_refused_naming_the_field_and_the_value() -> None:
    for text, field, value in [
        ("learning_rate = 2.0\n", "learning_rate", "2.0"),
        ("rho = -1.5\n", "rho", "-1.5"),
        ("home_advantage = inf\n", "home_advantage", "inf"),
        ("max_goals = 0\n", "max_goals", "0"),
        ("goal_cap = 0.5\n", "goal_cap", "0.5"),
        ("base = nan\n", "base", "nan"),
    ]:
        with pytest.raises(rankcraft.RulesetError) as caught:
            rankcraft.loads_ruleset(GOALS + text)
        assert f"'{field}'" in str(caught.value) and value in str(caught.value), caught.value
    with pytest.raises(rankcraft.RulesetError, match="'context_rules' need a 'context_field'"):
        rankcraft.loads_ruleset(GOALS + "[[update.params.context_rules]]\ncontains = 'F'\n")


def test_matches_it_cannot_rate_are_refused_naming_the_match() -> None:
    lg = league()
    with pytest.raises(rankcraft.MatchError, match=r"match 'r1'.*needs the match's 'scores'"):
        lg.record({"id": "r1", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "ranks": [1, 2]})
    with pytest.raises(rankcraft.MatchError, match=r"match 'r2'.*two sides, not 3"):
        lg.record(
            {
                "id": "r2",
                "played_at": "2024-01-01",
                "teams": [["a"], ["b"], ["c"]],
                "scores": [1, 2, 0],
            }
        )
    assert lg.players() == []  # nothing was rated


def test_sides_of_several_players_are_rated_as_their_mean() -> None:
    lg = league("learning_rate = 0.1\n")
    lg.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["a", "b"], ["c", "d"]], "scores": [2, 0]}
    )
    skills = {p.id: p.skill for p in lg.players()}
    assert skills["a"] == skills["b"] and skills["c"] == skills["d"]
    assert skills["a"].attack > 0 > skills["c"].attack and skills["a"].rating > 0


# -- a synthetic league against a maximum-likelihood fit --------------------------------

TRUE_ATTACK = [0.5, 0.35, 0.2, 0.05, -0.1, -0.25, -0.3, -0.45]
TRUE_DEFENCE = [0.45, 0.35, 0.2, 0.1, -0.1, -0.2, -0.35, -0.45]
"""Overall strengths (attack + defence) 0.2 apart or more, so that an order is defined."""
BASE, HOME, RHO = 0.2, 0.25, -0.1


def synthetic_league(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` matches between 8 teams of known strengths, scores drawn from the
    Dixon-Coles model (by rejection from independent Poisson draws)."""
    rng = np.random.default_rng(seed)
    at = datetime(2020, 1, 1, tzinfo=UTC)
    out = []
    while len(out) < n:
        h, a = rng.choice(8, size=2, replace=False)
        lam = math.exp(BASE + TRUE_ATTACK[h] - TRUE_DEFENCE[a] + HOME)
        mu = math.exp(BASE + TRUE_ATTACK[a] - TRUE_DEFENCE[h])
        x, y = int(rng.poisson(lam)), int(rng.poisson(mu))
        if rng.random() * 1.3 > dc_tau(x, y, lam, mu, RHO):  # (τ ≤ 1.3 here)
            continue
        at += timedelta(hours=12)
        out.append(
            {
                "id": f"s{len(out)}",
                "played_at": at.isoformat(),
                "teams": [[f"t{h}"], [f"t{a}"]],
                "scores": [x, y],
                "home": 0,
            }
        )
    return out


def mle_fit(matches: list[dict[str, Any]]) -> tuple[Any, Any]:
    """Attack and defence (each centred on 0) maximising the Dixon-Coles likelihood,
    with the base, the home advantage and rho fitted too."""
    h = np.array([int(m["teams"][0][0][1:]) for m in matches])
    a = np.array([int(m["teams"][1][0][1:]) for m in matches])
    x = np.array([m["scores"][0] for m in matches])
    y = np.array([m["scores"][1] for m in matches])

    def nll(theta: Any) -> float:
        att = np.append(theta[:7], -theta[:7].sum())
        dfc = np.append(theta[7:14], -theta[7:14].sum())
        base, home, rho = theta[14:]
        lam = np.exp(base + att[h] - dfc[a] + home)
        mu = np.exp(base + att[a] - dfc[h])
        t = np.ones_like(lam)
        t = np.where((x == 0) & (y == 0), 1 - lam * mu * rho, t)
        t = np.where((x == 0) & (y == 1), 1 + lam * rho, t)
        t = np.where((x == 1) & (y == 0), 1 + mu * rho, t)
        t = np.where((x == 1) & (y == 1), 1 - rho, t)
        if np.any(t <= 0):
            return 1e12
        ll = np.log(t) + stats.poisson.logpmf(x, lam) + stats.poisson.logpmf(y, mu)
        return float(-ll.sum())

    fit = optimize.minimize(nll, np.zeros(17), method="L-BFGS-B")
    assert fit.success, fit.message
    att = np.append(fit.x[:7], -fit.x[:7].sum())
    dfc = np.append(fit.x[7:14], -fit.x[7:14].sum())
    assert fit.x[16] == pytest.approx(RHO, abs=0.08)
    return att, dfc


@pytest.mark.slow(seconds=6)
def test_online_ratings_come_close_to_the_maximum_likelihood_fit() -> None:
    matches = synthetic_league(4000, seed=3)
    att_mle, dfc_mle = mle_fit(matches)
    # the fit finds the league it was drawn from
    assert np.abs(att_mle - TRUE_ATTACK).max() < 0.1
    assert np.abs(dfc_mle - TRUE_DEFENCE).max() < 0.1
    lg = league(f"base = {BASE}\nhome_advantage = {HOME}\nrho = {RHO}\nlearning_rate = 0.005\n")
    lg.record_many(matches)
    skills = {p.id: p.skill for p in lg.players()}
    att = np.array([skills[f"t{i}"].attack for i in range(8)])
    dfc = np.array([skills[f"t{i}"].defence for i in range(8)])
    att, dfc = att - att.mean(), dfc - dfc.mean()
    # stated tolerance: the online estimates (step 0.005, about 1,000 matches a team) stay
    # within 0.12 of the fit for every team, 0.06 on average
    assert np.abs(att - att_mle).max() < 0.12 and np.abs(dfc - dfc_mle).max() < 0.12
    assert np.abs(att - att_mle).mean() < 0.06 and np.abs(dfc - dfc_mle).mean() < 0.06
    # and they rank the teams' overall strength as the fit does
    assert list(np.argsort(-(att + dfc))) == list(np.argsort(-(att_mle + dfc_mle)))
    # a league rated with the attack step's sign flipped would not: the check can fail
    assert stats.spearmanr(att, att_mle).statistic > 0.95


# -- properties over random histories ---------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 80),
    rate=st.floats(0.0, 1.0),
    rho=st.floats(-1.0, 1.0),
)
def test_states_stay_finite_and_forecasts_are_probabilities(
    seed: int, n: int, rate: float, rho: float
) -> None:
    rng = random.Random(seed)
    lg = league(f"learning_rate = {rate!r}\nrho = {rho!r}\n")
    teams = [f"t{i}" for i in range(rng.randint(2, 6))]
    at = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(n):
        a, b = rng.sample(teams, 2)
        at += timedelta(days=rng.random() * 30)
        data: dict[str, Any] = {
            "id": f"m{i}",
            "played_at": at.isoformat(),
            "teams": [[a], [b]],
            "scores": [rng.choice([0, 0, 1, 2, 3, 7, 40]), rng.choice([0, 1, 1, 2, 5])],
        }
        if rng.random() < 0.5:
            data["home"] = rng.randint(0, 1)
        report = lg.record(data)
        assert all(0.0 <= p <= 1.0 for p in report.expected)
        assert math.fsum(report.expected) == pytest.approx(1.0)
        for change in report.changes:
            s = change.skill_after
            assert all(math.isfinite(v) for v in (s.attack, s.defence, s.rating))
            assert abs(s.attack) <= goals.STATE_LIMIT and abs(s.defence) <= goals.STATE_LIMIT
    a, b = rng.sample(teams, 2)
    f, g = lg.forecast([[a], [b]]), lg.forecast([[b], [a]])
    assert f.win is not None and f.draw is not None and g.win is not None
    assert all(0.0 <= p <= 1.0 for p in (*f.win, f.draw))
    assert math.fsum((*f.win, f.draw)) == pytest.approx(1.0)
    assert f.win == pytest.approx(g.win[::-1]) and f.draw == pytest.approx(g.draw)


def test_the_bundled_ruleset_replays_a_history_and_forecasts_three_ways() -> None:
    lg = rankcraft.League("football-goals")
    assert lg.ruleset.update.plugin == "goals" and lg.ruleset.team.plugin == "mean"
    matches = [
        {"id": "1", "played_at": "2020-01-01", "teams": [["ENG"], ["SCO"]], "scores": [3, 0]},
        {"id": "2", "played_at": "2020-02-01", "teams": [["SCO"], ["WAL"]], "scores": [1, 1]},
        {"id": "3", "played_at": "2020-03-01", "teams": [["WAL"], ["ENG"]], "scores": [0, 2]},
    ]
    for m in matches:
        m["meta"] = {"tournament": "Friendly"}
    lg.record_many(matches)
    board = [p.id for p in lg.leaderboard()]
    assert board[0] == "ENG"
    f = lg.forecast([["ENG"], ["WAL"]], home=0)
    assert f.method == "outcomes" and f.win is not None and f.draw is not None
    assert f.win[0] > f.win[1] and math.fsum((*f.win, f.draw)) == pytest.approx(1.0)
    report = lg.store.match("3")
    assert report is not None
    assert set(report.report.changes[0].factors) == {
        "expected_for",
        "expected_against",
        "learning_rate",
    }


def test_score_forecast_agrees_with_the_league_s_forecast() -> None:
    """The score lines of two teams of a league sum to 1 and to the league's forecast."""
    league = rankcraft.League("football-goals")
    for day, (a, b, ga, gb) in enumerate(
        [("ENG", "SCO", 3, 1), ("SCO", "WAL", 0, 0), ("WAL", "ENG", 1, 2), ("ENG", "SCO", 1, 1)]
    ):
        league.record(
            {
                "id": f"m{day}",
                "played_at": f"2024-03-{day + 1:02d}",
                "home": 0,
                "teams": [[a], [b]],
                "scores": [ga, gb],
            }
        )
    params = league.ruleset.update.params
    said = goals.score_forecast(params, league.player("ENG").skill, league.player("WAL").skill, 0)
    forecast = league.forecast([["ENG"], ["WAL"]], home=0)
    win, draw, loss = said["outcomes"]
    assert (win, draw, loss) == pytest.approx((forecast.win[0], forecast.draw, forecast.win[1]))
    assert math.fsum(math.fsum(row) for row in said["scores"]) == pytest.approx(1.0, abs=1e-12)
    assert math.fsum(said["margins"].values()) == pytest.approx(1.0, abs=1e-12)
    assert math.fsum(v for d, v in said["margins"].items() if d > 0) == pytest.approx(win, abs=1e-9)
    assert said["margins"][0] == pytest.approx(draw, abs=1e-9)
    assert said["expected_goals"][0] > said["expected_goals"][1]  # ENG, at home, won more


def test_idle_time_draws_ratings_towards_the_initial_ones() -> None:
    """``idle_keep``: per rating period without a match, the share of attack and defence
    (from the initial ones) a team keeps; 1 (the default) keeps them whole."""
    text = (
        'name = "g"\n[period]\nlength_days = 30.0\n[update]\nplugin = "goals"\n'
        "[update.params]\nlearning_rate = 0.2\nidle_keep = 0.5\ninitial_attack = 0.1\n"
    )
    league = rankcraft.League(rankcraft.loads_ruleset(text))
    league.record(
        {"id": "m1", "played_at": "2024-01-01", "teams": [["A"], ["B"]], "scores": [4, 0]}
    )
    after = league.player("A").skill
    report = league.record(
        {"id": "m2", "played_at": "2024-03-01", "teams": [["A"], ["C"]], "scores": [1, 1]}
    )
    used = report.change("A").skill_used
    keep = 0.5**2  # 60 days: two whole periods
    assert used.attack == pytest.approx(0.1 + (after.attack - 0.1) * keep, rel=1e-12)
    assert used.defence == pytest.approx(after.defence * keep, rel=1e-12)
    assert used.rating == pytest.approx(used.attack + used.defence, rel=1e-12)
    whole = rankcraft.League(rankcraft.loads_ruleset(text.replace("idle_keep = 0.5\n", "")))
    whole.record({"id": "m1", "played_at": "2024-01-01", "teams": [["A"], ["B"]], "scores": [4, 0]})
    unmoved = whole.player("A").skill
    kept = whole.record(
        {"id": "m2", "played_at": "2024-03-01", "teams": [["A"], ["C"]], "scores": [1, 1]}
    )
    assert kept.change("A").skill_used == kept.change("A").skill_before == unmoved
    with pytest.raises(rankcraft.RulesetError, match="idle_keep"):
        rankcraft.loads_ruleset(text.replace("idle_keep = 0.5", "idle_keep = 0.0"))
