"""Draw parameters fitted by maximum likelihood on the warm-up (issue 33, item 2)."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main
from rankcraft.drawfit import fit_draws, wants_fit
from rankcraft.evaluate import evaluate, evaluate_ruleset, scratch_league
from rankcraft.io import parse_match
from rankcraft.plugins._drawfit import (
    davidson_log_likelihood,
    fit_davidson,
    fit_ordered_logit,
    ordered_logit_log_likelihood,
)
from rankcraft.plugins._matchup import ContextRule, davidson, ordered_logit
from rankcraft.plugins.elo import EloParams

optimize = pytest.importorskip("scipy.optimize")


def _simulate(
    n: int, kappa: float, rate: float, seed: int, groups: tuple[float, ...] = ()
) -> list[tuple[float, int, int]]:
    """Outcomes drawn from Davidson's model (the plugin's own probabilities) at random
    gaps; ``groups``: other κ for groups 1, 2, … (a match's group chosen at random)."""
    rng = random.Random(seed)
    kappas = (kappa, *groups)
    out = []
    for _ in range(n):
        u = rng.gauss(0.0, 0.5)
        group = rng.randrange(len(kappas))
        win, draw, _ = davidson(400.0 * u, 400.0, kappas[group], rate)
        x = rng.random()
        out.append((u, 0 if x < win else 1 if x < win + draw else 2, group))
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.integers(0, 60))
def test_davidson_between_equals_is_the_draw_share(draws: int, wins: int, losses: int) -> None:
    """Between equals P(draw) = κ / (2 + κ): the fit's κ is 2d / (1 - d) of the share d."""
    items = [(0.0, 1, 0)] * draws + [(0.0, 0, 0)] * wins + [(0.0, 2, 0)] * losses
    (kappa,), _ = fit_davidson(items, groups=1, fit_rate=False)
    share = draws / len(items)
    assert kappa == pytest.approx(2 * share / (1 - share), rel=1e-6)


def test_davidson_fit_agrees_with_an_independent_maximum_likelihood_fit() -> None:
    items = _simulate(6000, 0.8, 0.15, seed=3, groups=(0.4,))
    kappas, rate = fit_davidson(items, groups=2)

    def negative(x: list[float]) -> float:  # the plugin's probabilities, not _drawfit's
        k0, k1, r = math.exp(x[0]), math.exp(x[1]), x[2]
        return -sum(math.log(davidson(400.0 * u, 400.0, (k0, k1)[g], r)[o]) for u, o, g in items)

    found = optimize.minimize(
        negative,
        [0.0, 0.0, 0.5],
        method="Nelder-Mead",
        options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000},
    )
    assert kappas[0] == pytest.approx(math.exp(found.x[0]), rel=1e-3)
    assert kappas[1] == pytest.approx(math.exp(found.x[1]), rel=1e-3)
    assert rate == pytest.approx(found.x[2], abs=1e-3)
    # near the truth it was drawn from, and each group's expected draws equal its draws
    assert kappas[0] == pytest.approx(0.8, rel=0.15) and kappas[1] == pytest.approx(0.4, rel=0.2)
    for group in (0, 1):
        mine = [(u, o) for u, o, g in items if g == group]
        expected = sum(davidson(400.0 * u, 400.0, kappas[group], rate)[1] for u, _ in mine)
        assert expected == pytest.approx(sum(1 for _, o in mine if o == 1), rel=1e-6)
    best = davidson_log_likelihood(items, kappas, rate)
    for nudged in ((kappas[0] * 1.02, kappas[1]), (kappas[0], kappas[1] * 0.98)):
        assert davidson_log_likelihood(items, nudged, rate) < best


def test_a_group_without_draws_gets_the_smallest_kappa() -> None:
    items = [(0.1, 0, 0), (-0.2, 2, 0), (0.0, 0, 0)]
    (kappa,), _ = fit_davidson(items, groups=1, fit_rate=False)
    assert kappa == pytest.approx(1e-6)


def test_ordered_logit_fit_against_closed_form_and_scipy() -> None:
    # between equals P(draw) = d when 10^m = (1 + d) / (1 - d)
    items = [(0.0, 1, 0)] * 30 + [(0.0, 0, 0)] * 35 + [(0.0, 2, 0)] * 35
    (band,) = fit_ordered_logit(items, groups=1)
    assert band == pytest.approx(math.log10(1.3 / 0.7), abs=1e-4)
    rng = random.Random(5)
    drawn = []
    for _ in range(3000):
        u = rng.gauss(0.0, 0.5)
        win, draw, _ = ordered_logit(400.0 * u, 400.0, 0.2 * 400.0)
        x = rng.random()
        drawn.append((u, 0 if x < win else 1 if x < win + draw else 2, 0))
    (band,) = fit_ordered_logit(drawn, groups=1)
    found = optimize.minimize_scalar(
        lambda m: -ordered_logit_log_likelihood(drawn, [m]),
        bounds=(0, 4),
        method="bounded",
        options={"xatol": 1e-8},
    )
    assert band == pytest.approx(found.x, abs=1e-4) and band == pytest.approx(0.2, abs=0.03)


def test_elo_fit_reads_the_gap_back_from_each_forecast() -> None:
    """EloParams.fit_draws recovers each match's gap from its forecast whatever κ it was
    made with, and fits a context rule its own κ once it has enough matches."""
    params = EloParams(
        draw="davidson",
        draw_kappa=0.2,
        draw_fit="context",
        context_field="cup",
        context_rules=(ContextRule(contains="Friendly"), ContextRule(contains="Rare")),
    )
    items = _simulate(4000, 0.9, 0.0, seed=8, groups=(0.3,))
    observations = []
    for u, outcome, group in items:
        cup = "Friendly" if group else "League"
        match = parse_match(
            {
                "id": "x",
                "played_at": "2024-01-01",
                "teams": [["a"], ["b"]],
                "scores": [1, 0],
                "meta": {"cup": cup},
            }
        )
        win, draw, loss = davidson(400.0 * u, 400.0, 0.2, 0.0)  # forecast with the start κ
        observations.append((win, draw, loss, outcome, match))
    fitted, values = params.fit_draws(observations)
    kappas, rate = fit_davidson(items, groups=2, kappas=[0.2, 0.2])
    assert values["draw_kappa"] == pytest.approx(kappas[0], rel=1e-9)
    assert values["context_rules.0.draw_kappa"] == pytest.approx(kappas[1], rel=1e-9)
    assert values["draw_gap"] == pytest.approx(rate, abs=1e-9)
    assert "context_rules.1.draw_kappa" not in values  # no match: the shared κ
    assert fitted.context_rules[0].draw_kappa == values["context_rules.0.draw_kappa"]
    assert fitted.context_rules[1].draw_kappa is None and fitted.draw_kappa == values["draw_kappa"]
    overall, one = attrs_evolve(params, draw_fit="overall").fit_draws(observations)
    assert set(one) == {"draw_kappa", "draw_gap"} and overall.context_rules[0].draw_kappa is None


def attrs_evolve(params: EloParams, **changes: object) -> EloParams:
    import attrs

    return attrs.evolve(params, **changes)


def test_a_replay_fits_first_and_the_fitted_ruleset_replays_the_same(
    draw_history: list[dict[str, object]],
) -> None:
    history = draw_history
    text = 'name = "d"\n[update]\nplugin = "elo"\n[update.params]\ndraw = "davidson"\n'
    guessed = rankcraft.loads_ruleset(text + "draw_kappa = 0.1\n")
    fitting = rankcraft.loads_ruleset(text + 'draw_kappa = 0.1\ndraw_fit = "overall"\n')
    assert wants_fit(fitting) and not wants_fit(guessed)
    test_from = "2021-01-01"
    plain = evaluate_ruleset(guessed, history, test_from=test_from)
    fitted = evaluate_ruleset(fitting, history, test_from=test_from)
    assert plain.draw_fit is None and fitted.draw_fit is not None
    report = fitted.draw_fit
    warm = [m for m in history if str(m["played_at"]) < test_from]
    assert report.matches == len(warm) == fitted.warmup
    assert report.draws == sum(1 for m in warm if m["scores"] == [1, 1])
    assert report.values["draw_kappa"] == pytest.approx(0.86, rel=0.25)
    assert fitted.figure("three-way") < plain.figure("three-way") - 0.02
    # the fit is a ruleset transformation: the fitted ruleset replays to the same scores
    ruleset, again = fit_draws(fitting, history, before=test_from)
    assert again == report
    same = evaluate(scratch_league(ruleset), history, test_from=test_from)
    assert same.outcomes == fitted.outcomes and "draw_fit" in fitted.to_dict()


def test_shipped_football_fits_its_draws() -> None:
    football = rankcraft.load_ruleset("football")
    assert wants_fit(football) and football.update.params.draw_fit == "context"
    assert football.update.params.context_rules[0].draw_kappa is not None


def _files(tmp_path: Path, history: list[dict[str, object]]) -> tuple[Path, Path]:
    """The history as a file, and a ruleset that fits its Davidson κ from 0.1."""
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in history))
    ruleset = tmp_path / "fit.toml"
    ruleset.write_text(
        'name = "fit"\n[update]\nplugin = "elo"\n[update.params]\ndraw = "davidson"\n'
        'draw_kappa = 0.1\ndraw_fit = "overall"\n'
    )
    return path, ruleset


def test_replay_fits_a_new_league_and_keeps_the_fit_of_an_existing_one(
    tmp_path: Path, draw_history: list[dict[str, object]]
) -> None:
    path, ruleset = _files(tmp_path, draw_history)
    db = str(tmp_path / "l.sqlite")
    argv = ["replay", str(path), "--ruleset", str(ruleset), "--db", db]
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, "--json"], out=out, err=err) == 0, err.getvalue()
    report = json.loads(out.getvalue())["draw_fit"]
    assert report["matches"] == 1500 and report["draws"] == sum(
        1 for m in draw_history if m["scores"] == [1, 1]
    )
    expected, _ = fit_draws(rankcraft.load_ruleset(ruleset), draw_history, before="9999-12-31")
    with rankcraft.League.open(db) as league:
        assert league.ruleset.update.params == expected.update.params
        assert league.ruleset.update.params.draw_kappa == report["values"]["draw_kappa"]
    out, err = io.StringIO(), io.StringIO()  # again, into the league made: no new fit
    assert main([*argv, "--skip-seen"], out=out, err=err) == 0, err.getvalue()
    assert "fitted" not in err.getvalue() and "skipped 1,500" in out.getvalue()


def test_evaluate_command_reports_the_fit(
    tmp_path: Path, draw_history: list[dict[str, object]]
) -> None:
    path, ruleset = _files(tmp_path, draw_history)
    argv = ["evaluate", str(path), "--ruleset", str(ruleset), "--test-from", "2021-01-01"]
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, "--json"], out=out, err=err) == 0, err.getvalue()
    result = json.loads(out.getvalue())["results"]["fit"]
    expected = evaluate_ruleset(
        rankcraft.load_ruleset(ruleset), draw_history, test_from="2021-01-01"
    )
    assert expected.draw_fit is not None
    assert result["draw_fit"]["values"] == expected.draw_fit.values
    assert result["three_way"]["log_loss"] == expected.three_way.log_loss  # type: ignore[union-attr]
    out = io.StringIO()
    assert main(argv, out=out, err=io.StringIO()) == 0
    assert "draw parameters of fit fitted on 1,098 warm-up matches" in out.getvalue()
