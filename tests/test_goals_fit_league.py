"""The ``goals_fit`` plugin in a league (the bundled ``football-goals-fit``): the states the
league holds are the time-weighted Dixon-Coles fit of every earlier match day (the engine,
checked against SciPy in tests/test_goals_fit.py), its globals (base, home advantages,
rho) included, each day's forecasts come from that fit, the ``goals`` step moves teams
within a day, and what the fit cannot take is refused naming the field."""

from __future__ import annotations

import itertools
import json
import math
import random
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.plugins._goals_fit import GoalsFit, context_of
from rankcraft.plugins.goals import outcome_probabilities
from rankcraft.plugins.goals_fit import (
    GoalsFitParams,
    fitted_params,
    rankcraft_decay,
    rankcraft_outcomes,
)

TEAMS = [f"T{k}" for k in range(8)]


def history(days: int = 30, seed: int = 3) -> list[dict[str, Any]]:
    """One to three matches a day among 8 teams, some friendlies, a home side or none."""
    rng = random.Random(seed)
    out = []
    for day in range(days):
        for k in range(rng.randrange(1, 4)):
            a, b = rng.sample(TEAMS, 2)
            out.append(
                {
                    "id": f"d{day}-{k}",
                    "played_at": f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T{12 + k}:00:00Z",
                    "teams": [[a], [b]],
                    "scores": [rng.choice([0, 0, 1, 1, 2, 3]), rng.choice([0, 1, 1, 2])],
                    "home": rng.choice([0, 1, None]),
                    "meta": {"tournament": rng.choice(["Friendly", "Cup", "Cup"])},
                }
            )
    return out


def ruleset() -> rankcraft.Ruleset:
    return rankcraft.loads_ruleset(
        'name = "t"\nextends = "football-goals-fit"\n[update.params]\nxi = 0.01\nprior_sd = 0.8\n'
        "[history]\ntolerance = 1e-11\niterations = 2000\n"
    )


def engine_fit(matches: list[dict[str, Any]], params: GoalsFitParams, until: str) -> GoalsFit:
    """The engine fed as the league feeds it: each day's matches, a refit at the next."""
    fit = GoalsFit(
        params, xi=params.xi, prior_sd=params.prior_sd, cutoff=params.cutoff,
        fit_globals=params.fit_globals, relax=params.relax, goal_cap=params.goal_cap,
        global_sd=params.global_sd, tol=1e-11, max_sweeps=2000,
    )  # fmt: skip
    days = [*sorted({m["played_at"][:10] for m in matches}), until]
    for day, then in itertools.pairwise(days):
        for m in (m for m in matches if m["played_at"][:10] == day):
            context = context_of(params, m["meta"]["tournament"])
            fit.add(ordinal(day), m["teams"][0][0], m["teams"][1][0], *m["scores"], m["home"],
                    context)  # fmt: skip
        fit.fit(ordinal(then))
    return fit


def ordinal(day: str) -> float:
    return float(date.fromisoformat(day[:10]).toordinal())


def test_the_league_holds_the_fit_of_the_earlier_days() -> None:
    matches = history()
    league = rankcraft.League(ruleset())
    league.record_many(matches)
    # a match of two newcomers opens the next day: the fit of every day before it
    league.record(
        {"id": "next", "played_at": "2024-03-01", "teams": [["n1"], ["n2"]], "scores": [1, 0]}
    )
    params = league.ruleset.update.params
    assert isinstance(params, GoalsFitParams)
    fit = engine_fit(matches, params, "2024-03-01")
    for team in TEAMS:
        skill = league.player(team).skill
        assert skill.attack == pytest.approx(fit.state(team).attack, abs=1e-12), team
        assert skill.defence == pytest.approx(fit.state(team).defence, abs=1e-12), team
        assert skill.rating == pytest.approx(skill.attack + skill.defence, abs=1e-12)
        # every team carries the globals of the same fit: base, rho, the home advantages
        assert skill.fitted == pytest.approx((fit.base, fit.rho, *fit.home), abs=1e-12)
    rules = params.context_rules
    assert fit.home[1] != rules[0].home_advantage and fit.base != params.base  # (fitted)
    # two newcomers meet with the ruleset's values; their step carries none
    assert league.player("n1").skill.fitted == ()


def test_each_days_forecasts_come_from_the_fit_of_the_days_before() -> None:
    matches = history(days=20, seed=5)
    league = rankcraft.League(ruleset())
    params = league.ruleset.update.params
    assert isinstance(params, GoalsFitParams)
    league.record_many(matches)
    last_day = matches[-1]["played_at"][:10]
    first = next(m for m in matches if m["played_at"][:10] == last_day)
    fit = engine_fit([m for m in matches if m["played_at"][:10] < last_day], params, last_day)
    said = league.report(first["id"]).expected
    context = context_of(params, first["meta"]["tournament"])
    home = first["home"]
    a, b = (fit.state(t[0]) for t in first["teams"])
    h = fit.home[context]
    lam = fit.base + a.attack - b.defence + (h if home == 0 else 0.0)
    mu = fit.base + b.attack - a.defence + (h if home == 1 else 0.0)
    win, draw, _ = outcome_probabilities(math.exp(lam), math.exp(mu), fit.rho)
    assert said[0] == pytest.approx(win + draw / 2, abs=1e-9)


def test_line_ups_are_fitted_at_their_members_mean() -> None:
    matches = [
        {"id": f"m{k}", "played_at": f"2024-01-{k + 1:02d}", "teams": [["a", "b"], ["c"]],
         "scores": [2 + k % 2, 1]}
        for k in range(6)
    ]  # fmt: skip
    league = rankcraft.League(ruleset())
    league.record_many(matches)
    league.record({"id": "n", "played_at": "2024-02-01", "teams": [["x"], ["y"]], "scores": [0, 0]})
    params = league.ruleset.update.params
    assert isinstance(params, GoalsFitParams)
    fit = GoalsFit(
        params,
        xi=params.xi,
        prior_sd=params.prior_sd,
        fit_globals=params.fit_globals,
        global_sd=params.global_sd,
        relax=params.relax,
        goal_cap=params.goal_cap,
        tol=1e-11,
        max_sweeps=2000,
    )
    for k, m in enumerate(matches):  # fmt: skip
        fit.add(ordinal(m["played_at"]), ("a", "b"), "c", *m["scores"])
        fit.fit(ordinal(matches[k + 1]["played_at"] if k < 5 else "2024-02-01"))
    for team in "abc":
        assert league.player(team).skill.attack == pytest.approx(fit.state(team).attack, abs=1e-12)
    assert league.player("a").skill.attack == pytest.approx(league.player("b").skill.attack)


def test_bad_params_are_refused_naming_the_field() -> None:
    with pytest.raises(rankcraft.InputError, match=r"'xi'.*-1"):
        rankcraft.loads_ruleset(
            'name = "t"\nextends = "football-goals-fit"\n[update.params]\nxi = -1\n'
        )


def test_tune_searches_the_fits_decay_and_prior(tmp_path: Path) -> None:
    """``rankcraft tune`` searches a history model's params as any other (each trial a
    replay with its refits, scored one step ahead)."""
    file = tmp_path / "m.jsonl"
    file.write_text("".join(json.dumps(m) + "\n" for m in history(days=70, seed=8)))
    out = tmp_path / "tuned.toml"
    code = main(
        ["tune", str(file), "--ruleset", "football-goals-fit", "--test-from", "2024-03-01",
         "--param", "update.params.xi=0.001:0.05", "--param", "update.params.prior_sd=0.3:3",
         "--trials", "3", "--method", "random", "--jobs", "1", "--score", "three-way",
         "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    tuned = rankcraft.load_ruleset(out)
    assert tuned.fit is not None and tuned.fit.plugin == "goals_fit"
    params = tuned.update.params
    assert isinstance(params, GoalsFitParams)
    assert 0.001 <= params.xi <= 0.05 and 0.3 <= params.prior_sd <= 3
    assert (params.xi, params.prior_sd) != (0.0005, 2.0)  # (a trial's values, not the start's)


def test_the_command_line_shows_a_fitted_league(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refit moves a team's skill between its matches: the history marks no season
    reset for it; and ``--curve`` says this model has none (it keeps no path in time)."""
    db = str(tmp_path / "l.sqlite")
    with rankcraft.League.open(db, "football-goals-fit") as league:
        league.record_many(history(days=20, seed=2))
    assert main(["player", "T1", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "last 10 matches, newest first:" in out and "season reset" not in out
    assert "\n* " not in out
    assert main(["player", "T1", "--db", db, "--curve"]) == 2
    assert "gives no smoothed curve" in capsys.readouterr().err


def test_a_context_that_is_not_text_is_read_as_the_step_reads_it() -> None:
    """The fit picks a match's home advantage by the text of its context field, as the
    step and the forecasts do: ``True`` and ``"True"`` are the same competition."""
    ruleset = rankcraft.loads_ruleset(
        'name = "t"\nextends = "football-goals-fit"\n[update.params]\ncontext_field = "cup"\n'
        'context_rules = [{contains = "True", home_advantage = 0.9}]\n'
    )
    exports = []
    for value in (True, "True"):
        league = rankcraft.League(ruleset)
        for k, m in enumerate(history(days=12, seed=6)):
            league.record({**m, "home": 0, "meta": {"cup": value if k % 2 else "no"}})
        exports.append(league.export()["players"])
    assert exports[0] == exports[1]


def test_a_newcomer_meets_a_fitted_team_at_the_fitted_values() -> None:
    """A team new to the league carries no fitted values: its first match is forecast
    and stepped with its opponent's (the fit's), and it carries them on."""
    matches = history(days=20, seed=7)
    league = rankcraft.League(ruleset())
    params = league.ruleset.update.params
    assert isinstance(params, GoalsFitParams)
    league.record_many(matches)
    late = {"id": "new", "played_at": "2024-02-10", "teams": [["N"], ["T3"]], "scores": [0, 2],
            "home": 1, "meta": {"tournament": "Friendly"}}  # fmt: skip
    league.record(late)
    fit = engine_fit(matches, params, "2024-02-10")
    t3 = fit.state("T3")
    lam = fit.base + params.initial_attack - t3.defence
    mu = fit.base + t3.attack - params.initial_defence + fit.home[1]  # (T3 at home, friendly)
    win, draw, _ = outcome_probabilities(math.exp(lam), math.exp(mu), fit.rho)
    assert league.report("new").expected[0] == pytest.approx(win + draw / 2, abs=1e-9)
    assert league.player("N").skill.fitted == pytest.approx((fit.base, fit.rho, *fit.home))


def test_with_fit_globals_false_the_rulesets_values_hold() -> None:
    held = rankcraft.loads_ruleset(
        'name = "t"\nextends = "football-goals-fit"\n[update.params]\nxi = 0.01\n'
        "fit_globals = false\n[history]\ntolerance = 1e-11\niterations = 2000\n"
    )
    matches = history(days=15, seed=9)
    league = rankcraft.League(held)
    params = league.ruleset.update.params
    assert isinstance(params, GoalsFitParams)
    league.record_many(matches)
    last = matches[-1]
    fit = engine_fit([m for m in matches if m["played_at"][:10] < last["played_at"][:10]],
                     params, last["played_at"][:10])  # fmt: skip
    assert (fit.base, fit.rho, fit.home[0]) == (params.base, params.rho, params.home_advantage)
    assert all(league.player(t).skill.fitted == () for t in TEAMS)
    a, b = (fit.state(t[0]) for t in last["teams"])
    h = fit.home[context_of(params, last["meta"]["tournament"])]
    lam = params.base + a.attack - b.defence + (h if last["home"] == 0 else 0.0)
    mu = params.base + b.attack - a.defence + (h if last["home"] == 1 else 0.0)
    win, draw, _ = outcome_probabilities(math.exp(lam), math.exp(mu), params.rho)
    assert league.report(last["id"]).expected[0] == pytest.approx(win + draw / 2, abs=1e-9)


def test_the_sides_order_does_not_change_the_values_used() -> None:
    """Two states that carry different values (a document imported beside a fitted
    league): the forecast uses their mean, whichever side is first."""
    params = GoalsFitParams(context_field="tournament")
    a = (0.2, -0.8, -0.6, (0.3, -0.1, 0.4))
    b = (0.0, -0.9, -0.9, (0.1, -0.05, 0.2))
    used = fitted_params(params, [a, b])
    assert (used.base, used.rho, used.home_advantage) == pytest.approx((0.2, -0.075, 0.3))
    forward = rankcraft_outcomes(params, [a, b], 0, None)
    backward = rankcraft_outcomes(params, [b, a], 1, None)
    assert forward is not None and backward is not None
    assert forward == pytest.approx(backward[::-1], abs=1e-15)
    assert fitted_params(params, [(0.0, -0.9, -0.9, (0.1, 0.0))]) is params  # (wrong length)


def test_fitted_values_out_of_range_are_refused_naming_the_field() -> None:
    league = rankcraft.League(ruleset())
    league.record_many(history(days=5, seed=1))
    document = json.loads(json.dumps(league.export()))
    document["players"][0]["skill"]["fitted"] = [9.0, 0.0, 0.3, 0.3]
    copy = rankcraft.League(ruleset())
    with pytest.raises(rankcraft.InputError, match=r"'fitted'.*9\.0"):
        copy.import_state(document)
    assert copy.export()["players"] == []


def test_the_player_command_names_the_fitted_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "l.sqlite")
    with rankcraft.League.open(db, ruleset()) as league:
        league.record_many(history(days=10, seed=2))
        values = league.player("T1").skill.fitted
    assert main(["player", "T1", "--db", db]) == 0
    base, rho, home, friendly = values  # (one context rule: friendlies)
    shown = f"fitted base {base:.2f}; rho {rho:.2f}; home {home:.2f}; {friendly:.2f}"
    assert shown in capsys.readouterr().out


def fitted_league(days: int = 20, seed: int = 7) -> rankcraft.League:
    league = rankcraft.League(ruleset())
    league.record_many(history(days=days, seed=seed))
    return league


def test_the_step_and_the_forecast_use_the_fitted_values() -> None:
    """The within-day step's expected goals and a forecast's draw come from the fitted
    base, home advantage and rho, not the ruleset's."""
    league = fitted_league()
    params = league.ruleset.update.params
    assert isinstance(params, GoalsFitParams)
    t1, t2 = league.player("T1").skill, league.player("T2").skill
    base, rho, home, _ = t1.fitted
    assert (base, rho, home) != (params.base, params.rho, params.home_advantage)
    lam = math.exp(base + t1.attack - t2.defence + home)
    mu = math.exp(base + t2.attack - t1.defence)
    win, draw, loss = outcome_probabilities(lam, mu, rho)
    forecast = league.forecast([["T1"], ["T2"]], home=0)
    assert (forecast.win[0], forecast.draw, forecast.win[1]) == pytest.approx(
        (win, draw, loss), abs=1e-12
    )
    latest = league.latest_played()
    assert latest is not None
    day = f"{latest.date().isoformat()}T23:00:00Z"  # (the league's last day: no refit first)
    late = {"id": "late", "played_at": day, "teams": [["T1"], ["T2"]], "scores": [2, 1],
            "home": 0, "meta": {"tournament": "Cup"}}  # fmt: skip
    report = league.record(late)
    factors = report.changes[0].factors
    assert factors["expected_for"] == pytest.approx(lam, abs=1e-9)
    assert factors["expected_against"] == pytest.approx(mu, abs=1e-9)
    assert league.player("T1").skill.fitted == t1.fitted  # (the step keeps them)


def test_a_line_ups_members_order_does_not_change_its_forecast() -> None:
    """A line-up with a member new to the league reads the fitted values of the members
    that carry them, whichever member comes first; every member steps with the same."""
    league = fitted_league()
    first = league.forecast([["N1", "T1"], ["N2", "T2"]], home=0).win[0]
    second = league.forecast([["T1", "N1"], ["T2", "N2"]], home=0).win[0]
    assert first == pytest.approx(second, abs=1e-12)
    attack_t1 = league.player("T1").skill.attack
    latest = league.latest_played()
    assert latest is not None
    report = league.record({"id": "x", "played_at": f"{latest.date().isoformat()}T23:00:00Z",
                            "teams": [["N1", "T1"], ["N2", "T2"]], "scores": [1, 1], "home": 0,
                            "meta": {"tournament": "Cup"}})  # fmt: skip
    expected = {c.player: c.factors["expected_for"] for c in report.changes}
    # each member expects exp(base + own attack − the other side's mean defence + home):
    # the same base and home advantage for both (N1's attack is the initial 0)
    assert expected["N1"] == pytest.approx(expected["T1"] / math.exp(attack_t1), rel=1e-12)
    assert league.player("N1").skill.fitted == league.player("T1").skill.fitted


def test_a_fitted_value_stops_at_its_params_range() -> None:
    """A weak prior and friendlies whose home sides never score: the friendlies' home
    advantage stops at -2 (the params' bound), and the league goes on."""
    weak = rankcraft.loads_ruleset(
        'name = "t"\nextends = "football-goals-fit"\n[update.params]\nglobal_sd = 5\n'
    )
    league = rankcraft.League(weak)
    for day in range(1, 9):
        league.record({"id": f"f{day}", "played_at": f"2024-02-{day:02d}",
                       "teams": [["A"], ["B"]] if day % 2 else [["B"], ["A"]], "scores": [0, 2],
                       "home": 0, "meta": {"tournament": "Friendly"}})  # fmt: skip
    fitted = league.player("A").skill.fitted
    assert fitted[3] == -2.0 and -1.0 <= fitted[1] <= 1.0


def test_an_import_gives_the_fitted_values_or_names_them_missing() -> None:
    league = fitted_league(days=5, seed=1)
    document = json.loads(json.dumps(league.export()))
    del document["players"][0]["skill"]["fitted"]
    copy = rankcraft.League(ruleset())
    with pytest.raises(rankcraft.InputError, match="'fitted' is missing"):
        copy.import_state(document)
    document["players"][0]["skill"]["fitted"] = []  # (none: the ruleset's values)
    copy.import_state(document)
    assert copy.player(document["players"][0]["id"]).skill.fitted == ()


def test_decay_keeps_the_fitted_values() -> None:
    params = GoalsFitParams(idle_keep=0.5)
    state = (0.4, -0.5, -0.1, (0.3, -0.1, 0.3))
    decayed = rankcraft_decay(params, state, 1.0)  # (half way back to the initial 0, 0)
    assert decayed[:3] == pytest.approx((0.2, -0.25, -0.05), abs=1e-15)
    assert decayed[3] == state[3] and rankcraft_decay(GoalsFitParams(), state, 1.0) is state


def test_a_global_sd_out_of_range_is_refused_naming_it() -> None:
    with pytest.raises(rankcraft.InputError, match=r"'global_sd'.*0"):
        rankcraft.loads_ruleset(
            'name = "t"\nextends = "football-goals-fit"\n[update.params]\nglobal_sd = 0\n'
        )
