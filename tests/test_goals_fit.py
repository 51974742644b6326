"""The time-weighted Dixon-Coles fit (``rankcraft.plugins._goals_fit``) checked against an
independent fit of the same objective written here with NumPy and solved by
``scipy.optimize.minimize`` (L-BFGS-B; gradients by the complex step, exact to
rounding): on a synthetic league and on the World Cups of 2010 and 2014 in the
international football file.
Also: a warm-started refit equals a cold fit, and a large synthetic league's true
parameters are recovered."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import random
from datetime import date
from typing import Any

import pytest

import rankcraft
from rankcraft.plugins import goals
from rankcraft.plugins._goals_fit import GoalsFit, context_of
from rankcraft.plugins.goals import GoalsParams, GoalsRule

np = pytest.importorskip("numpy")
optimize = pytest.importorskip("scipy.optimize")

Row = tuple[float, Any, Any, float, float, int | None, int]
"""A match: (day, side a, side b, goals a, goals b, home side or None, context); a side is
a team's name or a line-up's names."""

PARAMS = GoalsParams(
    base=0.3,
    home_advantage=0.3,
    rho=-0.05,
    initial_defence=-0.2,
    context_field="tournament",
    context_rules=(GoalsRule(contains="Friendly", home_advantage=0.2),),
)


def reference_fit(
    rows: list[Row],
    *,
    xi: float,
    prior_sd: float,
    now: float,
    cutoff: float = 0.0,
    globals_kept: bool = False,
    global_sd: float = math.inf,
) -> dict[str, Any]:
    """The objective of the module docstring written again with NumPy (the matches of the
    window, φ ≥ cutoff; the prior over the teams they hold; one h per context with a
    home side; with ``global_sd`` a prior on base, every h and rho around the params'),
    minimised by SciPy's L-BFGS-B (gradient by the complex step); with ``globals_kept``
    over the teams' attack and defence only, base, h and rho the params'."""
    rows = [r for r in rows if math.exp(-xi * (now - r[0])) >= cutoff]
    teams = sorted({t for r in rows for side in r[1:3] for t in members(side)})
    index = {t: k for k, t in enumerate(teams)}
    nt, nc = len(teams), 1 + len(PARAMS.context_rules)
    side_a, side_b = np.zeros((len(rows), nt)), np.zeros((len(rows), nt))
    for i, r in enumerate(rows):  # a side's strength: its members' mean
        for matrix, side in ((side_a, r[1]), (side_b, r[2])):
            for t in members(side):
                matrix[i, index[t]] = 1.0 / len(members(side))
    x = np.array([r[3] for r in rows], dtype=float)
    y = np.array([r[4] for r in rows], dtype=float)
    ctx = np.array([r[6] for r in rows])
    home_a = np.array([r[5] == 0 for r in rows], dtype=float)
    home_b = np.array([r[5] == 1 for r in rows], dtype=float)
    weight = np.exp(-xi * (now - np.array([r[0] for r in rows])))
    a0, d0 = PARAMS.initial_attack, PARAMS.initial_defence

    def minus_f(theta: Any) -> Any:
        """−F at each row of ``theta`` (a 2-D array of parameter vectors)."""
        att, dfn = theta[:, :nt], theta[:, nt : 2 * nt]
        base, rho = theta[:, 2 * nt, None], theta[:, -1, None]
        h = theta[:, 2 * nt + 1 : 2 * nt + 1 + nc][:, ctx]
        eta_a = base + att @ side_a.T - dfn @ side_b.T + h * home_a
        eta_b = base + att @ side_b.T - dfn @ side_a.T + h * home_b
        lam, mu = np.exp(eta_a), np.exp(eta_b)
        tau = np.where((x == 0) & (y == 0), 1 - lam * mu * rho, 1.0 + 0 * lam)
        tau = np.where((x == 0) & (y == 1), 1 + lam * rho, tau)
        tau = np.where((x == 1) & (y == 0), 1 + mu * rho, tau)
        tau = np.where((x == 1) & (y == 1), 1 - rho + 0 * lam, tau)
        loglik = x * eta_a - lam + y * eta_b - mu + np.log(tau)
        prior = np.sum((att - a0) ** 2, axis=1) + np.sum((dfn - d0) ** 2, axis=1)
        centres = np.r_[PARAMS.base, 0.3, 0.2, PARAMS.rho]
        spread = np.sum((theta[:, 2 * nt :] - centres) ** 2, axis=1)
        return -(loglik @ weight) + prior / (2 * prior_sd**2) + spread / (2 * global_sd**2)

    def gradient(theta: Any) -> Any:  # the complex step: exact to rounding
        step = 1e-30
        return minus_f(theta + 1j * step * np.eye(len(theta))).imag / step

    start = np.r_[np.full(nt, a0), np.full(nt, d0), PARAMS.base, 0.3, 0.2, PARAMS.rho]
    if globals_kept:
        kept = start[2 * nt :]
        whole = minus_f
        minus_f = lambda t: whole(np.hstack([t, np.broadcast_to(kept, (t.shape[0], 4))]))  # noqa: E731
        start = start[: 2 * nt]
    found = optimize.minimize(
        lambda t: float(minus_f(t[None, :])[0]),
        start,
        jac=gradient,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-8, "maxiter": 5000, "maxcor": 50},
    )
    assert np.max(np.abs(gradient(found.x))) < 1e-6
    theta = np.r_[found.x, kept] if globals_kept else found.x
    return {
        "attack": dict(zip(teams, theta[:nt], strict=True)),
        "defence": dict(zip(teams, theta[nt : 2 * nt], strict=True)),
        "base": theta[2 * nt],
        "home": list(theta[2 * nt + 1 : 2 * nt + 1 + nc]),
        "rho": theta[-1],
        "objective": -found.fun,
    }


def members(side: str | tuple[str, ...]) -> tuple[str, ...]:
    return (side,) if isinstance(side, str) else side


def fitted(rows: list[Row], *, xi: float, prior_sd: float, now: float, **kw: Any) -> GoalsFit:
    fit = GoalsFit(PARAMS, xi=xi, prior_sd=prior_sd, tol=1e-11, **kw)
    for row in rows:
        fit.add(*row)
    assert fit.fit(now).converged
    return fit


def assert_same(fit: GoalsFit, ref: dict[str, Any], within: float) -> None:
    for team, value in ref["attack"].items():
        assert fit.state(team).attack == pytest.approx(value, abs=within), team
        assert fit.state(team).defence == pytest.approx(ref["defence"][team], abs=within), team
    assert fit.base == pytest.approx(ref["base"], abs=within)
    assert fit.home == pytest.approx(ref["home"], abs=within)
    assert fit.rho == pytest.approx(ref["rho"], abs=within)


def league(
    teams: int, matches: int, seed: int, spread: float = 0.3
) -> tuple[list[Row], dict[str, tuple[float, float]]]:
    """A synthetic league: true attack and defence per team (mean a0 and d0, as the
    prior's centres make the fit's), base 0.25, home advantage 0.35 (friendlies, context
    1: 0.15), rho = −0.1; one match a day, a third each at home for either side or neutral.
    Scores are drawn from the Dixon-Coles probabilities by inversion."""
    rng = random.Random(seed)
    names = [f"T{k:02d}" for k in range(teams)]
    att = [rng.gauss(0, spread) for _ in names]
    dfn = [rng.gauss(0, spread) for _ in names]
    att = [v - sum(att) / teams + PARAMS.initial_attack for v in att]
    dfn = [v - sum(dfn) / teams + PARAMS.initial_defence for v in dfn]
    truth = {n: (att[k], dfn[k]) for k, n in enumerate(names)}
    rows: list[Row] = []
    for day in range(matches):
        i, j = rng.sample(range(teams), 2)
        home = rng.choice((0, 1, None))
        ctx = rng.choice((0, 0, 1))
        h = (0.35, 0.15)[ctx]
        lam = math.exp(0.25 + att[i] - dfn[j] + (h if home == 0 else 0))
        mu = math.exp(0.25 + att[j] - dfn[i] + (h if home == 1 else 0))
        p = [math.exp(-lam) * lam**u / math.factorial(u) for u in range(12)]
        q = [math.exp(-mu) * mu**v / math.factorial(v) for v in range(12)]
        pick, total = rng.random(), 0.0  # (P of more than 11 goals: below 1e-6 here)
        for u, v in itertools.product(range(12), range(12)):
            total += p[u] * q[v] * dc_tau(u, v, lam, mu, -0.1)
            if total >= pick:
                break
        rows.append((float(day), names[i], names[j], u, v, home, ctx))
    return rows, truth


def dc_tau(x: int, y: int, lam: float, mu: float, rho: float) -> float:
    """Dixon and Coles (1997), eq. 4.2."""
    low = {(0, 0): 1 - lam * mu * rho, (0, 1): 1 + lam * rho, (1, 0): 1 + mu * rho, (1, 1): 1 - rho}
    return low.get((x, y), 1.0)


def test_a_synthetic_league_fits_as_scipy_fits_it() -> None:
    rows, _ = league(10, 300, seed=3)
    rows.append((300.0, "Newcomer", "T00", 2, 0, None, 0))  # never conceded
    ref = reference_fit(rows, xi=0.004, prior_sd=0.7, now=301.0)
    fit = fitted(rows, xi=0.004, prior_sd=0.7, now=301.0)
    assert_same(fit, ref, within=1e-5)
    assert fit.objective() == pytest.approx(ref["objective"], rel=1e-9)


def test_kept_globals_fit_as_scipy_fits_the_teams_alone() -> None:
    rows, _ = league(10, 300, seed=8)
    ref = reference_fit(rows, xi=0.004, prior_sd=0.7, now=301.0, globals_kept=True)
    fit = fitted(rows, xi=0.004, prior_sd=0.7, now=301.0, fit_globals=False)
    assert_same(fit, ref, within=1e-5)
    assert (fit.base, fit.home, fit.rho) == (PARAMS.base, [0.3, 0.2], PARAMS.rho)
    assert fit.objective() == pytest.approx(ref["objective"], rel=1e-9)


def test_the_globals_prior_fits_as_scipy_fits_it() -> None:
    """A short history whose friendlies' home sides never score: without a prior their
    home advantage has no finite optimum (the fit stops it at the params' bound); with
    one the fit equals SciPy's."""
    rows, _ = league(6, 40, seed=6)
    rows = [r if r[6] == 0 or r[5] is None else (*r[:3], *((0, r[4]) if r[5] == 0 else
            (r[3], 0)), *r[5:]) for r in rows]  # fmt: skip
    assert sum(1 for r in rows if r[6] == 1 and r[5] is not None) >= 5
    ref = reference_fit(rows, xi=0.01, prior_sd=0.7, now=41.0, global_sd=0.3)
    fit = fitted(rows, xi=0.01, prior_sd=0.7, now=41.0, global_sd=0.3)
    assert_same(fit, ref, within=1e-5)
    assert fit.objective() == pytest.approx(ref["objective"], rel=1e-9)
    assert fit.home[1] == pytest.approx(-0.5, abs=0.05)  # (down from 0.2, held by the prior)
    unheld = GoalsFit(PARAMS, xi=0.01, prior_sd=0.7, tol=1e-11, max_sweeps=100)
    for row in rows:
        unheld.add(*row)
    unheld.fit(41.0)
    assert unheld.home[1] == -2.0  # (no finite optimum: it runs to the params' bound)
    with pytest.raises(ValueError, match="global_sd"):
        GoalsFit(PARAMS, xi=0.01, prior_sd=1.0, global_sd=0.0)


def test_line_ups_and_fractional_goals_fit_as_scipy_fits_them() -> None:
    rows, _ = league(8, 200, seed=12)
    rng = random.Random(1)
    for day in range(200, 240):  # line-ups of two or three (their members' mean) and
        squad = rng.sample([f"T{k:02d}" for k in range(8)], 5)  # goals like 1.5 (a share)
        a, b = tuple(squad[:2]), tuple(squad[2:])
        rows.append((float(day), a, b, rng.choice([0, 1, 1.5, 3]), rng.choice([0, 1, 2]),
                     rng.choice([0, 1, None]), 0))  # fmt: skip
    ref = reference_fit(rows, xi=0.004, prior_sd=0.7, now=241.0)
    fit = fitted(rows, xi=0.004, prior_sd=0.7, now=241.0)
    assert_same(fit, ref, within=1e-5)
    assert fit.objective() == pytest.approx(ref["objective"], rel=1e-9)
    said = fit.outcomes(("T01", "T02"), "T03", 0)
    a = [(fit.state("T01").attack + fit.state("T02").attack) / 2,
         (fit.state("T01").defence + fit.state("T02").defence) / 2]  # fmt: skip
    lam = math.exp(fit.base + a[0] - fit.state("T03").defence + fit.home[0])
    mu = math.exp(fit.base + fit.state("T03").attack - a[1])
    assert said == pytest.approx(goals.outcome_probabilities(lam, mu, fit.rho), abs=1e-12)


def test_a_refit_sweeps_once_then_steps_only_the_teams_that_moved() -> None:
    rows, _ = league(30, 600, seed=9)
    fit = GoalsFit(PARAMS, xi=0.0005, prior_sd=1.0, tol=1e-3, fit_globals=False)
    for row in rows[:-1]:
        fit.add(*row)
    fit.fit(599.0)
    steps: list[int] = []
    step = fit._team_step
    fit._team_step = lambda k: steps.append(k) or step(k)  # type: ignore[method-assign]
    fit.add(*rows[-1])
    assert fit.fit(600.0).converged
    # one sweep of all 30, then the teams that moved and their opponents: not 30 each sweep
    assert sorted(steps[:30]) == list(range(30)) and len(steps) < 3 * 30
    cold = fitted(rows, xi=0.0005, prior_sd=1.0, now=600.0, fit_globals=False)
    for team in cold.index:
        assert fit.state(team).attack == pytest.approx(cold.state(team).attack, abs=1e-3)


@pytest.mark.slow(seconds=6)
def test_daily_refits_stay_within_the_tolerance_of_the_optimum() -> None:
    """Refitted after every match for 1,500 days (weakly linked groups of teams: most
    matches within a group of five), the fit ends within the tolerance of the exact
    optimum: small moves do not pile up. (Stepping only the day's teams and, as they
    moved, their opponents ended 0.0095 away; every refit now sweeps every team once.
    The stopping rule bounds a sweep's change, not the distance: on other histories of
    weakly linked groups the distance is a few times the tolerance, either way.)"""
    rng = random.Random(4)
    groups = [[f"G{g}T{k}" for k in range(5)] for g in range(6)]
    fit = GoalsFit(PARAMS, xi=0.002, prior_sd=1.0, tol=5e-3, fit_globals=False)
    rows: list[Row] = []
    for day in range(1500):
        group = rng.choice(groups)
        a, b = rng.sample(group, 2) if rng.random() < 0.95 else (group[0], rng.choice(groups)[1])
        if a == b:
            continue
        rows.append((float(day), a, b, rng.choice([0, 1, 1, 2, 3]), rng.choice([0, 1, 2]), None, 0))
        fit.add(*rows[-1])
        fit.fit(day + 1.0)
    exact = fitted(rows, xi=0.002, prior_sd=1.0, now=1500.0, fit_globals=False)
    worst = max(
        max(abs(fit.state(t).attack - exact.state(t).attack),
            abs(fit.state(t).defence - exact.state(t).defence))
        for t in exact.index
    )  # fmt: skip
    assert worst < 5e-3, worst


def test_the_world_cups_2010_and_2014_fit_as_scipy_fits_them() -> None:
    from rankcraft.data import demo_matches_path

    rows: list[Row] = []  # (from the package's own copy of the CC0 football history)
    with gzip.open(demo_matches_path(), "rt", encoding="utf-8") as lines:
        for line in lines:
            if '"FIFA World Cup"' not in line:  # (parse only those: the file is 12 MB)
                continue
            d = json.loads(line)
            if d["meta"]["tournament"] == "FIFA World Cup" and "2010" <= d["played_at"] < "2015":
                day = date.fromisoformat(d["played_at"]).toordinal()
                context = context_of(PARAMS, d["meta"]["tournament"])
                x, y = d["scores"]
                home = d["meta"]["home_team_index"]
                rows.append((float(day), d["teams"][0][0], d["teams"][1][0], x, y, home, context))
    assert len(rows) == 128  # two World Cups of 64 matches
    now = date(2014, 7, 14).toordinal()
    ref = reference_fit(rows, xi=0.0005, prior_sd=0.5, now=now, cutoff=0.1)
    fit = fitted(rows, xi=0.0005, prior_sd=0.5, now=now, cutoff=0.1)
    assert_same(
        fit, {**ref, "home": [ref["home"][0], PARAMS.context_rules[0].home_advantage]}, 1e-5
    )


def test_a_warm_refit_every_day_equals_a_cold_fit() -> None:
    rows, _ = league(8, 120, seed=5)
    warm = GoalsFit(PARAMS, xi=0.04, prior_sd=0.8, cutoff=0.05, tol=1e-11)
    for day in range(0, 120, 10):
        for row in rows[day : day + 10]:
            warm.add(*row)
        assert warm.fit(day + 10.0).converged
    cold = fitted(rows, xi=0.04, prior_sd=0.8, now=120.0, cutoff=0.05)
    assert warm.start == cold.start > 0  # old matches left the window
    for team in cold.index:
        assert warm.state(team).attack == pytest.approx(cold.state(team).attack, abs=1e-9)
        assert warm.state(team).defence == pytest.approx(cold.state(team).defence, abs=1e-9)
    assert (warm.base, warm.rho) == pytest.approx((cold.base, cold.rho), abs=1e-9)
    assert warm.home == pytest.approx(cold.home, abs=1e-9)


def test_a_large_league_gives_back_its_true_parameters() -> None:
    rows, truth = league(12, 2400, seed=11)
    fit = fitted(rows, xi=0.0, prior_sd=3.0, now=2400.0)
    # 400 matches a team: a log-rate's standard error is about 1/sqrt(400 · 1.3) = 0.044
    for team, (att, dfn) in truth.items():
        assert fit.state(team).attack == pytest.approx(att, abs=0.15), team
        assert fit.state(team).defence == pytest.approx(dfn, abs=0.15), team
    assert fit.base == pytest.approx(0.25, abs=0.06)
    assert fit.home == pytest.approx([0.35, 0.15], abs=0.1)
    assert fit.rho == pytest.approx(-0.1, abs=0.08)


def test_the_plugin_forecasts_from_the_fitted_state() -> None:
    rows, _ = league(6, 80, seed=2)
    fit = fitted(rows, xi=0.01, prior_sd=0.5, now=80.0)
    params = fit.fitted_params()
    friendly = rankcraft.parse_match(
        {
            "id": "f",
            "played_at": "2024-01-01",
            "teams": [["T01"], ["T02"]],
            "scores": [1, 1],
            "meta": {"tournament": "Friendly"},
        }
    )
    for home, match, context in ((0, friendly, 1), (1, None, 0), (None, None, 0)):
        states = [fit.state(t) for t in ("T01", "T02")]
        said = goals.rankcraft_outcomes(
            params, [(s.attack, s.defence, s.rating) for s in states], home, match
        )
        assert said == pytest.approx(list(fit.outcomes("T01", "T02", home, context)), abs=1e-12)
    assert fit.state("nobody") == goals.GoalsSkill(PARAMS.initial_attack, PARAMS.initial_defence)


def test_bad_input_is_refused() -> None:
    fit = GoalsFit(PARAMS, xi=0.01, prior_sd=1.0)
    fit.add(5.0, "a", "b", 1, 0)
    with pytest.raises(ValueError, match="time order"):
        fit.add(4.0, "a", "b", 1, 0)
    with pytest.raises(ValueError, match="numbers >= 0"):
        fit.add(6.0, "a", "b", -1, 0)
    with pytest.raises(ValueError, match="bad match"):
        fit.add(6.0, ["a", "c"], ["c"], 1, 0)  # a player on both sides
    with pytest.raises(ValueError, match="bad match"):
        fit.add(6.0, "a", "a", 1, 0)
    with pytest.raises(ValueError, match="bad fit settings"):
        GoalsFit(PARAMS, xi=-1.0, prior_sd=1.0)
    with pytest.raises(ValueError, match="before a match"):
        fit.fit(4.0)
